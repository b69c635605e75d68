/* subagent-run-result.c: what a run hands back to the parent agent.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-json-private.h"
#include "subagent-records-private.h"
#include "subagent-session-private.h"

/**
 * SubagentRunResult:
 *
 * The result of one delegation as the parent agent sees it (reference 001's
 * `run_subagent` dictionary). Immutable.
 *
 * A result is either a run result — the child ran, and its status is
 * complete, partial, cancelled or failed — or an error result
 * (%SUBAGENT_RUN_STATUS_ERROR): the child could not start (depth limit,
 * isolation failure, bad input). subagent_run_result_to_json() gives the two
 * shapes of reference 001 exactly.
 */
struct _SubagentRunResult
{
  GObject parent_instance;

  SubagentRunStatus status;
  char *run_id;
  guint iterations;
  guint tool_calls;
  double cost_cents;
  char *final_answer;
  SubagentLineage *lineage;
  JsonObject *review;
  char *message;
  char *stop_reason;
  char *session_id;
  char *confinement;
};

G_DEFINE_FINAL_TYPE (SubagentRunResult, subagent_run_result, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_STATUS,
  PROP_RUN_ID,
  PROP_ITERATIONS,
  PROP_TOOL_CALLS,
  PROP_COST_CENTS,
  PROP_FINAL_ANSWER,
  PROP_LINEAGE,
  PROP_REVIEW,
  PROP_MESSAGE,
  PROP_STOP_REASON,
  PROP_SESSION_ID,
  PROP_CONFINEMENT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
subagent_run_result_dispose (GObject *object)
{
  SubagentRunResult *self = SUBAGENT_RUN_RESULT (object);

  g_clear_object (&self->lineage);
  g_clear_pointer (&self->review, json_object_unref);

  G_OBJECT_CLASS (subagent_run_result_parent_class)->dispose (object);
}

static void
subagent_run_result_finalize (GObject *object)
{
  SubagentRunResult *self = SUBAGENT_RUN_RESULT (object);

  g_free (self->run_id);
  g_free (self->final_answer);
  g_free (self->message);
  g_free (self->stop_reason);
  g_free (self->session_id);
  g_free (self->confinement);

  G_OBJECT_CLASS (subagent_run_result_parent_class)->finalize (object);
}

static void
subagent_run_result_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  SubagentRunResult *self = SUBAGENT_RUN_RESULT (object);

  switch (prop_id)
    {
    case PROP_STATUS:
      g_value_set_enum (value, self->status);
      break;
    case PROP_RUN_ID:
      g_value_set_string (value, self->run_id);
      break;
    case PROP_ITERATIONS:
      g_value_set_uint (value, self->iterations);
      break;
    case PROP_TOOL_CALLS:
      g_value_set_uint (value, self->tool_calls);
      break;
    case PROP_COST_CENTS:
      g_value_set_double (value, self->cost_cents);
      break;
    case PROP_FINAL_ANSWER:
      g_value_set_string (value, self->final_answer);
      break;
    case PROP_LINEAGE:
      g_value_set_object (value, self->lineage);
      break;
    case PROP_REVIEW:
      g_value_set_boxed (value, self->review);
      break;
    case PROP_MESSAGE:
      g_value_set_string (value, self->message);
      break;
    case PROP_STOP_REASON:
      g_value_set_string (value, self->stop_reason);
      break;
    case PROP_CONFINEMENT:
      g_value_set_string (value, self->confinement);
      break;
    case PROP_SESSION_ID:
      g_value_set_string (value, self->session_id);
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
subagent_run_result_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  SubagentRunResult *self = SUBAGENT_RUN_RESULT (object);

  switch (prop_id)
    {
    case PROP_STATUS:
      self->status = g_value_get_enum (value);
      break;
    case PROP_RUN_ID:
      self->run_id = dup_or_empty (value);
      break;
    case PROP_ITERATIONS:
      self->iterations = g_value_get_uint (value);
      break;
    case PROP_TOOL_CALLS:
      self->tool_calls = g_value_get_uint (value);
      break;
    case PROP_COST_CENTS:
      self->cost_cents = g_value_get_double (value);
      break;
    case PROP_FINAL_ANSWER:
      self->final_answer = dup_or_empty (value);
      break;
    case PROP_LINEAGE:
      self->lineage = g_value_dup_object (value);
      break;
    case PROP_REVIEW:
      self->review = subagent_json_object_sealed_copy (g_value_get_boxed (value));
      break;
    case PROP_MESSAGE:
      self->message = dup_or_empty (value);
      break;
    case PROP_STOP_REASON:
      self->stop_reason = dup_or_empty (value);
      break;
    case PROP_CONFINEMENT:
      self->confinement = g_value_dup_string (value);
      break;
    case PROP_SESSION_ID:
      {
        const char *s = g_value_get_string (value);
        self->session_id = (s != NULL && *s != '\0') ? g_strdup (s) : NULL;
      }
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_run_result_class_init (SubagentRunResultClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = subagent_run_result_dispose;
  object_class->finalize = subagent_run_result_finalize;
  object_class->get_property = subagent_run_result_get_property;
  object_class->set_property = subagent_run_result_set_property;

  /**
   * SubagentRunResult:status:
   *
   * The run's terminal status; %SUBAGENT_RUN_STATUS_ERROR when the child could not start.
   */
  properties[PROP_STATUS] =
    g_param_spec_enum ("status", NULL, NULL, SUBAGENT_TYPE_RUN_STATUS,
                       SUBAGENT_RUN_STATUS_ERROR, flags);

  /**
   * SubagentRunResult:run-id:
   *
   * The child run's id (`""` for an error result).
   */
  properties[PROP_RUN_ID] =
    g_param_spec_string ("run-id", NULL, NULL, "", flags);

  /**
   * SubagentRunResult:iterations:
   *
   * The iterations the child used.
   */
  properties[PROP_ITERATIONS] =
    g_param_spec_uint ("iterations", NULL, NULL, 0, G_MAXUINT, 0, flags);

  /**
   * SubagentRunResult:tool-calls:
   *
   * The tool calls the child made.
   */
  properties[PROP_TOOL_CALLS] =
    g_param_spec_uint ("tool-calls", NULL, NULL, 0, G_MAXUINT, 0, flags);

  /**
   * SubagentRunResult:cost-cents:
   *
   * What the child's run cost, in cents.
   */
  properties[PROP_COST_CENTS] =
    g_param_spec_double ("cost-cents", NULL, NULL, 0, G_MAXDOUBLE, 0, flags);

  /**
   * SubagentRunResult:final-answer:
   *
   * The child's answer.
   */
  properties[PROP_FINAL_ANSWER] =
    g_param_spec_string ("final-answer", NULL, NULL, "", flags);

  /**
   * SubagentRunResult:lineage:
   *
   * The child's lineage, when known.
   */
  properties[PROP_LINEAGE] =
    g_param_spec_object ("lineage", NULL, NULL, SUBAGENT_TYPE_LINEAGE, flags);

  /**
   * SubagentRunResult:review:
   *
   * The review artifact of the run (what the child changed), if one was
   * captured. Stored as a sealed copy.
   */
  properties[PROP_REVIEW] =
    g_param_spec_boxed ("review", NULL, NULL, JSON_TYPE_OBJECT, flags);

  /**
   * SubagentRunResult:message:
   *
   * A message for the parent: what happened, or why the run failed.
   */
  properties[PROP_MESSAGE] =
    g_param_spec_string ("message", NULL, NULL, "", flags);

  /**
   * SubagentRunResult:stop-reason:
   *
   * The runner's stop reason (`""` for an error result).
   */
  properties[PROP_STOP_REASON] =
    g_param_spec_string ("stop-reason", NULL, NULL, "", flags);

  /**
   * SubagentRunResult:session-id:
   *
   * The id of the session record kept for the run, if any.
   */
  properties[PROP_SESSION_ID] =
    g_param_spec_string ("session-id", NULL, NULL, NULL, flags);

  /**
   * SubagentRunResult:confinement:
   *
   * The confinement the child ran under (`landlock`, `none`, `container`),
   * or %NULL when no process was started.
   */
  properties[PROP_CONFINEMENT] =
    g_param_spec_string ("confinement", NULL, NULL, NULL, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_run_result_init (SubagentRunResult *self)
{
  self->status = SUBAGENT_RUN_STATUS_ERROR;
}

/**
 * subagent_run_result_new:
 * @status: the run's status
 * @run_id: (nullable): the child run's id
 * @iterations: iterations used
 * @tool_calls: tool calls made
 * @cost_cents: cost in cents
 * @final_answer: (nullable): the answer
 * @lineage: (nullable): the child's lineage
 * @review: (nullable): the review artifact; copied
 * @message: (nullable): a message for the parent
 * @stop_reason: (nullable): the runner's stop reason
 * @session_id: (nullable): the session record's id
 *
 * Creates a result with every field given.
 *
 * Returns: (transfer full): a new #SubagentRunResult
 */
SubagentRunResult *
subagent_run_result_new (SubagentRunStatus  status,
                         const char        *run_id,
                         guint              iterations,
                         guint              tool_calls,
                         double             cost_cents,
                         const char        *final_answer,
                         SubagentLineage   *lineage,
                         JsonObject        *review,
                         const char        *message,
                         const char        *stop_reason,
                         const char        *session_id)
{
  g_return_val_if_fail (lineage == NULL || SUBAGENT_IS_LINEAGE (lineage), NULL);

  return g_object_new (SUBAGENT_TYPE_RUN_RESULT,
                       "status", status,
                       "run-id", run_id,
                       "iterations", iterations,
                       "tool-calls", tool_calls,
                       "cost-cents", cost_cents > 0 ? cost_cents : 0.0,
                       "final-answer", final_answer,
                       "lineage", lineage,
                       "review", review,
                       "message", message,
                       "stop-reason", stop_reason,
                       "session-id", session_id,
                       NULL);
}

/**
 * subagent_run_result_new_error:
 * @message: why the child could not start
 * @lineage: (nullable): the lineage the child would have had, when known
 *
 * Creates an error result (%SUBAGENT_RUN_STATUS_ERROR).
 *
 * Returns: (transfer full): a new #SubagentRunResult
 */
SubagentRunResult *
subagent_run_result_new_error (const char      *message,
                               SubagentLineage *lineage)
{
  g_return_val_if_fail (message != NULL, NULL);

  return subagent_run_result_new (SUBAGENT_RUN_STATUS_ERROR, "", 0, 0, 0.0, "",
                                  lineage, NULL, message, "", NULL);
}

/**
 * subagent_run_result_new_from_outcome:
 * @run_id: the child run's id
 * @outcome: what the runner reported
 * @lineage: (nullable): the child's lineage
 * @review: (nullable): the review artifact; copied
 * @session_id: (nullable): the session record's id
 *
 * Creates the result of a child that ran; the status comes from
 * subagent_run_outcome_get_status().
 *
 * Returns: (transfer full): a new #SubagentRunResult
 */
SubagentRunResult *
subagent_run_result_new_from_outcome (const char         *run_id,
                                      SubagentRunOutcome *outcome,
                                      SubagentLineage    *lineage,
                                      JsonObject         *review,
                                      const char         *session_id)
{
  g_return_val_if_fail (run_id != NULL, NULL);
  g_return_val_if_fail (SUBAGENT_IS_RUN_OUTCOME (outcome), NULL);

  return g_object_new (SUBAGENT_TYPE_RUN_RESULT,
                       "status", subagent_run_outcome_get_status (outcome),
                       "run-id", run_id,
                       "iterations", subagent_run_outcome_get_iterations (outcome),
                       "tool-calls", subagent_run_outcome_get_tool_calls (outcome),
                       "cost-cents", MAX (subagent_run_outcome_get_cost_cents (outcome), 0.0),
                       "final-answer", subagent_run_outcome_get_final_answer (outcome),
                       "lineage", lineage,
                       "review", review,
                       "message", subagent_run_outcome_get_message (outcome),
                       "stop-reason", subagent_run_outcome_get_stop_reason (outcome),
                       "session-id", session_id,
                       "confinement", subagent_run_outcome_get_confinement (outcome),
                       NULL);
}

SubagentRunResult *
_subagent_run_result_new_from_session (SubagentSession *session)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (session), NULL);

  if (!session->has_last_run)
    return NULL;
  return g_object_new (SUBAGENT_TYPE_RUN_RESULT,
                       "status", session->status,
                       "run-id", session->session_id,
                       "iterations", session->last_iterations,
                       "tool-calls", session->last_tool_calls,
                       "cost-cents", session->last_cost_cents,
                       "final-answer", session->final_answer,
                       "lineage", subagent_session_get_lineage (session),
                       "review", session->review,
                       "message", session->last_message,
                       "stop-reason", session->last_stop_reason,
                       "session-id", session->session_id,
                       "confinement", session->last_confinement,
                       NULL);
}

/**
 * subagent_run_result_get_status:
 * @self: a #SubagentRunResult
 *
 * Gets the status.
 *
 * Returns: the status
 *
 * Since: 0.2
 */
SubagentRunStatus
subagent_run_result_get_status (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), SUBAGENT_RUN_STATUS_ERROR);
  return self->status;
}

/**
 * subagent_run_result_get_run_id:
 * @self: a #SubagentRunResult
 *
 * Gets the child run's id, `""` for an error result.
 *
 * Returns: (transfer none): the child run's id, `""` for an error result
 *
 * Since: 0.2
 */
const char *
subagent_run_result_get_run_id (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), NULL);
  return self->run_id;
}

