/* subagent-approval-json.c: canonical JSON, action digests, and approval requests as JSON.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-approval-private.h"
#include "subagent-json-line-private.h"

/* Everything here reads or writes text that crosses a trust boundary: the
 * queue files of another process, the arguments of a child's tool call. */

gboolean
subagent_approval_text_is_valid (const char *text,
                                 gsize       max_length)
{
  gsize len;

  if (text == NULL)
    return FALSE;
  len = strlen (text);
  if (len == 0 || len > max_length || !g_utf8_validate (text, len, NULL))
    return FALSE;
  for (const char *p = text; *p; p++)
    if ((guchar) *p < 0x20 && *p != '\t' && *p != '\n')
      return FALSE;
  return TRUE;
}

char *
subagent_approval_text_sanitize (const char *text,
                                 gsize       max_length)
{
  g_autofree char *valid = NULL;
  GString *out;

  if (text == NULL || *text == '\0')
    return NULL;
  valid = g_utf8_make_valid (text, -1);
  out = g_string_new (NULL);
  for (const char *p = valid; *p; p = g_utf8_next_char (p))
    {
      gsize char_len = g_utf8_next_char (p) - p;

      /* Cut at a character boundary, within the limit readers enforce. */
      if (out->len + char_len > max_length)
        break;
      if ((guchar) *p < 0x20 && *p != '\n' && *p != '\t')
        g_string_append_c (out, ' ');
      else
        g_string_append_len (out, p, char_len);
    }
  return g_string_free (out, FALSE);
}

gboolean
subagent_approval_timestamp_is_valid (const char *text)
{
  g_autoptr(GDateTime) dt = NULL;
  g_autoptr(GTimeZone) utc = g_time_zone_new_utc ();

  if (text == NULL || strlen (text) > 64)
    return FALSE;
  dt = g_date_time_new_from_iso8601 (text, utc);
  return dt != NULL;
}

/**
 * subagent_approval_id_is_valid:
 * @id: (nullable): a run, subagent or request id
 *
 * Checks an id read from a caller, a file or another process: 1 to
 * %SUBAGENT_APPROVAL_ID_MAX_LENGTH characters from `[A-Za-z0-9_-]`.
 *
 * Returns: %TRUE if @id is safe to use as a key and a file name part
 */
gboolean
subagent_approval_id_is_valid (const char *id)
{
  gsize len = 0;

  if (id == NULL)
    return FALSE;
  for (const char *p = id; *p; p++, len++)
    if (!(g_ascii_isalnum (*p) || *p == '-' || *p == '_') || len >= SUBAGENT_APPROVAL_ID_MAX_LENGTH)
      return FALSE;
  return len > 0;
}

/**
 * subagent_approval_status_is_terminal:
 * @status: a status
 *
 * Checks whether %TRUE for every status but
 * %SUBAGENT_APPROVAL_STATUS_PENDING.
 *
 * Returns: %TRUE for every status but %SUBAGENT_APPROVAL_STATUS_PENDING
 *
 * Since: 0.2
 */
gboolean
subagent_approval_status_is_terminal (SubagentApprovalStatus status)
{
  return status != SUBAGENT_APPROVAL_STATUS_PENDING;
}

static void
append_canonical_string (GString    *out,
                         const char *text)
{
  g_string_append_c (out, '"');
  for (const char *p = text; *p; p++)
    {
      guchar c = (guchar) *p;

      if (c == '"' || c == '\\')
        {
          g_string_append_c (out, '\\');
          g_string_append_c (out, c);
        }
      else if (c < 0x20)
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_c (out, c);
    }
  g_string_append_c (out, '"');
}

static void append_canonical_object (GString    *out,
                                     JsonObject *object);

/* Reads @node without taking a reference to anything in it: the tree may be
 * a request's shared, sealed arguments, which other threads read at the
 * same time, and json-glib's reference counts are not atomic. */
