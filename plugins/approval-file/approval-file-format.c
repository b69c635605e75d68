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

char *
afs_request_canonical (SubagentApprovalRequest *request)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, subagent_approval_request_to_json (request));
  return subagent_json_to_canonical_string (node);
}

const char *
afs_request_text (SubagentApprovalRequest *request,
                  gboolean                 canonical)
{
  GQuark quark = canonical ? afs_canonical_text_quark () : afs_json_text_quark ();
  char *text;

  text = g_object_get_qdata (G_OBJECT (request), quark);
  if (text == NULL)
    {
      char *mine;

      mine = canonical ? afs_request_canonical (request) : subagent_approval_request_to_json_string (request);
      /* Readers on several threads may get here at once for a shared
       * request: the first text set stays, so a pointer handed out is
       * never freed while the request lives. */
      if (g_object_replace_qdata (G_OBJECT (request), quark, NULL, mine, g_free, NULL))
        text = mine;
      else
        {
          g_free (mine);
          text = g_object_get_qdata (G_OBJECT (request), quark);
        }
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

static GPtrArray *
parse_full (const char  *run_id,
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

/* Reparsing a version that differs from the previous one in a few
 * requests (a verdict, a new request) reuses the others.
 *
 * The fast path takes only documents laid out exactly as
 * afs_document_serialize() writes them — {"version":1,"parent_run_id":…,
 * "updated_at":…,"requests":[…],"signature":…} with no whitespace — and
 * finds each request's text by matching brackets. A request whose text is
 * byte for byte the compact text of a request of the previous version is
 * that request (its canonical text is then known too); the others are
 * parsed alone. The signature is then checked over the canonical document
 * rebuilt from the requests' canonical texts, which is exactly what
 * subagent_json_to_canonical_string() gives for the whole document: keys in
 * byte order, and the run id, time and version need no escaping (checked).
 * Anything else — another layout, a request that does not parse or
 * verify, a wrong signature — falls back to the full parse, which gives
 * the same result and error as before: the fast path only ever accepts
 * what the full parse would. */

typedef struct {
  const char *p;
  const char *end;
} Scan;

static gboolean
scan_literal (Scan       *s,
              const char *literal)
{
  gsize n = strlen (literal);

  if ((gsize) (s->end - s->p) < n || memcmp (s->p, literal, n) != 0)
    return FALSE;
  s->p += n;
  return TRUE;
}

/* A JSON string whose bytes need no escaping in canonical form (printable
 * ASCII but `"` and `\`); *text and *length get its contents. */
static gboolean
scan_plain_string (Scan        *s,
                   const char **text,
                   gsize       *length)
{
  const char *start;

  if (s->p >= s->end || *s->p != '"')
    return FALSE;
  start = ++s->p;
  while (s->p < s->end && *s->p != '"')
    {
      if ((guchar) *s->p < 0x20 || (guchar) *s->p >= 0x7f || *s->p == '\\')
        return FALSE;
      s->p++;
    }
  if (s->p >= s->end)
    return FALSE;
  *text = start;
  *length = (gsize) (s->p - start);
  s->p++;
  return TRUE;
}

/* One object, brackets matched outside strings; *length gets its size. */
static gboolean
scan_object (Scan  *s,
             gsize *length)
{
  const char *start = s->p;
  guint depth = 0;

  if (s->p >= s->end || *s->p != '{')
    return FALSE;
  for (; s->p < s->end; s->p++)
    {
      char c = *s->p;

      if (c == '"')
        {
          for (s->p++; s->p < s->end && *s->p != '"'; s->p++)
            if (*s->p == '\\')
              s->p++;
          if (s->p >= s->end)
            return FALSE;
        }
      else if (c == '{' || c == '[')
        depth++;
      else if (c == '}' || c == ']')
        {
          if (depth == 0)
            return FALSE;
          if (--depth == 0)
            {
              s->p++;
              *length = (gsize) (s->p - start);
              return TRUE;
            }
        }
    }
  return FALSE;
}

static gboolean
same_text (SubagentApprovalRequest *request,
           const char              *text,
           gsize                    length)
{
  const char *old = afs_request_text (request, FALSE);

  return strlen (old) == length && memcmp (old, text, length) == 0;
}

/* The request of the previous version whose compact text is @text. */
static SubagentApprovalRequest *
find_unchanged (GPtrArray   *previous,
                GHashTable **by_id,
                guint        index,
                const char  *text,
                gsize        length)
{
  g_autofree char *id = NULL;
  SubagentApprovalRequest *candidate;
  Scan s = { text, text + length };
  const char *id_text;
  gsize id_length;

  /* Most requests stay where they were, and new ones come at the end:
   * only a request at a place the previous version had is looked for
   * elsewhere (a lookup missed only costs a parse). */
  if (index >= previous->len)
    return NULL;
  if (same_text (previous->pdata[index], text, length))
    return previous->pdata[index];
  /* Elsewhere, by its id, which the compact text starts with: a request
   * changed in place (a verdict) is then one lookup, not a hash of every
   * request's text. */
  if (!scan_literal (&s, "{\"request_id\":") || !scan_plain_string (&s, &id_text, &id_length))
    return NULL;
  if (*by_id == NULL)
    {
      *by_id = g_hash_table_new (g_str_hash, g_str_equal);
      for (guint i = 0; i < previous->len; i++)
        g_hash_table_insert (*by_id, (gpointer) subagent_approval_request_get_request_id (previous->pdata[i]),
                             previous->pdata[i]);
    }
  id = g_strndup (id_text, id_length);
  candidate = g_hash_table_lookup (*by_id, id);
  return candidate != NULL && candidate != previous->pdata[index] && same_text (candidate, text, length)
         ? candidate : NULL;
}

/* A request parsed alone; *canonical (when asked for: a signed store)
 * gets the canonical text of the JSON as written (not as the request would
 * write it again), so that a member the request does not keep still
 * counts against the signature. */
static SubagentApprovalRequest *
parse_one (const char  *text,
           gsize        length,
           char       **canonical)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  SubagentApprovalRequest *request;

  /* Bounded: a text the bracket scan took for one request may hold two
   * values, after which json-glib 1.6 leaks the first. Two levels less
   * deep than a document may be: in one, it sits in the root object's
   * "requests" array. */
  if (!subagent_json_check_depth (text, (gssize) length, SUBAGENT_JSON_MAX_DEPTH - 2, NULL)
      || !subagent_json_parser_load_bounded (parser, text, (gssize) length, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return NULL;
  request = subagent_approval_request_new_from_json (json_node_get_object (json_parser_get_root (parser)), NULL);
  if (request != NULL && canonical != NULL)
    *canonical = subagent_json_to_canonical_string (json_parser_get_root (parser));
  return request;
}

static GPtrArray *
parse_reusing (const char *run_id,
               const char *data,
               gsize       length,
               GBytes     *key,
               GPtrArray  *previous)
{
  g_autoptr(GPtrArray) requests = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) fresh_canonical = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) canonical_texts = g_ptr_array_new ();
  g_autoptr(GHashTable) by_id = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  Scan s = { data, data + length };
  const char *run, *updated_at, *signature = NULL;
  gsize run_length, updated_at_length, signature_length = 0;

  /* The depth bound the full parse puts on the whole document holds for
   * each request parsed here (parse_one()); a reused request's text is
   * one that held it before, in the same place. */
  if (!scan_literal (&s, "{\"version\":1,\"parent_run_id\":") || !scan_plain_string (&s, &run, &run_length)
      || run_length != strlen (run_id) || memcmp (run, run_id, run_length) != 0
      || !scan_literal (&s, ",\"updated_at\":") || !scan_plain_string (&s, &updated_at, &updated_at_length)
      || !scan_literal (&s, ",\"requests\":["))
    return NULL;
  if (!scan_literal (&s, "]"))
    for (;;)
      {
        g_autoptr(SubagentApprovalRequest) request = NULL;
        const char *text = s.p;
        gsize text_length = 0;
        SubagentApprovalRequest *unchanged;

        if (!scan_object (&s, &text_length))
          return NULL;
        unchanged = find_unchanged (previous, &by_id, requests->len, text, text_length);
        if (unchanged != NULL)
          {
            request = g_object_ref (unchanged);
            if (key != NULL)
              g_ptr_array_add (canonical_texts, (gpointer) afs_request_text (unchanged, TRUE));
          }
        else
          {
            char *canonical = NULL;

            request = parse_one (text, text_length, key != NULL ? &canonical : NULL);
            if (request == NULL)
              return NULL;
            if (key != NULL)
              {
                g_ptr_array_add (fresh_canonical, canonical);
                g_ptr_array_add (canonical_texts, canonical);
              }
          }
        if (g_strcmp0 (subagent_approval_request_get_parent_run_id (request), run_id) != 0
            || !g_hash_table_add (seen, (gpointer) subagent_approval_request_get_request_id (request)))
          return NULL;
        g_ptr_array_add (requests, g_steal_pointer (&request));
        if (scan_literal (&s, "]"))
          break;
        if (!scan_literal (&s, ","))
          return NULL;
      }
  if (scan_literal (&s, ",\"signature\":"))
    {
      if (!scan_plain_string (&s, &signature, &signature_length))
        return NULL;
    }
  if (!scan_literal (&s, "}"))
    return NULL;
  scan_literal (&s, "\n");
  if (s.p != s.end)
    return NULL;

  if (key != NULL)
    {
      g_autoptr(GString) canonical = g_string_sized_new (length);
      g_autofree char *copy = NULL;
      guint8 expected[SHA256_DIGEST_SIZE];
      guint8 found[SHA256_DIGEST_SIZE];

      if (signature == NULL)
        return NULL;
      copy = g_strndup (signature, signature_length);
      if (!hex_decode (copy, found))
        return NULL;
      g_string_append (canonical, "{\"parent_run_id\":\"");
      g_string_append_len (canonical, run, (gssize) run_length);
      g_string_append (canonical, "\",\"requests\":[");
      for (guint i = 0; i < canonical_texts->len; i++)
        {
          if (i > 0)
            g_string_append_c (canonical, ',');
          g_string_append (canonical, canonical_texts->pdata[i]);
        }
      g_string_append (canonical, "],\"updated_at\":\"");
      g_string_append_len (canonical, updated_at, (gssize) updated_at_length);
      g_string_append_printf (canonical, "\",\"version\":%d}", AFS_FORMAT_VERSION);
      hmac_raw (key, canonical->str, canonical->len, expected);
      if (!memeql_sec (expected, found, SHA256_DIGEST_SIZE))
        return NULL;
    }
  return g_steal_pointer (&requests);
}

GPtrArray *
afs_document_parse (const char  *run_id,
                    const char  *data,
                    gsize        length,
                    GBytes      *key,
                    GPtrArray   *previous,
                    GError     **error)
{
  if (previous != NULL && previous->len > 0)
    {
      GPtrArray *requests = parse_reusing (run_id, data, length, key, previous);

      if (requests != NULL)
        return requests;
    }
  return parse_full (run_id, data, length, key, error);
}
