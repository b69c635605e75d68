/* test-review.c: review artifacts: the patch applies with `git apply` and
 * reproduces the child's tree; the status file; the parent's .git is
 * never written; directory and commit bases.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-support.h"

static const char * const excluded[] = { ".subagent", ".git", NULL };

/* ---- helpers ------------------------------------------------------------ */

static gint
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

static void
write_bytes (const char   *dir,
             const char   *rel,
             const guchar *data,
             gsize         len)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);

  g_assert_true (g_file_set_contents (path, (const char *) data, len, NULL));
}

static void
remove_at (const char *dir,
           const char *rel)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);

  g_assert_cmpint (g_unlink (path), ==, 0);
}

static void
chmod_at (const char *dir,
          const char *rel,
          int         mode)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);

  g_assert_cmpint (g_chmod (path, mode), ==, 0);
}

static void
rename_at (const char *dir,
           const char *from,
           const char *to)
{
  g_autofree char *a = g_build_filename (dir, from, NULL);
  g_autofree char *b = g_build_filename (dir, to, NULL);
  g_autofree char *b_dir = g_path_get_dirname (b);

  g_assert_cmpint (g_mkdir_with_parents (b_dir, 0755), ==, 0);
  g_assert_cmpint (g_rename (a, b), ==, 0);
}

static void
symlink_at (const char *dir,
            const char *target,
            const char *rel)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);

  g_assert_cmpint (symlink (target, path), ==, 0);
}

static guchar *
pseudo_random (gsize   len,
               guint32 seed)
{
  guchar *data = g_malloc (len);

  for (gsize i = 0; i < len; i++)
    {
      seed = seed * 1103515245u + 12345u;
      data[i] = (guchar) (seed >> 16);
    }
  return data;
}

static char *
ten_lines (const char *tag)
{
  GString *s = g_string_new (NULL);

  for (guint i = 1; i <= 10; i++)
    g_string_append_printf (s, "line %u of the file that moves, %s\n", i, i == 10 ? tag : "unchanged");
  return g_string_free (s, FALSE);
}

/* The files the parent starts with (text, binary, executable-to-be). */
static void
fill_parent (const char *dir)
{
  g_autofree char *moving = ten_lines ("original");
  g_autofree guchar *data = pseudo_random (4096, 7);

  sat_write_file (dir, "keep.txt", "untouched\n");
  sat_write_file (dir, "edit.txt", "one\ntwo\nthree\n");
  sat_write_file (dir, "gone.txt", "to be deleted\n");
  sat_write_file (dir, "rename-src.txt", moving);
  sat_write_file (dir, "mode.sh", "#!/bin/sh\necho mode\n");
  sat_write_file (dir, "docs/guide.md", "# Guide\n");
  symlink_at (dir, "docs", "alias");
  write_bytes (dir, "data.bin", data, 4096);
}

/* What the child does: edit, add, delete, rename (90% similar), change a
 * mode, add and modify binaries, add a link and a name with a space; edit
 * a file keeping its size and times (only its bytes tell); turn a link to
 * a directory into a directory holding a copy of what the link showed (a
 * comparison that followed the link would call that unchanged). */
static void
change_child (const char *dir)
{
  g_autofree char *moved = ten_lines ("edited");
  g_autofree guchar *logo = pseudo_random (2048, 42);
  g_autofree guchar *data = pseudo_random (4096, 7);

  sat_write_file (dir, "edit.txt", "one\n2\nthree\nfour\n");
  remove_at (dir, "gone.txt");
  rename_at (dir, "rename-src.txt", "moved/rename-dst.txt");
  sat_write_file (dir, "moved/rename-dst.txt", moved);
  chmod_at (dir, "mode.sh", 0755);
  write_bytes (dir, "logo.bin", logo, 2048);
  data[100] ^= 0xff;
  data[3000] ^= 0x55;
  write_bytes (dir, "data.bin", data, 4096);
  sat_write_file (dir, "new/dir/added.txt", "brand new\n");
  sat_write_file (dir, "with space.txt", "spaced\n");
  symlink_at (dir, "keep.txt", "link-to-keep");
  {
    g_autofree char *guide = g_build_filename (dir, "docs/guide.md", NULL);
    struct stat st;

    g_assert_cmpint (stat (guide, &st), ==, 0);
    sat_write_file (dir, "docs/guide.md", "# GUIDE\n");
    {
      struct timespec times[2] = { st.st_atim, st.st_mtim };
      g_assert_cmpint (utimensat (AT_FDCWD, guide, times, 0), ==, 0);
    }
  }
  remove_at (dir, "alias");
  sat_write_file (dir, "alias/guide.md", "# Guide\n");
}

