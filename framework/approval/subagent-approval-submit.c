/* subagent-approval-submit.c: submitting a request and waiting for its verdict.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-approval-private.h"

SubagentApprovalAsyncWait *
subagent_approval_async_wait_ref (SubagentApprovalAsyncWait *wait)
{
  g_atomic_ref_count_inc (&wait->ref);
  return wait;
}

void
subagent_approval_async_wait_unref (SubagentApprovalAsyncWait *wait)
{
  if (!g_atomic_ref_count_dec (&wait->ref))
    return;
  g_assert (wait->task == NULL);
  g_clear_pointer (&wait->timeout_source, g_source_unref);
  g_clear_pointer (&wait->cancel_source, g_source_unref);
  g_object_unref (wait->request);
  g_object_unref (wait->queue);
  g_free (wait);
}

/* Hands the task its result; the first caller wins, later calls do nothing. */
void
subagent_approval_async_wait_complete (SubagentApprovalAsyncWait *wait,
                                       GError                    *error)
{
  SubagentApprovalQueue *self = wait->queue;
  g_autoptr(GTask) task = NULL;
  SubagentApprovalEntry *entry;

  g_mutex_lock (&self->lock);
  task = g_steal_pointer (&wait->task);
  if (task != NULL)
    {
      entry = g_hash_table_lookup (self->entries, subagent_approval_request_get_request_id (wait->request));
      if (entry != NULL)
        {
          entry->waiters--;
          g_ptr_array_remove_fast (entry->async_waits, wait);
        }
    }
  g_mutex_unlock (&self->lock);

  if (task == NULL)
    {
      g_clear_error (&error);
      return;
    }
  if (wait->timeout_source != NULL)
    g_source_destroy (wait->timeout_source);
  if (wait->cancel_source != NULL)
    g_source_destroy (wait->cancel_source);
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_int (task, subagent_approval_request_get_status (wait->request));
}

/* Registers @request as submitted with one waiter; persisting is the caller's. */
static gboolean
submit_begin (SubagentApprovalQueue      *self,
              SubagentApprovalRequest    *request,
              SubagentApprovalAsyncWait  *wait,
              GError                    **error)
{
  const char *id = subagent_approval_request_get_request_id (request);
  SubagentApprovalEntry *entry;

  if (g_strcmp0 (subagent_approval_request_get_parent_run_id (request), self->parent_run_id) != 0)
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Approval request %s belongs to run %s; it cannot go to the queue of run %s",
                   id, subagent_approval_request_get_parent_run_id (request), self->parent_run_id);
      return FALSE;
    }
  if (subagent_approval_status_is_terminal (subagent_approval_request_get_status (request)))
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_NOT_PENDING,
                   "Approval request %s is already %s; submit a new request", id,
                   subagent_approval_status_to_string (subagent_approval_request_get_status (request)));
      return FALSE;
    }

  g_mutex_lock (&self->lock);
  if (g_hash_table_contains (self->entries, id))
    {
      g_mutex_unlock (&self->lock);
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Approval request %s was already submitted to the queue of run %s",
                   id, self->parent_run_id);
      return FALSE;
    }
  entry = subagent_approval_queue_add_entry_locked (self, request);
  entry->waiters = 1;
  if (wait != NULL)
    g_ptr_array_add (entry->async_waits, subagent_approval_async_wait_ref (wait));
  g_mutex_unlock (&self->lock);
  return TRUE;
}

/* Saves a freshly submitted request and announces it, so whoever reacts to
 * ::request-added finds it in the store too. On failure nobody could answer
 * it elsewhere, so it is cancelled rather than left to wait. */
static gboolean
submit_persist (SubagentApprovalQueue    *self,
                SubagentApprovalRequest  *request,
                GError                  **error)
{
  g_autoptr(GPtrArray) one = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *message = NULL;

  if (self->sink != NULL)
    {
      one = g_ptr_array_new ();
      g_ptr_array_add (one, request);
    }
  if (self->sink == NULL || subagent_approval_sink_save (self->sink, self->parent_run_id, one, &local_error))
    {
      subagent_approval_queue_emit_added (self, request);
      return TRUE;
    }

  message = g_strdup_printf ("Cannot store approval request %s of run %s, so no approver can see it: %s",
                             subagent_approval_request_get_request_id (request), self->parent_run_id,
                             local_error->message);
  if (subagent_approval_request_transition (request, SUBAGENT_APPROVAL_STATUS_CANCELLED, message, "system"))
    subagent_approval_queue_notify_resolved (self, request);
  g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE, message);
  return FALSE;
}

