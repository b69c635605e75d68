/* test-batch-sigterm.c: issue 18, item 2 — SIGTERM stops a batch.
 *
 * `subagentctl --events batch --json --max-parallel 2` of 12 worktree items
 * that each block until released; SIGTERM once the first two started. The
 * CLI exits within the supervisor's shutdown timeout, prints every item's
 * result (2 cancelled while running, 10 cancelled without starting), and
 * leaves nothing behind: no worktree, no child process. The library side
 * (the batch's cancellable) is tested in-process too.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>

#include "test-support.h"

#define N_ITEMS 12

/* A token no other process has on its command line. */
static char *
make_token (void)
{
  return g_strdup_printf ("blocker%08x%08x", g_random_int (), g_random_int ());
}

static char *
blocker_def (const char *token)
{
  /* The token is in the child's own command line: /proc finds leftovers. */
  return g_strdup_printf ("name: blocker\n"
                          "command: [/bin/sh, -c, 'while [ ! -e release ]; do sleep 0.1; done; echo released', %s]\n",
                          token);
}

/* The processes with @token on their command line; with @sessions, how
 * many sessions they are in instead: each child leads its own, and the
 * shell's fork for `sleep` shows the token too until it execs, so two
 * processes need not be two children. */
static guint
count_with_token (const char *token,
                  gboolean    sessions)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  const char *name;
  guint n = 0;

  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *cmdline = NULL;
      g_autofree char *stat = NULL;
      gsize len = 0;

      if (!g_ascii_isdigit (name[0]))
        continue;
      path = g_strdup_printf ("/proc/%s/cmdline", name);
      if (!g_file_get_contents (path, &cmdline, &len, NULL))
        continue;
      for (gsize i = 0; i + 1 < len; i++)
        if (cmdline[i] == '\0')
          cmdline[i] = ' ';
      if (strstr (cmdline, token) == NULL)
        continue;
      if (!sessions)
        {
          n++;
          continue;
        }
      g_free (path);
      path = g_strdup_printf ("/proc/%s/stat", name);
      if (g_file_get_contents (path, &stat, NULL, NULL) && strrchr (stat, ')') != NULL)
        {
          /* "pid (comm) state ppid pgrp session ...", counted from the last ')'. */
          g_auto(GStrv) fields = g_strsplit (strrchr (stat, ')') + 2, " ", 5);

          if (g_strv_length (fields) >= 4 && g_hash_table_add (seen, g_strdup (fields[3])))
            n++;
        }
    }
  return n;
}

static guint
count_processes_with (const char *token)
{
  return count_with_token (token, FALSE);
}

/* How many children run: their sessions. */
static guint
count_children_with (const char *token)
{
  return count_with_token (token, TRUE);
}

static void
assert_no_worktrees_left (const char *root)
{
  g_autofree char *dir_path = g_build_filename (root, ".subagent", "worktrees", NULL);
  g_autofree char *list = sat_run (root, FALSE, NULL, "git", "worktree", "list", "--porcelain", NULL);
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  const char *entry;
  guint n = 0;

  for (const char *p = list; (p = strstr (p, "worktree ")) != NULL; p++)
    n++;
  g_assert_cmpuint (n, ==, 1);  /* the main one */
  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    g_assert_true (g_str_has_prefix (entry, ".") || g_str_has_prefix (entry, "pool"));
}

static char *
write_batch_file (const char *root)
{
  g_autoptr(GString) json = g_string_new ("[");
  char *path = g_build_filename (root, "..", "batch-sigterm.json", NULL);

  for (guint i = 0; i < N_ITEMS; i++)
    g_string_append_printf (json, "%s{\"task\": \"item %u\", \"def_name\": \"blocker\", \"isolation\": \"worktree\"}",
                            i ? ", " : "", i);
  g_string_append (json, "]");
  g_assert_true (g_file_set_contents (path, json->str, -1, NULL));
  return path;
}

