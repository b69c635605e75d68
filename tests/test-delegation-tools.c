/* test-delegation-tools.c: the delegation tools of reference 001 — their
 * schemas, what they answer, how they fail.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "supervisor-test-support.h"

typedef struct {
  char *root;
  GateRunner *gate;
  SubagentManager *manager;
  SubagentSupervisor *supervisor;
  SubagentSimpleToolRegistry *registry;
} Fixture;

static SubagentRunOutcome *
decide (SubagentRunContext *context,
        gpointer            user_data)
{
  const char *task = subagent_run_context_get_task (context);
  g_autofree char *answer = NULL;

  if (g_str_equal (task, "crash"))
    return subagent_run_outcome_new (SUBAGENT_STOP_REASON_ERROR, 1, 0, 0, "", "",
                                     "Child crash exited with status 1; its stderr ends with:\n"
                                     "Traceback (most recent call last):\n  File \"agent.py\", line 3\nKeyError: 'x'");
  answer = g_strdup_printf ("%s did: %s", subagent_def_get_name (subagent_run_context_get_definition (context)), task);
  return sst_complete (answer, 0.5);
}

static void
fixture_open (Fixture *f,
              gint     max_agents)
{
  f->root = sst_make_root (FALSE,
                           "Code-Reviewer", "name: Code-Reviewer\ndescription: Reviews code for bugs\n",
                           "helper", "name: helper\n",
                           "batch", "name: batch\n",
                           NULL);
  sat_write_file (f->root, ".subagent/teams/duo.yaml", "name: duo\nmembers: [helper, Code-Reviewer]\naggregator: helper\n");
  f->gate = gate_runner_new ();
  gate_runner_set_decide (f->gate, decide, NULL);
  f->manager = sst_manager_new (f->root, f->gate);
  f->supervisor = sst_supervisor_new (f->manager, 2, max_agents, -1);
  f->registry = subagent_simple_tool_registry_new ();
  subagent_delegation_tools_register (f->supervisor, f->registry);
}

static void
fixture_close (Fixture *f)
{
  g_autoptr(SubagentShutdownReport) report = subagent_supervisor_shutdown (f->supervisor, 5000, NULL);

  g_assert_true (subagent_shutdown_report_get_clean (report));
  sst_flush_main ();
  g_clear_object (&f->registry);  /* the tools hold the supervisor */
  g_clear_object (&f->supervisor);
  g_clear_object (&f->manager);
  g_clear_object (&f->gate);
  sat_rm_rf (f->root);
  g_free (f->root);
}

/* The registry keeps its own reference: the test only looks. */
static SubagentTool *
borrow_tool (SubagentSimpleToolRegistry *registry,
             const char                 *name)
{
  g_autoptr(SubagentTool) tool = subagent_tool_registry_lookup (SUBAGENT_TOOL_REGISTRY (registry), name);

  g_assert_nonnull (tool);
  return tool;
}

static JsonObject *
args (const char *json)
{
  g_autoptr(JsonNode) node = json_from_string (json, NULL);

  g_assert_nonnull (node);
  return json_object_ref (json_node_get_object (node));
}

static void
assert_shared_inputs (JsonObject *properties)
{
  JsonArray *modes = json_object_get_array_member (json_object_get_object_member (properties, "isolation"), "enum");

  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (properties, "max_iterations"), "type"),
                   ==, "integer");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (properties, "max_tool_calls"), "type"),
                   ==, "integer");
  /* The live list: the built-in modes, then what the plugins of the
   * search path provide (the tests' path: worktree, snapshot, docker). */
  g_assert_cmpuint (json_array_get_length (modes), ==, 5);
  g_assert_cmpstr (json_array_get_string_element (modes, 0), ==, "shared");
  g_assert_cmpstr (json_array_get_string_element (modes, 1), ==, "auto");
  g_assert_cmpstr (json_array_get_string_element (modes, 2), ==, "worktree");
  g_assert_cmpstr (json_array_get_string_element (modes, 3), ==, "directory-snapshot");
  g_assert_cmpstr (json_array_get_string_element (modes, 4), ==, "docker");
}

