/* test-lineage-session.c: lineage, session, run result, run outcome and run
 * context — the value objects of a run.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "test-support.h"

/* Asserts @object has exactly the keys of the NULL-terminated list, in any order. */
static void
assert_keys (JsonObject *object,
             ...)
{
  g_autoptr(GList) members = json_object_get_members (object);
  g_autoptr(GPtrArray) expected = g_ptr_array_new ();
  va_list ap;

  va_start (ap, object);
  for (const char *k = va_arg (ap, const char *); k != NULL; k = va_arg (ap, const char *))
    g_ptr_array_add (expected, (gpointer) k);
  va_end (ap);

  for (GList *l = members; l != NULL; l = l->next)
    {
      gboolean known = FALSE;

      for (guint i = 0; i < expected->len; i++)
        known |= g_str_equal (l->data, expected->pdata[i]);
      if (!known)
        g_error ("unexpected key “%s”", (const char *) l->data);
    }
  for (guint i = 0; i < expected->len; i++)
    if (!json_object_has_member (object, expected->pdata[i]))
      g_error ("missing key “%s”", (const char *) expected->pdata[i]);
  g_assert_cmpuint (g_list_length (members), ==, expected->len);
}

static JsonObject *
parse_object (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

static void
test_lineage_json_keys (void)
{
  g_autoptr(SubagentLineage) lineage = subagent_lineage_new ("parent-1", "reviewer", 1, NULL,
                                                             SUBAGENT_NO_BATCH_INDEX, NULL, NULL);
  g_autoptr(JsonObject) json = subagent_lineage_to_json (lineage);

  assert_keys (json, "parent_run_id", "def_name", "depth", "isolation", "batch_index",
               "worktree_path", "container_path", NULL);
  g_assert_cmpstr (json_object_get_string_member (json, "parent_run_id"), ==, "parent-1");
  g_assert_cmpstr (json_object_get_string_member (json, "def_name"), ==, "reviewer");
  g_assert_cmpint (json_object_get_int_member (json, "depth"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json, "isolation"), ==, "shared");
  g_assert_true (json_object_get_null_member (json, "batch_index"));
  g_assert_true (json_object_get_null_member (json, "worktree_path"));
  g_assert_true (json_object_get_null_member (json, "container_path"));
}

static void
test_lineage_json_roundtrip (void)
{
  g_autoptr(SubagentLineage) lineage = subagent_lineage_new ("p", "coder", 2, "worktree", 3,
                                                             "/tmp/wt", "/tmp/snap");
  g_autoptr(JsonObject) json = subagent_lineage_to_json (lineage);
  g_autoptr(SubagentLineage) back = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (json_object_get_int_member (json, "batch_index"), ==, 3);
  back = subagent_lineage_new_from_json (json, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_lineage_get_parent_run_id (back), ==, "p");
  g_assert_cmpstr (subagent_lineage_get_def_name (back), ==, "coder");
  g_assert_cmpuint (subagent_lineage_get_depth (back), ==, 2);
  g_assert_cmpstr (subagent_lineage_get_isolation (back), ==, "worktree");
  g_assert_cmpint (subagent_lineage_get_batch_index (back), ==, 3);
  g_assert_cmpstr (subagent_lineage_get_worktree_path (back), ==, "/tmp/wt");
  g_assert_cmpstr (subagent_lineage_get_container_path (back), ==, "/tmp/snap");
}

static void
test_lineage_from_json_rejects_bad_members (void)
{
  const char *bad[] = {
    "{\"def_name\":\"x\",\"depth\":1}",                                  /* no parent_run_id */
    "{\"parent_run_id\":\"p\",\"def_name\":\"x\",\"depth\":\"1\"}",      /* depth as text */
    "{\"parent_run_id\":\"p\",\"def_name\":\"x\",\"depth\":-1}",
    "{\"parent_run_id\":\"p\",\"def_name\":\"x\",\"depth\":1.5}",
    "{\"parent_run_id\":\"p\",\"def_name\":\"x\",\"batch_index\":-2}",
    "{\"parent_run_id\":\"p\",\"def_name\":7}",
    "{\"parent_run_id\":\"p\",\"def_name\":\"x\",\"worktree_path\":[]}",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(JsonObject) json = parse_object (bad[i]);
      g_autoptr(GError) error = NULL;
      g_autoptr(SubagentLineage) lineage = subagent_lineage_new_from_json (json, &error);

      g_assert_null (lineage);
      g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
    }
}

static SubagentSession *
make_session (const char *session_id,
              JsonObject *review)
{
  g_autoptr(GDateTime) started = g_date_time_new_from_iso8601 ("2025-03-01T10:00:00Z", NULL);
  g_autoptr(GDateTime) completed = g_date_time_new_from_iso8601 ("2025-03-01T10:05:30Z", NULL);

  return g_object_new (SUBAGENT_TYPE_SESSION,
                       "session-id", session_id,
                       "def-name", "coder",
                       "parent-run-id", "parent-9",
                       "status", SUBAGENT_RUN_STATUS_PARTIAL,
                       "started-at", started,
                       "completed-at", completed,
                       "depth", 2,
                       "batch-index", 4,
                       "isolation", "worktree",
                       "worktree-path", "/w/tree",
                       "iterations", 3,
                       "tool-calls", 5,
                       "cost-cents", 12.5,
                       "final-answer", "done-ish",
                       "review", review,
                       "task", "fix the bug",
                       "follow-ups", 1,
                       "workspace-kept", TRUE,
                       "child-root", "/w/tree",
                       NULL);
}

static void
test_session_json_keys (void)
{
  g_autoptr(SubagentSession) session = make_session ("run-1", NULL);
  g_autoptr(JsonObject) json = subagent_session_to_json (session);

  assert_keys (json, "session_id", "def_name", "parent_run_id", "status", "started_at", "depth",
               "batch_index", "isolation", "worktree_path", "container_path", "completed_at",
               "iterations", "tool_calls", "cost_cents", "final_answer", "review",
               "task", "follow_ups", "workspace_kept", "child_root", NULL);
  g_assert_cmpstr (json_object_get_string_member (json, "status"), ==, "partial");
  g_assert_true (json_object_get_null_member (json, "container_path"));
  g_assert_true (json_object_get_null_member (json, "review"));
  g_assert_cmpfloat (json_object_get_double_member (json, "cost_cents"), ==, 12.5);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (json, "started_at"), "2025-03-01T10:00:00"));
}