static void
collect_files (const char *root,
               const char *rel,
               GPtrArray  *out)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child_rel = *rel ? g_build_filename (rel, name, NULL) : g_strdup (name);
      g_autofree char *child = g_build_filename (root, child_rel, NULL);
      struct stat st;

      if (*rel == '\0' && g_strv_contains (excluded, name))
        continue;
      g_assert_cmpint (lstat (child, &st), ==, 0);
      if (S_ISDIR (st.st_mode))
        collect_files (root, child_rel, out);
      else
        g_ptr_array_add (out, g_steal_pointer (&child_rel));
    }
}

/* Same files, contents, executable bits and link targets (what git keeps). */
static void
assert_same_files (const char *a,
                   const char *b)
{
  g_autoptr(GPtrArray) fa = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) fb = g_ptr_array_new_with_free_func (g_free);

  collect_files (a, "", fa);
  collect_files (b, "", fb);
  g_ptr_array_sort (fa, compare_strings);
  g_ptr_array_sort (fb, compare_strings);
  g_assert_cmpuint (fa->len, ==, fb->len);
  for (guint i = 0; i < fa->len; i++)
    {
      const char *rel = g_ptr_array_index (fa, i);
      g_autofree char *pa = g_build_filename (a, rel, NULL);
      g_autofree char *pb = g_build_filename (b, rel, NULL);
      struct stat sa, sb;

      g_assert_cmpstr (rel, ==, g_ptr_array_index (fb, i));
      g_assert_cmpint (lstat (pa, &sa), ==, 0);
      g_assert_cmpint (lstat (pb, &sb), ==, 0);
      g_assert_cmphex (sa.st_mode & S_IFMT, ==, sb.st_mode & S_IFMT);
      if (S_ISLNK (sa.st_mode))
        {
          g_autofree char *ta = g_file_read_link (pa, NULL);
          g_autofree char *tb = g_file_read_link (pb, NULL);
          g_assert_cmpstr (ta, ==, tb);
        }
      else
        {
          g_autofree char *ca = NULL, *cb = NULL;
          gsize la, lb;

          g_assert_cmpint (sa.st_mode & S_IXUSR, ==, sb.st_mode & S_IXUSR);
          g_assert_true (g_file_get_contents (pa, &ca, &la, NULL));
          g_assert_true (g_file_get_contents (pb, &cb, &lb, NULL));
          g_assert_cmpmem (ca, la, cb, lb);
        }
    }
}

/* path, size and mtime of everything under dir: a fingerprint of .git. */
static void
fingerprint (const char *dir,
             GString    *out)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_strings);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir, g_ptr_array_index (names, i), NULL);
      struct stat st;

      g_assert_cmpint (lstat (path, &st), ==, 0);
      g_string_append_printf (out, "%s %ld %ld.%09ld %o\n", path, (long) st.st_size,
                              (long) st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_mode);
      if (S_ISDIR (st.st_mode))
        fingerprint (path, out);
    }
}

static char *
git_dir_fingerprint (const char *repo)
{
  g_autofree char *git_dir = g_build_filename (repo, ".git", NULL);
  GString *out = g_string_new (NULL);

  fingerprint (git_dir, out);
  return g_string_free (out, FALSE);
}

static char *
copy_of (const char *source)
{
  g_autofree char *scratch = sat_make_temp_dir ("review-copy");
  char *dest = g_build_filename (scratch, "tree", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (subagent_tree_copy (source, dest, SUBAGENT_COPY_STRATEGY_COPY, excluded, NULL, NULL, &error));
  g_assert_no_error (error);
  return dest;
}

static void
remove_copy (const char *copy)
{
  g_autofree char *scratch = g_path_get_dirname (copy);

  sat_rm_rf (scratch);
}

static void
assert_patch_reproduces (const char     *clean,
                         SubagentReview *review,
                         const char     *child)
{
  const char *patch = subagent_review_get_patch_path (review);

  g_free (sat_run (clean, FALSE, NULL, "git", "apply", "--check", patch, NULL));
  g_free (sat_run (clean, FALSE, NULL, "git", "apply", patch, NULL));
  assert_same_files (clean, child);
}

static void
assert_status_has_line (const char *status,
                        const char *line_prefix)
{
  g_auto(GStrv) lines = g_strsplit (status, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], line_prefix))
      return;
  g_error ("status file has no line starting with “%s”:\n%s", line_prefix, status);
}

