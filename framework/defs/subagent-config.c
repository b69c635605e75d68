/* subagent-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdarg.h>

#include "subagent.h"
#include "subagent-yaml-private.h"

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
 *   timeout_seconds: 600
 *   max_parallel: 4
 *   max_agents: 128
 * budget:
 *   max_cost_cents: 500           # per parent run
 * approvals:
 *   sink: file                    # file | memory | none
 *   timeout_seconds: 180
 *   hmac_key_file: /etc/subagent/approval.key
 * worktree: { pool_size: 2, keep_branch: false, include_dirty: false }
 * snapshot: { strategy: auto, snapshot_dir: /var/cache/subagent }
 * docker:   { image: busybox-local, binary: docker, network: none, user: "65534:65534" }
 * ```
 *
 * Unknown keys are reported with a warning (and kept in
 * subagent_config_get_warnings()); values of the wrong type or range are
 * %SUBAGENT_CONFIG_ERROR_INVALID_VALUE errors naming the key and the file.
 * The object is immutable once loaded.
 */
struct _SubagentConfig
{
  GObject parent_instance;

  char *source;
  char *default_isolation;
  SubagentPermissionMode permission_mode;
  GHashTable *backend_plugins;   /* backend → plugin name */
  GStrv plugin_path;
  GHashTable *backend_options;   /* backend → JsonObject */
  GStrv runner_command;
  guint runner_timeout;
  guint max_parallel;
  guint max_agents;
  double max_cost_cents;
  char *approval_sink;
  guint approval_timeout;
  char *hmac_key_file;
  GPtrArray *warnings;
};

G_DEFINE_FINAL_TYPE (SubagentConfig, subagent_config, G_TYPE_OBJECT)

/* Config sections named after a backend's option set; `snapshot` serves the
 * directory-snapshot backend. */
static const struct {
  const char *section;
  const char *backend;
  const char * const keys[20];
} backend_sections[] = {
  { "worktree", "worktree", { "pool_size", "keep_branch", "include_dirty", NULL } },
  { "snapshot", "directory-snapshot", { "strategy", "snapshot_dir", NULL } },
  { "docker", "docker", { "image", "binary", "network", "user", "workspace", "host", "context", "transfer",
                          "transfer_max_file", "pids_limit", "nofile", "nproc", "workspace_dir",
                          "keep_branch", "include_dirty", "pool_size", NULL } },
};

static void
subagent_config_finalize (GObject *object)
{
  SubagentConfig *self = SUBAGENT_CONFIG (object);

  g_free (self->source);
  g_free (self->default_isolation);
  g_hash_table_unref (self->backend_plugins);
  g_strfreev (self->plugin_path);
  g_hash_table_unref (self->backend_options);
  g_strfreev (self->runner_command);
  g_free (self->approval_sink);
  g_free (self->hmac_key_file);
  g_ptr_array_unref (self->warnings);
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
  self->backend_options = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                 (GDestroyNotify) json_object_unref);
  self->runner_command = g_new0 (char *, 1);
  self->max_parallel = SUBAGENT_DEFAULT_MAX_PARALLEL;
  self->max_agents = SUBAGENT_DEFAULT_MAX_AGENTS;
  self->approval_sink = g_strdup ("file");
  self->approval_timeout = SUBAGENT_DEFAULT_APPROVAL_TIMEOUT_SECONDS;
  self->warnings = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (self->warnings, NULL);
}

static void
add_warning (SubagentConfig *self,
             const char     *format,
             ...) G_GNUC_PRINTF (2, 3);

static void
add_warning (SubagentConfig *self,
             const char     *format,
             ...)
{
  va_list ap;
  char *message;

  va_start (ap, format);
  message = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_warning ("%s", message);
  /* Keep the array NULL-terminated for the getter. */
  g_ptr_array_insert (self->warnings, self->warnings->len - 1, message);
}

static gboolean
invalid (GError    **error,
         const char *source,
         const char *key,
         const char *expected)
{
  g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
               "%s: “%s” must be %s", source, key, expected);
  return FALSE;
}

static gboolean
read_uint (JsonObject  *object,
           const char  *member,
           const char  *key,
           const char  *source,
           guint       *out,
           GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (json_node_get_value_type (node) != G_TYPE_INT64 ||
      json_node_get_int (node) < 0 || json_node_get_int (node) > G_MAXUINT)
    return invalid (error, source, key, "a non-negative integer");
  *out = (guint) json_node_get_int (node);
  return TRUE;
}

