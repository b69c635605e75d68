/* subagent-file-approval-sink.c: a SubagentApprovalSink on JSON files.
 *
 * One file per parent run, <root>/.subagent/approvals/<run>.json. Every change
 * is a read-modify-write under the run's exclusive flock, committed by an
 * atomic rename (see approval-file-io.c), so several processes — queues,
 * `subagentctl approvals`, a GUI — can share a queue. "changed" comes from
 * inotify on the directory: a verdict written by any process wakes a watcher
 * as soon as the rename lands, without polling.
 *
 * Run and request ids reach the methods here already validated by the
 * interface's wrappers ([A-Za-z0-9_-], 1–128), so they are safe as file names.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <glib-unix.h>

#include "approval-file-format.h"
#include "approval-file-io.h"
#include "subagent-file-approval-sink.h"

#define HMAC_KEY_ENV "SUBAGENT_APPROVAL_HMAC_KEY"

typedef struct {
  GWeakRef sink;
  GMainContext *context;
  GSource *source;
  int fd;
  GHashTable *runs;        /* run id → number of watch() calls; guarded by the sink's mutex */
} Watcher;

/* The last version of a run's file this sink read or wrote. Parsing a big
 * queue costs milliseconds (json-glib, then a digest per request); reading
 * the bytes and comparing them costs microseconds, so unchanged files are
 * never parsed twice. Equal bytes are the only test: inode numbers and
 * coarse mtimes repeat. */
typedef struct {
  GBytes *raw;
  GPtrArray *requests;     /* parsed from raw; shared, never changed */
} CacheEntry;

#define CACHE_MAX_RUNS 32

static void
cache_entry_free (gpointer data)
{
  CacheEntry *entry = data;

  g_bytes_unref (entry->raw);
  g_ptr_array_unref (entry->requests);
  g_free (entry);
}

struct _SubagentFileApprovalSink
{
  GObject parent_instance;

  GMutex mutex;
  /* Configuration: settable until the first operation freezes it. */
  char *root;
  GBytes *hmac_key;
  char *key_file;
  gboolean frozen;
  /* Derived when frozen, then read-only (so readable without the mutex). */
  char *dir;
  GBytes *key;

  GPtrArray *watchers;     /* of Watcher; guarded by mutex */
  GHashTable *cache;       /* run id → CacheEntry; guarded by mutex */
};

enum {
  PROP_0,
  PROP_ROOT,
  PROP_HMAC_KEY,
  PROP_KEY_FILE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void subagent_file_approval_sink_iface_init (SubagentApprovalSinkInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SubagentFileApprovalSink, subagent_file_approval_sink, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_APPROVAL_SINK,
                                                               subagent_file_approval_sink_iface_init))

/* Configuration */

static GBytes *
read_key_file (const char  *path,
               GError     **error)
{
  g_autofree char *data = NULL;
  gsize length = 0;
  struct stat st;
  int fd;

  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      int saved_errno = errno;

      if (fd >= 0)
        close (fd);
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "Could not open the HMAC key file %s: %s", path, g_strerror (saved_errno));
      return NULL;
    }
  close (fd);
  /* Checked on the file we are about to read; a key others can read is no key. */
  if (!S_ISREG (st.st_mode) || (st.st_mode & 0077) != 0)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "Refusing the HMAC key file %s: it has mode %04o, but must be a regular file "
                   "readable by its owner only (chmod 600 %s)",
                   path, (guint) (st.st_mode & 07777), path);
      return NULL;
    }
  if (!g_file_get_contents (path, &data, &length, error))
    return NULL;
  while (length > 0 && (data[length - 1] == '\n' || data[length - 1] == '\r'))
    length--;
  if (length == 0)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "The HMAC key file %s is empty; put a secret in it or unset key-file", path);
      return NULL;
    }
  return g_bytes_new (data, length);
}

/* Freezes the configuration on first use and resolves the directory and the
 * key. Afterwards self->dir and self->key never change. */
