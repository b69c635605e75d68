/* model-test-support.c: see model-test-support.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "model-test-support.h"
#include "test-support.h"

MtsServer *
mts_server_start (const char *script_json)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *script_path = NULL;
  g_autofree char *program = NULL;
  g_autofree char *line = NULL;
  const char *srcdir = g_getenv ("G_TEST_SRCDIR");
  MtsServer *server = g_new0 (MtsServer, 1);

  server->dir = sat_make_temp_dir ("model-server");
  script_path = g_build_filename (server->dir, "script.json", NULL);
  server->record_path = g_build_filename (server->dir, "requests.jsonl", NULL);
  server->log_path = g_build_filename (server->dir, "server.log", NULL);
  g_assert_true (g_file_set_contents (script_path, script_json, -1, NULL));
  program = g_build_filename (srcdir ? srcdir : ".", "openai-scripted-server.py", NULL);
  g_subprocess_launcher_set_stderr_file_path (launcher, server->log_path);
  server->process = g_subprocess_launcher_spawn (launcher, &error, "/usr/bin/python3", program,
                                                 "--script", script_path, "--record", server->record_path,
                                                 "--exit-on-stdin-eof", NULL);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (server->process));
  line = g_data_input_stream_read_line (out, NULL, NULL, &error);
  g_assert_no_error (error);
  if (line == NULL || !g_str_has_prefix (line, "PORT "))
    {
      g_autofree char *log = NULL;
      g_file_get_contents (server->log_path, &log, NULL, NULL);
      g_error ("the scripted server did not start: %s", log ? log : "(no log)");
    }
  server->port = (guint) g_ascii_strtoull (line + 5, NULL, 10);
  g_assert_cmpuint (server->port, >, 0);
  return server;
}

void
mts_server_stop (MtsServer *server)
{
  if (server == NULL)
    return;
  g_subprocess_send_signal (server->process, SIGTERM);
  g_subprocess_wait (server->process, NULL, NULL);
  g_object_unref (server->process);
  sat_rm_rf (server->dir);
  g_free (server->dir);
  g_free (server->record_path);
  g_free (server->log_path);
  g_free (server);
}

JsonArray *
mts_server_records (MtsServer  *server,
                    const char *event)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  JsonArray *records = json_array_new ();

  g_assert_true (g_file_get_contents (server->record_path, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonNode) node = NULL;
      JsonObject *object;

      if (*lines[i] == '\0')
        continue;
      node = json_from_string (lines[i], NULL);
      if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
        continue;  /* a line being written */
      object = json_node_get_object (node);
      if (event == NULL || g_strcmp0 (json_object_get_string_member (object, "event"), event) == 0)
        json_array_add_object_element (records, json_object_ref (object));
    }
  return records;
}

JsonObject *
mts_server_request_body (MtsServer *server,
                         guint      index)
{
  g_autoptr(JsonArray) requests = mts_server_records (server, "request");

  g_assert_cmpuint (json_array_get_length (requests), >, index);
  return json_object_ref (json_object_get_object_member (json_array_get_object_element (requests, index), "body"));
}

void
mts_server_wait_for (MtsServer  *server,
                     const char *event,
                     guint       count)
{
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  for (;;)
    {
      g_autoptr(JsonArray) records = mts_server_records (server, event);

      if (json_array_get_length (records) >= count)
        return;
      if (g_get_monotonic_time () > deadline)
        g_error ("the scripted server never recorded %u “%s” events", count, event);
      g_usleep (5000);
    }
}

void
mts_write_config (const char *root,
                  MtsServer  *server,
                  const char *extra)
{
  g_autofree char *config = g_strdup_printf (
    "models:\n"
    "  test:\n"
    "    base_url: http://127.0.0.1:%u/v1\n"
    "    model: scripted\n"
    "    api_key_env: " MTS_KEY_ENV "\n"
    "    input_cents_per_mtok: 300\n"
    "    output_cents_per_mtok: 1500\n"
    "    connect_timeout_seconds: 5\n"
    "    read_timeout_seconds: 2\n"
    "    max_retries: 2\n"
    "default_model: test\n"
    "model_aliases: {sonnet: test, opus: test, haiku: test}\n"
    "%s",
    server ? server->port : 9, extra ? extra : "");

  sat_write_file (root, ".subagent/config.yaml", config);
}
