/* subagent-def.h: an immutable subagent definition.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <json-glib/json-glib.h>

#include "subagent-types.h"
#include "subagent-confinement.h"

G_BEGIN_DECLS

#define SUBAGENT_DEF_DEFAULT_MAX_ITERATIONS 5
#define SUBAGENT_DEF_DEFAULT_MAX_TOOL_CALLS 8
#define SUBAGENT_DEF_DEFAULT_MAX_DEPTH 1
#define SUBAGENT_DEF_DEFAULT_ISOLATION "shared"
#define SUBAGENT_DEF_DEFAULT_MAX_FOLLOW_UPS 3

#define SUBAGENT_TYPE_DEF (subagent_def_get_type ())
G_DECLARE_FINAL_TYPE (SubagentDef, subagent_def, SUBAGENT, DEF, GObject)

SubagentDef *subagent_def_new (const char *name);
SubagentDef *subagent_def_new_from_json (JsonObject  *object,
                                         const char  *source_path,
                                         GError     **error);
JsonObject  *subagent_def_to_json (SubagentDef *self);
gboolean     subagent_def_is_known_key (const char *key);
gboolean     subagent_def_name_is_valid (const char *name);

const char          *subagent_def_get_name             (SubagentDef *self);
const char          *subagent_def_get_description      (SubagentDef *self);
const char          *subagent_def_get_system_prompt    (SubagentDef *self);
const char          *subagent_def_get_model            (SubagentDef *self);
SubagentPermissionMode subagent_def_get_permission_mode (SubagentDef *self);
guint                subagent_def_get_max_iterations   (SubagentDef *self);
guint                subagent_def_get_max_tool_calls   (SubagentDef *self);
const char * const  *subagent_def_get_tool_whitelist   (SubagentDef *self);
const char * const  *subagent_def_get_disallowed_tools (SubagentDef *self);
guint                subagent_def_get_max_depth        (SubagentDef *self);
const char          *subagent_def_get_isolation        (SubagentDef *self);
gboolean             subagent_def_get_background       (SubagentDef *self);
const char          *subagent_def_get_effort           (SubagentDef *self);
const char * const  *subagent_def_get_command          (SubagentDef *self);
const char * const  *subagent_def_get_write_scope      (SubagentDef *self);
double               subagent_def_get_cpu_quota        (SubagentDef *self);
const char          *subagent_def_get_memory_limit     (SubagentDef *self);
guint                subagent_def_get_timeout_seconds  (SubagentDef *self);
double               subagent_def_get_max_cost_cents   (SubagentDef *self);
guint                subagent_def_get_max_follow_ups   (SubagentDef *self);
const char          *subagent_def_get_network          (SubagentDef *self);
SubagentConfinement  subagent_def_get_confinement      (SubagentDef *self);
const char          *subagent_def_get_source_path      (SubagentDef *self);

G_END_DECLS
