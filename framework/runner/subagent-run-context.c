/* subagent-run-context.c: everything a runner needs to run one child: the
 * object, its properties and its usage signal. Its getters:
 * subagent-run-context-getters.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-json-line-private.h"
#include "subagent-run-context-private.h"
#include "subagent-run-context-struct-private.h"

/**
 * SubagentRunContext:
 *
 * The immutable description of one child run handed to a #SubagentRunner:
 * the task, the definition, the prepared workspace, the derived tool
 * registry, the permission mode and the limits.
 *
 * Build it with g_object_new() and its construct-only properties. Limits
 * left at 0 (#SubagentRunContext:max-iterations,
 * #SubagentRunContext:max-tool-calls, #SubagentRunContext:timeout-seconds,
 * #SubagentRunContext:max-cost-cents) take the definition's value; an empty
 * #SubagentRunContext:run-id is replaced by a fresh one; a missing
 * #SubagentRunContext:lineage is derived from the other properties.
 */

G_DEFINE_FINAL_TYPE (SubagentRunContext, subagent_run_context, G_TYPE_OBJECT)

static guint usage_signal;

enum {
  PROP_0,
  PROP_TASK,
  PROP_DEFINITION,
  PROP_DEPTH,
  PROP_RUN_ID,
  PROP_PARENT_RUN_ID,
  PROP_LINEAGE,
  PROP_TOOLS,
  PROP_PERMISSION_MODE,
  PROP_ISOLATION,
  PROP_MAX_ITERATIONS,
  PROP_MAX_TOOL_CALLS,
  PROP_TIMEOUT_SECONDS,
  PROP_MAX_COST_CENTS,
  PROP_BATCH_INDEX,
  PROP_APPROVAL_HANDLER,
  PROP_MODEL,
  PROP_TRANSCRIPT,
  PROP_CONFINEMENT,
  PROP_HIDDEN_PATHS,
  PROP_SKILL,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
subagent_run_context_dispose (GObject *object)
{
  SubagentRunContext *self = SUBAGENT_RUN_CONTEXT (object);

  g_clear_object (&self->definition);
  g_clear_object (&self->lineage);
  g_clear_object (&self->tools);
  g_clear_object (&self->isolation);
  g_clear_object (&self->approval_handler);
  g_clear_pointer (&self->model, json_object_unref);
  g_clear_pointer (&self->transcript, json_array_unref);
  g_clear_object (&self->skill);

  G_OBJECT_CLASS (subagent_run_context_parent_class)->dispose (object);
}

static void
subagent_run_context_finalize (GObject *object)
{
  SubagentRunContext *self = SUBAGENT_RUN_CONTEXT (object);

  g_free (self->task);
  g_free (self->run_id);
  g_free (self->parent_run_id);
  g_strfreev (self->hidden_paths);
  g_clear_pointer (&self->confinement_cache, _subagent_confinement_cache_unref);

  G_OBJECT_CLASS (subagent_run_context_parent_class)->finalize (object);
}

void
_subagent_run_context_set_confinement_cache (SubagentRunContext       *self,
                                             SubagentConfinementCache *cache)
{
  g_return_if_fail (SUBAGENT_IS_RUN_CONTEXT (self));

  if (cache != NULL)
    _subagent_confinement_cache_ref (cache);
  g_clear_pointer (&self->confinement_cache, _subagent_confinement_cache_unref);
  self->confinement_cache = cache;
}

SubagentConfinementCache *
_subagent_run_context_get_confinement_cache (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);

  return self->confinement_cache;
}

/* 32 hex digits: a valid id ([A-Za-z0-9_-]) that never collides in practice. */
static char *
new_run_id (void)
{
  return _subagent_uuid_string_random (FALSE);
}

/* What _subagent_run_context_new() is building, for constructed(): set
 * around one g_object_new() in this thread, which builds no other context. */
static _Thread_local const SubagentRunContextInit *init_pending;

