/* test-routing.c: issue 19 — skills and risk levels route `isolation: auto`
 * through the risk policy (config.yaml `routing:`): the default policy per
 * level, a custom policy naming the in-tree fixture backend (test-echo),
 * fallback when docker is unavailable (reason in the result, lineage and
 * audit), strict mode, the skill's front matter and the caller's risk, the
 * skill's allowed tools, skills outside the root, batch items routed one by
 * one, and `subagentctl run --isolation auto --risk low`.
 *
 * The engine is made unavailable on purpose (a docker host socket that does
 * not exist), so the fallback paths are the same on every machine.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <unistd.h>

#include "test-support.h"

/* ---- a runner that records what the child would get ---- */

#define TEST_TYPE_RECORDING_RUNNER (test_recording_runner_get_type ())
G_DECLARE_FINAL_TYPE (TestRecordingRunner, test_recording_runner, TEST, RECORDING_RUNNER, GObject)

struct _TestRecordingRunner
{
  GObject parent_instance;
  GPtrArray *contexts;   /* SubagentRunContext*, in start order */
  GMutex lock;
};

static void test_recording_runner_iface_init (SubagentRunnerInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestRecordingRunner, test_recording_runner, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SUBAGENT_TYPE_RUNNER, test_recording_runner_iface_init))

static void
recording_run_async (SubagentRunner      *runner,
                     SubagentRunContext  *context,
                     GCancellable        *cancellable,
                     GAsyncReadyCallback  callback,
                     gpointer             user_data)
{
  TestRecordingRunner *self = TEST_RECORDING_RUNNER (runner);
  g_autoptr(GTask) task = g_task_new (runner, cancellable, callback, user_data);

  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->contexts, g_object_ref (context));
  g_mutex_unlock (&self->lock);
  g_task_return_pointer (task, subagent_run_outcome_new (SUBAGENT_STOP_REASON_COMPLETE, 1, 0, 0.0, "done", "", NULL),
                         g_object_unref);
}

static SubagentRunOutcome *
recording_run_finish (SubagentRunner  *runner,
                      GAsyncResult    *result,
                      GError         **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
test_recording_runner_iface_init (SubagentRunnerInterface *iface)
{
  iface->run_async = recording_run_async;
  iface->run_finish = recording_run_finish;
}

static void
test_recording_runner_finalize (GObject *object)
{
  TestRecordingRunner *self = TEST_RECORDING_RUNNER (object);

  g_ptr_array_unref (self->contexts);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (test_recording_runner_parent_class)->finalize (object);
}

static void
test_recording_runner_class_init (TestRecordingRunnerClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_recording_runner_finalize;
}

static void
test_recording_runner_init (TestRecordingRunner *self)
{
  self->contexts = g_ptr_array_new_with_free_func (g_object_unref);
  g_mutex_init (&self->lock);
}

/* ---- fixtures ---- */

typedef struct {
  char *root;
  SubagentManager *manager;
  TestRecordingRunner *runner;
} Fixture;

static const char no_engine[] = "docker:\n  host: unix:///nonexistent/subagent-test-docker.sock\n";

static JsonNode *
tool_ok (SubagentTool  *tool,
         JsonObject    *arguments,
         GCancellable  *cancellable,
         gpointer       user_data,
         GError       **error)
{
  return json_node_init_string (json_node_alloc (), "ok");
}

/* A plain directory (not git): without a risk level auto picks
 * directory-snapshot here. @config is config.yaml's text beside no_engine. */
static void
fixture_set_up (Fixture    *f,
                const char *config)
{
  g_autoptr(GError) error = NULL;
  /* The in-tree fixture backend test-echo is found through plugins.path. */
  g_autofree char *fixture = g_test_build_filename (G_TEST_BUILT, "fixtures", "plugins", "test-isolation", NULL);
  g_autofree char *plugins = g_strdup_printf ("plugins:\n  path: [\"%s\"]\n", fixture);
  g_autofree char *config_text = g_strconcat (no_engine, plugins, config ? config : "", NULL);
  g_autoptr(SubagentSimpleToolRegistry) tools = subagent_simple_tool_registry_new ();
  const char * const names[] = { "Read", "Write", "Grep", "Bash" };

  f->root = sat_make_temp_dir ("routing");
  sat_write_file (f->root, "README", "hello\n");
  sat_write_file (f->root, ".subagent/config.yaml", config_text);
  sat_write_file (f->root, ".subagent/agents/worker.md", "---\nname: worker\n---\nYou work.\n");
  sat_write_file (f->root, "skills/lint/SKILL.md",
                  "---\nname: lint\ndescription: Lints the code\nrisk: low\nallowed-tools: Read, Grep\n---\n"
                  "Run the linter and report.\n");
  sat_write_file (f->root, "skills/wild/SKILL.md",
                  "---\nname: wild\ndescription: Touches everything\nrisk: critical\n---\nBe careful.\n");
  sat_write_file (f->root, "skills/plain/SKILL.md", "---\nname: plain\ndescription: No risk named\n---\nJust do it.\n");
  f->manager = subagent_manager_new (f->root, &error);
  g_assert_no_error (error);
  f->runner = g_object_new (TEST_TYPE_RECORDING_RUNNER, NULL);
  subagent_manager_set_runner (f->manager, SUBAGENT_RUNNER (f->runner));
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(SubagentTool) tool = subagent_tool_new (names[i], names[i], NULL, FALSE, tool_ok, NULL, NULL);

      subagent_simple_tool_registry_add (tools, tool);
    }
  subagent_manager_set_tools (f->manager, SUBAGENT_TOOL_REGISTRY (tools));
}

