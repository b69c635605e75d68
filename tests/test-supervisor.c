/* test-supervisor.c: SubagentSupervisor — caps, FIFO queue, cancellation,
 * shutdown, stop reasons, budgets and events (reference 003).
 *
 * Children are held at a gate (GateRunner) or block on a FIFO; nothing
 * sleeps to synchronise.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#include "supervisor-test-support.h"

typedef struct {
  char *root;
  GateRunner *gate;
  SubagentManager *manager;
  SubagentSupervisor *supervisor;
  SstRecorder recorder;
} Fixture;

static void
fixture_open (Fixture *f,
              guint    max_parallel,
              gint     max_agents,
              double   max_cost)
{
  f->root = sst_make_root (FALSE,
                           "helper", "name: helper\n",
                           "thrifty", "name: thrifty\nmax_cost_cents: 3\n",
                           NULL);
  f->gate = gate_runner_new ();
  f->manager = sst_manager_new (f->root, f->gate);
  f->supervisor = sst_supervisor_new (f->manager, max_parallel, max_agents, max_cost);
  sst_recorder_start (&f->recorder, f->supervisor);
}

static void
fixture_close (Fixture *f)
{
  gate_runner_release_all (f->gate);
  if (f->supervisor != NULL)
    {
      g_autoptr(SubagentShutdownReport) report = subagent_supervisor_shutdown (f->supervisor, 5000, NULL);

      g_assert_true (subagent_shutdown_report_get_clean (report));
    }
  sst_flush_main ();
  sst_recorder_stop (&f->recorder);
  g_clear_object (&f->supervisor);
  g_clear_object (&f->manager);
  g_clear_object (&f->gate);
  sat_rm_rf (f->root);
  g_free (f->root);
}

static char *
spawn (Fixture    *f,
       const char *task,
       const char *def_name)
{
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(GError) error = NULL;
  char *run_id;

  subagent_run_options_set_def_name (options, def_name);
  run_id = subagent_supervisor_spawn (f->supervisor, task, options, &error);
  g_assert_no_error (error);
  g_assert_nonnull (run_id);
  return run_id;
}

static void
test_fifo_start_order (void)
{
  Fixture f = { 0, };
  g_autofree char *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  g_autofree char *kinds_a = NULL, *kinds_c = NULL;

  fixture_open (&f, 2, -1, -1);
  a = spawn (&f, "A", "helper");
  b = spawn (&f, "B", "helper");
  c = spawn (&f, "C", "helper");
  d = spawn (&f, "D", "helper");
  sst_wait_started (f.gate, 2);
  g_assert_cmpuint (subagent_supervisor_get_n_running (f.supervisor), ==, 2);
  g_assert_cmpuint (subagent_supervisor_get_n_queued (f.supervisor), ==, 2);

  /* B frees a slot first; C, queued first, takes it — not D. */
  gate_runner_release (f.gate, "B", sst_complete ("b", 0));
  sst_wait_started (f.gate, 3);
  g_assert_cmpstr (gate_runner_get_started_task (f.gate, 2), ==, "C");
  gate_runner_release (f.gate, "A", sst_complete ("a", 0));
  sst_wait_started (f.gate, 4);

  g_assert_cmpstr (gate_runner_get_started_task (f.gate, 3), ==, "D");

  /* The supervisor started them in the order they came. (The first two
   * reach the runner after their isolation is prepared, in a thread, so
   * the runner may see those two in either order.) */
  {
    const char *expected[] = { a, b, c, d };
    guint n = 0;

    for (guint i = 0; i < f.recorder.events->len; i++)
      if (subagent_event_get_kind (f.recorder.events->pdata[i]) == SUBAGENT_EVENT_STARTED)
        {
          g_assert_cmpuint (n, <, 4);
          g_assert_cmpstr (subagent_event_get_run_id (f.recorder.events->pdata[i]), ==, expected[n]);
          n++;
        }
    g_assert_cmpuint (n, ==, 4);
  }

  /* `queued` only for a child that had to wait. */
  kinds_a = sst_recorder_kinds (&f.recorder, a);
  kinds_c = sst_recorder_kinds (&f.recorder, c);
  g_assert_cmpstr (kinds_a, ==, "accepted,started,completed");
  g_assert_cmpstr (kinds_c, ==, "accepted,queued,started");
  fixture_close (&f);
}

static void
check_outstanding_cap (guint max_parallel)
{
  Fixture f = { 0, };
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  g_autofree char *refused = NULL;
  g_autofree char *again = NULL;
  g_autoptr(SubagentRunResult) first = NULL;
  guint n_events;

  fixture_open (&f, max_parallel, -1, -1);
  g_assert_cmpuint (subagent_supervisor_get_max_outstanding (f.supervisor), ==, 2 * max_parallel);
  for (guint i = 0; i < 2 * max_parallel; i++)
    {
      g_autofree char *task = g_strdup_printf ("task-%u", i);
      g_ptr_array_add (ids, spawn (&f, task, "helper"));
    }
  sst_wait_started (f.gate, max_parallel);
  g_assert_cmpuint (subagent_supervisor_get_n_queued (f.supervisor), ==, max_parallel);
  n_events = f.recorder.events->len;

  refused = subagent_supervisor_spawn (f.supervisor, "one too many", NULL, &error);
  g_assert_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_OUTSTANDING_CAP);
  g_assert_null (refused);
  /* Refused just the same by a caller who does not ask why. */
  g_assert_null (subagent_supervisor_spawn (f.supervisor, "one too many, quietly", NULL, NULL));
  g_assert_cmpuint (subagent_supervisor_get_n_queued (f.supervisor), ==, max_parallel);
  sst_flush_main ();
  g_assert_cmpuint (f.recorder.events->len, ==, n_events);  /* nothing accepted */

  /* One finishing makes room for exactly one more. */
  gate_runner_release (f.gate, "task-0", sst_complete ("done", 0));
  g_clear_object (&first);
  first = sst_wait_result (f.supervisor, ids->pdata[0], NULL);
  again = spawn (&f, "now there is room", "helper");
  g_clear_error (&error);
  g_assert_null (subagent_supervisor_spawn (f.supervisor, "and again too many", NULL, &error));
  g_assert_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_OUTSTANDING_CAP);
  fixture_close (&f);
}

