/* subagentctl-mcp-approvals.c: the approval requests of the children of an
 * MCP session.
 *
 * They go to the parent run's queue (config.yaml's `approvals.sink`, the
 * file queue by default) whatever the client is, so that `subagentctl
 * approvals` in another terminal can always answer them; stderr says how.
 * When the client declared the `elicitation` capability, each request is
 * also put to the client's user as an `elicitation/create` (tool,
 * arguments, child, isolation; approve or deny, with a reason), and the
 * answer goes to the queue like any other verdict: the first verdict wins
 * (a form still open when another verdict came is withdrawn with
 * notifications/cancelled).
 *
 * The queue emits its signals on whatever thread changed it; they are
 * forwarded to the main context, where everything here runs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>

#include "subagentctl-mcp.h"

#define ARGUMENTS_SHOWN 400

typedef struct {
  McpServer *server;
  SubagentApprovalRequest *request;
  gboolean resolved;
} Forward;

typedef struct {
  SubagentApprovalQueue *queue;
  char *request_id;
  gboolean approve;
  char *reason;
  char *by;
} Verdict;

static void
verdict_free (Verdict *verdict)
{
  g_object_unref (verdict->queue);
  g_free (verdict->request_id);
  g_free (verdict->reason);
  g_free (verdict->by);
  g_free (verdict);
}

/* In a thread: the store may block. */
static gpointer
verdict_thread (gpointer data)
{
  Verdict *verdict = data;
  g_autoptr(GError) error = NULL;

  if (!subagent_approval_queue_resolve (verdict->queue, verdict->request_id,
                                        verdict->approve ? SUBAGENT_APPROVAL_STATUS_APPROVED
                                                         : SUBAGENT_APPROVAL_STATUS_DENIED,
                                        verdict->approve ? NULL : verdict->reason, verdict->by, &error))
    {
      if (g_error_matches (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_NOT_PENDING))
        g_printerr ("subagentctl mcp: approval request %s was answered elsewhere first\n", verdict->request_id);
      else
        g_printerr ("subagentctl mcp: cannot answer approval request %s: %s\n", verdict->request_id, error->message);
    }
  verdict_free (verdict);
  return NULL;
}

static void
give_verdict (McpServer  *server,
              const char *request_id,
              gboolean    approve,
              const char *reason)
{
  Verdict *verdict = g_new0 (Verdict, 1);

  verdict->queue = g_object_ref (server->queue);
  verdict->request_id = g_strdup (request_id);
  verdict->approve = approve;
  verdict->reason = g_strdup (reason && *reason ? reason : "Denied by the MCP client's user");
  verdict->by = g_strdup ("mcp-client");
  g_thread_unref (g_thread_new ("mcp-verdict", verdict_thread, verdict));
}

static char *
describe_arguments (SubagentApprovalRequest *request)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *arguments = NULL;

  json_node_set_object (node, subagent_approval_request_get_tool_arguments (request));
  arguments = json_to_string (node, FALSE);
  if (g_utf8_strlen (arguments, -1) > ARGUMENTS_SHOWN)
    {
      g_autofree char *cut = g_utf8_substring (arguments, 0, ARGUMENTS_SHOWN);
      g_free (arguments);
      arguments = g_strconcat (cut, "…", NULL);
    }
  return g_steal_pointer (&arguments);
}

typedef struct {
  McpServer *server;
  char *request_id;
} Asked;

