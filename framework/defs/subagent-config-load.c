/* subagent-config-load.c: reading config.yaml into a #SubagentConfig:
 * each framework section checked, plugin sections kept as written.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "subagent.h"
#include "subagent-yaml-private.h"
#include "subagent-config-private.h"
#include "subagent-config-struct-private.h"
#include "subagent-isolation-name-private.h"

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

gboolean
_subagent_config_invalid (GError    **error,
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
    return _subagent_config_invalid (error, source, key, "a non-negative integer");
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
    return _subagent_config_invalid (error, source, key, "a string");
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
      const char *line = json_node_get_string (node);

      /* One string is a shell command line, run as /bin/sh -c LINE. */
      if (strspn (line, " \t\n") == strlen (line))
        return _subagent_config_invalid (error, source, key, "a command line or a list of arguments");
      g_strv_builder_add_many (builder, "/bin/sh", "-c", line, NULL);
      g_strfreev (*out);
      *out = g_strv_builder_end (builder);
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return _subagent_config_invalid (error, source, key, "a list of strings");
  for (guint i = 0; i < json_array_get_length (json_node_get_array (node)); i++)
    {
      JsonNode *item = json_array_get_element (json_node_get_array (node), i);
      if (!JSON_NODE_HOLDS_VALUE (item) || json_node_get_value_type (item) != G_TYPE_STRING)
        return _subagent_config_invalid (error, source, key, "a list of strings");
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
      _subagent_config_invalid (error, source, name, "a mapping");
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
  static const char * const known[] = { "command", "timeout_seconds", "max_parallel", "max_agents",
                                        "max_iterations", "max_tool_calls", "model_runner", NULL };
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
      !read_uint (runner, "max_agents", "runner.max_agents", source, &self->max_agents, error) ||
      !read_uint (runner, "max_iterations", "runner.max_iterations", source, &self->default_max_iterations, error) ||
      !read_uint (runner, "max_tool_calls", "runner.max_tool_calls", source, &self->default_max_tool_calls, error) ||
      !read_string (runner, "model_runner", "runner.model_runner", source, &self->model_runner, error))
    return FALSE;
  self->max_parallel = MAX (self->max_parallel, 1);
  self->default_max_iterations = MAX (self->default_max_iterations, 1);
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
        return _subagent_config_invalid (error, source, "plugins.backends", "a mapping of backend to plugin name");
      json_object_iter_init (&iter, json_node_get_object (backends));
      while (json_object_iter_next (&iter, &backend, &plugin))
        {
          if (!JSON_NODE_HOLDS_VALUE (plugin) || json_node_get_value_type (plugin) != G_TYPE_STRING)
            return _subagent_config_invalid (error, source, "plugins.backends", "a mapping of backend to plugin name");
          g_hash_table_replace (self->backend_plugins, g_strdup (backend),
                                g_strdup (json_node_get_string (plugin)));
        }
    }
  return TRUE;
}

static gboolean
load_approvals (SubagentConfig *self, JsonObject *root, const char *source, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  JsonObject *approvals = section (self, root, "approvals", source, &local_error);

  if (local_error != NULL)
    return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
  if (approvals == NULL)
    return TRUE;
  if (!read_string (approvals, "sink", "approvals.sink", source, &self->approval_sink, error))
    return FALSE;
  {
    /* The sink's own section may sit here too (keep_nested_sink_section()). */
    const char * const known[] = { "sink", "timeout_seconds", self->approval_sink, NULL };

    warn_unknown_keys (self, approvals, "approvals", known, source);
  }
  if (!read_uint (approvals, "timeout_seconds", "approvals.timeout_seconds", source, &self->approval_timeout, error))
    return FALSE;
  if (self->approval_timeout == 0)
    return _subagent_config_invalid (error, source, "approvals.timeout_seconds", "at least 1");
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
    return _subagent_config_invalid (error, source, "budget.max_cost_cents", "a non-negative number");
  self->max_cost_cents = json_node_get_double (node);
  return TRUE;
}

/* A mode name as written (the registry knows which exist). */
static gboolean
read_mode (JsonObject  *object,
           const char  *member,
           const char  *key,
           const char  *source,
           char       **out,
           GError     **error)
{
  g_autofree char *text = NULL;
  char normalized[SUBAGENT_ISOLATION_NAME_MAX + 1];

  if (!read_string (object, member, key, source, &text, error))
    return FALSE;
  if (text == NULL)
    return TRUE;
  if (!_subagent_isolation_normalize_to (text, normalized, NULL))
    return _subagent_config_invalid (error, source, key, "an isolation mode name (letters, digits, ‘-’ and ‘_’)");
  g_free (*out);
  *out = g_strdup (normalized);
  return TRUE;
}

