/* openai-loop.c: the agent loop of a model-backed child.
 *
 * Each model turn is an iteration; each tool call it asks for is a tool
 * call. The loop ends when the model answers without tool calls
 * (complete), or at a limit: max_iterations or max_tool_calls (max_turns,
 * partial), the cost budget (budget, partial), timeout_seconds (timeout),
 * cancellation (cancelled), or a server failure (error). The final answer
 * is the last assistant message of this run without tool calls.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "openai-private.h"

typedef struct {
  SubagentRunContext *context;
  GCancellable *stop;
  OpenaiWatchdog *watchdog;
  OpenaiClient *client;
  OpenaiToolEnv *env;
  SubagentToolRegistry *workspace;  /* the built-in tools the definition allows */
  SubagentToolRegistry *host;       /* the host's tools, narrowed for the child */
  SubagentApprovalHandler *approvals;
  JsonObject *model;
  JsonArray *messages;
  JsonArray *tools_json;
  char *tools_text;                 /* tools_json serialized, or NULL when empty */
  GString *sent;                    /* messages[0, n_sent) serialized for requests */
  guint n_sent;

  guint iterations;
  guint tool_calls;
  double cost_cents;
  guint turns_without_usage;
  char *final_answer;
  const char *stop_reason;
  char *message;
} Loop;

static void
loop_clear (Loop *loop)
{
  g_clear_object (&loop->approvals);
  g_clear_object (&loop->workspace);
  g_clear_object (&loop->host);
  g_clear_pointer (&loop->client, openai_client_free);
  g_clear_pointer (&loop->env, openai_tool_env_free);
  g_clear_pointer (&loop->watchdog, openai_watchdog_free);
  g_clear_object (&loop->stop);
  g_clear_pointer (&loop->messages, json_array_unref);
  g_clear_pointer (&loop->tools_json, json_array_unref);
  g_free (loop->tools_text);
  if (loop->sent != NULL)
    g_string_free (loop->sent, TRUE);
  g_free (loop->final_answer);
  g_free (loop->message);
}

char *
openai_truncate_for_model (const char *text,
                           gsize       cap)
{
  gsize length = strlen (text);
  const char *cut;

  if (length <= cap)
    return g_strdup (text);
  /* Cut at a character boundary at or before @cap bytes. */
  cut = text + cap;
  while (cut > text && ((guchar) *cut & 0xC0) == 0x80)
    cut--;
  return g_strdup_printf ("%.*s\n[result cut: %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " characters shown; "
                          "ask for less, such as a line range or a narrower pattern]",
                          (int) (cut - text), text, (gsize) (cut - text), length);
}

static JsonObject *
text_message (const char *role,
              const char *content)
{
  JsonObject *message = json_object_new ();

  json_object_set_string_member (message, "role", role);
  json_object_set_string_member (message, "content", content);
  return message;
}

/* What the model sees: the built-in tools the definition allows, and the
 * host's tools as the child's narrowed registry shows them (a host tool of
 * the same name takes the place of the built-in one). */
static void
build_tools (Loop *loop)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  SubagentToolRegistry *sources[2] = { loop->host, loop->workspace };

  loop->tools_json = json_array_new ();
  for (guint s = 0; s < G_N_ELEMENTS (sources); s++)
    {
      g_autoptr(GPtrArray) tools = NULL;

      if (sources[s] == NULL)
        continue;
      tools = subagent_tool_registry_list_tools (sources[s]);
      for (guint i = 0; i < tools->len; i++)
        {
          SubagentTool *tool = g_ptr_array_index (tools, i);
          JsonObject *entry, *function;
          JsonObject *schema = subagent_tool_get_input_schema (tool);

          if (!g_hash_table_add (seen, (gpointer) subagent_tool_get_name (tool)))
            continue;
          function = json_object_new ();
          json_object_set_string_member (function, "name", subagent_tool_get_name (tool));
          json_object_set_string_member (function, "description", subagent_tool_get_description (tool)
                                         ? subagent_tool_get_description (tool) : "");
          if (schema != NULL)
            {
              g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), schema);
              json_object_set_member (function, "parameters", json_node_copy (node));
            }
          else
            {
              JsonObject *empty = json_object_new ();
              json_object_set_string_member (empty, "type", "object");
              json_object_set_object_member (function, "parameters", empty);
            }
          entry = json_object_new ();
          json_object_set_string_member (entry, "type", "function");
          json_object_set_object_member (entry, "function", function);
          json_array_add_object_element (loop->tools_json, entry);
        }
    }
}

