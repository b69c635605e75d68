/* subagent-delegation-tools.h: the delegation tools a host hands its model.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include "subagent-supervisor.h"
#include "subagent-tool-registry.h"

G_BEGIN_DECLS

#define SUBAGENT_TOOL_SUBAGENT "subagent"
#define SUBAGENT_TOOL_SUBAGENT_BATCH "subagent_batch"
#define SUBAGENT_TOOL_TEAM "team"

SUBAGENT_AVAILABLE_IN_ALL
GPtrArray  *subagent_delegation_tools_new      (SubagentSupervisor          *supervisor);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_delegation_tools_register (SubagentSupervisor          *supervisor,
                                                SubagentSimpleToolRegistry  *registry);
SUBAGENT_AVAILABLE_IN_ALL
char       *subagent_delegation_tool_name_for_def (const char               *def_name);

G_END_DECLS
