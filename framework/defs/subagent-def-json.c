/* subagent-def-json.c: reading a SubagentDef from a JSON object, with the
 * type and range checks definition files need.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "subagent.h"
#include "subagent-def-private.h"

#define NAME_MAX_LEN 128
#define TOOL_NAME_MAX_LEN 256
#define NETWORK_MAX_LEN 128

typedef enum {
  FIELD_TEXT,             /* a string; null keeps the default */
  FIELD_OPTIONAL_TEXT,    /* a string; null or "" give NULL */
  FIELD_MODEL,
  FIELD_COUNT,            /* a whole number in the property's range */
  FIELD_AMOUNT,           /* a number in the property's range */
  FIELD_FLAG,
  FIELD_TOOLS,            /* a list, or a comma-separated string */
  FIELD_ARGV,             /* a list, or a string split like a shell */
  FIELD_PATHS,            /* a list of relative paths */
  FIELD_PERMISSION_MODE,
  FIELD_ISOLATION,
  FIELD_MEMORY,
  FIELD_NETWORK,
} FieldKind;

typedef struct {
  const char *key;
  const char *alias;
  const char *property;
  FieldKind kind;
} Field;

static const Field fields[] = {
  { "description", NULL, "description", FIELD_TEXT },
  { "system_prompt", "prompt", "system-prompt", FIELD_TEXT },
  { "model", NULL, "model", FIELD_MODEL },
  { "permission_mode", NULL, "permission-mode", FIELD_PERMISSION_MODE },
  { "max_iterations", NULL, "max-iterations", FIELD_COUNT },
  { "max_tool_calls", NULL, "max-tool-calls", FIELD_COUNT },
  { "tools", "tool_whitelist", "tool-whitelist", FIELD_TOOLS },
  { "disallowed_tools", "disallowedTools", "disallowed-tools", FIELD_TOOLS },
  { "max_depth", NULL, "max-depth", FIELD_COUNT },
  { "isolation", NULL, "isolation", FIELD_ISOLATION },
  { "background", NULL, "background", FIELD_FLAG },
  { "effort", NULL, "effort", FIELD_OPTIONAL_TEXT },
  { "command", NULL, "command", FIELD_ARGV },
  { "write_scope", NULL, "write-scope", FIELD_PATHS },
  { "cpu_quota", NULL, "cpu-quota", FIELD_AMOUNT },
  { "memory_limit", NULL, "memory-limit", FIELD_MEMORY },
  { "timeout_seconds", NULL, "timeout-seconds", FIELD_COUNT },
  { "max_cost_cents", NULL, "max-cost-cents", FIELD_AMOUNT },
  { "max_follow_ups", NULL, "max-follow-ups", FIELD_COUNT },
  { "network", NULL, "network", FIELD_NETWORK },
};

/* A short rendering of a bad value for messages. */
static char *
describe (JsonNode *node)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_OBJECT: return g_strdup ("a mapping");
    case JSON_NODE_ARRAY: return g_strdup ("a list");
    case JSON_NODE_NULL: return g_strdup ("null");
    case JSON_NODE_VALUE:
    default:
      break;
    }
  switch (json_node_get_value_type (node))
    {
    case G_TYPE_STRING:
      {
        const char *s = json_node_get_string (node);
        g_autofree char *shown = g_utf8_substring (s, 0, MIN (g_utf8_strlen (s, -1), 40));
        return g_strdup_printf ("the text “%s%s”", shown, g_utf8_strlen (s, -1) > 40 ? "…" : "");
      }
    case G_TYPE_BOOLEAN:
      return g_strdup (json_node_get_boolean (node) ? "true" : "false");
    case G_TYPE_INT64:
      return g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));
    case G_TYPE_DOUBLE:
      {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        return g_strdup (g_ascii_dtostr (buf, sizeof buf, json_node_get_double (node)));
      }
    default:
      return g_strdup ("an unsupported value");
    }
}

static gboolean
holds (JsonNode *node,
       GType     type)
{
  return JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == type;
}

static gboolean
is_number (JsonNode *node)
{
  return holds (node, G_TYPE_INT64) || holds (node, G_TYPE_DOUBLE);
}

