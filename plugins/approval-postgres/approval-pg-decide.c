/* approval-pg-decide.c: recording verdicts, each a compare-and-set UPDATE
 * from pending at the version read, one statement for one request or for
 * a batch (see approval-pg-store.c for how a repeat after a lost reply
 * recognises its own win).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "approval-pg-store.h"
#include "approval-pg-store-private.h"

/* update_status */

typedef struct {
  const char *run_id;
  const char *request_id;
  SubagentApprovalStatus status;
  const char *reason;
  const char *actor;
  char token[37];          /* this verdict's, stored with it when it wins */
  gboolean won;
} DecideOp;

/* One compare-and-set round: read the row, and if it is pending, write the
 * verdict at the version read. A save that replaced the pending row in
 * between makes the write miss; the next round reads the new one. */
static Step
decide_op (ApgStore  *self,
           ApgConn   *conn,
           gpointer   data,
           GError   **error)
{
  DecideOp *op = data;
  /* An approver has usually just loaded what it decides: the first round
   * then writes at the version it saw, without reading the row again (a
   * round trip less). A stale guess only misses; the next round reads. */
  gboolean guess = TRUE;

  for (;;)
    {
      const char *read_params[] = { op->run_id, op->request_id };
      g_autoptr(SubagentApprovalRequest) stored = NULL;
      g_autoptr(SubagentApprovalRequest) decided = NULL;
      g_autoptr(JsonNode) document = json_node_new (JSON_NODE_OBJECT);
      g_autofree char *text = NULL;
      g_autofree char *signature = NULL;
      g_autofree char *version = NULL;
      const char *status_name = subagent_approval_status_to_string (op->status);
      Step step = STEP_FAILED;
      PGresult *result;
      gboolean ours;

      if (guess)
        stored = apg_store_cached_pending (self, op->run_id, op->request_id, &version);
      guess = FALSE;
      if (stored == NULL)
        {
          result = apg_store_exec (self, conn, SQL_READ_ONE, read_params, "Reading an approval request", &step, error);
          if (result == NULL)
            return step;
          if (PQntuples (result) == 0)
            {
              PQclear (result);
              op->won = FALSE;
              return STEP_DONE;
            }
          /* A repeat after a lost reply: the verdict that won may be ours. */
          ours = !PQgetisnull (result, 0, 4) && g_str_equal (PQgetvalue (result, 0, 4), op->token);
          stored = apg_store_verify_row (self, op->run_id, op->request_id, PQgetvalue (result, 0, 0),
                                         PQgetvalue (result, 0, 1),
                                         PQgetisnull (result, 0, 2) ? NULL : PQgetvalue (result, 0, 2), error);
          version = g_strdup (PQgetvalue (result, 0, 3));
          PQclear (result);
          if (stored == NULL)
            return STEP_FAILED;
          if (ours || subagent_approval_request_get_status (stored) != SUBAGENT_APPROVAL_STATUS_PENDING)
            {
              op->won = ours;
              return STEP_DONE;
            }
        }

      decided = subagent_approval_request_copy (stored);
      if (!subagent_approval_request_transition (decided, op->status, op->reason, op->actor))
        {
          op->won = FALSE;
          return STEP_DONE;
        }
      json_node_take_object (document, subagent_approval_request_to_json (decided));
      text = json_to_string (document, FALSE);
      signature = apg_store_sign_document (self, document);
      {
        const char *params[] = { op->run_id, op->request_id, status_name, text, signature, op->token,
                                 version, self->channel };

        result = apg_store_exec (self, conn, SQL_DECIDE, params, "Recording a verdict", &step, error);
      }
      if (result == NULL)
        return step;
      op->won = PQntuples (result) > 0;
      if (op->won)
        {
          g_autoptr(GHashTable) own = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, apg_cached_row_release);

          g_hash_table_insert (own, (gpointer) op->request_id, apg_own_row_new (result, 0, g_object_ref (decided)));
          apg_store_cache_merge_own (self, op->run_id, own);
        }
      PQclear (result);
      if (op->won)
        return STEP_DONE;
    }
}

