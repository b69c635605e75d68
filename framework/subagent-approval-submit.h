/* subagent-approval-submit.h: submitting a request and waiting for its verdict.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <gio/gio.h>

#include "subagent-approval-queue.h"

G_BEGIN_DECLS

SubagentApprovalStatus subagent_approval_queue_submit_sync   (SubagentApprovalQueue    *self,
                                                              SubagentApprovalRequest  *request,
                                                              GCancellable             *cancellable,
                                                              GError                  **error);
void                   subagent_approval_queue_submit_async  (SubagentApprovalQueue    *self,
                                                              SubagentApprovalRequest  *request,
                                                              GCancellable             *cancellable,
                                                              GAsyncReadyCallback       callback,
                                                              gpointer                  user_data);
SubagentApprovalStatus subagent_approval_queue_submit_finish (SubagentApprovalQueue    *self,
                                                              GAsyncResult             *result,
                                                              GError                  **error);

G_END_DECLS
