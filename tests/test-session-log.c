/* test-session-log.c: SubagentSessionLog — append, group commit, torn lines,
 * the latest record of a session, and reading a directory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "test-support.h"

static SubagentSession *
make_session (const char *session_id,
              const char *completed_iso,
              const char *final_answer)
{
  g_autoptr(GDateTime) started = g_date_time_new_from_iso8601 ("2026-12-02T10:00:00Z", NULL);
  g_autoptr(GDateTime) completed = completed_iso ? g_date_time_new_from_iso8601 (completed_iso, NULL) : NULL;

  return g_object_new (SUBAGENT_TYPE_SESSION,
                       "session-id", session_id,
                       "def-name", "coder",
                       "parent-run-id", "parent-1",
                       "status", SUBAGENT_RUN_STATUS_COMPLETE,
                       "started-at", started,
                       "completed-at", completed,
                       "final-answer", final_answer,
                       "task", "a task\nwith two lines",
                       NULL);
}

static guint
count_lines (const char *path)
{
  g_autofree char *text = NULL;
  guint lines = 0;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  for (const char *p = text; *p; p++)
    lines += *p == '\n';
  return lines;
}

static void
test_append_and_lookup (void)
{
  g_autofree char *root = sat_make_temp_dir ("session-log");
  g_autofree char *dir = g_build_filename (root, "sessions", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentSessionLog) log = subagent_session_log_new (dir, "parent-1", &error);
  g_autoptr(SubagentSession) first = make_session ("child-a", "2026-12-02T10:01:00Z", "answer a");
  g_autoptr(SubagentSession) second = make_session ("child-b", "2026-12-02T10:02:00Z", "answer b");
  g_autoptr(SubagentSession) found = NULL;
  g_autofree char *expected_path = g_build_filename (dir, "parent-1.jsonl", NULL);

  g_assert_no_error (error);
  g_assert_cmpstr (subagent_session_log_get_path (log), ==, expected_path);
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));   /* nothing until the first append */

  g_assert_true (subagent_session_log_append (log, first, &error));
  g_assert_no_error (error);
  g_assert_true (subagent_session_log_append (log, second, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_lines (expected_path), ==, 2);   /* one line each: newlines in text are escaped */
  g_assert_true (subagent_session_log_sync (log, &error));
  g_assert_no_error (error);

  found = subagent_session_log_lookup (dir, "child-b", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_session_get_final_answer (found), ==, "answer b");
  g_assert_cmpstr (subagent_session_get_task (found), ==, "a task\nwith two lines");
  g_clear_object (&found);

  found = subagent_session_log_lookup (dir, "child-z", &error);
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_NOT_FOUND);
  g_assert_null (found);
  g_clear_error (&error);
  found = subagent_session_log_lookup (dir, "../escape", &error);
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_null (subagent_session_log_new (dir, "a/b", &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  sat_rm_rf (root);
}

typedef struct {
  SubagentSessionLog *log;
  guint thread;
  guint count;
} AppendJob;

static gpointer
append_many (gpointer data)
{
  AppendJob *job = data;

  for (guint i = 0; i < job->count; i++)
    {
      g_autofree char *id = g_strdup_printf ("t%u-%u", job->thread, i);
      g_autoptr(SubagentSession) session = make_session (id, "2026-12-02T10:03:00Z", id);
      g_autoptr(GError) error = NULL;

      g_assert_true (subagent_session_log_append (job->log, session, &error));
      g_assert_no_error (error);
    }
  return NULL;
}

/* Threads appending at once share writes; every record arrives whole. */
static void
test_concurrent_appends (void)
{
  enum { THREADS = 8, EACH = 60 };
  g_autofree char *root = sat_make_temp_dir ("session-log");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentSessionLog) log = subagent_session_log_new (root, "parent-2", &error);
  AppendJob jobs[THREADS];
  GThread *threads[THREADS];
  g_autoptr(GPtrArray) all = NULL;
  g_auto(GStrv) skipped = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint t = 0; t < THREADS; t++)
    {
      jobs[t] = (AppendJob) { log, t, EACH };
      threads[t] = g_thread_new ("append", append_many, &jobs[t]);
    }
  for (guint t = 0; t < THREADS; t++)
    g_thread_join (threads[t]);

  g_assert_cmpuint (count_lines (subagent_session_log_get_path (log)), ==, THREADS * EACH);
  all = subagent_session_log_read_dir (root, &skipped, &error);
  g_assert_no_error (error);
  g_assert_cmpstrv (skipped, (const char * const []) { NULL });
  g_assert_cmpuint (all->len, ==, THREADS * EACH);
  for (guint i = 0; i < all->len; i++)
    {
      const char *id = subagent_session_get_session_id (all->pdata[i]);

      g_assert_cmpstr (subagent_session_get_final_answer (all->pdata[i]), ==, id);
      g_assert_true (g_hash_table_add (seen, (gpointer) id));
    }
  sat_rm_rf (root);
}

