/* subagent-runner.c: the host's agent loop, as libsubagent sees it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"

/**
 * SubagentRunOutcome:
 *
 * What a #SubagentRunner reports when a child ends: why it stopped (one of
 * the `SUBAGENT_STOP_REASON_*` strings), its usage, its answer, its other
 * output and a message for the parent. Immutable.
 *
 * A child that failed, hit a limit or was cancelled still has an outcome;
 * subagent_run_outcome_get_status() maps it to a #SubagentRunStatus.
 */
struct _SubagentRunOutcome
{
  GObject parent_instance;

  char *stop_reason;
  guint iterations;
  guint tool_calls;
  double cost_cents;
  char *final_answer;
  char *output;
  char *message;
  JsonArray *transcript;
  char *confinement;
};

G_DEFINE_FINAL_TYPE (SubagentRunOutcome, subagent_run_outcome, G_TYPE_OBJECT)

enum {
  OUTCOME_PROP_0,
  OUTCOME_PROP_STOP_REASON,
  OUTCOME_PROP_ITERATIONS,
  OUTCOME_PROP_TOOL_CALLS,
  OUTCOME_PROP_COST_CENTS,
  OUTCOME_PROP_FINAL_ANSWER,
  OUTCOME_PROP_OUTPUT,
  OUTCOME_PROP_MESSAGE,
  OUTCOME_PROP_TRANSCRIPT,
  OUTCOME_PROP_CONFINEMENT,
  OUTCOME_N_PROPS
};

static GParamSpec *outcome_properties[OUTCOME_N_PROPS];

static void
subagent_run_outcome_finalize (GObject *object)
{
  SubagentRunOutcome *self = SUBAGENT_RUN_OUTCOME (object);

  g_free (self->stop_reason);
  g_free (self->final_answer);
  g_free (self->output);
  g_free (self->message);
  g_clear_pointer (&self->transcript, json_array_unref);
  g_free (self->confinement);

  G_OBJECT_CLASS (subagent_run_outcome_parent_class)->finalize (object);
}