static gboolean
has_control_chars (const char *s)
{
  for (; *s; s++)
    if ((guchar) *s < 0x20 || *s == 0x7f)
      return TRUE;
  return FALSE;
}

typedef struct {
  const char *key;        /* as written in the file */
  char *pointer;          /* out: where the problem is */
  char *reason;           /* out */
} Problem;

static gboolean
fail (Problem    *problem,
      const char *suffix,
      const char *format,
      ...) G_GNUC_PRINTF (3, 4);

static gboolean
fail (Problem    *problem,
      const char *suffix,
      const char *format,
      ...)
{
  va_list ap;

  va_start (ap, format);
  problem->reason = g_strdup_vprintf (format, ap);
  va_end (ap);
  problem->pointer = g_strconcat ("/", problem->key, suffix, NULL);
  return FALSE;
}

static gboolean
add_tool_name (Problem    *problem,
               GPtrArray  *out,
               const char *raw,
               int         index)
{
  g_autofree char *name = g_strstrip (g_strdup (raw));
  g_autofree char *suffix = index >= 0 ? g_strdup_printf ("/%d", index) : NULL;

  if (*name == '\0' && index < 0)
    return TRUE;            /* "Read, , Grep": tolerated in the comma form */
  if (*name == '\0' || strlen (name) > TOOL_NAME_MAX_LEN || has_control_chars (name))
    return fail (problem, suffix, "field “%s” holds a tool name that is empty, too long or has control characters",
                 problem->key);
  for (guint i = 0; i < out->len; i++)
    if (g_str_equal (out->pdata[i], name))
      return TRUE;
  g_ptr_array_add (out, g_steal_pointer (&name));
  return TRUE;
}

static gboolean
parse_tools (Problem   *problem,
             JsonNode  *node,
             GValue    *value)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);

  if (holds (node, G_TYPE_STRING))
    {
      g_auto(GStrv) parts = g_strsplit (json_node_get_string (node), ",", -1);

      for (guint i = 0; parts[i] != NULL; i++)
        if (!add_tool_name (problem, out, parts[i], -1))
          return FALSE;
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *item = json_array_get_element (array, i);
          g_autofree char *suffix = g_strdup_printf ("/%u", i);

          if (!holds (item, G_TYPE_STRING))
            {
              g_autofree char *what = describe (item);
              return fail (problem, suffix, "field “%s” must list tool names as text, not %s", problem->key, what);
            }
          if (!add_tool_name (problem, out, json_node_get_string (item), (int) i))
            return FALSE;
        }
    }
  else
    {
      g_autofree char *what = describe (node);
      return fail (problem, NULL, "field “%s” must be a list of tool names or a comma-separated text, not %s",
                   problem->key, what);
    }
  g_ptr_array_add (out, NULL);
  g_value_init (value, G_TYPE_STRV);
  g_value_take_boxed (value, g_ptr_array_free (g_steal_pointer (&out), FALSE));
  return TRUE;
}

static gboolean
parse_string_list (Problem   *problem,
                   JsonNode  *node,
                   gboolean   paths,
                   GPtrArray *out)
{
  JsonArray *array = json_node_get_array (node);

  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *item = json_array_get_element (array, i);
      g_autofree char *suffix = g_strdup_printf ("/%u", i);
      const char *s;

      if (!holds (item, G_TYPE_STRING))
        {
          g_autofree char *what = describe (item);
          return fail (problem, suffix, "field “%s” must be a list of texts, but item %u is %s", problem->key, i, what);
        }
      s = json_node_get_string (item);
      if (paths)
        {
          g_auto(GStrv) parts = g_strsplit (s, "/", -1);

          if (*s == '\0' || g_path_is_absolute (s) || g_strv_contains ((const char * const *) parts, "..")
              || has_control_chars (s))
            return fail (problem, suffix, "field “%s”: “%s” must be a relative path inside the workspace "
                         "(not empty, not absolute, no “..”)", problem->key, s);
        }
      g_ptr_array_add (out, g_strdup (s));
    }
  return TRUE;
}

