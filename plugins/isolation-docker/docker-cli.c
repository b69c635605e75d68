/* docker-cli.c: the container engine's command line (docker or podman),
 * always through GSubprocess with an argument vector, never a shell.
 *
 * The engine is named by the `binary` option, a command line parsed with
 * g_shell_parse_argv(): the program and its global arguments, such as
 * `podman --storage-driver vfs --runtime runc`. Docker honours DOCKER_HOST
 * (from the environment, or the `host` option, which overrides it) and
 * `--context` (option `context`); podman gets `--url` and `--connection`
 * for the same options.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "docker-private.h"

struct _DockerCli
{
  GStrv argv;      /* the program, then its global arguments */
  char *host;      /* DOCKER_HOST for docker; NULL: the engine's default */
  gboolean podman;
};

#define MAX_MESSAGE_BYTES 2000

static gboolean
is_podman (const char *program)
{
  g_autofree char *name = g_path_get_basename (program);

  return strstr (name, "podman") != NULL;
}

/* A value that becomes one argument: never empty, never an option. */
static gboolean
value_is_valid (const char *value)
{
  if (value == NULL || *value == '\0' || *value == '-')
    return FALSE;
  for (const char *p = value; *p; p++)
    if (g_ascii_iscntrl (*p) || *p == ' ')
      return FALSE;
  return TRUE;
}

/**
 * docker_cli_new:
 * @binary: (nullable): the engine command line; %NULL means `docker`
 * @host: (nullable): the engine's address; %NULL keeps DOCKER_HOST (or the default)
 * @context: (nullable): a docker context (podman: a connection) to use
 * @error: return location for a #GError (%SUBAGENT_ISOLATION_ERROR_INVALID_OPTION)
 *
 * Returns: (transfer full) (nullable): the engine command line
 */
DockerCli *
docker_cli_new (const char  *binary,
                const char  *host,
                const char  *context,
                GError     **error)
{
  g_autoptr(GError) parse_error = NULL;
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) parsed = NULL;
  DockerCli *cli;
  gboolean podman;

  if (binary == NULL || *binary == '\0')
    binary = "docker";
  if (!g_shell_parse_argv (binary, NULL, &parsed, &parse_error))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Option binary “%s” is not a command line: %s; use e.g. “docker” or "
                   "“podman --storage-driver vfs”", binary, parse_error->message);
      return NULL;
    }
  if (host != NULL && *host != '\0' && !value_is_valid (host))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Option host “%s” is not an engine address; use e.g. unix:///run/docker.sock", host);
      return NULL;
    }
  if (context != NULL && *context != '\0' && !value_is_valid (context))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Option context “%s” is not a context name", context);
      return NULL;
    }

  podman = is_podman (parsed[0]);
  g_strv_builder_addv (builder, (const char **) parsed);
  if (context != NULL && *context != '\0')
    {
      g_strv_builder_add (builder, podman ? "--connection" : "--context");
      g_strv_builder_add (builder, context);
    }
  if (podman && host != NULL && *host != '\0')
    {
      g_strv_builder_add (builder, "--url");
      g_strv_builder_add (builder, host);
    }

  cli = g_new0 (DockerCli, 1);
  cli->argv = g_strv_builder_end (builder);
  cli->podman = podman;
  if (!podman)
    {
      if (host == NULL || *host == '\0')
        host = g_getenv ("DOCKER_HOST");
      cli->host = (host != NULL && *host != '\0') ? g_strdup (host) : NULL;
    }
  return cli;
}

/**
 * docker_cli_new_from_data:
 * @backend_data: a context's backend data (`engine-argv`, `engine-host`)
 *
 * Rebuilds the command line a context was prepared with, so cleanup talks
 * to the same engine whatever the environment says now.
 *
 * Returns: (transfer full) (nullable): the command line, %NULL if the data has none
 */
DockerCli *
docker_cli_new_from_data (GVariant *backend_data)
{
  g_autofree const char **argv = NULL;
  const char *host = NULL;
  DockerCli *cli;

  if (backend_data == NULL || !g_variant_lookup (backend_data, "engine-argv", "^a&s", &argv) ||
      argv == NULL || argv[0] == NULL)
    return NULL;
  g_variant_lookup (backend_data, "engine-host", "&s", &host);

  cli = g_new0 (DockerCli, 1);
  cli->argv = g_strdupv ((char **) argv);
  cli->podman = is_podman (argv[0]);
  cli->host = (host != NULL && *host != '\0') ? g_strdup (host) : NULL;
  return cli;
}

void
docker_cli_free (DockerCli *cli)
{
  if (cli == NULL)
    return;
  g_strfreev (cli->argv);
  g_free (cli->host);
  g_free (cli);
}

gboolean
docker_cli_is_podman (DockerCli *cli)
{
  return cli->podman;
}

