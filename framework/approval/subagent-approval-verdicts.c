/* subagent-approval-verdicts.c: giving verdicts to one, some or all requests of a queue.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-approval-private.h"

/* Every function here goes through subagent_approval_queue_resolve() or,
 * for several requests, subagent_approval_queue_resolve_many() (one batch
 * compare-and-set of the sink: one write), so each verdict takes the
 * store's compare-and-set; they only differ in which requests they pick.
 * A request resolved elsewhere in the meantime is simply not counted. */

static gboolean
resolve_quietly (SubagentApprovalQueue  *self,
                 const char             *request_id,
                 SubagentApprovalStatus  status,
                 const char             *reason,
                 const char             *actor)
{
  g_autoptr(GError) error = NULL;

  if (subagent_approval_queue_resolve (self, request_id, status, reason, actor, &error))
    return TRUE;
  if (g_error_matches (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE))
    g_warning ("%s", error->message);
  else
    g_debug ("%s", error->message);
  return FALSE;
}

static gint
compare_entry_seq (gconstpointer a,
                   gconstpointer b)
{
  guint64 x = (*(SubagentApprovalEntry * const *) a)->seq;
  guint64 y = (*(SubagentApprovalEntry * const *) b)->seq;

  return x < y ? -1 : x > y;
}

/* The ids of the pending requests, oldest first. */
static GStrv
pending_ids (SubagentApprovalQueue *self)
{
  g_autoptr(GPtrArray) pending = subagent_approval_queue_list_pending (self);
  g_autoptr(GStrvBuilder) ids = g_strv_builder_new ();

  for (guint i = 0; i < pending->len; i++)
    g_strv_builder_add (ids, subagent_approval_request_get_request_id (pending->pdata[i]));
  return g_strv_builder_end (ids);
}

static guint
resolve_all (SubagentApprovalQueue  *self,
             const char * const     *request_ids,
             SubagentApprovalStatus  status,
             const char             *reason,
             const char             *actor)
{
  if (request_ids != NULL && request_ids[0] != NULL && request_ids[1] == NULL)
    return resolve_quietly (self, request_ids[0], status, reason, actor) ? 1 : 0;
  return subagent_approval_queue_resolve_many (self, request_ids, status, reason, actor);
}

/**
 * subagent_approval_queue_approve:
 * @self: a queue
 * @request_id: the request to approve
 * @actor: (nullable): who approves; %NULL is `human`
 *
 * Approves a pending request (see subagent_approval_queue_resolve() for
 * the store's part).
 *
 * Returns: %TRUE if this call approved it; %FALSE if it is unknown, no
 *   longer pending, or the store refused to record it
 */
gboolean
subagent_approval_queue_approve (SubagentApprovalQueue *self,
                                 const char            *request_id,
                                 const char            *actor)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), FALSE);
  return resolve_quietly (self, request_id, SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, actor);
}

/**
 * subagent_approval_queue_deny:
 * @self: a queue
 * @request_id: the request to deny
 * @reason: (nullable): why; %NULL is `Denied by human`
 * @actor: (nullable): who denies; %NULL is `human`
 *
 * Denies a pending request.
 *
 * Returns: %TRUE if this call denied it; %FALSE if it is unknown or no longer pending
 */
gboolean
subagent_approval_queue_deny (SubagentApprovalQueue *self,
                              const char            *request_id,
                              const char            *reason,
                              const char            *actor)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), FALSE);
  return resolve_quietly (self, request_id, SUBAGENT_APPROVAL_STATUS_DENIED, reason, actor);
}

/**
 * subagent_approval_queue_approve_batch:
 * @self: a queue
 * @request_ids: (array zero-terminated=1): the requests to approve
 * @actor: (nullable): who approves
 *
 * Approves each of @request_ids that is still pending.
 *
 * Returns: how many requests this call approved
 */
guint
subagent_approval_queue_approve_batch (SubagentApprovalQueue *self,
                                       const char * const    *request_ids,
                                       const char            *actor)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), 0);
  return resolve_all (self, request_ids, SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, actor);
}

/**
 * subagent_approval_queue_deny_batch:
 * @self: a queue
 * @request_ids: (array zero-terminated=1): the requests to deny
 * @reason: (nullable): why
 * @actor: (nullable): who denies
 *
 * Denies each of @request_ids that is still pending.
 *
 * Returns: how many requests this call denied
 */