static gboolean
read_string (JsonObject  *object,
             const char  *member,
             const char  *key,
             const char  *source,
             char       **out,
             GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (json_node_get_value_type (node) != G_TYPE_STRING)
    return invalid (error, source, key, "a string");
  g_free (*out);
  *out = g_strdup (json_node_get_string (node));
  return TRUE;
}

/* A list of strings, or one string split like a shell would. */
static gboolean
read_argv (JsonObject  *object,
           const char  *member,
           const char  *key,
           const char  *source,
           GStrv       *out,
           GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      GStrv argv = NULL;
      if (!g_shell_parse_argv (json_node_get_string (node), NULL, &argv, NULL))
        return invalid (error, source, key, "a command line that parses like a shell's");
      g_strfreev (*out);
      *out = argv;
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return invalid (error, source, key, "a list of strings");
  for (guint i = 0; i < json_array_get_length (json_node_get_array (node)); i++)
    {
      JsonNode *item = json_array_get_element (json_node_get_array (node), i);
      if (!JSON_NODE_HOLDS_VALUE (item) || json_node_get_value_type (item) != G_TYPE_STRING)
        return invalid (error, source, key, "a list of strings");
      g_strv_builder_add (builder, json_node_get_string (item));
    }
  g_strfreev (*out);
  *out = g_strv_builder_end (builder);
  return TRUE;
}

static JsonObject *
section (SubagentConfig  *self,
         JsonObject      *root,
         const char      *name,
         const char      *source,
         GError         **error)
{
  JsonNode *node = json_object_get_member (root, name);

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return NULL;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      invalid (error, source, name, "a mapping");
      return NULL;
    }
  return json_node_get_object (node);
}

static void
warn_unknown_keys (SubagentConfig     *self,
                   JsonObject         *object,
                   const char         *prefix,
                   const char * const *known,
                   const char         *source)
{
  g_autoptr(GList) members = json_object_get_members (object);

  for (GList *l = members; l != NULL; l = l->next)
    if (!g_strv_contains (known, l->data))
      add_warning (self, "%s: unknown key “%s%s%s” ignored", source,
                   prefix ? prefix : "", prefix ? "." : "", (const char *) l->data);
}

static gboolean
load_runner (SubagentConfig *self, JsonObject *root, const char *source, GError **error)
{
  static const char * const known[] = { "command", "timeout_seconds", "max_parallel", "max_agents", NULL };
  g_autoptr(GError) local_error = NULL;
  JsonObject *runner = section (self, root, "runner", source, &local_error);

  if (local_error != NULL)
    return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
  if (runner == NULL)
    return TRUE;
  warn_unknown_keys (self, runner, "runner", known, source);
  if (!read_argv (runner, "command", "runner.command", source, &self->runner_command, error) ||
      !read_uint (runner, "timeout_seconds", "runner.timeout_seconds", source, &self->runner_timeout, error) ||
      !read_uint (runner, "max_parallel", "runner.max_parallel", source, &self->max_parallel, error) ||
      !read_uint (runner, "max_agents", "runner.max_agents", source, &self->max_agents, error))
    return FALSE;
  self->max_parallel = MAX (self->max_parallel, 1);
  return TRUE;
}

static gboolean
load_plugins (SubagentConfig *self, JsonObject *root, const char *source, GError **error)
{
  static const char * const known[] = { "path", "backends", NULL };
  g_autoptr(GError) local_error = NULL;
  JsonObject *plugins = section (self, root, "plugins", source, &local_error);
  JsonNode *backends;

  if (local_error != NULL)
    return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
  if (plugins == NULL)
    return TRUE;
  warn_unknown_keys (self, plugins, "plugins", known, source);
  if (!read_argv (plugins, "path", "plugins.path", source, &self->plugin_path, error))
    return FALSE;
  backends = json_object_get_member (plugins, "backends");
  if (backends != NULL && !JSON_NODE_HOLDS_NULL (backends))
    {
      JsonObjectIter iter;
      const char *backend;
      JsonNode *plugin;

      if (!JSON_NODE_HOLDS_OBJECT (backends))
        return invalid (error, source, "plugins.backends", "a mapping of backend to plugin name");
      json_object_iter_init (&iter, json_node_get_object (backends));
      while (json_object_iter_next (&iter, &backend, &plugin))
        {
          if (!JSON_NODE_HOLDS_VALUE (plugin) || json_node_get_value_type (plugin) != G_TYPE_STRING)
            return invalid (error, source, "plugins.backends", "a mapping of backend to plugin name");
          g_hash_table_replace (self->backend_plugins, g_strdup (backend),
                                g_strdup (json_node_get_string (plugin)));
        }
    }
  return TRUE;
}