static void
assert_required (JsonObject         *schema,
                 const char * const *names)
{
  JsonArray *required = json_object_get_array_member (schema, "required");

  g_assert_cmpuint (json_array_get_length (required), ==, g_strv_length ((char **) names));
  for (guint i = 0; names[i] != NULL; i++)
    g_assert_cmpstr (json_array_get_string_element (required, i), ==, names[i]);
  g_assert_false (json_object_get_boolean_member (schema, "additionalProperties"));
  g_assert_cmpstr (json_object_get_string_member (schema, "type"), ==, "object");
}

static void
test_registers_tools_with_schemas (void)
{
  Fixture f = { 0, };
  g_auto(GStrv) names = NULL;
  SubagentTool *tool;
  JsonObject *schema, *items;

  fixture_open (&f, -1);
  names = subagent_tool_registry_list_names (SUBAGENT_TOOL_REGISTRY (f.registry));
  /* A definition named "batch" would shadow subagent_batch: no tool for it. */
  g_assert_cmpstrv (names, ((const char *[]) { "subagent", "subagent_batch", "subagent_code_reviewer",
                                               "subagent_helper", "team", NULL }));

  for (guint i = 0; names[i] != NULL; i++)
    {
      tool = borrow_tool (f.registry, names[i]);
      schema = subagent_tool_get_input_schema (tool);
      assert_shared_inputs (json_object_get_object_member (schema, "properties"));
      g_assert_false (subagent_tool_get_destructive (tool));
    }
  tool = borrow_tool (f.registry, "subagent");
  assert_required (subagent_tool_get_input_schema (tool), (const char * const []) { "task", NULL });
  tool = borrow_tool (f.registry, "subagent_code_reviewer");
  g_assert_cmpstr (subagent_tool_get_description (tool), ==, "Reviews code for bugs");
  assert_required (subagent_tool_get_input_schema (tool), (const char * const []) { "task", NULL });
  tool = borrow_tool (f.registry, "team");
  assert_required (subagent_tool_get_input_schema (tool), (const char * const []) { "task", "team_name", NULL });

  tool = borrow_tool (f.registry, "subagent_batch");
  schema = subagent_tool_get_input_schema (tool);
  assert_required (schema, (const char * const []) { "tasks", NULL });
  items = json_object_get_object_member (json_object_get_object_member (json_object_get_object_member (schema, "properties"),
                                                                        "tasks"), "items");
  assert_required (items, (const char * const []) { "task", NULL });
  assert_shared_inputs (json_object_get_object_member (items, "properties"));
  g_assert_true (json_object_has_member (json_object_get_object_member (items, "properties"), "def_name"));

  {
    g_autofree char *reviewer = subagent_delegation_tool_name_for_def ("Code-Reviewer");
    g_autofree char *batch = subagent_delegation_tool_name_for_def ("batch");

    g_assert_cmpstr (reviewer, ==, "subagent_code_reviewer");
    g_assert_null (batch);
  }
  fixture_close (&f);
}

static void
test_children_never_see_them (void)
{
  Fixture f = { 0, };
  g_autoptr(SubagentChildToolRegistry) child = NULL;
  g_auto(GStrv) names = NULL;

  fixture_open (&f, -1);
  child = subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (f.registry), NULL, NULL);
  names = subagent_tool_registry_list_names (SUBAGENT_TOOL_REGISTRY (child));
  for (guint i = 0; names[i] != NULL; i++)
    g_assert_false (g_str_has_prefix (names[i], "subagent"));
  g_assert_false (subagent_tool_registry_has_tool (SUBAGENT_TOOL_REGISTRY (child), "subagent_batch"));
  g_assert_false (subagent_tool_registry_has_tool (SUBAGENT_TOOL_REGISTRY (child), "subagent_helper"));
  fixture_close (&f);
}