static gboolean
ensure_ready (SubagentFileApprovalSink  *self,
              GError                   **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  g_autoptr(GBytes) key = NULL;
  char *real_root;

  if (self->frozen)
    return TRUE;

  if (self->root == NULL)
    {
      g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                           "The approval-file sink has no root; set its “root” property to the workspace root");
      return FALSE;
    }
  real_root = realpath (self->root, NULL);
  if (real_root == NULL || !g_file_test (real_root, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                   "The approval-file root %s is not an existing directory", self->root);
      free (real_root);
      return FALSE;
    }

  if (self->hmac_key != NULL)
    {
      if (g_bytes_get_size (self->hmac_key) == 0)
        {
          free (real_root);
          g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                               "The approval-file “hmac-key” is empty; give a secret or NULL for none");
          return FALSE;
        }
      key = g_bytes_ref (self->hmac_key);
    }
  else if (self->key_file != NULL)
    {
      key = read_key_file (self->key_file, error);
      if (key == NULL)
        {
          free (real_root);
          return FALSE;
        }
    }
  else
    {
      const char *env = g_getenv (HMAC_KEY_ENV);

      if (env != NULL && env[0] != '\0')
        key = g_bytes_new (env, strlen (env));
    }

  self->dir = g_build_filename (real_root, ".subagent", "approvals", NULL);
  self->key = g_steal_pointer (&key);
  self->frozen = TRUE;
  free (real_root);
  return TRUE;
}

/* Checks (and with @create makes) the approvals directory. A directory that
 * resolves anywhere else — a symlink out of the root — is refused. */
static gboolean
check_dir (SubagentFileApprovalSink  *self,
           gboolean                   create,
           gboolean                  *exists,
           GError                   **error)
{
  char *real;
  gboolean inside;

  *exists = FALSE;
  if (!ensure_ready (self, error))
    return FALSE;
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
  *exists = TRUE;
  return TRUE;
}

/* Reading */

static void
report_integrity (SubagentFileApprovalSink *self,
                  const char               *run_id,
                  const GError             *error)
{
  g_warning ("Ignoring the approval queue of run %s: %s", run_id, error->message);
  subagent_approval_sink_emit_integrity_failed (SUBAGENT_APPROVAL_SINK (self), run_id, error->message);
}

static void
cache_store (SubagentFileApprovalSink *self,
             const char               *run_id,
             GBytes                   *raw,
             GPtrArray                *requests)
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
cache_forget (SubagentFileApprovalSink *self,
              const char               *run_id)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);

  g_hash_table_remove (self->cache, run_id);
}

static GPtrArray *
cache_lookup (SubagentFileApprovalSink *self,
              const char               *run_id,
              GBytes                   *raw)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  CacheEntry *entry = g_hash_table_lookup (self->cache, run_id);

  if (entry != NULL && g_bytes_equal (entry->raw, raw))
    return g_ptr_array_ref (entry->requests);
  return NULL;
}

/* The requests in the run's file, shared with the cache: never change the
 * array or its elements. Empty when there is no file; NULL with an error
 * otherwise (SUBAGENT_APPROVAL_ERROR_INTEGRITY: the file cannot be trusted). */