static void
wake_waiters (GCancellable *cancellable,
              gpointer      user_data)
{
  SubagentApprovalQueue *self = user_data;

  g_mutex_lock (&self->lock);
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
}

/**
 * subagent_approval_queue_submit_sync:
 * @self: a queue
 * @request: a pending request of this queue's run
 * @cancellable: (nullable): cancels the wait, which cancels the request
 * @error: return location for a #GError
 *
 * Submits @request, stores it through the sink, and blocks the calling
 * thread on a #GCond until the request is resolved — here, by another
 * thread, or through the sink by another process — times out (then it
 * becomes %SUBAGENT_APPROVAL_STATUS_TIMEOUT), or @cancellable is cancelled
 * (then it becomes %SUBAGENT_APPROVAL_STATUS_CANCELLED). It never iterates a
 * main context, so it is safe on any thread.
 *
 * Returns: the terminal status; on error (a request of another run, already
 *   submitted, or that could not be stored) %SUBAGENT_APPROVAL_STATUS_CANCELLED
 *   with @error set
 */
SubagentApprovalStatus
subagent_approval_queue_submit_sync (SubagentApprovalQueue    *self,
                                     SubagentApprovalRequest  *request,
                                     GCancellable             *cancellable,
                                     GError                  **error)
{
  const char *id;
  gint64 deadline;
  gulong cancel_id = 0;
  SubagentApprovalStatus status;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), SUBAGENT_APPROVAL_STATUS_CANCELLED);
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (request), SUBAGENT_APPROVAL_STATUS_CANCELLED);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), SUBAGENT_APPROVAL_STATUS_CANCELLED);
  g_return_val_if_fail (error == NULL || *error == NULL, SUBAGENT_APPROVAL_STATUS_CANCELLED);

  if (!submit_begin (self, request, NULL, error))
    return SUBAGENT_APPROVAL_STATUS_CANCELLED;
  id = subagent_approval_request_get_request_id (request);

  if (submit_persist (self, request, error))
    {
      deadline = g_get_monotonic_time () +
                 (gint64) subagent_approval_request_get_timeout_seconds (request) * G_USEC_PER_SEC;
      if (cancellable != NULL)
        cancel_id = g_cancellable_connect (cancellable, G_CALLBACK (wake_waiters), self, NULL);

      g_mutex_lock (&self->lock);
      while (!subagent_approval_status_is_terminal (subagent_approval_request_get_status (request)))
        {
          gboolean cancelled = g_cancellable_is_cancelled (cancellable);

          if (cancelled || g_get_monotonic_time () >= deadline)
            {
              g_autofree char *reason = NULL;

              g_mutex_unlock (&self->lock);
              if (cancelled)
                reason = g_strdup ("The child stopped waiting for a verdict (cancelled)");
              else
                reason = g_strdup_printf ("No verdict within %u s",
                                          subagent_approval_request_get_timeout_seconds (request));
              if (!subagent_approval_queue_resolve (self, id,
                                                    cancelled ? SUBAGENT_APPROVAL_STATUS_CANCELLED
                                                              : SUBAGENT_APPROVAL_STATUS_TIMEOUT,
                                                    reason, "system", NULL) &&
                  !subagent_approval_status_is_terminal (subagent_approval_request_get_status (request)))
                {
                  /* The store shows it pending although it refused the
                   * change: give up locally, it is safe to deny. */
                  if (subagent_approval_request_transition (request, SUBAGENT_APPROVAL_STATUS_CANCELLED,
                                                            reason, "system"))
                    subagent_approval_queue_notify_resolved (self, request);
                }
              g_mutex_lock (&self->lock);
              continue;
            }
          g_cond_wait_until (&self->cond, &self->lock, deadline);
        }
      g_mutex_unlock (&self->lock);
      g_cancellable_disconnect (cancellable, cancel_id);
    }

  g_mutex_lock (&self->lock);
  {
    SubagentApprovalEntry *entry = g_hash_table_lookup (self->entries, id);
    if (entry != NULL)
      entry->waiters--;
  }
  g_mutex_unlock (&self->lock);

  status = subagent_approval_request_get_status (request);
  return status;
}

