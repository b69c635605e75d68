/* subagent-tool.h: one tool a registry offers.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define SUBAGENT_TYPE_TOOL (subagent_tool_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentTool, subagent_tool, SUBAGENT, TOOL, GObject)

/**
 * SubagentToolFunc:
 * @tool: the tool being invoked
 * @arguments: the call's arguments
 * @cancellable: (nullable): a #GCancellable
 * @user_data: (closure): the data given to subagent_tool_new()
 * @error: return location for a #GError
 *
 * Runs a tool. Called from whatever thread invoked it.
 *
 * Returns: (transfer full) (nullable): the tool's result, %NULL with @error set on failure
 */
typedef JsonNode *(*SubagentToolFunc) (SubagentTool  *tool,
                                       JsonObject    *arguments,
                                       GCancellable  *cancellable,
                                       gpointer       user_data,
                                       GError       **error);

SUBAGENT_AVAILABLE_IN_ALL
SubagentTool *subagent_tool_new (const char       *name,
                                 const char       *description,
                                 JsonObject       *input_schema,
                                 gboolean          destructive,
                                 SubagentToolFunc  func,
                                 gpointer          user_data,
                                 GDestroyNotify    destroy);

SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_tool_get_name         (SubagentTool *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_tool_get_description  (SubagentTool *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject *subagent_tool_get_input_schema (SubagentTool *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean    subagent_tool_get_destructive  (SubagentTool *self);

SUBAGENT_AVAILABLE_IN_ALL
gboolean    subagent_tool_name_is_valid    (const char   *name);

SUBAGENT_AVAILABLE_IN_ALL
JsonNode   *subagent_tool_call (SubagentTool  *self,
                                JsonObject    *arguments,
                                GCancellable  *cancellable,
                                GError       **error);

G_END_DECLS