static void
test_session_lineage_getter (void)
{
  g_autoptr(SubagentSession) session = make_session ("run-1", NULL);
  SubagentLineage *lineage = subagent_session_get_lineage (session);

  g_assert_cmpstr (subagent_lineage_get_parent_run_id (lineage), ==, "parent-9");
  g_assert_cmpstr (subagent_lineage_get_def_name (lineage), ==, "coder");
  g_assert_cmpuint (subagent_lineage_get_depth (lineage), ==, 2);
  g_assert_cmpstr (subagent_lineage_get_isolation (lineage), ==, "worktree");
  g_assert_cmpint (subagent_lineage_get_batch_index (lineage), ==, 4);
  g_assert_cmpstr (subagent_lineage_get_worktree_path (lineage), ==, "/w/tree");
  g_assert_null (subagent_lineage_get_container_path (lineage));
}

static void
assert_sessions_equal (SubagentSession *a,
                       SubagentSession *b)
{
  g_autoptr(JsonNode) na = json_node_init_object (json_node_alloc (), subagent_session_to_json (a));
  g_autoptr(JsonNode) nb = json_node_init_object (json_node_alloc (), subagent_session_to_json (b));

  json_object_unref (json_node_get_object (na));
  json_object_unref (json_node_get_object (nb));
  g_assert_true (json_node_equal (na, nb));
}

static void
test_session_review_is_sealed_copy (void)
{
  g_autoptr(JsonObject) review = parse_object ("{\"patch\":\"a.patch\",\"files\":[\"x\",\"y\"]}");
  g_autoptr(SubagentSession) session = make_session ("run-1", review);
  JsonObject *held = subagent_session_get_review (session);

  /* Changing the caller's object does not change the session. */
  json_object_set_string_member (review, "patch", "changed.patch");
  g_assert_cmpstr (json_object_get_string_member (held, "patch"), ==, "a.patch");
  g_assert_true (json_object_is_immutable (held));
}

