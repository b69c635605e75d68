/* subagent-supervisor-jobs.c: the supervisor's machinery — accepting,
 * queueing, starting, finishing and cancelling children, their waiters,
 * and the ordered actions (events, starts, returns) run in the
 * supervisor's main context.
 *
 * State changes happen under the supervisor's lock and queue actions;
 * _subagent_supervisor_kick() then runs the actions, in order, in the
 * supervisor's context, without the lock, so signal handlers may call
 * back into the supervisor.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-json-private.h"
#include "subagent-json-line-private.h"
#include "subagent-supervisor-private.h"

SubagentJob *
_subagent_job_ref (SubagentJob *job)
{
  g_atomic_ref_count_inc (&job->ref);
  return job;
}

void
_subagent_job_unref (SubagentJob *job)
{
  if (!g_atomic_ref_count_dec (&job->ref))
    return;
  g_clear_object (&job->owner);
  g_free (job->run_id);
  g_free (job->task);
  g_clear_object (&job->options);
  g_free (job->def_name);
  g_free (job->parent_run_id);
  g_free (job->isolation);
  g_clear_object (&job->cancellable);
  g_free (job->hooks.workspace_root);
  g_clear_object (&job->hooks.kept_context);
  g_clear_object (&job->resume);
  g_clear_object (&job->reuse);
  g_clear_object (&job->approval_queue);
  g_clear_pointer (&job->accepted_at, g_date_time_unref);
  g_clear_pointer (&job->started_at, g_date_time_unref);
  g_clear_object (&job->result);
  g_clear_pointer (&job->waiters, g_ptr_array_unref);
  if (job->line_shared != NULL)
    g_string_free (job->line_shared, TRUE);
  if (job->line_last != NULL)
    g_string_free (job->line_last, TRUE);
  if (job->ended_destroy != NULL)
    job->ended_destroy (job->ended_data);
  g_free (job);
}

/* A spawn the outstanding cap refused, waiting for a child to end. */
typedef struct {
  GFunc func;
  gpointer data;
  GDestroyNotify destroy;
} SubagentSlotWaiter;

static void
slot_waiter_free (SubagentSlotWaiter *waiter)
{
  waiter->destroy (waiter->data);
  g_free (waiter);
}

/* Whether the supervisor takes no more children for now. Called locked. */
static gboolean
outstanding_full_locked (SubagentSupervisor *self)
{
  return self->n_running + self->queue.length >= 2 * self->max_parallel;
}

gboolean
_subagent_supervisor_wait_for_slot (SubagentSupervisor *self,
                                    GFunc               func,
                                    gpointer            data,
                                    GDestroyNotify      destroy)
{
  SubagentSlotWaiter *waiter;

  g_mutex_lock (&self->lock);
  /* A closed supervisor refuses the spawn at once, full or not. */
  if (self->closed || !outstanding_full_locked (self))
    {
      g_mutex_unlock (&self->lock);
      destroy (data);
      return FALSE;
    }
  /* Under the lock that saw the cap full: no end can come in between. */
  waiter = g_new (SubagentSlotWaiter, 1);
  waiter->func = func;
  waiter->data = data;
  waiter->destroy = destroy;
  g_queue_push_tail (&self->slot_waiters, waiter);
  g_mutex_unlock (&self->lock);
  return TRUE;
}

void
_subagent_supervisor_clear_slot_waiters (SubagentSupervisor *self)
{
  GQueue slot_waiters;

  g_mutex_lock (&self->lock);
  slot_waiters = self->slot_waiters;
  g_queue_init (&self->slot_waiters);
  g_mutex_unlock (&self->lock);
  g_queue_clear_full (&slot_waiters, (GDestroyNotify) slot_waiter_free);
}

void
_subagent_action_free (SubagentAction *action)
{
  g_clear_pointer (&action->job, _subagent_job_unref);
  g_clear_pointer (&action->time, g_date_time_unref);
  g_clear_pointer (&action->details, json_object_unref);
  g_free (action);
}

