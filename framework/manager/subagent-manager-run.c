/* subagent-manager-run.c: one child run, the run contract of reference 000.
 *
 * Split from subagent-manager.c: the manager's object and accessors live
 * there, the run's state machine here.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-json-line-private.h"
#include "subagent-json-private.h"
#include "subagent-manager-private.h"
#include "subagent-run-context-private.h"
#include "subagent-def-private.h"
#include "subagent-supervisor-private.h"
#include "subagent-review-private.h"

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

/* One child run, from the depth guard to the session record. */
typedef struct {
  SubagentManager *manager;
  char *task;
  SubagentDef *def;
  char *parent_run_id;
  char *run_id;
  char *session_key;
  char *isolation;
  guint depth;
  guint max_depth_ceiling;       /* inherited from further up; 0: none */
  gint batch_index;
  guint max_iterations;
  guint max_tool_calls;
  guint timeout_seconds;
  double cpu_quota;
  char *memory_limit;
  JsonObject *isolation_options;
  GDateTime *started_at;

  SubagentIsolationContext *context;
  SubagentLineage *lineage;
  SubagentRunOutcome *outcome;
  GError *runner_error;
  SubagentRunHooks *hooks;  /* the supervisor's, not owned; may be NULL */
  SubagentApprovalQueue *approval_queue;      /* where the child's requests go; NULL: unattended */
  SubagentApprovalHandler *approval_handler;  /* the child's route, on its run context */
  SubagentRunner *runner;                     /* what runs this child (select_runner) */
  JsonObject *model;                          /* the model's settings, for a model runner */
  SubagentRunOptions *options;  /* a copy; NULL when none were given */

  /* Skills and risk routing (issue 19). */
  SubagentSkill *skill;
  SubagentRiskLevel risk;
  char *routing;                        /* how auto chose, for message, lineage, audit */
  SubagentPermissionMode ceiling;       /* the risk level's; INHERIT: none */
} RunState;

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

/* The file of a definition named @name that the catalog skipped with an
 * error, so that "unknown" is not said of a file the user can see. The
 * name of a skipped file is its base name: its `name:` did not parse. */
static const char *
skipped_file_for (SubagentCatalog *catalog,
                  const char      *name)
{
  GPtrArray *diagnostics = subagent_catalog_get_diagnostics (catalog);

  for (guint i = 0; diagnostics != NULL && i < diagnostics->len; i++)
    {
      const SubagentDiagnostic *diagnostic = diagnostics->pdata[i];
      const char *file = subagent_diagnostic_get_file (diagnostic);
      g_autofree char *base = file ? g_path_get_basename (file) : NULL;
      char *dot = base ? strrchr (base, '.') : NULL;

      if (subagent_diagnostic_get_severity (diagnostic) != SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR || dot == NULL)
        continue;
      *dot = '\0';
      if (g_str_equal (base, name))
        return file;
    }
  return NULL;
}

/* The definition to run: a named one, or the default; a command override
 * makes a copy that runs it. */
