/* approval-stress-helper.c: the other processes of test-approval-file's
 * multi-process tests. Each mode opens the sink of ROOT (from
 * $SUBAGENT_PLUGIN_PATH, with the key of $SUBAGENT_APPROVAL_HMAC_KEY if set):
 * the approval-file sink of that workspace root, or with "postgres:SCHEMA:HOST"
 * the approval-postgres one (see open_sink()); and exits non-zero on any
 * error, including a read that does not parse or verify:
 *
 *   submit ROOT RUN N         saves N pending requests one by one, then waits
 *                             ("changed", no polling) until each has a verdict;
 *                             prints "FINAL <id> <status>" per request
 *   contend ROOT RUN N INDEX  decides every request of RUN as it appears:
 *                             approves when INDEX is even, denies when odd;
 *                             prints "WON <id> <status>" per compare-and-set won;
 *                             exits once it has seen N requests
 *   read ROOT RUN N           loads RUN every 2 ms, unsynchronized with the
 *                             writers, until N requests have verdicts;
 *                             prints "READS <count>"
 *   crash-writer ROOT RUN     forever adds a request or approves the oldest
 *                             pending one (see next_op()), printing "READY n a"
 *                             first and "STATE n a" after each committed step
 *   verdict ROOT RUN ID       prints the monotonic time, approves ID; exit 0 if won
 *
 * No mode waits without bound: submit, contend and read give up (exit 1,
 * saying what they waited for) after STALL_SECONDS without any change to
 * the run, so a lost wake-up fails the test instead of hanging it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <subagent.h>

/* Far above any pause between two writes of a run, even under ASan on a
 * loaded machine. */
#define STALL_SECONDS 120

G_NORETURN static void die (const char *format,
                            ...) G_GNUC_PRINTF (1, 2);

static void
die (const char *format,
     ...)
{
  va_list ap;

  va_start (ap, format);
  fprintf (stderr, "approval-stress-helper[%d]: ", (int) getpid ());
  vfprintf (stderr, format, ap);
  fputc ('\n', stderr);
  va_end (ap);
  exit (1);
}

static void
on_integrity_failed (SubagentApprovalSink *sink,
                     const char           *run_id,
                     const char           *message,
                     gpointer              user_data)
{
  die ("integrity failure on run %s: %s", run_id, message);
}

/* STORE is a workspace root (the file sink), or "postgres:SCHEMA:HOST":
 * the postgres sink on that schema of the test server, reached over TCP
 * (HOST a, $SUBAGENT_TEST_PG_CONNINFO) or its unix socket (HOST b,
 * $SUBAGENT_TEST_PG_SOCKET_CONNINFO), as two hosts would reach one server. */
static SubagentApprovalSink *
open_sink (const char *store)
{
  g_autoptr(GError) error = NULL;
  gboolean postgres = g_str_has_prefix (store, "postgres:");
  GObject *sink = subagent_plugin_registry_create (subagent_plugin_registry_get_default (),
                                                   SUBAGENT_TYPE_APPROVAL_SINK, postgres ? "postgres" : "file",
                                                   &error);

  if (sink == NULL)
    die ("cannot create the %s sink: %s", postgres ? "postgres" : "file", error->message);
  if (postgres)
    {
      g_auto(GStrv) parts = g_strsplit (store, ":", -1);
      const char *variable;
      const char *conninfo;

      if (g_strv_length (parts) != 3 || (!g_str_equal (parts[2], "a") && !g_str_equal (parts[2], "b")))
        die ("bad store %s: use postgres:SCHEMA:a or postgres:SCHEMA:b", store);
      variable = g_str_equal (parts[2], "a") ? "SUBAGENT_TEST_PG_CONNINFO" : "SUBAGENT_TEST_PG_SOCKET_CONNINFO";
      conninfo = g_getenv (variable);
      if (conninfo == NULL || conninfo[0] == '\0')
        die ("%s is not set", variable);
      g_object_set (sink, "conninfo", conninfo, "schema", parts[1], NULL);
    }
  else
    g_object_set (sink, "root", store, NULL);
  g_signal_connect (sink, "integrity-failed", G_CALLBACK (on_integrity_failed), NULL);
  return SUBAGENT_APPROVAL_SINK (sink);
}

