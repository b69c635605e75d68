/* test-approval-stress.c: the approval stores under several processes
 * (suite "slow"): eight approvers racing on one queue while another process
 * submits and waits (--store=file, and --store=postgres across two "hosts"
 * with a server restart in the middle), and file writers killed with
 * SIGKILL at random moments. The other processes are approval-stress-helper.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "approval-test-support.h"

#define STRESS_REQUESTS 500
#define STRESS_CONTENDERS 8
#define CRASH_ITERATIONS 200
#define CRASH_KEY "crash-test-key"
/* Below meson's 600 s; the helpers give up on their own after 120 s
 * without a change (see approval-stress-helper.c). */
#define STRESS_DEADLINE_SECONDS 540

/* Restarts the test server (fast shutdown), not through pipes: the new
 * server would hold them open, and never into our stdout (TAP); the
 * command logs to the server's log file. */
static void
restart_server (void)
{
  const char *restart = g_getenv ("SUBAGENT_TEST_PG_RESTART");
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) argv = NULL;
  int status = 0;

  if (restart == NULL || restart[0] == '\0')
    g_error ("SUBAGENT_TEST_PG_RESTART is not set: run the postgres tests under scripts/run-tests "
             "(or: source scripts/lib/postgres.sh && start_postgres)");
  if (!g_shell_parse_argv (restart, NULL, &argv, &error)
      || !g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                        NULL, NULL, NULL, NULL, &status, &error)
      || !g_spawn_check_wait_status (status, &error))
    g_error ("%s: %s", restart, error->message);
}

typedef struct {
  Fixture *f;
  const char *restart;     /* a command line, or NULL */
  guint restart_after;     /* verdicts seen before restarting */
  gboolean restarted;
  guint decided_at_restart;
} Restart;

static guint
count_decided (Fixture *f)
{
  g_autoptr(GPtrArray) requests = ats_load (f->sink, "stress");
  guint decided = 0;

  for (guint i = 0; i < requests->len; i++)
    if (subagent_approval_request_get_status (requests->pdata[i]) != SUBAGENT_APPROVAL_STATUS_PENDING)
      decided++;
  return decided;
}

/* Restarts the server once enough verdicts are in: in the middle of the
 * run, with every process connected, saving and deciding. */
static gboolean
maybe_restart (gpointer data)
{
  Restart *r = data;

  if (r->restarted)
    return G_SOURCE_REMOVE;
  r->decided_at_restart = count_decided (r->f);
  if (r->decided_at_restart < r->restart_after)
    return G_SOURCE_CONTINUE;
  g_test_message ("restarting the server with %u of %d requests decided: %s", r->decided_at_restart,
                  STRESS_REQUESTS, r->restart);
  restart_server ();
  r->restarted = TRUE;
  return G_SOURCE_REMOVE;
}

/* Eight processes each try to approve (even ones) or deny (odd ones) every
 * request of one queue as the submitter adds them; a ninth reads without
 * pause. Every request must end with exactly one verdict, the one its winner
 * reported, seen as such by the submitter and stored. For postgres, the
 * processes are on two "hosts" (every other one reaches the server over its
 * unix socket rather than TCP: each process has its own connections), and
 * the server is restarted mid-run. */