static GPtrArray *
read_requests (SubagentFileApprovalSink  *self,
               const char                *run_id,
               GError                   **error)
{
  g_autofree char *path = afs_run_file_path (self->dir, run_id);
  g_autoptr(GBytes) contents = NULL;
  GPtrArray *requests;
  gsize length = 0;
  const char *data;

  if (!afs_read (path, &contents, error))
    return NULL;
  if (contents == NULL)
    return g_ptr_array_new_with_free_func (g_object_unref);
  requests = cache_lookup (self, run_id, contents);
  if (requests != NULL)
    return requests;

  data = g_bytes_get_data (contents, &length);
  requests = afs_document_parse (run_id, data, length, self->key, error);
  if (requests == NULL)
    {
      g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  cache_store (self, run_id, contents, requests);
  return requests;
}

/* Replaces the run's file with @requests, which the cache keeps: the caller
 * must not change them afterwards. Call with the run's lock held. */
static gboolean
write_requests (SubagentFileApprovalSink  *self,
                const char                *run_id,
                GPtrArray                 *requests,
                GError                   **error)
{
  g_autoptr(GBytes) contents = afs_document_serialize (run_id, requests, self->key);

  if (!afs_commit (self->dir, run_id, contents, error))
    return FALSE;
  cache_store (self, run_id, contents, requests);
  return TRUE;
}

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

/* SubagentApprovalSink */

static GPtrArray *
sink_load (SubagentApprovalSink  *sink,
           const char            *parent_run_id,
           GError               **error)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (sink);
  g_autoptr(GError) local_error = NULL;
  gboolean exists;
  GPtrArray *requests;

  if (!check_dir (self, FALSE, &exists, error))
    return NULL;
  if (!exists)
    return g_ptr_array_new_with_free_func (g_object_unref);

  /* No lock: files are only ever replaced by rename, so a plain read sees
   * one complete version. */
  requests = read_requests (self, parent_run_id, &local_error);
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

static gboolean
sink_save (SubagentApprovalSink  *sink,
           const char            *parent_run_id,
           GPtrArray             *requests,
           GError               **error)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (sink);
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GPtrArray) merged = NULL;
  g_autoptr(GError) local_error = NULL;
  gboolean exists, changed = FALSE, ok = TRUE;
  int lock_fd;

  if (!check_dir (self, TRUE, &exists, error))
    return FALSE;

  lock_fd = afs_lock (self->dir, parent_run_id, error);
  if (lock_fd < 0)
    return FALSE;

  stored = read_requests (self, parent_run_id, &local_error);
  if (stored == NULL)
    {
      if (!g_error_matches (local_error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY))
        {
          afs_unlock (lock_fd);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      /* Nothing of an untrusted file is kept (so nothing of it gets signed):
       * the caller's requests replace it. */
      report_integrity (self, parent_run_id, local_error);
      stored = g_ptr_array_new_with_free_func (g_object_unref);
      changed = TRUE;
    }

  merged = share_requests (stored);

  for (guint i = 0; i < requests->len; i++)
    {
      SubagentApprovalRequest *given = requests->pdata[i];
      SubagentApprovalRequest *old;
      g_autofree char *old_text = NULL;
      g_autofree char *new_text = NULL;
      guint slot = 0;

      old = find_request (merged, subagent_approval_request_get_request_id (given), &slot);
      /* A stored verdict is final: whatever the caller holds loses. */
      if (old != NULL && subagent_approval_request_get_status (old) != SUBAGENT_APPROVAL_STATUS_PENDING)
        continue;
      if (old != NULL)
        {
          old_text = request_canonical (old);
          new_text = request_canonical (given);
          if (g_str_equal (old_text, new_text))
            continue;
          g_object_unref (merged->pdata[slot]);
          merged->pdata[slot] = subagent_approval_request_copy (given);
        }
      else
        g_ptr_array_add (merged, subagent_approval_request_copy (given));
      changed = TRUE;
    }

  if (changed)
    ok = write_requests (self, parent_run_id, merged, error);
  afs_unlock (lock_fd);
  return ok && (!changed || afs_sync_dir (self->dir, error));
}

/* The request's state in one consistent version of the file: whether it is
 * there and pending. NULL on error. */