static GPtrArray *
load_or_die (SubagentApprovalSink *sink,
             const char           *run)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *requests = subagent_approval_sink_load (sink, run, &error);

  if (requests == NULL)
    die ("load failed: %s", error->message);
  return requests;
}

static SubagentApprovalRequest *
new_request (const char *run,
             gint64      serial)
{
  g_autoptr(JsonObject) args = json_object_new ();

  json_object_set_int_member (args, "serial", serial);
  json_object_set_string_member (args, "path", "/tmp/stress");
  return subagent_approval_request_new ("stress-child", run, "stress", "delete_file", args,
                                        "prompt", "shared", SUBAGENT_NO_BATCH_INDEX, NULL, 0);
}

typedef struct {
  SubagentApprovalSink *sink;
  const char *run;
  guint n;
  guint index;
  GHashTable *seen;        /* request id → its verdict's name once seen (submit), or NULL */
  GMainLoop *loop;
  gboolean done;
  gint64 last_change;      /* monotonic time of the last "changed" */
} Worker;

static void
contend_step (Worker *w)
{
  g_autoptr(GPtrArray) requests = load_or_die (w->sink, w->run);
  SubagentApprovalStatus verdict = w->index % 2 == 0 ? SUBAGENT_APPROVAL_STATUS_APPROVED
                                                     : SUBAGENT_APPROVAL_STATUS_DENIED;
  g_autofree char *actor = g_strdup_printf ("worker-%u", w->index);

  for (guint i = 0; i < requests->len; i++)
    {
      SubagentApprovalRequest *request = requests->pdata[i];
      const char *id = subagent_approval_request_get_request_id (request);
      g_autoptr(GError) error = NULL;

      if (!g_hash_table_add (w->seen, g_strdup (id))
          || subagent_approval_request_get_status (request) != SUBAGENT_APPROVAL_STATUS_PENDING)
        continue;
      if (subagent_approval_sink_update_status (w->sink, w->run, id, verdict, "stress", actor, &error))
        printf ("WON %s %s\n", id, subagent_approval_status_to_string (verdict));
      else if (error != NULL)
        die ("update_status failed: %s", error->message);
    }
  if (g_hash_table_size (w->seen) >= w->n)
    {
      w->done = TRUE;
      g_main_loop_quit (w->loop);
    }
}

static void
submit_step (Worker *w)
{
  g_autoptr(GPtrArray) requests = load_or_die (w->sink, w->run);
  guint decided = 0;

  for (guint i = 0; i < requests->len; i++)
    {
      SubagentApprovalRequest *request = requests->pdata[i];
      const char *id = subagent_approval_request_get_request_id (request);
      SubagentApprovalStatus status = subagent_approval_request_get_status (request);
      const char *seen;

      if (!g_hash_table_lookup_extended (w->seen, id, NULL, (gpointer *) &seen))
        die ("request %s appeared that nobody submitted", id);
      if (seen != NULL && !g_str_equal (seen, subagent_approval_status_to_string (status)))
        die ("the verdict of %s changed from %s to %s", id, seen, subagent_approval_status_to_string (status));
      if (status != SUBAGENT_APPROVAL_STATUS_PENDING)
        {
          g_hash_table_insert (w->seen, g_strdup (id), (gpointer) subagent_approval_status_to_string (status));
          decided++;
        }
    }
  if (decided < w->n)
    return;

  for (guint i = 0; i < requests->len; i++)
    printf ("FINAL %s %s\n", subagent_approval_request_get_request_id (requests->pdata[i]),
            subagent_approval_status_to_string (subagent_approval_request_get_status (requests->pdata[i])));
  w->done = TRUE;
  g_main_loop_quit (w->loop);
}

