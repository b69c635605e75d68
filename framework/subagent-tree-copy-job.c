/* subagent-tree-copy-job.c: the copy behind subagent_tree_copy(): one
 * thread walks the source, creating directories and links and queueing
 * regular files; 2 to 4 threads copy the files.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subagent-tree-copier.h"
#include "subagent-tree-copier-private.h"

typedef struct {
  char *rel;
  mode_t mode;
  off_t size;              /* at walk time */
  struct timespec times[2];
} Entry;

enum { REFLINK_UNTRIED, REFLINK_WORKS, REFLINK_REFUSED };

/* How many queued files a worker takes at once. */
#define COPY_CLAIM 32

typedef struct {
  const char *source;
  const char *dest;
  int src_root;
  int dst_root;
  gboolean allow_reflink;
  GPtrArray *files;        /* Entry */
  GPtrArray *dirs;         /* Entry, pre-order */
  gint next_file;          /* atomic */
  gint reflink_state;      /* atomic */
  gint failed;             /* atomic */
  GMutex lock;
  GError *error;           /* the first error, under lock */
  GCancellable *cancellable;
} CopyJob;

static void
entry_free (gpointer data)
{
  Entry *e = data;

  g_free (e->rel);
  g_free (e);
}

static Entry *
entry_new (const char        *rel,
           const struct stat *st)
{
  Entry *e = g_new0 (Entry, 1);

  e->rel = g_strdup (rel);
  e->mode = st->st_mode;
  e->size = st->st_size;
  e->times[0] = st->st_atim;
  e->times[1] = st->st_mtim;
  return e;
}

/* Records the first failure; later ones are consequences of stopping. */
static void
job_fail (CopyJob    *job,
          int         saved_errno,
          const char *format,
          ...) G_GNUC_PRINTF (3, 4);

static void
job_fail (CopyJob    *job,
          int         saved_errno,
          const char *format,
          ...)
{
  g_autofree char *what = NULL;
  va_list ap;

  va_start (ap, format);
  what = g_strdup_vprintf (format, ap);
  va_end (ap);

  g_mutex_lock (&job->lock);
  if (job->error == NULL)
    job->error = g_error_new (G_IO_ERROR, g_io_error_from_errno (saved_errno),
                              "%s: %s", what, g_strerror (saved_errno));
  g_mutex_unlock (&job->lock);
  g_atomic_int_set (&job->failed, 1);
}

static gboolean
job_should_stop (CopyJob *job)
{
  GError *cancel_error = NULL;

  if (g_atomic_int_get (&job->failed))
    return TRUE;
  if (g_cancellable_set_error_if_cancelled (job->cancellable, &cancel_error))
    {
      g_mutex_lock (&job->lock);
      if (job->error == NULL)
        job->error = g_steal_pointer (&cancel_error);
      g_mutex_unlock (&job->lock);
      g_clear_error (&cancel_error);
      g_atomic_int_set (&job->failed, 1);
      return TRUE;
    }
  return FALSE;
}

static char *
join_rel (const char *prefix,
          const char *name)
{
  return *prefix ? g_strconcat (prefix, "/", name, NULL) : g_strdup (name);
}

static gboolean
name_is_excluded (const char * const *exclude,
                  const char         *name)
{
  return exclude != NULL && g_strv_contains (exclude, name);
}

/* Single-threaded: creates directories and symbolic links, and queues the
 * regular files for the workers. */
