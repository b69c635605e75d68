/* subagent-tree-copier.c: copies and removes directory trees.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subagent-tree-copier.h"
#include "subagent-tree-copier-private.h"

/**
 * SECTION:subagent-tree-copier
 * @title: Tree copier
 * @short_description: copy a directory tree for a snapshot, remove it again
 *
 * subagent_tree_copy() makes a plain copy of a working tree: directories,
 * regular files and symbolic links (copied as links, never followed), with
 * their permission bits and nanosecond modification times. FIFOs, sockets
 * and device nodes are skipped; hard links become separate files; owners,
 * extended attributes and set-user/group-ID bits are not copied. Names given
 * in `exclude_top_level` (such as `.subagent` and `.git`) are left out at the
 * top level only.
 *
 * The calling thread walks the source, creating directories and links,
 * while 1 to 3 more threads copy the regular files it finds (the caller
 * joins them once the walk is done). Each file is opened relative to its
 * directory, created with its final permission bits and copied with
 * `FICLONE` (a reflink: O(1) on XFS and Btrfs) unless the strategy is
 * %SUBAGENT_COPY_STRATEGY_COPY, else with `copy_file_range()`. The first
 * refusal of `FICLONE` (ext4 and tmpfs answer `EOPNOTSUPP`) switches the rest
 * of the tree to plain copies. Directories stay mode 0700 until the copy is
 * complete.
 *
 * A failed or cancelled copy removes what it created. subagent_tree_remove()
 * removes a tree in-process (no `rm -rf`), never following symbolic links
 * and never crossing into another mounted filesystem.
 */

G_DEFINE_ENUM_TYPE (SubagentCopyStrategy, subagent_copy_strategy,
                    G_DEFINE_ENUM_VALUE (SUBAGENT_COPY_STRATEGY_AUTO, "auto"),
                    G_DEFINE_ENUM_VALUE (SUBAGENT_COPY_STRATEGY_REFLINK, "reflink"),
                    G_DEFINE_ENUM_VALUE (SUBAGENT_COPY_STRATEGY_COPY, "copy"))

static const char * const strategy_names[] = {
  [SUBAGENT_COPY_STRATEGY_AUTO] = "auto",
  [SUBAGENT_COPY_STRATEGY_REFLINK] = "reflink",
  [SUBAGENT_COPY_STRATEGY_COPY] = "copy",
};

/**
 * subagent_copy_strategy_to_string:
 * @strategy: a #SubagentCopyStrategy
 *
 * Gets the name of @strategy, as written in files, JSON and on the command
 * line.
 *
 * Returns: (transfer none): the strategy's name: `auto`, `reflink` or `copy`
 *
 * Since: 0.2
 */
const char *
subagent_copy_strategy_to_string (SubagentCopyStrategy strategy)
{
  g_return_val_if_fail (strategy <= SUBAGENT_COPY_STRATEGY_COPY, NULL);
  return strategy_names[strategy];
}

/**
 * subagent_copy_strategy_from_string:
 * @text: (nullable): a strategy name; %NULL or empty means `auto`
 * @out_strategy: (out): the parsed strategy
 *
 * Parses the name of a value, as written by
 * subagent_copy_strategy_to_string().
 *
 * Returns: %TRUE if @text names a strategy
 *
 * Since: 0.2
 */
gboolean
subagent_copy_strategy_from_string (const char           *text,
                                    SubagentCopyStrategy *out_strategy)
{
  g_return_val_if_fail (out_strategy != NULL, FALSE);

  if (text == NULL || *text == '\0')
    {
      *out_strategy = SUBAGENT_COPY_STRATEGY_AUTO;
      return TRUE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (strategy_names); i++)
    if (g_ascii_strcasecmp (text, strategy_names[i]) == 0)
      {
        *out_strategy = i;
        return TRUE;
      }
  return FALSE;
}