static gboolean
parse_argv (Problem  *problem,
            JsonNode *node,
            GValue   *value)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);

  if (holds (node, G_TYPE_STRING))
    {
      g_autoptr(GError) local = NULL;
      g_auto(GStrv) argv = NULL;

      if (!g_shell_parse_argv (json_node_get_string (node), NULL, &argv, &local))
        return fail (problem, NULL, "field “%s” cannot be split into arguments: %s", problem->key, local->message);
      for (guint i = 0; argv[i] != NULL; i++)
        g_ptr_array_add (out, g_strdup (argv[i]));
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      if (!parse_string_list (problem, node, FALSE, out))
        return FALSE;
    }
  else
    {
      g_autofree char *what = describe (node);
      return fail (problem, NULL, "field “%s” must be a list of arguments or a command line, not %s",
                   problem->key, what);
    }
  if (out->len == 0 || *(const char *) out->pdata[0] == '\0')
    return fail (problem, NULL, "field “%s” must name a program to run", problem->key);
  g_ptr_array_add (out, NULL);
  g_value_init (value, G_TYPE_STRV);
  g_value_take_boxed (value, g_ptr_array_free (g_steal_pointer (&out), FALSE));
  return TRUE;
}

static gboolean
memory_limit_is_valid (const char *s)
{
  const char *p = s;

  while (g_ascii_isdigit (*p))
    p++;
  if (p == s || strspn (s, "0") == (gsize) (p - s))
    return FALSE;   /* no digits, or zero */
  if (*p == '\0')
    return TRUE;
  if (strchr ("bB", *p) != NULL)
    return p[1] == '\0';
  if (strchr ("kKmMgGtT", *p) == NULL)
    return FALSE;
  p++;
  if (*p == 'i' || *p == 'I')
    p++;
  if (*p == 'b' || *p == 'B')
    p++;
  return *p == '\0';
}

static gboolean
network_is_valid (const char *s)
{
  gsize len = strlen (s);

  if (len == 0 || len > NETWORK_MAX_LEN || !g_ascii_isalnum (*s))
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isalnum (*s) && strchr ("_.-", *s) == NULL)
      return FALSE;
  return TRUE;
}

