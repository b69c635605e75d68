/* subagent-types.h: enumerations shared across libsubagent.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <glib-object.h>

G_BEGIN_DECLS

/**
 * SubagentPermissionMode:
 * @SUBAGENT_PERMISSION_MODE_INHERIT: take the parent's mode (the default of a definition)
 * @SUBAGENT_PERMISSION_MODE_READ_ONLY: destructive tools are refused
 * @SUBAGENT_PERMISSION_MODE_PROMPT: every destructive tool call needs an approval
 * @SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE: destructive calls inside the workspace run; others need an approval
 * @SUBAGENT_PERMISSION_MODE_ALLOW: destructive calls run without approval, inside the isolation
 * @SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS: everything runs, nothing is asked
 *
 * How a run treats destructive tool calls. The values are ordered from the
 * strictest (%SUBAGENT_PERMISSION_MODE_READ_ONLY) to the loosest; a child's
 * mode is never looser than its parent's.
 */
typedef enum {
  SUBAGENT_PERMISSION_MODE_INHERIT,
  SUBAGENT_PERMISSION_MODE_READ_ONLY,
  SUBAGENT_PERMISSION_MODE_PROMPT,
  SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE,
  SUBAGENT_PERMISSION_MODE_ALLOW,
  SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS,
} SubagentPermissionMode;

/**
 * SubagentRunStatus:
 * @SUBAGENT_RUN_STATUS_COMPLETE: the child finished its task
 * @SUBAGENT_RUN_STATUS_PARTIAL: the child stopped early (limits, budget, cancelled after producing output)
 * @SUBAGENT_RUN_STATUS_CANCELLED: the child was cancelled before producing anything
 * @SUBAGENT_RUN_STATUS_FAILED: the child failed
 * @SUBAGENT_RUN_STATUS_ERROR: the run could not start (depth, isolation, bad input)
 *
 * The terminal status of a child run.
 */
typedef enum {
  SUBAGENT_RUN_STATUS_COMPLETE,
  SUBAGENT_RUN_STATUS_PARTIAL,
  SUBAGENT_RUN_STATUS_CANCELLED,
  SUBAGENT_RUN_STATUS_FAILED,
  SUBAGENT_RUN_STATUS_ERROR,
} SubagentRunStatus;

/**
 * SubagentApprovalStatus:
 * @SUBAGENT_APPROVAL_STATUS_PENDING: waiting for a verdict
 * @SUBAGENT_APPROVAL_STATUS_APPROVED: approved (terminal)
 * @SUBAGENT_APPROVAL_STATUS_DENIED: denied (terminal)
 * @SUBAGENT_APPROVAL_STATUS_TIMEOUT: nobody answered in time (terminal)
 * @SUBAGENT_APPROVAL_STATUS_CANCELLED: the child ended first (terminal)
 * @SUBAGENT_APPROVAL_STATUS_ABANDONED: its host died while it was pending;
 *   set by `subagentctl approvals prune` (terminal). Since: 0.2
 *
 * The state of an approval request. Only %SUBAGENT_APPROVAL_STATUS_PENDING
 * ever changes.
 */
typedef enum {
  SUBAGENT_APPROVAL_STATUS_PENDING,
  SUBAGENT_APPROVAL_STATUS_APPROVED,
  SUBAGENT_APPROVAL_STATUS_DENIED,
  SUBAGENT_APPROVAL_STATUS_TIMEOUT,
  SUBAGENT_APPROVAL_STATUS_CANCELLED,
  SUBAGENT_APPROVAL_STATUS_ABANDONED,
} SubagentApprovalStatus;

/**
 * SubagentCancelCause:
 * @SUBAGENT_CANCEL_CAUSE_USER: a person asked for it
 * @SUBAGENT_CANCEL_CAUSE_SYSTEM: the host did (shutdown, budget, phase end)
 *
 * Why a child was cancelled.
 */
typedef enum {
  SUBAGENT_CANCEL_CAUSE_USER,
  SUBAGENT_CANCEL_CAUSE_SYSTEM,
} SubagentCancelCause;