static void
test_stress_eight_processes (Fixture       *f,
                             gconstpointer  data)
{
  g_autofree char *n = g_strdup_printf ("%d", STRESS_REQUESTS);
  g_autoptr(GPtrArray) helpers = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GStrvBuilder) names_builder = g_strv_builder_new ();
  g_autofree char *spec_a = ats_store_spec (f, 'a');
  g_autofree char *spec_b = ats_store_spec (f, 'b');
  g_auto(GStrv) names = NULL;
  g_auto(GStrv) outputs = NULL;
  g_autoptr(GHashTable) winners = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) error = NULL;
  const char *submitted, *reads;
  g_auto(GStrv) lines = NULL;
  guint finals = 0;
  Restart restart = { f, NULL, STRESS_REQUESTS / 3, FALSE, 0 };
  guint restart_id = 0;

  for (guint i = 0; i < STRESS_CONTENDERS; i++)
    {
      g_autofree char *index = g_strdup_printf ("%u", i);
      g_autofree char *name = g_strdup_printf ("contender-%u", i);

      g_ptr_array_add (helpers, ats_spawn_helper (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                                                  "contend", i % 2 ? spec_b : spec_a, "stress", n, index, NULL));
      g_assert_no_error (error);
      g_strv_builder_add (names_builder, name);
    }
  g_ptr_array_add (helpers, ats_spawn_helper (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                                              "read", spec_b, "stress", n, NULL));
  g_assert_no_error (error);
  g_strv_builder_add (names_builder, "reader");
  g_ptr_array_add (helpers, ats_spawn_helper (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                                              "submit", spec_a, "stress", n, NULL));
  g_assert_no_error (error);
  g_strv_builder_add (names_builder, "submitter");
  names = g_strv_builder_end (names_builder);

  if (f->kind == ATS_STORE_POSTGRES)
    {
      restart.restart = g_getenv ("SUBAGENT_TEST_PG_RESTART");
      if (restart.restart == NULL || restart.restart[0] == '\0')
        g_error ("SUBAGENT_TEST_PG_RESTART is not set: run the postgres stress test under scripts/run-tests "
                 "(or: source scripts/lib/postgres.sh && start_postgres)");
      restart_id = g_timeout_add (50, maybe_restart, &restart);
    }

  /* All at once: a helper never blocks on a full pipe while another is read. */
  outputs = ats_communicate_all (helpers, (const char * const *) names, STRESS_DEADLINE_SECONDS);
  reads = outputs[STRESS_CONTENDERS];
  submitted = outputs[STRESS_CONTENDERS + 1];
  if (restart.restart != NULL)
    {
      /* Restarted, and not after the end: some verdicts came after it. */
      g_assert_true (restart.restarted);
      g_assert_cmpuint (restart.decided_at_restart, <, STRESS_REQUESTS);
    }
  else if (restart_id != 0)
    g_source_remove (restart_id);

  for (guint i = 0; i < STRESS_CONTENDERS; i++)
    {
      g_auto(GStrv) won = g_strsplit (outputs[i], "\n", -1);

      for (guint j = 0; won[j] != NULL && won[j][0] != '\0'; j++)
        {
          g_auto(GStrv) fields = g_strsplit (won[j], " ", -1);

          g_assert_cmpuint (g_strv_length (fields), ==, 3);
          g_assert_cmpstr (fields[0], ==, "WON");
          /* The same verdict never lands twice. */
          if (!g_hash_table_insert (winners, g_strdup (fields[1]), g_strdup (fields[2])))
            g_error ("request %s was decided twice", fields[1]);
          g_assert_cmpstr (fields[2], ==, i % 2 == 0 ? "approved" : "denied");
        }
    }
  /* And no verdict went unreported (a win whose reply was lost). */
  g_assert_cmpuint (g_hash_table_size (winners), ==, STRESS_REQUESTS);

  lines = g_strsplit (submitted, "\n", -1);
  for (guint j = 0; lines[j] != NULL && lines[j][0] != '\0'; j++)
    {
      g_auto(GStrv) fields = g_strsplit (lines[j], " ", -1);

      g_assert_cmpstr (fields[0], ==, "FINAL");
      g_assert_cmpstr (g_hash_table_lookup (winners, fields[1]), ==, fields[2]);
      finals++;
    }
  g_assert_cmpuint (finals, ==, STRESS_REQUESTS);

  g_assert_true (g_str_has_prefix (reads, "READS "));
  g_test_message ("the reader loaded %s", reads);

  /* No update was lost: the store holds every request with its winner's verdict. */
  stored = ats_load (f->sink, "stress");
  g_assert_cmpuint (stored->len, ==, STRESS_REQUESTS);
  for (guint i = 0; i < stored->len; i++)
    g_assert_cmpstr (subagent_approval_status_to_string (subagent_approval_request_get_status (stored->pdata[i])), ==,
                     g_hash_table_lookup (winners, subagent_approval_request_get_request_id (stored->pdata[i])));
  g_assert_cmpuint (f->integrity_failures, ==, 0);
}

