/* subagent-tree-copy-job.c: the copy behind subagent_tree_copy(). The
 * calling thread walks the source, creating directories and links and
 * queueing regular files, while 1 to 3 more threads copy the queued files
 * (subagent-tree-copy-file.c); once the walk is done the caller copies too.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subagent-tree-copier.h"
#include "subagent-tree-copier-private.h"
#include "subagent-tree-copy-job-private.h"

/* Directories the walker has left but whose files still wait: bounds the
 * descriptors they hold at twice this, whatever the tree's size (the walk
 * itself holds three per level of depth). */
#define MAX_WAITING_DIRS 128

static void
dir_info_free (gpointer data)
{
  DirInfo *info = data;

  g_free (info->rel);
  g_free (info);
}

static DirInfo *
dir_info_new (char              *rel,
              const struct stat *st)
{
  DirInfo *info = g_new0 (DirInfo, 1);

  info->rel = rel;
  info->mode = st->st_mode;
  info->times[0] = st->st_atim;
  info->times[1] = st->st_mtim;
  return info;
}

/* Takes ownership of both descriptors. */
static Dir *
dir_new_locked (CopyJob    *job,
                int         src_fd,
                int         dst_fd,
                const char *rel)
{
  Dir *d = g_new0 (Dir, 1);

  d->ref = 1;
  d->src_fd = src_fd;
  d->dst_fd = dst_fd;
  d->rel = rel;
  job->open_dirs++;
  job->walk_depth++;
  return d;
}

void
_subagent_tree_copy_dir_unref_locked (CopyJob *job,
                                      Dir     *d)
{
  if (--d->ref > 0)
    return;
  close (d->src_fd);
  close (d->dst_fd);
  g_free (d);
  job->open_dirs--;
  g_cond_broadcast (&job->cond);
}

/* The walker is done reading d; its queued files may still hold it. */
static void
dir_release (CopyJob *job,
             Dir     *d)
{
  g_mutex_lock (&job->lock);
  job->walk_depth--;
  _subagent_tree_copy_dir_unref_locked (job, d);
  g_mutex_unlock (&job->lock);
}


/* Records the first failure; later ones are consequences of stopping. */
void
_subagent_tree_copy_job_fail (CopyJob    *job,
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
  g_atomic_int_set (&job->failed, 1);
  g_cond_broadcast (&job->cond);
  g_mutex_unlock (&job->lock);
}

gboolean
_subagent_tree_copy_job_should_stop (CopyJob *job)
{
  GError *cancel_error = NULL;

  if (g_atomic_int_get (&job->failed))
    return TRUE;
  if (g_cancellable_set_error_if_cancelled (job->cancellable, &cancel_error))
    {
      g_mutex_lock (&job->lock);
      if (job->error == NULL)
        job->error = g_steal_pointer (&cancel_error);
      g_atomic_int_set (&job->failed, 1);
      g_cond_broadcast (&job->cond);
      g_mutex_unlock (&job->lock);
      g_clear_error (&cancel_error);
      return TRUE;
    }
  return FALSE;
}

/* The process umask, without changing it (umask() would race with other
 * threads creating files): from /proc/self/status (Linux 4.7 and later).
 * Unknown means all bits, so every file gets an explicit fchmod(). */
static mode_t
read_umask (void)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return 07777;
  line = strstr (status, "\nUmask:");
  if (line == NULL)
    return 07777;
  return (mode_t) g_ascii_strtoull (line + strlen ("\nUmask:"), NULL, 8) & 0777;
}

static gboolean
name_is_excluded (const char * const *exclude,
                  const char         *name)
{
  return exclude != NULL && g_strv_contains (exclude, name);
}

/* ---- the walk ---------------------------------------------------------- */

/* Hands the pending files to the workers, each with a reference to its
 * directory. */
