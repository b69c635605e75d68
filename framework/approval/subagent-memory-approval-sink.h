/* subagent-memory-approval-sink.h: the built-in approval sink, queues kept in memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <glib-object.h>

#include "subagent-approval-sink.h"

G_BEGIN_DECLS

/* The built-in sink: requests kept in memory, for one process. */
#define SUBAGENT_TYPE_MEMORY_APPROVAL_SINK (subagent_memory_approval_sink_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentMemoryApprovalSink, subagent_memory_approval_sink, SUBAGENT, MEMORY_APPROVAL_SINK, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalSink *subagent_memory_approval_sink_new (void);

G_END_DECLS
