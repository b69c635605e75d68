/* test-follow-up.c: resuming a finished child's session (reference 003's
 * follow_up) — through the supervisor and `subagentctl follow-up`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>

#include "supervisor-test-support.h"

typedef struct {
  char *root;
  GateRunner *gate;
  SubagentManager *manager;
  SubagentSupervisor *supervisor;
  SstRecorder recorder;
} Fixture;

static const char *defs_yaml[] = {
  "helper", "name: helper\n",
  "once", "name: once\nmax_follow_ups: 1\n",
  "snap", "name: snap\nisolation: directory-snapshot\n",
};

static void
fixture_open (Fixture *f,
              gboolean keep)
{
  f->root = sst_make_root (FALSE, defs_yaml[0], defs_yaml[1], defs_yaml[2], defs_yaml[3], defs_yaml[4], defs_yaml[5],
                           NULL);
  /* A copied snapshot (not an overlay mount) can be removed under a test. */
  sat_write_file (f->root, ".subagent/config.yaml", "snapshot:\n  strategy: copy\n");
  f->gate = gate_runner_new ();
  f->manager = sst_manager_new (f->root, f->gate);
  f->supervisor = sst_supervisor_new (f->manager, 2, -1, -1);
  subagent_supervisor_set_keep_workspaces (f->supervisor, keep);
  sst_recorder_start (&f->recorder, f->supervisor);
}

static void
fixture_close (Fixture *f)
{
  g_autoptr(SubagentShutdownReport) report = NULL;

  gate_runner_release_all (f->gate);
  report = subagent_supervisor_shutdown (f->supervisor, 5000, NULL);
  g_assert_true (subagent_shutdown_report_get_clean (report));
  sst_flush_main ();
  sst_recorder_stop (&f->recorder);
  g_clear_object (&f->supervisor);
  g_clear_object (&f->manager);
  g_clear_object (&f->gate);
  sat_rm_rf (f->root);
  g_free (f->root);
}

/* Answers "answer to TASK", costs 1 cent; a task "write" leaves a note in
 * the workspace, a task "read" reports whether the note is there. */
static SubagentRunOutcome *
decide (SubagentRunContext *context,
        gpointer            user_data)
{
  const char *task = subagent_run_context_get_task (context);
  const char *child_root = subagent_isolation_context_get_child_root (subagent_run_context_get_isolation (context));
  g_autofree char *note = g_build_filename (child_root, "note.txt", NULL);
  g_autofree char *answer = NULL;

  if (g_str_equal (task, "write"))
    g_assert_true (g_file_set_contents (note, "kept\n", -1, NULL));
  if (g_str_equal (task, "read"))
    answer = g_strdup (g_file_test (note, G_FILE_TEST_EXISTS) ? "the note is there" : "no note");
  else
    answer = g_strdup_printf ("answer to %s", task);
  return sst_complete (answer, 1.0);
}

/* The manager's session log: named by its run id. */
static char *
manager_log_path (Fixture *f)
{
  g_autofree char *name = g_strconcat (subagent_manager_get_run_id (f->manager), ".jsonl", NULL);

  return g_build_filename (f->root, ".subagent", "sessions", name, NULL);
}

/* A child of @def_name run to its end, complete. */
static SubagentRunResult *
spawn_to_end (Fixture    *f,
              const char *task,
              const char *def_name)
{
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *run_id = NULL;
  SubagentRunResult *result;

  subagent_run_options_set_def_name (options, def_name);
  run_id = subagent_supervisor_spawn (f->supervisor, task, options, &error);
  g_assert_no_error (error);
  result = sst_wait_result (f->supervisor, run_id, &error);
  g_assert_no_error (error);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  return result;
}

static char *
run_to_end (Fixture    *f,
            const char *task,
            const char *def_name)
{
  g_autoptr(SubagentRunResult) result = spawn_to_end (f, task, def_name);

  return g_strdup (subagent_run_result_get_run_id (result));
}

static SubagentRunResult *
follow_up_to_end (Fixture    *f,
                  const char *session_id,
                  const char *task)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *run_id = subagent_supervisor_follow_up (f->supervisor, session_id, task, &error);
  SubagentRunResult *result;

  g_assert_no_error (error);
  g_assert_cmpstr (run_id, ==, session_id);
  result = sst_wait_result (f->supervisor, run_id, &error);
  g_assert_no_error (error);
  return result;
}

