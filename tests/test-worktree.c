/* test-worktree.c: the isolation-worktree plugin on real git repositories,
 * and its recycling pool.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>

#include "test-worktree-helpers.h"

/* ---- prepare ------------------------------------------------------------ */

static void
test_branch_path_exclude (void)
{
  g_autofree char *repo = standard_repo ();
  g_autofree char *root = real (repo);
  g_autofree char *expected = g_build_filename (root, ".subagent/worktrees/k1", NULL);
  g_autoptr(SubagentIsolationContext) c1 = prepare_ok (repo, "k1", NULL);
  g_autoptr(SubagentIsolationContext) c2 = prepare_ok (repo, "k2", NULL);
  g_autofree char *head = GIT (root, "rev-parse", "HEAD");
  g_autofree char *branch_head = GIT (root, "rev-parse", "subagent/k1");
  g_autofree char *child_branch = GIT (expected, "rev-parse", "--abbrev-ref", "HEAD");
  g_autofree char *exclude = sat_read_file (root, ".git/info/exclude");
  g_autofree char *readme = sat_read_file (expected, "README");
  g_autofree char *listed = GIT (root, "worktree", "list", "--porcelain");

  g_assert_cmpstr (subagent_isolation_context_get_isolation (c1), ==, "worktree");
  g_assert_cmpstr (subagent_isolation_context_get_worktree_path (c1), ==, expected);
  g_assert_cmpstr (subagent_isolation_context_get_child_root (c1), ==, expected);
  g_assert_cmpstr (subagent_isolation_context_get_parent_root (c1), ==, root);
  g_assert_cmpstr (subagent_isolation_context_get_branch (c1), ==, "subagent/k1");
  g_assert_cmpuint (g_strv_length ((char **) subagent_isolation_context_get_warnings (c1)), ==, 0);
  g_assert_cmpstr (branch_head, ==, head);
  g_assert_cmpstr (child_branch, ==, "subagent/k1");
  g_assert_cmpstr (readme, ==, "hello\n");
  g_assert_nonnull (strstr (listed, expected));
  /* Added once, however many worktrees. */
  g_assert_nonnull (strstr (exclude, "\n.subagent/\n"));
  g_assert_null (strstr (strstr (exclude, ".subagent/") + 1, ".subagent/"));

  subagent_isolation_context_cleanup (c1);
  subagent_isolation_context_cleanup (c2);
  sat_rm_rf (repo);
}

static void
test_parent_status_clean (void)
{
  g_autofree char *repo = standard_repo ();
  g_autoptr(SubagentIsolationContext) c = prepare_ok (repo, "st", NULL);
  g_autofree char *status = GIT (repo, "status", "--porcelain");
  g_autofree char *child_status = GIT (subagent_isolation_context_get_child_root (c), "status", "--porcelain");

  g_assert_cmpstr (status, ==, "");
  g_assert_cmpstr (child_status, ==, "");
  subagent_isolation_context_cleanup (c);
  g_free (status);
  status = GIT (repo, "status", "--porcelain");
  g_assert_cmpstr (status, ==, "");
  sat_rm_rf (repo);
}

static void
assert_unavailable_and_untouched (const char *root)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentIsolationContext) c = try_prepare (root, "nope", NULL, &error);

  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE);
  g_assert_null (c);
  g_assert_nonnull (strstr (error->message, root));
  g_assert_false (exists (root, ".subagent"));
}

static void
test_parent_is_linked_worktree (void)
{
  g_autofree char *repo = standard_repo ();
  g_autofree char *base = sat_make_temp_dir ("subagent-linked");
  g_autofree char *linked = g_build_filename (base, "linked", NULL);
  g_autoptr(SubagentIsolationContext) c = NULL;
  g_autofree char *head = NULL, *child_head = NULL, *status = NULL;

  g_free (sat_run (repo, FALSE, NULL, "git", "worktree", "add", "-q", "-b", "side", linked, NULL));
  sat_write_file (linked, "side.txt", "on the side\n");
  g_free (sat_run (linked, FALSE, NULL, "git", "add", "side.txt", NULL));
  g_free (sat_run (linked, FALSE, NULL, "git", "commit", "-q", "-m", "side", NULL));
  head = GIT (linked, "rev-parse", "HEAD");

  c = prepare_ok (linked, "lw", NULL);
  child_head = GIT (subagent_isolation_context_get_child_root (c), "rev-parse", "HEAD");
  g_assert_cmpstr (child_head, ==, head);
  g_assert_true (exists (subagent_isolation_context_get_child_root (c), "side.txt"));
  /* The metadata lives in the common git dir, as git does it. */
  g_assert_true (exists (repo, ".git/worktrees/lw"));
  status = GIT (linked, "status", "--porcelain");
  g_assert_cmpstr (status, ==, "");
  subagent_isolation_context_cleanup (c);
  assert_gone (repo, "lw");
  g_assert_false (exists (linked, ".subagent/worktrees/lw"));
  sat_rm_rf (base);
  sat_rm_rf (repo);
}

