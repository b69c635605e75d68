/* approval-file-format.c: serialization and HMAC of the approval-file
 * documents.
 *
 * A document is {"version":1, "parent_run_id", "updated_at", "requests":[...],
 * "signature"}. The signature is the hex HMAC-SHA256 of the canonical JSON
 * (subagent_json_to_canonical_string()) of every other member, compared in
 * constant time; each request carries an action digest (tool name and
 * arguments) that the framework checks when it rebuilds the request, so a
 * signed file also pins every verdict to its action. A reader without a
 * key does not check a signature (its next write drops it); a reader with
 * a key refuses a file without one.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>

#include "approval-file-format.h"

static void
hmac_raw (GBytes     *key,
          const char *data,
          gsize       length,
          guint8      digest[SHA256_DIGEST_SIZE])
{
  struct hmac_sha256_ctx ctx;
  gsize key_length = 0;
  const guint8 *key_data = g_bytes_get_data (key, &key_length);

  hmac_sha256_set_key (&ctx, key_length, key_data);
  hmac_sha256_update (&ctx, length, (const guint8 *) data);
  hmac_sha256_digest (&ctx, SHA256_DIGEST_SIZE, digest);
  memset (&ctx, 0, sizeof ctx);
}

char *
afs_hmac_hex (GBytes     *key,
              const char *data,
              gsize       length)
{
  static const char hex[] = "0123456789abcdef";
  guint8 digest[SHA256_DIGEST_SIZE];
  char *out = g_malloc (AFS_SIGNATURE_HEX_LEN + 1);

  hmac_raw (key, data, length, digest);
  for (guint i = 0; i < SHA256_DIGEST_SIZE; i++)
    {
      out[2 * i] = hex[digest[i] >> 4];
      out[2 * i + 1] = hex[digest[i] & 0xf];
    }
  out[AFS_SIGNATURE_HEX_LEN] = '\0';
  return out;
}

static gboolean
hex_decode (const char *text,
            guint8      out[SHA256_DIGEST_SIZE])
{
  if (strlen (text) != AFS_SIGNATURE_HEX_LEN)
    return FALSE;
  for (guint i = 0; i < SHA256_DIGEST_SIZE; i++)
    {
      int hi = g_ascii_xdigit_value (text[2 * i]);
      int lo = g_ascii_xdigit_value (text[2 * i + 1]);

      if (hi < 0 || lo < 0)
        return FALSE;
      out[i] = (guint8) (hi << 4 | lo);
    }
  return TRUE;
}

static G_DEFINE_QUARK (afs-json-text, afs_json_text)
static G_DEFINE_QUARK (afs-canonical-text, afs_canonical_text)

const char *
afs_request_text (SubagentApprovalRequest *request,
                  gboolean                 canonical)
{
  GQuark quark = canonical ? afs_canonical_text_quark () : afs_json_text_quark ();
  char *text;

  text = g_object_get_qdata (G_OBJECT (request), quark);
  if (text == NULL)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

      json_node_take_object (node, subagent_approval_request_to_json (request));
      text = canonical ? subagent_json_to_canonical_string (node) : json_to_string (node, FALSE);
      g_object_set_qdata_full (G_OBJECT (request), quark, text, g_free);
    }
  return text;
}

static void
append_requests (GString   *out,
                 GPtrArray *requests,
                 gboolean   canonical)
{
  g_string_append_c (out, '[');
  for (guint i = 0; i < requests->len; i++)
    {
      if (i > 0)
        g_string_append_c (out, ',');
      g_string_append (out, afs_request_text (requests->pdata[i], canonical));
    }
  g_string_append_c (out, ']');
}

/* Built from per-request texts rather than one JsonNode tree: a write then
 * serializes only the requests that changed. The run id ([A-Za-z0-9_-]) and
 * the ISO 8601 time need no escaping; the canonical form is exactly what
 * subagent_json_to_canonical_string() gives for the document without its
 * signature (keys in byte order), which is what a reader verifies. */
