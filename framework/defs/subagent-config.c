/* subagent-config.c: the settings of a workspace (#SubagentConfig) and
 * their getters; reading the file is in subagent-config-load.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-config-private.h"
#include "subagent-config-struct-private.h"

/**
 * SubagentConfig:
 *
 * The settings of a workspace: `<root>/.subagent/config.yaml`, or the file
 * named by `SUBAGENT_CONFIG`.
 *
 * ```yaml
 * isolation: auto                 # default isolation of runs
 * permission_mode: prompt         # the parent's mode; children only narrow it
 * plugins:
 *   path: [/opt/subagent/plugins] # searched after SUBAGENT_PLUGIN_PATH
 *   backends:                     # which plugin serves which backend
 *     worktree: isolation-worktree
 * runner:
 *   command: [my-agent, --stdio]  # child program when a definition has none
 *   model_runner: openai-chat     # runs definitions with a model and no command
 *   timeout_seconds: 600
 *   max_parallel: 4
 *   max_agents: 128
 *   max_iterations: 50            # limits of .claude/agents files that set none
 *   max_tool_calls: 200
 * budget:
 *   max_cost_cents: 500           # per parent run
 * approvals:
 *   sink: file                    # file | memory | none | a sink plugin's backend
 *   timeout_seconds: 180
 * auto_isolation:                 # what `auto` picks (default: the descriptors' Auto=)
 *   git: worktree                 #   inside a git work tree
 *   other: directory-snapshot     #   anywhere else
 * review:
 *   max_file_size: 16MiB          # larger files: size and digest, no content
 * routing:                        # isolation: auto with a skill or risk level
 *   strict: false
 *   medium: { backends: [docker, directory-snapshot] }
 *   high:   { backends: [docker], cpu: 1, memory: 512MiB, network: none }
 * worktree: { pool_size: 2 }      # a plugin's section: passed through as written
 * confinement: landlock           # landlock | none | required (host children)
 * exclude: [.env, "*.pem"]        # files left out of copied workspaces
 * models:                         # model-backed children (docs/models.md)
 *   local:
 *     base_url: http://127.0.0.1:8080/v1
 *     model: qwen2.5-coder
 *     api_key_env: LOCAL_LLM_KEY  # the variable holding the key, never the key
 *     input_cents_per_mtok: 0
 *     output_cents_per_mtok: 0
 *     max_tokens: 4096            # optional; also temperature, headers
 * default_model: local            # the parent's model (`model: inherit`)
 * model_aliases: { sonnet: local, opus: local, haiku: local }
 * ```
 *
 * (See #SubagentRoutingPolicy for `routing`.)
 *
 * Every other top-level mapping is a plugin's section (the `Section=` of its
 * descriptor, by default its name): it is kept untouched for the plugin
 * (subagent_config_get_section()), and the plugin registry checks it against
 * the options the plugin declares
 * (subagent_plugin_registry_validate_config()). The framework itself names
 * no plugin option.
 *
 * Unknown framework keys are reported with a warning (and kept in
 * subagent_config_get_warnings()); values of the wrong type or range are
 * %SUBAGENT_CONFIG_ERROR_INVALID_VALUE errors naming the key and the file.
 * The object is immutable once loaded.
 */
G_DEFINE_FINAL_TYPE (SubagentConfig, subagent_config, G_TYPE_OBJECT)

static void
subagent_config_finalize (GObject *object)
{
  SubagentConfig *self = SUBAGENT_CONFIG (object);

  g_free (self->source);
  g_free (self->default_isolation);
  g_clear_object (&self->routing);
  g_hash_table_unref (self->backend_plugins);
  g_strfreev (self->plugin_path);
  g_hash_table_unref (self->sections);
  g_hash_table_unref (self->lines);
  g_free (self->auto_git);
  g_free (self->auto_other);
  g_strfreev (self->runner_command);
  g_free (self->approval_sink);
  g_strfreev (self->exclude);
  g_ptr_array_unref (self->warnings);
  g_free (self->model_runner);
  json_object_unref (self->models);
  g_free (self->default_model);
  g_hash_table_unref (self->model_aliases);
  G_OBJECT_CLASS (subagent_config_parent_class)->finalize (object);
}

static void
subagent_config_class_init (SubagentConfigClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_config_finalize;
}