static GPtrArray *
read_for_update (SubagentFileApprovalSink  *self,
                 const char                *run_id,
                 const char                *request_id,
                 gboolean                  *pending,
                 guint                     *slot,
                 GError                   **error)
{
  g_autoptr(GError) local_error = NULL;
  GPtrArray *stored = read_requests (self, run_id, &local_error);
  SubagentApprovalRequest *target;

  if (stored == NULL)
    {
      /* Rewriting an untrusted file would sign what someone else wrote. */
      if (g_error_matches (local_error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY))
        report_integrity (self, run_id, local_error);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  target = find_request (stored, request_id, slot);
  *pending = target != NULL && subagent_approval_request_get_status (target) == SUBAGENT_APPROVAL_STATUS_PENDING;
  return stored;
}

static gboolean
sink_update_status (SubagentApprovalSink    *sink,
                    const char              *parent_run_id,
                    const char              *request_id,
                    SubagentApprovalStatus   status,
                    const char              *reason,
                    const char              *actor,
                    GError                 **error)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (sink);
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GPtrArray) updated = NULL;
  g_autoptr(SubagentApprovalRequest) decided = NULL;
  g_autofree char *path = NULL;
  gboolean exists, pending = FALSE, ok;
  guint slot = 0;
  int lock_fd;

  if (!check_dir (self, FALSE, &exists, error))
    return FALSE;
  path = afs_run_file_path (self->dir, parent_run_id);
  /* No file, no request: leave no lock file behind for a mistyped run. */
  if (!exists || !g_file_test (path, G_FILE_TEST_EXISTS))
    return FALSE;

  /* A verdict, once in any version of the file, is final: a request seen
   * decided (or missing) there fails the compare-and-set without the lock,
   * so the racers that lose do not queue up behind the winner. */
  stored = read_for_update (self, parent_run_id, request_id, &pending, &slot, error);
  if (stored == NULL || !pending)
    return FALSE;
  g_clear_pointer (&stored, g_ptr_array_unref);

  lock_fd = afs_lock (self->dir, parent_run_id, error);
  if (lock_fd < 0)
    return FALSE;
  stored = read_for_update (self, parent_run_id, request_id, &pending, &slot, error);
  if (stored == NULL || !pending)
    {
      afs_unlock (lock_fd);
      return FALSE;
    }

  decided = subagent_approval_request_copy (stored->pdata[slot]);
  if (!subagent_approval_request_transition (decided, status, reason, actor))
    {
      afs_unlock (lock_fd);
      return FALSE;
    }
  updated = share_requests (stored);
  g_object_unref (updated->pdata[slot]);
  updated->pdata[slot] = g_steal_pointer (&decided);
  ok = write_requests (self, parent_run_id, updated, error);
  afs_unlock (lock_fd);
  return ok && afs_sync_dir (self->dir, error);
}

static gboolean
run_json_name (const char  *name,
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

static int
compare_strings (const void *a,
                 const void *b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

static GStrv
sink_list_runs (SubagentApprovalSink  *sink,
                GError               **error)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (sink);
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GDir) dir = NULL;
  const char *name;
  gboolean exists;
  GStrv runs;

  if (!check_dir (self, FALSE, &exists, error))
    return NULL;
  if (exists)
    {
      dir = g_dir_open (self->dir, 0, error);
      if (dir == NULL)
        return NULL;
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *run = NULL;

          if (run_json_name (name, &run))
            g_strv_builder_add (builder, run);
        }
    }
  runs = g_strv_builder_end (builder);
  qsort (runs, g_strv_length (runs), sizeof (char *), compare_strings);
  return runs;
}

/* Whether a run's file may go: old enough, trusted, nothing pending. */
static gboolean
may_remove (SubagentFileApprovalSink *self,
            const char               *run_id,
            const struct stat        *st,
            GTimeSpan                 max_age)
{
  GTimeSpan age = g_get_real_time () - ((GTimeSpan) st->st_mtim.tv_sec * G_USEC_PER_SEC
                                        + st->st_mtim.tv_nsec / 1000);
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) error = NULL;

  if (age < max_age)
    return FALSE;
  stored = read_requests (self, run_id, &error);
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
prune_run (SubagentFileApprovalSink  *self,
           const char                *run_id,
           GPtrArray                 *temp_names,
           GTimeSpan                  max_age,
           GError                   **error)
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

