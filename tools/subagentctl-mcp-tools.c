/* subagentctl-mcp-tools.c: the delegation tools of libsubagent as MCP tools
 * (`subagent`, `subagent_<name>`, `subagent_batch`, `team`), their calls,
 * progress and cancellation, and `tools/list_changed` when definitions
 * change.
 *
 * Each tools/call gets a supervisor of its own, over the session's manager:
 * its events are then that call's (progress), and cancelling that call is
 * subagent_supervisor_cancel_all() on it. The session-wide agent cap and
 * budget are kept here: a call's supervisor may start what the session has
 * left. The library's tool runs in a thread of the call's own, since it
 * blocks until the children end; its supervisor lives on the main context,
 * which the main loop owns, so the tool waits on a private one.
 *
 * When the definitions change, a new manager is made with the same run id,
 * runner and approval queue (a catalog is never reloaded in place: running
 * calls read theirs from other threads); running calls keep theirs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "subagentctl-mcp.h"

#define RELOAD_DELAY_MS 150

void
mcp_call_free (McpCall *call)
{
  if (call->supervisor != NULL && call->event_id != 0)
    g_signal_handler_disconnect (call->supervisor, call->event_id);
  g_free (call->key);
  g_clear_pointer (&call->id, json_node_unref);
  g_free (call->tool_name);
  g_clear_pointer (&call->arguments, json_object_unref);
  g_clear_pointer (&call->progress_token, json_node_unref);
  g_clear_object (&call->tool);
  g_clear_object (&call->supervisor);
  g_clear_object (&call->manager);
  g_clear_pointer (&call->run_ids, g_ptr_array_unref);
  g_clear_pointer (&call->batch_indexes, g_hash_table_unref);
  g_clear_pointer (&call->output, json_node_unref);
  g_clear_error (&call->error);
  g_free (call);
}

/* ---- the tool list ---- */

/* The library's tools for @manager, bound to @supervisor (or to a
 * throw-away one that writes no events, for listing). */
static GPtrArray *
tools_for (SubagentManager    *manager,
           SubagentSupervisor *supervisor)
{
  g_autoptr(SubagentSupervisor) lister = NULL;

  if (supervisor == NULL)
    supervisor = lister = g_object_new (SUBAGENT_TYPE_SUPERVISOR, "manager", manager, "events-path", "", NULL);
  return subagent_delegation_tools_new (supervisor);
}

static JsonArray *
tools_to_json (McpServer *server,
               GPtrArray *tools)
{
  JsonArray *array = json_array_new ();

  for (guint i = 0; i < tools->len; i++)
    {
      SubagentTool *tool = tools->pdata[i];
      JsonObject *object = json_object_new ();
      JsonObject *annotations = json_object_new ();
      JsonObject *schema = subagent_tool_get_input_schema (tool);

      json_object_set_string_member (object, "name", subagent_tool_get_name (tool));
      json_object_set_string_member (object, "description", subagent_tool_get_description (tool));
      json_object_set_object_member (object, "inputSchema", json_object_ref (schema));
      if (server == NULL || mcp_protocol_at_least (server, "2025-06-18"))
        json_object_set_object_member (object, "outputSchema", mcp_output_schema (mcp_call_kind (subagent_tool_get_name (tool))));
      /* Children change their own workspace, never the project: a review
       * patch says what they would change. */
      json_object_set_boolean_member (annotations, "readOnlyHint", FALSE);
      json_object_set_boolean_member (annotations, "destructiveHint", FALSE);
      json_object_set_boolean_member (annotations, "openWorldHint", TRUE);
      json_object_set_object_member (object, "annotations", annotations);
      json_array_add_object_element (array, object);
    }
  return array;
}

static char *
fingerprint (GPtrArray *tools)
{
  g_autoptr(JsonArray) array = tools_to_json (NULL, tools);
  g_autoptr(JsonNode) node = json_node_init_array (json_node_alloc (), array);

  return json_to_string (node, FALSE);
}

