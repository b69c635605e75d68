/* subagent-manager-resolve.c: what a child run resolves before it starts:
 * its definition, isolation provider and options, runner and model, the
 * permission mode it gets and the secret files hidden from it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-config-private.h"
#include "subagent-def-private.h"
#include "subagent-manager-private.h"
#include "subagent-manager-run-private.h"

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
SubagentDef *
_subagent_manager_resolve_def (SubagentManager     *self,
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
JsonObject *
_subagent_manager_merged_isolation_options (SubagentManager    *self,
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
gboolean
_subagent_manager_select_runner (RunState            *state,
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
  g_autoptr(GError) error = NULL;
  JsonObject *model;

  if (parent_model == NULL)
    parent_model = subagent_config_get_default_model (config);
  g_mutex_lock (&self->lock);
  host_runner = !self->runner_is_default;
  g_mutex_unlock (&self->lock);

  if (def_runner != NULL)
    name = def_runner;
  else if (has_argv (subagent_def_get_command (state->def)) || host_runner || !_subagent_config_has_models (config))
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

/* The values of every `secret-file` option (see #SubagentPluginOption) set
 * in a plugin's section of config.yaml, as absolute paths. The framework
 * names no plugin option: plugins declare which of theirs are secret. */
GStrv
_subagent_manager_secret_files (SubagentManager *self)
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

SubagentPermissionMode
_subagent_manager_child_mode (RunState *state)
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

