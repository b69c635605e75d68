/* subagent-configurable.h: the one way a plugin object (isolation provider,
 * approval sink, any other kind) gets its workspace root and its options.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define SUBAGENT_TYPE_CONFIGURABLE (subagent_configurable_get_type ())
SUBAGENT_AVAILABLE_IN_0_2
G_DECLARE_INTERFACE (SubagentConfigurable, subagent_configurable, SUBAGENT, CONFIGURABLE, GObject)

/**
 * SubagentConfigurableInterface:
 * @list_options: the options the type understands (a #GPtrArray of
 *   #SubagentPluginOption, transfer full); %NULL: none
 * @configure: takes the workspace root and the options object; called once,
 *   right after the object is made and before any other call
 *
 * The virtual methods of #SubagentConfigurable.
 */
struct _SubagentConfigurableInterface
{
  GTypeInterface g_iface;

  GPtrArray *(*list_options) (SubagentConfigurable  *self);
  gboolean   (*configure)    (SubagentConfigurable  *self,
                              const char            *root,
                              JsonObject            *options,
                              GError               **error);

  /*< private >*/
  gpointer padding[8];
};

SUBAGENT_AVAILABLE_IN_0_2
GPtrArray *subagent_configurable_list_options (SubagentConfigurable  *self);
SUBAGENT_AVAILABLE_IN_0_2
gboolean   subagent_configurable_configure    (SubagentConfigurable  *self,
                                               const char            *root,
                                               JsonObject            *options,
                                               GError               **error);

SUBAGENT_AVAILABLE_IN_0_2
gboolean   subagent_plugin_configure          (GObject               *plugin_object,
                                               const char            *root,
                                               JsonObject            *options,
                                               GError               **error);

G_END_DECLS