static void
test_outstanding_cap_parallel_1 (void)
{
  check_outstanding_cap (1);
}

static void
test_outstanding_cap_parallel_3 (void)
{
  check_outstanding_cap (3);
}

static void
test_agent_cap (void)
{
  Fixture f = { 0, };
  g_autoptr(GError) error = NULL;

  fixture_open (&f, 4, 3, -1);
  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *task = g_strdup_printf ("agent-%u", i);
      g_autofree char *id = spawn (&f, task, "helper");
    }
  g_assert_null (subagent_supervisor_spawn (f.supervisor, "fourth", NULL, &error));
  g_assert_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_AGENT_CAP);
  g_assert_nonnull (strstr (error->message, "runner.max_agents"));
  fixture_close (&f);
}

static void
test_default_caps_come_from_config (void)
{
  g_autofree char *root = sst_make_root (FALSE, NULL, NULL);
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentSupervisor) supervisor = NULL;

  sat_write_file (root, ".subagent/config.yaml", "runner:\n  max_parallel: 3\n  max_agents: 7\nbudget:\n  max_cost_cents: 12.5\n");
  manager = sst_manager_new (root, NULL);
  supervisor = subagent_supervisor_new (manager);
  g_assert_cmpuint (subagent_supervisor_get_max_parallel (supervisor), ==, 3);
  g_assert_cmpuint (subagent_supervisor_get_max_outstanding (supervisor), ==, 6);
  g_assert_cmpuint (subagent_supervisor_get_max_agents (supervisor), ==, 7);
  g_assert_cmpfloat (subagent_supervisor_get_max_cost_cents (supervisor), ==, 12.5);
  g_clear_object (&supervisor);

  supervisor = g_object_new (SUBAGENT_TYPE_SUPERVISOR, "manager", manager, "max-parallel", 0, NULL);
  g_assert_cmpuint (subagent_supervisor_get_max_parallel (supervisor), ==, 3);
  g_clear_object (&supervisor);
  sat_rm_rf (root);
}

static void
assert_cancelled_unstarted (Fixture    *f,
                            const char *run_id,
                            const char *cause)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunResult) result = sst_wait_result (f->supervisor, run_id, &error);
  g_autofree char *kinds = sst_recorder_kinds (&f->recorder, run_id);
  SubagentEvent *cancelled;

  g_assert_no_error (error);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_CANCELLED);
  g_assert_cmpstr (subagent_run_result_get_stop_reason (result), ==, SUBAGENT_STOP_REASON_CANCELLED);
  g_assert_cmpuint (subagent_run_result_get_iterations (result), ==, 0);
  g_assert_null (subagent_run_result_get_session_id (result));
  g_assert_cmpstr (kinds, ==, "accepted,queued,started,cancelled");
  cancelled = sst_recorder_find (&f->recorder, run_id, SUBAGENT_EVENT_CANCELLED);
  g_assert_cmpstr (json_object_get_string_member (subagent_event_get_details (cancelled), "cause"), ==, cause);
  g_assert_cmpstr (json_object_get_string_member (subagent_event_get_details (cancelled), "status"), ==, "cancelled");
}

