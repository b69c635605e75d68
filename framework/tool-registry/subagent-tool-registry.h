/* subagent-tool-registry.h: the interface hosts adapt their tool system to.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include "subagent-tool.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_TOOL_REGISTRY (subagent_tool_registry_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (SubagentToolRegistry, subagent_tool_registry, SUBAGENT, TOOL_REGISTRY, GObject)

/**
 * SubagentToolRegistryInterface:
 * @list_tools: returns the tools, sorted by name
 * @lookup: returns one tool or %NULL
 * @invoke: runs a tool by name; must refuse names that @lookup does not return
 *
 * The virtual methods of #SubagentToolRegistry.
 */
struct _SubagentToolRegistryInterface
{
  GTypeInterface g_iface;

  GPtrArray    *(*list_tools) (SubagentToolRegistry  *self);
  SubagentTool *(*lookup)     (SubagentToolRegistry  *self,
                               const char            *name);
  JsonNode     *(*invoke)     (SubagentToolRegistry  *self,
                               const char            *name,
                               JsonObject            *arguments,
                               GCancellable          *cancellable,
                               GError               **error);

  /*< private >*/
  gpointer padding[8];
};

SUBAGENT_AVAILABLE_IN_ALL
GPtrArray    *subagent_tool_registry_list_tools (SubagentToolRegistry  *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentTool *subagent_tool_registry_lookup     (SubagentToolRegistry  *self,
                                                 const char            *name);
SUBAGENT_AVAILABLE_IN_ALL
gboolean      subagent_tool_registry_has_tool   (SubagentToolRegistry  *self,
                                                 const char            *name);
SUBAGENT_AVAILABLE_IN_ALL
JsonNode     *subagent_tool_registry_invoke     (SubagentToolRegistry  *self,
                                                 const char            *name,
                                                 JsonObject            *arguments,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SUBAGENT_AVAILABLE_IN_ALL
char        **subagent_tool_registry_list_names (SubagentToolRegistry  *self);

/* SubagentSimpleToolRegistry: a plain name → tool table. */
#define SUBAGENT_TYPE_SIMPLE_TOOL_REGISTRY (subagent_simple_tool_registry_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentSimpleToolRegistry, subagent_simple_tool_registry, SUBAGENT, SIMPLE_TOOL_REGISTRY, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentSimpleToolRegistry *subagent_simple_tool_registry_new    (void);
SUBAGENT_AVAILABLE_IN_ALL
void                        subagent_simple_tool_registry_add    (SubagentSimpleToolRegistry *self,
                                                                  SubagentTool               *tool);
SUBAGENT_AVAILABLE_IN_ALL
gboolean                    subagent_simple_tool_registry_remove (SubagentSimpleToolRegistry *self,
                                                                  const char                 *name);

/* SubagentChildToolRegistry: a narrowing view of a parent registry. */
#define SUBAGENT_TYPE_CHILD_TOOL_REGISTRY (subagent_child_tool_registry_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentChildToolRegistry, subagent_child_tool_registry, SUBAGENT, CHILD_TOOL_REGISTRY, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentChildToolRegistry *subagent_child_tool_registry_new (SubagentToolRegistry *parent,
                                                             const char * const   *whitelist,
                                                             const char * const   *disallowed);
SUBAGENT_AVAILABLE_IN_ALL
SubagentToolRegistry      *subagent_child_tool_registry_get_parent (SubagentChildToolRegistry *self);

SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_tool_name_is_delegation (const char *name);

G_END_DECLS
