/* subagent-approval-request-private.h: what the files of
 * SubagentApprovalRequest share: its fields and a few helpers
 * (subagent-approval-request.c: the object; subagent-approval-request-verdict.c:
 * its state machine; subagent-approval-request-host.c: the waiting host).
 * Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"

G_BEGIN_DECLS

struct _SubagentApprovalRequest
{
  GObject parent_instance;

  char *request_id;
  char *subagent_id;
  char *parent_run_id;
  char *subagent_name;
  char *tool_name;
  /* NULL in a copy until its getter is called: the copy reads the
   * arguments of @arguments_owner (kept alive, never changed) until then. */
  JsonObject *tool_arguments;
  SubagentApprovalRequest *arguments_owner;
  char *permission_mode;
  char *isolation;
  gint batch_index;
  char *worktree_path;
  char *created_at;
  guint timeout_seconds;
  char *action_digest;
  /* The process waiting for the verdict; host_pid 0 when unknown (a
   * document written before it was recorded). */
  gint64 host_pid;
  guint64 host_start_time;
  char *host_boot_id;
  char *host_name;

  GMutex lock;
  SubagentApprovalStatus status;
  char *approved_at;
  char *denied_at;
  char *denial_reason;
  char *approved_by;
};

/* A public getter of one field (the verdict's through locked_string()). */
#define SUBAGENT_APPROVAL_REQUEST_GETTER(type, name, expr) \
  type \
  subagent_approval_request_get_##name (SubagentApprovalRequest *self) \
  { \
    g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (self), 0); \
    return (expr); \
  }

/* Now, ISO-8601 UTC with microseconds (subagent-approval-request.c). */
G_GNUC_INTERNAL
char     *_subagent_approval_request_now_iso8601   (void);
/* Notifies #SubagentApprovalRequest:status (subagent-approval-request.c). */
G_GNUC_INTERNAL
void      _subagent_approval_request_notify_status (SubagentApprovalRequest  *self);
/* This process as the host that waits for verdicts; FALSE when it cannot
 * tell (subagent-approval-request-host.c). */
G_GNUC_INTERNAL
gboolean  _subagent_approval_request_own_host      (gint64                   *out_pid,
                                                    guint64                  *out_start,
                                                    char                    **out_boot_id);

G_END_DECLS