static void
append_canonical (GString  *out,
                  JsonNode *node)
{
  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_NULL:
      g_string_append (out, "null");
      break;
    case JSON_NODE_VALUE:
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_BOOLEAN:
          g_string_append (out, json_node_get_boolean (node) ? "true" : "false");
          break;
        case G_TYPE_INT64:
          g_string_append_printf (out, "%" G_GINT64_FORMAT, json_node_get_int (node));
          break;
        case G_TYPE_DOUBLE:
          {
            char buf[G_ASCII_DTOSTR_BUF_SIZE];

            /* %.17g: 1.0 and 1 agree, and a value survives a round trip
             * through any JSON writer unchanged. */
            g_string_append (out, g_ascii_formatd (buf, sizeof buf, "%.17g", json_node_get_double (node)));
          }
          break;
        case G_TYPE_STRING:
          append_canonical_string (out, json_node_get_string (node));
          break;
        default:
          g_string_append (out, "null");
          break;
        }
      break;
    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);
        guint n = json_array_get_length (array);

        g_string_append_c (out, '[');
        for (guint i = 0; i < n; i++)
          {
            if (i > 0)
              g_string_append_c (out, ',');
            append_canonical (out, json_array_get_element (array, i));
          }
        g_string_append_c (out, ']');
      }
      break;
    case JSON_NODE_OBJECT:
      append_canonical_object (out, json_node_get_object (node));
      break;
    default:
      g_assert_not_reached ();
    }
}

static void
append_canonical_object (GString    *out,
                         JsonObject *object)
{
  g_autoptr(GList) members = json_object_get_members (object);

  members = g_list_sort (members, (GCompareFunc) strcmp);
  g_string_append_c (out, '{');
  for (GList *l = members; l != NULL; l = l->next)
    {
      if (l != members)
        g_string_append_c (out, ',');
      append_canonical_string (out, l->data);
      g_string_append_c (out, ':');
      append_canonical (out, json_object_get_member (object, l->data));
    }
  g_string_append_c (out, '}');
}

/**
 * subagent_json_to_canonical_string:
 * @node: a JSON node
 *
 * Serializes @node canonically: object keys sorted bytewise at every level,
 * no whitespace, integers in decimal, other numbers as `%.17g`, strings with
 * only `"`, `\` and control characters escaped. Two nodes that hold the
 * same data give the same text, whatever their key order.
 *
 * Returns: (transfer full): the canonical text
 */
char *
subagent_json_to_canonical_string (JsonNode *node)
{
  GString *out = g_string_new (NULL);

  g_return_val_if_fail (node != NULL, NULL);

  append_canonical (out, node);
  return g_string_free (out, FALSE);
}

/**
 * subagent_approval_compute_action_digest:
 * @tool_name: the tool's name
 * @tool_arguments: (nullable): the call's arguments (%NULL is `{}`)
 *
 * Computes the action digest of a tool call: lowercase hex SHA-256 over
 * @tool_name, a newline, and subagent_json_to_canonical_string() of the
 * arguments.
 *
 * Returns: (transfer full): 64 lowercase hex digits
 */
char *
subagent_approval_compute_action_digest (const char *tool_name,
                                         JsonObject *tool_arguments)
{
  g_autoptr(GChecksum) sum = NULL;
  g_autoptr(GString) canonical = NULL;

  g_return_val_if_fail (tool_name != NULL, NULL);

  canonical = g_string_new (NULL);
  /* Not through a JsonNode: wrapping the arguments in one would take a
   * (non-atomic) reference to an object other threads may be reading. */
  if (tool_arguments != NULL)
    append_canonical_object (canonical, tool_arguments);
  else
    g_string_append (canonical, "{}");

  sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (sum, (const guchar *) tool_name, strlen (tool_name));
  g_checksum_update (sum, (const guchar *) "\n", 1);
  g_checksum_update (sum, (const guchar *) canonical->str, canonical->len);
  return g_strdup (g_checksum_get_string (sum));
}

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
  if (batch_index >= 0)
    _subagent_json_line_append_int_member (out, "batch_index", batch_index);
  else
    g_string_append (out, ",\"batch_index\":null");
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

/* Sets @error as json-glib words a parse error ("<data>:LINE:COLUMN: …"),
 * which readers turn into diagnostics with a position. */
static gboolean
json_refuse (GError     **error,
             const char  *data,
             gsize        at,
             const char  *what)
{
  guint line = 1;
  gsize line_start = 0;

  for (gsize i = 0; i < at; i++)
    if (data[i] == '\n')
      {
        line++;
        line_start = i + 1;
      }
  g_set_error (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_INVALID_DATA,
               "<data>:%u:%" G_GSIZE_FORMAT ": Parse error: %s", line, at - line_start, what);
  return FALSE;
}

static gboolean
json_refuse_depth (GError **error,
                   guint    max_depth,
                   gsize    at)
{
  g_set_error (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_INVALID_DATA,
               "JSON nested deeper than %u levels (at byte %" G_GSIZE_FORMAT "); refusing it", max_depth, at);
  return FALSE;
}