static gboolean
parse_field (const Field *field,
             Problem     *problem,
             JsonNode    *node,
             GValue      *value)
{
  GParamSpec *pspec = g_object_class_find_property (g_type_class_peek_static (SUBAGENT_TYPE_DEF), field->property);
  g_autofree char *what = describe (node);
  const char *key = problem->key;

  if (JSON_NODE_HOLDS_NULL (node))
    return TRUE;            /* unset: the property keeps its default */

  switch (field->kind)
    {
    case FIELD_TEXT:
    case FIELD_OPTIONAL_TEXT:
    case FIELD_MODEL:
      {
        const char *s;

        if (!holds (node, G_TYPE_STRING))
          return fail (problem, NULL, "field “%s” must be text, not %s", key, what);
        s = json_node_get_string (node);
        g_value_init (value, G_TYPE_STRING);
        if (field->kind == FIELD_MODEL)
          {
            g_autofree char *model = g_strstrip (g_strdup (s));

            /* Claude Code's `model: inherit` means the parent's model, as NULL does. */
            if (g_ascii_strcasecmp (model, "inherit") == 0)
              g_clear_pointer (&model, g_free);
            g_value_take_string (value, g_steal_pointer (&model));
          }
        else
          g_value_set_string (value, s);
        return TRUE;
      }

    case FIELD_COUNT:
      {
        GParamSpecUInt *range = G_PARAM_SPEC_UINT (pspec);
        double d;

        if (!is_number (node))
          return fail (problem, NULL, "field “%s” must be a whole number from %u to %u, not %s",
                       key, range->minimum, range->maximum, what);
        d = holds (node, G_TYPE_INT64) ? (double) json_node_get_int (node) : json_node_get_double (node);
        if (d != floor (d) || d < range->minimum || d > range->maximum)
          return fail (problem, NULL, "field “%s” must be a whole number from %u to %u, not %s",
                       key, range->minimum, range->maximum, what);
        g_value_init (value, G_TYPE_UINT);
        g_value_set_uint (value, (guint) d);
        return TRUE;
      }

    case FIELD_AMOUNT:
      {
        GParamSpecDouble *range = G_PARAM_SPEC_DOUBLE (pspec);
        double d;

        if (!is_number (node))
          return fail (problem, NULL, "field “%s” must be a number of at least 0, not %s", key, what);
        d = holds (node, G_TYPE_INT64) ? (double) json_node_get_int (node) : json_node_get_double (node);
        if (!isfinite (d) || d < range->minimum || d > range->maximum)
          return fail (problem, NULL, "field “%s” must be a number from %g to %g, not %s",
                       key, range->minimum, range->maximum, what);
        g_value_init (value, G_TYPE_DOUBLE);
        g_value_set_double (value, d);
        return TRUE;
      }

    case FIELD_FLAG:
      if (!holds (node, G_TYPE_BOOLEAN))
        return fail (problem, NULL, "field “%s” must be true or false, not %s", key, what);
      g_value_init (value, G_TYPE_BOOLEAN);
      g_value_set_boolean (value, json_node_get_boolean (node));
      return TRUE;

    case FIELD_TOOLS:
      return parse_tools (problem, node, value);

    case FIELD_ARGV:
      return parse_argv (problem, node, value);

    case FIELD_PATHS:
      {
        g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);

        if (!JSON_NODE_HOLDS_ARRAY (node))
          return fail (problem, NULL, "field “%s” must be a list of relative paths, not %s", key, what);
        if (!parse_string_list (problem, node, TRUE, out))
          return FALSE;
        g_ptr_array_add (out, NULL);
        g_value_init (value, G_TYPE_STRV);
        g_value_take_boxed (value, g_ptr_array_free (g_steal_pointer (&out), FALSE));
        return TRUE;
      }

    case FIELD_PERMISSION_MODE:
      {
        SubagentPermissionMode mode;

        if (!holds (node, G_TYPE_STRING) || !subagent_permission_mode_from_string (json_node_get_string (node), &mode))
          return fail (problem, NULL, "field “%s” must be one of inherit, read-only, prompt, workspace-write, "
                       "allow, danger-full-access; not %s", key, what);
        g_value_init (value, SUBAGENT_TYPE_PERMISSION_MODE);
        g_value_set_enum (value, mode);
        return TRUE;
      }

    case FIELD_ISOLATION:
      {
        g_autofree char *mode = NULL;

        if (holds (node, G_TYPE_STRING))
          mode = g_strstrip (g_ascii_strdown (json_node_get_string (node), -1));
        if (mode == NULL || !subagent_def_isolation_is_known (*mode ? mode : SUBAGENT_DEF_DEFAULT_ISOLATION))
          return fail (problem, NULL, "field “%s” must name an isolation mode: shared, auto, or a backend "
                       "an installed plugin provides (letters, digits, ‘-’ and ‘_’); not %s", key, what);
        g_value_init (value, G_TYPE_STRING);
        g_value_set_string (value, mode);
        return TRUE;
      }

    case FIELD_MEMORY:
      {
        g_autofree char *limit = NULL;

        if (holds (node, G_TYPE_INT64))
          limit = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));
        else if (holds (node, G_TYPE_STRING))
          limit = g_strstrip (g_strdup (json_node_get_string (node)));
        if (limit == NULL || !memory_limit_is_valid (limit))
          return fail (problem, NULL, "field “%s” must be a positive size such as 512m or 2g, not %s", key, what);
        g_value_init (value, G_TYPE_STRING);
        g_value_take_string (value, g_steal_pointer (&limit));
        return TRUE;
      }

    case FIELD_NETWORK:
      if (!holds (node, G_TYPE_STRING) || !network_is_valid (json_node_get_string (node)))
        return fail (problem, NULL, "field “%s” must be a network name such as none, bridge or host "
                     "([A-Za-z0-9_.-]), not %s", key, what);
      g_value_init (value, G_TYPE_STRING);
      g_value_set_string (value, json_node_get_string (node));
      return TRUE;

    default:
      g_assert_not_reached ();
    }
}

