/* subagent-approval-policy.h: what a permission mode does with a tool call.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <glib-object.h>

#include "subagent-types.h"

G_BEGIN_DECLS

/**
 * SubagentApprovalRequirement:
 * @SUBAGENT_APPROVAL_REQUIREMENT_ALLOW: the call runs without asking
 * @SUBAGENT_APPROVAL_REQUIREMENT_NEEDS_APPROVAL: the call runs only once approved
 * @SUBAGENT_APPROVAL_REQUIREMENT_REFUSE: the call is refused; nobody is asked
 *
 * What the permission policy requires before a tool call runs.
 */
typedef enum {
  SUBAGENT_APPROVAL_REQUIREMENT_ALLOW,
  SUBAGENT_APPROVAL_REQUIREMENT_NEEDS_APPROVAL,
  SUBAGENT_APPROVAL_REQUIREMENT_REFUSE,
} SubagentApprovalRequirement;

#define SUBAGENT_TYPE_APPROVAL_REQUIREMENT (subagent_approval_requirement_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
GType subagent_approval_requirement_get_type (void) G_GNUC_CONST;

SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalRequirement subagent_approval_policy_evaluate       (SubagentPermissionMode mode,
                                                                     gboolean               destructive,
                                                                     gboolean               inside_workspace);
SUBAGENT_AVAILABLE_IN_ALL
SubagentPermissionMode      subagent_approval_policy_effective_mode (SubagentPermissionMode parent,
                                                                     SubagentPermissionMode requested,
                                                                     const char            *isolation);
SUBAGENT_AVAILABLE_IN_ALL
const char                 *subagent_approval_requirement_to_string (SubagentApprovalRequirement requirement);

G_END_DECLS
