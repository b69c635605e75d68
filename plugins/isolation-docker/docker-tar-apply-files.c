/* docker-tar-apply-files.c: what applying a tar stream does on disk:
 * directories opened (or made) without following links, one entry made or
 * brought up to date, a file compared and rewritten from its first
 * difference, what the archive did not hold removed.
 *
 * Directories the apply makes (and the root, when it was empty) get the
 * ext4 top-directory flag (`chattr +T`), so the directories made in them
 * are spread over block groups (Orlov) rather than packed into their
 * parent's: on ext4 without a journal, creating a file in a group that
 * freed many inodes in the last ~30 s skips each of them
 * (`recently_deleted()`), which made file creation, not the engine, most
 * of a copy-out into an empty directory (docs/performance.md, Docker).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>

#include "docker-tar-private.h"

DirRef *
docker_tar_dir_ref_new (int fd)
{
  DirRef *ref = g_new (DirRef, 1);

  ref->fd = fd;
  g_atomic_ref_count_init (&ref->refs);
  return ref;
}

DirRef *
docker_tar_dir_ref_ref (DirRef *ref)
{
  g_atomic_ref_count_inc (&ref->refs);
  return ref;
}

void
docker_tar_dir_ref_unref (DirRef *ref)
{
  if (ref != NULL && g_atomic_ref_count_dec (&ref->refs))
    {
      close (ref->fd);
      g_free (ref);
    }
}

static gboolean
remove_at (int          dir_fd,
           const char  *name,
           const char  *rel,
           GError     **error)
{
  struct stat st;

  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? TRUE : docker_tar_errno_error (error, errno, "stat", rel);
  if (S_ISDIR (st.st_mode))
    {
      int fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      int dup_fd;
      DIR *dir;
      struct dirent *de;
      gboolean ok = TRUE;

      if (fd < 0)
        return docker_tar_errno_error (error, errno, "open directory", rel);
      dup_fd = fcntl (fd, F_DUPFD_CLOEXEC, 3);
      if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
        {
          int saved = errno;
          close (fd);
          if (dup_fd >= 0)
            close (dup_fd);
          return docker_tar_errno_error (error, saved, "read directory", rel);
        }
      while (ok && (de = readdir (dir)) != NULL)
        if (!g_str_equal (de->d_name, ".") && !g_str_equal (de->d_name, ".."))
          {
            g_autofree char *child = g_strconcat (rel, "/", de->d_name, NULL);
            ok = remove_at (fd, de->d_name, child, error);
          }
      closedir (dir);
      close (fd);
      if (!ok)
        return FALSE;
      if (unlinkat (dir_fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        return docker_tar_errno_error (error, errno, "remove", rel);
      return TRUE;
    }
  if (unlinkat (dir_fd, name, 0) != 0 && errno != ENOENT)
    return docker_tar_errno_error (error, errno, "remove", rel);
  return TRUE;
}

/* Best effort: `chattr +T` (see the top of the file); other filesystems
 * ignore or refuse it. */
void
docker_tar_spread_subdirectories (int dir_fd)
{
  int flags = 0;

  if (ioctl (dir_fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_TOPDIR_FL) == 0)
    {
      flags |= FS_TOPDIR_FL;
      (void) ioctl (dir_fd, FS_IOC_SETFLAGS, &flags);
    }
}

static void
spread_made_dir (int         parent_fd,
                 const char *name)
{
  int fd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd >= 0)
    {
      docker_tar_spread_subdirectories (fd);
      close (fd);
    }
}

/* Opens the directory @rel (made if missing, replacing a non-directory),
 * never following a link. Returns a borrowed fd. */
