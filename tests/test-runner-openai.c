/* test-runner-openai.c: model-backed children (the runner-openai plugin's
 * `openai-chat` runner) against a scripted OpenAI-compatible server over
 * real HTTP on 127.0.0.1.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "model-test-support.h"
#include "test-support.h"

static gint
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* Scripts are written with ' for " to stay readable. */
static char *
S (const char *text)
{
  return g_strdelimit (g_strdup (text), "'", '"');
}

typedef struct {
  char *root;
  MtsServer *server;
  SubagentManager *manager;
} Fx;

static void
fx_open_at (Fx         *fx,
            char       *root,
            const char *script,
            const char *extra_config)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *json = S (script);

  g_setenv (MTS_KEY_ENV, MTS_KEY, TRUE);
  fx->root = root;
  fx->server = mts_server_start (json);
  mts_write_config (fx->root, fx->server, extra_config);
  sat_write_file (fx->root, "notes.txt", "alpha\nbeta\ngamma\n");
  sat_write_file (fx->root, "src/app.c", "int answer = 41;\nint other = 41;\n");
  sat_write_file (fx->root, ".subagent/agents/helper.yaml", "name: helper\nmodel: test\n");
  sat_write_file (fx->root, ".subagent/agents/reader.yaml", "name: reader\nmodel: test\ntools: [Read]\n");
  sat_write_file (fx->root, ".subagent/agents/writer.yaml", "name: writer\nmodel: test\ntools: [Read, Write, Edit]\n");
  sat_write_file (fx->root, ".subagent/agents/scoped.yaml",
                  "name: scoped\nmodel: test\ntools: [Read, Write, Edit]\nwrite_scope: [docs]\n");
  sat_write_file (fx->root, ".subagent/agents/short.yaml", "name: short\nmodel: test\nmax_iterations: 2\n");
  sat_write_file (fx->root, ".subagent/agents/cheap.yaml", "name: cheap\nmodel: test\nmax_cost_cents: 0.05\n");
  sat_write_file (fx->root, ".subagent/agents/shell.yaml", "name: shell\nmodel: test\ntools: [Bash]\n");
  fx->manager = subagent_manager_new (fx->root, &error);
  g_assert_no_error (error);
}

static void
fx_open (Fx         *fx,
         const char *script,
         const char *extra_config)
{
  fx_open_at (fx, sat_make_temp_dir ("model"), script, extra_config);
}

static void
fx_close (Fx *fx)
{
  g_clear_object (&fx->manager);
  g_clear_pointer (&fx->server, mts_server_stop);
  sat_rm_rf (fx->root);
  g_free (fx->root);
}

