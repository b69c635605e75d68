/* test-manager.c: SubagentManager and reference 000's run contract.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>

#include "test-support.h"

/* A runner the test drives: records what it was given, then fails, answers,
 * or waits for cancellation, as asked. */
typedef enum { PROBE_ANSWER, PROBE_FAIL, PROBE_WAIT_CANCEL } ProbeMode;

#define PROBE_TYPE_RUNNER (probe_runner_get_type ())
G_DECLARE_FINAL_TYPE (ProbeRunner, probe_runner, PROBE, RUNNER, GObject)

struct _ProbeRunner
{
  GObject parent_instance;
  ProbeMode mode;
  guint calls;
  gboolean started;
  char *child_root;
  char **tool_names;
  SubagentPermissionMode permission_mode;
  guint depth;
};

static void probe_runner_iface_init (SubagentRunnerInterface *iface);
G_DEFINE_FINAL_TYPE_WITH_CODE (ProbeRunner, probe_runner, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SUBAGENT_TYPE_RUNNER, probe_runner_iface_init))

static void
probe_cancelled (GCancellable *cancellable, gpointer user_data)
{
  GTask *task = user_data;
  g_task_return_pointer (task, subagent_run_outcome_new (SUBAGENT_STOP_REASON_CANCELLED, 0, 0, 0, "", "", "cancelled"),
                         g_object_unref);
  g_object_unref (task);
}

static void
probe_run_async (SubagentRunner *runner, SubagentRunContext *context, GCancellable *cancellable,
                 GAsyncReadyCallback callback, gpointer user_data)
{
  ProbeRunner *self = PROBE_RUNNER (runner);
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  SubagentIsolationContext *iso = subagent_run_context_get_isolation (context);

  self->calls++;
  self->started = TRUE;
  g_free (self->child_root);
  self->child_root = g_strdup (subagent_isolation_context_get_child_root (iso));
  g_strfreev (self->tool_names);
  self->tool_names = subagent_tool_registry_list_names (subagent_run_context_get_tools (context));
  self->permission_mode = subagent_run_context_get_permission_mode (context);
  self->depth = subagent_run_context_get_depth (context);
  g_task_set_check_cancellable (task, FALSE);

  switch (self->mode)
    {
    case PROBE_ANSWER:
      g_task_return_pointer (task, subagent_run_outcome_new (SUBAGENT_STOP_REASON_COMPLETE, 2, 3, 1.5, "done", "done", ""),
                             g_object_unref);
      g_object_unref (task);
      break;
    case PROBE_FAIL:
      g_task_return_new_error (task, SUBAGENT_ERROR, SUBAGENT_ERROR_CHILD_FAILED, "the probe runner failed");
      g_object_unref (task);
      break;
    case PROBE_WAIT_CANCEL:
      g_cancellable_connect (cancellable, G_CALLBACK (probe_cancelled), task, NULL);
      break;
    }
}

static SubagentRunOutcome *
probe_run_finish (SubagentRunner *runner, GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
probe_runner_iface_init (SubagentRunnerInterface *iface)
{
  iface->run_async = probe_run_async;
  iface->run_finish = probe_run_finish;
}

static void
probe_runner_finalize (GObject *object)
{
  ProbeRunner *self = PROBE_RUNNER (object);
  g_free (self->child_root);
  g_strfreev (self->tool_names);
  G_OBJECT_CLASS (probe_runner_parent_class)->finalize (object);
}

static void
probe_runner_class_init (ProbeRunnerClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = probe_runner_finalize;
}

static void
probe_runner_init (ProbeRunner *self)
{
}

typedef struct {
  char *root;
  const char *isolation;  /* the workspace kind the cleanup tests use */
  SubagentManager *manager;
  ProbeRunner *probe;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  gboolean git = data != NULL;

  f->isolation = git ? data : "directory-snapshot";

  f->root = git ? sat_make_git_repo ("README", "hello\n", "src/main.c", "int main(void){return 0;}\n", NULL)
                : sat_make_temp_dir ("manager");
  sat_write_file (f->root, ".subagent/agents/probe.yaml",
                  "name: probe\nmax_depth: 2\ntools: [read, write, subagent_probe, missing]\n"
                  "disallowed_tools: [write]\npermission_mode: danger-full-access\n");
  sat_write_file (f->root, ".subagent/agents/writer.yaml",
                  "name: writer\nisolation: directory-snapshot\ncommand: [/bin/sh, -c, "
                  "'cat > TASK.txt; echo {\\\"type\\\":\\\"usage\\\",\\\"iterations\\\":1,\\\"tool_calls\\\":2,\\\"cost_cents\\\":4.5}; echo done']\n");
  sat_write_file (f->root, ".subagent/agents/crasher.yaml",
                  "name: crasher\nisolation: directory-snapshot\ncommand: [/bin/sh, -c, 'kill -SEGV $$']\n");
  f->manager = subagent_manager_new (f->root, &error);
  g_assert_no_error (error);
  f->probe = g_object_new (PROBE_TYPE_RUNNER, NULL);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->manager);
  g_clear_object (&f->probe);
  sat_rm_rf (f->root);
  g_free (f->root);
}