static void
test_refuses_non_repository (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-plain");
  g_autofree char *entries = NULL;

  sat_write_file (dir, "file.txt", "x\n");
  assert_unavailable_and_untouched (dir);
  entries = dir_entries (dir);
  g_assert_cmpstr (entries, ==, "file.txt");
  sat_rm_rf (dir);
}

static void
test_refuses_empty_repository (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-empty");
  g_autofree char *refs = NULL;

  g_free (sat_run (dir, FALSE, NULL, "git", "init", "-q", NULL));
  assert_unavailable_and_untouched (dir);
  refs = GIT (dir, "for-each-ref");
  g_assert_cmpstr (refs, ==, "");
  g_assert_false (exists (dir, ".git/worktrees"));
  sat_rm_rf (dir);
}

static void
test_refuses_bare_repository (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-bare");
  g_autofree char *refs = NULL;

  g_free (sat_run (dir, FALSE, NULL, "git", "init", "-q", "--bare", NULL));
  assert_unavailable_and_untouched (dir);
  refs = GIT (dir, "for-each-ref");
  g_assert_cmpstr (refs, ==, "");
  g_assert_false (exists (dir, "worktrees"));
  sat_rm_rf (dir);
}

static void
test_refuses_bad_request (void)
{
  g_autofree char *repo = standard_repo ();
  g_autoptr(GError) error = NULL;
  SubagentIsolationContext *c;

  c = try_prepare (repo, "k", "{\"pool_size\": -1}", &error);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION);
  g_assert_null (c);
  g_clear_error (&error);
  c = try_prepare (repo, "pool-3", NULL, &error);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED);
  g_assert_null (c);
  g_clear_error (&error);
  c = try_prepare (repo, "../escape", NULL, &error);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED);
  g_assert_null (c);
  g_assert_false (exists (repo, ".subagent"));
  sat_rm_rf (repo);
}

static void
test_half_way_failure (void)
{
  g_autofree char *repo = standard_repo ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentIsolationContext) c = NULL;
  g_autofree char *in_the_way = NULL;
  g_autofree char *listed = NULL;

  /* The branch and the admin dir get made; the worktree directory cannot. */
  sat_write_file (repo, ".subagent/worktrees/hw", "not a directory\n");
  c = try_prepare (repo, "hw", NULL, &error);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED);
  g_assert_null (c);
  g_assert_false (exists (repo, ".git/worktrees/hw"));
  g_assert_false (exists (repo, ".subagent/owners/hw.json"));
  listed = GIT (repo, "branch", "--list", "subagent/*");
  g_assert_cmpstr (listed, ==, "");
  /* What was there before is not ours to remove. */
  in_the_way = sat_read_file (repo, ".subagent/worktrees/hw");
  g_assert_cmpstr (in_the_way, ==, "not a directory\n");
  g_free (listed);
  listed = GIT (repo, "worktree", "list", "--porcelain");
  g_assert_null (strstr (listed, "hw"));
  sat_rm_rf (repo);
}

static void
test_dirty_parent_warns (void)
{
  g_autofree char *repo = standard_repo ();
  g_autoptr(SubagentIsolationContext) c = NULL;
  const char * const *warnings;
  g_autofree char *readme = NULL;

  sat_write_file (repo, "README", "changed\n");
  sat_write_file (repo, "notes.txt", "untracked\n");
  c = prepare_ok (repo, "dw", NULL);
  warnings = subagent_isolation_context_get_warnings (c);
  g_assert_cmpuint (g_strv_length ((char **) warnings), ==, 1);
  g_assert_nonnull (strstr (warnings[0], "2 uncommitted or untracked changes"));
  g_assert_nonnull (strstr (warnings[0], "include_dirty"));
  readme = sat_read_file (subagent_isolation_context_get_child_root (c), "README");
  g_assert_cmpstr (readme, ==, "hello\n");
  g_assert_false (exists (subagent_isolation_context_get_child_root (c), "notes.txt"));
  subagent_isolation_context_cleanup (c);
  sat_rm_rf (repo);
}

