/* openai-private.h: the parts of the runner-openai plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>
#include <libsoup/soup.h>

G_BEGIN_DECLS

/* ---- watchdog (openai-watchdog.c) --------------------------------------
 * One thread per run that cancels what overran its time: the run as a
 * whole (timeout_seconds) and the I/O step in progress (connect, one read,
 * a Bash command). Arming is a mutex and a signal, cheap enough per read. */
typedef struct _OpenaiWatchdog OpenaiWatchdog;

OpenaiWatchdog *openai_watchdog_new          (GCancellable   *run_stop,
                                              guint           run_timeout_seconds);
void            openai_watchdog_free         (OpenaiWatchdog *self);
/* Cancels @io at @deadline_us (monotonic) unless disarmed first. */
void            openai_watchdog_arm          (OpenaiWatchdog *self,
                                              GCancellable   *io,
                                              gint64          deadline_us);
/* Returns whether the armed deadline fired. */
gboolean        openai_watchdog_disarm       (OpenaiWatchdog *self);
gboolean        openai_watchdog_run_expired  (OpenaiWatchdog *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OpenaiWatchdog, openai_watchdog_free)

/* ---- a fast JSON reader for stream chunks (openai-json.c) ------------- */
/* The tree of valid JSON @text, or NULL for anything else (then parse with
 * json-glib for a proper error). */
JsonNode *openai_json_parse (const char *text,
                             gsize       length);

/* ---- one model turn, assembled from stream chunks (openai-turn.c) ------ */
typedef struct {
  char *id;
  char *name;
  GString *arguments;
  gint64 index;   /* the server's index, or -1 */
} OpenaiToolCall;

typedef struct {
  GString *content;
  GPtrArray *tool_calls;  /* OpenaiToolCall */
  char *finish_reason;
  JsonObject *usage;      /* NULL when the server sent none */
  gboolean done;          /* `data: [DONE]` seen */
  gboolean visible;       /* some content or tool call arrived */
  GString *event;         /* the data lines of the SSE event being read */
  GPtrArray *pending;     /* events read but not parsed yet */
} OpenaiTurn;

OpenaiTurn *openai_turn_new            (void);
void        openai_turn_free           (OpenaiTurn  *self);
/* One chunk (a `chat.completion.chunk`) or a whole `chat.completion`. */
gboolean    openai_turn_feed_chunk     (OpenaiTurn  *self,
                                        JsonObject  *chunk,
                                        GError     **error);
/* One line of an SSE stream, without its line end. */
gboolean    openai_turn_feed_sse_line  (OpenaiTurn  *self,
                                        const char  *line,
                                        GError     **error);
/* Parses the events read so far (one parse for all of them). */
gboolean    openai_turn_parse_pending  (OpenaiTurn  *self,
                                        GError     **error);
/* Gives tool calls without an id one (`call_<prefix>_<n>`). */
void        openai_turn_finish         (OpenaiTurn  *self,
                                        const char  *id_prefix);
/* The assistant message for the transcript and the next request. */
JsonObject *openai_turn_to_message     (OpenaiTurn  *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OpenaiTurn, openai_turn_free)

/* ---- the HTTP client (openai-client.c) ---------------------------------- */
typedef struct _OpenaiClient OpenaiClient;

typedef enum {
  OPENAI_FAILURE_NONE,
  OPENAI_FAILURE_CANCELLED,   /* the run was cancelled */
  OPENAI_FAILURE_RUN_TIMEOUT, /* the run's timeout_seconds passed */
  OPENAI_FAILURE_SERVER,      /* anything else: HTTP status, I/O, timeouts of one request */
} OpenaiFailure;

/* @model: settings from subagent_config_get_model(). NULL with @error if
 * the key's variable is unset. */
OpenaiClient *openai_client_new        (JsonObject      *model,
                                        OpenaiWatchdog  *watchdog,
                                        GCancellable    *stop,
                                        GError         **error);
void          openai_client_free       (OpenaiClient    *self);
/* POSTs @body (JSON text, streaming) and assembles the answer; retries 429/5xx. */
OpenaiTurn   *openai_client_chat       (OpenaiClient    *self,
                                        GBytes          *body,
                                        OpenaiFailure   *failure,
                                        GError         **error);
guint         openai_client_get_retries (OpenaiClient   *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OpenaiClient, openai_client_free)

/* ---- built-in workspace tools (openai-tools*.c) ------------------------- */
typedef struct _OpenaiToolEnv OpenaiToolEnv;

#define OPENAI_BASH_DEFAULT_TIMEOUT_MS (120 * 1000)
#define OPENAI_BASH_MAX_TIMEOUT_MS (600 * 1000)
#define OPENAI_TOOL_OUTPUT_CAP 30000

OpenaiToolEnv        *openai_tool_env_new     (SubagentIsolationContext *isolation,
                                               const char * const       *write_scope,
                                               const char * const       *hidden_env,
                                               OpenaiWatchdog           *watchdog,
                                               GError                  **error);
void                  openai_tool_env_free    (OpenaiToolEnv            *env);
/* Read, Write, Edit, Glob, Grep, LS and Bash bound to @env (which must
 * outlive the registry). */
SubagentSimpleToolRegistry *openai_workspace_tools_new (OpenaiToolEnv *env);
/* Whether a tool of the registry keeps its effects inside the workspace. */
gboolean              openai_workspace_tool_stays_inside (const char *name);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OpenaiToolEnv, openai_tool_env_free)

/* ---- the runner (openai-runner.c) -------------------------------------- */
#define SUBAGENT_TYPE_OPENAI_RUNNER (subagent_openai_runner_get_type ())
G_DECLARE_FINAL_TYPE (SubagentOpenaiRunner, subagent_openai_runner, SUBAGENT, OPENAI_RUNNER, GObject)

void subagent_openai_runner_register (GTypeModule *module);

/* The agent loop (openai-loop.c), run in a thread of its own. */
SubagentRunOutcome *openai_loop_run (SubagentRunContext *context,
                                     GCancellable       *cancellable);

/* A "cancelled" handler that cancels @other (given as user data). */
void openai_cancel_other (GCancellable *cancellable,
                          gpointer      other);

/* Results longer than this reach the model cut, with a note. */
#define OPENAI_RESULT_CAP 32000

char *openai_truncate_for_model (const char *text,
                                 gsize       cap);

G_END_DECLS
