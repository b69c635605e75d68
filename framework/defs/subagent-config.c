/* subagent-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "subagent.h"
#include "subagent-yaml-private.h"
#include "subagent-config-private.h"
#include "subagent-isolation-name-private.h"

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
struct _SubagentConfig
{
  GObject parent_instance;

  char *source;
  char *default_isolation;
  SubagentPermissionMode permission_mode;
  GHashTable *backend_plugins;   /* backend → plugin name */
  GStrv plugin_path;
  GHashTable *sections;          /* plugin section name → JsonObject, as written */
  GHashTable *lines;             /* "section/key" (or "section") → line (GUINT_TO_POINTER) */
  char *auto_git;
  char *auto_other;
  GStrv runner_command;
  guint runner_timeout;
  guint max_parallel;
  guint default_max_iterations;
  guint default_max_tool_calls;
  guint max_agents;
  double max_cost_cents;
  char *approval_sink;
  guint approval_timeout;
  SubagentConfinement confinement;
  GStrv exclude;
  guint64 review_max_file_size;
  SubagentRoutingPolicy *routing;
  GPtrArray *warnings;
  char *model_runner;
  JsonObject *models;            /* name → normalized settings */
  char *default_model;
  GHashTable *model_aliases;     /* lower-case alias → model name */
};

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

static int
g_strcmp0_ptr (const void *a,
               const void *b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
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
      const char *line = json_node_get_string (node);

      /* One string is a shell command line, run as /bin/sh -c LINE. */
      if (strspn (line, " \t\n") == strlen (line))
        return invalid (error, source, key, "a command line or a list of arguments");
      g_strv_builder_add_many (builder, "/bin/sh", "-c", line, NULL);
      g_strfreev (*out);
      *out = g_strv_builder_end (builder);
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
    return invalid (error, source, key, "an isolation mode name (letters, digits, ‘-’ and ‘_’)");
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
    return invalid (error, source, "auto_isolation", "backends other than auto itself");
  return TRUE;
}

/* The line of @section_name (or of its @key) in the file, for messages;
 * @parent names the mapping the section sits in, NULL at the top. */
static void
remember_line (SubagentConfig              *self,
               const SubagentYamlParseInfo *info,
               const char                  *parent,
               const char                  *section_name,
               const char                  *key)
{
  g_autofree char *escaped_parent = parent ? subagent_yaml_pointer_escape (parent) : NULL;
  g_autofree char *escaped_section = subagent_yaml_pointer_escape (section_name);
  g_autofree char *escaped_key = key ? subagent_yaml_pointer_escape (key) : NULL;
  g_autofree char *pointer = g_strconcat (parent ? "/" : "", parent ? escaped_parent : "", "/", escaped_section,
                                          key ? "/" : NULL, escaped_key, NULL);
  SubagentYamlMark mark;

  if (subagent_yaml_parse_info_get_mark (info, pointer, &mark) && mark.line > 0)
    g_hash_table_replace (self->lines, key ? g_strconcat (section_name, "/", key, NULL) : g_strdup (section_name),
                          GUINT_TO_POINTER (mark.line));
}

static void
keep_section (SubagentConfig              *self,
              const SubagentYamlParseInfo *info,
              const char                  *parent,
              const char                  *name,
              JsonObject                  *section)
{
  g_autoptr(GList) members = json_object_get_members (section);

  g_hash_table_replace (self->sections, g_strdup (name), json_object_ref (section));
  remember_line (self, info, parent, name, NULL);
  for (GList *l = members; l != NULL; l = l->next)
    remember_line (self, info, parent, name, l->data);
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
      keep_section (self, info, NULL, name, json_node_get_object (node));
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
    return invalid (error, self->source, key, "a mapping of the sink's options");
  if (g_hash_table_contains (self->sections, self->approval_sink))
    {
      g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                   "%s: the sink is configured twice, in “%s:” and in “%s:”; keep one", self->source,
                   self->approval_sink, key);
      return FALSE;
    }
  keep_section (self, info, "approvals", self->approval_sink, json_node_get_object (node));
  return TRUE;
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
    return invalid (error, source, "review.max_file_size", "a size in bytes, such as 16777216 or \"16MiB\"");
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
      invalid (error, self->source, "permission_mode",
               "one of read-only, prompt, workspace-write, allow, danger-full-access");
      return NULL;
    }

  if (!read_string (object, "confinement", "confinement", self->source, &confinement, error))
    return NULL;
  if (confinement != NULL && !subagent_confinement_from_string (confinement, &self->confinement))
    {
      invalid (error, self->source, "confinement", "one of landlock, none, required");
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
 * subagent_config_get_section:
 * @self: a #SubagentConfig
 * @name: a plugin's section name (its descriptor's `Section=`)
 *
 * Gets the section @name of the configuration, as written: the options of
 * the plugin whose descriptor names it.
 *
 * Returns: (transfer none) (nullable): the section as written, or %NULL
 *
 * Since: 0.2
 */
JsonObject *
subagent_config_get_section (SubagentConfig *self,
                             const char     *name)
{
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  return g_hash_table_lookup (self->sections, name);
}

/**
 * subagent_config_list_sections:
 * @self: a #SubagentConfig
 *
 * Lists the plugin sections of the file, sorted.
 *
 * Returns: (transfer full): the plugin sections of the file, sorted
 *
 * Since: 0.2
 */
GStrv
subagent_config_list_sections (SubagentConfig *self)
{
  g_autofree const char **names = NULL;
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  guint n = 0;

  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), NULL);

  names = (const char **) g_hash_table_get_keys_as_array (self->sections, &n);
  qsort (names, n, sizeof (char *), g_strcmp0_ptr);
  for (guint i = 0; i < n; i++)
    g_strv_builder_add (builder, names[i]);
  return g_strv_builder_end (builder);
}

/**
 * subagent_config_get_line:
 * @self: a #SubagentConfig
 * @section: a plugin section
 * @key: (nullable): a key of it, or %NULL for the section itself
 *
 * Gets the 1-based line of @section (or its @key) in the file, 0 when
 * unknown.
 *
 * Returns: the 1-based line of @section (or its @key) in the file, 0 when unknown
 *
 * Since: 0.2
 */
guint
subagent_config_get_line (SubagentConfig *self,
                          const char     *section,
                          const char     *key)
{
  g_autofree char *id = NULL;

  g_return_val_if_fail (SUBAGENT_IS_CONFIG (self), 0);
  g_return_val_if_fail (section != NULL, 0);

  id = key ? g_strconcat (section, "/", key, NULL) : g_strdup (section);
  return GPOINTER_TO_UINT (g_hash_table_lookup (self->lines, id));
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
