/* subagent-plugin-info.h: what a `.plugin` descriptor says.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <json-glib/json-glib.h>

#include "subagent-plugin.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_PLUGIN_INFO (subagent_plugin_info_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentPluginInfo, subagent_plugin_info, SUBAGENT, PLUGIN_INFO, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentPluginInfo   *subagent_plugin_info_new_from_file      (const char          *path,
                                                               GError             **error);
SUBAGENT_AVAILABLE_IN_ALL
const char           *subagent_plugin_info_get_name           (SubagentPluginInfo  *self);
SUBAGENT_AVAILABLE_IN_ALL
const char           *subagent_plugin_info_get_descriptor_path (SubagentPluginInfo *self);
SUBAGENT_AVAILABLE_IN_ALL
const char           *subagent_plugin_info_get_module_path    (SubagentPluginInfo  *self);
SUBAGENT_AVAILABLE_IN_ALL
const char           *subagent_plugin_info_get_interface_name (SubagentPluginInfo  *self);
SUBAGENT_AVAILABLE_IN_ALL
const char * const   *subagent_plugin_info_get_provides       (SubagentPluginInfo  *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean              subagent_plugin_info_provides           (SubagentPluginInfo  *self,
                                                               const char          *backend);
SUBAGENT_AVAILABLE_IN_ALL
guint                 subagent_plugin_info_get_abi_major      (SubagentPluginInfo  *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                 subagent_plugin_info_get_abi_minor      (SubagentPluginInfo  *self);
SUBAGENT_AVAILABLE_IN_ALL
const char           *subagent_plugin_info_get_version        (SubagentPluginInfo  *self);
SUBAGENT_AVAILABLE_IN_ALL
const char           *subagent_plugin_info_get_description    (SubagentPluginInfo  *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean              subagent_plugin_info_is_loaded          (SubagentPluginInfo  *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentPluginModule *subagent_plugin_info_get_module         (SubagentPluginInfo  *self);
SUBAGENT_AVAILABLE_IN_0_2
const char           *subagent_plugin_info_get_section        (SubagentPluginInfo *self);
SUBAGENT_AVAILABLE_IN_0_2
const char * const   *subagent_plugin_info_get_aliases        (SubagentPluginInfo *self);
SUBAGENT_AVAILABLE_IN_0_2
const char           *subagent_plugin_info_get_auto           (SubagentPluginInfo *self);
SUBAGENT_AVAILABLE_IN_0_2
const char * const   *subagent_plugin_info_get_leftovers      (SubagentPluginInfo *self);
SUBAGENT_AVAILABLE_IN_0_2
GPtrArray            *subagent_plugin_info_get_options        (SubagentPluginInfo *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject           *subagent_plugin_info_to_json            (SubagentPluginInfo  *self);

G_END_DECLS
