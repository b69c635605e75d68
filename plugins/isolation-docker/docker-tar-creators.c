/* docker-tar-creators.c: the small new files of directories an apply
 * made, created by a few threads (a create costs far more than its bytes
 * on a busy disk), their data queued in the applier's arena.
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

#include "docker-tar-private.h"

/* A small new file for a creator thread: its data lives in the applier's
 * second buffer (the arena), so memory stays at two buffers. */
typedef struct {
  DirRef *dir;
  char *name;
  char *rel;
  const char *data;
  gsize size;
  mode_t mode;
} CreateJob;

#define CREATORS_MAX 8

static gboolean
write_all_at (int          fd,
              const char  *data,
              gsize        size,
              guint64      offset,
              const char  *rel,
              GError     **error)
{
  gsize written = 0;

  while (written < size)
    {
      ssize_t w = pwrite (fd, data + written, size - written, offset + written);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return docker_tar_errno_error (error, errno, "write", rel);
      written += w;
    }
  return TRUE;
}

static void
create_in_thread (gpointer data,
                  gpointer user_data)
{
  CreateJob *job = data;
  Applier *a = user_data;
  g_autoptr(GError) local_error = NULL;
  int fd;

  fd = openat (job->dir->fd, job->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, job->mode);
  /* Named twice in the archive: the later entry wins, as tar does. */
  if (fd < 0 && errno == EEXIST && unlinkat (job->dir->fd, job->name, 0) == 0)
    fd = openat (job->dir->fd, job->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, job->mode);
  if (fd < 0)
    docker_tar_errno_error (&local_error, errno, "create", job->rel);
  else
    {
      if ((job->mode & 0022) != 0)
        (void) fchmod (fd, job->mode);
      /* All zeros: a hole, as the one-by-one path makes it. */
      if (docker_tar_all_zero (job->data, job->size))
        {
          if (job->size > 0 && ftruncate (fd, job->size) != 0)
            docker_tar_errno_error (&local_error, errno, "size", job->rel);
        }
      else
        write_all_at (fd, job->data, job->size, 0, job->rel, &local_error);
      close (fd);
    }

  docker_tar_dir_ref_unref (job->dir);
  g_free (job->name);
  g_free (job->rel);
  g_free (job);
  g_mutex_lock (&a->lock);
  if (local_error != NULL && a->create_error == NULL)
    a->create_error = g_steal_pointer (&local_error);
  if (--a->pending == 0)
    g_cond_signal (&a->idle);
  g_mutex_unlock (&a->lock);
}

/* Waits for every queued file; the arena is free again after. */
gboolean
docker_tar_creators_drain (Applier  *a,
                           GError  **error)
{
  GError *failed;

  if (a->creators == NULL)
    return TRUE;
  g_mutex_lock (&a->lock);
  while (a->pending > 0)
    g_cond_wait (&a->idle, &a->lock);
  failed = g_steal_pointer (&a->create_error);
  g_mutex_unlock (&a->lock);
  a->arena_used = 0;
  if (failed != NULL)
    {
      g_propagate_error (error, failed);
      return FALSE;
    }
  return TRUE;
}

/* Queues a small new file of a fresh directory: its data is read into the
 * arena, a creator makes it. */
gboolean
docker_tar_queue_create (Applier     *a,
                         DirRef      *dir,
                         const char  *name,
                         const char  *rel,
                         guint64      size,
                         mode_t       mode,
                         GError     **error)
{
  CreateJob *job;
  char *data;

  if (a->arena_used + size > BUFFER_SIZE && !docker_tar_creators_drain (a, error))
    return FALSE;
  if (a->creators == NULL)
    {
      guint threads = CLAMP (g_get_num_processors () * 2, 2, CREATORS_MAX);

      a->creators = g_thread_pool_new (create_in_thread, a, (int) threads, FALSE, NULL);
    }
  data = a->compare + a->arena_used;
  if (!docker_tar_read_exact (a, data, size, FALSE, NULL, error))
    return FALSE;
  a->arena_used += size;
  job = g_new (CreateJob, 1);
  job->dir = docker_tar_dir_ref_ref (dir);
  job->name = g_strdup (name);
  job->rel = g_strdup (rel);
  job->data = data;
  job->size = size;
  job->mode = mode;
  g_mutex_lock (&a->lock);
  a->pending++;
  g_mutex_unlock (&a->lock);
  g_thread_pool_push (a->creators, job, NULL);
  return docker_tar_skip_bytes (a, (BLOCK - size % BLOCK) % BLOCK, error);
}
