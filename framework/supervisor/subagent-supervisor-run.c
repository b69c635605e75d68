/* subagent-supervisor-run.c: a supervisor's children from the caller's
 * side: spawning them, waiting for their results, running one to the end,
 * looking a result up and cancelling (the class: subagent-supervisor.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-supervisor-private.h"

/**
 * subagent_supervisor_spawn:
 * @self: a #SubagentSupervisor
 * @task: what the child should do
 * @options: (nullable): definition, depth, isolation and limits; not kept
 * @error: return location for a #GError
 *
 * Accepts a child: it starts at once when a running slot is free, else it
 * waits in the queue. A refusal is immediate: an empty task
 * (%SUBAGENT_ERROR_INVALID_ARGUMENT), a shut-down supervisor
 * (%SUBAGENT_SUPERVISOR_ERROR_CLOSED), the outstanding cap
 * (%SUBAGENT_SUPERVISOR_ERROR_OUTSTANDING_CAP), the agent cap
 * (%SUBAGENT_SUPERVISOR_ERROR_AGENT_CAP) or a spent parent budget
 * (%SUBAGENT_ERROR_BUDGET_EXCEEDED); nothing is prepared then.
 *
 * The child ends only on its own or through the supervisor; use
 * subagent_supervisor_wait_async() for its result.
 *
 * Returns: (transfer full) (nullable): the child's run id (also its session
 *   id), or %NULL with @error set
 */
char *
subagent_supervisor_spawn (SubagentSupervisor  *self,
                           const char          *task,
                           SubagentRunOptions  *options,
                           GError             **error)
{
  const SubagentSpawnExtras extras = { .count_as_agent = TRUE };

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);
  g_return_val_if_fail (options == NULL || SUBAGENT_IS_RUN_OPTIONS (options), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return _subagent_supervisor_spawn_full (self, task, options, &extras, error);
}

/**
 * subagent_supervisor_wait_async:
 * @self: a #SubagentSupervisor
 * @run_id: a child's run id
 * @cancellable: (nullable): ends the wait — never the child
 * @callback: (scope async): called with the child's result
 * @user_data: (closure): data for @callback
 *
 * Waits for a child to end; for a child that already ended, the result
 * comes at once (past #SubagentSupervisor:results-in-memory children,
 * rebuilt from its session record: one line of the manager's session log,
 * read in a worker thread).
 */
void
subagent_supervisor_wait_async (SubagentSupervisor  *self,
                                const char          *run_id,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_return_if_fail (SUBAGENT_IS_SUPERVISOR (self));
  g_return_if_fail (run_id != NULL);

  _subagent_supervisor_add_waiter (self, run_id, cancellable, callback, user_data);
}

/**
 * subagent_supervisor_wait_finish:
 * @self: a #SubagentSupervisor
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes the operation started with subagent_supervisor_wait_async().
 *
 * Returns: (transfer full) (nullable): the child's result (whatever its
 *   status), or %NULL with @error set: %SUBAGENT_SUPERVISOR_ERROR_NOT_ACTIVE
 *   for an unknown id, %SUBAGENT_SUPERVISOR_ERROR_CLOSED for a child a
 *   shutdown gave up on, %G_IO_ERROR_CANCELLED when the wait was cancelled
 *
 * Since: 0.2
 */
SubagentRunResult *
subagent_supervisor_wait_finish (SubagentSupervisor  *self,
                                 GAsyncResult        *result,
                                 GError             **error)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
run_waited (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  SubagentRunResult *run_result = subagent_supervisor_wait_finish (SUBAGENT_SUPERVISOR (source), result, &error);

  if (run_result == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, run_result, g_object_unref);
}

/**
 * subagent_supervisor_run_async:
 * @self: a #SubagentSupervisor
 * @task: what the child should do
 * @options: (nullable): definition, depth, isolation and limits; not kept
 * @cancellable: (nullable): ends the wait — never the child
 * @callback: (scope async): called with the child's result
 * @user_data: (closure): data for @callback
 *
 * subagent_supervisor_spawn() then subagent_supervisor_wait_async(); a
 * refusal comes through subagent_supervisor_run_finish().
 */
void
subagent_supervisor_run_async (SubagentSupervisor  *self,
                               const char          *task_text,
                               SubagentRunOptions  *options,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autofree char *run_id = NULL;
  GError *error = NULL;

  g_return_if_fail (SUBAGENT_IS_SUPERVISOR (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, subagent_supervisor_run_async);
  if ((run_id = subagent_supervisor_spawn (self, task_text, options, &error)) == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  subagent_supervisor_wait_async (self, run_id, cancellable, run_waited, g_steal_pointer (&task));
}

/**
 * subagent_supervisor_run_finish:
 * @self: a #SubagentSupervisor
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes the operation started with subagent_supervisor_run_async().
 *
 * Returns: (transfer full) (nullable): the child's result, or %NULL with
 *   @error set (a refusal of subagent_supervisor_spawn(), or a wait error)
 *
 * Since: 0.2
 */
SubagentRunResult *
subagent_supervisor_run_finish (SubagentSupervisor  *self,
                                GAsyncResult        *result,
                                GError             **error)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * subagent_supervisor_lookup_result:
 * @self: a #SubagentSupervisor
 * @run_id: a child's run id
 *
 * Looks up the result of a child that ended. Past
 * #SubagentSupervisor:results-in-memory children it is rebuilt from the
 * child's session record (a blocking read of its line of the manager's
 * session log).
 *
 * Returns: (transfer full) (nullable): the result of a child that ended
 *
 * Since: 0.2
 */
SubagentRunResult *
subagent_supervisor_lookup_result (SubagentSupervisor *self,
                                   const char         *run_id)
{
  SubagentJob *job;
  SubagentRunResult *result = NULL;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);
  g_return_val_if_fail (run_id != NULL, NULL);

  g_mutex_lock (&self->lock);
  job = g_hash_table_lookup (self->jobs, run_id);
  if (job != NULL && job->result != NULL)
    result = g_object_ref (job->result);
  g_mutex_unlock (&self->lock);
  if (job == NULL)
    result = _subagent_supervisor_read_back_result (self, run_id);
  return result;
}

/**
 * subagent_supervisor_cancel:
 * @self: a #SubagentSupervisor
 * @run_id: a child's run id
 * @cause: who asks
 *
 * Cancels one child. A queued child is taken out of the queue and never
 * runs; it ends `cancelled` at once. A running child's cancellable fires;
 * its runner stops it, and it ends `cancelled` (or `partial`, when it had
 * produced something).
 *
 * Returns: %SUBAGENT_CANCEL_OUTCOME_ACCEPTED, or why nothing was done
 */
SubagentCancelOutcome
subagent_supervisor_cancel (SubagentSupervisor  *self,
                            const char          *run_id,
                            SubagentCancelCause  cause)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), SUBAGENT_CANCEL_OUTCOME_NOT_ACTIVE);
  g_return_val_if_fail (run_id != NULL, SUBAGENT_CANCEL_OUTCOME_NOT_ACTIVE);

  return _subagent_supervisor_cancel (self, run_id, cause);
}

/**
 * subagent_supervisor_cancel_all:
 * @self: a #SubagentSupervisor
 * @cause: who asks
 *
 * Cancels every queued and running child, queued ones first so that none
 * of them takes a slot a cancelled child frees.
 *
 * Returns: how many children were cancelled
 */
guint
subagent_supervisor_cancel_all (SubagentSupervisor  *self,
                                SubagentCancelCause  cause)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), 0);

  return _subagent_supervisor_cancel_all (self, cause, FALSE);
}