static void
test_shared_resumes_session (void)
{
  Fixture f = { 0, };
  g_autofree char *id = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(SubagentSession) session = NULL;
  g_autoptr(SubagentSession) on_disk = NULL;
  g_autoptr(JsonObject) envelope = NULL;
  g_autofree char *path = NULL;
  SubagentEvent *accepted = NULL;

  fixture_open (&f, FALSE);
  gate_runner_set_decide (f.gate, decide, NULL);
  id = run_to_end (&f, "first", "helper");
  result = follow_up_to_end (&f, id, "second");

  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "answer to second");
  g_assert_cmpstr (subagent_run_result_get_session_id (result), ==, id);

  session = subagent_manager_get_session (f.manager, id);
  g_assert_cmpuint (subagent_session_get_follow_ups (session), ==, 1);
  g_assert_cmpfloat (subagent_session_get_cost_cents (session), ==, 2.0);
  g_assert_cmpuint (subagent_session_get_iterations (session), ==, 2);
  g_assert_cmpstr (subagent_session_get_task (session), ==, "first");
  g_assert_cmpstr (subagent_session_get_final_answer (session), ==, "answer to second");

  /* On disk, the follow-up's record supersedes the first one. */
  path = g_build_filename (f.root, ".subagent", "sessions", NULL);
  on_disk = subagent_session_log_lookup (path, id, NULL);
  g_assert_nonnull (on_disk);
  g_assert_cmpuint (subagent_session_get_follow_ups (on_disk), ==, 1);
  g_assert_cmpstr (subagent_session_get_final_answer (on_disk), ==, "answer to second");

  /* Its events say which follow-up it is. */
  sst_flush_main ();
  for (guint i = 0; i < f.recorder.events->len; i++)
    {
      SubagentEvent *event = f.recorder.events->pdata[i];

      if (g_str_equal (subagent_event_get_run_id (event), id) && subagent_event_get_kind (event) == SUBAGENT_EVENT_ACCEPTED)
        accepted = event;
    }
  g_assert_nonnull (accepted);
  g_assert_cmpint (json_object_get_int_member (subagent_event_get_details (accepted), "follow_up"), ==, 1);

  /* Follow-ups left: the model may continue it. */
  envelope = subagent_supervisor_project_result (f.supervisor, result);
  g_assert_cmpstr (json_object_get_string_member (envelope, "continuation"), ==, id);
  fixture_close (&f);
}

static void
test_refused_while_running (void)
{
  Fixture f = { 0, };
  g_autoptr(GError) error = NULL;
  g_autofree char *id = NULL;
  g_autoptr(SubagentRunResult) result = NULL;

  fixture_open (&f, FALSE);
  id = subagent_supervisor_spawn (f.supervisor, "slow", NULL, &error);
  g_assert_no_error (error);
  sst_wait_started (f.gate, 1);

  g_assert_null (subagent_supervisor_follow_up (f.supervisor, id, "are you done?", &error));
  g_assert_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_STILL_RUNNING);
  g_clear_error (&error);
  g_assert_false (subagent_supervisor_can_follow_up (f.supervisor, id, &error));
  g_assert_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_STILL_RUNNING);

  gate_runner_release (f.gate, "slow", sst_complete ("done", 0));
  result = sst_wait_result (f.supervisor, id, NULL);
  g_assert_true (subagent_supervisor_can_follow_up (f.supervisor, id, NULL));
  fixture_close (&f);
}

static void
test_refused_past_max_follow_ups (void)
{
  Fixture f = { 0, };
  g_autoptr(GError) error = NULL;
  g_autofree char *id = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(JsonObject) envelope = NULL;
  guint started;

  fixture_open (&f, FALSE);
  gate_runner_set_decide (f.gate, decide, NULL);
  id = run_to_end (&f, "first", "once");
  result = follow_up_to_end (&f, id, "second");
  envelope = subagent_supervisor_project_result (f.supervisor, result);
  g_assert_false (json_object_has_member (envelope, "continuation"));

  started = gate_runner_get_n_started (f.gate);
  g_assert_null (subagent_supervisor_follow_up (f.supervisor, id, "third", &error));
  g_assert_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_FOLLOW_UP_LIMIT);
  g_assert_nonnull (strstr (error->message, "max_follow_ups"));
  sst_flush_main ();
  g_assert_cmpuint (gate_runner_get_n_started (f.gate), ==, started);
  fixture_close (&f);
}

