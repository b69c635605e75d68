/* subagent-manager-run.c: one child run, the run contract of reference 000.
 *
 * Split from subagent-manager.c: the manager's object and accessors live
 * there, the run's state machine here. What a run resolves before it
 * starts is in subagent-manager-resolve.c, its review, records and
 * cleanup in subagent-manager-wrap-up.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-json-line-private.h"
#include "subagent-manager-private.h"
#include "subagent-manager-run-private.h"
#include "subagent-run-context-private.h"
#include "subagent-def-private.h"
#include "subagent-isolation-context-private.h"
#include "subagent-supervisor-private.h"

char *
_subagent_manager_new_run_id (void)
{
  return _subagent_uuid_string_random (FALSE);
}

static gboolean
is_blank (const char *text)
{
  for (; text != NULL && *text != '\0'; text++)
    if (!g_ascii_isspace (*text))
      return FALSE;
  return TRUE;
}

static void
run_state_free (RunState *state)
{
  g_clear_object (&state->manager);
  g_free (state->task);
  g_clear_object (&state->def);
  g_free (state->parent_run_id);
  g_free (state->run_id);
  g_free (state->session_key);
  g_free (state->isolation);
  g_free (state->memory_limit);
  g_clear_pointer (&state->isolation_options, json_object_unref);
  g_clear_pointer (&state->started_at, g_date_time_unref);
  g_clear_object (&state->context);
  g_clear_object (&state->lineage);
  g_clear_object (&state->outcome);
  g_clear_error (&state->runner_error);
  g_clear_object (&state->approval_queue);
  g_clear_object (&state->approval_handler);
  g_clear_object (&state->runner);
  g_clear_pointer (&state->model, json_object_unref);
  g_clear_object (&state->options);
  g_clear_object (&state->skill);
  g_free (state->routing);
  g_free (state);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (RunState, run_state_free)

static void
return_error_result (GTask      *task,
                     RunState   *state,
                     const char *message)
{
  g_task_return_pointer (task, subagent_run_result_new_error (message, state->lineage), g_object_unref);
}

static SubagentLineage *
lineage_for (RunState *state)
{
  const char *worktree = state->context ? subagent_isolation_context_get_worktree_path (state->context) : NULL;
  const char *container = state->context ? subagent_isolation_context_get_container_path (state->context) : NULL;

  return g_object_new (SUBAGENT_TYPE_LINEAGE,
                       "parent-run-id", state->parent_run_id,
                       "def-name", subagent_def_get_name (state->def),
                       "depth", state->depth + 1,
                       "isolation", state->isolation,
                       "batch-index", state->batch_index,
                       "worktree-path", worktree,
                       "container-path", container,
                       "routing", state->routing,
                       NULL);
}


static void run_prepared (GObject *source, GAsyncResult *result, gpointer user_data);
static void run_isolation_ready (GTask *task, GError *error);
static void run_with_isolation (GTask *task);
static void run_routed (GObject *source, GAsyncResult *result, gpointer user_data);
static void run_route_approvals (GTask *task);
static void run_start (GTask *task);
static void run_finished (GObject *source, GAsyncResult *result, gpointer user_data);

/**
 * subagent_manager_run_async:
 * @self: a #SubagentManager
 * @task: what the child should do
 * @options: (nullable): definition, depth, isolation and limits of the run
 * @cancellable: (nullable): cancels the child (it is killed, then cleaned up)
 * @callback: (scope async): called with the result
 * @user_data: (closure): data for @callback
 *
 * Runs one child agent following the run contract (see #SubagentManager).
 * The isolation is prepared and cleaned up off the caller's main context.
 */
void
subagent_manager_run_async (SubagentManager     *self,
                            const char          *task_text,
                            SubagentRunOptions  *options,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  _subagent_manager_run_hooked_async (self, task_text, options, NULL, cancellable, callback, user_data);
}

/* subagent_manager_run_async() with a supervisor's hooks (see
 * subagent-manager-private.h). */