static void
test_include_dirty (void)
{
  g_autofree char *repo = standard_repo ();
  g_autoptr(SubagentIsolationContext) c = NULL;
  g_autofree char *readme = NULL, *untracked = NULL, *staged = NULL;
  const char *child;

  sat_write_file (repo, "README", "changed\n");
  sat_write_file (repo, "new/dir/file.txt", "untracked\n");
  sat_write_file (repo, "staged.txt", "staged\n");
  sat_write_file (repo, "build.log", "ignored\n");
  g_free (sat_run (repo, FALSE, NULL, "git", "add", "staged.txt", NULL));
  unlink_in (repo, "src/b.c");

  c = prepare_ok (repo, "id", "{\"include_dirty\": true}");
  child = subagent_isolation_context_get_child_root (c);
  g_assert_cmpuint (g_strv_length ((char **) subagent_isolation_context_get_warnings (c)), ==, 0);
  readme = sat_read_file (child, "README");
  untracked = sat_read_file (child, "new/dir/file.txt");
  staged = sat_read_file (child, "staged.txt");
  g_assert_cmpstr (readme, ==, "changed\n");
  g_assert_cmpstr (untracked, ==, "untracked\n");
  g_assert_cmpstr (staged, ==, "staged\n");
  g_assert_false (exists (child, "src/b.c"));
  g_assert_true (exists (child, "src/a.c"));
  g_assert_false (exists (child, "build.log"));
  subagent_isolation_context_cleanup (c);
  sat_rm_rf (repo);
}

static void
test_checkout_filters (void)
{
  g_autofree char *repo = sat_make_git_repo (".gitattributes", "*.txt text eol=crlf\n",
                                             "notes.txt", "one\ntwo\n",
                                             "plain.c", "int x;\n", NULL);
  g_autoptr(SubagentIsolationContext) c = prepare_ok (repo, "fl", NULL);
  g_autofree char *notes = sat_read_file (subagent_isolation_context_get_child_root (c), "notes.txt");
  g_autofree char *plain = sat_read_file (subagent_isolation_context_get_child_root (c), "plain.c");
  g_autofree char *status = GIT (subagent_isolation_context_get_child_root (c), "status", "--porcelain");

  /* Attributes apply as with git checkout. */
  g_assert_cmpstr (notes, ==, "one\r\ntwo\r\n");
  g_assert_cmpstr (plain, ==, "int x;\n");
  g_assert_cmpstr (status, ==, "");
  subagent_isolation_context_cleanup (c);
  sat_rm_rf (repo);
}

/* Enough files for the checkout to be split over threads, most of them in
 * one directory so the split has to go deeper than the top level. */
static char *
large_repo (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-repo");
  g_autofree char *link = g_build_filename (dir, "lib/core/link", NULL);

  g_free (sat_run (dir, FALSE, NULL, "git", "init", "-q", "-b", "main", NULL));
  for (int i = 0; i < 600; i++)
    {
      g_autofree char *path = g_strdup_printf (i % 5 == 0 ? "top%d.txt" : "lib/sub%d/file%d.c", i % 7, i);
      g_autofree char *contents = g_strdup_printf ("file %d\n", i);
      sat_write_file (dir, path, contents);
    }
  sat_write_file (dir, "lib/core/run.sh", "#!/bin/sh\n");
  chmod_in (dir, "lib/core/run.sh", 0755);
  g_assert_cmpint (symlink ("run.sh", link), ==, 0);
  g_free (sat_run (dir, FALSE, NULL, "git", "add", "-A", NULL));
  g_free (sat_run (dir, FALSE, NULL, "git", "commit", "-q", "-m", "large", NULL));
  return g_steal_pointer (&dir);
}

static void
test_large_tree_matches_parent (void)
{
  g_autofree char *repo = large_repo ();
  g_autoptr(SubagentIsolationContext) c = prepare_ok (repo, "lg", NULL);
  const char *child = subagent_isolation_context_get_child_root (c);
  g_autofree char *listing_child = tree_listing (child);
  g_autofree char *listing_parent = tree_listing (repo);
  g_autofree char *status = GIT (child, "status", "--porcelain", "--ignored");
  g_autofree char *staged = GIT (child, "diff", "--cached", "--name-only");
  g_autofree char *unstaged = GIT (child, "diff", "--name-only");

  g_assert_cmpstr (listing_child, ==, listing_parent);
  g_assert_cmpstr (status, ==, "");
  g_assert_cmpstr (staged, ==, "");
  g_assert_cmpstr (unstaged, ==, "");
  /* Removal on two threads leaves nothing, the child's own files included. */
  sat_write_file (child, "lib/sub1/extra/new.txt", "untracked\n");
  subagent_isolation_context_cleanup (c);
  assert_gone (repo, "lg");
  sat_rm_rf (repo);
}

/* A cold worktree on a spread worktrees directory is the checkout git
 * itself makes: same files, modes, links and index entries, and the
 * parent's ignored files stay in the parent. */
