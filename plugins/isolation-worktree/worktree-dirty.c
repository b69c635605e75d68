/* worktree-dirty.c: the parent's uncommitted and untracked changes, and
 * carrying them into a worktree (option include_dirty).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worktree-private.h"

/* Uncommitted and untracked paths of the parent (relative, `.subagent/`
 * excluded). @recurse lists every file of an untracked directory. */
GPtrArray *
wt_dirty_paths (git_repository *repo,
                gboolean        recurse,
                GError        **error)
{
  git_status_options opts = GIT_STATUS_OPTIONS_INIT;
  g_autoptr(git_status_list) list = NULL;
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  size_t n;

  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  if (recurse)
    opts.flags |= GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
  if (git_status_list_new (&list, repo, &opts) < 0)
    {
      wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                        "Could not read the status of %s", git_repository_workdir (repo));
      return NULL;
    }
  n = git_status_list_entrycount (list);
  for (size_t i = 0; i < n; i++)
    {
      const git_status_entry *e = git_status_byindex (list, i);
      const git_diff_delta *d = e->index_to_workdir != NULL ? e->index_to_workdir : e->head_to_index;
      const char *path;

      if (d == NULL || e->status == GIT_STATUS_CURRENT || (e->status & GIT_STATUS_IGNORED) != 0)
        continue;
      path = d->new_file.path != NULL ? d->new_file.path : d->old_file.path;
      if (path == NULL || g_str_has_prefix (path, WT_STATE_DIR "/") || g_str_equal (path, WT_STATE_DIR))
        continue;
      g_ptr_array_add (paths, g_strdup (path));
      /* A rename in the index also deletes its old path. */
      if (e->head_to_index != NULL && e->head_to_index->old_file.path != NULL &&
          g_strcmp0 (e->head_to_index->old_file.path, path) != 0)
        g_ptr_array_add (paths, g_strdup (e->head_to_index->old_file.path));
    }
  return g_steal_pointer (&paths);
}

/* Copies the rest of @in to @out; 0 or an errno. */
static int
copy_fd (int in,
         int out)
{
  char buf[65536];
  ssize_t n;

  while ((n = copy_file_range (in, NULL, out, NULL, 1 << 20, 0)) > 0)
    ;
  if (n == 0)
    return 0;
  if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
    return errno;
  /* No copy_file_range here: read/write from where it stopped. */
  while ((n = read (in, buf, sizeof buf)) > 0)
    for (ssize_t done = 0; done < n;)
      {
        ssize_t w = write (out, buf + done, n - done);
        if (w < 0)
          return errno;
        done += w;
      }
  return n < 0 ? errno : 0;
}

static gboolean
copy_regular (const char  *src,
              const char  *dst,
              GError     **error)
{
  struct stat st;
  int in, out = -1, err = 0;

  in = open (src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0 || fstat (in, &st) < 0)
    err = errno;
  else if ((out = open (dst, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 0777)) < 0)
    err = errno;
  else
    err = copy_fd (in, out);
  if (err == 0 && fchmod (out, st.st_mode & 0777) < 0)
    err = errno;
  if (out >= 0 && close (out) < 0 && err == 0)
    err = errno;
  if (in >= 0)
    close (in);
  if (err != 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not copy %s to %s: %s", src, dst, g_strerror (err));
      return FALSE;
    }
  return TRUE;
}

/* True when every directory from @root down to @path's parent is a real
 * directory (no symlink), so writing @path cannot leave @root. */
static gboolean
parents_stay_inside (const char *root,
                     const char *relative)
{
  g_auto(GStrv) parts = g_strsplit (relative, "/", -1);
  g_autoptr(GString) path = g_string_new (root);
  guint n = g_strv_length (parts);

  for (guint i = 0; i + 1 < n; i++)
    {
      struct stat st;

      if (*parts[i] == '\0' || g_str_equal (parts[i], ".") || g_str_equal (parts[i], ".."))
        return FALSE;
      g_string_append_c (path, '/');
      g_string_append (path, parts[i]);
      if (lstat (path->str, &st) < 0)
        return errno == ENOENT;
      if (!S_ISDIR (st.st_mode))
        return FALSE;
    }
  return n > 0 && !g_str_equal (parts[n - 1], "..") && !g_str_equal (parts[n - 1], ".");
}

/* Makes each of @paths in the worktree what it is in the parent's working
 * tree: copies files and symlinks, removes what the parent deleted. */
gboolean
wt_carry_dirty (const char  *parent_root,
                const char  *worktree_path,
                GPtrArray   *paths,
                GError     **error)
{
  for (guint i = 0; i < paths->len; i++)
    {
      const char *rel = g_ptr_array_index (paths, i);
      g_autofree char *src = g_build_filename (parent_root, rel, NULL);
      g_autofree char *dst = g_build_filename (worktree_path, rel, NULL);
      g_autofree char *dst_dir = g_path_get_dirname (dst);
      struct stat st;

      if (!parents_stay_inside (parent_root, rel) || !parents_stay_inside (worktree_path, rel))
        {
          g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                       "Refusing to carry %s: a directory on its way is a symlink", rel);
          return FALSE;
        }
      if (lstat (src, &st) < 0)
        {
          if (!wt_rm_rf (dst, error))
            return FALSE;
          continue;
        }
      if (!S_ISREG (st.st_mode) && !S_ISLNK (st.st_mode))
        continue;
      if (g_mkdir_with_parents (dst_dir, 0755) < 0 || !wt_rm_rf (dst, NULL))
        {
          int saved = errno;
          g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                       "Could not make room for %s: %s", dst, g_strerror (saved));
          return FALSE;
        }
      if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_file_read_link (src, NULL);
          if (target == NULL || symlink (target, dst) < 0)
            {
              int saved = errno;
              g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                           "Could not copy the symlink %s: %s", src, g_strerror (saved));
              return FALSE;
            }
        }
      else if (!copy_regular (src, dst, error))
        return FALSE;
    }
  return TRUE;
}