static SubagentDef *
resolve_def (SubagentManager     *self,
             SubagentRunOptions  *options,
             GError             **error)
{
  const char *name = options ? subagent_run_options_get_def_name (options) : NULL;
  const char * const *command = options ? subagent_run_options_get_command (options) : NULL;
  gboolean interactive = options != NULL && subagent_run_options_get_interactive (options);
  SubagentDef *copy;
  g_autoptr(SubagentDef) def = NULL;
  g_autoptr(JsonObject) object = NULL;
  g_autoptr(JsonArray) argv = NULL;

  if (name != NULL && *name != '\0')
    {
      SubagentDef *found = subagent_catalog_lookup (self->catalog, name);
      const char *skipped = found ? NULL : skipped_file_for (self->catalog, name);

      if (skipped != NULL)
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                       "Subagent definition “%s” in %s was skipped because it does not parse: "
                       "`subagentctl defs --check` shows why", name, skipped);
          return NULL;
        }
      if (found == NULL)
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_NOT_FOUND,
                       "Unknown subagent definition “%s”: add it under %s/.subagent/agents/ "
                       "(subagentctl defs lists what is there)", name, self->root);
          return NULL;
        }
      def = g_object_ref (found);
    }
  else
    def = subagent_def_new ("default");

  if ((command == NULL || command[0] == NULL) &&
      !(interactive && !subagent_def_get_interactive (def)))
    return g_steal_pointer (&def);

  object = subagent_def_to_json (def);
  if (command != NULL && command[0] != NULL)
    {
      argv = json_array_new ();
      for (guint i = 0; command[i] != NULL; i++)
        json_array_add_string_element (argv, command[i]);
      json_object_set_array_member (object, "command", g_steal_pointer (&argv));
    }
  if (interactive)
    json_object_set_boolean_member (object, "interactive", TRUE);
  copy = subagent_def_new_from_json (object, subagent_def_get_source_path (def), error);
  if (copy != NULL)
    {
      gboolean iterations_unset, tool_calls_unset;

      _subagent_def_get_limits_unset (def, &iterations_unset, &tool_calls_unset);
      _subagent_def_set_limits_unset (copy, iterations_unset, tool_calls_unset);
    }
  return copy;
}

/* The config.yaml section of the plugin that serves @backend (the pinned
 * one, else the first that provides it), read from its descriptor. */
static JsonObject *
plugin_section (SubagentManager *self,
                const char      *backend)
{
  const char *pin = subagent_config_get_plugin_for_backend (self->config, backend);
  g_autoptr(SubagentPluginInfo) info = NULL;

  if (g_str_equal (backend, SUBAGENT_ISOLATION_SHARED))
    return NULL;
  info = pin ? subagent_plugin_registry_find_plugin (self->plugins, pin, NULL)
             : subagent_plugin_registry_find_for_backend (self->plugins, SUBAGENT_TYPE_ISOLATION_PROVIDER,
                                                          backend, NULL);
  return info ? subagent_config_get_section (self->config, subagent_plugin_info_get_section (info)) : NULL;
}

/* The request's options: the plugin's section, then the run's overrides. */
static JsonObject *
merged_isolation_options (SubagentManager    *self,
                          const char         *isolation,
                          SubagentRunOptions *options)
{
  JsonObject *merged = json_object_new ();
  JsonObject *layers[2] = {
    plugin_section (self, isolation),
    options ? subagent_run_options_get_isolation_options (options) : NULL,
  };

  for (guint i = 0; i < G_N_ELEMENTS (layers); i++)
    {
      JsonObjectIter iter;
      const char *key;
      JsonNode *value;

      if (layers[i] == NULL)
        continue;
      json_object_iter_init (&iter, layers[i]);
      while (json_object_iter_next (&iter, &key, &value))
        json_object_set_member (merged, key, json_node_copy (value));
    }
  return merged;
}

/* The backend's provider: made from the plugin config.yaml pins for it, or
 * whichever plugin provides it (shared is built in and maps no module), and
 * configured for this workspace once; later runs reuse it. */
SubagentIsolationProvider *
_subagent_manager_isolation_provider_for (SubagentManager  *self,
                                          const char       *backend,
                                          GError          **error)
{
  SubagentIsolationProvider *provider;
  g_autoptr(GObject) created = NULL;

  g_mutex_lock (&self->lock);
  provider = g_hash_table_lookup (self->providers, backend);
  if (provider != NULL)
    g_object_ref (provider);
  g_mutex_unlock (&self->lock);
  if (provider != NULL)
    return provider;

  /* Made unlocked (loading may take a while); the first one stored wins. */
  created = subagent_plugin_registry_create_configured (self->plugins, self->config,
                                                        SUBAGENT_TYPE_ISOLATION_PROVIDER, backend,
                                                        self->root, error);
  if (created == NULL)
    return NULL;
  g_mutex_lock (&self->lock);
  provider = g_hash_table_lookup (self->providers, backend);
  if (provider == NULL)
    {
      provider = SUBAGENT_ISOLATION_PROVIDER (g_steal_pointer (&created));
      g_hash_table_insert (self->providers, g_strdup (backend), provider);
    }
  g_object_ref (provider);
  g_mutex_unlock (&self->lock);
  return provider;
}

