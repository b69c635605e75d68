/* subagent-shutdown.c: stopping a supervisor and what it reports.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-supervisor-private.h"

/**
 * SubagentShutdownReport:
 *
 * What subagent_supervisor_shutdown() found: whether every child stopped
 * within the timeout, how many were cancelled, and the run ids of those
 * that did not stop with the workspaces they still use. Those workspaces
 * are kept, not removed under a live process; the manager cleans each up
 * when its child ends. Immutable.
 */
struct _SubagentShutdownReport
{
  GObject parent_instance;

  gboolean clean;
  guint n_cancelled;
  GStrv unstopped;
  GStrv kept_workspaces;
};

G_DEFINE_FINAL_TYPE (SubagentShutdownReport, subagent_shutdown_report, G_TYPE_OBJECT)

static void
subagent_shutdown_report_finalize (GObject *object)
{
  SubagentShutdownReport *self = SUBAGENT_SHUTDOWN_REPORT (object);

  g_strfreev (self->unstopped);
  g_strfreev (self->kept_workspaces);
  G_OBJECT_CLASS (subagent_shutdown_report_parent_class)->finalize (object);
}

static void
subagent_shutdown_report_class_init (SubagentShutdownReportClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_shutdown_report_finalize;
}

static void
subagent_shutdown_report_init (SubagentShutdownReport *self)
{
}

static SubagentShutdownReport *
report_new (gboolean      clean,
            guint         n_cancelled,
            GStrvBuilder *unstopped,
            GStrvBuilder *kept)
{
  SubagentShutdownReport *self = g_object_new (SUBAGENT_TYPE_SHUTDOWN_REPORT, NULL);

  self->clean = clean;
  self->n_cancelled = n_cancelled;
  self->unstopped = g_strv_builder_end (unstopped);
  self->kept_workspaces = g_strv_builder_end (kept);
  return self;
}

/**
 * subagent_shutdown_report_get_clean:
 * @self: a #SubagentShutdownReport
 *
 * Checks whether every child stopped within the timeout.
 *
 * Returns: %TRUE when every child stopped within the timeout
 *
 * Since: 0.2
 */
gboolean
subagent_shutdown_report_get_clean (SubagentShutdownReport *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SHUTDOWN_REPORT (self), FALSE);
  return self->clean;
}

/**
 * subagent_shutdown_report_get_n_cancelled:
 * @self: a #SubagentShutdownReport
 *
 * Gets how many queued or running children the shutdown cancelled.
 *
 * Returns: how many queued or running children the shutdown cancelled
 *
 * Since: 0.2
 */
guint
subagent_shutdown_report_get_n_cancelled (SubagentShutdownReport *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SHUTDOWN_REPORT (self), 0);
  return self->n_cancelled;
}

/**
 * subagent_shutdown_report_get_unstopped:
 * @self: a #SubagentShutdownReport
 *
 * Gets the run ids of the children that were still running when the timeout
 * passed.
 *
 * Returns: (transfer none) (array zero-terminated=1): the run ids of the
 *   children that were still running when the timeout passed
 *
 * Since: 0.2
 */
const char * const *
subagent_shutdown_report_get_unstopped (SubagentShutdownReport *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SHUTDOWN_REPORT (self), NULL);
  return (const char * const *) self->unstopped;
}

/**
 * subagent_shutdown_report_get_kept_workspaces:
 * @self: a #SubagentShutdownReport
 *
 * Gets the workspaces of those children, kept because a process may still
 * use them.
 *
 * Returns: (transfer none) (array zero-terminated=1): the workspaces of
 *   those children, kept because a process may still use them
 *
 * Since: 0.2
 */
const char * const *
subagent_shutdown_report_get_kept_workspaces (SubagentShutdownReport *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SHUTDOWN_REPORT (self), NULL);
  return (const char * const *) self->kept_workspaces;
}

/* Workspaces kept for follow-ups go when the supervisor stops; cleanup
 * blocks, so it runs in a thread. */
static void
dispose_kept_in_thread (GTask        *task,
                        gpointer      source,
                        gpointer      task_data,
                        GCancellable *cancellable)
{
  GHashTable *kept = task_data;
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, kept);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    subagent_isolation_context_cleanup (value);
  g_task_return_boolean (task, TRUE);
}

