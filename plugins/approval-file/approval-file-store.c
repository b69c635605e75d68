/* approval-file-store.c: the approval queues of one workspace, one JSON file
 * per parent run in <root>/.subagent/approvals/.
 *
 * Every change is a read-modify-write under the run's exclusive flock,
 * committed by an atomic rename (see approval-file-io.c), so several
 * processes — queues, `subagentctl approvals`, a GUI — can share a queue.
 * Run and request ids arrive validated by the interface's wrappers
 * ([A-Za-z0-9_-], 1–128), so they are safe as file names.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "approval-file-format.h"
#include "approval-file-io.h"
#include "approval-file-store.h"
#include "approval-file-store-private.h"

/* The last version of a run's file this store read or wrote. Parsing a big
 * queue costs milliseconds (json-glib, then a digest per request); reading
 * the bytes and comparing them costs microseconds, so unchanged files are
 * never parsed twice. Equal bytes are the only test: inode numbers and
 * coarse mtimes repeat. */
typedef struct {
  GBytes *raw;
  GPtrArray *requests;     /* parsed from raw; shared, never changed */
} CacheEntry;

#define CACHE_MAX_RUNS 32

/* For afs_store_own_change_only(), per run: the unbroken series of this
 * store's writes that led to the run's last version it wrote, each written
 * on top of the one before. versions[0] is what the first was written on
 * (NULL: no file), the last one is the last written; only the last
 * OWN_SERIES_KEPT are kept, the one before them becoming versions[0]
 * (every version after it is still ours). */
typedef struct {
  GPtrArray *versions;     /* of GBytes, the first nullable */
} OwnWrite;

#define OWN_SERIES_KEPT 8

static void
own_write_free (gpointer data)
{
  OwnWrite *own = data;

  g_ptr_array_unref (own->versions);
  g_free (own);
}

static void
bytes_unref0 (gpointer bytes)
{
  if (bytes != NULL)
    g_bytes_unref (bytes);
}

#define LOCKED_PARSE_AFTER 3

static void
cache_entry_free (gpointer data)
{
  CacheEntry *entry = data;

  g_bytes_unref (entry->raw);
  g_ptr_array_unref (entry->requests);
  g_free (entry);
}


AfsStore *
afs_store_new (const char       *dir,
               GBytes           *key,
               AfsIntegrityFunc  report,
               gpointer          report_data)
{
  AfsStore *self = g_new0 (AfsStore, 1);

  self->dir = g_strdup (dir);
  self->key = key ? g_bytes_ref (key) : NULL;
  self->report = report;
  self->report_data = report_data;
  g_mutex_init (&self->mutex);
  self->cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, cache_entry_free);
  self->own_writes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, own_write_free);
  afs_store_commit_init (self);
  self->dir_fd = -1;
  self->spare = (AfsSpare) AFS_SPARE_INIT;
  self->retired_dir_fds = g_array_new (FALSE, FALSE, sizeof (int));
  return self;
}

/* The spare inode for a write (fd -1: the write then makes its temp file). */
static AfsSpare
take_spare (AfsStore *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  AfsSpare spare = self->spare;

  self->spare = (AfsSpare) AFS_SPARE_INIT;
  if (spare.fd >= 0 && self->spare_pid != getpid ())
    {
      /* The parent's: its name and lock are the parent's to drop. */
      g_clear_pointer (&spare.path, g_free);
      afs_spare_clear (&spare);
    }
  return spare;
}

void
afs_store_free (AfsStore *self)
{
  afs_store_commit_clear (self);
  for (guint i = 0; i < self->retired_dir_fds->len; i++)
    close (g_array_index (self->retired_dir_fds, int, i));
  g_array_unref (self->retired_dir_fds);
  if (self->dir_fd >= 0)
    close (self->dir_fd);
  {
    AfsSpare spare = take_spare (self);

    afs_spare_clear (&spare);
  }
  g_hash_table_unref (self->cache);
  g_hash_table_unref (self->own_writes);
  g_mutex_clear (&self->mutex);
  g_clear_pointer (&self->key, g_bytes_unref);
  g_free (self->dir);
  g_free (self);
}