void
mcp_tools_list (McpServer *server,
                JsonNode  *id)
{
  g_autoptr(GPtrArray) tools = tools_for (server->manager, NULL);
  g_autoptr(JsonObject) result = json_object_new ();

  json_object_set_array_member (result, "tools", tools_to_json (server, tools));
  mcp_send_result (server, id, result);
}

/* ---- definitions that change ---- */

static gboolean
reload (gpointer data)
{
  McpServer *server = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(GPtrArray) tools = NULL;
  g_autofree char *print = NULL;

  server->reload_id = 0;
  manager = g_initable_new (SUBAGENT_TYPE_MANAGER, NULL, &error,
                            "root", server->root,
                            "run-id", subagent_manager_get_run_id (server->manager),
                            "runner", server->runner,
                            NULL);
  if (manager == NULL)
    {
      g_printerr ("subagentctl mcp: definitions changed but cannot be read: %s; keeping the old ones\n",
                  error->message);
      return G_SOURCE_REMOVE;
    }
  if (server->queue != NULL)
    subagent_manager_set_approval_queue (manager, server->queue);
  g_set_object (&server->manager, manager);

  tools = tools_for (manager, NULL);
  print = fingerprint (tools);
  if (g_strcmp0 (print, server->tools_fingerprint) == 0)
    return G_SOURCE_REMOVE;
  g_free (server->tools_fingerprint);
  server->tools_fingerprint = g_steal_pointer (&print);
  g_printerr ("subagentctl mcp: definitions changed: %u tools\n", tools->len);
  if (server->initialized && !server->closing)
    mcp_send_notification (server, "notifications/tools/list_changed", NULL);
  return G_SOURCE_REMOVE;
}

static void
on_definitions_changed (GFileMonitor      *monitor,
                        GFile             *file,
                        GFile             *other,
                        GFileMonitorEvent  event,
                        McpServer         *server)
{
  if (event == G_FILE_MONITOR_EVENT_ATTRIBUTE_CHANGED || event == G_FILE_MONITOR_EVENT_PRE_UNMOUNT)
    return;
  /* Editors write in bursts: read once it settled. */
  if (server->reload_id != 0)
    g_source_remove (server->reload_id);
  server->reload_id = g_timeout_add (RELOAD_DELAY_MS, reload, server);
}

static void
watch (McpServer  *server,
       const char *relative)
{
  g_autofree char *path = g_build_filename (server->root, relative, NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  GFileMonitor *monitor;

  /* GLib watches a folder that does not exist yet too (for its creation). */
  monitor = g_file_monitor_directory (file, G_FILE_MONITOR_WATCH_MOVES, NULL, &error);
  if (monitor == NULL)
    {
      g_printerr ("subagentctl mcp: cannot watch %s: %s; tools/list will not follow its changes\n",
                  path, error->message);
      return;
    }
  g_signal_connect (monitor, "changed", G_CALLBACK (on_definitions_changed), server);
  g_ptr_array_add (server->monitors, monitor);
}

gboolean
mcp_tools_init (McpServer  *server,
                GError    **error)
{
  g_autoptr(GPtrArray) tools = NULL;

  if ((server->manager = subagent_manager_new (server->root, error)) == NULL)
    return FALSE;
  server->runner = g_object_ref (subagent_manager_get_runner (server->manager));
  if (server->interactive && SUBAGENT_IS_COMMAND_RUNNER (server->runner))
    subagent_command_runner_set_interactive_stdin (SUBAGENT_COMMAND_RUNNER (server->runner), TRUE);
  tools = tools_for (server->manager, NULL);
  server->tools_fingerprint = fingerprint (tools);
  watch (server, ".subagent/agents");
  watch (server, ".claude/agents");
  return TRUE;
}

/* Cancels every call's children; the calls end on their own. */
void
mcp_tools_shutdown (McpServer *server)
{
  GHashTableIter iter;
  gpointer value;

  for (guint i = 0; server->monitors != NULL && i < server->monitors->len; i++)
    g_file_monitor_cancel (server->monitors->pdata[i]);
  if (server->calls == NULL)
    return;
  g_hash_table_iter_init (&iter, server->calls);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      McpCall *call = value;

      if (call->supervisor != NULL)
        subagent_supervisor_cancel_all (call->supervisor, SUBAGENT_CANCEL_CAUSE_SYSTEM);
    }
}