static gboolean
decide_one (ApgStore                *self,
            const char              *parent_run_id,
            const char              *request_id,
            SubagentApprovalStatus   status,
            const char              *reason,
            const char              *actor,
            GError                 **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *token = g_uuid_string_random ();
  DecideOp op = { parent_run_id, request_id, status, reason, actor, "", FALSE };

  g_strlcpy (op.token, token, sizeof op.token);
  if (!apg_store_run_op (self, decide_op, &op, &local_error))
    {
      if (g_error_matches (local_error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY))
        apg_store_report_integrity (self, parent_run_id, local_error);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return op.won;
}

/* update_status, for many requests in one statement */

typedef struct {
  const char *run_id;
  const char * const *ids; /* distinct */
  guint n;
  SubagentApprovalStatus status;
  const char *reason;
  const char *actor;
  char token[37];
  gboolean *won;           /* per id */
  gboolean *settled;       /* per id: won, or seen decided or missing */
} DecideManyOp;

/* What one round will write: the pending request and the version read. */
typedef struct {
  SubagentApprovalRequest *request;
  char *version;
} Seen;

static void
seen_clear (Seen *seen)
{
  g_clear_object (&seen->request);
  g_clear_pointer (&seen->version, g_free);
}

/* Reads the rows of the unsettled ids without a Seen: settles those
 * missing, decided, or decided by us (a repeat after a lost reply). */
static Step
read_many (ApgStore      *self,
           ApgConn       *conn,
           DecideManyOp  *op,
           Seen          *seen,
           GError       **error)
{
  g_autoptr(GString) array = g_string_new ("{");
  g_autoptr(GHashTable) index = g_hash_table_new (g_str_hash, g_str_equal);
  Step step = STEP_FAILED;
  PGresult *result;

  for (guint i = 0; i < op->n; i++)
    if (!op->settled[i] && seen[i].request == NULL)
      {
        /* Ids are [A-Za-z0-9_-]: nothing to quote in an array literal. */
        g_string_append_printf (array, "%s%s", array->len > 1 ? "," : "", op->ids[i]);
        g_hash_table_insert (index, (gpointer) op->ids[i], GUINT_TO_POINTER (i + 1));
      }
  if (g_hash_table_size (index) == 0)
    return STEP_DONE;
  g_string_append_c (array, '}');
  {
    const char *params[] = { op->run_id, array->str };

    result = apg_store_exec (self, conn, SQL_READ_MANY, params, "Reading approval requests", &step, error);
  }
  if (result == NULL)
    return step;
  for (int r = 0; r < PQntuples (result); r++)
    {
      const char *request_id = PQgetvalue (result, r, 0);
      guint i = GPOINTER_TO_UINT (g_hash_table_lookup (index, request_id));
      g_autoptr(SubagentApprovalRequest) stored = NULL;

      if (i-- == 0)
        continue;
      g_hash_table_remove (index, request_id);
      if (!PQgetisnull (result, r, 5) && g_str_equal (PQgetvalue (result, r, 5), op->token))
        {
          op->won[i] = op->settled[i] = TRUE;
          continue;
        }
      stored = apg_store_verify_row (self, op->run_id, request_id, PQgetvalue (result, r, 1), PQgetvalue (result, r, 2),
                                     PQgetisnull (result, r, 3) ? NULL : PQgetvalue (result, r, 3), error);
      if (stored == NULL)
        {
          PQclear (result);
          return STEP_FAILED;
        }
      if (subagent_approval_request_get_status (stored) != SUBAGENT_APPROVAL_STATUS_PENDING)
        {
          op->settled[i] = TRUE;
          continue;
        }
      seen[i].request = g_steal_pointer (&stored);
      seen[i].version = g_strdup (PQgetvalue (result, r, 4));
    }
  PQclear (result);
  /* Not stored at all: missing, so lost. */
  {
    GHashTableIter iter;
    gpointer value;

    g_hash_table_iter_init (&iter, index);
    while (g_hash_table_iter_next (&iter, NULL, &value))
      op->settled[GPOINTER_TO_UINT (value) - 1] = TRUE;
  }
  return STEP_DONE;
}

static Step
decide_many_op (ApgStore  *self,
                ApgConn   *conn,
                gpointer   data,
                GError   **error)
{
  DecideManyOp *op = data;
  /* As in decide_op(): the first round writes at the versions the last
   * load saw, the next ones read first. */
  gboolean guess = TRUE;

  for (;;)
    {
      g_autofree Seen *seen = g_new0 (Seen, op->n);
      /* request id → what this round writes for it */
      g_autoptr(GHashTable) decided_by_id = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_object_unref);
      g_autoptr(GHashTable) own = NULL;
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) batch = NULL;
      g_autofree char *text = NULL;
      const char *status_name = subagent_approval_status_to_string (op->status);
      guint writing = 0;
      Step step = STEP_DONE;
      PGresult *result;

      for (guint i = 0; guess && i < op->n; i++)
        if (!op->settled[i])
          seen[i].request = apg_store_cached_pending (self, op->run_id, op->ids[i], &seen[i].version);
      guess = FALSE;
      step = read_many (self, conn, op, seen, error);

      json_builder_begin_array (builder);
      for (guint i = 0; step == STEP_DONE && i < op->n; i++)
        {
          g_autoptr(SubagentApprovalRequest) decided = NULL;
          g_autoptr(JsonNode) document = NULL;
          g_autofree char *signature = NULL;

          if (op->settled[i] || seen[i].request == NULL)
            continue;
          decided = subagent_approval_request_copy (seen[i].request);
          if (!subagent_approval_request_transition (decided, op->status, op->reason, op->actor))
            {
              op->settled[i] = TRUE;
              continue;
            }
          document = json_node_new (JSON_NODE_OBJECT);
          json_node_take_object (document, subagent_approval_request_to_json (decided));
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "r");
          json_builder_add_string_value (builder, op->ids[i]);
          json_builder_set_member_name (builder, "s");
          json_builder_add_string_value (builder, status_name);
          json_builder_set_member_name (builder, "d");
          json_builder_add_value (builder, json_node_ref (document));
          signature = apg_store_sign_document (self, document);
          if (signature != NULL)
            {
              json_builder_set_member_name (builder, "g");
              json_builder_add_string_value (builder, signature);
            }
          json_builder_set_member_name (builder, "v");
          json_builder_add_string_value (builder, seen[i].version);
          json_builder_end_object (builder);
          g_hash_table_insert (decided_by_id, (gpointer) op->ids[i], g_steal_pointer (&decided));
          writing++;
        }
      json_builder_end_array (builder);
      for (guint i = 0; i < op->n; i++)
        seen_clear (&seen[i]);
      if (step != STEP_DONE)
        return step;
      if (writing == 0)
        {
          /* Everything settled, or only misses of the guess left to read. */
          gboolean all = TRUE;

          for (guint i = 0; i < op->n; i++)
            all &= op->settled[i];
          if (all)
            return STEP_DONE;
          continue;
        }

      batch = json_builder_get_root (builder);
      text = json_to_string (batch, FALSE);
      {
        const char *params[] = { op->run_id, text, op->token, self->channel };

        result = apg_store_exec (self, conn, SQL_DECIDE_MANY, params, "Recording verdicts", &step, error);
      }
      if (result == NULL)
        return step;
      own = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, apg_cached_row_release);
      for (int r = 0; r < PQntuples (result); r++)
        {
          const char *request_id = PQgetvalue (result, r, 1);
          SubagentApprovalRequest *decided = g_hash_table_lookup (decided_by_id, request_id);

          for (guint i = 0; i < op->n; i++)
            if (g_str_equal (op->ids[i], request_id))
              {
                op->won[i] = op->settled[i] = TRUE;
                if (decided != NULL)
                  g_hash_table_replace (own, (gpointer) op->ids[i],
                                        apg_own_row_new (result, r, g_object_ref (decided)));
              }
        }
      apg_store_cache_merge_own (self, op->run_id, own);
      PQclear (result);
      /* The ones a save replaced in between missed: read them again. */
    }
}