static void
fixture_tear_down (Fixture *f)
{
  g_clear_object (&f->manager);
  g_clear_object (&f->runner);
  sat_rm_rf (f->root);
  g_free (f->root);
}

static SubagentRunResult *
run_with (Fixture           *f,
          const char        *skill,
          SubagentRiskLevel  risk,
          const char        *isolation)
{
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(GError) error = NULL;
  SubagentRunResult *result;

  subagent_run_options_set_def_name (options, "worker");
  subagent_run_options_set_isolation (options, isolation ? isolation : "auto");
  subagent_run_options_set_skill_path (options, skill);
  subagent_run_options_set_risk_level (options, risk);
  result = subagent_manager_run (f->manager, "do the thing", options, NULL, &error);
  g_assert_no_error (error);
  return result;
}

static SubagentRunContext *
last_context (Fixture *f)
{
  g_assert_cmpuint (f->runner->contexts->len, >, 0);
  return f->runner->contexts->pdata[f->runner->contexts->len - 1];
}

static const char *
routing_of (SubagentRunResult *result)
{
  return subagent_lineage_get_routing (subagent_run_result_get_lineage (result));
}

/* ---- tests ---- */

/* The reference policy, level by level; limits of high and critical. */
static void
test_default_policy_levels (void)
{
  g_autoptr(SubagentRoutingPolicy) policy = subagent_routing_policy_new_default ();
  const char * const *b;

  b = subagent_routing_policy_get_backends (policy, SUBAGENT_RISK_LEVEL_LOW);
  g_assert_cmpstrv (b, ((const char * const []) { "directory-snapshot", NULL }));
  b = subagent_routing_policy_get_backends (policy, SUBAGENT_RISK_LEVEL_MEDIUM);
  g_assert_cmpstrv (b, ((const char * const []) { "docker", "directory-snapshot", NULL }));
  b = subagent_routing_policy_get_backends (policy, SUBAGENT_RISK_LEVEL_HIGH);
  g_assert_cmpstrv (b, ((const char * const []) { "docker", NULL }));
  g_assert_cmpfloat (subagent_routing_policy_get_cpu_quota (policy, SUBAGENT_RISK_LEVEL_HIGH), ==, 1.0);
  g_assert_cmpstr (subagent_routing_policy_get_memory_limit (policy, SUBAGENT_RISK_LEVEL_HIGH), ==, "512m");
  g_assert_cmpstr (subagent_routing_policy_get_network (policy, SUBAGENT_RISK_LEVEL_HIGH), ==, "none");
  b = subagent_routing_policy_get_backends (policy, SUBAGENT_RISK_LEVEL_CRITICAL);
  g_assert_cmpstrv (b, ((const char * const []) { "docker", NULL }));
  g_assert_cmpfloat (subagent_routing_policy_get_cpu_quota (policy, SUBAGENT_RISK_LEVEL_CRITICAL), ==, 0.5);
  g_assert_cmpstr (subagent_routing_policy_get_memory_limit (policy, SUBAGENT_RISK_LEVEL_CRITICAL), ==, "256m");
  g_assert_cmpint (subagent_routing_policy_get_permission_ceiling (policy, SUBAGENT_RISK_LEVEL_CRITICAL), ==,
                   SUBAGENT_PERMISSION_MODE_READ_ONLY);
  g_assert_false (subagent_routing_policy_get_strict (policy));
}