/* The depth scan of subagent_json_check_depth(): brackets outside strings. */
static gboolean
scan_depth (const char  *data,
            gsize        len,
            guint        max_depth,
            GError     **error)
{
  guint depth = 0;
  gboolean in_string = FALSE;

  for (gsize i = 0; i < len; i++)
    {
      char c = data[i];

      if (in_string)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_string = FALSE;
        }
      else if (c == '"')
        in_string = TRUE;
      else if ((c == '[' || c == '{') && ++depth > max_depth)
        return json_refuse_depth (error, max_depth, i);
      else if ((c == ']' || c == '}') && depth > 0)
        depth--;
    }
  return TRUE;
}

static guint
hex4 (const char *p)
{
  guint value = 0;

  for (guint i = 0; i < 4; i++)
    {
      int digit = g_ascii_xdigit_value (p[i]);

      if (digit < 0)
        return G_MAXUINT;
      value = value * 16 + (guint) digit;
    }
  return value;
}

/* Past the string that starts at @p (its opening quote), or NULL. Escaped
 * surrogates must pair and NUL is refused, as json-glib would fail on them
 * mid-document. */
static const char *
skip_string (const char *p,
             const char *end)
{
  for (p++; p < end; p++)
    {
      guint unit;

      if (*p == '"')
        return p + 1;
      if ((guchar) *p < 0x20)
        return NULL;
      if (*p != '\\')
        continue;
      if (++p == end)
        return NULL;
      if (*p != '\0' && strchr ("\"\\/bfnrt", *p) != NULL)
        continue;
      if (*p != 'u' || end - p < 5 || (unit = hex4 (p + 1)) == G_MAXUINT || unit == 0
          || (unit >= 0xDC00 && unit <= 0xDFFF))
        return NULL;
      p += 4;
      if (unit >= 0xD800 && unit <= 0xDBFF)
        {
          guint low;

          if (end - p < 7 || p[1] != '\\' || p[2] != 'u' || (low = hex4 (p + 3)) < 0xDC00 || low > 0xDFFF)
            return NULL;
          p += 6;
        }
    }
  return NULL;
}

/* Past the number at @p (RFC 8259's grammar), or NULL. */
static const char *
skip_number (const char *p,
             const char *end)
{
  if (p < end && *p == '-')
    p++;
  if (p < end && *p == '0')
    p++;
  else if (p < end && *p >= '1' && *p <= '9')
    while (p < end && g_ascii_isdigit (*p))
      p++;
  else
    return NULL;
  if (p < end && *p == '.')
    {
      if (++p == end || !g_ascii_isdigit (*p))
        return NULL;
      while (p < end && g_ascii_isdigit (*p))
        p++;
    }
  if (p < end && (*p == 'e' || *p == 'E'))
    {
      if (++p < end && (*p == '+' || *p == '-'))
        p++;
      if (p == end || !g_ascii_isdigit (*p))
        return NULL;
      while (p < end && g_ascii_isdigit (*p))
        p++;
    }
  return p;
}

/* A strict check (RFC 8259, UTF-8) that @data is one array or object and
 * nothing else, nested no deeper than @max_depth. json-glib 1.6 leaks the
 * nodes it built whenever it stops at an error inside a document, and
 * recurses once per level with no limit: text it would refuse never
 * reaches it. Iterative, so any input is checked in constant stack. */
