/* docker-test-support.c: fixtures of the docker suite.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

#include "docker-test-support.h"

static SubagentPluginRegistry *registry;
static const char *image;
static char *cache_home;
static char *parent_run_id;
static char *parent_run_label;

void
dts_init (void)
{
  cache_home = sat_make_temp_dir ("docker-cache");
  g_setenv ("XDG_CACHE_HOME", cache_home, TRUE);
  image = g_getenv ("SUBAGENT_TEST_IMAGE");
  if (image == NULL || *image == '\0')
    image = "subagent-busybox:latest";
  registry = subagent_plugin_registry_new (NULL);
  /* Per test program: a container an aborted program leaves behind does
   * not count against the next program's nothing-left checks. */
  parent_run_id = g_strdup_printf ("run-docker-test-%d", (int) getpid ());
  parent_run_label = g_strconcat ("io.subagent.parent-run=", parent_run_id, NULL);
}

void
dts_shutdown (void)
{
  g_clear_object (&registry);
  sat_rm_rf (cache_home);
  g_clear_pointer (&cache_home, g_free);
  g_clear_pointer (&parent_run_id, g_free);
  g_clear_pointer (&parent_run_label, g_free);
}

const char *
dts_image (void)
{
  return image;
}

const char *
dts_parent_run_id (void)
{
  return parent_run_id;
}

const char *
dts_parent_run_label (void)
{
  return parent_run_label;
}

const char *
dts_cache_home (void)
{
  return cache_home;
}

/* ---- the engine, directly ------------------------------------------------ */

/* Engines whose workspaces are copies: a child's file shows on the host
 * only when its process ends, so dts_workspace_file_seen() asks them. */
static GPtrArray *copy_engines;

gboolean
dts_engine_setup (DtsEngine *e)
{
  const char *host = g_getenv (e->host_env);

  if (host == NULL || *host == '\0')
    {
      if (!g_str_equal (e->host_env, "DOCKER_HOST"))
        return FALSE;
      host = "unix:///var/run/docker.sock";
    }
  e->host = g_strdup (host);
  e->argv = g_new0 (char *, 4);
  e->argv[0] = g_strdup ("docker");
  e->argv[1] = g_strdup ("-H");
  e->argv[2] = g_strdup (host);
  if (g_str_equal (e->transfer, "copy"))
    {
      if (copy_engines == NULL)
        copy_engines = g_ptr_array_new ();
      g_ptr_array_add (copy_engines, e);
    }
  return TRUE;
}

static char *
dts_engine_run_argv (DtsEngine  *e,
                     int        *status,
                     GPtrArray  *args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  for (guint i = 0; e->argv[i] != NULL; i++)
    g_ptr_array_add (argv, e->argv[i]);
  for (guint i = 0; i < args->len; i++)
    g_ptr_array_add (argv, g_ptr_array_index (args, i));
  g_ptr_array_add (argv, NULL);
  proc = g_subprocess_newv ((const char * const *) argv->pdata,
                            G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, &err, &error);
  g_assert_no_error (error);
  if (status != NULL)
    *status = g_subprocess_get_exit_status (proc);
  else if (!g_subprocess_get_successful (proc))
    g_error ("%s %s failed: %s", e->host, (const char *) g_ptr_array_index (args, 0), err);
  return g_strstrip (g_steal_pointer (&out));
}

char *
dts_engine_run (DtsEngine  *e,
                int        *status,
                const char *first,
                ...)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  va_list ap;

  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (args, (gpointer) a);
  va_end (ap);
  return dts_engine_run_argv (e, status, args);
}

/* Ids of all containers (running or not) with the label KEY=VALUE. */
char *
dts_containers_labelled (DtsEngine  *e,
                         const char *label)
{
  g_autofree char *filter = g_strdup_printf ("label=%s", label);

  return dts_engine_run (e, NULL, "ps", "-a", "-q", "--filter", filter, NULL);
}

/* Removes the container @name, running or not (SIGKILL), and fails the
 * test if the engine cannot: every engine here is driven by the docker
 * CLI, whose `rm` has no `--time` (podman's own CLI does; with it, the
 * removal failed silently and left the container behind). */
void
dts_remove_container (DtsEngine  *e,
                      const char *name)
{
  g_free (dts_engine_run (e, NULL, "rm", "-f", name, NULL));
}