const char *
docker_cli_get_host (DockerCli *cli)
{
  return cli->host;
}

const char * const *
docker_cli_get_argv (DockerCli *cli)
{
  return (const char * const *) cli->argv;
}

/* "“docker” with DOCKER_HOST=unix:///x" — for messages. */
char *
docker_cli_describe (DockerCli *cli)
{
  g_autofree char *line = g_strjoinv (" ", cli->argv);

  if (cli->podman)
    return g_strdup_printf ("“%s”", line);
  if (cli->host != NULL)
    return g_strdup_printf ("“%s” with DOCKER_HOST=%s", line, cli->host);
  return g_strdup_printf ("“%s” on its default socket (DOCKER_HOST unset)", line);
}

void
docker_cli_add_to_data (DockerCli       *cli,
                        GVariantBuilder *builder)
{
  g_variant_builder_add (builder, "{sv}", "engine-argv", g_variant_new_strv ((const char * const *) cli->argv, -1));
  if (cli->host != NULL)
    g_variant_builder_add (builder, "{sv}", "engine-host", g_variant_new_string (cli->host));
}

/* The owner record's `extra`: what `subagentctl prune` needs to reach the
 * same engine: `binary`, `global_args`, `host`. */
JsonObject *
docker_cli_to_owner_extra (DockerCli *cli)
{
  JsonObject *extra = json_object_new ();
  JsonArray *global = json_array_new ();

  for (guint i = 1; cli->argv[i] != NULL; i++)
    json_array_add_string_element (global, cli->argv[i]);
  json_object_set_string_member (extra, "binary", cli->argv[0]);
  json_object_set_array_member (extra, "global_args", global);
  if (cli->host != NULL)
    json_object_set_string_member (extra, "host", cli->host);
  else
    json_object_set_null_member (extra, "host");
  return extra;
}

/* The engine's environment: ours, with the chosen DOCKER_HOST. */
char **
docker_cli_environ (DockerCli *cli)
{
  char **envp = g_get_environ ();

  if (!cli->podman)
    {
      if (cli->host != NULL)
        envp = g_environ_setenv (envp, "DOCKER_HOST", cli->host, TRUE);
      else
        envp = g_environ_unsetenv (envp, "DOCKER_HOST");
    }
  return envp;
}

/* ---- running one command ------------------------------------------------ */

typedef struct {
  GAsyncResult *result;
  gboolean timed_out;
} Wait;

static void
on_communicated (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Wait *wait = user_data;

  wait->result = g_object_ref (result);
}

static gboolean
on_timeout (gpointer user_data)
{
  Wait *wait = user_data;

  wait->timed_out = TRUE;
  return G_SOURCE_REMOVE;
}

static void
cancel_operation (GCancellable *cancellable,
                  gpointer      user_data)
{
  g_cancellable_cancel (G_CANCELLABLE (user_data));
}

/* Stripped, bounded, valid UTF-8: it ends up in error messages. */
static char *
trim_message (char *text)
{
  const char *end = NULL;

  if (text == NULL)
    return g_strdup ("");
  g_strstrip (text);
  if (strlen (text) > MAX_MESSAGE_BYTES)
    text[MAX_MESSAGE_BYTES] = '\0';
  if (!g_utf8_validate (text, -1, &end))
    text[end - text] = '\0';
  return text;
}

/**
 * docker_cli_run:
 * @cli: the engine
 * @args: (array zero-terminated=1): the command after the global arguments
 * @timeout_ms: kill the command after this long; 0 for never
 * @cancellable: (nullable): kills the command when cancelled
 * @out_exit_status: (out) (optional): its exit status
 * @out_stdout: (out) (optional): its standard output
 * @out_stderr: (out) (optional): its standard error, trimmed
 * @error: return location for a #GError
 *
 * Runs one engine command to its end, off any main context the caller
 * runs (a private one is iterated here).
 *
 * Returns: %TRUE if the command ran to its end (whatever its status);
 *   %FALSE if it could not start, was cancelled or timed out
 */
