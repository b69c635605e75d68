/* subagent-run-options.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"

/**
 * SubagentRunOptions:
 *
 * The inputs of one subagent_manager_run() beside its task: which definition,
 * at what depth, in which isolation, with which limits. Every value has a
 * default that defers to the definition or the configuration, so a fresh
 * object runs the default definition in the configured isolation.
 *
 * Unlike the run's results, options are a mutable builder: set them, then
 * pass them to the manager, which copies what it needs.
 */
struct _SubagentRunOptions
{
  GObject parent_instance;
  char *def_name;
  char *parent_run_id;
  guint depth;
  guint max_depth;
  char *isolation;
  guint max_iterations;
  guint max_tool_calls;
  gint batch_index;
  double cpu_quota;
  char *memory_limit;
  char *model;
  guint timeout_seconds;
  GStrv command;
  gboolean interactive;
  JsonObject *isolation_options;
  char *skill_path;
  SubagentRiskLevel risk_level;
};

G_DEFINE_FINAL_TYPE (SubagentRunOptions, subagent_run_options, G_TYPE_OBJECT)

static void
subagent_run_options_finalize (GObject *object)
{
  SubagentRunOptions *self = SUBAGENT_RUN_OPTIONS (object);

  g_free (self->def_name);
  g_free (self->parent_run_id);
  g_free (self->isolation);
  g_free (self->memory_limit);
  g_free (self->model);
  g_free (self->skill_path);
  g_strfreev (self->command);
  json_object_unref (self->isolation_options);
  G_OBJECT_CLASS (subagent_run_options_parent_class)->finalize (object);
}

static void
subagent_run_options_class_init (SubagentRunOptionsClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_run_options_finalize;
}

static void
subagent_run_options_init (SubagentRunOptions *self)
{
  self->batch_index = SUBAGENT_NO_BATCH_INDEX;
  self->isolation_options = json_object_new ();
}

/**
 * subagent_run_options_new:
 *
 * Creates a new #SubagentRunOptions.
 *
 * Returns: (transfer full): options that defer everything to the definition and configuration
 *
 * Since: 0.2
 */
SubagentRunOptions *
subagent_run_options_new (void)
{
  return g_object_new (SUBAGENT_TYPE_RUN_OPTIONS, NULL);
}

/**
 * subagent_run_options_set_def_name:
 * @self: a #SubagentRunOptions
 * @def_name: (nullable): the definition to run; %NULL runs the default definition
 *
 * Sets the definition to run.
 */
void
subagent_run_options_set_def_name (SubagentRunOptions *self,
                                   const char         *def_name)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  g_free (self->def_name);
  self->def_name = g_strdup (def_name);
}

/**
 * subagent_run_options_get_def_name:
 * @self: a #SubagentRunOptions
 *
 * Gets the definition to run; %NULL runs the default definition.
 *
 * Returns: (transfer none) (nullable): the definition to run; %NULL runs the default definition
 *
 * Since: 0.2
 */
const char *
subagent_run_options_get_def_name (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), NULL);
  return self->def_name;
}

/**
 * subagent_run_options_set_parent_run_id:
 * @self: a #SubagentRunOptions
 * @parent_run_id: (nullable): the parent's run id; %NULL takes the manager's
 *
 * Sets the parent's run id.
 */
void
subagent_run_options_set_parent_run_id (SubagentRunOptions *self,
                                        const char         *parent_run_id)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  g_free (self->parent_run_id);
  self->parent_run_id = g_strdup (parent_run_id);
}

/**
 * subagent_run_options_get_parent_run_id:
 * @self: a #SubagentRunOptions
 *
 * Gets the parent's run id; %NULL takes the manager's.
 *
 * Returns: (transfer none) (nullable): the parent's run id; %NULL takes the manager's
 *
 * Since: 0.2
 */
const char *
subagent_run_options_get_parent_run_id (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), NULL);
  return self->parent_run_id;
}

/**
 * subagent_run_options_set_depth:
 * @self: a #SubagentRunOptions
 * @depth: the parent's depth: the child runs at @depth + 1
 *
 * Sets the parent's depth: the child runs at @depth + 1.
 */
void
subagent_run_options_set_depth (SubagentRunOptions *self,
                                guint              depth)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  self->depth = depth;
}