/* A runner plugin's runner, made once per manager. */
static SubagentRunner *
plugin_runner (SubagentManager  *self,
               const char       *name,
               GError          **error)
{
  SubagentRunner *runner;

  g_mutex_lock (&self->lock);
  runner = g_hash_table_lookup (self->plugin_runners, name);
  if (runner != NULL)
    g_object_ref (runner);
  g_mutex_unlock (&self->lock);
  if (runner != NULL)
    return runner;

  /* As isolation providers are: a pinned plugin, its config section. */
  runner = SUBAGENT_RUNNER (subagent_plugin_registry_create_configured (self->plugins, self->config,
                                                                       SUBAGENT_TYPE_RUNNER, name,
                                                                       self->root, error));
  if (runner == NULL)
    return NULL;
  g_mutex_lock (&self->lock);
  if (!g_hash_table_contains (self->plugin_runners, name))
    g_hash_table_insert (self->plugin_runners, g_strdup (name), g_object_ref (runner));
  g_mutex_unlock (&self->lock);
  return runner;
}

static gboolean
has_argv (const char * const *argv)
{
  return argv != NULL && argv[0] != NULL;
}

/* Which runner runs the child (docs/models.md): the definition's `runner:`;
 * else a definition with a `command` runs as a program; else a runner the
 * host set; else, once config.yaml has `models:`, one with a `model`, or
 * none while a parent model is known and no default command is, runs on
 * the model runner; everything else on the command runner. A model
 * runner gets the model's settings, and a model that is not configured is
 * an error naming the key to set. */
static gboolean
select_runner (RunState            *state,
               SubagentRunOptions  *options,
               char               **message)
{
  SubagentManager *self = state->manager;
  SubagentConfig *config = self->config;
  const char *def_runner = subagent_def_get_runner (state->def);
  const char *def_model = subagent_def_get_model (state->def);
  const char *parent_model = options ? subagent_run_options_get_model (options) : NULL;
  const char *name = NULL;
  const char *model_name;
  gboolean host_runner;
  gboolean models_configured;
  g_autoptr(GError) error = NULL;
  JsonObject *model;

  if (parent_model == NULL)
    parent_model = subagent_config_get_default_model (config);
  g_mutex_lock (&self->lock);
  host_runner = !self->runner_is_default;
  g_mutex_unlock (&self->lock);

  {
    g_auto(GStrv) models = subagent_config_list_models (config);

    models_configured = models[0] != NULL;
  }
  if (def_runner != NULL)
    name = def_runner;
  else if (has_argv (subagent_def_get_command (state->def)) || host_runner || !models_configured)
    name = NULL;  /* without models: the command runner (runner.command, or an error naming the keys) */
  else if (def_model != NULL)
    name = subagent_config_get_model_runner (config);
  else if (!has_argv (subagent_config_get_runner_command (config)) && parent_model != NULL)
    name = subagent_config_get_model_runner (config);

  if (name == NULL || g_str_equal (name, "command"))
    {
      g_mutex_lock (&self->lock);
      state->runner = g_object_ref (name != NULL ? self->command_runner : self->runner);
      g_mutex_unlock (&self->lock);
      return TRUE;
    }

  state->runner = plugin_runner (self, name, &error);
  if (state->runner == NULL)
    {
      *message = g_strdup_printf ("Subagent “%s” needs the runner “%s”, which cannot be loaded: %s",
                                  subagent_def_get_name (state->def), name, error->message);
      return FALSE;
    }

  model_name = def_model != NULL ? def_model : parent_model;
  if (model_name == NULL)
    {
      *message = g_strdup_printf ("Subagent “%s” runs on runner “%s” but has no model: set “model:” in its "
                                  "definition, or “default_model:” in %s (or pass --model)",
                                  subagent_def_get_name (state->def), name, subagent_config_get_source (config)
                                  ? subagent_config_get_source (config) : ".subagent/config.yaml");
      return FALSE;
    }
  model = subagent_config_get_model (config, model_name);
  if (model == NULL)
    {
      g_auto(GStrv) known = subagent_config_list_models (config);
      g_autofree char *list = g_strjoinv (", ", known);

      *message = g_strdup_printf ("Subagent “%s” runs on model “%s”, which is not configured: add "
                                  "“models.%s” (or “model_aliases.%s”) to %s%s%s%s",
                                  subagent_def_get_name (state->def), model_name, model_name, model_name,
                                  subagent_config_get_source (config) ? subagent_config_get_source (config)
                                  : ".subagent/config.yaml",
                                  known[0] ? " (configured: " : "", list, known[0] ? ")" : "");
      return FALSE;
    }
  state->model = json_object_ref (model);
  return TRUE;
}