static void
subagent_config_init (SubagentConfig *self)
{
  self->default_isolation = g_strdup (SUBAGENT_ISOLATION_SHARED);
  self->permission_mode = SUBAGENT_PERMISSION_MODE_PROMPT;
  self->backend_plugins = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->plugin_path = g_new0 (char *, 1);
  self->sections = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                          (GDestroyNotify) json_object_unref);
  self->lines = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->runner_command = g_new0 (char *, 1);
  self->max_parallel = SUBAGENT_DEFAULT_MAX_PARALLEL;
  self->default_max_iterations = SUBAGENT_DEFAULT_MAX_ITERATIONS;
  self->default_max_tool_calls = SUBAGENT_DEFAULT_MAX_TOOL_CALLS;
  self->review_max_file_size = SUBAGENT_REVIEW_DEFAULT_MAX_FILE_SIZE;
  self->routing = subagent_routing_policy_new_default ();
  self->max_agents = SUBAGENT_DEFAULT_MAX_AGENTS;
  self->approval_sink = g_strdup ("file");
  self->approval_timeout = SUBAGENT_DEFAULT_APPROVAL_TIMEOUT_SECONDS;
  self->warnings = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (self->warnings, NULL);
  self->model_runner = g_strdup ("openai-chat");
  self->models = json_object_new ();
  self->model_aliases = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

/**
 * subagent_config_new:
 *
 * Creates a new #SubagentConfig.
 *
 * Returns: (transfer full): the defaults: shared isolation, prompt mode,
 *   file approvals with a 180 s timeout, 4 children in parallel
 *
 * Since: 0.2
 */
SubagentConfig *
subagent_config_new (void)
{
  return g_object_new (SUBAGENT_TYPE_CONFIG, NULL);
}

/**
 * subagent_config_get_source:
 * @self: a #SubagentConfig
 *
 * Gets the file it was loaded from.
 *
 * Returns: (transfer none) (nullable): the file it was loaded from
 *
 * Since: 0.2
 */
const char *
subagent_config_get_source (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return self->source;
}

/**
 * subagent_config_get_default_isolation:
 * @self: a #SubagentConfig
 *
 * Gets the isolation mode of runs that name none.
 *
 * Returns: (transfer none): the isolation mode of runs that name none
 *
 * Since: 0.2
 */
const char *
subagent_config_get_default_isolation (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return self->default_isolation;
}

/**
 * subagent_config_get_permission_mode:
 * @self: a #SubagentConfig
 *
 * Gets the parent's permission mode.
 *
 * Returns: the parent's permission mode
 *
 * Since: 0.2
 */
SubagentPermissionMode
subagent_config_get_permission_mode (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), SUBAGENT_PERMISSION_MODE_PROMPT);
  return self->permission_mode;
}

/**
 * subagent_config_get_plugin_for_backend:
 * @self: a #SubagentConfig
 * @backend: a backend name such as `worktree`
 *
 * Gets the plugin chosen for @backend, or %NULL to take whichever plugin
 * provides it.
 *
 * Returns: (transfer none) (nullable): the plugin chosen for @backend, or
 *   %NULL to take whichever plugin provides it
 *
 * Since: 0.2
 */
const char *
subagent_config_get_plugin_for_backend (SubagentConfig *self,
                                        const char     *backend)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return g_hash_table_lookup (self->backend_plugins, backend);
}

/**
 * subagent_config_get_plugin_path:
 * @self: a #SubagentConfig
 *
 * Gets extra plugin directories.
 *
 * Returns: (transfer none) (array zero-terminated=1): extra plugin directories
 *
 * Since: 0.2
 */
const char * const *
subagent_config_get_plugin_path (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return (const char * const *) self->plugin_path;
}

/**
 * subagent_config_get_auto_isolation:
 * @self: a #SubagentConfig
 * @git_work_tree: which choice: inside a git work tree, or anywhere else
 *
 * Gets the backend `auto_isolation.git` (or `.other`) names, or %NULL to
 * take the descriptors' `Auto=`.
 *
 * Returns: (transfer none) (nullable): the backend `auto_isolation.git` (or
 *   `.other`) names, or %NULL to take the descriptors' `Auto=`
 *
 * Since: 0.2
 */
const char *
subagent_config_get_auto_isolation (SubagentConfig *self,
                                    gboolean        git_work_tree)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return git_work_tree ? self->auto_git : self->auto_other;
}