/**
 * subagent_run_options_get_depth:
 * @self: a #SubagentRunOptions
 *
 * Gets the parent's depth: the child runs at @depth + 1.
 *
 * Returns: the parent's depth: the child runs at @depth + 1
 *
 * Since: 0.2
 */
guint
subagent_run_options_get_depth (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), 0);
  return self->depth;
}

/**
 * subagent_run_options_set_max_depth:
 * @self: a #SubagentRunOptions
 * @max_depth: a ceiling on the definition's `max_depth`; 0 for none
 *
 * Sets a depth limit the run inherits from further up: a child runs only
 * while the parent's depth is below both this and its definition's
 * `max_depth`. `subagentctl run` takes it from `SUBAGENT_MAX_DEPTH`, so a
 * child that runs `subagentctl` cannot nest past its own limit.
 *
 * Since: 0.2
 */
void
subagent_run_options_set_max_depth (SubagentRunOptions *self,
                                    guint               max_depth)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  self->max_depth = max_depth;
}

/**
 * subagent_run_options_get_max_depth:
 * @self: a #SubagentRunOptions
 *
 * Gets the inherited depth limit.
 *
 * Returns: the inherited depth limit; 0 for none
 *
 * Since: 0.2
 */
guint
subagent_run_options_get_max_depth (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), 0);
  return self->max_depth;
}

/**
 * subagent_run_options_set_isolation:
 * @self: a #SubagentRunOptions
 * @isolation: (nullable): the isolation mode; %NULL takes the definition's, then the configuration's
 *
 * Sets the isolation mode.
 */
void
subagent_run_options_set_isolation (SubagentRunOptions *self,
                                    const char         *isolation)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  g_free (self->isolation);
  self->isolation = g_strdup (isolation);
}

/**
 * subagent_run_options_get_isolation:
 * @self: a #SubagentRunOptions
 *
 * Gets the isolation mode; %NULL takes the definition's, then the
 * configuration's.
 *
 * Returns: (transfer none) (nullable): the isolation mode; %NULL takes the definition's, then the configuration's
 *
 * Since: 0.2
 */
const char *
subagent_run_options_get_isolation (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), NULL);
  return self->isolation;
}

/**
 * subagent_run_options_set_max_iterations:
 * @self: a #SubagentRunOptions
 * @max_iterations: the child's iteration limit; 0 takes the definition's
 *
 * Sets the child's iteration limit.
 */
void
subagent_run_options_set_max_iterations (SubagentRunOptions *self,
                                         guint              max_iterations)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  self->max_iterations = max_iterations;
}

/**
 * subagent_run_options_get_max_iterations:
 * @self: a #SubagentRunOptions
 *
 * Gets the child's iteration limit; 0 takes the definition's.
 *
 * Returns: the child's iteration limit; 0 takes the definition's
 *
 * Since: 0.2
 */
guint
subagent_run_options_get_max_iterations (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), 0);
  return self->max_iterations;
}

/**
 * subagent_run_options_set_max_tool_calls:
 * @self: a #SubagentRunOptions
 * @max_tool_calls: the child's tool-call limit; 0 takes the definition's
 *
 * Sets the child's tool-call limit.
 */
void
subagent_run_options_set_max_tool_calls (SubagentRunOptions *self,
                                         guint              max_tool_calls)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  self->max_tool_calls = max_tool_calls;
}

/**
 * subagent_run_options_get_max_tool_calls:
 * @self: a #SubagentRunOptions
 *
 * Gets the child's tool-call limit; 0 takes the definition's.
 *
 * Returns: the child's tool-call limit; 0 takes the definition's
 *
 * Since: 0.2
 */
guint
subagent_run_options_get_max_tool_calls (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), 0);
  return self->max_tool_calls;
}

/**
 * subagent_run_options_set_batch_index:
 * @self: a #SubagentRunOptions
 * @batch_index: the child's index in a batch, or %SUBAGENT_NO_BATCH_INDEX
 *
 * Sets the child's index in a batch, or %SUBAGENT_NO_BATCH_INDEX.
 */
void
subagent_run_options_set_batch_index (SubagentRunOptions *self,
                                      gint               batch_index)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  self->batch_index = batch_index;
}