static void
test_cancel_queued_by_id_never_runs (void)
{
  Fixture f = { 0, };
  g_autofree char *a = NULL, *b = NULL;
  g_autoptr(SubagentRunResult) result_a = NULL;

  fixture_open (&f, 1, -1, -1);
  a = spawn (&f, "running", "helper");
  b = spawn (&f, "queued", "helper");
  sst_wait_started (f.gate, 1);

  g_assert_cmpint (subagent_supervisor_cancel (f.supervisor, b, SUBAGENT_CANCEL_CAUSE_USER), ==,
                   SUBAGENT_CANCEL_OUTCOME_ACCEPTED);
  assert_cancelled_unstarted (&f, b, "user");
  g_assert_cmpuint (subagent_supervisor_get_n_queued (f.supervisor), ==, 0);

  gate_runner_release (f.gate, "running", sst_complete ("a", 0));
  result_a = sst_wait_result (f.supervisor, a, NULL);
  g_assert_cmpint (subagent_run_result_get_status (result_a), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  sst_flush_main ();
  /* The runner only ever saw the first child. */
  g_assert_cmpuint (gate_runner_get_n_started (f.gate), ==, 1);
  fixture_close (&f);
}

static void
test_cancel_all_queued_never_runs (void)
{
  Fixture f = { 0, };
  g_autofree char *a = NULL, *b = NULL;
  g_autoptr(SubagentRunResult) result_a = NULL;

  fixture_open (&f, 1, -1, -1);
  a = spawn (&f, "running", "helper");
  b = spawn (&f, "queued", "helper");
  sst_wait_started (f.gate, 1);

  g_assert_cmpuint (subagent_supervisor_cancel_all (f.supervisor, SUBAGENT_CANCEL_CAUSE_SYSTEM), ==, 2);
  assert_cancelled_unstarted (&f, b, "system");
  /* The running one is stopped through its own cancellable. */
  result_a = sst_wait_result (f.supervisor, a, NULL);
  g_assert_cmpint (subagent_run_result_get_status (result_a), ==, SUBAGENT_RUN_STATUS_CANCELLED);
  g_assert_nonnull (sst_recorder_find (&f.recorder, a, SUBAGENT_EVENT_CANCELLED));
  sst_flush_main ();
  g_assert_cmpuint (gate_runner_get_n_started (f.gate), ==, 1);
  fixture_close (&f);
}

static void
test_cancel_outcomes (void)
{
  Fixture f = { 0, };
  g_autofree char *done = NULL, *running = NULL;
  g_autoptr(SubagentRunResult) first = NULL;
  g_autoptr(SubagentRunResult) second = NULL;

  fixture_open (&f, 2, -1, -1);
  g_assert_cmpint (subagent_supervisor_cancel (f.supervisor, "no-such-child", SUBAGENT_CANCEL_CAUSE_USER), ==,
                   SUBAGENT_CANCEL_OUTCOME_NOT_ACTIVE);

  done = spawn (&f, "finishes", "helper");
  sst_wait_started (f.gate, 1);
  gate_runner_release (f.gate, "finishes", sst_complete ("ok", 0));
  first = sst_wait_result (f.supervisor, done, NULL);
  g_assert_cmpint (subagent_supervisor_cancel (f.supervisor, done, SUBAGENT_CANCEL_CAUSE_USER), ==,
                   SUBAGENT_CANCEL_OUTCOME_ALREADY_FINISHED);
  g_assert_cmpint (subagent_run_result_get_status (first), ==, SUBAGENT_RUN_STATUS_COMPLETE);

  running = spawn (&f, "runs", "helper");
  sst_wait_started (f.gate, 2);
  g_assert_true (subagent_supervisor_is_active (f.supervisor, running));
  g_assert_cmpint (subagent_supervisor_cancel (f.supervisor, running, SUBAGENT_CANCEL_CAUSE_USER), ==,
                   SUBAGENT_CANCEL_OUTCOME_ACCEPTED);
  second = sst_wait_result (f.supervisor, running, NULL);
  g_assert_cmpint (subagent_run_result_get_status (second), ==, SUBAGENT_RUN_STATUS_CANCELLED);
  g_assert_false (subagent_supervisor_is_active (f.supervisor, running));
  g_assert_cmpint (subagent_supervisor_cancel (f.supervisor, running, SUBAGENT_CANCEL_CAUSE_USER), ==,
                   SUBAGENT_CANCEL_OUTCOME_ALREADY_FINISHED);
  fixture_close (&f);
}

typedef struct {
  gboolean done;
  SubagentRunResult *result;
  GError *error;
} RunWait;

static void
run_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  RunWait *wait = user_data;

  wait->result = subagent_supervisor_run_finish (SUBAGENT_SUPERVISOR (source), res, &wait->error);
  wait->done = TRUE;
}

static void
test_caller_cancellable_does_not_kill_child (void)
{
  Fixture f = { 0, };
  g_autoptr(GCancellable) caller = g_cancellable_new ();
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  RunWait wait = { FALSE, NULL, NULL };
  g_autoptr(SubagentRunResult) result = NULL;
  const char *run_id;

  fixture_open (&f, 1, -1, -1);
  subagent_supervisor_run_async (f.supervisor, "long job", options, caller, run_done, &wait);
  sst_wait_started (f.gate, 1);
  run_id = subagent_run_context_get_run_id (gate_runner_get_context (f.gate, "long job"));

  g_cancellable_cancel (caller);
  sst_wait_flag (&wait.done);
  g_assert_error (wait.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&wait.error);

  /* The child is still there, and still at the gate. */
  g_assert_true (subagent_supervisor_is_active (f.supervisor, run_id));
  g_assert_true (gate_runner_is_waiting (f.gate, "long job"));
  gate_runner_release (f.gate, "long job", sst_complete ("finished anyway", 0));
  result = sst_wait_result (f.supervisor, run_id, NULL);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "finished anyway");
  fixture_close (&f);
}

static void
test_shutdown_joins (void)
{
  Fixture f = { 0, };
  g_autofree char *a = NULL, *b = NULL, *c = NULL;
  g_autoptr(SubagentShutdownReport) report = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GError) error = NULL;

  fixture_open (&f, 2, -1, -1);
  a = spawn (&f, "a", "helper");
  b = spawn (&f, "b", "helper");
  c = spawn (&f, "c", "helper");
  sst_wait_started (f.gate, 2);

  report = subagent_supervisor_shutdown (f.supervisor, 5000, &error);
  g_assert_no_error (error);
  g_assert_true (subagent_shutdown_report_get_clean (report));
  g_assert_cmpuint (subagent_shutdown_report_get_n_cancelled (report), ==, 3);
  g_assert_cmpuint (g_strv_length ((char **) subagent_shutdown_report_get_unstopped (report)), ==, 0);
  g_assert_true (subagent_supervisor_is_closed (f.supervisor));
  g_assert_cmpuint (subagent_supervisor_get_n_running (f.supervisor), ==, 0);
  result = subagent_supervisor_lookup_result (f.supervisor, c);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_CANCELLED);
  sst_flush_main ();
  g_assert_cmpuint (gate_runner_get_n_started (f.gate), ==, 2);  /* c never ran */

  /* Closed: nothing new is accepted. */
  g_assert_null (subagent_supervisor_spawn (f.supervisor, "late", NULL, &error));
  g_assert_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_CLOSED);

  sst_recorder_stop (&f.recorder);
  g_clear_object (&f.supervisor);
  g_clear_object (&f.manager);
  g_clear_object (&f.gate);
  sat_rm_rf (f.root);
  g_free (f.root);
}

