/* fuzz-approvals.c: the approval-file format, as the file sink reads a
 * queue file, with a key (signature checked) when the first byte is odd,
 * without one otherwise.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include <subagent.h>

#include "approval-file-format.h"
#include "fuzz-support.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  static const char key_text[] = "fuzzing key";
  g_autoptr(GBytes) key = NULL;
  g_autoptr(GPtrArray) requests = NULL;
  g_autoptr(GError) error = NULL;

  if (size < 1)
    return 0;
  fuzz_init_root ();
  if (data[0] & 1)
    key = g_bytes_new_static (key_text, strlen (key_text));
  requests = afs_document_parse ("run-1", (const char *) data + 1, size - 1, key, NULL, &error);
  if (requests != NULL)
    {
      /* What was accepted is written back, and must read back the same. */
      g_autoptr(GBytes) again = afs_document_serialize ("run-1", requests, key);
      g_autoptr(GPtrArray) reread = NULL;
      gsize length = 0;
      const char *text = g_bytes_get_data (again, &length);

      reread = afs_document_parse ("run-1", text, length, key, NULL, NULL);
      if (reread == NULL || reread->len != requests->len)
        abort ();
      {
        /* The input again, reusing what it gave: the same outcome as a
         * full parse, request for request. */
        g_autoptr(GPtrArray) reused = afs_document_parse ("run-1", (const char *) data + 1, size - 1, key,
                                                          requests, NULL);

        if (reused == NULL || reused->len != requests->len)
          abort ();
        for (guint i = 0; i < reused->len; i++)
          if (strcmp (afs_request_text (reused->pdata[i], TRUE), afs_request_text (requests->pdata[i], TRUE)) != 0)
            abort ();
      }
    }
  else if (error == NULL)
    abort ();
  return 0;
}
