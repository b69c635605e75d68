/* approval-pg-store.c: the approval queues of a PostgreSQL database, one row
 * per request in <schema>.approval_requests.
 *
 * Every write is one statement, so the server's row locks do what the file
 * store's flock does: save is an INSERT … ON CONFLICT that only replaces a
 * pending row (a stored verdict always wins), and a verdict is one UPDATE
 * from pending at the version read, which sends pg_notify only when it
 * won (delivered at commit). A statement whose reply is lost with its
 * connection is run again on a new one, so each is safe to repeat: save
 * writes the same rows again (or nothing), and a verdict carries a random
 * token, stored with it, by which a repeat recognises its own win.
 *
 * Rows are signed one by one (approval-pg-sign.c); a run with any row that
 * does not verify loads as empty, as an untrusted file does.
 *
 * A run is read in full once; after that a reading fetches only the rows
 * written since the previous one (each row names its last writer's
 * transaction), so a waiter woken by every verdict of a long run does not
 * read, convert and compare the whole run each time.
 *
 * This file holds the store, its statements, the cache and the reads;
 * saves are in approval-pg-save.c, verdicts in approval-pg-decide.c,
 * listing and pruning in approval-pg-prune.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "approval-pg-combine.h"
#include "approval-pg-conn.h"
#include "approval-pg-schema.h"
#include "approval-pg-sign.h"
#include "approval-pg-store.h"
#include "approval-pg-store-private.h"

#define CACHE_MAX_RUNS 32

/* The parameters each statement takes: all text, typed by casts in it. */
static const int sql_n_params[N_SQL] = { 2, 3, 2, 8, 2, 4, 0, 1, 3 };

/* What load() parsed last per run: a row whose text, signature and status
 * are unchanged is not parsed, verified and hashed again. Rows are shared
 * (reference counted) between a run's successive readings. */
struct _CachedRow
{
  gint64 id;               /* the table's, which orders a run's requests */
  char *document;
  char *signature;         /* nullable */
  char *status;
  char *version;
  SubagentApprovalRequest *request;   /* shared, never changed */
};

static void
cached_row_clear (gpointer data)
{
  CachedRow *row = data;

  g_free (row->document);
  g_free (row->signature);
  g_free (row->status);
  g_free (row->version);
  g_clear_object (&row->request);
}

void
apg_cached_row_release (gpointer data)
{
  g_atomic_rc_box_release_full (data, cached_row_clear);
}

/* A run as one reading saw it. @horizon is the oldest transaction that
 * reading's snapshot did not see finished (pg_snapshot_xmin()): whatever
 * changed after it was written by a transaction at or above it, which is
 * all the next reading fetches. Immutable once cached. */
typedef struct {
  GHashTable *rows;        /* request id → CachedRow */
  char *horizon;           /* an xid8, as text */
} CachedRun;

static void
cached_run_clear (gpointer data)
{
  CachedRun *run = data;

  g_clear_pointer (&run->rows, g_hash_table_unref);
  g_free (run->horizon);
}

static void
cached_run_release (gpointer data)
{
  g_atomic_rc_box_release_full (data, cached_run_clear);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CachedRun, cached_run_release)

gboolean
apg_schema_name_is_valid (const char *schema)
{
  if (schema == NULL || !(g_ascii_isalpha (schema[0]) || schema[0] == '_') || strlen (schema) > 48)
    return FALSE;
  for (const char *p = schema; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '_')
      return FALSE;
  return TRUE;
}


