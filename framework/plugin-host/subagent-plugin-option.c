/* subagent-plugin-option.c: options a plugin declares.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"

/**
 * SubagentPluginOption:
 *
 * One option of a plugin: its key in the plugin's `config.yaml` section,
 * its value type, its default (as text, for people) and one line saying
 * what it does.
 *
 * A plugin declares its options in its `.plugin` descriptor, one group per
 * option, so they can be listed and checked without opening the module:
 *
 * |[
 * [Option pool_size]
 * Type=integer
 * Default=0
 * Description=Worktrees kept for reuse after a run (0: none)
 * ]|
 *
 * and, once loaded, from its type (see #SubagentConfigurable). Value types
 * are `string`, `integer`, `number` (an integer or a fraction), `boolean`
 * and `string-list` (a list of strings, or one string).
 */
struct _SubagentPluginOption
{
  gatomicrefcount ref_count;
  char *name;
  char *value_type;
  char *default_value;
  char *description;
};

G_DEFINE_BOXED_TYPE (SubagentPluginOption, subagent_plugin_option,
                     subagent_plugin_option_ref, subagent_plugin_option_unref)

static const char * const value_types[] = { "string", "integer", "number", "boolean", "string-list", NULL };

static gboolean
name_is_valid (const char *name)
{
  if (name == NULL || !g_ascii_isalpha (*name) || strlen (name) > 64)
    return FALSE;
  for (const char *p = name; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '-')
      return FALSE;
  return TRUE;
}

/**
 * subagent_plugin_option_new:
 * @name: the option's key: a letter, then letters, digits, `_` or `-` (at most 64)
 * @value_type: `string`, `integer`, `number`, `boolean` or `string-list`
 * @default_value: (nullable): the default, as text for people
 * @description: (nullable): one line saying what the option does
 * @error: return location for a #GError
 *
 * Returns: (transfer full): a new option, or %NULL with
 *   %SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR when @name or @value_type is not valid
 */
SubagentPluginOption *
subagent_plugin_option_new (const char  *name,
                            const char  *value_type,
                            const char  *default_value,
                            const char  *description,
                            GError     **error)
{
  SubagentPluginOption *self;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!name_is_valid (name))
    {
      g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR,
                   "Option name “%s” is not valid: start with a letter, then letters, digits, ‘_’ or ‘-’",
                   name ? name : "");
      return NULL;
    }
  if (value_type == NULL || !g_strv_contains (value_types, value_type))
    {
      g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR,
                   "Option “%s” has type “%s”: use string, integer, number, boolean or string-list",
                   name, value_type ? value_type : "");
      return NULL;
    }
  self = g_new0 (SubagentPluginOption, 1);
  g_atomic_ref_count_init (&self->ref_count);
  self->name = g_strdup (name);
  self->value_type = g_strdup (value_type);
  self->default_value = g_strdup (default_value);
  self->description = g_strdup (description);
  return self;
}

/**
 * subagent_plugin_option_ref:
 * @self: a #SubagentPluginOption
 *
 * Returns: (transfer full): @self
 */