static void
test_shutdown_times_out_and_reports (void)
{
  Fixture f = { 0, };
  g_autofree char *stuck = NULL;
  g_autoptr(SubagentShutdownReport) report = NULL;
  g_autoptr(SubagentRunResult) late = NULL;
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(GError) error = NULL;
  const char * const *kept;
  const char *child_root;

  fixture_open (&f, 2, -1, -1);
  gate_runner_set_ignore_cancel (f.gate, TRUE);
  subagent_run_options_set_isolation (options, "directory-snapshot");
  stuck = subagent_supervisor_spawn (f.supervisor, "will not stop", options, &error);
  g_assert_no_error (error);
  sst_wait_started (f.gate, 1);
  child_root = subagent_isolation_context_get_child_root (
    subagent_run_context_get_isolation (gate_runner_get_context (f.gate, "will not stop")));

  report = subagent_supervisor_shutdown (f.supervisor, 50, &error);
  g_assert_no_error (error);
  g_assert_false (subagent_shutdown_report_get_clean (report));
  g_assert_cmpstrv (subagent_shutdown_report_get_unstopped (report), ((const char *[]) { stuck, NULL }));
  kept = subagent_shutdown_report_get_kept_workspaces (report);
  g_assert_cmpstrv (kept, ((const char *[]) { child_root, NULL }));
  /* Kept, not removed under a process that may still use it. */
  g_assert_true (g_file_test (child_root, G_FILE_TEST_IS_DIR));

  g_assert_null (sst_wait_result (f.supervisor, stuck, &error));
  g_assert_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_CLOSED);
  g_assert_nonnull (strstr (error->message, child_root));
  g_clear_error (&error);

  /* When it does end, the manager cleans the workspace up. */
  gate_runner_release (f.gate, "will not stop", sst_complete ("late", 0));
  while ((late = subagent_supervisor_lookup_result (f.supervisor, stuck)) == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (g_file_test (child_root, G_FILE_TEST_EXISTS));

  sst_flush_main ();
  sst_recorder_stop (&f.recorder);
  g_clear_object (&f.supervisor);
  g_clear_object (&f.manager);
  g_clear_object (&f.gate);
  sat_rm_rf (f.root);
  g_free (f.root);
}

/* Stop reasons → statuses (reference 003 and issue 6, item 2). */
static SubagentRunOutcome *
decide_by_task (SubagentRunContext *context,
                gpointer            user_data)
{
  g_auto(GStrv) parts = g_strsplit (subagent_run_context_get_task (context), "|", 3);
  const char *reason = parts[0];
  const char *answer = parts[1] ? parts[1] : "";
  guint calls = parts[1] && parts[2] ? (guint) atoi (parts[2]) : 0;

  return subagent_run_outcome_new (reason, 1, calls, 0.25, answer, "", g_str_equal (reason, "complete") ? "" : "stopped here");
}

