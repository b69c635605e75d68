/* subagent-def-getters.c: the fields of a definition, read one by one.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-def-private.h"
#include "subagent-def-struct-private.h"

/**
 * subagent_def_get_name:
 * @self: a definition
 *
 * Gets the name.
 *
 * Returns: (transfer none): the name
 *
 * Since: 0.2
 */
const char *
subagent_def_get_name (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return self->name;
}

/**
 * subagent_def_get_description:
 * @self: a definition
 *
 * Gets the description; "" when unset.
 *
 * Returns: (transfer none): the description; "" when unset
 *
 * Since: 0.2
 */
const char *
subagent_def_get_description (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return self->description;
}

/**
 * subagent_def_get_system_prompt:
 * @self: a definition
 *
 * Gets the system prompt; "" when unset.
 *
 * Returns: (transfer none): the system prompt; "" when unset
 *
 * Since: 0.2
 */
const char *
subagent_def_get_system_prompt (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return self->system_prompt;
}

/**
 * subagent_def_get_model:
 * @self: a definition
 *
 * Gets the model, or %NULL for the parent's.
 *
 * Returns: (transfer none) (nullable): the model, or %NULL for the parent's
 *
 * Since: 0.2
 */
const char *
subagent_def_get_model (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return self->model;
}

/**
 * subagent_def_get_permission_mode:
 * @self: a definition
 *
 * Gets the requested mode; %SUBAGENT_PERMISSION_MODE_INHERIT by default.
 *
 * Returns: the requested mode; %SUBAGENT_PERMISSION_MODE_INHERIT by default
 *
 * Since: 0.2
 */
SubagentPermissionMode
subagent_def_get_permission_mode (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), SUBAGENT_PERMISSION_MODE_INHERIT);
  return self->permission_mode;
}

/**
 * subagent_def_get_max_iterations:
 * @self: a definition
 *
 * Gets the iteration limit of one run (default 5).
 *
 * Returns: the iteration limit of one run (default 5)
 *
 * Since: 0.2
 */
guint
subagent_def_get_max_iterations (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), 0);
  return self->max_iterations;
}

/**
 * subagent_def_get_max_tool_calls:
 * @self: a definition
 *
 * Gets the tool-call limit of one run (default 8).
 *
 * Returns: the tool-call limit of one run (default 8)
 *
 * Since: 0.2
 */
guint
subagent_def_get_max_tool_calls (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), 0);
  return self->max_tool_calls;
}

/**
 * subagent_def_get_tool_whitelist:
 * @self: a definition
 *
 * Gets the tools the child may use, or %NULL for all of the parent's.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the tools
 *   the child may use, or %NULL for all of the parent's
 *
 * Since: 0.2
 */
const char * const *
subagent_def_get_tool_whitelist (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return (const char * const *) self->tool_whitelist;
}

/**
 * subagent_def_get_disallowed_tools:
 * @self: a definition
 *
 * Gets the tools the child may never use, or %NULL.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the tools
 *   the child may never use, or %NULL
 *
 * Since: 0.2
 */
const char * const *
subagent_def_get_disallowed_tools (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return (const char * const *) self->disallowed_tools;
}

/**
 * subagent_def_get_max_depth:
 * @self: a definition
 *
 * Gets how many delegation levels deep it may start (default 1).
 *
 * Returns: how many delegation levels deep it may start (default 1)
 *
 * Since: 0.2
 */
guint
subagent_def_get_max_depth (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), 0);
  return self->max_depth;
}

/**
 * subagent_def_get_isolation:
 * @self: a definition
 *
 * Gets the isolation mode (default `shared`), as written; `container` is not
 * normalised here.
 *
 * Returns: (transfer none): the isolation mode (default `shared`), as
 *   written; `container` is not normalised here
 *
 * Since: 0.2
 */
const char *
subagent_def_get_isolation (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return self->isolation;
}

/**
 * subagent_def_get_background:
 * @self: a definition
 *
 * Gets whether the child runs in the background (default %FALSE).
 *
 * Returns: whether the child runs in the background (default %FALSE)
 *
 * Since: 0.2
 */
gboolean
subagent_def_get_background (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), FALSE);
  return self->background;
}

void
_subagent_def_set_limits_unset (SubagentDef *def,
                                gboolean     iterations,
                                gboolean     tool_calls)
{
  g_return_if_fail (SUBAGENT_IS_DEF (def));
  def->iterations_unset = iterations;
  def->tool_calls_unset = tool_calls;
}

void
_subagent_def_get_limits_unset (SubagentDef *def,
                                gboolean    *iterations,
                                gboolean    *tool_calls)
{
  g_return_if_fail (SUBAGENT_IS_DEF (def));
  *iterations = def->iterations_unset;
  *tool_calls = def->tool_calls_unset;
}

