/* subagentctl-mcp.c: `subagentctl mcp`, libsubagent as a Model Context
 * Protocol server over stdio: the transport (one JSON-RPC 2.0 message per
 * line), the lifecycle (initialize, version negotiation, ping, shutdown on
 * EOF) and the dispatch to tools, approvals and resources.
 *
 * stdout carries the protocol only: fd 1 is pointed at stderr at start and
 * the protocol writes go to a private copy of the original stdout, so a
 * stray printf (ours, a plugin's) cannot corrupt the stream. Everything
 * runs on the main context; tool calls block in threads of their own.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <gio/gunixinputstream.h>

#include "subagentctl-mcp.h"

/* Newest first: what `initialize` answers when the client asks for a
 * version we do not speak. */
static const char * const protocol_versions[] = { "2025-06-18", "2025-03-26", "2024-11-05", NULL };

/* How long EOF waits for cancelled children before exiting anyway. */
#define SHUTDOWN_GRACE_MS 20000

typedef struct {
  McpReplyFunc func;
  gpointer user_data;
} McpReply;

/* ---- output ---- */

static void
write_all (int         fd,
           const char *data,
           gsize       length)
{
  while (length > 0)
    {
      ssize_t n = write (fd, data, length);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          g_printerr ("subagentctl mcp: cannot write to the client: %s\n", g_strerror (errno));
          return;
        }
      data += n;
      length -= (gsize) n;
    }
}

void
mcp_send (McpServer  *server,
          JsonObject *message)
{
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), message);
  g_autofree char *text = NULL;
  GString *line;

  json_object_set_string_member (message, "jsonrpc", "2.0");
  text = json_to_string (node, FALSE);
  line = g_string_new (text);
  g_string_append_c (line, '\n');
  write_all (server->out_fd, line->str, line->len);
  g_string_free (line, TRUE);
}

void
mcp_send_result (McpServer  *server,
                 JsonNode   *id,
                 JsonObject *result)
{
  g_autoptr(JsonObject) message = json_object_new ();

  json_object_set_member (message, "id", json_node_copy (id));
  json_object_set_object_member (message, "result", json_object_ref (result));
  mcp_send (server, message);
}

void
mcp_send_error (McpServer  *server,
                JsonNode   *id,
                int         code,
                const char *text)
{
  g_autoptr(JsonObject) message = json_object_new ();
  JsonObject *error = json_object_new ();

  json_object_set_int_member (error, "code", code);
  json_object_set_string_member (error, "message", text);
  if (id != NULL)
    json_object_set_member (message, "id", json_node_copy (id));
  else
    json_object_set_null_member (message, "id");
  json_object_set_object_member (message, "error", error);
  mcp_send (server, message);
}

void
mcp_send_notification (McpServer  *server,
                       const char *method,
                       JsonObject *params)
{
  g_autoptr(JsonObject) message = json_object_new ();

  json_object_set_string_member (message, "method", method);
  if (params != NULL)
    json_object_set_object_member (message, "params", json_object_ref (params));
  mcp_send (server, message);
}

gint64
mcp_send_request (McpServer   *server,
                  const char  *method,
                  JsonObject  *params,
                  McpReplyFunc func,
                  gpointer     user_data)
{
  g_autoptr(JsonObject) message = json_object_new ();
  McpReply *reply = g_new0 (McpReply, 1);
  gint64 id = ++server->next_request_id;
  g_autoptr(JsonNode) id_node = json_node_init_int (json_node_alloc (), id);

  reply->func = func;
  reply->user_data = user_data;
  g_hash_table_insert (server->replies, mcp_id_key (id_node), reply);
  json_object_set_int_member (message, "id", id);
  json_object_set_string_member (message, "method", method);
  if (params != NULL)
    json_object_set_object_member (message, "params", json_object_ref (params));
  mcp_send (server, message);
  return id;
}

/* A hash key for a JSON-RPC id: its JSON text ("7" and "\"7\"" differ). */
char *
mcp_id_key (JsonNode *id)
{
  return json_to_string (id, FALSE);
}

gboolean
mcp_protocol_at_least (McpServer  *server,
                       const char *version)
{
  /* The versions are dates: they compare as strings. */
  return server->protocol_version != NULL && g_strcmp0 (server->protocol_version, version) >= 0;
}

/* ---- lifecycle ---- */

