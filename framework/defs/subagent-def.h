/* subagent-def.h: an immutable subagent definition.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <json-glib/json-glib.h>

#include "subagent-types.h"

G_BEGIN_DECLS

#define SUBAGENT_DEF_DEFAULT_MAX_ITERATIONS 5
#define SUBAGENT_DEF_DEFAULT_MAX_TOOL_CALLS 8
#define SUBAGENT_DEF_DEFAULT_MAX_DEPTH 1
#define SUBAGENT_DEF_DEFAULT_ISOLATION "shared"
#define SUBAGENT_DEF_DEFAULT_MAX_FOLLOW_UPS 3

#define SUBAGENT_TYPE_DEF (subagent_def_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentDef, subagent_def, SUBAGENT, DEF, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentDef *subagent_def_new (const char *name);
SUBAGENT_AVAILABLE_IN_ALL
SubagentDef *subagent_def_new_from_json (JsonObject  *object,
                                         const char  *source_path,
                                         GError     **error);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject  *subagent_def_to_json (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean     subagent_def_is_known_key (const char *key);
SUBAGENT_AVAILABLE_IN_ALL
gboolean     subagent_def_name_is_valid (const char *name);

SUBAGENT_AVAILABLE_IN_ALL
const char          *subagent_def_get_name             (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
const char          *subagent_def_get_description      (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
const char          *subagent_def_get_system_prompt    (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
const char          *subagent_def_get_model            (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentPermissionMode subagent_def_get_permission_mode (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                subagent_def_get_max_iterations   (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                subagent_def_get_max_tool_calls   (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
const char * const  *subagent_def_get_tool_whitelist   (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
const char * const  *subagent_def_get_disallowed_tools (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                subagent_def_get_max_depth        (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
const char          *subagent_def_get_isolation        (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean             subagent_def_get_background       (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
const char          *subagent_def_get_effort           (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
const char * const  *subagent_def_get_command          (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
const char * const  *subagent_def_get_write_scope      (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
double               subagent_def_get_cpu_quota        (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
const char          *subagent_def_get_memory_limit     (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                subagent_def_get_timeout_seconds  (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
double               subagent_def_get_max_cost_cents   (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                subagent_def_get_max_follow_ups   (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
const char          *subagent_def_get_network          (SubagentDef *self);
SUBAGENT_AVAILABLE_IN_ALL
const char          *subagent_def_get_source_path      (SubagentDef *self);

G_END_DECLS
