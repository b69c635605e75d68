/* docker-exec-helper.c: `subagent-docker-exec`, one process of a child in
 * its container, through the Engine API (the provider's spawnv() starts
 * this, so the runner keeps a GSubprocess with pipes and an exit status).
 *
 *   subagent-docker-exec ENGINE-ARGS --container ID --workdir DIR
 *                        [--sync-back TREE [--keep NAME]… [--exclude PATTERN]… [--max-file BYTES]]
 *                        [--memory LIMIT] -- PROGRAM ARG…
 *
 * Creates an exec with stdin, stdout and stderr attached, takes the
 * connection over (`Upgrade: tcp`), copies our stdin into it (half-closing
 * it at our EOF) and demultiplexes the engine's frames onto our stdout and
 * stderr, then exits with the exec's exit code (exec inspect). Its whole
 * environment, but for SUBAGENT_DOCKER_EXEC_*, becomes the process's.
 *
 * The engine's own failures never pass for the child's output: an error the
 * engine writes into the stream when it cannot start the program (`OCI
 * runtime exec failed…`) goes to stderr with a prefix. A status of 137 is
 * explained on stderr from the container's state and events: the OOM
 * killer, `docker kill`, an engine stop, or a removed container. With
 * --sync-back, the container's /workspace is fetched (GET archive) and
 * applied to TREE afterwards, leaving alone what the --exclude patterns
 * match (the secrets the workspace left out); a failure there is exit status 125 and a
 * message, never a silent success.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docker-engine.h"
#include "subagent-secrets.h"

#define STATUS_ENGINE_FAILED 125
#define HELD_MAX (64 * 1024)
#define DEFAULT_MAX_FILE (G_GUINT64_CONSTANT (1) << 30)

static const char *container;
static const char *program;

static void
say (const char *format,
     ...) G_GNUC_PRINTF (1, 2);

static void
say (const char *format,
     ...)
{
  va_list ap;
  g_autofree char *text = NULL;

  va_start (ap, format);
  text = g_strdup_vprintf (format, ap);
  va_end (ap);
  fprintf (stderr, "subagent-docker-exec: %s\n", text);
  fflush (stderr);
}

static gboolean
write_fd (int         fd,
          const char *data,
          gsize       size)
{
  while (size > 0)
    {
      ssize_t n = write (fd, data, size);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return FALSE;   /* the reader went away: drop the rest */
      data += n;
      size -= n;
    }
  return TRUE;
}

/* ---- stdin ---------------------------------------------------------------- */

typedef struct {
  DockerResponse *response;
} StdinPump;

static gpointer
pump_stdin (gpointer data)
{
  StdinPump *pump = data;
  GOutputStream *out = docker_response_get_output (pump->response);
  char buffer[65536];

  for (;;)
    {
      ssize_t n = read (STDIN_FILENO, buffer, sizeof buffer);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      if (!g_output_stream_write_all (out, buffer, n, NULL, NULL, NULL) || !g_output_stream_flush (out, NULL, NULL))
        return NULL;
    }
  docker_response_close_write (pump->response, NULL);
  return NULL;
}

/* ---- engine errors in the stream ------------------------------------------ */

static gboolean
looks_like_engine_error (const char *data,
                         gsize       size)
{
  static const char * const prefixes[] = {
    "OCI runtime exec failed", "OCI runtime", "exec failed:", "runc:", "crun:", "Error: executable file",
    "Error: crun", "Error: runc", "Error: read unixpacket",
  };

  for (guint i = 0; i < G_N_ELEMENTS (prefixes); i++)
    if (size >= strlen (prefixes[i]) && memcmp (data, prefixes[i], strlen (prefixes[i])) == 0)
      return TRUE;
  return FALSE;
}

/* ---- inspect -------------------------------------------------------------- */