static void
on_elicitation_reply (McpServer  *server,
                      JsonObject *result,
                      JsonObject *error,
                      gpointer    user_data)
{
  Asked *asked = user_data;
  server = asked->server;

  g_hash_table_remove (server->elicitations, asked->request_id);
  if (result != NULL && !server->closing)
    {
      const char *action = json_object_get_string_member_with_default (result, "action", "cancel");
      JsonNode *content_node = json_object_get_member (result, "content");
      JsonObject *content = content_node && JSON_NODE_HOLDS_OBJECT (content_node) ? json_node_get_object (content_node) : NULL;
      const char *decision = content ? json_object_get_string_member_with_default (content, "decision", "deny") : "deny";
      const char *reason = content ? json_object_get_string_member_with_default (content, "reason", NULL) : NULL;
      g_autofree char *declined = NULL;

      if (g_str_equal (action, "accept") && g_str_equal (decision, "approve"))
        give_verdict (server, asked->request_id, TRUE, NULL);
      else
        {
          if (!g_str_equal (action, "accept"))
            reason = declined = g_strdup_printf ("The MCP client's user %s the request",
                                                 g_str_equal (action, "decline") ? "declined" : "dismissed");
          give_verdict (server, asked->request_id, FALSE, reason);
        }
    }
  else if (error != NULL)
    g_printerr ("subagentctl mcp: the client could not ask about approval request %s (%s); "
                "it waits in the queue\n", asked->request_id,
                json_object_get_string_member_with_default (error, "message", "error"));
  g_free (asked->request_id);
  g_free (asked);
}

static void
elicit (McpServer               *server,
        SubagentApprovalRequest *request)
{
  g_autoptr(JsonObject) params = json_object_new ();
  JsonObject *schema = json_object_new ();
  JsonObject *properties = json_object_new ();
  JsonObject *decision = json_object_new ();
  JsonObject *reason = json_object_new ();
  JsonArray *choices = json_array_new ();
  JsonArray *names = json_array_new ();
  JsonArray *required = json_array_new ();
  g_autofree char *arguments = describe_arguments (request);
  g_autofree char *message = NULL;
  const char *worktree = subagent_approval_request_get_worktree_path (request);
  Asked *asked;

  message = g_strdup_printf ("Subagent “%s” (session %s, %s isolation%s%s) asks to run the tool “%s” "
                             "with the arguments %s. Approve or deny it.",
                             subagent_approval_request_get_subagent_name (request),
                             subagent_approval_request_get_subagent_id (request),
                             subagent_approval_request_get_isolation (request),
                             worktree && *worktree ? " in " : "", worktree && *worktree ? worktree : "",
                             subagent_approval_request_get_tool_name (request), arguments);

  json_object_set_string_member (decision, "type", "string");
  json_object_set_string_member (decision, "title", "Decision");
  json_object_set_string_member (decision, "description", "Whether the subagent may make this call");
  json_array_add_string_element (choices, "approve");
  json_array_add_string_element (choices, "deny");
  json_object_set_array_member (decision, "enum", choices);
  json_array_add_string_element (names, "Approve");
  json_array_add_string_element (names, "Deny");
  json_object_set_array_member (decision, "enumNames", names);
  json_object_set_string_member (reason, "type", "string");
  json_object_set_string_member (reason, "title", "Reason");
  json_object_set_string_member (reason, "description", "Why (the subagent reads it when denied)");
  json_object_set_object_member (properties, "decision", decision);
  json_object_set_object_member (properties, "reason", reason);
  json_object_set_string_member (schema, "type", "object");
  json_object_set_object_member (schema, "properties", properties);
  json_array_add_string_element (required, "decision");
  json_object_set_array_member (schema, "required", required);
  json_object_set_string_member (params, "message", message);
  json_object_set_object_member (params, "requestedSchema", schema);

  asked = g_new0 (Asked, 1);
  asked->server = server;
  asked->request_id = g_strdup (subagent_approval_request_get_request_id (request));
  g_hash_table_replace (server->elicitations, g_strdup (asked->request_id),
                        g_memdup2 (&(gint64) { mcp_send_request (server, "elicitation/create", params,
                                                                 on_elicitation_reply, asked) },
                                   sizeof (gint64)));
}

/* Answered elsewhere (the approvals CLI, a timeout, the child ended) while
 * the client's form is open: withdraw the form. */