static void
test_refused_workspace_not_kept (void)
{
  Fixture f = { 0, };
  g_autoptr(GError) error = NULL;
  g_autofree char *id = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(JsonObject) envelope = NULL;

  fixture_open (&f, FALSE);
  gate_runner_set_decide (f.gate, decide, NULL);
  id = run_to_end (&f, "first", "snap");
  result = subagent_supervisor_lookup_result (f.supervisor, id);
  envelope = subagent_supervisor_project_result (f.supervisor, result);
  g_assert_false (json_object_has_member (envelope, "continuation"));

  g_assert_null (subagent_supervisor_follow_up (f.supervisor, id, "again", &error));
  g_assert_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_WORKSPACE_GONE);
  g_assert_nonnull (strstr (error->message, "keep-workspaces"));
  fixture_close (&f);
}

static void
test_kept_workspace_reused_then_disposed (void)
{
  Fixture f = { 0, };
  g_autofree char *id = NULL;
  g_autofree char *first_root = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(SubagentSession) session = NULL;
  g_autoptr(SubagentShutdownReport) report = NULL;
  SubagentEvent *disposed;

  fixture_open (&f, TRUE);
  gate_runner_set_decide (f.gate, decide, NULL);
  id = run_to_end (&f, "write", "snap");
  first_root = g_strdup (subagent_isolation_context_get_child_root (
    subagent_run_context_get_isolation (gate_runner_get_context (f.gate, "write"))));
  g_assert_true (g_file_test (first_root, G_FILE_TEST_IS_DIR));
  session = subagent_manager_get_session (f.manager, id);
  g_assert_true (subagent_session_get_workspace_kept (session));
  sst_flush_main ();
  g_assert_null (sst_recorder_find (&f.recorder, id, SUBAGENT_EVENT_WORKSPACE_DISPOSED));

  result = follow_up_to_end (&f, id, "read");
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "the note is there");
  g_assert_cmpstr (subagent_isolation_context_get_child_root (
                     subagent_run_context_get_isolation (gate_runner_get_context (f.gate, "read"))), ==, first_root);

  /* Shutdown cleans kept workspaces up, and says so. */
  report = subagent_supervisor_shutdown (f.supervisor, 5000, NULL);
  g_assert_true (subagent_shutdown_report_get_clean (report));
  sst_flush_main ();
  g_assert_false (g_file_test (first_root, G_FILE_TEST_EXISTS));
  disposed = sst_recorder_find (&f.recorder, id, SUBAGENT_EVENT_WORKSPACE_DISPOSED);
  g_assert_nonnull (disposed);
  g_assert_cmpstr (json_object_get_string_member (subagent_event_get_details (disposed), "workspace"), ==, first_root);
  fixture_close (&f);
}

static void
test_refused_kept_workspace_gone (void)
{
  Fixture f = { 0, };
  g_autoptr(GError) error = NULL;
  g_autofree char *id = NULL;
  const char *child_root;

  fixture_open (&f, TRUE);
  gate_runner_set_decide (f.gate, decide, NULL);
  id = run_to_end (&f, "write", "snap");
  child_root = subagent_isolation_context_get_child_root (
    subagent_run_context_get_isolation (gate_runner_get_context (f.gate, "write")));
  sat_rm_rf (child_root);

  g_assert_null (subagent_supervisor_follow_up (f.supervisor, id, "read", &error));
  g_assert_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_WORKSPACE_GONE);
  g_assert_nonnull (strstr (error->message, "no longer exists"));
  fixture_close (&f);
}

