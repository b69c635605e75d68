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
  [SUBAGENT_APPROVAL_STATUS_ABANDONED] = "abandoned",
};

static const char * const risk_level_names[] = {
  [SUBAGENT_RISK_LEVEL_NONE] = "none",
  [SUBAGENT_RISK_LEVEL_LOW] = "low",
  [SUBAGENT_RISK_LEVEL_MEDIUM] = "medium",
  [SUBAGENT_RISK_LEVEL_HIGH] = "high",
  [SUBAGENT_RISK_LEVEL_CRITICAL] = "critical",
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

/**
 * subagent_permission_mode_from_string:
 * @text: (nullable): a mode as written in definitions and configuration:
 *   `inherit`, `read-only`, `prompt`, `workspace-write`, `allow` or
 *   `danger-full-access` (any case, `_` for `-`)
 * @mode: (out): where to store the mode
 *
 * Parses the name of a permission mode, as written by
 * subagent_permission_mode_to_string(). %NULL or `""` is
 * %SUBAGENT_PERMISSION_MODE_INHERIT.
 *
 * Returns: %TRUE if @text names a mode
 *
 * Since: 0.2
 */
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

/**
 * subagent_permission_mode_to_string:
 * @mode: a permission mode
 *
 * Gets the name of @mode, as written in definitions, JSON and on the
 * command line.
 *
 * Returns: (transfer none): the name, such as `workspace-write`
 *
 * Since: 0.2
 */
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

/**
 * subagent_run_status_to_string:
 * @status: a run status
 *
 * Gets the name of @status, as written in results, session records and
 * events.
 *
 * Returns: (transfer none): `complete`, `partial`, `cancelled`, `failed` or `error`
 *
 * Since: 0.2
 */
const char *
subagent_run_status_to_string (SubagentRunStatus status)
{
  g_return_val_if_fail (status <= SUBAGENT_RUN_STATUS_ERROR, NULL);
  return run_status_names[status];
}

/**
 * subagent_approval_status_to_string:
 * @status: an approval status
 *
 * Gets the name of @status, as written in approval queues and JSON.
 *
 * Returns: (transfer none): `pending`, `approved`, `denied`, `timeout`, `cancelled` or `abandoned`
 *
 * Since: 0.2
 */
const char *
subagent_approval_status_to_string (SubagentApprovalStatus status)
{
  g_return_val_if_fail (status <= SUBAGENT_APPROVAL_STATUS_ABANDONED, NULL);
  return approval_status_names[status];
}

/**
 * subagent_approval_status_from_string:
 * @text: (nullable): a status name
 * @status: (out): where to store the status
 *
 * Parses the name of an approval status, as written by
 * subagent_approval_status_to_string().
 *
 * Returns: %TRUE if @text names a status
 *
 * Since: 0.2
 */
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

gboolean
subagent_risk_level_from_string (const char        *text,
                                 SubagentRiskLevel *level)
{
  g_return_val_if_fail (level != NULL, FALSE);

  if (text == NULL || *text == '\0')
    {
      *level = SUBAGENT_RISK_LEVEL_NONE;
      return TRUE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (risk_level_names); i++)
    if (name_matches (text, risk_level_names[i]))
      {
        *level = (SubagentRiskLevel) i;
        return TRUE;
      }
  return FALSE;
}

const char *
subagent_risk_level_to_string (SubagentRiskLevel level)
{
  g_return_val_if_fail (level <= SUBAGENT_RISK_LEVEL_CRITICAL, NULL);
  return risk_level_names[level];
}