SubagentRunOptions *
_subagent_run_options_copy (SubagentRunOptions *options)
{
  SubagentRunOptions *copy = subagent_run_options_new ();
  JsonObjectIter iter;
  const char *key;
  JsonNode *value;

  if (options == NULL)
    return copy;
  subagent_run_options_set_def_name (copy, subagent_run_options_get_def_name (options));
  subagent_run_options_set_parent_run_id (copy, subagent_run_options_get_parent_run_id (options));
  subagent_run_options_set_depth (copy, subagent_run_options_get_depth (options));
  subagent_run_options_set_isolation (copy, subagent_run_options_get_isolation (options));
  subagent_run_options_set_max_iterations (copy, subagent_run_options_get_max_iterations (options));
  subagent_run_options_set_max_tool_calls (copy, subagent_run_options_get_max_tool_calls (options));
  subagent_run_options_set_batch_index (copy, subagent_run_options_get_batch_index (options));
  subagent_run_options_set_cpu_quota (copy, subagent_run_options_get_cpu_quota (options));
  subagent_run_options_set_memory_limit (copy, subagent_run_options_get_memory_limit (options));
  subagent_run_options_set_timeout_seconds (copy, subagent_run_options_get_timeout_seconds (options));
  subagent_run_options_set_command (copy, subagent_run_options_get_command (options));
  subagent_run_options_set_interactive (copy, subagent_run_options_get_interactive (options));
  subagent_run_options_set_skill_path (copy, subagent_run_options_get_skill_path (options));
  subagent_run_options_set_risk_level (copy, subagent_run_options_get_risk_level (options));
  subagent_run_options_set_model (copy, subagent_run_options_get_model (options));
  json_object_iter_init (&iter, subagent_run_options_get_isolation_options (options));
  while (json_object_iter_next (&iter, &key, &value))
    subagent_run_options_set_isolation_option (copy, key, value);
  return copy;
}


/* An event's details: @details (the action's, or NULL) and, last, what
 * every event of @job carries, as the line from the action's parts writes
 * them (_subagent_event_line()). Only for an event that is made. */
static JsonObject *
job_event_details (SubagentJob *job,
                   JsonObject  *details_in)
{
  JsonObject *details = details_in ? details_in : json_object_new ();
  char accepted[SUBAGENT_TIME_TEXT_SIZE];

  json_object_set_string_member (details, "accepted_at", _subagent_time_format_micro (job->accepted_at, accepted));
  if (job->follow_up > 0)
    json_object_set_int_member (details, "follow_up", job->follow_up);
  return details;
}

void
_subagent_supervisor_push_locked (SubagentSupervisor *self,
                                  SubagentActionKind  kind,
                                  SubagentJob        *job)
{
  SubagentAction *action = g_new0 (SubagentAction, 1);

  action->kind = kind;
  action->job = job ? _subagent_job_ref (job) : NULL;
  g_queue_push_tail (&self->pending, action);
}

static SubagentAction *
push_event_locked (SubagentSupervisor *self,
                   SubagentJob        *job,
                   SubagentEventKind   kind,
                   JsonObject         *details)
{
  SubagentAction *action = g_new0 (SubagentAction, 1);

  action->kind = SUBAGENT_ACTION_EVENT;
  action->job = _subagent_job_ref (job);
  action->event_kind = kind;
  action->time = g_date_time_new_now_utc ();
  /* The caller's fresh object, which it drops: what every event of @job
   * carries is added only to an event that is made (the line writes it
   * from the job), and sealed then. */
  action->details = details ? json_object_ref (details) : NULL;
  g_queue_push_tail (&self->pending, action);
  return action;
}

void
_subagent_supervisor_push_event_locked (SubagentSupervisor *self,
                                        SubagentJob        *job,
                                        SubagentEventKind   kind,
                                        JsonObject         *details)
{
  push_event_locked (self, job, kind, details);
}

double
_subagent_supervisor_spent_locked (SubagentSupervisor *self,
                                   const char         *parent_run_id)
{
  double *spent = g_hash_table_lookup (self->spent, parent_run_id);

  return spent ? *spent : 0.0;
}

static void schedule_locked (SubagentSupervisor *self);

/* Where a terminal event's members go: an event's details, or its line. */
typedef struct {
  JsonObject *object;
  GString *line;
} MemberSink;

static void
put_string (MemberSink *sink,
            const char *key,
            const char *value)
{
  if (sink->object != NULL)
    json_object_set_string_member (sink->object, key, value);
  else
    _subagent_json_line_append_string_member (sink->line, key, value);
}

static void
put_int (MemberSink *sink,
         const char *key,
         gint64      value)
{
  if (sink->object != NULL)
    json_object_set_int_member (sink->object, key, value);
  else
    _subagent_json_line_append_int_member (sink->line, key, value);
}

static void
put_amount (MemberSink *sink,
            const char *key,
            double      value)
{
  if (sink->object != NULL)
    subagent_json_set_amount (sink->object, key, value);
  else
    _subagent_json_line_append_amount_member (sink->line, key, value);
}

/* What the event that ends @job carries, from its result, in one place
 * for both forms: the line of every such event, the details of one made.
 * @time is the event's. */
