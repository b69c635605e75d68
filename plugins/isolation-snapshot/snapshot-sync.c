/* snapshot-sync.c: bringing a tree back to its parent's state
 * (snapshot_tree_sync()), for the pool (snapshot-pool.c).
 *
 * What counts as changed in a sync, per entry: another type, mode, size,
 * modification time or link target; and, for files, a status-change time
 * (ctime) at or after the moment the tree was handed out (the child wrote
 * it, even if it put size and mtime back) or at or after the moment the
 * last sync started (the parent's file changed since), or a second link (a
 * write through it would reach the tree). A process cannot set ctime, so a
 * child cannot make its edit look untouched.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot-private.h"

static gint64
ctime_ns (const struct stat *st)
{
  return (gint64) st->st_ctim.tv_sec * G_GINT64_CONSTANT (1000000000) + st->st_ctim.tv_nsec;
}

/* Directories are synced by a pool of threads (creating and statting files
 * is most of the work, and the kernel does it in parallel). A directory's
 * own mode and times are set once its entries and all its subdirectories
 * are done. Queued directories hold two descriptors each: past
 * MAX_QUEUED_DIRS, a directory is synced in the thread that found it. */
#define SYNC_THREADS 2
#define MAX_QUEUED_DIRS 128

typedef struct _DirJob DirJob;

typedef struct {
  const char * const *exclude;   /* top-level names left out */
  const SubagentExcludeSet *secrets;  /* left out at any depth (NULL: none) */
  SnapshotManifest *manifest;    /* records the parent as walked, or NULL */
  SnapshotManifest *trusted;     /* the parent as of the tree's last sync, or NULL */
  gint64 parent_since;           /* parent entries changed at or after this */
  gint64 child_since;            /* tree entries changed at or after this */
  const char *dest;              /* the tree's path, to reopen directories */
  GThreadPool *threads;
  gint queued;                   /* directories waiting in the thread pool */
  gint stop;                     /* set once an error is recorded */
  guint copied;
  guint removed;
  guint checked;                 /* entries the manifest vouched for */
  guint listed;                  /* directories compared name by name */
  GMutex lock;
  GCond finished_cond;
  gboolean finished;
  GError *error;                 /* the first error, under lock */
} Sync;

struct _DirJob {
  Sync *sync;
  DirJob *parent;
  char *rel;                     /* "" for the tree itself */
  int src_fd;
  int dst_fd;
  gint pending;                  /* its own pass, plus unfinished subdirectories */
  gint changed;                  /* entries were added or removed */
  struct stat src_st;            /* the parent's directory: mode and times */
  SnapshotManifestDir *record;   /* its entries, when the sync records a manifest */
  SnapshotManifestDir *trusted;  /* what the manifest says of it, or NULL */
  gboolean same_names;           /* the manifest's names are the parent's and the tree's */
};

static gboolean
sync_fail (Sync       *sync,
           int         saved_errno,
           const char *what,
           const char *rel)
{
  g_mutex_lock (&sync->lock);
  if (sync->error == NULL)
    g_set_error (&sync->error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                 "Could not %s %s: %s", what, *rel ? rel : ".", g_strerror (saved_errno));
  g_mutex_unlock (&sync->lock);
  g_atomic_int_set (&sync->stop, 1);
  return FALSE;
}

/* errno is read before the path is built: building it may change errno. */
static gboolean
sync_fail_at (Sync       *sync,
              int         saved_errno,
              const char *what,
              const char *rel_dir,
              const char *name)
{
  g_autofree char *rel = g_build_filename (rel_dir, name, NULL);

  return sync_fail (sync, saved_errno, what, rel);
}

static gboolean
same_time (const struct timespec *a,
           const struct timespec *b)
{
  return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* Names in a directory, read straight with getdents64 (no DIR stream: it
 * would cost a dup, an fcntl and a close per directory). */
static GPtrArray *
read_names (int fd)
{
  g_autofree char *buf = g_malloc (32768);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);

  for (;;)
    {
      ssize_t n = getdents64 (fd, buf, 32768);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          g_ptr_array_unref (names);
          errno = saved;
          return NULL;
        }
      if (n == 0)
        return names;
      for (ssize_t at = 0; at < n; )
        {
          struct dirent64 *de = (struct dirent64 *) (buf + at);
          if (!g_str_equal (de->d_name, ".") && !g_str_equal (de->d_name, ".."))
            g_ptr_array_add (names, g_strdup (de->d_name));
          at += de->d_reclen;
        }
    }
}

