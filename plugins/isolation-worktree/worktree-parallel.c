/* worktree-parallel.c: checking out and removing a worktree on two threads.
 *
 * Creating and deleting files dominates a worktree's cost (PERF-NOTES), and
 * libgit2 checks out on one thread. Work in different directories proceeds
 * in parallel in the kernel, so the tree is split into two halves of about
 * equal file counts, each a set of paths (top-level entries, or deeper when
 * one directory holds most files), done concurrently. The checkout halves
 * leave the index alone; it is then built once from the tree and the new
 * files' stat data, which is what a single checkout writes too.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worktree-private.h"

/* Below this many files a second thread costs more than it saves. */
#define MIN_PARALLEL_FILES 256

typedef struct {
  GHashTable *counts;   /* dir path ("" = root) → files below it */
  GHashTable *children; /* dir path → GPtrArray of child paths */
} TreeShape;

static void
count_up (GHashTable *counts,
          const char *dir)
{
  g_autofree char *d = g_strdup (dir);

  for (;;)
    {
      char *slash;

      g_hash_table_insert (counts, g_strdup (d),
                           GINT_TO_POINTER (GPOINTER_TO_INT (g_hash_table_lookup (counts, d)) + 1));
      if (*d == '\0')
        break;
      slash = strrchr (d, '/');
      if (slash != NULL)
        *slash = '\0';
      else
        *d = '\0';
    }
}

static int
shape_cb (const char           *root,
          const git_tree_entry *entry,
          void                 *payload)
{
  TreeShape *shape = payload;
  g_autofree char *dir = g_strndup (root, *root ? strlen (root) - 1 : 0);
  GPtrArray *children = g_hash_table_lookup (shape->children, dir);
  char *path = g_strconcat (root, git_tree_entry_name (entry), NULL);

  if (children == NULL)
    {
      children = g_ptr_array_new_with_free_func (g_free);
      g_hash_table_insert (shape->children, g_strdup (dir), children);
    }
  g_ptr_array_add (children, path);
  if (git_tree_entry_type (entry) == GIT_OBJECT_BLOB)
    count_up (shape->counts, path);
  return 0;
}

static int
files_below (TreeShape  *shape,
             const char *path)
{
  return MAX (1, GPOINTER_TO_INT (g_hash_table_lookup (shape->counts, path)));
}

/* A path libgit2 takes literally as a pathspec (no glob, no negation). */
static gboolean
pathspec_safe (const char *path)
{
  return *path != '!' && *path != '^' && strpbrk (path, "*?[\\") == NULL;
}

/* Splits the files of @tree into two lists of paths with about equal file
 * counts. FALSE when the tree is too small or cannot be split safely. */
gboolean
wt_split_tree (git_tree   *tree,
               GPtrArray **first,
               GPtrArray **second)
{
  TreeShape shape;
  g_autoptr(GPtrArray) units = g_ptr_array_new ();
  g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) b = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *top;
  int total, load_a = 0, load_b = 0;
  gboolean ok = FALSE;

  shape.counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  shape.children = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_ptr_array_unref);
  if (git_tree_walk (tree, GIT_TREEWALK_PRE, shape_cb, &shape) < 0)
    goto out;
  total = GPOINTER_TO_INT (g_hash_table_lookup (shape.counts, ""));
  top = g_hash_table_lookup (shape.children, "");
  if (total < MIN_PARALLEL_FILES || top == NULL)
    goto out;
  g_ptr_array_extend (units, top, NULL, NULL);

  /* Open up a directory holding more than half the files, a few times. */
  for (int round = 0; round < 8; round++)
    {
      guint biggest = 0;
      GPtrArray *children;

      for (guint i = 1; i < units->len; i++)
        if (files_below (&shape, units->pdata[i]) > files_below (&shape, units->pdata[biggest]))
          biggest = i;
      children = g_hash_table_lookup (shape.children, units->pdata[biggest]);
      if (files_below (&shape, units->pdata[biggest]) * 2 <= total || children == NULL)
        break;
      g_ptr_array_remove_index_fast (units, biggest);
      g_ptr_array_extend (units, children, NULL, NULL);
    }

  /* Greedy: the bigger units first, each to the lighter half. */
  for (guint n = units->len; n > 0; n--)
    {
      guint biggest = 0;
      const char *unit;
      int files;

      for (guint i = 1; i < units->len; i++)
        if (files_below (&shape, units->pdata[i]) > files_below (&shape, units->pdata[biggest]))
          biggest = i;
      unit = g_ptr_array_steal_index_fast (units, biggest);
      if (!pathspec_safe (unit))
        goto out;
      files = files_below (&shape, unit);
      if (load_a <= load_b)
        {
          g_ptr_array_add (a, g_strdup (unit));
          load_a += files;
        }
      else
        {
          g_ptr_array_add (b, g_strdup (unit));
          load_b += files;
        }
    }
  ok = b->len > 0 && MIN (load_a, load_b) * 4 >= total;
  if (ok)
    {
      *first = g_steal_pointer (&a);
      *second = g_steal_pointer (&b);
    }