static void
test_cold_checkout_equals_git (void)
{
  g_autofree char *repo = large_repo ();
  g_autofree char *root = real (repo);
  g_autofree char *git_tree = g_build_filename (root, ".subagent/by-git", NULL);
  g_autofree char *worktrees = g_build_filename (root, ".subagent/worktrees", NULL);
  g_autoptr(SubagentIsolationContext) c = NULL;
  g_autofree char *ours_listing = NULL, *git_listing = NULL;
  g_autofree char *ours_index = NULL, *git_index = NULL, *status = NULL;
  const char *child;
  int fd, flags = 0, root_flags = 0;

  sat_write_file (root, ".gitignore", "*.log\n");
  g_free (sat_run (root, FALSE, NULL, "git", "add", ".gitignore", NULL));
  g_free (sat_run (root, FALSE, NULL, "git", "commit", "-q", "-m", "ignore logs", NULL));
  sat_write_file (root, "build.log", "the parent's ignored file\n");

  c = prepare_ok (root, "cold", NULL);
  child = subagent_isolation_context_get_child_root (c);
  g_free (sat_run (root, FALSE, NULL, "git", "worktree", "add", "-q", "--detach", git_tree, "HEAD", NULL));

  ours_listing = tree_listing (child);
  git_listing = tree_listing (git_tree);
  g_assert_cmpstr (ours_listing, ==, git_listing);
  ours_index = GIT (child, "ls-files", "--stage");
  git_index = GIT (git_tree, "ls-files", "--stage");
  g_assert_cmpstr (ours_index, ==, git_index);
  status = GIT (child, "status", "--porcelain", "--ignored");
  g_assert_cmpstr (status, ==, "");
  g_assert_false (exists (child, "build.log"));
  g_assert_true (exists (root, "build.log"));

  /* Where the filesystem has the flag (ext2/3/4), the worktrees directory
   * carries it, so each checkout gets a block group of its own. */
  fd = open (root, O_RDONLY | O_DIRECTORY);
  g_assert_cmpint (fd, >=, 0);
  if (ioctl (fd, FS_IOC_GETFLAGS, &root_flags) == 0)
    {
      int wfd = open (worktrees, O_RDONLY | O_DIRECTORY);
      g_assert_cmpint (wfd, >=, 0);
      g_assert_cmpint (ioctl (wfd, FS_IOC_GETFLAGS, &flags), ==, 0);
      g_assert_true (flags & FS_TOPDIR_FL);
      close (wfd);
    }
  else
    g_test_message ("no inode flags on this filesystem: placement not checked");
  close (fd);

  g_free (sat_run (root, FALSE, NULL, "git", "worktree", "remove", "--force", git_tree, NULL));
  subagent_isolation_context_cleanup (c);
  assert_gone (root, "cold");
  g_assert_true (exists (root, "build.log"));
  sat_rm_rf (repo);
}

/* ---- cleanup ------------------------------------------------------------ */

static void
test_cleanup_removes_everything (void)
{
  g_autofree char *repo = standard_repo ();
  g_autoptr(SubagentIsolationContext) c = prepare_ok (repo, "cl", NULL);
  g_autofree char *listed = NULL;

  /* The child's own files do not hold cleanup back. */
  sat_write_file (subagent_isolation_context_get_child_root (c), "deep/new/file", "x\n");
  subagent_isolation_context_cleanup (c);
  g_assert_true (subagent_isolation_context_is_cleaned_up (c));
  assert_gone (repo, "cl");
  listed = GIT (repo, "worktree", "list", "--porcelain");
  g_assert_null (strstr (listed, "/.subagent/"));
  sat_rm_rf (repo);
}

/* The branch the owner record names (in its extra members). */
static const char *
record_branch (JsonObject *record)
{
  JsonObject *extra = json_object_has_member (record, "extra") ?
    json_object_get_object_member (record, "extra") : record;

  return json_object_get_string_member_with_default (extra, "branch", NULL);
}

static SubagentIsolationContext *
rebuild_from_record (const char *root,
                     const char *key,
                     const char *worktree_path)
{
  g_autoptr(SubagentIsolationProvider) provider = worktree_provider ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) record = subagent_owner_record_load (root, key, &error);
  const char *path;

  g_assert_no_error (error);
  path = worktree_path ? worktree_path : json_object_get_string_member (record, "resource");
  return g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                       "provider", provider, "isolation", "worktree",
                       "parent-root", root, "session-key", key,
                       "worktree-path", path, "child-root", path,
                       "branch", record_branch (record), NULL);
}

static void
test_cleanup_twice (void)
{
  g_autofree char *repo = standard_repo ();
  g_autofree char *root = real (repo);
  g_autoptr(SubagentIsolationContext) c = prepare_ok (repo, "tw", NULL);
  g_autoptr(SubagentIsolationContext) again = rebuild_from_record (root, "tw", NULL);

  subagent_isolation_context_cleanup (c);
  subagent_isolation_context_cleanup (c);
  assert_gone (root, "tw");
  /* The provider's cleanup itself is idempotent, not only the context. */
  subagent_isolation_context_cleanup (again);
  assert_gone (root, "tw");
  g_assert_true (exists (root, "README"));
  sat_rm_rf (repo);
}