static void
test_session_save_load_roundtrip (void)
{
  g_autofree char *dir = sat_make_temp_dir ("sessions");
  g_autofree char *sessions = g_build_filename (dir, ".subagent", "sessions", NULL);
  g_autofree char *path = g_build_filename (sessions, "run-42.json", NULL);
  g_autoptr(JsonObject) review = parse_object ("{\"patch\":\"r.patch\",\"stat\":{\"files\":2}}");
  g_autoptr(SubagentSession) session = make_session ("run-42", review);
  g_autoptr(SubagentSession) loaded = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) listing = NULL;
  const char *name;
  guint count = 0;

  g_assert_true (subagent_session_save (session, sessions, &error));
  g_assert_no_error (error);
  /* Saving again replaces the record in place. */
  g_assert_true (subagent_session_save (session, sessions, &error));
  g_assert_no_error (error);

  listing = g_dir_open (sessions, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (listing)) != NULL)
    {
      g_assert_cmpstr (name, ==, "run-42.json");   /* no temporary file left behind */
      count++;
    }
  g_assert_cmpuint (count, ==, 1);

  loaded = subagent_session_load (path, &error);
  g_assert_no_error (error);
  assert_sessions_equal (session, loaded);
  g_assert_cmpuint (subagent_session_get_follow_ups (loaded), ==, 1);
  g_assert_true (subagent_session_get_workspace_kept (loaded));
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (subagent_session_get_review (loaded), "stat"), "files"), ==, 2);
  sat_rm_rf (dir);
}

static void
on_saved (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  gboolean *done = user_data;
  g_autoptr(GError) error = NULL;

  g_assert_true (subagent_session_save_finish (SUBAGENT_SESSION (source), result, &error));
  g_assert_no_error (error);
  *done = TRUE;
}

static void
test_session_save_async (void)
{
  g_autofree char *dir = sat_make_temp_dir ("sessions");
  g_autofree char *path = g_build_filename (dir, "async-1.json", NULL);
  g_autoptr(SubagentSession) session = make_session ("async-1", NULL);
  g_autoptr(SubagentSession) loaded = NULL;
  g_autoptr(GError) error = NULL;
  gboolean done = FALSE;

  subagent_session_save_async (session, dir, NULL, on_saved, &done);
  sat_wait_for_flag (&done);
  loaded = subagent_session_load (path, &error);
  g_assert_no_error (error);
  assert_sessions_equal (session, loaded);
  sat_rm_rf (dir);
}

static void
test_session_save_refuses_bad_id (void)
{
  const char *bad_ids[] = { "", "../escape", "a/b", "..", "has space", "dot.json" };
  g_autofree char *dir = sat_make_temp_dir ("sessions");
  g_autofree char *sessions = g_build_filename (dir, "sessions", NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (bad_ids); i++)
    {
      g_autoptr(SubagentSession) session = make_session (bad_ids[i], NULL);
      g_autoptr(GError) error = NULL;

      g_assert_false (subagent_session_id_is_valid (bad_ids[i]));
      g_assert_false (subagent_session_save (session, sessions, &error));
      g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
    }
  /* Nothing was written, not even the directory. */
  g_assert_false (g_file_test (sessions, G_FILE_TEST_EXISTS));
  g_assert_false (subagent_session_id_is_valid (NULL));
  g_assert_true (subagent_session_id_is_valid ("Run_1-a"));
  sat_rm_rf (dir);
}

static void
test_session_load_rejects_bad_records (void)
{
  g_autofree char *dir = sat_make_temp_dir ("sessions");
  struct {
    const char *file;
    const char *contents;
  } cases[] = {
    { "broken.json", "{not json" },
    { "array.json", "[1,2]" },
    { "renamed.json", "{\"session_id\":\"other\",\"def_name\":\"d\",\"parent_run_id\":\"p\",\"status\":\"complete\",\"started_at\":\"2025-01-01T00:00:00Z\"}" },
    { "badstatus.json", "{\"session_id\":\"badstatus\",\"def_name\":\"d\",\"parent_run_id\":\"p\",\"status\":\"great\",\"started_at\":\"2025-01-01T00:00:00Z\"}" },
    { "badtime.json", "{\"session_id\":\"badtime\",\"def_name\":\"d\",\"parent_run_id\":\"p\",\"status\":\"complete\",\"started_at\":\"yesterday\"}" },
    { "badid.json", "{\"session_id\":\"../x\",\"def_name\":\"d\",\"parent_run_id\":\"p\",\"status\":\"complete\",\"started_at\":\"2025-01-01T00:00:00Z\"}" },
  };
  g_autofree char *fifo = g_build_filename (dir, "fifo.json", NULL);
  g_autoptr(GError) fifo_error = NULL;
  g_autoptr(SubagentSession) from_fifo = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_build_filename (dir, cases[i].file, NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(SubagentSession) session = NULL;

      sat_write_file (dir, cases[i].file, cases[i].contents);
      session = subagent_session_load (path, &error);
      g_assert_null (session);
      g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, path));
    }

  /* A FIFO is refused at once instead of blocking the caller. */
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  from_fifo = subagent_session_load (fifo, &fifo_error);
  g_assert_null (from_fifo);
  g_assert_error (fifo_error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  sat_rm_rf (dir);
}

