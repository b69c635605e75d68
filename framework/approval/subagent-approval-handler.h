/* subagent-approval-handler.h: one child's route to an approval.
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

#include "subagent-approval-queue.h"
#include "subagent-types.h"

G_BEGIN_DECLS

/**
 * SUBAGENT_APPROVAL_UNATTENDED_REASON:
 *
 * The reason given when a child with no approver asks for an approval.
 */
#define SUBAGENT_APPROVAL_UNATTENDED_REASON "no approver can reach this subagent"

/**
 * SubagentApprovalDecision:
 * @SUBAGENT_APPROVAL_DECISION_ALLOW: run the tool call
 * @SUBAGENT_APPROVAL_DECISION_DENY: do not run it; a reason says why
 *
 * The answer a child's tool executor gets for one call.
 */
typedef enum {
  SUBAGENT_APPROVAL_DECISION_ALLOW,
  SUBAGENT_APPROVAL_DECISION_DENY,
} SubagentApprovalDecision;

#define SUBAGENT_TYPE_APPROVAL_DECISION (subagent_approval_decision_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
GType subagent_approval_decision_get_type (void) G_GNUC_CONST;

#define SUBAGENT_TYPE_APPROVAL_HANDLER (subagent_approval_handler_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentApprovalHandler, subagent_approval_handler, SUBAGENT, APPROVAL_HANDLER, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalHandler *subagent_approval_handler_new (SubagentApprovalQueue  *queue,
                                                        const char             *subagent_id,
                                                        const char             *subagent_name,
                                                        gint                    batch_index,
                                                        const char             *isolation,
                                                        const char             *worktree_path,
                                                        SubagentPermissionMode  mode);

SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalDecision subagent_approval_handler_check (SubagentApprovalHandler  *self,
                                                          const char               *tool_name,
                                                          JsonObject               *arguments,
                                                          gboolean                  destructive,
                                                          gboolean                  inside_workspace,
                                                          GCancellable             *cancellable,
                                                          char                    **reason_out);
SUBAGENT_AVAILABLE_IN_ALL
guint                    subagent_approval_handler_cancel_pending (SubagentApprovalHandler *self);

SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalQueue  *subagent_approval_handler_get_queue           (SubagentApprovalHandler *self);
SUBAGENT_AVAILABLE_IN_ALL
const char             *subagent_approval_handler_get_subagent_id     (SubagentApprovalHandler *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentPermissionMode  subagent_approval_handler_get_permission_mode (SubagentApprovalHandler *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean                subagent_approval_handler_is_unattended       (SubagentApprovalHandler *self);

G_END_DECLS