/* ---- progress ---- */

/* Each child takes three whole steps (accepted, started, finished); a usage
 * report in between moves half-way to the next whole step, so progress
 * always grows and never passes the total. */
static void
progress (McpCall    *call,
          gboolean    whole_step,
          const char *message)
{
  g_autoptr(JsonObject) params = NULL;
  double next;

  if (call->progress_token == NULL || call->cancelled || call->server->closing)
    return;
  next = (double) (gint64) call->progress + 1;  /* progress is never negative */
  if (!whole_step)
    next = call->progress + (next - call->progress) / 2;
  if (next - call->progress < 1e-9)
    return;  /* a child that reports usage very often: skip it */
  params = json_object_new ();
  call->progress = next;
  json_object_set_member (params, "progressToken", json_node_copy (call->progress_token));
  json_object_set_double_member (params, "progress", call->progress);
  if (call->total >= call->progress)
    json_object_set_double_member (params, "total", call->total);
  json_object_set_string_member (params, "message", message);
  mcp_send_notification (call->server, "notifications/progress", params);
}

static char *
describe_child (SubagentEvent *event)
{
  gint index = subagent_event_get_batch_index (event);

  if (index >= 0)
    return g_strdup_printf ("item %d (%s, run %s)", index, subagent_event_get_def_name (event),
                            subagent_event_get_run_id (event));
  return g_strdup_printf ("subagent %s (run %s)", subagent_event_get_def_name (event), subagent_event_get_run_id (event));
}

static void
on_event (SubagentSupervisor *supervisor,
          SubagentEvent      *event,
          McpCall            *call)
{
  JsonObject *details = subagent_event_get_details (event);
  const char *run_id = subagent_event_get_run_id (event);
  g_autofree char *child = describe_child (event);
  g_autofree char *message = NULL;

  switch (subagent_event_get_kind (event))
    {
    case SUBAGENT_EVENT_ACCEPTED:
      g_ptr_array_add (call->run_ids, g_strdup (run_id));
      g_hash_table_replace (call->batch_indexes, g_strdup (run_id),
                            GINT_TO_POINTER (subagent_event_get_batch_index (event) + 1));
      call->server->agents_started++;
      message = g_strdup_printf ("accepted %s", child);
      break;
    case SUBAGENT_EVENT_STARTED:
      message = g_strdup_printf ("started %s", child);
      break;
    case SUBAGENT_EVENT_COMPLETED:
    case SUBAGENT_EVENT_FAILED:
    case SUBAGENT_EVENT_CANCELLED:
      call->server->spent_cents += json_object_get_double_member_with_default (details, "cost_cents", 0);
      message = g_strdup_printf ("finished %s: %s; usage %" G_GINT64_FORMAT " iterations, %" G_GINT64_FORMAT
                                 " tool calls, %.2f cents%s%s",
                                 child, json_object_get_string_member_with_default (details, "status", "?"),
                                 json_object_get_int_member_with_default (details, "iterations", 0),
                                 json_object_get_int_member_with_default (details, "tool_calls", 0),
                                 json_object_get_double_member_with_default (details, "cost_cents", 0),
                                 json_object_has_member (details, "reason") ? "; " : "",
                                 json_object_get_string_member_with_default (details, "reason", ""));
      break;
    case SUBAGENT_EVENT_USAGE:
      message = g_strdup_printf ("usage of %s so far: %" G_GINT64_FORMAT " iterations, %" G_GINT64_FORMAT
                                 " tool calls, %.2f cents", child,
                                 json_object_get_int_member_with_default (details, "iterations", 0),
                                 json_object_get_int_member_with_default (details, "tool_calls", 0),
                                 json_object_get_double_member_with_default (details, "cost_cents", 0));
      progress (call, FALSE, message);
      return;
    default:
      /* Queued, workspace and approval steps: on stderr only, so that the
       * progress total (three steps per child) holds. */
      g_printerr ("subagentctl mcp: %s %s\n", subagent_event_kind_to_string (subagent_event_get_kind (event)), child);
      return;
    }
  progress (call, TRUE, message);
}