static gboolean
walk_dir (CopyJob            *job,
          int                 src_fd,
          int                 dst_fd,
          const char         *rel,
          const char * const *exclude)
{
  DIR *dir;
  struct dirent *de;
  int dup_fd = fcntl (src_fd, F_DUPFD_CLOEXEC, 3);
  gboolean ok = TRUE;

  if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
    {
      int saved = errno;
      if (dup_fd >= 0)
        close (dup_fd);
      job_fail (job, saved, "Could not read directory %s/%s", job->source, rel);
      return FALSE;
    }

  while (ok && (errno = 0, de = readdir (dir)) != NULL)
    {
      g_autofree char *child_rel = NULL;
      struct stat st;

      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
        continue;
      if (name_is_excluded (exclude, de->d_name))
        continue;
      if (job_should_stop (job))
        {
          ok = FALSE;
          break;
        }

      child_rel = join_rel (rel, de->d_name);
      if (fstatat (src_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        {
          if (errno == ENOENT)
            continue;  /* removed while we walk: not part of the copy */
          job_fail (job, errno, "Could not stat %s/%s", job->source, child_rel);
          ok = FALSE;
          break;
        }

      if (S_ISDIR (st.st_mode))
        {
          int sub_src, sub_dst;

          /* 0700 while filling; the real mode is set afterwards. */
          if (mkdirat (dst_fd, de->d_name, S_IRWXU) != 0)
            {
              job_fail (job, errno, "Could not create directory %s/%s", job->dest, child_rel);
              ok = FALSE;
              break;
            }
          g_ptr_array_add (job->dirs, entry_new (child_rel, &st));
          sub_src = openat (src_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub_src < 0)
            {
              job_fail (job, errno, "Could not open directory %s/%s", job->source, child_rel);
              ok = FALSE;
              break;
            }
          sub_dst = openat (dst_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub_dst < 0)
            {
              job_fail (job, errno, "Could not open directory %s/%s", job->dest, child_rel);
              close (sub_src);
              ok = FALSE;
              break;
            }
          ok = walk_dir (job, sub_src, sub_dst, child_rel, NULL);
          close (sub_src);
          close (sub_dst);
        }
      else if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_malloc (st.st_size + 2);
          ssize_t len = readlinkat (src_fd, de->d_name, target, st.st_size + 1);

          if (len < 0 || len > st.st_size)
            {
              job_fail (job, len < 0 ? errno : EOVERFLOW, "Could not read link %s/%s", job->source, child_rel);
              ok = FALSE;
              break;
            }
          target[len] = '\0';
          if (symlinkat (target, dst_fd, de->d_name) != 0)
            {
              job_fail (job, errno, "Could not create link %s/%s", job->dest, child_rel);
              ok = FALSE;
              break;
            }
          {
            struct timespec times[2] = { st.st_atim, st.st_mtim };
            /* Some filesystems refuse link times; the link itself is what matters. */
            (void) utimensat (dst_fd, de->d_name, times, AT_SYMLINK_NOFOLLOW);
          }
        }
      else if (S_ISREG (st.st_mode))
        {
          g_ptr_array_add (job->files, entry_new (child_rel, &st));
        }
      else
        {
          g_debug ("Snapshot skips special file %s/%s", job->source, child_rel);
        }
    }
  if (ok && errno != 0 && de == NULL)
    {
      job_fail (job, errno, "Could not read directory %s/%s", job->source, rel);
      ok = FALSE;
    }
  closedir (dir);
  return ok;
}

static gboolean
errno_means_no_reflink (int e)
{
  return e == EOPNOTSUPP || e == ENOTTY || e == EXDEV || e == EINVAL || e == ENOSYS || e == EPERM;
}

/* Copies the file as big as the walk saw it (or to an earlier EOF): a
 * snapshot is the tree as walked, and not asking again for EOF saves one
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

static void
copy_one_file (CopyJob *job,
               Entry   *e)
{
  int src, dst;

  src = openat (job->src_root, e->rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (src < 0)
    {
      if (errno == ENOENT)
        return;  /* removed since the walk */
      job_fail (job, errno, "Could not open %s/%s", job->source, e->rel);
      return;
    }
  dst = openat (job->dst_root, e->rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, S_IRUSR | S_IWUSR);
  if (dst < 0)
    {
      job_fail (job, errno, "Could not create %s/%s", job->dest, e->rel);
      close (src);
      return;
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
          job_fail (job, errno, "Could not clone %s/%s", job->source, e->rel);
          goto out;
        }
      /* Same filesystem for the whole tree: do not ask again. */
      g_atomic_int_set (&job->reflink_state, REFLINK_REFUSED);
    }

  if (!copy_bytes (src, dst, e->size))
    {
      job_fail (job, errno, "Could not copy %s/%s to %s/%s", job->source, e->rel, job->dest, e->rel);
      goto out;
    }

metadata:
  /* Permission bits without set-user/group-ID: a snapshot never mints privileges. */
  if (fchmod (dst, e->mode & 01777) != 0 || futimens (dst, e->times) != 0)
    job_fail (job, errno, "Could not set mode and times of %s/%s", job->dest, e->rel);

out:
  close (src);
  close (dst);
}

static gpointer
copy_worker (gpointer data)
{
  CopyJob *job = data;

  /* Files are queued in walk order, so a run of them mostly shares a
   * directory: claiming runs keeps workers out of each other's directory
   * lock, which creating files takes. */
  for (;;)
    {
      guint first = (guint) g_atomic_int_add (&job->next_file, COPY_CLAIM);

      for (guint i = first; i < first + COPY_CLAIM; i++)
        {
          if (i >= job->files->len || job_should_stop (job))
            return NULL;
          copy_one_file (job, g_ptr_array_index (job->files, i));
        }
    }
  return NULL;
}

static gboolean
dest_is_inside_source (const char *source_real,
                       const char *dest)
{
  g_autofree char *parent = g_path_get_dirname (dest);
  char *parent_real = realpath (parent, NULL);
  gboolean inside;

  if (parent_real == NULL)
    return FALSE;
  inside = g_str_equal (parent_real, source_real) ||
           (g_str_has_prefix (parent_real, source_real) &&
            (g_str_equal (source_real, "/") || parent_real[strlen (source_real)] == '/'));
  free (parent_real);
  return inside;
}