static void
handle_initialize (McpServer  *server,
                   JsonNode   *id,
                   JsonObject *params)
{
  const char *asked = json_object_get_string_member_with_default (params, "protocolVersion", NULL);
  JsonNode *capabilities = json_object_get_member (params, "capabilities");
  g_autoptr(JsonObject) result = json_object_new ();
  JsonObject *server_capabilities = json_object_new ();
  JsonObject *tools = json_object_new ();
  JsonObject *resources = json_object_new ();
  JsonObject *info = json_object_new ();

  if (asked == NULL)
    {
      mcp_send_error (server, id, MCP_INVALID_PARAMS, "initialize: “protocolVersion” must be a string");
      return;
    }
  g_free (server->protocol_version);
  server->protocol_version = g_strdup (g_strv_contains (protocol_versions, asked) ? asked : protocol_versions[0]);
  server->client_elicitation = capabilities != NULL && JSON_NODE_HOLDS_OBJECT (capabilities) &&
                               json_object_has_member (json_node_get_object (capabilities), "elicitation");

  json_object_set_boolean_member (tools, "listChanged", TRUE);
  json_object_set_object_member (server_capabilities, "tools", tools);
  json_object_set_boolean_member (resources, "listChanged", TRUE);
  json_object_set_boolean_member (resources, "subscribe", FALSE);
  json_object_set_object_member (server_capabilities, "resources", resources);
  json_object_set_string_member (info, "name", "subagentctl");
  json_object_set_string_member (info, "title", "libsubagent delegation");
  json_object_set_string_member (info, "version", PACKAGE_VERSION);
  json_object_set_string_member (result, "protocolVersion", server->protocol_version);
  json_object_set_object_member (result, "capabilities", server_capabilities);
  json_object_set_object_member (result, "serverInfo", info);
  json_object_set_string_member (result, "instructions",
                                 "Delegate tasks to isolated subagents: `subagent` runs one child, "
                                 "`subagent_<name>` a defined one, `subagent_batch` several in parallel, "
                                 "`team` a team of .subagent/teams/. Each child works in its own workspace; "
                                 "what it changed comes back as a review patch (a subagent://reviews/ resource).");
  server->initialized = TRUE;
  g_printerr ("subagentctl mcp: client speaks %s%s; serving %s\n", asked,
              server->client_elicitation ? " with elicitation" : "", server->root);
  mcp_send_result (server, id, result);
}

static gboolean
on_shutdown_timeout (gpointer data)
{
  McpServer *server = data;

  server->shutdown_timeout = 0;
  g_printerr ("subagentctl mcp: children did not stop within %d s; exiting anyway\n", SHUTDOWN_GRACE_MS / 1000);
  g_main_loop_quit (server->loop);
  return G_SOURCE_REMOVE;
}

/* Quits once the client is gone and no call runs any more. */
void
mcp_maybe_finish (McpServer *server)
{
  if (server->closing && server->n_workers == 0)
    g_main_loop_quit (server->loop);
}

static void
begin_shutdown (McpServer  *server,
                const char *why)
{
  if (server->closing)
    return;
  server->closing = TRUE;
  g_printerr ("subagentctl mcp: %s; cancelling the children still running\n", why);
  mcp_tools_shutdown (server);
  server->shutdown_timeout = g_timeout_add (SHUTDOWN_GRACE_MS, on_shutdown_timeout, server);
  mcp_maybe_finish (server);
}

/* ---- input ---- */

static void
handle_response (McpServer  *server,
                 JsonNode   *id,
                 JsonObject *message)
{
  g_autofree char *key = mcp_id_key (id);
  McpReply *reply = NULL;
  gpointer stolen_key = NULL;
  JsonNode *result = json_object_get_member (message, "result");
  JsonNode *error = json_object_get_member (message, "error");

  if (!g_hash_table_steal_extended (server->replies, key, &stolen_key, (gpointer *) &reply))
    {
      g_printerr ("subagentctl mcp: ignoring a response to unknown request %s\n", key);
      return;
    }
  g_free (stolen_key);
  reply->func (server,
               result && JSON_NODE_HOLDS_OBJECT (result) ? json_node_get_object (result) : NULL,
               error && JSON_NODE_HOLDS_OBJECT (error) ? json_node_get_object (error) : NULL,
               reply->user_data);
  g_free (reply);
}

static void
handle_notification (McpServer  *server,
                     const char *method,
                     JsonObject *params)
{
  if (g_str_equal (method, "notifications/cancelled"))
    {
      JsonNode *request_id = params ? json_object_get_member (params, "requestId") : NULL;

      if (request_id != NULL && JSON_NODE_HOLDS_VALUE (request_id))
        mcp_tools_cancel (server, request_id,
                          json_object_get_string_member_with_default (params, "reason", NULL));
    }
  /* notifications/initialized, roots/list_changed, progress: nothing to do. */
}