static guint
sink_prune_stale (SubagentApprovalSink  *sink,
                  GTimeSpan              max_age,
                  GError               **error)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (sink);
  g_autoptr(GHashTable) runs = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GList) run_ids = NULL;
  const char *name;
  gboolean exists;
  guint removed = 0;

  if (!check_dir (self, FALSE, &exists, error))
    return 0;
  if (!exists)
    return 0;
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

          if (!run_json_name (stem, &run))
            continue;
        }
      else if (!run_json_name (name, &run) && !afs_parse_temp_name (name, &run))
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
  if (removed > 0 && !afs_sync_dir (self->dir, error))
    return 0;
  return removed;
}

/* Watching */

static void
watcher_free (gpointer data)
{
  Watcher *watcher = data;

  g_weak_ref_clear (&watcher->sink);
  if (watcher->fd >= 0)
    close (watcher->fd);
  g_main_context_unref (watcher->context);
  g_hash_table_unref (watcher->runs);
  g_free (watcher);
}

static void
collect_all_runs (Watcher   *watcher,
                  GPtrArray *out)
{
  GHashTableIter iter;
  gpointer run;

  g_hash_table_iter_init (&iter, watcher->runs);
  while (g_hash_table_iter_next (&iter, &run, NULL))
    if (!g_ptr_array_find_with_equal_func (out, run, g_str_equal, NULL))
      g_ptr_array_add (out, g_strdup (run));
}

static gboolean
on_inotify (int          fd,
            GIOCondition condition,
            gpointer     user_data)
{
  Watcher *watcher = user_data;
  g_autoptr(SubagentFileApprovalSink) self = g_weak_ref_get (&watcher->sink);
  g_autoptr(GPtrArray) changed = g_ptr_array_new_with_free_func (g_free);
  char buf[8192] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  ssize_t n;

  if (self == NULL)
    return G_SOURCE_REMOVE;

  g_mutex_lock (&self->mutex);
  while ((n = read (fd, buf, sizeof buf)) > 0)
    for (char *p = buf; p < buf + n;)
      {
        const struct inotify_event *event = (const struct inotify_event *) p;
        g_autofree char *run = NULL;

        p += sizeof (struct inotify_event) + event->len;
        if (event->mask & (IN_Q_OVERFLOW | IN_IGNORED))
          collect_all_runs (watcher, changed);
        else if (event->len > 0 && run_json_name (event->name, &run)
                 && g_hash_table_contains (watcher->runs, run)
                 && !g_ptr_array_find_with_equal_func (changed, run, g_str_equal, NULL))
          g_ptr_array_add (changed, g_steal_pointer (&run));
      }
  g_mutex_unlock (&self->mutex);

  for (guint i = 0; i < changed->len; i++)
    subagent_approval_sink_emit_changed (SUBAGENT_APPROVAL_SINK (self), changed->pdata[i]);
  return G_SOURCE_CONTINUE;
}

static void
sink_watch (SubagentApprovalSink *sink,
            const char           *parent_run_id)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (sink);
  g_autoptr(GError) error = NULL;
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();
  g_autoptr(GMutexLocker) locker = NULL;
  Watcher *watcher = NULL;
  gboolean exists;
  guint count;

  if (!check_dir (self, TRUE, &exists, &error))
    {
      g_warning ("Cannot watch approvals: %s", error->message);
      return;
    }

  locker = g_mutex_locker_new (&self->mutex);
  for (guint i = 0; i < self->watchers->len && watcher == NULL; i++)
    if (((Watcher *) self->watchers->pdata[i])->context == context)
      watcher = self->watchers->pdata[i];

  if (watcher == NULL)
    {
      int fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);

      /* Every way a run's file can change: our renames, deletion by prune,
       * and a tool that rewrites or moves it. */
      if (fd < 0 || inotify_add_watch (fd, self->dir,
                                       IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE | IN_ONLYDIR) < 0)
        {
          g_warning ("Cannot watch %s with inotify: %s", self->dir, g_strerror (errno));
          if (fd >= 0)
            close (fd);
          return;
        }
      watcher = g_new0 (Watcher, 1);
      g_weak_ref_init (&watcher->sink, self);
      watcher->context = g_main_context_ref (context);
      watcher->fd = fd;
      watcher->runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      watcher->source = g_unix_fd_source_new (fd, G_IO_IN);
      g_source_set_static_name (watcher->source, "[subagent] approval-file watch");
      g_source_set_callback (watcher->source, G_SOURCE_FUNC (on_inotify), watcher, watcher_free);
      g_ptr_array_add (self->watchers, watcher);
      g_source_attach (watcher->source, context);
    }
  count = GPOINTER_TO_UINT (g_hash_table_lookup (watcher->runs, parent_run_id));
  g_hash_table_insert (watcher->runs, g_strdup (parent_run_id), GUINT_TO_POINTER (count + 1));
}