static SubagentRunResult *
fx_run (Fx         *fx,
        const char *def_name,
        const char *task)
{
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(GError) error = NULL;
  SubagentRunResult *result;

  subagent_run_options_set_def_name (options, def_name);
  result = subagent_manager_run (fx->manager, task, options, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

static guint
n_requests (Fx *fx)
{
  g_autoptr(JsonArray) requests = mts_server_records (fx->server, "request");
  return json_array_get_length (requests);
}

/* The messages of request @index. */
static JsonArray *
request_messages (Fx   *fx,
                  guint index)
{
  g_autoptr(JsonObject) body = mts_server_request_body (fx->server, index);
  return json_array_ref (json_object_get_array_member (body, "messages"));
}

/* The content of the tool message answering @call_id in request @index. */
static char *
tool_result (Fx         *fx,
             guint       index,
             const char *call_id)
{
  g_autoptr(JsonArray) messages = request_messages (fx, index);

  for (guint i = 0; i < json_array_get_length (messages); i++)
    {
      JsonObject *m = json_array_get_object_element (messages, i);

      if (g_str_equal (json_object_get_string_member (m, "role"), "tool") &&
          g_str_equal (json_object_get_string_member (m, "tool_call_id"), call_id))
        return g_strdup (json_object_get_string_member (m, "content"));
    }
  g_error ("request %u has no result for tool call %s", index, call_id);
  return NULL;
}

static char *
tool_names (Fx   *fx,
            guint index)
{
  g_autoptr(JsonObject) body = mts_server_request_body (fx->server, index);
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  JsonArray *tools;

  if (!json_object_has_member (body, "tools"))
    return g_strdup ("");
  tools = json_object_get_array_member (body, "tools");
  for (guint i = 0; i < json_array_get_length (tools); i++)
    {
      JsonObject *tool = json_array_get_object_element (tools, i);

      g_assert_cmpstr (json_object_get_string_member (tool, "type"), ==, "function");
      g_assert_true (json_object_has_member (json_object_get_object_member (tool, "function"), "parameters"));
      g_ptr_array_add (names, (gpointer) json_object_get_string_member (json_object_get_object_member (tool, "function"), "name"));
    }
  g_ptr_array_sort (names, compare_strings);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (",", (char **) names->pdata);
}

/* Nothing the server got, wrote to its log, or we wrote to the records
 * holds the API key; only the Authorization header does. */
static void
assert_key_never_leaked (Fx *fx)
{
  g_autoptr(JsonArray) requests = mts_server_records (fx->server, "request");
  g_autofree char *log = NULL;
  g_autofree char *audit = NULL;
  g_autofree char *sessions_dir = g_build_filename (fx->root, ".subagent", "sessions", NULL);
  g_autoptr(GDir) dir = g_dir_open (sessions_dir, 0, NULL);
  const char *name;

  g_assert_cmpuint (json_array_get_length (requests), >, 0);
  for (guint i = 0; i < json_array_get_length (requests); i++)
    {
      JsonObject *request = json_array_get_object_element (requests, i);
      g_autoptr(JsonNode) body = json_node_init_object (json_node_alloc (), json_object_get_object_member (request, "body"));
      g_autofree char *text = json_to_string (body, FALSE);
      JsonObject *headers = json_object_get_object_member (request, "headers");

      g_assert_null (strstr (text, MTS_KEY));
      g_assert_cmpstr (json_object_get_string_member (headers, "authorization"), ==, "Bearer " MTS_KEY);
    }
  g_assert_true (g_file_get_contents (fx->server->log_path, &log, NULL, NULL));
  g_assert_null (strstr (log, MTS_KEY));
  audit = sat_read_file (fx->root, ".subagent/audit.jsonl");
  g_assert_null (strstr (audit, MTS_KEY));
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (sessions_dir, name, NULL);
      g_autofree char *text = NULL;

      g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
      g_assert_null (strstr (text, MTS_KEY));
    }
}

/* ---- the cases ------------------------------------------------------------ */

static void
test_plain_answer (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(JsonObject) body = NULL;
  g_autoptr(JsonArray) messages = NULL;
  g_autofree char *names = NULL;
  g_autofree char *audit = NULL;
  g_autoptr(SubagentSession) session = NULL;
  JsonArray *transcript;

  fx_open (&fx, "{'steps': [{'say': 'Hello from the model', 'split': 4,"
                "  'usage': {'prompt_tokens': 1000, 'completion_tokens': 200}}]}", NULL);
  result = fx_run (&fx, "helper", "say hello");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "Hello from the model");
  g_assert_cmpuint (subagent_run_result_get_iterations (result), ==, 1);
  g_assert_cmpuint (subagent_run_result_get_tool_calls (result), ==, 0);
  /* 1000 × 300 + 200 × 1500 cents per million tokens */
  g_assert_cmpfloat_with_epsilon (subagent_run_result_get_cost_cents (result), 0.6, 1e-9);

  body = mts_server_request_body (fx.server, 0);
  g_assert_cmpstr (json_object_get_string_member (body, "model"), ==, "scripted");
  g_assert_true (json_object_get_boolean_member (body, "stream"));
  g_assert_true (json_object_get_boolean_member (json_object_get_object_member (body, "stream_options"), "include_usage"));
  messages = request_messages (&fx, 0);
  g_assert_cmpuint (json_array_get_length (messages), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (messages, 0), "role"), ==, "system");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (messages, 1), "content"), ==, "say hello");
  /* No whitelist: every built-in tool (the host registered none). */
  names = tool_names (&fx, 0);
  g_assert_cmpstr (names, ==, "Bash,Edit,Glob,Grep,LS,Read,Write");

  /* Cost reaches the audit log and the session, and the transcript is kept. */
  audit = sat_read_file (fx.root, ".subagent/audit.jsonl");
  {
    g_auto(GStrv) lines = g_strsplit (g_strstrip (audit), "\n", -1);
    g_autoptr(JsonNode) last = json_from_string (lines[g_strv_length (lines) - 1], NULL);
    JsonObject *record = json_node_get_object (last);

    if (json_object_has_member (record, "fields"))
      record = json_object_get_object_member (record, "fields");
    g_assert_cmpfloat_with_epsilon (json_object_get_double_member (record, "cost_cents"), 0.6, 1e-9);
  }
  session = subagent_manager_get_session (fx.manager, subagent_run_result_get_run_id (result));
  g_assert_nonnull (session);
  g_assert_cmpfloat_with_epsilon (subagent_session_get_cost_cents (session), 0.6, 1e-9);
  transcript = subagent_session_get_transcript (session);
  g_assert_nonnull (transcript);
  g_assert_cmpuint (json_array_get_length (transcript), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (transcript, 2), "content"), ==,
                   "Hello from the model");
  g_assert_true (json_object_has_member (json_array_get_object_element (transcript, 2), "usage"));
  assert_key_never_leaked (&fx);
  fx_close (&fx);
}

static void
test_one_tool_call (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(JsonArray) messages = NULL;
  g_autofree char *content = NULL;
  JsonObject *assistant;

  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': [{'name': 'Read', 'arguments': {'file_path': 'notes.txt'}}]},"
                "  {'say': 'The second line is beta.'}]}", NULL);
  result = fx_run (&fx, "reader", "what is on line 2 of notes.txt?");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "The second line is beta.");
  g_assert_cmpuint (subagent_run_result_get_iterations (result), ==, 2);
  g_assert_cmpuint (subagent_run_result_get_tool_calls (result), ==, 1);
  g_assert_cmpuint (n_requests (&fx), ==, 2);

  messages = request_messages (&fx, 1);
  g_assert_cmpuint (json_array_get_length (messages), ==, 4);
  assistant = json_array_get_object_element (messages, 2);
  g_assert_cmpstr (json_object_get_string_member (assistant, "role"), ==, "assistant");
  g_assert_false (json_object_has_member (assistant, "usage"));  /* kept in the transcript, not sent */
  content = tool_result (&fx, 1, "call_0");
  g_assert_nonnull (strstr (content, "     2\tbeta"));
  fx_close (&fx);
}

