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

static void run_queue_free (gpointer data);
#define LOCKED_PARSE_AFTER 3

static void
cache_entry_free (gpointer data)
{
  CacheEntry *entry = data;

  g_bytes_unref (entry->raw);
  g_ptr_array_unref (entry->requests);
  g_free (entry);
}

struct _AfsStore
{
  char *dir;
  GBytes *key;             /* nullable */
  AfsIntegrityFunc report;
  gpointer report_data;
  GMutex mutex;
  GHashTable *cache;       /* run id → CacheEntry; guarded by mutex */
  GHashTable *own_writes;  /* run id → OwnWrite; guarded by mutex */
  GMutex commit_mutex;
  GCond commit_cond;
  GCond linger_cond;       /* an operation was queued for a lingering writer */
  GHashTable *queues;      /* run id → RunQueue; guarded by commit_mutex */
  /* The directory afs_store_check_dir() last verified, open (its fd
   * pins the inode, so an lstat() showing the same device and inode is
   * still this very directory); guarded by mutex. Fds of directories
   * replaced since stay open until the store goes: a writer may be
   * fsyncing one. */
  gboolean dir_checked;
  dev_t dir_dev;
  ino_t dir_ino;
  int dir_fd;
  GArray *retired_dir_fds;
  /* A nameless inode in the directory for the next write (see
   * afs_spare_new()), made by this process (a forked child must not write
   * into its parent's); guarded by mutex. */
  int spare_fd;
  pid_t spare_pid;
  gboolean spare_unsupported;
};

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
  g_mutex_init (&self->commit_mutex);
  g_cond_init (&self->commit_cond);
  g_cond_init (&self->linger_cond);
  self->queues = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, run_queue_free);
  self->dir_fd = -1;
  self->spare_fd = -1;
  self->retired_dir_fds = g_array_new (FALSE, FALSE, sizeof (int));
  return self;
}