const char *
afs_store_get_dir (AfsStore *self)
{
  return self->dir;
}

/* Checks (and with @create makes) the approvals directory. A directory that
 * resolves anywhere else — a symlink out of the root — is refused. */
gboolean
afs_store_check_dir (AfsStore  *self,
                     gboolean   create,
                     gboolean  *exists,
                     GError   **error)
{
  char *real;
  gboolean inside;

  *exists = FALSE;
  /* Still the very directory checked before, and no symlink (lstat) in
   * its place: writes land in the directory realpath() verified, so
   * neither mkdir nor realpath — a readlink per component — again. */
  {
    struct stat st;
    gboolean same;

    if (lstat (self->dir, &st) == 0 && S_ISDIR (st.st_mode))
      {
        g_mutex_lock (&self->mutex);
        same = self->dir_checked && st.st_dev == self->dir_dev && st.st_ino == self->dir_ino;
        g_mutex_unlock (&self->mutex);
        if (same)
          {
            *exists = TRUE;
            return TRUE;
          }
      }
  }
  if (create && g_mkdir_with_parents (self->dir, 0700) < 0)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                   "Could not create %s: %s", self->dir, g_strerror (errno));
      return FALSE;
    }
  real = realpath (self->dir, NULL);
  if (real == NULL)
    {
      if (errno == ENOENT && !create)
        return TRUE;
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                   "Could not resolve %s: %s", self->dir, g_strerror (errno));
      return FALSE;
    }
  inside = g_str_equal (real, self->dir);
  free (real);
  if (!inside || !g_file_test (self->dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                   "%s is not a directory inside the workspace (a symlink?); remove it", self->dir);
      return FALSE;
    }
  {
    struct stat st;
    int fd = open (self->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

    if (fd >= 0 && fstat (fd, &st) == 0)
      {
        g_mutex_lock (&self->mutex);
        if (self->dir_fd >= 0)
          g_array_append_val (self->retired_dir_fds, self->dir_fd);
        self->dir_fd = fd;
        self->dir_dev = st.st_dev;
        self->dir_ino = st.st_ino;
        self->dir_checked = TRUE;
        g_mutex_unlock (&self->mutex);
      }
    else if (fd >= 0)
      close (fd);
  }
  *exists = TRUE;
  return TRUE;
}

/* Keeps the version a write replaced as the next write's temp inode, once
 * the directory fsync has made the exchange that moved it under its temp
 * name durable (written again before, a crash could leave it torn at the
 * run's name); drops it when a reader held it (the writer could not lock
 * it), or a spare is there already. */
void
afs_store_keep_spare (AfsStore *self,
                      AfsSpare *replaced)
{
  if (replaced->held)
    {
      g_mutex_lock (&self->mutex);
      if (self->spare.fd < 0)
        {
          self->spare = *replaced;
          self->spare_pid = getpid ();
          *replaced = (AfsSpare) AFS_SPARE_INIT;
        }
      g_mutex_unlock (&self->mutex);
    }
  afs_spare_clear (replaced);
}

/* Makes the next write's temp inode now, after a write's directory fsync,
 * off the way from a caller to the rename that wakes the other side, when
 * the write did not leave one: on ext4 without a journal, allocating an
 * inode walks every inode freed in its group in the last minute, and that
 * took 0.05 to 0.8 ms of that way. */
void
afs_store_make_spare (AfsStore *self)
{
  int dir_fd, fd;

  g_mutex_lock (&self->mutex);
  dir_fd = self->spare_unsupported || self->spare.fd >= 0 ? -1 : self->dir_fd;
  g_mutex_unlock (&self->mutex);
  if (dir_fd < 0)
    return;
  fd = afs_spare_new (dir_fd);
  g_mutex_lock (&self->mutex);
  if (fd < 0)
    /* EOPNOTSUPP, EISDIR (a kernel before 3.11)…: then never again. Other
     * errors (EMFILE, ENOSPC) are the next write's to report. */
    self->spare_unsupported |= errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL;
  else if (self->spare.fd < 0)
    {
      self->spare.fd = fd;
      self->spare_pid = getpid ();
      fd = -1;
    }
  g_mutex_unlock (&self->mutex);
  if (fd >= 0)
    close (fd);
}