ApgStore *
apg_store_new (const char       *conninfo,
               const char       *schema,
               GBytes           *key,
               guint             max_connections,
               ApgIntegrityFunc  report,
               gpointer          report_data)
{
  ApgStore *self = g_new0 (ApgStore, 1);

  g_return_val_if_fail (apg_schema_name_is_valid (schema), NULL);

  self->schema = g_strdup (schema);
  self->channel = g_strconcat ("subagent_approvals:", schema, NULL);
  self->key = key ? g_bytes_ref (key) : NULL;
  self->report = report;
  self->report_data = report_data;
  self->conninfo = g_strdup (conninfo);
  self->pool = apg_pool_new (conninfo, max_connections);
  self->saves = apg_combiner_new (apg_store_save_queued, apg_store_same_save_group, self);
  self->verdicts = apg_combiner_new (apg_store_decide_queued, apg_store_same_verdict_group, self);
  g_mutex_init (&self->mutex);
  self->cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, cached_run_release);

  /* $1 run, $2 the horizon of the reading this one continues ('0': none).
   * Always one row at least (the horizon and the run's row count), then
   * the rows written at or after $2, in one snapshot. */
  self->sql[SQL_LOAD] = apg_with_schema (schema,
    "WITH meta AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon,"
    "  (SELECT count(*) FROM @S@.approval_requests WHERE run_id = $1) AS total)"
    " SELECT meta.horizon, meta.total, r.id, r.request_id, r.status, r.document::text, r.signature, r.version"
    " FROM meta LEFT JOIN @S@.approval_requests r ON r.run_id = $1 AND r.writer >= $2::xid8"
    " ORDER BY r.id");
  /* $1 run, $2 a JSON array of {r: request id, s: status, d: document,
   * g: signature}, $3 the channel. Returns the rows it wrote (OWN_COLUMNS). */
  self->sql[SQL_SAVE] = apg_with_schema (schema,
    "WITH input AS ("
    "  SELECT e->>'r' AS request_id, e->>'s' AS status, e->'d' AS document, e->>'g' AS signature, n"
    "  FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS x(e, n)),"
    " written AS ("
    "  INSERT INTO @S@.approval_requests AS t (run_id, request_id, status, document, signature)"
    "  SELECT $1, request_id, status, document, signature FROM input ORDER BY n"
    "  ON CONFLICT (run_id, request_id) DO UPDATE"
    "   SET status = excluded.status, document = excluded.document, signature = excluded.signature,"
    "       version = t.version + 1, updated_at = now()"
    "   WHERE t.status = 'pending'"
    "     AND (t.document, t.signature) IS DISTINCT FROM (excluded.document, excluded.signature)"
    "  RETURNING t.id, t.request_id, t.status, t.document::text AS document, t.signature, t.version)"
    " SELECT w.id, w.request_id, w.status, w.document, w.signature, w.version,"
    "  (SELECT count(*) FROM (SELECT pg_notify($3, $1) FROM (SELECT 1 FROM written LIMIT 1) x) n)"
    " FROM written w");
  self->sql[SQL_READ_ONE] = apg_with_schema (schema,
    "SELECT status, document::text, signature, version, verdict_token FROM @S@.approval_requests "
    "WHERE run_id = $1 AND request_id = $2");
  /* $1 run, $2 request, $3 status, $4 document, $5 signature, $6 token,
   * $7 the version read, $8 the channel. Returns the row (OWN_COLUMNS) when
   * it won. */
  self->sql[SQL_DECIDE] = apg_with_schema (schema,
    "WITH won AS ("
    "  UPDATE @S@.approval_requests"
    "  SET status = $3, document = $4::jsonb, signature = $5, verdict_token = $6,"
    "      version = version + 1, updated_at = now()"
    "  WHERE run_id = $1 AND request_id = $2 AND status = 'pending' AND version = $7::bigint"
    "  RETURNING id, request_id, status, document::text AS document, signature, version)"
    " SELECT won.id, won.request_id, won.status, won.document, won.signature, won.version"
    " FROM won, LATERAL (SELECT pg_notify($8, $1)) n");
  /* $1 run, $2 a text[] of request ids. */
  self->sql[SQL_READ_MANY] = apg_with_schema (schema,
    "SELECT request_id, status, document::text, signature, version, verdict_token FROM @S@.approval_requests "
    "WHERE run_id = $1 AND request_id = ANY($2::text[])");
  /* $1 run, $2 a JSON array of {r: request id, s: status, d: document,
   * g: signature, v: the version read}, $3 token, $4 the channel: every
   * verdict of a batch in one statement, each its own compare-and-set.
   * Returns the rows that won (OWN_COLUMNS). */
  self->sql[SQL_DECIDE_MANY] = apg_with_schema (schema,
    "WITH input AS ("
    "  SELECT e->>'r' AS request_id, e->>'s' AS status, e->'d' AS document, e->>'g' AS signature,"
    "         (e->>'v')::bigint AS version"
    "  FROM jsonb_array_elements($2::jsonb) AS x(e)),"
    " won AS ("
    "  UPDATE @S@.approval_requests AS t"
    "  SET status = input.status, document = input.document, signature = input.signature,"
    "      verdict_token = $3, version = t.version + 1, updated_at = now()"
    "  FROM input"
    "  WHERE t.run_id = $1 AND t.request_id = input.request_id AND t.status = 'pending'"
    "    AND t.version = input.version"
    "  RETURNING t.id, t.request_id, t.status, t.document::text AS document, t.signature, t.version)"
    " SELECT won.id, won.request_id, won.status, won.document, won.signature, won.version FROM won,"
    "  LATERAL (SELECT count(*) FROM (SELECT pg_notify($4, $1) FROM (SELECT 1 FROM won LIMIT 1) w) n) c");
  self->sql[SQL_LIST] = apg_with_schema (schema,
    "SELECT run_id FROM @S@.approval_requests GROUP BY run_id ORDER BY run_id COLLATE \"C\"");
  /* $1 the age in microseconds. The server's clock, shared by every host. */
  self->sql[SQL_PRUNABLE] = apg_with_schema (schema,
    "SELECT run_id FROM @S@.approval_requests GROUP BY run_id"
    " HAVING bool_and(status <> 'pending') AND max(updated_at) <= now() - $1::bigint * interval '1 microsecond'"
    " ORDER BY run_id COLLATE \"C\"");
  /* $1 run, $2 age, $3 channel: rechecked in the statement, so a request
   * added or a row touched since the run was looked at keeps it. */
  self->sql[SQL_PRUNE] = apg_with_schema (schema,
    "WITH gone AS ("
    "  DELETE FROM @S@.approval_requests WHERE run_id = $1 AND NOT EXISTS ("
    "   SELECT 1 FROM @S@.approval_requests WHERE run_id = $1"
    "   AND (status = 'pending' OR updated_at > now() - $2::bigint * interval '1 microsecond'))"
    "  RETURNING 1)"
    " SELECT (SELECT count(*) FROM gone),"
    "  (SELECT count(*) FROM (SELECT pg_notify($3, $1) FROM (SELECT 1 FROM gone LIMIT 1) g) n)");
  return self;
}