static void
test_several_calls_per_turn (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(JsonArray) messages = NULL;
  g_autofree char *grep = NULL;
  g_autofree char *glob = NULL;
  g_autofree char *read = NULL;
  g_autofree char *generated = NULL;
  JsonArray *calls;

  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': ["
                "    {'name': 'Read', 'arguments': {'file_path': 'src/app.c'}, 'id': 'r1'},"
                "    {'name': 'Glob', 'arguments': {'pattern': '**/*.c'}, 'id': null},"
                "    {'name': 'Grep', 'arguments': {'pattern': 'gam+a', 'output_mode': 'content'}, 'id': 'g1'}],"
                "   'split_args': 4},"
                "  {'say': 'done'}]}", NULL);
  result = fx_run (&fx, "helper", "look around");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpuint (subagent_run_result_get_tool_calls (result), ==, 3);
  g_assert_cmpuint (subagent_run_result_get_iterations (result), ==, 2);

  messages = request_messages (&fx, 1);
  calls = json_object_get_array_member (json_array_get_object_element (messages, 2), "tool_calls");
  g_assert_cmpuint (json_array_get_length (calls), ==, 3);
  /* The server left the second id out: one was made up, unique. */
  generated = g_strdup (json_object_get_string_member (json_array_get_object_element (calls, 1), "id"));
  g_assert_true (g_str_has_prefix (generated, "call_"));
  read = tool_result (&fx, 1, "r1");
  glob = tool_result (&fx, 1, generated);
  grep = tool_result (&fx, 1, "g1");
  g_assert_nonnull (strstr (read, "int answer = 41;"));
  g_assert_cmpstr (glob, ==, "src/app.c\n");
  g_assert_cmpstr (grep, ==, "notes.txt:3:gamma\n");
  fx_close (&fx);
}

static void
test_arguments_in_fragments (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *content = NULL;

  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': [{'name': 'Read', 'arguments': {'file_path': 'notes.txt', 'offset': 3}}],"
                "   'split_args': 17},"
                "  {'say': 'ok'}]}", NULL);
  result = fx_run (&fx, "reader", "read");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  content = tool_result (&fx, 1, "call_0");
  g_assert_cmpstr (content, ==, "     3\tgamma\n");
  fx_close (&fx);
}

static void
test_invalid_argument_json (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *content = NULL;

  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': [{'name': 'Read', 'arguments': '{\\'file_path\\': \\'notes'}]},"
                "  {'say': 'sorry'}]}", NULL);
  result = fx_run (&fx, "reader", "read");
  /* The model is told, and the loop goes on. */
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "sorry");
  g_assert_cmpuint (subagent_run_result_get_tool_calls (result), ==, 1);
  content = tool_result (&fx, 1, "call_0");
  g_assert_true (g_str_has_prefix (content, "Error: the arguments of Read are not valid JSON"));
  fx_close (&fx);
}

typedef struct {
  Fx *fx;
  const char *def;
  GCancellable *cancellable;
  SubagentRunResult *result;
  gint64 finished_at;
} Runner;

static gpointer
run_in_thread (gpointer data)
{
  Runner *runner = data;
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(GError) error = NULL;

  subagent_run_options_set_def_name (options, runner->def);
  runner->result = subagent_manager_run (runner->fx->manager, "work", options, runner->cancellable, &error);
  runner->finished_at = g_get_monotonic_time ();
  g_assert_no_error (error);
  return NULL;
}

static void
test_denied_from_another_process (void)
{
  Fx fx = { 0 };
  Runner runner = { &fx, "writer", NULL, NULL, 0 };
  g_autoptr(JsonNode) listed = NULL;
  g_autofree char *content = NULL;
  g_autofree char *out_path = NULL;
  GThread *thread;
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  const char *request_id = NULL;

  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': [{'name': 'Write', 'arguments': {'file_path': 'out.txt', 'content': 'x'}}]},"
                "  {'say': 'I could not write it.'}]}",
           "permission_mode: prompt\napprovals: {sink: file, timeout_seconds: 60}\n");
  thread = g_thread_new ("run", run_in_thread, &runner);
  /* Another process sees the pending request and denies it. */
  while (request_id == NULL)
    {
      g_autofree char *out = sat_run (NULL, FALSE, NULL, sat_subagentctl (), "approvals", "list", "--json",
                                      "--root", fx.root, NULL);
      g_clear_pointer (&listed, json_node_unref);
      listed = json_from_string (out, NULL);
      g_assert_nonnull (listed);
      if (json_array_get_length (json_node_get_array (listed)) > 0)
        {
          JsonObject *request = json_array_get_object_element (json_node_get_array (listed), 0);

          g_assert_cmpstr (json_object_get_string_member (request, "tool_name"), ==, "Write");
          request_id = json_object_get_string_member (request, "request_id");
        }
      else
        {
          g_assert_cmpint (g_get_monotonic_time (), <, deadline);
          g_usleep (50000);
        }
    }
  g_free (sat_run (NULL, FALSE, NULL, sat_subagentctl (), "approvals", "deny", request_id,
                   "--reason", "not on a Friday", "--root", fx.root, NULL));
  g_thread_join (thread);

  g_assert_cmpint (subagent_run_result_get_status (runner.result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_run_result_get_final_answer (runner.result), ==, "I could not write it.");
  content = tool_result (&fx, 1, "call_0");
  g_assert_true (g_str_has_prefix (content, "Denied: Write was not run."));
  g_assert_nonnull (strstr (content, "not on a Friday"));
  out_path = g_build_filename (fx.root, "out.txt", NULL);
  g_assert_false (g_file_test (out_path, G_FILE_TEST_EXISTS));
  g_object_unref (runner.result);
  fx_close (&fx);
}

