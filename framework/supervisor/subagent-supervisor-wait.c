/* subagent-supervisor-wait.c: waiting for children — asynchronously, or
 * from a tool that must block — and the workspaces kept for follow-ups.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-supervisor-private.h"

/* One caller waiting for a child's result. */
struct _SubagentWaiter {
  gatomicrefcount ref;
  GTask *task;
  GCancellable *cancellable;
  gulong handler;
  gint done;   /* atomic: whoever sets it returns the task */
};

static SubagentWaiter *
waiter_ref (SubagentWaiter *waiter)
{
  g_atomic_ref_count_inc (&waiter->ref);
  return waiter;
}

void
_subagent_waiter_unref (SubagentWaiter *waiter)
{
  if (!g_atomic_ref_count_dec (&waiter->ref))
    return;
  g_clear_object (&waiter->task);
  g_clear_object (&waiter->cancellable);
  g_free (waiter);
}

static void
waiter_cancelled (GCancellable *cancellable,
                  gpointer      user_data)
{
  SubagentWaiter *waiter = user_data;

  if (g_atomic_int_compare_and_exchange (&waiter->done, 0, 1))
    g_task_return_new_error (waiter->task, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                             "Stopped waiting for the subagent; it keeps running (cancel it through its supervisor)");
}

void
_subagent_waiter_complete (SubagentWaiter    *waiter,
                 SubagentRunResult *result,
                 const GError      *error)
{
  if (!g_atomic_int_compare_and_exchange (&waiter->done, 0, 1))
    return;
  if (waiter->handler != 0)
    g_cancellable_disconnect (waiter->cancellable, waiter->handler);
  waiter->handler = 0;
  if (result != NULL)
    g_task_return_pointer (waiter->task, g_object_ref (result), g_object_unref);
  else
    g_task_return_error (waiter->task, g_error_copy (error));
}

static void
read_back_in_thread (GTask        *task,
                     gpointer      source_object,
                     gpointer      task_data,
                     GCancellable *cancellable)
{
  SubagentRunResult *result = _subagent_supervisor_read_back_result (source_object, task_data);

  if (result != NULL)
    g_task_return_pointer (task, result, g_object_unref);
  else
    g_task_return_new_error (task, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_NOT_ACTIVE,
                             "The record of subagent %s could not be read back", (const char *) task_data);
}

void
_subagent_supervisor_add_waiter (SubagentSupervisor  *self,
                                 const char          *run_id,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  SubagentWaiter *waiter;
  SubagentJob *job;

  g_task_set_source_tag (task, subagent_supervisor_wait_async);
  g_task_set_check_cancellable (task, FALSE);

  g_mutex_lock (&self->lock);
  job = g_hash_table_lookup (self->jobs, run_id);
  if (job == NULL)
    {
      g_mutex_unlock (&self->lock);
      /* Its record is read in a worker: no file I/O on the caller's context. */
      if (_subagent_supervisor_has_dropped_result (self, run_id))
        {
          g_task_set_task_data (task, g_strdup (run_id), g_free);
          g_task_run_in_thread (task, read_back_in_thread);
        }
      else
        g_task_return_new_error (task, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_NOT_ACTIVE,
                                 "This supervisor has no subagent %s", run_id);
      return;
    }
  if (job->state == SUBAGENT_JOB_DONE)
    {
      SubagentRunResult *result = g_object_ref (job->result);

      g_mutex_unlock (&self->lock);
      g_task_return_pointer (task, result, g_object_unref);
      return;
    }
  if (job->abandoned)
    {
      GError *closed = _subagent_job_abandoned_error (job);

      g_mutex_unlock (&self->lock);
      g_task_return_error (task, closed);
      return;
    }
  waiter = g_new0 (SubagentWaiter, 1);
  g_atomic_ref_count_init (&waiter->ref);
  waiter->task = g_steal_pointer (&task);
  waiter->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  g_ptr_array_add (job->waiters, waiter_ref (waiter));
  g_mutex_unlock (&self->lock);

  if (cancellable != NULL)
    {
      waiter->handler = g_cancellable_connect (cancellable, G_CALLBACK (waiter_cancelled), waiter_ref (waiter),
                                               (GDestroyNotify) _subagent_waiter_unref);
      /* Completed meanwhile: nothing left to cancel. */
      if (waiter->handler != 0 && g_atomic_int_get (&waiter->done))
        {
          g_cancellable_disconnect (cancellable, waiter->handler);
          waiter->handler = 0;
        }
    }
  _subagent_waiter_unref (waiter);
}