/* Whether some workspace's tree holds rel: the child got that far. */
gboolean
dts_workspace_file_seen (const char *rel)
{
  g_autofree char *workspaces = dts_workspace_dir ();
  g_autoptr(GDir) dir = g_dir_open (workspaces, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (workspaces, name, "tree", rel, NULL);

      if (g_file_test (path, G_FILE_TEST_EXISTS))
        return TRUE;
    }
  for (guint i = 0; copy_engines != NULL && i < copy_engines->len; i++)
    {
      DtsEngine *e = copy_engines->pdata[i];
      g_autofree char *ids = NULL;
      g_autofree char *inside = g_build_filename ("/workspace", rel, NULL);
      g_auto(GStrv) lines = NULL;
      int status = 1;

      ids = dts_engine_run (e, &status, "ps", "-q", "--filter", "label=io.subagent.session", NULL);
      if (status != 0)
        continue;
      lines = g_strsplit (ids, "\n", -1);
      for (guint j = 0; lines[j] != NULL; j++)
        {
          g_autofree char *out = NULL;

          if (*g_strstrip (lines[j]) == '\0')
            continue;
          status = 1;
          out = dts_engine_run (e, &status, "exec", lines[j], "test", "-e", inside, NULL);
          if (status == 0)
            return TRUE;
        }
    }
  return FALSE;
}

/* ---- fixtures ------------------------------------------------------------ */

char *
dts_workspace_dir (void)
{
  return g_build_filename (cache_home, "subagent", "docker", NULL);
}

guint
dts_count_entries (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;

  while (d != NULL && g_dir_read_name (d) != NULL)
    n++;
  return n;
}

char *
dts_make_parent (void)
{
  char *parent = sat_make_temp_dir ("docker-parent");

  sat_write_file (parent, "existing.txt", "first line\n");
  sat_write_file (parent, "sub/nested.txt", "nested\n");
  sat_write_file (parent, ".git/HEAD", "ref: refs/heads/main\n");
  sat_write_file (parent, ".subagent/agents/.keep", "");
  return parent;
}

/* No container of the label, no workspace, no owner record. */
void
dts_assert_nothing_left (DtsEngine  *e,
                         const char *label,
                         const char *root)
{
  g_autofree char *left = dts_containers_labelled (e, label);
  g_autofree char *workspaces = dts_workspace_dir ();
  g_autofree char *owners = g_build_filename (root, ".subagent", "owners", NULL);

  g_assert_cmpstr (left, ==, "");
  g_assert_cmpuint (dts_count_entries (workspaces), ==, 0);
  g_assert_cmpuint (dts_count_entries (owners), ==, 0);
}

SubagentIsolationProvider *
dts_provider (void)
{
  g_autoptr(GError) error = NULL;
  SubagentIsolationProvider *provider =
    subagent_plugin_registry_get_isolation_provider (registry, "docker", &error);

  g_assert_no_error (error);
  return provider;
}

/* The docker provider as the manager makes it: configured with config.yaml's
 * `docker:` section given as JSON text; NULL with @error when configure refuses. */
SubagentIsolationProvider *
dts_configured_provider (const char  *docker_section_json,
                         const char  *root,
                         GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonObject) top = json_object_new ();
  g_autoptr(SubagentConfig) config = NULL;
  g_autoptr(GError) local_error = NULL;

  json_parser_load_from_data (parser, docker_section_json, -1, &local_error);
  g_assert_no_error (local_error);
  json_object_set_member (top, "docker", json_node_copy (json_parser_get_root (parser)));
  config = subagent_config_new_from_json (top, "test", &local_error);
  g_assert_no_error (local_error);
  return SUBAGENT_ISOLATION_PROVIDER (subagent_plugin_registry_create_configured (registry, config,
                                                                                 SUBAGENT_TYPE_ISOLATION_PROVIDER,
                                                                                 "docker", root, error));
}

/* A request for e with image and host set; then KEY, VALUE pairs (a
 * NULL value removes the option). */
SubagentIsolationRequest *
dts_make_request (DtsEngine  *e,
                  const char *parent,
                  const char *key,
                  double      cpus,
                  const char *memory,
                  ...)
{
  g_autoptr(JsonObject) options = json_object_new ();
  va_list ap;

  json_object_set_string_member (options, "image", image);
  json_object_set_string_member (options, "host", e->host);
  va_start (ap, memory);
  for (const char *k = va_arg (ap, const char *); k != NULL; k = va_arg (ap, const char *))
    {
      const char *v = va_arg (ap, const char *);
      if (v == NULL)
        json_object_remove_member (options, k);
      else
        json_object_set_string_member (options, k, v);
    }
  va_end (ap);
  return g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST,
                       "parent-root", parent, "isolation", "docker", "session-key", key,
                       "parent-run-id", parent_run_id, "cpu-quota", cpus, "memory-limit", memory,
                       "options", options, NULL);
}