/* The fsync that makes a rename in the directory durable, on the fd kept
 * open since the directory was verified (no open and close per write). */
gboolean
afs_store_sync_dir (AfsStore  *self,
          GError   **error)
{
  int fd;

  g_mutex_lock (&self->mutex);
  fd = self->dir_fd;
  g_mutex_unlock (&self->mutex);
  if (fd < 0)
    return afs_sync_dir (self->dir, error);
  return afs_sync_dir_fd (fd, self->dir, error);
}

void
afs_store_report_integrity (AfsStore     *self,
                  const char   *run_id,
                  const GError *error)
{
  self->report (run_id, error, self->report_data);
}

static void
cache_store (AfsStore   *self,
             const char *run_id,
             GBytes     *raw,
             GPtrArray  *requests)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  CacheEntry *entry = g_new0 (CacheEntry, 1);

  /* Bounded without bookkeeping: a host rarely has many queues at once. */
  if (g_hash_table_size (self->cache) >= CACHE_MAX_RUNS && !g_hash_table_contains (self->cache, run_id))
    g_hash_table_remove_all (self->cache);
  entry->raw = g_bytes_ref (raw);
  entry->requests = g_ptr_array_ref (requests);
  g_hash_table_insert (self->cache, g_strdup (run_id), entry);
}

void
afs_store_cache_forget (AfsStore   *self,
              const char *run_id)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);

  g_hash_table_remove (self->cache, run_id);
}

static GPtrArray *
cache_lookup (AfsStore   *self,
              const char *run_id,
              GBytes     *raw)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  CacheEntry *entry = g_hash_table_lookup (self->cache, run_id);

  if (entry != NULL && g_bytes_equal (entry->raw, raw))
    return g_ptr_array_ref (entry->requests);
  return NULL;
}

/* The last version of the run's file this process trusted, whatever the
 * file holds now; NULL when it has none. */
GPtrArray *
afs_store_cache_last_trusted (AfsStore   *self,
                    const char *run_id)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  CacheEntry *entry = g_hash_table_lookup (self->cache, run_id);

  return entry != NULL ? g_ptr_array_ref (entry->requests) : NULL;
}

/* The cache's entry for the run, if any, with references. */
static void
cache_peek (AfsStore    *self,
            const char  *run_id,
            GBytes     **raw,
            GPtrArray  **requests)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  CacheEntry *entry = g_hash_table_lookup (self->cache, run_id);

  *raw = entry != NULL ? g_bytes_ref (entry->raw) : NULL;
  *requests = entry != NULL ? g_ptr_array_ref (entry->requests) : NULL;
}

static gboolean
bytes_same (GBytes *a,
            GBytes *b)
{
  return a == NULL ? b == NULL : b != NULL && g_bytes_equal (a, b);
}

/* Before this store replaces @on_disk (read under the run's lock; NULL for
 * no file) with @contents. */
