/* subagent-approval-registry.c: the process-wide registry of approval queues.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"

/* The one piece of global state of the approval code: parent run id → its
 * queue (a strong reference, dropped by subagent_approval_queue_release()).
 * Every access holds registry_lock; a queue is never built with it held,
 * since building one reads the store. */
static GMutex registry_lock;
static GHashTable *registry;

static gboolean
check_run_id (const char  *parent_run_id,
              GError     **error)
{
  if (subagent_approval_id_is_valid (parent_run_id))
    return TRUE;
  g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INVALID_ID,
               "Invalid parent run id “%s” for an approval queue: use 1–%d characters of [A-Za-z0-9_-]",
               parent_run_id ? parent_run_id : "(null)", SUBAGENT_APPROVAL_ID_MAX_LENGTH);
  return FALSE;
}

/* Called with registry_lock held. */
static SubagentApprovalQueue *
lookup_locked (const char             *parent_run_id,
               SubagentApprovalSink   *sink,
               GError                **error)
{
  SubagentApprovalQueue *queue = registry ? g_hash_table_lookup (registry, parent_run_id) : NULL;

  if (queue == NULL)
    return NULL;
  if (sink != NULL && subagent_approval_queue_get_sink (queue) != sink)
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "The approval queue of run %s already exists with another store; "
                   "release it first or get it without a sink", parent_run_id);
      return NULL;
    }
  return g_object_ref (queue);
}

/**
 * subagent_approval_queue_get:
 * @parent_run_id: the parent run (`[A-Za-z0-9_-]`, at most 128 characters)
 * @sink: (nullable): where the queue stores requests, when it is created
 * @error: return location for a #GError
 *
 * Returns the queue of @parent_run_id from the process-wide registry,
 * creating it on first use. A new queue with a @sink loads what the store
 * already holds for the run. Asking for an existing queue with a different
 * @sink is an error; %NULL accepts whatever sink it has.
 *
 * Returns: (transfer full): the queue, or %NULL with @error set
 */
SubagentApprovalQueue *
subagent_approval_queue_get (const char            *parent_run_id,
                             SubagentApprovalSink  *sink,
                             GError               **error)
{
  g_autoptr(SubagentApprovalQueue) created = NULL;
  SubagentApprovalQueue *queue;
  GError *local_error = NULL;

  g_return_val_if_fail (sink == NULL || SUBAGENT_IS_APPROVAL_SINK (sink), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_run_id (parent_run_id, error))
    return NULL;

  g_mutex_lock (&registry_lock);
  queue = lookup_locked (parent_run_id, sink, &local_error);
  g_mutex_unlock (&registry_lock);
  if (queue != NULL || local_error != NULL)
    {
      if (local_error != NULL)
        g_propagate_error (error, local_error);
      return queue;
    }

  created = g_object_new (SUBAGENT_TYPE_APPROVAL_QUEUE,
                          "parent-run-id", parent_run_id,
                          "sink", sink,
                          NULL);
  if (!subagent_approval_queue_reload_from_store (created, error))
    return NULL;

  g_mutex_lock (&registry_lock);
  queue = lookup_locked (parent_run_id, sink, &local_error);
  if (queue == NULL && local_error == NULL)
    {
      if (registry == NULL)
        registry = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
      g_hash_table_insert (registry, g_strdup (parent_run_id), g_object_ref (created));
      queue = g_steal_pointer (&created);
    }
  g_mutex_unlock (&registry_lock);

  if (local_error != NULL)
    g_propagate_error (error, local_error);
  return queue;
}

/**
 * subagent_approval_queue_try_get:
 * @parent_run_id: the parent run
 *
 * Looks the queue of @parent_run_id up without creating it.
 *
 * Returns: (transfer full) (nullable): the queue, or %NULL if there is none
 */
SubagentApprovalQueue *
subagent_approval_queue_try_get (const char *parent_run_id)
{
  SubagentApprovalQueue *queue;

  if (!subagent_approval_id_is_valid (parent_run_id))
    return NULL;
  g_mutex_lock (&registry_lock);
  queue = lookup_locked (parent_run_id, NULL, NULL);
  g_mutex_unlock (&registry_lock);
  return queue;
}

/**
 * subagent_approval_queue_release:
 * @parent_run_id: the parent run
 *
 * Removes the queue of @parent_run_id from the registry (the reference's
 * `cleanup_queue`) and drops its terminal requests. Whoever still holds
 * the queue — a child still waiting — keeps it working; the next
 * subagent_approval_queue_get() makes a new one.
 *
 * Returns: %TRUE if the registry held a queue for @parent_run_id
 */
gboolean
subagent_approval_queue_release (const char *parent_run_id)
{
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autofree char *key = NULL;

  if (!subagent_approval_id_is_valid (parent_run_id))
    return FALSE;
  g_mutex_lock (&registry_lock);
  if (registry != NULL)
    g_hash_table_steal_extended (registry, parent_run_id, (gpointer *) &key, (gpointer *) &queue);
  g_mutex_unlock (&registry_lock);

  if (queue == NULL)
    return FALSE;
  subagent_approval_queue_cleanup (queue);
  return TRUE;
}

/**
 * subagent_should_use_centralized_approval:
 * @parent_run_id: (nullable): the parent run, if any
 * @batch_index: the child's batch index, or %SUBAGENT_NO_BATCH_INDEX
 * @parallel_mode: whether children of this parent run in parallel
 *
 * The reference's predicate: destructive calls of a child go to the
 * centralized queue when the child is part of a batch (any index,
 * 0 included) or runs in parallel mode, and there is a parent run to own
 * the queue: `(batch_index != none || parallel_mode) && parent_run_id != ""`.
 *
 * Returns: %TRUE if the child should use the centralized queue
 */
gboolean
subagent_should_use_centralized_approval (const char *parent_run_id,
                                          gint        batch_index,
                                          gboolean    parallel_mode)
{
  gboolean in_batch = batch_index >= 0; /* SUBAGENT_NO_BATCH_INDEX (and any negative) is none */

  return (in_batch || parallel_mode) && parent_run_id != NULL && *parent_run_id != '\0';
}