static void
sink_unwatch (SubagentApprovalSink *sink,
              const char           *parent_run_id)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (sink);
  GMainContext *context = g_main_context_get_thread_default ();
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);

  if (context == NULL)
    context = g_main_context_default ();
  for (guint i = 0; i < self->watchers->len; i++)
    {
      Watcher *watcher = self->watchers->pdata[i];
      guint count;

      if (watcher->context != context)
        continue;
      count = GPOINTER_TO_UINT (g_hash_table_lookup (watcher->runs, parent_run_id));
      if (count > 1)
        g_hash_table_insert (watcher->runs, g_strdup (parent_run_id), GUINT_TO_POINTER (count - 1));
      else
        g_hash_table_remove (watcher->runs, parent_run_id);
      /* The last run gone: close the inotify instance too. */
      if (g_hash_table_size (watcher->runs) == 0)
        {
          g_source_destroy (watcher->source);
          g_source_unref (watcher->source);
          g_ptr_array_remove_index_fast (self->watchers, i);
        }
      return;
    }
}

static void
subagent_file_approval_sink_iface_init (SubagentApprovalSinkInterface *iface)
{
  iface->save = sink_save;
  iface->load = sink_load;
  iface->update_status = sink_update_status;
  iface->prune_stale = sink_prune_stale;
  iface->list_runs = sink_list_runs;
  iface->watch = sink_watch;
  iface->unwatch = sink_unwatch;
}

/* GObject */

static void
set_config (SubagentFileApprovalSink *self,
            guint                     prop_id,
            const GValue             *value)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);

  if (self->frozen)
    {
      g_critical ("SubagentFileApprovalSink: “%s” can only be set before the sink is first used",
                  properties[prop_id]->name);
      return;
    }
  switch (prop_id)
    {
    case PROP_ROOT:
      g_free (self->root);
      self->root = g_value_dup_string (value);
      break;
    case PROP_HMAC_KEY:
      g_clear_pointer (&self->hmac_key, g_bytes_unref);
      self->hmac_key = g_value_dup_boxed (value);
      break;
    case PROP_KEY_FILE:
      g_free (self->key_file);
      self->key_file = g_value_dup_string (value);
      break;
    default:
      g_assert_not_reached ();
    }
}