SubagentRunContext *
_subagent_run_context_new (const SubagentRunContextInit *init)
{
  SubagentRunContext *self;

  g_return_val_if_fail (init != NULL, NULL);

  init_pending = init;
  self = g_object_new (SUBAGENT_TYPE_RUN_CONTEXT, NULL);
  init_pending = NULL;
  return self;
}

/* The properties from @init, over the defaults g_object_new() set; values
 * clamped as their GParamSpecs would. */
static void
take_init (SubagentRunContext           *self,
           const SubagentRunContextInit *init)
{
  g_free (self->task);
  self->task = g_strdup (init->task != NULL ? init->task : "");
  g_set_object (&self->definition, init->definition);
  self->depth = MIN (init->depth, G_MAXINT);
  g_free (self->run_id);
  self->run_id = g_strdup (init->run_id);
  g_free (self->parent_run_id);
  self->parent_run_id = g_strdup (init->parent_run_id != NULL ? init->parent_run_id : "");
  g_set_object (&self->lineage, init->lineage);
  g_set_object (&self->tools, init->tools);
  self->permission_mode = init->permission_mode;
  g_set_object (&self->isolation, init->isolation);
  self->max_iterations = init->max_iterations;
  self->max_tool_calls = init->max_tool_calls;
  self->timeout_seconds = init->timeout_seconds;
  self->max_cost_cents = MAX (init->max_cost_cents, 0.0);
  self->batch_index = MAX (init->batch_index, SUBAGENT_NO_BATCH_INDEX);
  g_set_object (&self->approval_handler, init->approval_handler);
  g_clear_pointer (&self->model, json_object_unref);
  self->model = init->model != NULL ? json_object_ref (init->model) : NULL;
  g_clear_pointer (&self->transcript, json_array_unref);
  self->transcript = init->transcript != NULL ? json_array_ref (init->transcript) : NULL;
  self->confinement = init->confinement;
  g_strfreev (self->hidden_paths);
  self->hidden_paths = g_strdupv ((char **) init->hidden_paths);
  g_set_object (&self->skill, init->skill);
}

static void
subagent_run_context_constructed (GObject *object)
{
  SubagentRunContext *self = SUBAGENT_RUN_CONTEXT (object);

  G_OBJECT_CLASS (subagent_run_context_parent_class)->constructed (object);

  if (init_pending != NULL)
    {
      take_init (self, init_pending);
      init_pending = NULL;
    }

  if (self->run_id == NULL || *self->run_id == '\0')
    {
      g_free (self->run_id);
      self->run_id = new_run_id ();
    }

  if (self->definition == NULL)
    g_critical ("SubagentRunContext built without a definition; runners need one");
  else
    {
      if (self->max_iterations == 0)
        self->max_iterations = subagent_def_get_max_iterations (self->definition);
      if (self->max_tool_calls == 0)
        self->max_tool_calls = subagent_def_get_max_tool_calls (self->definition);
      if (self->timeout_seconds == 0)
        self->timeout_seconds = subagent_def_get_timeout_seconds (self->definition);
      if (self->max_cost_cents <= 0)
        self->max_cost_cents = subagent_def_get_max_cost_cents (self->definition);
    }

  if (self->lineage == NULL)
    {
      const char *isolation = NULL;

      if (self->isolation != NULL)
        isolation = subagent_isolation_context_get_isolation (self->isolation);
      else if (self->definition != NULL)
        isolation = subagent_def_get_isolation (self->definition);
      self->lineage = subagent_lineage_new (self->parent_run_id,
                                            self->definition ? subagent_def_get_name (self->definition) : "",
                                            self->depth,
                                            isolation,
                                            self->batch_index,
                                            self->isolation ? subagent_isolation_context_get_worktree_path (self->isolation) : NULL,
                                            self->isolation ? subagent_isolation_context_get_container_path (self->isolation) : NULL);
    }
}

