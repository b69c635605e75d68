/* test-worktree-cli.c: `subagentctl worktrees list|prune` on real
 * repositories, with worktrees of live and dead processes and ones that are
 * not ours.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <unistd.h>

#include "test-worktree-helpers.h"

/* A repository with four candidates: live1 (this process, alive), dead1
 * (made by a subprocess that exited without cleanup), foreign (a worktree
 * in our directory on a branch that is not ours) and ghost (a directory git
 * does not list). */
typedef struct {
  char *repo;
  char *root;
  SubagentIsolationContext *live;
} CliFixture;

/* Kept reachable so the leak checker does not count the leftover. */
static SubagentIsolationContext *leftover;

static void
make_leftover_subprocess (void)
{
  leftover = prepare_ok (g_getenv ("WT_TEST_ROOT"), "dead1", NULL);
  g_assert_nonnull (leftover);
  /* Die like a killed host: no cleanup, no exit handlers (nor a leak report
   * about the worktree it deliberately leaves behind). */
  _exit (0);
}

static void
cli_setup (CliFixture    *f,
           gconstpointer  data)
{
  f->repo = standard_repo ();
  f->root = real (f->repo);
  g_setenv ("WT_TEST_ROOT", f->root, TRUE);
  g_test_trap_subprocess ("/worktree-cli/subprocess/make-leftover", 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_unsetenv ("WT_TEST_ROOT");
  f->live = prepare_ok (f->root, "live1", NULL);
  g_free (sat_run (f->root, FALSE, NULL, "git", "worktree", "add", "-q", "-b", "feature",
                   ".subagent/worktrees/foreign", NULL));
  sat_write_file (f->root, ".subagent/worktrees/ghost/file", "not listed by git\n");
}

static void
cli_teardown (CliFixture    *f,
              gconstpointer  data)
{
  subagent_isolation_context_cleanup (f->live);
  g_clear_object (&f->live);
  sat_rm_rf (f->repo);
  g_free (f->repo);
  g_free (f->root);
}

/* Runs subagentctl worktrees ARGS... --root ROOT; returns its exit status. */
#define CTL(f, out, ...) ctl_run ((f), (out), __VA_ARGS__, NULL)

static int
ctl_run (CliFixture  *f,
         char       **out,
         const char  *first,
         ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *stdout_text = NULL;
  va_list ap;

  g_ptr_array_add (argv, (gpointer) sat_subagentctl ());
  g_ptr_array_add (argv, "worktrees");
  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, "--root");
  g_ptr_array_add (argv, f->root);
  g_ptr_array_add (argv, NULL);
  proc = g_subprocess_newv ((const char * const *) argv->pdata,
                            G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, &stdout_text, NULL, &error);
  g_assert_no_error (error);
  if (out != NULL)
    *out = g_steal_pointer (&stdout_text);
  return g_subprocess_get_exit_status (proc);
}

static JsonObject *
find_listed (JsonArray  *array,
             const char *key)
{
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonObject *o = json_array_get_object_element (array, i);
      if (g_str_equal (json_object_get_string_member (o, "session_key"), key))
        return o;
    }
  return NULL;
}

static void
test_list_shows_ours (CliFixture    *f,
                      gconstpointer  data)
{
  g_autofree char *json = NULL, *text = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  JsonArray *array;
  JsonObject *o;

  g_assert_cmpint (CTL (f, &json, "list", "--json"), ==, 0);
  node = json_from_string (json, &error);
  g_assert_no_error (error);
  array = json_node_get_array (node);
  g_assert_cmpuint (json_array_get_length (array), ==, 2);
  o = find_listed (array, "live1");
  g_assert_nonnull (o);
  g_assert_cmpstr (json_object_get_string_member (o, "branch"), ==, "subagent/live1");
  g_assert_cmpstr (json_object_get_string_member (o, "path"), ==,
                   subagent_isolation_context_get_child_root (f->live));
  g_assert_cmpint (json_object_get_int_member (o, "pid"), ==, getpid ());
  g_assert_true (json_object_get_boolean_member (o, "alive"));
  g_assert_nonnull (json_object_get_string_member (o, "created_at"));
  g_assert_cmpstr (json_object_get_string_member (o, "parent_run_id"), ==, "run-1");
  o = find_listed (array, "dead1");
  g_assert_nonnull (o);
  g_assert_false (json_object_get_boolean_member (o, "alive"));
  g_assert_null (find_listed (array, "foreign"));
  g_assert_null (find_listed (array, "ghost"));

  g_assert_cmpint (CTL (f, &text, "list"), ==, 0);
  g_assert_nonnull (strstr (text, "live1"));
  g_assert_nonnull (strstr (text, "subagent/dead1"));
  g_assert_nonnull (strstr (text, "dead"));
  g_assert_null (strstr (text, "ghost"));
}

static void
test_prune_live_needs_force (CliFixture    *f,
                             gconstpointer  data)
{
  g_autofree char *out = NULL;

  g_assert_cmpint (CTL (f, NULL, "prune", "live1"), !=, 0);
  g_assert_true (exists (f->root, ".subagent/worktrees/live1/README"));
  g_assert_cmpint (CTL (f, &out, "prune", "--force", "live1"), ==, 0);
  g_assert_nonnull (strstr (out, "Removed worktree live1"));
  assert_gone (f->root, "live1");
  g_assert_true (exists (f->root, ".subagent/worktrees/dead1/README"));
}

static void
test_prune_dead_owner (CliFixture    *f,
                       gconstpointer  data)
{
  g_autofree char *json = NULL;

  g_assert_cmpint (CTL (f, NULL, "prune", "dead1"), ==, 0);
  assert_gone (f->root, "dead1");
  g_assert_cmpint (CTL (f, &json, "list", "--json"), ==, 0);
  g_assert_null (strstr (json, "dead1"));
  g_assert_nonnull (strstr (json, "live1"));
}

static void
test_prune_never_foreign (CliFixture    *f,
                          gconstpointer  data)
{
  g_autofree char *branches = NULL;

  g_assert_cmpint (CTL (f, NULL, "prune", "--force", "foreign"), !=, 0);
  g_assert_true (exists (f->root, ".subagent/worktrees/foreign/README"));
  branches = GIT (f->root, "branch", "--list", "feature");
  g_assert_cmpstr (branches, ==, "+ feature");
  g_assert_cmpint (CTL (f, NULL, "prune", "--force", "ghost"), !=, 0);
  g_assert_true (exists (f->root, ".subagent/worktrees/ghost/file"));
  g_assert_cmpint (CTL (f, NULL, "prune", "--force", "../.."), !=, 0);
  g_assert_true (exists (f->root, "README"));
}

int
main (int argc, char *argv[])
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  registry = subagent_plugin_registry_new (NULL);

  g_test_add_func ("/worktree-cli/subprocess/make-leftover", make_leftover_subprocess);
  g_test_add ("/worktree-cli/list/shows-ours-with-owners", CliFixture, NULL,
              cli_setup, test_list_shows_ours, cli_teardown);
  g_test_add ("/worktree-cli/prune/live-owner-needs-force", CliFixture, NULL,
              cli_setup, test_prune_live_needs_force, cli_teardown);
  g_test_add ("/worktree-cli/prune/dead-owner", CliFixture, NULL,
              cli_setup, test_prune_dead_owner, cli_teardown);
  g_test_add ("/worktree-cli/prune/never-foreign-or-unlisted", CliFixture, NULL,
              cli_setup, test_prune_never_foreign, cli_teardown);

  rc = g_test_run ();
  g_clear_object (&registry);
  return rc;
}
