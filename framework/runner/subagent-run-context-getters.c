/* subagent-run-context-getters.c: the fields of a run context, read one
 * by one.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-run-context-struct-private.h"

/**
 * subagent_run_context_get_task:
 * @self: a #SubagentRunContext
 *
 * Gets the task.
 *
 * Returns: (transfer none): the task
 *
 * Since: 0.2
 */
const char *
subagent_run_context_get_task (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);
  return self->task;
}

/**
 * subagent_run_context_get_definition:
 * @self: a #SubagentRunContext
 *
 * Gets the definition.
 *
 * Returns: (transfer none): the definition
 *
 * Since: 0.2
 */
SubagentDef *
subagent_run_context_get_definition (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);
  return self->definition;
}

/**
 * subagent_run_context_get_depth:
 * @self: a #SubagentRunContext
 *
 * Gets the child's depth.
 *
 * Returns: the child's depth
 *
 * Since: 0.2
 */
guint
subagent_run_context_get_depth (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), 0);
  return self->depth;
}

/**
 * subagent_run_context_get_run_id:
 * @self: a #SubagentRunContext
 *
 * Gets the child run's id.
 *
 * Returns: (transfer none): the child run's id
 *
 * Since: 0.2
 */
const char *
subagent_run_context_get_run_id (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);
  return self->run_id;
}

/**
 * subagent_run_context_get_parent_run_id:
 * @self: a #SubagentRunContext
 *
 * Gets the parent's run id.
 *
 * Returns: (transfer none): the parent's run id
 *
 * Since: 0.2
 */
const char *
subagent_run_context_get_parent_run_id (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);
  return self->parent_run_id;
}

/**
 * subagent_run_context_get_lineage:
 * @self: a #SubagentRunContext
 *
 * Gets the child's lineage.
 *
 * Returns: (transfer none): the child's lineage
 *
 * Since: 0.2
 */
SubagentLineage *
subagent_run_context_get_lineage (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);
  return self->lineage;
}

/**
 * subagent_run_context_get_tools:
 * @self: a #SubagentRunContext
 *
 * Gets the child's tool registry.
 *
 * Returns: (transfer none) (nullable): the child's tool registry
 *
 * Since: 0.2
 */
SubagentToolRegistry *
subagent_run_context_get_tools (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);
  return self->tools;
}

/**
 * subagent_run_context_get_permission_mode:
 * @self: a #SubagentRunContext
 *
 * Gets the child's permission mode.
 *
 * Returns: the child's permission mode
 *
 * Since: 0.2
 */
SubagentPermissionMode
subagent_run_context_get_permission_mode (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), SUBAGENT_PERMISSION_MODE_READ_ONLY);
  return self->permission_mode;
}

/**
 * subagent_run_context_get_isolation:
 * @self: a #SubagentRunContext
 *
 * Gets the prepared workspace.
 *
 * Returns: (transfer none) (nullable): the prepared workspace
 *
 * Since: 0.2
 */
SubagentIsolationContext *
subagent_run_context_get_isolation (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);
  return self->isolation;
}

/**
 * subagent_run_context_get_max_iterations:
 * @self: a #SubagentRunContext
 *
 * Gets the effective iteration limit (0: none).
 *
 * Returns: the effective iteration limit (0: none)
 *
 * Since: 0.2
 */
guint
subagent_run_context_get_max_iterations (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), 0);
  return self->max_iterations;
}

/**
 * subagent_run_context_get_max_tool_calls:
 * @self: a #SubagentRunContext
 *
 * Gets the effective tool-call limit (0: none).
 *
 * Returns: the effective tool-call limit (0: none)
 *
 * Since: 0.2
 */
guint
subagent_run_context_get_max_tool_calls (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), 0);
  return self->max_tool_calls;
}

/**
 * subagent_run_context_get_timeout_seconds:
 * @self: a #SubagentRunContext
 *
 * Gets the effective wall-clock limit in seconds (0: none).
 *
 * Returns: the effective wall-clock limit in seconds (0: none)
 *
 * Since: 0.2
 */
guint
subagent_run_context_get_timeout_seconds (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), 0);
  return self->timeout_seconds;
}

/**
 * subagent_run_context_get_max_cost_cents:
 * @self: a #SubagentRunContext
 *
 * Gets the effective cost budget in cents (0: none).
 *
 * Returns: the effective cost budget in cents (0: none)
 *
 * Since: 0.2
 */
double
subagent_run_context_get_max_cost_cents (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), 0);
  return self->max_cost_cents;
}

/**
 * subagent_run_context_get_batch_index:
 * @self: a #SubagentRunContext
 *
 * Gets the position in a batch, or %SUBAGENT_NO_BATCH_INDEX.
 *
 * Returns: the position in a batch, or %SUBAGENT_NO_BATCH_INDEX
 *
 * Since: 0.2
 */
gint
subagent_run_context_get_batch_index (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), SUBAGENT_NO_BATCH_INDEX);
  return self->batch_index;
}

/**
 * subagent_run_context_get_approval_handler:
 * @self: a #SubagentRunContext
 *
 * Gets the approval route of the child.
 *
 * Returns: (transfer none) (nullable): the approval route of the child
 *
 * Since: 0.2
 */
GObject *
subagent_run_context_get_approval_handler (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);
  return self->approval_handler;
}

/**
 * subagent_run_context_get_model:
 * @self: a #SubagentRunContext
 *
 * The settings of the model the child runs on.
 *
 * Returns: (transfer none) (nullable): the settings of the child's model
 *   (see subagent_config_get_model()), or %NULL
 *
 * Since: 0.2
 */
JsonObject *
subagent_run_context_get_model (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);
  return self->model;
}

/**
 * subagent_run_context_get_transcript:
 * @self: a #SubagentRunContext
 *
 * The conversation a model-backed follow-up continues.
 *
 * Returns: (transfer none) (nullable): the conversation a follow-up
 *   continues, or %NULL for a first run
 *
 * Since: 0.2
 */
JsonArray *
subagent_run_context_get_transcript (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);
  return self->transcript;
}

/**
 * subagent_run_context_get_confinement:
 * @self: a #SubagentRunContext
 *
 * Gets the confinement the host's configuration asks for.
 *
 * Returns: the confinement the host's configuration asks for
 *
 * Since: 0.2
 */
SubagentConfinement
subagent_run_context_get_confinement (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), SUBAGENT_CONFINEMENT_DEFAULT);
  return self->confinement;
}

/**
 * subagent_run_context_get_hidden_paths:
 * @self: a #SubagentRunContext
 *
 * Gets files a confined child may not read.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): files a
 *   confined child may not read
 *
 * Since: 0.2
 */
const char * const *
subagent_run_context_get_hidden_paths (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);
  return (const char * const *) self->hidden_paths;
}

/**
 * subagent_run_context_get_skill:
 * @self: a #SubagentRunContext
 *
 * Gets the skill the child runs.
 *
 * Returns: (transfer none) (nullable): the skill the child runs
 *
 * Since: 0.2
 */
SubagentSkill *
subagent_run_context_get_skill (SubagentRunContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_RUN_CONTEXT (self), NULL);
  return self->skill;
}