static SubagentRunResult *
run (Fixture *f, const char *def, const char *isolation, guint depth)
{
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(GError) error = NULL;
  SubagentRunResult *result;

  subagent_run_options_set_def_name (options, def);
  subagent_run_options_set_isolation (options, isolation);
  subagent_run_options_set_depth (options, depth);
  result = subagent_manager_run (f->manager, "do the thing", options, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

static void
assert_keys (JsonObject *object, const char * const *keys)
{
  g_autoptr(GList) members = json_object_get_members (object);
  guint i = 0;

  for (GList *l = members; l != NULL; l = l->next, i++)
    {
      g_assert_nonnull (keys[i]);
      g_assert_cmpstr (l->data, ==, keys[i]);
    }
  g_assert_null (keys[i]);
}

/* Reference 000 run contract 1. */
static void
test_depth_guard (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentRunResult) ok = NULL;
  g_autoptr(SubagentRunResult) refused = NULL;

  subagent_manager_set_runner (f->manager, SUBAGENT_RUNNER (f->probe));
  ok = run (f, "probe", "shared", 1);
  g_assert_cmpint (subagent_run_result_get_status (ok), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpuint (f->probe->depth, ==, 2);
  refused = run (f, "probe", "shared", 2);
  g_assert_cmpint (subagent_run_result_get_status (refused), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (refused), "max_depth"));
  g_assert_cmpuint (f->probe->calls, ==, 1);
}

/* Run contract 2: a failed prepare returns the error shape; nothing runs. */
static void
test_isolation_failure_launches_nothing (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(JsonObject) json = NULL;
  static const char * const error_keys[] = {
    "run_id", "status", "iterations", "tool_calls", "cost_cents", "final_answer", "lineage", "message", NULL
  };

  subagent_manager_set_runner (f->manager, SUBAGENT_RUNNER (f->probe));
  result = run (f, "probe", "worktree", 0);  /* not a git repository */
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_cmpuint (f->probe->calls, ==, 0);
  json = subagent_run_result_to_json (result);
  assert_keys (json, error_keys);
  g_assert_cmpstr (json_object_get_string_member (json, "run_id"), ==, "");
  g_assert_cmpstr (json_object_get_string_member (json, "status"), ==, "error");
}

static gboolean
exists_under (const char *root, const char *name)
{
  g_autofree char *path = g_build_filename (root, name, NULL);
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static void
assert_gone (const char *path)
{
  g_assert_nonnull (path);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Run contract 3: cleanup runs when the runner fails, the child crashes,
 * or the run is cancelled. */
static void
test_cleanup_always_runs_when_runner_fails (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentRunResult) result = NULL;

  f->probe->mode = PROBE_FAIL;
  subagent_manager_set_runner (f->manager, SUBAGENT_RUNNER (f->probe));
  result = run (f, "probe", f->isolation, 0);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (result), "the probe runner failed"));
  g_assert_cmpuint (f->probe->calls, ==, 1);
  assert_gone (f->probe->child_root);
}

static void
test_cleanup_always_runs_when_child_crashes (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentRunResult) result = run (f, "crasher", f->isolation, 0);
  SubagentLineage *lineage = subagent_run_result_get_lineage (result);
  const char *workspace = g_str_equal (f->isolation, "worktree") ? subagent_lineage_get_worktree_path (lineage)
                                                                 : subagent_lineage_get_container_path (lineage);

  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_FAILED);
  assert_gone (workspace);
}

static void
cancel_when_started (ProbeRunner *probe, GCancellable *cancellable)
{
  while (!probe->started)
    g_main_context_iteration (NULL, TRUE);
  g_cancellable_cancel (cancellable);
}

static void
run_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  SubagentRunResult **out = user_data;

  *out = subagent_manager_run_finish (SUBAGENT_MANAGER (source), res, &error);
  g_assert_no_error (error);
}

