/* subagent-tree-copy-file.c: copying one queued file of a tree copy
 * (subagent-tree-copy-job.c), by reflink or by bytes, and the workers that
 * claim queued files and copy them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subagent-tree-copy-job-private.h"

static gboolean
errno_means_no_reflink (int e)
{
  return e == EOPNOTSUPP || e == ENOTTY || e == EXDEV || e == EINVAL || e == ENOSYS || e == EPERM;
}

/* Copies the file as big as it was when opened (or to an earlier EOF): a
 * snapshot is the tree as copied, and not asking again for EOF saves one
 * syscall per file, a good part of what a small file costs. With no size
 * known (0), copies to EOF. */
static gboolean
copy_bytes (int   src,
            int   dst,
            off_t expected)
{
  gboolean use_cfr = TRUE;
  off_t copied = 0;

  for (;;)
    {
      ssize_t n;

      if (expected > 0 && copied >= expected)
        return TRUE;
      if (use_cfr)
        {
          n = copy_file_range (src, NULL, dst, NULL, 8 * 1024 * 1024, 0);
          if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP))
            {
              use_cfr = FALSE;
              continue;
            }
          if (n < 0 && errno == EINTR)
            continue;
          if (n < 0)
            return FALSE;
          if (n == 0)
            return TRUE;
          copied += n;
        }
      else
        {
          char buf[64 * 1024];
          ssize_t r = read (src, buf, sizeof buf);

          if (r < 0 && errno == EINTR)
            continue;
          if (r <= 0)
            return r == 0;
          copied += r;
          for (ssize_t done = 0; done < r;)
            {
              ssize_t w = write (dst, buf + done, r - done);
              if (w < 0 && errno == EINTR)
                continue;
              if (w < 0)
                return FALSE;
              done += w;
            }
        }
    }
}

static char *
entry_rel (const Entry *e)
{
  return *e->dir->rel ? g_strconcat (e->dir->rel, "/", e->name, NULL) : g_strdup (e->name);
}

/* Per file: open, fstat, create (with its final mode), copy, futimens, two
 * closes; fchmod only when the umask removed bits the source has. */
static void
copy_one_file (CopyJob *job,
               Entry   *e)
{
  g_autofree char *rel = NULL;
  struct timespec times[2];
  struct stat st;
  mode_t mode;
  int src, dst = -1;

  /* O_NONBLOCK: a FIFO that replaced the file since the walk must not block
   * the open; it is skipped below. Regular files ignore the flag. */
  src = openat (e->dir->src_fd, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (src < 0)
    {
      if (errno == ENOENT || errno == ENXIO)
        return;  /* removed since the walk, or now a socket */
      rel = entry_rel (e);
      _subagent_tree_copy_job_fail (job, errno, "Could not open %s/%s", job->source, rel);
      return;
    }
  if (fstat (src, &st) != 0)
    {
      rel = entry_rel (e);
      _subagent_tree_copy_job_fail (job, errno, "Could not stat %s/%s", job->source, rel);
      goto out;
    }
  if (!S_ISREG (st.st_mode))
    {
      g_debug ("Snapshot skips special file %s/%s/%s", job->source, e->dir->rel, e->name);
      goto out;
    }

  /* Permission bits without set-user/group-ID: a snapshot never mints
   * privileges. Created with them: the directory is 0700 until the end, so
   * nobody else sees the file before it is complete. */
  mode = st.st_mode & 01777;
  dst = openat (e->dir->dst_fd, e->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (dst < 0)
    {
      rel = entry_rel (e);
      _subagent_tree_copy_job_fail (job, errno, "Could not create %s/%s", job->dest, rel);
      goto out;
    }

  if (job->allow_reflink && g_atomic_int_get (&job->reflink_state) != REFLINK_REFUSED)
    {
      if (ioctl (dst, FICLONE, src) == 0)
        {
          g_atomic_int_set (&job->reflink_state, REFLINK_WORKS);
          goto metadata;
        }
      if (!errno_means_no_reflink (errno))
        {
          rel = entry_rel (e);
          _subagent_tree_copy_job_fail (job, errno, "Could not clone %s/%s", job->source, rel);
          goto out;
        }
      /* Same filesystem for the whole tree: do not ask again. */
      g_atomic_int_set (&job->reflink_state, REFLINK_REFUSED);
    }

  if (!copy_bytes (src, dst, st.st_size))
    {
      rel = entry_rel (e);
      _subagent_tree_copy_job_fail (job, errno, "Could not copy %s/%s to %s/%s", job->source, rel, job->dest, rel);
      goto out;
    }

metadata:
  times[0] = st.st_atim;
  times[1] = st.st_mtim;
  if (((mode & ~job->umask) != mode && fchmod (dst, mode) != 0) || futimens (dst, times) != 0)
    {
      rel = entry_rel (e);
      _subagent_tree_copy_job_fail (job, errno, "Could not set mode and times of %s/%s", job->dest, rel);
    }

out:
  close (src);
  if (dst >= 0)
    close (dst);
}

/* Claims up to COPY_CLAIM queued files, [*first, *end). Files are queued
 * in walk order, so a run mostly shares a directory: claiming runs keeps
 * workers out of each other's directory lock, which creating files takes. */
gboolean
_subagent_tree_copy_claim_locked (CopyJob *job,
                                  guint   *first,
                                  guint   *end)
{
  if (job->next_file >= job->files->len)
    return FALSE;
  *first = job->next_file;
  *end = MIN (job->files->len, *first + COPY_CLAIM);
  job->next_file = *end;
  return TRUE;
}

/* Copies a claimed run; returns with the lock held, as it was called. */
void
_subagent_tree_copy_run_locked (CopyJob *job,
                                guint    first,
                                guint    end)
{
  Entry *run[COPY_CLAIM];

  /* The array may grow (and move) while the lock is released. */
  for (guint i = first; i < end; i++)
    run[i - first] = g_ptr_array_index (job->files, i);
  g_mutex_unlock (&job->lock);
  for (guint i = 0; i < end - first; i++)
    if (!_subagent_tree_copy_job_should_stop (job))
      copy_one_file (job, run[i]);
  g_mutex_lock (&job->lock);
  for (guint i = 0; i < end - first; i++)
    {
      _subagent_tree_copy_dir_unref_locked (job, run[i]->dir);
      run[i]->dir = NULL;
    }
}

/* Copies queued files until the walk is done and nothing is left, or the
 * job stops. */
gpointer
_subagent_tree_copy_worker (gpointer data)
{
  CopyJob *job = data;
  guint first, end;

  g_mutex_lock (&job->lock);
  while (!g_atomic_int_get (&job->failed))
    {
      if (_subagent_tree_copy_claim_locked (job, &first, &end))
        _subagent_tree_copy_run_locked (job, first, end);
      else if (job->walk_done)
        break;
      else
        g_cond_wait (&job->cond, &job->lock);
    }
  g_mutex_unlock (&job->lock);
  return NULL;
}
