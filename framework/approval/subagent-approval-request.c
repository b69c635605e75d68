/* subagent-approval-request.c: one destructive tool call waiting for a verdict:
 * the object, its construction, copies and the call's getters (the verdict:
 * subagent-approval-request-verdict.c; the waiting host: -host.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-approval-private.h"
#include "subagent-json-line-private.h"
#include "subagent-approval-request-private.h"

/**
 * SubagentApprovalRequest:
 *
 * One destructive tool call of a child run that waits for a verdict.
 *
 * Everything but the verdict is immutable: the identity (request id,
 * subagent id, parent run id), the call (tool name and arguments, sealed),
 * the context (permission mode, isolation, batch index, worktree path), the
 * creation time, the timeout and the action digest — a lowercase hex SHA-256
 * over the tool name, a newline and the canonical JSON of the arguments
 * (object keys sorted, no whitespace), which lets a store notice a request
 * whose call was altered.
 *
 * The verdict follows the state machine of `docs/approvals.md`: a request
 * starts %SUBAGENT_APPROVAL_STATUS_PENDING and
 * subagent_approval_request_transition() — the only mutator — moves it once
 * to %SUBAGENT_APPROVAL_STATUS_APPROVED, %SUBAGENT_APPROVAL_STATUS_DENIED,
 * %SUBAGENT_APPROVAL_STATUS_TIMEOUT or %SUBAGENT_APPROVAL_STATUS_CANCELLED.
 * A terminal state never changes again. Approval stamps `approved_at`; every
 * other terminal state stamps `denied_at` and records a reason, so a consumer
 * can always tell when, and why, a request stopped being approvable.
 *
 * All methods are thread-safe. The strings returned for the verdict fields
 * are written once and never freed before the request, so they stay valid
 * while the caller holds a reference.
 */
G_DEFINE_FINAL_TYPE (SubagentApprovalRequest, subagent_approval_request, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_REQUEST_ID,
  PROP_SUBAGENT_ID,
  PROP_PARENT_RUN_ID,
  PROP_SUBAGENT_NAME,
  PROP_TOOL_NAME,
  PROP_TOOL_ARGUMENTS,
  PROP_PERMISSION_MODE,
  PROP_ISOLATION,
  PROP_BATCH_INDEX,
  PROP_WORKTREE_PATH,
  PROP_CREATED_AT,
  PROP_TIMEOUT_SECONDS,
  PROP_ACTION_DIGEST,
  PROP_STATUS,
  PROP_APPROVED_AT,
  PROP_DENIED_AT,
  PROP_DENIAL_REASON,
  PROP_APPROVED_BY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define TEXT_MAX_LENGTH SUBAGENT_APPROVAL_TEXT_MAX_LENGTH
#define NAME_MAX_LENGTH SUBAGENT_APPROVAL_NAME_MAX_LENGTH

char *
_subagent_approval_request_now_iso8601 (void)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  char text[SUBAGENT_TIME_TEXT_SIZE];

  /* Fixed width (microseconds, Z) so stamps also sort as strings. */
  return g_strdup (_subagent_time_format_micro (now, text));
}


/* Free text from callers or files: valid UTF-8, bounded, no control characters. */
static JsonObject *
sealed_copy (JsonObject *object)
{
  JsonObject *empty;

  if (object != NULL)
    return subagent_json_object_sealed_copy (object);
  empty = json_object_new ();
  json_object_seal (empty);
  return empty;
}

/* Set by subagent_approval_request_copy() while it constructs its copy,
 * which it fills in itself: no defaults, id or digest to compute then. */
static _Thread_local gboolean constructing_copy;