static gboolean remove_entry (Sync *sync, int dir_fd, const char *name, const char *rel);

static gboolean
remove_dir_contents (Sync       *sync,
                     int         fd,
                     const char *rel)
{
  g_autoptr(GPtrArray) names = read_names (fd);

  if (names == NULL)
    return sync_fail (sync, errno, "read", rel);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *child_rel = g_build_filename (rel, names->pdata[i], NULL);
      if (!remove_entry (sync, fd, names->pdata[i], child_rel))
        return FALSE;
    }
  return TRUE;
}

static gboolean
remove_entry (Sync       *sync,
              int         dir_fd,
              const char *name,
              const char *rel)
{
  gboolean ok;
  int fd;

  if (unlinkat (dir_fd, name, 0) == 0)
    {
      g_atomic_int_inc (&sync->removed);
      return TRUE;
    }
  if (errno != EISDIR && errno != EPERM)
    return errno == ENOENT ? TRUE : sync_fail (sync, errno, "remove", rel);
  /* A directory: O_NOFOLLOW, so a link swapped in is never followed. */
  fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return sync_fail (sync, errno, "open", rel);
  ok = remove_dir_contents (sync, fd, rel);
  close (fd);
  if (!ok)
    return FALSE;
  if (unlinkat (dir_fd, name, AT_REMOVEDIR) != 0)
    return sync_fail (sync, errno, "remove", rel);
  g_atomic_int_inc (&sync->removed);
  return TRUE;
}