/* A crash mid-write leaves a torn last line: it is reported and skipped,
 * and records appended afterwards (by a new log) still read back. */
static void
test_torn_line_is_skipped (void)
{
  g_autofree char *root = sat_make_temp_dir ("session-log");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentSessionLog) log = subagent_session_log_new (root, "parent-3", &error);
  g_autoptr(SubagentSessionLog) reopened = NULL;
  g_autoptr(SubagentSession) before = make_session ("before", "2026-12-02T10:01:00Z", "kept");
  g_autoptr(SubagentSession) after = make_session ("after", "2026-12-02T10:02:00Z", "also kept");
  g_autoptr(GPtrArray) all = NULL;
  g_auto(GStrv) skipped = NULL;
  int fd;

  g_assert_true (subagent_session_log_append (log, before, &error));
  fd = open (subagent_session_log_get_path (log), O_WRONLY | O_APPEND);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, "{\"session_id\":\"torn\",\"def_na", 28), ==, 28);
  close (fd);

  reopened = subagent_session_log_new (root, "parent-3", &error);
  g_assert_true (subagent_session_log_append (reopened, after, &error));
  g_assert_no_error (error);

  all = subagent_session_log_read_dir (root, &skipped, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (all->len, ==, 2);
  g_assert_cmpstr (subagent_session_get_session_id (all->pdata[0]), !=, "torn");
  g_assert_cmpstr (subagent_session_get_session_id (all->pdata[1]), !=, "torn");
  g_assert_cmpuint (g_strv_length (skipped), ==, 1);
  g_assert_nonnull (strstr (skipped[0], "parent-3.jsonl:2"));
  sat_rm_rf (root);
}

/* A log is read a chunk (1 MiB) at a time: records that straddle chunks
 * read back whole, however long the log. */
static void
test_long_log_reads_back (void)
{
  g_autofree char *root = sat_make_temp_dir ("session-log");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentSessionLog) log = subagent_session_log_new (root, "parent-long", &error);
  g_autoptr(GPtrArray) all = NULL;
  g_autoptr(GHashTable) answers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_auto(GStrv) skipped = NULL;
  struct stat st;

  for (guint i = 0; i < 3000; i++)
    {
      g_autofree char *id = g_strdup_printf ("child-%u", i);
      /* Lengths that vary, so that the chunk edges fall everywhere. */
      g_autofree char *answer = g_strnfill (300 + (i * 37) % 700, 'a' + i % 26);
      g_autoptr(SubagentSession) session = make_session (id, "2026-12-02T10:01:00Z", answer);

      g_assert_true (subagent_session_log_append (log, session, &error));
      g_hash_table_insert (answers, g_steal_pointer (&id), g_steal_pointer (&answer));
    }
  g_assert_no_error (error);
  g_assert_cmpint (stat (subagent_session_log_get_path (log), &st), ==, 0);
  g_assert_cmpint (st.st_size, >, 2 * 1024 * 1024);

  all = subagent_session_log_read_dir (root, &skipped, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (skipped), ==, 0);
  g_assert_cmpuint (all->len, ==, 3000);
  for (guint i = 0; i < all->len; i++)
    g_assert_cmpstr (subagent_session_get_final_answer (all->pdata[i]), ==,
                     g_hash_table_lookup (answers, subagent_session_get_session_id (all->pdata[i])));
  sat_rm_rf (root);
}

/* A line past 16 MiB is no record: it is skipped, and the records around
 * it read back. */