static void
subagent_approval_request_constructed (GObject *object)
{
  SubagentApprovalRequest *self = SUBAGENT_APPROVAL_REQUEST (object);

  G_OBJECT_CLASS (subagent_approval_request_parent_class)->constructed (object);
  if (constructing_copy)
    return;

  if (self->request_id == NULL || *self->request_id == '\0')
    {
      g_free (self->request_id);
      self->request_id = _subagent_uuid_string_random (FALSE);
    }
  if (self->created_at == NULL || *self->created_at == '\0')
    {
      g_free (self->created_at);
      self->created_at = _subagent_approval_request_now_iso8601 ();
    }
  if (self->tool_arguments == NULL)
    self->tool_arguments = sealed_copy (NULL);
  if (self->permission_mode == NULL)
    self->permission_mode = g_strdup (subagent_permission_mode_to_string (SUBAGENT_PERMISSION_MODE_PROMPT));
  if (self->isolation == NULL)
    self->isolation = g_strdup (SUBAGENT_ISOLATION_SHARED);
  if (self->timeout_seconds == 0)
    self->timeout_seconds = SUBAGENT_APPROVAL_DEFAULT_TIMEOUT_SECONDS;
  self->action_digest = subagent_approval_compute_action_digest (self->tool_name ? self->tool_name : "",
                                                                 self->tool_arguments);
}

static void
subagent_approval_request_finalize (GObject *object)
{
  SubagentApprovalRequest *self = SUBAGENT_APPROVAL_REQUEST (object);

  g_free (self->request_id);
  g_free (self->subagent_id);
  g_free (self->parent_run_id);
  g_free (self->subagent_name);
  g_free (self->tool_name);
  g_clear_pointer (&self->tool_arguments, json_object_unref);
  g_clear_object (&self->arguments_owner);
  g_free (self->permission_mode);
  g_free (self->isolation);
  g_free (self->worktree_path);
  g_free (self->created_at);
  g_free (self->action_digest);
  g_free (self->host_boot_id);
  g_free (self->host_name);
  g_free (self->approved_at);
  g_free (self->denied_at);
  g_free (self->denial_reason);
  g_free (self->approved_by);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (subagent_approval_request_parent_class)->finalize (object);
}

