/* approval-file-io.c: locking and atomic replacement of approval files.
 *
 * Writers hold an exclusive flock on a sidecar "<run>.json.lock" for the whole
 * read-modify-write, and replace "<run>.json" only by rename() of a fsync'd
 * temp file. So a file name always points at a complete document: readers
 * need no lock and never see a torn file, and a writer killed at any moment
 * leaves the old document (plus perhaps a temp file that prune removes).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "approval-file-io.h"

#define TEMP_SUFFIX_LEN 6

char *
afs_run_file_path (const char *dir,
                   const char *run_id)
{
  g_autofree char *name = g_strconcat (run_id, ".json", NULL);

  return g_build_filename (dir, name, NULL);
}

static gboolean
set_io_error (GError     **error,
              int          saved_errno,
              const char  *what,
              const char  *path)
{
  g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
               "Could not %s %s: %s", what, path, g_strerror (saved_errno));
  return FALSE;
}

int
afs_lock (const char  *dir,
          const char  *run_id,
          GError     **error)
{
  g_autofree char *name = g_strconcat (run_id, ".json.lock", NULL);
  g_autofree char *path = g_build_filename (dir, name, NULL);

  /* prune unlinks lock files while holding them: whoever then wins the old
   * inode must notice it is no longer the one at @path and start over. */
  for (;;)
    {
      struct stat held, current;
      int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

      if (fd < 0)
        {
          set_io_error (error, errno, "open the lock file", path);
          return -1;
        }
      while (flock (fd, LOCK_EX) < 0)
        if (errno != EINTR)
          {
            int saved_errno = errno;

            close (fd);
            set_io_error (error, saved_errno, "lock", path);
            return -1;
          }
      if (fstat (fd, &held) == 0 && stat (path, &current) == 0
          && held.st_dev == current.st_dev && held.st_ino == current.st_ino)
        return fd;
      close (fd);
    }
}

void
afs_unlock (int fd)
{
  if (fd >= 0)
    close (fd);
}

gboolean
afs_read (const char  *path,
          GBytes     **contents,
          GError     **error)
{
  g_autofree char *data = NULL;
  struct stat st;
  gsize done = 0;
  int fd;

  *contents = NULL;
  fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0 && errno == ELOOP)
    {
      /* Planted, not written by a queue: untrusted, like invalid JSON, so
       * one such file never blocks the others. */
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "%s is a symbolic link, not a queue file; remove it", path);
      return FALSE;
    }
  if (fd < 0)
    return errno == ENOENT ? TRUE : set_io_error (error, errno, "open", path);

  if (fstat (fd, &st) < 0)
    {
      int saved_errno = errno;

      close (fd);
      return set_io_error (error, saved_errno, "stat", path);
    }
  if (!S_ISREG (st.st_mode) || st.st_size > AFS_MAX_FILE_SIZE)
    {
      close (fd);
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "%s is not a regular file of at most %d bytes; remove it", path, AFS_MAX_FILE_SIZE);
      return FALSE;
    }

  /* The inode never changes after rename, so its size is final. */
  data = g_malloc ((gsize) st.st_size + 1);
  while (done < (gsize) st.st_size)
    {
      ssize_t n = read (fd, data + done, (gsize) st.st_size - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved_errno = errno;

          close (fd);
          return set_io_error (error, saved_errno, "read", path);
        }
      if (n == 0)
        break;
      done += (gsize) n;
    }
  close (fd);
  data[done] = '\0';
  *contents = g_bytes_new_take (g_steal_pointer (&data), done);
  return TRUE;
}

static gboolean
write_all (int           fd,
           const guint8 *data,
           gsize         length)
{
  while (length > 0)
    {
      ssize_t n = write (fd, data, length);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return FALSE;
      data += n;
      length -= (gsize) n;
    }
  return TRUE;
}