void
apg_store_free (ApgStore *self)
{
  apg_combiner_free (self->saves);
  apg_combiner_free (self->verdicts);
  apg_pool_free (self->pool);
  memset (self->conninfo, 0, strlen (self->conninfo));
  g_free (self->conninfo);
  g_hash_table_unref (self->cache);
  g_mutex_clear (&self->mutex);
  g_clear_pointer (&self->key, g_bytes_unref);
  g_free (self->schema);
  g_free (self->channel);
  for (guint i = 0; i < N_SQL; i++)
    g_free (self->sql[i]);
  g_free (self);
}

const char *
apg_store_get_conninfo (ApgStore *self)
{
  return self->conninfo;
}

const char *
apg_store_get_channel (ApgStore *self)
{
  return self->channel;
}

static gboolean
result_ok (PGresult *result)
{
  ExecStatusType status = result ? PQresultStatus (result) : PGRES_FATAL_ERROR;

  return status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK;
}

static gboolean
result_has_state (PGresult   *result,
                  const char *sqlstate)
{
  return result != NULL && g_strcmp0 (PQresultErrorField (result, PG_DIAG_SQLSTATE), sqlstate) == 0;
}

/* Sets *step and @error from a failed @result, which it frees. */
static void
exec_failed (ApgConn     *conn,
             PGresult    *result,
             const char  *what,
             Step        *step,
             GError     **error)
{
  /* Two batches of verdicts on the same rows may lock them in opposite
   * orders: the server then aborts one (40P01), which only has to run
   * again. */
  if (result_has_state (result, "40P01") || result_has_state (result, "40001"))
    *step = STEP_RETRY;
  else
    *step = apg_connection_lost (conn->pg, result) ? STEP_LOST : STEP_FAILED;
  apg_set_error (error, conn->pg, result, what);
  PQclear (result);
}

/* Runs the statement @which (preparing it on @conn first if it is not yet);
 * NULL with *step set when it failed. */
