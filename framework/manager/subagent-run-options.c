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
  char *isolation;
  guint max_iterations;
  guint max_tool_calls;
  gint batch_index;
  double cpu_quota;
  char *memory_limit;
  guint timeout_seconds;
  GStrv command;
  JsonObject *isolation_options;
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
 * Returns: (transfer full): options that defer everything to the definition and configuration
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
 * Returns: (transfer none) (nullable): the definition to run; %NULL runs the default definition
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
 * Returns: (transfer none) (nullable): the parent's run id; %NULL takes the manager's
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
 * Returns: the parent's depth: the child runs at @depth + 1
 */
guint
subagent_run_options_get_depth (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), 0);
  return self->depth;
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
 * Returns: (transfer none) (nullable): the isolation mode; %NULL takes the definition's, then the configuration's
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
 * Returns: the child's iteration limit; 0 takes the definition's
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
 * Returns: the child's tool-call limit; 0 takes the definition's
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
 * Returns: the child's index in a batch, or %SUBAGENT_NO_BATCH_INDEX
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
 * Returns: CPUs the child may use (0: no limit; docker isolation)
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
 * Returns: (transfer none) (nullable): the child's memory limit such as `64m` (docker isolation)
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
 * Returns: the child's wall-clock limit; 0 takes the definition's
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
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the command override
 */
const char * const *
subagent_run_options_get_command (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), NULL);
  return (const char * const *) self->command;
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
 * Returns: (transfer none): the per-run backend options
 */
JsonObject *
subagent_run_options_get_isolation_options (SubagentRunOptions *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_OPTIONS (self), NULL);
  return self->isolation_options;
}