static void
terminal_members (SubagentJob *job,
                  GDateTime   *time,
                  MemberSink  *sink)
{
  SubagentRunResult *result = job->result;
  g_autofree char *reason = subagent_run_result_dup_reason (result);

  put_string (sink, "status", subagent_run_status_to_string (subagent_run_result_get_status (result)));
  put_string (sink, "stop_reason", subagent_run_result_get_stop_reason (result));
  if (reason != NULL)
    put_string (sink, "reason", reason);
  put_amount (sink, "cost_cents", subagent_run_result_get_cost_cents (result));
  put_int (sink, "iterations", subagent_run_result_get_iterations (result));
  put_int (sink, "tool_calls", subagent_run_result_get_tool_calls (result));
  if (subagent_run_result_get_session_id (result) != NULL)
    put_string (sink, "session_id", subagent_run_result_get_session_id (result));
  if (job->started_at != NULL)
    {
      char started[SUBAGENT_TIME_TEXT_SIZE];

      put_string (sink, "started_at", _subagent_time_format_micro (job->started_at, started));
      put_int (sink, "duration_ms", g_date_time_difference (time, job->started_at) / 1000);
    }
  if (job->cancel_requested)
    put_string (sink, "cause", job->cause == SUBAGENT_CANCEL_CAUSE_USER ? "user" : "system");
}

static void
append_terminal_members (GString  *out,
                         gpointer  data)
{
  SubagentAction *action = data;
  MemberSink sink = { NULL, out };

  terminal_members (action->job, action->time, &sink);
}

/* The event that ends a child, from its result: its members are written
 * when the action is performed (the job is done by then, and stays so). */
static void
push_terminal_event_locked (SubagentSupervisor *self,
                            SubagentJob        *job)
{
  SubagentRunResult *result = job->result;
  SubagentRunStatus status = subagent_run_result_get_status (result);
  SubagentEventKind kind;

  if (g_str_equal (subagent_run_result_get_stop_reason (result), SUBAGENT_STOP_REASON_CANCELLED) ||
      status == SUBAGENT_RUN_STATUS_CANCELLED)
    kind = SUBAGENT_EVENT_CANCELLED;
  else if (status == SUBAGENT_RUN_STATUS_COMPLETE || status == SUBAGENT_RUN_STATUS_PARTIAL)
    kind = SUBAGENT_EVENT_COMPLETED;
  else
    kind = SUBAGENT_EVENT_FAILED;
  push_event_locked (self, job, kind, NULL)->terminal = TRUE;
}

/* A child ended (or never started): record it, report it, free its slot. */
static void
finish_locked (SubagentSupervisor *self,
               SubagentJob        *job,
               SubagentRunResult  *result,
               gboolean            was_running)
{
  double *spent;

  if (was_running)
    self->n_running--;
  job->state = SUBAGENT_JOB_DONE;
  g_set_object (&job->result, result);

  spent = g_hash_table_lookup (self->spent, job->parent_run_id);
  if (spent == NULL)
    {
      spent = g_new0 (double, 1);
      g_hash_table_insert (self->spent, g_strdup (job->parent_run_id), spent);
    }
  *spent += subagent_run_result_get_cost_cents (result);

  if (job->hooks.kept_context != NULL)
    g_hash_table_replace (self->kept, g_strdup (job->run_id), g_steal_pointer (&job->hooks.kept_context));
  if (job->hooks.workspace_disposed)
    {
      g_autoptr(JsonObject) details = json_object_new ();

      json_object_set_string_member (details, "workspace", job->hooks.workspace_root);
      _subagent_supervisor_push_event_locked (self, job, SUBAGENT_EVENT_WORKSPACE_DISPOSED, details);
    }
  push_terminal_event_locked (self, job);
  _subagent_supervisor_push_locked (self, SUBAGENT_ACTION_RETURN, job);
  _subagent_supervisor_keep_result_locked (self, job);

  schedule_locked (self);
  if (self->shutdown_task != NULL && self->n_running == 0)
    _subagent_supervisor_push_locked (self, SUBAGENT_ACTION_SHUTDOWN_DONE, NULL);
}

static SubagentLineage *
job_lineage (SubagentJob *job)
{
  return subagent_lineage_new (job->parent_run_id, job->def_name, job->depth, job->isolation,
                               job->batch_index, NULL, NULL);
}

/* Reference 003: a child cancelled before its runner starts gets `started`,
 * then a `cancelled` result with zero usage. */
