/* subagent-approval-handler.c: one child's route to an approval.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-approval-private.h"

/**
 * SubagentApprovalHandler:
 *
 * The approval function of one child run, bound to its subagent id, name,
 * batch index, isolation and effective permission mode. It is what goes in
 * #SubagentRunContext:approval-handler; the child's tool executor calls
 * subagent_approval_handler_check() before every tool call.
 *
 * The handler applies the permission table
 * (subagent_approval_policy_evaluate()); when a call needs an approval it
 * submits a #SubagentApprovalRequest to the parent run's queue and blocks
 * until the verdict, the request's timeout or cancellation.
 *
 * A handler without a queue belongs to an *unattended* child: no sink and
 * no human route lead to it, so a call that needs an approval is denied at
 * once, with the reason %SUBAGENT_APPROVAL_UNATTENDED_REASON, rather than
 * left to wait for a verdict that can never come.
 *
 * Immutable; subagent_approval_handler_check() may be called from any
 * thread, but it blocks, so not from a thread whose main loop must keep
 * running (a UI's).
 */
struct _SubagentApprovalHandler
{
  GObject parent_instance;

  SubagentApprovalQueue *queue;
  char *subagent_id;
  char *subagent_name;
  gint batch_index;
  char *isolation;
  char *worktree_path;
  SubagentPermissionMode mode;
};

G_DEFINE_ENUM_TYPE (SubagentApprovalDecision, subagent_approval_decision,
  G_DEFINE_ENUM_VALUE (SUBAGENT_APPROVAL_DECISION_ALLOW, "allow"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_APPROVAL_DECISION_DENY, "deny"))