guint
subagent_approval_queue_deny_batch (SubagentApprovalQueue *self,
                                    const char * const    *request_ids,
                                    const char            *reason,
                                    const char            *actor)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), 0);
  return resolve_all (self, request_ids, SUBAGENT_APPROVAL_STATUS_DENIED, reason, actor);
}

/**
 * subagent_approval_queue_approve_all_pending:
 * @self: a queue
 * @actor: (nullable): who approves
 *
 * Approves every request pending when the call starts.
 *
 * Returns: how many requests this call approved
 */
guint
subagent_approval_queue_approve_all_pending (SubagentApprovalQueue *self,
                                             const char            *actor)
{
  g_auto(GStrv) ids = NULL;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), 0);
  ids = pending_ids (self);
  return resolve_all (self, (const char * const *) ids, SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, actor);
}

/**
 * subagent_approval_queue_deny_all_pending:
 * @self: a queue
 * @reason: (nullable): why
 * @actor: (nullable): who denies
 *
 * Denies every request pending when the call starts.
 *
 * Returns: how many requests this call denied
 */
guint
subagent_approval_queue_deny_all_pending (SubagentApprovalQueue *self,
                                          const char            *reason,
                                          const char            *actor)
{
  g_auto(GStrv) ids = NULL;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), 0);
  ids = pending_ids (self);
  return resolve_all (self, (const char * const *) ids, SUBAGENT_APPROVAL_STATUS_DENIED, reason, actor);
}

/**
 * subagent_approval_queue_cancel:
 * @self: a queue
 * @request_id: the request to cancel
 *
 * Cancels a pending request: its submitter stops waiting and gets
 * %SUBAGENT_APPROVAL_STATUS_CANCELLED.
 *
 * Returns: %TRUE if this call cancelled it
 */
gboolean
subagent_approval_queue_cancel (SubagentApprovalQueue *self,
                                const char            *request_id)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), FALSE);
  return resolve_quietly (self, request_id, SUBAGENT_APPROVAL_STATUS_CANCELLED,
                          "Cancelled before a verdict", "system");
}

/* The ids of @subagent_id's pending requests, oldest first; NULL when it
 * has none. Called as each child ends, so it looks at the table under the
 * lock rather than listing (and dating, and sorting) every pending
 * request of every child. */
static GStrv
pending_ids_of (SubagentApprovalQueue *self,
                const char            *subagent_id)
{
  g_autoptr(GArray) found = NULL;
  GHashTableIter iter;
  gpointer value;
  GStrv ids;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->entries);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      SubagentApprovalEntry *entry = value;

      if (subagent_approval_status_is_terminal (subagent_approval_request_get_status (entry->request)) ||
          g_strcmp0 (subagent_approval_request_get_subagent_id (entry->request), subagent_id) != 0)
        continue;
      if (found == NULL)
        found = g_array_new (FALSE, FALSE, sizeof (SubagentApprovalEntry *));
      g_array_append_val (found, entry);
    }
  if (found == NULL)
    {
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  g_array_sort (found, compare_entry_seq);
  ids = g_new (char *, found->len + 1);
  for (guint i = 0; i < found->len; i++)
    ids[i] = g_strdup (subagent_approval_request_get_request_id (g_array_index (found, SubagentApprovalEntry *, i)->request));
  ids[found->len] = NULL;
  g_mutex_unlock (&self->lock);
  return ids;
}

/**
 * subagent_approval_queue_cancel_for_subagent:
 * @self: a queue
 * @subagent_id: the child run that ended
 *
 * Cancels every pending request of @subagent_id — what the manager does
 * when a child ends with requests still pending.
 *
 * Returns: how many requests this call cancelled
 */
guint
subagent_approval_queue_cancel_for_subagent (SubagentApprovalQueue *self,
                                             const char            *subagent_id)
{
  g_auto(GStrv) ids = NULL;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), 0);
  g_return_val_if_fail (subagent_id != NULL, 0);

  ids = pending_ids_of (self, subagent_id);
  if (ids == NULL)
    return 0;
  return resolve_all (self, (const char * const *) ids, SUBAGENT_APPROVAL_STATUS_CANCELLED,
                      "The subagent ended before a verdict", "system");
}