static void
finish_unstarted_locked (SubagentSupervisor *self,
                         SubagentJob        *job,
                         gboolean            was_running)
{
  g_autoptr(SubagentLineage) lineage = job_lineage (job);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *message = g_strdup_printf ("Cancelled by the %s before it started",
                                              job->cause == SUBAGENT_CANCEL_CAUSE_USER ? "user" : "system");

  if (!was_running)
    {
      g_autoptr(JsonObject) details = json_object_new ();

      job->started_at = g_date_time_new_now_utc ();
      json_object_set_boolean_member (details, "cancelled_before_start", TRUE);
      _subagent_supervisor_push_event_locked (self, job, SUBAGENT_EVENT_STARTED, details);
    }
  result = subagent_run_result_new (SUBAGENT_RUN_STATUS_CANCELLED, job->run_id, 0, 0, 0.0, "", lineage, NULL,
                                    message, SUBAGENT_STOP_REASON_CANCELLED, NULL);
  finish_locked (self, job, result, was_running);
}

/* FIFO: hand free slots to the oldest queued children. */
static void
schedule_locked (SubagentSupervisor *self)
{
  SubagentJob *job;

  while (self->n_running < self->max_parallel && (job = g_queue_pop_head (&self->queue)) != NULL)
    {
      if (self->max_cost_cents > 0)
        {
          double left = self->max_cost_cents - _subagent_supervisor_spent_locked (self, job->parent_run_id);

          if (left <= 0)
            {
              g_autoptr(SubagentLineage) lineage = job_lineage (job);
              g_autofree char *message =
                g_strdup_printf ("The parent run %s has spent its budget of %.2f cents; the subagent was not started",
                                 job->parent_run_id, self->max_cost_cents);
              g_autoptr(SubagentRunResult) result = subagent_run_result_new_error (message, lineage);

              finish_locked (self, job, result, FALSE);
              continue;
            }
          job->hooks.max_cost_cents = left;
        }
      job->state = SUBAGENT_JOB_RUNNING;
      job->started_at = g_date_time_new_now_utc ();
      self->n_running++;
      _subagent_supervisor_push_event_locked (self, job, SUBAGENT_EVENT_STARTED, NULL);
      _subagent_supervisor_push_locked (self, SUBAGENT_ACTION_START, job);
    }
}

static void
job_done (GObject      *source,
          GAsyncResult *res,
          gpointer      user_data)
{
  SubagentJob *job = user_data;
  g_autoptr(SubagentSupervisor) self = g_object_ref (job->owner);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunResult) result = subagent_manager_run_finish (SUBAGENT_MANAGER (source), res, &error);

  if (result == NULL)
    {
      g_autoptr(SubagentLineage) lineage = job_lineage (job);
      result = subagent_run_result_new_error (error->message, lineage);
    }
  g_mutex_lock (&self->lock);
  finish_locked (self, job, result, TRUE);
  g_mutex_unlock (&self->lock);
  _subagent_supervisor_kick (self);
  _subagent_job_unref (job);
}

static void
start_job (SubagentSupervisor *self,
           SubagentJob        *job)
{
  GMainContext *current = g_main_context_get_thread_default ();
  gboolean push;

  g_mutex_lock (&self->lock);
  if (job->cancel_requested)
    {
      /* Cancelled between getting its slot and reaching the manager. */
      finish_unstarted_locked (self, job, TRUE);
      g_mutex_unlock (&self->lock);
      return;
    }
  g_mutex_unlock (&self->lock);

  _subagent_supervisor_watch_approvals (self, job->parent_run_id);

  /* The run's callbacks must come back to the supervisor's context. */
  push = (current ? current : g_main_context_default ()) != self->context;
  if (push)
    g_main_context_push_thread_default (self->context);
  _subagent_manager_run_hooked_async (self->manager, job->task, job->options, &job->hooks, job->cancellable,
                                      job_done, _subagent_job_ref (job));
  if (push)
    g_main_context_pop_thread_default (self->context);
}

GError *
_subagent_job_abandoned_error (SubagentJob *job)
{
  return g_error_new (SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_CLOSED,
                      "The supervisor shut down while subagent %s was still running; its workspace %s is kept",
                      job->run_id, job->hooks.workspace_root ? job->hooks.workspace_root : "(not made yet)");
}

void
_subagent_supervisor_write_held_events (SubagentSupervisor *self)
{
  if (self->writer != NULL)
    _subagent_events_writer_write_held (self->writer);
}