static void run_prepared (GObject *source, GAsyncResult *result, gpointer user_data);
static void run_isolation_ready (GTask *task, GError *error);
static void run_with_isolation (GTask *task);
static void run_routed (GObject *source, GAsyncResult *result, gpointer user_data);
static void run_route_approvals (GTask *task);
static void run_start (GTask *task);
static void run_finished (GObject *source, GAsyncResult *result, gpointer user_data);
static void run_wrap_up (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable);

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

  state->def = resolve_def (self, options, &error);
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
  state->options = options ? _subagent_run_options_copy (options) : NULL;

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

    if (!select_runner (state, options, &message))
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
  state->isolation_options = merged_isolation_options (self, state->isolation, options);
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
  /* The built-in shared backend resolves a path (no blocking work): done
   * here, the child's start goes on in this dispatch rather than waiting
   * for the async result's idle source (behind whatever else is ready). */
  if (SUBAGENT_IS_SHARED_ISOLATION (provider))
    {
      state->context = subagent_isolation_provider_prepare (provider, request, cancellable, &error);
      run_isolation_ready (g_steal_pointer (&task), error);
      return;
    }
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

/* The values of every `secret-file` option (see #SubagentPluginOption) set
 * in a plugin's section of config.yaml, as absolute paths. The framework
 * names no plugin option: plugins declare which of theirs are secret. */
static GStrv
secret_files (SubagentManager *self)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GPtrArray) plugins = subagent_plugin_registry_list_plugins (self->plugins);

  for (guint i = 0; plugins != NULL && i < plugins->len; i++)
    {
      SubagentPluginInfo *info = plugins->pdata[i];
      JsonObject *section = subagent_config_get_section (self->config, subagent_plugin_info_get_section (info));
      g_autoptr(GPtrArray) options = subagent_plugin_info_get_options (info);

      for (guint j = 0; section != NULL && options != NULL && j < options->len; j++)
        {
          SubagentPluginOption *option = options->pdata[j];
          const char *value;

          if (!g_str_equal (subagent_plugin_option_get_value_type (option), "secret-file"))
            continue;
          value = json_object_get_string_member_with_default (section, subagent_plugin_option_get_name (option), NULL);
          if (value != NULL && *value != '\0')
            {
              g_autofree char *path = g_canonicalize_filename (value, self->root);

              g_strv_builder_add (builder, path);
            }
        }
    }
  return g_strv_builder_end (builder);
}