static void
test_cleanup_always_runs_when_cancelled (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(SubagentRunResult) result = NULL;

  f->probe->mode = PROBE_WAIT_CANCEL;
  subagent_manager_set_runner (f->manager, SUBAGENT_RUNNER (f->probe));
  subagent_run_options_set_def_name (options, "probe");
  subagent_run_options_set_isolation (options, f->isolation);
  subagent_manager_run_async (f->manager, "wait", options, cancellable, run_done, &result);
  cancel_when_started (f->probe, cancellable);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_CANCELLED);
  assert_gone (f->probe->child_root);
}

/* Run contract 4: whitelist, disallowed list, no subagent_* tools. */
static JsonNode *
noop_tool (SubagentTool *tool, JsonObject *args, GCancellable *c, gpointer data, GError **error)
{
  return json_node_init_string (json_node_alloc (), "ok");
}

static void
test_tool_whitelist_inheritance (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentSimpleToolRegistry) parent = subagent_simple_tool_registry_new ();
  g_autoptr(SubagentRunResult) result = NULL;
  const char *names[] = { "read", "write", "shell", "subagent", "subagent_probe" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(SubagentTool) tool = subagent_tool_new (names[i], "", NULL, FALSE, noop_tool, NULL, NULL);
      subagent_simple_tool_registry_add (parent, tool);
    }
  subagent_manager_set_tools (f->manager, SUBAGENT_TOOL_REGISTRY (parent));
  subagent_manager_set_runner (f->manager, SUBAGENT_RUNNER (f->probe));
  subagent_manager_set_permission_mode (f->manager, SUBAGENT_PERMISSION_MODE_PROMPT);
  result = run (f, "probe", "shared", 0);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  /* whitelist [read, write, subagent_probe, missing] minus disallowed [write] */
  g_assert_cmpuint (g_strv_length (f->probe->tool_names), ==, 1);
  g_assert_cmpstr (f->probe->tool_names[0], ==, "read");
  /* The definition asks for danger-full-access; the parent is in prompt. */
  g_assert_cmpint (f->probe->permission_mode, ==, SUBAGENT_PERMISSION_MODE_PROMPT);
}

/* Run contract 5: the child's cost is in the parent's audit log. */
static void
test_cost_propagation (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentRunResult) result = run (f, "writer", NULL, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) records = subagent_audit_log_read (subagent_manager_get_audit_log (f->manager),
                                                          SUBAGENT_AUDIT_EVENT_LINEAGE, &error);
  JsonObject *record;

  g_assert_no_error (error);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpuint (records->len, ==, 1);
  record = g_ptr_array_index (records, 0);
  g_assert_cmpfloat (json_object_get_double_member (record, "cost_cents"), ==, 4.5);
  g_assert_cmpstr (json_object_get_string_member (record, "run_id"), ==, subagent_run_result_get_run_id (result));
  g_assert_cmpstr (json_object_get_string_member (record, "parent_run_id"), ==,
                   subagent_manager_get_run_id (f->manager));

  /* The whole record, written directly (record_lineage()): its members in
   * order, and the lineage as subagent_lineage_to_json() gives it. */
  {
    static const char * const keys[] = {
      "event", "ts", "run_id", "parent_run_id", "def_name", "depth", "isolation", "batch_index", "status",
      "iterations", "tool_calls", "cost_cents", "confinement", "lineage", NULL
    };
    g_autoptr(GList) members = json_object_get_members (record);
    g_autoptr(JsonObject) lineage = subagent_lineage_to_json (subagent_run_result_get_lineage (result));
    g_autoptr(JsonNode) expected = json_node_init_object (json_node_alloc (), lineage);
    guint i = 0;

    for (GList *l = members; l != NULL; l = l->next, i++)
      g_assert_cmpstr (l->data, ==, keys[i]);
    g_assert_null (keys[i]);
    g_assert_cmpstr (json_object_get_string_member (record, "event"), ==, SUBAGENT_AUDIT_EVENT_LINEAGE);
    g_assert_cmpstr (json_object_get_string_member (record, "def_name"), ==, "writer");
    g_assert_cmpint (json_object_get_int_member (record, "depth"), ==, 1);
    g_assert_cmpstr (json_object_get_string_member (record, "isolation"), ==,
                     subagent_lineage_get_isolation (subagent_run_result_get_lineage (result)));
    g_assert_true (json_object_get_null_member (record, "batch_index"));
    g_assert_cmpstr (json_object_get_string_member (record, "status"), ==, "complete");
    g_assert_cmpint (json_object_get_int_member (record, "iterations"), ==, subagent_run_result_get_iterations (result));
    g_assert_cmpint (json_object_get_int_member (record, "tool_calls"), ==, subagent_run_result_get_tool_calls (result));
    g_assert_cmpstr (json_object_get_string_member (record, "confinement"), ==,
                     subagent_run_result_get_confinement (result));
    g_assert_true (json_node_equal (json_object_get_member (record, "lineage"), expected));
  }
}