PGresult *
apg_store_exec (ApgStore           *self,
                ApgConn            *conn,
                Sql                 which,
                const char * const *params,
                const char         *what,
                Step               *step,
                GError            **error)
{
  guint64 bit = G_GUINT64_CONSTANT (1) << which;
  char name[16];
  PGresult *result;

  g_snprintf (name, sizeof name, "apg_%d", (int) which);
  for (guint attempt = 0;; attempt++)
    {
      if (!(conn->prepared & bit))
        {
          result = PQprepare (conn->pg, name, self->sql[which], sql_n_params[which], NULL);
          if (!result_ok (result))
            {
              exec_failed (conn, result, what, step, error);
              return NULL;
            }
          PQclear (result);
          conn->prepared |= bit;
        }
      result = PQexecPrepared (conn->pg, name, sql_n_params[which], params, NULL, NULL, 0);
      if (result_ok (result))
        return result;
      /* Gone from the session behind our back (a pooler between us and
       * the server, DISCARD): prepared again, once. */
      if (attempt == 0 && result_has_state (result, "26000"))
        {
          PQclear (result);
          conn->prepared &= ~bit;
          continue;
        }
      exec_failed (conn, result, what, step, error);
      return NULL;
    }
}

/* Runs @op on a pooled connection, and again on a new one while the server
 * is away (or on the same pool when the server undid it), with backoff,
 * until APG_RECONNECT_DEADLINE_US. */
gboolean
apg_store_run_op (ApgStore  *self,
                  StoreOp    op,
                  gpointer   data,
                  GError   **error)
{
  gint64 deadline = g_get_monotonic_time () + APG_RECONNECT_DEADLINE_US;
  gint64 delay = APG_BACKOFF_FIRST_US;

  for (;;)
    {
      g_autoptr(GError) local_error = NULL;
      ApgConn *conn = apg_pool_acquire (self->pool, error);
      gboolean ready;
      Step step;

      if (conn == NULL)
        return FALSE;
      g_mutex_lock (&self->mutex);
      ready = self->schema_ready;
      g_mutex_unlock (&self->mutex);
      if (!ready)
        {
          gboolean lost = FALSE;

          step = apg_schema_migrate (conn->pg, self->schema, &lost, &local_error) ? STEP_DONE
                 : lost ? STEP_LOST : STEP_FAILED;
        }
      else
        step = STEP_DONE;
      if (step == STEP_DONE)
        {
          g_mutex_lock (&self->mutex);
          self->schema_ready = TRUE;
          g_mutex_unlock (&self->mutex);
          step = op (self, conn, data, &local_error);
        }
      apg_pool_release (self->pool, conn, step == STEP_LOST);
      if (step == STEP_DONE)
        return TRUE;
      if (step == STEP_FAILED || g_get_monotonic_time () + delay > deadline)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      g_debug ("%s, retrying: %s", step == STEP_LOST ? "Approvals database connection lost" : "Statement undone",
               local_error->message);
      g_usleep (delay);
      delay = apg_backoff_next (delay);
    }
}

void
apg_store_report_integrity (ApgStore     *self,
                            const char   *run_id,
                            const GError *error)
{
  self->report (run_id, error, self->report_data);
}

/* The signature a row holding @document gets: the HMAC of its canonical
 * JSON, or NULL without a key. */
char *
apg_store_sign_document (ApgStore *self,
                         JsonNode *document)
{
  g_autofree char *canonical = NULL;

  if (self->key == NULL)
    return NULL;
  canonical = subagent_json_to_canonical_string (document);
  return apg_sign (self->key, canonical);
}

/* The request a row holds, if it verifies: its signature (with a key), its
 * action digest, and that it names the row's run, request and status. */