static void
own_write_record (AfsStore   *self,
                  const char *run_id,
                  GBytes     *on_disk,
                  GBytes     *contents)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  OwnWrite *own = g_hash_table_lookup (self->own_writes, run_id);
  GBytes *last = own != NULL ? own->versions->pdata[own->versions->len - 1] : NULL;

  /* On top of our own last version, the series goes on; on anything else
   * (another writer's version, a deleted file) a new one starts. */
  if (own != NULL && on_disk != NULL && last != NULL && g_bytes_equal (last, on_disk))
    {
      g_ptr_array_add (own->versions, g_bytes_ref (contents));
      if (own->versions->len > OWN_SERIES_KEPT + 1)
        g_ptr_array_remove_index (own->versions, 0);
      return;
    }
  /* Bounded like the cache; what is forgotten is then announced again. */
  if (own == NULL && g_hash_table_size (self->own_writes) >= CACHE_MAX_RUNS)
    g_hash_table_remove_all (self->own_writes);
  own = g_new0 (OwnWrite, 1);
  own->versions = g_ptr_array_new_with_free_func (bytes_unref0);
  g_ptr_array_add (own->versions, on_disk != NULL ? g_bytes_ref (on_disk) : NULL);
  g_ptr_array_add (own->versions, g_bytes_ref (contents));
  g_hash_table_insert (self->own_writes, g_strdup (run_id), own);
}

gboolean
afs_store_own_change_only (AfsStore    *self,
                           const char  *run_id,
                           GBytes      *announced,
                           GBytes     **current)
{
  g_autofree char *path = afs_run_file_path (self->dir, run_id);
  g_autoptr(GMutexLocker) locker = NULL;
  gboolean quiet = FALSE;
  OwnWrite *own;

  *current = NULL;
  if (!afs_read (path, FALSE, current, NULL))
    return FALSE;
  /* A watch that announced nothing yet announces once. */
  if (announced == NULL || *current == NULL)
    return FALSE;
  locker = g_mutex_locker_new (&self->mutex);
  own = g_hash_table_lookup (self->own_writes, run_id);
  /* The file holds our last version, and the version announced is in the
   * series of our writes that led to it (or what it started from): every
   * version since was ours, so whoever listens has nothing to reload.
   * Another writer's version under any of ours started a series of its
   * own, which the version announced is not in. */
  if (own == NULL || !g_bytes_equal (own->versions->pdata[own->versions->len - 1], *current))
    return FALSE;
  for (guint i = 0; i < own->versions->len && !quiet; i++)
    quiet = bytes_same (own->versions->pdata[i], announced);
  if (quiet)
    g_clear_pointer (current, g_bytes_unref);
  return quiet;
}

/* Moves an untrusted run file aside (`<run>.json.tampered-<ms>`, which no
 * reader takes for a queue), so a person can look at it and the keyed host
 * can write the version it trusts. Call with the run's lock held. */
char *
afs_store_quarantine (AfsStore   *self,
            const char *run_id)
{
  g_autofree char *path = afs_run_file_path (self->dir, run_id);
  char *aside = g_strdup_printf ("%s.tampered-%" G_GINT64_FORMAT, path, g_get_real_time () / 1000);

  if (g_rename (path, aside) != 0)
    {
      g_warning ("Could not move the untrusted approval file %s aside: %s", path, g_strerror (errno));
      g_clear_pointer (&aside, g_free);
    }
  return aside;
}

/* Whether @contents (a version of a run's file; NULL for none) carries a
 * signature. */
static gboolean
bytes_are_signed (GBytes *contents)
{
  g_autoptr(JsonParser) parser = NULL;
  gsize length = 0;
  const char *data;

  if (contents == NULL)
    return FALSE;
  data = g_bytes_get_data (contents, &length);
  /* A member named "signature" is spelt so, or with a \u escape: a file
   * with neither has none, and needs no parse (this runs on every write
   * without a key). */
  if (memmem (data, length, "\"signature\"", strlen ("\"signature\"")) == NULL
      && memmem (data, length, "\\u", 2) == NULL)
    return FALSE;
  parser = json_parser_new ();
  return subagent_json_parser_load_bounded (parser, data, (gssize) length, NULL) &&
         JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)) &&
         json_object_has_member (json_node_get_object (json_parser_get_root (parser)), "signature");
}

/* The requests in the run's file, shared with the cache: never change the
 * array or its elements. Empty when there is no file; NULL with an error
 * otherwise (SUBAGENT_APPROVAL_ERROR_INTEGRITY: the file cannot be trusted).
 * Without @parse, a version not in the cache gives NULL and no error.
 * @raw (optional) gets the bytes read, whether they parse or not: NULL
 * when there is no file or it could not be read. @run_locked: the caller
 * holds the run's lock (see afs_read()). */
