/* approval-file-io.c: locking and atomic replacement of approval files.
 *
 * Writers hold an exclusive flock on a sidecar "<run>.json.lock" for the whole
 * read-modify-write, and replace "<run>.json" only by renaming a fsync'd
 * temp file over it. So a file name always points at a complete document,
 * and a writer killed at any moment leaves the old document (plus perhaps a
 * temp file that prune removes).
 *
 * The replaced version is not freed but written again as a later temp
 * file: the rename is an exchange (RENAME_EXCHANGE) that leaves it under the
 * temp name, and the writer keeps it if it can lock it exclusively at once.
 * Readers therefore hold a shared flock on the version they read, checked
 * to be still at the file's name once locked (afs_read()): a version being
 * read is never taken, a version taken is never at a name readers open. On
 * ext4 without a journal every inode allocation walks the inodes its group
 * freed in the last minute; a store that frees none skips that walk.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

/* Whether @fd is the inode at @path right now; @held gets its stat. */
static gboolean
still_at (int          fd,
          const char  *path,
          struct stat *held)
{
  struct stat current;

  return fstat (fd, held) == 0 && lstat (path, &current) == 0
         && held->st_dev == current.st_dev && held->st_ino == current.st_ino;
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
      struct stat held;
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
      if (still_at (fd, path, &held))
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

/* Opens @path for reading and holds a shared flock on the version opened,
 * once it is sure to be the one at @path: a writer takes a version it
 * replaced for its next temp file only if it can lock it exclusively at
 * once, so a version locked here and still at the name stays as it is.
 * A version locked exclusively is a writer's temp file, or the one it just
 * put in place and is about to unlock: open the name again. Returns -1
 * with errno set (ENOENT: no file). */
static int
open_locked_version (const char  *path,
                     struct stat *st)
{
  for (guint attempt = 0;; attempt++)
    {
      int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
      int locked;

      if (fd < 0)
        return -1;
      while ((locked = flock (fd, LOCK_SH | LOCK_NB)) < 0 && errno == EINTR)
        ;
      if (locked < 0 && errno != EWOULDBLOCK)
        {
          /* No flock here (some network filesystems): then no writer can
           * lock a replaced version either, and none is written again. */
          if (fstat (fd, st) == 0)
            return fd;
          close (fd);
          return -1;
        }
      if (still_at (fd, path, st))
        {
          /* Locked exclusively at the name, a version is whole: its writer
           * unlocks it right after the rename, unless it died there and a
           * child it forked keeps the lock. After a second of that, it is
           * read as it is. */
          if (locked == 0 || attempt >= 1000)
            return fd;
        }
      /* Replaced since it was opened (the next open sees the new version,
       * or that the file was pruned), or about to be unlocked: spin a
       * little, then yield the processor to that writer. */
      close (fd);
      if (attempt >= 4)
        g_usleep (MIN (attempt * 10, 1000));
    }
}

gboolean
afs_read (const char  *path,
          gboolean     run_locked,
          GBytes     **contents,
          GError     **error)
{
  g_autofree char *data = NULL;
  struct stat st;
  gsize done = 0;
  int fd;

  *contents = NULL;
  /* Under the run's lock the version at the name stays there, whole. */
  if (run_locked)
    {
      fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
      if (fd >= 0 && fstat (fd, &st) < 0)
        {
          int saved_errno = errno;

          close (fd);
          return set_io_error (error, saved_errno, "stat", path);
        }
    }
  else
    fd = open_locked_version (path, &st);
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
  if (!S_ISREG (st.st_mode) || st.st_size > AFS_MAX_FILE_SIZE)
    {
      close (fd);
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "%s is not a regular file of at most %d bytes; remove it", path, AFS_MAX_FILE_SIZE);
      return FALSE;
    }