static void
subagent_run_outcome_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  SubagentRunOutcome *self = SUBAGENT_RUN_OUTCOME (object);

  switch (prop_id)
    {
    case OUTCOME_PROP_STOP_REASON:
      g_value_set_string (value, self->stop_reason);
      break;
    case OUTCOME_PROP_ITERATIONS:
      g_value_set_uint (value, self->iterations);
      break;
    case OUTCOME_PROP_TOOL_CALLS:
      g_value_set_uint (value, self->tool_calls);
      break;
    case OUTCOME_PROP_COST_CENTS:
      g_value_set_double (value, self->cost_cents);
      break;
    case OUTCOME_PROP_FINAL_ANSWER:
      g_value_set_string (value, self->final_answer);
      break;
    case OUTCOME_PROP_OUTPUT:
      g_value_set_string (value, self->output);
      break;
    case OUTCOME_PROP_MESSAGE:
      g_value_set_string (value, self->message);
      break;
    case OUTCOME_PROP_TRANSCRIPT:
      g_value_set_boxed (value, self->transcript);
      break;
    case OUTCOME_PROP_CONFINEMENT:
      g_value_set_string (value, self->confinement);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static char *
dup_or_empty (const GValue *value)
{
  const char *s = g_value_get_string (value);

  return g_strdup (s ? s : "");
}

static void
subagent_run_outcome_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  SubagentRunOutcome *self = SUBAGENT_RUN_OUTCOME (object);

  switch (prop_id)
    {
    case OUTCOME_PROP_STOP_REASON:
      {
        const char *s = g_value_get_string (value);
        self->stop_reason = g_strdup ((s != NULL && *s != '\0') ? s : SUBAGENT_STOP_REASON_ERROR);
      }
      break;
    case OUTCOME_PROP_ITERATIONS:
      self->iterations = g_value_get_uint (value);
      break;
    case OUTCOME_PROP_TOOL_CALLS:
      self->tool_calls = g_value_get_uint (value);
      break;
    case OUTCOME_PROP_COST_CENTS:
      self->cost_cents = g_value_get_double (value);
      break;
    case OUTCOME_PROP_FINAL_ANSWER:
      self->final_answer = dup_or_empty (value);
      break;
    case OUTCOME_PROP_OUTPUT:
      self->output = dup_or_empty (value);
      break;
    case OUTCOME_PROP_MESSAGE:
      self->message = dup_or_empty (value);
      break;
    case OUTCOME_PROP_TRANSCRIPT:
      self->transcript = g_value_dup_boxed (value);
      break;
    case OUTCOME_PROP_CONFINEMENT:
      self->confinement = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_run_outcome_class_init (SubagentRunOutcomeClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = subagent_run_outcome_finalize;
  object_class->get_property = subagent_run_outcome_get_property;
  object_class->set_property = subagent_run_outcome_set_property;

  /**
   * SubagentRunOutcome:stop-reason:
   *
   * Why the child stopped: `complete`, `max_turns`, `max_tokens`,
   * `cancelled`, `error`, `usage_limit`, `budget`, `timeout` (or a
   * runner-specific reason, which maps to a failure).
   */
  outcome_properties[OUTCOME_PROP_STOP_REASON] =
    g_param_spec_string ("stop-reason", NULL, NULL, SUBAGENT_STOP_REASON_ERROR, flags);

  /**
   * SubagentRunOutcome:iterations:
   *
   * The iterations (turns) the child used.
   */
  outcome_properties[OUTCOME_PROP_ITERATIONS] =
    g_param_spec_uint ("iterations", NULL, NULL, 0, G_MAXUINT, 0, flags);

  /**
   * SubagentRunOutcome:tool-calls:
   *
   * The tool calls the child made.
   */
  outcome_properties[OUTCOME_PROP_TOOL_CALLS] =
    g_param_spec_uint ("tool-calls", NULL, NULL, 0, G_MAXUINT, 0, flags);

  /**
   * SubagentRunOutcome:cost-cents:
   *
   * What the child's run cost, in cents.
   */
  outcome_properties[OUTCOME_PROP_COST_CENTS] =
    g_param_spec_double ("cost-cents", NULL, NULL, 0, G_MAXDOUBLE, 0, flags);

  /**
   * SubagentRunOutcome:final-answer:
   *
   * The child's answer (`""` when it gave none).
   */
  outcome_properties[OUTCOME_PROP_FINAL_ANSWER] =
    g_param_spec_string ("final-answer", NULL, NULL, "", flags);

  /**
   * SubagentRunOutcome:output:
   *
   * The child's other output, such as stdout lines that are not protocol messages.
   */
  outcome_properties[OUTCOME_PROP_OUTPUT] =
    g_param_spec_string ("output", NULL, NULL, "", flags);

  /**
   * SubagentRunOutcome:message:
   *
   * A message for the parent: why the child failed or stopped (`""` when it completed).
   */
  /**
   * SubagentRunOutcome:transcript:
   *
   * The child's whole conversation (chat-completions messages, with the
   * usage of each model turn), kept in its session so a follow-up can
   * continue it; %NULL for runners that keep none.
   *
   * Since: 0.2
   */
  outcome_properties[OUTCOME_PROP_TRANSCRIPT] =
    g_param_spec_boxed ("transcript", NULL, NULL, JSON_TYPE_ARRAY, flags);

  outcome_properties[OUTCOME_PROP_MESSAGE] =
    g_param_spec_string ("message", NULL, NULL, "", flags);

  /**
   * SubagentRunOutcome:confinement:
   *
   * The confinement the child ran under (`landlock`, `none`, `container`),
   * or %NULL when the runner did not start a process.
   */
  outcome_properties[OUTCOME_PROP_CONFINEMENT] =
    g_param_spec_string ("confinement", NULL, NULL, NULL, flags);
  g_object_class_install_properties (object_class, OUTCOME_N_PROPS, outcome_properties);
}

static void
subagent_run_outcome_init (SubagentRunOutcome *self)
{
}

/**
 * subagent_run_outcome_new:
 * @stop_reason: (nullable): why the child stopped; %NULL means `error`
 * @iterations: iterations used
 * @tool_calls: tool calls made
 * @cost_cents: cost in cents
 * @final_answer: (nullable): the answer
 * @output: (nullable): other output
 * @message: (nullable): a message for the parent
 *
 * Creates an outcome.
 *
 * Returns: (transfer full): a new #SubagentRunOutcome
 */
SubagentRunOutcome *
subagent_run_outcome_new (const char *stop_reason,
                          guint       iterations,
                          guint       tool_calls,
                          double      cost_cents,
                          const char *final_answer,
                          const char *output,
                          const char *message)
{
  return g_object_new (SUBAGENT_TYPE_RUN_OUTCOME,
                       "stop-reason", stop_reason,
                       "iterations", iterations,
                       "tool-calls", tool_calls,
                       "cost-cents", cost_cents > 0 ? cost_cents : 0.0,
                       "final-answer", final_answer,
                       "output", output,
                       "message", message,
                       NULL);
}

/**
 * subagent_run_outcome_get_stop_reason:
 * @self: a #SubagentRunOutcome
 *
 * Gets the stop reason.
 *
 * Returns: (transfer none): the stop reason
 *
 * Since: 0.2
 */
const char *
subagent_run_outcome_get_stop_reason (SubagentRunOutcome *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OUTCOME (self), NULL);
  return self->stop_reason;
}

/**
 * subagent_run_outcome_get_iterations:
 * @self: a #SubagentRunOutcome
 *
 * Gets the iterations used.
 *
 * Returns: the iterations used
 *
 * Since: 0.2
 */
guint
subagent_run_outcome_get_iterations (SubagentRunOutcome *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OUTCOME (self), 0);
  return self->iterations;
}