static void
test_stop_reason_rows (void)
{
  static const struct {
    const char *task;
    SubagentRunStatus status;
    SubagentEventKind kind;
    const char *reason_prefix;   /* NULL: no reason, no status in the envelope */
  } rows[] = {
    { "complete|all done", SUBAGENT_RUN_STATUS_COMPLETE, SUBAGENT_EVENT_COMPLETED, NULL },
    { "max_turns|half", SUBAGENT_RUN_STATUS_PARTIAL, SUBAGENT_EVENT_COMPLETED, "max_turns" },
    { "max_tokens|half", SUBAGENT_RUN_STATUS_PARTIAL, SUBAGENT_EVENT_COMPLETED, "max_tokens" },
    { "cancelled|some output", SUBAGENT_RUN_STATUS_PARTIAL, SUBAGENT_EVENT_CANCELLED, "cancelled" },
    { "cancelled||2", SUBAGENT_RUN_STATUS_PARTIAL, SUBAGENT_EVENT_CANCELLED, "cancelled" },
    { "cancelled", SUBAGENT_RUN_STATUS_CANCELLED, SUBAGENT_EVENT_CANCELLED, "cancelled" },
    { "error", SUBAGENT_RUN_STATUS_FAILED, SUBAGENT_EVENT_FAILED, "stopped here" },
    { "usage_limit", SUBAGENT_RUN_STATUS_FAILED, SUBAGENT_EVENT_FAILED, "stopped here; delegate the rest" },
    { "budget|partial answer", SUBAGENT_RUN_STATUS_PARTIAL, SUBAGENT_EVENT_COMPLETED, "budget" },
    { "timeout", SUBAGENT_RUN_STATUS_FAILED, SUBAGENT_EVENT_FAILED, "stopped here" },
    { "exploded", SUBAGENT_RUN_STATUS_FAILED, SUBAGENT_EVENT_FAILED, "unknown stop reason: exploded" },
  };
  Fixture f = { 0, };
  g_autoptr(GPtrArray) run_ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);

  fixture_open (&f, 4, -1, -1);
  gate_runner_set_decide (f.gate, decide_by_task, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *run_id = spawn (&f, rows[i].task, "helper");
      g_autoptr(SubagentRunResult) result = sst_wait_result (f.supervisor, run_id, NULL);
      g_autoptr(JsonObject) envelope = subagent_supervisor_project_result (f.supervisor, result);
      SubagentEvent *event;

      g_test_message ("row %s", rows[i].task);
      g_assert_cmpint (subagent_run_result_get_status (result), ==, rows[i].status);
      sst_flush_main ();
      event = sst_recorder_find (&f.recorder, run_id, rows[i].kind);
      g_assert_nonnull (event);
      g_assert_cmpstr (json_object_get_string_member (subagent_event_get_details (event), "status"), ==,
                       subagent_run_status_to_string (rows[i].status));
      if (rows[i].reason_prefix == NULL)
        {
          g_assert_false (json_object_has_member (envelope, "status"));
          g_assert_false (json_object_has_member (envelope, "reason"));
        }
      else
        {
          g_assert_cmpstr (json_object_get_string_member (envelope, "status"), ==,
                           subagent_run_status_to_string (rows[i].status));
          g_assert_true (g_str_has_prefix (json_object_get_string_member (envelope, "reason"), rows[i].reason_prefix));
        }
      /* Host diagnostics stay out of what the model sees. */
      g_assert_false (json_object_has_member (envelope, "cost_cents"));
      g_assert_false (json_object_has_member (envelope, "iterations"));
      g_assert_false (json_object_has_member (envelope, "lineage"));
      g_assert_true (json_object_has_member (envelope, "output"));
      /* Shared isolation, follow-ups left: the session can be resumed. */
      g_assert_cmpstr (json_object_get_string_member (envelope, "continuation"), ==, run_id);
      g_ptr_array_add (run_ids, g_strdup (run_id));
      g_ptr_array_add (texts, sst_result_text (result));
    }
  /* Once out of memory, each row's result is rebuilt from its session
   * record as it was: status, stop reason, message and usage. */
  subagent_manager_set_sessions_in_memory (f.manager, 1);
  subagent_supervisor_set_results_in_memory (f.supervisor, 1);
  for (guint i = 0; i + 1 < run_ids->len; i++)
    {
      g_autoptr(SubagentRunResult) rebuilt = subagent_supervisor_lookup_result (f.supervisor, run_ids->pdata[i]);
      g_autofree char *text = NULL;

      g_assert_nonnull (rebuilt);
      text = sst_result_text (rebuilt);
      g_assert_cmpstr (text, ==, texts->pdata[i]);
    }
  fixture_close (&f);
}

static SubagentRunOutcome *
decide_cost (SubagentRunContext *context,
             gpointer            user_data)
{
  return sst_complete ("spent", g_ascii_strtod (subagent_run_context_get_task (context), NULL));
}

