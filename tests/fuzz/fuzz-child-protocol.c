/* fuzz-child-protocol.c: one stdout line of a child, as the command
 * runner reads it: a protocol message or plain output.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include <subagent.h>

#include "subagent-child-process-private.h"
#include "subagent-json-private.h"
#include "fuzz-support.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  g_autofree char *line = g_strndup ((const char *) data, size);
  g_autofree char *valid = g_utf8_make_valid (line, -1);
  g_autoptr(JsonObject) message = NULL;
  const char *type = NULL;

  fuzz_init_root ();
  message = subagent_child_message_parse (valid, &type);
  if (message != NULL)
    {
      const char *text = NULL;
      gint64 count = 0;
      double cost = 0;
      JsonObject *arguments = NULL;

      if (type == NULL)
        abort ();
      /* The fields the runner reads from usage, final and approval_request messages. */
      subagent_json_read_string (message, "message", "answer", TRUE, &text, NULL);
      subagent_json_read_string (message, "message", "id", TRUE, &text, NULL);
      subagent_json_read_string (message, "message", "tool", TRUE, &text, NULL);
      subagent_json_read_int (message, "message", "iterations", 0, G_MAXUINT, &count, NULL);
      subagent_json_read_int (message, "message", "tool_calls", 0, G_MAXUINT, &count, NULL);
      subagent_json_read_amount (message, "message", "cost_cents", &cost, NULL);
      if (cost > 1e16)
        abort ();
      if (subagent_json_read_object (message, "message", "arguments", &arguments, NULL) && arguments != NULL)
        {
          g_autofree char *digest = subagent_approval_compute_action_digest ("tool", arguments);

          if (digest == NULL)
            abort ();
        }
    }
  return 0;
}