static gboolean
copy_file (Sync              *sync,
           int                src_dir,
           int                dst_dir,
           const char        *name,
           const struct stat *st,
           const char        *rel)
{
  struct timespec times[2] = { st->st_atim, st->st_mtim };
  mode_t mode = st->st_mode & 01777;  /* never set-user/group-ID, as the copier */
  int src, dst;
  off_t left = st->st_size;
  gboolean ok = TRUE;

  src = openat (src_dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (src < 0)
    return errno == ENOENT ? TRUE : sync_fail (sync, errno, "open", rel);
  dst = openat (dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (dst < 0)
    {
      int saved = errno;
      close (src);
      return sync_fail (sync, saved, "create", rel);
    }
  while (ok && left > 0)
    {
      ssize_t n = copy_file_range (src, NULL, dst, NULL, left, 0);
      if (n > 0)
        left -= n;
      else if (n == 0)
        break;  /* the parent's file shrank while we copied */
      else if (errno != EINTR)
        ok = sync_fail (sync, errno, "copy", rel);
    }
  if (ok && (fchmod (dst, mode) != 0 || futimens (dst, times) != 0))
    ok = sync_fail (sync, errno, "set mode and times of", rel);
  close (src);
  close (dst);
  if (ok)
    g_atomic_int_inc (&sync->copied);
  return ok;
}

static gboolean
copy_link (Sync              *sync,
           int                src_dir,
           int                dst_dir,
           const char        *name,
           const struct stat *st,
           const char        *rel)
{
  g_autofree char *target = g_malloc (st->st_size + 2);
  ssize_t len = readlinkat (src_dir, name, target, st->st_size + 1);
  struct timespec times[2] = { st->st_atim, st->st_mtim };

  if (len < 0 || len > st->st_size)
    return sync_fail (sync, len < 0 ? errno : EOVERFLOW, "read link", rel);
  target[len] = '\0';
  if (symlinkat (target, dst_dir, name) != 0)
    return sync_fail (sync, errno, "create link", rel);
  (void) utimensat (dst_dir, name, times, AT_SYMLINK_NOFOLLOW);
  g_atomic_int_inc (&sync->copied);
  return TRUE;
}

static gboolean
links_equal (int                src_dir,
             int                dst_dir,
             const char        *name,
             const struct stat *src_st,
             const struct stat *dst_st)
{
  g_autofree char *a = NULL, *b = NULL;
  ssize_t la, lb;

  if (src_st->st_size != dst_st->st_size)
    return FALSE;
  a = g_malloc (src_st->st_size + 2);
  b = g_malloc (src_st->st_size + 2);
  la = readlinkat (src_dir, name, a, src_st->st_size + 1);
  lb = readlinkat (dst_dir, name, b, src_st->st_size + 1);
  return la >= 0 && la == lb && memcmp (a, b, la) == 0;
}

static void dir_job_run (DirJob *job);

static void
dir_job_free (DirJob *job)
{
  if (job->src_fd >= 0)
    close (job->src_fd);
  if (job->dst_fd >= 0)
    close (job->dst_fd);
  snapshot_manifest_dir_free (job->record);
  g_free (job->rel);
  g_free (job);
}

/* One less unfinished part of job: the last one sets the directory's mode
 * and times and tells its parent (or, for the tree, the caller). */
static void
dir_job_release (DirJob *job)
{
  Sync *sync = job->sync;
  DirJob *parent = job->parent;

  if (!g_atomic_int_dec_and_test (&job->pending))
    return;
  /* A directory whose names the manifest vouched for, with none of its
   * entries replaced, has the parent's mode and times since the park. */
  if (!g_atomic_int_get (&sync->stop) && !(job->same_names && !g_atomic_int_get (&job->changed)))
    {
      g_autofree char *path = g_build_filename (sync->dest, job->rel, NULL);
      int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      struct stat d;
      mode_t mode = job->src_st.st_mode & 07777 & ~S_ISUID;

      if (fd < 0 || fstat (fd, &d) != 0)
        sync_fail (sync, errno, "open", job->rel);
      else if (g_atomic_int_get (&job->changed) || (d.st_mode & 07777) != mode ||
               !same_time (&job->src_st.st_mtim, &d.st_mtim))
        {
          struct timespec times[2] = { job->src_st.st_atim, job->src_st.st_mtim };
          if (fchmod (fd, mode) != 0 || futimens (fd, times) != 0)
            sync_fail (sync, errno, "set mode and times of", job->rel);
        }
      if (fd >= 0)
        close (fd);
    }
  dir_job_free (job);
  if (parent != NULL)
    dir_job_release (parent);
  else
    {
      g_mutex_lock (&sync->lock);
      sync->finished = TRUE;
      g_cond_signal (&sync->finished_cond);
      g_mutex_unlock (&sync->lock);
    }
}

/* Starts the sync of subdirectory name of job: queued for a thread, or
 * here when many wait already. */
static gboolean
dir_job_spawn (DirJob            *job,
               const char        *name,
               const struct stat *src_st)
{
  Sync *sync = job->sync;
  DirJob *child = g_new0 (DirJob, 1);

  child->sync = sync;
  child->parent = job;
  child->rel = g_build_filename (job->rel, name, NULL);
  child->pending = 1;
  child->src_st = *src_st;
  child->src_fd = openat (job->src_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  child->dst_fd = child->src_fd < 0 ? -1 : openat (job->dst_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (child->src_fd < 0 || child->dst_fd < 0)
    {
      int saved = errno;
      gboolean gone = saved == ENOENT && child->src_fd < 0;  /* removed from the parent meanwhile */
      if (!gone)
        sync_fail (sync, saved, "open", child->rel);
      dir_job_free (child);
      return gone;
    }
  g_atomic_int_inc (&job->pending);
  if (g_atomic_int_get (&sync->queued) < MAX_QUEUED_DIRS)
    {
      g_atomic_int_inc (&sync->queued);
      g_thread_pool_push (sync->threads, child, NULL);
    }
  else
    dir_job_run (child);
  return TRUE;
}

/* Makes dst/name what src/name is; subdirectories are handed on. */
static gboolean
sync_entry (DirJob     *job,
            const char *name)
{
  Sync *sync = job->sync;
  struct stat s, d;
  gboolean have_dst, file;
  g_autofree char *rel = NULL;

  if (fstatat (job->src_fd, name, &s, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? TRUE : sync_fail_at (sync, errno, "stat", job->rel, name);
  have_dst = fstatat (job->dst_fd, name, &d, AT_SYMLINK_NOFOLLOW) == 0;
  if (!have_dst && errno != ENOENT)
    return sync_fail_at (sync, errno, "stat", job->rel, name);

  file = S_ISREG (s.st_mode);
  /* What the tree will hold, as the parent had it when it was statted:
   * the manifest prepare checks the parent against (snapshot-manifest.c). */
  if (job->record != NULL && (file || S_ISLNK (s.st_mode) || S_ISDIR (s.st_mode)))
    snapshot_manifest_dir_add (job->record, name, &s);
  /* Unchanged in the parent since the tree's last sync: the tree has it
   * as it was then (nothing has had the tree since), no need to look. */
  if (job->trusted != NULL &&
      snapshot_manifest_dir_entry_unchanged (job->trusted, name, &s, sync->parent_since))
    {
      g_atomic_int_inc (&sync->checked);
      return S_ISDIR (s.st_mode) ? dir_job_spawn (job, name, &s) : TRUE;
    }
  if (file)
    {
      if (have_dst && S_ISREG (d.st_mode) && s.st_size == d.st_size && same_time (&s.st_mtim, &d.st_mtim) &&
          (s.st_mode & 01777) == (d.st_mode & 07777) && d.st_nlink == 1 &&
          ctime_ns (&s) < sync->parent_since && ctime_ns (&d) < sync->child_since)
        return TRUE;
    }
  else if (S_ISLNK (s.st_mode))
    {
      if (have_dst && S_ISLNK (d.st_mode) && links_equal (job->src_fd, job->dst_fd, name, &s, &d))
        return TRUE;
    }
  else if (S_ISDIR (s.st_mode))
    {
      if (!have_dst || !S_ISDIR (d.st_mode))
        {
          rel = g_build_filename (job->rel, name, NULL);
          if (have_dst && !remove_entry (sync, job->dst_fd, name, rel))
            return FALSE;
          if (mkdirat (job->dst_fd, name, 0700) != 0)
            return sync_fail (sync, errno, "create", rel);
          g_atomic_int_set (&job->changed, 1);
        }
      return dir_job_spawn (job, name, &s);
    }
  else
    {
      /* Sockets, FIFOs, devices: a copy leaves them out, so does the pool. */
      if (!have_dst)
        return TRUE;
      rel = g_build_filename (job->rel, name, NULL);
      g_atomic_int_set (&job->changed, 1);
      return remove_entry (sync, job->dst_fd, name, rel);
    }

  rel = g_build_filename (job->rel, name, NULL);
  g_atomic_int_set (&job->changed, 1);
  if (have_dst && !remove_entry (sync, job->dst_fd, name, rel))
    return FALSE;
  return file ? copy_file (sync, job->src_fd, job->dst_fd, name, &s, rel)
              : copy_link (sync, job->src_fd, job->dst_fd, name, &s, rel);
}

/* The one place that decides which of the parent's entries the tree
 * leaves out (a copy leaves out the same ones). */
static gboolean
sync_leaves_out (Sync       *sync,
                 DirJob     *job,
                 const char *name)
{
  gboolean top = *job->rel == '\0';

  if (top && sync->exclude != NULL && g_strv_contains (sync->exclude, name))
    return TRUE;
  /* Secret files, at any depth; a copy leaves them out too. The type is
   * not known here: a directory-only pattern leaves out any entry of that
   * name. What is left out is also removed from the tree. */
  return subagent_exclude_set_match_name (sync->secrets, name, -1);
}

static void
dir_job_run (DirJob *job)
{
  Sync *sync = job->sync;
  g_autoptr(GPtrArray) src_names = NULL;
  g_autoptr(GPtrArray) dst_names = NULL;
  g_autoptr(GHashTable) wanted = NULL;

  if (g_atomic_int_get (&sync->stop))
    goto done;
  /* Its status was taken before its names are read: a name added after
   * the listing changes the directory's ctime past the recorded one. */
  if (sync->manifest != NULL)
    job->record = snapshot_manifest_dir_new (job->rel, &job->src_st);
  if (sync->trusted != NULL)
    job->trusted = snapshot_manifest_find_dir (sync->trusted, job->rel);
  if (job->trusted != NULL && snapshot_manifest_dir_unchanged (job->trusted, &job->src_st, sync->parent_since))
    {
      /* The same names on both sides as at the last sync: no listing.
       * Files and links the check just found unchanged are not looked at
       * again; subdirectories are visited for what lies below. */
      g_autoptr(GPtrArray) names = snapshot_manifest_dir_names (job->trusted);
      gboolean verified = snapshot_manifest_dir_verified (job->trusted);

      job->same_names = TRUE;
      for (guint i = 0; i < names->len && !g_atomic_int_get (&sync->stop); i++)
        if (verified && !snapshot_manifest_dir_entry_is_dir (job->trusted, i))
          g_atomic_int_inc (&sync->checked);
        else if (!sync_entry (job, names->pdata[i]))
          break;
      goto done;
    }
  g_atomic_int_inc (&sync->listed);
  src_names = read_names (job->src_fd);
  dst_names = src_names ? read_names (job->dst_fd) : NULL;
  if (dst_names == NULL)
    {
      sync_fail (sync, errno, "read", job->rel);
      goto done;
    }
  wanted = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < src_names->len; i++)
    if (!sync_leaves_out (sync, job, src_names->pdata[i]))
      g_hash_table_add (wanted, src_names->pdata[i]);
  /* What the child made, or the parent removed, goes first: a name may
   * change type. */
  for (guint i = 0; i < dst_names->len; i++)
    {
      const char *name = dst_names->pdata[i];
      if (!g_hash_table_contains (wanted, name))
        {
          g_autofree char *rel = g_build_filename (job->rel, name, NULL);
          if (!remove_entry (sync, job->dst_fd, name, rel))
            goto done;
          g_atomic_int_set (&job->changed, 1);
        }
    }
  for (guint i = 0; i < src_names->len && !g_atomic_int_get (&sync->stop); i++)
    if (g_hash_table_contains (wanted, src_names->pdata[i]) && !sync_entry (job, src_names->pdata[i]))
      break;

done:
  if (job->record != NULL && !g_atomic_int_get (&sync->stop))
    snapshot_manifest_take_dir (sync->manifest, g_steal_pointer (&job->record));
  /* Subdirectories hold their own descriptors. */
  close (job->src_fd);
  close (job->dst_fd);
  job->src_fd = job->dst_fd = -1;
  dir_job_release (job);
}

static void
thread_run (gpointer data,
            gpointer user_data)
{
  DirJob *job = data;

  g_atomic_int_add (&job->sync->queued, -1);
  dir_job_run (job);
}

gboolean
snapshot_tree_sync (const char         *source,
                    const char         *dest,
                    const char * const *exclude_top_level,
                    const SubagentExcludeSet *exclude,
                    gint64              parent_since,
                    gint64              child_since,
                    SnapshotManifest   *record,
                    SnapshotManifest   *trusted,
                    SnapshotSyncStats  *stats,
                    GError            **error)
{
  Sync sync = {
    .exclude = exclude_top_level,
    .secrets = subagent_exclude_set_is_empty (exclude) ? NULL : exclude,
    .manifest = record,
    .trusted = trusted,
    .parent_since = parent_since,
    .child_since = child_since,
    .dest = dest,
  };
  DirJob *root = g_new0 (DirJob, 1);
  gboolean ok;

  memset (stats, 0, sizeof *stats);
  if (trusted != NULL)
    snapshot_manifest_index (trusted);  /* before the threads read it */
  g_mutex_init (&sync.lock);
  g_cond_init (&sync.finished_cond);
  root->sync = &sync;
  root->rel = g_strdup ("");
  root->pending = 1;
  root->src_fd = open (source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  root->dst_fd = root->src_fd < 0 ? -1 : open (dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root->src_fd < 0 || root->dst_fd < 0 || fstat (root->src_fd, &root->src_st) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Could not open %s: %s",
                   root->src_fd < 0 ? source : dest, g_strerror (saved));
      dir_job_free (root);
      g_mutex_clear (&sync.lock);
      g_cond_clear (&sync.finished_cond);
      return FALSE;
    }
  sync.threads = g_thread_pool_new (thread_run, &sync, SYNC_THREADS, FALSE, NULL);
  dir_job_run (root);
  g_mutex_lock (&sync.lock);
  while (!sync.finished)
    g_cond_wait (&sync.finished_cond, &sync.lock);
  g_mutex_unlock (&sync.lock);
  g_thread_pool_free (sync.threads, FALSE, TRUE);

  stats->copied = sync.copied;
  stats->removed = sync.removed;
  stats->checked = sync.checked;
  stats->listed = sync.listed;
  ok = sync.error == NULL;
  if (!ok)
    g_propagate_error (error, sync.error);
  g_mutex_clear (&sync.lock);
  g_cond_clear (&sync.finished_cond);
  return ok;
}
