/* subagent-config-sections.c: the plugin sections of the configuration,
 * kept as written with the lines they sit on, and their getters.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>

#include "subagent.h"
#include "subagent-yaml-private.h"
#include "subagent-config-struct-private.h"

static int
g_strcmp0_ptr (const void *a,
               const void *b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
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

void
_subagent_config_keep_section (SubagentConfig              *self,
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