static void
test_cleanup_from_owner_record (void)
{
  g_autofree char *repo = standard_repo ();
  g_autofree char *root = real (repo);
  g_autoptr(SubagentIsolationContext) c = prepare_ok (repo, "rec", NULL);
  g_autoptr(JsonObject) record = NULL;
  g_autoptr(SubagentIsolationContext) rebuilt = NULL;
  g_autoptr(GError) error = NULL;

  record = subagent_owner_record_load (root, "rec", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (record, "kind"), ==, "worktree");
  g_assert_cmpstr (json_object_get_string_member (record, "resource"), ==,
                   subagent_isolation_context_get_worktree_path (c));
  g_assert_cmpstr (record_branch (record), ==, "subagent/rec");
  g_assert_cmpstr (json_object_get_string_member (record, "parent_run_id"), ==, "run-1");
  g_assert_cmpint (json_object_get_int_member (record, "pid"), ==, getpid ());

  /* What `subagentctl prune` does with a record. */
  rebuilt = rebuild_from_record (root, "rec", NULL);
  subagent_isolation_context_cleanup (rebuilt);
  assert_gone (root, "rec");
  subagent_isolation_context_cleanup (c);
  sat_rm_rf (repo);
}

static void
test_cleanup_refuses_foreign_path (void)
{
  g_autofree char *repo = standard_repo ();
  g_autofree char *root = real (repo);
  g_autoptr(SubagentIsolationContext) c = prepare_ok (repo, "fp", NULL);
  g_autoptr(SubagentIsolationContext) forged = rebuild_from_record (root, "fp", root);

  subagent_isolation_context_cleanup (forged);
  g_assert_true (exists (root, "README"));
  g_assert_true (exists (root, ".subagent/worktrees/fp/README"));
  subagent_isolation_context_cleanup (c);
  assert_gone (root, "fp");
  sat_rm_rf (repo);
}

static void
test_keep_branch (void)
{
  g_autofree char *repo = standard_repo ();
  g_autoptr(SubagentIsolationContext) c = prepare_ok (repo, "kb", "{\"keep_branch\": true}");
  const char *child = subagent_isolation_context_get_child_root (c);
  g_autofree char *subject = NULL;

  g_assert_cmpstr (subagent_isolation_context_get_branch (c), ==, "subagent/kb");
  sat_write_file (child, "result.txt", "work\n");
  g_free (sat_run (child, FALSE, NULL, "git", "add", "result.txt", NULL));
  g_free (sat_run (child, FALSE, NULL, "git", "commit", "-q", "-m", "child work", NULL));
  subagent_isolation_context_cleanup (c);
  g_assert_false (exists (repo, ".subagent/worktrees/kb"));
  g_assert_false (exists (repo, ".git/worktrees/kb"));
  subject = GIT (repo, "log", "-1", "--format=%s", "subagent/kb");
  g_assert_cmpstr (subject, ==, "child work");
  sat_rm_rf (repo);
}

/* ---- concurrency -------------------------------------------------------- */

#define N_CONCURRENT 10

typedef struct {
  SubagentIsolationContext *contexts[N_CONCURRENT];
  int done;
} Concurrent;

static void
prepared_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  Concurrent *state = user_data;
  g_autoptr(GError) error = NULL;
  SubagentIsolationContext *context =
    subagent_isolation_provider_prepare_finish (SUBAGENT_ISOLATION_PROVIDER (source), result, &error);

  g_assert_no_error (error);
  state->contexts[state->done++] = context;
}

static gpointer
cleanup_thread (gpointer data)
{
  subagent_isolation_context_cleanup (data);
  return NULL;
}

