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

#include "subagent-config.h"
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

/* What the descriptors say about backends (subagent-plugin-registry-backends.c). */
SUBAGENT_AVAILABLE_IN_0_2
SubagentPluginRegistry    *subagent_plugin_registry_new_for_config       (SubagentConfig          *config);
SUBAGENT_AVAILABLE_IN_0_2
GStrv                      subagent_plugin_registry_list_isolation_modes (SubagentPluginRegistry  *self);
SUBAGENT_AVAILABLE_IN_0_2
const char                *subagent_plugin_registry_resolve_isolation    (SubagentPluginRegistry  *self,
                                                                          const char              *value,
                                                                          gboolean                *is_deprecated_alias,
                                                                          GError                 **error);
SUBAGENT_AVAILABLE_IN_0_2
const char                *subagent_plugin_registry_resolve_auto         (SubagentPluginRegistry  *self,
                                                                          SubagentConfig          *config,
                                                                          gboolean                 git_work_tree,
                                                                          GError                 **error);
SUBAGENT_AVAILABLE_IN_0_2
SubagentPluginInfo        *subagent_plugin_registry_find_for_leftovers   (SubagentPluginRegistry  *self,
                                                                          const char              *kind,
                                                                          GError                 **error);
SUBAGENT_AVAILABLE_IN_0_2
SubagentPluginInfo        *subagent_plugin_registry_find_for_section     (SubagentPluginRegistry  *self,
                                                                          const char              *section);
SUBAGENT_AVAILABLE_IN_0_2
gboolean                   subagent_plugin_registry_validate_config      (SubagentPluginRegistry  *self,
                                                                          SubagentConfig          *config,
                                                                          GStrv                   *warnings,
                                                                          GError                 **error);
SUBAGENT_AVAILABLE_IN_0_2
GObject                   *subagent_plugin_registry_create_configured    (SubagentPluginRegistry  *self,
                                                                          SubagentConfig          *config,
                                                                          GType                    interface_type,
                                                                          const char              *backend,
                                                                          const char              *root,
                                                                          GError                 **error);

G_END_DECLS