static int
open_dir (Applier     *a,
          const char  *rel,
          GError     **error)
{
  g_auto(GStrv) parts = NULL;
  gsize prefix_len_before = 0;
  int fd;

  if (*rel == '\0')
    return a->root_fd;
  if (a->cached_rel != NULL && g_str_equal (a->cached_rel, rel))
    return a->cached->fd;
  if (a->cached_rel != NULL)
    {
      g_clear_pointer (&a->cached, docker_tar_dir_ref_unref);
      g_clear_pointer (&a->cached_rel, g_free);
    }

  parts = g_strsplit (rel, "/", -1);
  fd = dup (a->root_fd);
  for (guint i = 0; parts[i] != NULL && fd >= 0; i++)
    {
      gsize prefix_len = (prefix_len_before += (i > 0) + strlen (parts[i]));
      int sub = openat (fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

      if (sub < 0 && (errno == ENOTDIR || errno == ELOOP || errno == ENOENT))
        {
          if (!remove_at (fd, parts[i], rel, error))
            {
              close (fd);
              return -1;
            }
          if (mkdirat (fd, parts[i], 0755) != 0 && errno != EEXIST)
            {
              docker_tar_errno_error (error, errno, "create directory", rel);
              close (fd);
              return -1;
            }
          g_hash_table_add (a->fresh, g_strndup (rel, prefix_len));
          sub = openat (fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub >= 0)
            docker_tar_spread_subdirectories (sub);
        }
      if (sub < 0)
        docker_tar_errno_error (error, errno, "open directory", rel);
      close (fd);
      fd = sub;
    }
  if (fd < 0)
    return -1;
  a->cached_rel = g_strdup (rel);
  a->cached = docker_tar_dir_ref_new (fd);
  return fd;
}

gboolean
docker_tar_all_zero (const char *data,
                     gsize       size)
{
  static const char zeros[4096];

  while (size > 0)
    {
      gsize n = MIN (size, sizeof zeros);
      if (memcmp (data, zeros, n) != 0)
        return FALSE;
      data += n;
      size -= n;
    }
  return TRUE;
}

static gboolean
apply_file (Applier     *a,
            int          dir_fd,
            const char  *name,
            const char  *rel,
            guint64      size,
            mode_t       mode,
            gboolean     in_fresh_dir,
            GError     **error)
{
  struct stat st;
  gboolean fresh = TRUE, comparing = FALSE, exists = FALSE;
  mode_t wanted = (mode & 0777) | 0600;
  guint64 offset = 0, written_to = 0;
  int fd = -1;

  /* In a directory this apply made, the name is new (unless the archive
   * names it twice: then the create fails and the old file is looked at). */
  if (in_fresh_dir)
    {
      fd = openat (dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, wanted);
      if (fd < 0 && errno != EEXIST)
        return docker_tar_errno_error (error, errno, "create", rel);
      if (fd >= 0 && (wanted & 0022) != 0)
        (void) fchmod (fd, wanted);
    }
  if (fd < 0)
    {
      /* The old file is looked at, perhaps compared (the arena's buffer):
       * what is queued is made first. */
      if (!docker_tar_creators_drain (a, error))
        return FALSE;
      exists = fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    }
  if (fd < 0 && exists && S_ISREG (st.st_mode) && st.st_nlink == 1)
    {
      fd = openat (dir_fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0)
        {
          fresh = (guint64) st.st_size != size;
          comparing = !fresh;
          if (fresh && ftruncate (fd, 0) != 0)
            {
              int saved = errno;
              close (fd);
              return docker_tar_errno_error (error, saved, "truncate", rel);
            }
          if ((st.st_mode & 0777) != wanted && fchmod (fd, wanted) != 0)
            {
              int saved = errno;
              close (fd);
              return docker_tar_errno_error (error, saved, "chmod", rel);
            }
        }
    }
  if (fd < 0)
    {
      if (exists && !remove_at (dir_fd, name, rel, error))
        return FALSE;
      fd = openat (dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, wanted);
      if (fd < 0)
        return docker_tar_errno_error (error, errno, "create", rel);
      /* The umask (usually 022) may have taken write bits the archive gives. */
      if ((wanted & 0022) != 0)
        (void) fchmod (fd, wanted);
    }

  while (offset < size)
    {
      gsize n = MIN ((guint64) BUFFER_SIZE, size - offset);

      if (!docker_tar_read_exact (a, a->buffer, n, FALSE, NULL, error))
        goto failed;
      if (comparing)
        {
          ssize_t got = pread (fd, a->compare, n, offset);
          if (got == (ssize_t) n && memcmp (a->compare, a->buffer, n) == 0)
            {
              offset += n;
              continue;
            }
          comparing = FALSE;   /* from here on, write */
        }
      if (!(fresh && docker_tar_all_zero (a->buffer, n)))
        {
          gsize written = 0;
          while (written < n)
            {
              ssize_t w = pwrite (fd, a->buffer + written, n - written, offset + written);
              if (w < 0 && errno == EINTR)
                continue;
              if (w < 0)
                {
                  docker_tar_errno_error (error, errno, "write", rel);
                  goto failed;
                }
              written += w;
            }
          written_to = offset + n;
        }
      offset += n;
    }
  /* A trailing run of zeros is a hole to the end. */
  if (fresh && written_to != size && ftruncate (fd, size) != 0)
    {
      docker_tar_errno_error (error, errno, "size", rel);
      goto failed;
    }
  close (fd);
  return docker_tar_skip_bytes (a, (BLOCK - size % BLOCK) % BLOCK, error);

failed:
  close (fd);
  return FALSE;
}

gboolean
docker_tar_apply_entry (Applier     *a,
                        const char  *rel,
                        char         type,
                        guint64      size,
                        mode_t       mode,
                        const char  *link,
                        GError     **error)
{
  g_autofree char *parent = g_path_get_dirname (rel);
  g_autofree char *name = g_path_get_basename (rel);
  struct stat st;
  gboolean in_fresh;
  int dir_fd;

  if (g_str_equal (parent, "."))
    {
      g_free (parent);
      parent = g_strdup ("");
    }
  dir_fd = open_dir (a, parent, error);
  if (dir_fd < 0)
    return FALSE;
  /* Entries below a name the caller keeps never come back (a worktree's
   * `.git` file stays the host's). */
  {
    g_autofree char *top = g_strndup (rel, strcspn (rel, "/"));
    if (a->keep != NULL && g_strv_contains (a->keep, top))
      return docker_tar_skip_bytes (a, size + (BLOCK - size % BLOCK) % BLOCK, error);
  }
  in_fresh = g_hash_table_contains (a->fresh, parent);
  if (!in_fresh)
    g_hash_table_add (a->seen, g_strdup (rel));

  switch (type)
    {
    case '0': case '\0': case '7':
      if (size > a->max_file_size)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
                       "The child's file %s is %" G_GUINT64_FORMAT " bytes, over the copy-back limit of %"
                       G_GUINT64_FORMAT " bytes (option transfer_max_file); nothing past it was copied back",
                       rel, size, a->max_file_size);
          return FALSE;
        }
      if (in_fresh && size <= CREATE_MAX_FILE)
        return docker_tar_queue_create (a, *parent == '\0' ? a->root : a->cached, name, rel, size, (mode & 0777) | 0600,
                                        error);
      return apply_file (a, dir_fd, name, rel, size, mode, in_fresh, error);
    case '5':
      if (in_fresh && mkdirat (dir_fd, name, (mode | 0700) & 0777) == 0)
        {
          g_hash_table_add (a->fresh, g_strdup (rel));
          spread_made_dir (dir_fd, name);
        }
      else if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode))
        {
          if ((st.st_mode & 0777) != ((mode | 0700) & 0777))
            (void) fchmodat (dir_fd, name, (mode | 0700) & 0777, 0);
        }
      else if (!remove_at (dir_fd, name, rel, error) ||
               (mkdirat (dir_fd, name, (mode | 0700) & 0777) != 0 &&
                docker_tar_errno_error (error, errno, "create", rel) == FALSE))
        return FALSE;
      else
        {
          g_hash_table_add (a->fresh, g_strdup (rel));
          spread_made_dir (dir_fd, name);
        }
      return docker_tar_skip_bytes (a, size + (BLOCK - size % BLOCK) % BLOCK, error);
    case '2':
      if (!docker_tar_creators_drain (a, error))
        return FALSE;
      {
        char target[4096];
        ssize_t len = readlinkat (dir_fd, name, target, sizeof target - 1);

        if (len >= 0 && (target[len] = '\0', g_str_equal (target, link)))
          return TRUE;
        if (!remove_at (dir_fd, name, rel, error))
          return FALSE;
        if (symlinkat (link, dir_fd, name) != 0)
          return docker_tar_errno_error (error, errno, "create link", rel);
        return TRUE;
      }
    case '1':
      if (!docker_tar_creators_drain (a, error))
        return FALSE;
      {
        gboolean top = FALSE, bad = FALSE;
        g_autofree char *target = docker_tar_relative_name (link, &top, &bad);

        if (target == NULL)
          return TRUE;
        if (!remove_at (dir_fd, name, rel, error))
          return FALSE;
        if (linkat (a->root_fd, target, dir_fd, name, 0) != 0)
          return docker_tar_errno_error (error, errno, "link", rel);
        return TRUE;
      }
    default:
      /* Devices, FIFOs: not brought back. */
      if (!in_fresh)
        g_hash_table_remove (a->seen, rel);
      return docker_tar_skip_bytes (a, size + (BLOCK - size % BLOCK) % BLOCK, error);
    }
}

