/* model-test-support.h: the scripted OpenAI-compatible server
 * (openai-scripted-server.py) for the tests and benches of model-backed
 * children, and a workspace configured to use it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

/* The variable the test model's key is read from, and the key. */
#define MTS_KEY_ENV "SUBAGENT_TEST_MODEL_KEY"
#define MTS_KEY "sk-test-5ecret-d0-not-leak-7f3a"

typedef struct {
  GSubprocess *process;
  guint port;
  char *dir;
  char *record_path;
  char *log_path;
} MtsServer;

/* Starts the server on 127.0.0.1 with @script_json ({"steps": [...]}). */
MtsServer  *mts_server_start    (const char *script_json);
void        mts_server_stop     (MtsServer  *server);
/* Every line the server recorded; with @event, only those of that event. */
JsonArray  *mts_server_records  (MtsServer  *server,
                                 const char *event);
/* The body of request @index (transfer full). */
JsonObject *mts_server_request_body (MtsServer *server,
                                     guint      index);
/* Waits (iterating no main context) until @event was recorded @count times. */
void        mts_server_wait_for (MtsServer  *server,
                                 const char *event,
                                 guint       count);

/* Writes .subagent/config.yaml of @root with a model `test` served by
 * @server (alias `sonnet`, the default model) plus @extra YAML lines. */
void        mts_write_config    (const char *root,
                                 MtsServer  *server,
                                 const char *extra);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtsServer, mts_server_stop)

G_END_DECLS
