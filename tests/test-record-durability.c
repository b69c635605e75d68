/* test-record-durability.c: a host SIGKILLed right after a result returned
 * still has the run's session record and audit line.
 *
 * The session log syncs lines in batches on its own thread and the audit
 * log keeps its descriptor open (docs/performance.md); both still write
 * each line with write() before the result returns. The test runs a host
 * (this program with --host ROOT) that runs command children through a
 * manager, prints each result's run id, and is SIGKILLed as soon as the
 * parent reads one: the records must be in the files.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <signal.h>
#include <string.h>

#include <glib/gstdio.h>

#include "test-support.h"

/* The host: runs children until killed, printing each run id at once. */
static int
run_host (const char *root)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = subagent_manager_new (root, &error);

  if (manager == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  for (;;)
    {
      g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
      g_autoptr(SubagentRunResult) result = NULL;

      subagent_run_options_set_def_name (options, "quick");
      result = subagent_manager_run (manager, "go", options, NULL, &error);
      if (result == NULL)
        {
          g_printerr ("%s\n", error->message);
          return 1;
        }
      /* One write(): the parent kills us as soon as it has read it. */
      {
        g_autofree char *line = g_strdup_printf ("%s\n", subagent_run_result_get_run_id (result));

        if (write (STDOUT_FILENO, line, strlen (line)) < 0)
          return 1;
      }
    }
}

static char *
read_all_logs (const char *dir)
{
  g_autoptr(GDir) listing = g_dir_open (dir, 0, NULL);
  GString *all = g_string_new (NULL);
  const char *name;

  while (listing != NULL && (name = g_dir_read_name (listing)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autofree char *text = NULL;

      if (g_file_get_contents (path, &text, NULL, NULL))
        g_string_append (all, text);
    }
  return g_string_free (all, FALSE);
}

static void
test_sigkill_after_result (void)
{
  g_autofree char *root = sat_make_temp_dir ("durability");
  g_autofree char *self = g_test_build_filename (G_TEST_BUILT, "test-record-durability", NULL);
  g_autofree char *sessions = NULL;
  g_autofree char *audit_path = NULL;

  sat_write_file (root, ".subagent/agents/quick.yaml",
                  "name: quick\nisolation: shared\ncommand: [/bin/true]\n");
  sessions = g_build_filename (root, ".subagent", "sessions", NULL);
  audit_path = g_build_filename (root, ".subagent", "audit.jsonl", NULL);

  /* Killed after the first, then after a later result. */
  for (guint round = 0; round < 4; round++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GSubprocess) host = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                                                      self, "--host", root, NULL);
      g_autoptr(GDataInputStream) out = NULL;
      g_autofree char *run_id = NULL;
      g_autofree char *records = NULL;
      g_autofree char *audit = NULL;
      guint wanted = 1 + round * 3;

      g_assert_no_error (error);
      out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (host));
      for (guint i = 0; i < wanted; i++)
        {
          g_free (run_id);
          run_id = g_data_input_stream_read_line (out, NULL, NULL, &error);
          g_assert_no_error (error);
          g_assert_nonnull (run_id);
        }
      g_subprocess_force_exit (host);
      g_assert_true (g_subprocess_wait (host, NULL, NULL));
      g_assert_true (g_subprocess_get_if_signaled (host));
      g_assert_cmpint (g_subprocess_get_term_sig (host), ==, SIGKILL);

      records = read_all_logs (sessions);
      if (strstr (records, run_id) == NULL)
        g_error ("the session record of run %s is missing after SIGKILL", run_id);
      g_assert_true (g_file_get_contents (audit_path, &audit, NULL, NULL));
      if (strstr (audit, run_id) == NULL)
        g_error ("the audit line of run %s is missing after SIGKILL", run_id);
    }
  sat_rm_rf (root);
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 3 && g_str_equal (argv[1], "--host"))
    return run_host (argv[2]);

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/records/sigkill-after-result", test_sigkill_after_result);
  return g_test_run ();
}