static void
assert_full_counts (SubagentReview *review)
{
  g_assert_cmpuint (subagent_review_get_added (review), ==, 5);
  g_assert_cmpuint (subagent_review_get_modified (review), ==, 3);
  g_assert_cmpuint (subagent_review_get_deleted (review), ==, 2);
  g_assert_cmpuint (subagent_review_get_renamed (review), ==, 1);
  g_assert_cmpuint (subagent_review_get_mode_changed (review), ==, 1);
  g_assert_cmpuint (subagent_review_get_binary (review), ==, 2);
  g_assert_cmpuint (subagent_review_get_files_changed (review), ==, 12);
  g_assert_cmpuint (subagent_review_get_insertions (review), >, 0);
  g_assert_cmpuint (subagent_review_get_deletions (review), >, 0);
  g_assert_false (subagent_review_is_empty (review));
}

static void
assert_full_status (SubagentReview *review)
{
  g_autofree char *status = NULL;
  g_autofree char *patch = NULL;
  g_auto(GStrv) lines = NULL;

  g_assert_true (g_file_get_contents (subagent_review_get_status_path (review), &status, NULL, NULL));
  g_assert_true (g_file_get_contents (subagent_review_get_patch_path (review), &patch, NULL, NULL));
  g_test_message ("status:\n%s", status);
  assert_status_has_line (status, "added\tlogo.bin\tbinary");
  assert_status_has_line (status, "added\tnew/dir/added.txt");
  assert_status_has_line (status, "added\twith space.txt");
  assert_status_has_line (status, "added\tlink-to-keep");
  assert_status_has_line (status, "modified\tedit.txt");
  assert_status_has_line (status, "modified\tdata.bin\tbinary");
  assert_status_has_line (status, "deleted\tgone.txt");
  assert_status_has_line (status, "renamed\trename-src.txt -> moved/rename-dst.txt\tsimilarity ");
  assert_status_has_line (status, "mode-changed\tmode.sh\tmode 100644->100755");
  assert_status_has_line (status, "modified\tdocs/guide.md");
  assert_status_has_line (status, "deleted\talias");
  assert_status_has_line (status, "added\talias/guide.md");
  assert_status_has_line (status, "total: 12 files changed, ");
  g_assert_nonnull (strstr (status, "; 5 added, 3 modified, 2 deleted, 1 renamed, 1 mode-changed, 2 binary\n"));
  lines = g_strsplit (status, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 14);
  g_assert_cmpstr (lines[13], ==, "");

  g_assert_nonnull (strstr (patch, "diff --git a/logo.bin b/logo.bin\nnew file mode 100644\n"));
  g_assert_nonnull (strstr (patch, "GIT binary patch"));
  g_assert_nonnull (strstr (patch, "deleted file mode 100644"));
  g_assert_nonnull (strstr (patch, "rename from rename-src.txt\nrename to moved/rename-dst.txt\n"));
  g_assert_nonnull (strstr (patch, "old mode 100644\nnew mode 100755\n"));
  g_assert_nonnull (strstr (patch, "new file mode 120000"));
}

/* ---- directory base (snapshot and container runs) ----------------------- */