typedef struct {
  char *request_id;
  SubagentApprovalStatus status;
  char *reason;
} ResolveJob;

static void
resolve_job_free (ResolveJob *job)
{
  g_free (job->request_id);
  g_free (job->reason);
  g_free (job);
}

static void
resolve_job_thread (GTask        *task,
                    gpointer      source_object,
                    gpointer      task_data,
                    GCancellable *cancellable)
{
  SubagentApprovalQueue *self = source_object;
  ResolveJob *job = task_data;
  g_autoptr(SubagentApprovalRequest) request = NULL;

  if (!subagent_approval_queue_resolve (self, job->request_id, job->status, job->reason, "system", NULL))
    {
      request = subagent_approval_queue_lookup (self, job->request_id);
      if (request != NULL &&
          subagent_approval_request_transition (request, job->status, job->reason, "system"))
        subagent_approval_queue_notify_resolved (self, request);
    }
  g_task_return_boolean (task, TRUE);
}

/* Timeout and cancellation of an async wait: the verdict may need the
 * store, whose I/O must not run on the caller's main context. */
static gboolean
async_wait_give_up (gpointer user_data,
                    gboolean cancelled)
{
  SubagentApprovalAsyncWait *wait = user_data;
  g_autoptr(GTask) job_task = NULL;
  ResolveJob *job = g_new0 (ResolveJob, 1);

  job->request_id = g_strdup (subagent_approval_request_get_request_id (wait->request));
  job->status = cancelled ? SUBAGENT_APPROVAL_STATUS_CANCELLED : SUBAGENT_APPROVAL_STATUS_TIMEOUT;
  job->reason = cancelled ? g_strdup ("The child stopped waiting for a verdict (cancelled)")
                          : g_strdup_printf ("No verdict within %u s",
                                             subagent_approval_request_get_timeout_seconds (wait->request));
  job_task = g_task_new (wait->queue, NULL, NULL, NULL);
  g_task_set_source_tag (job_task, async_wait_give_up);
  g_task_set_task_data (job_task, job, (GDestroyNotify) resolve_job_free);
  g_task_run_in_thread (job_task, resolve_job_thread);
  return G_SOURCE_REMOVE;
}

static gboolean
async_wait_timed_out (gpointer user_data)
{
  return async_wait_give_up (user_data, FALSE);
}

static gboolean
async_wait_cancelled (GCancellable *cancellable,
                      gpointer      user_data)
{
  return async_wait_give_up (user_data, TRUE);
}

static void
async_wait_start (SubagentApprovalAsyncWait *wait)
{
  SubagentApprovalQueue *self = wait->queue;
  GMainContext *context;
  GCancellable *cancellable;
  gboolean resolved;

  g_mutex_lock (&self->lock);
  if (wait->task == NULL)
    {
      g_mutex_unlock (&self->lock);
      return;
    }
  resolved = subagent_approval_status_is_terminal (subagent_approval_request_get_status (wait->request));
  if (!resolved)
    {
      context = g_task_get_context (wait->task);
      cancellable = g_task_get_cancellable (wait->task);
      wait->timeout_source =
        g_timeout_source_new (subagent_approval_request_get_timeout_seconds (wait->request) * 1000);
      g_source_set_static_name (wait->timeout_source, "[subagent] approval timeout");
      g_source_set_callback (wait->timeout_source, async_wait_timed_out, subagent_approval_async_wait_ref (wait),
                             (GDestroyNotify) subagent_approval_async_wait_unref);
      g_source_attach (wait->timeout_source, context);
      if (cancellable != NULL)
        {
          wait->cancel_source = g_cancellable_source_new (cancellable);
          g_source_set_static_name (wait->cancel_source, "[subagent] approval cancel");
          g_source_set_callback (wait->cancel_source, G_SOURCE_FUNC (async_wait_cancelled),
                                 subagent_approval_async_wait_ref (wait),
                                 (GDestroyNotify) subagent_approval_async_wait_unref);
          g_source_attach (wait->cancel_source, context);
        }
    }
  g_mutex_unlock (&self->lock);

  if (resolved)
    subagent_approval_async_wait_complete (wait, NULL);
}