/* Removes what the archive did not hold. */
gboolean
docker_tar_remove_unseen (Applier     *a,
                          int          dir_fd,
                          const char  *rel,
                          GError     **error)
{
  g_autoptr(GPtrArray) names = docker_tar_list_dir (dir_fd, rel, NULL, error);

  if (names == NULL)
    return FALSE;

  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      g_autofree char *child = *rel ? g_strconcat (rel, "/", name, NULL) : g_strdup (name);
      struct stat st;

      if (*rel == '\0' && a->keep != NULL && g_strv_contains (a->keep, name))
        continue;
      /* The parent's secrets were never sent: not a deletion. */
      if (subagent_exclude_set_match_name (a->secrets, name, -1))
        continue;
      if (g_hash_table_contains (a->fresh, child))
        continue;   /* made by this apply: it holds only what the archive holds */
      if (!g_hash_table_contains (a->seen, child))
        {
          if (!remove_at (dir_fd, name, child, error))
            return FALSE;
          continue;
        }
      if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode))
        {
          int sub = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          gboolean ok;

          if (sub < 0)
            return docker_tar_errno_error (error, errno, "open directory", child);
          ok = docker_tar_remove_unseen (a, sub, child, error);
          close (sub);
          if (!ok)
            return FALSE;
        }
    }
  return TRUE;
}

/* Nothing but . and ..: an empty destination (copy-out into a new directory). */
gboolean
docker_tar_dir_is_empty (int dir_fd)
{
  /* A description of its own: a dup would share (and move) the offset. */
  int dup_fd = openat (dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct dirent *de;
  gboolean empty = TRUE;
  DIR *dir;

  if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
    {
      if (dup_fd >= 0)
        close (dup_fd);
      return FALSE;
    }
  while (empty && (de = readdir (dir)) != NULL)
    empty = g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, "..");
  closedir (dir);
  return empty;
}