/**
 * SubagentReclaimOutcome:
 * @SUBAGENT_RECLAIM_REMOVED: the leftover is gone (removed now, or already gone); its owner record may go
 * @SUBAGENT_RECLAIM_SKIPPED: not verifiably the record's resource: left alone, record kept
 * @SUBAGENT_RECLAIM_FAILED: it is ours but could not be removed
 *
 * What reclaiming a dead owner's workspace came to (see
 * subagent_isolation_provider_reclaim()).
 */
typedef enum {
  SUBAGENT_RECLAIM_REMOVED,
  SUBAGENT_RECLAIM_SKIPPED,
  SUBAGENT_RECLAIM_FAILED,
} SubagentReclaimOutcome;

/**
 * SubagentReclaimFlags:
 * @SUBAGENT_RECLAIM_FLAGS_NONE: remove what is verifiably ours
 * @SUBAGENT_RECLAIM_FLAGS_DRY_RUN: only check and say what would be removed
 *
 * How subagent_isolation_provider_reclaim() works.
 */
typedef enum /*< flags >*/ {
  SUBAGENT_RECLAIM_FLAGS_NONE = 0,
  SUBAGENT_RECLAIM_FLAGS_DRY_RUN = 1 << 0,
} SubagentReclaimFlags;

/**
 * SubagentRiskLevel:
 * @SUBAGENT_RISK_LEVEL_NONE: no risk level given
 * @SUBAGENT_RISK_LEVEL_LOW: harmless work; speed matters most
 * @SUBAGENT_RISK_LEVEL_MEDIUM: may change things; contain it
 * @SUBAGENT_RISK_LEVEL_HIGH: may do damage; the strongest sandbox, tight limits
 * @SUBAGENT_RISK_LEVEL_CRITICAL: as high, tighter still, read-only at most
 *
 * How risky a skill (or a run) is, as reference 001's `skill_risk_level`;
 * routes `isolation: auto` through the configured risk policy
 * (#SubagentRoutingPolicy).
 *
 * Since: 0.2
 */
typedef enum {
  SUBAGENT_RISK_LEVEL_NONE,
  SUBAGENT_RISK_LEVEL_LOW,
  SUBAGENT_RISK_LEVEL_MEDIUM,
  SUBAGENT_RISK_LEVEL_HIGH,
  SUBAGENT_RISK_LEVEL_CRITICAL,
} SubagentRiskLevel;

/**
 * subagent_risk_level_from_string:
 * @text: (nullable): `low`, `medium`, `high` or `critical` (any case)
 * @level: (out): where to store the level
 *
 * Parses a name into a value.
 *
 * Returns: %TRUE if @text names a level; %NULL or "" give %SUBAGENT_RISK_LEVEL_NONE.
 *
 * Since: 0.2
 */
SUBAGENT_AVAILABLE_IN_0_2
gboolean subagent_risk_level_from_string (const char        *text,
                                          SubagentRiskLevel *level);

/**
 * subagent_risk_level_to_string:
 * @level: a level
 *
 * Gives the name of a value.
 *
 * Returns: (transfer none): `none`, `low`, `medium`, `high` or `critical`
 *
 * Since: 0.2
 */
SUBAGENT_AVAILABLE_IN_0_2
const char *subagent_risk_level_to_string (SubagentRiskLevel level);

SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_permission_mode_from_string (const char             *text,
                                               SubagentPermissionMode *mode);

SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_permission_mode_to_string (SubagentPermissionMode mode);

/**
 * subagent_permission_mode_clamp:
 * @parent: the parent's effective mode
 * @requested: what the child asks for (may be %SUBAGENT_PERMISSION_MODE_INHERIT)
 *
 * A child can only be as strict as or stricter than its parent.
 *
 * Returns: the stricter of @parent and @requested
 */
SUBAGENT_AVAILABLE_IN_ALL
SubagentPermissionMode subagent_permission_mode_clamp (SubagentPermissionMode parent,
                                                       SubagentPermissionMode requested);

SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_run_status_to_string (SubagentRunStatus status);

SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_approval_status_to_string (SubagentApprovalStatus status);

SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_approval_status_from_string (const char             *text,
                                               SubagentApprovalStatus *status);

G_END_DECLS