static void
test_over_long_line_is_skipped (void)
{
  g_autofree char *root = sat_make_temp_dir ("session-log");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentSessionLog) log = subagent_session_log_new (root, "parent-6", &error);
  g_autoptr(SubagentSessionLog) reopened = NULL;
  g_autoptr(SubagentSession) before = make_session ("before", "2026-12-02T10:01:00Z", "kept");
  g_autoptr(SubagentSession) after = make_session ("after", "2026-12-02T10:02:00Z", "also kept");
  g_autofree char *junk = g_strnfill (17 * 1024 * 1024, 'x');
  g_autoptr(GPtrArray) all = NULL;
  g_auto(GStrv) skipped = NULL;
  gsize done = 0;
  int fd;

  g_assert_true (subagent_session_log_append (log, before, &error));
  fd = open (subagent_session_log_get_path (log), O_WRONLY | O_APPEND);
  g_assert_cmpint (fd, >=, 0);
  while (done < strlen (junk))
    {
      gssize n = write (fd, junk + done, strlen (junk) - done);

      g_assert_cmpint (n, >, 0);
      done += (gsize) n;
    }
  g_assert_cmpint (write (fd, "\n", 1), ==, 1);
  close (fd);
  reopened = subagent_session_log_new (root, "parent-6", &error);
  g_assert_true (subagent_session_log_append (reopened, after, &error));
  g_assert_no_error (error);

  all = subagent_session_log_read_dir (root, &skipped, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (all->len, ==, 2);
  g_assert_cmpuint (g_strv_length (skipped), ==, 1);
  g_assert_nonnull (strstr (skipped[0], "parent-6.jsonl:2: not a session record (longer than"));
  sat_rm_rf (root);
}

/* A follow-up's record supersedes the first, in whichever file it is; a
 * single-record file of subagent_session_save() counts too. */
static void
test_latest_record_wins (void)
{
  g_autofree char *root = sat_make_temp_dir ("session-log");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentSessionLog) first_log = subagent_session_log_new (root, "parent-4", &error);
  g_autoptr(SubagentSessionLog) later_log = subagent_session_log_new (root, "parent-5", &error);
  g_autoptr(SubagentSession) original = make_session ("child", "2026-12-02T10:01:00Z", "first");
  g_autoptr(SubagentSession) follow_up = make_session ("child", "2026-12-02T10:09:00Z", "follow-up");
  g_autoptr(SubagentSession) saved = make_session ("child", "2026-12-02T10:05:00Z", "saved");
  g_autoptr(SubagentSession) other = make_session ("other", "2026-12-02T10:02:00Z", "other");
  g_autoptr(SubagentSession) found = NULL;
  g_autoptr(GPtrArray) all = NULL;

  /* The newest record goes first, into the file read in any order. */
  g_assert_true (subagent_session_log_append (later_log, follow_up, &error));
  g_assert_true (subagent_session_log_append (first_log, original, &error));
  g_assert_true (subagent_session_log_append (first_log, other, &error));
  g_assert_true (subagent_session_save (saved, root, &error));
  g_assert_no_error (error);

  found = subagent_session_log_lookup (root, "child", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_session_get_final_answer (found), ==, "follow-up");
  all = subagent_session_log_read_dir (root, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (all->len, ==, 2);
  sat_rm_rf (root);
}

static void
test_missing_directory_is_empty (void)
{
  g_autofree char *root = sat_make_temp_dir ("session-log");
  g_autofree char *missing = g_build_filename (root, "not-there", NULL);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) skipped = NULL;
  g_autoptr(GPtrArray) all = subagent_session_log_read_dir (missing, &skipped, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (all->len, ==, 0);
  g_assert_cmpuint (g_strv_length (skipped), ==, 0);
  sat_rm_rf (root);
}

static void
on_appended (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (subagent_session_log_append_finish (SUBAGENT_SESSION_LOG (source), result, &error));
  g_assert_no_error (error);
  *(gboolean *) user_data = TRUE;
}