static void
test_run_result_success_keys (void)
{
  g_autoptr(SubagentLineage) lineage = subagent_lineage_new ("p", "d", 1, "shared", SUBAGENT_NO_BATCH_INDEX, NULL, NULL);
  g_autoptr(SubagentRunResult) result = subagent_run_result_new (SUBAGENT_RUN_STATUS_COMPLETE, "run-7", 3, 4, 2.25,
                                                                 "answer", lineage, NULL, "ok",
                                                                 SUBAGENT_STOP_REASON_COMPLETE, "run-7");
  g_autoptr(JsonObject) json = subagent_run_result_to_json (result);
  JsonObject *lineage_json;

  assert_keys (json, "run_id", "status", "iterations", "tool_calls", "cost_cents", "final_answer",
               "lineage", "message", NULL);
  g_assert_cmpstr (json_object_get_string_member (json, "run_id"), ==, "run-7");
  g_assert_cmpstr (json_object_get_string_member (json, "status"), ==, "complete");
  g_assert_cmpint (json_object_get_int_member (json, "iterations"), ==, 3);
  g_assert_cmpint (json_object_get_int_member (json, "tool_calls"), ==, 4);
  g_assert_cmpfloat (json_object_get_double_member (json, "cost_cents"), ==, 2.25);
  g_assert_cmpstr (json_object_get_string_member (json, "final_answer"), ==, "answer");
  g_assert_cmpstr (json_object_get_string_member (json, "message"), ==, "ok");
  lineage_json = json_object_get_object_member (json, "lineage");
  g_assert_cmpstr (json_object_get_string_member (lineage_json, "def_name"), ==, "d");
  g_assert_cmpstr (subagent_run_result_get_stop_reason (result), ==, "complete");
  g_assert_cmpstr (subagent_run_result_get_session_id (result), ==, "run-7");
  g_assert_false (subagent_run_result_is_error (result));
}

static void
test_run_result_review_only_when_present (void)
{
  g_autoptr(JsonObject) review = parse_object ("{\"patch_path\":\"x.patch\"}");
  g_autoptr(SubagentRunResult) result = subagent_run_result_new (SUBAGENT_RUN_STATUS_PARTIAL, "r", 1, 0, 0,
                                                                 "", NULL, review, "", "max_turns", NULL);
  g_autoptr(JsonObject) json = subagent_run_result_to_json (result);

  assert_keys (json, "run_id", "status", "iterations", "tool_calls", "cost_cents", "final_answer",
               "lineage", "review", "message", NULL);
  g_assert_true (json_object_get_null_member (json, "lineage"));
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (json, "review"), "patch_path"), ==, "x.patch");
  /* The returned tree belongs to the caller and can be changed. */
  json_object_set_string_member (json_object_get_object_member (json, "review"), "patch_path", "y");
  g_assert_cmpstr (json_object_get_string_member (subagent_run_result_get_review (result), "patch_path"), ==, "x.patch");
}