GBytes *
afs_document_serialize (const char *run_id,
                        GPtrArray  *requests,
                        GBytes     *key)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *updated_at = g_date_time_format_iso8601 (now);
  GString *out = g_string_sized_new (256 + 600 * requests->len);
  gsize length;

  g_string_append_printf (out, "{\"version\":%d,\"parent_run_id\":\"%s\",\"updated_at\":\"%s\",\"requests\":",
                          AFS_FORMAT_VERSION, run_id, updated_at);
  append_requests (out, requests, FALSE);
  if (key != NULL)
    {
      g_autoptr(GString) canonical = g_string_sized_new (out->len);
      g_autofree char *signature = NULL;

      g_string_append_printf (canonical, "{\"parent_run_id\":\"%s\",\"requests\":", run_id);
      append_requests (canonical, requests, TRUE);
      g_string_append_printf (canonical, ",\"updated_at\":\"%s\",\"version\":%d}", updated_at, AFS_FORMAT_VERSION);
      signature = afs_hmac_hex (key, canonical->str, canonical->len);
      g_string_append_printf (out, ",\"signature\":\"%s\"", signature);
    }
  /* A trailing newline keeps the file friendly to `cat` and editors. */
  g_string_append (out, "}\n");
  length = out->len;
  return g_bytes_new_take (g_string_free (out, FALSE), length);
}

/* Checks and removes the "signature" member of @root. */
static gboolean
verify_signature (JsonNode  *node,
                  GBytes    *key,
                  GError   **error)
{
  JsonObject *root = json_node_get_object (node);
  JsonNode *member = json_object_get_member (root, "signature");
  g_autofree char *canonical = NULL;
  guint8 expected[SHA256_DIGEST_SIZE];
  guint8 found[SHA256_DIGEST_SIZE];

  if (member == NULL)
    {
      g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                           "the file is not signed but an HMAC key is set");
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_VALUE (member) || json_node_get_value_type (member) != G_TYPE_STRING
      || !hex_decode (json_node_get_string (member), found))
    {
      g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                           "the signature is not a hex HMAC-SHA256");
      return FALSE;
    }

  json_object_remove_member (root, "signature");
  canonical = subagent_json_to_canonical_string (node);
  hmac_raw (key, canonical, strlen (canonical), expected);
  if (!memeql_sec (expected, found, SHA256_DIGEST_SIZE))
    {
      g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                           "the signature does not match (file modified, or signed with another key)");
      return FALSE;
    }
  return TRUE;
}

GPtrArray *
afs_document_parse (const char  *run_id,
                    const char  *data,
                    gsize        length,
                    GBytes      *key,
                    GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GPtrArray) requests = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GError) local_error = NULL;
  JsonObject *root;
  JsonNode *member;
  JsonArray *array;
  guint n;

  if (!subagent_json_parser_load_bounded (parser, data, (gssize) length, &local_error))
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "the file is not valid JSON: %s", local_error->message);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                           "the file does not hold a JSON object");
      return NULL;
    }
  root = json_node_get_object (json_parser_get_root (parser));

  if (key != NULL && !verify_signature (json_parser_get_root (parser), key, error))
    return NULL;

  member = json_object_get_member (root, "version");
  if (member == NULL || !JSON_NODE_HOLDS_VALUE (member) || json_node_get_value_type (member) != G_TYPE_INT64
      || json_node_get_int (member) != AFS_FORMAT_VERSION)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "the file is not a version %d approval queue", AFS_FORMAT_VERSION);
      return NULL;
    }
  /* The run id is inside the signed part: a signed file copied under another
   * run's name must not load there. */
  member = json_object_get_member (root, "parent_run_id");
  if (member == NULL || !JSON_NODE_HOLDS_VALUE (member) || json_node_get_value_type (member) != G_TYPE_STRING
      || !g_str_equal (json_node_get_string (member), run_id))
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "the file does not belong to run “%s”", run_id);
      return NULL;
    }
  member = json_object_get_member (root, "requests");
  if (member == NULL || !JSON_NODE_HOLDS_ARRAY (member))
    {
      g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                           "the file has no “requests” array");
      return NULL;
    }

  array = json_node_get_array (member);
  n = json_array_get_length (array);
  for (guint i = 0; i < n; i++)
    {
      JsonNode *element = json_array_get_element (array, i);
      g_autoptr(SubagentApprovalRequest) request = NULL;
      const char *request_id;

      if (!JSON_NODE_HOLDS_OBJECT (element))
        {
          g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                       "request %u is not a JSON object", i);
          return NULL;
        }
      request = subagent_approval_request_new_from_json (json_node_get_object (element), &local_error);
      if (request == NULL)
        {
          g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                       "request %u: %s", i, local_error->message);
          return NULL;
        }
      request_id = subagent_approval_request_get_request_id (request);
      if (g_strcmp0 (subagent_approval_request_get_parent_run_id (request), run_id) != 0)
        {
          g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                       "request %s belongs to another run", request_id);
          return NULL;
        }
      if (!g_hash_table_add (seen, (gpointer) request_id))
        {
          g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                       "request %s appears twice", request_id);
          return NULL;
        }
      g_ptr_array_add (requests, g_steal_pointer (&request));
    }
  return g_steal_pointer (&requests);
}