static SubagentDef *
def_from_json (JsonObject  *object,
               const char  *source_path,
               Problem     *problem,
               int         *code)
{
  const char *names[G_N_ELEMENTS (fields) + 2];
  GValue values[G_N_ELEMENTS (fields) + 2] = { G_VALUE_INIT };
  guint n = 0;
  JsonNode *name_node = json_object_get_member (object, "name");
  SubagentDef *def = NULL;
  g_autoptr(GTypeClass) klass = NULL;

  /* parse_field() reads ranges from the pspecs */
  klass = g_type_class_ref (SUBAGENT_TYPE_DEF);
  *code = SUBAGENT_DEF_ERROR_INVALID_VALUE;
  problem->key = "name";
  if (name_node == NULL || JSON_NODE_HOLDS_NULL (name_node)
      || (holds (name_node, G_TYPE_STRING) && *json_node_get_string (name_node) == '\0'))
    {
      *code = SUBAGENT_DEF_ERROR_MISSING_NAME;
      fail (problem, NULL, "there is no “name”; every definition needs one");
      return NULL;
    }
  if (!holds (name_node, G_TYPE_STRING) || !subagent_def_name_is_valid (json_node_get_string (name_node)))
    {
      g_autofree char *what = describe (name_node);
      fail (problem, NULL, "field “name” must be 1 to %d letters, digits, “-” or “_”, not %s", NAME_MAX_LEN, what);
      return NULL;
    }
  names[n] = "name";
  g_value_init (&values[n], G_TYPE_STRING);
  g_value_set_string (&values[n++], json_node_get_string (name_node));
  names[n] = "source-path";
  g_value_init (&values[n], G_TYPE_STRING);
  g_value_set_string (&values[n++], source_path);

  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      const Field *field = &fields[i];
      JsonNode *node = json_object_get_member (object, field->key);

      problem->key = field->key;
      if (field->alias != NULL && json_object_has_member (object, field->alias))
        {
          if (node != NULL)
            {
              problem->key = field->alias;
              fail (problem, NULL, "fields “%s” and “%s” mean the same; keep one", field->key, field->alias);
              goto out;
            }
          node = json_object_get_member (object, field->alias);
          problem->key = field->alias;
        }
      if (node == NULL)
        continue;
      if (!parse_field (field, problem, node, &values[n]))
        goto out;
      if (G_VALUE_TYPE (&values[n]) != G_TYPE_INVALID)
        names[n++] = field->property;
    }

  def = (SubagentDef *) g_object_new_with_properties (SUBAGENT_TYPE_DEF, n, names, values);

out:
  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    if (G_VALUE_TYPE (&values[i]) != G_TYPE_INVALID)
      g_value_unset (&values[i]);
  return def;
}

/* The keys def_from_json() reads; see subagent_def_is_known_key(). */
gboolean
subagent_def_json_is_known_key (const char *key)
{
  if (g_str_equal (key, "name"))
    return TRUE;
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    if (g_str_equal (key, fields[i].key) || g_strcmp0 (key, fields[i].alias) == 0)
      return TRUE;
  return FALSE;
}

/* See subagent-def-private.h. */
SubagentDef *
subagent_def_new_from_json_full (JsonObject  *object,
                                 const char  *source_path,
                                 char       **bad_pointer,
                                 char       **reason,
                                 GError     **error)
{
  Problem problem = { 0 };
  int code;
  SubagentDef *def;

  g_return_val_if_fail (object != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  def = def_from_json (object, source_path, &problem, &code);
  if (def == NULL)
    {
      g_set_error (error, SUBAGENT_DEF_ERROR, code, "%s: %s; fix the definition",
                   source_path ? source_path : "definition", problem.reason);
      if (bad_pointer != NULL)
        *bad_pointer = g_steal_pointer (&problem.pointer);
      if (reason != NULL)
        *reason = g_steal_pointer (&problem.reason);
    }
  g_free (problem.pointer);
  g_free (problem.reason);
  return def;
}