static SubagentPermissionMode
child_mode (RunState *state)
{
  SubagentPermissionMode mode = subagent_permission_mode_clamp (state->manager->permission_mode,
                                                                subagent_def_get_permission_mode (state->def));

  /* An isolated child never gets more than workspace-write: what it may do
   * without asking stays inside its own workspace. */
  if (g_strcmp0 (state->isolation, SUBAGENT_ISOLATION_SHARED) != 0 && mode > SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE)
    mode = SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE;
  /* The routed risk level's ceiling (critical: read-only). */
  if (state->ceiling != SUBAGENT_PERMISSION_MODE_INHERIT)
    mode = subagent_permission_mode_clamp (state->ceiling, mode);
  return mode;
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
  state->approval_queue = _subagent_manager_peek_approval_queue (self, child_mode (state), state->isolation,
                                                                 runner, &must_make);
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
  g_auto(GStrv) hidden = NULL;

  g_clear_object (&state->lineage);
  state->lineage = lineage_for (state);

  /* From here on the workspace exists: every path ends in run_wrap_up,
   * which cleans it up. */
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

  mode = child_mode (state);
  max_cost = subagent_def_get_max_cost_cents (state->def);
  /* Secret files (an approval key) that plugin sections of config.yaml
   * name: a confined child may not read them. */
  hidden = secret_files (self);
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

  context = g_object_new (SUBAGENT_TYPE_RUN_CONTEXT,
                          "task", state->task,
                          "definition", state->def,
                          "depth", state->depth + 1,
                          "run-id", state->run_id,
                          "parent-run-id", state->parent_run_id,
                          "lineage", state->lineage,
                          "tools", tools,
                          "permission-mode", mode,
                          "isolation", state->context,
                          "max-iterations", state->max_iterations,
                          "max-tool-calls", state->max_tool_calls,
                          "timeout-seconds", state->timeout_seconds,
                          "max-cost-cents", max_cost,
                          "batch-index", state->batch_index,
                          "approval-handler", state->approval_handler,
                          "model", state->model,
                          "transcript", (state->hooks != NULL && state->hooks->resume != NULL)
                                        ? subagent_session_get_transcript (state->hooks->resume) : NULL,
                          "confinement", subagent_config_get_confinement (self->config),
                          "hidden-paths", hidden,
                          "skill", state->skill,
                          NULL);
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
    run_wrap_up (task, g_task_get_source_object (task), state, g_task_get_cancellable (task));
  else
    g_task_run_in_thread (task, run_wrap_up);
}

/* Worktrees diff against the commit the child started from (backend-data
 * `base-commit`); snapshots and containers against the parent's tree. */
static SubagentReview *
capture_review_of_context (const char                *root,
                           SubagentIsolationContext  *context,
                           guint64                    max_file_size,
                           GError                   **error)
{
  GVariant *data = subagent_isolation_context_get_backend_data (context);
  const char *base_commit = NULL;
  const char *parent_root = subagent_isolation_context_get_parent_root (context);
  gboolean child_ignores = TRUE;
  g_autofree const char **exclude = NULL;

  if (data != NULL)
    {
      /* What a copied workspace left out (`exclude`, as): never a deletion. */
      g_variant_lookup (data, "exclude", "^a&s", &exclude);
      g_variant_lookup (data, "base-commit", "&s", &base_commit);
      /* A backend whose child could edit .gitignore unseen (a container)
       * says `review-child-ignores` = false: nothing it hides counts. */
      g_variant_lookup (data, "review-child-ignores", "b", &child_ignores);
    }
  if (base_commit != NULL)
    return _subagent_review_capture_full (root, subagent_isolation_context_get_session_key (context),
                                          NULL, base_commit, NULL,
                                          subagent_isolation_context_get_child_root (context),
                                          max_file_size, !child_ignores, NULL, NULL, error);
  return _subagent_review_capture_full (root, subagent_isolation_context_get_session_key (context),
                                        parent_root, NULL, NULL,
                                        subagent_isolation_context_get_child_root (context),
                                        max_file_size, FALSE, exclude, NULL, error);
}

/* An isolation option given as true or "true" (a config file or --option). */
static gboolean
option_is_true (JsonObject *options,
                const char *key)
{
  JsonNode *node = options ? json_object_get_member (options, key) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  if (json_node_get_value_type (node) == G_TYPE_BOOLEAN)
    return json_node_get_boolean (node);
  if (json_node_get_value_type (node) == G_TYPE_STRING)
    return g_ascii_strcasecmp (json_node_get_string (node), "true") == 0;
  return FALSE;
}

