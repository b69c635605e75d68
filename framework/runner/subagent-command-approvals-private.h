/* subagent-command-approvals-private.h: the approval requests of one command run.
 *
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"

G_BEGIN_DECLS

/* How many requests of one child may wait for a verdict at once; more are
 * denied at once (each waiting request holds a thread). */
#define SUBAGENT_COMMAND_APPROVALS_MAX_IN_FLIGHT 32

typedef struct _SubagentCommandApprovals SubagentCommandApprovals;

/* Writes one reply (a JSON object and "\n") to the child's stdin. */
typedef void (*SubagentCommandApprovalsReplyFunc) (GBytes   *line,
                                                   gpointer  user_data);
/* The last request that was waiting got its answer. */
typedef void (*SubagentCommandApprovalsIdleFunc)  (gpointer  user_data);

/* Answers the `approval_request` messages of the child of @context through
 * its approval handler. @reply and @idle run on @main_context; @owner (the
 * run's task) is kept alive while a request waits. */
G_GNUC_INTERNAL
SubagentCommandApprovals *subagent_command_approvals_new           (SubagentRunContext                *context,
                                                                    GMainContext                      *main_context,
                                                                    const char                        *label,
                                                                    SubagentCommandApprovalsReplyFunc  reply,
                                                                    SubagentCommandApprovalsIdleFunc   idle,
                                                                    GObject                           *owner,
                                                                    gpointer                           user_data);
G_GNUC_INTERNAL
void                      subagent_command_approvals_handle        (SubagentCommandApprovals          *self,
                                                                    JsonObject                        *message);
/* The child is stopping or gone: cancels every wait (their requests become
 * cancelled in the queue) and sends no more replies. */
G_GNUC_INTERNAL
void                      subagent_command_approvals_stop          (SubagentCommandApprovals          *self);
G_GNUC_INTERNAL
guint                     subagent_command_approvals_get_in_flight (SubagentCommandApprovals          *self);
G_GNUC_INTERNAL
void                      subagent_command_approvals_free          (SubagentCommandApprovals          *self);

G_END_DECLS