static void
queue_files (CopyJob   *job,
             GPtrArray *pending)
{
  if (pending->len == 0)
    return;
  g_mutex_lock (&job->lock);
  for (guint i = 0; i < pending->len; i++)
    {
      Entry *e = g_ptr_array_index (pending, i);

      e->dir->ref++;
      g_ptr_array_add (job->files, e);
    }
  g_cond_broadcast (&job->cond);
  g_mutex_unlock (&job->lock);
  g_ptr_array_set_size (pending, 0);
}

static void
queue_file (CopyJob    *job,
            Dir        *dir,
            const char *name,
            GPtrArray  *pending)
{
  gsize len = strlen (name);
  Entry *e = g_malloc (sizeof (Entry) + len + 1);

  e->dir = dir;
  memcpy (e->name, name, len + 1);
  g_ptr_array_add (pending, e);
  if (pending->len >= COPY_CLAIM)
    queue_files (job, pending);
}

/* Before opening one more directory: while too many left directories
 * still wait for their files, copy some of them (or wait for the workers),
 * so a huge tree never runs out of descriptors. */
static void
wait_for_room (CopyJob *job)
{
  guint first, end;

  g_mutex_lock (&job->lock);
  while (job->open_dirs - job->walk_depth >= MAX_WAITING_DIRS && !g_atomic_int_get (&job->failed))
    {
      if (_subagent_tree_copy_claim_locked (job, &first, &end))
        _subagent_tree_copy_run_locked (job, first, end);
      else
        g_cond_wait (&job->cond, &job->lock);
    }
  g_mutex_unlock (&job->lock);
}

static gboolean walk_dir (CopyJob *job, Dir *dir, const char * const *exclude);

static gboolean
walk_subdir (CopyJob           *job,
             Dir               *parent,
             const char        *name,
             const struct stat *st)
{
  g_autofree char *child_rel = *parent->rel ? g_strconcat (parent->rel, "/", name, NULL) : g_strdup (name);
  DirInfo *info;
  Dir *sub;
  int sub_src, sub_dst;
  gboolean ok;

  /* 0700 while filling; the real mode is set afterwards. */
  if (mkdirat (parent->dst_fd, name, S_IRWXU) != 0)
    {
      _subagent_tree_copy_job_fail (job, errno, "Could not create directory %s/%s", job->dest, child_rel);
      return FALSE;
    }
  info = dir_info_new (g_steal_pointer (&child_rel), st);
  g_ptr_array_add (job->dirs, info);

  wait_for_room (job);
  sub_src = openat (parent->src_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub_src < 0)
    {
      _subagent_tree_copy_job_fail (job, errno, "Could not open directory %s/%s", job->source, info->rel);
      return FALSE;
    }
  sub_dst = openat (parent->dst_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub_dst < 0)
    {
      _subagent_tree_copy_job_fail (job, errno, "Could not open directory %s/%s", job->dest, info->rel);
      close (sub_src);
      return FALSE;
    }
  g_mutex_lock (&job->lock);
  sub = dir_new_locked (job, sub_src, sub_dst, info->rel);
  g_mutex_unlock (&job->lock);
  ok = walk_dir (job, sub, NULL);
  dir_release (job, sub);
  return ok;
}

static gboolean
copy_link (CopyJob           *job,
           Dir               *dir,
           const char        *name,
           const struct stat *st)
{
  g_autofree char *target = g_malloc (st->st_size + 2);
  ssize_t len = readlinkat (dir->src_fd, name, target, st->st_size + 1);
  struct timespec times[2] = { st->st_atim, st->st_mtim };

  if (len < 0 || len > st->st_size)
    {
      _subagent_tree_copy_job_fail (job, len < 0 ? errno : EOVERFLOW, "Could not read link %s/%s%s%s",
                                    job->source, dir->rel, *dir->rel ? "/" : "", name);
      return FALSE;
    }
  target[len] = '\0';
  if (symlinkat (target, dir->dst_fd, name) != 0)
    {
      _subagent_tree_copy_job_fail (job, errno, "Could not create link %s/%s%s%s", job->dest, dir->rel, *dir->rel ? "/" : "", name);
      return FALSE;
    }
  /* Some filesystems refuse link times; the link itself is what matters. */
  (void) utimensat (dir->dst_fd, name, times, AT_SYMLINK_NOFOLLOW);
  return TRUE;
}