static gboolean
load_approvals (SubagentConfig *self, JsonObject *root, const char *source, GError **error)
{
  static const char * const known[] = { "sink", "timeout_seconds", "hmac_key_file", NULL };
  g_autoptr(GError) local_error = NULL;
  JsonObject *approvals = section (self, root, "approvals", source, &local_error);

  if (local_error != NULL)
    return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
  if (approvals == NULL)
    return TRUE;
  warn_unknown_keys (self, approvals, "approvals", known, source);
  if (!read_string (approvals, "sink", "approvals.sink", source, &self->approval_sink, error) ||
      !read_uint (approvals, "timeout_seconds", "approvals.timeout_seconds", source, &self->approval_timeout, error) ||
      !read_string (approvals, "hmac_key_file", "approvals.hmac_key_file", source, &self->hmac_key_file, error))
    return FALSE;
  if (self->approval_timeout == 0)
    return invalid (error, source, "approvals.timeout_seconds", "at least 1");
  return TRUE;
}

static gboolean
load_budget (SubagentConfig *self, JsonObject *root, const char *source, GError **error)
{
  static const char * const known[] = { "max_cost_cents", NULL };
  g_autoptr(GError) local_error = NULL;
  JsonObject *budget = section (self, root, "budget", source, &local_error);
  JsonNode *node;

  if (local_error != NULL)
    return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
  if (budget == NULL)
    return TRUE;
  warn_unknown_keys (self, budget, "budget", known, source);
  node = json_object_get_member (budget, "max_cost_cents");
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) ||
      (json_node_get_value_type (node) != G_TYPE_INT64 && json_node_get_value_type (node) != G_TYPE_DOUBLE) ||
      json_node_get_double (node) < 0)
    return invalid (error, source, "budget.max_cost_cents", "a non-negative number");
  self->max_cost_cents = json_node_get_double (node);
  return TRUE;
}

static gboolean
load_backend_sections (SubagentConfig *self, JsonObject *root, const char *source, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (backend_sections); i++)
    {
      g_autoptr(GError) local_error = NULL;
      JsonObject *object = section (self, root, backend_sections[i].section, source, &local_error);

      if (local_error != NULL)
        return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
      if (object == NULL)
        continue;
      warn_unknown_keys (self, object, backend_sections[i].section, backend_sections[i].keys, source);
      g_hash_table_replace (self->backend_options, g_strdup (backend_sections[i].backend),
                            json_object_ref (object));
    }
  return TRUE;
}

/**
 * subagent_config_new:
 *
 * Returns: (transfer full): the defaults: shared isolation, prompt mode,
 *   file approvals with a 180 s timeout, 4 children in parallel
 */
SubagentConfig *
subagent_config_new (void)
{
  return g_object_new (SUBAGENT_TYPE_CONFIG, NULL);
}

/**
 * subagent_config_new_from_json:
 * @object: the parsed configuration
 * @source: (nullable): where it came from, for messages
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the configuration, or %NULL with
 *   %SUBAGENT_CONFIG_ERROR_INVALID_VALUE
 */
SubagentConfig *
subagent_config_new_from_json (JsonObject  *object,
                               const char  *source,
                               GError     **error)
{
  static const char * const known[] = {
    "isolation", "permission_mode", "plugins", "runner", "budget", "approvals",
    "worktree", "snapshot", "docker", NULL
  };
  g_autoptr(SubagentConfig) self = subagent_config_new ();
  g_autofree char *isolation = NULL;
  g_autofree char *mode = NULL;

  g_return_val_if_fail (object != NULL, NULL);

  self->source = g_strdup (source ? source : "configuration");
  warn_unknown_keys (self, object, NULL, known, self->source);

  if (!read_string (object, "isolation", "isolation", self->source, &isolation, error))
    return NULL;
  if (isolation != NULL)
    {
      gboolean deprecated = FALSE;
      const char *normalized = subagent_isolation_normalize (isolation, &deprecated);

      if (normalized == NULL)
        {
          invalid (error, self->source, "isolation",
                   "one of shared, worktree, directory-snapshot, docker, auto");
          return NULL;
        }
      if (deprecated)
        subagent_isolation_warn_deprecated_alias (isolation);
      g_free (self->default_isolation);
      self->default_isolation = g_strdup (normalized);
    }
  if (!read_string (object, "permission_mode", "permission_mode", self->source, &mode, error))
    return NULL;
  if (mode != NULL &&
      (!subagent_permission_mode_from_string (mode, &self->permission_mode) ||
       self->permission_mode == SUBAGENT_PERMISSION_MODE_INHERIT))
    {
      invalid (error, self->source, "permission_mode",
               "one of read-only, prompt, workspace-write, allow, danger-full-access");
      return NULL;
    }

  if (!load_plugins (self, object, self->source, error) ||
      !load_runner (self, object, self->source, error) ||
      !load_budget (self, object, self->source, error) ||
      !load_approvals (self, object, self->source, error) ||
      !load_backend_sections (self, object, self->source, error))
    return NULL;

  return g_steal_pointer (&self);
}