static void
append_json (GString  *out,
             JsonNode *node)
{
  g_autofree char *text = json_to_string (node, FALSE);

  g_string_append (out, text);
}

/* The request as JSON text. Messages never change once in the transcript,
 * so each is serialized once, when it is first sent: a turn costs what is
 * new, not the whole conversation again. */
static GBytes *
request_body (Loop *loop)
{
  GString *body = g_string_sized_new (loop->sent->len + 1024);

  for (; loop->n_sent < json_array_get_length (loop->messages); loop->n_sent++)
    {
      JsonObject *kept = json_array_get_object_element (loop->messages, loop->n_sent);
      g_autoptr(JsonObject) sent = json_object_new ();
      g_autoptr(JsonNode) node = NULL;
      JsonObjectIter iter;
      const char *key;
      JsonNode *value;

      /* The transcript keeps each turn's usage; the server gets messages only. */
      json_object_iter_init (&iter, kept);
      while (json_object_iter_next (&iter, &key, &value))
        if (!g_str_equal (key, "usage"))
          json_object_set_member (sent, key, json_node_ref (value));
      node = json_node_init_object (json_node_alloc (), sent);
      if (loop->sent->len > 0)
        g_string_append_c (loop->sent, ',');
      append_json (loop->sent, node);
    }

  g_string_append (body, "{\"model\":");
  {
    g_autoptr(JsonNode) model = json_node_init_string (json_node_alloc (),
                                                       json_object_get_string_member (loop->model, "model"));
    append_json (body, model);
  }
  g_string_append (body, ",\"messages\":[");
  g_string_append_len (body, loop->sent->str, loop->sent->len);
  g_string_append (body, "],\"stream\":true,\"stream_options\":{\"include_usage\":true}");
  if (loop->tools_text != NULL)
    {
      g_string_append (body, ",\"tools\":");
      g_string_append (body, loop->tools_text);
    }
  if (json_object_has_member (loop->model, "max_tokens"))
    g_string_append_printf (body, ",\"max_tokens\":%" G_GINT64_FORMAT,
                            json_object_get_int_member (loop->model, "max_tokens"));
  if (json_object_has_member (loop->model, "temperature"))
    {
      char number[G_ASCII_DTOSTR_BUF_SIZE];

      g_string_append_printf (body, ",\"temperature\":%s",
                              g_ascii_dtostr (number, sizeof number,
                                              json_object_get_double_member (loop->model, "temperature")));
    }
  g_string_append_c (body, '}');
  return g_string_free_to_bytes (body);
}

static double
turn_cost (Loop       *loop,
           JsonObject *usage)
{
  double in = json_object_get_double_member_with_default (loop->model, "input_cents_per_mtok", 0);
  double out = json_object_get_double_member_with_default (loop->model, "output_cents_per_mtok", 0);
  gint64 prompt = json_object_get_int_member_with_default (usage, "prompt_tokens", 0);
  gint64 completion = json_object_get_int_member_with_default (usage, "completion_tokens", 0);

  return (MAX (prompt, 0) * in + MAX (completion, 0) * out) / 1e6;
}

static void
add_tool_result (Loop       *loop,
                 const char *call_id,
                 const char *content)
{
  JsonObject *message = json_object_new ();
  g_autofree char *cut = openai_truncate_for_model (content, OPENAI_RESULT_CAP);

  json_object_set_string_member (message, "role", "tool");
  json_object_set_string_member (message, "tool_call_id", call_id);
  json_object_set_string_member (message, "content", cut);
  json_array_add_object_element (loop->messages, message);
}

/* Runs one call and says what the model gets back. Mistakes of the model
 * (unknown tool, bad JSON, a failing tool, a denial) are results, so the
 * loop goes on and the model can correct itself. */