static void
handle_request (McpServer  *server,
                JsonNode   *id,
                const char *method,
                JsonObject *params)
{
  if (g_str_equal (method, "initialize"))
    handle_initialize (server, id, params);
  else if (g_str_equal (method, "ping"))
    {
      g_autoptr(JsonObject) empty = json_object_new ();
      mcp_send_result (server, id, empty);
    }
  else if (!server->initialized)
    mcp_send_error (server, id, MCP_NOT_INITIALIZED, "The server is not initialized: send “initialize” first");
  else if (g_str_equal (method, "tools/list"))
    mcp_tools_list (server, id);
  else if (g_str_equal (method, "tools/call"))
    mcp_tools_call (server, id, params);
  else if (g_str_equal (method, "resources/list"))
    mcp_resources_list (server, id);
  else if (g_str_equal (method, "resources/templates/list"))
    mcp_resources_templates (server, id);
  else if (g_str_equal (method, "resources/read"))
    mcp_resources_read (server, id, params);
  else
    {
      g_autofree char *text = g_strdup_printf ("Method not found: %s", method);
      mcp_send_error (server, id, MCP_METHOD_NOT_FOUND, text);
    }
}

static gboolean
is_valid_id (JsonNode *id)
{
  GType type;

  if (id == NULL || !JSON_NODE_HOLDS_VALUE (id))
    return FALSE;
  type = json_node_get_value_type (id);
  return type == G_TYPE_STRING || type == G_TYPE_INT64;
}

static void
handle_line (McpServer  *server,
             const char *line)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  g_autoptr(GError) error = NULL;
  JsonNode *root, *id, *method_node, *params_node;
  JsonObject *message, *params = NULL;
  g_autoptr(JsonObject) empty = NULL;
  const char *method;

  if (*line == '\0')
    return;
  if (!json_parser_load_from_data (parser, line, -1, &error))
    {
      g_autofree char *text = g_strdup_printf ("Parse error: %s", error->message);
      mcp_send_error (server, NULL, MCP_PARSE_ERROR, text);
      return;
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      mcp_send_error (server, NULL, MCP_INVALID_REQUEST,
                      JSON_NODE_HOLDS_ARRAY (root) ? "Invalid Request: JSON-RPC batches are not supported"
                                                   : "Invalid Request: a message is a JSON object");
      return;
    }
  message = json_node_get_object (root);
  id = json_object_get_member (message, "id");
  if (id != NULL && JSON_NODE_HOLDS_NULL (id))
    id = NULL;
  if (g_strcmp0 (json_object_get_string_member_with_default (message, "jsonrpc", NULL), "2.0") != 0 ||
      (id != NULL && !is_valid_id (id)))
    {
      mcp_send_error (server, is_valid_id (id) ? id : NULL, MCP_INVALID_REQUEST,
                      "Invalid Request: need \"jsonrpc\": \"2.0\" and a string or integer id");
      return;
    }

  method_node = json_object_get_member (message, "method");
  if (method_node == NULL)
    {
      if (id != NULL && (json_object_has_member (message, "result") || json_object_has_member (message, "error")))
        handle_response (server, id, message);
      else
        mcp_send_error (server, id, MCP_INVALID_REQUEST, "Invalid Request: no “method”");
      return;
    }
  if (!JSON_NODE_HOLDS_VALUE (method_node) || json_node_get_value_type (method_node) != G_TYPE_STRING)
    {
      mcp_send_error (server, id, MCP_INVALID_REQUEST, "Invalid Request: “method” must be a string");
      return;
    }
  method = json_node_get_string (method_node);
  params_node = json_object_get_member (message, "params");
  if (params_node != NULL && JSON_NODE_HOLDS_OBJECT (params_node))
    params = json_node_get_object (params_node);
  else if (params_node != NULL && !JSON_NODE_HOLDS_NULL (params_node))
    {
      if (id != NULL)
        mcp_send_error (server, id, MCP_INVALID_PARAMS, "Invalid params: “params” must be an object");
      return;
    }
  else
    params = empty = json_object_new ();

  if (id == NULL)
    handle_notification (server, method, params);
  else
    handle_request (server, id, method, params);
}

static void read_next (McpServer *server);

static void
on_line (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  McpServer *server = user_data;
  g_autoptr(GError) error = NULL;
  gsize length = 0;
  g_autofree char *line = g_data_input_stream_read_line_finish (G_DATA_INPUT_STREAM (source), result, &length, &error);

  if (line == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      if (error != NULL)
        g_printerr ("subagentctl mcp: cannot read stdin: %s\n", error->message);
      server->eof = TRUE;
      begin_shutdown (server, "the client closed stdin");
      return;
    }
  /* A line that is not UTF-8 (or holds a NUL) is a parse error; the next
   * one may be fine. */
  if (!g_utf8_validate_len (line, length, NULL))
    mcp_send_error (server, NULL, MCP_PARSE_ERROR, "Parse error: the line is not valid UTF-8");
  else
    {
      g_strchomp (line);
      handle_line (server, line);
    }
  if (!server->closing)
    read_next (server);
}

static void
read_next (McpServer *server)
{
  g_data_input_stream_read_line_async (server->lines, G_PRIORITY_DEFAULT, server->reading, on_line, server);
}