static JsonObject *
get_object (DockerEngine *engine,
            const char   *path,
            JsonNode    **keep)
{
  g_autoptr(GError) error = NULL;

  if (!docker_engine_call (engine, "GET", path, NULL, NULL, keep, NULL, &error) || *keep == NULL ||
      !JSON_NODE_HOLDS_OBJECT (*keep))
    return NULL;
  return json_node_get_object (*keep);
}

/* Runs a short command in the container; its stdout, or NULL. */
static char *
exec_capture (DockerEngine        *engine,
              const char * const  *argv)
{
  g_autoptr(JsonNode) config = docker_exec_config (argv, NULL, NULL, NULL, FALSE);
  g_autoptr(DockerResponse) stream = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *exec_id = NULL;

  stream = docker_exec_open (engine, container, config, &exec_id, NULL, NULL);
  if (stream == NULL)
    return NULL;
  for (;;)
    {
      guint8 head[8];
      gsize got = 0;
      gboolean framed;
      guint32 size;
      char buffer[4096];

      if (!docker_exec_read_frame (stream, head, &got, &framed, &size, NULL, NULL) || got == 0 || !framed)
        break;
      while (size > 0)
        {
          gsize want = MIN (size, sizeof buffer);
          if (!docker_response_read_fully (stream, buffer, want, &got, NULL, NULL) || got < want)
            return g_string_free (g_steal_pointer (&out), FALSE);
          if (head[0] == 1 && out->len < 65536)
            g_string_append_len (out, buffer, got);
          size -= got;
        }
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Whether the container's memory cgroup saw an OOM kill (v2
 * memory.events, v1 memory.oom_control): the engine does not always say
 * so when the victim was an exec'd process. */
static gboolean
cgroup_saw_oom_kill (DockerEngine *engine)
{
  const char * const argv[] = { "cat", "/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control",
                                NULL };
  g_autofree char *text = exec_capture (engine, argv);
  g_auto(GStrv) lines = NULL;

  if (text == NULL)
    return FALSE;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "oom_kill ") && g_ascii_strtoull (lines[i] + 9, NULL, 10) > 0)
      return TRUE;
  return FALSE;
}

/* Why a process ended with 137 (SIGKILL): the container's state and the
 * engine's events tell the OOM killer, `docker kill` and a stop apart. */