/* Runs through the default policy with no engine: low → snapshot; medium
 * → snapshot after docker, with the reason in message, lineage and audit;
 * high and critical → docker only, so an error naming it. */
static void
test_default_policy_runs (void)
{
  Fixture f;
  g_autoptr(SubagentRunResult) low = NULL;
  g_autoptr(SubagentRunResult) medium = NULL;
  g_autoptr(SubagentRunResult) high = NULL;
  g_autoptr(SubagentRunResult) critical = NULL;
  g_autoptr(GPtrArray) audit = NULL;
  g_autoptr(GError) error = NULL;
  gboolean audited = FALSE;

  fixture_set_up (&f, NULL);
  low = run_with (&f, NULL, SUBAGENT_RISK_LEVEL_LOW, NULL);
  g_assert_cmpint (subagent_run_result_get_status (low), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_lineage_get_isolation (subagent_run_result_get_lineage (low)), ==, "directory-snapshot");
  g_assert_cmpstr (routing_of (low), ==, "low risk: directory-snapshot");

  medium = run_with (&f, NULL, SUBAGENT_RISK_LEVEL_MEDIUM, NULL);
  g_assert_cmpint (subagent_run_result_get_status (medium), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_lineage_get_isolation (subagent_run_result_get_lineage (medium)), ==, "directory-snapshot");
  g_assert_true (g_str_has_prefix (routing_of (medium), "medium risk: docker unavailable ("));
  g_assert_true (g_str_has_suffix (routing_of (medium), "), used directory-snapshot"));
  g_assert_nonnull (strstr (subagent_run_result_get_message (medium), "medium risk: docker unavailable"));

  {
    g_autofree char *audit_path = g_build_filename (f.root, ".subagent", "audit.jsonl", NULL);
    g_autoptr(SubagentAuditLog) log = subagent_audit_log_new (audit_path);

    audit = subagent_audit_log_read (log, NULL, &error);
  }
  g_assert_no_error (error);
  for (guint i = 0; i < audit->len; i++)
    {
      g_autoptr(JsonNode) entry = json_node_init_object (json_node_alloc (), audit->pdata[i]);
      g_autofree char *line = json_to_string (entry, FALSE);

      if (strstr (line, "docker unavailable") != NULL && strstr (line, "\"risk_level\":\"medium\"") != NULL)
        audited = TRUE;
    }
  g_assert_true (audited);

  high = run_with (&f, NULL, SUBAGENT_RISK_LEVEL_HIGH, NULL);
  g_assert_cmpint (subagent_run_result_get_status (high), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (high), "high risk: no backend of routing.high"));
  g_assert_nonnull (strstr (subagent_run_result_get_message (high), "docker unavailable"));
  critical = run_with (&f, NULL, SUBAGENT_RISK_LEVEL_CRITICAL, NULL);
  g_assert_cmpint (subagent_run_result_get_status (critical), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_cmpuint (f.runner->contexts->len, ==, 2);  /* no child started for high or critical */
  fixture_tear_down (&f);
}

/* A custom policy naming the in-tree fixture backend (test-echo, from
 * tests/fixtures/plugins/test-isolation) routes there, with its limits
 * applied as ceilings and its permission ceiling. */
