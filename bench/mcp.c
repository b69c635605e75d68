/* bench/mcp.c: a `subagent` call through `subagentctl mcp` against the same
 * child through `subagentctl run`, in one run.
 *
 * The child is the configuration's runner command (`true` by default), in
 * `shared` isolation unless --isolation says otherwise. The MCP side starts
 * the server once (initialize, measured apart), then times each tools/call
 * round trip over its stdio; the CLI side times each `subagentctl run
 * --json` from spawn to exit — what a user without an MCP client would run.
 * Target: MCP ≤ 1.1× `run` once the server is up. Calls alternate between
 * the two so that drift on this machine hits both alike.
 *
 * Usage: mcp [--calls N] [--isolation MODE] [--command CMD]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <subagent.h>

static int
compare_doubles (const void *a,
                 const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

static double
median (GArray *values)
{
  g_array_sort (values, compare_doubles);
  return g_array_index (values, double, values->len / 2);
}

static double
percentile (GArray *values,
            double  p)
{
  g_array_sort (values, compare_doubles);
  return g_array_index (values, double, MIN (values->len - 1, (guint) (p * values->len)));
}

typedef struct {
  GSubprocess *process;
  GOutputStream *in;
  GDataInputStream *out;
  gint64 next_id;
} Server;

/* Sends a request and reads lines until its response (notifications are
 * skipped). */
static JsonObject *
request (Server     *server,
         const char *method,
         const char *params)
{
  gint64 id = ++server->next_id;
  g_autofree char *line = g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":%" G_GINT64_FORMAT ",\"method\":\"%s\",\"params\":%s}\n",
                                           id, method, params);
  g_autoptr(GError) error = NULL;

  if (!g_output_stream_write_all (server->in, line, strlen (line), NULL, NULL, &error) ||
      !g_output_stream_flush (server->in, NULL, &error))
    g_error ("cannot write to the server: %s", error->message);
  for (;;)
    {
      g_autofree char *reply = g_data_input_stream_read_line_utf8 (server->out, NULL, NULL, &error);
      g_autoptr(JsonNode) node = NULL;
      JsonObject *object;

      if (reply == NULL)
        g_error ("the server closed stdout: %s", error ? error->message : "EOF");
      node = json_from_string (reply, &error);
      if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
        g_error ("the server wrote something else than JSON-RPC: %s", reply);
      object = json_node_get_object (node);
      if (json_object_has_member (object, "id") && json_object_get_int_member_with_default (object, "id", -1) == id)
        return json_object_ref (object);
    }
}

static char *
write_root (const char *command)
{
  g_autofree char *root = g_dir_make_tmp ("subagent-bench-mcp-XXXXXX", NULL);
  g_autofree char *dir = g_build_filename (root, ".subagent", NULL);
  g_autofree char *config = g_build_filename (dir, "config.yaml", NULL);
  g_autofree char *quoted = g_strescape (command, NULL);
  g_autofree char *text = g_strdup_printf ("runner:\n  command: \"%s\"\n", quoted);
  g_autofree char *quoted_root = g_shell_quote (root);
  g_autofree char *git = g_strdup_printf ("git -C %s init -q && git -C %s commit -q --allow-empty -m init",
                                          quoted_root, quoted_root);

  g_mkdir_with_parents (dir, 0700);
  g_file_set_contents (config, text, -1, NULL);
  if (system (git) != 0)
    g_printerr ("mcp bench: git init failed; worktree isolation will not work\n");
  return g_steal_pointer (&root);
}

