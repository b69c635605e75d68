/* subagent-types.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent-types.h"

static const char * const permission_mode_names[] = {
  [SUBAGENT_PERMISSION_MODE_INHERIT] = "inherit",
  [SUBAGENT_PERMISSION_MODE_READ_ONLY] = "read-only",
  [SUBAGENT_PERMISSION_MODE_PROMPT] = "prompt",
  [SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE] = "workspace-write",
  [SUBAGENT_PERMISSION_MODE_ALLOW] = "allow",
  [SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS] = "danger-full-access",
};

static const char * const run_status_names[] = {
  [SUBAGENT_RUN_STATUS_COMPLETE] = "complete",
  [SUBAGENT_RUN_STATUS_PARTIAL] = "partial",
  [SUBAGENT_RUN_STATUS_CANCELLED] = "cancelled",
  [SUBAGENT_RUN_STATUS_FAILED] = "failed",
  [SUBAGENT_RUN_STATUS_ERROR] = "error",
};

static const char * const approval_status_names[] = {
  [SUBAGENT_APPROVAL_STATUS_PENDING] = "pending",
  [SUBAGENT_APPROVAL_STATUS_APPROVED] = "approved",
  [SUBAGENT_APPROVAL_STATUS_DENIED] = "denied",
  [SUBAGENT_APPROVAL_STATUS_TIMEOUT] = "timeout",
  [SUBAGENT_APPROVAL_STATUS_CANCELLED] = "cancelled",
};

/* Case-insensitive, with '_' and '-' treated alike. */
static gboolean
name_matches (const char *text,
              const char *name)
{
  for (; *text && *name; text++, name++)
    {
      char a = g_ascii_tolower (*text == '_' ? '-' : *text);
      if (a != *name)
        return FALSE;
    }
  return *text == '\0' && *name == '\0';
}

gboolean
subagent_permission_mode_from_string (const char             *text,
                                      SubagentPermissionMode *mode)
{
  g_return_val_if_fail (mode != NULL, FALSE);

  if (text == NULL || *text == '\0')
    {
      *mode = SUBAGENT_PERMISSION_MODE_INHERIT;
      return TRUE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (permission_mode_names); i++)
    if (name_matches (text, permission_mode_names[i]))
      {
        *mode = (SubagentPermissionMode) i;
        return TRUE;
      }
  return FALSE;
}

const char *
subagent_permission_mode_to_string (SubagentPermissionMode mode)
{
  g_return_val_if_fail (mode <= SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS, NULL);
  return permission_mode_names[mode];
}

SubagentPermissionMode
subagent_permission_mode_clamp (SubagentPermissionMode parent,
                                SubagentPermissionMode requested)
{
  if (requested == SUBAGENT_PERMISSION_MODE_INHERIT)
    return parent;
  if (parent == SUBAGENT_PERMISSION_MODE_INHERIT)
    return requested;
  return MIN (parent, requested);
}

const char *
subagent_run_status_to_string (SubagentRunStatus status)
{
  g_return_val_if_fail (status <= SUBAGENT_RUN_STATUS_ERROR, NULL);
  return run_status_names[status];
}

const char *
subagent_approval_status_to_string (SubagentApprovalStatus status)
{
  g_return_val_if_fail (status <= SUBAGENT_APPROVAL_STATUS_CANCELLED, NULL);
  return approval_status_names[status];
}

gboolean
subagent_approval_status_from_string (const char             *text,
                                      SubagentApprovalStatus *status)
{
  g_return_val_if_fail (status != NULL, FALSE);

  for (guint i = 0; text != NULL && i < G_N_ELEMENTS (approval_status_names); i++)
    if (strcmp (text, approval_status_names[i]) == 0)
      {
        *status = (SubagentApprovalStatus) i;
        return TRUE;
      }
  return FALSE;
}
