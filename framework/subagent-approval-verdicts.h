/* subagent-approval-verdicts.h: giving verdicts to one, some or all requests of a queue.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-approval-queue.h"

G_BEGIN_DECLS

gboolean subagent_approval_queue_approve             (SubagentApprovalQueue *self,
                                                      const char            *request_id,
                                                      const char            *actor);
gboolean subagent_approval_queue_deny                (SubagentApprovalQueue *self,
                                                      const char            *request_id,
                                                      const char            *reason,
                                                      const char            *actor);
guint    subagent_approval_queue_approve_batch       (SubagentApprovalQueue *self,
                                                      const char * const    *request_ids,
                                                      const char            *actor);
guint    subagent_approval_queue_deny_batch          (SubagentApprovalQueue *self,
                                                      const char * const    *request_ids,
                                                      const char            *reason,
                                                      const char            *actor);
guint    subagent_approval_queue_approve_all_pending (SubagentApprovalQueue *self,
                                                      const char            *actor);
guint    subagent_approval_queue_deny_all_pending    (SubagentApprovalQueue *self,
                                                      const char            *reason,
                                                      const char            *actor);
gboolean subagent_approval_queue_cancel              (SubagentApprovalQueue *self,
                                                      const char            *request_id);
guint    subagent_approval_queue_cancel_for_subagent (SubagentApprovalQueue *self,
                                                      const char            *subagent_id);

G_END_DECLS