static void
test_budget_refuses_spent_parent (void)
{
  Fixture f = { 0, };
  g_autofree char *first = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *sessions = NULL;
  guint n_events, n_started;

  fixture_open (&f, 2, -1, 5.0);
  gate_runner_set_decide (f.gate, decide_cost, NULL);
  first = spawn (&f, "5", "helper");
  result = sst_wait_result (f.supervisor, first, NULL);
  g_assert_cmpfloat (subagent_supervisor_get_spent_cents (f.supervisor, NULL), ==, 5.0);
  sst_flush_main ();
  n_events = f.recorder.events->len;
  n_started = gate_runner_get_n_started (f.gate);

  g_assert_null (subagent_supervisor_spawn (f.supervisor, "1", NULL, &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_BUDGET_EXCEEDED);
  g_assert_nonnull (strstr (error->message, "budget.max_cost_cents"));
  sst_flush_main ();
  /* Refused before anything: no event, no run, no session. */
  g_assert_cmpuint (f.recorder.events->len, ==, n_events);
  g_assert_cmpuint (gate_runner_get_n_started (f.gate), ==, n_started);
  sessions = g_build_filename (f.root, ".subagent", "sessions", NULL);
  {
    g_auto(GStrv) skipped = NULL;
    g_autoptr(GError) read_error = NULL;
    g_autoptr(GPtrArray) kept = subagent_session_log_read_dir (sessions, &skipped, &read_error);

    g_assert_no_error (read_error);
    g_assert_cmpuint (g_strv_length (skipped), ==, 0);
    g_assert_cmpuint (kept->len, ==, 1);  /* the first child's only */
    g_assert_cmpstr (subagent_session_get_session_id (kept->pdata[0]), ==, first);
  }
  fixture_close (&f);
}

static void
test_budget_caps_child_with_what_is_left (void)
{
  Fixture f = { 0, };
  g_autofree char *first = NULL, *second = NULL, *third = NULL;
  g_autoptr(SubagentRunResult) r1 = NULL;

  fixture_open (&f, 2, -1, 10.0);
  first = spawn (&f, "4", "helper");
  sst_wait_started (f.gate, 1);
  /* The parent has 10 cents: the first child may spend all of them. */
  g_assert_cmpfloat (subagent_run_context_get_max_cost_cents (gate_runner_get_context (f.gate, "4")), ==, 10.0);
  gate_runner_release (f.gate, "4", sst_complete ("spent 4", 4.0));
  r1 = sst_wait_result (f.supervisor, first, NULL);

  second = spawn (&f, "next", "helper");
  third = spawn (&f, "thrifty", "thrifty");
  sst_wait_started (f.gate, 3);
  /* 6 left; a definition's own, smaller budget wins. */
  g_assert_cmpfloat (subagent_run_context_get_max_cost_cents (gate_runner_get_context (f.gate, "next")), ==, 6.0);
  g_assert_cmpfloat (subagent_run_context_get_max_cost_cents (gate_runner_get_context (f.gate, "thrifty")), ==, 3.0);
  fixture_close (&f);
}

/* A real child that reports a cost past its budget, then blocks on a FIFO
 * nobody writes: only the runner's budget stop can end it. Its result,
 * once out of memory, is rebuilt as it was. */
static void
test_budget_stops_child_past_budget (void)
{
  g_autofree char *root = sst_make_root (FALSE, NULL, NULL);
  g_autofree char *fifo = g_build_filename (root, "never-written", NULL);
  g_autofree char *yaml = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentSupervisor) supervisor = NULL;
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(JsonObject) envelope = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *run_id = NULL;
  g_autoptr(SubagentShutdownReport) report = NULL;

  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  yaml = g_strdup_printf ("name: greedy\nmax_cost_cents: 2\ncommand: [/bin/sh, -c, "
                          "'cat >/dev/null; echo \"{\\\"type\\\":\\\"usage\\\",\\\"cost_cents\\\":5}\"; read x < %s']\n",
                          fifo);
  sat_write_file (root, ".subagent/agents/greedy.yaml", yaml);
  sat_write_file (root, ".subagent/agents/quick.yaml", "name: quick\ncommand: [/bin/sh, -c, 'cat >/dev/null']\n");
  manager = sst_manager_new (root, NULL);
  subagent_command_runner_set_kill_grace_ms (SUBAGENT_COMMAND_RUNNER (subagent_manager_get_runner (manager)), 200);
  supervisor = sst_supervisor_new (manager, 1, -1, -1);

  subagent_run_options_set_def_name (options, "greedy");
  run_id = subagent_supervisor_spawn (supervisor, "spend it all", options, &error);
  g_assert_no_error (error);
  result = sst_wait_result (supervisor, run_id, &error);
  g_assert_no_error (error);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_PARTIAL);
  g_assert_cmpstr (subagent_run_result_get_stop_reason (result), ==, SUBAGENT_STOP_REASON_BUDGET);
  g_assert_cmpfloat (subagent_run_result_get_cost_cents (result), ==, 5.0);
  envelope = subagent_supervisor_project_result (supervisor, result);
  g_assert_cmpstr (json_object_get_string_member (envelope, "status"), ==, "partial");
  g_assert_true (g_str_has_prefix (json_object_get_string_member (envelope, "reason"), "budget"));

  /* Out of memory behind a later child, the same result: the confinement
   * the child ran under and its own stop reason included. */
  {
    g_autoptr(SubagentRunOptions) quick = subagent_run_options_new ();
    g_autofree char *quick_id = NULL;
    g_autoptr(SubagentRunResult) quick_result = NULL;
    g_autoptr(SubagentRunResult) rebuilt = NULL;
    g_autofree char *expected = sst_result_text (result);
    g_autofree char *found = NULL;

    g_assert_nonnull (subagent_run_result_get_confinement (result));
    subagent_supervisor_set_results_in_memory (supervisor, 1);
    subagent_manager_set_sessions_in_memory (manager, 1);
    subagent_run_options_set_def_name (quick, "quick");
    quick_id = subagent_supervisor_spawn (supervisor, "at once", quick, &error);
    g_assert_no_error (error);
    quick_result = sst_wait_result (supervisor, quick_id, &error);
    g_assert_no_error (error);
    rebuilt = subagent_supervisor_lookup_result (supervisor, run_id);
    g_assert_nonnull (rebuilt);
    g_assert_true (rebuilt != result);
    found = sst_result_text (rebuilt);
    g_assert_cmpstr (found, ==, expected);
  }

  report = subagent_supervisor_shutdown (supervisor, 0, NULL);
  g_assert_true (subagent_shutdown_report_get_clean (report));
  g_clear_object (&supervisor);
  g_clear_object (&manager);
  sat_rm_rf (root);
}

static void
on_completed_signal (SubagentSupervisor *supervisor,
                     SubagentEvent      *event,
                     gpointer            user_data)
{
  (*(guint *) user_data)++;
}

/* The members every events.jsonl line of @run_id has: a "helper" child of
 * @f's manager run, outside a batch. */
static void
assert_helper_event_line (JsonObject *object,
                          const char *kind,
                          const char *run_id,
                          Fixture    *f)
{
  g_assert_cmpstr (json_object_get_string_member (object, "event"), ==, kind);
  g_assert_cmpstr (json_object_get_string_member (object, "run_id"), ==, run_id);
  g_assert_cmpstr (json_object_get_string_member (object, "parent_run_id"), ==,
                   subagent_manager_get_run_id (f->manager));
  g_assert_cmpstr (json_object_get_string_member (object, "def_name"), ==, "helper");
  g_assert_cmpint (json_object_get_int_member (object, "depth"), ==, 1);
  g_assert_true (json_object_get_null_member (object, "batch_index"));
  g_assert_true (json_object_has_member (object, "accepted_at"));
}

