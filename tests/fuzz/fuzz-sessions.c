/* fuzz-sessions.c: the session records a host reads back — a session log
 * (`.jsonl`) of the sessions directory, which a child in shared isolation
 * can write. Every record read must write out as JSON, its line (the
 * writer the log appends with) must equal what the generator writes, and
 * a result rebuilt from it must write out as JSON too.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include <subagent.h>

#include "subagent-records-private.h"
#include "subagent-session-private.h"
#include "fuzz-support.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

static char *
object_text (JsonObject *object)
{
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), object);

  return json_to_string (node, FALSE);
}

static void
must_parse (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();

  if (!json_parser_load_from_data (parser, text, -1, NULL))
    abort ();
}

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  g_autofree char *sessions_dir = g_build_filename (fuzz_init_root (), ".subagent", "sessions", NULL);
  g_autoptr(GPtrArray) sessions = NULL;
  g_auto(GStrv) skipped = NULL;

  fuzz_write (".subagent/sessions/fuzz.jsonl", data, size);
  sessions = subagent_session_log_read_dir (sessions_dir, &skipped, NULL);
  if (sessions == NULL)
    return 0;
  for (guint i = 0; i < sessions->len; i++)
    {
      SubagentSession *session = sessions->pdata[i];
      g_autoptr(JsonObject) json = subagent_session_to_json (session);
      g_autofree char *text = object_text (json);
      g_autoptr(GString) line = g_string_new (NULL);
      g_autoptr(SubagentRunResult) result = _subagent_run_result_new_from_session (session);

      must_parse (text);
      _subagent_session_append_line (session, line);
      if (strcmp (line->str, text) != 0)
        abort ();
      if (result != NULL)
        {
          g_autoptr(JsonObject) result_json = subagent_run_result_to_json (result);
          g_autofree char *result_text = object_text (result_json);

          must_parse (result_text);
        }
    }
  return 0;
}
