/* subagent-approval-request-json.c: approval requests to and from JSON
 * (the object, its compact text, and reading untrusted JSON back).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-approval-private.h"
#include "subagent-json-line-private.h"

/* A deep copy of @object that takes no reference to it or to anything in
 * it: a request's arguments are shared and sealed, other threads may copy
 * or serialize the same request at this moment, and json-glib's reference
 * counts are not atomic (see subagent_json_object_sealed_copy()). */
static JsonObject *
object_deep_copy (JsonObject *object)
{
  JsonObject *copy = json_object_new ();
  JsonObjectIter iter;
  const char *name;
  JsonNode *member;

  json_object_iter_init_ordered (&iter, object);
  while (json_object_iter_next_ordered (&iter, &name, &member))
    json_object_set_member (copy, name, subagent_json_node_deep_copy (member));
  return copy;
}

/**
 * subagent_approval_request_to_json:
 * @self: a request
 *
 * Serializes the request with the reference's keys, in this order:
 * `request_id`, `subagent_id`, `parent_run_id`, `subagent_name`,
 * `tool_name`, `tool_arguments`, `permission_mode`, `isolation`,
 * `batch_index` (null outside a batch), `worktree_path`, `created_at`,
 * `status` (a string), `approved_at`, `denied_at`, `denial_reason`,
 * `timeout_seconds`, `approved_by`, `action_digest`. Unset values are null.
 * The verdict fields are read as one consistent snapshot.
 *
 * Returns: (transfer full): a new JSON object
 */
JsonObject *
subagent_approval_request_to_json (SubagentApprovalRequest *self)
{
  JsonObject *object;
  SubagentApprovalStatus status;
  const char *approved_at, *denied_at, *denial_reason, *approved_by;
  gint batch_index;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (self), NULL);

  subagent_approval_request_get_verdict (self, &status, &approved_at, &denied_at, &denial_reason, &approved_by);
  batch_index = subagent_approval_request_get_batch_index (self);

  object = json_object_new ();
  json_object_set_string_member (object, "request_id", subagent_approval_request_get_request_id (self));
  json_object_set_string_member (object, "subagent_id", subagent_approval_request_get_subagent_id (self));
  json_object_set_string_member (object, "parent_run_id", subagent_approval_request_get_parent_run_id (self));
  json_object_set_string_member (object, "subagent_name", subagent_approval_request_get_subagent_name (self));
  json_object_set_string_member (object, "tool_name", subagent_approval_request_get_tool_name (self));
  json_object_set_object_member (object, "tool_arguments",
                                 object_deep_copy (subagent_approval_request_get_tool_arguments (self)));
  json_object_set_string_member (object, "permission_mode", subagent_approval_request_get_permission_mode (self));
  json_object_set_string_member (object, "isolation", subagent_approval_request_get_isolation (self));
  if (batch_index >= 0)
    json_object_set_int_member (object, "batch_index", batch_index);
  else
    json_object_set_null_member (object, "batch_index");
  subagent_json_set_nullable_string (object, "worktree_path", subagent_approval_request_get_worktree_path (self));
  json_object_set_string_member (object, "created_at", subagent_approval_request_get_created_at (self));
  json_object_set_string_member (object, "status", subagent_approval_status_to_string (status));
  subagent_json_set_nullable_string (object, "approved_at", approved_at);
  subagent_json_set_nullable_string (object, "denied_at", denied_at);
  subagent_json_set_nullable_string (object, "denial_reason", denial_reason);
  json_object_set_int_member (object, "timeout_seconds", subagent_approval_request_get_timeout_seconds (self));
  subagent_json_set_nullable_string (object, "approved_by", approved_by);
  json_object_set_string_member (object, "action_digest", subagent_approval_request_get_action_digest (self));
  {
    gint64 pid;
    guint64 start;
    const char *boot_id, *host_name;

    /* Only when recorded: an older document re-serializes as it was
     * signed. Both stores sign this object, so the HMAC covers the host. */
    if (subagent_approval_request_get_host (self, &pid, &start, &boot_id, &host_name))
      {
        JsonObject *host = json_object_new ();

        json_object_set_int_member (host, "pid", pid);
        json_object_set_int_member (host, "start_time", (gint64) start);
        json_object_set_string_member (host, "boot_id", boot_id);
        json_object_set_string_member (host, "hostname", host_name);
        json_object_set_object_member (object, "host", host);
      }
  }
  return object;
}