out:
  g_hash_table_unref (shape.counts);
  g_hash_table_unref (shape.children);
  return ok;
}

typedef struct {
  const char *worktree_path;
  git_oid tree_id;
  GPtrArray *paths;
  GError *error;
} CheckoutHalf;

static gpointer
checkout_half (gpointer data)
{
  CheckoutHalf *half = data;
  git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
  g_autoptr(git_repository) repo = NULL;
  g_autoptr(git_tree) tree = NULL;

  co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DONT_UPDATE_INDEX;
  co.disable_filters = TRUE;
  co.paths.strings = (char **) half->paths->pdata;
  co.paths.count = half->paths->len;
  if (git_repository_open (&repo, half->worktree_path) < 0 ||
      git_tree_lookup (&tree, repo, &half->tree_id) < 0 ||
      git_checkout_tree (repo, (git_object *) tree, &co) < 0)
    wt_set_git_error (&half->error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                      "Could not check out into %s", half->worktree_path);
  return NULL;
}

/* The index a checkout would write: the tree's entries with the stat data
 * of the files just written. */
static gboolean
build_index (git_repository  *repo,
             const char      *worktree_path,
             git_tree        *tree,
             GError         **error)
{
  g_autoptr(git_index) index = NULL;
  g_autoptr(GString) path = g_string_new (worktree_path);
  gsize len = path->len;
  size_t n;

  if (git_repository_index (&index, repo) < 0 || git_index_read_tree (index, tree) < 0)
    goto failed;
  n = git_index_entrycount (index);
  for (size_t i = 0; i < n; i++)
    {
      git_index_entry entry = *git_index_get_byindex (index, i);
      struct stat st;

      if (entry.mode == GIT_FILEMODE_COMMIT)
        continue;
      g_string_truncate (path, len);
      g_string_append_c (path, '/');
      g_string_append (path, entry.path);
      if (lstat (path->str, &st) < 0)
        continue; /* left without stat data: git re-reads the file */
      entry.ctime.seconds = (int32_t) st.st_ctim.tv_sec;
      entry.ctime.nanoseconds = (uint32_t) st.st_ctim.tv_nsec;
      entry.mtime.seconds = (int32_t) st.st_mtim.tv_sec;
      entry.mtime.nanoseconds = (uint32_t) st.st_mtim.tv_nsec;
      entry.dev = (uint32_t) st.st_dev;
      entry.ino = (uint32_t) st.st_ino;
      entry.uid = st.st_uid;
      entry.gid = st.st_gid;
      entry.file_size = (uint32_t) st.st_size;
      if (git_index_add (index, &entry) < 0)
        goto failed;
    }
  if (git_index_write (index) < 0)
    goto failed;
  return TRUE;

failed:
  wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                    "Could not write the index of the worktree %s", worktree_path);
  return FALSE;
}

/* Checks out the worktree's HEAD (@commit_id) into the fresh worktree at
 * @worktree_path: on two threads when filters are off and the tree splits,
 * else as one libgit2 checkout. */