SubagentApprovalRequest *
apg_store_verify_row (ApgStore    *self,
                      const char  *run_id,
                      const char  *request_id,
                      const char  *status,
                      const char  *document,
                      const char  *signature,
                      GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(SubagentApprovalRequest) request = NULL;
  g_autoptr(GError) local_error = NULL;
  JsonNode *root;

  if (!json_parser_load_from_data (parser, document, -1, &local_error)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "request %s: the document is not a JSON object", request_id);
      return NULL;
    }
  root = json_parser_get_root (parser);
  if (self->key != NULL)
    {
      g_autofree char *canonical = subagent_json_to_canonical_string (root);

      if (signature == NULL)
        {
          g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                       "request %s is not signed but an HMAC key is set", request_id);
          return NULL;
        }
      if (!apg_verify (self->key, canonical, signature))
        {
          g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                       "the signature of request %s does not match (row modified, or signed with another key)",
                       request_id);
          return NULL;
        }
    }
  request = subagent_approval_request_new_from_json (json_node_get_object (root), &local_error);
  if (request == NULL)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "request %s: %s", request_id, local_error->message);
      return NULL;
    }
  if (g_strcmp0 (subagent_approval_request_get_parent_run_id (request), run_id) != 0
      || g_strcmp0 (subagent_approval_request_get_request_id (request), request_id) != 0
      || g_strcmp0 (subagent_approval_status_to_string (subagent_approval_request_get_status (request)), status) != 0)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "the row of request %s names another run, request or status than its document", request_id);
      return NULL;
    }
  return g_steal_pointer (&request);
}

/* load */

typedef struct {
  const char *run_id;
  GPtrArray *requests;     /* shared requests (from the cache), out */
} LoadOp;

static CachedRun *
cache_run_of (ApgStore   *self,
              const char *run_id)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  CachedRun *run = g_hash_table_lookup (self->cache, run_id);

  return run ? g_atomic_rc_box_acquire (run) : NULL;
}

static void
cache_store_run (ApgStore   *self,
                 const char *run_id,
                 CachedRun  *run)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);

  if (g_hash_table_size (self->cache) >= CACHE_MAX_RUNS && !g_hash_table_contains (self->cache, run_id))
    g_hash_table_remove_all (self->cache);
  g_hash_table_insert (self->cache, g_strdup (run_id), g_atomic_rc_box_acquire (run));
}

void
apg_store_cache_forget_run (ApgStore   *self,
                            const char *run_id)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);

  g_hash_table_remove (self->cache, run_id);
}

/* The rows this store wrote itself. Each write statement returns what it
 * stored (OWN_COLUMNS: id, request_id, status, document::text, signature,
 * version), and that text goes into the cache with the request the store
 * built and signed for it: the next reading, which fetches those rows
 * again (a transaction at or above the cached horizon wrote them), finds
 * them unchanged instead of parsing and verifying what this process wrote.
 * What the server returns for our own write is trusted as far as its "won"
 * is; any other text read later is verified as usual. */
CachedRow *
apg_own_row_new (PGresult                *result,
                 int                      r,
                 SubagentApprovalRequest *request)
{
  CachedRow *row = g_atomic_rc_box_new0 (CachedRow);

  row->id = g_ascii_strtoll (PQgetvalue (result, r, 0), NULL, 10);
  row->status = g_strdup (PQgetvalue (result, r, 2));
  row->document = g_strdup (PQgetvalue (result, r, 3));
  row->signature = PQgetisnull (result, r, 4) ? NULL : g_strdup (PQgetvalue (result, r, 4));
  row->version = g_strdup (PQgetvalue (result, r, 5));
  row->request = request;
  return row;
}

/* Puts @rows (request id → CachedRow, written by this store) into the
 * cached reading of @run_id, if there is one. The horizon stays, so the
 * next reading still fetches them (and whatever overwrote them). A row the
 * cache already holds in the same or a later version, or as another row
 * (deleted and saved again), is left as it is: only a reading replaces
 * it. */
