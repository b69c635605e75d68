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
#define TEXT_SHOWN 2000

typedef enum {
  KIND_SINGLE,
  KIND_BATCH,
  KIND_TEAM,
} CallKind;

struct _McpCall
{
  McpServer *server;
  char *key;
  JsonNode *id;
  char *tool_name;
  CallKind kind;
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

/* ---- output schemas ---- */

static JsonObject *
typed (const char *type)
{
  JsonObject *object = json_object_new ();

  json_object_set_string_member (object, "type", type);
  return object;
}

static JsonObject *
nullable (const char *type)
{
  JsonObject *object = json_object_new ();
  JsonArray *types = json_array_new ();

  json_array_add_string_element (types, type);
  json_array_add_string_element (types, "null");
  json_object_set_array_member (object, "type", types);
  return object;
}

static JsonObject *
required (JsonObject         *schema,
          const char * const *names)
{
  JsonArray *array = json_array_new ();

  for (guint i = 0; names[i] != NULL; i++)
    json_array_add_string_element (array, names[i]);
  json_object_set_array_member (schema, "required", array);
  return schema;
}

/* Reference 001's run result, plus the review's resource URI. */
static JsonObject *
result_schema (const char *extra,
               const char *extra_type)
{
  JsonObject *schema = typed ("object");
  JsonObject *properties = json_object_new ();
  JsonObject *review = nullable ("object");
  JsonObject *review_properties = json_object_new ();
  JsonObject *status = typed ("string");

  json_object_set_string_member (status, "description",
                                 "complete, partial, cancelled, failed or error");
  json_object_set_object_member (properties, "run_id", typed ("string"));
  json_object_set_object_member (properties, "status", status);
  json_object_set_object_member (properties, "iterations", typed ("integer"));
  json_object_set_object_member (properties, "tool_calls", typed ("integer"));
  json_object_set_object_member (properties, "cost_cents", typed ("number"));
  json_object_set_object_member (properties, "final_answer", typed ("string"));
  json_object_set_object_member (properties, "lineage", nullable ("object"));
  json_object_set_object_member (review_properties, "patch_path", typed ("string"));
  json_object_set_object_member (review_properties, "patch_uri", typed ("string"));
  json_object_set_object_member (review_properties, "files_changed", typed ("integer"));
  json_object_set_object_member (review, "properties", review_properties);
  json_object_set_object_member (properties, "review", review);
  json_object_set_object_member (properties, "message", typed ("string"));
  json_object_set_object_member (properties, "session_id", typed ("string"));
  json_object_set_object_member (properties, "reason", typed ("string"));
  if (extra != NULL)
    json_object_set_object_member (properties, extra, typed (extra_type));
  json_object_set_object_member (schema, "properties", properties);
  return required (schema, (const char * const []) { "run_id", "status", "final_answer", NULL });
}

static JsonObject *
output_schema (CallKind kind)
{
  JsonObject *schema, *properties, *items;

  switch (kind)
    {
    case KIND_SINGLE:
      return result_schema (NULL, NULL);
    case KIND_BATCH:
      schema = typed ("object");
      properties = json_object_new ();
      items = typed ("array");
      json_object_set_object_member (items, "items", required (result_schema ("batch_index", "integer"),
                                                               (const char * const []) { "run_id", "status",
                                                                                         "final_answer",
                                                                                         "batch_index", NULL }));
      json_object_set_object_member (properties, "results", items);
      json_object_set_object_member (schema, "properties", properties);
      return required (schema, (const char * const []) { "results", NULL });
    case KIND_TEAM:
    default:
      schema = typed ("object");
      properties = json_object_new ();
      items = typed ("array");
      json_object_set_object_member (items, "items", result_schema ("member", "string"));
      json_object_set_object_member (properties, "team", typed ("string"));
      json_object_set_object_member (properties, "output", typed ("string"));
      json_object_set_object_member (properties, "members", items);
      json_object_set_object_member (properties, "aggregator", result_schema (NULL, NULL));
      json_object_set_object_member (schema, "properties", properties);
      return required (schema, (const char * const []) { "team", "output", "members", NULL });
    }
}

static CallKind
kind_of (const char *tool_name)
{
  if (g_str_equal (tool_name, SUBAGENT_TOOL_SUBAGENT_BATCH))
    return KIND_BATCH;
  if (g_str_equal (tool_name, SUBAGENT_TOOL_TEAM))
    return KIND_TEAM;
  return KIND_SINGLE;
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
        json_object_set_object_member (object, "outputSchema", output_schema (kind_of (subagent_tool_get_name (tool))));
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

static void
progress (McpCall    *call,
          const char *message)
{
  g_autoptr(JsonObject) params = NULL;

  if (call->progress_token == NULL || call->cancelled || call->server->closing)
    return;
  params = json_object_new ();
  call->progress += 1;
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
    default:
      /* Queued, workspace and approval steps: on stderr only, so that the
       * progress total (three steps per child) holds. */
      g_printerr ("subagentctl mcp: %s %s\n", subagent_event_kind_to_string (subagent_event_get_kind (event)), child);
      return;
    }
  progress (call, message);
}

/* ---- results ---- */

char *
mcp_review_uri (const char *patch_path)
{
  g_autofree char *base = patch_path ? g_path_get_basename (patch_path) : NULL;

  if (base == NULL || !g_str_has_suffix (base, ".patch"))
    return NULL;
  return g_strconcat ("subagent://reviews/", base, NULL);
}

/* Reference 001's result of one child, with the review's URI; a link to
 * its patch goes into @content. */
static JsonObject *
child_result (McpCall    *call,
              const char *run_id,
              JsonArray  *content)
{
  g_autoptr(SubagentRunResult) result = subagent_supervisor_lookup_result (call->supervisor, run_id);
  JsonObject *object;
  JsonNode *review;

  if (result == NULL)
    return NULL;
  object = subagent_run_result_to_json (result);
  json_object_set_string_member (object, "session_id", run_id);
  if (subagent_run_result_get_status (result) != SUBAGENT_RUN_STATUS_COMPLETE)
    {
      g_autofree char *reason = subagent_run_result_dup_reason (result);

      if (reason != NULL)
        json_object_set_string_member (object, "reason", reason);
    }
  review = json_object_get_member (object, "review");
  if (review != NULL && JSON_NODE_HOLDS_OBJECT (review))
    {
      JsonObject *review_object = json_node_get_object (review);
      const char *patch_path = json_object_get_string_member_with_default (review_object, "patch_path", NULL);
      g_autofree char *uri = mcp_review_uri (patch_path);

      if (uri != NULL)
        {
          JsonObject *link = json_object_new ();
          g_autofree char *description = g_strdup_printf ("What subagent %s changed in its workspace (%" G_GINT64_FORMAT
                                                          " files); apply it with git apply",
                                                          run_id,
                                                          json_object_get_int_member_with_default (review_object,
                                                                                                   "files_changed", 0));
          g_autofree char *name = g_path_get_basename (patch_path);

          json_object_set_string_member (review_object, "patch_uri", uri);
          if (mcp_protocol_at_least (call->server, "2025-06-18"))
            {
              json_object_set_string_member (link, "type", "resource_link");
              json_object_set_string_member (link, "uri", uri);
              json_object_set_string_member (link, "name", name);
              json_object_set_string_member (link, "mimeType", "text/x-diff");
              json_object_set_string_member (link, "description", description);
            }
          else
            {
              /* Older clients know no links: embed the patch. */
              JsonObject *resource = json_object_new ();
              g_autofree char *text = NULL;

              g_file_get_contents (patch_path, &text, NULL, NULL);
              json_object_set_string_member (resource, "uri", uri);
              json_object_set_string_member (resource, "mimeType", "text/x-diff");
              json_object_set_string_member (resource, "text", text ? text : "");
              json_object_set_string_member (link, "type", "resource");
              json_object_set_object_member (link, "resource", resource);
            }
          json_array_add_object_element (content, link);
        }
    }
  return object;
}

static void
add_text (JsonArray  *content,
          const char *text)
{
  JsonObject *item = json_object_new ();

  json_object_set_string_member (item, "type", "text");
  if (g_utf8_strlen (text, -1) > TEXT_SHOWN)
    {
      g_autofree char *cut = g_utf8_substring (text, 0, TEXT_SHOWN);
      g_autofree char *shown = g_strconcat (cut, "… (cut; the whole answer is in the structured result)", NULL);

      json_object_set_string_member (item, "text", shown);
    }
  else
    json_object_set_string_member (item, "text", text);
  json_array_add_object_element (content, item);
}

static void
summarize (GString    *text,
           JsonObject *entry,
           const char *label)
{
  const char *answer = json_object_get_string_member_with_default (entry, "final_answer", "");
  const char *reason = json_object_get_string_member_with_default (entry, "reason", NULL);

  g_string_append_printf (text, "%s%s — %s (session %s)", text->len ? "\n" : "", label,
                          json_object_get_string_member_with_default (entry, "status", "?"),
                          json_object_get_string_member_with_default (entry, "session_id", "?"));
  if (reason != NULL)
    g_string_append_printf (text, ": %s", reason);
  if (*answer != '\0')
    g_string_append_printf (text, "\n%s", answer);
}

static gint
batch_index_of (McpCall    *call,
                const char *run_id)
{
  return GPOINTER_TO_INT (g_hash_table_lookup (call->batch_indexes, run_id)) - 1;
}

/* The children of a batch or team, by batch index. */
static JsonArray *
items_json (McpCall   *call,
            JsonArray *content,
            GString   *text)
{
  JsonArray *items = json_array_new ();
  g_autoptr(GPtrArray) ordered = g_ptr_array_new ();
  JsonArray *members = NULL;

  if (call->kind == KIND_TEAM && call->output != NULL && JSON_NODE_HOLDS_OBJECT (call->output) &&
      json_object_has_member (json_node_get_object (call->output), "members"))
    members = json_object_get_array_member (json_node_get_object (call->output), "members");
  for (guint i = 0; i < call->run_ids->len; i++)
    {
      gint index = batch_index_of (call, call->run_ids->pdata[i]);

      if (index < 0)
        continue;
      if ((guint) index >= ordered->len)
        g_ptr_array_set_size (ordered, index + 1);
      ordered->pdata[index] = call->run_ids->pdata[i];
    }
  for (guint i = 0; i < ordered->len; i++)
    {
      JsonObject *entry = ordered->pdata[i] ? child_result (call, ordered->pdata[i], content) : NULL;
      g_autofree char *label = NULL;

      if (entry == NULL)
        continue;
      if (call->kind == KIND_BATCH)
        {
          json_object_set_int_member (entry, "batch_index", i);
          label = g_strdup_printf ("#%u", i);
        }
      else
        {
          const char *member = "";

          if (members != NULL && i < json_array_get_length (members))
            member = json_object_get_string_member_with_default (json_array_get_object_element (members, i),
                                                                 "member", "");
          json_object_set_string_member (entry, "member", member);
          label = g_strdup (member);
        }
      summarize (text, entry, label);
      json_array_add_object_element (items, entry);
    }
  return items;
}

static JsonObject *
call_result (McpCall *call)
{
  JsonObject *result = json_object_new ();
  JsonArray *content = json_array_new ();
  g_autoptr(JsonObject) structured = NULL;
  g_autoptr(GString) text = g_string_new (NULL);
  gboolean is_error = call->error != NULL;

  if (call->kind == KIND_SINGLE)
    {
      const char *run_id = call->run_ids->len > 0 ? call->run_ids->pdata[0] : NULL;

      structured = run_id ? child_result (call, run_id, content) : NULL;
      if (is_error)
        {
          g_string_append (text, call->error->message);
          /* A failed child is always named by its session. */
          if (run_id != NULL && strstr (text->str, run_id) == NULL)
            g_string_append_printf (text, " (session %s)", run_id);
        }
      else if (structured != NULL)
        summarize (text, structured, "subagent");
    }
  else if (call->kind == KIND_BATCH)
    {
      if (call->error == NULL)
        {
          structured = json_object_new ();
          json_object_set_array_member (structured, "results", items_json (call, content, text));
        }
      else
        g_string_append (text, call->error->message);
    }
  else
    {
      JsonObject *output = call->output && JSON_NODE_HOLDS_OBJECT (call->output) ? json_node_get_object (call->output) : NULL;

      if (output != NULL)
        {
          g_autoptr(GString) members_text = g_string_new (NULL);

          structured = json_object_new ();
          json_object_set_string_member (structured, "team",
                                         json_object_get_string_member_with_default (output, "team", ""));
          json_object_set_string_member (structured, "output",
                                         json_object_get_string_member_with_default (output, "output", ""));
          json_object_set_array_member (structured, "members", items_json (call, content, members_text));
          for (guint i = 0; i < call->run_ids->len; i++)
            if (batch_index_of (call, call->run_ids->pdata[i]) < 0)
              {
                JsonObject *aggregate = child_result (call, call->run_ids->pdata[i], content);

                if (aggregate != NULL)
                  json_object_set_object_member (structured, "aggregator", aggregate);
              }
          g_string_append (text, json_object_get_string_member (structured, "output"));
        }
      else
        g_string_append (text, call->error ? call->error->message : "the team gave no answer");
    }

  /* The text first, then the links. */
  {
    JsonArray *ordered = json_array_new ();

    add_text (ordered, text->len ? text->str : "(no answer)");
    for (guint i = 0; i < json_array_get_length (content); i++)
      json_array_add_element (ordered, json_node_copy (json_array_get_element (content, i)));
    json_array_unref (content);
    content = ordered;
  }
  json_object_set_array_member (result, "content", content);
  if (structured != NULL && mcp_protocol_at_least (call->server, "2025-06-18"))
    json_object_set_object_member (result, "structuredContent", json_object_ref (structured));
  json_object_set_boolean_member (result, "isError", is_error);
  return result;
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
      g_autoptr(JsonObject) result = call_result (call);

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

  add_text (content, message);
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
  call->kind = kind_of (name);
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
  if (call->kind == KIND_SINGLE)
    call->total = 3;
  else if (call->kind == KIND_BATCH)
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
