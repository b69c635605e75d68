/* subagent-plugin-registry.h: discovering plugins and loading them on demand.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <json-glib/json-glib.h>

#include "subagent-config.h"
#include "subagent-isolation-provider.h"
#include "subagent-plugin.h"
#include "subagent-plugin-info.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_PLUGIN_REGISTRY (subagent_plugin_registry_get_type ())
G_DECLARE_FINAL_TYPE (SubagentPluginRegistry, subagent_plugin_registry, SUBAGENT, PLUGIN_REGISTRY, GObject)

SubagentPluginRegistry    *subagent_plugin_registry_new              (const char * const      *search_path);
SubagentPluginRegistry    *subagent_plugin_registry_get_default      (void);
GType                      subagent_plugin_registry_lookup_interface (const char              *interface_name);

const char * const        *subagent_plugin_registry_get_search_path  (SubagentPluginRegistry  *self);
GPtrArray                 *subagent_plugin_registry_list_plugins     (SubagentPluginRegistry  *self);
GPtrArray                 *subagent_plugin_registry_get_diagnostics  (SubagentPluginRegistry  *self);
SubagentPluginInfo        *subagent_plugin_registry_find_plugin      (SubagentPluginRegistry  *self,
                                                                      const char              *name,
                                                                      GError                 **error);
SubagentPluginInfo        *subagent_plugin_registry_find_for_backend (SubagentPluginRegistry  *self,
                                                                      GType                    interface_type,
                                                                      const char              *backend,
                                                                      GError                 **error);
gboolean                   subagent_plugin_registry_load_plugin      (SubagentPluginRegistry  *self,
                                                                      SubagentPluginInfo      *info,
                                                                      GError                 **error);
GObject                   *subagent_plugin_registry_create           (SubagentPluginRegistry  *self,
                                                                      GType                    interface_type,
                                                                      const char              *backend,
                                                                      GError                 **error);
GObject                   *subagent_plugin_registry_create_from_plugin (SubagentPluginRegistry  *self,
                                                                        const char              *plugin_name,
                                                                        GType                    interface_type,
                                                                        const char              *backend,
                                                                        GError                 **error);
SubagentIsolationProvider *subagent_plugin_registry_get_isolation_provider (SubagentPluginRegistry *self,
                                                                            const char             *backend,
                                                                            GError                **error);

/* What the descriptors say about backends (subagent-plugin-registry-backends.c). */
SubagentPluginRegistry    *subagent_plugin_registry_new_for_config       (SubagentConfig          *config);
GStrv                      subagent_plugin_registry_list_isolation_modes (SubagentPluginRegistry  *self);
const char                *subagent_plugin_registry_resolve_isolation    (SubagentPluginRegistry  *self,
                                                                          const char              *value,
                                                                          gboolean                *is_deprecated_alias,
                                                                          GError                 **error);
const char                *subagent_plugin_registry_resolve_auto         (SubagentPluginRegistry  *self,
                                                                          SubagentConfig          *config,
                                                                          gboolean                 git_work_tree,
                                                                          GError                 **error);
SubagentPluginInfo        *subagent_plugin_registry_find_for_leftovers   (SubagentPluginRegistry  *self,
                                                                          const char              *kind,
                                                                          GError                 **error);
SubagentPluginInfo        *subagent_plugin_registry_find_for_section     (SubagentPluginRegistry  *self,
                                                                          const char              *section);
gboolean                   subagent_plugin_registry_validate_config      (SubagentPluginRegistry  *self,
                                                                          SubagentConfig          *config,
                                                                          GStrv                   *warnings,
                                                                          GError                 **error);
GObject                   *subagent_plugin_registry_create_configured    (SubagentPluginRegistry  *self,
                                                                          SubagentConfig          *config,
                                                                          GType                    interface_type,
                                                                          const char              *backend,
                                                                          const char              *root,
                                                                          GError                 **error);

G_END_DECLS
