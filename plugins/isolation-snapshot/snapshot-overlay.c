/* snapshot-overlay.c: the `overlay` strategy: an overlayfs mount whose lower
 * layer is the parent and whose upper layer holds what the child writes.
 *
 * O(1) however big the parent is: nothing is copied until the child writes
 * a file. It needs CAP_SYS_ADMIN (root, or a process already inside its
 * own user and mount namespace). The lower layer is the parent's live
 * tree: a file the child has not written shows the parent's current
 * content, which also keeps the review (parent now vs. child) from undoing
 * the parent's own concurrent edits. Names the snapshot leaves out
 * (`.subagent`, `.git`) are hidden with whiteouts (character devices 0/0)
 * in the upper layer.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "snapshot-private.h"

static gboolean
path_fits_options (const char *path)
{
  /* overlayfs splits its options at ',' and lowerdir at ':'. */
  return strpbrk (path, ",:\\") == NULL;
}

static gboolean
set_unavailable_or_failed (GError    **error,
                           int         saved_errno,
                           const char *format,
                           ...) G_GNUC_PRINTF (3, 4);

static gboolean
set_unavailable_or_failed (GError    **error,
                           int         saved_errno,
                           const char *format,
                           ...)
{
  g_autofree char *what = NULL;
  const char *hint = "";
  int code = SUBAGENT_ISOLATION_ERROR_UNAVAILABLE;
  va_list ap;

  va_start (ap, format);
  what = g_strdup_vprintf (format, ap);
  va_end (ap);

  switch (saved_errno)
    {
    case EPERM:
    case EACCES:
      hint = "; overlay snapshots need root (CAP_SYS_ADMIN): use strategy copy or reflink";
      break;
    case ENODEV:
      hint = "; this kernel has no overlayfs: use strategy copy or reflink";
      break;
    case EINVAL:
    case EOPNOTSUPP:
      hint = "; the snapshot directory's filesystem cannot hold an overlay's upper layer: "
             "choose another snapshot_dir or strategy";
      break;
    default:
      code = SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED;
      break;
    }
  g_set_error (error, SUBAGENT_ISOLATION_ERROR, code, "%s: %s%s", what, g_strerror (saved_errno), hint);
  return FALSE;
}

/* Hides what @exclude matches under lower/rel with whiteouts in the upper
 * layer; the upper directories made on the way take the lower ones' mode,
 * owner and times (the merged view shows the upper directory's). Files the
 * parent makes later in a subdirectory are not hidden: see the docs. */
