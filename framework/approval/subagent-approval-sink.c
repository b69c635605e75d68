/* subagent-approval-sink.c: where approval requests are stored and verdicts read.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"

/**
 * SubagentApprovalSink:
 *
 * Where a #SubagentApprovalQueue stores its requests and reads verdicts
 * given elsewhere — by another thread, another process (a CLI, a GNOME
 * app), or a person editing through such a tool.
 *
 * A sink keeps, per parent run, the list of requests of that run's queue.
 * subagent_approval_sink_save() merges: a terminal state already stored is
 * never overwritten, so a verdict written by another process survives a
 * later save of a stale copy. subagent_approval_sink_update_status() is the
 * cross-process compare-and-set through which every verdict goes: of two
 * writers, only the one that finds the request pending wins.
 * subagent_approval_sink_update_status_batch() is the same compare-and-set
 * for many requests of one run with one verdict, in one write where the
 * sink can.
 *
 * The queue learns about changes made behind its back through
 * #SubagentApprovalSink::changed, which a sink emits, after
 * subagent_approval_sink_watch(), in the thread-default main context of
 * the thread that called it. Handlers may therefore run on several threads
 * (one per watching context) and must be thread-safe.
 *
 * Built in: #SubagentMemoryApprovalSink. The `approval-file` plugin stores
 * queues as signed JSON files.
 */

G_DEFINE_INTERFACE (SubagentApprovalSink, subagent_approval_sink, G_TYPE_OBJECT)

enum {
  SIGNAL_CHANGED,
  SIGNAL_INTEGRITY_FAILED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
default_watch (SubagentApprovalSink *self,
               const char           *parent_run_id)
{
}

static guint
default_prune_stale (SubagentApprovalSink  *self,
                     GTimeSpan              max_age,
                     GError               **error)
{
  return 0;
}

/* Sinks written before the batch method: one compare-and-set after another. */
static gboolean
default_update_status_batch (SubagentApprovalSink    *self,
                             const char              *parent_run_id,
                             const char * const      *request_ids,
                             guint                    n_requests,
                             SubagentApprovalStatus   status,
                             const char              *reason,
                             const char              *actor,
                             gboolean                *won,
                             GError                 **error)
{
  SubagentApprovalSinkInterface *iface = SUBAGENT_APPROVAL_SINK_GET_IFACE (self);

  for (guint i = 0; i < n_requests; i++)
    {
      GError *local_error = NULL;

      won[i] = iface->update_status (self, parent_run_id, request_ids[i], status, reason, actor, &local_error);
      if (local_error != NULL)
        {
          g_propagate_error (error, local_error);
          return FALSE;
        }
    }
  return TRUE;
}

static void
subagent_approval_sink_default_init (SubagentApprovalSinkInterface *iface)
{
  iface->update_status_batch = default_update_status_batch;
  iface->watch = default_watch;
  iface->unwatch = default_watch;
  iface->prune_stale = default_prune_stale;

  /**
   * SubagentApprovalSink::changed:
   * @self: the sink
   * @parent_run_id: the run whose stored queue changed
   *
   * The stored queue of @parent_run_id changed, possibly in another
   * process. Emitted in the thread-default main context of whoever called
   * subagent_approval_sink_watch() for that run; a sink may also emit it
   * for its own writes.
   */
  signals[SIGNAL_CHANGED] =
    g_signal_new ("changed", G_TYPE_FROM_INTERFACE (iface), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

  /**
   * SubagentApprovalSink::integrity-failed:
   * @self: the sink
   * @parent_run_id: the run whose stored queue failed to verify
   * @message: what failed, for a log or a person
   *
   * Stored data of @parent_run_id did not verify (a bad signature, an
   * altered request) and was treated as empty.
   */
  signals[SIGNAL_INTEGRITY_FAILED] =
    g_signal_new ("integrity-failed", G_TYPE_FROM_INTERFACE (iface), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);
}

static gboolean
check_run_id (const char  *parent_run_id,
              GError     **error)
{
  if (subagent_approval_id_is_valid (parent_run_id))
    return TRUE;
  g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INVALID_ID,
               "Invalid parent run id “%s”: use 1–%d characters of [A-Za-z0-9_-]",
               parent_run_id ? parent_run_id : "(null)", SUBAGENT_APPROVAL_ID_MAX_LENGTH);
  return FALSE;
}

/**
 * subagent_approval_sink_save:
 * @self: a sink
 * @parent_run_id: the run whose queue is stored
 * @requests: (element-type SubagentApprovalRequest): requests of that run
 * @error: return location for a #GError
 *
 * Merges @requests into the stored queue of @parent_run_id: missing
 * requests are added; for stored ones a stored terminal state wins,
 * otherwise the given request replaces the stored one.
 *
 * Returns: %TRUE on success
 */
gboolean
subagent_approval_sink_save (SubagentApprovalSink  *self,
                             const char            *parent_run_id,
                             GPtrArray             *requests,
                             GError               **error)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_SINK (self), FALSE);
  g_return_val_if_fail (requests != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_run_id (parent_run_id, error))
    return FALSE;
  for (guint i = 0; i < requests->len; i++)
    {
      SubagentApprovalRequest *request = g_ptr_array_index (requests, i);

      g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (request), FALSE);
      if (g_strcmp0 (subagent_approval_request_get_parent_run_id (request), parent_run_id) != 0)
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                       "Approval request %s belongs to run %s, not %s; save it with its own run",
                       subagent_approval_request_get_request_id (request),
                       subagent_approval_request_get_parent_run_id (request), parent_run_id);
          return FALSE;
        }
    }
  return SUBAGENT_APPROVAL_SINK_GET_IFACE (self)->save (self, parent_run_id, requests, error);
}