static void
kept_disposed (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  SubagentSupervisor *self = SUBAGENT_SUPERVISOR (source);
  g_autoptr(GTask) shutdown = user_data;
  GHashTable *kept = g_task_get_task_data (G_TASK (result));
  SubagentShutdownReport *report = g_object_get_data (G_OBJECT (shutdown), "report");
  GHashTableIter iter;
  gpointer key, value;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, kept);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      SubagentJob *job = g_hash_table_lookup (self->jobs, key);
      g_autoptr(JsonObject) details = json_object_new ();

      if (job == NULL)
        continue;
      json_object_set_string_member (details, "workspace", subagent_isolation_context_get_child_root (value));
      _subagent_supervisor_push_event_locked (self, job, SUBAGENT_EVENT_WORKSPACE_DISPOSED, details);
    }
  g_mutex_unlock (&self->lock);
  _subagent_supervisor_kick (self);

  g_task_return_pointer (shutdown, g_object_ref (report), g_object_unref);
}

static void
finish_shutdown (SubagentSupervisor     *self,
                 GTask                  *shutdown,
                 SubagentShutdownReport *report)
{
  g_autoptr(GTask) dispose = g_task_new (self, NULL, kept_disposed, g_object_ref (shutdown));
  GHashTable *kept;

  g_object_set_data_full (G_OBJECT (shutdown), "report", report, g_object_unref);
  g_mutex_lock (&self->lock);
  kept = g_steal_pointer (&self->kept);
  self->kept = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  g_mutex_unlock (&self->lock);
  g_task_set_task_data (dispose, kept, (GDestroyNotify) g_hash_table_unref);
  g_task_run_in_thread (dispose, dispose_kept_in_thread);
}

/* Every child stopped (called from the supervisor's actions). */
void
_subagent_supervisor_shutdown_done (SubagentSupervisor *self)
{
  g_autoptr(GTask) shutdown = NULL;
  g_autoptr(GStrvBuilder) none = g_strv_builder_new ();
  g_autoptr(GStrvBuilder) none_kept = g_strv_builder_new ();

  g_mutex_lock (&self->lock);
  if (self->n_running > 0)
    {
      g_mutex_unlock (&self->lock);
      return;
    }
  shutdown = g_steal_pointer (&self->shutdown_task);
  if (self->shutdown_timeout != NULL)
    {
      g_source_destroy (self->shutdown_timeout);
      g_clear_pointer (&self->shutdown_timeout, g_source_unref);
    }
  g_mutex_unlock (&self->lock);

  if (shutdown != NULL)
    finish_shutdown (self, shutdown, report_new (TRUE, self->shutdown_cancelled, none, none_kept));
}

static gboolean
shutdown_timed_out (gpointer user_data)
{
  SubagentSupervisor *self = user_data;
  g_autoptr(GTask) shutdown = NULL;
  g_autoptr(GStrvBuilder) unstopped = g_strv_builder_new ();
  g_autoptr(GStrvBuilder) kept = g_strv_builder_new ();
  const char *root = subagent_manager_get_root (self->manager);
  GHashTableIter iter;
  gpointer value;

  g_mutex_lock (&self->lock);
  shutdown = g_steal_pointer (&self->shutdown_task);
  g_clear_pointer (&self->shutdown_timeout, g_source_unref);
  g_hash_table_iter_init (&iter, self->jobs);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      SubagentJob *job = value;

      if (job->state != SUBAGENT_JOB_RUNNING)
        continue;
      /* Its waiters learn it now; the child may still end later. */
      job->abandoned = TRUE;
      g_strv_builder_add (unstopped, job->run_id);
      if (job->hooks.workspace_root != NULL && !g_str_equal (job->hooks.workspace_root, root))
        g_strv_builder_add (kept, job->hooks.workspace_root);
      _subagent_supervisor_push_locked (self, SUBAGENT_ACTION_RETURN, job);
    }
  g_mutex_unlock (&self->lock);
  _subagent_supervisor_kick (self);

  if (shutdown != NULL)
    finish_shutdown (self, shutdown, report_new (FALSE, self->shutdown_cancelled, unstopped, kept));
  return G_SOURCE_REMOVE;
}

