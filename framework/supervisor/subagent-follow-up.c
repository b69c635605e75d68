/* subagent-follow-up.c: resuming a finished child's session with a new task.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-supervisor-private.h"

/**
 * subagent_supervisor_find_session:
 * @self: a #SubagentSupervisor
 * @session_id: a child's session id (its run id)
 * @error: return location for a #GError
 *
 * Finds a session record: one this process kept, else the latest record
 * of it in `<root>/.subagent/sessions/` (see #SubagentSessionLog).
 *
 * Returns: (transfer full) (nullable): the session, or %NULL with @error
 *   set (%SUBAGENT_ERROR_INVALID_ARGUMENT for an id outside
 *   `[A-Za-z0-9_-]`, %SUBAGENT_ERROR_NOT_FOUND, or why the file is unusable)
 */
SubagentSession *
subagent_supervisor_find_session (SubagentSupervisor  *self,
                                  const char          *session_id,
                                  GError             **error)
{
  SubagentSession *session;
  g_autofree char *dir = NULL;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);

  if (!subagent_session_id_is_valid (session_id))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "“%s” is not a session id: use the run id of a child (1–128 characters of [A-Za-z0-9_-])",
                   session_id ? session_id : "(null)");
      return NULL;
    }
  if ((session = subagent_manager_get_session (self->manager, session_id)) != NULL)
    return session;

  dir = g_build_filename (subagent_manager_get_root (self->manager), ".subagent", "sessions", NULL);
  return subagent_session_log_lookup (dir, session_id, error);
}

/* Everything a follow-up needs, or why it is refused. */
static SubagentSession *
check_follow_up (SubagentSupervisor  *self,
                 const char          *session_id,
                 GError             **error)
{
  g_autoptr(SubagentSession) session = NULL;
  SubagentDef *def;
  const char *isolation;
  const char *child_root;
  g_autofree char *kept_root = NULL;
  guint max;

  if (session_id != NULL && subagent_supervisor_is_active (self, session_id))
    {
      g_set_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_STILL_RUNNING,
                   "Subagent %s is still running; send the follow-up once it has ended", session_id);
      return NULL;
    }
  if ((session = subagent_supervisor_find_session (self, session_id, error)) == NULL)
    return NULL;

  def = subagent_manager_get_def (self->manager, subagent_session_get_def_name (session));
  if (def == NULL && g_str_equal (subagent_session_get_def_name (session), "default"))
    max = SUBAGENT_DEF_DEFAULT_MAX_FOLLOW_UPS;
  else if (def == NULL)
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_NOT_FOUND,
                   "Session %s ran the definition “%s”, which no longer exists; it cannot be resumed",
                   session_id, subagent_session_get_def_name (session));
      return NULL;
    }
  else
    max = subagent_def_get_max_follow_ups (def);
  if (subagent_session_get_follow_ups (session) >= max)
    {
      g_set_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_FOLLOW_UP_LIMIT,
                   "Session %s already had %u follow-ups, the most “%s” allows (max_follow_ups); "
                   "delegate to a fresh subagent instead", session_id, subagent_session_get_follow_ups (session),
                   subagent_session_get_def_name (session));
      return NULL;
    }

  isolation = subagent_session_get_isolation (session);
  if (isolation == NULL || g_str_equal (isolation, SUBAGENT_ISOLATION_SHARED))
    return g_steal_pointer (&session);
  if ((kept_root = _subagent_supervisor_dup_kept_root (self, session_id)) != NULL)
    {
      if (g_file_test (kept_root, G_FILE_TEST_IS_DIR))
        return g_steal_pointer (&session);
      g_set_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_WORKSPACE_GONE,
                   "The kept workspace of session %s (%s) no longer exists", session_id, kept_root);
      return NULL;
    }

  child_root = subagent_session_get_child_root (session);
  if (!subagent_session_get_workspace_kept (session))
    g_set_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_WORKSPACE_GONE,
                 "The %s workspace of session %s was cleaned up when the child ended; "
                 "keep workspaces (keep-workspaces) to send follow-ups", isolation, session_id);
  else if (child_root == NULL || !g_file_test (child_root, G_FILE_TEST_IS_DIR))
    g_set_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_WORKSPACE_GONE,
                 "The kept workspace of session %s (%s) no longer exists", session_id,
                 child_root ? child_root : "unknown");
  else
    g_set_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_WORKSPACE_GONE,
                 "The workspace of session %s (%s) is kept by another supervisor; resume it there",
                 session_id, child_root);
  return NULL;
}