static void
subagent_file_approval_sink_set_property (GObject      *object,
                                          guint         prop_id,
                                          const GValue *value,
                                          GParamSpec   *pspec)
{
  if (prop_id > PROP_0 && prop_id < N_PROPS)
    set_config (SUBAGENT_FILE_APPROVAL_SINK (object), prop_id, value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
subagent_file_approval_sink_get_property (GObject    *object,
                                          guint       prop_id,
                                          GValue     *value,
                                          GParamSpec *pspec)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (object);
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);

  switch (prop_id)
    {
    case PROP_ROOT:
      g_value_set_string (value, self->root);
      break;
    case PROP_HMAC_KEY:
      g_value_set_boxed (value, self->hmac_key);
      break;
    case PROP_KEY_FILE:
      g_value_set_string (value, self->key_file);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_file_approval_sink_dispose (GObject *object)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (object);
  g_autoptr(GPtrArray) watchers = NULL;

  g_mutex_lock (&self->mutex);
  watchers = g_steal_pointer (&self->watchers);
  self->watchers = g_ptr_array_new ();
  g_mutex_unlock (&self->mutex);

  /* Destroying the source frees its Watcher (the source's callback data). */
  for (guint i = 0; i < watchers->len; i++)
    {
      GSource *source = ((Watcher *) watchers->pdata[i])->source;

      g_source_destroy (source);
      g_source_unref (source);
    }

  G_OBJECT_CLASS (subagent_file_approval_sink_parent_class)->dispose (object);
}

static void
subagent_file_approval_sink_finalize (GObject *object)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (object);

  g_ptr_array_unref (self->watchers);
  g_hash_table_unref (self->cache);
  g_free (self->root);
  g_clear_pointer (&self->hmac_key, g_bytes_unref);
  g_free (self->key_file);
  g_free (self->dir);
  g_clear_pointer (&self->key, g_bytes_unref);
  g_mutex_clear (&self->mutex);

  G_OBJECT_CLASS (subagent_file_approval_sink_parent_class)->finalize (object);
}

static void
subagent_file_approval_sink_class_init (SubagentFileApprovalSinkClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->set_property = subagent_file_approval_sink_set_property;
  object_class->get_property = subagent_file_approval_sink_get_property;
  object_class->dispose = subagent_file_approval_sink_dispose;
  object_class->finalize = subagent_file_approval_sink_finalize;

  /**
   * SubagentFileApprovalSink:root: (nullable)
   *
   * The workspace root; queues live in `ROOT/.subagent/approvals/`. Hosts
   * that get the sink from a #SubagentPluginRegistry set it right after
   * creating it: like the other properties it can be set until the sink is
   * first used, and is fixed from then on.
   */
  properties[PROP_ROOT] =
    g_param_spec_string ("root", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentFileApprovalSink:hmac-key: (nullable)
   *
   * The HMAC-SHA256 key that signs and verifies every file. When %NULL,
   * #SubagentFileApprovalSink:key-file is read, else the environment
   * variable `SUBAGENT_APPROVAL_HMAC_KEY` (unset or empty: files are not
   * signed).
   */
  properties[PROP_HMAC_KEY] =
    g_param_spec_boxed ("hmac-key", NULL, NULL, G_TYPE_BYTES,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentFileApprovalSink:key-file: (nullable)
   *
   * A file holding the HMAC key (one trailing newline is ignored). It must
   * be a regular file of mode 0600 (or stricter): otherwise every operation
   * fails with %SUBAGENT_APPROVAL_ERROR_INTEGRITY saying so.
   */
  properties[PROP_KEY_FILE] =
    g_param_spec_string ("key-file", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_file_approval_sink_class_finalize (SubagentFileApprovalSinkClass *klass)
{
}

static void
subagent_file_approval_sink_init (SubagentFileApprovalSink *self)
{
  g_mutex_init (&self->mutex);
  self->watchers = g_ptr_array_new ();
  self->cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, cache_entry_free);
}

/**
 * subagent_file_approval_sink_register:
 * @module: the plugin's module
 * @error: return location for a #GError
 *
 * Registers #SubagentFileApprovalSink and provides it as the `file` backend
 * of #SubagentApprovalSink.
 *
 * Returns: %TRUE
 */
gboolean
subagent_file_approval_sink_register (SubagentPluginModule  *module,
                                      GError               **error)
{
  subagent_file_approval_sink_register_type (G_TYPE_MODULE (module));
  subagent_plugin_module_provide (module, "file", SUBAGENT_TYPE_FILE_APPROVAL_SINK);
  return TRUE;
}

SUBAGENT_PLUGIN_DEFINE ("approval-file", "0.1.0", "LGPL-2.1-or-later",
                        "Approval queues in JSON files: flock, atomic rename, HMAC-SHA256, inotify",
                        subagent_file_approval_sink_register)