static char *
run_tool_call (Loop           *loop,
               OpenaiToolCall *call)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentTool) tool = NULL;
  g_autoptr(JsonNode) result = NULL;
  g_autofree char *reason = NULL;
  gboolean from_host = FALSE;
  JsonObject *args;
  const char *name = call->name;

  if (name == NULL || *name == '\0')
    return g_strdup ("Error: this tool call names no tool; call one of the tools you were given by its name.");
  if (loop->host != NULL && (tool = subagent_tool_registry_lookup (loop->host, name)) != NULL)
    from_host = TRUE;
  else if (loop->workspace != NULL)
    tool = subagent_tool_registry_lookup (loop->workspace, name);
  if (tool == NULL)
    return g_strdup_printf ("Error: there is no tool “%s” here; use only the tools you were given.", name);

  if (call->arguments->len == 0 || strspn (call->arguments->str, " \t\r\n") == call->arguments->len)
    json_parser_load_from_data (parser, "{}", -1, NULL);
  else if (!json_parser_load_from_data (parser, call->arguments->str, call->arguments->len, &error))
    return g_strdup_printf ("Error: the arguments of %s are not valid JSON (%s). Call %s again with one JSON "
                            "object that matches its parameters.", name, error->message, name);
  if (!JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return g_strdup_printf ("Error: the arguments of %s must be a JSON object, not %s. Call %s again.",
                            name, json_node_type_name (json_parser_get_root (parser)), name);
  args = json_node_get_object (json_parser_get_root (parser));

  /* Every destructive call asks first: permission modes, the queue and
   * cross-process verdicts all apply. */
  if (subagent_tool_get_destructive (tool) &&
      subagent_approval_handler_check (loop->approvals, name, args, TRUE,
                                       !from_host && openai_workspace_tool_stays_inside (name),
                                       loop->stop, &reason) != SUBAGENT_APPROVAL_DECISION_ALLOW)
    return g_strdup_printf ("Denied: %s was not run. %s", name, reason ? reason : "No reason was given.");

  if (from_host)
    result = subagent_tool_registry_invoke (loop->host, name, args, loop->stop, &error);
  else
    result = subagent_tool_call (tool, args, loop->stop, &error);
  if (result == NULL)
    return g_strdup_printf ("Error: %s failed: %s", name, error ? error->message : "no reason given");
  if (JSON_NODE_HOLDS_VALUE (result) && json_node_get_value_type (result) == G_TYPE_STRING)
    return g_strdup (json_node_get_string (result));
  return json_to_string (result, FALSE);
}

static gboolean
stopped (Loop *loop)
{
  if (!g_cancellable_is_cancelled (loop->stop))
    return FALSE;
  if (openai_watchdog_run_expired (loop->watchdog))
    {
      loop->stop_reason = SUBAGENT_STOP_REASON_TIMEOUT;
      loop->message = g_strdup_printf ("The child reached its timeout of %u s",
                                       subagent_run_context_get_timeout_seconds (loop->context));
    }
  else
    {
      loop->stop_reason = SUBAGENT_STOP_REASON_CANCELLED;
      loop->message = g_strdup ("The child was cancelled");
    }
  return TRUE;
}