typedef struct {
  gboolean done;
  SubagentRunResult *result;
  GError *error;
} SyncWait;

static void
sync_waited (GObject      *source,
             GAsyncResult *res,
             gpointer      user_data)
{
  SyncWait *wait = user_data;

  wait->result = subagent_supervisor_wait_finish (SUBAGENT_SUPERVISOR (source), res, &wait->error);
  wait->done = TRUE;
}

void
_subagent_supervisor_block_until (SubagentSupervisor *self,
                                  gboolean           *done)
{
  /* Whoever can own the supervisor's context drives it; else it is driven
   * elsewhere and this thread iterates its own (thread-default) context. */
  if (g_main_context_acquire (self->context))
    {
      while (!*done)
        g_main_context_iteration (self->context, TRUE);
      g_main_context_release (self->context);
    }
  else
    {
      GMainContext *context = g_main_context_get_thread_default ();

      while (!*done)
        g_main_context_iteration (context, TRUE);
    }
}

SubagentRunResult *
_subagent_supervisor_wait_sync (SubagentSupervisor  *self,
                                const char          *run_id,
                                GCancellable        *cancellable,
                                GError             **error)
{
  SyncWait wait = { FALSE, NULL, NULL };
  gboolean own = g_main_context_acquire (self->context);
  g_autoptr(GMainContext) private_context = own ? NULL : g_main_context_new ();

  /* The waiter's callback comes in the context this thread iterates. */
  g_main_context_push_thread_default (own ? self->context : private_context);
  subagent_supervisor_wait_async (self, run_id, cancellable, sync_waited, &wait);
  while (!wait.done)
    g_main_context_iteration (own ? self->context : private_context, TRUE);
  g_main_context_pop_thread_default (own ? self->context : private_context);
  if (own)
    g_main_context_release (self->context);

  if (wait.result == NULL)
    g_propagate_error (error, wait.error);
  return wait.result;
}

guint
_subagent_supervisor_agents_left (SubagentSupervisor *self,
                                  const char         *parent_run_id)
{
  guint started;

  if (self->max_agents == 0)
    return G_MAXUINT;
  g_mutex_lock (&self->lock);
  started = GPOINTER_TO_UINT (g_hash_table_lookup (self->agents, parent_run_id));
  g_mutex_unlock (&self->lock);
  return started >= self->max_agents ? 0 : self->max_agents - started;
}

SubagentIsolationContext *
_subagent_supervisor_take_kept (SubagentSupervisor *self,
                                const char         *run_id)
{
  gpointer key = NULL, value = NULL;

  g_mutex_lock (&self->lock);
  if (g_hash_table_steal_extended (self->kept, run_id, &key, &value))
    g_free (key);
  g_mutex_unlock (&self->lock);
  return value;
}

char *
_subagent_supervisor_dup_kept_root (SubagentSupervisor *self,
                                    const char         *run_id)
{
  SubagentIsolationContext *context;
  char *root = NULL;

  g_mutex_lock (&self->lock);
  context = g_hash_table_lookup (self->kept, run_id);
  if (context != NULL)
    root = g_strdup (subagent_isolation_context_get_child_root (context));
  g_mutex_unlock (&self->lock);
  return root;
}

void
_subagent_supervisor_dispose_kept (SubagentSupervisor *self)
{
  g_autoptr(GHashTable) kept = NULL;
  GHashTableIter iter;
  gpointer value;

  g_mutex_lock (&self->lock);
  kept = g_steal_pointer (&self->kept);
  self->kept = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  g_mutex_unlock (&self->lock);

  /* Last resort when nobody shut the supervisor down: this blocks. */
  g_hash_table_iter_init (&iter, kept);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    subagent_isolation_context_cleanup (value);
}