static void
test_events_signals_and_jsonl (void)
{
  Fixture f = { 0, };
  g_autofree char *run_id = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  guint kind_signal = 0, detailed = 0, other_detail = 0;
  const char *expected[] = { "accepted", "started", "completed" };

  fixture_open (&f, 1, -1, -1);
  g_signal_connect (f.supervisor, "completed", G_CALLBACK (on_completed_signal), &kind_signal);
  g_signal_connect (f.supervisor, "event::completed", G_CALLBACK (on_completed_signal), &detailed);
  g_signal_connect (f.supervisor, "event::failed", G_CALLBACK (on_completed_signal), &other_detail);
  run_id = spawn (&f, "evented", "helper");
  sst_wait_started (f.gate, 1);
  gate_runner_release (f.gate, "evented", sst_complete ("ok", 1.5));
  result = sst_wait_result (f.supervisor, run_id, NULL);
  sst_flush_main ();
  g_assert_cmpuint (kind_signal, ==, 1);
  g_assert_cmpuint (detailed, ==, 1);
  g_assert_cmpuint (other_detail, ==, 0);

  path = g_strdup (subagent_supervisor_get_events_path (f.supervisor));
  g_assert_true (g_str_has_suffix (path, ".subagent/events.jsonl"));
  gate_runner_release_all (f.gate);
  sst_recorder_stop (&f.recorder);
  g_clear_object (&f.supervisor);  /* finalizing flushes the writer */

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (g_strchomp (text), "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(JsonNode) node = json_from_string (lines[i], NULL);
      JsonObject *object = json_node_get_object (node);

      assert_helper_event_line (object, expected[i], run_id, &f);
      g_assert_true (g_str_has_suffix (json_object_get_string_member (object, "time"), "Z"));
    }
  {
    g_autoptr(JsonNode) node = json_from_string (lines[2], NULL);
    JsonObject *object = json_node_get_object (node);

    g_assert_cmpfloat (json_object_get_double_member (object, "cost_cents"), ==, 1.5);
    g_assert_cmpstr (json_object_get_string_member (object, "session_id"), ==, run_id);
    g_assert_true (json_object_has_member (object, "duration_ms"));
  }
  g_clear_object (&f.manager);
  g_clear_object (&f.gate);
  sat_rm_rf (f.root);
  g_free (f.root);
}

/* What the events file holds when "completed" is emitted. */
static void
on_completed_read_file (SubagentSupervisor *supervisor,
                        SubagentEvent      *event,
                        gpointer            user_data)
{
  char **text = user_data;

  g_clear_pointer (text, g_free);
  g_assert_true (g_file_get_contents (subagent_supervisor_get_events_path (supervisor), text, NULL, NULL));
}

/* An event's line is in the file (one write() in the emitting thread) by
 * the time its signal is emitted: no flush, no finalized supervisor, so a
 * host that exits right after a result loses no line. */
static void
test_events_line_written_before_signal (void)
{
  Fixture f = { 0, };
  g_autofree char *run_id = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  guint n;

  fixture_open (&f, 1, -1, -1);
  g_signal_connect (f.supervisor, "completed", G_CALLBACK (on_completed_read_file), &text);
  run_id = spawn (&f, "written", "helper");
  sst_wait_started (f.gate, 1);
  gate_runner_release (f.gate, "written", sst_complete ("ok", 0.5));
  result = sst_wait_result (f.supervisor, run_id, NULL);
  sst_flush_main ();

  g_assert_nonnull (text);
  lines = g_strsplit (text, "\n", -1);
  n = g_strv_length (lines);
  g_assert_cmpuint (n, ==, 4);  /* three whole lines, then nothing after the last newline */
  g_assert_cmpstr (lines[3], ==, "");
  {
    g_autoptr(JsonNode) node = json_from_string (lines[2], NULL);
    JsonObject *object = json_node_get_object (node);

    g_assert_cmpstr (json_object_get_string_member (object, "event"), ==, "completed");
    g_assert_cmpstr (json_object_get_string_member (object, "run_id"), ==, run_id);
  }

  gate_runner_release_all (f.gate);
  sst_recorder_stop (&f.recorder);
  g_clear_object (&f.supervisor);
  g_clear_object (&f.manager);
  g_clear_object (&f.gate);
  sat_rm_rf (f.root);
  g_free (f.root);
}

/* subagent_event_to_line() writes its JSON directly: it must give what the
 * generator gives for subagent_event_to_json(), byte for byte, whatever
 * the details hold (escapes, nesting, numbers, a member that repeats a
 * fixed one). */
static void
test_event_line_matches_json (void)
{
  g_autoptr(GTimeZone) plus_two = g_time_zone_new_identifier ("+02:00");
  g_autoptr(GDateTime) utc = g_date_time_new_utc (2026, 12, 3, 7, 8, 9.012345);
  g_autoptr(GDateTime) local = g_date_time_new (plus_two, 999, 1, 2, 3, 4, 5.000001);
  g_autoptr(JsonObject) details = json_object_new ();
  g_autoptr(JsonObject) nested = json_object_new ();
  g_autoptr(JsonArray) array = json_array_new ();
  g_autoptr(JsonObject) empty = json_object_new ();

  json_object_set_string_member (details, "status", "done \"quoted\" \\ back\nnew\ttab\r\b\f\x01\x1f\x7f é ✓ /");
  json_object_set_int_member (details, "count", -42);
  json_object_set_int_member (details, "big", G_MAXINT64);
  json_object_set_double_member (details, "cost", 1.25);
  json_object_set_double_member (details, "third", 1.0 / 3.0);
  json_object_set_boolean_member (details, "ok", TRUE);
  json_object_set_boolean_member (details, "not", FALSE);
  json_object_set_null_member (details, "nothing");
  json_object_set_string_member (details, "run_id", "not the run id");
  json_object_set_string_member (details, "empty", "");
  json_object_set_string_member (nested, "key \"x\"", "v\n");
  json_array_add_int_element (array, 1);
  json_array_add_string_element (array, "two");
  json_array_add_null_element (array);
  json_object_set_array_member (nested, "list", json_array_ref (array));
  json_object_set_object_member (details, "nested", json_object_ref (nested));

  for (guint i = 0; i < 4; i++)
    {
      g_autoptr(SubagentEvent) event =
        subagent_event_new (i % 2 ? SUBAGENT_EVENT_STARTED : SUBAGENT_EVENT_COMPLETED,
                            "run-\"1\"", i < 2 ? NULL : "parent", i == 1 ? NULL : "def\tname", i, i < 2 ? -1 : (gint) i,
                            i % 2 ? utc : local, i == 3 ? empty : details);
      g_autoptr(JsonObject) object = subagent_event_to_json (event);
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), object);
      g_autofree char *text = json_to_string (node, FALSE);
      g_autofree char *expected = g_strconcat (text, "\n", NULL);
      g_autofree char *line = subagent_event_to_line (event);

      g_assert_cmpstr (line, ==, expected);
    }
}