static gboolean call_done (gpointer data);

/* Clients built on the TypeScript SDK handle a notification a microtask
 * after the message that came with it, but a response at once: a response
 * in the same read as the last progress notification would overtake it
 * (and the notification be dropped as for an unknown token). A call that
 * sent progress answers a few milliseconds later. */
#define PROGRESS_SETTLE_MS 10

static gboolean
call_thread_done (gpointer data)
{
  McpCall *call = data;

  if (call->progress > 0 && !call->cancelled && !call->server->closing)
    g_timeout_add (PROGRESS_SETTLE_MS, call_done, call);
  else
    call_done (call);
  return G_SOURCE_REMOVE;
}

static gboolean
call_done (gpointer data)
{
  McpCall *call = data;
  McpServer *server = call->server;

  call->running = FALSE;
  server->n_workers--;
  if (call->error != NULL)
    g_printerr ("subagentctl mcp: %s: %s\n", call->tool_name, call->error->message);
  if (!call->cancelled && !server->closing)
    {
      g_autoptr(JsonObject) result = mcp_call_result (call);

      mcp_send_result (server, call->id, result);
      /* New sessions and reviews. */
      mcp_send_notification (server, "notifications/resources/list_changed", NULL);
    }
  g_hash_table_remove (server->calls, call->key);
  mcp_maybe_finish (server);
  return G_SOURCE_REMOVE;
}

static gpointer
call_thread (gpointer data)
{
  McpCall *call = data;

  call->output = subagent_tool_call (call->tool, call->arguments, NULL, &call->error);
  g_idle_add (call_thread_done, call);
  return NULL;
}

static void
refuse (McpServer  *server,
        JsonNode   *id,
        const char *message)
{
  g_autoptr(JsonObject) result = json_object_new ();
  JsonArray *content = json_array_new ();

  mcp_add_text (content, message);
  json_object_set_array_member (result, "content", content);
  json_object_set_boolean_member (result, "isError", TRUE);
  g_printerr ("subagentctl mcp: %s\n", message);
  mcp_send_result (server, id, result);
}