static void
test_retry_after_429 (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;

  fx_open (&fx, "{'steps': [{'status': 429, 'headers': {'Retry-After': '0'}, 'body': 'slow down'},"
                "           {'say': 'ok'}]}", NULL);
  result = fx_run (&fx, "helper", "hi");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "ok");
  g_assert_cmpuint (subagent_run_result_get_iterations (result), ==, 1);
  g_assert_cmpuint (n_requests (&fx), ==, 2);
  fx_close (&fx);
}

static void
test_empty_stream_retried (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;

  fx_open (&fx, "{'steps': [{'empty': true}, {'say': 'second try', 'json': true}]}", NULL);
  result = fx_run (&fx, "helper", "hi");
  /* A stream cut before any event is retried; a non-streamed answer is read too. */
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "second try");
  g_assert_cmpuint (n_requests (&fx), ==, 2);
  fx_close (&fx);
}

static void
test_unreachable_server (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;

  fx_open (&fx, "{'steps': []}", NULL);
  mts_write_config (fx.root, NULL, NULL);  /* port 9: nothing listens */
  g_clear_object (&fx.manager);
  fx.manager = subagent_manager_new (fx.root, NULL);
  result = fx_run (&fx, "helper", "hi");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_FAILED);
  g_assert_nonnull (strstr (subagent_run_result_get_message (result),
                            "cannot reach the model server at http://127.0.0.1:9/v1/chat/completions"));
  g_assert_nonnull (strstr (subagent_run_result_get_message (result), "gave up after 3 attempts"));
  fx_close (&fx);
}

static void
test_500_three_times (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  gint64 start;
  const char *message;

  fx_open (&fx, "{'steps': [{'status': 500, 'body': 'boom'}, {'status': 502}, {'status': 503}, {'say': 'late'}]}",
           NULL);
  start = g_get_monotonic_time ();
  result = fx_run (&fx, "helper", "hi");
  /* Bounded: max_retries 2, backoff 0.5 s then 1 s. */
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 1400 * 1000);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_FAILED);
  message = subagent_run_result_get_message (result);
  g_assert_nonnull (strstr (message, "answered 503"));
  g_assert_nonnull (strstr (message, "gave up after 3 attempts"));
  g_assert_cmpstr (subagent_run_result_get_stop_reason (result), ==, "error");
  g_assert_cmpuint (n_requests (&fx), ==, 3);
  fx_close (&fx);
}

static void
test_stalled_stream (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  gint64 start;

  fx_open (&fx, "{'steps': [{'say': 'a partial answer', 'split': 4, 'stall_after': 2}]}", NULL);
  start = g_get_monotonic_time ();
  result = fx_run (&fx, "helper", "hi");
  /* read_timeout_seconds is 2; visible output came, so no retry. */
  g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_USEC_PER_SEC);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_FAILED);
  g_assert_nonnull (strstr (subagent_run_result_get_message (result), "stopped sending its answer"));
  g_assert_cmpuint (n_requests (&fx), ==, 1);
  fx_close (&fx);
}

static void
test_cancel_mid_stream (void)
{
  Fx fx = { 0 };
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  Runner runner = { &fx, "helper", cancellable, NULL, 0 };
  GThread *thread;
  gint64 cancelled_at;

  fx_open (&fx, "{'steps': [{'say': 'one two three four five six seven eight nine ten eleven twelve',"
                "  'split': 60, 'slow_ms': 100}]}", NULL);
  thread = g_thread_new ("run", run_in_thread, &runner);
  mts_server_wait_for (fx.server, "request", 1);
  g_usleep (300 * 1000);
  cancelled_at = g_get_monotonic_time ();
  g_cancellable_cancel (cancellable);
  g_thread_join (thread);
  /* The request is closed at once, not at the stream's end (6 s away). */
  g_assert_cmpint (runner.finished_at - cancelled_at, <, 1500 * 1000);
  g_assert_cmpint (subagent_run_result_get_status (runner.result), ==, SUBAGENT_RUN_STATUS_CANCELLED);
  mts_server_wait_for (fx.server, "disconnected", 1);
  g_object_unref (runner.result);
  fx_close (&fx);
}

static void
test_usage_missing (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;

  fx_open (&fx, "{'steps': [{'say': 'free of charge', 'usage': null}]}", NULL);
  result = fx_run (&fx, "helper", "hi");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "free of charge");
  g_assert_cmpfloat (subagent_run_result_get_cost_cents (result), ==, 0);
  g_assert_nonnull (strstr (subagent_run_result_get_message (result), "no usage for 1 of 1 turns"));
  fx_close (&fx);
}