/**
 * subagent_approval_sink_load:
 * @self: a sink
 * @parent_run_id: the run whose queue to read
 * @error: return location for a #GError
 *
 * Reads a snapshot of the stored queue of @parent_run_id. Changing the
 * returned requests does not change the store. The array frees its
 * elements when it is freed (its element free function is g_object_unref()).
 *
 * Returns: (transfer container) (element-type SubagentApprovalRequest): the
 *   stored requests, empty when nothing (verifiable) is stored; %NULL with
 *   @error set when the store could not be read
 */
GPtrArray *
subagent_approval_sink_load (SubagentApprovalSink  *self,
                             const char            *parent_run_id,
                             GError               **error)
{
  GPtrArray *requests;
  GError *local_error = NULL;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_SINK (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_run_id (parent_run_id, error))
    return NULL;
  requests = SUBAGENT_APPROVAL_SINK_GET_IFACE (self)->load (self, parent_run_id, &local_error);
  if (local_error != NULL)
    {
      g_clear_pointer (&requests, g_ptr_array_unref);
      g_propagate_error (error, local_error);
      return NULL;
    }
  if (requests == NULL)
    requests = g_ptr_array_new_with_free_func (g_object_unref);
  return requests;
}

/**
 * subagent_approval_sink_update_status:
 * @self: a sink
 * @parent_run_id: the run whose queue holds the request
 * @request_id: the request to resolve
 * @status: the terminal state to set
 * @reason: (nullable): why (for every state but approval)
 * @actor: (nullable): who gives the verdict
 * @error: return location for a #GError
 *
 * Compare-and-set from pending: applies the verdict to the stored request
 * only if it is still pending. This is how a verdict is given across
 * processes, and how a queue makes sure two processes cannot both win.
 *
 * Returns: %TRUE if this call resolved the request; %FALSE without an
 *   error when it is missing or already resolved, %FALSE with @error set
 *   when the store failed
 */