static void
persist_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  SubagentApprovalAsyncWait *wait = task_data;
  GError *error = NULL;

  if (submit_persist (wait->queue, wait->request, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
persist_done (GObject      *source_object,
              GAsyncResult *result,
              gpointer      user_data)
{
  SubagentApprovalAsyncWait *wait = user_data;
  GError *error = NULL;

  if (g_task_propagate_boolean (G_TASK (result), &error))
    async_wait_start (wait);
  else
    subagent_approval_async_wait_complete (wait, error);
  subagent_approval_async_wait_unref (wait);
}

/**
 * subagent_approval_queue_submit_async:
 * @self: a queue
 * @request: a pending request of this queue's run
 * @cancellable: (nullable): cancels the wait, which cancels the request
 * @callback: (scope async): called when the request is resolved
 * @user_data: (closure): data for @callback
 *
 * Submits @request and waits for its verdict without blocking: the store
 * is written in a worker thread, the timeout and @cancellable are watched
 * from the thread-default main context of the caller, where @callback runs.
 * Cancelling @cancellable marks the request
 * %SUBAGENT_APPROVAL_STATUS_CANCELLED (not an error).
 */
void
subagent_approval_queue_submit_async (SubagentApprovalQueue   *self,
                                      SubagentApprovalRequest *request,
                                      GCancellable            *cancellable,
                                      GAsyncReadyCallback      callback,
                                      gpointer                 user_data)
{
  g_autoptr(GTask) task = NULL;
  SubagentApprovalAsyncWait *wait;
  GError *error = NULL;

  g_return_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self));
  g_return_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (request));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, subagent_approval_queue_submit_async);
  /* A cancelled wait is a result (CANCELLED), not an error. */
  g_task_set_check_cancellable (task, FALSE);

  wait = g_new0 (SubagentApprovalAsyncWait, 1);
  g_atomic_ref_count_init (&wait->ref);
  wait->queue = g_object_ref (self);
  wait->request = g_object_ref (request);
  wait->task = g_object_ref (task);

  if (!submit_begin (self, request, wait, &error))
    {
      g_clear_object (&wait->task);
      subagent_approval_async_wait_unref (wait);
      g_task_return_error (task, error);
      return;
    }
  if (self->sink != NULL)
    {
      g_autoptr(GTask) persist = g_task_new (self, NULL, persist_done, wait);

      g_task_set_source_tag (persist, persist_thread);
      g_task_set_task_data (persist, subagent_approval_async_wait_ref (wait),
                            (GDestroyNotify) subagent_approval_async_wait_unref);
      g_task_run_in_thread (persist, persist_thread);
    }
  else
    {
      /* Nothing to write: no I/O on the caller's context. */
      submit_persist (self, request, NULL);
      async_wait_start (wait);
      subagent_approval_async_wait_unref (wait);
    }
}

/**
 * subagent_approval_queue_submit_finish:
 * @self: a queue
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Returns: the terminal status, as subagent_approval_queue_submit_sync()
 */
SubagentApprovalStatus
subagent_approval_queue_submit_finish (SubagentApprovalQueue  *self,
                                       GAsyncResult           *result,
                                       GError                **error)
{
  gssize status;

  g_return_val_if_fail (g_task_is_valid (result, self), SUBAGENT_APPROVAL_STATUS_CANCELLED);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == subagent_approval_queue_submit_async,
                        SUBAGENT_APPROVAL_STATUS_CANCELLED);

  status = g_task_propagate_int (G_TASK (result), error);
  return status < 0 ? SUBAGENT_APPROVAL_STATUS_CANCELLED : (SubagentApprovalStatus) status;
}

/* The watcher behind every queue with a sink: a worker thread that runs a
 * private main context, so ::changed is delivered even while every other
 * thread — the main one included — is blocked waiting for a verdict. */
struct _SubagentApprovalSinkWatcher
{
  gatomicrefcount ref;
  SubagentApprovalSink *sink;
  char *run_id;
  GWeakRef target;
  SubagentApprovalSinkWatcherFunc callback;
  GMainContext *context;
  GMainLoop *loop;
  GThread *thread;
  GThread *worker; /* the same thread, as seen by itself */
  gulong handler_id;

  GMutex lock;
  GCond cond;
  gboolean ready;
};