static void
test_refused_unknown_and_invalid (void)
{
  Fixture f = { 0, };
  g_autoptr(GError) error = NULL;

  fixture_open (&f, FALSE);
  g_assert_null (subagent_supervisor_follow_up (f.supervisor, "0123456789abcdef", "task", &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_null (subagent_supervisor_follow_up (f.supervisor, "../../etc/passwd", "task", &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  fixture_close (&f);
}

static void
test_session_loaded_from_disk (void)
{
  Fixture f = { 0, };
  g_autofree char *id = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentSupervisor) supervisor = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(SubagentShutdownReport) report = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *again = NULL;

  fixture_open (&f, FALSE);
  gate_runner_set_decide (f.gate, decide, NULL);
  id = run_to_end (&f, "first", "helper");

  /* Another host over the same root knows the session only from its file. */
  manager = sst_manager_new (f.root, f.gate);
  supervisor = sst_supervisor_new (manager, 1, -1, -1);
  g_assert_null (subagent_manager_get_session (manager, id));
  again = subagent_supervisor_follow_up (supervisor, id, "from elsewhere", &error);
  g_assert_no_error (error);
  result = sst_wait_result (supervisor, again, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "answer to from elsewhere");
  {
    g_autoptr(SubagentSession) session = subagent_manager_get_session (manager, id);
    g_assert_cmpuint (subagent_session_get_follow_ups (session), ==, 1);
  }
  report = subagent_supervisor_shutdown (supervisor, 0, NULL);
  g_clear_object (&supervisor);
  fixture_close (&f);
}

/* Only the latest children's records stay in memory; the older ones are
 * read back from the manager's session log, listed and resumed like the
 * others. */
static void
test_older_sessions_read_back (void)
{
  Fixture f = { 0, };
  char *ids[5] = { NULL, };
  g_autoptr(GPtrArray) all = NULL;
  g_autoptr(SubagentRunResult) result = NULL;

  fixture_open (&f, FALSE);
  gate_runner_set_decide (f.gate, decide, NULL);
  g_assert_cmpuint (subagent_manager_get_sessions_in_memory (f.manager), ==, 256);
  subagent_manager_set_sessions_in_memory (f.manager, 2);
  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      g_autofree char *task = g_strdup_printf ("task %u", i);

      ids[i] = run_to_end (&f, task, "helper");
    }

  /* The latest: the one object kept in memory. */
  {
    g_autoptr(SubagentSession) once = subagent_manager_get_session (f.manager, ids[4]);
    g_autoptr(SubagentSession) again = subagent_manager_get_session (f.manager, ids[4]);

    g_assert_true (once == again);
  }
  /* The oldest: read back, a new object each time, the same record. */
  {
    g_autoptr(SubagentSession) once = subagent_manager_get_session (f.manager, ids[0]);
    g_autoptr(SubagentSession) again = subagent_manager_get_session (f.manager, ids[0]);

    g_assert_nonnull (once);
    g_assert_true (once != again);
    g_assert_cmpstr (subagent_session_get_session_id (once), ==, ids[0]);
    g_assert_cmpstr (subagent_session_get_task (once), ==, "task 0");
    g_assert_cmpstr (subagent_session_get_final_answer (once), ==, "answer to task 0");
    g_assert_cmpint (subagent_session_get_status (once), ==, SUBAGENT_RUN_STATUS_COMPLETE);
    g_assert_cmpstr (subagent_session_get_final_answer (again), ==, "answer to task 0");
  }
  g_assert_null (subagent_manager_get_session (f.manager, "0123456789abcdef"));

  all = subagent_manager_list_sessions (f.manager);
  g_assert_cmpuint (all->len, ==, G_N_ELEMENTS (ids));
  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      guint found = 0;

      for (guint j = 0; j < all->len; j++)
        found += g_str_equal (subagent_session_get_session_id (all->pdata[j]), ids[i]);
      g_assert_cmpuint (found, ==, 1);
    }

  /* Resumed, the oldest is the newest in memory. */
  result = follow_up_to_end (&f, ids[0], "again");
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "answer to again");
  {
    g_autoptr(SubagentSession) once = subagent_manager_get_session (f.manager, ids[0]);
    g_autoptr(SubagentSession) again = subagent_manager_get_session (f.manager, ids[0]);

    g_assert_true (once == again);
    g_assert_cmpuint (subagent_session_get_follow_ups (once), ==, 1);
  }
  /* A smaller bound drops the older ones at once. */
  subagent_manager_set_sessions_in_memory (f.manager, 1);
  {
    g_autoptr(SubagentSession) once = subagent_manager_get_session (f.manager, ids[4]);
    g_autoptr(SubagentSession) again = subagent_manager_get_session (f.manager, ids[4]);

    g_assert_true (once != again);
    g_assert_cmpstr (subagent_session_get_task (once), ==, "task 4");
  }
  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    g_free (ids[i]);
  fixture_close (&f);
}

