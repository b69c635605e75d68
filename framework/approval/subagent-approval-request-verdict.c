/* subagent-approval-request-verdict.c: the verdict of an approval request:
 * its one transition out of PENDING, and reading it back under the lock.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-approval-private.h"
#include "subagent-approval-request-private.h"

static gboolean
transition_locked (SubagentApprovalRequest *self,
                   SubagentApprovalStatus   to,
                   char                    *stamp,
                   char                    *reason,
                   char                    *actor)
{
  if (self->status != SUBAGENT_APPROVAL_STATUS_PENDING || !subagent_approval_status_is_terminal (to) ||
      to > SUBAGENT_APPROVAL_STATUS_ABANDONED)
    {
      g_free (stamp);
      g_free (reason);
      g_free (actor);
      return FALSE;
    }
  self->status = to;
  if (to == SUBAGENT_APPROVAL_STATUS_APPROVED)
    {
      self->approved_at = stamp;
      g_free (reason);
    }
  else
    {
      self->denied_at = stamp;
      self->denial_reason = reason;
    }
  self->approved_by = actor;
  return TRUE;
}

static const char *
default_reason (SubagentApprovalStatus to)
{
  switch (to)
    {
    case SUBAGENT_APPROVAL_STATUS_DENIED: return "Denied by human";
    case SUBAGENT_APPROVAL_STATUS_TIMEOUT: return "No verdict before the request timed out";
    case SUBAGENT_APPROVAL_STATUS_CANCELLED: return "Cancelled before a verdict";
    case SUBAGENT_APPROVAL_STATUS_ABANDONED: return "Abandoned: the host that waited for it is gone";
    default: return NULL;
    }
}

/**
 * subagent_approval_request_transition:
 * @self: a request
 * @to: the terminal state to reach
 * @reason: (nullable): why, for every state but approval (a default is used when %NULL)
 * @actor: (nullable): who gives the verdict; %NULL is `human` for approval and denial
 *
 * Moves the request from %SUBAGENT_APPROVAL_STATUS_PENDING to @to, the only
 * change a request ever makes. Approval stamps `approved_at`; denial,
 * timeout and cancellation stamp `denied_at` and record @reason. Safe to
 * call from any thread; of concurrent callers exactly one succeeds.
 *
 * Returns: %TRUE if the request moved; %FALSE if it was not pending or @to
 *   is not a terminal state
 */
gboolean
subagent_approval_request_transition (SubagentApprovalRequest *self,
                                      SubagentApprovalStatus   to,
                                      const char              *reason,
                                      const char              *actor)
{
  gboolean moved;
  char *clean_reason = NULL;
  char *clean_actor;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (self), FALSE);

  if (to != SUBAGENT_APPROVAL_STATUS_APPROVED)
    clean_reason = subagent_approval_text_sanitize (reason, SUBAGENT_APPROVAL_TEXT_MAX_LENGTH);
  if (clean_reason == NULL)
    clean_reason = g_strdup (default_reason (to));
  clean_actor = subagent_approval_text_sanitize (actor, SUBAGENT_APPROVAL_NAME_MAX_LENGTH);
  if (clean_actor == NULL &&
      (to == SUBAGENT_APPROVAL_STATUS_APPROVED || to == SUBAGENT_APPROVAL_STATUS_DENIED))
    clean_actor = g_strdup ("human");

  g_mutex_lock (&self->lock);
  moved = transition_locked (self, to, _subagent_approval_request_now_iso8601 (), clean_reason, clean_actor);
  g_mutex_unlock (&self->lock);

  if (moved)
    _subagent_approval_request_notify_status (self);
  return moved;
}

void
subagent_approval_request_get_verdict (SubagentApprovalRequest *self,
                                       SubagentApprovalStatus  *status,
                                       const char             **approved_at,
                                       const char             **denied_at,
                                       const char             **denial_reason,
                                       const char             **approved_by)
{
  g_mutex_lock (&self->lock);
  if (status)
    *status = self->status;
  if (approved_at)
    *approved_at = self->approved_at;
  if (denied_at)
    *denied_at = self->denied_at;
  if (denial_reason)
    *denial_reason = self->denial_reason;
  if (approved_by)
    *approved_by = self->approved_by;
  g_mutex_unlock (&self->lock);
}