static void
test_cli_sigterm_stops_batch (void)
{
  g_autofree char *token = make_token ();
  g_autofree char *def = blocker_def (token);
  g_autofree char *root = sat_make_git_repo ("README", "hello\n", ".subagent/agents/blocker.yaml", def, NULL);
  g_autofree char *batch = write_batch_file (root);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                        G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GDataInputStream) lines = NULL;
  g_autoptr(GString) rest = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) results = NULL;
  JsonArray *array;
  guint started = 0, cancelled = 0, never_started = 0;
  gint64 signalled_at = 0;
  gboolean in_results = FALSE;
  char *line;

  g_subprocess_launcher_set_cwd (launcher, root);
  process = g_subprocess_launcher_spawn (launcher, &error, sat_subagentctl (), "--events", "batch", "--json",
                                         "--max-parallel", "2", batch, NULL);
  g_assert_no_error (error);
  lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (process));

  while ((line = g_data_input_stream_read_line_utf8 (lines, NULL, NULL, &error)) != NULL)
    {
      if (!in_results && line[0] == '[')
        in_results = TRUE;
      if (in_results)
        {
          g_string_append (rest, line);
          g_string_append_c (rest, '\n');
        }
      else if (g_str_has_prefix (line, "{\"event\":\"started\"") && strstr (line, "cancelled_before_start") == NULL)
        {
          started++;
          if (started == 2 && signalled_at == 0)
            {
              gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

              /* Both slots run real children (their programs started);
               * the other ten wait in the batch or the supervisor. */
              while (count_children_with (token) < 2 && g_get_monotonic_time () < deadline)
                g_usleep (20 * 1000);
              g_assert_cmpuint (count_children_with (token), >=, 2);
              signalled_at = g_get_monotonic_time ();
              g_subprocess_send_signal (process, SIGTERM);
            }
        }
      g_free (line);
    }
  g_assert_no_error (error);
  g_subprocess_wait (process, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (signalled_at, >, 0);
  g_test_message ("exited %.2f s after SIGTERM", (g_get_monotonic_time () - signalled_at) / 1e6);
  /* Within the supervisor's shutdown timeout. */
  g_assert_cmpint (g_get_monotonic_time () - signalled_at, <, SUBAGENT_SUPERVISOR_DEFAULT_SHUTDOWN_TIMEOUT_MS * 1000);
  g_assert_true (g_subprocess_get_if_exited (process));
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 128 + SIGTERM);
  /* No item started after the signal. */
  g_assert_cmpuint (started, ==, 2);

  results = json_from_string (rest->str, &error);
  g_assert_no_error (error);
  array = json_node_get_array (results);
  g_assert_cmpuint (json_array_get_length (array), ==, N_ITEMS);
  for (guint i = 0; i < N_ITEMS; i++)
    {
      JsonObject *result = json_array_get_object_element (array, i);
      JsonObject *lineage = json_object_get_object_member (result, "lineage");

      if (g_str_equal (json_object_get_string_member (result, "status"), "cancelled"))
        cancelled++;
      if (strstr (json_object_get_string_member_with_default (result, "message", ""), "before it started") != NULL)
        never_started++;
      g_assert_nonnull (lineage);
      g_assert_cmpint (json_object_get_int_member (lineage, "batch_index"), ==, i);
      g_assert_cmpstr (json_object_get_string_member (lineage, "def_name"), ==, "blocker");
      g_assert_cmpstr (json_object_get_string_member (lineage, "isolation"), ==, "worktree");
    }
  g_assert_cmpuint (cancelled, ==, N_ITEMS);
  g_assert_cmpuint (never_started, ==, N_ITEMS - 2);

  /* Nothing left behind. */
  g_assert_cmpuint (count_processes_with (token), ==, 0);
  assert_no_worktrees_left (root);
  g_unlink (batch);
  sat_rm_rf (root);
}

typedef struct {
  GPtrArray *results;
  gboolean done;
} BatchWait;

static void
batch_done (GObject      *source,
            GAsyncResult *res,
            gpointer      user_data)
{
  BatchWait *wait = user_data;
  g_autoptr(GError) error = NULL;

  wait->results = subagent_supervisor_run_batch_finish (SUBAGENT_SUPERVISOR (source), res, &error);
  g_assert_no_error (error);
  wait->done = TRUE;
}

static void
on_started (SubagentSupervisor *supervisor,
            SubagentEvent      *event,
            gpointer            user_data)
{
  GCancellable *cancellable = user_data;

  if (subagent_event_get_kind (event) == SUBAGENT_EVENT_STARTED && subagent_supervisor_get_n_running (supervisor) == 2)
    g_cancellable_cancel (cancellable);
}