/**
 * subagent_config_get_runner_command:
 * @self: a #SubagentConfig
 *
 * Gets the child program of definitions that name none (may be empty).
 *
 * Returns: (transfer none) (array zero-terminated=1): the child program of
 *   definitions that name none (may be empty)
 *
 * Since: 0.2
 */
const char * const *
subagent_config_get_runner_command (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return (const char * const *) self->runner_command;
}

/**
 * subagent_config_get_runner_timeout:
 * @self: a #SubagentConfig
 *
 * Gets the default wall-clock limit of a run in seconds (0: none).
 *
 * Returns: the default wall-clock limit of a run in seconds (0: none)
 *
 * Since: 0.2
 */
guint
subagent_config_get_runner_timeout (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), 0);
  return self->runner_timeout;
}

/**
 * subagent_config_get_default_max_iterations:
 * @self: a #SubagentConfig
 *
 * The iteration limit of a run whose definition sets none and comes from
 * `.claude/agents/` (Claude Code's files have no such field):
 * `runner.max_iterations`, default %SUBAGENT_DEFAULT_MAX_ITERATIONS.
 *
 * Returns: the limit (at least 1)
 *
 * Since: 0.2
 */
guint
subagent_config_get_default_max_iterations (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), SUBAGENT_DEFAULT_MAX_ITERATIONS);
  return self->default_max_iterations;
}

/**
 * subagent_config_get_default_max_tool_calls:
 * @self: a #SubagentConfig
 *
 * The tool-call limit of a run whose definition sets none and comes from
 * `.claude/agents/`: `runner.max_tool_calls`, default
 * %SUBAGENT_DEFAULT_MAX_TOOL_CALLS.
 *
 * Returns: the limit
 *
 * Since: 0.2
 */
guint
subagent_config_get_default_max_tool_calls (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), SUBAGENT_DEFAULT_MAX_TOOL_CALLS);
  return self->default_max_tool_calls;
}

/**
 * subagent_config_get_max_parallel:
 * @self: a #SubagentConfig
 *
 * Gets how many children run at once (at least 1).
 *
 * Returns: how many children run at once (at least 1)
 *
 * Since: 0.2
 */
guint
subagent_config_get_max_parallel (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), 1);
  return self->max_parallel;
}

/**
 * subagent_config_get_max_agents:
 * @self: a #SubagentConfig
 *
 * Gets the total number of children a parent run may start.
 *
 * Returns: the total number of children a parent run may start
 *
 * Since: 0.2
 */
guint
subagent_config_get_max_agents (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), SUBAGENT_DEFAULT_MAX_AGENTS);
  return self->max_agents;
}

/**
 * subagent_config_get_max_cost_cents:
 * @self: a #SubagentConfig
 *
 * Gets the cost budget of a parent run (0: none).
 *
 * Returns: the cost budget of a parent run (0: none)
 *
 * Since: 0.2
 */
double
subagent_config_get_max_cost_cents (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), 0);
  return self->max_cost_cents;
}

/**
 * subagent_config_get_approval_sink:
 * @self: a #SubagentConfig
 *
 * Gets the approval store backend: `file`, `memory` or `none`.
 *
 * Returns: (transfer none): the approval store backend: `file`, `memory` or `none`
 *
 * Since: 0.2
 */
const char *
subagent_config_get_approval_sink (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return self->approval_sink;
}

/**
 * subagent_config_get_approval_timeout:
 * @self: a #SubagentConfig
 *
 * Gets seconds an approval request waits before it times out.
 *
 * Returns: seconds an approval request waits before it times out
 *
 * Since: 0.2
 */
guint
subagent_config_get_approval_timeout (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), SUBAGENT_DEFAULT_APPROVAL_TIMEOUT_SECONDS);
  return self->approval_timeout;
}

/**
 * subagent_config_get_warnings:
 * @self: a #SubagentConfig
 *
 * Gets what loading warned about.
 *
 * Returns: (transfer none) (array zero-terminated=1): what loading warned about
 *
 * Since: 0.2
 */
const char * const *
subagent_config_get_warnings (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return (const char * const *) self->warnings->pdata;
}

/**
 * subagent_config_get_model_runner:
 * @self: a #SubagentConfig
 *
 * The runner that runs definitions with a `model` and no `command`
 * (`runner.model_runner`): a backend of a runner plugin.
 *
 * Returns: (transfer none): its name, `openai-chat` unless configured
 *
 * Since: 0.2
 */