int
main (int    argc,
      char **argv)
{
  int calls = 40;
  g_autofree char *isolation = g_strdup ("shared");
  g_autofree char *command = g_strdup ("true");
  const GOptionEntry entries[] = {
    { "calls", 'n', 0, G_OPTION_ARG_INT, &calls, "Calls on each side (default 40)", "N" },
    { "isolation", 'i', 0, G_OPTION_ARG_STRING, &isolation, "The children's isolation (default shared)", "MODE" },
    { "command", 'c', 0, G_OPTION_ARG_STRING, &command, "The child program (default true)", "CMD" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("— MCP tools/call against subagentctl run");
  g_autoptr(GError) error = NULL;
  const char *subagentctl = g_getenv ("SUBAGENTCTL") ? g_getenv ("SUBAGENTCTL") : BENCH_SUBAGENTCTL;
  g_autofree char *root = NULL;
  g_autofree char *call_params = NULL;
  g_autoptr(GArray) mcp_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) run_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  Server server = { NULL, };
  gint64 t0;
  double startup_ms;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || calls < 1)
    {
      g_printerr ("mcp bench: %s\n", error ? error->message : "--calls must be ≥ 1");
      return 2;
    }
  root = write_root (command);

  /* The server: started once. */
  t0 = g_get_monotonic_time ();
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  server.process = g_subprocess_launcher_spawn (launcher, &error, subagentctl, "mcp", "--root", root, NULL);
  if (server.process == NULL)
    g_error ("cannot start %s mcp: %s", subagentctl, error->message);
  server.in = g_subprocess_get_stdin_pipe (server.process);
  server.out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (server.process));
  {
    g_autoptr(JsonObject) reply = request (&server, "initialize",
                                           "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                                           "\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}");
    const char *note = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

    g_output_stream_write_all (server.in, note, strlen (note), NULL, NULL, NULL);
  }
  startup_ms = (g_get_monotonic_time () - t0) / 1000.0;

  call_params = g_strdup_printf ("{\"name\":\"subagent\",\"arguments\":{\"task\":\"bench\",\"isolation\":\"%s\"}}",
                                 isolation);
  for (int i = 0; i < calls; i++)
    {
      g_autoptr(JsonObject) reply = NULL;
      g_autofree char *out = NULL;
      g_autofree char *err = NULL;
      int status = 0;
      char *run_argv[] = { (char *) subagentctl, "run", "--json", "--root", root, "--isolation", isolation,
                           "--", "bench", NULL };
      double ms;

      t0 = g_get_monotonic_time ();
      reply = request (&server, "tools/call", call_params);
      ms = (g_get_monotonic_time () - t0) / 1000.0;
      if (!json_object_has_member (reply, "result") ||
          json_object_get_boolean_member_with_default (json_object_get_object_member (reply, "result"), "isError", TRUE))
        {
          g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), reply);
          g_autofree char *text = json_to_string (node, FALSE);
          g_error ("the MCP call failed: %s", text);
        }
      g_array_append_val (mcp_ms, ms);

      t0 = g_get_monotonic_time ();
      if (!g_spawn_sync (NULL, run_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error) ||
          !g_spawn_check_wait_status (status, &error))
        g_error ("subagentctl run failed: %s\n%s", error->message, err ? err : "");
      ms = (g_get_monotonic_time () - t0) / 1000.0;
      g_array_append_val (run_ms, ms);
    }

  g_output_stream_close (server.in, NULL, NULL);
  g_subprocess_wait (server.process, NULL, NULL);
  g_clear_object (&server.out);
  g_clear_object (&server.process);

  {
    double mcp_median = median (mcp_ms), run_median = median (run_ms);

    printf ("%d calls each, child `%s`, %s isolation\n", calls, command, isolation);
    printf ("server start + initialize:      %8.2f ms (once)\n", startup_ms);
    printf ("MCP tools/call `subagent`:      %8.2f ms median, p90 %.2f ms\n", mcp_median, percentile (mcp_ms, 0.9));
    printf ("`subagentctl run --json`:       %8.2f ms median, p90 %.2f ms\n", run_median, percentile (run_ms, 0.9));
    printf ("ratio MCP / run:                %8.2f× (target ≤ 1.10×)\n", mcp_median / run_median);
  }

  {
    g_autofree char *quoted_root = g_shell_quote (root);
    g_autofree char *rm = g_strdup_printf ("rm -rf %s", quoted_root);
    if (system (rm) != 0)
      g_printerr ("mcp bench: could not remove %s\n", root);
  }
  return 0;
}