static gboolean
load_auto (SubagentConfig *self, JsonObject *root, const char *source, GError **error)
{
  static const char * const known[] = { "git", "other", NULL };
  g_autoptr(GError) local_error = NULL;
  JsonObject *object = section (self, root, "auto_isolation", source, &local_error);

  if (local_error != NULL)
    return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
  if (object == NULL)
    return TRUE;
  warn_unknown_keys (self, object, "auto_isolation", known, source);
  if (!read_mode (object, "git", "auto_isolation.git", source, &self->auto_git, error) ||
      !read_mode (object, "other", "auto_isolation.other", source, &self->auto_other, error))
    return FALSE;
  if (g_strcmp0 (self->auto_git, SUBAGENT_ISOLATION_AUTO) == 0 || g_strcmp0 (self->auto_other, SUBAGENT_ISOLATION_AUTO) == 0)
    return _subagent_config_invalid (error, source, "auto_isolation", "backends other than auto itself");
  return TRUE;
}

/* Every top-level mapping the framework does not know is a plugin's section. */
static void
keep_plugin_sections (SubagentConfig              *self,
                      JsonObject                  *root,
                      const char * const          *known,
                      const SubagentYamlParseInfo *info)
{
  JsonObjectIter iter;
  const char *name;
  JsonNode *node;

  json_object_iter_init (&iter, root);
  while (json_object_iter_next (&iter, &name, &node))
    {
      if (g_strv_contains (known, name))
        continue;
      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          add_warning (self, "%s: unknown key “%s” ignored (a plugin's section must be a mapping)",
                       self->source, name);
          continue;
        }
      _subagent_config_keep_section (self, info, NULL, name, json_node_get_object (node));
    }
}

/* The approval sink's section may also sit under `approvals:`, named as
 * the sink (`approvals: {sink: postgres, postgres: {conninfo: …}}`): it is
 * the same plugin section as a top-level `postgres:`, which it must not
 * repeat. */
static gboolean
keep_nested_sink_section (SubagentConfig              *self,
                          JsonObject                  *root,
                          const SubagentYamlParseInfo *info,
                          GError                     **error)
{
  JsonNode *approvals = json_object_get_member (root, "approvals");
  JsonNode *node;
  g_autofree char *key = NULL;

  if (self->approval_sink == NULL || approvals == NULL || !JSON_NODE_HOLDS_OBJECT (approvals) ||
      (node = json_object_get_member (json_node_get_object (approvals), self->approval_sink)) == NULL)
    return TRUE;
  key = g_strconcat ("approvals.", self->approval_sink, NULL);
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return _subagent_config_invalid (error, self->source, key, "a mapping of the sink's options");
  if (g_hash_table_contains (self->sections, self->approval_sink))
    {
      g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                   "%s: the sink is configured twice, in “%s:” and in “%s:”; keep one", self->source,
                   self->approval_sink, key);
      return FALSE;
    }
  _subagent_config_keep_section (self, info, "approvals", self->approval_sink, json_node_get_object (node));
  return TRUE;
}

static SubagentConfig *config_from_json (JsonObject                  *object,
                                         const char                  *source,
                                         const SubagentYamlParseInfo *info,
                                         GError                     **error);

/**
 * subagent_config_new_from_json:
 * @object: the parsed configuration
 * @source: (nullable): where it came from, for messages
 * @error: return location for a #GError
 *
 * Creates a new #SubagentConfig.
 *
 * Returns: (transfer full) (nullable): the configuration, or %NULL with
 *   %SUBAGENT_CONFIG_ERROR_INVALID_VALUE
 *
 * Since: 0.2
 */
SubagentConfig *
subagent_config_new_from_json (JsonObject  *object,
                               const char  *source,
                               GError     **error)
{
  g_return_val_if_fail (object != NULL, NULL);

  return config_from_json (object, source, NULL, error);
}

/* A byte count: a whole number, or a string with a unit such as "16MiB",
 * "512 MiB", "2G" (powers of 1024) or "64kB" (powers of 1000). */
gboolean
_subagent_config_parse_size (JsonNode *node,
                             guint64  *out)
{
  static const struct { const char *unit; guint64 factor; } units[] = {
    { "", 1 }, { "b", 1 }, { "k", 1024 }, { "kib", 1024 }, { "kb", 1000 },
    { "m", 1024 * 1024 }, { "mib", 1024 * 1024 }, { "mb", 1000 * 1000 },
    { "g", G_GUINT64_CONSTANT (1) << 30 }, { "gib", G_GUINT64_CONSTANT (1) << 30 },
    { "gb", G_GUINT64_CONSTANT (1000000000) },
  };
  g_autofree char *unit = NULL;
  const char *text;
  char *end = NULL;
  double value;

  if (!JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    {
      if (json_node_get_int (node) < 0)
        return FALSE;
      *out = (guint64) json_node_get_int (node);
      return TRUE;
    }
  if (json_node_get_value_type (node) != G_TYPE_STRING)
    return FALSE;
  text = json_node_get_string (node);
  value = g_ascii_strtod (text, &end);
  if (end == text || value < 0)
    return FALSE;
  unit = g_ascii_strdown (end, -1);
  g_strstrip (unit);
  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_str_equal (unit, units[i].unit))
      {
        if (value * units[i].factor > (double) G_MAXINT64)
          return FALSE;
        *out = (guint64) (value * units[i].factor);
        return TRUE;
      }
  return FALSE;
}