static void
test_server_style (gconstpointer data)
{
  const char *style = data;
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *script = g_strdup_printf (
    "{'steps': ["
    "  {'style': '%s', 'say': 'Let me look.', 'split': 3,"
    "   'tool_calls': [{'name': 'Read', 'arguments': {'file_path': 'notes.txt', 'limit': 1}},"
    "                  {'name': 'LS', 'arguments': {}}], 'split_args': 5},"
    "  {'style': '%s', 'say': 'alpha it is', 'split': 5}]}", style, style);
  g_autofree char *read = NULL;
  g_autofree char *ls = NULL;

  fx_open (&fx, script, NULL);
  result = fx_run (&fx, "helper", "first line?");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "alpha it is");
  /* Ollama says finish_reason "stop" with tool calls: they ran anyway. */
  g_assert_cmpuint (subagent_run_result_get_tool_calls (result), ==, 2);
  g_assert_cmpfloat_with_epsilon (subagent_run_result_get_cost_cents (result), 0.12, 1e-9);
  read = tool_result (&fx, 1, "call_0");
  ls = tool_result (&fx, 1, "call_1");
  g_assert_cmpstr (read, ==, "     1\talpha\n[more lines follow: read on with offset 2]\n");
  g_assert_nonnull (strstr (ls, "  notes.txt\n"));
  g_assert_nonnull (strstr (ls, "  src/\n"));
  g_assert_null (strstr (ls, ".subagent"));
  fx_close (&fx);
}

static void
test_max_iterations (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;

  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': [{'name': 'LS', 'arguments': {}}]},"
                "  {'tool_calls': [{'name': 'LS', 'arguments': {}}]},"
                "  {'say': 'never reached'}]}", NULL);
  result = fx_run (&fx, "short", "loop");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_PARTIAL);
  g_assert_cmpstr (subagent_run_result_get_stop_reason (result), ==, "max_turns");
  g_assert_cmpuint (subagent_run_result_get_iterations (result), ==, 2);
  g_assert_cmpuint (n_requests (&fx), ==, 2);
  fx_close (&fx);
}

static void
test_budget (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;

  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': [{'name': 'LS', 'arguments': {}}],"
                "   'usage': {'prompt_tokens': 1000, 'completion_tokens': 0}},"
                "  {'say': 'never reached'}]}", NULL);
  result = fx_run (&fx, "cheap", "spend");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_PARTIAL);
  g_assert_cmpstr (subagent_run_result_get_stop_reason (result), ==, "budget");
  g_assert_cmpuint (subagent_run_result_get_tool_calls (result), ==, 0);
  g_assert_cmpfloat_with_epsilon (subagent_run_result_get_cost_cents (result), 0.3, 1e-9);
  g_assert_cmpuint (n_requests (&fx), ==, 1);
  fx_close (&fx);
}

static void
test_run_timeout (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  gint64 start;

  fx_open (&fx, "{'steps': [{'say': 'a b c d e f g h i j k l m n o p q r s t u v w x y z', 'split': 40,"
                "  'slow_ms': 150}]}", NULL);
  sat_write_file (fx.root, ".subagent/agents/hasty.yaml", "name: hasty\nmodel: test\ntimeout_seconds: 1\n");
  g_clear_object (&fx.manager);
  fx.manager = subagent_manager_new (fx.root, NULL);
  start = g_get_monotonic_time ();
  result = fx_run (&fx, "hasty", "take your time");
  g_assert_cmpint (g_get_monotonic_time () - start, <, 4 * G_USEC_PER_SEC);
  g_assert_cmpstr (subagent_run_result_get_stop_reason (result), ==, "timeout");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_FAILED);
  g_assert_nonnull (strstr (subagent_run_result_get_message (result), "timeout of 1 s"));
  fx_close (&fx);
}

static void
test_large_results_cut (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GString) big = g_string_new (NULL);
  g_autofree char *grep = NULL, *bash = NULL;

  for (guint i = 0; i < 2000; i++)
    g_string_append_printf (big, "line %04u: the quick brown fox jumps\n", i);
  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': ["
                "    {'name': 'Grep', 'arguments': {'pattern': 'fox', 'output_mode': 'content'}, 'id': 'g'},"
                "    {'name': 'Bash', 'arguments': {'command': 'yes a | head -c 50000'}, 'id': 'b'}]},"
                "  {'say': 'big'}]}", "permission_mode: danger-full-access\n");
  sat_write_file (fx.root, "big.txt", big->str);
  result = fx_run (&fx, "helper", "search");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  grep = tool_result (&fx, 1, "g");
  bash = tool_result (&fx, 1, "b");
  g_assert_true (g_str_has_prefix (grep, "big.txt:1:line 0000: the quick brown fox jumps\n"));
  g_assert_nonnull (strstr (grep, "[result cut: 32000 of "));
  g_assert_cmpuint (strlen (grep), <, 32300);
  g_assert_true (g_str_has_prefix (bash, "a\na\na\n"));
  g_assert_nonnull (strstr (bash, "[output cut: 20000 more bytes]"));
  fx_close (&fx);
}

/* A Claude Code agent file runs as written, in a worktree; the review shows
 * the model's Edit, and the model saw only the file's tools. */