static void
test_concurrent_prepares (void)
{
  g_autofree char *repo = standard_repo ();
  g_autoptr(SubagentIsolationProvider) provider = worktree_provider ();
  g_autofree char *head = GIT (repo, "rev-parse", "HEAD");
  g_autofree char *listed = NULL;
  GThread *threads[N_CONCURRENT];
  Concurrent state = { { NULL }, 0 };

  for (int i = 0; i < N_CONCURRENT; i++)
    {
      g_autofree char *key = g_strdup_printf ("c%d", i);
      g_autoptr(SubagentIsolationRequest) request = make_request (repo, key, NULL);
      subagent_isolation_provider_prepare_async (provider, request, NULL, prepared_cb, &state);
    }
  while (state.done < N_CONCURRENT)
    g_main_context_iteration (NULL, TRUE);

  listed = GIT (repo, "worktree", "list", "--porcelain");
  for (int i = 0; i < N_CONCURRENT; i++)
    {
      const char *child = subagent_isolation_context_get_child_root (state.contexts[i]);
      g_autofree char *child_head = GIT (child, "rev-parse", "HEAD");
      g_autofree char *status = GIT (child, "status", "--porcelain");
      g_autofree char *readme = sat_read_file (child, "README");

      g_assert_cmpstr (child_head, ==, head);
      g_assert_cmpstr (status, ==, "");
      g_assert_cmpstr (readme, ==, "hello\n");
      g_assert_nonnull (strstr (listed, child));
    }
  for (int i = 0; i < N_CONCURRENT; i++)
    threads[i] = g_thread_new ("cleanup", cleanup_thread, state.contexts[i]);
  for (int i = 0; i < N_CONCURRENT; i++)
    {
      g_thread_join (threads[i]);
      g_object_unref (state.contexts[i]);
    }
  for (int i = 0; i < N_CONCURRENT; i++)
    {
      g_autofree char *key = g_strdup_printf ("c%d", i);
      assert_gone (repo, key);
    }
  sat_rm_rf (repo);
}

/* ---- the recycling pool ------------------------------------------------- */

static void
dirty_everything (const char *child)
{
  g_autofree char *locked = NULL;

  sat_write_file (child, "docs/x/y.md", "# committed by the child\n");
  g_free (sat_run (child, FALSE, NULL, "git", "commit", "-q", "-am", "child commit", NULL));
  sat_write_file (child, "src/a.c", "int a = 1; /* modified */\n");
  unlink_in (child, "src/b.c");
  sat_write_file (child, "new.txt", "untracked\n");
  sat_write_file (child, "build.log", "ignored\n");
  sat_write_file (child, "out/bin/tool", "ignored dir\n");
  sat_write_file (child, "deep/er/est/file", "nested\n");
  mkdir_in (child, "empty/x/y");
  mkdir_in (child, "docs/x/new-empty");
  sat_write_file (child, "staged.txt", "staged\n");
  g_free (sat_run (child, FALSE, NULL, "git", "add", "staged.txt", NULL));
  g_free (sat_run (child, FALSE, NULL, "git", "init", "-q", "nested-repo", NULL));
  /* A tracked file turned into a directory, and a mode change. */
  unlink_in (child, "README");
  sat_write_file (child, "README/inner", "type change\n");
  chmod_in (child, "script.sh", 0644);
  /* Permissions git does not track, which a checkout still sets. */
  chmod_in (child, ".gitignore", 0600);
  chmod_in (child, "docs/x", 0700);
  g_free (sat_run (child, FALSE, NULL, "git", "worktree", "lock", child, NULL));
  locked = GIT (child, "worktree", "list", "--porcelain");
  g_assert_nonnull (strstr (locked, "locked"));
}

static char *
pool_repo (void)
{
  char *repo = standard_repo ();
  g_autofree char *link = g_build_filename (repo, "link", NULL);

  sat_write_file (repo, "script.sh", "#!/bin/sh\necho hi\n");
  chmod_in (repo, "script.sh", 0755);
  g_assert_cmpint (symlink ("README", link), ==, 0);
  g_free (sat_run (repo, FALSE, NULL, "git", "add", "-A", NULL));
  g_free (sat_run (repo, FALSE, NULL, "git", "commit", "-q", "-m", "script and link", NULL));
  return repo;
}