void
afs_store_free (AfsStore *self)
{
  g_hash_table_unref (self->queues);
  for (guint i = 0; i < self->retired_dir_fds->len; i++)
    close (g_array_index (self->retired_dir_fds, int, i));
  g_array_unref (self->retired_dir_fds);
  if (self->dir_fd >= 0)
    close (self->dir_fd);
  if (self->spare_fd >= 0)
    close (self->spare_fd);
  g_cond_clear (&self->linger_cond);
  g_cond_clear (&self->commit_cond);
  g_mutex_clear (&self->commit_mutex);
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

/* The spare inode for a write, or -1: the write then makes its temp file. */
static int
take_spare (AfsStore *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  int fd = self->spare_fd;

  self->spare_fd = -1;
  if (fd >= 0 && self->spare_pid != getpid ())
    {
      close (fd);
      fd = -1;
    }
  return fd;
}

/* Makes the next write's temp inode now, after a write's directory fsync,
 * off the way from a caller to the rename that wakes the other side: on
 * ext4 without a journal, allocating an inode walks every inode freed in
 * its group in the last seconds (an atomic write frees one each time), and
 * that took 0.05 to 0.8 ms of that way. */
static void
make_spare (AfsStore *self)
{
  int dir_fd, fd;

  g_mutex_lock (&self->mutex);
  dir_fd = self->spare_unsupported || self->spare_fd >= 0 ? -1 : self->dir_fd;
  g_mutex_unlock (&self->mutex);
  if (dir_fd < 0)
    return;
  fd = afs_spare_new (dir_fd);
  g_mutex_lock (&self->mutex);
  if (fd < 0)
    /* EOPNOTSUPP, EISDIR (a kernel before 3.11)…: then never again. Other
     * errors (EMFILE, ENOSPC) are the next write's to report. */
    self->spare_unsupported |= errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL;
  else if (self->spare_fd < 0)
    {
      self->spare_fd = fd;
      self->spare_pid = getpid ();
      fd = -1;
    }
  g_mutex_unlock (&self->mutex);
  if (fd >= 0)
    close (fd);
}

/* The fsync that makes a rename in the directory durable, on the fd kept
 * open since the directory was verified (no open and close per write). */
static gboolean
sync_dir (AfsStore  *self,
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

static void
report_integrity (AfsStore     *self,
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

static void
cache_forget (AfsStore   *self,
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
static GPtrArray *
cache_last_trusted (AfsStore   *self,
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
  if (!afs_read (path, current, NULL))
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
static char *
quarantine (AfsStore   *self,
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
 * when there is no file or it could not be read. */
static GPtrArray *
read_requests_raw (AfsStore    *self,
                   const char  *run_id,
                   gboolean     parse,
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
  if (!afs_read (path, &contents, error))
    return NULL;
  if (raw != NULL && contents != NULL)
    *raw = g_bytes_ref (contents);
  if (contents == NULL)
    return g_ptr_array_new_with_free_func (g_object_unref);
  requests = cache_lookup (self, run_id, contents);
  if (requests != NULL || !parse)
    return requests;

  data = g_bytes_get_data (contents, &length);
  previous = cache_last_trusted (self, run_id);
  requests = afs_document_parse (run_id, data, length, self->key, previous, error);
  if (requests == NULL)
    {
      g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  cache_store (self, run_id, contents, requests);
  return requests;
}

static GPtrArray *
read_requests (AfsStore    *self,
               const char  *run_id,
               gboolean     parse,
               GError     **error)
{
  return read_requests_raw (self, run_id, parse, NULL, error);
}

/* Replaces the run's file, whose bytes are @on_disk (read under the lock;
 * NULL for no file), with @requests, which the cache keeps: the caller
 * must not change them afterwards. Call with the run's lock held. */
static gboolean
write_requests (AfsStore    *self,
                const char  *run_id,
                GPtrArray   *requests,
                GBytes      *on_disk,
                int         *replaced_fd,
                GError     **error)
{
  g_autoptr(GBytes) contents = afs_document_serialize (run_id, requests, self->key);
  g_autoptr(GBytes) prior_raw = NULL;
  g_autoptr(GPtrArray) prior_requests = NULL;
  gboolean spare_refused = FALSE;
  gboolean committed;

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
  committed = afs_commit (self->dir, run_id, contents, take_spare (self), &spare_refused, replaced_fd, error);

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
        cache_forget (self, run_id);
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
static GPtrArray *
share_requests (GPtrArray *requests)
{
  GPtrArray *shared = g_ptr_array_new_full (requests->len + 1, g_object_unref);

  for (guint i = 0; i < requests->len; i++)
    g_ptr_array_add (shared, g_object_ref (requests->pdata[i]));
  return shared;
}

static SubagentApprovalRequest *
find_request (GPtrArray  *requests,
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

static char *
request_canonical (SubagentApprovalRequest *request)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, subagent_approval_request_to_json (request));
  return subagent_json_to_canonical_string (node);
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
  requests = read_requests (self, parent_run_id, TRUE, &local_error);
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
  report_integrity (self, parent_run_id, local_error);
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
static int
lock_and_read (AfsStore    *self,
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
                                             : read_requests (self, run_id, TRUE, NULL);
      GError *local_error = NULL;
      int fd;

      if (parsed_unlocked != NULL && settle (parsed_unlocked, settle_data))
        return -1;
      fd = afs_lock (self->dir, run_id, error);
      if (fd < 0)
        return -1;
      g_clear_pointer (raw, g_bytes_unref);
      *stored = read_requests_raw (self, run_id, round >= LOCKED_PARSE_AFTER, raw, &local_error);
      if (*stored != NULL || local_error != NULL)
        {
          if (local_error != NULL)
            g_propagate_error (error, local_error);
          return fd;
        }
      afs_unlock (fd);
    }
}

/* Group commit. Saves and verdicts of one run that meet in this process
 * share one locked read-modify-write and one fsync'd atomic write: the
 * first caller becomes the writer, applies every operation queued until it
 * holds the lock and has applied the ones before, in order, to the version
 * it read under the lock, writes once and completes each with its own
 * result. Callers that arrive later queue up for the next write. Each operation
 * sees exactly the state the ones before it left, as if they had run one
 * by one, so the compare-and-set of every verdict stays exact.
 *
 * Callers that come together once (the children of a batch submitting,
 * an approver deciding what it sees pending from several threads) tend to
 * come together again, but not at the same microsecond: so a writer first
 * waits for as many operations as the run's recent writes here had, for at
 * most as long as its last write took (see linger()). A run whose writes
 * all had one operation never waits. */
typedef enum { OP_QUEUED, OP_TAKEN, OP_DONE } OpState;

typedef struct {
  /* save */
  GPtrArray *requests;
  /* update_status */
  const char *request_id;
  SubagentApprovalStatus status;
  const char *reason;
  const char *actor;
  /* out */
  OpState state;
  gboolean lost;           /* a verdict whose request some version showed decided */
  gboolean result;
  gboolean changed;        /* it changed the version being written */
  GError *error;
  gboolean follows;        /* not the first operation of one caller's batch */
  /* No look at the file before the lock: a verdict its caller just saw
   * pending (unlocked), or a save, which has nothing to settle there (a
   * version new to this process found under the lock is still parsed with
   * the lock let go). */
  gboolean checked;
} Op;

#define RECENT_WRITES 8
#define LINGER_MAX_US 2000
#define QUEUES_MAX_RUNS 32

typedef struct {
  GPtrArray *queued;       /* Op*, in arrival order */
  gboolean writing;        /* a writer holds (or is taking) the run's lock */
  gboolean lingering;      /* the writer waits for more operations */
  /* This run's recent writes in this process: */
  guint batch_sizes[RECENT_WRITES];
  guint next_size;
  gint64 last_write_us;    /* from waiting for the lock to the directory fsync */
} RunQueue;

static void
run_queue_free (gpointer data)
{
  RunQueue *queue = data;

  g_ptr_array_unref (queue->queued);
  g_free (queue);
}

static guint
run_queue_recent_batch (RunQueue *queue)
{
  guint most = 0;

  for (guint i = 0; i < RECENT_WRITES; i++)
    most = MAX (most, queue->batch_sizes[i]);
  return most;
}

/* Call with commit_mutex held, when nobody uses @queue. A queue that
 * remembers shared writes is kept for the next ones, while few are kept. */
static void
run_queue_release (AfsStore   *self,
                   const char *run_id,
                   RunQueue   *queue)
{
  if (queue->queued->len > 0)
    return;
  if (run_queue_recent_batch (queue) > 1 && g_hash_table_size (self->queues) <= QUEUES_MAX_RUNS)
    return;
  g_hash_table_remove (self->queues, run_id);
}

/* How many operations of @batch came with an earlier one of the same call. */
static guint
batch_extra_ops (GPtrArray *batch)
{
  guint extra = 0;

  for (guint i = 0; i < batch->len; i++)
    extra += ((Op *) batch->pdata[i])->follows;
  return extra;
}

static void
apply_save (GPtrArray *working,
            Op        *op)
{
  for (guint i = 0; i < op->requests->len; i++)
    {
      SubagentApprovalRequest *given = op->requests->pdata[i];
      SubagentApprovalRequest *old;
      g_autofree char *new_text = NULL;
      guint slot = 0;

      old = find_request (working, subagent_approval_request_get_request_id (given), &slot);
      /* A stored verdict is final: whatever the caller holds loses. */
      if (old != NULL && subagent_approval_request_get_status (old) != SUBAGENT_APPROVAL_STATUS_PENDING)
        continue;
      if (old != NULL)
        {
          new_text = request_canonical (given);
          if (g_str_equal (afs_request_text (old, TRUE), new_text))
            continue;
          g_object_unref (working->pdata[slot]);
          working->pdata[slot] = subagent_approval_request_copy (given);
        }
      else
        g_ptr_array_add (working, subagent_approval_request_copy (given));
      op->changed = TRUE;
    }
  op->result = TRUE;
}

/* Whether @request_id is in @requests and pending; *slot gets its index. */
static gboolean
is_pending (GPtrArray  *requests,
            const char *request_id,
            guint      *slot)
{
  SubagentApprovalRequest *target = find_request (requests, request_id, slot);

  return target != NULL && subagent_approval_request_get_status (target) == SUBAGENT_APPROVAL_STATUS_PENDING;
}

static void
apply_update (AfsStore  *self,
              GPtrArray *working,
              Op        *op)
{
  g_autoptr(SubagentApprovalRequest) decided = NULL;
  guint slot = 0;

  if (!is_pending (working, op->request_id, &slot))
    return;
  decided = subagent_approval_request_copy (working->pdata[slot]);
  if (!subagent_approval_request_transition (decided, op->status, op->reason, op->actor))
    return;
  g_object_unref (working->pdata[slot]);
  working->pdata[slot] = g_steal_pointer (&decided);
  op->result = op->changed = TRUE;
}

static void
fail_ops (GPtrArray    *ops,
          const GError *error,
          gboolean      only_changed)
{
  for (guint i = 0; i < ops->len; i++)
    {
      Op *op = ops->pdata[i];

      /* A save that changed nothing may still rest on an earlier one of
       * the batch (the same request), so every save fails with the write. */
      if (only_changed && !op->changed && op->requests == NULL)
        continue;
      op->result = FALSE;
      g_clear_error (&op->error);
      op->error = g_error_copy (error);
    }
}

/* A verdict is final, so an update whose request @version already shows
 * decided has lost its compare-and-set in every later version too: it is
 * settled without the lock. Without this, the losers of a race queue on
 * the flock behind the winner only to find the request decided, each one
 * parsing the winner's version while it holds the lock (a convoy that
 * grows with the number of deciders). A request missing from @version is
 * not settled: a save earlier in the batch may add it. Returns whether
 * every operation is settled. */
static gboolean
settle_lost_updates (GPtrArray *version,
                     gpointer   data)
{
  GPtrArray *ops = data;
  gboolean all = TRUE;

  for (guint i = 0; i < ops->len; i++)
    {
      Op *op = ops->pdata[i];
      SubagentApprovalRequest *request;
      guint slot = 0;

      if (op->requests == NULL && !op->lost
          && (request = find_request (version, op->request_id, &slot)) != NULL
          && subagent_approval_request_get_status (request) != SUBAGENT_APPROVAL_STATUS_PENDING)
        op->lost = TRUE;
      all &= op->lost;
    }
  return all;
}

/* Moves the operations queued for @run_id since @ops was taken to the end
 * of @ops, and returns how many. The writer calls it with the run's lock
 * held: callers that arrived while it waited for the lock (often held by
 * another process's write) or read the file join this write rather than
 * wait for it and make one more. */
static guint
take_queued (AfsStore   *self,
             const char *run_id,
             GPtrArray  *ops)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->commit_mutex);
  RunQueue *queue = g_hash_table_lookup (self->queues, run_id);
  guint taken = queue->queued->len;

  for (guint i = 0; i < taken; i++)
    {
      ((Op *) queue->queued->pdata[i])->state = OP_TAKEN;
      g_ptr_array_add (ops, queue->queued->pdata[i]);
    }
  g_ptr_array_set_size (queue->queued, 0);
  return taken;
}

/* Whether no operation of @ops needs a look at the file before the lock
 * (see Op.checked). */
static gboolean
all_checked (GPtrArray *ops)
{
  for (guint i = 0; i < ops->len; i++)
    if (!((Op *) ops->pdata[i])->checked)
      return FALSE;
  return TRUE;
}

/* One locked read-modify-write for @ops, in order, and for the operations
 * that join them once the lock is held. */
static void
write_batch (AfsStore   *self,
             const char *run_id,
             GPtrArray  *ops)
{
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GPtrArray) working = NULL;
  g_autoptr(GError) read_error = NULL;
  g_autoptr(GError) write_error = NULL;
  g_autoptr(GBytes) on_disk = NULL;
  gboolean changed = FALSE;
  guint next = 0;
  int replaced_fd = -1;
  int lock_fd;

  lock_fd = lock_and_read (self, run_id, all_checked (ops), settle_lost_updates, ops, &stored, &on_disk, &read_error);
  if (lock_fd < 0 && read_error == NULL)
    return;
  if (lock_fd >= 0)
    take_queued (self, run_id, ops);
  if (lock_fd < 0 || (stored == NULL
                      && !g_error_matches (read_error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY)))
    {
      afs_unlock (lock_fd);
      fail_ops (ops, read_error, FALSE);
      return;
    }
  if (stored != NULL)
    working = share_requests (stored);
  else if (self->key != NULL)
    {
      /* A file that fails its signature must not hide the requests this
       * host knows are pending: it goes aside, the last trusted version
       * comes back, and the approver is told. */
      g_autoptr(GPtrArray) trusted = cache_last_trusted (self, run_id);
      g_autofree char *aside = quarantine (self, run_id);

      if (aside != NULL)
        g_prefix_error (&read_error, "moved aside to %s: ", aside);
      report_integrity (self, run_id, read_error);
      if (trusted != NULL)
        {
          working = share_requests (trusted);
          changed = TRUE;
        }
    }

  /* Operations that join while these are applied come after them, in
   * their order, on the same version. They missed settle_lost_updates(),
   * which only saves work: an update that lost finds its request decided
   * in @working. */
  do
    {
      for (; next < ops->len; next++)
        {
          Op *op = ops->pdata[next];

          if (op->lost)
            continue;
          if (working == NULL && op->requests == NULL)
            {
              /* Rewriting an untrusted file would sign what someone else wrote. */
              report_integrity (self, run_id, read_error);
              op->error = g_error_copy (read_error);
              continue;
            }
          if (working == NULL)
            {
              /* Nothing of an untrusted file is kept (so nothing of it gets
               * signed): the caller's requests replace it. */
              report_integrity (self, run_id, read_error);
              working = g_ptr_array_new_with_free_func (g_object_unref);
              changed = TRUE;
            }
          if (op->requests != NULL)
            apply_save (working, op);
          else
            apply_update (self, working, op);
          changed |= op->changed;
        }
    }
  while (take_queued (self, run_id, ops) > 0);

  if (changed && !write_requests (self, run_id, working, on_disk, &replaced_fd, &write_error))
    changed = FALSE;
  afs_unlock (lock_fd);
  /* The directory fsync comes after unlocking: other processes' writes
   * overlap it. */
  if (write_error == NULL && changed)
    sync_dir (self, &write_error);
  /* Then the replaced version goes (its inode freed, which on an ext4
   * mounted with `discard`, as here, waits for the device: 0.1 to 0.6 ms),
   * and the next write's spare inode is made. Both were tried in a thread
   * of their own, so that the caller returns at the directory fsync: one
   * at a time, it made no difference beyond the noise of this disk (median
   * 40 % against 41 % of the bare write rate, 6 runs each), for two more
   * context switches a write. */
  if (replaced_fd >= 0)
    close (replaced_fd);
  if (changed)
    make_spare (self);
  if (write_error != NULL)
    fail_ops (ops, write_error, TRUE);
}

/* The writer of @queue, before it locks: waits for as many operations as
 * the run's recent writes here had, for at most the time its last write
 * took. An operation that comes within that time would otherwise cost a
 * write of its own. Called and returns with commit_mutex held. */
static void
linger (AfsStore *self,
        RunQueue *queue)
{
  guint expected = run_queue_recent_batch (queue);
  gint64 until = g_get_monotonic_time () + MIN (queue->last_write_us, LINGER_MAX_US);

  queue->lingering = TRUE;
  while (queue->queued->len < expected)
    if (!g_cond_wait_until (&self->linger_cond, &self->commit_mutex, until))
      break;
  queue->lingering = FALSE;
}

/* Queues @ops (all at once, so that one write takes them all) and waits
 * until a writer, perhaps this thread, has completed them. */
static void
commit_ops (AfsStore    *self,
            const char  *run_id,
            Op         **ops,
            guint        n_ops)
{
  Op *last = ops[n_ops - 1];

  g_mutex_lock (&self->commit_mutex);
  {
    RunQueue *queue = g_hash_table_lookup (self->queues, run_id);

    if (queue == NULL)
      {
        queue = g_new0 (RunQueue, 1);
        queue->queued = g_ptr_array_new ();
        g_hash_table_insert (self->queues, g_strdup (run_id), queue);
      }
    for (guint i = 0; i < n_ops; i++)
      g_ptr_array_add (queue->queued, ops[i]);
    if (queue->lingering)
      g_cond_broadcast (&self->linger_cond);
  }
  /* Writers take the whole queue: our operations finish together. */
  while (last->state != OP_DONE)
    {
      RunQueue *queue = g_hash_table_lookup (self->queues, run_id);
      g_autoptr(GPtrArray) batch = NULL;
      gint64 started;

      /* Our operations are queued (the queue exists) or taken by a writer. */
      if (last->state != OP_QUEUED || queue->writing)
        {
          g_cond_wait (&self->commit_cond, &self->commit_mutex);
          continue;
        }
      queue->writing = TRUE;
      linger (self, queue);
      batch = g_steal_pointer (&queue->queued);
      queue->queued = g_ptr_array_new ();
      for (guint i = 0; i < batch->len; i++)
        ((Op *) batch->pdata[i])->state = OP_TAKEN;
      g_mutex_unlock (&self->commit_mutex);

      started = g_get_monotonic_time ();
      write_batch (self, run_id, batch);

      g_mutex_lock (&self->commit_mutex);
      queue = g_hash_table_lookup (self->queues, run_id);
      queue->writing = FALSE;
      queue->last_write_us = g_get_monotonic_time () - started;
      /* What the next writer may wait for is other callers' operations,
       * not the size of one caller's batch: a batch counts as one. */
      queue->batch_sizes[queue->next_size++ % RECENT_WRITES] = batch->len - batch_extra_ops (batch);
      run_queue_release (self, run_id, queue);
      for (guint i = 0; i < batch->len; i++)
        ((Op *) batch->pdata[i])->state = OP_DONE;
      g_cond_broadcast (&self->commit_cond);
    }
  g_mutex_unlock (&self->commit_mutex);
}

static gboolean
commit_op (AfsStore    *self,
           const char  *run_id,
           Op          *op,
           GError     **error)
{
  commit_ops (self, run_id, &op, 1);
  if (op->error != NULL)
    {
      g_propagate_error (error, op->error);
      return FALSE;
    }
  return op->result;
}

gboolean
afs_store_save (AfsStore    *self,
                const char  *parent_run_id,
                GPtrArray   *requests,
                GError     **error)
{
  Op op = { .requests = requests, .checked = TRUE };

  return commit_op (self, parent_run_id, &op, error);
}

static gboolean
update_failed (AfsStore    *self,
               const char  *run_id,
               GError      *local_error,
               GError     **error)
{
  if (g_error_matches (local_error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY))
    report_integrity (self, run_id, local_error);
  g_propagate_error (error, local_error);
  return FALSE;
}

gboolean
afs_store_update_status (AfsStore                *self,
                         const char              *parent_run_id,
                         const char              *request_id,
                         SubagentApprovalStatus   status,
                         const char              *reason,
                         const char              *actor,
                         GError                 **error)
{
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *path = NULL;
  Op op = { .request_id = request_id, .status = status, .reason = reason, .actor = actor, .checked = TRUE };
  guint slot = 0;

  path = afs_run_file_path (self->dir, parent_run_id);
  /* No file, no request: leave no lock file behind for a mistyped run. */
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return FALSE;

  /* A verdict, once in any version of the file, is final: a request seen
   * decided (or missing) there fails the compare-and-set without the lock,
   * so the racers that lose do not queue up behind the winner. */
  stored = read_requests (self, parent_run_id, TRUE, &local_error);
  if (stored == NULL)
    return update_failed (self, parent_run_id, g_steal_pointer (&local_error), error);
  if (!is_pending (stored, request_id, &slot))
    return FALSE;
  return commit_op (self, parent_run_id, &op, error);
}

gboolean
afs_store_update_batch (AfsStore                *self,
                        const char              *parent_run_id,
                        const char * const      *request_ids,
                        guint                    n_requests,
                        SubagentApprovalStatus   status,
                        const char              *reason,
                        const char              *actor,
                        gboolean                *won,
                        GError                 **error)
{
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *path = afs_run_file_path (self->dir, parent_run_id);
  g_autofree Op *ops = NULL;
  g_autofree Op **queued = NULL;
  g_autoptr(GHashTable) asked = g_hash_table_new (g_str_hash, g_str_equal);
  GError *failure = NULL;
  guint n_queued = 0;

  memset (won, 0, n_requests * sizeof (gboolean));
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return TRUE;
  /* As in afs_store_update_status(): what some version shows decided (or
   * does not hold) has lost already; an id given twice is asked once. */
  stored = read_requests (self, parent_run_id, TRUE, &local_error);
  if (stored == NULL)
    return update_failed (self, parent_run_id, g_steal_pointer (&local_error), error);
  ops = g_new0 (Op, n_requests);
  queued = g_new0 (Op *, n_requests);
  for (guint i = 0; i < n_requests; i++)
    {
      guint slot = 0;

      if (!g_hash_table_add (asked, (gpointer) request_ids[i]) || !is_pending (stored, request_ids[i], &slot))
        continue;
      ops[i] = (Op) { .request_id = request_ids[i], .status = status, .reason = reason, .actor = actor,
                      .follows = n_queued > 0, .checked = TRUE };
      queued[n_queued++] = &ops[i];
    }
  if (n_queued == 0)
    return TRUE;

  /* One write for all: each operation is still its own compare-and-set,
   * applied in order to the version read under the lock. */
  commit_ops (self, parent_run_id, queued, n_queued);
  for (guint i = 0; i < n_requests; i++)
    {
      if (ops[i].request_id == NULL)
        continue;
      won[i] = ops[i].error == NULL && ops[i].result;
      if (ops[i].error != NULL && failure == NULL)
        failure = g_steal_pointer (&ops[i].error);
      g_clear_error (&ops[i].error);
    }
  if (failure != NULL)
    {
      memset (won, 0, n_requests * sizeof (gboolean));
      g_propagate_error (error, failure);
      return FALSE;
    }
  return TRUE;
}

static int
compare_strings (const void *a,
                 const void *b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

GStrv
afs_store_list_runs (AfsStore  *self,
                     GError   **error)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GDir) dir = g_dir_open (self->dir, 0, error);
  const char *name;
  GStrv runs;

  if (dir == NULL)
    return NULL;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *run = NULL;

      if (afs_parse_run_file_name (name, &run))
        g_strv_builder_add (builder, run);
    }
  runs = g_strv_builder_end (builder);
  qsort (runs, g_strv_length (runs), sizeof (char *), compare_strings);
  return runs;
}

/* Whether a run's file may go: old enough, trusted, nothing pending. */
static gboolean
may_remove (AfsStore          *self,
            const char        *run_id,
            const struct stat *st,
            GTimeSpan          max_age)
{
  GTimeSpan age = g_get_real_time () - ((GTimeSpan) st->st_mtim.tv_sec * G_USEC_PER_SEC
                                        + st->st_mtim.tv_nsec / 1000);
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) error = NULL;

  if (age < max_age)
    return FALSE;
  stored = read_requests (self, run_id, TRUE, &error);
  if (stored == NULL)
    {
      if (g_error_matches (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY))
        report_integrity (self, run_id, error);
      else
        g_warning ("Keeping the approval queue of run %s: %s", run_id, error->message);
      return FALSE;
    }
  for (guint i = 0; i < stored->len; i++)
    if (subagent_approval_request_get_status (stored->pdata[i]) == SUBAGENT_APPROVAL_STATUS_PENDING)
      return FALSE;
  return TRUE;
}

/* Under the run's lock: removes the temp files dead writers left, then the
 * file if may_remove() says so, and the lock file of a run without a file.
 * Returns whether the run's file was removed. */
static gboolean
prune_run (AfsStore    *self,
           const char  *run_id,
           GPtrArray   *temp_names,
           GTimeSpan    max_age,
           GError     **error)
{
  g_autofree char *path = afs_run_file_path (self->dir, run_id);
  g_autofree char *lock_path = g_strconcat (path, ".lock", NULL);
  gboolean removed = FALSE;
  struct stat st;
  int lock_fd;

  lock_fd = afs_lock (self->dir, run_id, error);
  if (lock_fd < 0)
    return FALSE;

  /* With the lock held no writer of this run is between mkstemp and rename:
   * every temp file of the run seen before is a dead writer's. */
  for (guint i = 0; i < temp_names->len; i++)
    {
      g_autofree char *temp_path = g_build_filename (self->dir, temp_names->pdata[i], NULL);

      g_unlink (temp_path);
    }

  if (lstat (path, &st) == 0)
    {
      removed = may_remove (self, run_id, &st, max_age);
      if (!removed)
        {
          afs_unlock (lock_fd);
          return FALSE;
        }
      g_unlink (path);
      cache_forget (self, run_id);
    }
  /* Unlinking the lock while holding it is safe: afs_lock() retries when the
   * inode it won is no longer the one at the path. */
  g_unlink (lock_path);
  afs_unlock (lock_fd);
  return removed;
}

guint
afs_store_prune (AfsStore   *self,
                 GTimeSpan   max_age,
                 GError    **error)
{
  g_autoptr(GHashTable) runs = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GList) run_ids = NULL;
  const char *name;
  guint removed = 0;

  dir = g_dir_open (self->dir, 0, error);
  if (dir == NULL)
    return 0;

  /* run id → temp file names of that run */
  runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_ptr_array_unref);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      char *run = NULL;
      GPtrArray *temps;

      if (g_str_has_suffix (name, ".json.lock"))
        {
          g_autofree char *stem = g_strndup (name, strlen (name) - strlen (".lock"));

          if (!afs_parse_run_file_name (stem, &run))
            continue;
        }
      else if (!afs_parse_run_file_name (name, &run) && !afs_parse_temp_name (name, &run))
        continue;

      temps = g_hash_table_lookup (runs, run);
      if (temps == NULL)
        {
          temps = g_ptr_array_new_with_free_func (g_free);
          g_hash_table_insert (runs, g_strdup (run), temps);
        }
      if (name[0] == '.')
        g_ptr_array_add (temps, g_strdup (name));
      g_free (run);
    }

  run_ids = g_list_sort (g_hash_table_get_keys (runs), (GCompareFunc) g_strcmp0);
  for (GList *l = run_ids; l != NULL; l = l->next)
    {
      g_autoptr(GError) local_error = NULL;

      if (prune_run (self, l->data, g_hash_table_lookup (runs, l->data), max_age, &local_error))
        removed++;
      else if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return 0;
        }
    }
  if (removed > 0 && !sync_dir (self, error))
    return 0;
  return removed;
}

