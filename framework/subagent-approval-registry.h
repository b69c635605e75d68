/* subagent-approval-registry.h: the process-wide registry of approval queues.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-approval-queue.h"

G_BEGIN_DECLS

SubagentApprovalQueue *subagent_approval_queue_get     (const char            *parent_run_id,
                                                        SubagentApprovalSink  *sink,
                                                        GError               **error);
SubagentApprovalQueue *subagent_approval_queue_try_get (const char            *parent_run_id);
gboolean               subagent_approval_queue_release (const char            *parent_run_id);

gboolean subagent_should_use_centralized_approval (const char *parent_run_id,
                                                   gint        batch_index,
                                                   gboolean    parallel_mode);

G_END_DECLS