  /* Nobody writes a version that is at its name and locked: its size is
   * final. */
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

static gboolean
pwrite_all (int           fd,
            const guint8 *data,
            gsize         length)
{
  off_t offset = 0;

  while (length > 0)
    {
      ssize_t n = pwrite (fd, data, length, offset);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return FALSE;
      data += n;
      offset += n;
      length -= (gsize) n;
    }
  return TRUE;
}

void
afs_spare_clear (AfsSpare *spare)
{
  struct stat st;

  if (spare->path != NULL && spare->fd >= 0 && still_at (spare->fd, spare->path, &st))
    g_unlink (spare->path);
  if (spare->fd >= 0)
    close (spare->fd);
  g_clear_pointer (&spare->path, g_free);
  spare->fd = -1;
  spare->held = FALSE;
}

/* Writes @contents into @spare (a replaced version, locked and still under
 * its temp name) in place, over its own blocks, so that none is freed.
 * The writing goes through a descriptor of its own, closed before the
 * version is put in place: its close (IN_CLOSE_WRITE) then names the temp
 * file, which no watcher takes for a queue, and the spare's descriptor,
 * read-only, keeps the lock until then. Returns that descriptor and sets
 * @temp_path and @lock_fd (the spare's), or -1 after dropping the spare. */
static int
rewrite_replaced (AfsSpare      *spare,
                  const guint8  *data,
                  gsize          length,
                  char         **temp_path,
                  int           *lock_fd)
{
  struct stat held, st;
  int fd = -1;

  /* Through its name, checked to be still the spare's: a prune that does
   * not know about kept versions (an older library) may have removed it;
   * another user's version does not open for writing. */
  if (spare->held)
    fd = open (spare->path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0 || fstat (fd, &st) < 0 || fstat (spare->fd, &held) < 0 || st.st_dev != held.st_dev
      || st.st_ino != held.st_ino || !pwrite_all (fd, data, length)
      || (st.st_size > (off_t) length && ftruncate (fd, (off_t) length) < 0))
    {
      if (fd >= 0)
        close (fd);
      afs_spare_clear (spare);
      return -1;
    }
  *lock_fd = spare->fd;
  *temp_path = g_steal_pointer (&spare->path);
  *spare = (AfsSpare) AFS_SPARE_INIT;
  return fd;
}

gboolean
afs_commit (const char  *dir,
            const char  *run_id,
            GBytes      *contents,
            AfsSpare    *spare,
            gboolean    *spare_refused,
            AfsSpare    *replaced,
            GError     **error)
{
  g_autofree char *template_name = g_strconcat (".", run_id, ".json.XXXXXX", NULL);
  g_autofree char *temp_path = NULL;
  g_autofree char *path = afs_run_file_path (dir, run_id);
  gsize length = 0;
  const guint8 *data = g_bytes_get_data (contents, &length);
  gboolean spare_used = FALSE;     /* fd is the nameless spare: closed after the rename */
  gboolean exchanged = FALSE;
  int lock_fd = -1;                /* a replaced version's lock, kept until it is in place */
  int replaced_fd;
  int fd = -1;

  *replaced = (AfsSpare) AFS_SPARE_INIT;
  *spare_refused = FALSE;
  if (spare->fd >= 0 && spare->path != NULL)
    fd = rewrite_replaced (spare, data, length, &temp_path, &lock_fd);
  else if (spare->fd >= 0)
    {
      /* A nameless spare inode made ahead (afs_spare_new()) spares this
       * write the inode allocation: it is written, linked under the temp
       * name and only then fsync'd, so the fsync writes the inode with
       * its link. */
      int spare_fd = spare->fd;

      *spare = (AfsSpare) AFS_SPARE_INIT;
      if (!write_all (spare_fd, data, length))
        {
          int saved_errno = errno;

          close (spare_fd);
          return set_io_error (error, saved_errno, "write", "a new version of the queue file");
        }
      temp_path = g_build_filename (dir, template_name, NULL);
      if (link_spare (spare_fd, temp_path))
        {
          fd = spare_fd;
          spare_used = TRUE;
        }
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
    }

  if (fsync (fd) < 0 || (!spare_used && close (fd) < 0))
    {
      int saved_errno = errno;

      if (spare_used)
        close (fd);
      g_unlink (temp_path);
      if (lock_fd >= 0)
        close (lock_fd);
      return set_io_error (error, saved_errno, "write", temp_path);
    }
  /* The version being replaced stays open across the rename: it is then
   * freed, or kept for the next write, after the rename has woken the
   * readers, instead of inside rename() (about 0.15 ms on ext4). An
   * exchange leaves it under the temp name, whole, where no reader looks.
   * Read-only: its close, whatever its name then, is no IN_CLOSE_WRITE. */
  replaced_fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (replaced_fd >= 0)
    exchanged = renameat2 (AT_FDCWD, temp_path, AT_FDCWD, path, RENAME_EXCHANGE) == 0;
  /* Without an exchange (no file yet, or a filesystem without it): a
   * rename, and the replaced version goes. */
  if (!exchanged && rename (temp_path, path) < 0)
    {
      int saved_errno = errno;

      g_unlink (temp_path);
      if (spare_used)
        close (fd);
      if (lock_fd >= 0)
        close (lock_fd);
      if (replaced_fd >= 0)
        close (replaced_fd);
      return set_io_error (error, saved_errno, "rename a temp file over", path);
    }
  /* Written and fsync'd: closing it cannot lose data. Unlocked first, as
   * a forked child may share the descriptor and so the lock. */
  if (spare_used)
    close (fd);
  if (lock_fd >= 0)
    {
      flock (lock_fd, LOCK_UN);
      close (lock_fd);
    }

  replaced->fd = replaced_fd;
  if (exchanged)
    {
      replaced->path = g_steal_pointer (&temp_path);
      /* A reader holding it keeps it as it is: then it goes. */
      replaced->held = flock (replaced_fd, LOCK_EX | LOCK_NB) == 0;
    }
  return TRUE;
}

void
afs_remove_stale_temp (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  struct stat st;

  if (fd < 0)
    return;
  /* Held: a live writer's next temp file, or a reader's version. */
  if ((flock (fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK) && still_at (fd, path, &st))
    g_unlink (path);
  close (fd);
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