static void
test_custom_policy_fixture_backend (void)
{
  Fixture f;
  g_autoptr(SubagentRunResult) result = NULL;
  SubagentIsolationContext *isolation;

  fixture_set_up (&f, "routing:\n"
                      "  high:\n"
                      "    backends: [not-installed-backend, test-echo]\n"
                      "    cpu: 0.25\n"
                      "    memory: 128MiB\n"
                      "    permission_ceiling: read-only\n");
  result = run_with (&f, NULL, SUBAGENT_RISK_LEVEL_HIGH, NULL);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_lineage_get_isolation (subagent_run_result_get_lineage (result)), ==, "test-echo");
  g_assert_true (g_str_has_prefix (routing_of (result), "high risk: not-installed-backend not installed ("));
  g_assert_true (g_str_has_suffix (routing_of (result), "used test-echo"));
  isolation = subagent_run_context_get_isolation (last_context (&f));
  g_assert_cmpstr (subagent_isolation_context_get_isolation (isolation), ==, "test-echo");
  g_assert_cmpfloat (subagent_isolation_context_get_cpu_quota (isolation), ==, 0.25);
  g_assert_cmpstr (subagent_isolation_context_get_memory_limit (isolation), ==, "128m");
  g_assert_cmpint (subagent_run_context_get_permission_mode (last_context (&f)), ==, SUBAGENT_PERMISSION_MODE_READ_ONLY);
  fixture_tear_down (&f);
}

/* routing.strict: an unavailable first choice is an error, not a fallback. */
static void
test_strict_is_error (void)
{
  Fixture f;
  g_autoptr(SubagentRunResult) result = NULL;

  fixture_set_up (&f, "routing:\n  strict: true\n");
  result = run_with (&f, NULL, SUBAGENT_RISK_LEVEL_MEDIUM, NULL);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (result), "medium risk: docker unavailable"));
  g_assert_nonnull (strstr (subagent_run_result_get_message (result), "routing.strict"));
  g_assert_cmpuint (f.runner->contexts->len, ==, 0);
  fixture_tear_down (&f);
}

/* The skill's own risk routes; the caller's wins; a skill without one is
 * medium; without skill or risk, auto keeps today's rule. */
static void
test_risk_from_front_matter_and_caller (void)
{
  Fixture f;
  g_autoptr(SubagentRunResult) own = NULL;
  g_autoptr(SubagentRunResult) overridden = NULL;
  g_autoptr(SubagentRunResult) plain = NULL;
  g_autoptr(SubagentRunResult) none = NULL;
  SubagentSkill *skill;

  fixture_set_up (&f, NULL);
  own = run_with (&f, "skills/wild", SUBAGENT_RISK_LEVEL_NONE, NULL);
  g_assert_cmpint (subagent_run_result_get_status (own), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (own), "critical risk"));

  overridden = run_with (&f, "skills/wild", SUBAGENT_RISK_LEVEL_LOW, NULL);
  g_assert_cmpint (subagent_run_result_get_status (overridden), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (routing_of (overridden), ==, "low risk: directory-snapshot");
  skill = subagent_run_context_get_skill (last_context (&f));
  g_assert_nonnull (skill);
  g_assert_cmpstr (subagent_skill_get_name (skill), ==, "wild");
  g_assert_cmpint (subagent_skill_get_risk_level (skill), ==, SUBAGENT_RISK_LEVEL_CRITICAL);
  g_assert_cmpstr (subagent_skill_get_body (skill), ==, "Be careful.");

  plain = run_with (&f, "skills/plain/SKILL.md", SUBAGENT_RISK_LEVEL_NONE, NULL);
  g_assert_true (g_str_has_prefix (routing_of (plain), "medium risk: docker unavailable"));

  none = run_with (&f, NULL, SUBAGENT_RISK_LEVEL_NONE, NULL);
  g_assert_cmpint (subagent_run_result_get_status (none), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_lineage_get_isolation (subagent_run_result_get_lineage (none)), ==, "directory-snapshot");
  g_assert_null (routing_of (none));
  fixture_tear_down (&f);
}