SubagentIsolationContext *
dts_prepare (SubagentIsolationRequest  *request,
             GError                   **error)
{
  g_autoptr(SubagentIsolationProvider) provider = dts_provider ();

  return subagent_isolation_provider_prepare (provider, request, NULL, error);
}

/* Runs `sh -c script` in the context; returns its stdout. */
char *
dts_run_in (SubagentIsolationContext *context,
            const char * const       *envp,
            const char               *stdin_text,
            int                      *status,
            const char               *script)
{
  const char * const argv[] = { "sh", "-c", script, NULL };
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  proc = subagent_isolation_context_spawnv (context, argv, envp,
                                            G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                            G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, stdin_text, NULL, &out, &err, &error);
  g_assert_no_error (error);
  if (status != NULL)
    *status = g_subprocess_get_exit_status (proc);
  else if (!g_subprocess_get_successful (proc))
    g_error ("`%s` failed in the container: %s", script, err);
  return g_steal_pointer (&out);
}

gboolean
dts_file_exists (const char *dir,
                 const char *rel)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

void
dts_write_docker_def (DtsEngine  *e,
                      const char *root,
                      const char *def_name,
                      const char *script,
                      const char *extra_options)
{
  g_autofree char *config = g_strdup_printf ("docker: { image: \"%s\", host: \"%s\"%s%s }\n", image, e->host,
                                             extra_options ? ", " : "", extra_options ? extra_options : "");
  g_autofree char *def = g_strdup_printf ("name: %s\nisolation: docker\ntimeout_seconds: 300\n"
                                          "command: [\"sh\", \"-c\", \"%s\"]\n", def_name, script);
  g_autofree char *def_path = g_strdup_printf (".subagent/agents/%s.yaml", def_name);

  sat_write_file (root, ".subagent/config.yaml", config);
  sat_write_file (root, def_path, def);
}

char *
dts_make_root (DtsEngine  *e,
               const char *def_name,
               const char *script)
{
  char *root = dts_make_parent ();

  dts_write_docker_def (e, root, def_name, script, NULL);
  return root;
}

static void
on_run_done (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  SubagentRunResult **out = user_data;
  g_autoptr(GError) error = NULL;

  *out = subagent_manager_run_finish (SUBAGENT_MANAGER (source), result, &error);
  g_assert_no_error (error);
}

SubagentRunResult *
dts_run_def (SubagentManager *manager,
             const char      *def_name,
             GCancellable    *cancellable,
             const char      *wait_for_file)
{
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  SubagentRunResult *result = NULL;
  gint64 deadline = g_get_monotonic_time () + DTS_WAIT_DEADLINE_USEC;

  subagent_run_options_set_def_name (options, def_name);
  subagent_manager_run_async (manager, "do the task", options, cancellable, on_run_done, &result);
  /* Cancel once the child is demonstrably running in its container. */
  while (wait_for_file != NULL && result == NULL && !dts_workspace_file_seen (wait_for_file))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (G_USEC_PER_SEC / 50);
    }
  if (cancellable != NULL)
    g_cancellable_cancel (cancellable);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return result;
}

static GPid
dead_pid (void)
{
  int status;
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    _exit (0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  return pid;
}

/* A record of a dead owner that points at a container that is not ours. */
void
dts_forge_dead_record (DtsEngine  *e,
                       const char *root,
                       const char *key,
                       const char *container)
{
  g_autoptr(JsonObject) extra = json_object_new ();
  g_autoptr(JsonObject) record = NULL;
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autoptr(JsonArray) global = json_array_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;

  json_object_set_string_member (extra, "binary", "docker");
  json_object_set_array_member (extra, "global_args", json_array_ref (global));
  json_object_set_string_member (extra, "host", e->host);
  g_assert_true (subagent_owner_record_save (root, key, "container", container,
                                             "run", extra, &error));
  g_assert_no_error (error);
  record = subagent_owner_record_load (root, key, &error);
  g_assert_no_error (error);
  json_object_set_int_member (record, "pid", dead_pid ());
  json_node_set_object (node, record);
  text = json_to_string (node, TRUE);
  path = subagent_owner_record_path (root, key);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

/* `subagentctl prune --root ROOT --json`, which must succeed: its output. */
char *
dts_prune_json (const char *root)
{
  g_autoptr(GSubprocess) prune = NULL;
  g_autoptr(GError) error = NULL;
  char *out = NULL;

  prune = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                            sat_subagentctl (), "prune", "--root", root, "--json", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (prune, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("prune: %s", out);
  g_assert_cmpint (g_subprocess_get_exit_status (prune), ==, 0);
  return out;
}