void
mcp_tools_call (McpServer  *server,
                JsonNode   *id,
                JsonObject *params)
{
  const char *name = json_object_get_string_member_with_default (params, "name", NULL);
  JsonNode *arguments = json_object_get_member (params, "arguments");
  JsonNode *meta = json_object_get_member (params, "_meta");
  SubagentConfig *config = subagent_manager_get_config (server->manager);
  guint max_agents = subagent_config_get_max_agents (config);
  double budget = subagent_config_get_max_cost_cents (config);
  g_autoptr(GPtrArray) tools = NULL;
  g_autofree char *key = mcp_id_key (id);
  McpCall *call;
  GThread *thread;

  if (name == NULL)
    {
      mcp_send_error (server, id, MCP_INVALID_PARAMS, "tools/call: “name” must be a string");
      return;
    }
  if (arguments != NULL && !JSON_NODE_HOLDS_OBJECT (arguments) && !JSON_NODE_HOLDS_NULL (arguments))
    {
      mcp_send_error (server, id, MCP_INVALID_PARAMS, "tools/call: “arguments” must be an object");
      return;
    }
  if (g_hash_table_contains (server->calls, key))
    {
      mcp_send_error (server, id, MCP_INVALID_REQUEST, "tools/call: a call with this id is still running");
      return;
    }

  /* What the session may still start and spend. */
  if (max_agents > 0 && server->agents_started >= max_agents)
    {
      g_autofree char *message = g_strdup_printf ("This MCP session already started %u subagents, its cap "
                                                  "(runner.max_agents); start a new session for more",
                                                  server->agents_started);
      refuse (server, id, message);
      return;
    }
  if (budget > 0 && server->spent_cents >= budget)
    {
      g_autofree char *message = g_strdup_printf ("This MCP session spent %.2f of its %.2f cents "
                                                  "(budget.max_cost_cents); no more subagents",
                                                  server->spent_cents, budget);
      refuse (server, id, message);
      return;
    }

  call = g_new0 (McpCall, 1);
  call->server = server;
  call->key = g_steal_pointer (&key);
  call->id = json_node_copy (id);
  call->tool_name = g_strdup (name);
  call->kind = mcp_call_kind (name);
  call->arguments = arguments && JSON_NODE_HOLDS_OBJECT (arguments)
                    ? json_object_ref (json_node_get_object (arguments)) : json_object_new ();
  if (meta != NULL && JSON_NODE_HOLDS_OBJECT (meta) &&
      json_object_has_member (json_node_get_object (meta), "progressToken"))
    call->progress_token = json_node_copy (json_object_get_member (json_node_get_object (meta), "progressToken"));
  call->manager = g_object_ref (server->manager);
  call->supervisor = g_object_new (SUBAGENT_TYPE_SUPERVISOR,
                                   "manager", call->manager,
                                   "max-agents", max_agents > 0 ? (gint) MIN (max_agents - server->agents_started, G_MAXINT) : 0,
                                   "max-cost-cents", budget > 0 ? budget - server->spent_cents : 0.0,
                                   NULL);
  call->run_ids = g_ptr_array_new_with_free_func (g_free);
  call->batch_indexes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  tools = tools_for (call->manager, call->supervisor);
  for (guint i = 0; i < tools->len && call->tool == NULL; i++)
    if (g_str_equal (subagent_tool_get_name (tools->pdata[i]), name))
      call->tool = g_object_ref (tools->pdata[i]);
  if (call->tool == NULL)
    {
      g_autofree char *message = g_strdup_printf ("Unknown tool: %s (tools/list has the tools)", name);

      mcp_call_free (call);
      mcp_send_error (server, id, MCP_INVALID_PARAMS, message);
      return;
    }

  /* Three steps per child (accepted, started, finished), when known. */
  if (call->kind == MCP_KIND_SINGLE)
    call->total = 3;
  else if (call->kind == MCP_KIND_BATCH)
    {
      JsonNode *tasks = json_object_get_member (call->arguments, "tasks");

      if (tasks != NULL && JSON_NODE_HOLDS_ARRAY (tasks))
        call->total = 3.0 * json_array_get_length (json_node_get_array (tasks));
    }
  call->event_id = g_signal_connect (call->supervisor, "event", G_CALLBACK (on_event), call);

  g_hash_table_insert (server->calls, g_strdup (call->key), call);
  call->running = TRUE;
  server->n_workers++;
  thread = g_thread_new ("mcp-tool-call", call_thread, call);
  g_thread_unref (thread);
}

void
mcp_tools_cancel (McpServer  *server,
                  JsonNode   *request_id,
                  const char *reason)
{
  g_autofree char *key = mcp_id_key (request_id);
  McpCall *call = g_hash_table_lookup (server->calls, key);
  guint n;

  if (call == NULL)
    return;  /* finished already, or never was: ignore, as the spec says */
  call->cancelled = TRUE;
  n = subagent_supervisor_cancel_all (call->supervisor, SUBAGENT_CANCEL_CAUSE_USER);
  g_printerr ("subagentctl mcp: call %s cancelled by the client%s%s: %u children stopping\n", key,
              reason ? ": " : "", reason ? reason : "", n);
}