static gboolean
scan_document (const char  *data,
               gsize        len,
               guint        max_depth,
               GError     **error)
{
  enum { VALUE, VALUE_OR_CLOSE, KEY, KEY_OR_CLOSE, COLON, AFTER } state = VALUE;
  g_autofree char *open = g_malloc (max_depth + 1);
  const char *p = data, *end = data + len;
  const char *invalid;
  guint depth = 0;

  if (!g_utf8_validate_len (data, len, &invalid))
    return json_refuse (error, data, invalid - data, "not UTF-8");
  while (p < end && g_ascii_isspace (*p))
    p++;
  /* Every document libsubagent reads is an array or an object. */
  if (p == end || (*p != '{' && *p != '['))
    {
      g_set_error_literal (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_INVALID_DATA,
                           "JSON text is not an array or an object");
      return FALSE;
    }
  for (;;)
    {
      while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
      if (p == end)
        break;
      switch (state)
        {
        case VALUE_OR_CLOSE:
        case VALUE:
          if (state == VALUE_OR_CLOSE && *p == ']')
            {
              depth--;
              p++;
              state = AFTER;
            }
          else if (*p == '{' || *p == '[')
            {
              if (depth == max_depth)
                return json_refuse_depth (error, max_depth, p - data);
              open[depth++] = *p;
              state = *p == '{' ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
              p++;
            }
          else if (*p == '"')
            {
              const char *after = skip_string (p, end);

              if (after == NULL)
                return json_refuse (error, data, p - data, "a malformed string");
              p = after;
              state = AFTER;
            }
          else if (*p == '-' || g_ascii_isdigit (*p))
            {
              const char *after = skip_number (p, end);

              if (after == NULL)
                return json_refuse (error, data, p - data, "a malformed number");
              p = after;
              state = AFTER;
            }
          else if (end - p >= 4 && (memcmp (p, "true", 4) == 0 || memcmp (p, "null", 4) == 0))
            p += 4, state = AFTER;
          else if (end - p >= 5 && memcmp (p, "false", 5) == 0)
            p += 5, state = AFTER;
          else
            return json_refuse (error, data, p - data, "not a value");
          break;

        case KEY_OR_CLOSE:
        case KEY:
          if (state == KEY_OR_CLOSE && *p == '}')
            {
              depth--;
              p++;
              state = AFTER;
            }
          else if (*p == '"')
            {
              const char *after = skip_string (p, end);

              if (after == NULL)
                return json_refuse (error, data, p - data, "a malformed member name");
              p = after;
              state = COLON;
            }
          else
            return json_refuse (error, data, p - data, "not a member name");
          break;

        case COLON:
          if (*p != ':')
            return json_refuse (error, data, p - data, "no colon after a member name");
          p++;
          state = VALUE;
          break;

        case AFTER:
          if (depth == 0)
            return json_refuse (error, data, p - data, "text continues after its value");
          if (*p == ',')
            state = open[depth - 1] == '{' ? KEY : VALUE;
          else if (*p == (open[depth - 1] == '{' ? '}' : ']'))
            depth--;
          else
            return json_refuse (error, data, p - data, "no comma or closing bracket after a value");
          p++;
          break;
        }
    }
  if (state != AFTER || depth != 0)
    return json_refuse (error, data, len, "the text ends inside its value");
  return TRUE;
}

/**
 * subagent_json_check_depth:
 * @data: (array length=length) (element-type guint8): JSON text
 * @length: its length in bytes, or -1 if it is NUL-terminated
 * @max_depth: how deep arrays and objects may nest
 * @error: return location for a #GError
 *
 * Checks, without parsing, that @data nests arrays and objects no deeper
 * than @max_depth (brackets inside strings do not count). json-glib's
 * parser recurses once per level with no limit: 100,000 nested `[` crash
 * the process. Call this before handing untrusted text to it, or use
 * subagent_json_parser_load_bounded().
 *
 * Returns: %TRUE if the nesting is within bounds; else %FALSE with @error
 *   set (%JSON_PARSER_ERROR_INVALID_DATA)
 *
 * Since: 0.2
 */
gboolean
subagent_json_check_depth (const char  *data,
                           gssize       length,
                           guint        max_depth,
                           GError     **error)
{
  g_return_val_if_fail (data != NULL || length == 0, FALSE);

  return scan_depth (data, length < 0 ? strlen (data) : (gsize) length, max_depth, error);
}

/**
 * subagent_json_parser_load_bounded:
 * @parser: a #JsonParser
 * @data: (array length=length) (element-type guint8): JSON text
 * @length: its length in bytes, or -1 if it is NUL-terminated
 * @error: return location for a #GError
 *
 * json_parser_load_from_data() for untrusted text: the text must be one
 * array or object, nested no deeper than %SUBAGENT_JSON_MAX_DEPTH, and
 * valid JSON (RFC 8259, UTF-8), which is checked first without recursion
 * (json-glib 1.6 leaks what it parsed before any error, and recurses once
 * per level with no limit).
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
subagent_json_parser_load_bounded (JsonParser  *parser,
                                   const char  *data,
                                   gssize       length,
                                   GError     **error)
{
  g_return_val_if_fail (JSON_IS_PARSER (parser), FALSE);

  g_return_val_if_fail (data != NULL || length == 0, FALSE);

  if (!scan_document (data, length < 0 ? strlen (data) : (gsize) length, SUBAGENT_JSON_MAX_DEPTH, error))
    return FALSE;
  return json_parser_load_from_data (parser, data, length, error);
}