void
_subagent_manager_run_hooked_async (SubagentManager     *self,
                                    const char          *task_text,
                                    SubagentRunOptions  *options,
                                    SubagentRunHooks    *hooks,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  RunState *state;
  const char *requested;
  gboolean deprecated = FALSE;

  g_return_if_fail (SUBAGENT_IS_MANAGER (self));
  g_return_if_fail (options == NULL || SUBAGENT_IS_RUN_OPTIONS (options));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, subagent_manager_run_async);
  /* A cancelled run still has a result (status cancelled) and a cleanup. */
  g_task_set_check_cancellable (task, FALSE);

  if (is_blank (task_text))
    {
      g_task_return_new_error (task, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                               "A subagent needs a non-empty task");
      return;
    }

  state = g_new0 (RunState, 1);
  g_task_set_task_data (task, state, (GDestroyNotify) run_state_free);
  state->manager = g_object_ref (self);
  state->task = g_strdup (task_text);
  state->started_at = g_date_time_new_now_utc ();
  state->hooks = hooks;
  state->run_id = (hooks && hooks->run_id) ? g_strdup (hooks->run_id) : _subagent_manager_new_run_id ();
  state->depth = options ? subagent_run_options_get_depth (options) : 0;
  state->max_depth_ceiling = options ? subagent_run_options_get_max_depth (options) : 0;
  state->batch_index = options ? subagent_run_options_get_batch_index (options) : SUBAGENT_NO_BATCH_INDEX;
  state->parent_run_id = g_strdup (options && subagent_run_options_get_parent_run_id (options)
                                   ? subagent_run_options_get_parent_run_id (options) : self->run_id);

  state->def = _subagent_manager_resolve_def (self, options, &error);
  if (state->def == NULL)
    {
      const char *name = options ? subagent_run_options_get_def_name (options) : NULL;
      const char *isolation = options ? subagent_run_options_get_isolation (options) : NULL;

      /* Every key of the error shape, the lineage included: what the
       * child would have been is known even when its definition is not. */
      state->isolation = g_strdup (isolation && *isolation ? isolation : SUBAGENT_ISOLATION_SHARED);
      state->lineage = subagent_lineage_new (state->parent_run_id, name && *name ? name : "default",
                                             state->depth + 1, state->isolation, state->batch_index, NULL, NULL);
      return_error_result (task, state, error->message);
      return;
    }
  /* Hooks come with the supervisor's own copy (see SubagentRunHooks);
   * anyone else's options may change once this returns. */
  state->options = options == NULL ? NULL : hooks != NULL ? g_object_ref (options) : _subagent_run_options_copy (options);

  if (!_subagent_manager_resolve_skill (self, options, &state->skill, &state->risk, &error))
    {
      state->isolation = g_strdup (SUBAGENT_ISOLATION_SHARED);
      state->lineage = lineage_for (state);
      return_error_result (task, state, error->message);
      return;
    }

  requested = options ? subagent_run_options_get_isolation (options) : NULL;
  if (requested == NULL || *requested == '\0')
    requested = subagent_def_get_isolation (state->def);
  if (requested == NULL || *requested == '\0' || g_str_equal (requested, SUBAGENT_DEF_DEFAULT_ISOLATION))
    requested = (options && subagent_run_options_get_isolation (options)) ? requested
                : subagent_config_get_default_isolation (self->config);
  /* Which modes exist is what the installed descriptors say. */
  state->isolation = g_strdup (subagent_plugin_registry_resolve_isolation (self->plugins, requested, &deprecated, &error));
  if (deprecated)
    subagent_isolation_warn_deprecated_alias (requested, state->isolation);
  if (state->isolation != NULL && g_str_equal (state->isolation, SUBAGENT_ISOLATION_AUTO) &&
      state->risk != SUBAGENT_RISK_LEVEL_NONE)
    {
      /* With a skill or a risk level, auto follows the risk policy, which
       * probes backends (an engine may be slow to answer): in a thread. */
      _subagent_manager_route_async (self, state->risk, cancellable, run_routed, g_steal_pointer (&task));
      return;
    }
  if (state->isolation != NULL && g_str_equal (state->isolation, SUBAGENT_ISOLATION_AUTO))
    {
      g_free (state->isolation);
      state->isolation = g_strdup (subagent_plugin_registry_resolve_auto (self->plugins, self->config,
                                                                          subagent_isolation_is_git_work_tree (self->root),
                                                                          &error));
    }
  if (state->isolation == NULL)
    {
      state->isolation = g_strdup (requested ? requested : SUBAGENT_ISOLATION_SHARED);
      state->lineage = lineage_for (state);
      return_error_result (task, state, error->message);
      return;
    }
  run_with_isolation (g_steal_pointer (&task));
}

