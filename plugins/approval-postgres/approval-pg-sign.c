/* approval-pg-sign.c: HMAC of the approval-postgres rows, and the key.
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

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>

#include "approval-pg-sign.h"

#define MAX_KEY_FILE_SIZE (64 * 1024)

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

GBytes *
apg_read_key_file (const char  *path,
                   GError     **error)
{
  g_autofree char *data = NULL;
  struct stat st;
  gsize length = 0;
  int fd;

  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      int saved_errno = errno;

      if (fd >= 0)
        close (fd);
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "Could not open the HMAC key file %s: %s", path, g_strerror (saved_errno));
      return NULL;
    }
  /* Checked on the very file read below; a key others can read is no key. */
  if (!S_ISREG (st.st_mode) || (st.st_mode & 0077) != 0 || st.st_size > MAX_KEY_FILE_SIZE)
    {
      close (fd);
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "Refusing the HMAC key file %s: it has mode %04o, but must be a regular file "
                   "(of at most 64 KiB) readable by its owner only (chmod 600 %s)",
                   path, (guint) (st.st_mode & 07777), path);
      return NULL;
    }
  data = g_malloc ((gsize) st.st_size + 1);
  while (length < (gsize) st.st_size)
    {
      ssize_t n = read (fd, data + length, (gsize) st.st_size - length);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved_errno = errno;

          close (fd);
          g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                       "Could not read the HMAC key file %s: %s", path, g_strerror (saved_errno));
          return NULL;
        }
      if (n == 0)
        break;
      length += (gsize) n;
    }
  close (fd);
  while (length > 0 && (data[length - 1] == '\n' || data[length - 1] == '\r'))
    length--;
  if (length == 0)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "The HMAC key file %s is empty", path);
      return NULL;
    }
  return g_bytes_new (data, length);
}