static void
test_single_returns_envelope (void)
{
  Fixture f = { 0, };
  g_autoptr(JsonObject) arguments = args ("{\"task\": \"look at main.c\", \"max_iterations\": 3, \"isolation\": \"shared\"}");
  g_autoptr(JsonNode) answer = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *envelope;
  SubagentRunContext *context;

  fixture_open (&f, -1);
  answer = subagent_tool_registry_invoke (SUBAGENT_TOOL_REGISTRY (f.registry), "subagent_code_reviewer", arguments,
                                          NULL, &error);
  g_assert_no_error (error);
  envelope = json_node_get_object (answer);
  g_assert_cmpstr (json_object_get_string_member (envelope, "output"), ==, "Code-Reviewer did: look at main.c");
  g_assert_false (json_object_has_member (envelope, "status"));
  g_assert_false (json_object_has_member (envelope, "cost_cents"));
  g_assert_nonnull (json_object_get_string_member (envelope, "continuation"));
  context = gate_runner_get_context (f.gate, "look at main.c");
  g_assert_cmpuint (subagent_run_context_get_max_iterations (context), ==, 3);
  g_assert_cmpuint (subagent_run_context_get_depth (context), ==, 1);
  fixture_close (&f);
}

static void
test_child_failure_names_session (void)
{
  Fixture f = { 0, };
  g_autoptr(JsonObject) arguments = args ("{\"task\": \"crash\"}");
  g_autoptr(JsonNode) answer = NULL;
  g_autoptr(GError) error = NULL;
  const char *run_id;

  fixture_open (&f, -1);
  answer = subagent_tool_registry_invoke (SUBAGENT_TOOL_REGISTRY (f.registry), "subagent_helper", arguments, NULL, &error);
  g_assert_null (answer);
  g_assert_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_FAILED);
  run_id = subagent_run_context_get_run_id (gate_runner_get_context (f.gate, "crash"));
  g_assert_nonnull (strstr (error->message, run_id));
  g_assert_nonnull (strstr (error->message, "has the story"));
  g_assert_nonnull (strstr (error->message, "exited with status 1"));
  /* No stack trace for the parent's model to pay for. */
  g_assert_null (strstr (error->message, "Traceback"));
  g_assert_null (strstr (error->message, "KeyError"));
  fixture_close (&f);
}

static void
test_agent_cap_raised_through (void)
{
  Fixture f = { 0, };
  g_autoptr(JsonObject) arguments = args ("{\"task\": \"once\"}");
  g_autoptr(JsonNode) first = NULL;
  g_autoptr(JsonNode) second = NULL;
  g_autoptr(GError) error = NULL;

  fixture_open (&f, 1);
  first = subagent_tool_registry_invoke (SUBAGENT_TOOL_REGISTRY (f.registry), "subagent", arguments, NULL, &error);
  g_assert_no_error (error);
  second = subagent_tool_registry_invoke (SUBAGENT_TOOL_REGISTRY (f.registry), "subagent", arguments, NULL, &error);
  g_assert_null (second);
  g_assert_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_AGENT_CAP);
  fixture_close (&f);
}

static void
test_batch_and_team_tools (void)
{
  Fixture f = { 0, };
  g_autoptr(JsonObject) batch_args = args ("{\"tasks\": [{\"task\": \"one\"}, {\"task\": \"crash\"}, "
                                           "{\"task\": \"three\", \"def_name\": \"Code-Reviewer\", \"max_tool_calls\": 2}],"
                                           " \"max_iterations\": 4}");
  g_autoptr(JsonObject) team_args = args ("{\"task\": \"review it\", \"team_name\": \"duo\"}");
  g_autoptr(JsonNode) batch = NULL;
  g_autoptr(JsonNode) team = NULL;
  g_autoptr(GError) error = NULL;
  JsonArray *results, *members;

  fixture_open (&f, -1);
  batch = subagent_tool_registry_invoke (SUBAGENT_TOOL_REGISTRY (f.registry), "subagent_batch", batch_args, NULL, &error);
  g_assert_no_error (error);
  results = json_object_get_array_member (json_node_get_object (batch), "results");
  g_assert_cmpuint (json_array_get_length (results), ==, 3);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (results, i), "batch_index"), ==, i);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (results, 0), "output"), ==, "default did: one");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (results, 1), "status"), ==, "failed");
  g_assert_nonnull (strstr (json_object_get_string_member (json_array_get_object_element (results, 1), "reason"),
                            "has the story"));
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (results, 2), "output"), ==,
                   "Code-Reviewer did: three");
  /* Shared inputs are the items' defaults; an item's own value wins. */
  g_assert_cmpuint (subagent_run_context_get_max_iterations (gate_runner_get_context (f.gate, "three")), ==, 4);
  g_assert_cmpuint (subagent_run_context_get_max_tool_calls (gate_runner_get_context (f.gate, "three")), ==, 2);
  g_assert_cmpint (subagent_run_context_get_batch_index (gate_runner_get_context (f.gate, "three")), ==, 2);

  team = subagent_tool_registry_invoke (SUBAGENT_TOOL_REGISTRY (f.registry), "team", team_args, NULL, &error);
  g_assert_no_error (error);
  members = json_object_get_array_member (json_node_get_object (team), "members");
  g_assert_cmpuint (json_array_get_length (members), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (members, 1), "member"), ==, "Code-Reviewer");
  g_assert_true (g_str_has_prefix (json_object_get_string_member (json_node_get_object (team), "output"),
                                   "helper did: review it\n\nThe members of team “duo” answered:"));
  fixture_close (&f);
}