/**
 * subagent_config_load_file:
 * @path: a YAML (or JSON) file
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the configuration
 */
SubagentConfig *
subagent_config_load_file (const char  *path,
                           GError     **error)
{
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (path != NULL, NULL);

  node = subagent_yaml_parse_file (path, NULL, &local_error);
  if (node == NULL)
    {
      g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_PARSE,
                   "Cannot read the configuration %s: %s", path, local_error->message);
      return NULL;
    }
  if (JSON_NODE_HOLDS_NULL (node))
    {
      g_autoptr(SubagentConfig) self = subagent_config_new ();
      self->source = g_strdup (path);
      return g_steal_pointer (&self);
    }
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_PARSE,
                   "%s: the configuration must be a mapping of keys to values", path);
      return NULL;
    }
  return subagent_config_new_from_json (json_node_get_object (node), path, error);
}

/**
 * subagent_config_load_for_root:
 * @root: a workspace root
 * @error: return location for a #GError
 *
 * Loads `SUBAGENT_CONFIG` when set, else `<root>/.subagent/config.yaml`; a
 * missing file gives the defaults.
 *
 * Returns: (transfer full) (nullable): the configuration
 */
SubagentConfig *
subagent_config_load_for_root (const char  *root,
                               GError     **error)
{
  const char *env = g_getenv ("SUBAGENT_CONFIG");
  g_autofree char *path = NULL;

  if (env != NULL && *env != '\0')
    return subagent_config_load_file (env, error);

  g_return_val_if_fail (root != NULL, NULL);
  path = g_build_filename (root, ".subagent", "config.yaml", NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_free (path);
      path = g_build_filename (root, ".subagent", "config.yml", NULL);
      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        return subagent_config_new ();
    }
  return subagent_config_load_file (path, error);
}

/**
 * subagent_config_get_source:
 * @self: a #SubagentConfig
 *
 * Returns: (transfer none) (nullable): the file it was loaded from
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
 * Returns: (transfer none): the isolation mode of runs that name none
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
 * Returns: the parent's permission mode
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
 * Returns: (transfer none) (nullable): the plugin chosen for @backend, or
 *   %NULL to take whichever plugin provides it
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
 * Returns: (transfer none) (array zero-terminated=1): extra plugin directories
 */
const char * const *
subagent_config_get_plugin_path (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return (const char * const *) self->plugin_path;
}

/**
 * subagent_config_get_backend_options:
 * @self: a #SubagentConfig
 * @backend: a backend name such as `worktree` or `directory-snapshot`
 *
 * Returns: (transfer none) (nullable): the backend's options section
 */
JsonObject *
subagent_config_get_backend_options (SubagentConfig *self,
                                     const char     *backend)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return g_hash_table_lookup (self->backend_options, backend);
}

/**
 * subagent_config_get_runner_command:
 * @self: a #SubagentConfig
 *
 * Returns: (transfer none) (array zero-terminated=1): the child program of
 *   definitions that name none (may be empty)
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
 * Returns: the default wall-clock limit of a run in seconds (0: none)
 */
guint
subagent_config_get_runner_timeout (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), 0);
  return self->runner_timeout;
}

/**
 * subagent_config_get_max_parallel:
 * @self: a #SubagentConfig
 *
 * Returns: how many children run at once (at least 1)
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
 * Returns: the total number of children a parent run may start
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
 * Returns: the cost budget of a parent run (0: none)
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
 * Returns: (transfer none): the approval store backend: `file`, `memory` or `none`
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
 * Returns: seconds an approval request waits before it times out
 */
guint
subagent_config_get_approval_timeout (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), SUBAGENT_DEFAULT_APPROVAL_TIMEOUT_SECONDS);
  return self->approval_timeout;
}

/**
 * subagent_config_get_hmac_key_file:
 * @self: a #SubagentConfig
 *
 * Returns: (transfer none) (nullable): a key file (mode 0600) that signs approval files
 */
const char *
subagent_config_get_hmac_key_file (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return self->hmac_key_file;
}

/**
 * subagent_config_get_warnings:
 * @self: a #SubagentConfig
 *
 * Returns: (transfer none) (array zero-terminated=1): what loading warned about
 */
const char * const *
subagent_config_get_warnings (SubagentConfig *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  return (const char * const *) self->warnings->pdata;
}
