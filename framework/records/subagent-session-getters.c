/* subagent-session-getters.c: what a session record holds (the class:
 * subagent-session.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-session-private.h"

/**
 * subagent_session_get_session_id:
 * @self: a #SubagentSession
 *
 * Gets the session's id.
 *
 * Returns: (transfer none): the session's id
 *
 * Since: 0.2
 */
const char *
subagent_session_get_session_id (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->session_id;
}

/**
 * subagent_session_get_def_name:
 * @self: a #SubagentSession
 *
 * Gets the definition's name.
 *
 * Returns: (transfer none): the definition's name
 *
 * Since: 0.2
 */
const char *
subagent_session_get_def_name (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->def_name;
}

/**
 * subagent_session_get_parent_run_id:
 * @self: a #SubagentSession
 *
 * Gets the parent's run id.
 *
 * Returns: (transfer none): the parent's run id
 *
 * Since: 0.2
 */
const char *
subagent_session_get_parent_run_id (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->parent_run_id;
}

/**
 * subagent_session_get_status:
 * @self: a #SubagentSession
 *
 * Gets the run's status.
 *
 * Returns: the run's status
 *
 * Since: 0.2
 */
SubagentRunStatus
subagent_session_get_status (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), SUBAGENT_RUN_STATUS_FAILED);
  return self->status;
}

/**
 * subagent_session_get_started_at:
 * @self: a #SubagentSession
 *
 * Gets when the child started.
 *
 * Returns: (transfer none): when the child started
 *
 * Since: 0.2
 */
GDateTime *
subagent_session_get_started_at (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->started_at;
}

/**
 * subagent_session_get_depth:
 * @self: a #SubagentSession
 *
 * Gets the child's depth.
 *
 * Returns: the child's depth
 *
 * Since: 0.2
 */
guint
subagent_session_get_depth (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), 0);
  return self->depth;
}

/**
 * subagent_session_get_batch_index:
 * @self: a #SubagentSession
 *
 * Gets the position in a batch, or %SUBAGENT_NO_BATCH_INDEX.
 *
 * Returns: the position in a batch, or %SUBAGENT_NO_BATCH_INDEX
 *
 * Since: 0.2
 */
gint
subagent_session_get_batch_index (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), SUBAGENT_NO_BATCH_INDEX);
  return self->batch_index;
}

/**
 * subagent_session_get_isolation:
 * @self: a #SubagentSession
 *
 * Gets the isolation mode.
 *
 * Returns: (transfer none): the isolation mode
 *
 * Since: 0.2
 */
const char *
subagent_session_get_isolation (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->isolation;
}

/**
 * subagent_session_get_worktree_path:
 * @self: a #SubagentSession
 *
 * Gets the worktree path.
 *
 * Returns: (transfer none) (nullable): the worktree path
 *
 * Since: 0.2
 */
const char *
subagent_session_get_worktree_path (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->worktree_path;
}

/**
 * subagent_session_get_container_path:
 * @self: a #SubagentSession
 *
 * Gets the directory-snapshot path.
 *
 * Returns: (transfer none) (nullable): the directory-snapshot path
 *
 * Since: 0.2
 */
const char *
subagent_session_get_container_path (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->container_path;
}

/**
 * subagent_session_get_completed_at:
 * @self: a #SubagentSession
 *
 * Gets when the child ended.
 *
 * Returns: (transfer none) (nullable): when the child ended
 *
 * Since: 0.2
 */
GDateTime *
subagent_session_get_completed_at (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->completed_at;
}

/**
 * subagent_session_get_iterations:
 * @self: a #SubagentSession
 *
 * Gets the iterations used.
 *
 * Returns: the iterations used
 *
 * Since: 0.2
 */
guint
subagent_session_get_iterations (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), 0);
  return self->iterations;
}

/**
 * subagent_session_get_tool_calls:
 * @self: a #SubagentSession
 *
 * Gets the tool calls made.
 *
 * Returns: the tool calls made
 *
 * Since: 0.2
 */
guint
subagent_session_get_tool_calls (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), 0);
  return self->tool_calls;
}

/**
 * subagent_session_get_cost_cents:
 * @self: a #SubagentSession
 *
 * Gets the cost in cents.
 *
 * Returns: the cost in cents
 *
 * Since: 0.2
 */
double
subagent_session_get_cost_cents (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), 0);
  return self->cost_cents;
}

/**
 * subagent_session_get_final_answer:
 * @self: a #SubagentSession
 *
 * Gets the answer.
 *
 * Returns: (transfer none): the answer
 *
 * Since: 0.2
 */
const char *
subagent_session_get_final_answer (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->final_answer;
}

/**
 * subagent_session_get_review:
 * @self: a #SubagentSession
 *
 * Gets the review artifact (sealed).
 *
 * Returns: (transfer none) (nullable): the review artifact (sealed)
 *
 * Since: 0.2
 */
JsonObject *
subagent_session_get_review (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->review;
}

/**
 * subagent_session_get_transcript:
 * @self: a #SubagentSession
 *
 * The conversation of a model-backed child, which a follow-up continues.
 *
 * Returns: (transfer none) (nullable): the model-backed child's
 *   conversation (sealed), or %NULL
 *
 * Since: 0.2
 */
JsonArray *
subagent_session_get_transcript (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->transcript;
}

/**
 * subagent_session_get_task:
 * @self: a #SubagentSession
 *
 * Gets the task.
 *
 * Returns: (transfer none): the task
 *
 * Since: 0.2
 */
const char *
subagent_session_get_task (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->task;
}

/**
 * subagent_session_get_follow_ups:
 * @self: a #SubagentSession
 *
 * Gets the number of follow-ups run.
 *
 * Returns: the number of follow-ups run
 *
 * Since: 0.2
 */
guint
subagent_session_get_follow_ups (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), 0);
  return self->follow_ups;
}

/**
 * subagent_session_get_workspace_kept:
 * @self: a #SubagentSession
 *
 * Gets whether the workspace was kept.
 *
 * Returns: whether the workspace was kept
 *
 * Since: 0.2
 */
gboolean
subagent_session_get_workspace_kept (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), FALSE);
  return self->workspace_kept;
}

/**
 * subagent_session_get_child_root:
 * @self: a #SubagentSession
 *
 * Gets the kept workspace's directory.
 *
 * Returns: (transfer none) (nullable): the kept workspace's directory
 *
 * Since: 0.2
 */
const char *
subagent_session_get_child_root (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->child_root;
}

/**
 * subagent_session_get_lineage:
 * @self: a #SubagentSession
 *
 * Gets the lineage made of the session's fields.
 *
 * Returns: (transfer none): the lineage made of the session's fields
 *
 * Since: 0.2
 */
SubagentLineage *
subagent_session_get_lineage (SubagentSession *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);
  return self->lineage;
}