static gboolean
load_review (SubagentConfig *self, JsonObject *root, const char *source, GError **error)
{
  static const char * const known[] = { "max_file_size", NULL };
  g_autoptr(GError) local_error = NULL;
  JsonObject *review = section (self, root, "review", source, &local_error);
  JsonNode *node;

  if (local_error != NULL)
    return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
  if (review == NULL)
    return TRUE;
  warn_unknown_keys (self, review, "review", known, source);
  node = json_object_get_member (review, "max_file_size");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node) &&
      !_subagent_config_parse_size (node, &self->review_max_file_size))
    return _subagent_config_invalid (error, source, "review.max_file_size",
                                     "a size in bytes, such as 16777216 or \"16MiB\"");
  return TRUE;
}

static gboolean
load_routing (SubagentConfig *self, JsonObject *root, const char *source, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  JsonObject *routing = section (self, root, "routing", source, &local_error);
  SubagentRoutingPolicy *policy;

  if (local_error != NULL)
    return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
  if (routing == NULL)
    return TRUE;
  if ((policy = subagent_routing_policy_new_from_json (routing, source, error)) == NULL)
    return FALSE;
  g_set_object (&self->routing, policy);
  g_object_unref (policy);
  return TRUE;
}

static SubagentConfig *
config_from_json (JsonObject                  *object,
                  const char                  *source,
                  const SubagentYamlParseInfo *info,
                  GError                     **error)
{
  static const char * const known[] = {
    "isolation", "permission_mode", "plugins", "runner", "budget", "approvals", "auto_isolation",
    "confinement", "exclude", "review", "routing", "models", "default_model", "model_aliases", NULL
  };
  g_autoptr(SubagentConfig) self = subagent_config_new ();
  g_autofree char *mode = NULL;
  g_autofree char *confinement = NULL;

  self->source = g_strdup (source ? source : "configuration");
  keep_plugin_sections (self, object, known, info);

  /* Spelling only: which modes exist is the plugin registry's to say. */
  if (!read_mode (object, "isolation", "isolation", self->source, &self->default_isolation, error))
    return NULL;
  if (!read_string (object, "permission_mode", "permission_mode", self->source, &mode, error))
    return NULL;
  if (mode != NULL &&
      (!subagent_permission_mode_from_string (mode, &self->permission_mode) ||
       self->permission_mode == SUBAGENT_PERMISSION_MODE_INHERIT))
    {
      _subagent_config_invalid (error, self->source, "permission_mode",
               "one of read-only, prompt, workspace-write, allow, danger-full-access");
      return NULL;
    }

  if (!read_string (object, "confinement", "confinement", self->source, &confinement, error))
    return NULL;
  if (confinement != NULL && !subagent_confinement_from_string (confinement, &self->confinement))
    {
      _subagent_config_invalid (error, self->source, "confinement", "one of landlock, none, required");
      return NULL;
    }
  if (json_object_has_member (object, "exclude") &&
      !read_argv (object, "exclude", "exclude", self->source, &self->exclude, error))
    return NULL;

  if (!load_plugins (self, object, self->source, error) ||
      !load_runner (self, object, self->source, error) ||
      !load_budget (self, object, self->source, error) ||
      !load_approvals (self, object, self->source, error) ||
      !keep_nested_sink_section (self, object, info, error) ||
      !load_auto (self, object, self->source, error) ||
      !load_review (self, object, self->source, error) ||
      !load_routing (self, object, self->source, error) ||
      !_subagent_config_load_models (object, self->source, &self->models, &self->default_model,
                                     self->model_aliases, error))
    return NULL;

  return g_steal_pointer (&self);
}

/**
 * subagent_config_load_file:
 * @path: a YAML (or JSON) file
 * @error: return location for a #GError
 *
 * Loads the configuration.
 *
 * Returns: (transfer full) (nullable): the configuration
 *
 * Since: 0.2
 */
SubagentConfig *
subagent_config_load_file (const char  *path,
                           GError     **error)
{
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) local_error = NULL;
  g_auto(SubagentYamlParseInfo) info = { .want_marks = TRUE };

  g_return_val_if_fail (path != NULL, NULL);

  node = subagent_yaml_parse_file (path, &info, &local_error);
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
  return config_from_json (json_node_get_object (node), path, &info, error);
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