static void
return_to_waiters (SubagentSupervisor *self,
                   SubagentJob        *job)
{
  g_autoptr(GPtrArray) waiters = NULL;
  g_autoptr(GError) closed = NULL;
  SubagentJobEndedFunc ended;
  gpointer ended_data;
  GDestroyNotify ended_destroy;
  GQueue slot_waiters;
  SubagentSlotWaiter *slot_waiter;
  SubagentRunResult *result;
  gboolean done;

  g_mutex_lock (&self->lock);
  waiters = g_steal_pointer (&job->waiters);
  job->waiters = g_ptr_array_new_with_free_func ((GDestroyNotify) _subagent_waiter_unref);
  ended = g_steal_pointer (&job->ended);
  ended_data = g_steal_pointer (&job->ended_data);
  ended_destroy = g_steal_pointer (&job->ended_destroy);
  result = job->result ? g_object_ref (job->result) : NULL;
  done = job->state == SUBAGENT_JOB_DONE;
  slot_waiters = self->slot_waiters;
  g_queue_init (&self->slot_waiters);
  g_mutex_unlock (&self->lock);

  if (result == NULL)
    closed = _subagent_job_abandoned_error (job);
  /* A batch's child: the batch writes the held lines before it returns its
   * own result; else they go with the next child's, at the end of the
   * round (one write). */
  if (ended != NULL)
    ended (result, closed, ended_data);
  if (ended_destroy != NULL)
    ended_destroy (ended_data);
  /* Whoever gets the result finds the child's events in the file. */
  if (waiters->len > 0)
    _subagent_supervisor_write_held_events (self);
  for (guint i = 0; i < waiters->len; i++)
    _subagent_waiter_complete (waiters->pdata[i], result, closed);
  g_clear_object (&result);

  /* Its slot is free: the spawns the outstanding cap refused try again. */
  while ((slot_waiter = g_queue_pop_head (&slot_waiters)) != NULL)
    {
      slot_waiter->func (slot_waiter->data, NULL);
      slot_waiter_free (slot_waiter);
    }

  /* A finished child no longer keeps the supervisor alive. */
  if (done)
    {
      g_mutex_lock (&self->lock);
      g_clear_object (&job->owner);
      g_mutex_unlock (&self->lock);
    }
}

/* Writes the event's line, from its parts, and emits it. An event nobody
 * would see (no handler of its kind's signal, none of ::event for its
 * detail) is not made: a batch listens to the ends of its children only,
 * and making the events before them was about a twentieth of a command
 * child's host instructions (callgrind). (An emission hook alone does not
 * make one.) */
static void
perform_event (SubagentSupervisor *self,
               SubagentAction     *action)
{
  SubagentJob *job = action->job;
  SubagentEventKind kind = action->event_kind;
  GQuark detail = g_quark_from_static_string (subagent_event_kind_to_string (kind));
  guint kind_signal = _subagent_supervisor_signals[SIGNAL_KIND_FIRST + kind];
  guint event_signal = _subagent_supervisor_signals[SIGNAL_EVENT];
  g_autoptr(SubagentEvent) event = NULL;
  JsonObject *details;

  if (self->writer != NULL)
    {
      GString *held = _subagent_events_writer_begin_held (self->writer);

      _subagent_event_line_append (held, kind, action->time, job->line_shared, action->details,
                                   action->terminal ? append_terminal_members : NULL, action, job->line_last);
      _subagent_events_writer_end_held (self->writer);
    }
  /* GLib 2.74 matches a detail's handlers or, with 0, the undetailed. */
  if (!g_signal_has_handler_pending (self, kind_signal, 0, FALSE) &&
      !g_signal_has_handler_pending (self, event_signal, 0, FALSE) &&
      !g_signal_has_handler_pending (self, event_signal, detail, FALSE))
    return;
  details = g_steal_pointer (&action->details);
  if (action->terminal)
    {
      MemberSink sink = { json_object_new (), NULL };

      terminal_members (job, action->time, &sink);
      details = sink.object;
    }
  event = _subagent_event_new_take (kind, job->run_id, job->parent_run_id, job->def_name, job->depth,
                                    job->batch_index, job_event_details (job, details),
                                    g_steal_pointer (&action->time));
  /* A handler reading the events file finds this event's line there. */
  _subagent_supervisor_write_held_events (self);
  g_signal_emit (self, kind_signal, 0, event);
  g_signal_emit (self, event_signal, detail, event);
}

static void
perform (SubagentSupervisor *self,
         SubagentAction     *action)
{
  switch (action->kind)
    {
    case SUBAGENT_ACTION_EVENT:
      perform_event (self, action);
      break;
    case SUBAGENT_ACTION_START:
      start_job (self, action->job);
      break;
    case SUBAGENT_ACTION_RETURN:
      return_to_waiters (self, action->job);
      break;
    case SUBAGENT_ACTION_SHUTDOWN_DONE:
      _subagent_supervisor_shutdown_done (self);
      break;
    }
}

