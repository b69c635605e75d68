/* subagent-approval-json.c: checks of untrusted text and ids, canonical JSON
 * and action digests. Requests as JSON: subagent-approval-request-json.c;
 * checking JSON text before parsing: subagent-approval-json-scan.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-approval-private.h"

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
