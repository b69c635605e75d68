/* subagent-plugin-info.h: what a `.plugin` descriptor says.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <json-glib/json-glib.h>

#include "subagent-plugin.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_PLUGIN_INFO (subagent_plugin_info_get_type ())
G_DECLARE_FINAL_TYPE (SubagentPluginInfo, subagent_plugin_info, SUBAGENT, PLUGIN_INFO, GObject)

SubagentPluginInfo   *subagent_plugin_info_new_from_file      (const char          *path,
                                                               GError             **error);
const char           *subagent_plugin_info_get_name           (SubagentPluginInfo  *self);
const char           *subagent_plugin_info_get_descriptor_path (SubagentPluginInfo *self);
const char           *subagent_plugin_info_get_module_path    (SubagentPluginInfo  *self);
const char           *subagent_plugin_info_get_interface_name (SubagentPluginInfo  *self);
const char * const   *subagent_plugin_info_get_provides       (SubagentPluginInfo  *self);
gboolean              subagent_plugin_info_provides           (SubagentPluginInfo  *self,
                                                               const char          *backend);
guint                 subagent_plugin_info_get_abi_major      (SubagentPluginInfo  *self);
guint                 subagent_plugin_info_get_abi_minor      (SubagentPluginInfo  *self);
const char           *subagent_plugin_info_get_version        (SubagentPluginInfo  *self);
const char           *subagent_plugin_info_get_description    (SubagentPluginInfo  *self);
gboolean              subagent_plugin_info_is_loaded          (SubagentPluginInfo  *self);
SubagentPluginModule *subagent_plugin_info_get_module         (SubagentPluginInfo  *self);
const char           *subagent_plugin_info_get_section        (SubagentPluginInfo *self);
const char * const   *subagent_plugin_info_get_aliases        (SubagentPluginInfo *self);
const char           *subagent_plugin_info_get_auto           (SubagentPluginInfo *self);
const char * const   *subagent_plugin_info_get_leftovers      (SubagentPluginInfo *self);
GPtrArray            *subagent_plugin_info_get_options        (SubagentPluginInfo *self);
JsonObject           *subagent_plugin_info_to_json            (SubagentPluginInfo  *self);

G_END_DECLS
