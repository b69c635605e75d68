/* subagent-def.c: an immutable subagent definition: the object, its
 * properties, constructors and JSON form (getters: subagent-def-getters.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-def-private.h"
#include "subagent-isolation-name-private.h"
#include "subagent-json-private.h"
#include "subagent-def-struct-private.h"

/**
 * SubagentDef:
 *
 * What a subagent is: its prompt, model, limits, tools and isolation.
 *
 * A definition is immutable: every field is a construct-only property.
 * Definitions come from files (see [class@Catalog]) or from code
 * ([ctor@Def.new], [ctor@Def.new_from_json], or g_object_new() with
 * properties). Unset fields keep the defaults of the reference design:
 * five iterations, eight tool calls, depth one, `shared` isolation, all
 * of the parent's tools.
 */
G_DEFINE_FINAL_TYPE (SubagentDef, subagent_def, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_NAME,
  PROP_DESCRIPTION,
  PROP_SYSTEM_PROMPT,
  PROP_MODEL,
  PROP_PERMISSION_MODE,
  PROP_MAX_ITERATIONS,
  PROP_MAX_TOOL_CALLS,
  PROP_TOOL_WHITELIST,
  PROP_DISALLOWED_TOOLS,
  PROP_MAX_DEPTH,
  PROP_ISOLATION,
  PROP_BACKGROUND,
  PROP_INTERACTIVE,
  PROP_EFFORT,
  PROP_COMMAND,
  PROP_WRITE_SCOPE,
  PROP_CPU_QUOTA,
  PROP_MEMORY_LIMIT,
  PROP_TIMEOUT_SECONDS,
  PROP_MAX_COST_CENTS,
  PROP_MAX_FOLLOW_UPS,
  PROP_NETWORK,
  PROP_RUNNER,
  PROP_CONFINEMENT,
  PROP_SOURCE_PATH,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define NAME_MAX_LEN 128

static void
subagent_def_finalize (GObject *object)
{
  SubagentDef *self = SUBAGENT_DEF (object);

  g_free (self->name);
  g_free (self->description);
  g_free (self->system_prompt);
  g_free (self->model);
  g_strfreev (self->tool_whitelist);
  g_strfreev (self->disallowed_tools);
  g_free (self->isolation);
  g_free (self->effort);
  g_strfreev (self->command);
  g_strfreev (self->write_scope);
  g_free (self->memory_limit);
  g_free (self->network);
  g_free (self->runner);
  g_free (self->source_path);

  G_OBJECT_CLASS (subagent_def_parent_class)->finalize (object);
}

static void
subagent_def_constructed (GObject *object)
{
  SubagentDef *self = SUBAGENT_DEF (object);

  G_OBJECT_CLASS (subagent_def_parent_class)->constructed (object);

  if (!subagent_def_name_is_valid (self->name))
    g_critical ("SubagentDef: name “%s” is not valid; use 1 to %d of [A-Za-z0-9_-]",
                self->name ? self->name : "(null)", NAME_MAX_LEN);
  if (!subagent_def_isolation_is_known (self->isolation))
    g_critical ("SubagentDef “%s”: isolation “%s” cannot name a mode: use letters, digits, "
                "‘-’ and ‘_’", self->name, self->isolation);
}

static void
subagent_def_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  SubagentDef *self = SUBAGENT_DEF (object);

  switch (prop_id)
    {
    case PROP_NAME: g_value_set_string (value, self->name); break;
    case PROP_DESCRIPTION: g_value_set_string (value, self->description); break;
    case PROP_SYSTEM_PROMPT: g_value_set_string (value, self->system_prompt); break;
    case PROP_MODEL: g_value_set_string (value, self->model); break;
    case PROP_PERMISSION_MODE: g_value_set_enum (value, self->permission_mode); break;
    case PROP_MAX_ITERATIONS: g_value_set_uint (value, self->max_iterations); break;
    case PROP_MAX_TOOL_CALLS: g_value_set_uint (value, self->max_tool_calls); break;
    case PROP_TOOL_WHITELIST: g_value_set_boxed (value, self->tool_whitelist); break;
    case PROP_DISALLOWED_TOOLS: g_value_set_boxed (value, self->disallowed_tools); break;
    case PROP_MAX_DEPTH: g_value_set_uint (value, self->max_depth); break;
    case PROP_ISOLATION: g_value_set_string (value, self->isolation); break;
    case PROP_BACKGROUND: g_value_set_boolean (value, self->background); break;
    case PROP_INTERACTIVE: g_value_set_boolean (value, self->interactive); break;
    case PROP_EFFORT: g_value_set_string (value, self->effort); break;
    case PROP_COMMAND: g_value_set_boxed (value, self->command); break;
    case PROP_WRITE_SCOPE: g_value_set_boxed (value, self->write_scope); break;
    case PROP_CPU_QUOTA: g_value_set_double (value, self->cpu_quota); break;
    case PROP_MEMORY_LIMIT: g_value_set_string (value, self->memory_limit); break;
    case PROP_TIMEOUT_SECONDS: g_value_set_uint (value, self->timeout_seconds); break;
    case PROP_MAX_COST_CENTS: g_value_set_double (value, self->max_cost_cents); break;
    case PROP_MAX_FOLLOW_UPS: g_value_set_uint (value, self->max_follow_ups); break;
    case PROP_NETWORK: g_value_set_string (value, self->network); break;
    case PROP_RUNNER: g_value_set_string (value, self->runner); break;
    case PROP_CONFINEMENT: g_value_set_enum (value, self->confinement); break;
    case PROP_SOURCE_PATH: g_value_set_string (value, self->source_path); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* Empty strings mean "unset" for the nullable text fields. */
static char *
dup_or_null (const GValue *value)
{
  const char *s = g_value_get_string (value);

  return (s != NULL && *s != '\0') ? g_strdup (s) : NULL;
}

static void
subagent_def_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  SubagentDef *self = SUBAGENT_DEF (object);
  const char *s;

  switch (prop_id)
    {
    case PROP_NAME: self->name = g_value_dup_string (value); break;
    case PROP_DESCRIPTION:
      s = g_value_get_string (value);
      self->description = g_strdup (s ? s : "");
      break;
    case PROP_SYSTEM_PROMPT:
      s = g_value_get_string (value);
      self->system_prompt = g_strdup (s ? s : "");
      break;
    case PROP_MODEL: self->model = dup_or_null (value); break;
    case PROP_PERMISSION_MODE: self->permission_mode = g_value_get_enum (value); break;
    case PROP_MAX_ITERATIONS: self->max_iterations = g_value_get_uint (value); break;
    case PROP_MAX_TOOL_CALLS: self->max_tool_calls = g_value_get_uint (value); break;
    case PROP_TOOL_WHITELIST: self->tool_whitelist = g_value_dup_boxed (value); break;
    case PROP_DISALLOWED_TOOLS: self->disallowed_tools = g_value_dup_boxed (value); break;
    case PROP_MAX_DEPTH: self->max_depth = g_value_get_uint (value); break;
    case PROP_ISOLATION:
      s = g_value_get_string (value);
      self->isolation = g_strdup (s && *s ? s : SUBAGENT_DEF_DEFAULT_ISOLATION);
      break;
    case PROP_BACKGROUND: self->background = g_value_get_boolean (value); break;
    case PROP_INTERACTIVE: self->interactive = g_value_get_boolean (value); break;
    case PROP_EFFORT: self->effort = dup_or_null (value); break;
    case PROP_COMMAND: self->command = g_value_dup_boxed (value); break;
    case PROP_WRITE_SCOPE: self->write_scope = g_value_dup_boxed (value); break;
    case PROP_CPU_QUOTA: self->cpu_quota = g_value_get_double (value); break;
    case PROP_MEMORY_LIMIT: self->memory_limit = dup_or_null (value); break;
    case PROP_TIMEOUT_SECONDS: self->timeout_seconds = g_value_get_uint (value); break;
    case PROP_MAX_COST_CENTS: self->max_cost_cents = g_value_get_double (value); break;
    case PROP_MAX_FOLLOW_UPS: self->max_follow_ups = g_value_get_uint (value); break;
    case PROP_NETWORK: self->network = dup_or_null (value); break;
    case PROP_RUNNER: self->runner = dup_or_null (value); break;
    case PROP_CONFINEMENT: self->confinement = g_value_get_enum (value); break;
    case PROP_SOURCE_PATH: self->source_path = dup_or_null (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

#define CONSTRUCT_FLAGS (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS)

static void
subagent_def_class_init (SubagentDefClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = subagent_def_finalize;
  object_class->constructed = subagent_def_constructed;
  object_class->get_property = subagent_def_get_property;
  object_class->set_property = subagent_def_set_property;

  /**
   * SubagentDef:name:
   *
   * The definition's name: 1 to 128 of `[A-Za-z0-9_-]`. Lookups ignore case
   * and treat `-` and `_` alike.
   */
  properties[PROP_NAME] = g_param_spec_string ("name", NULL, NULL, NULL, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:description:
   *
   * What the subagent is for, shown to the parent when it picks one.
   */
  properties[PROP_DESCRIPTION] = g_param_spec_string ("description", NULL, NULL, "", CONSTRUCT_FLAGS);
  /**
   * SubagentDef:system-prompt:
   *
   * The child's system prompt (the body of a `.md` definition).
   */
  properties[PROP_SYSTEM_PROMPT] = g_param_spec_string ("system-prompt", NULL, NULL, "", CONSTRUCT_FLAGS);
  /**
   * SubagentDef:model:
   *
   * The model the child uses, or %NULL for the parent's.
   */
  properties[PROP_MODEL] = g_param_spec_string ("model", NULL, NULL, NULL, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:permission-mode:
   *
   * The mode the child asks for; it is clamped to the parent's.
   */
  properties[PROP_PERMISSION_MODE] =
    g_param_spec_enum ("permission-mode", NULL, NULL, SUBAGENT_TYPE_PERMISSION_MODE,
                       SUBAGENT_PERMISSION_MODE_INHERIT, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:max-iterations:
   *
   * The most agent-loop iterations one run of the child may take.
   */
  properties[PROP_MAX_ITERATIONS] =
    g_param_spec_uint ("max-iterations", NULL, NULL, 1, G_MAXINT,
                       SUBAGENT_DEF_DEFAULT_MAX_ITERATIONS, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:max-tool-calls:
   *
   * The most tool calls one run of the child may make.
   */
  properties[PROP_MAX_TOOL_CALLS] =
    g_param_spec_uint ("max-tool-calls", NULL, NULL, 0, G_MAXINT,
                       SUBAGENT_DEF_DEFAULT_MAX_TOOL_CALLS, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:tool-whitelist: (type GStrv)
   *
   * The parent tools the child may use, or %NULL for all of them.
   */
  properties[PROP_TOOL_WHITELIST] = g_param_spec_boxed ("tool-whitelist", NULL, NULL, G_TYPE_STRV, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:disallowed-tools: (type GStrv)
   *
   * Tools the child may never use, or %NULL.
   */
  properties[PROP_DISALLOWED_TOOLS] = g_param_spec_boxed ("disallowed-tools", NULL, NULL, G_TYPE_STRV, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:max-depth:
   *
   * How many delegation levels deep the subagent may be started.
   */
  properties[PROP_MAX_DEPTH] =
    g_param_spec_uint ("max-depth", NULL, NULL, 1, G_MAXINT,
                       SUBAGENT_DEF_DEFAULT_MAX_DEPTH, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:isolation:
   *
   * The workspace isolation: `shared`, `auto`, or a backend an installed
   * plugin provides (its descriptor's `Provides=`), as spelled here; which
   * exist is checked when the definition runs (and by `subagentctl defs --check`).
   */
  properties[PROP_ISOLATION] =
    g_param_spec_string ("isolation", NULL, NULL, SUBAGENT_DEF_DEFAULT_ISOLATION, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:background:
   *
   * Whether the parent should not wait for the child.
   */
  properties[PROP_BACKGROUND] = g_param_spec_boolean ("background", NULL, NULL, FALSE, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:interactive:
   *
   * Whether the child speaks the approval protocol: its stdin stays open
   * after the task so that verdicts reach it (`SUBAGENT_STDIN_MODE=interactive`,
   * `docs/child-protocol.md`).
   *
   * Since: 0.2
   */
  properties[PROP_INTERACTIVE] = g_param_spec_boolean ("interactive", NULL, NULL, FALSE, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:effort:
   *
   * A reasoning-effort hint for the model (such as `low` or `high`), or %NULL.
   */
  properties[PROP_EFFORT] = g_param_spec_string ("effort", NULL, NULL, NULL, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:command: (type GStrv)
   *
   * The program (argv) [class@CommandRunner] starts, or %NULL.
   */
  properties[PROP_COMMAND] = g_param_spec_boxed ("command", NULL, NULL, G_TYPE_STRV, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:write-scope: (type GStrv)
   *
   * Relative paths, names or extensions the child may write, or %NULL for
   * no restriction beyond the isolation.
   */
  properties[PROP_WRITE_SCOPE] = g_param_spec_boxed ("write-scope", NULL, NULL, G_TYPE_STRV, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:cpu-quota:
   *
   * CPUs the isolation may give the child (such as 1.5); 0 means no quota.
   */
  properties[PROP_CPU_QUOTA] = g_param_spec_double ("cpu-quota", NULL, NULL, 0, 1024, 0, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:memory-limit:
   *
   * A memory limit such as `512m` or `2g`, or %NULL for none.
   */
  properties[PROP_MEMORY_LIMIT] = g_param_spec_string ("memory-limit", NULL, NULL, NULL, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:timeout-seconds:
   *
   * The wall-clock limit of one run in seconds; 0 means none.
   */
  properties[PROP_TIMEOUT_SECONDS] =
    g_param_spec_uint ("timeout-seconds", NULL, NULL, 0, G_MAXINT, 0, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:max-cost-cents:
   *
   * The cost budget of one run in cents; 0 means no budget.
   */
  properties[PROP_MAX_COST_CENTS] =
    g_param_spec_double ("max-cost-cents", NULL, NULL, 0, G_MAXDOUBLE, 0, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:max-follow-ups:
   *
   * How many follow-up messages a finished child may receive.
   */
  properties[PROP_MAX_FOLLOW_UPS] =
    g_param_spec_uint ("max-follow-ups", NULL, NULL, 0, G_MAXINT,
                       SUBAGENT_DEF_DEFAULT_MAX_FOLLOW_UPS, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:network:
   *
   * The network a container child joins, or %NULL, which means `none`.
   */
  properties[PROP_NETWORK] = g_param_spec_string ("network", NULL, NULL, NULL, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:runner:
   *
   * The runner that runs the child, by name: `command`, or a backend of a
   * runner plugin such as `openai-chat`. %NULL picks one: the command runner
   * for a definition with a `command`, the configured model runner for one
   * with a `model`.
   *
   * Since: 0.2
   */
  properties[PROP_RUNNER] = g_param_spec_string ("runner", NULL, NULL, NULL, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:confinement:
   *
   * How the child is confined when it runs on the host (`confinement:`);
   * %SUBAGENT_CONFINEMENT_DEFAULT leaves it to the configuration. An
   * explicit `network: none` also refuses TCP to a confined host child.
   */
  properties[PROP_CONFINEMENT] =
    g_param_spec_enum ("confinement", NULL, NULL, SUBAGENT_TYPE_CONFINEMENT,
                       SUBAGENT_CONFINEMENT_DEFAULT, CONSTRUCT_FLAGS);
  /**
   * SubagentDef:source-path:
   *
   * The file the definition was read from, or %NULL for one made in code.
   */
  properties[PROP_SOURCE_PATH] = g_param_spec_string ("source-path", NULL, NULL, NULL, CONSTRUCT_FLAGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_def_init (SubagentDef *self)
{
}

/* Spelling only, on purpose: the catalog must not depend on which isolation
 * plugins are installed; the manager (and `subagentctl defs --check`) ask
 * the plugin registry whether the mode exists here. */
gboolean
subagent_def_isolation_is_known (const char *mode)
{
  char normalized[SUBAGENT_ISOLATION_NAME_MAX + 1];

  return mode != NULL && _subagent_isolation_normalize_to (mode, normalized, NULL) &&
         g_str_equal (normalized, mode);
}

/**
 * subagent_def_name_is_valid:
 * @name: (nullable): a candidate definition name
 *
 * Names become parts of tool names, run ids and paths, so they are kept to
 * 1 to 128 characters of `[A-Za-z0-9_-]`.
 *
 * Returns: %TRUE if @name can name a definition
 */
gboolean
subagent_def_name_is_valid (const char *name)
{
  gsize len = 0;

  if (name == NULL)
    return FALSE;
  for (const char *p = name; *p; p++, len++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
      return FALSE;
  return len > 0 && len <= NAME_MAX_LEN;
}

/**
 * subagent_def_new:
 * @name: the definition's name (`[A-Za-z0-9_-]`, see [func@Def.name_is_valid])
 *
 * Creates a definition with every other field at its default.
 *
 * Returns: (transfer full): a new definition
 */
SubagentDef *
subagent_def_new (const char *name)
{
  g_return_val_if_fail (subagent_def_name_is_valid (name), NULL);

  return g_object_new (SUBAGENT_TYPE_DEF, "name", name, NULL);
}

/**
 * subagent_def_is_known_key:
 * @key: a key of a definition file
 *
 * Whether [ctor@Def.new_from_json] reads @key (`name`, a field name, or
 * an accepted alias such as `prompt`, `tools` or `disallowedTools`).
 *
 * Returns: %TRUE if @key is read, %FALSE if it would be ignored
 */
gboolean
subagent_def_is_known_key (const char *key)
{
  g_return_val_if_fail (key != NULL, FALSE);

  return subagent_def_json_is_known_key (key);
}

/**
 * subagent_def_new_from_json:
 * @object: the definition's fields, as read from a file
 * @source_path: (nullable): the file @object came from; kept as
 *   [property@Def:source-path] and named in errors
 * @error: return location for a #GError
 *
 * Reads a definition. `name` is required; every other field is optional
 * and keeps its default when missing or null. Accepted aliases:
 * `prompt` for `system_prompt`, `tool_whitelist` for `tools`,
 * `disallowedTools` for `disallowed_tools`. `tools` and `disallowed_tools`
 * take a list or a comma-separated text (as Claude Code agent files
 * write them); `command` takes a list or a command line split like a
 * shell would. Keys this function does not know are ignored (see
 * [func@Def.is_known_key]).
 *
 * Returns: (transfer full): a new definition, or %NULL with @error set to
 *   %SUBAGENT_DEF_ERROR_MISSING_NAME or %SUBAGENT_DEF_ERROR_INVALID_VALUE
 *   naming the field and the file
 */
SubagentDef *
subagent_def_new_from_json (JsonObject  *object,
                            const char  *source_path,
                            GError     **error)
{
  return subagent_def_new_from_json_full (object, source_path, NULL, NULL, error);
}

static void
set_strv (JsonObject         *object,
          const char         *key,
          const char * const *strv)
{
  JsonArray *array;

  if (strv == NULL)
    {
      json_object_set_null_member (object, key);
      return;
    }
  array = json_array_new ();
  for (guint i = 0; strv[i] != NULL; i++)
    json_array_add_string_element (array, strv[i]);
  json_object_set_array_member (object, key, array);
}

/**
 * subagent_def_to_json:
 * @self: a definition
 *
 * Every field, under the keys [ctor@Def.new_from_json] reads (lists as
 * `tool_whitelist` and `disallowed_tools`), plus `source_path`. Unset
 * optional fields are null.
 *
 * Returns: (transfer full): a new object
 */
JsonObject *
subagent_def_to_json (SubagentDef *self)
{
  JsonObject *object;

  g_return_val_if_fail (SUBAGENT_IS_DEF (self), NULL);

  object = json_object_new ();
  json_object_set_string_member (object, "name", self->name);
  json_object_set_string_member (object, "description", self->description);
  json_object_set_string_member (object, "system_prompt", self->system_prompt);
  subagent_json_set_nullable_string (object, "model", self->model);
  json_object_set_string_member (object, "permission_mode", subagent_permission_mode_to_string (self->permission_mode));
  json_object_set_int_member (object, "max_iterations", self->max_iterations);
  json_object_set_int_member (object, "max_tool_calls", self->max_tool_calls);
  set_strv (object, "tool_whitelist", (const char * const *) self->tool_whitelist);
  set_strv (object, "disallowed_tools", (const char * const *) self->disallowed_tools);
  json_object_set_int_member (object, "max_depth", self->max_depth);
  json_object_set_string_member (object, "isolation", self->isolation);
  json_object_set_boolean_member (object, "background", self->background);
  json_object_set_boolean_member (object, "interactive", self->interactive);
  subagent_json_set_nullable_string (object, "effort", self->effort);
  set_strv (object, "command", (const char * const *) self->command);
  set_strv (object, "write_scope", (const char * const *) self->write_scope);
  subagent_json_set_amount (object, "cpu_quota", self->cpu_quota);
  subagent_json_set_nullable_string (object, "memory_limit", self->memory_limit);
  json_object_set_int_member (object, "timeout_seconds", self->timeout_seconds);
  subagent_json_set_amount (object, "max_cost_cents", self->max_cost_cents);
  json_object_set_int_member (object, "max_follow_ups", self->max_follow_ups);
  subagent_json_set_nullable_string (object, "network", self->network);
  subagent_json_set_nullable_string (object, "runner", self->runner);
  if (self->confinement == SUBAGENT_CONFINEMENT_DEFAULT)
    json_object_set_null_member (object, "confinement");
  else
    json_object_set_string_member (object, "confinement", subagent_confinement_to_string (self->confinement));
  subagent_json_set_nullable_string (object, "source_path", self->source_path);
  return object;
}