/* Re-entrant: a handler that waits for a child (iterating this context)
 * drains the following actions itself; the order stays the queue's. */
static gboolean
drain (gpointer data)
{
  SubagentSupervisor *self = data;
  SubagentAction *action;

  g_mutex_lock (&self->lock);
  while ((action = g_queue_pop_head (&self->pending)) != NULL)
    {
      g_mutex_unlock (&self->lock);
      perform (self, action);
      _subagent_action_free (action);
      g_mutex_lock (&self->lock);
    }
  g_mutex_unlock (&self->lock);
  /* The round's event lines, in one write. */
  _subagent_supervisor_write_held_events (self);
  return G_SOURCE_REMOVE;
}

/* Runs the queued actions now when this thread drives the supervisor's
 * context, else from an idle source there: signals are never emitted on a
 * thread that merely managed to acquire the context (an approval handler's,
 * a tool's), whatever g_main_context_invoke() would allow. */
void
_subagent_supervisor_kick (SubagentSupervisor *self)
{
  g_autoptr(GSource) idle = NULL;

  if (g_main_context_is_owner (self->context))
    {
      g_autoptr(SubagentSupervisor) hold = g_object_ref (self);

      drain (self);
      return;
    }
  idle = g_idle_source_new ();
  g_source_set_priority (idle, G_PRIORITY_DEFAULT);
  g_source_set_callback (idle, drain, g_object_ref (self), g_object_unref);
  g_source_set_static_name (idle, "[subagent] supervisor actions");
  g_source_attach (idle, self->context);
}

static gboolean
is_blank (const char *text)
{
  for (; text != NULL && *text != '\0'; text++)
    if (!g_ascii_isspace (*text))
      return FALSE;
  return TRUE;
}

/* The definition name events carry: the catalog's spelling when known. */
static char *
job_def_name (SubagentSupervisor *self,
              SubagentRunOptions *options,
              SubagentDef       **def_out)
{
  const char *name = options ? subagent_run_options_get_def_name (options) : NULL;
  SubagentDef *def;

  *def_out = NULL;
  if (name == NULL || *name == '\0')
    return g_strdup ("default");
  def = subagent_manager_get_def (self->manager, name);
  if (def == NULL)
    return g_strdup (name);
  *def_out = def;
  return g_strdup (subagent_def_get_name (def));
}

/* From the runner's thread: a running child's totals become a `usage`
 * event. The job is alive (its run holds a reference), and so is its
 * supervisor while it runs. */
static void
job_usage (gpointer data,
           guint    iterations,
           guint    tool_calls,
           double   cost_cents)
{
  SubagentJob *job = data;
  g_autoptr(SubagentSupervisor) self = NULL;
  gboolean pushed = FALSE;

  g_mutex_lock (&job->owner->lock);
  self = g_object_ref (job->owner);
  if (job->state == SUBAGENT_JOB_RUNNING)
    {
      g_autoptr(JsonObject) details = json_object_new ();

      json_object_set_int_member (details, "iterations", iterations);
      json_object_set_int_member (details, "tool_calls", tool_calls);
      json_object_set_double_member (details, "cost_cents", cost_cents);
      _subagent_supervisor_push_event_locked (self, job, SUBAGENT_EVENT_USAGE, details);
      pushed = TRUE;
    }
  g_mutex_unlock (&self->lock);
  if (pushed)
    _subagent_supervisor_kick (self);
}

/* Whether the supervisor's caps let @parent start one more subagent. */
static gboolean
spawn_allowed_locked (SubagentSupervisor         *self,
                      const char                 *parent,
                      const SubagentSpawnExtras  *extras,
                      GError                    **error)
{
  guint started = GPOINTER_TO_UINT (g_hash_table_lookup (self->agents, parent));

  if (self->closed)
    g_set_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_CLOSED,
                 "The supervisor is shut down; it starts no more subagents");
  else if (outstanding_full_locked (self))
    g_set_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_OUTSTANDING_CAP,
                 "%u subagents are already running or queued, the most this supervisor takes (2 × max-parallel %u); "
                 "wait for one to finish", self->n_running + self->queue.length, self->max_parallel);
  else if (extras->count_as_agent && self->max_agents > 0 && started >= self->max_agents)
    g_set_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_AGENT_CAP,
                 "The parent run %s already started %u subagents, its cap (runner.max_agents)", parent, started);
  else if (self->max_cost_cents > 0 && _subagent_supervisor_spent_locked (self, parent) >= self->max_cost_cents)
    g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_BUDGET_EXCEEDED,
                 "The parent run %s has spent %.2f of its %.2f cents (budget.max_cost_cents); no more subagents",
                 parent, _subagent_supervisor_spent_locked (self, parent), self->max_cost_cents);
  else
    return TRUE;
  return FALSE;
}

