/* subagent-approval-policy.c: what a permission mode does with a tool call.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"

G_DEFINE_ENUM_TYPE (SubagentApprovalRequirement, subagent_approval_requirement,
  G_DEFINE_ENUM_VALUE (SUBAGENT_APPROVAL_REQUIREMENT_ALLOW, "allow"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_APPROVAL_REQUIREMENT_NEEDS_APPROVAL, "needs-approval"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_APPROVAL_REQUIREMENT_REFUSE, "refuse"))

/**
 * subagent_approval_policy_evaluate:
 * @mode: the run's effective permission mode (%SUBAGENT_PERMISSION_MODE_INHERIT counts as prompt)
 * @destructive: whether the tool changes anything (see subagent_tool_get_destructive())
 * @inside_workspace: whether the call's effects stay inside the child's workspace
 *
 * The permission table of `docs/approvals.md`. A call that changes nothing
 * is always allowed, even in read-only mode. A destructive call is:
 *
 * - refused in `read-only`;
 * - sent for approval in `prompt` (and `inherit`);
 * - allowed inside the workspace and sent for approval outside it in
 *   `workspace-write`;
 * - allowed in `allow`, whose bound is the isolation itself (a run in
 *   `shared` isolation has none, which is why
 *   subagent_approval_policy_effective_mode() narrows `allow` to
 *   `workspace-write` there);
 * - allowed in `danger-full-access`.
 *
 * Returns: what must happen before the call runs
 */
SubagentApprovalRequirement
subagent_approval_policy_evaluate (SubagentPermissionMode mode,
                                   gboolean               destructive,
                                   gboolean               inside_workspace)
{
  if (!destructive)
    return SUBAGENT_APPROVAL_REQUIREMENT_ALLOW;

  switch (mode)
    {
    case SUBAGENT_PERMISSION_MODE_READ_ONLY:
      return SUBAGENT_APPROVAL_REQUIREMENT_REFUSE;
    case SUBAGENT_PERMISSION_MODE_INHERIT:
    case SUBAGENT_PERMISSION_MODE_PROMPT:
      return SUBAGENT_APPROVAL_REQUIREMENT_NEEDS_APPROVAL;
    case SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE:
      return inside_workspace ? SUBAGENT_APPROVAL_REQUIREMENT_ALLOW : SUBAGENT_APPROVAL_REQUIREMENT_NEEDS_APPROVAL;
    case SUBAGENT_PERMISSION_MODE_ALLOW:
    case SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS:
      return SUBAGENT_APPROVAL_REQUIREMENT_ALLOW;
    default:
      /* An unknown mode is treated as the strictest one. */
      return SUBAGENT_APPROVAL_REQUIREMENT_REFUSE;
    }
}

/**
 * subagent_approval_policy_effective_mode:
 * @parent: the parent's effective mode
 * @requested: what the child's definition asks for (may be %SUBAGENT_PERMISSION_MODE_INHERIT)
 * @isolation: (nullable): the child's isolation mode by name; %NULL is `shared`
 *
 * The mode a child's tool calls are checked against: the stricter of
 * @parent and @requested (subagent_permission_mode_clamp(), so a child is
 * never looser than its parent), `inherit` resolved to `prompt`, and
 * `allow` narrowed to `workspace-write` when the child runs in `shared`
 * isolation, since `allow` is only as safe as the isolation that bounds it.
 *
 * Returns: the effective mode, never %SUBAGENT_PERMISSION_MODE_INHERIT
 */
SubagentPermissionMode
subagent_approval_policy_effective_mode (SubagentPermissionMode parent,
                                         SubagentPermissionMode requested,
                                         const char            *isolation)
{
  SubagentPermissionMode mode = subagent_permission_mode_clamp (parent, requested);

  if (mode == SUBAGENT_PERMISSION_MODE_INHERIT)
    mode = SUBAGENT_PERMISSION_MODE_PROMPT;
  if (mode == SUBAGENT_PERMISSION_MODE_ALLOW &&
      (isolation == NULL || *isolation == '\0' || strcmp (isolation, SUBAGENT_ISOLATION_SHARED) == 0))
    mode = SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE;
  return mode;
}

/**
 * subagent_approval_requirement_to_string:
 * @requirement: a requirement
 *
 * Returns: (transfer none): `allow`, `needs-approval` or `refuse`
 */
const char *
subagent_approval_requirement_to_string (SubagentApprovalRequirement requirement)
{
  switch (requirement)
    {
    case SUBAGENT_APPROVAL_REQUIREMENT_ALLOW: return "allow";
    case SUBAGENT_APPROVAL_REQUIREMENT_NEEDS_APPROVAL: return "needs-approval";
    case SUBAGENT_APPROVAL_REQUIREMENT_REFUSE: return "refuse";
    default: g_return_val_if_reached (NULL);
    }
}
