/* subagent-supervisor.c: parallel children of one parent (reference 003).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-supervisor-private.h"

/**
 * SubagentSupervisor:
 *
 * Runs the children of a parent agent in parallel over a #SubagentManager,
 * the way reference 003's supervisor does:
 *
 * - **Caps.** At most #SubagentSupervisor:max-parallel children run at once
 *   (floor 1); others wait in a FIFO queue. Running plus queued children are
 *   capped at twice that: beyond it subagent_supervisor_spawn() fails at once
 *   with %SUBAGENT_SUPERVISOR_ERROR_OUTSTANDING_CAP. Each parent run may
 *   start at most #SubagentSupervisor:max-agents children in all
 *   (%SUBAGENT_SUPERVISOR_ERROR_AGENT_CAP, raised as is, never wrapped).
 * - **Cancellation.** Every child has its own #GCancellable, owned by the
 *   supervisor: a caller's cancellable only ends the caller's wait. Children
 *   stop through subagent_supervisor_cancel() and
 *   subagent_supervisor_cancel_all(), with a #SubagentCancelCause. A queued
 *   child cancelled before it starts never runs; it still gets a
 *   `cancelled` result, and the events `started` then `cancelled`.
 * - **Shutdown.** subagent_supervisor_shutdown() refuses new children
 *   (%SUBAGENT_SUPERVISOR_ERROR_CLOSED), cancels the others, waits for them
 *   at most a timeout, and reports those that did not stop. Their
 *   workspaces are kept — never removed under a live process — and named in
 *   the report; the manager cleans each up when its child finally ends.
 * - **Budgets.** A parent run may spend #SubagentSupervisor:max-cost-cents
 *   (the configuration's `budget.max_cost_cents`; 0 is no cap) across its
 *   children. A spawn when that is spent is refused
 *   (%SUBAGENT_ERROR_BUDGET_EXCEEDED) before any workspace is made; a child
 *   runs with the smaller of its definition's `max_cost_cents` and what the
 *   parent has left, and a runner stops it there (stop reason `budget`,
 *   status partial).
 * - **Events.** Every step is a #SubagentEvent, emitted as a signal of its
 *   kind (#SubagentSupervisor::accepted, ...), as the detailed
 *   #SubagentSupervisor::event signal, and appended to
 *   #SubagentSupervisor:events-path.
 *
 * Signals are emitted, and children are started and finished, in the
 * thread-default main context of the thread that created the supervisor;
 * that context must be iterated. The spawn, cancel and query functions may
 * be called from any thread.
 */

G_DEFINE_ENUM_TYPE (SubagentCancelOutcome, subagent_cancel_outcome,
  G_DEFINE_ENUM_VALUE (SUBAGENT_CANCEL_OUTCOME_NOT_ACTIVE, "not-active"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_CANCEL_OUTCOME_ALREADY_FINISHED, "already-finished"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_CANCEL_OUTCOME_ACCEPTED, "accepted"))

G_DEFINE_FINAL_TYPE (SubagentSupervisor, subagent_supervisor, G_TYPE_OBJECT)

/* As many as the manager keeps session records by default: a result read
 * back then finds its record in memory too. */
#define RESULTS_IN_MEMORY_DEFAULT 256

enum {
  PROP_0,
  PROP_MANAGER,
  PROP_MAX_PARALLEL,
  PROP_MAX_AGENTS,
  PROP_MAX_COST_CENTS,
  PROP_EVENTS_PATH,
  PROP_KEEP_WORKSPACES,
  PROP_RESULTS_IN_MEMORY,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

guint _subagent_supervisor_signals[N_SUPERVISOR_SIGNALS];

static void
subagent_supervisor_dispose (GObject *object)
{
  SubagentSupervisor *self = SUBAGENT_SUPERVISOR (object);

  _subagent_supervisor_dispose_kept (self);
  _subagent_supervisor_disconnect_queues (self);
  _subagent_supervisor_clear_slot_waiters (self);
  G_OBJECT_CLASS (subagent_supervisor_parent_class)->dispose (object);
}

static void
subagent_supervisor_finalize (GObject *object)
{
  SubagentSupervisor *self = SUBAGENT_SUPERVISOR (object);

  if (self->writer != NULL)
    subagent_events_writer_flush (self->writer, NULL);
  g_clear_object (&self->writer);
  g_clear_object (&self->manager);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_free (self->events_path);
  g_queue_clear_full (&self->finished, (GDestroyNotify) _subagent_job_unref);
  g_hash_table_unref (self->jobs);
  g_hash_table_unref (self->agents);
  g_hash_table_unref (self->spent);
  g_hash_table_unref (self->kept);
  g_hash_table_unref (self->queues);
  g_hash_table_unref (self->unattended);
  g_queue_clear (&self->queue);
  g_queue_clear_full (&self->pending, (GDestroyNotify) _subagent_action_free);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (subagent_supervisor_parent_class)->finalize (object);
}

static void
subagent_supervisor_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SubagentSupervisor *self = SUBAGENT_SUPERVISOR (object);