/**
 * subagent_approval_request_to_json_string:
 * @self: a request
 *
 * Serializes the request as compact JSON text: byte for byte what
 * `json_to_string()` writes for the object of
 * subagent_approval_request_to_json() (same keys, same order, same
 * escapes), without building that object or copying the arguments. Stores
 * write one request's text for every request they change.
 *
 * Returns: (transfer full): the request as JSON text
 *
 * Since: 0.2
 */
char *
subagent_approval_request_to_json_string (SubagentApprovalRequest *self)
{
  SubagentApprovalStatus status;
  const char *approved_at, *denied_at, *denial_reason, *approved_by, *boot_id, *host_name;
  gint batch_index;
  gint64 pid;
  guint64 start;
  GString *out;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (self), NULL);

  subagent_approval_request_get_verdict (self, &status, &approved_at, &denied_at, &denial_reason, &approved_by);
  batch_index = subagent_approval_request_get_batch_index (self);
  out = g_string_sized_new (512);

  g_string_append_c (out, '{');
  _subagent_json_line_append_key (out, "request_id", TRUE);
  _subagent_json_line_append_string (out, subagent_approval_request_get_request_id (self));
  _subagent_json_line_append_string_member (out, "subagent_id", subagent_approval_request_get_subagent_id (self));
  _subagent_json_line_append_string_member (out, "parent_run_id", subagent_approval_request_get_parent_run_id (self));
  _subagent_json_line_append_string_member (out, "subagent_name", subagent_approval_request_get_subagent_name (self));
  _subagent_json_line_append_string_member (out, "tool_name", subagent_approval_request_get_tool_name (self));
  _subagent_json_line_append_key (out, "tool_arguments", FALSE);
  /* Read in place: the arguments are sealed and shared, and taking a
   * reference on them is not thread-safe (json-glib's counts are not
   * atomic). */
  _subagent_json_line_append_object (out, _subagent_approval_request_peek_tool_arguments (self));
  _subagent_json_line_append_string_member (out, "permission_mode", subagent_approval_request_get_permission_mode (self));
  _subagent_json_line_append_string_member (out, "isolation", subagent_approval_request_get_isolation (self));
  _subagent_json_line_append_index_member (out, "batch_index", batch_index);
  _subagent_json_line_append_string_member (out, "worktree_path", subagent_approval_request_get_worktree_path (self));
  _subagent_json_line_append_string_member (out, "created_at", subagent_approval_request_get_created_at (self));
  _subagent_json_line_append_string_member (out, "status", subagent_approval_status_to_string (status));
  _subagent_json_line_append_string_member (out, "approved_at", approved_at);
  _subagent_json_line_append_string_member (out, "denied_at", denied_at);
  _subagent_json_line_append_string_member (out, "denial_reason", denial_reason);
  _subagent_json_line_append_int_member (out, "timeout_seconds", subagent_approval_request_get_timeout_seconds (self));
  _subagent_json_line_append_string_member (out, "approved_by", approved_by);
  _subagent_json_line_append_string_member (out, "action_digest", subagent_approval_request_get_action_digest (self));
  if (subagent_approval_request_get_host (self, &pid, &start, &boot_id, &host_name))
    {
      _subagent_json_line_append_key (out, "host", FALSE);
      g_string_append_c (out, '{');
      _subagent_json_line_append_key (out, "pid", TRUE);
      _subagent_json_line_append_int (out, pid);
      _subagent_json_line_append_int_member (out, "start_time", (gint64) start);
      _subagent_json_line_append_string_member (out, "boot_id", boot_id);
      _subagent_json_line_append_string_member (out, "hostname", host_name);
      g_string_append_c (out, '}');
    }
  g_string_append_c (out, '}');
  return g_string_free (out, FALSE);
}

/* For new_from_json: a string member, or NULL when absent or null;
 * sets *bad when present with another type. */
static const char *
get_optional_string (JsonObject *object,
                     const char *key,
                     gboolean   *bad)
{
  JsonNode *node = json_object_get_member (object, key);

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return NULL;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      *bad = TRUE;
      return NULL;
    }
  return json_node_get_string (node);
}

#define INVALID(code, ...) \
  G_STMT_START { \
    g_set_error (error, SUBAGENT_APPROVAL_ERROR, (code), __VA_ARGS__); \
    return NULL; \
  } G_STMT_END