/**
 * subagent_supervisor_can_follow_up:
 * @self: a #SubagentSupervisor
 * @session_id: a child's session id
 * @error: return location for a #GError
 *
 * Checks that subagent_supervisor_follow_up() would accept @session_id
 * (leaving the supervisor's own caps aside).
 *
 * Returns: %TRUE if it would, else %FALSE with @error set as
 *   subagent_supervisor_follow_up() would set it
 */
gboolean
subagent_supervisor_can_follow_up (SubagentSupervisor  *self,
                                   const char          *session_id,
                                   GError             **error)
{
  g_autoptr(SubagentSession) session = NULL;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), FALSE);

  session = check_follow_up (self, session_id, error);
  return session != NULL;
}

/**
 * subagent_supervisor_follow_up:
 * @self: a #SubagentSupervisor
 * @session_id: the session of a child that ended
 * @task: what the child should do next
 * @error: return location for a #GError
 *
 * Resumes a finished child's session with a new task (reference 003's
 * `follow_up`): the child runs again under the same run id, with its
 * definition, depth and isolation — in its kept workspace, or in the
 * parent's root for `shared` — and the session record then counts one
 * more follow-up and adds the new usage to the old.
 *
 * Refused, with nothing started, while the child is still queued or
 * running (%SUBAGENT_SUPERVISOR_ERROR_STILL_RUNNING), when the session had
 * its definition's `max_follow_ups` (default 3;
 * %SUBAGENT_SUPERVISOR_ERROR_FOLLOW_UP_LIMIT), when its isolated workspace
 * was not kept or is gone (%SUBAGENT_SUPERVISOR_ERROR_WORKSPACE_GONE), for
 * an unknown session (%SUBAGENT_ERROR_NOT_FOUND), and for the refusals of
 * subagent_supervisor_spawn(). Follow-ups do not count against the agent
 * cap; they do use a running slot and the parent's budget.
 *
 * Returns: (transfer full) (nullable): the run id (the session id), to wait
 *   for with subagent_supervisor_wait_async(); %NULL with @error set
 */
char *
subagent_supervisor_follow_up (SubagentSupervisor  *self,
                               const char          *session_id,
                               const char          *task,
                               GError             **error)
{
  g_autoptr(SubagentSession) session = NULL;
  g_autoptr(SubagentIsolationContext) reuse = NULL;
  g_autoptr(SubagentRunOptions) options = NULL;
  SubagentSpawnExtras extras = { 0, };
  char *run_id;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if ((session = check_follow_up (self, session_id, error)) == NULL)
    return NULL;

  reuse = _subagent_supervisor_take_kept (self, session_id);
  options = subagent_run_options_new ();
  subagent_run_options_set_def_name (options, subagent_session_get_def_name (session));
  subagent_run_options_set_parent_run_id (options, subagent_session_get_parent_run_id (session));
  subagent_run_options_set_depth (options, subagent_session_get_depth (session) > 0
                                           ? subagent_session_get_depth (session) - 1 : 0);
  subagent_run_options_set_isolation (options, subagent_session_get_isolation (session));
  subagent_run_options_set_batch_index (options, subagent_session_get_batch_index (session));

  extras.resume = session;
  extras.reuse = reuse;
  extras.centralized_approval = subagent_session_get_batch_index (session) >= 0;
  extras.count_as_agent = FALSE;
  run_id = _subagent_supervisor_spawn_full (self, task, options, &extras, error);
  if (run_id == NULL && reuse != NULL)
    {
      /* Refused: the workspace stays kept. */
      g_mutex_lock (&self->lock);
      g_hash_table_replace (self->kept, g_strdup (session_id), g_steal_pointer (&reuse));
      g_mutex_unlock (&self->lock);
    }
  return run_id;
}

/**
 * subagent_supervisor_project_result:
 * @self: a #SubagentSupervisor
 * @result: a child's result
 *
 * subagent_run_result_project() for the parent's model, with the
 * continuation set when subagent_supervisor_can_follow_up() says the
 * child's session can be resumed.
 *
 * Returns: (transfer full): a new JSON object
 */
JsonObject *
subagent_supervisor_project_result (SubagentSupervisor *self,
                                    SubagentRunResult  *result)
{
  const char *session_id;
  gboolean resumable;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);
  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (result), NULL);

  session_id = subagent_run_result_get_session_id (result);
  resumable = session_id != NULL && subagent_supervisor_can_follow_up (self, session_id, NULL);
  return subagent_run_result_project (result, subagent_manager_get_root (self->manager), resumable);
}