/**
 * subagent_supervisor_shutdown_async:
 * @self: a #SubagentSupervisor
 * @timeout_ms: how long to wait for the children; 0 means
 *   %SUBAGENT_SUPERVISOR_DEFAULT_SHUTDOWN_TIMEOUT_MS
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called with the report
 * @user_data: (closure): data for @callback
 *
 * Shuts the supervisor down: from now on subagent_supervisor_spawn()
 * fails with %SUBAGENT_SUPERVISOR_ERROR_CLOSED; queued children end
 * `cancelled` without running; running ones are cancelled (cause `system`)
 * and waited for, at most @timeout_ms. Children still running then are
 * reported, with their workspaces, which are left alone; waiters of those
 * children get %SUBAGENT_SUPERVISOR_ERROR_CLOSED. Workspaces kept for
 * follow-ups are cleaned up (in a thread) before the report comes.
 */
void
subagent_supervisor_shutdown_async (SubagentSupervisor  *self,
                                    guint                timeout_ms,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  guint n;

  g_return_if_fail (SUBAGENT_IS_SUPERVISOR (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, subagent_supervisor_shutdown_async);

  g_mutex_lock (&self->lock);
  if (self->shutdown_task != NULL)
    {
      g_mutex_unlock (&self->lock);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_PENDING,
                               "A shutdown of this supervisor is already under way");
      return;
    }
  self->shutdown_task = g_object_ref (task);
  g_mutex_unlock (&self->lock);

  n = _subagent_supervisor_cancel_all (self, SUBAGENT_CANCEL_CAUSE_SYSTEM, TRUE);

  g_mutex_lock (&self->lock);
  self->shutdown_cancelled = n;
  if (self->n_running == 0)
    _subagent_supervisor_push_locked (self, SUBAGENT_ACTION_SHUTDOWN_DONE, NULL);
  else if (self->shutdown_task != NULL)
    {
      self->shutdown_timeout = g_timeout_source_new (timeout_ms ? timeout_ms : SUBAGENT_SUPERVISOR_DEFAULT_SHUTDOWN_TIMEOUT_MS);
      g_source_set_callback (self->shutdown_timeout, shutdown_timed_out, g_object_ref (self), g_object_unref);
      g_source_set_static_name (self->shutdown_timeout, "[subagent] supervisor shutdown timeout");
      g_source_attach (self->shutdown_timeout, self->context);
    }
  g_mutex_unlock (&self->lock);
  _subagent_supervisor_kick (self);
}

/**
 * subagent_supervisor_shutdown_finish:
 * @self: a #SubagentSupervisor
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes the operation started with subagent_supervisor_shutdown_async().
 *
 * Returns: (transfer full) (nullable): the report, or %NULL with @error set
 *   (a shutdown already under way)
 *
 * Since: 0.2
 */
SubagentShutdownReport *
subagent_supervisor_shutdown_finish (SubagentSupervisor  *self,
                                     GAsyncResult        *result,
                                     GError             **error)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

typedef struct {
  gboolean done;
  GAsyncResult *result;
} ShutdownWait;

static void
shutdown_waited (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  ShutdownWait *wait = user_data;

  wait->result = g_object_ref (result);
  wait->done = TRUE;
}

/**
 * subagent_supervisor_shutdown:
 * @self: a #SubagentSupervisor
 * @timeout_ms: how long to wait; 0 means the default (10 s)
 * @error: return location for a #GError
 *
 * The blocking variant of subagent_supervisor_shutdown_async(). When the
 * calling thread owns (or can own) the supervisor's main context, it
 * iterates that context while it waits, since the children finish there;
 * otherwise it waits on a private context.
 *
 * Returns: (transfer full) (nullable): the report
 */
SubagentShutdownReport *
subagent_supervisor_shutdown (SubagentSupervisor  *self,
                              guint                timeout_ms,
                              GError             **error)
{
  ShutdownWait wait = { FALSE, NULL };
  gboolean own;
  g_autoptr(GMainContext) private_context = NULL;
  GMainContext *context;
  SubagentShutdownReport *report;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);

  own = g_main_context_acquire (self->context);
  private_context = own ? NULL : g_main_context_new ();
  context = own ? self->context : private_context;
  g_main_context_push_thread_default (context);
  subagent_supervisor_shutdown_async (self, timeout_ms, NULL, shutdown_waited, &wait);
  while (!wait.done)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  if (own)
    g_main_context_release (self->context);

  report = subagent_supervisor_shutdown_finish (self, wait.result, error);
  g_object_unref (wait.result);
  return report;
}