/* Run contract 6: a snapshot run leaves a review; a shared run none. */
static void
test_review_artifact (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentRunResult) result = run (f, "writer", NULL, 0);
  g_autoptr(SubagentRunResult) shared = NULL;
  JsonObject *review = subagent_run_result_get_review (result);
  g_autofree char *patch = NULL;
  g_autoptr(JsonObject) json = subagent_run_result_to_json (result);
  static const char * const keys[] = {
    "run_id", "status", "iterations", "tool_calls", "cost_cents", "final_answer", "lineage", "review", "message",
    "confinement", NULL
  };

  g_assert_nonnull (review);
  assert_keys (json, keys);
  /* Landlock is there on every kernel CI runs on (ABI >= 1). */
  g_assert_cmpint (subagent_confinement_get_landlock_abi (), >=, 1);
  g_assert_cmpstr (json_object_get_string_member (json, "confinement"), ==, "landlock");
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "patch_path"), &patch, NULL, NULL));
  g_assert_nonnull (strstr (patch, "TASK.txt"));
  g_assert_nonnull (strstr (patch, "+do the thing"));
  /* The child wrote in its snapshot, not in the parent. */
  g_assert_false (exists_under (f->root, "TASK.txt"));

  shared = run (f, "writer", "shared", 0);
  g_assert_null (subagent_run_result_get_review (shared));
  g_assert_true (exists_under (f->root, "TASK.txt"));
}

/* Run contract 7: the session record, in memory and on disk. */
static void
test_session_record (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentRunResult) result = run (f, "writer", "shared", 0);
  const char *run_id = subagent_run_result_get_run_id (result);
  g_autoptr(SubagentSession) session = subagent_manager_get_session (f->manager, run_id);
  g_autofree char *dir = g_strdup_printf ("%s/.subagent/sessions", f->root);
  g_autoptr(GPtrArray) all = subagent_manager_list_sessions (f->manager);
  g_autoptr(SubagentSession) on_disk = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (session);
  g_assert_cmpstr (subagent_session_get_def_name (session), ==, "writer");
  g_assert_cmpuint (subagent_session_get_tool_calls (session), ==, 2);
  g_assert_cmpuint (all->len, ==, 1);
  /* On disk once the result is out, in the parent run's log. */
  on_disk = subagent_session_log_lookup (dir, run_id, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_session_get_def_name (on_disk), ==, "writer");
  g_assert_cmpuint (subagent_session_get_tool_calls (on_disk), ==, 2);
}

static void
test_container_alias_warns (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentRunResult) result = NULL;

  subagent_manager_set_runner (f->manager, SUBAGENT_RUNNER (f->probe));
  g_test_expect_message ("Subagent", G_LOG_LEVEL_WARNING, "*container*deprecated*directory-snapshot*");
  result = run (f, "probe", "container", 0);
  g_test_assert_expected_messages ();
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_lineage_get_isolation (subagent_run_result_get_lineage (result)), ==, "directory-snapshot");
}

static void
test_unknown_mode_fails_cleanly (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentRunResult) result = NULL;

  subagent_manager_set_runner (f->manager, SUBAGENT_RUNNER (f->probe));
  result = run (f, "probe", "vm", 0);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (result), "Unknown isolation mode “vm”"));
  g_assert_cmpuint (f->probe->calls, ==, 0);
}

static void
test_unknown_definition (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentRunResult) result = run (f, "nobody", NULL, 0);

  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (result), "nobody"));
}

static void
test_empty_task_is_an_error (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunResult) result = subagent_manager_run (f->manager, "  \n", NULL, NULL, &error);

  g_assert_null (result);
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
}

static void
test_auto_resolves_by_repository (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentRunResult) result = NULL;

  subagent_manager_set_runner (f->manager, SUBAGENT_RUNNER (f->probe));
  result = run (f, "probe", "auto", 0);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_lineage_get_isolation (subagent_run_result_get_lineage (result)), ==,
                   data != NULL ? "worktree" : "directory-snapshot");
  assert_gone (f->probe->child_root);
}