/* With no handler connected the supervisor makes no event (perform_event())
 * but still writes each line: its values must be the child's, and the
 * event they describe must write the same line byte for byte. */
static void
test_unheard_events_written_the_same (void)
{
  static const char * const fixed[] = { "event", "time", "run_id", "parent_run_id", "def_name", "depth", "batch_index", NULL };
  Fixture f = { 0, };
  g_autofree char *run_id = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  const char *expected[] = { "accepted", "started", "completed" };

  fixture_open (&f, 1, -1, -1);
  sst_recorder_stop (&f.recorder);  /* no handler at all */
  run_id = spawn (&f, "unheard", "helper");
  sst_wait_started (f.gate, 1);
  gate_runner_release (f.gate, "unheard", sst_complete ("ok", 1.5));
  result = sst_wait_result (f.supervisor, run_id, NULL);
  sst_flush_main ();
  path = g_strdup (subagent_supervisor_get_events_path (f.supervisor));
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (g_strchomp (text), "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, G_N_ELEMENTS (expected));

  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_autoptr(JsonNode) node = json_from_string (lines[i], NULL);
      JsonObject *object = json_node_get_object (node);
      g_autoptr(JsonObject) details = json_object_new ();
      g_autoptr(GDateTime) time = g_date_time_new_from_iso8601 (json_object_get_string_member (object, "time"), NULL);
      g_autoptr(SubagentEvent) event = NULL;
      g_autoptr(GList) members = json_object_get_members (object);
      g_autofree char *line = NULL;
      g_autofree char *original = g_strconcat (lines[i], "\n", NULL);

      assert_helper_event_line (object, expected[i], run_id, &f);
      for (GList *l = members; l != NULL; l = l->next)
        if (!g_strv_contains (fixed, l->data))
          json_object_set_member (details, l->data, json_node_copy (json_object_get_member (object, l->data)));
      event = subagent_event_new (i == 0 ? SUBAGENT_EVENT_ACCEPTED : i == 1 ? SUBAGENT_EVENT_STARTED : SUBAGENT_EVENT_COMPLETED,
                                  run_id, json_object_get_string_member (object, "parent_run_id"),
                                  json_object_get_string_member (object, "def_name"),
                                  json_object_get_int_member (object, "depth"), SUBAGENT_NO_BATCH_INDEX, time, details);
      line = subagent_event_to_line (event);
      g_assert_cmpstr (line, ==, original);
    }
  fixture_close (&f);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/supervisor/queue/fifo-start-order", test_fifo_start_order);
  g_test_add_func ("/supervisor/caps/outstanding-is-twice-max-parallel-1", test_outstanding_cap_parallel_1);
  g_test_add_func ("/supervisor/caps/outstanding-is-twice-max-parallel-3", test_outstanding_cap_parallel_3);
  g_test_add_func ("/supervisor/caps/agent-cap", test_agent_cap);
  g_test_add_func ("/supervisor/caps/defaults-from-config", test_default_caps_come_from_config);
  g_test_add_func ("/supervisor/cancel/queued-by-id-never-runs", test_cancel_queued_by_id_never_runs);
  g_test_add_func ("/supervisor/cancel/queued-by-cancel-all-never-runs", test_cancel_all_queued_never_runs);
  g_test_add_func ("/supervisor/cancel/outcomes", test_cancel_outcomes);
  g_test_add_func ("/supervisor/cancel/caller-cancellable-does-not-kill-child", test_caller_cancellable_does_not_kill_child);
  g_test_add_func ("/supervisor/shutdown/joins-and-closes", test_shutdown_joins);
  g_test_add_func ("/supervisor/shutdown/times-out-and-reports", test_shutdown_times_out_and_reports);
  g_test_add_func ("/supervisor/results/every-stop-reason-row", test_stop_reason_rows);
  g_test_add_func ("/supervisor/budget/refuses-spent-parent", test_budget_refuses_spent_parent);
  g_test_add_func ("/supervisor/budget/caps-child-with-what-is-left", test_budget_caps_child_with_what_is_left);
  g_test_add_func ("/supervisor/budget/stops-child-past-budget", test_budget_stops_child_past_budget);
  g_test_add_func ("/supervisor/events/signals-and-jsonl", test_events_signals_and_jsonl);
  g_test_add_func ("/supervisor/events/line-matches-json", test_event_line_matches_json);
  g_test_add_func ("/supervisor/events/unheard-written-the-same", test_unheard_events_written_the_same);
  g_test_add_func ("/supervisor/events/line-written-before-signal", test_events_line_written_before_signal);
  return g_test_run ();
}