/**
 * subagent_tree_copy:
 * @source: the directory to copy
 * @dest: the directory to create (or an existing, empty one to fill)
 * @strategy: how to copy regular files
 * @exclude_top_level: (nullable) (array zero-terminated=1): names to leave out
 *   at the top level, such as `.subagent` and `.git`
 * @out_used: (out) (optional): the strategy actually used: %SUBAGENT_COPY_STRATEGY_REFLINK
 *   if at least one file was cloned, else %SUBAGENT_COPY_STRATEGY_COPY
 * @cancellable: (nullable): checked between files
 * @error: return location for a #GError (%G_IO_ERROR, with the path that failed)
 *
 * Copies @source to @dest as described in the section introduction. Blocks:
 * call it from a worker thread, or use subagent_tree_copy_async(). On failure
 * or cancellation, @dest is removed if this call created it.
 *
 * Returns: %TRUE if the whole tree was copied
 */
gboolean
subagent_tree_copy (const char           *source,
                    const char           *dest,
                    SubagentCopyStrategy  strategy,
                    const char * const   *exclude_top_level,
                    SubagentCopyStrategy *out_used,
                    GCancellable         *cancellable,
                    GError              **error)
{
  g_return_val_if_fail (source != NULL, FALSE);
  g_return_val_if_fail (dest != NULL, FALSE);
  g_return_val_if_fail (strategy <= SUBAGENT_COPY_STRATEGY_COPY, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return _subagent_tree_copy (source, dest, strategy, exclude_top_level, NULL, out_used, cancellable, error);
}

/**
 * subagent_tree_copy_excluding:
 * @source: the directory to copy
 * @dest: the directory to create (or an existing, empty one to fill)
 * @strategy: how to copy regular files
 * @exclude_top_level: (nullable) (array zero-terminated=1): names to leave out
 *   at the top level, such as `.subagent` and `.git`
 * @exclude: (nullable): entries to leave out at any depth (secret files, see
 *   subagent_secret_exclude_defaults()); an excluded directory is not entered
 * @out_used: (out) (optional): the strategy actually used
 * @cancellable: (nullable): checked between files
 * @error: return location for a #GError
 *
 * subagent_tree_copy() that also leaves out what @exclude matches. The
 * patterns are matched per directory entry, by name, without allocating.
 *
 * Returns: %TRUE if the whole tree was copied
 *
 * Since: 0.2
 */
gboolean
subagent_tree_copy_excluding (const char               *source,
                              const char               *dest,
                              SubagentCopyStrategy      strategy,
                              const char * const       *exclude_top_level,
                              const SubagentExcludeSet *exclude,
                              SubagentCopyStrategy     *out_used,
                              GCancellable             *cancellable,
                              GError                  **error)
{
  g_return_val_if_fail (source != NULL, FALSE);
  g_return_val_if_fail (dest != NULL, FALSE);
  g_return_val_if_fail (strategy <= SUBAGENT_COPY_STRATEGY_COPY, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return _subagent_tree_copy (source, dest, strategy, exclude_top_level, exclude, out_used, cancellable, error);
}

typedef struct {
  char *source;
  char *dest;
  SubagentCopyStrategy strategy;
  GStrv exclude;
  SubagentCopyStrategy used;
} CopyTaskData;

static void
copy_task_data_free (gpointer data)
{
  CopyTaskData *d = data;

  g_free (d->source);
  g_free (d->dest);
  g_strfreev (d->exclude);
  g_free (d);
}

static void
copy_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  CopyTaskData *d = task_data;
  GError *error = NULL;

  if (subagent_tree_copy (d->source, d->dest, d->strategy, (const char * const *) d->exclude,
                          &d->used, cancellable, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/**
 * subagent_tree_copy_async:
 * @source: the directory to copy
 * @dest: the directory to create
 * @strategy: how to copy regular files
 * @exclude_top_level: (nullable) (array zero-terminated=1): names to leave out at the top level
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the copy is done
 * @user_data: (closure): data for @callback
 *
 * Runs subagent_tree_copy() in a worker thread.
 */
void
subagent_tree_copy_async (const char           *source,
                          const char           *dest,
                          SubagentCopyStrategy  strategy,
                          const char * const   *exclude_top_level,
                          GCancellable         *cancellable,
                          GAsyncReadyCallback   callback,
                          gpointer              user_data)
{
  g_autoptr(GTask) task = NULL;
  CopyTaskData *d;

  g_return_if_fail (source != NULL);
  g_return_if_fail (dest != NULL);

  d = g_new0 (CopyTaskData, 1);
  d->source = g_strdup (source);
  d->dest = g_strdup (dest);
  d->strategy = strategy;
  d->exclude = g_strdupv ((char **) exclude_top_level);
  d->used = SUBAGENT_COPY_STRATEGY_COPY;

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, subagent_tree_copy_async);
  g_task_set_task_data (task, d, copy_task_data_free);
  g_task_run_in_thread (task, copy_thread);
}

/**
 * subagent_tree_copy_finish:
 * @result: the #GAsyncResult passed to the callback
 * @out_used: (out) (optional): the strategy actually used
 * @error: return location for a #GError
 *
 * Finishes the operation started with subagent_tree_copy_async().
 *
 * Returns: %TRUE if the whole tree was copied
 *
 * Since: 0.2
 */
gboolean
subagent_tree_copy_finish (GAsyncResult         *result,
                           SubagentCopyStrategy *out_used,
                           GError              **error)
{
  CopyTaskData *d;

  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);

  if (!g_task_propagate_boolean (G_TASK (result), error))
    return FALSE;
  d = g_task_get_task_data (G_TASK (result));
  if (out_used != NULL)
    *out_used = d->used;
  return TRUE;
}

/* ---------------------------------------------------------------------- */

static gboolean remove_contents (int dir_fd, dev_t dev, const char *path,
                                 GCancellable *cancellable, GError **error);

static gboolean
remove_subdir (int           parent_fd,
               const char   *name,
               dev_t         dev,
               const char   *path,
               GCancellable *cancellable,
               GError      **error)
{
  struct stat st;
  int fd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  gboolean ok;

  if (fd < 0 && errno == EACCES && fchmodat (parent_fd, name, S_IRWXU, 0) == 0)
    fd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Could not open %s to remove it: %s", path, g_strerror (saved));
      return FALSE;
    }
  if (fstat (fd, &st) != 0 || st.st_dev != dev)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                   "Not removing %s: another filesystem is mounted there; unmount it first", path);
      close (fd);
      return FALSE;
    }
  ok = remove_contents (fd, dev, path, cancellable, error);
  close (fd);
  if (ok && unlinkat (parent_fd, name, AT_REMOVEDIR) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Could not remove directory %s: %s", path, g_strerror (saved));
      return FALSE;
    }
  return ok;
}