gboolean
wt_checkout_fresh (const char     *worktree_path,
                   const git_oid  *commit_id,
                   GError        **error)
{
  git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
  g_autoptr(git_repository) repo = NULL;
  g_autoptr(git_commit) commit = NULL;
  g_autoptr(git_tree) tree = NULL;
  g_autoptr(GPtrArray) first = NULL;
  g_autoptr(GPtrArray) second = NULL;
  CheckoutHalf a = { worktree_path, { { 0 } }, NULL, NULL }, b = a;
  GThread *thread;

  if (git_repository_open (&repo, worktree_path) < 0 ||
      git_commit_lookup (&commit, repo, commit_id) < 0 ||
      git_commit_tree (&tree, commit) < 0)
    {
      wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                        "Could not open the new worktree %s", worktree_path);
      return FALSE;
    }
  co.checkout_strategy = GIT_CHECKOUT_FORCE;
  co.disable_filters = wt_checkout_filters_are_noop (repo, commit_id);
  /* Attributes are read from files being written: only unfiltered
   * checkouts are split. */
  if (!co.disable_filters || !wt_split_tree (tree, &first, &second))
    {
      if (git_checkout_tree (repo, (git_object *) tree, &co) < 0)
        {
          wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                            "Could not check out into %s", worktree_path);
          return FALSE;
        }
      return TRUE;
    }

  g_debug ("Checking out %s on two threads (%u + %u paths)", worktree_path, first->len, second->len);
  git_oid_cpy (&a.tree_id, git_tree_id (tree));
  git_oid_cpy (&b.tree_id, git_tree_id (tree));
  a.paths = first;
  b.paths = second;
  thread = g_thread_try_new ("worktree-checkout", checkout_half, &b, NULL);
  checkout_half (&a);
  if (thread != NULL)
    g_thread_join (thread);
  else
    checkout_half (&b);
  if (a.error != NULL || b.error != NULL)
    {
      g_propagate_error (error, a.error != NULL ? a.error : b.error);
      if (a.error != NULL)
        g_clear_error (&b.error);
      return FALSE;
    }
  return build_index (repo, worktree_path, tree, error);
}

typedef struct {
  int rootfd;
  GPtrArray *paths;
} RemoveHalf;

/* Opens the directory holding @relative under @rootfd without following a
 * symlink on the way; -1 if any component is not a real directory. */
static int
open_parent_nofollow (int          rootfd,
                      const char  *relative,
                      const char **base)
{
  g_auto(GStrv) parts = g_strsplit (relative, "/", -1);
  guint n = g_strv_length (parts);
  int fd = dup (rootfd);

  for (guint i = 0; fd >= 0 && i + 1 < n; i++)
    {
      int next = openat (fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      close (fd);
      fd = next;
    }
  *base = strrchr (relative, '/') != NULL ? strrchr (relative, '/') + 1 : relative;
  return fd;
}

static gpointer
remove_half (gpointer data)
{
  RemoveHalf *half = data;

  for (guint i = 0; i < half->paths->len; i++)
    {
      const char *base;
      int fd = open_parent_nofollow (half->rootfd, half->paths->pdata[i], &base);

      if (fd < 0)
        continue; /* the final sequential pass deals with it */
      wt_rm_rf_at (fd, base);
      close (fd);
    }
  return NULL;
}

/* Removes the worktree at @worktree_path, the files of its HEAD's tree on
 * two threads first; whatever is left (the child's own files, anything the
 * split missed) goes in a final sequential pass that reports errors. */
gboolean
wt_remove_worktree_dir (const char  *worktree_path,
                        GError     **error)
{
  g_autoptr(git_repository) repo = NULL;
  g_autoptr(git_reference) head = NULL;
  g_autoptr(git_tree) tree = NULL;
  g_autoptr(GPtrArray) first = NULL;
  g_autoptr(GPtrArray) second = NULL;

  if (git_repository_open (&repo, worktree_path) == 0 &&
      git_repository_head (&head, repo) == 0 &&
      git_reference_peel ((git_object **) &tree, head, GIT_OBJECT_TREE) == 0 &&
      wt_split_tree (tree, &first, &second))
    {
      int rootfd = open (worktree_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

      if (rootfd >= 0)
        {
          RemoveHalf a = { rootfd, first }, b = { rootfd, second };
          GThread *thread = g_thread_try_new ("worktree-remove", remove_half, &b, NULL);

          remove_half (&a);
          if (thread != NULL)
            g_thread_join (thread);
          close (rootfd);
        }
    }
  g_clear_pointer (&repo, git_repository_free);
  return wt_rm_rf (worktree_path, error);
}
