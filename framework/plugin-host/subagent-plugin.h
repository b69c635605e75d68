/* subagent-plugin.h: the ABI a plugin module exports.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gmodule.h>
#include <glib-object.h>

G_BEGIN_DECLS

/**
 * SUBAGENT_PLUGIN_ABI_MAJOR:
 *
 * The plugin ABI's major version: a module built for another major is refused.
 */
#define SUBAGENT_PLUGIN_ABI_MAJOR 1
/**
 * SUBAGENT_PLUGIN_ABI_MINOR:
 *
 * The plugin ABI's minor version: a module built for a newer minor than the host's is refused.
 */
#define SUBAGENT_PLUGIN_ABI_MINOR 0

/**
 * SUBAGENT_PLUGIN_DESCRIPTOR_SYMBOL:
 *
 * The name of the #SubagentPluginDescriptor a module exports (see SUBAGENT_PLUGIN_DEFINE()).
 */
#define SUBAGENT_PLUGIN_DESCRIPTOR_SYMBOL "subagent_plugin_descriptor"

#define SUBAGENT_TYPE_PLUGIN_MODULE (subagent_plugin_module_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentPluginModule, subagent_plugin_module, SUBAGENT, PLUGIN_MODULE, GTypeModule)

/**
 * SubagentPluginRegisterFunc:
 * @module: the module to register types on (with G_DEFINE_DYNAMIC_TYPE and friends)
 * @error: return location for a #GError
 *
 * Registers the plugin's types and says which backend each one serves with
 * subagent_plugin_module_provide().
 *
 * Returns: %TRUE on success
 */
typedef gboolean (*SubagentPluginRegisterFunc) (SubagentPluginModule  *module,
                                                GError               **error);

/**
 * SubagentPluginDescriptor:
 * @abi_major: %SUBAGENT_PLUGIN_ABI_MAJOR the module was built with
 * @abi_minor: %SUBAGENT_PLUGIN_ABI_MINOR the module was built with
 * @name: the plugin's name (matches its `.plugin` file)
 * @version: the plugin's version
 * @license: an SPDX license identifier
 * @description: one line
 * @register_types: the register function
 *
 * What a module exports under %SUBAGENT_PLUGIN_DESCRIPTOR_SYMBOL.
 */
typedef struct {
  guint abi_major;
  guint abi_minor;
  const char *name;
  const char *version;
  const char *license;
  const char *description;
  SubagentPluginRegisterFunc register_types;
  /*< private >*/
  gpointer padding[8];
} SubagentPluginDescriptor;

/**
 * SUBAGENT_PLUGIN_DEFINE:
 * @name: the plugin's name (a string)
 * @version: its version (a string)
 * @license: its SPDX license (a string)
 * @description: one line (a string)
 * @register_func: a #SubagentPluginRegisterFunc
 *
 * Exports the plugin's descriptor. Use once per module.
 */
#define SUBAGENT_PLUGIN_DEFINE(name, version, license, description, register_func) \
  G_MODULE_EXPORT const SubagentPluginDescriptor subagent_plugin_descriptor = {     \
    SUBAGENT_PLUGIN_ABI_MAJOR, SUBAGENT_PLUGIN_ABI_MINOR,                           \
    name, version, license, description, register_func, { NULL }                    \
  };

SUBAGENT_AVAILABLE_IN_ALL
void  subagent_plugin_module_provide      (SubagentPluginModule *self,
                                           const char           *backend,
                                           GType                 type);
SUBAGENT_AVAILABLE_IN_ALL
GType subagent_plugin_module_get_provided (SubagentPluginModule *self,
                                           const char           *backend);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_plugin_module_get_path (SubagentPluginModule *self);

SUBAGENT_AVAILABLE_IN_ALL
SubagentPluginModule           *subagent_plugin_module_load_file      (const char            *path,
                                                                      GError               **error);
SUBAGENT_AVAILABLE_IN_ALL
const SubagentPluginDescriptor *subagent_plugin_module_get_descriptor (SubagentPluginModule  *self);
SUBAGENT_AVAILABLE_IN_ALL
char                          **subagent_plugin_module_list_backends  (SubagentPluginModule  *self);

G_END_DECLS