/* A dropped record is read from its own line; when another writer has
 * put bytes in the log behind the manager's back, the lines it wrote after
 * are not where it thinks, and the whole log is read instead. */
static void
test_older_sessions_read_after_foreign_bytes (void)
{
  Fixture f = { 0, };
  char *ids[5] = { NULL, };
  g_autofree char *log_path = NULL;

  fixture_open (&f, FALSE);
  gate_runner_set_decide (f.gate, decide, NULL);
  subagent_manager_set_sessions_in_memory (f.manager, 1);
  ids[0] = run_to_end (&f, "task 0", "helper");
  ids[1] = run_to_end (&f, "task 1", "helper");
  log_path = manager_log_path (&f);
  g_assert_true (g_file_test (log_path, G_FILE_TEST_IS_REGULAR));
  {
    FILE *other = fopen (log_path, "a");

    g_assert_nonnull (other);
    g_assert_cmpint (fputs ("{\"not\": \"a session\"}\n", other), >=, 0);
    g_assert_cmpint (fclose (other), ==, 0);
  }
  for (guint i = 2; i < G_N_ELEMENTS (ids); i++)
    {
      g_autofree char *task = g_strdup_printf ("task %u", i);

      ids[i] = run_to_end (&f, task, "helper");
    }
  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      g_autoptr(SubagentSession) session = subagent_manager_get_session (f.manager, ids[i]);
      g_autofree char *task = g_strdup_printf ("task %u", i);

      g_assert_nonnull (session);
      g_assert_cmpstr (subagent_session_get_session_id (session), ==, ids[i]);
      g_assert_cmpstr (subagent_session_get_task (session), ==, task);
      g_free (ids[i]);
    }
  fixture_close (&f);
}

/* A child's record is written from its run, and the session a caller gets
 * is made of that line: both must be the record of the same session,
 * byte for byte (a shared child, a kept snapshot with its review, a
 * follow-up whose usage adds up). */
static void
test_written_record_is_the_sessions (void)
{
  Fixture f = { 0, };
  g_autofree char *shared = NULL;
  g_autofree char *snap = NULL;
  g_autoptr(SubagentRunResult) again = NULL;
  g_autofree char *log_path = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GHashTable) latest = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter iter;
  gpointer id, line;

  fixture_open (&f, TRUE);
  gate_runner_set_decide (f.gate, decide, NULL);
  shared = run_to_end (&f, "first", "helper");
  snap = run_to_end (&f, "write", "snap");
  again = follow_up_to_end (&f, shared, "again");

  log_path = manager_log_path (&f);
  g_assert_true (g_file_get_contents (log_path, &text, NULL, NULL));
  lines = g_strsplit (g_strchomp (text), "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);
  /* A session's latest line is its record. */
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonNode) node = json_from_string (lines[i], NULL);

      g_hash_table_replace (latest, g_strdup (json_object_get_string_member (json_node_get_object (node), "session_id")),
                            lines[i]);
    }
  g_assert_cmpuint (g_hash_table_size (latest), ==, 2);

  g_hash_table_iter_init (&iter, latest);
  while (g_hash_table_iter_next (&iter, &id, &line))
    {
      g_autoptr(SubagentSession) session = subagent_manager_get_session (f.manager, id);
      g_autoptr(JsonObject) object = subagent_session_to_json (session);
      g_autoptr(JsonNode) root = json_node_init_object (json_node_alloc (), object);
      g_autofree char *generated = json_to_string (root, FALSE);

      g_assert_cmpstr (generated, ==, line);
    }
  {
    g_autoptr(SubagentSession) followed = subagent_manager_get_session (f.manager, shared);
    g_autoptr(SubagentSession) kept = subagent_manager_get_session (f.manager, snap);

    g_assert_cmpuint (subagent_session_get_follow_ups (followed), ==, 1);
    g_assert_cmpfloat (subagent_session_get_cost_cents (followed), ==, 2.0);
    g_assert_cmpstr (subagent_session_get_task (followed), ==, "first");
    g_assert_true (subagent_session_get_workspace_kept (kept));
    g_assert_nonnull (subagent_session_get_review (kept));
    g_assert_nonnull (subagent_session_get_child_root (kept));
    g_assert_cmpstr (subagent_session_get_isolation (kept), ==, "directory-snapshot");
  }
  fixture_close (&f);
}