/**
 * subagent_run_outcome_get_tool_calls:
 * @self: a #SubagentRunOutcome
 *
 * Gets the tool calls made.
 *
 * Returns: the tool calls made
 *
 * Since: 0.2
 */
guint
subagent_run_outcome_get_tool_calls (SubagentRunOutcome *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OUTCOME (self), 0);
  return self->tool_calls;
}

/**
 * subagent_run_outcome_get_cost_cents:
 * @self: a #SubagentRunOutcome
 *
 * Gets the cost in cents.
 *
 * Returns: the cost in cents
 *
 * Since: 0.2
 */
double
subagent_run_outcome_get_cost_cents (SubagentRunOutcome *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OUTCOME (self), 0);
  return self->cost_cents;
}

/**
 * subagent_run_outcome_get_final_answer:
 * @self: a #SubagentRunOutcome
 *
 * Gets the answer, `""` when none.
 *
 * Returns: (transfer none): the answer, `""` when none
 *
 * Since: 0.2
 */
const char *
subagent_run_outcome_get_final_answer (SubagentRunOutcome *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OUTCOME (self), NULL);
  return self->final_answer;
}

/**
 * subagent_run_outcome_get_output:
 * @self: a #SubagentRunOutcome
 *
 * Gets the other output, `""` when none.
 *
 * Returns: (transfer none): the other output, `""` when none
 *
 * Since: 0.2
 */
const char *
subagent_run_outcome_get_output (SubagentRunOutcome *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OUTCOME (self), NULL);
  return self->output;
}

/**
 * subagent_run_outcome_get_message:
 * @self: a #SubagentRunOutcome
 *
 * Gets the message, `""` when none.
 *
 * Returns: (transfer none): the message, `""` when none
 *
 * Since: 0.2
 */
const char *
subagent_run_outcome_get_message (SubagentRunOutcome *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OUTCOME (self), NULL);
  return self->message;
}

/**
 * subagent_run_outcome_get_transcript:
 * @self: a #SubagentRunOutcome
 *
 * The conversation of a model-backed child, for its session record and
 * follow-ups.
 *
 * Returns: (transfer none) (nullable): the child's conversation, or %NULL
 *
 * Since: 0.2
 */
JsonArray *
subagent_run_outcome_get_transcript (SubagentRunOutcome *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OUTCOME (self), NULL);
  return self->transcript;
}

/**
 * subagent_run_outcome_get_status:
 * @self: a #SubagentRunOutcome
 *
 * Maps the stop reason to a status with subagent_stop_reason_to_status();
 * the child counts as having produced output when it gave an answer, wrote
 * other output or made a tool call.
 *
 * Returns: the run's status
 */
SubagentRunStatus
subagent_run_outcome_get_status (SubagentRunOutcome *self)
{
  gboolean produced;

  g_return_val_if_fail (SUBAGENT_IS_RUN_OUTCOME (self), SUBAGENT_RUN_STATUS_FAILED);

  produced = *self->final_answer != '\0' || *self->output != '\0' || self->tool_calls > 0;
  return subagent_stop_reason_to_status (self->stop_reason, produced);
}

/**
 * subagent_stop_reason_to_status:
 * @stop_reason: (nullable): a stop reason
 * @produced_output: whether the child produced output or made tool calls
 *
 * Maps a stop reason to a run status (reference 003): `complete` is
 * complete; `max_turns`, `max_tokens` and `budget` are partial; `cancelled`
 * is partial when the child produced something, else cancelled; `error`,
 * `usage_limit`, `timeout` and any other reason (or %NULL) are failed.
 *
 * Returns: the status
 */