/* One model turn and its tool calls; FALSE when the loop ends. */
static gboolean
step (Loop *loop)
{
  guint max_iterations = subagent_run_context_get_max_iterations (loop->context);
  guint max_tool_calls = subagent_run_context_get_max_tool_calls (loop->context);
  double budget = subagent_run_context_get_max_cost_cents (loop->context);
  g_autoptr(GBytes) body = NULL;
  g_autoptr(OpenaiTurn) turn = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *prefix = NULL;
  OpenaiFailure failure;
  JsonObject *message;
  const char *not_run = NULL;

  if (stopped (loop))
    return FALSE;
  if (max_iterations > 0 && loop->iterations >= max_iterations)
    {
      loop->stop_reason = SUBAGENT_STOP_REASON_MAX_TURNS;
      loop->message = g_strdup_printf ("The child used its %u iterations (max_iterations) before it answered",
                                       max_iterations);
      return FALSE;
    }

  body = request_body (loop);
  turn = openai_client_chat (loop->client, body, &failure, &error);
  if (turn == NULL)
    {
      if (stopped (loop))
        return FALSE;
      loop->stop_reason = SUBAGENT_STOP_REASON_ERROR;
      loop->message = g_strdup_printf ("The model “%s” failed: %s",
                                       json_object_get_string_member (loop->model, "name"), error->message);
      return FALSE;
    }
  loop->iterations++;
  prefix = g_strdup_printf ("%s_%u", subagent_run_context_get_run_id (loop->context), loop->iterations);
  openai_turn_finish (turn, prefix);

  message = openai_turn_to_message (turn);
  if (turn->usage != NULL)
    {
      g_autoptr(JsonNode) usage = json_node_init_object (json_node_alloc (), turn->usage);
      loop->cost_cents += turn_cost (loop, turn->usage);
      json_object_set_member (message, "usage", json_node_copy (usage));
    }
  else
    loop->turns_without_usage++;
  json_array_add_object_element (loop->messages, message);

  /* Tool calls are what arrived, whatever finish_reason claims. */
  if (turn->tool_calls->len == 0)
    {
      subagent_run_context_report_usage (loop->context, loop->iterations, loop->tool_calls, loop->cost_cents);
      g_free (loop->final_answer);
      loop->final_answer = g_strdup (turn->content->str);
      loop->stop_reason = SUBAGENT_STOP_REASON_COMPLETE;
      return FALSE;
    }

  if (budget > 0 && loop->cost_cents >= budget)
    {
      not_run = "Not run: the agent's cost budget is used up.";
      loop->stop_reason = SUBAGENT_STOP_REASON_BUDGET;
      loop->message = g_strdup_printf ("The child spent %.4f of its %.4f cents (max_cost_cents) before it answered",
                                       loop->cost_cents, budget);
    }
  for (guint i = 0; i < turn->tool_calls->len; i++)
    {
      OpenaiToolCall *call = g_ptr_array_index (turn->tool_calls, i);
      g_autofree char *result = NULL;

      /* Every call gets a result, so the transcript stays one a server accepts. */
      if (not_run == NULL && g_cancellable_is_cancelled (loop->stop))
        not_run = "Not run: the run was stopped.";
      if (not_run == NULL && max_tool_calls > 0 && loop->tool_calls >= max_tool_calls)
        {
          not_run = "Not run: the agent reached its limit of tool calls.";
          loop->stop_reason = SUBAGENT_STOP_REASON_MAX_TURNS;
          loop->message = g_strdup_printf ("The child made its %u tool calls (max_tool_calls) before it answered",
                                           max_tool_calls);
        }
      if (not_run != NULL)
        {
          add_tool_result (loop, call->id, not_run);
          continue;
        }
      loop->tool_calls++;
      result = run_tool_call (loop, call);
      add_tool_result (loop, call->id, result);
    }
  /* Running totals for the host (the supervisor's `usage` events). */
  subagent_run_context_report_usage (loop->context, loop->iterations, loop->tool_calls, loop->cost_cents);
  if (loop->stop_reason != NULL)
    return FALSE;
  return !stopped (loop);
}

static char *
system_prompt (SubagentRunContext *context,
               const char         *root)
{
  const char *prompt = subagent_def_get_system_prompt (subagent_run_context_get_definition (context));
  GString *text = g_string_new (prompt);

  if (root != NULL)
    g_string_append_printf (text, "%sYour workspace is %s; tool paths are relative to it.",
                            text->len ? "\n\n" : "", root);
  return g_string_free (text, FALSE);
}