static void
test_pool_recycled_is_indistinguishable (void)
{
  g_autofree char *repo = pool_repo ();
  g_autofree char *root = real (repo);
  g_autoptr(SubagentIsolationContext) first = prepare_ok (root, "p1", "{\"pool_size\": 1}");
  g_autoptr(SubagentIsolationContext) recycled = NULL;
  g_autoptr(SubagentIsolationContext) fresh = NULL;
  g_autofree char *listing_recycled = NULL, *listing_fresh = NULL, *listing_parent = NULL;
  g_autofree char *admin_recycled = NULL, *admin_fresh = NULL;
  g_autofree char *head = NULL, *branches = NULL, *status = NULL, *cached = NULL, *dot_git = NULL;
  g_autofree char *child_branch = NULL, *child_head = NULL, *worktrees = NULL;
  g_autofree char *expected_dot_git = NULL;
  g_autofree char *admin_p2 = g_build_filename (root, ".git/worktrees/p2", NULL);
  g_autofree char *admin_p3 = g_build_filename (root, ".git/worktrees/p3", NULL);
  const char *rc, *fc;

  g_assert_false (backend_flag (first, "recycled"));
  dirty_everything (subagent_isolation_context_get_child_root (first));
  subagent_isolation_context_cleanup (first);
  g_assert_false (exists (root, ".subagent/worktrees/p1"));
  g_assert_true (exists (root, ".subagent/worktrees/pool-0"));
  branches = GIT (root, "branch", "--list", "subagent/*", "--format=%(refname:short)");
  g_assert_cmpstr (branches, ==, "subagent/pool-0");
  g_assert_false (exists (root, ".subagent/owners/p1.json"));

  /* The parent moves on; the recycled worktree must follow it. */
  sat_write_file (root, "docs/x/y.md", "# parent moved on\n");
  sat_write_file (root, "added.txt", "added\n");
  g_free (sat_run (root, FALSE, NULL, "git", "add", "-A", NULL));
  g_free (sat_run (root, FALSE, NULL, "git", "commit", "-q", "-m", "parent moves", NULL));
  head = GIT (root, "rev-parse", "HEAD");

  recycled = prepare_ok (root, "p2", "{\"pool_size\": 1}");
  fresh = prepare_ok (root, "p3", "{\"pool_size\": 1}");
  g_assert_true (backend_flag (recycled, "recycled"));
  g_assert_false (backend_flag (fresh, "recycled"));
  g_assert_false (exists (root, ".subagent/worktrees/pool-0"));
  rc = subagent_isolation_context_get_child_root (recycled);
  fc = subagent_isolation_context_get_child_root (fresh);

  listing_recycled = tree_listing (rc);
  listing_fresh = tree_listing (fc);
  g_assert_cmpstr (listing_recycled, ==, listing_fresh);
  listing_parent = tree_listing (root);
  g_assert_cmpstr (listing_parent, ==, listing_fresh);

  status = GIT (rc, "status", "--porcelain", "--ignored");
  g_assert_cmpstr (status, ==, "");
  cached = GIT (rc, "diff", "--cached", "--name-only");
  g_assert_cmpstr (cached, ==, "");
  child_branch = GIT (rc, "rev-parse", "--abbrev-ref", "HEAD");
  g_assert_cmpstr (child_branch, ==, "subagent/p2");
  child_head = GIT (rc, "rev-parse", "HEAD");
  g_assert_cmpstr (child_head, ==, head);
  dot_git = sat_read_file (rc, ".git");
  expected_dot_git = g_strdup_printf ("gitdir: %s/.git/worktrees/p2\n", root);
  g_assert_cmpstr (dot_git, ==, expected_dot_git);
  admin_recycled = dir_entries (admin_p2);
  admin_fresh = dir_entries (admin_p3);
  g_assert_cmpstr (admin_recycled, ==, admin_fresh);
  worktrees = GIT (root, "worktree", "list", "--porcelain");
  g_assert_null (strstr (worktrees, "locked"));
  g_free (branches);
  branches = GIT (root, "branch", "--list", "subagent/*", "--format=%(refname:short)");
  g_assert_cmpstr (branches, ==, "subagent/p2\nsubagent/p3");

  subagent_isolation_context_cleanup (recycled);
  subagent_isolation_context_cleanup (fresh);
  /* A pool of one keeps one; the other is removed. */
  g_assert_true (exists (root, ".subagent/worktrees/pool-0"));
  assert_gone (root, "p2");
  assert_gone (root, "p3");
  sat_rm_rf (repo);
}

/* Threads taking from and recycling into one pool never share an entry,
 * and the pool never grows past its size. */
static void
test_pool_concurrent (void)
{
  g_autofree char *repo = standard_repo ();
  g_autoptr(SubagentIsolationProvider) provider = worktree_provider ();
  const char *options = "{\"pool_size\": 3}";
  g_autofree char *branches = NULL, *listed = NULL;
  GThread *threads[5];
  Concurrent state = { { NULL }, 0 };
  SubagentIsolationContext *warm[3];
  int recycled = 0;

  for (int i = 0; i < 3; i++)
    {
      g_autofree char *key = g_strdup_printf ("warm%d", i);
      warm[i] = prepare_ok (repo, key, options);
    }
  for (int i = 0; i < 3; i++)
    {
      subagent_isolation_context_cleanup (warm[i]);
      g_object_unref (warm[i]);
    }
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *pooled = g_strdup_printf (".subagent/worktrees/pool-%d", i);
      g_assert_true (exists (repo, pooled));
    }

  for (int i = 0; i < 5; i++)
    {
      g_autofree char *key = g_strdup_printf ("pc%d", i);
      g_autoptr(SubagentIsolationRequest) request = make_request (repo, key, options);
      subagent_isolation_provider_prepare_async (provider, request, NULL, prepared_cb, &state);
    }
  while (state.done < 5)
    g_main_context_iteration (NULL, TRUE);
  for (int i = 0; i < 5; i++)
    {
      const char *child = subagent_isolation_context_get_child_root (state.contexts[i]);
      g_autofree char *status = GIT (child, "status", "--porcelain", "--ignored");
      g_autofree char *branch = GIT (child, "rev-parse", "--abbrev-ref", "HEAD");

      g_assert_cmpstr (status, ==, "");
      g_assert_cmpstr (branch, ==, subagent_isolation_context_get_branch (state.contexts[i]));
      recycled += backend_flag (state.contexts[i], "recycled");
    }
  g_assert_cmpint (recycled, ==, 3);
  g_assert_false (exists (repo, ".subagent/worktrees/pool-0"));

  for (int i = 0; i < 5; i++)
    threads[i] = g_thread_new ("cleanup", cleanup_thread, state.contexts[i]);
  for (int i = 0; i < 5; i++)
    {
      g_thread_join (threads[i]);
      g_object_unref (state.contexts[i]);
    }
  branches = GIT (repo, "branch", "--list", "subagent/*", "--format=%(refname:short)");
  g_assert_cmpstr (branches, ==, "subagent/pool-0\nsubagent/pool-1\nsubagent/pool-2");
  listed = GIT (repo, "worktree", "list", "--porcelain");
  g_assert_null (strstr (listed, "/pc"));
  g_assert_false (exists (repo, ".subagent/worktrees/pool-3"));
  sat_rm_rf (repo);
}

