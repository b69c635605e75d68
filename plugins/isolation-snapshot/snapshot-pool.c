/* snapshot-pool.c: copied snapshot trees kept ready for the next child
 * (option `pool_size`).
 *
 * Creating thousands of files is most of what a copied snapshot costs, and
 * removing them most of its cleanup (docs/performance.md). With a pool, the
 * cleanup of a copied (or cloned) snapshot keeps its tree for the next
 * prepare of the same parent instead of removing it:
 *
 * - Park (cleanup): once no process holds anything in the tree any more
 *   (snapshot-holders.c), the tree is brought back to the parent's state
 *   by comparing the two trees (snapshot_tree_sync()): only what the child
 *   changed, or what changed in the parent since, is copied again or
 *   removed. The sync records a manifest of the parent as it walked it
 *   (snapshot-manifest.c); the tree is parked with it.
 * - Take (prepare): a parked tree is the parent's as of its park-time sync,
 *   and nothing has had it since. Prepare only proves the parent did not
 *   change since then: one stat per entry of the parent against the
 *   manifest, none of the tree, no directory listing. Should anything
 *   differ, the manifest guides a sync: a directory whose status did not
 *   change is not listed, an entry whose status did not change is not
 *   compared; the rest is compared as the park does. Without a usable
 *   manifest (missing, torn, or parked under other exclusions), all of it.
 *
 * What counts as changed in a sync, per entry: another type, mode, size,
 * modification time or link target; and, for files, a status-change time
 * (ctime) at or after the moment the tree was handed out (the child wrote
 * it, even if it put size and mtime back) or at or after the moment the
 * last sync started (the parent's file changed since), or a second link (a
 * write through it would reach the tree). A process cannot set ctime, so a
 * child cannot make its edit look untouched.
 *
 * Layout: `<snapshot_dir>/.pool/<parent-id>/<entry>/` holding `tree/`,
 * `manifest` and `pool.json` (`parent`, `synced_at`: when the park-time
 * sync began, `exclude`: what the tree leaves out, and for the full sync
 * `sync_started`, `handed_out`; times are nanoseconds of the coarse
 * real-time clock, the clock ctime is taken from). `.pool` cannot be a
 * session key (keys have no dot). Taking and parking hold an exclusive
 * flock on `<snapshot_dir>/.pool/<parent-id>.lock`, so concurrent children
 * never share an entry and the pool never grows past its size (the
 * park-time sync runs outside it, on a tree no one else can take yet).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "snapshot-private.h"

#define POOL_DIR ".pool"
#define POOL_STATE "pool.json"
#define POOL_MANIFEST "manifest"

gint64
snapshot_pool_clock_now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_REALTIME_COARSE, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static gint64
ctime_ns (const struct stat *st)
{
  return (gint64) st->st_ctim.tv_sec * G_GINT64_CONSTANT (1000000000) + st->st_ctim.tv_nsec;
}

/* ---- syncing a tree with its parent ------------------------------------ */

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

/* ---- the pool ------------------------------------------------------------ */

static char *
parent_id (const char *parent)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, parent, -1);

  return g_strndup (digest, 16);
}

