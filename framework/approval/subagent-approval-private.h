/* subagent-approval-private.h: helpers shared by the approval files, not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"
#include "subagent-json-private.h"

G_BEGIN_DECLS

#define SUBAGENT_APPROVAL_TEXT_MAX_LENGTH 4096
#define SUBAGENT_APPROVAL_NAME_MAX_LENGTH 256

/* The waiting host of a request (subagent-approval-request-host.c). */
G_GNUC_INTERNAL
gboolean _subagent_host_process_start_time   (gint64                   pid,
                                              guint64                 *out_start);
G_GNUC_INTERNAL
char    *_subagent_host_boot_id              (void);
G_GNUC_INTERNAL
void     _subagent_approval_request_set_host (SubagentApprovalRequest *self,
                                              gint64                   pid,
                                              guint64                  start_time,
                                              const char              *boot_id,
                                              const char              *host_name);

/* The arguments to read (sealed, not to be referenced): a copy's own once
 * its getter made them, else those of the request it was copied from. */
G_GNUC_INTERNAL
JsonObject *_subagent_approval_request_peek_tool_arguments (SubagentApprovalRequest *self);

/* Free text from callers or files: valid UTF-8, 1..max_length bytes, no
 * control characters but tab and newline. */
G_GNUC_INTERNAL
gboolean subagent_approval_text_is_valid (const char *text,
                                          gsize       max_length);
/* Text from approvers made usable: valid UTF-8, bounded, controls blanked;
 * NULL for NULL or "". */
G_GNUC_INTERNAL
char    *subagent_approval_text_sanitize (const char *text,
                                          gsize       max_length);
G_GNUC_INTERNAL
gboolean subagent_approval_timestamp_is_valid (const char *text);

/* A consistent snapshot of the verdict fields (all out-params nullable;
 * strings are transfer none and stay valid while @self lives). */
G_GNUC_INTERNAL
void     subagent_approval_request_get_verdict (SubagentApprovalRequest *self,
                                                SubagentApprovalStatus  *status,
                                                const char             **approved_at,
                                                const char             **denied_at,
                                                const char             **denial_reason,
                                                const char             **approved_by);

/* For new_from_json only: installs a verdict read from a (validated) file on
 * a request that was just constructed and is still pending. */
G_GNUC_INTERNAL
void     subagent_approval_request_restore_verdict (SubagentApprovalRequest *self,
                                                    SubagentApprovalStatus   status,
                                                    const char              *approved_at,
                                                    const char              *denied_at,
                                                    const char              *denial_reason,
                                                    const char              *approved_by);

/* The same PENDING → terminal transition as subagent_approval_request_transition(),
 * but taking the verdict and its stamps from @source (the same request as stored
 * elsewhere), so memory and store agree to the microsecond. Only when both have
 * the same action digest: FALSE (and a warning) otherwise. */
G_GNUC_INTERNAL
gboolean subagent_approval_request_adopt (SubagentApprovalRequest *self,
                                          SubagentApprovalRequest *source);

/* A sink watched on a private main context run by a worker thread; see
 * subagent-approval-submit.c. @callback runs on that thread (or on another
 * watcher's thread) whenever the sink reports a change of @parent_run_id. */
typedef struct _SubagentApprovalSinkWatcher SubagentApprovalSinkWatcher;
typedef void (*SubagentApprovalSinkWatcherFunc) (GObject *target);

G_GNUC_INTERNAL
SubagentApprovalSinkWatcher *subagent_approval_sink_watcher_start (SubagentApprovalSink            *sink,
                                                                   const char                      *parent_run_id,
                                                                   GObject                         *target,
                                                                   SubagentApprovalSinkWatcherFunc  callback);
G_GNUC_INTERNAL
void                         subagent_approval_sink_watcher_stop  (SubagentApprovalSinkWatcher     *watcher);

/* The queue's state, shared by subagent-approval-queue.c (state machine,
 * store) and subagent-approval-submit.c (waiting). */
typedef struct _SubagentApprovalAsyncWait SubagentApprovalAsyncWait;

struct _SubagentApprovalQueue
{
  GObject parent_instance;

  char *parent_run_id;
  SubagentApprovalSink *sink;
  guint default_timeout; /* atomic */

  GMutex lock;
  GCond cond;
  GHashTable *entries; /* request id → SubagentApprovalEntry */
  guint64 next_seq;

  SubagentApprovalSinkWatcher *watcher;
};

typedef struct {
  SubagentApprovalRequest *request;
  guint64 seq;
  guint waiters;         /* sync and async submitters still waiting */
  GPtrArray *async_waits; /* SubagentApprovalAsyncWait, owned */
} SubagentApprovalEntry;

struct _SubagentApprovalAsyncWait {
  gatomicrefcount ref;
  SubagentApprovalQueue *queue;   /* strong */
  SubagentApprovalRequest *request;
  GTask *task;                    /* until completed; guarded by queue->lock */
  GSource *timeout_source;
  GSource *cancel_source;
};

G_GNUC_INTERNAL
SubagentApprovalEntry   *subagent_approval_queue_add_entry_locked (SubagentApprovalQueue     *self,
                                                                   SubagentApprovalRequest   *request);
G_GNUC_INTERNAL
SubagentApprovalRequest *subagent_approval_queue_lookup           (SubagentApprovalQueue     *self,
                                                                   const char                *request_id);
G_GNUC_INTERNAL
void                     subagent_approval_queue_notify_resolved  (SubagentApprovalQueue     *self,
                                                                   SubagentApprovalRequest   *request);
G_GNUC_INTERNAL
guint                    subagent_approval_queue_resolve_many     (SubagentApprovalQueue     *self,
                                                                   const char * const        *request_ids,
                                                                   SubagentApprovalStatus     status,
                                                                   const char                *reason,
                                                                   const char                *actor);
G_GNUC_INTERNAL
void                     subagent_approval_queue_emit_added       (SubagentApprovalQueue     *self,
                                                                   SubagentApprovalRequest   *request);
G_GNUC_INTERNAL
SubagentApprovalAsyncWait *subagent_approval_async_wait_ref       (SubagentApprovalAsyncWait *wait);
G_GNUC_INTERNAL
void                     subagent_approval_async_wait_unref       (SubagentApprovalAsyncWait *wait);
G_GNUC_INTERNAL
void                     subagent_approval_async_wait_complete    (SubagentApprovalAsyncWait *wait,
                                                                   GError                    *error);

G_END_DECLS