gboolean
subagent_approval_sink_update_status (SubagentApprovalSink    *self,
                                      const char              *parent_run_id,
                                      const char              *request_id,
                                      SubagentApprovalStatus   status,
                                      const char              *reason,
                                      const char              *actor,
                                      GError                 **error)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_SINK (self), FALSE);
  g_return_val_if_fail (subagent_approval_status_is_terminal (status), FALSE);
  g_return_val_if_fail (status <= SUBAGENT_APPROVAL_STATUS_ABANDONED, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_run_id (parent_run_id, error))
    return FALSE;
  if (!subagent_approval_id_is_valid (request_id))
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INVALID_ID,
                   "Invalid approval request id “%s”: use 1–%d characters of [A-Za-z0-9_-]",
                   request_id ? request_id : "(null)", SUBAGENT_APPROVAL_ID_MAX_LENGTH);
      return FALSE;
    }
  return SUBAGENT_APPROVAL_SINK_GET_IFACE (self)->update_status (self, parent_run_id, request_id,
                                                                 status, reason, actor, error);
}

/**
 * subagent_approval_sink_update_status_batch:
 * @self: a sink
 * @parent_run_id: the run whose queue holds the requests
 * @request_ids: (array zero-terminated=1): the requests to resolve
 * @status: the terminal state to set on each
 * @reason: (nullable): why (for every state but approval)
 * @actor: (nullable): who gives the verdict
 * @error: return location for a #GError
 *
 * subagent_approval_sink_update_status() for every request of
 * @request_ids, with one verdict: each request is resolved only if it is
 * still pending when its verdict is applied, so of several writers racing
 * for a request exactly one wins it, whether they use this function or
 * subagent_approval_sink_update_status(). An id given twice is resolved
 * at most once (the first occurrence reports it).
 *
 * The file and postgres stores write the whole batch at once (one atomic
 * file write, one transaction), so approving many requests costs about
 * what approving one does; other sinks apply the verdicts one after
 * another. With an error, some of the verdicts may still have been
 * stored by such a sink: load the run to learn which.
 *
 * Returns: (transfer full) (element-type gboolean) (nullable): one entry
 *   per id of @request_ids, %TRUE where this call resolved the request
 *   (%FALSE where it is missing or was not pending); %NULL with @error set
 *   when the store failed or an id is invalid
 *
 * Since: 0.2
 */
GArray *
subagent_approval_sink_update_status_batch (SubagentApprovalSink    *self,
                                            const char              *parent_run_id,
                                            const char * const      *request_ids,
                                            SubagentApprovalStatus   status,
                                            const char              *reason,
                                            const char              *actor,
                                            GError                 **error)
{
  g_autoptr(GArray) won = NULL;
  guint n = 0;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_SINK (self), NULL);
  g_return_val_if_fail (request_ids != NULL, NULL);
  g_return_val_if_fail (subagent_approval_status_is_terminal (status), NULL);
  g_return_val_if_fail (status <= SUBAGENT_APPROVAL_STATUS_CANCELLED, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_run_id (parent_run_id, error))
    return NULL;
  for (; request_ids[n] != NULL; n++)
    if (!subagent_approval_id_is_valid (request_ids[n]))
      {
        g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INVALID_ID,
                     "Invalid approval request id “%s”: use 1–%d characters of [A-Za-z0-9_-]",
                     request_ids[n], SUBAGENT_APPROVAL_ID_MAX_LENGTH);
        return NULL;
      }
  won = g_array_sized_new (FALSE, TRUE, sizeof (gboolean), n);
  g_array_set_size (won, n);
  if (n == 0)
    return g_steal_pointer (&won);
  if (!SUBAGENT_APPROVAL_SINK_GET_IFACE (self)->update_status_batch (self, parent_run_id, request_ids, n, status,
                                                                     reason, actor, (gboolean *) won->data, error))
    return NULL;
  return g_steal_pointer (&won);
}

/**
 * subagent_approval_sink_prune_stale:
 * @self: a sink
 * @max_age: how long (in microseconds) a stored queue may stay untouched
 * @error: return location for a #GError
 *
 * Removes stored queues untouched for at least @max_age. A queue that
 * still holds a pending request is never removed.
 *
 * Returns: how many stored queues were removed (0 with @error set on failure)
 */