/* allowed-tools narrows the child's tools (never widens). */
static void
test_skill_allowed_tools_narrow (void)
{
  Fixture f;
  g_autoptr(SubagentRunResult) narrowed = NULL;
  g_autoptr(SubagentRunResult) wide = NULL;
  g_auto(GStrv) names = NULL;

  fixture_set_up (&f, NULL);
  sat_write_file (f.root, "skills/greedy/SKILL.md",
                  "---\nname: greedy\nallowed-tools: [Read, Nonexistent]\n---\nWants more.\n");
  narrowed = run_with (&f, "skills/lint", SUBAGENT_RISK_LEVEL_NONE, NULL);
  g_assert_cmpint (subagent_run_result_get_status (narrowed), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  names = subagent_tool_registry_list_names (subagent_run_context_get_tools (last_context (&f)));
  g_assert_cmpstrv (names, ((const char * const []) { "Grep", "Read", NULL }));
  g_clear_pointer (&names, g_strfreev);

  wide = run_with (&f, "skills/greedy", SUBAGENT_RISK_LEVEL_LOW, NULL);
  names = subagent_tool_registry_list_names (subagent_run_context_get_tools (last_context (&f)));
  g_assert_cmpstrv (names, ((const char * const []) { "Read", NULL }));
  fixture_tear_down (&f);
}

/* A skill outside the root (a path or a symbolic link) or unreadable is a
 * clear error result; nothing runs. */
static void
test_skill_outside_root_refused (void)
{
  Fixture f;
  g_autofree char *outside = sat_make_temp_dir ("routing-outside");
  g_autofree char *outside_skill = NULL;
  g_autofree char *link = NULL;
  g_autoptr(SubagentRunResult) absolute = NULL;
  g_autoptr(SubagentRunResult) dotdot = NULL;
  g_autoptr(SubagentRunResult) linked = NULL;
  g_autoptr(SubagentRunResult) missing = NULL;

  fixture_set_up (&f, NULL);
  sat_write_file (outside, "evil/SKILL.md", "---\nname: evil\nrisk: low\n---\nEscape.\n");
  outside_skill = g_build_filename (outside, "evil", NULL);
  link = g_build_filename (f.root, "skills", "linked", NULL);
  g_assert_cmpint (symlink (outside_skill, link), ==, 0);

  absolute = run_with (&f, outside_skill, SUBAGENT_RISK_LEVEL_NONE, NULL);
  g_assert_cmpint (subagent_run_result_get_status (absolute), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (absolute), "outside the workspace root"));
  dotdot = run_with (&f, "../", SUBAGENT_RISK_LEVEL_NONE, NULL);
  g_assert_cmpint (subagent_run_result_get_status (dotdot), ==, SUBAGENT_RUN_STATUS_ERROR);
  linked = run_with (&f, "skills/linked", SUBAGENT_RISK_LEVEL_NONE, NULL);
  g_assert_cmpint (subagent_run_result_get_status (linked), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (linked), "outside the workspace root"));
  missing = run_with (&f, "skills/none", SUBAGENT_RISK_LEVEL_NONE, NULL);
  g_assert_cmpint (subagent_run_result_get_status (missing), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (missing), "cannot be read"));
  g_assert_cmpuint (f.runner->contexts->len, ==, 0);
  sat_rm_rf (outside);
  fixture_tear_down (&f);
}

typedef struct {
  GPtrArray *results;
  gboolean done;
} BatchWait;

static void
batch_done (GObject      *source,
            GAsyncResult *res,
            gpointer      user_data)
{
  BatchWait *wait = user_data;
  g_autoptr(GError) error = NULL;

  wait->results = subagent_supervisor_run_batch_finish (SUBAGENT_SUPERVISOR (source), res, &error);
  g_assert_no_error (error);
  wait->done = TRUE;
}

/* Batch items with different risks route independently (items read from
 * JSON, as subagentctl batch and the subagent_batch tool take them). */