/**
 * subagent_run_result_get_iterations:
 * @self: a #SubagentRunResult
 *
 * Gets the iterations used.
 *
 * Returns: the iterations used
 *
 * Since: 0.2
 */
guint
subagent_run_result_get_iterations (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), 0);
  return self->iterations;
}

/**
 * subagent_run_result_get_tool_calls:
 * @self: a #SubagentRunResult
 *
 * Gets the tool calls made.
 *
 * Returns: the tool calls made
 *
 * Since: 0.2
 */
guint
subagent_run_result_get_tool_calls (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), 0);
  return self->tool_calls;
}

/**
 * subagent_run_result_get_cost_cents:
 * @self: a #SubagentRunResult
 *
 * Gets the cost in cents.
 *
 * Returns: the cost in cents
 *
 * Since: 0.2
 */
double
subagent_run_result_get_cost_cents (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), 0);
  return self->cost_cents;
}

/**
 * subagent_run_result_get_final_answer:
 * @self: a #SubagentRunResult
 *
 * Gets the answer.
 *
 * Returns: (transfer none): the answer
 *
 * Since: 0.2
 */
const char *
subagent_run_result_get_final_answer (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), NULL);
  return self->final_answer;
}

/**
 * subagent_run_result_get_lineage:
 * @self: a #SubagentRunResult
 *
 * Gets the lineage.
 *
 * Returns: (transfer none) (nullable): the lineage
 *
 * Since: 0.2
 */