gboolean
apg_store_update_batch (ApgStore                *self,
                        const char              *parent_run_id,
                        const char * const      *request_ids,
                        guint                    n_requests,
                        SubagentApprovalStatus   status,
                        const char              *reason,
                        const char              *actor,
                        gboolean                *won,
                        GError                 **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *token = g_uuid_string_random ();
  g_autoptr(GHashTable) first = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree const char **ids = g_new0 (const char *, n_requests + 1);
  g_autofree guint *where = g_new0 (guint, n_requests);
  g_autofree gboolean *won_distinct = g_new0 (gboolean, n_requests);
  g_autofree gboolean *settled = g_new0 (gboolean, n_requests);
  DecideManyOp op = { parent_run_id, ids, 0, status, reason, actor, "", won_distinct, settled };

  /* An id given twice is decided once, reported at its first place. */
  for (guint i = 0; i < n_requests; i++)
    if (g_hash_table_add (first, (gpointer) request_ids[i]))
      {
        where[op.n] = i;
        ids[op.n++] = request_ids[i];
      }
  memset (won, 0, n_requests * sizeof (gboolean));
  g_strlcpy (op.token, token, sizeof op.token);
  if (!apg_store_run_op (self, decide_many_op, &op, &local_error))
    {
      if (g_error_matches (local_error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY))
        apg_store_report_integrity (self, parent_run_id, local_error);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  for (guint j = 0; j < op.n; j++)
    won[where[j]] = won_distinct[j];
  return TRUE;
}

/* Group commit: verdicts of one run with the same status, reason and
 * actor, made at once share a statement and a commit. */

typedef struct {
  ApgCombinedCall call;
  const char *run_id;
  const char *request_id;
  SubagentApprovalStatus status;
  const char *reason;
  const char *actor;
  gboolean won;
  GError *error;
} QueuedVerdict;

gboolean
apg_store_same_verdict_group (const ApgCombinedCall *call_a,
                              const ApgCombinedCall *call_b)
{
  const QueuedVerdict *a = (const QueuedVerdict *) call_a, *b = (const QueuedVerdict *) call_b;

  return g_str_equal (a->run_id, b->run_id) && a->status == b->status
         && g_strcmp0 (a->reason, b->reason) == 0 && g_strcmp0 (a->actor, b->actor) == 0;
}

/* Like verdicts of one run: one statement. */
void
apg_store_decide_queued (GPtrArray *calls,
                         gpointer   user_data)
{
  ApgStore *self = user_data;
  QueuedVerdict *first = calls->pdata[0];
  g_autoptr(GPtrArray) ids = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gboolean *won = NULL;

  if (calls->len == 1)
    {
      /* Alone: the single statement, which may skip the read. */
      first->won = decide_one (self, first->run_id, first->request_id, first->status, first->reason,
                               first->actor, &first->error);
      return;
    }
  ids = g_ptr_array_new ();
  for (guint i = 0; i < calls->len; i++)
    g_ptr_array_add (ids, (gpointer) ((QueuedVerdict *) calls->pdata[i])->request_id);
  g_ptr_array_add (ids, NULL);
  won = g_new0 (gboolean, calls->len);
  /* The same id twice is decided once: only its first caller wins. */
  if (!apg_store_update_batch (self, first->run_id, (const char * const *) ids->pdata, calls->len,
                               first->status, first->reason, first->actor, won, &error))
    {
      for (guint i = 0; i < calls->len; i++)
        ((QueuedVerdict *) calls->pdata[i])->error = g_error_copy (error);
      return;
    }
  for (guint i = 0; i < calls->len; i++)
    ((QueuedVerdict *) calls->pdata[i])->won = won[i];
}

gboolean
apg_store_update_status (ApgStore                *self,
                         const char              *parent_run_id,
                         const char              *request_id,
                         SubagentApprovalStatus   status,
                         const char              *reason,
                         const char              *actor,
                         GError                 **error)
{
  QueuedVerdict call = { { FALSE }, parent_run_id, request_id, status, reason, actor, FALSE, NULL };

  apg_combiner_run (self->verdicts, &call.call);
  if (call.error != NULL)
    {
      g_propagate_error (error, call.error);
      return FALSE;
    }
  return call.won;
}