SubagentRunOutcome *
openai_loop_run (SubagentRunContext *context,
                 GCancellable       *cancellable)
{
  SubagentDef *def = subagent_run_context_get_definition (context);
  SubagentIsolationContext *isolation = subagent_run_context_get_isolation (context);
  GObject *handler = subagent_run_context_get_approval_handler (context);
  JsonArray *transcript = subagent_run_context_get_transcript (context);
  Loop loop = { 0 };
  g_autoptr(GError) error = NULL;
  gulong cancel_handler = 0;
  const char *hidden[3] = { "SUBAGENT_APPROVAL_HMAC_KEY", NULL, NULL };
  SubagentRunOutcome *outcome;
  g_autoptr(GString) message = NULL;

  loop.context = context;
  loop.model = subagent_run_context_get_model (context);
  loop.stop = g_cancellable_new ();
  if (cancellable != NULL)
    cancel_handler = g_cancellable_connect (cancellable, G_CALLBACK (openai_cancel_other), loop.stop, NULL);
  loop.watchdog = openai_watchdog_new (loop.stop, subagent_run_context_get_timeout_seconds (context));

  if (loop.model == NULL)
    {
      loop.stop_reason = SUBAGENT_STOP_REASON_ERROR;
      loop.message = g_strdup_printf ("Subagent “%s” has no model to run on: set “model:” in its definition or "
                                      "“default_model:” in .subagent/config.yaml", subagent_def_get_name (def));
      goto done;
    }
  hidden[1] = json_object_get_string_member_with_default (loop.model, "api_key_env", NULL);
  loop.client = openai_client_new (loop.model, loop.watchdog, loop.stop, &error);
  if (loop.client == NULL)
    {
      loop.stop_reason = SUBAGENT_STOP_REASON_ERROR;
      loop.message = g_strdup (error->message);
      goto done;
    }

  if (isolation != NULL)
    {
      g_autoptr(SubagentSimpleToolRegistry) builtin = NULL;

      loop.env = openai_tool_env_new (isolation, subagent_def_get_write_scope (def), hidden, loop.watchdog, &error);
      if (loop.env == NULL)
        {
          loop.stop_reason = SUBAGENT_STOP_REASON_ERROR;
          loop.message = g_strdup (error->message);
          goto done;
        }
      builtin = openai_workspace_tools_new (loop.env);
      loop.workspace = SUBAGENT_TOOL_REGISTRY (subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (builtin),
                                                                                 subagent_def_get_tool_whitelist (def),
                                                                                 subagent_def_get_disallowed_tools (def)));
    }
  if (subagent_run_context_get_tools (context) != NULL)
    loop.host = g_object_ref (subagent_run_context_get_tools (context));
  if (handler != NULL && SUBAGENT_IS_APPROVAL_HANDLER (handler))
    loop.approvals = g_object_ref (SUBAGENT_APPROVAL_HANDLER (handler));
  else  /* no route: nothing can be asked, so what needs asking is denied */
    loop.approvals = subagent_approval_handler_new (NULL, subagent_run_context_get_run_id (context),
                                                    subagent_def_get_name (def),
                                                    subagent_run_context_get_batch_index (context),
                                                    isolation ? subagent_isolation_context_get_isolation (isolation) : "shared",
                                                    NULL, subagent_run_context_get_permission_mode (context));
  build_tools (&loop);
  if (json_array_get_length (loop.tools_json) > 0)
    {
      g_autoptr(JsonNode) tools = json_node_init_array (json_node_alloc (), loop.tools_json);
      loop.tools_text = json_to_string (tools, FALSE);
    }
  loop.sent = g_string_new (NULL);

  if (transcript != NULL && json_array_get_length (transcript) > 0)
    {
      g_autoptr(JsonNode) node = json_node_init_array (json_node_alloc (), transcript);
      g_autoptr(JsonNode) copy = json_node_copy (node);

      loop.messages = json_array_ref (json_node_get_array (copy));
    }
  else
    {
      g_autofree char *system = system_prompt (context, isolation ? subagent_isolation_context_get_child_root (isolation) : NULL);

      loop.messages = json_array_new ();
      if (*system != '\0')
        json_array_add_object_element (loop.messages, text_message ("system", system));
    }
  json_array_add_object_element (loop.messages, text_message ("user", subagent_run_context_get_task (context)));

  while (step (&loop))
    ;
  g_debug ("Model child %s: %u turns, %u tool calls, %.4f cents, stop reason %s",
           subagent_run_context_get_run_id (context), loop.iterations, loop.tool_calls, loop.cost_cents,
           loop.stop_reason);

done:
  if (cancel_handler != 0)
    g_cancellable_disconnect (cancellable, cancel_handler);
  /* Joins the watchdog: nothing cancels after this. */
  g_clear_pointer (&loop.client, openai_client_free);
  g_clear_pointer (&loop.watchdog, openai_watchdog_free);

  message = g_string_new (loop.message);
  if (loop.turns_without_usage > 0)
    g_string_append_printf (message, "%sThe server reported no usage for %u of %u turns; cost_cents counts only "
                            "reported usage", message->len ? ". " : "", loop.turns_without_usage, loop.iterations);
  outcome = g_object_new (SUBAGENT_TYPE_RUN_OUTCOME,
                          "stop-reason", loop.stop_reason ? loop.stop_reason : SUBAGENT_STOP_REASON_ERROR,
                          "iterations", loop.iterations,
                          "tool-calls", loop.tool_calls,
                          "cost-cents", loop.cost_cents,
                          "final-answer", loop.final_answer ? loop.final_answer : "",
                          "output", "",
                          "message", message->str,
                          "transcript", loop.messages,
                          NULL);
  loop_clear (&loop);
  return outcome;
}