/* A record the session log could not take stays in memory, whatever the
 * bound: it is the only copy. */
static void
test_unwritten_sessions_stay (void)
{
  Fixture f = { 0, };
  char *ids[3] = { NULL, };
  g_autofree char *sessions_dir = NULL;
  g_autoptr(GPtrArray) all = NULL;

  fixture_open (&f, FALSE);
  gate_runner_set_decide (f.gate, decide, NULL);
  subagent_manager_set_sessions_in_memory (f.manager, 1);
  /* A file where the sessions directory would be: no log can be made. */
  sessions_dir = g_build_filename (f.root, ".subagent", "sessions", NULL);
  g_assert_true (g_file_set_contents (sessions_dir, "", 0, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      g_autofree char *task = g_strdup_printf ("task %u", i);

      g_test_expect_message ("Subagent", G_LOG_LEVEL_WARNING, "Cannot keep the session record of run *");
      ids[i] = run_to_end (&f, task, "helper");
      g_test_assert_expected_messages ();
    }

  all = subagent_manager_list_sessions (f.manager);
  g_assert_cmpuint (all->len, ==, G_N_ELEMENTS (ids));
  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      g_autoptr(SubagentSession) once = subagent_manager_get_session (f.manager, ids[i]);
      g_autoptr(SubagentSession) again = subagent_manager_get_session (f.manager, ids[i]);

      g_assert_nonnull (once);
      g_assert_true (once == again);
      g_free (ids[i]);
    }
  g_assert_cmpint (g_unlink (sessions_dir), ==, 0);
  fixture_close (&f);
}

/* Past results-in-memory, a finished child's result leaves memory and is
 * rebuilt from its session record, the same result. */