typedef struct {
  guint requests;
  guint approved;
} CrashState;

/* The crash writer's rule (see approval-stress-helper.c). */
static CrashState
crash_next (CrashState s)
{
  if (s.requests - s.approved >= 2)
    s.approved++;
  else
    s.requests++;
  return s;
}

static gboolean
parse_state (const char *line,
             const char *tag,
             CrashState *state)
{
  g_autofree char *format = g_strdup_printf ("%s %%u %%u", tag);

  return sscanf (line, format, &state->requests, &state->approved) == 2;
}

static CrashState
stored_state (Fixture    *f,
              const char *run)
{
  g_autoptr(GPtrArray) requests = ats_load (f->sink, run);
  CrashState s = { requests->len, 0 };

  for (guint i = 0; i < requests->len; i++)
    {
      SubagentApprovalStatus status = subagent_approval_request_get_status (requests->pdata[i]);

      /* Approvals go in file order: the approved ones come first. */
      if (status == SUBAGENT_APPROVAL_STATUS_APPROVED)
        {
          g_assert_cmpuint (i, ==, s.approved);
          s.approved++;
        }
      else
        g_assert_cmpint (status, ==, SUBAGENT_APPROVAL_STATUS_PENDING);
    }
  return s;
}

/* Writers (signed files, so a torn or mixed file could not even verify) are
 * killed at random moments; the file must always load, and hold either the
 * last state the writer reported or the one after it. */
static void
test_crash_sigkill_writers (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autofree char *helper = g_test_build_filename (G_TEST_BUILT, "approval-stress-helper", NULL);
  g_auto(GStrv) names = NULL;
  guint landed_new = 0;

  g_subprocess_launcher_setenv (launcher, "SUBAGENT_APPROVAL_HMAC_KEY", CRASH_KEY, TRUE);
  for (guint i = 0; i < CRASH_ITERATIONS; i++)
    {
      /* A fresh run every 50 kills keeps the files small. */
      g_autofree char *run = g_strdup_printf ("crash-%u", i / 50);
      g_autoptr(GSubprocess) writer = NULL;
      g_autoptr(GDataInputStream) out = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *line = NULL;
      CrashState last, now;

      writer = g_subprocess_launcher_spawn (launcher, &error, helper, "crash-writer", f->root, run, NULL);
      g_assert_no_error (error);
      out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (writer));
      line = g_data_input_stream_read_line_utf8 (out, NULL, NULL, &error);
      g_assert_no_error (error);
      g_assert_nonnull (line);
      g_assert_true (parse_state (line, "READY", &last));
      /* Once it has committed a step: every run's file then exists, however
       * slow the disk is at the moment (a write takes ~1 ms on a quiet one,
       * 20–30 ms on a busy one, where a kill in the first 8 ms could never
       * land after a commit). */
      g_free (line);
      line = g_data_input_stream_read_line_utf8 (out, NULL, NULL, &error);
      g_assert_no_error (error);
      g_assert_nonnull (line);
      g_assert_true (parse_state (line, "STATE", &last));

      /* The random moment: 0–8 ms into the stream of writes that follows. */
      g_usleep (g_test_rand_int_range (0, 8000));
      g_subprocess_send_signal (writer, SIGKILL);
      g_subprocess_wait (writer, NULL, &error);
      g_assert_no_error (error);
      g_assert_false (g_subprocess_get_if_exited (writer));

      for (;;)
        {
          g_autofree char *next = g_data_input_stream_read_line_utf8 (out, NULL, NULL, &error);

          g_assert_no_error (error);
          if (next == NULL)
            break;
          /* A line cut by the kill is not a report. */
          parse_state (next, "STATE", &last);
        }

      now = stored_state (f, run);
      if (now.requests == last.requests && now.approved == last.approved)
        continue;
      g_assert_cmpuint (now.requests, ==, crash_next (last).requests);
      g_assert_cmpuint (now.approved, ==, crash_next (last).approved);
      landed_new++;
    }
  g_test_message ("%u of %d kills came after a commit the writer had not reported yet", landed_new, CRASH_ITERATIONS);
  g_assert_cmpuint (f->integrity_failures, ==, 0);

  /* Whatever temp files the kills left, prune sweeps; the pending queues stay. */
  g_assert_cmpuint (subagent_approval_sink_prune_stale (f->sink, G_TIME_SPAN_DAY, NULL), ==, 0);
  names = ats_dir_entries (f->dir);
  for (guint i = 0; names[i] != NULL; i++)
    g_assert_false (names[i][0] == '.');
  g_assert_cmpuint (g_strv_length (names), ==, 2 * (CRASH_ITERATIONS / 50));
}