/**
 * subagent_run_options_get_batch_index:
 * @self: a #SubagentRunOptions
 *
 * Gets the child's index in a batch, or %SUBAGENT_NO_BATCH_INDEX.
 *
 * Returns: the child's index in a batch, or %SUBAGENT_NO_BATCH_INDEX
 *
 * Since: 0.2
 */
gint
subagent_run_options_get_batch_index (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), 0);
  return self->batch_index;
}

/**
 * subagent_run_options_set_cpu_quota:
 * @self: a #SubagentRunOptions
 * @cpu_quota: CPUs the child may use (0: no limit; docker isolation)
 *
 * Sets CPUs the child may use (0: no limit.
 */
void
subagent_run_options_set_cpu_quota (SubagentRunOptions *self,
                                    double             cpu_quota)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  self->cpu_quota = cpu_quota;
}

/**
 * subagent_run_options_get_cpu_quota:
 * @self: a #SubagentRunOptions
 *
 * Gets CPUs the child may use (0: no limit; docker isolation).
 *
 * Returns: CPUs the child may use (0: no limit; docker isolation)
 *
 * Since: 0.2
 */
double
subagent_run_options_get_cpu_quota (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), 0);
  return self->cpu_quota;
}

/**
 * subagent_run_options_set_memory_limit:
 * @self: a #SubagentRunOptions
 * @memory_limit: (nullable): the child's memory limit such as `64m` (docker isolation)
 *
 * Sets the child's memory limit such as `64m` (docker isolation).
 */
void
subagent_run_options_set_memory_limit (SubagentRunOptions *self,
                                       const char         *memory_limit)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  g_free (self->memory_limit);
  self->memory_limit = g_strdup (memory_limit);
}

/**
 * subagent_run_options_get_memory_limit:
 * @self: a #SubagentRunOptions
 *
 * Gets the child's memory limit such as `64m` (docker isolation).
 *
 * Returns: (transfer none) (nullable): the child's memory limit such as `64m` (docker isolation)
 *
 * Since: 0.2
 */
const char *
subagent_run_options_get_memory_limit (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), NULL);
  return self->memory_limit;
}

/**
 * subagent_run_options_set_timeout_seconds:
 * @self: a #SubagentRunOptions
 * @timeout_seconds: the child's wall-clock limit; 0 takes the definition's
 *
 * Sets the child's wall-clock limit.
 */
void
subagent_run_options_set_timeout_seconds (SubagentRunOptions *self,
                                          guint              timeout_seconds)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  self->timeout_seconds = timeout_seconds;
}

/**
 * subagent_run_options_get_timeout_seconds:
 * @self: a #SubagentRunOptions
 *
 * Gets the child's wall-clock limit; 0 takes the definition's.
 *
 * Returns: the child's wall-clock limit; 0 takes the definition's
 *
 * Since: 0.2
 */
guint
subagent_run_options_get_timeout_seconds (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), 0);
  return self->timeout_seconds;
}

/**
 * subagent_run_options_set_command:
 * @self: a #SubagentRunOptions
 * @command: (nullable) (array zero-terminated=1): the child program and its arguments
 *
 * Runs @command instead of the definition's command (what `subagentctl run
 * --command` does).
 */
void
subagent_run_options_set_command (SubagentRunOptions *self,
                                  const char * const *command)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  g_strfreev (self->command);
  self->command = g_strdupv ((char **) command);
}

/**
 * subagent_run_options_get_command:
 * @self: a #SubagentRunOptions
 *
 * Gets the command override.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the command override
 *
 * Since: 0.2
 */
const char * const *
subagent_run_options_get_command (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), NULL);
  return (const char * const *) self->command;
}

/**
 * subagent_run_options_set_interactive:
 * @self: a #SubagentRunOptions
 * @interactive: whether the child speaks the approval protocol
 *
 * Runs the child as if its definition said `interactive: true`: its stdin
 * stays open after the task so that approval verdicts reach it. %FALSE
 * leaves the definition's setting.
 *
 * Since: 0.2
 */
void
subagent_run_options_set_interactive (SubagentRunOptions *self,
                                      gboolean            interactive)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  self->interactive = !!interactive;
}

/**
 * subagent_run_options_get_interactive:
 * @self: a #SubagentRunOptions
 *
 * Gets whether this run is made interactive over its definition.
 *
 * Returns: whether this run is made interactive over its definition
 *
 * Since: 0.2
 */
