/* approval-pg-sign.c: HMAC of the approval-postgres rows.
 *
 * Each row is signed on its own: the signature is the hex HMAC-SHA256 of
 * the canonical JSON (subagent_json_to_canonical_string()) of the request
 * document, which names its run and request and carries the action
 * digest. A row moved to another run or request, a verdict moved to
 * another action, or any edited member fails to verify. Canonical JSON
 * (not the stored text) is signed because the server keeps documents as
 * jsonb, which does not preserve the text it was given.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>

#include "approval-pg-sign.h"

char *
apg_request_canonical (SubagentApprovalRequest *request)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, subagent_approval_request_to_json (request));
  return subagent_json_to_canonical_string (node);
}

static void
hmac_raw (GBytes     *key,
          const char *data,
          guint8      digest[SHA256_DIGEST_SIZE])
{
  struct hmac_sha256_ctx ctx;
  gsize key_length = 0;
  const guint8 *key_data = g_bytes_get_data (key, &key_length);

  hmac_sha256_set_key (&ctx, key_length, key_data);
  hmac_sha256_update (&ctx, strlen (data), (const guint8 *) data);
  hmac_sha256_digest (&ctx, SHA256_DIGEST_SIZE, digest);
  memset (&ctx, 0, sizeof ctx);
}

char *
apg_sign (GBytes     *key,
          const char *canonical)
{
  static const char hex[] = "0123456789abcdef";
  guint8 digest[SHA256_DIGEST_SIZE];
  char *out = g_malloc (APG_SIGNATURE_HEX_LEN + 1);

  hmac_raw (key, canonical, digest);
  for (guint i = 0; i < SHA256_DIGEST_SIZE; i++)
    {
      out[2 * i] = hex[digest[i] >> 4];
      out[2 * i + 1] = hex[digest[i] & 0xf];
    }
  out[APG_SIGNATURE_HEX_LEN] = '\0';
  return out;
}

gboolean
apg_verify (GBytes     *key,
            const char *canonical,
            const char *signature)
{
  guint8 expected[SHA256_DIGEST_SIZE];
  guint8 found[SHA256_DIGEST_SIZE];

  if (signature == NULL || strlen (signature) != APG_SIGNATURE_HEX_LEN)
    return FALSE;
  for (guint i = 0; i < SHA256_DIGEST_SIZE; i++)
    {
      int hi = g_ascii_xdigit_value (signature[2 * i]);
      int lo = g_ascii_xdigit_value (signature[2 * i + 1]);

      if (hi < 0 || lo < 0)
        return FALSE;
      found[i] = (guint8) (hi << 4 | lo);
    }
  hmac_raw (key, canonical, expected);
  return memeql_sec (expected, found, SHA256_DIGEST_SIZE);
}