static gboolean
remove_contents (int           dir_fd,
                 dev_t         dev,
                 const char   *path,
                 GCancellable *cancellable,
                 GError      **error)
{
  int dup_fd = fcntl (dir_fd, F_DUPFD_CLOEXEC, 3);
  gboolean made_writable = FALSE;
  struct dirent *de;
  DIR *dir;

  if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
    {
      int saved = errno;
      if (dup_fd >= 0)
        close (dup_fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Could not read %s to remove it: %s", path, g_strerror (saved));
      return FALSE;
    }

  while ((de = readdir (dir)) != NULL)
    {
      g_autofree char *child = NULL;

      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
        continue;
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        goto fail;
      child = g_build_filename (path, de->d_name, NULL);

      if (de->d_type != DT_DIR)
        {
          if (unlinkat (dir_fd, de->d_name, 0) == 0 || errno == ENOENT)
            continue;
          if (errno == EACCES && !made_writable && fchmod (dir_fd, S_IRWXU) == 0)
            {
              made_writable = TRUE;
              if (unlinkat (dir_fd, de->d_name, 0) == 0)
                continue;
            }
          if (errno != EISDIR)
            {
              int saved = errno;
              g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                           "Could not remove %s: %s", child, g_strerror (saved));
              goto fail;
            }
        }
      if (!made_writable && faccessat (dir_fd, ".", W_OK, AT_EACCESS) != 0)
        {
          made_writable = TRUE;
          (void) fchmod (dir_fd, S_IRWXU);
        }
      if (!remove_subdir (dir_fd, de->d_name, dev, child, cancellable, error))
        goto fail;
    }
  closedir (dir);
  return TRUE;

fail:
  closedir (dir);
  return FALSE;
}