/* The policy chose (or refused): apply its limits, then go on. */
static void
run_routed (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  RunState *state = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autofree char *note = NULL;
  g_autofree char *backend = _subagent_manager_route_finish (SUBAGENT_MANAGER (source), result, &note, &error);

  if (backend == NULL)
    {
      g_free (state->isolation);
      state->isolation = g_strdup (SUBAGENT_ISOLATION_AUTO);
      state->lineage = lineage_for (state);
      return_error_result (task, state, error->message);
      return;
    }
  g_free (state->isolation);
  state->isolation = g_steal_pointer (&backend);
  state->routing = g_steal_pointer (&note);
  run_with_isolation (g_steal_pointer (&task));
}

/* From the depth guard on, once the backend is known. */
static void
run_with_isolation (GTask *task_in)
{
  g_autoptr(GTask) task = task_in;
  RunState *state = g_task_get_task_data (task);
  SubagentManager *self = state->manager;
  SubagentRunOptions *options = state->options;
  SubagentRunHooks *hooks = state->hooks;
  GCancellable *cancellable = g_task_get_cancellable (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentIsolationProvider) provider = NULL;
  g_autoptr(SubagentIsolationRequest) request = NULL;
  gboolean iterations_unset, tool_calls_unset;

  state->lineage = lineage_for (state);

  /* Depth guard: the parent at depth D may start a child only while D < max_depth. */
  if (state->depth >= subagent_def_get_max_depth (state->def))
    {
      g_autofree char *message =
        g_strdup_printf ("Subagent “%s” cannot start at depth %u: its max_depth is %u",
                         subagent_def_get_name (state->def), state->depth + 1,
                         subagent_def_get_max_depth (state->def));
      return_error_result (task, state, message);
      return;
    }
  /* A limit from further up (a child's SUBAGENT_MAX_DEPTH) holds as well. */
  if (state->max_depth_ceiling > 0 && state->depth >= state->max_depth_ceiling)
    {
      g_autofree char *message =
        g_strdup_printf ("Subagent “%s” cannot start at depth %u: the run it nests in allows depth %u at most",
                         subagent_def_get_name (state->def), state->depth + 1, state->max_depth_ceiling);
      return_error_result (task, state, message);
      return;
    }

  /* The runner (and model) before any workspace exists: a model that is
   * not configured launches nothing. */
  {
    g_autofree char *message = NULL;

    if (!_subagent_manager_select_runner (state, options, &message))
      {
        return_error_result (task, state, message);
        return;
      }
  }

#define PICK(opt, def_value) ((opt) != 0 ? (opt) : (def_value))
  _subagent_def_get_limits_unset (state->def, &iterations_unset, &tool_calls_unset);
  state->max_iterations = PICK (options ? subagent_run_options_get_max_iterations (options) : 0,
                                iterations_unset ? subagent_config_get_default_max_iterations (self->config)
                                                 : subagent_def_get_max_iterations (state->def));
  state->max_tool_calls = PICK (options ? subagent_run_options_get_max_tool_calls (options) : 0,
                                tool_calls_unset ? subagent_config_get_default_max_tool_calls (self->config)
                                                 : subagent_def_get_max_tool_calls (state->def));
  state->timeout_seconds = PICK (options ? subagent_run_options_get_timeout_seconds (options) : 0,
                                 PICK (subagent_def_get_timeout_seconds (state->def),
                                       subagent_config_get_runner_timeout (self->config)));
  state->cpu_quota = PICK (options ? subagent_run_options_get_cpu_quota (options) : 0,
                           subagent_def_get_cpu_quota (state->def));
#undef PICK
  state->memory_limit = g_strdup (options && subagent_run_options_get_memory_limit (options)
                                  ? subagent_run_options_get_memory_limit (options)
                                  : subagent_def_get_memory_limit (state->def));
  state->session_key = subagent_isolation_new_session_key (state->parent_run_id,
                                                           subagent_def_get_name (state->def));
  state->isolation_options = _subagent_manager_merged_isolation_options (self, state->isolation, options);
  if (subagent_def_get_network (state->def) != NULL && !json_object_has_member (state->isolation_options, "network"))
    json_object_set_string_member (state->isolation_options, "network", subagent_def_get_network (state->def));
  if (state->routing != NULL)
    state->ceiling = _subagent_manager_apply_risk_limits (self, state->isolation, state->risk, &state->cpu_quota,
                                                          &state->memory_limit, state->isolation_options);

  /* A follow-up runs in the workspace its session kept. */
  if (hooks != NULL && hooks->reuse_context != NULL)
    {
      state->context = g_object_ref (hooks->reuse_context);
      run_route_approvals (g_steal_pointer (&task));
      return;
    }

  /* Isolation before any child runs; a failure returns without launching. */
  provider = _subagent_manager_isolation_provider_for (self, state->isolation, &error);
  if (provider == NULL)
    {
      g_autofree char *message = g_strdup_printf ("Cannot prepare %s isolation: %s", state->isolation, error->message);
      return_error_result (task, state, message);
      return;
    }
  /* The built-in shared backend resolves a path (no blocking work): done
   * here, the child's start goes on in this dispatch rather than waiting
   * for the async result's idle source (behind whatever else is ready),
   * and without a request object, of which it reads four fields. */
  if (SUBAGENT_IS_SHARED_ISOLATION (provider))
    {
      state->context = _subagent_shared_isolation_prepare (provider, self->root, state->session_key, state->cpu_quota,
                                                           state->memory_limit, cancellable, &error);
      run_isolation_ready (g_steal_pointer (&task), error);
      return;
    }
  request = g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST,
                          "parent-root", self->root,
                          "isolation", state->isolation,
                          "session-key", state->session_key,
                          "parent-run-id", state->parent_run_id,
                          "def-name", subagent_def_get_name (state->def),
                          "cpu-quota", state->cpu_quota,
                          "memory-limit", state->memory_limit,
                          "options", state->isolation_options,
                          /* Config `exclude:` reaches the provider with the request. */
                          "exclude", self->config != NULL ? subagent_config_get_exclude (self->config) : NULL,
                          NULL);
  subagent_isolation_provider_prepare_async (provider, request, cancellable, run_prepared, g_steal_pointer (&task));
}

