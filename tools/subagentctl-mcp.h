/* subagentctl-mcp.h: what the files of `subagentctl mcp` share (the MCP
 * server: transport and lifecycle, tools, results, approvals, resources).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagentctl.h"

G_BEGIN_DECLS

/* JSON-RPC 2.0 error codes. */
#define MCP_PARSE_ERROR      (-32700)
#define MCP_INVALID_REQUEST  (-32600)
#define MCP_METHOD_NOT_FOUND (-32601)
#define MCP_INVALID_PARAMS   (-32602)
#define MCP_INTERNAL_ERROR   (-32603)
#define MCP_NOT_INITIALIZED  (-32002)

typedef struct _McpServer McpServer;
typedef struct _McpCall McpCall;

typedef enum {
  MCP_KIND_SINGLE,
  MCP_KIND_BATCH,
  MCP_KIND_TEAM,
} McpCallKind;

/* One tools/call, from its request to its response. */
struct _McpCall
{
  McpServer *server;
  char *key;
  JsonNode *id;
  char *tool_name;
  McpCallKind kind;
  JsonObject *arguments;
  JsonNode *progress_token;
  double progress;
  double total;

  SubagentManager *manager;
  SubagentSupervisor *supervisor;
  gulong event_id;
  SubagentTool *tool;
  GPtrArray *run_ids;               /* in the order they were accepted */
  GHashTable *batch_indexes;        /* run id → batch index + 1 (0: none) */
  gboolean cancelled;
  gboolean running;

  /* From the worker. */
  JsonNode *output;
  GError *error;
};

/* Called on the main thread with the client's answer to one of our
 * requests: @result or @error (the JSON-RPC error object); both NULL when
 * the server shuts down first. */
typedef void (*McpReplyFunc) (McpServer  *server,
                              JsonObject *result,
                              JsonObject *error,
                              gpointer    user_data);

struct _McpServer
{
  char *root;
  GMainLoop *loop;
  int out_fd;                       /* the protocol's stdout; fd 1 is stderr now */
  gboolean interactive;             /* children get an interactive stdin */

  /* Transport. */
  GDataInputStream *lines;
  GCancellable *reading;
  gboolean eof;
  gboolean closing;
  guint shutdown_timeout;

  /* Lifecycle. */
  gboolean initialized;             /* `initialize` answered */
  char *protocol_version;
  gboolean client_elicitation;
  gint64 next_request_id;
  GHashTable *replies;              /* our request id → McpReply */

  /* Children: the current manager (a new one when definitions change; calls
   * keep the one they started with). */
  SubagentManager *manager;
  SubagentRunner *runner;           /* shared by every manager */
  SubagentApprovalQueue *queue;     /* the parent run's; NULL: unattended */
  gulong queue_added_id;
  gulong queue_resolved_id;
  GHashTable *calls;                /* request id key → McpCall */
  guint n_workers;                  /* calls whose tool is still running */
  guint agents_started;             /* children started by this session */
  double spent_cents;

  /* Definitions. */
  GPtrArray *monitors;              /* GFileMonitor */
  guint reload_id;
  char *tools_fingerprint;

  /* Approvals on screen at the client: approval request id → our
   * elicitation/create's JSON-RPC id (gint64*). */
  GHashTable *elicitations;
};

/* subagentctl-mcp.c */
void     mcp_send               (McpServer   *server,
                                 JsonObject  *message);
void     mcp_send_result        (McpServer   *server,
                                 JsonNode    *id,
                                 JsonObject  *result);
void     mcp_send_error         (McpServer   *server,
                                 JsonNode    *id,
                                 int          code,
                                 const char  *message);
void     mcp_send_notification  (McpServer   *server,
                                 const char  *method,
                                 JsonObject  *params);
gint64   mcp_send_request       (McpServer   *server,
                                 const char  *method,
                                 JsonObject  *params,
                                 McpReplyFunc func,
                                 gpointer     user_data);
char    *mcp_id_key             (JsonNode    *id);
gboolean mcp_protocol_at_least  (McpServer   *server,
                                 const char  *version);
void     mcp_maybe_finish       (McpServer   *server);

/* subagentctl-mcp-tools.c */
gboolean mcp_tools_init         (McpServer   *server,
                                 GError     **error);
void     mcp_tools_shutdown     (McpServer   *server);
void     mcp_tools_list         (McpServer   *server,
                                 JsonNode    *id);
void     mcp_tools_call         (McpServer   *server,
                                 JsonNode    *id,
                                 JsonObject  *params);
void     mcp_tools_cancel       (McpServer   *server,
                                 JsonNode    *request_id,
                                 const char  *reason);
void     mcp_call_free          (McpCall     *call);

/* subagentctl-mcp-results.c */
McpCallKind mcp_call_kind      (const char  *tool_name);
JsonObject *mcp_output_schema  (McpCallKind  kind);
JsonObject *mcp_call_result    (McpCall     *call);
void        mcp_add_text       (JsonArray   *content,
                                const char  *text);
/* subagent://reviews/<key>.patch for a review's patch path, or NULL. */
char       *mcp_review_uri     (const char  *patch_path);

/* subagentctl-mcp-approvals.c */
void     mcp_approvals_init     (McpServer   *server);
void     mcp_approvals_shutdown (McpServer   *server);

/* subagentctl-mcp-resources.c */
void     mcp_resources_list     (McpServer   *server,
                                 JsonNode    *id);
void     mcp_resources_templates (McpServer  *server,
                                  JsonNode   *id);
void     mcp_resources_read     (McpServer   *server,
                                 JsonNode    *id,
                                 JsonObject  *params);

G_END_DECLS