static void
test_batch_items_route_independently (void)
{
  Fixture f;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(SubagentSupervisor) supervisor = NULL;
  BatchWait wait = { NULL, FALSE };

  fixture_set_up (&f, "routing:\n  high: { backends: [test-echo], cpu: 1 }\n");
  node = json_from_string ("["
                           "{\"task\": \"a\", \"def_name\": \"worker\", \"isolation\": \"auto\", \"skill_risk_level\": \"low\"},"
                           "{\"task\": \"b\", \"def_name\": \"worker\", \"isolation\": \"auto\", \"skill_risk_level\": \"high\"},"
                           "{\"task\": \"c\", \"def_name\": \"worker\", \"isolation\": \"auto\", \"skill_path\": \"skills/lint\"},"
                           "{\"task\": \"d\", \"def_name\": \"worker\", \"isolation\": \"auto\"}"
                           "]", &error);
  g_assert_no_error (error);
  items = subagent_batch_items_from_json (json_node_get_array (node), &error);
  g_assert_no_error (error);
  supervisor = g_object_new (SUBAGENT_TYPE_SUPERVISOR, "manager", f.manager, "max-parallel", 2, NULL);
  subagent_supervisor_run_batch_async (supervisor, items, NULL, batch_done, &wait);
  sat_wait_for_flag (&wait.done);

  g_assert_cmpuint (wait.results->len, ==, 4);
  g_assert_cmpstr (routing_of (wait.results->pdata[0]), ==, "low risk: directory-snapshot");
  g_assert_cmpstr (routing_of (wait.results->pdata[1]), ==, "high risk: test-echo");
  g_assert_cmpstr (subagent_lineage_get_isolation (subagent_run_result_get_lineage (wait.results->pdata[1])), ==, "test-echo");
  g_assert_cmpstr (routing_of (wait.results->pdata[2]), ==, "low risk: directory-snapshot");
  g_assert_null (routing_of (wait.results->pdata[3]));
  for (guint i = 0; i < 4; i++)
    g_assert_cmpint (subagent_lineage_get_batch_index (subagent_run_result_get_lineage (wait.results->pdata[i])), ==, i);
  g_ptr_array_unref (wait.results);

  /* A bad level is refused when the items are read. */
  g_clear_pointer (&node, json_node_unref);
  node = json_from_string ("[{\"task\": \"a\", \"skill_risk_level\": \"extreme\"}]", NULL);
  g_assert_null (subagent_batch_items_from_json (json_node_get_array (node), &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  fixture_tear_down (&f);
}

/* SKILL.md parsing: a list of allowed tools, no front matter at all, an
 * unknown risk. */
static void
test_skill_files (void)
{
  g_autofree char *root = sat_make_temp_dir ("routing-skills");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentSkill) listed = NULL;
  g_autoptr(SubagentSkill) bare = NULL;
  g_autoptr(SubagentSkill) bad = NULL;

  sat_write_file (root, "a/SKILL.md", "---\nname: a\ndescription: d\nallowed-tools:\n  - Read\n  - Bash\n---\nBody A\n");
  sat_write_file (root, "bare/SKILL.md", "Just instructions.\n");
  sat_write_file (root, "bad/SKILL.md", "---\nname: bad\nrisk: extreme\n---\nx\n");

  listed = subagent_skill_load (root, "a", &error);
  g_assert_no_error (error);
  g_assert_cmpstrv (subagent_skill_get_allowed_tools (listed), ((const char * const []) { "Read", "Bash", NULL }));
  g_assert_cmpstr (subagent_skill_get_description (listed), ==, "d");
  g_assert_cmpstr (subagent_skill_get_relative_path (listed), ==, "a/SKILL.md");
  g_assert_cmpint (subagent_skill_get_risk_level (listed), ==, SUBAGENT_RISK_LEVEL_NONE);

  bare = subagent_skill_load (root, "bare/SKILL.md", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_skill_get_name (bare), ==, "bare");
  g_assert_cmpstr (subagent_skill_get_body (bare), ==, "Just instructions.");
  g_assert_null (subagent_skill_get_allowed_tools (bare));

  bad = subagent_skill_load (root, "bad", &error);
  g_assert_null (bad);
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "extreme"));
  sat_rm_rf (root);
}