static void
test_run_result_error_keys (void)
{
  g_autoptr(SubagentRunResult) bare = subagent_run_result_new_error ("depth 2 exceeds max_depth 1", NULL);
  g_autoptr(JsonObject) json = subagent_run_result_to_json (bare);
  g_autoptr(SubagentLineage) lineage = subagent_lineage_new ("p", "d", 2, NULL, SUBAGENT_NO_BATCH_INDEX, NULL, NULL);
  g_autoptr(SubagentRunResult) with_lineage = subagent_run_result_new_error ("isolation failed", lineage);
  g_autoptr(JsonObject) json2 = subagent_run_result_to_json (with_lineage);
  /* Whatever was stored, the error shape is fixed. */
  g_autoptr(SubagentRunResult) odd = subagent_run_result_new (SUBAGENT_RUN_STATUS_ERROR, "r", 9, 9, 9.0,
                                                              "a", NULL, NULL, "m", "error", NULL);
  g_autoptr(JsonObject) json3 = subagent_run_result_to_json (odd);

  /* Every key, always: null where unknown (issue 12). */
  assert_keys (json, "run_id", "status", "iterations", "tool_calls", "cost_cents", "final_answer", "lineage",
               "message", NULL);
  g_assert_true (json_object_get_null_member (json, "lineage"));
  g_assert_cmpfloat (json_object_get_double_member (json, "cost_cents"), ==, 0.0);
  g_assert_cmpstr (json_object_get_string_member (json, "run_id"), ==, "");
  g_assert_cmpstr (json_object_get_string_member (json, "status"), ==, "error");
  g_assert_cmpint (json_object_get_int_member (json, "iterations"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (json, "tool_calls"), ==, 0);
  g_assert_cmpstr (json_object_get_string_member (json, "final_answer"), ==, "");
  g_assert_cmpstr (json_object_get_string_member (json, "message"), ==, "depth 2 exceeds max_depth 1");
  g_assert_true (subagent_run_result_is_error (bare));

  assert_keys (json2, "run_id", "status", "iterations", "tool_calls", "cost_cents", "final_answer", "message",
               "lineage", NULL);
  g_assert_cmpuint (json_object_get_int_member (json_object_get_object_member (json2, "lineage"), "depth"), ==, 2);

  assert_keys (json3, "run_id", "status", "iterations", "tool_calls", "cost_cents", "final_answer", "message",
               "lineage", NULL);
  g_assert_cmpfloat (json_object_get_double_member (json3, "cost_cents"), ==, 0.0);
  g_assert_cmpstr (json_object_get_string_member (json3, "run_id"), ==, "");
  g_assert_cmpint (json_object_get_int_member (json3, "iterations"), ==, 0);
}

static void
test_run_result_from_outcome (void)
{
  g_autoptr(SubagentRunOutcome) outcome = subagent_run_outcome_new (SUBAGENT_STOP_REASON_CANCELLED, 2, 1, 0.5,
                                                                    "", "half", "was cancelled");
  g_autoptr(SubagentRunResult) result = subagent_run_result_new_from_outcome ("run-3", outcome, NULL, NULL, "run-3");

  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_PARTIAL);
  g_assert_cmpstr (subagent_run_result_get_run_id (result), ==, "run-3");
  g_assert_cmpuint (subagent_run_result_get_iterations (result), ==, 2);
  g_assert_cmpuint (subagent_run_result_get_tool_calls (result), ==, 1);
  g_assert_cmpfloat (subagent_run_result_get_cost_cents (result), ==, 0.5);
  g_assert_cmpstr (subagent_run_result_get_message (result), ==, "was cancelled");
  g_assert_cmpstr (subagent_run_result_get_stop_reason (result), ==, "cancelled");
}

static void
test_stop_reason_table (void)
{
  static const struct {
    const char *reason;
    gboolean produced;
    SubagentRunStatus status;
  } rows[] = {
    { "complete", FALSE, SUBAGENT_RUN_STATUS_COMPLETE },
    { "complete", TRUE, SUBAGENT_RUN_STATUS_COMPLETE },
    { "max_turns", FALSE, SUBAGENT_RUN_STATUS_PARTIAL },
    { "max_turns", TRUE, SUBAGENT_RUN_STATUS_PARTIAL },
    { "max_tokens", FALSE, SUBAGENT_RUN_STATUS_PARTIAL },
    { "max_tokens", TRUE, SUBAGENT_RUN_STATUS_PARTIAL },
    { "cancelled", TRUE, SUBAGENT_RUN_STATUS_PARTIAL },
    { "cancelled", FALSE, SUBAGENT_RUN_STATUS_CANCELLED },
    { "error", TRUE, SUBAGENT_RUN_STATUS_FAILED },
    { "error", FALSE, SUBAGENT_RUN_STATUS_FAILED },
    { "usage_limit", TRUE, SUBAGENT_RUN_STATUS_FAILED },
    { "usage_limit", FALSE, SUBAGENT_RUN_STATUS_FAILED },
    { "budget", FALSE, SUBAGENT_RUN_STATUS_PARTIAL },
    { "budget", TRUE, SUBAGENT_RUN_STATUS_PARTIAL },
    { "timeout", TRUE, SUBAGENT_RUN_STATUS_FAILED },
    { "timeout", FALSE, SUBAGENT_RUN_STATUS_FAILED },
    { "exploded", TRUE, SUBAGENT_RUN_STATUS_FAILED },
    { "", FALSE, SUBAGENT_RUN_STATUS_FAILED },
    { NULL, TRUE, SUBAGENT_RUN_STATUS_FAILED },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    g_assert_cmpint (subagent_stop_reason_to_status (rows[i].reason, rows[i].produced), ==, rows[i].status);
  g_assert_cmpstr (SUBAGENT_STOP_REASON_MAX_TURNS, ==, "max_turns");
  g_assert_cmpstr (SUBAGENT_STOP_REASON_USAGE_LIMIT, ==, "usage_limit");
}

static void
test_outcome_status_counts_output (void)
{
  g_autoptr(SubagentRunOutcome) nothing = subagent_run_outcome_new ("cancelled", 1, 0, 0, NULL, NULL, NULL);
  g_autoptr(SubagentRunOutcome) answered = subagent_run_outcome_new ("cancelled", 0, 0, 0, "a", NULL, NULL);
  g_autoptr(SubagentRunOutcome) printed = subagent_run_outcome_new ("cancelled", 0, 0, 0, NULL, "out", NULL);
  g_autoptr(SubagentRunOutcome) called = subagent_run_outcome_new ("cancelled", 0, 2, 0, NULL, NULL, NULL);
  g_autoptr(SubagentRunOutcome) unnamed = subagent_run_outcome_new (NULL, 0, 0, 0, NULL, NULL, NULL);

  g_assert_cmpint (subagent_run_outcome_get_status (nothing), ==, SUBAGENT_RUN_STATUS_CANCELLED);
  g_assert_cmpint (subagent_run_outcome_get_status (answered), ==, SUBAGENT_RUN_STATUS_PARTIAL);
  g_assert_cmpint (subagent_run_outcome_get_status (printed), ==, SUBAGENT_RUN_STATUS_PARTIAL);
  g_assert_cmpint (subagent_run_outcome_get_status (called), ==, SUBAGENT_RUN_STATUS_PARTIAL);
  g_assert_cmpstr (subagent_run_outcome_get_final_answer (nothing), ==, "");
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (unnamed), ==, "error");
  g_assert_cmpint (subagent_run_outcome_get_status (unnamed), ==, SUBAGENT_RUN_STATUS_FAILED);
}

