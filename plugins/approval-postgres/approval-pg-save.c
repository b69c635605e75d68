/* approval-pg-save.c: saving approval requests, one INSERT … ON CONFLICT
 * per group of saves of a run (see approval-pg-store.c for what a save may
 * replace and why it is safe to repeat).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "approval-pg-store.h"
#include "approval-pg-store-private.h"

typedef struct {
  const char *run_id;
  const char *batch;       /* the JSON array of rows */
  GPtrArray *requests;     /* as given */
  GHashTable *last;        /* request id → the index in @requests that is saved */
} SaveOp;

static Step
save_op (ApgStore  *self,
         ApgConn   *conn,
         gpointer   data,
         GError   **error)
{
  SaveOp *op = data;
  const char *params[] = { op->run_id, op->batch, self->channel };
  Step step = STEP_FAILED;
  PGresult *result = apg_store_exec (self, conn, SQL_SAVE, params, "Saving approval requests", &step, error);
  g_autoptr(GHashTable) own = NULL;

  if (result == NULL)
    return step;
  own = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, apg_cached_row_release);
  for (int r = 0; r < PQntuples (result); r++)
    {
      const char *request_id = PQgetvalue (result, r, 1);
      gpointer index;
      SubagentApprovalRequest *request;

      if (!g_hash_table_lookup_extended (op->last, request_id, NULL, &index))
        continue;
      request = op->requests->pdata[GPOINTER_TO_UINT (index)];
      /* A copy: the caller's object may change after save() returns. */
      g_hash_table_replace (own, (gpointer) subagent_approval_request_get_request_id (request),
                            apg_own_row_new (result, r, subagent_approval_request_copy (request)));
    }
  apg_store_cache_merge_own (self, op->run_id, own);
  PQclear (result);
  return STEP_DONE;
}

static gboolean
save_now (ApgStore    *self,
          const char  *parent_run_id,
          GPtrArray   *requests,
          GError     **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(GHashTable) last = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(JsonNode) batch = NULL;
  g_autofree char *text = NULL;
  SaveOp op;

  if (requests->len == 0)
    return TRUE;
  /* One row per request id: the last given wins, as in a merge one by one. */
  for (guint i = 0; i < requests->len; i++)
    g_hash_table_insert (last, (gpointer) subagent_approval_request_get_request_id (requests->pdata[i]),
                         GUINT_TO_POINTER (i));

  json_builder_begin_array (builder);
  for (guint i = 0; i < requests->len; i++)
    {
      SubagentApprovalRequest *request = requests->pdata[i];
      const char *request_id = subagent_approval_request_get_request_id (request);
      g_autoptr(JsonNode) document = json_node_new (JSON_NODE_OBJECT);
      g_autofree char *signature = NULL;

      if (GPOINTER_TO_UINT (g_hash_table_lookup (last, request_id)) != i)
        continue;
      json_node_take_object (document, subagent_approval_request_to_json (request));
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "r");
      json_builder_add_string_value (builder, request_id);
      json_builder_set_member_name (builder, "s");
      json_builder_add_string_value (builder,
                                     subagent_approval_status_to_string (subagent_approval_request_get_status (request)));
      json_builder_set_member_name (builder, "d");
      json_builder_add_value (builder, json_node_ref (document));
      signature = apg_store_sign_document (self, document);
      if (signature != NULL)
        {
          json_builder_set_member_name (builder, "g");
          json_builder_add_string_value (builder, signature);
        }
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  batch = json_builder_get_root (builder);
  text = json_to_string (batch, FALSE);

  op = (SaveOp) { parent_run_id, text, requests, last };
  return apg_store_run_op (self, save_op, &op, error);
}

/* Group commit: saves of one run made at once share a statement and a
 * commit. */

typedef struct {
  ApgCombinedCall call;
  const char *run_id;
  GPtrArray *requests;
  gboolean ok;
  GError *error;
} QueuedSave;

gboolean
apg_store_same_save_group (const ApgCombinedCall *a,
                           const ApgCombinedCall *b)
{
  return g_str_equal (((const QueuedSave *) a)->run_id, ((const QueuedSave *) b)->run_id);
}

/* Saves of one run: one statement. */
void
apg_store_save_queued (GPtrArray *calls,
                       gpointer   user_data)
{
  ApgStore *self = user_data;
  QueuedSave *first = calls->pdata[0];
  g_autoptr(GPtrArray) merged = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  gboolean ok;

  /* In arrival order, so the last given of an id still wins. */
  for (guint i = 0; i < calls->len; i++)
    {
      QueuedSave *call = calls->pdata[i];

      for (guint k = 0; k < call->requests->len; k++)
        g_ptr_array_add (merged, call->requests->pdata[k]);
    }
  ok = save_now (self, first->run_id, merged, &error);
  for (guint i = 0; i < calls->len; i++)
    {
      QueuedSave *call = calls->pdata[i];

      call->ok = ok;
      if (!ok)
        call->error = g_error_copy (error);
    }
}

gboolean
apg_store_save (ApgStore    *self,
                const char  *parent_run_id,
                GPtrArray   *requests,
                GError     **error)
{
  QueuedSave call = { { FALSE }, parent_run_id, requests, FALSE, NULL };

  if (requests->len == 0)
    return TRUE;
  apg_combiner_run (self->saves, &call.call);
  if (call.error != NULL)
    g_propagate_error (error, call.error);
  return call.ok;
}