static SubagentApprovalSinkWatcher *
watcher_ref (SubagentApprovalSinkWatcher *watcher)
{
  g_atomic_ref_count_inc (&watcher->ref);
  return watcher;
}

static void
watcher_unref (SubagentApprovalSinkWatcher *watcher)
{
  if (!g_atomic_ref_count_dec (&watcher->ref))
    return;
  g_object_unref (watcher->sink);
  g_free (watcher->run_id);
  g_weak_ref_clear (&watcher->target);
  g_main_loop_unref (watcher->loop);
  g_main_context_unref (watcher->context);
  g_mutex_clear (&watcher->lock);
  g_cond_clear (&watcher->cond);
  g_free (watcher);
}

static void
watcher_closure_notify (gpointer  data,
                        GClosure *closure)
{
  watcher_unref (data);
}

/* Runs in every watching context, so possibly on several threads. */
static void
watcher_on_changed (SubagentApprovalSink        *sink,
                    const char                  *parent_run_id,
                    SubagentApprovalSinkWatcher *watcher)
{
  g_autoptr(GObject) target = NULL;

  if (g_strcmp0 (parent_run_id, watcher->run_id) != 0)
    return;
  target = g_weak_ref_get (&watcher->target);
  if (target != NULL)
    watcher->callback (target);
}

static gpointer
watcher_thread (gpointer data)
{
  SubagentApprovalSinkWatcher *watcher = data;

  g_main_context_push_thread_default (watcher->context);
  subagent_approval_sink_watch (watcher->sink, watcher->run_id);

  g_mutex_lock (&watcher->lock);
  watcher->worker = g_thread_self ();
  watcher->ready = TRUE;
  g_cond_signal (&watcher->cond);
  g_mutex_unlock (&watcher->lock);

  g_main_loop_run (watcher->loop);

  subagent_approval_sink_unwatch (watcher->sink, watcher->run_id);
  g_main_context_pop_thread_default (watcher->context);
  watcher_unref (watcher);
  return NULL;
}

SubagentApprovalSinkWatcher *
subagent_approval_sink_watcher_start (SubagentApprovalSink            *sink,
                                      const char                      *parent_run_id,
                                      GObject                         *target,
                                      SubagentApprovalSinkWatcherFunc  callback)
{
  SubagentApprovalSinkWatcher *watcher = g_new0 (SubagentApprovalSinkWatcher, 1);
  g_autofree char *name = g_strdup_printf ("approvals-%.8s", parent_run_id);

  g_atomic_ref_count_init (&watcher->ref);
  watcher->sink = g_object_ref (sink);
  watcher->run_id = g_strdup (parent_run_id);
  g_weak_ref_init (&watcher->target, target);
  watcher->callback = callback;
  watcher->context = g_main_context_new ();
  watcher->loop = g_main_loop_new (watcher->context, FALSE);
  g_mutex_init (&watcher->lock);
  g_cond_init (&watcher->cond);

  watcher->handler_id = g_signal_connect_data (sink, "changed", G_CALLBACK (watcher_on_changed),
                                               watcher_ref (watcher), watcher_closure_notify, 0);
  watcher->thread = g_thread_new (name, watcher_thread, watcher_ref (watcher));

  /* Changes made after the queue exists must not be missed. */
  g_mutex_lock (&watcher->lock);
  while (!watcher->ready)
    g_cond_wait (&watcher->cond, &watcher->lock);
  g_mutex_unlock (&watcher->lock);
  return watcher;
}

static gboolean
watcher_quit (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

void
subagent_approval_sink_watcher_stop (SubagentApprovalSinkWatcher *watcher)
{
  g_autoptr(GSource) source = g_idle_source_new ();

  g_signal_handler_disconnect (watcher->sink, watcher->handler_id);
  g_source_set_callback (source, watcher_quit, g_main_loop_ref (watcher->loop),
                         (GDestroyNotify) g_main_loop_unref);
  g_source_attach (source, watcher->context);
  /* The last reference to the target may be dropped by a callback on the
   * watcher thread itself; that thread cannot join itself. */
  if (g_thread_self () == watcher->worker)
    g_thread_unref (watcher->thread);
  else
    g_thread_join (watcher->thread);
  watcher->thread = NULL;
  watcher_unref (watcher);
}