static void
test_claude_agent_in_worktree (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *names = NULL;
  g_autofree char *patch = NULL;
  g_autofree char *parent = NULL;
  JsonObject *review;

  fx_open_at (&fx, sat_make_git_repo ("src/app.c", "int answer = 41;\nint other = 41;\n",
                                      "README", "hello\n", NULL),
              "{'steps': ["
              "  {'tool_calls': [{'name': 'Edit', 'arguments': {'file_path': 'src/app.c',"
              "     'old_string': 'answer = 41', 'new_string': 'answer = 42'}}]},"
              "  {'say': 'Fixed the answer.'}]}",
              "permission_mode: workspace-write\n");
  sat_write_file (fx.root, ".claude/agents/fixer.md",
                  "---\nname: fixer\ndescription: Fixes things.\ntools: Read, Grep, Glob, Edit\n"
                  "model: sonnet\nisolation: worktree\n---\nYou fix small bugs.\n");
  g_clear_object (&fx.manager);
  fx.manager = subagent_manager_new (fx.root, NULL);
  result = fx_run (&fx, "fixer", "the answer should be 42");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  names = tool_names (&fx, 0);
  g_assert_cmpstr (names, ==, "Edit,Glob,Grep,Read");
  review = subagent_run_result_get_review (result);
  g_assert_nonnull (review);
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "patch_path"), &patch, NULL, NULL));
  g_assert_nonnull (strstr (patch, "+int answer = 42;"));
  g_assert_nonnull (strstr (patch, "-int answer = 41;"));
  /* The parent's tree is untouched. */
  parent = sat_read_file (fx.root, "src/app.c");
  g_assert_cmpstr (parent, ==, "int answer = 41;\nint other = 41;\n");
  assert_key_never_leaked (&fx);
  fx_close (&fx);
}

static void
test_bash_and_key (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *out = NULL;
  g_autofree char *slow = NULL;

  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': [{'name': 'Bash', 'arguments': {'command': 'echo key=[$" MTS_KEY_ENV "]; cat notes.txt | wc -l'}},"
                "                  {'name': 'Bash', 'arguments': {'command': 'sleep 20', 'timeout': 300}}]},"
                "  {'say': 'ran it'}]}",
           "permission_mode: danger-full-access\n");
  result = fx_run (&fx, "shell", "run things");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  out = tool_result (&fx, 1, "call_0");
  g_assert_cmpstr (out, ==, "key=[]\n3\n");
  slow = tool_result (&fx, 1, "call_1");
  g_assert_nonnull (strstr (slow, "[killed: the command ran longer than 300 ms]"));
  assert_key_never_leaked (&fx);
  fx_close (&fx);
}

static void
test_paths_stay_inside (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *link = NULL;
  g_autofree char *dotdot = NULL, *absolute = NULL, *through_link = NULL, *state = NULL;
  g_autofree char *scope = NULL, *in_scope = NULL, *ambiguous = NULL, *doc = NULL;

  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': ["
                "    {'name': 'Read', 'arguments': {'file_path': '../../../../etc/passwd'}, 'id': 'a'},"
                "    {'name': 'Read', 'arguments': {'file_path': '/etc/passwd'}, 'id': 'b'},"
                "    {'name': 'Read', 'arguments': {'file_path': 'escape/passwd'}, 'id': 'c'},"
                "    {'name': 'Read', 'arguments': {'file_path': '.subagent/config.yaml'}, 'id': 'd'},"
                "    {'name': 'Write', 'arguments': {'file_path': 'src/new.c', 'content': 'x'}, 'id': 'e'},"
                "    {'name': 'Write', 'arguments': {'file_path': 'docs/guide/new.md', 'content': '# hi'}, 'id': 'f'},"
                "    {'name': 'Edit', 'arguments': {'file_path': 'docs/guide/new.md', 'old_string': 'hi',"
                "                                   'new_string': 'there'}, 'id': 'g'}]},"
                "  {'say': 'done'}]}",
           "permission_mode: workspace-write\n");
  link = g_build_filename (fx.root, "escape", NULL);
  g_assert_cmpint (symlink ("/etc", link), ==, 0);
  result = fx_run (&fx, "scoped", "poke around");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  dotdot = tool_result (&fx, 1, "a");
  absolute = tool_result (&fx, 1, "b");
  through_link = tool_result (&fx, 1, "c");
  state = tool_result (&fx, 1, "d");
  scope = tool_result (&fx, 1, "e");
  in_scope = tool_result (&fx, 1, "f");
  ambiguous = tool_result (&fx, 1, "g");
  g_assert_nonnull (strstr (dotdot, "uses “..”"));
  g_assert_nonnull (strstr (absolute, "is outside the workspace"));
  g_assert_nonnull (strstr (through_link, "leads outside the workspace"));
  g_assert_nonnull (strstr (state, "libsubagent's own state"));
  g_assert_nonnull (strstr (scope, "outside this agent's write_scope (docs)"));
  g_assert_cmpstr (in_scope, ==, "Wrote 4 bytes to docs/guide/new.md");
  g_assert_cmpstr (ambiguous, ==, "Edited docs/guide/new.md: replaced 1 occurrence");
  doc = sat_read_file (fx.root, "docs/guide/new.md");
  g_assert_cmpstr (doc, ==, "# there");
  fx_close (&fx);
}

static void
test_edit_needs_unique_match (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *twice = NULL, *all = NULL, *app = NULL;

  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': ["
                "    {'name': 'Edit', 'arguments': {'file_path': 'src/app.c', 'old_string': '41', 'new_string': '42'}, 'id': 'a'},"
                "    {'name': 'Edit', 'arguments': {'file_path': 'src/app.c', 'old_string': '41', 'new_string': '43',"
                "                                   'replace_all': true}, 'id': 'b'}]},"
                "  {'say': 'done'}]}",
           "permission_mode: workspace-write\n");
  result = fx_run (&fx, "writer", "edit");
  twice = tool_result (&fx, 1, "a");
  all = tool_result (&fx, 1, "b");
  g_assert_nonnull (strstr (twice, "old_string occurs 2 times in src/app.c"));
  g_assert_cmpstr (all, ==, "Edited src/app.c: replaced 2 occurrences");
  app = sat_read_file (fx.root, "src/app.c");
  g_assert_cmpstr (app, ==, "int answer = 43;\nint other = 43;\n");
  fx_close (&fx);
}

