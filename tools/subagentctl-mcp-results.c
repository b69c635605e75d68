/* subagentctl-mcp-results.c: what a tools/call of `subagentctl mcp`
 * answers: the output schemas of the tools, and the result of a call —
 * reference 001's run result per child as structured content, a short
 * text, and links to the review patches.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "subagentctl-mcp.h"

#define TEXT_SHOWN 2000

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

JsonObject *
mcp_output_schema (McpCallKind kind)
{
  JsonObject *schema, *properties, *items;

  switch (kind)
    {
    case MCP_KIND_SINGLE:
      return result_schema (NULL, NULL);
    case MCP_KIND_BATCH:
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
    case MCP_KIND_TEAM:
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

McpCallKind
mcp_call_kind (const char *tool_name)
{
  if (g_str_equal (tool_name, SUBAGENT_TOOL_SUBAGENT_BATCH))
    return MCP_KIND_BATCH;
  if (g_str_equal (tool_name, SUBAGENT_TOOL_TEAM))
    return MCP_KIND_TEAM;
  return MCP_KIND_SINGLE;
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

void
mcp_add_text (JsonArray  *content,
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

  if (call->kind == MCP_KIND_TEAM && call->output != NULL && JSON_NODE_HOLDS_OBJECT (call->output) &&
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
      if (call->kind == MCP_KIND_BATCH)
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

JsonObject *
mcp_call_result (McpCall *call)
{
  JsonObject *result = json_object_new ();
  JsonArray *content = json_array_new ();
  g_autoptr(JsonObject) structured = NULL;
  g_autoptr(GString) text = g_string_new (NULL);
  gboolean is_error = call->error != NULL;

  if (call->kind == MCP_KIND_SINGLE)
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
  else if (call->kind == MCP_KIND_BATCH)
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

    mcp_add_text (ordered, text->len ? text->str : "(no answer)");
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

