/* subagent-manager-approvals.c: the approval route of a manager's children.
 *
 * One queue per parent run (the manager's run id), made the first time a
 * child that could ask starts: from the host's sink, or from the one
 * config.yaml names (`approvals.sink`: `file` → the approval-file plugin,
 * `memory` → the built-in sink, `none` → no queue, children unattended).
 * Making it loads a plugin and reads the store, so it runs in a worker
 * thread and only when needed: a host whose children never ask maps no
 * approval plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-manager-private.h"

#define DEFAULT_SINK "file"

/* Whether a child could ever be asked to wait for a verdict: its mode must
 * put some call up for approval, and its runner must be able to carry a
 * verdict back (a command child in eof mode has no open stdin for it). */
static gboolean
child_may_ask (SubagentPermissionMode  mode,
               const char             *isolation,
               SubagentRunner         *runner)
{
  SubagentPermissionMode effective =
    subagent_approval_policy_effective_mode (mode, SUBAGENT_PERMISSION_MODE_INHERIT, isolation);

  /* Outside the workspace is where every mode is at its strictest. */
  if (subagent_approval_policy_evaluate (effective, TRUE, FALSE) != SUBAGENT_APPROVAL_REQUIREMENT_NEEDS_APPROVAL)
    return FALSE;
  if (SUBAGENT_IS_COMMAND_RUNNER (runner) &&
      !subagent_command_runner_get_interactive_stdin (SUBAGENT_COMMAND_RUNNER (runner)))
    return FALSE;
  return TRUE;
}

static const char *
configured_backend (SubagentManager *self)
{
  const char *backend = subagent_config_get_approval_sink (self->config);

  return (backend == NULL || *backend == '\0') ? DEFAULT_SINK : backend;
}

SubagentApprovalQueue *
_subagent_manager_peek_approval_queue (SubagentManager        *self,
                                       SubagentPermissionMode  mode,
                                       const char             *isolation,
                                       SubagentRunner         *runner,
                                       gboolean               *must_make)
{
  SubagentApprovalQueue *queue = NULL;

  *must_make = FALSE;
  g_mutex_lock (&self->approval_lock);
  if (self->approvals_unattended)
    ;
  else if (self->approval_queue != NULL)
    queue = g_object_ref (self->approval_queue);
  else if (self->approval_error == NULL && child_may_ask (mode, isolation, runner))
    *must_make = self->approval_sink != NULL || !g_str_equal (configured_backend (self), "none");
  g_mutex_unlock (&self->approval_lock);
  return queue;
}

/* The sink config.yaml names, set up for this workspace; NULL without an
 * error for `none`. */
static SubagentApprovalSink *
configured_sink (SubagentManager  *self,
                 GError          **error)
{
  const char *backend = configured_backend (self);

  if (g_str_equal (backend, "none"))
    return NULL;
  if (g_str_equal (backend, "memory"))
    return subagent_memory_approval_sink_new ();

  /* The same call as for isolation providers: the workspace root and the
   * plugin's own config.yaml section (subagent_plugin_configure()). */
  return SUBAGENT_APPROVAL_SINK (subagent_plugin_registry_create_configured (self->plugins, self->config,
                                                                             SUBAGENT_TYPE_APPROVAL_SINK,
                                                                             backend, self->root, error));
}

SubagentApprovalQueue *
_subagent_manager_make_approval_queue (SubagentManager  *self,
                                       GError          **error)
{
  g_autoptr(SubagentApprovalSink) sink = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(GError) local_error = NULL;
  gboolean owned = FALSE;

  /* Held throughout: two runs starting together make one queue. */
  g_mutex_lock (&self->approval_lock);
  if (self->approvals_unattended)
    goto out;
  if (self->approval_queue != NULL)
    {
      queue = g_object_ref (self->approval_queue);
      goto out;
    }
  if (self->approval_error != NULL)
    {
      local_error = g_error_copy (self->approval_error);
      goto out;
    }

  sink = self->approval_sink ? g_object_ref (self->approval_sink) : configured_sink (self, &local_error);
  if (sink == NULL)
    goto remember;
  /* Someone in this process (a host, subagentctl) may have made it already. */
  queue = subagent_approval_queue_try_get (self->run_id);
  if (queue == NULL)
    {
      queue = subagent_approval_queue_get (self->run_id, sink, &local_error);
      owned = queue != NULL;
      if (queue != NULL)
        subagent_approval_queue_set_default_timeout (queue, subagent_config_get_approval_timeout (self->config));
    }

remember:
  if (local_error != NULL)
    {
      g_prefix_error (&local_error, "Cannot set up the approval queue of run %s (approvals.sink: %s in %s): ",
                      self->run_id, self->approval_sink ? "the host's" : configured_backend (self),
                      subagent_config_get_source (self->config) ? subagent_config_get_source (self->config)
                                                                  : "the default configuration");
      self->approval_error = g_error_copy (local_error);
    }
  else if (queue != NULL)
    {
      self->approval_queue = g_object_ref (queue);
      self->approval_queue_owned = owned;
    }

out:
  g_mutex_unlock (&self->approval_lock);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  return g_steal_pointer (&queue);
}

static void
make_queue_thread (GTask        *task,
                   gpointer      source_object,
                   gpointer      task_data,
                   GCancellable *cancellable)
{
  GError *error = NULL;
  SubagentApprovalQueue *queue = _subagent_manager_make_approval_queue (source_object, &error);

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, queue, g_object_unref);
}

void
_subagent_manager_make_approval_queue_async (SubagentManager     *self,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, NULL, callback, user_data);

  g_task_set_source_tag (task, _subagent_manager_make_approval_queue_async);
  g_task_run_in_thread (task, make_queue_thread);
}

SubagentApprovalQueue *
_subagent_manager_make_approval_queue_finish (SubagentManager  *self,
                                              GAsyncResult     *result,
                                              GError          **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

void
_subagent_manager_drop_approval_queue (SubagentManager *self)
{
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(SubagentApprovalQueue) registered = NULL;
  gboolean owned;

  g_mutex_lock (&self->approval_lock);
  queue = g_steal_pointer (&self->approval_queue);
  owned = self->approval_queue_owned;
  self->approval_queue_owned = FALSE;
  g_clear_error (&self->approval_error);
  g_mutex_unlock (&self->approval_lock);

  if (queue == NULL || !owned)
    return;
  /* Only the registry entry this manager made. */
  registered = subagent_approval_queue_try_get (subagent_approval_queue_get_parent_run_id (queue));
  if (registered == queue)
    subagent_approval_queue_release (subagent_approval_queue_get_parent_run_id (queue));
}