static void
test_tool_outside_registry (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *names = NULL, *content = NULL;

  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': [{'name': 'Bash', 'arguments': {'command': 'touch pwned'}}]},"
                "  {'say': 'ok'}]}", "permission_mode: danger-full-access\n");
  result = fx_run (&fx, "reader", "try");
  names = tool_names (&fx, 0);
  g_assert_cmpstr (names, ==, "Read");
  content = tool_result (&fx, 1, "call_0");
  g_assert_nonnull (strstr (content, "there is no tool “Bash” here"));
  g_assert_false (g_file_test (content, G_FILE_TEST_EXISTS));
  fx_close (&fx);
}

static void
test_missing_model_and_key (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentRunResult) missing = NULL;
  g_autoptr(SubagentRunResult) no_key = NULL;

  fx_open (&fx, "{'steps': []}", NULL);
  sat_write_file (fx.root, ".subagent/agents/ghost.yaml", "name: ghost\nmodel: gpt-imaginary\n");
  g_clear_object (&fx.manager);
  fx.manager = subagent_manager_new (fx.root, NULL);
  missing = fx_run (&fx, "ghost", "hi");
  g_assert_cmpint (subagent_run_result_get_status (missing), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (missing), "“models.gpt-imaginary”"));

  g_unsetenv (MTS_KEY_ENV);
  no_key = fx_run (&fx, "helper", "hi");
  g_assert_cmpint (subagent_run_result_get_status (no_key), ==, SUBAGENT_RUN_STATUS_FAILED);
  g_assert_nonnull (strstr (subagent_run_result_get_message (no_key), MTS_KEY_ENV " (models.test.api_key_env)"));
  g_assert_cmpuint (n_requests (&fx), ==, 0);
  g_setenv (MTS_KEY_ENV, MTS_KEY, TRUE);
  fx_close (&fx);
}

static JsonNode *
lookup_ticket (SubagentTool  *tool,
               JsonObject    *arguments,
               GCancellable  *cancellable,
               gpointer       user_data,
               GError       **error)
{
  g_autofree char *text = g_strdup_printf ("ticket %s: the build is red",
                                           json_object_get_string_member (arguments, "id"));
  return json_node_init_string (json_node_alloc (), text);
}

/* The host's own tools reach the model through the child's narrowed view. */
static void
test_host_tools (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentSimpleToolRegistry) host = subagent_simple_tool_registry_new ();
  g_autoptr(SubagentTool) ticket = NULL;
  g_autoptr(SubagentTool) deploy = NULL;
  g_autoptr(JsonNode) schema = json_from_string ("{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}}}", NULL);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *names = NULL, *content = NULL;

  fx_open (&fx, "{'steps': ["
                "  {'tool_calls': [{'name': 'lookup_ticket', 'arguments': {'id': 'T-7'}}]},"
                "  {'say': 'red'}]}", NULL);
  sat_write_file (fx.root, ".subagent/agents/triage.yaml",
                  "name: triage\nmodel: test\ntools: [Read, lookup_ticket]\n");
  ticket = subagent_tool_new ("lookup_ticket", "Looks a ticket up", json_node_get_object (schema), FALSE,
                              lookup_ticket, NULL, NULL);
  deploy = subagent_tool_new ("deploy", "Deploys", json_node_get_object (schema), TRUE, lookup_ticket, NULL, NULL);
  subagent_simple_tool_registry_add (host, ticket);
  subagent_simple_tool_registry_add (host, deploy);
  g_clear_object (&fx.manager);
  fx.manager = subagent_manager_new (fx.root, NULL);
  subagent_manager_set_tools (fx.manager, SUBAGENT_TOOL_REGISTRY (host));
  result = fx_run (&fx, "triage", "what does T-7 say?");
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  names = tool_names (&fx, 0);
  g_assert_cmpstr (names, ==, "Read,lookup_ticket");
  content = tool_result (&fx, 1, "call_0");
  g_assert_cmpstr (content, ==, "ticket T-7: the build is red");
  fx_close (&fx);
}

/* `subagentctl run --model NAME` picks the parent's model. */
static void
test_cli_model_option (void)
{
  Fx fx = { 0 };
  g_autofree char *config = NULL;
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonObject) body = NULL;

  fx_open (&fx, "{'steps': [{'say': 'from the CLI'}]}", NULL);
  config = g_strdup_printf ("models:\n"
                            "  big: { base_url: 'http://127.0.0.1:%u/v1', model: big-one, api_key_env: " MTS_KEY_ENV " }\n"
                            "  small: { base_url: 'http://127.0.0.1:%u/v1', model: small-one, api_key_env: " MTS_KEY_ENV " }\n"
                            "default_model: big\n", fx.server->port, fx.server->port);
  sat_write_file (fx.root, ".subagent/config.yaml", config);
  sat_write_file (fx.root, ".subagent/agents/plain.yaml", "name: plain\nmodel: inherit\n");
  g_assert_cmpint (sat_run_ctl (fx.root, &out, &err, "run", "--root", fx.root, "--def", "plain", "--model", "small",
                                "--json", "--", "hello", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "\"final_answer\" : \"from the CLI\""));
  body = mts_server_request_body (fx.server, 0);
  g_assert_cmpstr (json_object_get_string_member (body, "model"), ==, "small-one");
  fx_close (&fx);
}