  switch (prop_id)
    {
    case PROP_MANAGER: g_value_set_object (value, self->manager); break;
    case PROP_MAX_PARALLEL: g_value_set_uint (value, self->max_parallel); break;
    case PROP_MAX_AGENTS: g_value_set_int (value, (gint) MIN (self->max_agents, G_MAXINT)); break;
    case PROP_MAX_COST_CENTS: g_value_set_double (value, self->max_cost_cents); break;
    case PROP_EVENTS_PATH: g_value_set_string (value, self->events_path); break;
    case PROP_KEEP_WORKSPACES: g_value_set_boolean (value, subagent_supervisor_get_keep_workspaces (self)); break;
    case PROP_RESULTS_IN_MEMORY: g_value_set_uint (value, subagent_supervisor_get_results_in_memory (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_supervisor_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  SubagentSupervisor *self = SUBAGENT_SUPERVISOR (object);

  switch (prop_id)
    {
    case PROP_MANAGER: self->manager = g_value_dup_object (value); break;
    case PROP_MAX_PARALLEL: self->max_parallel = g_value_get_uint (value); break;
    case PROP_MAX_AGENTS: self->max_agents_setting = g_value_get_int (value); break;
    case PROP_MAX_COST_CENTS: self->max_cost_cents = g_value_get_double (value); break;
    case PROP_EVENTS_PATH: self->events_path = g_value_dup_string (value); self->events_path_set = TRUE; break;
    case PROP_KEEP_WORKSPACES: subagent_supervisor_set_keep_workspaces (self, g_value_get_boolean (value)); break;
    case PROP_RESULTS_IN_MEMORY: subagent_supervisor_set_results_in_memory (self, g_value_get_uint (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_supervisor_constructed (GObject *object)
{
  SubagentSupervisor *self = SUBAGENT_SUPERVISOR (object);
  SubagentConfig *config;

  G_OBJECT_CLASS (subagent_supervisor_parent_class)->constructed (object);
  g_return_if_fail (SUBAGENT_IS_MANAGER (self->manager));

  config = subagent_manager_get_config (self->manager);
  if (self->max_parallel == 0)
    self->max_parallel = subagent_config_get_max_parallel (config);
  self->max_parallel = MAX (self->max_parallel, 1);
  if (self->max_agents_setting < 0)
    self->max_agents = subagent_config_get_max_agents (config);
  else
    self->max_agents = (guint) self->max_agents_setting;
  if (self->max_cost_cents < 0)
    self->max_cost_cents = subagent_config_get_max_cost_cents (config);

  if (!self->events_path_set || self->events_path == NULL)
    {
      g_free (self->events_path);
      self->events_path = g_build_filename (subagent_manager_get_root (self->manager), ".subagent", "events.jsonl", NULL);
    }
  if (*self->events_path != '\0')
    self->writer = subagent_events_writer_new (self->events_path);
}

static void
subagent_supervisor_class_init (SubagentSupervisorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  static const char * const kind_signals[] = {
    "accepted", "queued", "started", "completed", "failed", "cancelled",
    "workspace-disposed", "approval-requested", "approval-resolved", "usage",
  };

  object_class->dispose = subagent_supervisor_dispose;
  object_class->finalize = subagent_supervisor_finalize;
  object_class->get_property = subagent_supervisor_get_property;
  object_class->set_property = subagent_supervisor_set_property;
  object_class->constructed = subagent_supervisor_constructed;

  /**
   * SubagentSupervisor:manager:
   *
   * The manager that runs each child.
   */
  properties[PROP_MANAGER] =
    g_param_spec_object ("manager", NULL, NULL, SUBAGENT_TYPE_MANAGER,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentSupervisor:max-parallel:
   *
   * How many children run at once; 0 takes `runner.max_parallel` of the
   * configuration. Never below 1.
   */
  properties[PROP_MAX_PARALLEL] =
    g_param_spec_uint ("max-parallel", NULL, NULL, 0, 4096, 0,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentSupervisor:max-agents:
   *
   * How many children one parent run may start in all; -1 takes
   * `runner.max_agents` of the configuration (128 by default); 0 is no cap.
   */
  properties[PROP_MAX_AGENTS] =
    g_param_spec_int ("max-agents", NULL, NULL, -1, G_MAXINT, -1,
                      G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentSupervisor:max-cost-cents:
   *
   * What one parent run may spend on children, in cents; -1 takes
   * `budget.max_cost_cents` of the configuration; 0 is no cap.
   */
  properties[PROP_MAX_COST_CENTS] =
    g_param_spec_double ("max-cost-cents", NULL, NULL, -1, G_MAXDOUBLE, -1,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentSupervisor:events-path:
   *
   * The JSON-lines file events are appended to; %NULL means
   * `<root>/.subagent/events.jsonl`, `""` writes no file.
   */
  properties[PROP_EVENTS_PATH] =
    g_param_spec_string ("events-path", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentSupervisor:keep-workspaces:
   *
   * Whether the isolated workspaces of children that ran are kept for
   * follow-ups (cleaned up at shutdown) instead of being cleaned up at once.
   */
  properties[PROP_KEEP_WORKSPACES] =
    g_param_spec_boolean ("keep-workspaces", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentSupervisor:results-in-memory:
   *
   * How many finished children's results the supervisor keeps in memory,
   * the latest ones. Older ones are rebuilt from the session records of the
   * supervisor's manager when subagent_supervisor_wait_async(),
   * subagent_supervisor_lookup_result() or subagent_supervisor_cancel()
   * asks for them (one line of its session log each, read in a worker
   * thread for wait_async(); cancel() reads nothing). A result no record
   * holds (a child cancelled before it started) and a child whose
   * workspace is kept for follow-ups stay in memory however many there
   * are. Bounds what a long-lived host holds for children long finished.
   *
   * Since: 0.2
   */
  properties[PROP_RESULTS_IN_MEMORY] =
    g_param_spec_uint ("results-in-memory", NULL, NULL, 1, G_MAXUINT, RESULTS_IN_MEMORY_DEFAULT,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SubagentSupervisor::event:
   * @self: the supervisor
   * @event: what happened
   *
   * Every event, with the kind's name (subagent_event_kind_to_string()) as
   * the detail: connect to `event::completed` for one kind.
   */
  _subagent_supervisor_signals[SIGNAL_EVENT] =
    g_signal_new ("event", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_DETAILED, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, SUBAGENT_TYPE_EVENT);

  /**
   * SubagentSupervisor::accepted:
   * @self: the supervisor
   * @event: the event
   *
   * A child was accepted.
   */
  /**
   * SubagentSupervisor::queued:
   * @self: the supervisor
   * @event: the event
   *
   * A child waits for a running slot; only emitted when it has to wait.
   */
  /**
   * SubagentSupervisor::started:
   * @self: the supervisor
   * @event: the event
   *
   * A child got a running slot (or, just before #SubagentSupervisor::cancelled,
   * was cancelled while queued).
   */
  /**
   * SubagentSupervisor::completed:
   * @self: the supervisor
   * @event: the event
   *
   * A child ended complete or partial.
   */
  /**
   * SubagentSupervisor::failed:
   * @self: the supervisor
   * @event: the event
   *
   * A child failed or could not start.
   */
  /**
   * SubagentSupervisor::cancelled:
   * @self: the supervisor
   * @event: the event
   *
   * A child was cancelled.
   */
  /**
   * SubagentSupervisor::workspace-disposed:
   * @self: the supervisor
   * @event: the event
   *
   * A child's isolated workspace was cleaned up.
   */
  /**
   * SubagentSupervisor::approval-requested:
   * @self: the supervisor
   * @event: the event
   *
   * A child asked its parent run's approval queue for an approval.
   */
  /**
   * SubagentSupervisor::approval-resolved:
   * @self: the supervisor
   * @event: the event
   *
   * An approval request of a child got its verdict.
   */
  /**
   * SubagentSupervisor::usage:
   * @self: the supervisor
   * @event: the event, with `iterations`, `tool_calls` and `cost_cents`
   *
   * A running child reported its totals so far (a command child's `usage`
   * message); the final ones come with its terminal event.
   *
   * Since: 0.2
   */
  for (guint i = 0; i < G_N_ELEMENTS (kind_signals); i++)
    _subagent_supervisor_signals[SIGNAL_KIND_FIRST + i] =
      g_signal_new (kind_signals[i], G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                    NULL, NULL, NULL, G_TYPE_NONE, 1, SUBAGENT_TYPE_EVENT);
}

static void
subagent_supervisor_init (SubagentSupervisor *self)
{
  g_mutex_init (&self->lock);
  self->context = g_main_context_ref_thread_default ();
  self->max_agents_setting = -1;
  self->max_cost_cents = -1;
  self->jobs = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) _subagent_job_unref);
  self->results_in_memory = RESULTS_IN_MEMORY_DEFAULT;
  g_queue_init (&self->finished);
  self->agents = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->spent = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->kept = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->queues = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->unattended = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_queue_init (&self->queue);
  g_queue_init (&self->pending);
  g_queue_init (&self->slot_waiters);
}

/**
 * subagent_supervisor_new:
 * @manager: the manager that runs each child
 *
 * Creates a supervisor with the caps and budget of @manager's
 * configuration, writing events to `<root>/.subagent/events.jsonl`. Use
 * g_object_new() to set #SubagentSupervisor:max-parallel and the others.
 *
 * Returns: (transfer full): a new #SubagentSupervisor
 */
SubagentSupervisor *
subagent_supervisor_new (SubagentManager *manager)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (manager), NULL);
  return g_object_new (SUBAGENT_TYPE_SUPERVISOR, "manager", manager, NULL);
}

/**
 * subagent_supervisor_get_manager:
 * @self: a #SubagentSupervisor
 *
 * Gets the manager.
 *
 * Returns: (transfer none): the manager
 *
 * Since: 0.2
 */
SubagentManager *
subagent_supervisor_get_manager (SubagentSupervisor *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);
  return self->manager;
}

/**
 * subagent_supervisor_get_max_parallel:
 * @self: a #SubagentSupervisor
 *
 * Gets how many children run at once.
 *
 * Returns: how many children run at once
 *
 * Since: 0.2
 */
guint
subagent_supervisor_get_max_parallel (SubagentSupervisor *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), 1);
  return self->max_parallel;
}

/**
 * subagent_supervisor_get_max_outstanding:
 * @self: a #SubagentSupervisor
 *
 * Gets how many children may be running or queued: 2 × max-parallel.
 *
 * Returns: how many children may be running or queued: 2 × max-parallel
 *
 * Since: 0.2
 */
guint
subagent_supervisor_get_max_outstanding (SubagentSupervisor *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), 2);
  return 2 * self->max_parallel;
}

/**
 * subagent_supervisor_get_max_agents:
 * @self: a #SubagentSupervisor
 *
 * Gets how many children one parent run may start in all (0: no cap).
 *
 * Returns: how many children one parent run may start in all (0: no cap)
 *
 * Since: 0.2
 */
guint
subagent_supervisor_get_max_agents (SubagentSupervisor *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), 0);
  return self->max_agents;
}

/**
 * subagent_supervisor_get_max_cost_cents:
 * @self: a #SubagentSupervisor
 *
 * Gets what one parent run may spend on children (0: no cap).
 *
 * Returns: what one parent run may spend on children (0: no cap)
 *
 * Since: 0.2
 */
double
subagent_supervisor_get_max_cost_cents (SubagentSupervisor *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), 0);
  return self->max_cost_cents;
}

/**
 * subagent_supervisor_get_spent_cents:
 * @self: a #SubagentSupervisor
 * @parent_run_id: (nullable): a parent run; %NULL for the manager's
 *
 * Gets what the finished children of @parent_run_id cost.
 *
 * Returns: what the finished children of @parent_run_id cost
 *
 * Since: 0.2
 */
double
subagent_supervisor_get_spent_cents (SubagentSupervisor *self,
                                     const char         *parent_run_id)
{
  double spent;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), 0);

  g_mutex_lock (&self->lock);
  spent = _subagent_supervisor_spent_locked (self, parent_run_id ? parent_run_id
                                                                 : subagent_manager_get_run_id (self->manager));
  g_mutex_unlock (&self->lock);
  return spent;
}