static char *
explain_kill (DockerEngine *engine,
              const char   *memory)
{
  g_autofree char *path = g_strdup_printf ("/containers/%s/json", container);
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(DockerResponse) response = NULL;
  g_autoptr(GBytes) events = NULL;
  g_autofree char *filters = NULL;
  g_autofree char *escaped = NULL;
  g_autofree char *events_path = NULL;
  JsonObject *object, *state;
  gboolean oom = FALSE, stopped = FALSE, killed = FALSE, running;
  g_autofree char *kill_signal = NULL;
  const char *created;
  gint64 since = 0;

  object = get_object (engine, path, &node);
  if (object == NULL)
    return g_strdup_printf ("container %s was removed while the child ran", container);
  state = json_object_get_object_member (object, "State");
  running = state && json_object_get_boolean_member_with_default (state, "Running", FALSE);
  oom = state && json_object_get_boolean_member_with_default (state, "OOMKilled", FALSE);
  created = json_object_get_string_member_with_default (object, "Created", NULL);
  if (created != NULL)
    {
      g_autoptr(GDateTime) when = g_date_time_new_from_iso8601 (created, NULL);
      if (when != NULL)
        since = g_date_time_to_unix (when) - 1;
    }

  filters = g_strdup_printf ("{\"container\":[\"%s\"]}", container);
  escaped = g_uri_escape_string (filters, NULL, FALSE);
  /* A stopped container's `stop` or `oom` event, and its OOMKilled, may
   * lag the end of its processes (the engine learns of them from its
   * runtime, late on a busy host: 3 s once was not enough while a test
   * suite ran beside the engine): its state is read again each time, for
   * up to 10 s. Only an unexplained SIGKILL of a stopped container waits
   * that long. */
  for (guint attempt = 0; attempt < 50 && !oom && !stopped && !killed; attempt++)
    {
      if (attempt > 0)
        {
          g_autoptr(JsonNode) again = NULL;
          JsonObject *now;

          if (running)
            break;
          g_usleep (200 * 1000);
          now = get_object (engine, path, &again);
          state = now != NULL ? json_object_get_object_member (now, "State") : NULL;
          oom = state != NULL && json_object_get_boolean_member_with_default (state, "OOMKilled", FALSE);
          if (oom)
            break;
        }
      g_clear_pointer (&events_path, g_free);
      g_clear_pointer (&response, docker_response_free);
      g_clear_pointer (&events, g_bytes_unref);
      g_clear_error (&error);
      events_path = g_strdup_printf ("/events?since=%" G_GINT64_FORMAT "&until=%" G_GINT64_FORMAT "&filters=%s",
                                     since, g_get_real_time () / G_USEC_PER_SEC + 1, escaped);
      response = docker_engine_request (engine, "GET", events_path, NULL, NULL, NULL, NULL, FALSE, NULL, &error);
      if (response != NULL && docker_response_get_status (response) == 200)
        events = docker_response_read_all (response, 4 * 1024 * 1024, NULL, NULL);
      if (events == NULL || g_bytes_get_size (events) == 0)
        continue;
      {
        g_autofree char *text = g_strndup (g_bytes_get_data (events, NULL), g_bytes_get_size (events));
        g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

        for (guint i = 0; lines[i] != NULL; i++)
          {
            g_autoptr(JsonParser) parser = json_parser_new ();
            JsonObject *event, *actor, *attributes;
            const char *action;

            if (*g_strstrip (lines[i]) == '\0' || !json_parser_load_from_data (parser, lines[i], -1, NULL) ||
                !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
              continue;
            event = json_node_get_object (json_parser_get_root (parser));
            action = json_object_get_string_member_with_default (event, "Action",
                       json_object_get_string_member_with_default (event, "status", ""));
            if (g_str_equal (action, "oom"))
              oom = TRUE;
            else if (g_str_equal (action, "stop"))
              stopped = TRUE;
            else if (g_str_equal (action, "kill"))
              {
                killed = TRUE;
                actor = json_object_get_object_member (event, "Actor");
                attributes = actor ? json_object_get_object_member (actor, "Attributes") : NULL;
                if (attributes != NULL && json_object_has_member (attributes, "signal"))
                  {
                    g_free (kill_signal);
                    kill_signal = g_strdup (json_object_get_string_member (attributes, "signal"));
                    /* A stop sends TERM first, then KILL: any TERM is a stop's. */
                    if (g_str_equal (kill_signal, "15") || g_str_equal (kill_signal, "TERM") ||
                        g_str_equal (kill_signal, "SIGTERM"))
                      stopped = TRUE;
                  }
              }
          }
      }
    }
  if (oom)
    return g_strdup_printf ("the kernel's OOM killer ended it: container %s hit its memory limit%s%s%s (OOMKilled)",
                            container, memory ? " (" : "", memory ? memory : "", memory ? ")" : "");
  if (stopped)
    return g_strdup_printf ("the engine stopped container %s (docker stop, or the engine shutting down)", container);
  if (killed)
    return g_strdup_printf ("container %s was killed (docker kill, signal %s)", container,
                            kill_signal ? kill_signal : "KILL");
  /* Stopped with no kill on record (podman records none for a stop). */
  if (!running)
    return g_strdup_printf ("the engine stopped container %s (docker stop, or the engine shutting down)", container);
  if (cgroup_saw_oom_kill (engine))
    return g_strdup_printf ("the kernel's OOM killer ended it: container %s hit its memory limit%s%s%s "
                            "(oom_kill in its memory cgroup)", container, memory ? " (" : "", memory ? memory : "",
                            memory ? ")" : "");
  return g_strdup ("it was killed by SIGKILL inside the container (not by the engine, not for memory)");
}

/* ---- main ----------------------------------------------------------------- */

/* The child's process: our whole environment but for the helper's own. */
static JsonNode *
exec_config (char      **argv,
             const char *workdir)
{
  g_auto(GStrv) env = g_get_environ ();
  g_autoptr(GPtrArray) kept = g_ptr_array_new ();

  for (guint i = 0; env[i] != NULL; i++)
    if (!g_str_has_prefix (env[i], "SUBAGENT_DOCKER_EXEC_"))
      g_ptr_array_add (kept, env[i]);
  g_ptr_array_add (kept, NULL);
  return docker_exec_config ((const char * const *) argv, NULL, workdir, (const char * const *) kept->pdata, TRUE);
}

static G_NORETURN void
usage (void)
{
  say ("usage: subagent-docker-exec ENGINE-ARGS --container ID --workdir DIR [--sync-back TREE] -- PROGRAM…");
  exit (2);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GPtrArray) engine_args = g_ptr_array_new ();
  g_autoptr(GPtrArray) keep = g_ptr_array_new ();
  g_autoptr(GPtrArray) exclude = g_ptr_array_new ();
  g_autoptr(SubagentExcludeSet) secrets = NULL;
  g_autoptr(DockerEngine) engine = NULL;
  g_autoptr(DockerResponse) stream = NULL;
  g_autoptr(JsonNode) config = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GByteArray) held = NULL;
  g_autofree char *exec_id = NULL;
  g_autofree char *described = NULL;
  const char *workdir = "/workspace", *tree = NULL, *memory = NULL;
  guint64 max_file = DEFAULT_MAX_FILE;
  char **command = NULL;
  gboolean first_frame = TRUE, stream_failed = FALSE;
  char buffer_raw[4096];
  StdinPump pump;
  DockerExecEnd end;
  int status;

  signal (SIGPIPE, SIG_IGN);
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];

      if (g_str_equal (a, "--"))
        {
          command = argv + i + 1;
          break;
        }
      if (g_str_equal (a, "--tls") || g_str_equal (a, "--tls-verify") || g_str_equal (a, "--podman"))
        {
          g_ptr_array_add (engine_args, (char *) a);
          continue;
        }
      if (i + 1 >= argc)
        usage ();
      if (g_str_equal (a, "--container"))
        container = argv[++i];
      else if (g_str_equal (a, "--workdir"))
        workdir = argv[++i];
      else if (g_str_equal (a, "--sync-back"))
        tree = argv[++i];
      else if (g_str_equal (a, "--keep"))
        g_ptr_array_add (keep, argv[++i]);
      else if (g_str_equal (a, "--exclude"))
        g_ptr_array_add (exclude, argv[++i]);
      else if (g_str_equal (a, "--memory"))
        memory = argv[++i];
      else if (g_str_equal (a, "--max-file"))
        {
          if (!g_ascii_string_to_unsigned (argv[++i], 10, 1, G_MAXUINT64, &max_file, NULL))
            usage ();
        }
      else
        {
          g_ptr_array_add (engine_args, (char *) a);
          g_ptr_array_add (engine_args, argv[++i]);
        }
    }
  g_ptr_array_add (engine_args, NULL);
  g_ptr_array_add (keep, NULL);
  g_ptr_array_add (exclude, NULL);
  secrets = subagent_exclude_set_new ((const char * const *) exclude->pdata);
  if (container == NULL || command == NULL || command[0] == NULL)
    usage ();
  program = command[0];

  engine = docker_engine_new_from_argv ((const char * const *) engine_args->pdata, &error);
  if (engine == NULL || !docker_engine_negotiate (engine, NULL, &error))
    {
      say ("%s", error->message);
      return STATUS_ENGINE_FAILED;
    }
  described = docker_engine_describe (engine);

  config = exec_config (command, workdir);
  stream = docker_exec_open (engine, container, config, &exec_id, NULL, &error);
  if (stream == NULL)
    {
      say ("cannot run “%s” in container %s: %s", program, container, error->message);
      return STATUS_ENGINE_FAILED;
    }

  pump.response = stream;
  g_thread_unref (g_thread_new ("stdin", pump_stdin, &pump));

  /* Frames: stream (1 stdout, 2 stderr), 3 zero bytes, a big-endian size. */
  for (;;)
    {
      guint8 head[8];
      gsize got = 0;
      gboolean framed;
      guint32 size;
      int fd;
      char buffer[65536];

      if (!docker_exec_read_frame (stream, head, &got, &framed, &size, NULL, &error))
        {
          stream_failed = TRUE;
          break;
        }
      if (got == 0)
        break;
      if (!framed)
        {
          /* Not a frame: the engine's own words, unframed (podman writes
           * its exec errors so). Keep them for after the end. */
          if (held == NULL)
            held = g_byte_array_new ();
          g_byte_array_append (held, head, got);
          for (;;)
            {
              gssize n = docker_response_read (stream, buffer_raw, sizeof buffer_raw, NULL, NULL);
              if (n <= 0)
                break;
              if (held->len < HELD_MAX)
                g_byte_array_append (held, (const guint8 *) buffer_raw, n);
            }
          break;
        }
      fd = head[0] == 2 ? STDERR_FILENO : STDOUT_FILENO;
      while (size > 0)
        {
          gsize want = MIN (size, sizeof buffer);

          if (!docker_response_read_fully (stream, buffer, want, &got, NULL, &error) || got < want)
            {
              stream_failed = TRUE;
              if (error == NULL)
                g_set_error (&error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT, "the stream ended inside a frame");
              break;
            }
          /* More came after held words: the child's after all, unless the
           * engine is still explaining (podman adds a line). */
          if (held != NULL && want == size && !(fd == STDOUT_FILENO && looks_like_engine_error (buffer, got)))
            {
              write_fd (STDOUT_FILENO, (const char *) held->data, held->len);
              g_clear_pointer (&held, g_byte_array_unref);
            }
          if (first_frame && fd == STDOUT_FILENO && looks_like_engine_error (buffer, got) && size <= HELD_MAX)
            {
              held = g_byte_array_new ();
              g_byte_array_append (held, (const guint8 *) buffer, got);
            }
          else if (held != NULL)
            g_byte_array_append (held, (const guint8 *) buffer, got);
          else
            write_fd (fd, buffer, got);
          first_frame = FALSE;
          size -= got;
        }
      first_frame = FALSE;
      if (stream_failed)
        break;
    }
  if (stream_failed)
    say ("lost the stream of “%s” in container %s on %s: %s", program, container, described, error->message);
  g_clear_error (&error);

  end = docker_exec_wait (engine, exec_id);
  if (held != NULL)
    {
      if (end.pid == 0 || end.exit_code == 126 || end.exit_code == 127)
        {
          g_autofree char *text = g_utf8_make_valid ((const char *) held->data, held->len);
          say ("the engine could not start “%s” in container %s: %s", program, container, g_strstrip (text));
        }
      else
        write_fd (STDOUT_FILENO, (const char *) held->data, held->len);
    }
  if (!end.known)
    {
      say ("the engine did not report how “%s” ended in container %s", program, container);
      status = STATUS_ENGINE_FAILED;
    }
  else
    status = (int) (end.exit_code & 0xff);
  if (status == 137 || status == 143)
    {
      g_autofree char *why = explain_kill (engine, memory);
      say ("“%s” ended with status %d: %s", program, status, why);
    }

  if (tree != NULL && !docker_tar_fetch (engine, container, tree, (const char * const *) keep->pdata, secrets, max_file, NULL, &error))
    {
      say ("could not copy /workspace back from container %s on %s: %s; the child's changes are not in "
           "the review", container, described, error->message);
      if (status == 0)
        status = STATUS_ENGINE_FAILED;
    }
  fflush (stdout);
  return status;
}