/* The library: cancelling the batch's cancellable stops feeding; queued
 * items end `cancelled` without starting, the running ones are cancelled,
 * and the batch still returns one result per item. */
static void
test_cancellable_stops_feeding (void)
{
  g_autofree char *token = make_token ();
  g_autofree char *def = blocker_def (token);
  g_autofree char *root = sat_make_git_repo ("README", "hello\n", ".subagent/agents/blocker.yaml", def, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = subagent_manager_new (root, &error);
  g_autoptr(SubagentSupervisor) supervisor = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SubagentShutdownReport) report = NULL;
  BatchWait wait = { NULL, FALSE };
  guint never_started = 0;

  g_assert_no_error (error);
  supervisor = g_object_new (SUBAGENT_TYPE_SUPERVISOR, "manager", manager, "max-parallel", 2, NULL);
  for (guint i = 0; i < N_ITEMS; i++)
    {
      g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
      g_autofree char *task = g_strdup_printf ("item %u", i);

      subagent_run_options_set_def_name (options, "blocker");
      subagent_run_options_set_isolation (options, "worktree");
      g_ptr_array_add (items, subagent_batch_item_new (task, options));
    }
  g_signal_connect (supervisor, "event", G_CALLBACK (on_started), cancellable);
  subagent_supervisor_run_batch_async (supervisor, items, cancellable, batch_done, &wait);
  sat_wait_for_flag (&wait.done);

  g_assert_cmpuint (wait.results->len, ==, N_ITEMS);
  for (guint i = 0; i < N_ITEMS; i++)
    {
      SubagentRunResult *result = wait.results->pdata[i];

      g_test_message ("item %u: %s", i, subagent_run_result_get_message (result));
      g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_CANCELLED);
      g_assert_cmpint (subagent_lineage_get_batch_index (subagent_run_result_get_lineage (result)), ==, i);
      if (strstr (subagent_run_result_get_message (result), "before it started") != NULL)
        never_started++;
    }
  g_assert_cmpuint (never_started, ==, N_ITEMS - 2);
  g_ptr_array_unref (wait.results);
  report = subagent_supervisor_shutdown (supervisor, 0, &error);
  g_assert_no_error (error);
  g_assert_true (subagent_shutdown_report_get_clean (report));
  g_assert_cmpuint (count_processes_with (token), ==, 0);
  assert_no_worktrees_left (root);
  sat_rm_rf (root);
}

/* `subagentctl run` too: SIGTERM cancels the child, whose result (status
 * cancelled) is printed, within the shutdown timeout; nothing is left. */
static void
test_cli_sigterm_stops_run (void)
{
  g_autofree char *token = make_token ();
  g_autofree char *command = g_strdup_printf ("sh -c 'while [ ! -e release ]; do sleep 0.1; done' %s", token);
  g_autofree char *root = sat_make_git_repo ("README", "hello\n", NULL);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                        G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *out = NULL;
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  gint64 signalled_at;

  g_subprocess_launcher_set_cwd (launcher, root);
  process = g_subprocess_launcher_spawn (launcher, &error, sat_subagentctl (), "run", "--json", "--isolation",
                                         "worktree", "--command", command, "--", "block", NULL);
  g_assert_no_error (error);
  /* subagentctl's own command line holds the token too: wait for the child. */
  while (count_children_with (token) < 2 && g_get_monotonic_time () < deadline)
    g_usleep (20 * 1000);
  g_assert_cmpuint (count_children_with (token), >=, 2);
  signalled_at = g_get_monotonic_time ();
  g_subprocess_send_signal (process, SIGTERM);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_get_monotonic_time () - signalled_at, <, SUBAGENT_SUPERVISOR_DEFAULT_SHUTDOWN_TIMEOUT_MS * 1000);
  node = json_from_string (out, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (node), "status"), ==, "cancelled");
  g_assert_cmpuint (count_processes_with (token), ==, 0);
  assert_no_worktrees_left (root);
  sat_rm_rf (root);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/batch-sigterm/cli/stops-the-batch", test_cli_sigterm_stops_batch);
  g_test_add_func ("/batch-sigterm/cancellable-stops-feeding", test_cancellable_stops_feeding);
  g_test_add_func ("/batch-sigterm/cli/run-stops", test_cli_sigterm_stops_run);
  return g_test_run ();
}