/* Whether @path (relative, as the review lists it) lies inside one of the
 * definition's write_scope entries: a directory (and what is under it), a
 * file, or a glob over the path or its last component ("*.md"). */
static gboolean
path_in_write_scope (const char * const *scope,
                     const char         *path)
{
  const char *base = strrchr (path, '/');

  base = base != NULL ? base + 1 : path;
  for (guint i = 0; scope[i] != NULL; i++)
    {
      g_autofree char *entry = g_strdup (scope[i]);
      gsize len;

      while (g_str_has_prefix (entry, "./"))
        memmove (entry, entry + 2, strlen (entry + 2) + 1);
      len = strlen (entry);
      while (len > 0 && entry[len - 1] == '/')
        entry[--len] = '\0';
      if (len == 0)
        return TRUE;
      if (strpbrk (entry, "*?") != NULL)
        {
          if (g_pattern_match_simple (entry, path) || g_pattern_match_simple (entry, base))
            return TRUE;
        }
      else if (g_str_equal (path, entry) || (g_str_has_prefix (path, entry) && path[len] == '/'))
        return TRUE;
    }
  return FALSE;
}

/* The review marks what the child changed outside its write_scope: a line
 * `outside-write-scope<TAB>path` in the `.status` file, and the paths in
 * the review object's `outside_write_scope`. The kernel enforces the scope
 * for host children; this shows it for every backend. */
static void
mark_write_scope (RunState   *state,
                  JsonObject *review)
{
  const char * const *scope = subagent_def_get_write_scope (state->def);
  const char *status_path = json_object_get_string_member_with_default (review, "status_path", NULL);
  g_autofree char *status = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GString) marks = g_string_new (NULL);
  JsonArray *outside;

  if (scope == NULL || status_path == NULL || !g_file_get_contents (status_path, &status, NULL, NULL))
    return;
  outside = json_array_new ();
  lines = g_strsplit (status, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *tab = strchr (lines[i], '\t');
      const char *path;

      if (tab == NULL)
        continue;
      path = tab + 1;
      /* A rename lists "old -> new": the new path is what was written. */
      if (strstr (path, " -> ") != NULL)
        path = strstr (path, " -> ") + 4;
      if (!path_in_write_scope (scope, path))
        {
          g_string_append_printf (marks, "outside-write-scope\t%s\n", path);
          json_array_add_string_element (outside, path);
        }
    }
  json_object_set_array_member (review, "outside_write_scope", outside);
  if (marks->len > 0)
    {
      g_autoptr(GString) updated = g_string_new (status);
      g_autoptr(GError) error = NULL;

      g_string_append (updated, marks->str);
      if (!g_file_set_contents_full (status_path, updated->str, updated->len, G_FILE_SET_CONTENTS_CONSISTENT,
                                     0644, &error))
        g_warning ("Cannot mark the write_scope in %s: %s", status_path, error->message);
    }
}

/* NULL with error set when the review could not be taken: the run then
 * ends with an error result (what the child did cannot be shown), and its
 * workspace is still cleaned up. */
static JsonObject *
capture_review (RunState  *state,
                GError   **error)
{
  SubagentIsolationContext *context = state->context;
  g_autoptr(SubagentReview) review = NULL;

  if (g_str_equal (subagent_isolation_context_get_parent_root (context),
                   subagent_isolation_context_get_child_root (context)))
    return NULL;  /* shared: the parent already sees every change */

  review = capture_review_of_context (state->manager->root, context,
                                      subagent_config_get_review_max_file_size (state->manager->config), error);
  if (review == NULL)
    return NULL;
  {
    JsonObject *json = subagent_review_to_json (review);

    mark_write_scope (state, json);
    return json;
  }
}