/**
 * subagent_tree_remove:
 * @path: a file or directory
 * @cancellable: (nullable): checked between entries
 * @error: return location for a #GError
 *
 * Removes @path and everything under it, in-process. Symbolic links are
 * removed, never followed; a directory on which another filesystem is
 * mounted is refused (%G_IO_ERROR_BUSY) so an unmount that failed never
 * turns into deleting what was mounted. A @path that does not exist is
 * success, which makes the call idempotent.
 *
 * Returns: %TRUE if @path no longer exists
 */
gboolean
subagent_tree_remove (const char   *path,
                      GCancellable *cancellable,
                      GError      **error)
{
  g_autofree char *canonical = NULL;
  g_autofree char *parent = NULL;
  g_autofree char *base = NULL;
  struct stat st;
  int parent_fd;
  gboolean ok;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (lstat (path, &st) != 0)
    {
      int saved = errno;
      if (saved == ENOENT)
        return TRUE;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Could not remove %s: %s", path, g_strerror (saved));
      return FALSE;
    }
  if (!S_ISDIR (st.st_mode))
    {
      if (unlink (path) == 0 || errno == ENOENT)
        return TRUE;
      {
        int saved = errno;
        g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                     "Could not remove %s: %s", path, g_strerror (saved));
      }
      return FALSE;
    }

  canonical = g_canonicalize_filename (path, NULL);
  if (g_str_equal (canonical, "/"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "Refusing to remove /");
      return FALSE;
    }
  parent = g_path_get_dirname (canonical);
  base = g_path_get_basename (canonical);
  parent_fd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Could not open %s to remove %s: %s", parent, path, g_strerror (saved));
      return FALSE;
    }
  ok = remove_subdir (parent_fd, base, st.st_dev, path, cancellable, error);
  close (parent_fd);
  return ok;
}

/**
 * subagent_tree_spread_subdirectories:
 * @dir: (type filename): a directory that will hold workspace trees
 *
 * Asks the filesystem to place each directory made in @dir, and everything
 * under it, away from its siblings: on ext2/3/4 this sets the top-directory
 * flag (`chattr +T`, `FS_TOPDIR_FL`), so the Orlov allocator gives each new
 * tree a block group of its own.
 *
 * A backend calls it on the directory that holds its workspaces. Without it,
 * a tree made right after another was removed lands in the very block group
 * the removed one left full of recently freed inodes, and on ext4 without a
 * journal creating each file then skips them one by one
 * (`recently_deleted()` in the kernel): most of a checkout's or a copy's time.
 *
 * Best effort: other filesystems, or a directory the process does not own,
 * keep their layout, and nothing is reported beyond a debug message.
 *
 * Since: 0.2
 */
void
subagent_tree_spread_subdirectories (const char *dir)
{
  int fd;
  int flags = 0;

  g_return_if_fail (dir != NULL);

  fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  if (ioctl (fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_TOPDIR_FL) == 0)
    {
      flags |= FS_TOPDIR_FL;
      if (ioctl (fd, FS_IOC_SETFLAGS, &flags) != 0)
        g_debug ("Trees in %s stay packed: cannot set its top-directory flag: %s",
                 dir, g_strerror (errno));
    }
  close (fd);
}
