/* subagent-run-context.h: everything a runner needs to run one child.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include "subagent-def.h"
#include "subagent-isolation-context.h"
#include "subagent-lineage.h"
#include "subagent-tool-registry.h"
#include "subagent-types.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_RUN_CONTEXT (subagent_run_context_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentRunContext, subagent_run_context, SUBAGENT, RUN_CONTEXT, GObject)

/* Built with g_object_new() and construct-only properties: task, definition,
 * depth, run-id, parent-run-id, lineage, tools, permission-mode, isolation,
 * max-iterations, max-tool-calls, timeout-seconds, max-cost-cents, batch-index,
 * approval-handler (a GObject implementing the approval route, nullable). */

SUBAGENT_AVAILABLE_IN_ALL
const char               *subagent_run_context_get_task            (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentDef              *subagent_run_context_get_definition      (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                     subagent_run_context_get_depth           (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
const char               *subagent_run_context_get_run_id          (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
const char               *subagent_run_context_get_parent_run_id   (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentLineage          *subagent_run_context_get_lineage         (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentToolRegistry     *subagent_run_context_get_tools           (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentPermissionMode    subagent_run_context_get_permission_mode (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentIsolationContext *subagent_run_context_get_isolation       (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                     subagent_run_context_get_max_iterations  (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                     subagent_run_context_get_max_tool_calls  (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                     subagent_run_context_get_timeout_seconds (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
double                    subagent_run_context_get_max_cost_cents  (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
gint                      subagent_run_context_get_batch_index     (SubagentRunContext *self);
SUBAGENT_AVAILABLE_IN_ALL
GObject                  *subagent_run_context_get_approval_handler (SubagentRunContext *self);

SUBAGENT_AVAILABLE_IN_0_2
void                      subagent_run_context_report_usage        (SubagentRunContext *self,
                                                                    guint               iterations,
                                                                    guint               tool_calls,
                                                                    double              cost_cents);

G_END_DECLS