gboolean
docker_cli_run (DockerCli           *cli,
                const char * const  *args,
                guint                timeout_ms,
                GCancellable        *cancellable,
                int                 *out_exit_status,
                char               **out_stdout,
                char               **out_stderr,
                GError             **error)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GCancellable) operation = g_cancellable_new ();
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GSource) timeout = NULL;
  g_auto(GStrv) envp = docker_cli_environ (cli);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  Wait wait = { 0 };
  gulong handler = 0;
  gboolean ok;

  for (guint i = 0; cli->argv[i] != NULL; i++)
    g_ptr_array_add (argv, cli->argv[i]);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_environ (launcher, envp);
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &local_error);
  if (proc == NULL)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                   "Cannot run the container engine “%s”: %s; install docker or podman, or set option binary",
                   cli->argv[0], local_error->message);
      return FALSE;
    }

  g_main_context_push_thread_default (context);
  if (cancellable != NULL)
    handler = g_cancellable_connect (cancellable, G_CALLBACK (cancel_operation), operation, NULL);
  g_subprocess_communicate_utf8_async (proc, NULL, operation, on_communicated, &wait);
  if (timeout_ms > 0)
    {
      timeout = g_timeout_source_new (timeout_ms);
      g_source_set_callback (timeout, on_timeout, &wait, NULL);
      g_source_attach (timeout, context);
    }
  while (wait.result == NULL)
    {
      g_main_context_iteration (context, TRUE);
      if (wait.timed_out && !g_cancellable_is_cancelled (operation))
        g_cancellable_cancel (operation);
    }
  if (timeout != NULL)
    g_source_destroy (timeout);
  ok = g_subprocess_communicate_utf8_finish (proc, wait.result, &out, &err, &local_error);
  g_clear_object (&wait.result);
  if (!ok)
    {
      /* Cancelled or timed out: the command must not outlive us. */
      g_subprocess_force_exit (proc);
      g_subprocess_wait (proc, NULL, NULL);
    }
  g_main_context_pop_thread_default (context);
  g_cancellable_disconnect (cancellable, handler);

  if (!ok)
    {
      g_autofree char *line = g_strjoinv (" ", (char **) argv->pdata);

      if (g_cancellable_is_cancelled (cancellable))
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled while running “%s”", line);
      else if (wait.timed_out)
        g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                     "“%s” did not answer within %u s; is the engine hung?", line, timeout_ms / 1000);
      else
        g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                     "Could not read the output of “%s”: %s", line, local_error->message);
      return FALSE;
    }

  if (out_exit_status != NULL)
    *out_exit_status = g_subprocess_get_if_exited (proc) ? g_subprocess_get_exit_status (proc) : 255;
  if (out_stdout != NULL)
    *out_stdout = g_steal_pointer (&out);
  if (out_stderr != NULL)
    *out_stderr = trim_message (g_steal_pointer (&err));
  return TRUE;
}

/**
 * docker_cli_check_server:
 * @cli: the engine
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError (%SUBAGENT_ISOLATION_ERROR_UNAVAILABLE)
 *
 * Asks the engine's *server* for its version: a client that is installed
 * but cannot reach a daemon is not enough.
 *
 * Returns: %TRUE if a server answered
 */
gboolean
docker_cli_check_server (DockerCli     *cli,
                         GCancellable  *cancellable,
                         GError       **error)
{
  const char * const args[] = { "version", "--format", "{{.Server.Version}}", NULL };
  g_autofree char *described = docker_cli_describe (cli);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GError) local_error = NULL;
  int status = 0;

  if (!docker_cli_run (cli, args, DOCKER_QUICK_TIMEOUT_MS, cancellable, &status, &out, &err, &local_error))
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                     "No container engine answers: tried %s: %s", described, local_error->message);
      return FALSE;
    }
  g_strstrip (out);
  if (status != 0 || *out == '\0' || g_str_equal (out, "<no value>"))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                   "No container engine answers: `version` through %s failed (exit status %d): %s; "
                   "start the engine, or point DOCKER_HOST (or option host) at a running one",
                   described, status, *err ? err : "no server version");
      return FALSE;
    }
  return TRUE;
}

static gboolean
says_no_such_container (const char *text)
{
  g_autofree char *lower = g_ascii_strdown (text ? text : "", -1);

  return strstr (lower, "no such container") != NULL || strstr (lower, "no container with") != NULL;
}

/**
 * docker_cli_remove_container:
 * @cli: the engine
 * @container: a container id or name
 * @error: return location for a #GError
 *
 * `rm -f` (podman: with `--time 0`, so a sleeping PID 1 is not given ten
 * seconds to stop). A container that is already gone is success.
 *
 * Returns: %TRUE if the container no longer exists
 */
gboolean
docker_cli_remove_container (DockerCli   *cli,
                             const char  *container,
                             GError     **error)
{
  const char * const docker_args[] = { "rm", "-f", "--", container, NULL };
  const char * const podman_args[] = { "rm", "-f", "--time", "0", "--", container, NULL };
  g_autofree char *err = NULL;
  g_autoptr(GError) local_error = NULL;
  int status = 0;

  if (!docker_cli_run (cli, cli->podman ? podman_args : docker_args, DOCKER_RUN_TIMEOUT_MS, NULL,
                       &status, NULL, &err, &local_error))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (status == 0 || says_no_such_container (err))
    return TRUE;
  g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
               "`%s rm -f %s` failed (exit status %d): %s", cli->argv[0], container, status, err);
  return FALSE;
}