SubagentLineage *
subagent_run_result_get_lineage (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), NULL);
  return self->lineage;
}

/**
 * subagent_run_result_get_review:
 * @self: a #SubagentRunResult
 *
 * Gets the review artifact (sealed).
 *
 * Returns: (transfer none) (nullable): the review artifact (sealed)
 *
 * Since: 0.2
 */
JsonObject *
subagent_run_result_get_review (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), NULL);
  return self->review;
}

/**
 * subagent_run_result_get_message:
 * @self: a #SubagentRunResult
 *
 * Gets the message.
 *
 * Returns: (transfer none): the message
 *
 * Since: 0.2
 */
const char *
subagent_run_result_get_message (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), NULL);
  return self->message;
}

/**
 * subagent_run_result_get_stop_reason:
 * @self: a #SubagentRunResult
 *
 * Gets the runner's stop reason, `""` for an error result.
 *
 * Returns: (transfer none): the runner's stop reason, `""` for an error result
 *
 * Since: 0.2
 */
const char *
subagent_run_result_get_stop_reason (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), NULL);
  return self->stop_reason;
}

/**
 * subagent_run_result_get_session_id:
 * @self: a #SubagentRunResult
 *
 * Gets the session record's id.
 *
 * Returns: (transfer none) (nullable): the session record's id
 *
 * Since: 0.2
 */