static void
on_changed (SubagentApprovalSink *sink,
            const char           *run,
            Worker               *w)
{
  w->last_change = g_get_monotonic_time ();
  /* Done may come while the submitter still iterates between saves. */
  if (w->done)
    return;
  if (w->index == G_MAXUINT)
    submit_step (w);
  else
    contend_step (w);
}

static guint
count_decided (GPtrArray *requests)
{
  guint decided = 0;

  for (guint i = 0; i < requests->len; i++)
    if (subagent_approval_request_get_status (requests->pdata[i]) != SUBAGENT_APPROVAL_STATUS_PENDING)
      decided++;
  return decided;
}

/* The bound on waiting for "changed". When it is hit, one more step tells
 * a missed notification (the file had what we waited for) from others
 * that stopped writing. */
static gboolean
check_stalled (gpointer user_data)
{
  Worker *w = user_data;
  g_autoptr(GPtrArray) requests = NULL;

  if (w->done || g_get_monotonic_time () - w->last_change < STALL_SECONDS * G_USEC_PER_SEC)
    return G_SOURCE_CONTINUE;
  requests = load_or_die (w->sink, w->run);
  if (w->index == G_MAXUINT)
    submit_step (w);
  else
    contend_step (w);
  if (w->done)
    die ("no \"changed\" for run %s in %d s although the file had what this %s waited for: "
         "a change notification was lost", w->run, STALL_SECONDS, w->index == G_MAXUINT ? "submitter" : "contender");
  die ("no change to run %s in %d s; the file holds %u of %u requests, %u decided: "
       "the other processes stopped (see their errors above)", w->run, STALL_SECONDS,
       requests->len, w->n, count_decided (requests));
}

static int
run_worker (SubagentApprovalSink *sink,
            const char           *run,
            guint                 n,
            guint                 index)
{
  Worker w = { sink, run, n, index, NULL, g_main_loop_new (NULL, FALSE), FALSE, g_get_monotonic_time () };
  guint stall_id;

  w.seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_signal_connect (sink, "changed", G_CALLBACK (on_changed), &w);
  subagent_approval_sink_watch (sink, run);

  if (index == G_MAXUINT)
    for (guint i = 0; i < n; i++)
      {
        g_autoptr(SubagentApprovalRequest) request = new_request (run, i);
        g_autoptr(GPtrArray) batch = g_ptr_array_new ();
        g_autoptr(GError) error = NULL;

        g_hash_table_insert (w.seen, g_strdup (subagent_approval_request_get_request_id (request)), NULL);
        g_ptr_array_add (batch, request);
        if (!subagent_approval_sink_save (sink, run, batch, &error))
          die ("save failed: %s", error->message);
        /* Read what the others wrote meanwhile: loads race with their renames. */
        while (g_main_context_iteration (NULL, FALSE))
          ;
      }

  on_changed (sink, run, &w);
  stall_id = g_timeout_add_seconds (1, check_stalled, &w);
  if (!w.done)
    g_main_loop_run (w.loop);
  g_source_remove (stall_id);
  g_main_loop_unref (w.loop);
  g_hash_table_unref (w.seen);
  return 0;
}

static int
run_reader (SubagentApprovalSink *sink,
            const char           *run,
            guint                 n)
{
  guint64 reads = 0;
  guint decided = 0;
  gint64 last_progress = g_get_monotonic_time ();

  while (decided < n)
    {
      g_autoptr(GPtrArray) requests = NULL;
      guint now_decided;

      /* Reads at arbitrary moments, racing the writers' renames, but leaves
       * the CPU to them between reads. */
      g_usleep (2000);
      requests = load_or_die (sink, run);

      reads++;
      now_decided = count_decided (requests);
      if (now_decided != decided)
        last_progress = g_get_monotonic_time ();
      else if (g_get_monotonic_time () - last_progress > STALL_SECONDS * G_USEC_PER_SEC)
        die ("no new verdict in run %s for %d s (%u of %u decided): the other processes stopped "
             "(see their errors above)", run, STALL_SECONDS, decided, n);
      decided = now_decided;
    }
  printf ("READS %" G_GUINT64_FORMAT "\n", reads);
  return 0;
}