static void
test_invalid_arguments (void)
{
  static const struct {
    const char *tool;
    const char *json;
  } bad[] = {
    { "subagent", "{}" },
    { "subagent", "{\"task\": \"x\", \"sudo\": true}" },
    { "subagent", "{\"task\": \"x\", \"max_iterations\": 0}" },
    { "subagent", "{\"task\": \"x\", \"isolation\": \"moon\"}" },
    { "subagent_batch", "{\"tasks\": []}" },
    { "subagent_batch", "{\"tasks\": [{\"task\": \"x\", \"rm\": 1}]}" },
    { "team", "{\"task\": \"x\", \"team_name\": \"nobody\"}" },
  };
  Fixture f = { 0, };

  fixture_open (&f, -1);
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(JsonObject) arguments = args (bad[i].json);
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) answer = subagent_tool_registry_invoke (SUBAGENT_TOOL_REGISTRY (f.registry), bad[i].tool,
                                                                  arguments, NULL, &error);

      g_assert_null (answer);
      g_assert_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_INVALID_ARGUMENTS);
    }
  g_assert_cmpuint (gate_runner_get_n_started (f.gate), ==, 0);
  fixture_close (&f);
}

typedef struct {
  SubagentToolRegistry *registry;
  JsonNode *answer;
  GError *error;
  gboolean done;
} ThreadCall;

static gpointer
call_in_thread (gpointer data)
{
  ThreadCall *call = data;
  g_autoptr(JsonObject) arguments = args ("{\"task\": \"from a worker\"}");

  call->answer = subagent_tool_registry_invoke (call->registry, "subagent", arguments, NULL, &call->error);
  g_atomic_int_set (&call->done, TRUE);
  g_main_context_wakeup (NULL);
  return NULL;
}

static void
test_called_from_worker_thread (void)
{
  Fixture f = { 0, };
  ThreadCall call = { NULL, NULL, NULL, FALSE };
  GThread *thread;

  fixture_open (&f, -1);
  call.registry = SUBAGENT_TOOL_REGISTRY (f.registry);
  /* The main thread keeps its loop running, as a host's UI would. */
  thread = g_thread_new ("tool", call_in_thread, &call);
  while (!g_atomic_int_get (&call.done))
    g_main_context_iteration (NULL, TRUE);
  g_thread_join (thread);
  g_assert_no_error (call.error);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (call.answer), "output"), ==,
                   "default did: from a worker");
  json_node_unref (call.answer);
  fixture_close (&f);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/delegation-tools/registers-tools-with-schemas", test_registers_tools_with_schemas);
  g_test_add_func ("/delegation-tools/children-never-see-them", test_children_never_see_them);
  g_test_add_func ("/delegation-tools/single/returns-the-envelope", test_single_returns_envelope);
  g_test_add_func ("/delegation-tools/single/child-failure-names-its-session", test_child_failure_names_session);
  g_test_add_func ("/delegation-tools/single/agent-cap-raised-through", test_agent_cap_raised_through);
  g_test_add_func ("/delegation-tools/batch-and-team", test_batch_and_team_tools);
  g_test_add_func ("/delegation-tools/invalid-arguments", test_invalid_arguments);
  g_test_add_func ("/delegation-tools/called-from-a-worker-thread", test_called_from_worker_thread);
  return g_test_run ();
}