SubagentPluginOption *
subagent_plugin_option_ref (SubagentPluginOption *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * subagent_plugin_option_unref:
 * @self: (transfer full): a #SubagentPluginOption
 */
void
subagent_plugin_option_unref (SubagentPluginOption *self)
{
  g_return_if_fail (self != NULL);
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_free (self->name);
  g_free (self->value_type);
  g_free (self->default_value);
  g_free (self->description);
  g_free (self);
}

/**
 * subagent_plugin_option_get_name:
 * @self: a #SubagentPluginOption
 *
 * Returns: the option's key
 */
const char *
subagent_plugin_option_get_name (SubagentPluginOption *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->name;
}

/**
 * subagent_plugin_option_get_value_type:
 * @self: a #SubagentPluginOption
 *
 * Returns: `string`, `integer`, `number`, `boolean` or `string-list`
 */
const char *
subagent_plugin_option_get_value_type (SubagentPluginOption *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->value_type;
}

/**
 * subagent_plugin_option_get_default:
 * @self: a #SubagentPluginOption
 *
 * Returns: (nullable): the default, as text for people
 */
const char *
subagent_plugin_option_get_default (SubagentPluginOption *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->default_value;
}

/**
 * subagent_plugin_option_get_description:
 * @self: a #SubagentPluginOption
 *
 * Returns: (nullable): one line saying what the option does
 */
const char *
subagent_plugin_option_get_description (SubagentPluginOption *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->description;
}

static gboolean
holds (JsonNode *node,
       GType     type)
{
  return JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == type;
}

static gboolean
value_matches (const char *value_type,
               JsonNode   *value)
{
  if (g_str_equal (value_type, "string"))
    return holds (value, G_TYPE_STRING);
  if (g_str_equal (value_type, "integer"))
    return holds (value, G_TYPE_INT64);
  if (g_str_equal (value_type, "number"))
    return holds (value, G_TYPE_INT64) || holds (value, G_TYPE_DOUBLE);
  if (g_str_equal (value_type, "boolean"))
    return holds (value, G_TYPE_BOOLEAN);
  if (holds (value, G_TYPE_STRING))
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (value))
    return FALSE;
  for (guint i = 0; i < json_array_get_length (json_node_get_array (value)); i++)
    if (!holds (json_array_get_element (json_node_get_array (value), i), G_TYPE_STRING))
      return FALSE;
  return TRUE;
}

/**
 * subagent_plugin_option_check_value:
 * @self: a #SubagentPluginOption
 * @value: a value given for the option (`null` always passes: it means the default)
 * @error: return location for a #GError
 *
 * Returns: %TRUE if @value has the option's type, else %FALSE with
 *   %SUBAGENT_CONFIG_ERROR_INVALID_VALUE naming the option and the type
 */
gboolean
subagent_plugin_option_check_value (SubagentPluginOption  *self,
                                    JsonNode              *value,
                                    GError               **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (value != NULL, FALSE);

  if (JSON_NODE_HOLDS_NULL (value) || value_matches (self->value_type, value))
    return TRUE;
  g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
               "option “%s” must be %s %s", self->name,
               g_str_equal (self->value_type, "integer") ? "an" : "a",
               g_str_equal (self->value_type, "string-list") ? "list of strings" : self->value_type);
  return FALSE;
}

/**
 * subagent_plugin_option_to_json:
 * @self: a #SubagentPluginOption
 *
 * Returns: (transfer full): `{name, type, default, description}`, absent
 *   values as `null`
 */
JsonObject *
subagent_plugin_option_to_json (SubagentPluginOption *self)
{
  JsonObject *object;

  g_return_val_if_fail (self != NULL, NULL);

  object = json_object_new ();
  json_object_set_string_member (object, "name", self->name);
  json_object_set_string_member (object, "type", self->value_type);
  if (self->default_value != NULL)
    json_object_set_string_member (object, "default", self->default_value);
  else
    json_object_set_null_member (object, "default");
  if (self->description != NULL)
    json_object_set_string_member (object, "description", self->description);
  else
    json_object_set_null_member (object, "description");
  return object;
}

/**
 * subagent_plugin_options_find:
 * @options: (element-type SubagentPluginOption): a plugin's options
 * @name: a key
 *
 * Returns: (transfer none) (nullable): the option of @options named @name
 */
SubagentPluginOption *
subagent_plugin_options_find (GPtrArray  *options,
                              const char *name)
{
  g_return_val_if_fail (options != NULL, NULL);

  for (guint i = 0; i < options->len; i++)
    {
      SubagentPluginOption *option = g_ptr_array_index (options, i);

      if (g_strcmp0 (option->name, name) == 0)
        return option;
    }
  return NULL;
}