const char *
subagent_run_result_get_session_id (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), NULL);
  return self->session_id;
}

/**
 * subagent_run_result_is_error:
 * @self: a #SubagentRunResult
 *
 * Checks whether %TRUE for an error result (the child could not start).
 *
 * Returns: %TRUE for an error result (the child could not start)
 *
 * Since: 0.2
 */
gboolean
subagent_run_result_is_error (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), TRUE);
  return self->status == SUBAGENT_RUN_STATUS_ERROR;
}

/**
 * subagent_run_result_to_json:
 * @self: a #SubagentRunResult
 *
 * Serializes the result with exactly reference 001's keys. A run result
 * gives `run_id`, `status`, `iterations`, `tool_calls`, `cost_cents`,
 * `final_answer`, `lineage` (`null` when unknown), `review` (only when
 * present) and `message`. An error result gives `run_id` (`""`), `status`
 * (`"error"`), `iterations` and `tool_calls` (0), `final_answer` (`""`),
 * `message` and, when known, `lineage` — and no `cost_cents`.
 *
 * Returns: (transfer full): a new JSON object
 */
JsonObject *
subagent_run_result_to_json (SubagentRunResult *self)
{
  JsonObject *object;

  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), NULL);

  object = json_object_new ();
  if (self->status == SUBAGENT_RUN_STATUS_ERROR)
    {
      json_object_set_string_member (object, "run_id", "");
      json_object_set_string_member (object, "status", subagent_run_status_to_string (self->status));
      json_object_set_int_member (object, "iterations", 0);
      json_object_set_int_member (object, "tool_calls", 0);
      json_object_set_double_member (object, "cost_cents", 0.0);
      json_object_set_string_member (object, "final_answer", "");
      /* Reference 001's error shape, with every key of a result present so
       * that consumers need no special case: null where unknown. `review`
       * stays, as in 001, only where there is one. */
      if (self->lineage != NULL)
        json_object_set_object_member (object, "lineage", subagent_lineage_to_json (self->lineage));
      else
        json_object_set_null_member (object, "lineage");
      json_object_set_string_member (object, "message", self->message);
      return object;
    }

  json_object_set_string_member (object, "run_id", self->run_id);
  json_object_set_string_member (object, "status", subagent_run_status_to_string (self->status));
  json_object_set_int_member (object, "iterations", self->iterations);
  json_object_set_int_member (object, "tool_calls", self->tool_calls);
  subagent_json_set_amount (object, "cost_cents", self->cost_cents);
  json_object_set_string_member (object, "final_answer", self->final_answer);
  if (self->lineage != NULL)
    json_object_set_object_member (object, "lineage", subagent_lineage_to_json (self->lineage));
  else
    json_object_set_null_member (object, "lineage");
  /* A mutable copy: the caller owns the returned tree. */
  if (self->review != NULL)
    {
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), self->review);

      json_object_set_member (object, "review", subagent_json_node_deep_copy (node));
    }
  json_object_set_string_member (object, "message", self->message);
  if (self->confinement != NULL)
    json_object_set_string_member (object, "confinement", self->confinement);
  return object;
}

/**
 * subagent_run_result_get_confinement:
 * @self: a #SubagentRunResult
 *
 * Gets the confinement the child ran under.
 *
 * Returns: (transfer none) (nullable): the confinement the child ran under
 *   (`landlock`, `none`, `container`), or %NULL when no process was started
 *
 * Since: 0.2
 */
const char *
subagent_run_result_get_confinement (SubagentRunResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), NULL);
  return self->confinement;
}