void
apg_store_cache_merge_own (ApgStore   *self,
                           const char *run_id,
                           GHashTable *rows)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  CachedRun *run = g_hash_table_lookup (self->cache, run_id);
  CachedRun *merged;
  GHashTableIter iter;
  gpointer key, value;

  if (run == NULL || g_hash_table_size (rows) == 0)
    return;
  merged = g_atomic_rc_box_new0 (CachedRun);
  merged->horizon = g_strdup (run->horizon);
  merged->rows = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, apg_cached_row_release);
  g_hash_table_iter_init (&iter, run->rows);
  while (g_hash_table_iter_next (&iter, &key, &value))
    g_hash_table_insert (merged->rows, g_strdup (key), g_atomic_rc_box_acquire (value));
  g_hash_table_iter_init (&iter, rows);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      CachedRow *own = value;
      CachedRow *cached = g_hash_table_lookup (merged->rows, key);

      if (cached != NULL
          && (cached->id != own->id
              || g_ascii_strtoll (cached->version, NULL, 10) >= g_ascii_strtoll (own->version, NULL, 10)))
        continue;
      g_hash_table_replace (merged->rows, g_strdup (key), g_atomic_rc_box_acquire (own));
    }
  g_hash_table_replace (self->cache, g_strdup (run_id), merged);
}

/* The request and row version the last load() saw, if it was pending. */
SubagentApprovalRequest *
apg_store_cached_pending (ApgStore    *self,
                          const char  *run_id,
                          const char  *request_id,
                          char       **version)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  CachedRun *run = g_hash_table_lookup (self->cache, run_id);
  CachedRow *row = run ? g_hash_table_lookup (run->rows, request_id) : NULL;

  if (row == NULL || !g_str_equal (row->status, "pending"))
    return NULL;
  *version = g_strdup (row->version);
  return g_object_ref (row->request);
}

static int
compare_row_ids (gconstpointer a,
                 gconstpointer b)
{
  const CachedRow *x = *(const CachedRow * const *) a, *y = *(const CachedRow * const *) b;

  return x->id < y->id ? -1 : x->id > y->id;
}

/* The row @result holds at @i, reusing @old when it has not changed. */
static CachedRow *
read_row (ApgStore    *self,
          const char  *run_id,
          PGresult    *result,
          int          i,
          CachedRow   *old,
          GError     **error)
{
  const char *request_id = PQgetvalue (result, i, 3);
  const char *status = PQgetvalue (result, i, 4);
  const char *document = PQgetvalue (result, i, 5);
  const char *signature = PQgetisnull (result, i, 6) ? NULL : PQgetvalue (result, i, 6);
  const char *version = PQgetvalue (result, i, 7);
  SubagentApprovalRequest *request;
  CachedRow *row;

  if (old != NULL && g_str_equal (old->document, document) && g_str_equal (old->status, status)
      && g_strcmp0 (old->signature, signature) == 0 && g_str_equal (old->version, version))
    return g_atomic_rc_box_acquire (old);
  if (old != NULL && g_str_equal (old->document, document) && g_str_equal (old->status, status)
      && g_strcmp0 (old->signature, signature) == 0)
    request = g_object_ref (old->request);
  else if ((request = apg_store_verify_row (self, run_id, request_id, status, document, signature, error)) == NULL)
    return NULL;
  row = g_atomic_rc_box_new0 (CachedRow);
  row->id = g_ascii_strtoll (PQgetvalue (result, i, 2), NULL, 10);
  row->document = g_strdup (document);
  row->signature = g_strdup (signature);
  row->status = g_strdup (status);
  row->version = g_strdup (version);
  row->request = request;
  return row;
}

/* Reads the rows written since @since's reading (all of them without one)
 * over @since's rows. FALSE with *stale when rows went away meanwhile
 * (a prune): @since cannot be continued, read it all again. */