static void
run_prepared (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GTask *task = user_data;
  RunState *state = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  state->context = subagent_isolation_provider_prepare_finish (SUBAGENT_ISOLATION_PROVIDER (source), result, &error);
  run_isolation_ready (task, error);
}

/* @state->context is the prepared workspace, or NULL and @error says why. */
static void
run_isolation_ready (GTask  *task_in,
                     GError *error)
{
  g_autoptr(GTask) task = task_in;
  RunState *state = g_task_get_task_data (task);

  if (state->context == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      /* Cancelled while its workspace was being made: the child never ran. */
      g_autofree char *message = g_strdup_printf ("Cancelled while its %s workspace was being prepared; it never ran",
                                                  state->isolation);

      g_task_return_pointer (task, subagent_run_result_new (SUBAGENT_RUN_STATUS_CANCELLED, state->run_id, 0, 0, 0.0, "",
                                                            state->lineage, NULL, message,
                                                            SUBAGENT_STOP_REASON_CANCELLED, NULL),
                             g_object_unref);
      return;
    }
  if (state->context == NULL)
    {
      g_autofree char *message = g_strdup_printf ("Cannot prepare %s isolation: %s", state->isolation, error->message);
      return_error_result (task, state, message);
      return;
    }
  run_route_approvals (g_steal_pointer (&task));
}

