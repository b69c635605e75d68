/* test-prune-crash.c: a host killed with SIGKILL mid-run, then
 * `subagentctl prune` reclaims what it left and nothing else (issue 3).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-support.h"

typedef struct {
  char *root;
  char *fifo;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->root = sat_make_git_repo ("README", "hello\n", "src/a.c", "int a;\n", NULL);
  {
    g_autofree char *dir = sat_make_temp_dir ("prune-fifo");
    f->fifo = g_build_filename (dir, "started", NULL);
  }
  g_assert_cmpint (mkfifo (f->fifo, 0600), ==, 0);
  /* The child says where it works and its pid through the FIFO, then
   * blocks until it is killed. */
  /* Unconfined: it writes to the FIFO outside its workspace. */
  sat_write_file (f->root, ".subagent/agents/sleeper.yaml",
                  "name: sleeper\nconfinement: none\n"
                  "command: [/bin/sh, -c, 'echo \"$$ $SUBAGENT_CHILD_ROOT\" > \"$PRUNE_FIFO\"; exec sleep 600']\n");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_path_get_dirname (f->fifo);

  sat_rm_rf (f->root);
  sat_rm_rf (dir);
  g_free (f->root);
  g_free (f->fifo);
}

/* Starts `subagentctl run` on the sleeper; returns once the child runs
 * inside its workspace, with the host's pid, the child's pid and root. */
static GSubprocess *
start_host (Fixture *f, const char *isolation, int *child_pid, char **child_root)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GIOChannel) channel = NULL;
  g_autofree char *line = NULL;
  g_auto(GStrv) parts = NULL;
  GSubprocess *host;

  g_subprocess_launcher_setenv (launcher, "PRUNE_FIFO", f->fifo, TRUE);
  host = g_subprocess_launcher_spawn (launcher, &error, sat_subagentctl (), "run", "--root", f->root,
                                      "--def", "sleeper", "--isolation", isolation, "--", "wait", NULL);
  g_assert_no_error (error);
  /* Opening the FIFO for reading blocks until the child opens it. */
  channel = g_io_channel_new_file (f->fifo, "r", &error);
  g_assert_no_error (error);
  g_io_channel_read_line (channel, &line, NULL, NULL, &error);
  g_assert_no_error (error);
  parts = g_strsplit (g_strstrip (line), " ", 2);
  *child_pid = atoi (parts[0]);
  *child_root = g_strdup (parts[1]);
  return host;
}

static void
kill_host (GSubprocess *host, int child_pid)
{
  g_subprocess_force_exit (host);  /* SIGKILL: no cleanup runs */
  g_subprocess_wait (host, NULL, NULL);
  g_assert_true (g_subprocess_get_if_signaled (host));
  g_assert_cmpint (g_subprocess_get_term_sig (host), ==, SIGKILL);
  kill (child_pid, SIGKILL);
}

static void
prune (Fixture *f)
{
  int status = -1;
  g_autofree char *out = sat_run (f->root, TRUE, &status, sat_subagentctl (), "prune", "--root", f->root, NULL);

  g_assert_cmpint (status, ==, 0);
}

static guint
owner_records (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) records = subagent_owner_record_list (f->root, &error);

  g_assert_no_error (error);
  return records->len;
}