static void
test_older_results_read_back (void)
{
  Fixture f = { 0, };
  SubagentRunResult *results[4] = { NULL, };
  g_autoptr(SubagentRunResult) again = NULL;
  g_autoptr(SubagentRunResult) latest = NULL;
  g_autoptr(SubagentRunResult) follow_up = NULL;
  g_autoptr(GError) error = NULL;
  const char *oldest;

  fixture_open (&f, FALSE);
  gate_runner_set_decide (f.gate, decide, NULL);
  g_assert_cmpuint (subagent_supervisor_get_results_in_memory (f.supervisor), ==, 256);
  subagent_supervisor_set_results_in_memory (f.supervisor, 2);
  /* From the log, not from the manager's memory. */
  subagent_manager_set_sessions_in_memory (f.manager, 1);
  for (guint i = 0; i < G_N_ELEMENTS (results); i++)
    {
      g_autofree char *task = g_strdup_printf ("task %u", i);

      results[i] = spawn_to_end (&f, task, "helper");
    }
  oldest = subagent_run_result_get_run_id (results[0]);

  /* The latest: the very object the wait returned. */
  latest = subagent_supervisor_lookup_result (f.supervisor, subagent_run_result_get_run_id (results[3]));
  g_assert_true (latest == results[3]);
  /* The oldest: rebuilt, equal in every field. */
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(SubagentRunResult) rebuilt = subagent_supervisor_lookup_result (f.supervisor,
                                                                              subagent_run_result_get_run_id (results[i]));
      g_autofree char *expected = sst_result_text (results[i]);
      g_autofree char *found = NULL;

      g_assert_nonnull (rebuilt);
      g_assert_true (rebuilt != results[i]);
      found = sst_result_text (rebuilt);
      g_assert_cmpstr (found, ==, expected);
      g_assert_cmpstr (subagent_run_result_get_confinement (rebuilt), ==,
                       subagent_run_result_get_confinement (results[i]));
    }
  again = sst_wait_result (f.supervisor, oldest, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_result_get_final_answer (again), ==, "answer to task 0");
  g_assert_cmpint (subagent_supervisor_cancel (f.supervisor, oldest, SUBAGENT_CANCEL_CAUSE_USER), ==,
                   SUBAGENT_CANCEL_OUTCOME_ALREADY_FINISHED);
  g_assert_false (subagent_supervisor_is_active (f.supervisor, oldest));

  /* An id no child had is still unknown. */
  g_assert_null (subagent_supervisor_lookup_result (f.supervisor, "0123456789abcdef"));
  g_assert_cmpint (subagent_supervisor_cancel (f.supervisor, "0123456789abcdef", SUBAGENT_CANCEL_CAUSE_USER), ==,
                   SUBAGENT_CANCEL_OUTCOME_NOT_ACTIVE);
  g_assert_null (sst_wait_result (f.supervisor, "0123456789abcdef", &error));
  g_assert_error (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_NOT_ACTIVE);
  g_clear_error (&error);

  /* A follow-up's result is its own run's (1 cent), not the session's
   * total (2 cents), also once it left memory. */
  follow_up = follow_up_to_end (&f, oldest, "again");
  g_assert_cmpfloat (subagent_run_result_get_cost_cents (follow_up), ==, 1.0);
  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *task = g_strdup_printf ("later %u", i);
      g_autoptr(SubagentRunResult) later = spawn_to_end (&f, task, "helper");
    }
  {
    g_autoptr(SubagentRunResult) rebuilt = subagent_supervisor_lookup_result (f.supervisor, oldest);
    g_autoptr(SubagentSession) session = subagent_manager_get_session (f.manager, oldest);
    g_autofree char *expected = sst_result_text (follow_up);
    g_autofree char *found = sst_result_text (rebuilt);

    g_assert_true (rebuilt != follow_up);
    g_assert_cmpstr (found, ==, expected);
    g_assert_cmpfloat (subagent_session_get_cost_cents (session), ==, 2.0);
  }

  /* A smaller bound drops the older ones at once. */
  subagent_supervisor_set_results_in_memory (f.supervisor, 1);
  g_clear_object (&latest);
  latest = subagent_supervisor_lookup_result (f.supervisor, subagent_run_result_get_run_id (results[3]));
  g_assert_true (latest != results[3]);
  for (guint i = 0; i < G_N_ELEMENTS (results); i++)
    g_object_unref (results[i]);
  fixture_close (&f);
}

/* A child cancelled before it started has no session record: its result
 * stays in memory, whatever the bound. */
static void
test_unrecorded_results_stay (void)
{
  Fixture f = { 0, };
  g_autoptr(GError) error = NULL;
  char *held[2] = { NULL, };
  g_autofree char *queued = NULL;
  g_autoptr(SubagentRunResult) cancelled = NULL;
  g_autoptr(SubagentRunResult) found = NULL;

  fixture_open (&f, FALSE);
  subagent_supervisor_set_results_in_memory (f.supervisor, 1);
  /* Two at the gate fill both slots; the third waits in the queue. */
  held[0] = subagent_supervisor_spawn (f.supervisor, "held 0", NULL, &error);
  g_assert_no_error (error);
  held[1] = subagent_supervisor_spawn (f.supervisor, "held 1", NULL, &error);
  g_assert_no_error (error);
  queued = subagent_supervisor_spawn (f.supervisor, "queued", NULL, &error);
  g_assert_no_error (error);
  sst_wait_started (f.gate, 2);
  g_assert_cmpint (subagent_supervisor_cancel (f.supervisor, queued, SUBAGENT_CANCEL_CAUSE_USER), ==,
                   SUBAGENT_CANCEL_OUTCOME_ACCEPTED);
  cancelled = sst_wait_result (f.supervisor, queued, &error);
  g_assert_no_error (error);
  g_assert_null (subagent_run_result_get_session_id (cancelled));

  for (guint i = 0; i < G_N_ELEMENTS (held); i++)
    {
      g_autofree char *task = g_strdup_printf ("held %u", i);
      g_autoptr(SubagentRunResult) result = NULL;

      gate_runner_release (f.gate, task, sst_complete ("done", 0));
      result = sst_wait_result (f.supervisor, held[i], &error);
      g_assert_no_error (error);
      g_free (held[i]);
    }
  found = subagent_supervisor_lookup_result (f.supervisor, queued);
  g_assert_true (found == cancelled);
  g_assert_cmpint (subagent_run_result_get_status (found), ==, SUBAGENT_RUN_STATUS_CANCELLED);
  fixture_close (&f);
}