static Step
read_run_since (ApgStore    *self,
                ApgConn     *conn,
                const char  *run_id,
                CachedRun   *since,
                CachedRun  **out,
                gboolean    *stale,
                GError     **error)
{
  const char *params[] = { run_id, since ? since->horizon : "0" };
  g_autoptr(CachedRun) run = g_atomic_rc_box_new0 (CachedRun);
  Step step = STEP_FAILED;
  PGresult *result = apg_store_exec (self, conn, SQL_LOAD, params, "Reading the approval queue", &step, error);
  gint64 total;

  *stale = FALSE;
  if (result == NULL)
    return step;
  run->horizon = g_strdup (PQgetvalue (result, 0, 0));
  total = g_ascii_strtoll (PQgetvalue (result, 0, 1), NULL, 10);
  /* Tables of rows never change once made: a reading that found nothing
   * new (often our own write again) shares its predecessor's. */
  run->rows = since ? g_hash_table_ref (since->rows)
                    : g_hash_table_new_full (g_str_hash, g_str_equal, g_free, apg_cached_row_release);
  for (int i = 0; i < PQntuples (result); i++)
    {
      const char *request_id;
      CachedRow *old, *row;

      if (PQgetisnull (result, i, 2))
        continue;          /* the meta row alone: nothing new */
      request_id = PQgetvalue (result, i, 3);
      old = g_hash_table_lookup (run->rows, request_id);
      row = read_row (self, run_id, result, i, old, error);
      if (row == NULL)
        {
          PQclear (result);
          return STEP_FAILED;
        }
      if (row == old)
        {
          apg_cached_row_release (row);
          continue;
        }
      if (since != NULL && run->rows == since->rows)
        {
          GHashTable *copy = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, apg_cached_row_release);
          GHashTableIter iter;
          gpointer key, value;

          g_hash_table_iter_init (&iter, since->rows);
          while (g_hash_table_iter_next (&iter, &key, &value))
            g_hash_table_insert (copy, g_strdup (key), g_atomic_rc_box_acquire (value));
          g_hash_table_unref (run->rows);
          run->rows = copy;
        }
      g_hash_table_replace (run->rows, g_strdup (request_id), row);
    }
  PQclear (result);
  /* Every row now is in the reading; more in it means some went away. */
  if ((gint64) g_hash_table_size (run->rows) != total)
    {
      *stale = since != NULL;
      if (*stale)
        return STEP_DONE;
    }
  *out = g_steal_pointer (&run);
  return STEP_DONE;
}

static Step
load_op (ApgStore  *self,
         ApgConn   *conn,
         gpointer   data,
         GError   **error)
{
  LoadOp *op = data;
  g_autoptr(CachedRun) cached = cache_run_of (self, op->run_id);
  g_autoptr(CachedRun) run = NULL;
  g_autoptr(GPtrArray) rows = NULL;
  GHashTableIter iter;
  gpointer value;
  gboolean stale;
  Step step;

  step = read_run_since (self, conn, op->run_id, cached, &run, &stale, error);
  if (step == STEP_DONE && stale)
    step = read_run_since (self, conn, op->run_id, NULL, &run, &stale, error);
  if (step == STEP_FAILED)
    {
      /* Nothing of an untrusted run is kept, not even what verified
       * before: a verdict is never written from a stale guess over it. */
      apg_store_cache_forget_run (self, op->run_id);
      return STEP_FAILED;
    }
  if (step != STEP_DONE)
    return step;

  rows = g_ptr_array_sized_new (g_hash_table_size (run->rows));
  g_hash_table_iter_init (&iter, run->rows);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (rows, value);
  g_ptr_array_sort (rows, compare_row_ids);
  op->requests = g_ptr_array_new_full (rows->len + 1, g_object_unref);
  for (guint i = 0; i < rows->len; i++)
    g_ptr_array_add (op->requests, g_object_ref (((CachedRow *) rows->pdata[i])->request));
  cache_store_run (self, op->run_id, run);
  return STEP_DONE;
}

/* The run's requests as stored, shared with the cache (do not change them);
 * NULL with SUBAGENT_APPROVAL_ERROR_INTEGRITY when a row does not verify. */
GPtrArray *
apg_store_read_run (ApgStore    *self,
                    const char  *run_id,
                    GError     **error)
{
  LoadOp op = { run_id, NULL };

  if (!apg_store_run_op (self, load_op, &op, error))
    return NULL;
  return op.requests;
}

GPtrArray *
apg_store_load (ApgStore    *self,
                const char  *parent_run_id,
                GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GPtrArray) requests = apg_store_read_run (self, parent_run_id, &local_error);
  GPtrArray *copy;

  if (requests == NULL)
    {
      if (!g_error_matches (local_error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
      apg_store_report_integrity (self, parent_run_id, local_error);
      return g_ptr_array_new_with_free_func (g_object_unref);
    }
  /* Callers may change what they get; the cache's objects stay as read. */
  copy = g_ptr_array_new_full (requests->len + 1, g_object_unref);
  for (guint i = 0; i < requests->len; i++)
    g_ptr_array_add (copy, subagent_approval_request_copy (requests->pdata[i]));
  return copy;
}