const char *
subagent_config_get_model_runner (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return self->model_runner;
}

/**
 * subagent_config_get_default_model:
 * @self: a #SubagentConfig
 *
 * The parent's model (`default_model:`): what a definition without a model,
 * or with `model: inherit`, runs on.
 *
 * Returns: (transfer none) (nullable): a model or alias name, or %NULL
 *
 * Since: 0.2
 */
const char *
subagent_config_get_default_model (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return self->default_model;
}

/**
 * subagent_config_get_model:
 * @self: a #SubagentConfig
 * @name: a model name of `models:`, or an alias of `model_aliases:` (any case)
 *
 * Looks a model up. The returned object holds the checked settings with
 * their defaults: `name` (the model's name in `models:`), `base_url`,
 * `model`, `api_key_env` (if set), `input_cents_per_mtok`,
 * `output_cents_per_mtok`, `connect_timeout_seconds`,
 * `read_timeout_seconds`, `max_retries`, and where set `max_tokens`,
 * `temperature` and `headers`.
 *
 * Returns: (transfer none) (nullable): the model's settings, or %NULL if
 *   neither `models:` nor `model_aliases:` has @name
 *
 * Since: 0.2
 */
JsonObject *
subagent_config_get_model (SubagentConfig *self,
                           const char     *name)
{
  g_autofree char *lower = NULL;
  const char *target;

  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  if (json_object_has_member (self->models, name))
    return json_object_get_object_member (self->models, name);
  lower = g_ascii_strdown (name, -1);
  target = g_hash_table_lookup (self->model_aliases, lower);
  if (target != NULL && json_object_has_member (self->models, target))
    return json_object_get_object_member (self->models, target);
  return NULL;
}

/**
 * subagent_config_list_models:
 * @self: a #SubagentConfig
 *
 * Lists the models configured under `models:`.
 *
 * Returns: (transfer full) (array zero-terminated=1): the names of `models:`, sorted
 *
 * Since: 0.2
 */
char **
subagent_config_list_models (SubagentConfig *self)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GList) names = NULL;

  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  names = g_list_sort (json_object_get_members (self->models), (GCompareFunc) g_strcmp0);
  for (GList *l = names; l != NULL; l = l->next)
    g_strv_builder_add (builder, l->data);
  return g_strv_builder_end (builder);
}

gboolean
_subagent_config_has_models (SubagentConfig *self)
{
  return json_object_get_size (self->models) > 0;
}

/**
 * subagent_config_get_confinement:
 * @self: a #SubagentConfig
 *
 * Gets the confinement of host children.
 *
 * Returns: the confinement of host children (`confinement:`);
 *   %SUBAGENT_CONFINEMENT_DEFAULT when not set
 *
 * Since: 0.2
 */
SubagentConfinement
subagent_config_get_confinement (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), SUBAGENT_CONFINEMENT_DEFAULT);
  return self->confinement;
}

/**
 * subagent_config_get_exclude:
 * @self: a #SubagentConfig
 *
 * The patterns of files copied workspaces leave out (`exclude:`), in the
 * syntax of subagent_secret_path_is_excluded().
 *
 * Returns: (transfer none) (array zero-terminated=1): the patterns;
 *   subagent_secret_exclude_defaults() when not set
 *
 * Since: 0.2
 */
const char * const *
subagent_config_get_exclude (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return self->exclude != NULL ? (const char * const *) self->exclude : subagent_secret_exclude_defaults ();
}

/**
 * subagent_config_get_review_max_file_size:
 * @self: a #SubagentConfig
 *
 * Gets the content limit of review patches in bytes.
 *
 * Returns: the content limit of review patches in bytes (`review.max_file_size`,
 *   default %SUBAGENT_REVIEW_DEFAULT_MAX_FILE_SIZE)
 *
 * Since: 0.2
 */
guint64
subagent_config_get_review_max_file_size (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), SUBAGENT_REVIEW_DEFAULT_MAX_FILE_SIZE);
  return self->review_max_file_size;
}

/**
 * subagent_config_get_routing_policy:
 * @self: a #SubagentConfig
 *
 * Gets the risk policy of `isolation: auto`.
 *
 * Returns: (transfer none): the risk policy of `isolation: auto` (`routing:`,
 *   else the default of #SubagentRoutingPolicy)
 *
 * Since: 0.2
 */
SubagentRoutingPolicy *
subagent_config_get_routing_policy (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return self->routing;
}