static void
test_sigkill_worktree_then_prune (Fixture *f, gconstpointer data)
{
  g_autofree char *child_root = NULL;
  g_autofree char *foreign = g_strdup_printf ("%s-foreign", f->root);
  g_autofree char *branches = NULL;
  g_autofree char *worktrees = NULL;
  g_autoptr(SubagentIsolationProvider) provider = NULL;
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autoptr(SubagentIsolationContext) live = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) host = NULL;
  int child_pid = 0;

  /* Things prune must leave alone: a worktree on a non-subagent branch, and
   * a worktree whose owner (this process) is alive. */
  g_free (sat_run (f->root, FALSE, NULL, "git", "worktree", "add", "-q", "-b", "feature", foreign, NULL));
  provider = subagent_plugin_registry_get_isolation_provider (subagent_plugin_registry_get_default (),
                                                              "worktree", &error);
  g_assert_no_error (error);
  request = subagent_isolation_request_new (f->root, "worktree", "live-owner-key");
  live = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  g_assert_no_error (error);

  host = start_host (f, "worktree", &child_pid, &child_root);
  g_assert_true (g_file_test (child_root, G_FILE_TEST_IS_DIR));
  g_assert_cmpuint (owner_records (f), ==, 2);
  kill_host (host, child_pid);
  g_assert_true (g_file_test (child_root, G_FILE_TEST_IS_DIR));  /* left behind */

  prune (f);

  g_assert_false (g_file_test (child_root, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (owner_records (f), ==, 1);
  g_assert_true (g_file_test (foreign, G_FILE_TEST_IS_DIR));
  g_assert_true (g_file_test (subagent_isolation_context_get_child_root (live), G_FILE_TEST_IS_DIR));
  branches = sat_run (f->root, FALSE, NULL, "git", "branch", "--list", NULL);
  g_assert_nonnull (strstr (branches, "feature"));
  g_assert_nonnull (strstr (branches, "subagent/live-owner-key"));
  worktrees = sat_run (f->root, FALSE, NULL, "git", "worktree", "list", "--porcelain", NULL);
  g_assert_null (strstr (worktrees, child_root));
  /* Only the live one of ours is still a branch. */
  {
    g_auto(GStrv) lines = g_strsplit (branches, "\n", -1);
    guint ours = 0;
    for (guint i = 0; lines[i] != NULL; i++)
      ours += strstr (lines[i], "subagent/") != NULL;
    g_assert_cmpuint (ours, ==, 1);
  }

  subagent_isolation_context_cleanup (live);
  sat_rm_rf (foreign);
}

static void
test_sigkill_snapshot_then_prune (Fixture *f, gconstpointer data)
{
  g_autofree char *child_root = NULL;
  g_autofree char *bystander = sat_make_temp_dir ("prune-bystander");
  g_autoptr(GSubprocess) host = NULL;
  int child_pid = 0;

  host = start_host (f, "directory-snapshot", &child_pid, &child_root);
  g_assert_true (g_file_test (child_root, G_FILE_TEST_IS_DIR));
  kill_host (host, child_pid);

  prune (f);

  g_assert_false (g_file_test (child_root, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (owner_records (f), ==, 0);
  g_assert_true (g_file_test (bystander, G_FILE_TEST_IS_DIR));
  g_assert_true (g_file_test (f->root, G_FILE_TEST_IS_DIR));
  sat_rm_rf (bystander);
}

static void
test_prune_dry_run_keeps_everything (Fixture *f, gconstpointer data)
{
  g_autofree char *child_root = NULL;
  g_autoptr(GSubprocess) host = NULL;
  g_autofree char *out = NULL;
  int child_pid = 0, status = -1;

  host = start_host (f, "worktree", &child_pid, &child_root);
  kill_host (host, child_pid);
  out = sat_run (f->root, TRUE, &status, sat_subagentctl (), "prune", "--dry-run", "--root", f->root, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "worktree"));
  /* A dry run says what it would do, never that it did (issue 18 item 5). */
  g_assert_true (g_str_has_prefix (out, "would-remove"));
  g_assert_nonnull (strstr (out, "\nwould remove 1,"));
  g_assert_null (strstr (out, "removed"));
  g_assert_true (g_file_test (child_root, G_FILE_TEST_IS_DIR));
  g_assert_cmpuint (owner_records (f), ==, 1);
  prune (f);
  g_assert_false (g_file_test (child_root, G_FILE_TEST_EXISTS));
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/prune/sigkill-host/worktree", Fixture, NULL, fixture_setup,
              test_sigkill_worktree_then_prune, fixture_teardown);
  g_test_add ("/prune/sigkill-host/directory-snapshot", Fixture, NULL, fixture_setup,
              test_sigkill_snapshot_then_prune, fixture_teardown);
  g_test_add ("/prune/sigkill-host/dry-run-keeps-everything", Fixture, NULL, fixture_setup,
              test_prune_dry_run_keeps_everything, fixture_teardown);
  return g_test_run ();
}