static GPtrArray *
read_requests_raw (AfsStore    *self,
                   const char  *run_id,
                   gboolean     parse,
                   gboolean     run_locked,
                   GBytes     **raw,
                   GError     **error)
{
  g_autofree char *path = afs_run_file_path (self->dir, run_id);
  g_autoptr(GBytes) contents = NULL;
  g_autoptr(GPtrArray) previous = NULL;
  GPtrArray *requests;
  gsize length = 0;
  const char *data;

  if (raw != NULL)
    *raw = NULL;
  if (!afs_read (path, run_locked, &contents, error))
    return NULL;
  if (raw != NULL && contents != NULL)
    *raw = g_bytes_ref (contents);
  if (contents == NULL)
    return g_ptr_array_new_with_free_func (g_object_unref);
  requests = cache_lookup (self, run_id, contents);
  if (requests != NULL || !parse)
    return requests;

  data = g_bytes_get_data (contents, &length);
  previous = afs_store_cache_last_trusted (self, run_id);
  requests = afs_document_parse (run_id, data, length, self->key, previous, error);
  if (requests == NULL)
    {
      g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  cache_store (self, run_id, contents, requests);
  return requests;
}

GPtrArray *
afs_store_read_requests (AfsStore    *self,
               const char  *run_id,
               gboolean     parse,
               GError     **error)
{
  return read_requests_raw (self, run_id, parse, FALSE, NULL, error);
}

/* Replaces the run's file, whose bytes are @on_disk (read under the lock;
 * NULL for no file), with @requests, which the cache keeps: the caller
 * must not change them afterwards. Call with the run's lock held. */
gboolean
afs_store_write_requests (AfsStore    *self,
                const char  *run_id,
                GPtrArray   *requests,
                GBytes      *on_disk,
                AfsSpare    *replaced,
                GError     **error)
{
  g_autoptr(GBytes) contents = afs_document_serialize (run_id, requests, self->key);
  g_autoptr(GBytes) prior_raw = NULL;
  g_autoptr(GPtrArray) prior_requests = NULL;
  gboolean spare_refused = FALSE;
  gboolean committed;
  AfsSpare spare;

  /* Unsigned, it would lock the keyed host out of its own queue. The
   * bytes read under the lock are the file's: no read again. */
  if (self->key == NULL && bytes_are_signed (on_disk))
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "The approval queue of run %s is signed: a writer without the HMAC key cannot change it; "
                   "set SUBAGENT_APPROVAL_HMAC_KEY or approval-file.key_file to the key its host uses", run_id);
      return FALSE;
    }
  /* Never a file its readers would refuse as too big. */
  if (g_bytes_get_size (contents) > AFS_MAX_FILE_SIZE)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "The approval queue of run %s would grow to %" G_GSIZE_FORMAT " bytes, past the %d a reader "
                   "accepts; decide or prune its requests first", run_id, g_bytes_get_size (contents),
                   AFS_MAX_FILE_SIZE);
      return FALSE;
    }
  /* In the cache before the rename: a thread of this process woken by the
   * rename (a watcher) then finds the version it reads there instead of
   * parsing it again while this one finishes. */
  cache_peek (self, run_id, &prior_raw, &prior_requests);
  cache_store (self, run_id, contents, requests);
  own_write_record (self, run_id, on_disk, contents);
  spare = take_spare (self);
  committed = afs_commit (self->dir, run_id, contents, &spare, &spare_refused, replaced, error);

  if (spare_refused)
    {
      /* Spares that cannot be linked (no /proc) would only cost an inode
       * each: the temp files are made at write time from now on. */
      g_mutex_lock (&self->mutex);
      self->spare_unsupported = TRUE;
      g_mutex_unlock (&self->mutex);
    }
  if (!committed)
    {
      if (prior_raw != NULL)
        cache_store (self, run_id, prior_raw, prior_requests);
      else
        afs_store_cache_forget (self, run_id);
      return FALSE;
    }
  return TRUE;
}