void
subagent_approval_request_restore_verdict (SubagentApprovalRequest *self,
                                           SubagentApprovalStatus   status,
                                           const char              *approved_at,
                                           const char              *denied_at,
                                           const char              *denial_reason,
                                           const char              *approved_by)
{
  g_mutex_lock (&self->lock);
  g_assert (self->status == SUBAGENT_APPROVAL_STATUS_PENDING && self->approved_at == NULL &&
            self->denied_at == NULL && self->denial_reason == NULL && self->approved_by == NULL);
  self->status = status;
  self->approved_at = g_strdup (approved_at);
  self->denied_at = g_strdup (denied_at);
  self->denial_reason = g_strdup (denial_reason);
  self->approved_by = g_strdup (approved_by);
  g_mutex_unlock (&self->lock);
}

gboolean
subagent_approval_request_adopt (SubagentApprovalRequest *self,
                                 SubagentApprovalRequest *source)
{
  gboolean moved;
  SubagentApprovalStatus to;
  char *stamp, *reason, *actor;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (self), FALSE);
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (source), FALSE);
  g_return_val_if_fail (g_strcmp0 (self->request_id, source->request_id) == 0, FALSE);

  /* The verdict is for an action: a stored request rewritten with other
   * arguments (and a digest recomputed for them) under this id is another
   * action, whose verdict this request must not take. */
  if (g_strcmp0 (self->action_digest, source->action_digest) != 0)
    {
      g_message ("Approval request %s: the stored verdict is for another action (digest %s, not %s); ignoring it",
                 self->request_id, source->action_digest ? source->action_digest : "none",
                 self->action_digest ? self->action_digest : "none");
      return FALSE;
    }

  g_mutex_lock (&source->lock);
  to = source->status;
  stamp = g_strdup (to == SUBAGENT_APPROVAL_STATUS_APPROVED ? source->approved_at : source->denied_at);
  reason = g_strdup (source->denial_reason);
  actor = g_strdup (source->approved_by);
  g_mutex_unlock (&source->lock);

  g_mutex_lock (&self->lock);
  moved = transition_locked (self, to, stamp, reason, actor);
  g_mutex_unlock (&self->lock);

  if (moved)
    _subagent_approval_request_notify_status (self);
  return moved;
}

/* The verdict strings are written once under the lock and then never
 * change, so returning them after unlocking is safe. */
static const char *
locked_string (SubagentApprovalRequest *self,
               char                   **field)
{
  const char *value;

  g_mutex_lock (&self->lock);
  value = *field;
  g_mutex_unlock (&self->lock);
  return value;
}

/**
 * subagent_approval_request_get_approved_at:
 * @self: a request
 *
 * Gets when the request was approved.
 *
 * Returns: (transfer none) (nullable): when the request was approved
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, approved_at, locked_string (self, &self->approved_at))
/**
 * subagent_approval_request_get_denied_at:
 * @self: a request
 *
 * Gets when the request was denied, timed out or cancelled.
 *
 * Returns: (transfer none) (nullable): when the request was denied, timed out or cancelled
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, denied_at, locked_string (self, &self->denied_at))
/**
 * subagent_approval_request_get_denial_reason:
 * @self: a request
 *
 * Gets why the request was denied, timed out or cancelled.
 *
 * Returns: (transfer none) (nullable): why the request was denied, timed out or cancelled
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, denial_reason, locked_string (self, &self->denial_reason))
/**
 * subagent_approval_request_get_approved_by:
 * @self: a request
 *
 * Gets who gave the verdict.
 *
 * Returns: (transfer none) (nullable): who gave the verdict
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, approved_by, locked_string (self, &self->approved_by))

/**
 * subagent_approval_request_get_status:
 * @self: a request
 *
 * Gets the request's current state.
 *
 * Returns: the request's current state
 *
 * Since: 0.2
 */
SubagentApprovalStatus
subagent_approval_request_get_status (SubagentApprovalRequest *self)
{
  SubagentApprovalStatus status;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (self), SUBAGENT_APPROVAL_STATUS_PENDING);

  g_mutex_lock (&self->lock);
  status = self->status;
  g_mutex_unlock (&self->lock);
  return status;
}