guint
subagent_approval_sink_prune_stale (SubagentApprovalSink  *self,
                                    GTimeSpan              max_age,
                                    GError               **error)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_SINK (self), 0);
  g_return_val_if_fail (max_age >= 0, 0);
  g_return_val_if_fail (error == NULL || *error == NULL, 0);

  return SUBAGENT_APPROVAL_SINK_GET_IFACE (self)->prune_stale (self, max_age, error);
}

/**
 * subagent_approval_sink_list_runs:
 * @self: a sink
 * @error: return location for a #GError
 *
 * Lists the parent run ids that have a stored queue, or %NULL with @error
 * set.
 *
 * Returns: (transfer full) (array zero-terminated=1) (nullable): the parent
 *   run ids that have a stored queue, or %NULL with @error set
 *
 * Since: 0.2
 */
GStrv
subagent_approval_sink_list_runs (SubagentApprovalSink  *self,
                                  GError               **error)
{
  SubagentApprovalSinkInterface *iface;
  GStrv runs;
  GError *local_error = NULL;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_SINK (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  iface = SUBAGENT_APPROVAL_SINK_GET_IFACE (self);
  if (iface->list_runs == NULL)
    return g_new0 (char *, 1);
  runs = iface->list_runs (self, &local_error);
  if (local_error != NULL)
    {
      g_clear_pointer (&runs, g_strfreev);
      g_propagate_error (error, local_error);
      return NULL;
    }
  return runs ? runs : g_new0 (char *, 1);
}

/**
 * subagent_approval_sink_watch:
 * @self: a sink
 * @parent_run_id: the run to watch
 *
 * Starts emitting #SubagentApprovalSink::changed for @parent_run_id in the
 * calling thread's thread-default main context. Pair with
 * subagent_approval_sink_unwatch() from the same context.
 */
void
subagent_approval_sink_watch (SubagentApprovalSink *self,
                              const char           *parent_run_id)
{
  g_return_if_fail (SUBAGENT_IS_APPROVAL_SINK (self));
  g_return_if_fail (subagent_approval_id_is_valid (parent_run_id));

  SUBAGENT_APPROVAL_SINK_GET_IFACE (self)->watch (self, parent_run_id);
}

/**
 * subagent_approval_sink_unwatch:
 * @self: a sink
 * @parent_run_id: the run to stop watching
 *
 * Undoes one subagent_approval_sink_watch() made from the calling thread's
 * thread-default main context. Sinks that cannot stop watching ignore it.
 */
void
subagent_approval_sink_unwatch (SubagentApprovalSink *self,
                                const char           *parent_run_id)
{
  SubagentApprovalSinkInterface *iface;

  g_return_if_fail (SUBAGENT_IS_APPROVAL_SINK (self));
  g_return_if_fail (subagent_approval_id_is_valid (parent_run_id));

  iface = SUBAGENT_APPROVAL_SINK_GET_IFACE (self);
  if (iface->unwatch != NULL)
    iface->unwatch (self, parent_run_id);
}

/**
 * subagent_approval_sink_emit_changed:
 * @self: a sink
 * @parent_run_id: the run whose stored queue changed
 *
 * Emits #SubagentApprovalSink::changed on the calling thread; for
 * implementations, from a source attached to the watcher's context.
 */
void
subagent_approval_sink_emit_changed (SubagentApprovalSink *self,
                                     const char           *parent_run_id)
{
  g_return_if_fail (SUBAGENT_IS_APPROVAL_SINK (self));

  g_signal_emit (self, signals[SIGNAL_CHANGED], 0, parent_run_id);
}

/**
 * subagent_approval_sink_emit_integrity_failed:
 * @self: a sink
 * @parent_run_id: the run whose stored queue failed to verify
 * @message: what failed
 *
 * Emits #SubagentApprovalSink::integrity-failed on the calling thread.
 */
void
subagent_approval_sink_emit_integrity_failed (SubagentApprovalSink *self,
                                              const char           *parent_run_id,
                                              const char           *message)
{
  g_return_if_fail (SUBAGENT_IS_APPROVAL_SINK (self));

  g_signal_emit (self, signals[SIGNAL_INTEGRITY_FAILED], 0, parent_run_id, message);
}