static void
test_cli_sessions_and_follow_up (void)
{
  g_autofree char *root = sst_make_root (FALSE, "echo",
                                         "name: echo\nmax_follow_ups: 1\n"
                                         "command: [/bin/sh, -c, 'read t; echo \"{\\\"type\\\":\\\"usage\\\",\\\"cost_cents\\\":0.5}\"; echo \"did $t\"']\n",
                                         NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonNode) results = NULL;
  g_autoptr(JsonNode) sessions = NULL;
  const char *id;
  JsonObject *listed;

  sat_write_file (root, "batch.json", "[{\"task\": \"first\", \"def_name\": \"echo\"}]");
  g_assert_cmpint (sat_run_ctl (root, &out, &err, "batch", "--json", "batch.json", NULL), ==, 0);
  results = json_from_string (out, NULL);
  id = json_object_get_string_member (json_array_get_object_element (json_node_get_array (results), 0), "run_id");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (sat_run_ctl (root, &out, &err, "follow-up", id, "second", "task", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "did second task"));
  g_assert_nonnull (strstr (out, id));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (sat_run_ctl (root, &out, &err, "sessions", "--json", NULL), ==, 0);
  sessions = json_from_string (out, NULL);
  g_assert_cmpuint (json_array_get_length (json_node_get_array (sessions)), ==, 1);
  listed = json_array_get_object_element (json_node_get_array (sessions), 0);
  g_assert_cmpstr (json_object_get_string_member (listed, "session_id"), ==, id);
  g_assert_cmpint (json_object_get_int_member (listed, "follow_ups"), ==, 1);
  g_assert_cmpfloat (json_object_get_double_member (listed, "cost_cents"), ==, 1.0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (sat_run_ctl (root, &out, &err, "sessions", NULL), ==, 0);
  g_assert_nonnull (strstr (out, id));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* One follow-up is all "echo" takes. */
  g_assert_cmpint (sat_run_ctl (root, &out, &err, "follow-up", id, "third", NULL), ==, 1);
  g_assert_nonnull (strstr (err, "max_follow_ups"));
  sat_rm_rf (root);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/follow-up/shared/resumes-the-session", test_shared_resumes_session);
  g_test_add_func ("/follow-up/shared/session-loaded-from-disk", test_session_loaded_from_disk);
  g_test_add_func ("/follow-up/refused/while-running", test_refused_while_running);
  g_test_add_func ("/follow-up/refused/past-max-follow-ups", test_refused_past_max_follow_ups);
  g_test_add_func ("/follow-up/refused/workspace-not-kept", test_refused_workspace_not_kept);
  g_test_add_func ("/follow-up/refused/kept-workspace-gone", test_refused_kept_workspace_gone);
  g_test_add_func ("/follow-up/refused/unknown-and-invalid-session", test_refused_unknown_and_invalid);
  g_test_add_func ("/follow-up/kept-workspace/reused-then-disposed-at-shutdown", test_kept_workspace_reused_then_disposed);
  g_test_add_func ("/follow-up/sessions/older-ones-read-back-from-the-log", test_older_sessions_read_back);
  g_test_add_func ("/follow-up/sessions/read-back-after-another-writer", test_older_sessions_read_after_foreign_bytes);
  g_test_add_func ("/follow-up/sessions/unwritten-ones-stay-in-memory", test_unwritten_sessions_stay);
  g_test_add_func ("/follow-up/sessions/written-record-is-the-sessions", test_written_record_is_the_sessions);
  g_test_add_func ("/follow-up/results/older-ones-rebuilt-from-the-records", test_older_results_read_back);
  g_test_add_func ("/follow-up/results/unrecorded-ones-stay-in-memory", test_unrecorded_results_stay);
  g_test_add_func ("/follow-up/cli/sessions-and-follow-up", test_cli_sessions_and_follow_up);
  return g_test_run ();
}