static void
withdraw (McpServer               *server,
          SubagentApprovalRequest *request)
{
  const char *id = subagent_approval_request_get_request_id (request);
  gint64 *rpc_id = g_hash_table_lookup (server->elicitations, id);
  g_autoptr(JsonObject) params = NULL;
  g_autoptr(JsonNode) id_node = NULL;
  g_autofree char *key = NULL;
  g_autofree char *reason = NULL;

  if (rpc_id == NULL)
    return;
  params = json_object_new ();
  reason = g_strdup_printf ("approval request %s was answered elsewhere: %s", id,
                            subagent_approval_status_to_string (subagent_approval_request_get_status (request)));
  json_object_set_int_member (params, "requestId", *rpc_id);
  json_object_set_string_member (params, "reason", reason);
  mcp_send_notification (server, "notifications/cancelled", params);
  id_node = json_node_init_int (json_node_alloc (), *rpc_id);
  key = mcp_id_key (id_node);
  /* Its reply function drops the elicitation. */
  g_hash_table_remove (server->replies, key);
}

static gboolean
on_queue_event_main (gpointer data)
{
  Forward *forward = data;
  McpServer *server = forward->server;
  SubagentApprovalRequest *request = forward->request;
  const char *id = subagent_approval_request_get_request_id (request);
  g_autofree char *arguments = describe_arguments (request);
  g_autofree char *quoted_root = g_shell_quote (server->root);

  if (server->closing)
    return G_SOURCE_REMOVE;
  if (forward->resolved)
    {
      withdraw (server, request);
      return G_SOURCE_REMOVE;
    }
  if (subagent_approval_request_get_status (request) != SUBAGENT_APPROVAL_STATUS_PENDING)
    return G_SOURCE_REMOVE;
  g_printerr ("subagentctl mcp: child “%s” (run %s) asks to run %s %s\n"
              "subagentctl mcp:   approval request %s; answer it %swith\n"
              "subagentctl mcp:     subagentctl approvals approve %s --root %s\n"
              "subagentctl mcp:     subagentctl approvals deny %s --reason TEXT --root %s\n",
              subagent_approval_request_get_subagent_name (request),
              subagent_approval_request_get_subagent_id (request),
              subagent_approval_request_get_tool_name (request), arguments,
              id, server->client_elicitation ? "in the MCP client, or " : "",
              id, quoted_root, id, quoted_root);
  if (server->client_elicitation)
    elicit (server, request);
  return G_SOURCE_REMOVE;
}

static void
forward_free (Forward *forward)
{
  g_object_unref (forward->request);
  g_free (forward);
}

static void
forward (McpServer               *server,
         SubagentApprovalRequest *request,
         gboolean                 resolved)
{
  Forward *forward = g_new0 (Forward, 1);

  forward->server = server;
  forward->request = g_object_ref (request);
  forward->resolved = resolved;
  g_idle_add_full (G_PRIORITY_DEFAULT, on_queue_event_main, forward, (GDestroyNotify) forward_free);
}

static void
on_request_added (SubagentApprovalQueue   *queue,
                  SubagentApprovalRequest *request,
                  McpServer               *server)
{
  forward (server, request, FALSE);
}

static void
on_request_resolved (SubagentApprovalQueue   *queue,
                     SubagentApprovalRequest *request,
                     McpServer               *server)
{
  forward (server, request, TRUE);
}

void
mcp_approvals_init (McpServer *server)
{
  g_autoptr(GError) error = NULL;

  server->queue = subagent_manager_dup_approval_queue (server->manager, &error);
  if (server->queue == NULL)
    {
      g_printerr ("subagentctl mcp: %s; children are unattended (what needs an approval is denied)\n",
                  error ? error->message : "approvals.sink is none");
      return;
    }
  server->queue_added_id = g_signal_connect (server->queue, "request-added", G_CALLBACK (on_request_added), server);
  server->queue_resolved_id = g_signal_connect (server->queue, "request-resolved", G_CALLBACK (on_request_resolved),
                                                server);
}

void
mcp_approvals_shutdown (McpServer *server)
{
  if (server->queue != NULL && server->queue_added_id != 0)
    g_signal_handler_disconnect (server->queue, server->queue_added_id);
  if (server->queue != NULL && server->queue_resolved_id != 0)
    g_signal_handler_disconnect (server->queue, server->queue_resolved_id);
  server->queue_added_id = server->queue_resolved_id = 0;
  /* Idle forwards still queued carry @server: run them now, while it lives
   * (closing is set, so they do nothing). */
  while (g_main_context_iteration (NULL, FALSE))
    ;
}
