/* subagent-plugin-registry.h: discovering plugins and loading them on demand.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <json-glib/json-glib.h>

#include "subagent-isolation-provider.h"
#include "subagent-plugin.h"
#include "subagent-plugin-info.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_PLUGIN_REGISTRY (subagent_plugin_registry_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentPluginRegistry, subagent_plugin_registry, SUBAGENT, PLUGIN_REGISTRY, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentPluginRegistry    *subagent_plugin_registry_new              (const char * const      *search_path);
SUBAGENT_AVAILABLE_IN_ALL
SubagentPluginRegistry    *subagent_plugin_registry_get_default      (void);
SUBAGENT_AVAILABLE_IN_ALL
GType                      subagent_plugin_registry_lookup_interface (const char              *interface_name);

SUBAGENT_AVAILABLE_IN_ALL
const char * const        *subagent_plugin_registry_get_search_path  (SubagentPluginRegistry  *self);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray                 *subagent_plugin_registry_list_plugins     (SubagentPluginRegistry  *self);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray                 *subagent_plugin_registry_get_diagnostics  (SubagentPluginRegistry  *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentPluginInfo        *subagent_plugin_registry_find_plugin      (SubagentPluginRegistry  *self,
                                                                      const char              *name,
                                                                      GError                 **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentPluginInfo        *subagent_plugin_registry_find_for_backend (SubagentPluginRegistry  *self,
                                                                      GType                    interface_type,
                                                                      const char              *backend,
                                                                      GError                 **error);
SUBAGENT_AVAILABLE_IN_ALL
gboolean                   subagent_plugin_registry_load_plugin      (SubagentPluginRegistry  *self,
                                                                      SubagentPluginInfo      *info,
                                                                      GError                 **error);
SUBAGENT_AVAILABLE_IN_ALL
GObject                   *subagent_plugin_registry_create           (SubagentPluginRegistry  *self,
                                                                      GType                    interface_type,
                                                                      const char              *backend,
                                                                      GError                 **error);
SUBAGENT_AVAILABLE_IN_ALL
GObject                   *subagent_plugin_registry_create_from_plugin (SubagentPluginRegistry  *self,
                                                                        const char              *plugin_name,
                                                                        GType                    interface_type,
                                                                        const char              *backend,
                                                                        GError                 **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentIsolationProvider *subagent_plugin_registry_get_isolation_provider (SubagentPluginRegistry *self,
                                                                            const char             *backend,
                                                                            GError                **error);

G_END_DECLS