/* config.yaml pins which plugin serves a backend. */
static void
test_config_pins_plugin (void)
{
  g_autofree char *root = sat_make_temp_dir ("pin");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(SubagentRunResult) pinned_missing = NULL;
  g_autoptr(SubagentRunResult) pinned_real = NULL;

  sat_write_file (root, ".subagent/agents/echo.yaml", "name: echo\ncommand: [/bin/echo, hi]\n");
  sat_write_file (root, ".subagent/config.yaml", "plugins: { backends: { directory-snapshot: no-such-plugin } }\n");
  manager = subagent_manager_new (root, &error);
  g_assert_no_error (error);
  subagent_run_options_set_def_name (options, "echo");
  subagent_run_options_set_isolation (options, "directory-snapshot");
  pinned_missing = subagent_manager_run (manager, "t", options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (subagent_run_result_get_status (pinned_missing), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (pinned_missing), "no-such-plugin"));
  g_clear_object (&manager);

  sat_write_file (root, ".subagent/config.yaml", "plugins: { backends: { directory-snapshot: isolation-snapshot } }\n");
  manager = subagent_manager_new (root, &error);
  g_assert_no_error (error);
  pinned_real = subagent_manager_run (manager, "t", options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (subagent_run_result_get_status (pinned_real), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  sat_rm_rf (root);
}

/* A host that only uses shared isolation maps no plugin module. */
static void
test_shared_maps_no_plugin (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *root = sat_make_temp_dir ("maps");
      g_autoptr(GError) error = NULL;
      g_autoptr(SubagentManager) manager = NULL;
      g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
      g_autoptr(SubagentRunResult) result = NULL;
      g_autofree char *maps = NULL;
      g_autoptr(GPtrArray) plugins = NULL;

      sat_write_file (root, ".subagent/agents/echo.yaml", "name: echo\ncommand: [/bin/echo, hi]\n");
      manager = subagent_manager_new (root, &error);
      g_assert_no_error (error);
      plugins = subagent_plugin_registry_list_plugins (subagent_manager_get_plugin_registry (manager));
      g_assert_cmpuint (plugins->len, >, 0);  /* plugins exist, and are not loaded */
      subagent_run_options_set_def_name (options, "echo");
      subagent_run_options_set_isolation (options, "shared");
      result = subagent_manager_run (manager, "say hi", options, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
      g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
      g_assert_null (strstr (maps, "libsubagent-isolation-"));
      g_assert_null (strstr (maps, "libsubagent-approval-"));
      g_assert_null (strstr (maps, "libsubagent-runner-"));
      g_assert_null (strstr (maps, "libsoup"));  /* the core links no HTTP code */
      sat_rm_rf (root);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func, git) \
  g_test_add ("/manager/" path, Fixture, (git) ? "worktree" : NULL, fixture_setup, func, fixture_teardown)
  ADD ("run-contract/1-depth-guard", test_depth_guard, FALSE);
  ADD ("run-contract/2-isolation-failure-launches-nothing", test_isolation_failure_launches_nothing, FALSE);
  ADD ("run-contract/3-cleanup-always-runs/runner-fails", test_cleanup_always_runs_when_runner_fails, FALSE);
  ADD ("run-contract/3-cleanup-always-runs/child-crashes", test_cleanup_always_runs_when_child_crashes, FALSE);
  ADD ("run-contract/3-cleanup-always-runs/cancelled", test_cleanup_always_runs_when_cancelled, FALSE);
  ADD ("run-contract/3-cleanup-always-runs/worktree/runner-fails", test_cleanup_always_runs_when_runner_fails, TRUE);
  ADD ("run-contract/3-cleanup-always-runs/worktree/child-crashes", test_cleanup_always_runs_when_child_crashes, TRUE);
  ADD ("run-contract/3-cleanup-always-runs/worktree/cancelled", test_cleanup_always_runs_when_cancelled, TRUE);
  ADD ("run-contract/4-tool-whitelist-inheritance", test_tool_whitelist_inheritance, FALSE);
  ADD ("run-contract/5-cost-propagation", test_cost_propagation, FALSE);
  ADD ("run-contract/6-review-artifact", test_review_artifact, FALSE);
  ADD ("run-contract/7-session-record", test_session_record, FALSE);
  ADD ("isolation/container-alias-warns", test_container_alias_warns, FALSE);
  ADD ("isolation/unknown-mode-fails-cleanly", test_unknown_mode_fails_cleanly, FALSE);
  ADD ("isolation/auto-in-plain-directory", test_auto_resolves_by_repository, FALSE);
  ADD ("isolation/auto-in-git-repository", test_auto_resolves_by_repository, TRUE);
  ADD ("definitions/unknown-definition", test_unknown_definition, FALSE);
  ADD ("input/empty-task-is-an-error", test_empty_task_is_an_error, FALSE);
#undef ADD
  g_test_add_func ("/manager/plugins/shared-maps-no-plugin", test_shared_maps_no_plugin);
  g_test_add_func ("/manager/plugins/config-pins-plugin", test_config_pins_plugin);
  return g_test_run ();
}