/* Opens and locks <snapshot_dir>/.pool/<id>.lock; -1 if it cannot. */
static int
pool_lock (const char *pool_dir,
           const char *id)
{
  g_autofree char *name = g_strconcat (id, ".lock", NULL);
  g_autofree char *path = g_build_filename (pool_dir, name, NULL);
  int fd;

  if (g_mkdir_with_parents (pool_dir, 0700) != 0)
    return -1;
  fd = open (path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  while (flock (fd, LOCK_EX) != 0)
    if (errno != EINTR)
      {
        close (fd);
        return -1;
      }
  return fd;
}

static void
pool_unlock (int fd)
{
  if (fd >= 0)
    close (fd);  /* releases the flock */
}

static JsonObject *
read_state (const char *entry)
{
  g_autofree char *path = g_build_filename (entry, POOL_STATE, NULL);
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  JsonNode *root;

  if (!json_parser_load_from_file (parser, path, NULL))
    return NULL;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  return json_object_ref (json_node_get_object (root));
}

/* What the tree leaves out, as pool.json keeps it: a tree parked under
 * other exclusions is synced in full (names once left out may now be
 * wanted, and the other way round; the manifest knows only what the tree
 * held). Whatever else decides what a sync leaves out belongs in here too. */
static char *
exclude_fingerprint (const char * const *exclude_top_level,
                     const char * const *secret_patterns)
{
  g_autofree char *top = exclude_top_level ? g_strjoinv ("\n", (char **) exclude_top_level) : g_strdup ("");
  g_autofree char *secrets = secret_patterns ? g_strjoinv ("\n", (char **) secret_patterns) : g_strdup ("");

  return g_strconcat (top, "\n--\n", secrets, NULL);
}

/* How many entries <dir> holds; 0 if it cannot be read. */
static guint
count_entries (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;

  while (d != NULL && g_dir_read_name (d) != NULL)
    n++;
  return n;
}

gboolean
snapshot_pool_take (const char         *snapshot_dir,
                    const char         *parent,
                    const char         *tree,
                    const char * const *exclude_top_level,
                    const char * const *secret_patterns,
                    SnapshotSyncStats  *stats,
                    GError            **error)
{
  g_autoptr(SubagentExcludeSet) secrets = subagent_exclude_set_new (secret_patterns);
  g_autofree char *pool_dir = g_build_filename (snapshot_dir, POOL_DIR, NULL);
  g_autofree char *id = parent_id (parent);
  g_autofree char *dir = g_build_filename (pool_dir, id, NULL);
  g_autoptr(GDir) d = NULL;
  g_autofree char *taken = NULL;
  g_autoptr(JsonObject) state = NULL;
  SnapshotManifest *manifest = NULL;
  g_autofree char *exclude = NULL;
  const char *name;
  gint64 sync_started, synced_at;
  gboolean ok;
  int lock;

  memset (stats, 0, sizeof *stats);
  lock = pool_lock (pool_dir, id);
  if (lock < 0)
    return FALSE;
  d = g_dir_open (dir, 0, NULL);
  while (d != NULL && taken == NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *entry = g_build_filename (dir, name, NULL);
      g_autofree char *entry_tree = g_build_filename (entry, SNAPSHOT_TREE, NULL);

      g_clear_pointer (&state, json_object_unref);
      state = read_state (entry);
      if (state == NULL || g_strcmp0 (json_object_get_string_member_with_default (state, "parent", ""), parent) != 0 ||
          rename (entry_tree, tree) != 0)
        {
          /* Unreadable or foreign: not worth keeping. */
          g_debug ("Dropping pooled snapshot %s", entry);
          subagent_tree_remove (entry, NULL, NULL);
          continue;
        }
      taken = g_steal_pointer (&entry);
    }
  pool_unlock (lock);
  if (taken == NULL)
    return FALSE;

  /* From here the tree is this child's: prove the parent did not change
   * since the tree was synced at park time, or sync it again. */
  synced_at = json_object_get_int_member_with_default (state, "synced_at", 0);
  exclude = exclude_fingerprint (exclude_top_level, secret_patterns);
  if (synced_at > 0 && g_strcmp0 (json_object_get_string_member_with_default (state, "exclude", NULL), exclude) == 0)
    {
      g_autofree char *path = g_build_filename (taken, POOL_MANIFEST, NULL);
      g_autoptr(GError) local_error = NULL;

      manifest = snapshot_manifest_load (path, &local_error);
      if (manifest == NULL)
        g_debug ("Pooled snapshot %s: %s", taken, local_error->message);
    }
  subagent_tree_remove (taken, NULL, NULL);

  sync_started = snapshot_pool_clock_now ();
  if (manifest != NULL && snapshot_manifest_matches (manifest, parent, synced_at))
    {
      stats->checked = snapshot_manifest_get_n_entries (manifest);
      ok = TRUE;
    }
  else
    {
      /* Something changed: compare what the manifest cannot vouch for
       * (all of it without a manifest). */
      g_debug ("Pooled snapshot for %s: the parent changed since it was parked; syncing", parent);
      ok = snapshot_tree_sync (parent, tree, exclude_top_level, secrets,
                               json_object_get_int_member_with_default (state, "sync_started", 0),
                               json_object_get_int_member_with_default (state, "handed_out", 0),
                               NULL, manifest, stats, error);
      stats->synced = TRUE;
    }
  snapshot_manifest_free (manifest);
  if (!ok)
    return FALSE;
  stats->sync_started = sync_started;
  return TRUE;
}

static char *
state_to_string (const char         *parent,
                 const char * const *exclude_top_level,
                 const char * const *secret_patterns,
                 gint64              synced_at)
{
  g_autoptr(JsonObject) object = json_object_new ();
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *exclude = exclude_fingerprint (exclude_top_level, secret_patterns);

  json_object_set_string_member (object, "parent", parent);
  json_object_set_int_member (object, "synced_at", synced_at);
  json_object_set_string_member (object, "exclude", exclude);
  /* Should the manifest not do, the full sync at take trusts nothing of
   * either side changed since the park-time sync began. */
  json_object_set_int_member (object, "sync_started", synced_at);
  json_object_set_int_member (object, "handed_out", synced_at);
  json_node_set_object (node, object);
  return json_to_string (node, FALSE);
}

gboolean
snapshot_pool_park (const char         *snapshot_dir,
                    const char         *parent,
                    const char         *tree,
                    const char * const *exclude_top_level,
                    const char * const *secret_patterns,
                    guint               pool_size,
                    gint64              sync_started,
                    gint64              handed_out)
{
  g_autofree char *pool_dir = g_build_filename (snapshot_dir, POOL_DIR, NULL);
  g_autofree char *id = parent_id (parent);
  g_autofree char *dir = g_build_filename (pool_dir, id, NULL);
  g_autofree char *entry = NULL, *entry_tree = NULL, *state_path = NULL, *state = NULL, *manifest_path = NULL;
  g_autoptr(GError) error = NULL;
  SnapshotManifest *manifest = NULL;
  g_autoptr(SubagentExcludeSet) secrets = NULL;
  SnapshotSyncStats stats;
  gboolean parked = FALSE;
  gint64 synced_at;
  char *real_tree;
  int holder = 0;
  guint n;
  int lock;

  if (pool_size == 0 || sync_started <= 0 || handed_out <= 0)
    return FALSE;
  lock = pool_lock (pool_dir, id);
  if (lock < 0)
    return FALSE;
  n = count_entries (dir);
  pool_unlock (lock);
  if (n >= pool_size)
    return FALSE;

  /* Nothing of the child may be left to write into a tree the pool will
   * trust (snapshot-holders.c). */
  real_tree = realpath (tree, NULL);
  if (real_tree == NULL || snapshot_tree_has_holders (real_tree, &holder))
    {
      g_message ("Not keeping snapshot %s in the pool: %s%d still holds files in it", tree,
                 real_tree ? "process " : "cannot resolve it; ", holder);
      free (real_tree);
      return FALSE;
    }
  free (real_tree);

  /* The child is gone: bring its tree back to the parent's state now, off
   * the prepare path, recording what the parent looked like. */
  synced_at = snapshot_pool_clock_now ();
  manifest = snapshot_manifest_new ();
  secrets = subagent_exclude_set_new (secret_patterns);
  if (!snapshot_tree_sync (parent, tree, exclude_top_level, secrets, sync_started, handed_out, manifest, NULL,
                           &stats, &error))
    {
      g_debug ("Not parking snapshot %s: %s", tree, error->message);
      snapshot_manifest_free (manifest);
      return FALSE;
    }
  g_debug ("Snapshot %s synced for the pool: %u copied again, %u removed", tree, stats.copied, stats.removed);

  lock = pool_lock (pool_dir, id);
  if (lock >= 0 && g_mkdir_with_parents (dir, 0700) == 0 && count_entries (dir) < pool_size)
    {
      entry = g_build_filename (dir, "XXXXXX", NULL);
      if (g_mkdtemp_full (entry, 0700) != NULL)
        {
          entry_tree = g_build_filename (entry, SNAPSHOT_TREE, NULL);
          state_path = g_build_filename (entry, POOL_STATE, NULL);
          manifest_path = g_build_filename (entry, POOL_MANIFEST, NULL);
          state = state_to_string (parent, exclude_top_level, secret_patterns, synced_at);
          parked = snapshot_manifest_save (manifest, manifest_path, &error) &&
                   g_file_set_contents (state_path, state, -1, &error) && rename (tree, entry_tree) == 0;
          if (!parked)
            subagent_tree_remove (entry, NULL, NULL);
        }
    }
  pool_unlock (lock);
  snapshot_manifest_free (manifest);
  return parked;
}