G_DEFINE_FINAL_TYPE (SubagentApprovalHandler, subagent_approval_handler, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_QUEUE,
  PROP_SUBAGENT_ID,
  PROP_SUBAGENT_NAME,
  PROP_BATCH_INDEX,
  PROP_ISOLATION,
  PROP_WORKTREE_PATH,
  PROP_PERMISSION_MODE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
subagent_approval_handler_constructed (GObject *object)
{
  SubagentApprovalHandler *self = SUBAGENT_APPROVAL_HANDLER (object);

  G_OBJECT_CLASS (subagent_approval_handler_parent_class)->constructed (object);

  if (self->isolation == NULL)
    self->isolation = g_strdup (SUBAGENT_ISOLATION_SHARED);
  if (self->subagent_name == NULL)
    self->subagent_name = g_strdup ("subagent");
  self->mode = subagent_approval_policy_effective_mode (self->mode, SUBAGENT_PERMISSION_MODE_INHERIT,
                                                        self->isolation);
}

static void
subagent_approval_handler_finalize (GObject *object)
{
  SubagentApprovalHandler *self = SUBAGENT_APPROVAL_HANDLER (object);

  g_clear_object (&self->queue);
  g_free (self->subagent_id);
  g_free (self->subagent_name);
  g_free (self->isolation);
  g_free (self->worktree_path);

  G_OBJECT_CLASS (subagent_approval_handler_parent_class)->finalize (object);
}

static void
subagent_approval_handler_get_property (GObject    *object,
                                        guint       prop_id,
                                        GValue     *value,
                                        GParamSpec *pspec)
{
  SubagentApprovalHandler *self = SUBAGENT_APPROVAL_HANDLER (object);

  switch (prop_id)
    {
    case PROP_QUEUE: g_value_set_object (value, self->queue); break;
    case PROP_SUBAGENT_ID: g_value_set_string (value, self->subagent_id); break;
    case PROP_SUBAGENT_NAME: g_value_set_string (value, self->subagent_name); break;
    case PROP_BATCH_INDEX: g_value_set_int (value, self->batch_index); break;
    case PROP_ISOLATION: g_value_set_string (value, self->isolation); break;
    case PROP_WORKTREE_PATH: g_value_set_string (value, self->worktree_path); break;
    case PROP_PERMISSION_MODE: g_value_set_enum (value, self->mode); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_approval_handler_set_property (GObject      *object,
                                        guint         prop_id,
                                        const GValue *value,
                                        GParamSpec   *pspec)
{
  SubagentApprovalHandler *self = SUBAGENT_APPROVAL_HANDLER (object);

  switch (prop_id)
    {
    case PROP_QUEUE: self->queue = g_value_dup_object (value); break;
    case PROP_SUBAGENT_ID: self->subagent_id = g_value_dup_string (value); break;
    case PROP_SUBAGENT_NAME: self->subagent_name = g_value_dup_string (value); break;
    case PROP_BATCH_INDEX: self->batch_index = g_value_get_int (value); break;
    case PROP_ISOLATION: self->isolation = g_value_dup_string (value); break;
    case PROP_WORKTREE_PATH: self->worktree_path = g_value_dup_string (value); break;
    case PROP_PERMISSION_MODE: self->mode = g_value_get_enum (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_approval_handler_class_init (SubagentApprovalHandlerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->constructed = subagent_approval_handler_constructed;
  object_class->finalize = subagent_approval_handler_finalize;
  object_class->get_property = subagent_approval_handler_get_property;
  object_class->set_property = subagent_approval_handler_set_property;

  /**
   * SubagentApprovalHandler:queue:
   *
   * The parent run's queue; %NULL marks the child unattended.
   */
  properties[PROP_QUEUE] =
    g_param_spec_object ("queue", NULL, "The parent run's queue", SUBAGENT_TYPE_APPROVAL_QUEUE, flags);
  /**
   * SubagentApprovalHandler:subagent-id:
   *
   * The child run's id, put in every request.
   */
  properties[PROP_SUBAGENT_ID] = g_param_spec_string ("subagent-id", NULL, "The child run id", NULL, flags);
  /**
   * SubagentApprovalHandler:subagent-name:
   *
   * The child's definition name, put in every request.
   */
  properties[PROP_SUBAGENT_NAME] = g_param_spec_string ("subagent-name", NULL, "The definition name", NULL, flags);
  /**
   * SubagentApprovalHandler:batch-index:
   *
   * The child's index in its batch, or %SUBAGENT_NO_BATCH_INDEX.
   */
  properties[PROP_BATCH_INDEX] =
    g_param_spec_int ("batch-index", NULL, "The batch index", SUBAGENT_NO_BATCH_INDEX, G_MAXINT,
                      SUBAGENT_NO_BATCH_INDEX, flags);
  /**
   * SubagentApprovalHandler:isolation:
   *
   * The child's isolation mode by name.
   */
  properties[PROP_ISOLATION] = g_param_spec_string ("isolation", NULL, "The isolation mode", NULL, flags);
  /**
   * SubagentApprovalHandler:worktree-path:
   *
   * The child's workspace path, if isolated.
   */
  properties[PROP_WORKTREE_PATH] = g_param_spec_string ("worktree-path", NULL, "The workspace path", NULL, flags);
  /**
   * SubagentApprovalHandler:permission-mode:
   *
   * The effective mode calls are checked against (given at construction,
   * then resolved with subagent_approval_policy_effective_mode(); never
   * %SUBAGENT_PERMISSION_MODE_INHERIT once constructed).
   */
  properties[PROP_PERMISSION_MODE] =
    g_param_spec_enum ("permission-mode", NULL, "The permission mode", SUBAGENT_TYPE_PERMISSION_MODE,
                       SUBAGENT_PERMISSION_MODE_INHERIT, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_approval_handler_init (SubagentApprovalHandler *self)
{
  self->batch_index = SUBAGENT_NO_BATCH_INDEX;
}

/**
 * subagent_approval_handler_new:
 * @queue: (nullable): the parent run's queue; %NULL for an unattended child
 * @subagent_id: the child run's id (`[A-Za-z0-9_-]`)
 * @subagent_name: (nullable): the child's definition name
 * @batch_index: the child's index in its batch, or %SUBAGENT_NO_BATCH_INDEX
 * @isolation: (nullable): the child's isolation mode; %NULL is `shared`
 * @worktree_path: (nullable): the child's workspace path, if isolated
 * @mode: the child's permission mode (already clamped to its parent's)
 *
 * Creates the approval function of one child run.
 *
 * Returns: (transfer full): the new handler
 */
SubagentApprovalHandler *
subagent_approval_handler_new (SubagentApprovalQueue  *queue,
                               const char             *subagent_id,
                               const char             *subagent_name,
                               gint                    batch_index,
                               const char             *isolation,
                               const char             *worktree_path,
                               SubagentPermissionMode  mode)
{
  g_return_val_if_fail (queue == NULL || SUBAGENT_IS_APPROVAL_QUEUE (queue), NULL);
  g_return_val_if_fail (subagent_approval_id_is_valid (subagent_id), NULL);
  g_return_val_if_fail (isolation == NULL || subagent_approval_id_is_valid (isolation), NULL);
  g_return_val_if_fail (batch_index >= SUBAGENT_NO_BATCH_INDEX, NULL);

  return g_object_new (SUBAGENT_TYPE_APPROVAL_HANDLER,
                       "queue", queue,
                       "subagent-id", subagent_id,
                       "subagent-name", subagent_name,
                       "batch-index", batch_index,
                       "isolation", isolation,
                       "worktree-path", worktree_path,
                       "permission-mode", mode,
                       NULL);
}

static SubagentApprovalDecision
deny (char       **reason_out,
      char        *reason)
{
  if (reason_out != NULL)
    *reason_out = reason;
  else
    g_free (reason);
  return SUBAGENT_APPROVAL_DECISION_DENY;
}

/**
 * subagent_approval_handler_check:
 * @self: a handler
 * @tool_name: the tool the child wants to call
 * @arguments: (nullable): the call's arguments
 * @destructive: whether the tool changes anything
 * @inside_workspace: whether the call's effects stay inside the child's workspace
 * @cancellable: (nullable): cancels a wait for a verdict (the request becomes cancelled)
 * @reason_out: (out) (optional) (transfer full) (nullable): why a call is denied
 *
 * Decides one tool call: runs the permission table, and when the call needs
 * an approval, submits a request to the queue and blocks until the verdict.
 * An unattended child (no queue) is denied at once with
 * %SUBAGENT_APPROVAL_UNATTENDED_REASON. Only an approval, or a call the
 * policy allows, gives %SUBAGENT_APPROVAL_DECISION_ALLOW; a refusal,
 * denial, timeout, cancellation or error denies, with a reason.
 *
 * Returns: the decision
 */
SubagentApprovalDecision
subagent_approval_handler_check (SubagentApprovalHandler  *self,
                                 const char               *tool_name,
                                 JsonObject               *arguments,
                                 gboolean                  destructive,
                                 gboolean                  inside_workspace,
                                 GCancellable             *cancellable,
                                 char                    **reason_out)
{
  g_autoptr(SubagentApprovalRequest) request = NULL;
  g_autoptr(GError) error = NULL;
  SubagentApprovalStatus status;
  const char *reason;

  if (reason_out != NULL)
    *reason_out = NULL;
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_HANDLER (self), SUBAGENT_APPROVAL_DECISION_DENY);
  g_return_val_if_fail (tool_name != NULL && *tool_name != '\0', SUBAGENT_APPROVAL_DECISION_DENY);

  switch (subagent_approval_policy_evaluate (self->mode, destructive, inside_workspace))
    {
    case SUBAGENT_APPROVAL_REQUIREMENT_ALLOW:
      return SUBAGENT_APPROVAL_DECISION_ALLOW;
    case SUBAGENT_APPROVAL_REQUIREMENT_REFUSE:
      return deny (reason_out, g_strdup_printf ("Permission mode %s refuses the destructive tool “%s”",
                                                subagent_permission_mode_to_string (self->mode), tool_name));
    case SUBAGENT_APPROVAL_REQUIREMENT_NEEDS_APPROVAL:
    default:
      break;
    }

  if (self->queue == NULL)
    return deny (reason_out, g_strdup (SUBAGENT_APPROVAL_UNATTENDED_REASON));

  if (!subagent_approval_text_is_valid (tool_name, SUBAGENT_APPROVAL_NAME_MAX_LENGTH) ||
      !subagent_approval_text_is_valid (self->subagent_name, SUBAGENT_APPROVAL_NAME_MAX_LENGTH) ||
      (self->worktree_path != NULL &&
       !subagent_approval_text_is_valid (self->worktree_path, SUBAGENT_APPROVAL_TEXT_MAX_LENGTH)))
    return deny (reason_out, g_strdup ("The call cannot be put up for approval: its tool name, the subagent's "
                                       "name or its worktree path is not short, valid text"));

  request = subagent_approval_request_new (self->subagent_id,
                                           subagent_approval_queue_get_parent_run_id (self->queue),
                                           self->subagent_name, tool_name, arguments,
                                           subagent_permission_mode_to_string (self->mode),
                                           self->isolation, self->batch_index, self->worktree_path,
                                           subagent_approval_queue_get_default_timeout (self->queue));
  status = subagent_approval_queue_submit_sync (self->queue, request, cancellable, &error);
  if (error != NULL)
    return deny (reason_out, g_strdup (error->message));
  if (status == SUBAGENT_APPROVAL_STATUS_APPROVED)
    return SUBAGENT_APPROVAL_DECISION_ALLOW;

  reason = subagent_approval_request_get_denial_reason (request);
  return deny (reason_out, g_strdup_printf ("The call of “%s” was not approved (%s): %s", tool_name,
                                            subagent_approval_status_to_string (status),
                                            reason ? reason : "no reason given"));
}

/**
 * subagent_approval_handler_cancel_pending:
 * @self: a handler
 *
 * Cancels every pending request of this child, for when it ends first.
 *
 * Returns: how many requests were cancelled
 */
guint
subagent_approval_handler_cancel_pending (SubagentApprovalHandler *self)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_HANDLER (self), 0);

  if (self->queue == NULL)
    return 0;
  return subagent_approval_queue_cancel_for_subagent (self->queue, self->subagent_id);
}

/**
 * subagent_approval_handler_get_queue:
 * @self: a handler
 *
 * Returns: (transfer none) (nullable): the queue, %NULL for an unattended child
 */
SubagentApprovalQueue *
subagent_approval_handler_get_queue (SubagentApprovalHandler *self)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_HANDLER (self), NULL);
  return self->queue;
}

/**
 * subagent_approval_handler_get_subagent_id:
 * @self: a handler
 *
 * Returns: (transfer none): the child run's id
 */
const char *
subagent_approval_handler_get_subagent_id (SubagentApprovalHandler *self)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_HANDLER (self), NULL);
  return self->subagent_id;
}

/**
 * subagent_approval_handler_get_permission_mode:
 * @self: a handler
 *
 * Returns: the effective mode calls are checked against
 */
SubagentPermissionMode
subagent_approval_handler_get_permission_mode (SubagentApprovalHandler *self)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_HANDLER (self), SUBAGENT_PERMISSION_MODE_READ_ONLY);
  return self->mode;
}

/**
 * subagent_approval_handler_is_unattended:
 * @self: a handler
 *
 * Returns: %TRUE if no approver can reach this child (it has no queue)
 */
gboolean
subagent_approval_handler_is_unattended (SubagentApprovalHandler *self)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_HANDLER (self), TRUE);
  return self->queue == NULL;
}