/* Bad routing sections are config errors naming the key. */
static void
test_policy_config_errors (void)
{
  const char * const bad[] = {
    "{\"routing\": {\"extreme\": {\"backends\": [\"docker\"]}}}",
    "{\"routing\": {\"low\": {\"backends\": []}}}",
    "{\"routing\": {\"low\": {\"backends\": [\"auto\"]}}}",
    "{\"routing\": {\"high\": {\"backends\": [\"docker\"], \"memory\": \"lots\"}}}",
    "{\"routing\": {\"high\": {\"backends\": [\"docker\"], \"permission_ceiling\": \"godmode\"}}}",
    "{\"routing\": {\"strict\": \"yes\"}}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) node = json_from_string (bad[i], NULL);
      g_autoptr(SubagentConfig) config = subagent_config_new_from_json (json_node_get_object (node), "test", &error);

      g_assert_null (config);
      g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
      g_assert_nonnull (strstr (error->message, "routing"));
    }
}

/* The command runner gives the skill in the task text and as
 * SUBAGENT_SKILL_FILE; the CLI routes --risk low to directory-snapshot. */
static void
test_cli_skill_and_risk (void)
{
  g_autofree char *root = sat_make_temp_dir ("routing-cli");
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonNode) node = NULL;
  JsonObject *result, *lineage;
  const char *answer;
  int status;

  sat_write_file (root, "README", "hello\n");
  sat_write_file (root, "skills/lint/SKILL.md", "---\nname: lint\nrisk: medium\n---\nRun the linter and report.\n");

  status = sat_run_ctl (root, &out, &err, "run", "--json", "--isolation", "auto", "--risk", "low",
                        "--command", "pwd", "--", "x", NULL);
  g_assert_cmpint (status, ==, 0);
  node = json_from_string (out, NULL);
  g_assert_nonnull (node);
  lineage = json_object_get_object_member (json_node_get_object (node), "lineage");
  g_assert_cmpstr (json_object_get_string_member (lineage, "isolation"), ==, "directory-snapshot");
  g_assert_cmpstr (json_object_get_string_member (lineage, "routing"), ==, "low risk: directory-snapshot");
  g_clear_pointer (&node, json_node_unref);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  status = sat_run_ctl (root, &out, &err, "run", "--json", "--isolation", "auto", "--skill", "skills/lint",
                        "--risk", "low", "--command", "sh -c 'cat; cat \"$SUBAGENT_SKILL_FILE\" | tail -n 1'",
                        "--", "lint it", NULL);
  g_assert_cmpint (status, ==, 0);
  node = json_from_string (out, NULL);
  result = json_node_get_object (node);
  answer = json_object_get_string_member (result, "final_answer");
  g_assert_nonnull (strstr (answer, "Skill \"lint\" (skills/lint/SKILL.md):\nRun the linter and report.\n\nlint it"));
  g_assert_true (g_str_has_suffix (answer, "Run the linter and report."));

  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  status = sat_run_ctl (root, &out, &err, "run", "--isolation", "auto", "--risk", "extreme", "--command", "pwd",
                        "--", "x", NULL);
  g_assert_cmpint (status, !=, 0);
  g_assert_nonnull (strstr (err, "--risk"));
  sat_rm_rf (root);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  /* The engine is out of reach through config.yaml's docker.host (no_engine),
   * which the docker provider honours over DOCKER_HOST: run-tests starts an
   * engine and exports DOCKER_HOST, and routing must still not see one. */

  g_test_add_func ("/routing/default-policy/levels", test_default_policy_levels);
  g_test_add_func ("/routing/default-policy/runs-and-fallback", test_default_policy_runs);
  g_test_add_func ("/routing/custom-policy/fixture-backend", test_custom_policy_fixture_backend);
  g_test_add_func ("/routing/strict-is-error", test_strict_is_error);
  g_test_add_func ("/routing/risk/front-matter-and-caller", test_risk_from_front_matter_and_caller);
  g_test_add_func ("/routing/skill/allowed-tools-narrow", test_skill_allowed_tools_narrow);
  g_test_add_func ("/routing/skill/outside-root-refused", test_skill_outside_root_refused);
  g_test_add_func ("/routing/batch/items-route-independently", test_batch_items_route_independently);
  g_test_add_func ("/routing/policy/config-errors", test_policy_config_errors);
  g_test_add_func ("/routing/skill/files", test_skill_files);
  g_test_add_func ("/routing/cli/skill-and-risk", test_cli_skill_and_risk);
  return g_test_run ();
}
