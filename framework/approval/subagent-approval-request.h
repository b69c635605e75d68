/* subagent-approval-request.h: one destructive tool call waiting for a verdict.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <json-glib/json-glib.h>

#include "subagent-lineage.h"
#include "subagent-types.h"

G_BEGIN_DECLS

/**
 * SUBAGENT_APPROVAL_DEFAULT_TIMEOUT_SECONDS:
 *
 * How long a request waits for a verdict unless told otherwise (reference: 180 s).
 */
#define SUBAGENT_APPROVAL_DEFAULT_TIMEOUT_SECONDS 180

/**
 * SUBAGENT_APPROVAL_MAX_TIMEOUT_SECONDS:
 *
 * The longest timeout a request may carry: one week.
 */
#define SUBAGENT_APPROVAL_MAX_TIMEOUT_SECONDS (7 * 24 * 3600)

/**
 * SUBAGENT_APPROVAL_ID_MAX_LENGTH:
 *
 * The longest run, subagent or request id accepted.
 */
#define SUBAGENT_APPROVAL_ID_MAX_LENGTH 128

#define SUBAGENT_TYPE_APPROVAL_REQUEST (subagent_approval_request_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentApprovalRequest, subagent_approval_request, SUBAGENT, APPROVAL_REQUEST, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalRequest *subagent_approval_request_new           (const char  *subagent_id,
                                                                  const char  *parent_run_id,
                                                                  const char  *subagent_name,
                                                                  const char  *tool_name,
                                                                  JsonObject  *tool_arguments,
                                                                  const char  *permission_mode,
                                                                  const char  *isolation,
                                                                  gint         batch_index,
                                                                  const char  *worktree_path,
                                                                  guint        timeout_seconds);
SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalRequest *subagent_approval_request_new_from_json (JsonObject  *object,
                                                                  GError     **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalRequest *subagent_approval_request_copy          (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject              *subagent_approval_request_to_json       (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_0_2
char                    *subagent_approval_request_to_json_string (SubagentApprovalRequest *self);

SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_approval_request_transition (SubagentApprovalRequest *self,
                                               SubagentApprovalStatus   to,
                                               const char              *reason,
                                               const char              *actor);

SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_request_id      (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_subagent_id     (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_parent_run_id   (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_subagent_name   (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_tool_name       (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject            *subagent_approval_request_get_tool_arguments  (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_permission_mode (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_isolation       (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
gint                   subagent_approval_request_get_batch_index     (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_worktree_path   (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_created_at      (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalStatus subagent_approval_request_get_status          (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_approved_at     (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_denied_at       (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_denial_reason   (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_approved_by     (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                  subagent_approval_request_get_timeout_seconds (SubagentApprovalRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_approval_request_get_action_digest   (SubagentApprovalRequest *self);

SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_approval_id_is_valid        (const char             *id);
SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_approval_status_is_terminal (SubagentApprovalStatus  status);

SUBAGENT_AVAILABLE_IN_0_2
gboolean    subagent_approval_request_get_host          (SubagentApprovalRequest  *self,
                                                         gint64                   *out_pid,
                                                         guint64                  *out_start_time,
                                                         const char              **out_boot_id,
                                                         const char              **out_host_name);
SUBAGENT_AVAILABLE_IN_0_2
gboolean    subagent_approval_request_is_abandoned      (SubagentApprovalRequest  *self);

G_END_DECLS