/**
 * subagent_def_get_interactive:
 * @self: a definition
 *
 * Gets whether the child speaks the approval protocol and keeps its stdin
 * open for verdicts (default %FALSE).
 *
 * Returns: whether the child speaks the approval protocol and keeps its
 *   stdin open for verdicts (default %FALSE)
 *
 * Since: 0.2
 */
gboolean
subagent_def_get_interactive (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), FALSE);
  return self->interactive;
}

/**
 * subagent_def_get_effort:
 * @self: a definition
 *
 * Gets the effort hint, or %NULL.
 *
 * Returns: (transfer none) (nullable): the effort hint, or %NULL
 *
 * Since: 0.2
 */
const char *
subagent_def_get_effort (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return self->effort;
}

/**
 * subagent_def_get_command:
 * @self: a definition
 *
 * Gets the argv of the child program, or %NULL.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the argv
 *   of the child program, or %NULL
 *
 * Since: 0.2
 */
const char * const *
subagent_def_get_command (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return (const char * const *) self->command;
}

/**
 * subagent_def_get_write_scope:
 * @self: a definition
 *
 * Gets what the child may write, or %NULL for no restriction beyond the
 * isolation.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): what the
 *   child may write, or %NULL for no restriction beyond the isolation
 *
 * Since: 0.2
 */
const char * const *
subagent_def_get_write_scope (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return (const char * const *) self->write_scope;
}

/**
 * subagent_def_get_cpu_quota:
 * @self: a definition
 *
 * Gets the CPU quota; 0 means none.
 *
 * Returns: the CPU quota; 0 means none
 *
 * Since: 0.2
 */
double
subagent_def_get_cpu_quota (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), 0);
  return self->cpu_quota;
}

/**
 * subagent_def_get_memory_limit:
 * @self: a definition
 *
 * Gets the memory limit, or %NULL for none.
 *
 * Returns: (transfer none) (nullable): the memory limit, or %NULL for none
 *
 * Since: 0.2
 */
const char *
subagent_def_get_memory_limit (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return self->memory_limit;
}

/**
 * subagent_def_get_timeout_seconds:
 * @self: a definition
 *
 * Gets the wall-clock limit in seconds; 0 means none.
 *
 * Returns: the wall-clock limit in seconds; 0 means none
 *
 * Since: 0.2
 */
guint
subagent_def_get_timeout_seconds (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), 0);
  return self->timeout_seconds;
}

/**
 * subagent_def_get_max_cost_cents:
 * @self: a definition
 *
 * Gets the cost budget in cents; 0 means no budget.
 *
 * Returns: the cost budget in cents; 0 means no budget
 *
 * Since: 0.2
 */
double
subagent_def_get_max_cost_cents (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), 0);
  return self->max_cost_cents;
}

/**
 * subagent_def_get_max_follow_ups:
 * @self: a definition
 *
 * Gets how many follow-ups a finished child may receive (default 3).
 *
 * Returns: how many follow-ups a finished child may receive (default 3)
 *
 * Since: 0.2
 */
guint
subagent_def_get_max_follow_ups (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), 0);
  return self->max_follow_ups;
}

/**
 * subagent_def_get_network:
 * @self: a definition
 *
 * Gets the network, or %NULL, which means `none`.
 *
 * Returns: (transfer none) (nullable): the network, or %NULL, which means `none`
 *
 * Since: 0.2
 */
const char *
subagent_def_get_network (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return self->network;
}

/**
 * subagent_def_get_runner:
 * @self: a definition
 *
 * The runner the definition names (`runner:`).
 *
 * Returns: (transfer none) (nullable): the runner named by the definition
 *   (`runner:`), or %NULL to pick one from its `command` or `model`
 *
 * Since: 0.2
 */
const char *
subagent_def_get_runner (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return self->runner;
}

/**
 * subagent_def_get_source_path:
 * @self: a definition
 *
 * Gets the file it was read from, or %NULL.
 *
 * Returns: (transfer none) (nullable): the file it was read from, or %NULL
 *
 * Since: 0.2
 */
const char *
subagent_def_get_source_path (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);
  return self->source_path;
}

/**
 * subagent_def_get_confinement:
 * @self: a #SubagentDef
 *
 * Gets the confinement the definition asks for.
 *
 * Returns: the confinement the definition asks for;
 *   %SUBAGENT_CONFINEMENT_DEFAULT when it sets none
 *
 * Since: 0.2
 */
SubagentConfinement
subagent_def_get_confinement (SubagentDef *self)
{
  g_return_val_if_fail (SUBAGENT_IS_DEF (self), SUBAGENT_CONFINEMENT_DEFAULT);
  return self->confinement;
}