static void
test_run_context_limits_default_to_definition (void)
{
  g_autoptr(SubagentDef) def = g_object_new (SUBAGENT_TYPE_DEF, "name", "limited",
                                             "max-iterations", 11, "max-tool-calls", 13,
                                             "timeout-seconds", 17, "max-cost-cents", 19.5,
                                             "isolation", "worktree", NULL);
  g_autoptr(SubagentRunContext) from_def = g_object_new (SUBAGENT_TYPE_RUN_CONTEXT, "definition", def,
                                                         "task", "t", "parent-run-id", "p", "depth", 1, NULL);
  g_autoptr(SubagentRunContext) overridden = g_object_new (SUBAGENT_TYPE_RUN_CONTEXT, "definition", def,
                                                           "task", "t", "run-id", "given-id",
                                                           "max-iterations", 2, "max-tool-calls", 3,
                                                           "timeout-seconds", 4, "max-cost-cents", 5.0,
                                                           "batch-index", 6, NULL);
  SubagentLineage *lineage = subagent_run_context_get_lineage (from_def);
  const char *id = subagent_run_context_get_run_id (from_def);

  g_assert_cmpuint (subagent_run_context_get_max_iterations (from_def), ==, 11);
  g_assert_cmpuint (subagent_run_context_get_max_tool_calls (from_def), ==, 13);
  g_assert_cmpuint (subagent_run_context_get_timeout_seconds (from_def), ==, 17);
  g_assert_cmpfloat (subagent_run_context_get_max_cost_cents (from_def), ==, 19.5);
  g_assert_cmpuint (subagent_run_context_get_max_iterations (overridden), ==, 2);
  g_assert_cmpuint (subagent_run_context_get_max_tool_calls (overridden), ==, 3);
  g_assert_cmpuint (subagent_run_context_get_timeout_seconds (overridden), ==, 4);
  g_assert_cmpfloat (subagent_run_context_get_max_cost_cents (overridden), ==, 5.0);

  /* A generated run id is a valid id; a given one is kept. */
  g_assert_true (subagent_session_id_is_valid (id));
  g_assert_cmpstr (subagent_run_context_get_run_id (overridden), ==, "given-id");

  /* The derived lineage comes from the other properties. */
  g_assert_cmpstr (subagent_lineage_get_parent_run_id (lineage), ==, "p");
  g_assert_cmpstr (subagent_lineage_get_def_name (lineage), ==, "limited");
  g_assert_cmpuint (subagent_lineage_get_depth (lineage), ==, 1);
  g_assert_cmpstr (subagent_lineage_get_isolation (lineage), ==, "worktree");
  g_assert_cmpint (subagent_lineage_get_batch_index (subagent_run_context_get_lineage (overridden)), ==, 6);
  g_assert_null (subagent_run_context_get_approval_handler (from_def));
  g_assert_cmpint (subagent_run_context_get_batch_index (from_def), ==, SUBAGENT_NO_BATCH_INDEX);
}