static void
test_dir_base_patch_reproduces_child (void)
{
  g_autofree char *parent = sat_make_git_repo ("README", "repo\n", NULL);
  g_autofree char *child = NULL;
  g_autofree char *clean = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *expected_patch = NULL;
  g_autoptr(SubagentReview) review = NULL;
  g_autoptr(GError) error = NULL;

  fill_parent (parent);
  sat_write_file (parent, ".subagent/config.yaml", "x: 1\n");
  child = copy_of (parent);
  clean = copy_of (parent);
  change_child (child);
  /* What the child does to .subagent or .git is never part of the change. */
  sat_write_file (child, ".subagent/scratch", "ignored\n");
  sat_write_file (child, "sub/.git/HEAD", "nested repository metadata\n");

  before = git_dir_fingerprint (parent);
  review = subagent_review_capture (parent, "dir-1", parent, NULL, NULL, child, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (review);
  after = git_dir_fingerprint (parent);
  g_assert_cmpstr (before, ==, after);

  expected_patch = g_build_filename (parent, ".subagent", "reviews", "dir-1.patch", NULL);
  g_assert_cmpstr (subagent_review_get_patch_path (review), ==, expected_patch);
  g_assert_cmpstr (subagent_review_get_session_key (review), ==, "dir-1");
  assert_full_counts (review);
  assert_full_status (review);

  /* sub/.git is never carried over, so sub/ does not exist for git. */
  {
    g_autofree char *sub = g_build_filename (child, "sub", NULL);
    sat_rm_rf (sub);
  }
  assert_patch_reproduces (clean, review, child);
  remove_copy (child);
  remove_copy (clean);
  sat_rm_rf (parent);
}

static void
test_dir_base_empty_and_shared (void)
{
  g_autofree char *parent = sat_make_temp_dir ("review-parent");
  g_autofree char *child = NULL;
  g_autofree char *patch = NULL;
  g_autofree char *status = NULL;
  g_autoptr(SubagentReview) review = NULL;
  g_autoptr(SubagentReview) shared = NULL;
  g_autoptr(GError) error = NULL;

  fill_parent (parent);
  child = copy_of (parent);
  review = subagent_review_capture (parent, "empty-1", parent, NULL, NULL, child, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (subagent_review_is_empty (review));
  g_assert_true (g_file_get_contents (subagent_review_get_patch_path (review), &patch, NULL, NULL));
  g_assert_cmpstr (patch, ==, "");
  g_assert_true (g_file_get_contents (subagent_review_get_status_path (review), &status, NULL, NULL));
  g_assert_cmpstr (status, ==, "total: 0 files changed, 0 insertions(+), 0 deletions(-); "
                               "0 added, 0 modified, 0 deleted, 0 renamed, 0 mode-changed, 0 binary\n");

  /* Shared isolation has no review. */
  shared = subagent_review_capture (parent, "shared-1", parent, NULL, NULL, parent, NULL, &error);
  g_assert_null (shared);
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  /* Exactly one base, and a key that is safe in a file name. */
  g_assert_null (subagent_review_capture (parent, "two-1", parent, "abcd", NULL, child, NULL, &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (subagent_review_capture (parent, "../x", parent, NULL, NULL, child, NULL, &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  remove_copy (child);
  sat_rm_rf (parent);
}

static void
captured_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  SubagentReview **out = user_data;
  g_autoptr(GError) error = NULL;

  *out = subagent_review_capture_finish (result, &error);
  g_assert_no_error (error);
  g_assert_nonnull (*out);
}

static void
test_async_and_json (void)
{
  g_autofree char *parent = sat_make_temp_dir ("review-parent");
  g_autofree char *child = NULL;
  g_autoptr(SubagentReview) review = NULL;
  g_autoptr(SubagentReview) again = NULL;
  g_autoptr(JsonObject) json = NULL;
  g_autoptr(GError) error = NULL;

  fill_parent (parent);
  child = copy_of (parent);
  change_child (child);
  subagent_review_capture_async (parent, "async-1", parent, NULL, NULL, child, NULL, captured_cb, &review);
  while (review == NULL)
    g_main_context_iteration (NULL, TRUE);
  assert_full_counts (review);

  json = subagent_review_to_json (review);
  g_assert_cmpint (json_object_get_int_member (json, "files_changed"), ==, 12);
  g_assert_cmpint (json_object_get_int_member (json, "mode_changed"), ==, 1);
  again = subagent_review_new_from_json (json, &error);
  g_assert_no_error (error);
  assert_full_counts (again);
  g_assert_cmpstr (subagent_review_get_status_path (again), ==, subagent_review_get_status_path (review));
  remove_copy (child);
  sat_rm_rf (parent);
}

/* ---- commit base (worktree runs) ----------------------------------------- */

static void
test_commit_base_patch_reproduces_worktree (void)
{
  g_autofree char *repo = sat_make_git_repo (".gitignore", "*.log\n", NULL);
  g_autofree char *worktree = g_build_filename (repo, ".subagent", "worktrees", "rev-1", NULL);
  g_autofree char *git_dir = g_build_filename (repo, ".git", NULL);
  g_autofree char *clean = sat_make_temp_dir ("review-clean");
  g_autofree char *base = NULL;
  g_autofree char *archive = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *by_id = NULL;
  g_autofree char *by_rev = NULL;
  g_autoptr(SubagentReview) review = NULL;
  g_autoptr(SubagentReview) from_head = NULL;
  g_autoptr(GError) error = NULL;

  fill_parent (repo);
  sat_write_file (repo, ".subagent/config.yaml", "committed state\n");
  g_free (sat_run (repo, FALSE, NULL, "git", "add", "-A", "-f", NULL));
  g_free (sat_run (repo, FALSE, NULL, "git", "commit", "-q", "-m", "parent files", NULL));
  base = g_strstrip (sat_run (repo, FALSE, NULL, "git", "rev-parse", "HEAD", NULL));
  g_free (sat_run (repo, FALSE, NULL, "git", "worktree", "add", "-q", "-b", "subagent/rev-1", worktree, NULL));

  change_child (worktree);
  sat_write_file (worktree, "debug.log", "ignored by .gitignore\n");
  /* A child may commit: the review still compares with where it started. */
  g_free (sat_run (worktree, FALSE, NULL, "git", "add", "edit.txt", NULL));
  g_free (sat_run (worktree, FALSE, NULL, "git", "commit", "-q", "-m", "child commit", NULL));

  before = git_dir_fingerprint (repo);
  review = subagent_review_capture (repo, "rev-1", NULL, base, git_dir, worktree, NULL, &error);
  g_assert_no_error (error);
  after = git_dir_fingerprint (repo);
  g_assert_cmpstr (before, ==, after);
  assert_full_counts (review);
  assert_full_status (review);

  /* The same base named by a revision of the parent's repository. */
  from_head = subagent_review_capture (repo, "rev-2", NULL, "main", NULL, worktree, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (subagent_review_get_patch_path (review), &by_id, NULL, NULL));
  g_assert_true (g_file_get_contents (subagent_review_get_patch_path (from_head), &by_rev, NULL, NULL));
  g_assert_cmpstr (by_id, ==, by_rev);

  archive = g_strdup_printf ("git archive --format=tar %s | tar -x -C '%s'", base, clean);
  g_free (sat_run (repo, FALSE, NULL, "sh", "-c", archive, NULL));
  {
    g_autofree char *state = g_build_filename (clean, ".subagent", NULL);
    sat_rm_rf (state);
  }
  remove_at (worktree, "debug.log");
  assert_patch_reproduces (clean, review, worktree);

  sat_rm_rf (clean);
  sat_rm_rf (repo);
}

static void
test_commit_base_errors (void)
{
  g_autofree char *repo = sat_make_git_repo ("a.txt", "a\n", NULL);
  g_autofree char *plain = sat_make_temp_dir ("review-plain");
  g_autofree char *git_dir = g_build_filename (repo, ".git", NULL);
  g_autoptr(SubagentReview) review = NULL;
  g_autoptr(GError) error = NULL;

  review = subagent_review_capture (repo, "bad-1", NULL, "0123456789abcdef0123456789abcdef01234567",
                                    git_dir, repo, NULL, &error);
  g_assert_null (review);
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED);
  g_clear_error (&error);
  /* Not a worktree and no git dir given: nowhere to read the commit from. */
  review = subagent_review_capture (repo, "bad-2", NULL, "HEAD", NULL, plain, NULL, &error);
  g_assert_null (review);
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  sat_rm_rf (plain);
  sat_rm_rf (repo);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/review/dir-base/patch-reproduces-child", test_dir_base_patch_reproduces_child);
  g_test_add_func ("/review/dir-base/empty-and-shared", test_dir_base_empty_and_shared);
  g_test_add_func ("/review/async-and-json", test_async_and_json);
  g_test_add_func ("/review/commit-base/patch-reproduces-worktree", test_commit_base_patch_reproduces_worktree);
  g_test_add_func ("/review/commit-base/errors", test_commit_base_errors);
  return g_test_run ();
}