static void
record_lineage (RunState          *state,
                SubagentRunResult *result)
{
  g_autoptr(JsonObject) fields = json_object_new ();
  g_autoptr(GError) error = NULL;

  json_object_set_string_member (fields, "run_id", state->run_id);
  json_object_set_string_member (fields, "parent_run_id", state->parent_run_id);
  json_object_set_string_member (fields, "def_name", subagent_def_get_name (state->def));
  json_object_set_int_member (fields, "depth", state->depth + 1);
  json_object_set_string_member (fields, "isolation", state->isolation);
  if (state->batch_index == SUBAGENT_NO_BATCH_INDEX)
    json_object_set_null_member (fields, "batch_index");
  else
    json_object_set_int_member (fields, "batch_index", state->batch_index);
  json_object_set_string_member (fields, "status", subagent_run_status_to_string (subagent_run_result_get_status (result)));
  json_object_set_int_member (fields, "iterations", subagent_run_result_get_iterations (result));
  json_object_set_int_member (fields, "tool_calls", subagent_run_result_get_tool_calls (result));
  subagent_json_set_amount (fields, "cost_cents", subagent_run_result_get_cost_cents (result));
  if (subagent_run_result_get_confinement (result) != NULL)
    json_object_set_string_member (fields, "confinement", subagent_run_result_get_confinement (result));
  json_object_set_object_member (fields, "lineage", subagent_lineage_to_json (state->lineage));
  if (state->risk != SUBAGENT_RISK_LEVEL_NONE)
    json_object_set_string_member (fields, "risk_level", subagent_risk_level_to_string (state->risk));
  if (state->skill != NULL)
    json_object_set_string_member (fields, "skill", subagent_skill_get_relative_path (state->skill));
  if (state->routing != NULL)
    json_object_set_string_member (fields, "routing", state->routing);
  if (!subagent_audit_log_record (state->manager->audit, SUBAGENT_AUDIT_EVENT_LINEAGE, fields, &error))
    g_warning ("%s", error->message);
}

static void
keep_session (RunState          *state,
              SubagentRunResult *result,
              JsonObject        *review,
              gboolean           workspace_kept)
{
  SubagentManager *self = state->manager;
  g_autoptr(GDateTime) completed = g_date_time_new_now_utc ();
  g_autoptr(SubagentSessionLog) log = NULL;
  g_autoptr(SubagentSession) session = NULL;
  g_autoptr(GError) error = NULL;
  /* A follow-up continues its session: usage adds up (reference 003). */
  SubagentSession *resume = state->hooks ? state->hooks->resume : NULL;

  session = g_object_new (SUBAGENT_TYPE_SESSION,
                          "session-id", state->run_id,
                          "def-name", subagent_def_get_name (state->def),
                          "parent-run-id", state->parent_run_id,
                          "status", subagent_run_result_get_status (result),
                          "started-at", resume ? subagent_session_get_started_at (resume) : state->started_at,
                          "completed-at", completed,
                          "depth", state->depth + 1,
                          "batch-index", state->batch_index,
                          "isolation", state->isolation,
                          "worktree-path", subagent_lineage_get_worktree_path (state->lineage),
                          "container-path", subagent_lineage_get_container_path (state->lineage),
                          "iterations", subagent_run_result_get_iterations (result) +
                                        (resume ? subagent_session_get_iterations (resume) : 0),
                          "tool-calls", subagent_run_result_get_tool_calls (result) +
                                        (resume ? subagent_session_get_tool_calls (resume) : 0),
                          "cost-cents", subagent_run_result_get_cost_cents (result) +
                                        (resume ? subagent_session_get_cost_cents (resume) : 0),
                          "final-answer", subagent_run_result_get_final_answer (result),
                          "review", review,
                          "task", resume ? subagent_session_get_task (resume) : state->task,
                          "follow-ups", resume ? subagent_session_get_follow_ups (resume) + 1 : 0,
                          "workspace-kept", workspace_kept,
                          "child-root", subagent_isolation_context_get_child_root (state->context),
                          "transcript", state->outcome ? subagent_run_outcome_get_transcript (state->outcome) : NULL,
                          NULL);
  /* One log per manager: concurrent children share its writes. */
  g_mutex_lock (&self->lock);
  if (self->session_log == NULL)
    {
      g_autofree char *sessions_dir = g_build_filename (self->root, ".subagent", "sessions", NULL);

      self->session_log = subagent_session_log_new (sessions_dir, self->run_id, &error);
    }
  log = self->session_log ? g_object_ref (self->session_log) : NULL;
  g_mutex_unlock (&self->lock);
  if (log == NULL || !subagent_session_log_append (log, session, &error))
    g_warning ("Cannot keep the session record of run %s: %s", state->run_id, error->message);

  g_mutex_lock (&self->lock);
  g_hash_table_replace (self->sessions, g_strdup (state->run_id), g_steal_pointer (&session));
  g_mutex_unlock (&self->lock);
}