static void
waited (GObject *source, GAsyncResult *res, gpointer data)
{
  SubagentRunResult **out = data;
  g_autoptr(GError) error = NULL;

  *out = subagent_supervisor_wait_finish (SUBAGENT_SUPERVISOR (source), res, &error);
  g_assert_no_error (error);
}

static SubagentRunResult *
wait_result (SubagentSupervisor *supervisor,
             const char         *run_id)
{
  SubagentRunResult *result = NULL;

  subagent_supervisor_wait_async (supervisor, run_id, NULL, waited, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return result;
}

static void
on_event (SubagentSupervisor *supervisor,
          SubagentEvent      *event,
          gpointer            data)
{
  if (subagent_event_get_kind (event) == SUBAGENT_EVENT_USAGE)
    (*(guint *) data)++;
}

/* The kept transcript lets a follow-up continue the conversation. */
static void
test_follow_up_continues (void)
{
  Fx fx = { 0 };
  g_autoptr(SubagentSupervisor) supervisor = NULL;
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(SubagentRunResult) first = NULL;
  g_autoptr(SubagentRunResult) second = NULL;
  g_autoptr(JsonArray) messages = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *run_id = NULL;
  g_autofree char *again = NULL;
  guint usage_events = 0;
  guint n;

  fx_open (&fx, "{'steps': [{'say': 'The first answer.'}, {'say': 'The second answer.'}]}", NULL);
  supervisor = g_object_new (SUBAGENT_TYPE_SUPERVISOR, "manager", fx.manager, NULL);
  g_signal_connect (supervisor, "event", G_CALLBACK (on_event), &usage_events);
  subagent_run_options_set_def_name (options, "helper");
  run_id = subagent_supervisor_spawn (supervisor, "first question", options, &error);
  g_assert_no_error (error);
  first = wait_result (supervisor, run_id);
  g_assert_cmpstr (subagent_run_result_get_final_answer (first), ==, "The first answer.");
  again = subagent_supervisor_follow_up (supervisor, run_id, "second question", &error);
  g_assert_no_error (error);
  second = wait_result (supervisor, again);
  g_assert_cmpstr (subagent_run_result_get_final_answer (second), ==, "The second answer.");

  messages = request_messages (&fx, 1);
  n = json_array_get_length (messages);
  g_assert_cmpuint (n, ==, 4);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (messages, 1), "content"), ==, "first question");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (messages, 2), "content"), ==, "The first answer.");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (messages, 3), "content"), ==, "second question");
  /* Each turn's running totals reached the host as usage events. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (usage_events, >=, 2);
  g_object_unref (subagent_supervisor_shutdown (supervisor, 5000, NULL));
  fx_close (&fx);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/model/plain-answer", test_plain_answer);
  g_test_add_func ("/model/one-tool-call", test_one_tool_call);
  g_test_add_func ("/model/several-calls-per-turn", test_several_calls_per_turn);
  g_test_add_func ("/model/arguments-in-fragments", test_arguments_in_fragments);
  g_test_add_func ("/model/invalid-argument-json", test_invalid_argument_json);
  g_test_add_func ("/model/denied-from-another-process", test_denied_from_another_process);
  g_test_add_func ("/model/retry/429-then-success", test_retry_after_429);
  g_test_add_func ("/model/retry/500-three-times", test_500_three_times);
  g_test_add_func ("/model/retry/empty-stream-then-whole-answer", test_empty_stream_retried);
  g_test_add_func ("/model/retry/unreachable-server", test_unreachable_server);
  g_test_add_func ("/model/stalled-stream", test_stalled_stream);
  g_test_add_func ("/model/cancel-mid-stream", test_cancel_mid_stream);
  g_test_add_func ("/model/usage-missing", test_usage_missing);
  g_test_add_data_func ("/model/style/llamacpp", "llamacpp", test_server_style);
  g_test_add_data_func ("/model/style/ollama", "ollama", test_server_style);
  g_test_add_data_func ("/model/style/openai", "openai", test_server_style);
  g_test_add_func ("/model/limits/max-iterations", test_max_iterations);
  g_test_add_func ("/model/limits/budget", test_budget);
  g_test_add_func ("/model/limits/run-timeout", test_run_timeout);
  g_test_add_func ("/model/tools/large-results-cut", test_large_results_cut);
  g_test_add_func ("/model/claude-agent-in-worktree", test_claude_agent_in_worktree);
  g_test_add_func ("/model/tools/bash-and-key", test_bash_and_key);
  g_test_add_func ("/model/tools/paths-stay-inside", test_paths_stay_inside);
  g_test_add_func ("/model/tools/edit-needs-unique-match", test_edit_needs_unique_match);
  g_test_add_func ("/model/tools/outside-registry", test_tool_outside_registry);
  g_test_add_func ("/model/config/missing-model-and-key", test_missing_model_and_key);
  g_test_add_func ("/model/follow-up-continues", test_follow_up_continues);
  g_test_add_func ("/model/host-tools", test_host_tools);
  g_test_add_func ("/model/cli-model-option", test_cli_model_option);
  return g_test_run ();
}