/**
 * subagent_supervisor_get_events_path:
 * @self: a #SubagentSupervisor
 *
 * Gets the events file, `""` when none is written.
 *
 * Returns: (transfer none): the events file, `""` when none is written
 *
 * Since: 0.2
 */
const char *
subagent_supervisor_get_events_path (SubagentSupervisor *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);
  return self->events_path;
}

/**
 * subagent_supervisor_get_keep_workspaces:
 * @self: a #SubagentSupervisor
 *
 * Gets whether workspaces are kept for follow-ups.
 *
 * Returns: whether workspaces are kept for follow-ups
 *
 * Since: 0.2
 */
gboolean
subagent_supervisor_get_keep_workspaces (SubagentSupervisor *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), FALSE);
  return g_atomic_int_get (&self->keep_workspaces);
}

/**
 * subagent_supervisor_set_keep_workspaces:
 * @self: a #SubagentSupervisor
 * @keep: whether to keep them
 *
 * Sets #SubagentSupervisor:keep-workspaces for children started afterwards.
 */
void
subagent_supervisor_set_keep_workspaces (SubagentSupervisor *self,
                                         gboolean            keep)
{
  g_return_if_fail (SUBAGENT_IS_SUPERVISOR (self));

  if (g_atomic_int_get (&self->keep_workspaces) == !!keep)
    return;
  g_atomic_int_set (&self->keep_workspaces, !!keep);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_KEEP_WORKSPACES]);
}