/* The crash writer's state is (requests, approved); every other request is
 * pending. Its next step depends only on the state, so the test can tell
 * which two states a killed writer may have left. */
static int
run_crash_writer (SubagentApprovalSink *sink,
                  const char           *run)
{
  g_autoptr(GPtrArray) requests = load_or_die (sink, run);
  guint n = requests->len, approved = 0;

  for (guint i = 0; i < n; i++)
    if (subagent_approval_request_get_status (requests->pdata[i]) == SUBAGENT_APPROVAL_STATUS_APPROVED)
      approved++;
  printf ("READY %u %u\n", n, approved);
  fflush (stdout);

  for (;;)
    {
      g_autoptr(GError) error = NULL;

      if (n - approved >= 2)
        {
          /* Requests are approved in file order, so the oldest pending one is at index `approved`. */
          g_clear_pointer (&requests, g_ptr_array_unref);
          requests = load_or_die (sink, run);
          if (!subagent_approval_sink_update_status (sink, run,
                                                     subagent_approval_request_get_request_id (requests->pdata[approved]),
                                                     SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "crash-writer", &error))
            die ("approving failed: %s", error ? error->message : "not pending");
          approved++;
        }
      else
        {
          g_autoptr(SubagentApprovalRequest) request = new_request (run, n);
          g_autoptr(GPtrArray) batch = g_ptr_array_new ();

          g_ptr_array_add (batch, request);
          if (!subagent_approval_sink_save (sink, run, batch, &error))
            die ("save failed: %s", error->message);
          n++;
        }
      printf ("STATE %u %u\n", n, approved);
      fflush (stdout);
    }
}

static int
run_verdict (SubagentApprovalSink *sink,
             const char           *run,
             const char           *request_id)
{
  g_autoptr(GError) error = NULL;
  gint64 start = g_get_monotonic_time ();
  gboolean won;

  printf ("START %" G_GINT64_FORMAT "\n", start);
  fflush (stdout);
  won = subagent_approval_sink_update_status (sink, run, request_id, SUBAGENT_APPROVAL_STATUS_APPROVED,
                                              NULL, "verdict-helper", &error);
  if (error != NULL)
    die ("update_status failed: %s", error->message);
  return won ? 0 : 1;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(SubagentApprovalSink) sink = NULL;
  const char *mode = argc > 1 ? argv[1] : "";

  setvbuf (stdout, NULL, _IOLBF, 0);
  if (argc < 4)
    die ("usage: %s submit|contend|read|crash-writer|verdict ROOT RUN ...", argv[0]);
  sink = open_sink (argv[2]);

  if (g_str_equal (mode, "submit") && argc == 5)
    return run_worker (sink, argv[3], (guint) atoi (argv[4]), G_MAXUINT);
  if (g_str_equal (mode, "contend") && argc == 6)
    return run_worker (sink, argv[3], (guint) atoi (argv[4]), (guint) atoi (argv[5]));
  if (g_str_equal (mode, "read") && argc == 5)
    return run_reader (sink, argv[3], (guint) atoi (argv[4]));
  if (g_str_equal (mode, "crash-writer") && argc == 4)
    return run_crash_writer (sink, argv[3]);
  if (g_str_equal (mode, "verdict") && argc == 5)
    return run_verdict (sink, argv[3], argv[4]);
  die ("bad arguments for mode “%s”", mode);
}