int
afs_spare_new (int dir_fd)
{
  /* Nameless (O_TMPFILE): nobody sees it, prune has nothing to remove,
   * and it goes with its fd. Filesystems without O_TMPFILE say so. */
  return openat (dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
}

/* Gives the spare inode @fd the temp name ".<run>.json.XXXXXX" in @dir; the
 * name it got is written over the X's of @temp_path. Through /proc: linkat()
 * of an fd itself (AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH. */
static gboolean
link_spare (int   fd,
            char *temp_path)
{
  static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  char proc_path[64];
  char *x = temp_path + strlen (temp_path) - TEMP_SUFFIX_LEN;

  g_snprintf (proc_path, sizeof proc_path, "/proc/self/fd/%d", fd);
  for (guint attempt = 0; attempt < 100; attempt++)
    {
      for (guint i = 0; i < TEMP_SUFFIX_LEN; i++)
        x[i] = letters[g_random_int_range (0, sizeof letters - 1)];
      if (linkat (AT_FDCWD, proc_path, AT_FDCWD, temp_path, AT_SYMLINK_FOLLOW) == 0)
        return TRUE;
      if (errno != EEXIST)
        return FALSE;
    }
  return FALSE;
}

gboolean
afs_commit (const char  *dir,
            const char  *run_id,
            GBytes      *contents,
            int          spare_fd,
            gboolean    *spare_refused,
            int         *replaced_fd,
            GError     **error)
{
  g_autofree char *template_name = g_strconcat (".", run_id, ".json.XXXXXX", NULL);
  g_autofree char *temp_path = g_build_filename (dir, template_name, NULL);
  g_autofree char *path = afs_run_file_path (dir, run_id);
  gsize length = 0;
  const guint8 *data = g_bytes_get_data (contents, &length);
  int fd = -1;

  *replaced_fd = -1;
  *spare_refused = FALSE;
  /* A spare inode made ahead (afs_spare_new()) spares this write the inode
   * allocation, which on ext4 without a journal walks every inode freed in
   * the group in the last seconds: it is written, linked under the temp
   * name and only then fsync'd, so the fsync writes the inode with its
   * link. It is closed after the rename: its close shows up in the
   * watchers' inotify as "#<inode>", which no reader takes for a queue,
   * in the same wake-up as the rename. */
  if (spare_fd >= 0)
    {
      if (!write_all (spare_fd, data, length))
        {
          int saved_errno = errno;

          close (spare_fd);
          return set_io_error (error, saved_errno, "write", "a new version of the queue file");
        }
      if (link_spare (spare_fd, temp_path))
        fd = spare_fd;
      else
        {
          *spare_refused = TRUE;
          close (spare_fd);
        }
    }
  if (fd < 0)
    {
      /* No spare, or /proc or the filesystem would not link it: a temp
       * file made here, closed before the rename. */
      g_free (temp_path);
      temp_path = g_build_filename (dir, template_name, NULL);
      fd = g_mkstemp_full (temp_path, O_WRONLY | O_CLOEXEC, 0600);
      if (fd < 0)
        return set_io_error (error, errno, "create a temp file in", dir);
      if (!write_all (fd, data, length))
        {
          int saved_errno = errno;

          close (fd);
          g_unlink (temp_path);
          return set_io_error (error, saved_errno, "write", temp_path);
        }
      spare_fd = -1;
    }

  if (fsync (fd) < 0)
    {
      int saved_errno = errno;

      close (fd);
      g_unlink (temp_path);
      return set_io_error (error, saved_errno, "write", temp_path);
    }
  if (spare_fd < 0 && close (fd) < 0)
    {
      int saved_errno = errno;

      g_unlink (temp_path);
      return set_io_error (error, saved_errno, "close", temp_path);
    }
  /* The version being replaced stays open across the rename: its inode
   * is then freed when the caller closes it, after the rename has woken
   * the readers, instead of inside rename() (about 0.15 ms on ext4). */
  *replaced_fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (rename (temp_path, path) < 0)
    {
      int saved_errno = errno;

      g_unlink (temp_path);
      if (spare_fd >= 0)
        close (fd);
      if (*replaced_fd >= 0)
        close (*replaced_fd);
      *replaced_fd = -1;
      return set_io_error (error, saved_errno, "rename a temp file over", path);
    }
  /* Written and fsync'd: closing it cannot lose data. */
  if (spare_fd >= 0)
    close (fd);
  return TRUE;
}

gboolean
afs_sync_dir_fd (int          fd,
                 const char  *dir,
                 GError     **error)
{
  while (fsync (fd) < 0)
    if (errno != EINTR)
      return set_io_error (error, errno, "fsync the directory", dir);
  return TRUE;
}

gboolean
afs_sync_dir (const char  *dir,
              GError     **error)
{
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int saved_errno;

  if (fd < 0)
    return set_io_error (error, errno, "open the directory", dir);
  if (fsync (fd) == 0)
    {
      close (fd);
      return TRUE;
    }
  saved_errno = errno;
  close (fd);
  return set_io_error (error, saved_errno, "fsync the directory", dir);
}

gboolean
afs_parse_temp_name (const char  *name,
                     char       **run_id)
{
  const char *marker;
  g_autofree char *run = NULL;

  if (name[0] != '.')
    return FALSE;
  marker = strstr (name + 1, ".json.");
  if (marker == NULL || strlen (marker + strlen (".json.")) != TEMP_SUFFIX_LEN)
    return FALSE;
  run = g_strndup (name + 1, (gsize) (marker - name - 1));
  if (!subagent_approval_id_is_valid (run))
    return FALSE;
  *run_id = g_steal_pointer (&run);
  return TRUE;
}

gboolean
afs_parse_run_file_name (const char  *name,
                         char       **run_id)
{
  g_autofree char *run = NULL;

  if (!g_str_has_suffix (name, ".json"))
    return FALSE;
  run = g_strndup (name, strlen (name) - strlen (".json"));
  if (!subagent_approval_id_is_valid (run))
    return FALSE;
  *run_id = g_steal_pointer (&run);
  return TRUE;
}
