/* subagent-approval-queue.h: the centralized approval queue of one parent run.
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

#include "subagent-approval-request.h"
#include "subagent-approval-sink.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_APPROVAL_QUEUE (subagent_approval_queue_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentApprovalQueue, subagent_approval_queue, SUBAGENT, APPROVAL_QUEUE, GObject)

SUBAGENT_AVAILABLE_IN_ALL
const char           *subagent_approval_queue_get_parent_run_id   (SubagentApprovalQueue *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalSink *subagent_approval_queue_get_sink            (SubagentApprovalQueue *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                 subagent_approval_queue_get_default_timeout (SubagentApprovalQueue *self);
SUBAGENT_AVAILABLE_IN_ALL
void                  subagent_approval_queue_set_default_timeout (SubagentApprovalQueue *self,
                                                                   guint                  seconds);

SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_approval_queue_resolve (SubagentApprovalQueue   *self,
                                          const char              *request_id,
                                          SubagentApprovalStatus   status,
                                          const char              *reason,
                                          const char              *actor,
                                          GError                 **error);

SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalRequest *subagent_approval_queue_get_request     (SubagentApprovalQueue  *self,
                                                                  const char             *request_id);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray               *subagent_approval_queue_list_pending    (SubagentApprovalQueue  *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonArray               *subagent_approval_queue_pending_to_json (SubagentApprovalQueue  *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                    subagent_approval_queue_cleanup         (SubagentApprovalQueue  *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean                 subagent_approval_queue_reload_from_store (SubagentApprovalQueue  *self,
                                                                    GError                **error);

/* Submitting a request and waiting for its verdict. */
SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalStatus subagent_approval_queue_submit_sync   (SubagentApprovalQueue    *self,
                                                              SubagentApprovalRequest  *request,
                                                              GCancellable             *cancellable,
                                                              GError                  **error);
SUBAGENT_AVAILABLE_IN_ALL
void                   subagent_approval_queue_submit_async  (SubagentApprovalQueue    *self,
                                                              SubagentApprovalRequest  *request,
                                                              GCancellable             *cancellable,
                                                              GAsyncReadyCallback       callback,
                                                              gpointer                  user_data);
SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalStatus subagent_approval_queue_submit_finish (SubagentApprovalQueue    *self,
                                                              GAsyncResult             *result,
                                                              GError                  **error);

/* Giving verdicts to one, some or all requests of a queue. */
SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_approval_queue_approve             (SubagentApprovalQueue *self,
                                                      const char            *request_id,
                                                      const char            *actor);
SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_approval_queue_deny                (SubagentApprovalQueue *self,
                                                      const char            *request_id,
                                                      const char            *reason,
                                                      const char            *actor);
SUBAGENT_AVAILABLE_IN_ALL
guint    subagent_approval_queue_approve_batch       (SubagentApprovalQueue *self,
                                                      const char * const    *request_ids,
                                                      const char            *actor);
SUBAGENT_AVAILABLE_IN_ALL
guint    subagent_approval_queue_deny_batch          (SubagentApprovalQueue *self,
                                                      const char * const    *request_ids,
                                                      const char            *reason,
                                                      const char            *actor);
SUBAGENT_AVAILABLE_IN_ALL
guint    subagent_approval_queue_approve_all_pending (SubagentApprovalQueue *self,
                                                      const char            *actor);
SUBAGENT_AVAILABLE_IN_ALL
guint    subagent_approval_queue_deny_all_pending    (SubagentApprovalQueue *self,
                                                      const char            *reason,
                                                      const char            *actor);
SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_approval_queue_cancel              (SubagentApprovalQueue *self,
                                                      const char            *request_id);
SUBAGENT_AVAILABLE_IN_ALL
guint    subagent_approval_queue_cancel_for_subagent (SubagentApprovalQueue *self,
                                                      const char            *subagent_id);

/* The process-wide registry of approval queues. */
SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalQueue *subagent_approval_queue_get     (const char            *parent_run_id,
                                                        SubagentApprovalSink  *sink,
                                                        GError               **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalQueue *subagent_approval_queue_try_get (const char            *parent_run_id);
SUBAGENT_AVAILABLE_IN_ALL
gboolean               subagent_approval_queue_release (const char            *parent_run_id);

SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_should_use_centralized_approval (const char *parent_run_id,
                                                   gint        batch_index,
                                                   gboolean    parallel_mode);

G_END_DECLS
