/* subagent-supervisor-approvals.c: the centralized approval queue of a
 * parent run, as the supervisor uses it for batches (reference 000, item 1
 * of the approval queue), and the approval events of its children.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-supervisor-private.h"

static void
on_request (SubagentSupervisor      *self,
            SubagentApprovalRequest *request,
            SubagentEventKind        kind)
{
  SubagentJob *job;

  g_mutex_lock (&self->lock);
  job = g_hash_table_lookup (self->jobs, subagent_approval_request_get_subagent_id (request));
  if (job != NULL)
    {
      g_autoptr(JsonObject) details = json_object_new ();
      const char *reason = subagent_approval_request_get_denial_reason (request);

      json_object_set_string_member (details, "request_id", subagent_approval_request_get_request_id (request));
      json_object_set_string_member (details, "tool_name", subagent_approval_request_get_tool_name (request));
      json_object_set_string_member (details, "approval_status",
                                     subagent_approval_status_to_string (subagent_approval_request_get_status (request)));
      if (reason != NULL && *reason != '\0')
        json_object_set_string_member (details, "denial_reason", reason);
      _subagent_supervisor_push_event_locked (self, job, kind, details);
    }
  g_mutex_unlock (&self->lock);
  if (job != NULL)
    _subagent_supervisor_kick (self);
}

/* Emitted on whatever thread submitted or resolved; the events are posted
 * to the supervisor's context. */
static void
on_request_added (SubagentApprovalQueue   *queue,
                  SubagentApprovalRequest *request,
                  gpointer                 user_data)
{
  on_request (user_data, request, SUBAGENT_EVENT_APPROVAL_REQUESTED);
}

static void
on_request_resolved (SubagentApprovalQueue   *queue,
                     SubagentApprovalRequest *request,
                     gpointer                 user_data)
{
  on_request (user_data, request, SUBAGENT_EVENT_APPROVAL_RESOLVED);
}

/* Approval events need the queue's signals; listen to each queue once. */
static void
listen_to (SubagentSupervisor    *self,
           const char            *parent_run_id,
           SubagentApprovalQueue *queue)
{
  g_mutex_lock (&self->lock);
  if (!g_hash_table_contains (self->queues, parent_run_id))
    {
      g_signal_connect_object (queue, "request-added", G_CALLBACK (on_request_added), self, 0);
      g_signal_connect_object (queue, "request-resolved", G_CALLBACK (on_request_resolved), self, 0);
      g_hash_table_insert (self->queues, g_strdup (parent_run_id), g_object_ref (queue));
    }
  g_mutex_unlock (&self->lock);
}

void
_subagent_supervisor_watch_approvals (SubagentSupervisor *self,
                                      const char         *parent_run_id)
{
  g_autoptr(SubagentApprovalQueue) queue = NULL;

  g_mutex_lock (&self->lock);
  if (g_hash_table_contains (self->queues, parent_run_id))
    {
      g_mutex_unlock (&self->lock);
      return;
    }
  g_mutex_unlock (&self->lock);
  if ((queue = subagent_approval_queue_try_get (parent_run_id)) != NULL)
    listen_to (self, parent_run_id, queue);
}

SubagentApprovalQueue *
_subagent_supervisor_get_approval_queue (SubagentSupervisor *self,
                                         const char         *parent_run_id)
{
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(GError) error = NULL;

  /* The manager's own run: its queue, from the sink config.yaml names (or
   * the host's); made here, once, if no child needed it yet. */
  if (g_strcmp0 (parent_run_id, subagent_manager_get_run_id (self->manager)) == 0)
    queue = _subagent_manager_make_approval_queue (self->manager, &error);
  else
    queue = subagent_approval_queue_try_get (parent_run_id);
  if (error != NULL)
    {
      gboolean first;

      /* Said once per run: every later spawn meets the same error. */
      g_mutex_lock (&self->lock);
      first = g_hash_table_add (self->unattended, g_strdup (parent_run_id));
      g_mutex_unlock (&self->lock);
      if (first)
        g_message ("%s; the batch children of run %s are unattended", error->message, parent_run_id);
    }
  if (queue == NULL)
    return NULL;  /* approvals.sink: none, or no queue for that run */
  listen_to (self, parent_run_id, queue);
  return g_steal_pointer (&queue);
}

void
_subagent_supervisor_disconnect_queues (SubagentSupervisor *self)
{
  g_autoptr(GHashTable) queues = NULL;
  GHashTableIter iter;
  gpointer value;

  g_mutex_lock (&self->lock);
  queues = g_steal_pointer (&self->queues);
  self->queues = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  g_mutex_unlock (&self->lock);

  g_hash_table_iter_init (&iter, queues);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_signal_handlers_disconnect_by_data (value, self);
}