static void
on_changed_count (SubagentApprovalSink *sink,
                  const char           *run_id,
                  guint                *count)
{
  (*count)++;
}

static gboolean
on_reconnect_timeout (gpointer data)
{
  g_error ("no “changed” within 30 s of the server's restart");
  return G_SOURCE_REMOVE;
}

/* Runs the default context until *@changed counts a "changed" signal. */
static void
wait_for_changed (guint *changed)
{
  guint timeout_id = g_timeout_add_seconds (30, on_reconnect_timeout, NULL);

  while (*changed == 0)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (timeout_id);
}

/* The LISTEN connection of a watcher breaks with the server; once it is
 * back the watcher says every watched run changed (notifications sent
 * meanwhile are lost), and verdicts given after that wake it again. */
static void
test_watch_survives_restart (Fixture       *f,
                             gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request ("restart", "delete_file", "/a");
  g_autoptr(SubagentApprovalSink) approver = ats_store_new_sink (f, NULL);
  g_autoptr(GPtrArray) requests = NULL;
  guint changed = 0;
  gulong handler;

  ats_save_one (f->sink, "restart", a);
  handler = g_signal_connect (f->sink, "changed", G_CALLBACK (on_changed_count), &changed);
  subagent_approval_sink_watch (f->sink, "restart");
  while (g_main_context_iteration (NULL, FALSE))
    ;
  changed = 0;

  restart_server ();
  wait_for_changed (&changed);

  /* The approver's pooled connections went too: it reconnects on its own. */
  changed = 0;
  g_assert_true (subagent_approval_sink_update_status (approver, "restart", subagent_approval_request_get_request_id (a),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "after-restart", NULL));
  wait_for_changed (&changed);
  requests = ats_load (f->sink, "restart");
  g_assert_cmpint (subagent_approval_request_get_status (requests->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  subagent_approval_sink_unwatch (f->sink, "restart");
  g_signal_handler_disconnect (f->sink, handler);
}

/* A watch dropped keeps its LISTEN connection for the next one; a server
 * restarted meanwhile closed it: the next watch must notice, connect
 * again, and still be woken. */
static void
test_parked_listen_survives_restart (Fixture       *f,
                                     gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request ("parked", "delete_file", "/a");
  g_autoptr(SubagentApprovalSink) approver = ats_store_new_sink (f, NULL);
  g_autoptr(GPtrArray) requests = NULL;
  guint changed = 0;
  gulong handler;

  ats_save_one (f->sink, "parked", a);
  subagent_approval_sink_watch (f->sink, "other");
  subagent_approval_sink_unwatch (f->sink, "other");
  restart_server ();

  handler = g_signal_connect (f->sink, "changed", G_CALLBACK (on_changed_count), &changed);
  subagent_approval_sink_watch (f->sink, "parked");
  while (g_main_context_iteration (NULL, FALSE))
    ;
  changed = 0;
  g_assert_true (subagent_approval_sink_update_status (approver, "parked", subagent_approval_request_get_request_id (a),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "after-restart", NULL));
  wait_for_changed (&changed);
  requests = ats_load (f->sink, "parked");
  g_assert_cmpint (subagent_approval_request_get_status (requests->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  subagent_approval_sink_unwatch (f->sink, "parked");
  g_signal_handler_disconnect (f->sink, handler);
}

/* Tables made by a newer plugin are refused with a message saying so,
 * before anything is read or written. */
static void
test_newer_schema_refused (Fixture       *f,
                           gconstpointer  data)
{
  g_autofree char *sql = g_strdup_printf ("CREATE SCHEMA \"%s\"; CREATE TABLE \"%s\".schema_version (version integer);"
                                          "INSERT INTO \"%s\".schema_version VALUES (99)", f->schema, f->schema, f->schema);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) runs = NULL;

  ats_pg_exec (sql);
  runs = subagent_approval_sink_list_runs (f->sink, &error);
  g_assert_null (runs);
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE);
  g_assert_nonnull (strstr (error->message, "version 99"));
}

/* A reading after the first fetches only rows written since (each row
 * names its writer's transaction): it must still see every verdict, every
 * new request, a hand edit (and refuse it), and rows that went away. */
static void
test_incremental_reads (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request ("incr", "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) b = ats_make_request ("incr", "delete_file", "/b");
  g_autoptr(SubagentApprovalRequest) c = ats_make_request ("incr", "delete_file", "/c");
  g_autoptr(SubagentApprovalSink) approver = ats_store_new_sink (f, data);
  g_autofree char *remove_b = NULL;
  GPtrArray *requests;

  ats_save_one (f->sink, "incr", a);
  ats_save_one (f->sink, "incr", b);
  requests = ats_load (f->sink, "incr");
  g_assert_cmpuint (requests->len, ==, 2);
  g_ptr_array_unref (requests);

  /* A verdict from another process, and a new request. */
  g_assert_true (subagent_approval_sink_update_status (approver, "incr", subagent_approval_request_get_request_id (a),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "other", NULL));
  ats_save_one (approver, "incr", c);
  requests = ats_load (f->sink, "incr");
  g_assert_cmpuint (requests->len, ==, 3);
  g_assert_cmpstr (subagent_approval_request_get_request_id (requests->pdata[0]), ==,
                   subagent_approval_request_get_request_id (a));
  g_assert_cmpstr (subagent_approval_request_get_request_id (requests->pdata[2]), ==,
                   subagent_approval_request_get_request_id (c));
  g_assert_cmpint (subagent_approval_request_get_status (requests->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpint (subagent_approval_request_get_status (requests->pdata[1]), ==, SUBAGENT_APPROVAL_STATUS_PENDING);
  g_ptr_array_unref (requests);

  /* Rows gone behind the reader's back (another host's prune). */
  remove_b = g_strdup_printf ("DELETE FROM \"%s\".approval_requests WHERE request_id = '%s'",
                              f->schema, subagent_approval_request_get_request_id (b));
  ats_pg_exec (remove_b);
  requests = ats_load (f->sink, "incr");
  g_assert_cmpuint (requests->len, ==, 2);
  g_assert_null (ats_find (requests, subagent_approval_request_get_request_id (b)));
  g_ptr_array_unref (requests);

  /* A hand edit of a row already read and cached is read again, and fails. */
  g_test_expect_message (ATS_LOG_DOMAIN, G_LOG_LEVEL_WARNING, ATS_INTEGRITY_WARNING);
  ats_store_tamper (f, "incr", ATS_TAMPER_FORGE_VERDICT, NULL);
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) tampered = subagent_approval_sink_load (f->sink, "incr", &error);

    g_assert_no_error (error);
    g_assert_cmpuint (tampered->len, ==, 0);
  }
  g_test_assert_expected_messages ();
}

/* Tables of schema version 1 (no writer column) are migrated in place,
 * rows kept, and read as before. */
static void
test_version_1_migrated (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request ("old", "delete_file", "/a");
  g_autofree char *old_schema = g_strconcat (f->schema, "_v1", NULL);
  g_autofree char *create = g_strdup_printf (
    "CREATE SCHEMA \"%1$s\";"
    "CREATE TABLE \"%1$s\".schema_version (version integer NOT NULL);"
    "INSERT INTO \"%1$s\".schema_version VALUES (1);"
    "CREATE TABLE \"%1$s\".approval_requests (id bigserial PRIMARY KEY, run_id text NOT NULL,"
    " request_id text NOT NULL, status text NOT NULL, document jsonb NOT NULL, signature text,"
    " verdict_token text, version bigint NOT NULL DEFAULT 1,"
    " created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(),"
    " UNIQUE (run_id, request_id));"
    "INSERT INTO \"%1$s\".approval_requests (run_id, request_id, status, document)"
    " SELECT run_id, request_id, status, document FROM \"%2$s\".approval_requests",
    old_schema, f->schema);
  g_autoptr(SubagentApprovalSink) migrated = NULL;
  g_autoptr(GPtrArray) requests = NULL;
  g_autofree char *drop = g_strdup_printf ("DROP SCHEMA \"%s\" CASCADE", old_schema);

  ats_save_one (f->sink, "old", a);
  ats_pg_exec (create);
  migrated = g_object_new (G_OBJECT_TYPE (f->sink), "conninfo", ats_pg_conninfo ('a'), "schema", old_schema, NULL);
  requests = ats_load (migrated, "old");
  g_assert_cmpuint (requests->len, ==, 1);
  g_assert_cmpstr (subagent_approval_request_get_request_id (requests->pdata[0]), ==,
                   subagent_approval_request_get_request_id (a));
  g_assert_true (subagent_approval_sink_update_status (migrated, "old", subagent_approval_request_get_request_id (a),
                                                       SUBAGENT_APPROVAL_STATUS_DENIED, NULL, "test", NULL));
  g_ptr_array_unref (g_steal_pointer (&requests));
  requests = ats_load (migrated, "old");
  g_assert_cmpint (subagent_approval_request_get_status (requests->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_DENIED);
  g_clear_object (&migrated);
  ats_pg_exec (drop);
}

int
main (int   argc,
      char *argv[])
{
  g_unsetenv ("SUBAGENT_APPROVAL_HMAC_KEY");
  ats_store_parse_args (&argc, &argv);
  g_test_init (&argc, &argv, NULL);

  if (ats_store_kind == ATS_STORE_POSTGRES)
    {
      g_test_add ("/approval-postgres/stress/eight-processes-two-hosts-server-restart", Fixture, NULL,
                  ats_store_fixture_set_up, test_stress_eight_processes, ats_store_fixture_tear_down);
      g_test_add ("/approval-postgres/watch/reloads-after-the-server-restarts", Fixture, NULL,
                  ats_store_fixture_set_up, test_watch_survives_restart, ats_store_fixture_tear_down);
      g_test_add ("/approval-postgres/watch/parked-connection-after-the-server-restarts", Fixture, NULL,
                  ats_store_fixture_set_up, test_parked_listen_survives_restart, ats_store_fixture_tear_down);
      g_test_add ("/approval-postgres/schema/newer-version-is-refused", Fixture, NULL,
                  ats_store_fixture_set_up, test_newer_schema_refused, ats_store_fixture_tear_down);
      g_test_add ("/approval-postgres/schema/version-1-is-migrated", Fixture, NULL,
                  ats_store_fixture_set_up, test_version_1_migrated, ats_store_fixture_tear_down);
      g_test_add ("/approval-postgres/load/reads-only-what-changed", Fixture, "incremental-reads-key",
                  ats_store_fixture_set_up, test_incremental_reads, ats_store_fixture_tear_down);
    }
  else
    {
      g_test_add ("/approval-file/stress/eight-processes-decide-one-queue", Fixture, NULL,
                  ats_store_fixture_set_up, test_stress_eight_processes, ats_store_fixture_tear_down);
      g_test_add ("/approval-file/crash/sigkill-leaves-old-or-new-state", Fixture, CRASH_KEY,
                  ats_store_fixture_set_up, test_crash_sigkill_writers, ats_store_fixture_tear_down);
    }
  return g_test_run ();
}