static void
test_append_async (void)
{
  g_autofree char *root = sat_make_temp_dir ("session-log");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentSessionLog) log = subagent_session_log_new (root, "parent-6", &error);
  g_autoptr(SubagentSession) session = make_session ("async", NULL, "async answer");
  g_autoptr(SubagentSession) found = NULL;
  gboolean done = FALSE;

  subagent_session_log_append_async (log, session, NULL, on_appended, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
  found = subagent_session_log_lookup (root, "async", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_session_get_final_answer (found), ==, "async answer");
  g_assert_null (subagent_session_get_completed_at (found));
  sat_rm_rf (root);
}

/* Session records are written directly: each line is, byte for byte, what
 * json-glib's generator writes for subagent_session_to_json(), for a full
 * record (review, transcript, batch index, paths, fractions, escapes, times
 * with and without microseconds, an offset), for a bare one and for one
 * with the latest run's own result (`last_run`), which also reads back. */
static void
test_line_matches_generator (void)
{
  g_autofree char *root = sat_make_temp_dir ("session-line");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentSessionLog) log = subagent_session_log_new (root, "parent-7", &error);
  g_autoptr(GDateTime) started = g_date_time_new_from_iso8601 ("2026-12-02T10:00:00.000123Z", NULL);
  g_autoptr(GDateTime) completed = g_date_time_new_from_iso8601 ("2026-12-02T10:00:05Z", NULL);
  g_autoptr(GDateTime) offset = g_date_time_new_from_iso8601 ("2026-12-02T12:00:05.5+02:00", NULL);
  g_autoptr(JsonObject) review = json_object_new ();
  g_autoptr(JsonObject) file = json_object_new ();
  g_autoptr(JsonArray) files = json_array_new ();
  g_autoptr(JsonArray) transcript = json_array_new ();
  g_autoptr(JsonObject) turn = json_object_new ();
  g_autoptr(GPtrArray) sessions = g_ptr_array_new_with_free_func (g_object_unref);
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  json_object_set_string_member (file, "path", "src/\"a\".c");
  json_object_set_int_member (file, "added", 3);
  json_array_add_object_element (files, json_object_ref (file));
  json_object_set_array_member (review, "files", json_array_ref (files));
  json_object_set_string_member (review, "diff", "--- a\n+++ b\n\x7f\x01");
  json_object_set_boolean_member (review, "binary", FALSE);
  json_object_set_string_member (turn, "role", "assistant");
  json_object_set_double_member (turn, "cost", 0.25);
  json_array_add_object_element (transcript, json_object_ref (turn));
  json_array_add_null_element (transcript);

  g_ptr_array_add (sessions, g_object_new (SUBAGENT_TYPE_SESSION,
                                           "session-id", "child-full",
                                           "def-name", "coder \"x\"",
                                           "parent-run-id", "parent-7",
                                           "status", SUBAGENT_RUN_STATUS_PARTIAL,
                                           "started-at", started,
                                           "completed-at", offset,
                                           "depth", 3,
                                           "batch-index", 2,
                                           "isolation", "worktree",
                                           "worktree-path", "/tmp/wt/é ✓",
                                           "container-path", "/work",
                                           "iterations", G_MAXUINT,
                                           "tool-calls", 17,
                                           "cost-cents", 1.0 / 3.0,
                                           "final-answer", "done\n\ttabbed \\ back",
                                           "review", review,
                                           "transcript", transcript,
                                           "task", "a task\r\nwith \"quotes\"",
                                           "follow-ups", 2,
                                           "workspace-kept", TRUE,
                                           "child-root", "/tmp/child",
                                           NULL));
  g_ptr_array_add (sessions, g_object_new (SUBAGENT_TYPE_SESSION, "session-id", "child-bare", NULL));
  g_ptr_array_add (sessions, g_object_new (SUBAGENT_TYPE_SESSION,
                                           "session-id", "child-round",
                                           "started-at", completed,
                                           "completed-at", completed,
                                           "cost-cents", 1e20,
                                           NULL));
  /* The manager's records keep the latest run's own result parts. */
  {
    g_autoptr(JsonParser) parser = json_parser_new ();
    SubagentSession *with_last_run;

    g_assert_true (json_parser_load_from_data (parser,
                                               "{\"session_id\": \"child-last-run\", \"def_name\": \"coder\", "
                                               "\"parent_run_id\": \"parent-7\", \"status\": \"complete\", "
                                               "\"started_at\": \"2026-12-02T10:00:00Z\", \"cost_cents\": 3, "
                                               "\"last_run\": {\"iterations\": 2, \"tool_calls\": 5, "
                                               "\"cost_cents\": 0.25, \"message\": \"said \\\"so\\\"\\n\", "
                                               "\"stop_reason\": \"complete\", \"confinement\": null}}",
                                               -1, &error));
    with_last_run = subagent_session_new_from_json (json_node_get_object (json_parser_get_root (parser)), &error);
    g_assert_no_error (error);
    g_ptr_array_add (sessions, with_last_run);
  }
  for (guint i = 0; i < sessions->len; i++)
    {
      g_assert_true (subagent_session_log_append (log, sessions->pdata[i], &error));
      g_assert_no_error (error);
    }
  g_assert_true (g_file_get_contents (subagent_session_log_get_path (log), &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, sessions->len + 1);
  g_assert_cmpstr (lines[sessions->len], ==, "");
  for (guint i = 0; i < sessions->len; i++)
    {
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), subagent_session_to_json (sessions->pdata[i]));
      g_autofree char *expected = json_to_string (node, FALSE);

      json_object_unref (json_node_get_object (node));
      g_assert_cmpstr (lines[i], ==, expected);
    }
  g_assert_nonnull (strstr (lines[3], ",\"last_run\":{\"iterations\":2,\"tool_calls\":5,\"cost_cents\":0.25,"
                                      "\"message\":\"said \\\"so\\\"\\n\",\"stop_reason\":\"complete\","
                                      "\"confinement\":null}"));
  /* Read back, the same record. */
  {
    g_autoptr(SubagentSession) back = subagent_session_log_lookup (root, "child-last-run", &error);
    g_autoptr(JsonNode) node = NULL;
    g_autofree char *again = NULL;

    g_assert_no_error (error);
    node = json_node_init_object (json_node_alloc (), subagent_session_to_json (back));
    again = json_to_string (node, FALSE);
    json_object_unref (json_node_get_object (node));
    g_assert_cmpstr (again, ==, lines[3]);
  }
  /* A bad `last_run` is refused, as any bad member is. */
  {
    static const char *bad[] = {
      "{\"session_id\": \"x\", \"def_name\": \"d\", \"parent_run_id\": \"p\", \"status\": \"complete\", "
      "\"started_at\": \"2026-12-02T10:00:00Z\", \"last_run\": 3}",
      "{\"session_id\": \"x\", \"def_name\": \"d\", \"parent_run_id\": \"p\", \"status\": \"complete\", "
      "\"started_at\": \"2026-12-02T10:00:00Z\", \"last_run\": {\"iterations\": -1}}",
      "{\"session_id\": \"x\", \"def_name\": \"d\", \"parent_run_id\": \"p\", \"status\": \"complete\", "
      "\"started_at\": \"2026-12-02T10:00:00Z\", \"last_run\": {\"message\": 7}}",
    };

    for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
      {
        g_autoptr(JsonParser) parser = json_parser_new ();
        g_autoptr(SubagentSession) refused = NULL;

        g_assert_true (json_parser_load_from_data (parser, bad[i], -1, NULL));
        refused = subagent_session_new_from_json (json_node_get_object (json_parser_get_root (parser)), &error);
        g_assert_null (refused);
        g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
        g_assert_nonnull (strstr (error->message, "last_run"));
        g_clear_error (&error);
      }
  }
  sat_rm_rf (root);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/session-log/append/lookup-and-bad-ids", test_append_and_lookup);
  g_test_add_func ("/session-log/append/concurrent-records-arrive-whole", test_concurrent_appends);
  g_test_add_func ("/session-log/append/async", test_append_async);
  g_test_add_func ("/session-log/append/line-matches-generator", test_line_matches_generator);
  g_test_add_func ("/session-log/read/torn-line-skipped", test_torn_line_is_skipped);
  g_test_add_func ("/session-log/read/long-log-reads-back", test_long_log_reads_back);
  g_test_add_func ("/session-log/read/over-long-line-skipped", test_over_long_line_is_skipped);
  g_test_add_func ("/session-log/read/latest-record-wins", test_latest_record_wins);
  g_test_add_func ("/session-log/read/missing-directory-is-empty", test_missing_directory_is_empty);

  return g_test_run ();
}