/**
 * subagent_supervisor_get_n_running:
 * @self: a #SubagentSupervisor
 *
 * Gets how many children hold a running slot.
 *
 * Returns: how many children hold a running slot
 *
 * Since: 0.2
 */
guint
subagent_supervisor_get_n_running (SubagentSupervisor *self)
{
  guint n;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), 0);
  g_mutex_lock (&self->lock);
  n = self->n_running;
  g_mutex_unlock (&self->lock);
  return n;
}

/**
 * subagent_supervisor_get_n_queued:
 * @self: a #SubagentSupervisor
 *
 * Gets how many children wait for a running slot.
 *
 * Returns: how many children wait for a running slot
 *
 * Since: 0.2
 */
guint
subagent_supervisor_get_n_queued (SubagentSupervisor *self)
{
  guint n;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), 0);
  g_mutex_lock (&self->lock);
  n = self->queue.length;
  g_mutex_unlock (&self->lock);
  return n;
}

/**
 * subagent_supervisor_is_closed:
 * @self: a #SubagentSupervisor
 *
 * Checks whether a shutdown began (new children are refused).
 *
 * Returns: whether a shutdown began (new children are refused)
 *
 * Since: 0.2
 */
gboolean
subagent_supervisor_is_closed (SubagentSupervisor *self)
{
  gboolean closed;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), TRUE);
  g_mutex_lock (&self->lock);
  closed = self->closed;
  g_mutex_unlock (&self->lock);
  return closed;
}

/**
 * subagent_supervisor_is_active:
 * @self: a #SubagentSupervisor
 * @run_id: a child's run id
 *
 * Checks whether that child is queued or running.
 *
 * Returns: whether that child is queued or running
 *
 * Since: 0.2
 */
gboolean
subagent_supervisor_is_active (SubagentSupervisor *self,
                               const char         *run_id)
{
  SubagentJob *job;
  gboolean active;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), FALSE);
  g_return_val_if_fail (run_id != NULL, FALSE);

  g_mutex_lock (&self->lock);
  job = g_hash_table_lookup (self->jobs, run_id);
  active = job != NULL && job->state != SUBAGENT_JOB_DONE;
  g_mutex_unlock (&self->lock);
  return active;
}