static void
subagent_run_context_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  SubagentRunContext *self = SUBAGENT_RUN_CONTEXT (object);

  switch (prop_id)
    {
    case PROP_TASK:
      g_value_set_string (value, self->task);
      break;
    case PROP_DEFINITION:
      g_value_set_object (value, self->definition);
      break;
    case PROP_DEPTH:
      g_value_set_uint (value, self->depth);
      break;
    case PROP_RUN_ID:
      g_value_set_string (value, self->run_id);
      break;
    case PROP_PARENT_RUN_ID:
      g_value_set_string (value, self->parent_run_id);
      break;
    case PROP_LINEAGE:
      g_value_set_object (value, self->lineage);
      break;
    case PROP_TOOLS:
      g_value_set_object (value, self->tools);
      break;
    case PROP_PERMISSION_MODE:
      g_value_set_enum (value, self->permission_mode);
      break;
    case PROP_ISOLATION:
      g_value_set_object (value, self->isolation);
      break;
    case PROP_MAX_ITERATIONS:
      g_value_set_uint (value, self->max_iterations);
      break;
    case PROP_MAX_TOOL_CALLS:
      g_value_set_uint (value, self->max_tool_calls);
      break;
    case PROP_TIMEOUT_SECONDS:
      g_value_set_uint (value, self->timeout_seconds);
      break;
    case PROP_MAX_COST_CENTS:
      g_value_set_double (value, self->max_cost_cents);
      break;
    case PROP_BATCH_INDEX:
      g_value_set_int (value, self->batch_index);
      break;
    case PROP_APPROVAL_HANDLER:
      g_value_set_object (value, self->approval_handler);
      break;
    case PROP_MODEL:
      g_value_set_boxed (value, self->model);
      break;
    case PROP_TRANSCRIPT:
      g_value_set_boxed (value, self->transcript);
      break;
    case PROP_CONFINEMENT:
      g_value_set_enum (value, self->confinement);
      break;
    case PROP_HIDDEN_PATHS:
      g_value_set_boxed (value, self->hidden_paths);
      break;
    case PROP_SKILL:
      g_value_set_object (value, self->skill);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_run_context_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  SubagentRunContext *self = SUBAGENT_RUN_CONTEXT (object);
  const char *s;

  switch (prop_id)
    {
    case PROP_TASK:
      s = g_value_get_string (value);
      self->task = g_strdup (s ? s : "");
      break;
    case PROP_DEFINITION:
      self->definition = g_value_dup_object (value);
      break;
    case PROP_DEPTH:
      self->depth = g_value_get_uint (value);
      break;
    case PROP_RUN_ID:
      self->run_id = g_value_dup_string (value);
      break;
    case PROP_PARENT_RUN_ID:
      s = g_value_get_string (value);
      self->parent_run_id = g_strdup (s ? s : "");
      break;
    case PROP_LINEAGE:
      self->lineage = g_value_dup_object (value);
      break;
    case PROP_TOOLS:
      self->tools = g_value_dup_object (value);
      break;
    case PROP_PERMISSION_MODE:
      self->permission_mode = g_value_get_enum (value);
      break;
    case PROP_ISOLATION:
      self->isolation = g_value_dup_object (value);
      break;
    case PROP_MAX_ITERATIONS:
      self->max_iterations = g_value_get_uint (value);
      break;
    case PROP_MAX_TOOL_CALLS:
      self->max_tool_calls = g_value_get_uint (value);
      break;
    case PROP_TIMEOUT_SECONDS:
      self->timeout_seconds = g_value_get_uint (value);
      break;
    case PROP_MAX_COST_CENTS:
      self->max_cost_cents = g_value_get_double (value);
      break;
    case PROP_BATCH_INDEX:
      self->batch_index = g_value_get_int (value);
      break;
    case PROP_APPROVAL_HANDLER:
      self->approval_handler = g_value_dup_object (value);
      break;
    case PROP_MODEL:
      self->model = g_value_dup_boxed (value);
      break;
    case PROP_TRANSCRIPT:
      self->transcript = g_value_dup_boxed (value);
      break;
    case PROP_CONFINEMENT:
      self->confinement = g_value_get_enum (value);
      break;
    case PROP_HIDDEN_PATHS:
      self->hidden_paths = g_value_dup_boxed (value);
      break;
    case PROP_SKILL:
      self->skill = g_value_dup_object (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_run_context_class_init (SubagentRunContextClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = subagent_run_context_dispose;
  object_class->finalize = subagent_run_context_finalize;
  object_class->constructed = subagent_run_context_constructed;
  object_class->get_property = subagent_run_context_get_property;
  object_class->set_property = subagent_run_context_set_property;

  /**
   * SubagentRunContext:confinement:
   *
   * The confinement the host's configuration asks for; merged with the
   * definition's by subagent_confinement_merge().
   */
  properties[PROP_CONFINEMENT] =
    g_param_spec_enum ("confinement", NULL, NULL, SUBAGENT_TYPE_CONFINEMENT, SUBAGENT_CONFINEMENT_DEFAULT, flags);

  /**
   * SubagentRunContext:hidden-paths:
   *
   * Files a confined child may not read, such as the approval key file.
   */
  properties[PROP_HIDDEN_PATHS] =
    g_param_spec_boxed ("hidden-paths", NULL, NULL, G_TYPE_STRV, flags);

  /**
   * SubagentRunContext:task:
   *
   * The task the child is asked to do.
   */
  properties[PROP_TASK] =
    g_param_spec_string ("task", NULL, NULL, "", flags);

  /**
   * SubagentRunContext:definition:
   *
   * The definition the child runs. Required.
   */
  properties[PROP_DEFINITION] =
    g_param_spec_object ("definition", NULL, NULL, SUBAGENT_TYPE_DEF, flags);

  /**
   * SubagentRunContext:depth:
   *
   * The child's depth (the parent's depth + 1).
   */
  properties[PROP_DEPTH] =
    g_param_spec_uint ("depth", NULL, NULL, 0, G_MAXINT, 0, flags);

  /**
   * SubagentRunContext:run-id:
   *
   * The child run's id (`[A-Za-z0-9_-]`); generated when left empty.
   */
  properties[PROP_RUN_ID] =
    g_param_spec_string ("run-id", NULL, NULL, NULL, flags);

  /**
   * SubagentRunContext:parent-run-id:
   *
   * The parent's run id.
   */
  properties[PROP_PARENT_RUN_ID] =
    g_param_spec_string ("parent-run-id", NULL, NULL, "", flags);

  /**
   * SubagentRunContext:lineage:
   *
   * The child's lineage; derived from the other properties when not given.
   */
  properties[PROP_LINEAGE] =
    g_param_spec_object ("lineage", NULL, NULL, SUBAGENT_TYPE_LINEAGE, flags);

  /**
   * SubagentRunContext:tools:
   *
   * The child's derived tool registry.
   */
  properties[PROP_TOOLS] =
    g_param_spec_object ("tools", NULL, NULL, SUBAGENT_TYPE_TOOL_REGISTRY, flags);

  /**
   * SubagentRunContext:permission-mode:
   *
   * The child's effective permission mode.
   */
  properties[PROP_PERMISSION_MODE] =
    g_param_spec_enum ("permission-mode", NULL, NULL, SUBAGENT_TYPE_PERMISSION_MODE,
                       SUBAGENT_PERMISSION_MODE_INHERIT, flags);

  /**
   * SubagentRunContext:isolation:
   *
   * The prepared workspace the child runs in.
   */
  properties[PROP_ISOLATION] =
    g_param_spec_object ("isolation", NULL, NULL, SUBAGENT_TYPE_ISOLATION_CONTEXT, flags);

  /**
   * SubagentRunContext:max-iterations:
   *
   * The most iterations (turns) the child may use; 0 takes the definition's.
   */
  properties[PROP_MAX_ITERATIONS] =
    g_param_spec_uint ("max-iterations", NULL, NULL, 0, G_MAXUINT, 0, flags);

  /**
   * SubagentRunContext:max-tool-calls:
   *
   * The most tool calls the child may make; 0 takes the definition's.
   */
  properties[PROP_MAX_TOOL_CALLS] =
    g_param_spec_uint ("max-tool-calls", NULL, NULL, 0, G_MAXUINT, 0, flags);

  /**
   * SubagentRunContext:timeout-seconds:
   *
   * The wall-clock limit of the run; 0 takes the definition's (whose 0 means none).
   */
  properties[PROP_TIMEOUT_SECONDS] =
    g_param_spec_uint ("timeout-seconds", NULL, NULL, 0, G_MAXUINT, 0, flags);

  /**
   * SubagentRunContext:max-cost-cents:
   *
   * The cost budget of the run; 0 takes the definition's (whose 0 means none).
   */
  properties[PROP_MAX_COST_CENTS] =
    g_param_spec_double ("max-cost-cents", NULL, NULL, 0, G_MAXDOUBLE, 0, flags);

  /**
   * SubagentRunContext:batch-index:
   *
   * The child's position in a batch, or %SUBAGENT_NO_BATCH_INDEX.
   */
  properties[PROP_BATCH_INDEX] =
    g_param_spec_int ("batch-index", NULL, NULL, SUBAGENT_NO_BATCH_INDEX, G_MAXINT,
                      SUBAGENT_NO_BATCH_INDEX, flags);

  /**
   * SubagentRunContext:approval-handler:
   *
   * The object that routes the child's approval requests, if any.
   */
  properties[PROP_APPROVAL_HANDLER] =
    g_param_spec_object ("approval-handler", NULL, NULL, G_TYPE_OBJECT, flags);

  /**
   * SubagentRunContext:model:
   *
   * The settings of the model the child runs on, as
   * subagent_config_get_model() gives them, or %NULL for a child that runs
   * no model.
   *
   * Since: 0.2
   */
  properties[PROP_MODEL] =
    g_param_spec_boxed ("model", NULL, NULL, JSON_TYPE_OBJECT, flags);

  /**
   * SubagentRunContext:transcript:
   *
   * The conversation so far when the run is a follow-up of a model-backed
   * child (messages in the chat-completions shape), or %NULL.
   *
   * Since: 0.2
   */
  properties[PROP_TRANSCRIPT] =
    g_param_spec_boxed ("transcript", NULL, NULL, JSON_TYPE_ARRAY, flags);

  /**
   * SubagentRunContext:skill:
   *
   * The skill the child runs, if any. Runners give the child its body after
   * the definition's system prompt (the command runner: in the task text
   * and as `SUBAGENT_SKILL_FILE`; a model runner: as a system message); the
   * run's tools are already narrowed to its `allowed-tools`.
   *
   * Since: 0.2
   */
  properties[PROP_SKILL] =
    g_param_spec_object ("skill", NULL, NULL, SUBAGENT_TYPE_SKILL, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SubagentRunContext::usage:
   * @self: the run context
   * @iterations: iterations so far
   * @tool_calls: tool calls so far
   * @cost_cents: cost so far, in cents
   *
   * The runner reported the child's running totals (see
   * subagent_run_context_report_usage()). Emitted in the thread that
   * reported, which may be any thread: handlers must be thread-safe.
   *
   * Since: 0.2
   */
  usage_signal = g_signal_new ("usage", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                               G_TYPE_NONE, 3, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_DOUBLE);
}

static void
subagent_run_context_init (SubagentRunContext *self)
{
  self->batch_index = SUBAGENT_NO_BATCH_INDEX;
}

/**
 * subagent_run_context_report_usage:
 * @self: a #SubagentRunContext
 * @iterations: the child's iterations so far
 * @tool_calls: the child's tool calls so far
 * @cost_cents: what the child cost so far, in cents
 *
 * For runners: reports the child's running totals while it runs, so that
 * a host can show them (the supervisor turns them into `usage` events).
 * The totals are cumulative; the final ones still go into the run's
 * outcome. May be called from any thread; emits #SubagentRunContext::usage
 * there.
 *
 * Since: 0.2
 */
void
subagent_run_context_report_usage (SubagentRunContext *self,
                                   guint               iterations,
                                   guint               tool_calls,
                                   double              cost_cents)
{
  g_return_if_fail (SUBAGENT_IS_RUN_CONTEXT (self));

  g_signal_emit (self, usage_signal, 0, iterations, tool_calls, cost_cents);
}
