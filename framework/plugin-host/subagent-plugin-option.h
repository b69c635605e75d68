/* subagent-plugin-option.h: one option a plugin declares (key, type,
 * default, one line of documentation), and checking values against a set.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define SUBAGENT_TYPE_PLUGIN_OPTION (subagent_plugin_option_get_type ())

typedef struct _SubagentPluginOption SubagentPluginOption;

SUBAGENT_AVAILABLE_IN_0_2
GType                 subagent_plugin_option_get_type        (void) G_GNUC_CONST;
SUBAGENT_AVAILABLE_IN_0_2
SubagentPluginOption *subagent_plugin_option_new             (const char            *name,
                                                              const char            *value_type,
                                                              const char            *default_value,
                                                              const char            *description,
                                                              GError               **error);
SUBAGENT_AVAILABLE_IN_0_2
SubagentPluginOption *subagent_plugin_option_ref             (SubagentPluginOption  *self);
SUBAGENT_AVAILABLE_IN_0_2
void                  subagent_plugin_option_unref           (SubagentPluginOption  *self);
SUBAGENT_AVAILABLE_IN_0_2
const char           *subagent_plugin_option_get_name        (SubagentPluginOption  *self);
SUBAGENT_AVAILABLE_IN_0_2
const char           *subagent_plugin_option_get_value_type  (SubagentPluginOption  *self);
SUBAGENT_AVAILABLE_IN_0_2
const char           *subagent_plugin_option_get_default     (SubagentPluginOption  *self);
SUBAGENT_AVAILABLE_IN_0_2
const char           *subagent_plugin_option_get_description (SubagentPluginOption  *self);
SUBAGENT_AVAILABLE_IN_0_2
gboolean              subagent_plugin_option_check_value     (SubagentPluginOption  *self,
                                                              JsonNode              *value,
                                                              GError               **error);
SUBAGENT_AVAILABLE_IN_0_2
JsonObject           *subagent_plugin_option_to_json         (SubagentPluginOption  *self);

SUBAGENT_AVAILABLE_IN_0_2
SubagentPluginOption *subagent_plugin_options_find           (GPtrArray             *options,
                                                              const char            *name);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SubagentPluginOption, subagent_plugin_option_unref)

G_END_DECLS