gboolean
_subagent_tree_copy (const char           *source,
                     const char           *dest,
                     SubagentCopyStrategy  strategy,
                     const char * const   *exclude_top_level,
                     SubagentCopyStrategy *out_used,
                     GCancellable         *cancellable,
                     GError              **error)
{
  CopyJob job = { 0 };
  g_autoptr(GPtrArray) threads = NULL;
  struct stat root_st;
  char *source_real = NULL;
  gboolean created_dest = FALSE;
  gboolean ok = FALSE;
  guint n_workers;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  source_real = realpath (source, NULL);
  if (source_real == NULL || stat (source_real, &root_st) != 0 || !S_ISDIR (root_st.st_mode))
    {
      int saved = source_real ? ENOTDIR : errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot copy %s: %s; pass an existing directory", source, g_strerror (saved));
      free (source_real);
      return FALSE;
    }
  if (dest_is_inside_source (source_real, dest))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "Cannot copy %s into %s: the destination is inside the source; "
                   "choose a destination outside it", source, dest);
      free (source_real);
      return FALSE;
    }

  job.source = source_real;
  job.dest = dest;
  job.allow_reflink = strategy != SUBAGENT_COPY_STRATEGY_COPY;
  job.cancellable = cancellable;
  job.files = g_ptr_array_new_with_free_func (entry_free);
  job.dirs = g_ptr_array_new_with_free_func (entry_free);
  job.src_root = job.dst_root = -1;
  g_mutex_init (&job.lock);

  if (mkdir (dest, S_IRWXU) == 0)
    created_dest = TRUE;
  else if (errno != EEXIST)
    {
      job_fail (&job, errno, "Could not create directory %s", dest);
      goto out;
    }

  job.src_root = open (source_real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (job.src_root < 0)
    {
      job_fail (&job, errno, "Could not open directory %s", source_real);
      goto out;
    }
  job.dst_root = open (dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (job.dst_root < 0)
    {
      job_fail (&job, errno, "Could not open directory %s", dest);
      goto out;
    }

  if (!walk_dir (&job, job.src_root, job.dst_root, "", exclude_top_level))
    goto out;

  /* The caller's thread is one of the workers. */
  n_workers = MIN ((guint) CLAMP (g_get_num_processors (), 2, 4), MAX (job.files->len, 1));
  threads = g_ptr_array_new ();
  for (guint i = 1; i < n_workers; i++)
    {
      GThread *t = g_thread_try_new ("subagent-copy", copy_worker, &job, NULL);
      if (t != NULL)
        g_ptr_array_add (threads, t);
    }
  copy_worker (&job);
  for (guint i = 0; i < threads->len; i++)
    g_thread_join (g_ptr_array_index (threads, i));
  if (g_atomic_int_get (&job.failed) || job_should_stop (&job))
    goto out;

  /* Deepest first, so a read-only parent never blocks its children. */
  for (guint i = job.dirs->len; i > 0; i--)
    {
      Entry *e = g_ptr_array_index (job.dirs, i - 1);

      if (fchmodat (job.dst_root, e->rel, e->mode & 07777 & ~S_ISUID, 0) != 0 ||
          utimensat (job.dst_root, e->rel, e->times, AT_SYMLINK_NOFOLLOW) != 0)
        {
          job_fail (&job, errno, "Could not set mode and times of %s/%s", dest, e->rel);
          goto out;
        }
    }
  {
    struct timespec times[2] = { root_st.st_atim, root_st.st_mtim };
    if (fchmod (job.dst_root, root_st.st_mode & 07777 & ~S_ISUID) != 0 || futimens (job.dst_root, times) != 0)
      {
        job_fail (&job, errno, "Could not set mode and times of %s", dest);
        goto out;
      }
  }

  if (out_used != NULL)
    *out_used = g_atomic_int_get (&job.reflink_state) == REFLINK_WORKS
                ? SUBAGENT_COPY_STRATEGY_REFLINK : SUBAGENT_COPY_STRATEGY_COPY;
  ok = TRUE;

out:
  if (job.src_root >= 0)
    close (job.src_root);
  if (job.dst_root >= 0)
    close (job.dst_root);
  if (!ok)
    {
      g_autoptr(GError) remove_error = NULL;

      if (created_dest && !subagent_tree_remove (dest, NULL, &remove_error))
        g_warning ("Could not remove the partial copy %s: %s", dest, remove_error->message);
      g_propagate_error (error, g_steal_pointer (&job.error));
    }
  g_clear_error (&job.error);
  g_ptr_array_unref (job.files);
  g_ptr_array_unref (job.dirs);
  g_mutex_clear (&job.lock);
  free (source_real);
  return ok;
}
