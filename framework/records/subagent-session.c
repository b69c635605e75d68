/* subagent-session.c: the record kept of one child run.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-json-private.h"
#include "subagent-session-private.h"

/**
 * SubagentSession:
 *
 * The record kept of one child run (reference 001's `SubagentSession`, plus
 * what follow-ups need: the task, the follow-up count, whether the workspace
 * was kept and where it is). Immutable; a follow-up writes a new record.
 *
 * Sessions are stored as `<sessions-dir>/<session-id>.json` by
 * subagent_session_save() and read back by subagent_session_load()
 * (see `subagent-session-io.h`).
 */

G_DEFINE_FINAL_TYPE (SubagentSession, subagent_session, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_SESSION_ID,
  PROP_DEF_NAME,
  PROP_PARENT_RUN_ID,
  PROP_STATUS,
  PROP_STARTED_AT,
  PROP_DEPTH,
  PROP_BATCH_INDEX,
  PROP_ISOLATION,
  PROP_WORKTREE_PATH,
  PROP_CONTAINER_PATH,
  PROP_COMPLETED_AT,
  PROP_ITERATIONS,
  PROP_TOOL_CALLS,
  PROP_COST_CENTS,
  PROP_FINAL_ANSWER,
  PROP_REVIEW,
  PROP_TASK,
  PROP_FOLLOW_UPS,
  PROP_WORKSPACE_KEPT,
  PROP_CHILD_ROOT,
  PROP_TRANSCRIPT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
subagent_session_dispose (GObject *object)
{
  SubagentSession *self = SUBAGENT_SESSION (object);

  g_clear_object (&self->lineage);
  g_clear_pointer (&self->review, json_object_unref);
  g_clear_pointer (&self->transcript, json_array_unref);

  G_OBJECT_CLASS (subagent_session_parent_class)->dispose (object);
}

static void
subagent_session_finalize (GObject *object)
{
  SubagentSession *self = SUBAGENT_SESSION (object);

  g_free (self->session_id);
  g_free (self->def_name);
  g_free (self->parent_run_id);
  g_clear_pointer (&self->started_at, g_date_time_unref);
  g_free (self->isolation);
  g_free (self->worktree_path);
  g_free (self->container_path);
  g_clear_pointer (&self->completed_at, g_date_time_unref);
  g_free (self->final_answer);
  g_free (self->task);
  g_free (self->child_root);
  g_free (self->last_message);
  g_free (self->last_stop_reason);
  g_free (self->last_confinement);

  G_OBJECT_CLASS (subagent_session_parent_class)->finalize (object);
}

static void
subagent_session_constructed (GObject *object)
{
  SubagentSession *self = SUBAGENT_SESSION (object);

  G_OBJECT_CLASS (subagent_session_parent_class)->constructed (object);

  if (self->started_at == NULL)
    self->started_at = g_date_time_new_now_utc ();
  self->lineage = subagent_lineage_new (self->parent_run_id, self->def_name, self->depth,
                                        self->isolation, self->batch_index,
                                        self->worktree_path, self->container_path);
}

static void
subagent_session_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  SubagentSession *self = SUBAGENT_SESSION (object);

  switch (prop_id)
    {
    case PROP_SESSION_ID:
      g_value_set_string (value, self->session_id);
      break;
    case PROP_DEF_NAME:
      g_value_set_string (value, self->def_name);
      break;
    case PROP_PARENT_RUN_ID:
      g_value_set_string (value, self->parent_run_id);
      break;
    case PROP_STATUS:
      g_value_set_enum (value, self->status);
      break;
    case PROP_STARTED_AT:
      g_value_set_boxed (value, self->started_at);
      break;
    case PROP_DEPTH:
      g_value_set_uint (value, self->depth);
      break;
    case PROP_BATCH_INDEX:
      g_value_set_int (value, self->batch_index);
      break;
    case PROP_ISOLATION:
      g_value_set_string (value, self->isolation);
      break;
    case PROP_WORKTREE_PATH:
      g_value_set_string (value, self->worktree_path);
      break;
    case PROP_CONTAINER_PATH:
      g_value_set_string (value, self->container_path);
      break;
    case PROP_COMPLETED_AT:
      g_value_set_boxed (value, self->completed_at);
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
    case PROP_TRANSCRIPT:
      g_value_set_boxed (value, self->transcript);
      break;
    case PROP_REVIEW:
      g_value_set_boxed (value, self->review);
      break;
    case PROP_TASK:
      g_value_set_string (value, self->task);
      break;
    case PROP_FOLLOW_UPS:
      g_value_set_uint (value, self->follow_ups);
      break;
    case PROP_WORKSPACE_KEPT:
      g_value_set_boolean (value, self->workspace_kept);
      break;
    case PROP_CHILD_ROOT:
      g_value_set_string (value, self->child_root);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* How a session stores its strings: ids, answer and task never NULL, a
 * path or root never empty, an isolation "shared" when none is named.
 * set_property() and a record written without the object agree on them. */
static inline const char *
or_empty (const char *s)
{
  return s != NULL ? s : "";
}

static inline const char *
nonempty (const char *s)
{
  return s != NULL && *s != '\0' ? s : NULL;
}

static inline const char *
isolation_or_shared (const char *s)
{
  return nonempty (s) != NULL ? s : "shared";
}

static char *
dup_or_empty (const GValue *value)
{
  return g_strdup (or_empty (g_value_get_string (value)));
}

static char *
dup_nonempty (const GValue *value)
{
  return g_strdup (nonempty (g_value_get_string (value)));
}

void
_subagent_session_view_normalize (SubagentSessionView *view)
{
  view->session_id = or_empty (view->session_id);
  view->def_name = or_empty (view->def_name);
  view->parent_run_id = or_empty (view->parent_run_id);
  view->isolation = isolation_or_shared (view->isolation);
  view->worktree_path = nonempty (view->worktree_path);
  view->container_path = nonempty (view->container_path);
  view->final_answer = or_empty (view->final_answer);
  view->task = or_empty (view->task);
  view->child_root = nonempty (view->child_root);
}

static void
subagent_session_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  SubagentSession *self = SUBAGENT_SESSION (object);

  switch (prop_id)
    {
    case PROP_SESSION_ID:
      self->session_id = dup_or_empty (value);
      break;
    case PROP_DEF_NAME:
      self->def_name = dup_or_empty (value);
      break;
    case PROP_PARENT_RUN_ID:
      self->parent_run_id = dup_or_empty (value);
      break;
    case PROP_STATUS:
      self->status = g_value_get_enum (value);
      break;
    case PROP_STARTED_AT:
      self->started_at = g_value_dup_boxed (value);
      break;
    case PROP_DEPTH:
      self->depth = g_value_get_uint (value);
      break;
    case PROP_BATCH_INDEX:
      self->batch_index = g_value_get_int (value);
      break;
    case PROP_ISOLATION:
      self->isolation = g_strdup (isolation_or_shared (g_value_get_string (value)));
      break;
    case PROP_WORKTREE_PATH:
      self->worktree_path = dup_nonempty (value);
      break;
    case PROP_CONTAINER_PATH:
      self->container_path = dup_nonempty (value);
      break;
    case PROP_COMPLETED_AT:
      self->completed_at = g_value_dup_boxed (value);
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
    case PROP_TRANSCRIPT:
      if (g_value_get_boxed (value) != NULL)
        {
          g_autoptr(JsonNode) node = json_node_init_array (json_node_alloc (), g_value_get_boxed (value));
          g_autoptr(JsonNode) copy = subagent_json_node_deep_copy (node);

          json_node_seal (copy);
          self->transcript = json_array_ref (json_node_get_array (copy));
        }
      break;
    case PROP_REVIEW:
      self->review = subagent_json_object_sealed_copy (g_value_get_boxed (value));
      break;
    case PROP_TASK:
      self->task = dup_or_empty (value);
      break;
    case PROP_FOLLOW_UPS:
      self->follow_ups = g_value_get_uint (value);
      break;
    case PROP_WORKSPACE_KEPT:
      self->workspace_kept = g_value_get_boolean (value);
      break;
    case PROP_CHILD_ROOT:
      self->child_root = dup_nonempty (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_session_class_init (SubagentSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = subagent_session_dispose;
  object_class->finalize = subagent_session_finalize;
  object_class->constructed = subagent_session_constructed;
  object_class->get_property = subagent_session_get_property;
  object_class->set_property = subagent_session_set_property;

  /**
   * SubagentSession:session-id:
   *
   * The session's id (see subagent_session_id_is_valid()), usually the child's run id.
   */
  properties[PROP_SESSION_ID] = g_param_spec_string ("session-id", NULL, NULL, "", flags);

  /**
   * SubagentSession:def-name:
   *
   * The definition the child ran.
   */
  properties[PROP_DEF_NAME] = g_param_spec_string ("def-name", NULL, NULL, "", flags);

  /**
   * SubagentSession:parent-run-id:
   *
   * The parent's run id.
   */
  properties[PROP_PARENT_RUN_ID] = g_param_spec_string ("parent-run-id", NULL, NULL, "", flags);

  /**
   * SubagentSession:status:
   *
   * The run's status.
   */
  properties[PROP_STATUS] =
    g_param_spec_enum ("status", NULL, NULL, SUBAGENT_TYPE_RUN_STATUS,
                       SUBAGENT_RUN_STATUS_COMPLETE, flags);

  /**
   * SubagentSession:started-at:
   *
   * When the child started; now when not given.
   */
  properties[PROP_STARTED_AT] =
    g_param_spec_boxed ("started-at", NULL, NULL, G_TYPE_DATE_TIME, flags);

  /**
   * SubagentSession:depth:
   *
   * The child's depth.
   */
  properties[PROP_DEPTH] = g_param_spec_uint ("depth", NULL, NULL, 0, G_MAXINT, 0, flags);

  /**
   * SubagentSession:batch-index:
   *
   * The child's position in a batch, or %SUBAGENT_NO_BATCH_INDEX.
   */
  properties[PROP_BATCH_INDEX] =
    g_param_spec_int ("batch-index", NULL, NULL, SUBAGENT_NO_BATCH_INDEX, G_MAXINT,
                      SUBAGENT_NO_BATCH_INDEX, flags);

  /**
   * SubagentSession:isolation:
   *
   * The isolation mode the child ran in.
   */
  properties[PROP_ISOLATION] = g_param_spec_string ("isolation", NULL, NULL, "shared", flags);

  /**
   * SubagentSession:worktree-path:
   *
   * The worktree the child worked in, if any.
   */
  properties[PROP_WORKTREE_PATH] = g_param_spec_string ("worktree-path", NULL, NULL, NULL, flags);

  /**
   * SubagentSession:container-path:
   *
   * The directory snapshot the child worked in, if any.
   */
  properties[PROP_CONTAINER_PATH] = g_param_spec_string ("container-path", NULL, NULL, NULL, flags);

  /**
   * SubagentSession:completed-at:
   *
   * When the child ended, if it did.
   */
  properties[PROP_COMPLETED_AT] =
    g_param_spec_boxed ("completed-at", NULL, NULL, G_TYPE_DATE_TIME, flags);

  /**
   * SubagentSession:iterations:
   *
   * The iterations the child used.
   */
  properties[PROP_ITERATIONS] = g_param_spec_uint ("iterations", NULL, NULL, 0, G_MAXUINT, 0, flags);

  /**
   * SubagentSession:tool-calls:
   *
   * The tool calls the child made.
   */
  properties[PROP_TOOL_CALLS] = g_param_spec_uint ("tool-calls", NULL, NULL, 0, G_MAXUINT, 0, flags);

  /**
   * SubagentSession:cost-cents:
   *
   * What the run cost, in cents.
   */
  properties[PROP_COST_CENTS] =
    g_param_spec_double ("cost-cents", NULL, NULL, 0, G_MAXDOUBLE, 0, flags);

  /**
   * SubagentSession:final-answer:
   *
   * The child's answer.
   */
  properties[PROP_FINAL_ANSWER] = g_param_spec_string ("final-answer", NULL, NULL, "", flags);

  /**
   * SubagentSession:review:
   *
   * The review artifact of the run, if any. Stored as a sealed copy.
   */
  properties[PROP_REVIEW] = g_param_spec_boxed ("review", NULL, NULL, JSON_TYPE_OBJECT, flags);
  /**
   * SubagentSession:transcript:
   *
   * The conversation of a model-backed child (chat-completions messages,
   * each model turn with its `usage`), which a follow-up continues; %NULL
   * for other children. Stored as a sealed copy.
   *
   * Since: 0.2
   */
  properties[PROP_TRANSCRIPT] = g_param_spec_boxed ("transcript", NULL, NULL, JSON_TYPE_ARRAY, flags);

  /**
   * SubagentSession:task:
   *
   * The task the child was given.
   */
  properties[PROP_TASK] = g_param_spec_string ("task", NULL, NULL, "", flags);

  /**
   * SubagentSession:follow-ups:
   *
   * How many follow-ups were run in this session.
   */
  properties[PROP_FOLLOW_UPS] = g_param_spec_uint ("follow-ups", NULL, NULL, 0, G_MAXUINT, 0, flags);

  /**
   * SubagentSession:workspace-kept:
   *
   * Whether the child's workspace was kept for follow-ups instead of being cleaned up.
   */
  properties[PROP_WORKSPACE_KEPT] = g_param_spec_boolean ("workspace-kept", NULL, NULL, FALSE, flags);

  /**
   * SubagentSession:child-root:
   *
   * The directory the child worked in, when its workspace was kept.
   */
  properties[PROP_CHILD_ROOT] = g_param_spec_string ("child-root", NULL, NULL, NULL, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_session_init (SubagentSession *self)
{
  self->batch_index = SUBAGENT_NO_BATCH_INDEX;
}
