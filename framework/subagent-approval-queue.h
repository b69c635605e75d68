/* subagent-approval-queue.h: the centralized approval queue of one parent run.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "subagent-approval-request.h"
#include "subagent-approval-sink.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_APPROVAL_QUEUE (subagent_approval_queue_get_type ())
G_DECLARE_FINAL_TYPE (SubagentApprovalQueue, subagent_approval_queue, SUBAGENT, APPROVAL_QUEUE, GObject)

const char           *subagent_approval_queue_get_parent_run_id   (SubagentApprovalQueue *self);
SubagentApprovalSink *subagent_approval_queue_get_sink            (SubagentApprovalQueue *self);
guint                 subagent_approval_queue_get_default_timeout (SubagentApprovalQueue *self);
void                  subagent_approval_queue_set_default_timeout (SubagentApprovalQueue *self,
                                                                   guint                  seconds);

gboolean subagent_approval_queue_resolve (SubagentApprovalQueue   *self,
                                          const char              *request_id,
                                          SubagentApprovalStatus   status,
                                          const char              *reason,
                                          const char              *actor,
                                          GError                 **error);

SubagentApprovalRequest *subagent_approval_queue_get_request     (SubagentApprovalQueue  *self,
                                                                  const char             *request_id);
GPtrArray               *subagent_approval_queue_list_pending    (SubagentApprovalQueue  *self);
JsonArray               *subagent_approval_queue_pending_to_json (SubagentApprovalQueue  *self);
guint                    subagent_approval_queue_cleanup         (SubagentApprovalQueue  *self);
gboolean                 subagent_approval_queue_reload_from_store (SubagentApprovalQueue  *self,
                                                                    GError                **error);

G_END_DECLS