SubagentRunStatus
subagent_stop_reason_to_status (const char *stop_reason,
                                gboolean    produced_output)
{
  if (stop_reason == NULL)
    return SUBAGENT_RUN_STATUS_FAILED;
  if (g_str_equal (stop_reason, SUBAGENT_STOP_REASON_COMPLETE))
    return SUBAGENT_RUN_STATUS_COMPLETE;
  if (g_str_equal (stop_reason, SUBAGENT_STOP_REASON_MAX_TURNS) ||
      g_str_equal (stop_reason, SUBAGENT_STOP_REASON_MAX_TOKENS) ||
      g_str_equal (stop_reason, SUBAGENT_STOP_REASON_BUDGET))
    return SUBAGENT_RUN_STATUS_PARTIAL;
  if (g_str_equal (stop_reason, SUBAGENT_STOP_REASON_CANCELLED))
    return produced_output ? SUBAGENT_RUN_STATUS_PARTIAL : SUBAGENT_RUN_STATUS_CANCELLED;
  return SUBAGENT_RUN_STATUS_FAILED;
}

/**
 * SubagentRunner:
 *
 * The host's agent loop as libsubagent sees it: given a #SubagentRunContext
 * it runs one child and reports a #SubagentRunOutcome. Hosts implement it
 * to plug their own loop in; #SubagentCommandRunner runs a program.
 *
 * Implementations must report children that fail, hit a limit or are
 * cancelled through the outcome, and fail the call only when they could not
 * run at all. They must be usable for several runs at once.
 */
G_DEFINE_INTERFACE (SubagentRunner, subagent_runner, G_TYPE_OBJECT)

static void
run_in_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  SubagentRunnerInterface *iface = SUBAGENT_RUNNER_GET_IFACE (source_object);
  GError *error = NULL;
  SubagentRunOutcome *outcome = iface->run (SUBAGENT_RUNNER (source_object), task_data, cancellable, &error);

  if (outcome == NULL && error == NULL)
    error = g_error_new (SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                         "The run method of %s returned no outcome and no error",
                         G_OBJECT_TYPE_NAME (source_object));
  if (outcome == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, outcome, g_object_unref);
}

/* The source tag of tasks handed to start(); they complete with a GValue. */
static void
subagent_runner_real_start (void)
{
}

/* For implementations that give only the blocking run(): a thread, so
 * that the caller's main loop keeps going (approvals, other children). */
static void
subagent_runner_real_run_async (SubagentRunner      *self,
                                SubagentRunContext  *context,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  SubagentRunnerInterface *iface = SUBAGENT_RUNNER_GET_IFACE (self);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  /* A cancelled child still has an outcome: the implementation reports it. */
  g_task_set_check_cancellable (task, FALSE);
  if (iface->start != NULL)
    {
      g_task_set_source_tag (task, subagent_runner_real_start);
      iface->start (self, context, task);
      return;
    }
  g_task_set_source_tag (task, subagent_runner_real_run_async);
  if (iface->run == NULL)
    {
      g_task_return_new_error (task, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                               "%s implements SubagentRunner without run, start or run_async; implement one of them",
                               G_OBJECT_TYPE_NAME (self));
      return;
    }
  g_task_set_task_data (task, g_object_ref (context), g_object_unref);
  g_task_run_in_thread (task, run_in_thread);
}

/* The outcome of the default run_async's task, or of a GTask returned with
 * g_task_return_value() (what `task.return_value (outcome)` does in a
 * binding): such an implementation needs no run_finish of its own. */
static SubagentRunOutcome *
subagent_runner_real_run_finish (SubagentRunner  *self,
                                 GAsyncResult    *result,
                                 GError         **error)
{
  g_auto(GValue) value = G_VALUE_INIT;
  GObject *object;

  if (!G_IS_TASK (result) || !g_task_is_valid (result, self))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                   "%s has its own run_async but no run_finish; give it a run_finish, or return a GTask",
                   G_OBJECT_TYPE_NAME (self));
      return NULL;
    }
  if (g_task_get_source_tag (G_TASK (result)) == subagent_runner_real_run_async)
    return g_task_propagate_pointer (G_TASK (result), error);
  if (!g_task_propagate_value (G_TASK (result), &value, error))
    return NULL;
  object = G_VALUE_HOLDS_OBJECT (&value) ? g_value_get_object (&value)
           : G_VALUE_HOLDS_POINTER (&value) ? g_value_get_pointer (&value) : NULL;
  if (object == NULL || !SUBAGENT_IS_RUN_OUTCOME (object))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                   "%s returned %s from its run, not a SubagentRunOutcome",
                   G_OBJECT_TYPE_NAME (self), object ? G_OBJECT_TYPE_NAME (object) : G_VALUE_TYPE_NAME (&value));
      return NULL;
    }
  return g_object_ref (SUBAGENT_RUN_OUTCOME (object));
}