static gboolean
on_signal (gpointer data)
{
  McpServer *server = data;

  if (server->closing)
    g_main_loop_quit (server->loop);
  else
    begin_shutdown (server, "interrupted");
  return G_SOURCE_CONTINUE;
}

static void
reply_free (McpReply *reply)
{
  /* The client never answered: tell the waiter, so it can clean up. */
  reply->func (NULL, NULL, NULL, reply->user_data);
  g_free (reply);
}

/* Keeps fd 1 for the protocol and points fd 1 at stderr for everybody else. */
static int
take_stdout (void)
{
  int fd = fcntl (STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);

  if (fd < 0)
    return -1;
  if (dup2 (STDERR_FILENO, STDOUT_FILENO) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

int
sactl_cmd_mcp (int    argc,
               char **argv)
{
  g_autofree char *root_option = NULL;
  gboolean interactive = FALSE;
  const GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &root_option, "Workspace root (default: current directory)", "DIR" },
    { "interactive", 0, 0, G_OPTION_ARG_NONE, &interactive,
      "Children speak the approval protocol: their stdin stays open for verdicts (docs/child-protocol.md)", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("— serve the delegation tools over MCP (stdio)");
  g_autoptr(GError) error = NULL;
  g_autoptr(GInputStream) in = NULL;
  McpServer server = { NULL, };
  guint sigint_id, sigterm_id;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_description (context,
                                    "Speaks the Model Context Protocol on stdin/stdout, one JSON-RPC message "
                                    "per line; logs go to stderr. See docs/mcp.md.");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return sactl_fail (error);
  if (argc > 1)
    return sactl_fail_message ("mcp: unexpected argument “%s”", argv[1]);

  g_log_writer_default_set_use_stderr (TRUE);
  if ((server.root = sactl_resolve_root (root_option, &error)) == NULL)
    return sactl_fail (error);
  if ((server.out_fd = take_stdout ()) < 0)
    {
      g_free (server.root);
      return sactl_fail_message ("mcp: cannot set up stdout: %s", g_strerror (errno));
    }

  server.interactive = interactive;
  server.loop = g_main_loop_new (NULL, FALSE);
  server.replies = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) reply_free);
  server.calls = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) mcp_call_free);
  server.elicitations = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  server.monitors = g_ptr_array_new_with_free_func (g_object_unref);
  if (!mcp_tools_init (&server, &error))
    {
      int code = sactl_fail (error);
      mcp_tools_shutdown (&server);
      g_clear_pointer (&server.calls, g_hash_table_unref);
      g_clear_pointer (&server.replies, g_hash_table_unref);
      g_clear_pointer (&server.elicitations, g_hash_table_unref);
      g_clear_pointer (&server.monitors, g_ptr_array_unref);
      g_main_loop_unref (server.loop);
      close (server.out_fd);
      g_free (server.root);
      return code;
    }
  mcp_approvals_init (&server);

  in = g_unix_input_stream_new (STDIN_FILENO, FALSE);
  server.lines = g_data_input_stream_new (in);
  g_data_input_stream_set_newline_type (server.lines, G_DATA_STREAM_NEWLINE_TYPE_LF);
  server.reading = g_cancellable_new ();
  sigint_id = g_unix_signal_add (SIGINT, on_signal, &server);
  sigterm_id = g_unix_signal_add (SIGTERM, on_signal, &server);
  read_next (&server);
  g_main_loop_run (server.loop);

  /* Children are gone (or given up on); let go of everything, which also
   * makes the managers' session logs durable. */
  g_source_remove (sigint_id);
  g_source_remove (sigterm_id);
  g_cancellable_cancel (server.reading);
  if (server.shutdown_timeout != 0)
    g_source_remove (server.shutdown_timeout);
  if (server.reload_id != 0)
    g_source_remove (server.reload_id);
  mcp_approvals_shutdown (&server);
  g_hash_table_remove_all (server.replies);
  mcp_tools_shutdown (&server);
  /* Calls still running (after the grace period) keep their data. */
  if (server.n_workers == 0)
    g_hash_table_unref (server.calls);
  g_hash_table_unref (server.replies);
  g_hash_table_unref (server.elicitations);
  g_ptr_array_unref (server.monitors);
  g_clear_object (&server.lines);
  g_clear_object (&server.reading);
  g_clear_object (&server.queue);
  g_clear_object (&server.manager);
  g_clear_object (&server.runner);
  g_free (server.tools_fingerprint);
  g_free (server.protocol_version);
  g_free (server.root);
  /* Let pending idle work (the events writer, the session log) settle. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_main_loop_unref (server.loop);
  close (server.out_fd);
  g_printerr ("subagentctl mcp: bye\n");
  return server.n_workers == 0 ? 0 : 1;
}