char *
_subagent_supervisor_spawn_full (SubagentSupervisor         *self,
                                 const char                 *task,
                                 SubagentRunOptions         *options,
                                 const SubagentSpawnExtras  *extras,
                                 GError                    **error)
{
  SubagentJob *job;
  SubagentDef *def = NULL;
  const char *parent;
  const char *isolation;
  g_autoptr(SubagentApprovalQueue) approval_queue = NULL;
  SubagentJob *earlier;
  gboolean refused;
  gint batch_index;
  guint started;
  char *run_id;

  if (is_blank (task))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT, "A subagent needs a non-empty task");
      return NULL;
    }
  parent = options && subagent_run_options_get_parent_run_id (options)
           ? subagent_run_options_get_parent_run_id (options) : subagent_manager_get_run_id (self->manager);
  /* A batch feeds until the outstanding cap refuses it, once per child:
   * refuse before the job is made. The caps are asked again, locked,
   * when the job goes in. */
  g_mutex_lock (&self->lock);
  if (!spawn_allowed_locked (self, parent, extras, error))
    {
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  g_mutex_unlock (&self->lock);
  batch_index = extras->in_batch ? extras->batch_index
                                 : options ? subagent_run_options_get_batch_index (options) : SUBAGENT_NO_BATCH_INDEX;
  if (extras->centralized_approval && subagent_should_use_centralized_approval (parent, batch_index, TRUE))
    approval_queue = _subagent_supervisor_get_approval_queue (self, parent);

  job = g_new0 (SubagentJob, 1);
  g_atomic_ref_count_init (&job->ref);
  job->task = g_strdup (task);
  job->options = _subagent_run_options_copy (options);
  if (extras->in_batch)
    subagent_run_options_set_batch_index (job->options, batch_index);
  job->def_name = job_def_name (self, options, &def);
  job->parent_run_id = g_strdup (parent);
  isolation = options ? subagent_run_options_get_isolation (options) : NULL;
  if ((isolation == NULL || *isolation == '\0') && def != NULL)
    isolation = subagent_def_get_isolation (def);
  if (isolation == NULL || *isolation == '\0')
    isolation = subagent_config_get_default_isolation (subagent_manager_get_config (self->manager));
  job->isolation = g_strdup (isolation);
  job->depth = (options ? subagent_run_options_get_depth (options) : 0) + 1;
  job->batch_index = batch_index;
  job->cancellable = g_cancellable_new ();
  job->waiters = g_ptr_array_new_with_free_func ((GDestroyNotify) _subagent_waiter_unref);
  job->resume = extras->resume ? g_object_ref (extras->resume) : NULL;
  job->reuse = extras->reuse ? g_object_ref (extras->reuse) : NULL;
  job->follow_up = job->resume ? subagent_session_get_follow_ups (job->resume) + 1 : 0;
  job->run_id = job->resume ? g_strdup (subagent_session_get_session_id (job->resume)) : _subagent_manager_new_run_id ();
  job->approval_queue = g_steal_pointer (&approval_queue);
  job->accepted_at = g_date_time_new_now_utc ();
  /* Every event line of the child has these: written once. */
  job->line_shared = g_string_sized_new (160);
  _subagent_event_line_append_shared (job->line_shared, job->run_id, job->parent_run_id, job->def_name, job->depth,
                                      job->batch_index);
  job->line_last = g_string_sized_new (48);
  _subagent_event_line_append_last (job->line_last, job->accepted_at, job->follow_up);
  job->hooks.run_id = job->run_id;
  job->hooks.approval_queue = job->approval_queue;
  job->hooks.keep_workspace = subagent_supervisor_get_keep_workspaces (self);
  job->hooks.reuse_context = job->reuse;
  job->hooks.resume = job->resume;
  job->hooks.usage_func = job_usage;
  job->hooks.usage_data = job;

  g_mutex_lock (&self->lock);
  started = GPOINTER_TO_UINT (g_hash_table_lookup (self->agents, parent));
  refused = !spawn_allowed_locked (self, parent, extras, error);
  earlier = job->resume ? g_hash_table_lookup (self->jobs, job->run_id) : NULL;
  if (!refused && earlier != NULL && earlier->state != SUBAGENT_JOB_DONE)
    {
      g_set_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_STILL_RUNNING,
                   "Subagent %s is still running; a follow-up waits until it ends", job->run_id);
      refused = TRUE;
    }
  if (refused)
    {
      g_mutex_unlock (&self->lock);
      _subagent_job_unref (job);
      return NULL;
    }

  job->owner = g_object_ref (self);
  job->ended = extras->ended;
  job->ended_data = extras->ended_data;
  job->ended_destroy = extras->ended_destroy;
  if (extras->count_as_agent)
    g_hash_table_replace (self->agents, g_strdup (parent), GUINT_TO_POINTER (started + 1));
  if (earlier != NULL)
    _subagent_supervisor_forget_result_locked (self, earlier);
  g_hash_table_replace (self->jobs, job->run_id, job);  /* the table owns the first reference */
  _subagent_supervisor_push_event_locked (self, job, SUBAGENT_EVENT_ACCEPTED, NULL);
  g_queue_push_tail (&self->queue, job);
  schedule_locked (self);
  if (job->state == SUBAGENT_JOB_QUEUED)
    {
      g_autoptr(JsonObject) details = json_object_new ();

      json_object_set_int_member (details, "position", self->queue.length);
      _subagent_supervisor_push_event_locked (self, job, SUBAGENT_EVENT_QUEUED, details);
    }
  run_id = g_strdup (job->run_id);
  g_mutex_unlock (&self->lock);

  _subagent_supervisor_kick (self);
  return run_id;
}