/* Copies of requests the cache shares: subagent_approval_request_copy()
 * reads them without taking a reference, so threads may copy at once. */
static GPtrArray *
copy_requests (GPtrArray *requests)
{
  GPtrArray *copy = g_ptr_array_new_full (requests->len + 1, g_object_unref);

  for (guint i = 0; i < requests->len; i++)
    g_ptr_array_add (copy, subagent_approval_request_copy (requests->pdata[i]));
  return copy;
}

/* A new array holding the same (shared, unchanged) requests, to edit. */
GPtrArray *
afs_requests_share (GPtrArray *requests)
{
  GPtrArray *shared = g_ptr_array_new_full (requests->len + 1, g_object_unref);

  for (guint i = 0; i < requests->len; i++)
    g_ptr_array_add (shared, g_object_ref (requests->pdata[i]));
  return shared;
}

SubagentApprovalRequest *
afs_requests_find (GPtrArray  *requests,
              const char *request_id,
              guint      *index)
{
  for (guint i = 0; i < requests->len; i++)
    if (g_str_equal (subagent_approval_request_get_request_id (requests->pdata[i]), request_id))
      {
        *index = i;
        return requests->pdata[i];
      }
  return NULL;
}

GPtrArray *
afs_store_load (AfsStore    *self,
                const char  *parent_run_id,
                GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  GPtrArray *requests;

  /* No lock: files are only ever replaced by rename, so a plain read sees
   * one complete version. */
  requests = afs_store_read_requests (self, parent_run_id, TRUE, &local_error);
  if (requests != NULL)
    {
      /* Callers may change what they get; the cache's objects stay as read. */
      GPtrArray *copy = copy_requests (requests);

      g_ptr_array_unref (requests);
      return copy;
    }
  if (!g_error_matches (local_error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  afs_store_report_integrity (self, parent_run_id, local_error);
  return g_ptr_array_new_with_free_func (g_object_unref);
}

/* Takes the run's lock and reads the file under it. A version written while
 * we waited for the lock is parsed with the lock let go again, so that the
 * writers queued behind us do not wait for our parsing; after a few rounds
 * we parse under the lock. Every version parsed on the way is offered to
 * @settle, which returns TRUE once it has nothing left to write: then no
 * lock is taken and -1 is returned with neither *stored nor @error set.
 * Otherwise returns the lock's fd, with *stored set or (an unreadable or
 * untrusted file) @error set; or -1 with @error set. With @skip_first the
 * first round locks at once: the callers have just read the file and
 * settled what they could. */
int
afs_store_lock_and_read (AfsStore    *self,
               const char  *run_id,
               gboolean     skip_first,
               gboolean   (*settle) (GPtrArray *version, gpointer data),
               gpointer     settle_data,
               GPtrArray  **stored,
               GBytes     **raw,
               GError     **error)
{
  *stored = NULL;
  *raw = NULL;
  for (guint round = 0;; round++)
    {
      /* Callers that have just looked at the file themselves (skip_first)
       * need no look before the first lock. */
      g_autoptr(GPtrArray) parsed_unlocked = round == 0 && skip_first ? NULL
                                             : afs_store_read_requests (self, run_id, TRUE, NULL);
      GError *local_error = NULL;
      int fd;

      if (parsed_unlocked != NULL && settle (parsed_unlocked, settle_data))
        return -1;
      fd = afs_lock (self->dir, run_id, error);
      if (fd < 0)
        return -1;
      g_clear_pointer (raw, g_bytes_unref);
      *stored = read_requests_raw (self, run_id, round >= LOCKED_PARSE_AFTER, TRUE, raw, &local_error);
      if (*stored != NULL || local_error != NULL)
        {
          if (local_error != NULL)
            g_propagate_error (error, local_error);
          return fd;
        }
      afs_unlock (fd);
    }
}