/**
 * subagent_approval_request_new_from_json:
 * @object: an object as written by subagent_approval_request_to_json()
 * @error: return location for a #GError
 *
 * Reads a request from untrusted JSON (a queue file, another process) and
 * validates all of it: ids, names, the permission mode, timestamps, the
 * status and that the verdict fields fit it, the timeout, and that
 * `action_digest` matches the tool name and arguments. Unknown keys are
 * ignored.
 *
 * Returns: (transfer full): the request, or %NULL with @error set
 *   (%SUBAGENT_APPROVAL_ERROR_INVALID_ID for a bad id,
 *   %SUBAGENT_APPROVAL_ERROR_INTEGRITY for anything else)
 */
SubagentApprovalRequest *
subagent_approval_request_new_from_json (JsonObject  *object,
                                         GError     **error)
{
  static const char * const id_keys[] = { "request_id", "subagent_id", "parent_run_id" };
  const char *ids[G_N_ELEMENTS (id_keys)];
  const char *subagent_name, *tool_name, *permission_mode, *isolation, *worktree_path, *created_at;
  const char *status_text, *approved_at, *denied_at, *denial_reason, *approved_by, *digest;
  JsonNode *node;
  JsonObject *arguments = NULL;
  gint64 batch_index = SUBAGENT_NO_BATCH_INDEX, timeout;
  SubagentApprovalStatus status;
  SubagentPermissionMode mode;
  gboolean bad = FALSE;
  g_autofree char *expected = NULL;
  const char *host_boot_id = NULL, *host_name = NULL;
  gint64 host_pid = 0;
  guint64 host_start = 0;
  SubagentApprovalRequest *self;

  g_return_val_if_fail (object != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (id_keys); i++)
    {
      ids[i] = get_optional_string (object, id_keys[i], &bad);
      if (!subagent_approval_id_is_valid (ids[i]))
        INVALID (SUBAGENT_APPROVAL_ERROR_INVALID_ID,
                 "Approval request has an invalid “%s”: it must be 1–%d characters of [A-Za-z0-9_-]",
                 id_keys[i], SUBAGENT_APPROVAL_ID_MAX_LENGTH);
    }

  subagent_name = get_optional_string (object, "subagent_name", &bad);
  tool_name = get_optional_string (object, "tool_name", &bad);
  permission_mode = get_optional_string (object, "permission_mode", &bad);
  isolation = get_optional_string (object, "isolation", &bad);
  worktree_path = get_optional_string (object, "worktree_path", &bad);
  created_at = get_optional_string (object, "created_at", &bad);
  status_text = get_optional_string (object, "status", &bad);
  approved_at = get_optional_string (object, "approved_at", &bad);
  denied_at = get_optional_string (object, "denied_at", &bad);
  denial_reason = get_optional_string (object, "denial_reason", &bad);
  approved_by = get_optional_string (object, "approved_by", &bad);
  digest = get_optional_string (object, "action_digest", &bad);
  if (bad)
    INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
             "Approval request %s has a non-string value where a string belongs", ids[0]);

  if (!subagent_approval_text_is_valid (subagent_name, SUBAGENT_APPROVAL_NAME_MAX_LENGTH) ||
      !subagent_approval_text_is_valid (tool_name, SUBAGENT_APPROVAL_NAME_MAX_LENGTH))
    INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
             "Approval request %s has a missing or invalid subagent_name or tool_name", ids[0]);
  if (permission_mode == NULL || !subagent_permission_mode_from_string (permission_mode, &mode))
    INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
             "Approval request %s has an unknown permission_mode", ids[0]);
  if (!subagent_approval_id_is_valid (isolation))
    INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
             "Approval request %s has a missing or invalid isolation", ids[0]);
  if (worktree_path != NULL && !subagent_approval_text_is_valid (worktree_path, SUBAGENT_APPROVAL_TEXT_MAX_LENGTH))
    INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
             "Approval request %s has an invalid worktree_path", ids[0]);
  if (!subagent_approval_timestamp_is_valid (created_at) ||
      (approved_at != NULL && !subagent_approval_timestamp_is_valid (approved_at)) ||
      (denied_at != NULL && !subagent_approval_timestamp_is_valid (denied_at)))
    INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
             "Approval request %s has a timestamp that is not ISO-8601", ids[0]);
  if ((denial_reason != NULL && !subagent_approval_text_is_valid (denial_reason, SUBAGENT_APPROVAL_TEXT_MAX_LENGTH)) ||
      (approved_by != NULL && !subagent_approval_text_is_valid (approved_by, SUBAGENT_APPROVAL_NAME_MAX_LENGTH)))
    INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
             "Approval request %s has an invalid denial_reason or approved_by", ids[0]);

  if (status_text == NULL || !subagent_approval_status_from_string (status_text, &status))
    INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
             "Approval request %s has an unknown status “%s”", ids[0], status_text ? status_text : "(none)");
  if ((status == SUBAGENT_APPROVAL_STATUS_PENDING &&
       (approved_at || denied_at || denial_reason || approved_by)) ||
      (status == SUBAGENT_APPROVAL_STATUS_APPROVED && (approved_at == NULL || denied_at || denial_reason)) ||
      (subagent_approval_status_is_terminal (status) && status != SUBAGENT_APPROVAL_STATUS_APPROVED &&
       (denied_at == NULL || approved_at)))
    INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
             "Approval request %s is “%s” but its approved_at/denied_at/denial_reason do not fit that state",
             ids[0], status_text);

  node = json_object_get_member (object, "batch_index");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64 ||
          json_node_get_int (node) < 0 || json_node_get_int (node) > G_MAXINT)
        INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                 "Approval request %s has a batch_index that is not null or a non-negative integer", ids[0]);
      batch_index = json_node_get_int (node);
    }
  node = json_object_get_member (object, "timeout_seconds");
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64 ||
      (timeout = json_node_get_int (node)) < 1 || timeout > SUBAGENT_APPROVAL_MAX_TIMEOUT_SECONDS)
    INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
             "Approval request %s has a timeout_seconds outside 1–%d", ids[0], SUBAGENT_APPROVAL_MAX_TIMEOUT_SECONDS);
  node = json_object_get_member (object, "tool_arguments");
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
             "Approval request %s has no tool_arguments object", ids[0]);
  arguments = json_node_get_object (node);

  node = json_object_get_member (object, "host");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      JsonObject *host = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      JsonNode *pid = host ? json_object_get_member (host, "pid") : NULL;
      JsonNode *start = host ? json_object_get_member (host, "start_time") : NULL;

      host_boot_id = host ? get_optional_string (host, "boot_id", &bad) : NULL;
      host_name = host ? get_optional_string (host, "hostname", &bad) : NULL;
      if (host == NULL || bad || pid == NULL || start == NULL || !JSON_NODE_HOLDS_VALUE (pid) ||
          !JSON_NODE_HOLDS_VALUE (start) || json_node_get_value_type (pid) != G_TYPE_INT64 ||
          json_node_get_value_type (start) != G_TYPE_INT64 || json_node_get_int (pid) <= 0 ||
          json_node_get_int (pid) > G_MAXINT || json_node_get_int (start) < 0 ||
          !subagent_approval_text_is_valid (host_boot_id, SUBAGENT_APPROVAL_NAME_MAX_LENGTH) ||
          !subagent_approval_text_is_valid (host_name, SUBAGENT_APPROVAL_NAME_MAX_LENGTH))
        INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                 "Approval request %s has a host that is not {pid, start_time, boot_id, hostname}", ids[0]);
      host_pid = json_node_get_int (pid);
      host_start = (guint64) json_node_get_int (start);
    }

  expected = subagent_approval_compute_action_digest (tool_name, arguments);
  if (digest == NULL || strcmp (digest, expected) != 0)
    INVALID (SUBAGENT_APPROVAL_ERROR_INTEGRITY,
             "Approval request %s: action_digest does not match its tool call; the request was altered", ids[0]);

  self = g_object_new (SUBAGENT_TYPE_APPROVAL_REQUEST,
                       "request-id", ids[0],
                       "subagent-id", ids[1],
                       "parent-run-id", ids[2],
                       "subagent-name", subagent_name,
                       "tool-name", tool_name,
                       "tool-arguments", arguments,
                       "permission-mode", subagent_permission_mode_to_string (mode),
                       "isolation", isolation,
                       "batch-index", (gint) batch_index,
                       "worktree-path", worktree_path,
                       "created-at", created_at,
                       "timeout-seconds", (guint) timeout,
                       NULL);
  if (host_pid > 0)
    _subagent_approval_request_set_host (self, host_pid, host_start, host_boot_id, host_name);
  subagent_approval_request_restore_verdict (self, status, approved_at, denied_at, denial_reason, approved_by);
  return self;
}

#undef INVALID