gboolean
subagent_run_options_get_interactive (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), FALSE);
  return self->interactive;
}

/**
 * subagent_run_options_set_isolation_option:
 * @self: a #SubagentRunOptions
 * @key: an option of the isolation backend, such as `keep_branch`
 * @value: (nullable): its value; %NULL removes it
 *
 * Sets a backend option for this run, over the configuration's.
 */
void
subagent_run_options_set_isolation_option (SubagentRunOptions *self,
                                           const char         *key,
                                           JsonNode           *value)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  g_return_if_fail (key != NULL);

  if (value == NULL)
    json_object_remove_member (self->isolation_options, key);
  else
    json_object_set_member (self->isolation_options, key, json_node_copy (value));
}

/**
 * subagent_run_options_get_isolation_options:
 * @self: a #SubagentRunOptions
 *
 * Gets the per-run backend options.
 *
 * Returns: (transfer none): the per-run backend options
 *
 * Since: 0.2
 */
JsonObject *
subagent_run_options_get_isolation_options (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), NULL);
  return self->isolation_options;
}

/**
 * subagent_run_options_set_skill_path:
 * @self: a #SubagentRunOptions
 * @skill_path: (nullable): the skill the child runs (reference 001's
 *   `skill_path`): a folder holding `SKILL.md`, or such a file, inside the
 *   workspace root (relative to it, or absolute)
 *
 * The child gets the skill's body after its definition's system prompt, the
 * skill's `allowed-tools` narrow its tools, and `isolation: auto` follows
 * the risk policy (see #SubagentRoutingPolicy). A skill outside the root
 * or unreadable makes the run's result an error.
 *
 * Since: 0.2
 */
void
subagent_run_options_set_skill_path (SubagentRunOptions *self,
                                     const char         *skill_path)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  g_free (self->skill_path);
  self->skill_path = g_strdup (skill_path);
}

/**
 * subagent_run_options_get_skill_path:
 * @self: a #SubagentRunOptions
 *
 * Gets the skill's path.
 *
 * Returns: (transfer none) (nullable): the skill's path
 *
 * Since: 0.2
 */
const char *
subagent_run_options_get_skill_path (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), NULL);
  return self->skill_path;
}

/**
 * subagent_run_options_set_risk_level:
 * @self: a #SubagentRunOptions
 * @level: the run's risk (reference 001's `skill_risk_level`);
 *   %SUBAGENT_RISK_LEVEL_NONE takes the skill's own
 *
 * The caller's level wins over the one the skill's front matter declares.
 *
 * Since: 0.2
 */
void
subagent_run_options_set_risk_level (SubagentRunOptions *self,
                                     SubagentRiskLevel   level)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  g_return_if_fail (level <= SUBAGENT_RISK_LEVEL_CRITICAL);
  self->risk_level = level;
}

/**
 * subagent_run_options_get_risk_level:
 * @self: a #SubagentRunOptions
 *
 * Gets the run's risk level.
 *
 * Returns: the run's risk level, or %SUBAGENT_RISK_LEVEL_NONE
 *
 * Since: 0.2
 */
SubagentRiskLevel
subagent_run_options_get_risk_level (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), SUBAGENT_RISK_LEVEL_NONE);
  return self->risk_level;
}

/**
 * subagent_run_options_set_model:
 * @self: a #SubagentRunOptions
 * @model: (nullable): a model of config.yaml's `models:` (or an alias)
 *
 * The parent's model for this run: what a definition without a model (or
 * with `model: inherit`) runs on, instead of `default_model:`. A definition
 * that names its own model keeps it.
 *
 * Since: 0.2
 */
void
subagent_run_options_set_model (SubagentRunOptions *self,
                                const char         *model)
{
  g_return_if_fail (SUBAGENT_IS_RUN_OPTIONS (self));
  g_free (self->model);
  self->model = (model != NULL && *model != '\0') ? g_strdup (model) : NULL;
}

/**
 * subagent_run_options_get_model:
 * @self: a #SubagentRunOptions
 *
 * The parent's model for this run (see subagent_run_options_set_model()).
 *
 * Returns: (transfer none) (nullable): the parent's model for this run
 *
 * Since: 0.2
 */
const char *
subagent_run_options_get_model (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), NULL);
  return self->model;
}