static void
test_pool_survives_the_process (void)
{
  g_autoptr(SubagentIsolationContext) taken = NULL;
  g_autofree char *repo = NULL;
  g_autofree char *root = NULL;

  if (g_test_subprocess ())
    {
      g_autoptr(SubagentIsolationContext) c = prepare_ok (g_getenv ("WT_TEST_ROOT"), "sp1", "{\"pool_size\": 2}");
      subagent_isolation_context_cleanup (c);
      return;
    }
  repo = standard_repo ();
  root = real (repo);
  g_setenv ("WT_TEST_ROOT", root, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_assert_true (exists (root, ".subagent/worktrees/pool-0"));

  taken = prepare_ok (root, "sp2", "{\"pool_size\": 2}");
  g_assert_true (backend_flag (taken, "recycled"));
  g_assert_false (exists (root, ".subagent/worktrees/pool-0"));
  subagent_isolation_context_cleanup (taken);
  g_unsetenv ("WT_TEST_ROOT");
  sat_rm_rf (repo);
}

int
main (int argc, char *argv[])
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  registry = subagent_plugin_registry_new (NULL);

  g_test_add_func ("/worktree/prepare/branch-path-and-exclude", test_branch_path_exclude);
  g_test_add_func ("/worktree/prepare/parent-status-stays-clean", test_parent_status_clean);
  g_test_add_func ("/worktree/prepare/parent-is-a-linked-worktree", test_parent_is_linked_worktree);
  g_test_add_func ("/worktree/prepare/refuses-non-repository", test_refuses_non_repository);
  g_test_add_func ("/worktree/prepare/refuses-empty-repository", test_refuses_empty_repository);
  g_test_add_func ("/worktree/prepare/refuses-bare-repository", test_refuses_bare_repository);
  g_test_add_func ("/worktree/prepare/refuses-bad-request", test_refuses_bad_request);
  g_test_add_func ("/worktree/prepare/half-way-failure-removes-what-it-made", test_half_way_failure);
  g_test_add_func ("/worktree/prepare/dirty-parent-warns", test_dirty_parent_warns);
  g_test_add_func ("/worktree/prepare/include-dirty-carries-changes", test_include_dirty);
  g_test_add_func ("/worktree/prepare/ten-concurrent-prepares", test_concurrent_prepares);
  g_test_add_func ("/worktree/prepare/applies-checkout-filters", test_checkout_filters);
  g_test_add_func ("/worktree/prepare/large-tree-matches-parent", test_large_tree_matches_parent);
  g_test_add_func ("/worktree/prepare/cold-checkout-equals-git-worktree-add", test_cold_checkout_equals_git);
  g_test_add_func ("/worktree/cleanup/removes-everything", test_cleanup_removes_everything);
  g_test_add_func ("/worktree/cleanup/twice-is-harmless", test_cleanup_twice);
  g_test_add_func ("/worktree/cleanup/from-owner-record", test_cleanup_from_owner_record);
  g_test_add_func ("/worktree/cleanup/refuses-foreign-path", test_cleanup_refuses_foreign_path);
  g_test_add_func ("/worktree/cleanup/keep-branch", test_keep_branch);
  g_test_add_func ("/worktree/pool/recycled-is-indistinguishable", test_pool_recycled_is_indistinguishable);
  g_test_add_func ("/worktree/pool/concurrent-take-and-recycle", test_pool_concurrent);
  g_test_add_func ("/worktree/pool/survives-the-process", test_pool_survives_the_process);

  rc = g_test_run ();
  g_clear_object (&registry);
  return rc;
}