static void
subagent_approval_request_get_property (GObject    *object,
                                        guint       prop_id,
                                        GValue     *value,
                                        GParamSpec *pspec)
{
  SubagentApprovalRequest *self = SUBAGENT_APPROVAL_REQUEST (object);

  switch (prop_id)
    {
    case PROP_REQUEST_ID: g_value_set_string (value, self->request_id); break;
    case PROP_SUBAGENT_ID: g_value_set_string (value, self->subagent_id); break;
    case PROP_PARENT_RUN_ID: g_value_set_string (value, self->parent_run_id); break;
    case PROP_SUBAGENT_NAME: g_value_set_string (value, self->subagent_name); break;
    case PROP_TOOL_NAME: g_value_set_string (value, self->tool_name); break;
    case PROP_TOOL_ARGUMENTS: g_value_set_boxed (value, subagent_approval_request_get_tool_arguments (self)); break;
    case PROP_PERMISSION_MODE: g_value_set_string (value, self->permission_mode); break;
    case PROP_ISOLATION: g_value_set_string (value, self->isolation); break;
    case PROP_BATCH_INDEX: g_value_set_int (value, self->batch_index); break;
    case PROP_WORKTREE_PATH: g_value_set_string (value, self->worktree_path); break;
    case PROP_CREATED_AT: g_value_set_string (value, self->created_at); break;
    case PROP_TIMEOUT_SECONDS: g_value_set_uint (value, self->timeout_seconds); break;
    case PROP_ACTION_DIGEST: g_value_set_string (value, self->action_digest); break;
    case PROP_STATUS: g_value_set_enum (value, subagent_approval_request_get_status (self)); break;
    case PROP_APPROVED_AT: g_value_set_string (value, subagent_approval_request_get_approved_at (self)); break;
    case PROP_DENIED_AT: g_value_set_string (value, subagent_approval_request_get_denied_at (self)); break;
    case PROP_DENIAL_REASON: g_value_set_string (value, subagent_approval_request_get_denial_reason (self)); break;
    case PROP_APPROVED_BY: g_value_set_string (value, subagent_approval_request_get_approved_by (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_approval_request_set_property (GObject      *object,
                                        guint         prop_id,
                                        const GValue *value,
                                        GParamSpec   *pspec)
{
  SubagentApprovalRequest *self = SUBAGENT_APPROVAL_REQUEST (object);

  switch (prop_id)
    {
    case PROP_REQUEST_ID: self->request_id = g_value_dup_string (value); break;
    case PROP_SUBAGENT_ID: self->subagent_id = g_value_dup_string (value); break;
    case PROP_PARENT_RUN_ID: self->parent_run_id = g_value_dup_string (value); break;
    case PROP_SUBAGENT_NAME: self->subagent_name = g_value_dup_string (value); break;
    case PROP_TOOL_NAME: self->tool_name = g_value_dup_string (value); break;
    case PROP_TOOL_ARGUMENTS:
      if (g_value_get_boxed (value) != NULL)
        self->tool_arguments = sealed_copy (g_value_get_boxed (value));
      break;
    case PROP_PERMISSION_MODE: self->permission_mode = g_value_dup_string (value); break;
    case PROP_ISOLATION: self->isolation = g_value_dup_string (value); break;
    case PROP_BATCH_INDEX: self->batch_index = g_value_get_int (value); break;
    case PROP_WORKTREE_PATH: self->worktree_path = g_value_dup_string (value); break;
    case PROP_CREATED_AT: self->created_at = g_value_dup_string (value); break;
    case PROP_TIMEOUT_SECONDS: self->timeout_seconds = g_value_get_uint (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static GParamSpec *
string_property (const char *name,
                 const char *blurb,
                 gboolean    construct_only)
{
  return g_param_spec_string (name, NULL, blurb, NULL,
                              (construct_only ? (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY) : G_PARAM_READABLE) |
                              G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
}

static void
subagent_approval_request_class_init (SubagentApprovalRequestClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = subagent_approval_request_constructed;
  object_class->finalize = subagent_approval_request_finalize;
  object_class->get_property = subagent_approval_request_get_property;
  object_class->set_property = subagent_approval_request_set_property;

  /**
   * SubagentApprovalRequest:request-id:
   *
   * The request's id: 32 lowercase hex digits (a UUID4 without dashes),
   * generated when not given.
   */
  properties[PROP_REQUEST_ID] = string_property ("request-id", "The request id", TRUE);
  /**
   * SubagentApprovalRequest:subagent-id:
   *
   * The id of the child run that asks.
   */
  properties[PROP_SUBAGENT_ID] = string_property ("subagent-id", "The child run id", TRUE);
  /**
   * SubagentApprovalRequest:parent-run-id:
   *
   * The id of the parent run whose queue holds the request.
   */
  properties[PROP_PARENT_RUN_ID] = string_property ("parent-run-id", "The parent run id", TRUE);
  /**
   * SubagentApprovalRequest:subagent-name:
   *
   * The name of the child's definition.
   */
  properties[PROP_SUBAGENT_NAME] = string_property ("subagent-name", "The definition name", TRUE);
  /**
   * SubagentApprovalRequest:tool-name:
   *
   * The tool the child wants to call.
   */
  properties[PROP_TOOL_NAME] = string_property ("tool-name", "The tool name", TRUE);
  /**
   * SubagentApprovalRequest:tool-arguments:
   *
   * The call's arguments; the request keeps a sealed deep copy.
   */
  properties[PROP_TOOL_ARGUMENTS] =
    g_param_spec_boxed ("tool-arguments", NULL, "The call's arguments", JSON_TYPE_OBJECT,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentApprovalRequest:permission-mode:
   *
   * The child's effective permission mode, by name (such as `prompt`).
   */
  properties[PROP_PERMISSION_MODE] = string_property ("permission-mode", "The permission mode", TRUE);
  /**
   * SubagentApprovalRequest:isolation:
   *
   * The child's isolation mode, by name (such as `worktree`).
   */
  properties[PROP_ISOLATION] = string_property ("isolation", "The isolation mode", TRUE);
  /**
   * SubagentApprovalRequest:batch-index:
   *
   * The child's index in its batch, or %SUBAGENT_NO_BATCH_INDEX.
   */
  properties[PROP_BATCH_INDEX] =
    g_param_spec_int ("batch-index", NULL, "The batch index", SUBAGENT_NO_BATCH_INDEX, G_MAXINT,
                      SUBAGENT_NO_BATCH_INDEX,
                      G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentApprovalRequest:worktree-path:
   *
   * The child's worktree or snapshot path, if it has one.
   */
  properties[PROP_WORKTREE_PATH] = string_property ("worktree-path", "The worktree path", TRUE);
  /**
   * SubagentApprovalRequest:created-at:
   *
   * When the request was made, ISO-8601 UTC; now when not given.
   */
  properties[PROP_CREATED_AT] = string_property ("created-at", "The creation time", TRUE);
  /**
   * SubagentApprovalRequest:timeout-seconds:
   *
   * How long the submitter waits for a verdict; 0 at construction means
   * %SUBAGENT_APPROVAL_DEFAULT_TIMEOUT_SECONDS.
   */
  properties[PROP_TIMEOUT_SECONDS] =
    g_param_spec_uint ("timeout-seconds", NULL, "The timeout", 0, SUBAGENT_APPROVAL_MAX_TIMEOUT_SECONDS, 0,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentApprovalRequest:action-digest:
   *
   * Lowercase hex SHA-256 over the tool name, a newline and the canonical
   * JSON of the arguments.
   */
  properties[PROP_ACTION_DIGEST] = string_property ("action-digest", "The action digest", FALSE);
  /**
   * SubagentApprovalRequest:status:
   *
   * Where the request is in its state machine. Changes once, from
   * %SUBAGENT_APPROVAL_STATUS_PENDING; notified on the thread that made the
   * transition.
   */
  properties[PROP_STATUS] =
    g_param_spec_enum ("status", NULL, "The status", SUBAGENT_TYPE_APPROVAL_STATUS,
                       SUBAGENT_APPROVAL_STATUS_PENDING,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * SubagentApprovalRequest:approved-at:
   *
   * When the request was approved, ISO-8601 UTC.
   */
  properties[PROP_APPROVED_AT] = string_property ("approved-at", "The approval time", FALSE);
  /**
   * SubagentApprovalRequest:denied-at:
   *
   * When the request was denied, timed out or was cancelled, ISO-8601 UTC.
   */
  properties[PROP_DENIED_AT] = string_property ("denied-at", "The denial time", FALSE);
  /**
   * SubagentApprovalRequest:denial-reason:
   *
   * Why the request was denied, timed out or cancelled.
   */
  properties[PROP_DENIAL_REASON] = string_property ("denial-reason", "The denial reason", FALSE);
  /**
   * SubagentApprovalRequest:approved-by:
   *
   * Who gave the verdict (the reference's key name is kept; it also names
   * whoever denied or cancelled the request).
   */
  properties[PROP_APPROVED_BY] = string_property ("approved-by", "Who gave the verdict", FALSE);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_approval_request_init (SubagentApprovalRequest *self)
{
  g_mutex_init (&self->lock);
  self->batch_index = SUBAGENT_NO_BATCH_INDEX;
  self->status = SUBAGENT_APPROVAL_STATUS_PENDING;
}

/* For subagent-approval-request-verdict.c, which changes the status. */
void
_subagent_approval_request_notify_status (SubagentApprovalRequest *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATUS]);
}

/**
 * subagent_approval_request_new:
 * @subagent_id: the child run's id (`[A-Za-z0-9_-]`, at most 128)
 * @parent_run_id: the parent run's id (same rules)
 * @subagent_name: the child's definition name
 * @tool_name: the tool to call
 * @tool_arguments: (nullable): the call's arguments; deep-copied and sealed
 * @permission_mode: (nullable): the child's effective mode by name; %NULL is `prompt`
 * @isolation: (nullable): the child's isolation by name; %NULL is `shared`
 * @batch_index: the index in a batch, or %SUBAGENT_NO_BATCH_INDEX
 * @worktree_path: (nullable): the child's workspace path, if isolated
 * @timeout_seconds: how long to wait for a verdict; 0 is %SUBAGENT_APPROVAL_DEFAULT_TIMEOUT_SECONDS
 *
 * Creates a pending request with a fresh UUID4 hex id, the current time as
 * `created_at` and the action digest of the call.
 *
 * Returns: (transfer full): the new request
 */
SubagentApprovalRequest *
subagent_approval_request_new (const char *subagent_id,
                               const char *parent_run_id,
                               const char *subagent_name,
                               const char *tool_name,
                               JsonObject *tool_arguments,
                               const char *permission_mode,
                               const char *isolation,
                               gint        batch_index,
                               const char *worktree_path,
                               guint       timeout_seconds)
{
  SubagentApprovalRequest *request;
  SubagentPermissionMode mode;

  g_return_val_if_fail (subagent_approval_id_is_valid (subagent_id), NULL);
  g_return_val_if_fail (subagent_approval_id_is_valid (parent_run_id), NULL);
  g_return_val_if_fail (subagent_approval_text_is_valid (subagent_name, NAME_MAX_LENGTH), NULL);
  g_return_val_if_fail (subagent_approval_text_is_valid (tool_name, NAME_MAX_LENGTH), NULL);
  g_return_val_if_fail (permission_mode == NULL || subagent_permission_mode_from_string (permission_mode, &mode), NULL);
  g_return_val_if_fail (isolation == NULL || subagent_approval_id_is_valid (isolation), NULL);
  g_return_val_if_fail (batch_index >= SUBAGENT_NO_BATCH_INDEX, NULL);
  g_return_val_if_fail (worktree_path == NULL || subagent_approval_text_is_valid (worktree_path, TEXT_MAX_LENGTH), NULL);
  g_return_val_if_fail (timeout_seconds <= SUBAGENT_APPROVAL_MAX_TIMEOUT_SECONDS, NULL);

  if (permission_mode != NULL)
    permission_mode = subagent_permission_mode_to_string (mode);

  request = g_object_new (SUBAGENT_TYPE_APPROVAL_REQUEST,
                       "subagent-id", subagent_id,
                       "parent-run-id", parent_run_id,
                       "subagent-name", subagent_name,
                       "tool-name", tool_name,
                       "tool-arguments", tool_arguments,
                       "permission-mode", permission_mode,
                       "isolation", isolation,
                       "batch-index", batch_index,
                       "worktree-path", worktree_path,
                       "timeout-seconds", timeout_seconds,
                       NULL);
  /* The caller is the process that will wait for the verdict. */
  {
    g_autofree char *boot_id = NULL;
    guint64 start = 0;
    gint64 pid = 0;

    if (_subagent_approval_request_own_host (&pid, &start, &boot_id))
      _subagent_approval_request_set_host (request, pid, start, boot_id, g_get_host_name ());
  }
  return request;
}


/**
 * subagent_approval_request_copy:
 * @self: a request
 *
 * Copies the request, verdict included; the copy changes independently.
 *
 * Returns: (transfer full): the copy
 */
SubagentApprovalRequest *
subagent_approval_request_copy (SubagentApprovalRequest *self)
{
  SubagentApprovalRequest *copy;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (self), NULL);

  /* Fields are set directly rather than through construct properties:
   * loads copy every request they return, and setting eleven GValues and
   * computing a digest the copy then replaces took most of a copy's time.
   * The constant members never change after construction, so they are
   * read without the lock. */
  constructing_copy = TRUE;
  copy = g_object_new (SUBAGENT_TYPE_APPROVAL_REQUEST, NULL);
  constructing_copy = FALSE;
  copy->request_id = g_strdup (self->request_id);
  copy->subagent_id = g_strdup (self->subagent_id);
  copy->parent_run_id = g_strdup (self->parent_run_id);
  copy->subagent_name = g_strdup (self->subagent_name);
  copy->tool_name = g_strdup (self->tool_name);
  copy->permission_mode = g_strdup (self->permission_mode);
  copy->isolation = g_strdup (self->isolation);
  copy->batch_index = self->batch_index;
  copy->worktree_path = g_strdup (self->worktree_path);
  copy->created_at = g_strdup (self->created_at);
  copy->timeout_seconds = self->timeout_seconds;
  /* The arguments are not copied until the copy's getter asks for them
   * (loads copy every request, and few callers look at the arguments):
   * until then the copy reads the original's, which never change. Not a
   * shared reference: json-glib's counts are not atomic. Same tool, same
   * arguments: same digest. */
  copy->arguments_owner = g_object_ref (self->arguments_owner != NULL ? self->arguments_owner : self);
  copy->action_digest = g_strdup (self->action_digest);
  copy->host_pid = self->host_pid;
  copy->host_start_time = self->host_start_time;
  copy->host_boot_id = g_strdup (self->host_boot_id);
  copy->host_name = g_strdup (self->host_name);
  g_mutex_lock (&self->lock);
  copy->status = self->status;
  copy->approved_at = g_strdup (self->approved_at);
  copy->denied_at = g_strdup (self->denied_at);
  copy->denial_reason = g_strdup (self->denial_reason);
  copy->approved_by = g_strdup (self->approved_by);
  g_mutex_unlock (&self->lock);
  return copy;
}

/**
 * subagent_approval_request_get_request_id:
 * @self: a request
 *
 * Gets the request id, 32 lowercase hex digits for new requests.
 *
 * Returns: (transfer none): the request id, 32 lowercase hex digits for new requests
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, request_id, self->request_id)
/**
 * subagent_approval_request_get_subagent_id:
 * @self: a request
 *
 * Gets the child run's id.
 *
 * Returns: (transfer none): the child run's id
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, subagent_id, self->subagent_id)
/**
 * subagent_approval_request_get_parent_run_id:
 * @self: a request
 *
 * Gets the parent run's id.
 *
 * Returns: (transfer none): the parent run's id
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, parent_run_id, self->parent_run_id)
/**
 * subagent_approval_request_get_subagent_name:
 * @self: a request
 *
 * Gets the child's definition name.
 *
 * Returns: (transfer none): the child's definition name
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, subagent_name, self->subagent_name)
/**
 * subagent_approval_request_get_tool_name:
 * @self: a request
 *
 * Gets the tool to call.
 *
 * Returns: (transfer none): the tool to call
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, tool_name, self->tool_name)
/**
 * subagent_approval_request_get_tool_arguments:
 * @self: a request
 *
 * Gets the call's arguments (sealed: read only).
 *
 * Returns: (transfer none): the call's arguments (sealed: read only)
 *
 * Since: 0.2
 */
JsonObject *
subagent_approval_request_get_tool_arguments (SubagentApprovalRequest *self)
{
  JsonObject *arguments;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (self), NULL);

  arguments = g_atomic_pointer_get (&self->tool_arguments);
  if (arguments != NULL)
    return arguments;
  /* A copy: its own arguments now, made once, kept while it lives. */
  g_mutex_lock (&self->lock);
  if (self->tool_arguments == NULL)
    g_atomic_pointer_set (&self->tool_arguments, sealed_copy (self->arguments_owner->tool_arguments));
  arguments = self->tool_arguments;
  g_mutex_unlock (&self->lock);
  return arguments;
}

JsonObject *
_subagent_approval_request_peek_tool_arguments (SubagentApprovalRequest *self)
{
  JsonObject *arguments = g_atomic_pointer_get (&self->tool_arguments);

  return arguments != NULL ? arguments : self->arguments_owner->tool_arguments;
}
/**
 * subagent_approval_request_get_permission_mode:
 * @self: a request
 *
 * Gets the child's permission mode by name.
 *
 * Returns: (transfer none): the child's permission mode by name
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, permission_mode, self->permission_mode)
/**
 * subagent_approval_request_get_isolation:
 * @self: a request
 *
 * Gets the child's isolation mode by name.
 *
 * Returns: (transfer none): the child's isolation mode by name
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, isolation, self->isolation)
/**
 * subagent_approval_request_get_batch_index:
 * @self: a request
 *
 * Gets the batch index, or %SUBAGENT_NO_BATCH_INDEX.
 *
 * Returns: the batch index, or %SUBAGENT_NO_BATCH_INDEX
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (gint, batch_index, self->batch_index)
/**
 * subagent_approval_request_get_worktree_path:
 * @self: a request
 *
 * Gets the child's workspace path.
 *
 * Returns: (transfer none) (nullable): the child's workspace path
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, worktree_path, self->worktree_path)
/**
 * subagent_approval_request_get_created_at:
 * @self: a request
 *
 * Gets the creation time, ISO-8601 UTC.
 *
 * Returns: (transfer none): the creation time, ISO-8601 UTC
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, created_at, self->created_at)
/**
 * subagent_approval_request_get_timeout_seconds:
 * @self: a request
 *
 * Gets how long the submitter waits for a verdict.
 *
 * Returns: how long the submitter waits for a verdict
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (guint, timeout_seconds, self->timeout_seconds)
/**
 * subagent_approval_request_get_action_digest:
 * @self: a request
 *
 * Gets the action digest, 64 lowercase hex digits.
 *
 * Returns: (transfer none): the action digest, 64 lowercase hex digits
 *
 * Since: 0.2
 */
SUBAGENT_APPROVAL_REQUEST_GETTER (const char *, action_digest, self->action_digest)