static void
subagent_runner_default_init (SubagentRunnerInterface *iface)
{
  iface->run_async = subagent_runner_real_run_async;
  iface->run_finish = subagent_runner_real_run_finish;
}

/**
 * subagent_runner_run_async:
 * @self: a #SubagentRunner
 * @context: what to run
 * @cancellable: (nullable): cancels the child; the outcome then says `cancelled`
 * @callback: (scope async): called when the child has ended
 * @user_data: (closure): data for @callback
 *
 * Runs the child described by @context. @callback is invoked in the
 * thread-default main context of the caller.
 */
void
subagent_runner_run_async (SubagentRunner      *self,
                           SubagentRunContext  *context,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  SubagentRunnerInterface *iface;

  g_return_if_fail (SUBAGENT_IS_RUNNER (self));
  g_return_if_fail (SUBAGENT_IS_RUN_CONTEXT (context));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  iface = SUBAGENT_RUNNER_GET_IFACE (self);
  g_return_if_fail (iface->run_async != NULL);
  iface->run_async (self, context, cancellable, callback, user_data);
}

/**
 * subagent_runner_run_finish:
 * @self: a #SubagentRunner
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes subagent_runner_run_async().
 *
 * Returns: (transfer full): the outcome (also for failed or cancelled
 *   children), or %NULL with @error set when the runner could not run the child
 */
SubagentRunOutcome *
subagent_runner_run_finish (SubagentRunner  *self,
                            GAsyncResult    *result,
                            GError         **error)
{
  SubagentRunnerInterface *iface;

  g_return_val_if_fail (SUBAGENT_IS_RUNNER (self), NULL);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  iface = SUBAGENT_RUNNER_GET_IFACE (self);
  g_return_val_if_fail (iface->run_finish != NULL, NULL);
  return iface->run_finish (self, result, error);
}

typedef struct {
  GAsyncResult *result;
} SyncData;

static void
sync_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  SyncData *data = user_data;

  data->result = g_object_ref (result);
}

/**
 * subagent_runner_run: (virtual run)
 * @self: a #SubagentRunner
 * @context: what to run
 * @cancellable: (nullable): cancels the child
 * @error: return location for a #GError
 *
 * Runs the child and waits for it. An implementation of the `run` vfunc is
 * called directly. Otherwise the run happens on a private main
 * context pushed as the thread default for the duration of the call, so the
 * caller's main context is not iterated: sources attached to it do not fire
 * while this blocks. Do not call it from a main loop that must stay
 * responsive; use subagent_runner_run_async() there.
 *
 * Returns: (transfer full): the outcome, or %NULL with @error set when the
 *   runner could not run the child
 */
SubagentRunOutcome *
subagent_runner_run (SubagentRunner      *self,
                     SubagentRunContext  *context,
                     GCancellable        *cancellable,
                     GError             **error)
{
  g_autoptr(GMainContext) main_context = NULL;
  SyncData data = { NULL };
  SubagentRunOutcome *outcome;

  g_return_val_if_fail (SUBAGENT_IS_RUNNER (self), NULL);
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (context), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (SUBAGENT_RUNNER_GET_IFACE (self)->run != NULL)
    return SUBAGENT_RUNNER_GET_IFACE (self)->run (self, context, cancellable, error);

  main_context = g_main_context_new ();
  g_main_context_push_thread_default (main_context);
  subagent_runner_run_async (self, context, cancellable, sync_done, &data);
  while (data.result == NULL)
    g_main_context_iteration (main_context, TRUE);
  outcome = subagent_runner_run_finish (self, data.result, error);
  g_object_unref (data.result);
  g_main_context_pop_thread_default (main_context);
  return outcome;
}

/**
 * subagent_run_outcome_get_confinement:
 * @self: a #SubagentRunOutcome
 *
 * Gets the confinement the child ran under.
 *
 * Returns: (transfer none) (nullable): the confinement the child ran under
 *   (`landlock`, `none`, `container`), or %NULL
 *
 * Since: 0.2
 */
const char *
subagent_run_outcome_get_confinement (SubagentRunOutcome *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OUTCOME (self), NULL);
  return self->confinement;
}