/* Creates directories and symbolic links, and queues the regular files
 * (by the directory's type hint: files are stat'ed by the workers, on the
 * descriptor they open anyway). */
static gboolean
walk_dir (CopyJob            *job,
          Dir                *dir,
          const char * const *exclude)
{
  g_autoptr(GPtrArray) pending = g_ptr_array_new ();
  DIR *dp;
  struct dirent *de;
  int dup_fd = fcntl (dir->src_fd, F_DUPFD_CLOEXEC, 3);
  gboolean ok = TRUE;

  if (dup_fd < 0 || (dp = fdopendir (dup_fd)) == NULL)
    {
      int saved = errno;
      if (dup_fd >= 0)
        close (dup_fd);
      _subagent_tree_copy_job_fail (job, saved, "Could not read directory %s/%s", job->source, dir->rel);
      return FALSE;
    }

  while (ok && (errno = 0, de = readdir (dp)) != NULL)
    {
      struct stat st;

      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
        continue;
      if (name_is_excluded (exclude, de->d_name))
        continue;
      if (_subagent_tree_copy_job_should_stop (job))
        {
          ok = FALSE;
          break;
        }
      if (de->d_type == DT_REG)
        {
          if (subagent_exclude_set_match_name (job->exclude, de->d_name, 0))
            continue;
          queue_file (job, dir, de->d_name, pending);
          continue;
        }

      if (fstatat (dir->src_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        {
          if (errno == ENOENT)
            continue;  /* removed while we walk: not part of the copy */
          _subagent_tree_copy_job_fail (job, errno, "Could not stat %s/%s%s%s", job->source, dir->rel, *dir->rel ? "/" : "", de->d_name);
          ok = FALSE;
          break;
        }
      if (subagent_exclude_set_match_name (job->exclude, de->d_name, S_ISDIR (st.st_mode)))
        continue;
      if (S_ISREG (st.st_mode))
        queue_file (job, dir, de->d_name, pending);
      else if (S_ISDIR (st.st_mode))
        ok = walk_subdir (job, dir, de->d_name, &st);
      else if (S_ISLNK (st.st_mode))
        ok = copy_link (job, dir, de->d_name, &st);
      else
        g_debug ("Snapshot skips special file %s/%s%s%s", job->source, dir->rel, *dir->rel ? "/" : "", de->d_name);
    }
  if (ok && errno != 0 && de == NULL)
    {
      _subagent_tree_copy_job_fail (job, errno, "Could not read directory %s/%s", job->source, dir->rel);
      ok = FALSE;
    }
  closedir (dp);
  queue_files (job, pending);
  return ok;
}

/* ---- the job ------------------------------------------------------------- */

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

/* Walks the tree from the root, with the workers copying alongside. */
static void
run_copy (CopyJob *job)
{
  g_autoptr(GPtrArray) threads = g_ptr_array_new ();
  int root_src = fcntl (job->src_root, F_DUPFD_CLOEXEC, 3);
  int root_dst = fcntl (job->dst_root, F_DUPFD_CLOEXEC, 3);
  guint n_workers = CLAMP (g_get_num_processors (), 2, 4);
  Dir *root;

  if (root_src < 0 || root_dst < 0)
    {
      _subagent_tree_copy_job_fail (job, errno, "Could not open directory %s", job->source);
      if (root_src >= 0)
        close (root_src);
      if (root_dst >= 0)
        close (root_dst);
      return;
    }

  /* The caller walks, then joins the workers. */
  for (guint i = 1; i < n_workers; i++)
    {
      GThread *t = g_thread_try_new ("subagent-copy", _subagent_tree_copy_worker, job, NULL);
      if (t != NULL)
        g_ptr_array_add (threads, t);
    }

  g_mutex_lock (&job->lock);
  root = dir_new_locked (job, root_src, root_dst, "");
  g_mutex_unlock (&job->lock);
  walk_dir (job, root, job->exclude_top_level);
  dir_release (job, root);

  g_mutex_lock (&job->lock);
  job->walk_done = TRUE;
  g_cond_broadcast (&job->cond);
  g_mutex_unlock (&job->lock);

  _subagent_tree_copy_worker (job);
  for (guint i = 0; i < threads->len; i++)
    g_thread_join (g_ptr_array_index (threads, i));

  /* Files left queued by a failure still hold their directories. */
  g_mutex_lock (&job->lock);
  for (guint i = job->next_file; i < job->files->len; i++)
    {
      Entry *e = g_ptr_array_index (job->files, i);
      _subagent_tree_copy_dir_unref_locked (job, e->dir);
      e->dir = NULL;
    }
  g_warn_if_fail (job->open_dirs == 0);
  g_mutex_unlock (&job->lock);
}

gboolean
_subagent_tree_copy (const char           *source,
                     const char           *dest,
                     SubagentCopyStrategy  strategy,
                     const char * const   *exclude_top_level,
                     const SubagentExcludeSet *exclude,
                     SubagentCopyStrategy *out_used,
                     GCancellable         *cancellable,
                     GError              **error)
{
  CopyJob job = { 0 };
  struct stat root_st;
  char *source_real = NULL;
  gboolean created_dest = FALSE;
  gboolean ok = FALSE;

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
  job.exclude_top_level = exclude_top_level;
  job.exclude = subagent_exclude_set_is_empty (exclude) ? NULL : exclude;
  job.allow_reflink = strategy != SUBAGENT_COPY_STRATEGY_COPY;
  job.umask = read_umask ();
  job.cancellable = cancellable;
  job.files = g_ptr_array_new_with_free_func (g_free);
  job.dirs = g_ptr_array_new_with_free_func (dir_info_free);
  job.src_root = job.dst_root = -1;
  g_mutex_init (&job.lock);
  g_cond_init (&job.cond);

  if (mkdir (dest, S_IRWXU) == 0)
    created_dest = TRUE;
  else if (errno != EEXIST)
    {
      _subagent_tree_copy_job_fail (&job, errno, "Could not create directory %s", dest);
      goto out;
    }

  job.src_root = open (source_real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (job.src_root < 0)
    {
      _subagent_tree_copy_job_fail (&job, errno, "Could not open directory %s", source_real);
      goto out;
    }
  job.dst_root = open (dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (job.dst_root < 0)
    {
      _subagent_tree_copy_job_fail (&job, errno, "Could not open directory %s", dest);
      goto out;
    }

  run_copy (&job);
  if (g_atomic_int_get (&job.failed) || _subagent_tree_copy_job_should_stop (&job))
    goto out;

  /* Deepest first, so a read-only parent never blocks its children. */
  for (guint i = job.dirs->len; i > 0; i--)
    {
      DirInfo *info = g_ptr_array_index (job.dirs, i - 1);

      if (fchmodat (job.dst_root, info->rel, info->mode & 07777 & ~S_ISUID, 0) != 0 ||
          utimensat (job.dst_root, info->rel, info->times, AT_SYMLINK_NOFOLLOW) != 0)
        {
          _subagent_tree_copy_job_fail (&job, errno, "Could not set mode and times of %s/%s", dest, info->rel);
          goto out;
        }
    }
  {
    struct timespec times[2] = { root_st.st_atim, root_st.st_mtim };
    if (fchmod (job.dst_root, root_st.st_mode & 07777 & ~S_ISUID) != 0 || futimens (job.dst_root, times) != 0)
      {
        _subagent_tree_copy_job_fail (&job, errno, "Could not set mode and times of %s", dest);
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
  g_cond_clear (&job.cond);
  g_mutex_clear (&job.lock);
  free (source_real);
  return ok;
}