/* The audit log keeps its file open between records, but a log rotated
 * away or removed gets a new file, and a symlink put in its place is
 * still refused. */
static void
test_audit_rotation (void)
{
  g_autofree char *dir = sat_make_temp_dir ("audit");
  g_autofree char *path = g_build_filename (dir, ".subagent", "audit.jsonl", NULL);
  g_autofree char *rotated = g_strconcat (path, ".1", NULL);
  g_autofree char *elsewhere = g_build_filename (dir, "elsewhere.jsonl", NULL);
  g_autoptr(SubagentAuditLog) log = subagent_audit_log_new (path);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  g_assert_true (subagent_audit_log_record (log, "one", NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_rename (path, rotated), ==, 0);
  g_assert_true (subagent_audit_log_record (log, "two", NULL, &error));
  g_assert_true (subagent_audit_log_record (log, "three", NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (rotated, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "\"one\""));
  g_assert_null (strstr (text, "\"two\""));
  g_clear_pointer (&text, g_free);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "\"two\""));
  g_assert_nonnull (strstr (text, "\"three\""));
  g_clear_pointer (&text, g_free);

  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_true (subagent_audit_log_record (log, "four", NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "\"four\""));
  g_clear_pointer (&text, g_free);

  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_true (g_file_set_contents (elsewhere, "", 0, NULL));
  g_assert_cmpint (symlink (elsewhere, path), ==, 0);
  g_assert_false (subagent_audit_log_record (log, "five", NULL, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_assert_true (g_file_get_contents (elsewhere, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "");
  sat_rm_rf (dir);
}

/* The line json-glib's generator wrote for a record: "event", "ts", then
 * the fields in the order json_object_iter_init() visits them (a field
 * named like a fixed member replacing it in place). */
static char *
audit_line_by_generator (const char *event,
                         const char *ts,
                         JsonObject *fields)
{
  g_autoptr(JsonObject) record = json_object_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *text = NULL;

  json_object_set_string_member (record, "event", event);
  json_object_set_string_member (record, "ts", ts);
  if (fields != NULL)
    {
      JsonObjectIter iter;
      const char *name;
      JsonNode *value;

      json_object_iter_init (&iter, fields);
      while (json_object_iter_next (&iter, &name, &value))
        json_object_set_member (record, name, json_node_copy (value));
    }
  node = json_node_init_object (json_node_alloc (), record);
  text = json_to_string (node, FALSE);
  return g_strconcat (text, "\n", NULL);
}

/* Audit lines are written directly: the bytes are the generator's, for a
 * lineage record as a run writes it, for odd values and member names, for
 * no fields, and for fields that repeat "event" or "ts". */
static void
test_audit_line_matches_generator (void)
{
  g_autofree char *dir = sat_make_temp_dir ("audit-line");
  g_autofree char *path = g_build_filename (dir, ".subagent", "audit.jsonl", NULL);
  g_autoptr(SubagentAuditLog) log = subagent_audit_log_new (path);
  g_autoptr(SubagentLineage) lineage = subagent_lineage_new ("parent-\"run\"", "def\tname", 2, "worktree", 3,
                                                            "/tmp/wt/é ✓", NULL);
  g_autoptr(JsonObject) run = json_object_new ();
  g_autoptr(JsonObject) odd = json_object_new ();
  g_autoptr(JsonObject) repeats = json_object_new ();
  g_autoptr(JsonArray) list = json_array_new ();
  JsonObject *cases[] = { run, odd, NULL, repeats };
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  json_object_set_string_member (run, "run_id", "0123456789abcdef");
  json_object_set_string_member (run, "parent_run_id", "parent");
  json_object_set_string_member (run, "def_name", "bench");
  json_object_set_int_member (run, "depth", 1);
  json_object_set_string_member (run, "isolation", "shared");
  json_object_set_null_member (run, "batch_index");
  json_object_set_string_member (run, "status", "complete");
  json_object_set_int_member (run, "iterations", 0);
  json_object_set_int_member (run, "tool_calls", 12);
  json_object_set_double_member (run, "cost_cents", 0.0);
  json_object_set_string_member (run, "confinement", "landlock");
  json_object_set_object_member (run, "lineage", subagent_lineage_to_json (lineage));
  json_object_set_string_member (run, "risk_level", "high");

  json_object_set_string_member (odd, "quote \" and \\ and \n and \x7f", "v\x01\x1e\t/");
  json_object_set_double_member (odd, "third", 1.0 / 3.0);
  json_object_set_double_member (odd, "big", 1e20);
  json_object_set_int_member (odd, "min", G_MININT64);
  json_object_set_boolean_member (odd, "t", TRUE);
  json_object_set_boolean_member (odd, "f", FALSE);
  json_array_add_string_element (list, "a");
  json_array_add_double_element (list, -2.5);
  json_array_add_object_element (list, json_object_new ());
  json_object_set_array_member (odd, "list", json_array_ref (list));
  json_object_set_string_member (odd, "", "empty name");

  json_object_set_string_member (repeats, "before", "x");
  json_object_set_string_member (repeats, "ts", "not the time");
  json_object_set_string_member (repeats, "event", "not the event");
  json_object_set_int_member (repeats, "after", 1);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *event = g_strdup_printf ("kind-%u \"x\"", i);

      g_assert_true (subagent_audit_log_record (log, event, cases[i], &error));
      g_assert_no_error (error);
    }
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, G_N_ELEMENTS (cases) + 1);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *event = g_strdup_printf ("kind-%u \"x\"", i);
      const char *ts_start = strstr (lines[i], ",\"ts\":\"");
      g_autofree char *ts = NULL;
      g_autofree char *line = g_strconcat (lines[i], "\n", NULL);
      g_autofree char *expected = NULL;
      g_autoptr(GDateTime) parsed = NULL;
      g_autofree char *again = NULL;

      /* Read as text: the generator writes 1e20 as "1e+20.0", which its
       * parser refuses. */
      g_assert_nonnull (ts_start);
      if (cases[i] == repeats)
        {
          /* The fields replaced "event" and "ts" in place: the line is the
           * generator's for the same fields, whatever the time was. */
          expected = audit_line_by_generator ("ignored", "ignored", cases[i]);
          g_assert_cmpstr (line, ==, expected);
          continue;
        }
      ts_start += strlen (",\"ts\":\"");
      ts = g_strndup (ts_start, strchr (ts_start, '"') - ts_start);
      /* The time is GLib's own ISO 8601 form of itself. */
      parsed = g_date_time_new_from_iso8601 (ts, NULL);
      g_assert_nonnull (parsed);
      again = g_date_time_format_iso8601 (parsed);
      g_assert_cmpstr (ts, ==, again);
      expected = audit_line_by_generator (event, ts, cases[i]);
      g_assert_cmpstr (line, ==, expected);
    }
  sat_rm_rf (dir);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/audit/rotation", test_audit_rotation);
  g_test_add_func ("/audit/line-matches-generator", test_audit_line_matches_generator);

  g_test_add_func ("/lineage/to-json/reference-keys-and-nulls", test_lineage_json_keys);
  g_test_add_func ("/lineage/from-json/roundtrip", test_lineage_json_roundtrip);
  g_test_add_func ("/lineage/from-json/rejects-mistyped-members", test_lineage_from_json_rejects_bad_members);
  g_test_add_func ("/session/to-json/reference-keys", test_session_json_keys);
  g_test_add_func ("/session/lineage/made-of-session-fields", test_session_lineage_getter);
  g_test_add_func ("/session/review/is-a-sealed-copy", test_session_review_is_sealed_copy);
  g_test_add_func ("/session/save/atomic-and-load-roundtrip", test_session_save_load_roundtrip);
  g_test_add_func ("/session/save/async-in-a-thread", test_session_save_async);
  g_test_add_func ("/session/save/refuses-invalid-id", test_session_save_refuses_bad_id);
  g_test_add_func ("/session/load/rejects-bad-records", test_session_load_rejects_bad_records);
  g_test_add_func ("/run-result/to-json/success-shape-exact", test_run_result_success_keys);
  g_test_add_func ("/run-result/to-json/review-only-when-present", test_run_result_review_only_when_present);
  g_test_add_func ("/run-result/to-json/error-shape-exact", test_run_result_error_keys);
  g_test_add_func ("/run-result/from-outcome/status-and-usage", test_run_result_from_outcome);
  g_test_add_func ("/stop-reason/to-status/every-row", test_stop_reason_table);
  g_test_add_func ("/run-outcome/status/cancelled-partial-only-with-output", test_outcome_status_counts_output);
  g_test_add_func ("/run-context/limits/default-to-definition", test_run_context_limits_default_to_definition);

  return g_test_run ();
}