static void
run_wrap_up (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  RunState *state = task_data;
  g_autoptr(JsonObject) review = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GError) review_error = NULL;
  gboolean separate = !g_str_equal (subagent_isolation_context_get_parent_root (state->context),
                                    subagent_isolation_context_get_child_root (state->context));
  gboolean keep = state->hooks != NULL && state->hooks->keep_workspace && state->outcome != NULL && separate;

  /* Requests the child left waiting have nobody to act on them now. */
  if (state->approval_handler != NULL)
    {
      guint cancelled = subagent_approval_handler_cancel_pending (state->approval_handler);

      if (cancelled > 0)
        g_debug ("Run %s ended with %u approval request(s) pending; they were cancelled", state->run_id, cancelled);
    }

  if (state->outcome != NULL)
    review = capture_review (state, &review_error);
  /* A kept branch is what the user merges: name it next to the patch. */
  if (review != NULL && subagent_isolation_context_get_branch (state->context) != NULL &&
      option_is_true (state->isolation_options, "keep_branch"))
    json_object_set_string_member (review, "branch", subagent_isolation_context_get_branch (state->context));

  /* Cleanup guarantee: whatever the child did — unless the supervisor keeps
   * the workspace for follow-ups, and then owns its cleanup. */
  if (keep)
    state->hooks->kept_context = g_object_ref (state->context);
  else
    {
      subagent_isolation_context_cleanup (state->context);
      if (state->hooks != NULL && separate)
        state->hooks->workspace_disposed = TRUE;
    }

  if (state->outcome == NULL)
    {
      g_autofree char *message = g_strdup_printf ("Subagent run %s could not run: %s", state->run_id,
                                                  state->runner_error ? state->runner_error->message : "unknown error");
      result = subagent_run_result_new_error (message, state->lineage);
      record_lineage (state, result);
      g_task_return_pointer (task, g_steal_pointer (&result), g_object_unref);
      return;
    }

  if (review_error != NULL)
    {
      g_autofree char *message = g_strdup_printf ("Subagent run %s ended but its review could not be taken "
                                                  "(the run counts as failed): %s",
                                                  state->run_id, review_error->message);

      g_debug ("%s", message);
      result = subagent_run_result_new_error (message, state->lineage);
    }
  else if (state->routing != NULL)
    {
      /* The message says where auto routed the child, and why. */
      const char *said = subagent_run_outcome_get_message (state->outcome);
      g_autofree char *message = said && *said ? g_strdup_printf ("%s (isolation: %s)", said, state->routing)
                                               : g_strdup_printf ("isolation: %s", state->routing);

      result = subagent_run_result_new (subagent_run_outcome_get_status (state->outcome), state->run_id,
                                        subagent_run_outcome_get_iterations (state->outcome),
                                        subagent_run_outcome_get_tool_calls (state->outcome),
                                        subagent_run_outcome_get_cost_cents (state->outcome),
                                        subagent_run_outcome_get_final_answer (state->outcome),
                                        state->lineage, review, message,
                                        subagent_run_outcome_get_stop_reason (state->outcome), state->run_id);
    }
  else
    result = subagent_run_result_new_from_outcome (state->run_id, state->outcome, state->lineage, review, state->run_id);
  record_lineage (state, result);
  keep_session (state, result, review, keep);
  g_task_return_pointer (task, g_steal_pointer (&result), g_object_unref);
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