static gboolean
hide_secrets (int                       lower_fd,
              int                       upper_fd,
              const char               *rel,
              const SubagentExcludeSet *exclude,
              const char * const       *skip_top,
              GError                  **error)
{
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);
  int dup_fd = fcntl (lower_fd, F_DUPFD_CLOEXEC, 3);
  struct dirent *de;
  DIR *dir;
  gboolean ok = TRUE;

  if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
    {
      if (dup_fd >= 0)
        close (dup_fd);
      return set_unavailable_or_failed (error, errno, "Could not read %s", *rel ? rel : ".");
    }
  while (ok && (de = readdir (dir)) != NULL)
    {
      struct stat st;
      int is_dir;

      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, "..") ||
          (*rel == '\0' && skip_top != NULL && g_strv_contains (skip_top, de->d_name)))
        continue;
      is_dir = de->d_type == DT_DIR ? 1 : de->d_type == DT_UNKNOWN ? -1 : 0;
      if (is_dir < 0 && fstatat (lower_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        is_dir = S_ISDIR (st.st_mode);
      if (subagent_exclude_set_match_name (exclude, de->d_name, is_dir))
        {
          if (mknodat (upper_fd, de->d_name, S_IFCHR | 0000, makedev (0, 0)) != 0 && errno != EEXIST)
            ok = set_unavailable_or_failed (error, errno, "Could not hide %s/%s with a whiteout", rel, de->d_name);
        }
      else if (is_dir == 1)
        g_ptr_array_add (dirs, g_strdup (de->d_name));
    }
  closedir (dir);

  for (guint i = 0; ok && i < dirs->len; i++)
    {
      const char *name = dirs->pdata[i];
      g_autofree char *child = *rel ? g_strconcat (rel, "/", name, NULL) : g_strdup (name);
      int sub_lower = openat (lower_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      int sub_upper = -1;
      gboolean made = FALSE;
      struct stat st;

      if (sub_lower < 0 || fstat (sub_lower, &st) != 0)
        {
          if (sub_lower >= 0)
            close (sub_lower);
          continue;   /* gone or unreadable: nothing to hide we can see */
        }
      /* Only directories that hold a secret get an upper twin: look first. */
      {
        }
      if (mkdirat (upper_fd, name, st.st_mode & 07777) == 0)
        made = TRUE;
      sub_upper = openat (upper_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub_upper < 0)
        ok = set_unavailable_or_failed (error, errno, "Could not open the upper directory %s", child);
      else
        ok = hide_secrets (sub_lower, sub_upper, child, exclude, NULL, error);
      if (ok && made)
        {
          struct timespec times[2] = { st.st_atim, st.st_mtim };
          gboolean empty = TRUE;
          int probe_fd = fcntl (sub_upper, F_DUPFD_CLOEXEC, 3);
          DIR *probe = probe_fd >= 0 ? fdopendir (probe_fd) : NULL;

          while (probe != NULL && (de = readdir (probe)) != NULL)
            if (!g_str_equal (de->d_name, ".") && !g_str_equal (de->d_name, ".."))
              empty = FALSE;
          if (probe != NULL)
            closedir (probe);
          else if (probe_fd >= 0)
            close (probe_fd);
          if (empty)
            (void) unlinkat (upper_fd, name, AT_REMOVEDIR);   /* nothing hidden below */
          else
            {
              (void) fchmod (sub_upper, st.st_mode & 07777);
              if (geteuid () == 0)
                (void) fchown (sub_upper, st.st_uid, st.st_gid);
              (void) futimens (sub_upper, times);
            }
        }
      close (sub_lower);
      if (sub_upper >= 0)
        close (sub_upper);
    }
  return ok;
}

/**
 * snapshot_overlay_mount:
 * @lower: the parent's root (resolved)
 * @base: the snapshot's base directory, existing and empty but for the marker
 * @hidden_names: (array zero-terminated=1): top-level names to hide
 * @exclude: (nullable): secret files to hide at any depth
 * @error: return location for a #GError
 *
 * Makes `upper/`, `work/` and `tree/` in @base and mounts the overlay on
 * `tree/`. On failure the caller removes @base.
 *
 * Returns: %TRUE if `tree/` is mounted
 */
gboolean
snapshot_overlay_mount (const char         *lower,
                        const char         *base,
                        const char * const *hidden_names,
                        const SubagentExcludeSet *exclude,
                        GError            **error)
{
  g_autofree char *upper = g_build_filename (base, SNAPSHOT_UPPER, NULL);
  g_autofree char *work = g_build_filename (base, SNAPSHOT_WORK, NULL);
  g_autofree char *tree = g_build_filename (base, SNAPSHOT_TREE, NULL);
  g_autofree char *options = NULL;
  struct stat lower_st;
  int lower_fd = -1, upper_fd = -1;
  gboolean ok = FALSE;

  if (!path_fits_options (lower) || !path_fits_options (base))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                   "Cannot mount an overlay of %s in %s: overlayfs options cannot carry ',', ':' "
                   "or '\\' in paths; use strategy copy or reflink", lower, base);
      return FALSE;
    }
  if (mkdir (upper, 0755) != 0 || mkdir (work, 0700) != 0 || mkdir (tree, 0755) != 0)
    return set_unavailable_or_failed (error, errno, "Could not create the overlay directories in %s", base);

  lower_fd = open (lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  upper_fd = open (upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (lower_fd < 0 || upper_fd < 0 || fstat (lower_fd, &lower_st) != 0)
    {
      set_unavailable_or_failed (error, errno, "Could not open %s or %s", lower, upper);
      goto out;
    }
  /* The merged root takes its attributes from the upper root. */
  if (fchmod (upper_fd, lower_st.st_mode & 07777) != 0 ||
      (geteuid () == 0 && fchown (upper_fd, lower_st.st_uid, lower_st.st_gid) != 0))
    {
      set_unavailable_or_failed (error, errno, "Could not set the mode of %s", upper);
      goto out;
    }
  /* Whiteouts also for names the parent does not have yet: the lower
   * layer is live, and a .git made later must stay hidden too. */
  for (guint i = 0; hidden_names != NULL && hidden_names[i] != NULL; i++)
    {
      if (mknodat (upper_fd, hidden_names[i], S_IFCHR | 0000, makedev (0, 0)) != 0)
        {
          set_unavailable_or_failed (error, errno, "Could not hide %s/%s with a whiteout", lower, hidden_names[i]);
          goto out;
        }
    }

  if (!subagent_exclude_set_is_empty (exclude) &&
      !hide_secrets (lower_fd, upper_fd, "", exclude, hidden_names, error))
    goto out;

  options = g_strdup_printf ("lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
  /* No set-user-ID programs and no device nodes inside a child's workspace. */
  if (mount ("overlay", tree, "overlay", MS_NOSUID | MS_NODEV, options) != 0)
    {
      set_unavailable_or_failed (error, errno, "Could not mount an overlay of %s on %s", lower, tree);
      goto out;
    }
  ok = TRUE;

out:
  if (lower_fd >= 0)
    close (lower_fd);
  if (upper_fd >= 0)
    close (upper_fd);
  return ok;
}

/**
 * snapshot_unmount_tree:
 * @base: a snapshot's base directory
 * @error: return location for a #GError
 *
 * Unmounts `<base>/tree` if something is mounted there (detaching it lazily
 * when a process still uses it). Nothing mounted is success.
 *
 * Returns: %TRUE if nothing is mounted on `<base>/tree` any more
 */
gboolean
snapshot_unmount_tree (const char  *base,
                       GError     **error)
{
  g_autofree char *tree = g_build_filename (base, SNAPSHOT_TREE, NULL);
  struct stat base_st, tree_st;

  for (int attempt = 0; attempt < 8; attempt++)
    {
      if (lstat (base, &base_st) != 0 || lstat (tree, &tree_st) != 0 ||
          !S_ISDIR (tree_st.st_mode) || tree_st.st_dev == base_st.st_dev)
        return TRUE;
      if (umount2 (tree, UMOUNT_NOFOLLOW) != 0 &&
          (errno != EBUSY || umount2 (tree, MNT_DETACH | UMOUNT_NOFOLLOW) != 0))
        {
          int saved = errno;
          g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                       "Could not unmount the snapshot overlay %s: %s", tree, g_strerror (saved));
          return FALSE;
        }
    }
  g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
               "Something is still mounted on %s after unmounting it 8 times", tree);
  return FALSE;
}