static void
run_approvals_routed (GObject      *source,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  RunState *state = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  state->approval_queue = _subagent_manager_make_approval_queue_finish (SUBAGENT_MANAGER (source), result, &error);
  /* Denying is always safe: the child runs unattended rather than not at all. */
  if (error != NULL)
    g_warning ("%s; child run %s is unattended: what needs an approval is denied", error->message, state->run_id);
  run_start (g_steal_pointer (&task));
}

/* The child's approval route: the supervisor's queue, else the manager's.
 * Making the manager's queue may load a sink plugin and read its store, so
 * it happens in a worker thread, and only for a child that could ask. */
static void
run_route_approvals (GTask *task_in)
{
  g_autoptr(GTask) task = task_in;
  RunState *state = g_task_get_task_data (task);
  SubagentManager *self = state->manager;
  g_autoptr(SubagentRunner) runner = NULL;
  gboolean must_make = FALSE;

  if (state->hooks != NULL && state->hooks->approval_queue != NULL)
    {
      state->approval_queue = g_object_ref (state->hooks->approval_queue);
      run_start (g_steal_pointer (&task));
      return;
    }
  runner = g_object_ref (state->runner);
  state->approval_queue = _subagent_manager_peek_approval_queue (self, _subagent_manager_child_mode (state),
                                                                 state->isolation, runner, &must_make);
  if (must_make)
    _subagent_manager_make_approval_queue_async (self, run_approvals_routed, g_steal_pointer (&task));
  else
    run_start (g_steal_pointer (&task));
}

/* The workspace exists (prepared, or kept from an earlier run): run the child. */

/* The runner's running totals, for the supervisor (any thread). The hooks
 * outlive the run, and the context reports only while it runs. */
static void
on_usage (SubagentRunContext *context,
          guint               iterations,
          guint               tool_calls,
          double              cost_cents,
          SubagentRunHooks   *hooks)
{
  hooks->usage_func (hooks->usage_data, iterations, tool_calls, cost_cents);
}

static void
run_start (GTask *task_in)
{
  g_autoptr(GTask) task = task_in;
  RunState *state = g_task_get_task_data (task);
  SubagentManager *self = state->manager;
  g_autoptr(SubagentToolRegistry) tools = NULL;
  g_autoptr(SubagentRunContext) context = NULL;
  SubagentPermissionMode mode;
  GCancellable *cancellable;
  SubagentRunner *runner;
  double max_cost;

  /* The workspace's paths join the lineage made before it existed; a
   * workspace without any (shared) leaves that lineage as it is. */
  if (state->lineage == NULL || subagent_isolation_context_get_worktree_path (state->context) != NULL ||
      subagent_isolation_context_get_container_path (state->context) != NULL)
    {
      g_clear_object (&state->lineage);
      state->lineage = lineage_for (state);
    }

  /* From here on the workspace exists: every path ends in
   * _subagent_manager_run_wrap_up(), which cleans it up. */
  g_mutex_lock (&self->lock);
  tools = SUBAGENT_TOOL_REGISTRY (subagent_child_tool_registry_new (self->tools,
                                                                    subagent_def_get_tool_whitelist (state->def),
                                                                    subagent_def_get_disallowed_tools (state->def)));
  /* A skill's allowed tools narrow further, never widen: a view of the view. */
  if (state->skill != NULL && subagent_skill_get_allowed_tools (state->skill) != NULL)
    {
      SubagentToolRegistry *narrowed =
        SUBAGENT_TOOL_REGISTRY (subagent_child_tool_registry_new (tools, subagent_skill_get_allowed_tools (state->skill), NULL));

      g_object_unref (tools);
      tools = narrowed;
    }
  g_mutex_unlock (&self->lock);
  runner = g_object_ref (state->runner);

  mode = _subagent_manager_child_mode (state);
  max_cost = subagent_def_get_max_cost_cents (state->def);
  if (state->hooks != NULL)
    {
      g_free (state->hooks->workspace_root);
      state->hooks->workspace_root = g_strdup (subagent_isolation_context_get_child_root (state->context));
      /* The tighter of the definition's budget and what the parent has left. */
      if (state->hooks->max_cost_cents > 0 && (max_cost <= 0 || state->hooks->max_cost_cents < max_cost))
        max_cost = state->hooks->max_cost_cents;
    }
  /* Every child gets its route; without a queue it is unattended. */
  state->approval_handler = subagent_approval_handler_new (state->approval_queue, state->run_id,
                                                           subagent_def_get_name (state->def),
                                                           state->batch_index, state->isolation,
                                                           subagent_lineage_get_worktree_path (state->lineage),
                                                           mode);

  context = _subagent_run_context_new (&(SubagentRunContextInit) {
      .task = state->task,
      .definition = state->def,
      .depth = state->depth + 1,
      .run_id = state->run_id,
      .parent_run_id = state->parent_run_id,
      .lineage = state->lineage,
      .tools = tools,
      .permission_mode = mode,
      .isolation = state->context,
      .max_iterations = state->max_iterations,
      .max_tool_calls = state->max_tool_calls,
      .timeout_seconds = state->timeout_seconds,
      .max_cost_cents = max_cost,
      .batch_index = state->batch_index,
      .approval_handler = G_OBJECT (state->approval_handler),
      .model = state->model,
      .transcript = (state->hooks != NULL && state->hooks->resume != NULL)
                    ? subagent_session_get_transcript (state->hooks->resume) : NULL,
      .confinement = subagent_config_get_confinement (self->config),
      /* Secret files (an approval key) that plugin sections of
       * config.yaml name: a confined child may not read them. */
      .hidden_paths = (const char * const *) self->secret_files,
      .skill = state->skill,
    });
  _subagent_run_context_set_confinement_cache (context, self->confinement_cache);
  if (state->hooks != NULL && state->hooks->usage_func != NULL)
    g_signal_connect (context, "usage", G_CALLBACK (on_usage), state->hooks);
  cancellable = g_task_get_cancellable (task);
  subagent_runner_run_async (runner, context, cancellable, run_finished, g_steal_pointer (&task));
  g_object_unref (runner);
}