static gboolean
cancel_locked (SubagentSupervisor  *self,
               SubagentJob         *job,
               SubagentCancelCause  cause,
               GPtrArray           *to_cancel)
{
  if (job->state == SUBAGENT_JOB_DONE)
    return FALSE;
  if (job->cancel_requested)
    return TRUE;
  job->cancel_requested = TRUE;
  job->cause = cause;
  if (job->state == SUBAGENT_JOB_QUEUED)
    {
      g_queue_remove (&self->queue, job);
      finish_unstarted_locked (self, job, FALSE);
    }
  else
    g_ptr_array_add (to_cancel, g_object_ref (job->cancellable));
  return TRUE;
}

SubagentCancelOutcome
_subagent_supervisor_cancel (SubagentSupervisor  *self,
                             const char          *run_id,
                             SubagentCancelCause  cause)
{
  g_autoptr(GPtrArray) to_cancel = g_ptr_array_new_with_free_func (g_object_unref);
  SubagentCancelOutcome outcome;
  SubagentJob *job;

  g_mutex_lock (&self->lock);
  job = g_hash_table_lookup (self->jobs, run_id);
  if (job == NULL)
    outcome = SUBAGENT_CANCEL_OUTCOME_NOT_ACTIVE;
  else if (!cancel_locked (self, job, cause, to_cancel))
    outcome = SUBAGENT_CANCEL_OUTCOME_ALREADY_FINISHED;
  else
    outcome = SUBAGENT_CANCEL_OUTCOME_ACCEPTED;
  g_mutex_unlock (&self->lock);
  if (job == NULL && _subagent_supervisor_has_dropped_result (self, run_id))
    outcome = SUBAGENT_CANCEL_OUTCOME_ALREADY_FINISHED;

  /* Outside the lock: a runner's handler may run right here. */
  for (guint i = 0; i < to_cancel->len; i++)
    g_cancellable_cancel (to_cancel->pdata[i]);
  _subagent_supervisor_kick (self);
  return outcome;
}

guint
_subagent_supervisor_cancel_all (SubagentSupervisor  *self,
                                 SubagentCancelCause  cause,
                                 gboolean             close)
{
  g_autoptr(GPtrArray) to_cancel = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) running = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer value;
  SubagentJob *job;
  guint n = 0;

  g_mutex_lock (&self->lock);
  if (close)
    self->closed = TRUE;
  while ((job = g_queue_peek_head (&self->queue)) != NULL)
    n += cancel_locked (self, job, cause, to_cancel);
  g_hash_table_iter_init (&iter, self->jobs);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (((SubagentJob *) value)->state == SUBAGENT_JOB_RUNNING)
      g_ptr_array_add (running, value);
  for (guint i = 0; i < running->len; i++)
    n += cancel_locked (self, running->pdata[i], cause, to_cancel);
  g_mutex_unlock (&self->lock);

  for (guint i = 0; i < to_cancel->len; i++)
    g_cancellable_cancel (to_cancel->pdata[i]);
  _subagent_supervisor_kick (self);
  return n;
}