static void
run_finished (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  RunState *state = g_task_get_task_data (task);

  state->outcome = subagent_runner_run_finish (SUBAGENT_RUNNER (source), result, &state->runner_error);
  /* Review capture and cleanup block on the filesystem (or an engine):
   * keep them off the caller's main context. The built-in shared backend
   * has neither (its child works in the parent's root, which stays): what
   * is left are two appends (audit line, session record), cheaper than the
   * hop to a worker thread and back, which on a busy machine waits for a
   * core twice. */
  if (SUBAGENT_IS_SHARED_ISOLATION (subagent_isolation_context_get_provider (state->context)))
    _subagent_manager_run_wrap_up (task, g_task_get_source_object (task), state, g_task_get_cancellable (task));
  else
    g_task_run_in_thread (task, _subagent_manager_run_wrap_up);
}

/**
 * subagent_manager_run_finish:
 * @self: a #SubagentManager
 * @result: the #GAsyncResult passed to the callback
 * @error: return location for a #GError
 *
 * Finishes the operation started with subagent_manager_run_async().
 *
 * Returns: (transfer full) (nullable): the run's result — also for runs that
 *   failed, were cancelled or could not start (status `error`); %NULL only
 *   for a caller's mistake such as an empty task
 *
 * Since: 0.2
 */
SubagentRunResult *
subagent_manager_run_finish (SubagentManager  *self,
                             GAsyncResult     *result,
                             GError          **error)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
run_sync_done (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/**
 * subagent_manager_run:
 * @self: a #SubagentManager
 * @task: what the child should do
 * @options: (nullable): definition, depth, isolation and limits of the run
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * The blocking variant of subagent_manager_run_async(). It iterates a
 * private main context, never the caller's.
 *
 * Returns: (transfer full) (nullable): the run's result
 */
SubagentRunResult *
subagent_manager_run (SubagentManager     *self,
                      const char          *task,
                      SubagentRunOptions  *options,
                      GCancellable        *cancellable,
                      GError             **error)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GAsyncResult) result = NULL;

  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);

  g_main_context_push_thread_default (context);
  subagent_manager_run_async (self, task, options, cancellable, run_sync_done, &result);
  while (result == NULL)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  return subagent_manager_run_finish (self, result, error);
}
