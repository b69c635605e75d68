/* test-approval-conformance.c: what every persistent approval store must do,
 * run against one store per invocation (--store=file or --store=postgres;
 * tests/meson.build registers both): the state machine's edges, one
 * winner per compare-and-set among threads and processes, prune keeping
 * pending queues, tampering detected (HMAC) and verdicts bound to their
 * action (digest), batch verdicts (one write, each request still its own
 * compare-and-set), and "changed" in the watcher's context. Store-specific
 * behaviour is in test-approval-file.c and test-approval-stress.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>

#include "approval-test-support.h"

#define RUN "run-1"
#define KEY "correct horse battery staple"

static void
assert_rejected (Fixture    *f,
                 const char *run)
{
  g_autoptr(GPtrArray) requests = NULL;
  guint before = f->integrity_failures;

  g_test_expect_message (ATS_LOG_DOMAIN, G_LOG_LEVEL_WARNING, ATS_INTEGRITY_WARNING);
  requests = ats_load (f->sink, run);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (requests->len, ==, 0);
  g_assert_cmpuint (f->integrity_failures, ==, before + 1);
}

static void
assert_no_runs (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) runs = subagent_approval_sink_list_runs (f->sink, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (runs), ==, 0);
}

/* State machine */

static void
test_invalid_ids (Fixture       *f,
                  gconstpointer  data)
{
  g_autofree char *long_id = g_strnfill (129, 'a');
  g_autofree char *max_id = g_strnfill (128, 'a');
  const char *bad[] = { "../x", "", long_id, "r\xc3\xa9sum\xc3\xa9", "a/b", ".", "..", "a.json", "a b", "a'b", NULL };
  g_autoptr(GPtrArray) requests = NULL;

  for (guint i = 0; bad[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) empty = g_ptr_array_new ();

      g_assert_null (subagent_approval_sink_load (f->sink, bad[i], &error));
      g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INVALID_ID);
      g_clear_error (&error);
      g_assert_false (subagent_approval_sink_save (f->sink, bad[i], empty, &error));
      g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INVALID_ID);
      g_clear_error (&error);
      g_assert_false (subagent_approval_sink_update_status (f->sink, RUN, bad[i], SUBAGENT_APPROVAL_STATUS_APPROVED,
                                                            NULL, NULL, &error));
      g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INVALID_ID);
      g_clear_error (&error);
    }
  assert_no_runs (f);
  /* 128 characters is the longest id that works. */
  requests = ats_load (f->sink, max_id);
  g_assert_cmpuint (requests->len, ==, 0);
}

static void
test_save_merges (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) b = ats_make_request (RUN, "delete_file", "/b");
  g_autoptr(SubagentApprovalRequest) c = ats_make_request (RUN, "delete_file", "/c");
  g_autoptr(SubagentApprovalRequest) stale_b = NULL;
  g_autoptr(GPtrArray) batch = g_ptr_array_new ();
  g_autoptr(GPtrArray) requests = NULL;
  g_autoptr(SubagentApprovalRequest) other_run = ats_make_request ("run-2", "delete_file", "/x");
  g_autoptr(GError) error = NULL;

  g_ptr_array_add (batch, a);
  g_ptr_array_add (batch, b);
  g_assert_true (subagent_approval_sink_save (f->sink, RUN, batch, &error));
  g_assert_no_error (error);

  /* Another process approves b; this one still holds b as pending and has
   * denied a locally: the stored verdict of b wins, a's new one is stored. */
  g_assert_true (subagent_approval_sink_update_status (f->sink, RUN, subagent_approval_request_get_request_id (b),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "alice", &error));
  g_assert_no_error (error);
  g_assert_true (subagent_approval_request_transition (a, SUBAGENT_APPROVAL_STATUS_DENIED, "local", "bob"));
  stale_b = subagent_approval_request_copy (b);
  g_assert_true (subagent_approval_request_transition (stale_b, SUBAGENT_APPROVAL_STATUS_DENIED, "late", "bob"));
  g_ptr_array_set_size (batch, 0);
  g_ptr_array_add (batch, a);
  g_ptr_array_add (batch, stale_b);
  g_ptr_array_add (batch, c);
  g_assert_true (subagent_approval_sink_save (f->sink, RUN, batch, &error));
  g_assert_no_error (error);

  /* Stored order is the order requests first arrived in. */
  requests = ats_load (f->sink, RUN);
  g_assert_cmpuint (requests->len, ==, 3);
  g_assert_cmpstr (subagent_approval_request_get_request_id (requests->pdata[0]), ==, subagent_approval_request_get_request_id (a));
  g_assert_cmpint (subagent_approval_request_get_status (requests->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_DENIED);
  g_assert_cmpint (subagent_approval_request_get_status (requests->pdata[1]), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpstr (subagent_approval_request_get_approved_by (requests->pdata[1]), ==, "alice");
  g_assert_cmpint (subagent_approval_request_get_status (requests->pdata[2]), ==, SUBAGENT_APPROVAL_STATUS_PENDING);

  /* A request of another run is refused, not filed under this one. */
  g_ptr_array_set_size (batch, 0);
  g_ptr_array_add (batch, other_run);
  g_assert_false (subagent_approval_sink_save (f->sink, RUN, batch, &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
}

static void
test_update_status_cas (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  const char *id = subagent_approval_request_get_request_id (a);
  g_autoptr(GPtrArray) requests = NULL;
  g_autoptr(GError) error = NULL;
  SubagentApprovalRequest *stored;

  /* Nothing stored yet: missing, no error, and nothing created. */
  g_assert_false (subagent_approval_sink_update_status (f->sink, RUN, id, SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, NULL, &error));
  g_assert_no_error (error);
  assert_no_runs (f);

  ats_save_one (f->sink, RUN, a);
  g_assert_false (subagent_approval_sink_update_status (f->sink, RUN, "no-such-request", SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, NULL, &error));
  g_assert_no_error (error);

  g_assert_true (subagent_approval_sink_update_status (f->sink, RUN, id, SUBAGENT_APPROVAL_STATUS_DENIED, "too risky", "carol", &error));
  g_assert_no_error (error);
  /* Terminal states are final, whatever comes next. */
  g_assert_false (subagent_approval_sink_update_status (f->sink, RUN, id, SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "dave", &error));
  g_assert_no_error (error);
  g_assert_false (subagent_approval_sink_update_status (f->sink, RUN, id, SUBAGENT_APPROVAL_STATUS_DENIED, "again", NULL, &error));
  g_assert_no_error (error);
  g_assert_false (subagent_approval_sink_update_status (f->sink, RUN, id, SUBAGENT_APPROVAL_STATUS_TIMEOUT, NULL, NULL, &error));
  g_assert_no_error (error);

  requests = ats_load (f->sink, RUN);
  stored = ats_find (requests, id);
  g_assert_nonnull (stored);
  g_assert_cmpint (subagent_approval_request_get_status (stored), ==, SUBAGENT_APPROVAL_STATUS_DENIED);
  g_assert_cmpstr (subagent_approval_request_get_denial_reason (stored), ==, "too risky");
  g_assert_nonnull (subagent_approval_request_get_denied_at (stored));
  g_assert_null (subagent_approval_request_get_approved_at (stored));
  /* A load is a snapshot: changing it changes nothing stored. */
  g_assert_true (subagent_approval_request_get_status (stored) != SUBAGENT_APPROVAL_STATUS_PENDING);
}

/* Threads of one process saving and deciding on one run at once: each call
 * must get exactly its own result (one winner per compare-and-set, no lost
 * save). Several rounds, so that later calls meet earlier ones. */
#define RACERS 8
#define ROUNDS 4

typedef struct {
  SubagentApprovalSink *sink;
  const char *shared_ids[ROUNDS];
  SubagentApprovalRequest *own[ROUNDS];
  SubagentApprovalStatus verdict;
  gboolean won[ROUNDS];
  GMutex *mutex;
  GCond *cond;
  gboolean *go;
} Racer;

static gpointer
racer_thread (gpointer data)
{
  Racer *r = data;

  g_mutex_lock (r->mutex);
  while (!*r->go)
    g_cond_wait (r->cond, r->mutex);
  g_mutex_unlock (r->mutex);

  for (guint round = 0; round < ROUNDS; round++)
    {
      g_autoptr(GError) error = NULL;

      ats_save_one (r->sink, RUN, r->own[round]);
      r->won[round] = subagent_approval_sink_update_status (r->sink, RUN, r->shared_ids[round], r->verdict,
                                                            "racing", "racer", &error);
      g_assert_no_error (error);
      g_assert_true (subagent_approval_sink_update_status (r->sink, RUN,
                                                           subagent_approval_request_get_request_id (r->own[round]),
                                                           SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "racer", &error));
      g_assert_no_error (error);
    }
  return NULL;
}

static void
test_threads_compare_and_set (Fixture       *f,
                              gconstpointer  data)
{
  g_autoptr(GPtrArray) shared = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) requests = NULL;
  Racer racers[RACERS];
  GThread *threads[RACERS];
  GMutex mutex;
  GCond cond;
  gboolean go = FALSE;

  g_mutex_init (&mutex);
  g_cond_init (&cond);
  for (guint round = 0; round < ROUNDS; round++)
    {
      g_autofree char *path = g_strdup_printf ("/shared/%u", round);

      g_ptr_array_add (shared, ats_make_request (RUN, "delete_file", path));
      ats_save_one (f->sink, RUN, shared->pdata[round]);
    }
  for (guint i = 0; i < RACERS; i++)
    {
      racers[i] = (Racer) { .sink = f->sink,
                            .verdict = i % 2 ? SUBAGENT_APPROVAL_STATUS_DENIED : SUBAGENT_APPROVAL_STATUS_APPROVED,
                            .mutex = &mutex, .cond = &cond, .go = &go };
      for (guint round = 0; round < ROUNDS; round++)
        {
          g_autofree char *path = g_strdup_printf ("/own/%u/%u", i, round);

          racers[i].shared_ids[round] = subagent_approval_request_get_request_id (shared->pdata[round]);
          racers[i].own[round] = ats_make_request (RUN, "delete_file", path);
        }
      threads[i] = g_thread_new ("racer", racer_thread, &racers[i]);
    }
  g_mutex_lock (&mutex);
  go = TRUE;
  g_cond_broadcast (&cond);
  g_mutex_unlock (&mutex);
  for (guint i = 0; i < RACERS; i++)
    g_thread_join (threads[i]);

  requests = ats_load (f->sink, RUN);
  g_assert_cmpuint (requests->len, ==, RACERS * ROUNDS + ROUNDS);
  for (guint round = 0; round < ROUNDS; round++)
    {
      guint winners = 0;

      for (guint i = 0; i < RACERS; i++)
        {
          SubagentApprovalRequest *own = ats_find (requests,
                                                   subagent_approval_request_get_request_id (racers[i].own[round]));

          g_assert_nonnull (own);
          g_assert_cmpint (subagent_approval_request_get_status (own), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
          if (racers[i].won[round])
            {
              winners++;
              g_assert_cmpint (subagent_approval_request_get_status (ats_find (requests, racers[i].shared_ids[round])),
                               ==, racers[i].verdict);
            }
        }
      g_assert_cmpuint (winners, ==, 1);
    }
  for (guint i = 0; i < RACERS; i++)
    for (guint round = 0; round < ROUNDS; round++)
      g_object_unref (racers[i].own[round]);
  if (f->kind == ATS_STORE_FILE)
    {
      /* Only the run's file and its lock: no temp file of a coalesced write. */
      g_auto(GStrv) entries = ats_dir_entries (f->dir);

      g_assert_cmpuint (g_strv_length (entries), ==, 2);
    }
  g_cond_clear (&cond);
  g_mutex_clear (&mutex);
}

/* Batch verdicts */

/* Counts the atomic writes of a run's file, as bench/approvals does: by
 * the moves onto it (ats_count_run_writes()). For postgres: the transactions that wrote
 * the run's decided rows (their distinct xmin). */
typedef struct {
  Fixture *f;
  int inotify_fd;
} WriteCounter;

static void
write_counter_start (WriteCounter *c,
                     Fixture      *f)
{
  c->f = f;
  c->inotify_fd = -1;
  if (f->kind != ATS_STORE_FILE)
    return;
  c->inotify_fd = ats_watch_run_writes (f->dir);
}

static guint
write_counter_finish (WriteCounter *c,
                      const char   *run)
{
  guint writes;

  if (c->f->kind != ATS_STORE_FILE)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT count(DISTINCT xmin::text) FROM %s.approval_requests "
                                              "WHERE run_id = '%s' AND status <> 'pending'", c->f->schema, run);

      return (guint) ats_pg_query_int (sql);
    }
  writes = ats_count_run_writes (c->inotify_fd, run);
  close (c->inotify_fd);
  return writes;
}

#define BATCH_SIZE 12

static void
test_batch_compare_and_set (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(GPtrArray) made = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) ids = g_ptr_array_new ();
  g_autoptr(GPtrArray) requests = NULL;
  g_autoptr(GArray) won = NULL;
  g_autoptr(GError) error = NULL;
  const char *none[] = { NULL };
  const char *bad[] = { "ok", "../x", NULL };
  WriteCounter counter;

  /* Nothing stored: every id is missing, nothing is created. */
  {
    const char *missing[] = { "a", "b", NULL };

    won = subagent_approval_sink_update_status_batch (f->sink, RUN, missing, SUBAGENT_APPROVAL_STATUS_APPROVED,
                                                      NULL, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (won->len, ==, 2);
    g_assert_false (g_array_index (won, gboolean, 0) || g_array_index (won, gboolean, 1));
    g_clear_pointer (&won, g_array_unref);
    assert_no_runs (f);
  }
  g_assert_null (subagent_approval_sink_update_status_batch (f->sink, RUN, bad, SUBAGENT_APPROVAL_STATUS_APPROVED,
                                                             NULL, NULL, &error));
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INVALID_ID);
  g_clear_error (&error);

  for (guint i = 0; i < BATCH_SIZE; i++)
    {
      g_autofree char *path = g_strdup_printf ("/batch/%u", i);

      g_ptr_array_add (made, ats_make_request (RUN, "delete_file", path));
    }
  g_assert_true (subagent_approval_sink_save (f->sink, RUN, made, &error));
  g_assert_no_error (error);
  /* Two decided before the batch: it must not win them. */
  g_assert_true (subagent_approval_sink_update_status (f->sink, RUN, subagent_approval_request_get_request_id (made->pdata[0]),
                                                       SUBAGENT_APPROVAL_STATUS_DENIED, "earlier", "eve", &error));
  g_assert_true (subagent_approval_sink_update_status (f->sink, RUN, subagent_approval_request_get_request_id (made->pdata[1]),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "eve", &error));
  g_assert_no_error (error);

  for (guint i = 0; i < BATCH_SIZE; i++)
    g_ptr_array_add (ids, (gpointer) subagent_approval_request_get_request_id (made->pdata[i]));
  g_ptr_array_add (ids, (gpointer) "no-such-request");
  g_ptr_array_add (ids, (gpointer) subagent_approval_request_get_request_id (made->pdata[2]));  /* twice */
  g_ptr_array_add (ids, NULL);

  write_counter_start (&counter, f);
  won = subagent_approval_sink_update_status_batch (f->sink, RUN, (const char * const *) ids->pdata,
                                                    SUBAGENT_APPROVAL_STATUS_DENIED, "all at once", "frank", &error);
  g_assert_no_error (error);
  g_assert_nonnull (won);
  g_assert_cmpuint (won->len, ==, BATCH_SIZE + 2);
  g_assert_false (g_array_index (won, gboolean, 0));
  g_assert_false (g_array_index (won, gboolean, 1));
  for (guint i = 2; i < BATCH_SIZE; i++)
    g_assert_true (g_array_index (won, gboolean, i));
  g_assert_false (g_array_index (won, gboolean, BATCH_SIZE));
  g_assert_false (g_array_index (won, gboolean, BATCH_SIZE + 1));
  if (f->kind == ATS_STORE_FILE)
    g_assert_cmpuint (write_counter_finish (&counter, RUN), ==, 1);
  else
    /* The two single verdicts, and one transaction for the batch. */
    g_assert_cmpuint (write_counter_finish (&counter, RUN), ==, 3);

  requests = ats_load (f->sink, RUN);
  g_assert_cmpint (subagent_approval_request_get_status (ats_find (requests, ids->pdata[0])), ==,
                   SUBAGENT_APPROVAL_STATUS_DENIED);
  g_assert_cmpstr (subagent_approval_request_get_denial_reason (ats_find (requests, ids->pdata[0])), ==, "earlier");
  g_assert_cmpint (subagent_approval_request_get_status (ats_find (requests, ids->pdata[1])), ==,
                   SUBAGENT_APPROVAL_STATUS_APPROVED);
  for (guint i = 2; i < BATCH_SIZE; i++)
    {
      SubagentApprovalRequest *stored = ats_find (requests, ids->pdata[i]);

      g_assert_cmpint (subagent_approval_request_get_status (stored), ==, SUBAGENT_APPROVAL_STATUS_DENIED);
      g_assert_cmpstr (subagent_approval_request_get_denial_reason (stored), ==, "all at once");
      g_assert_cmpstr (subagent_approval_request_get_approved_by (stored), ==, "frank");
    }
  g_assert_null (ats_find (requests, "no-such-request"));

  /* A repeat wins nothing and writes nothing; an empty batch is empty. */
  g_clear_pointer (&won, g_array_unref);
  write_counter_start (&counter, f);
  won = subagent_approval_sink_update_status_batch (f->sink, RUN, (const char * const *) ids->pdata,
                                                    SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < won->len; i++)
    g_assert_false (g_array_index (won, gboolean, i));
  if (f->kind == ATS_STORE_FILE)
    g_assert_cmpuint (write_counter_finish (&counter, RUN), ==, 0);
  else
    g_assert_cmpuint (write_counter_finish (&counter, RUN), ==, 3);
  g_clear_pointer (&won, g_array_unref);
  won = subagent_approval_sink_update_status_batch (f->sink, RUN, none, SUBAGENT_APPROVAL_STATUS_APPROVED,
                                                    NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (won->len, ==, 0);
}

/* Batches (in several orders, on sinks as several processes would have
 * them) racing single verdicts over the same requests: each request has
 * exactly one winner, whose verdict is stored. */
#define BATCH_RACERS 6
#define BATCH_RACE_REQUESTS 24

typedef struct {
  SubagentApprovalSink *sink;
  const char *ids[BATCH_RACE_REQUESTS + 1];
  gboolean single;         /* one update_status() per request, not a batch */
  SubagentApprovalStatus verdict;
  char actor[16];
  gboolean won[BATCH_RACE_REQUESTS];
  GMutex *mutex;
  GCond *cond;
  gboolean *go;
} BatchRacer;

static gpointer
batch_racer_thread (gpointer data)
{
  BatchRacer *r = data;
  g_autoptr(GError) error = NULL;

  g_mutex_lock (r->mutex);
  while (!*r->go)
    g_cond_wait (r->cond, r->mutex);
  g_mutex_unlock (r->mutex);

  if (r->single)
    for (guint i = 0; i < BATCH_RACE_REQUESTS; i++)
      {
        r->won[i] = subagent_approval_sink_update_status (r->sink, RUN, r->ids[i], r->verdict, "racing", r->actor,
                                                          &error);
        g_assert_no_error (error);
      }
  else
    {
      g_autoptr(GArray) won = subagent_approval_sink_update_status_batch (r->sink, RUN, r->ids, r->verdict,
                                                                          "racing", r->actor, &error);

      g_assert_no_error (error);
      g_assert_cmpuint (won->len, ==, BATCH_RACE_REQUESTS);
      memcpy (r->won, won->data, sizeof r->won);
    }
  return NULL;
}

static void
test_batch_races (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(GPtrArray) made = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) sinks = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) requests = NULL;
  g_autoptr(GError) error = NULL;
  static const SubagentApprovalStatus verdicts[] = {
    SUBAGENT_APPROVAL_STATUS_APPROVED, SUBAGENT_APPROVAL_STATUS_DENIED, SUBAGENT_APPROVAL_STATUS_CANCELLED,
  };
  BatchRacer racers[BATCH_RACERS];
  GThread *threads[BATCH_RACERS];
  GMutex mutex;
  GCond cond;
  gboolean go = FALSE;

  g_mutex_init (&mutex);
  g_cond_init (&cond);
  for (guint i = 0; i < BATCH_RACE_REQUESTS; i++)
    {
      g_autofree char *path = g_strdup_printf ("/race/%u", i);

      g_ptr_array_add (made, ats_make_request (RUN, "delete_file", path));
    }
  g_assert_true (subagent_approval_sink_save (f->sink, RUN, made, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < 2; i++)
    g_ptr_array_add (sinks, ats_store_new_sink (f, data));

  for (guint k = 0; k < BATCH_RACERS; k++)
    {
      BatchRacer *r = &racers[k];

      *r = (BatchRacer) { .sink = k % 3 == 0 ? f->sink : sinks->pdata[k % 3 - 1],
                          .single = k == BATCH_RACERS - 1, .verdict = verdicts[k % 3],
                          .mutex = &mutex, .cond = &cond, .go = &go };
      g_snprintf (r->actor, sizeof r->actor, "racer-%u", k);
      /* Each racer takes the requests in its own order: rotated, and
       * reversed for every other one. */
      for (guint i = 0; i < BATCH_RACE_REQUESTS; i++)
        {
          guint j = (i + k * 5) % BATCH_RACE_REQUESTS;

          if (k % 2)
            j = BATCH_RACE_REQUESTS - 1 - j;
          r->ids[i] = subagent_approval_request_get_request_id (made->pdata[j]);
        }
      r->ids[BATCH_RACE_REQUESTS] = NULL;
    }
  for (guint k = 0; k < BATCH_RACERS; k++)
    threads[k] = g_thread_new ("batch-racer", batch_racer_thread, &racers[k]);
  g_mutex_lock (&mutex);
  go = TRUE;
  g_cond_broadcast (&cond);
  g_mutex_unlock (&mutex);
  for (guint k = 0; k < BATCH_RACERS; k++)
    g_thread_join (threads[k]);

  requests = ats_load (f->sink, RUN);
  g_assert_cmpuint (requests->len, ==, BATCH_RACE_REQUESTS);
  for (guint j = 0; j < BATCH_RACE_REQUESTS; j++)
    {
      const char *id = subagent_approval_request_get_request_id (made->pdata[j]);
      SubagentApprovalRequest *stored = ats_find (requests, id);
      guint winners = 0;

      for (guint k = 0; k < BATCH_RACERS; k++)
        for (guint i = 0; i < BATCH_RACE_REQUESTS; i++)
          if (g_str_equal (racers[k].ids[i], id) && racers[k].won[i])
            {
              winners++;
              g_assert_cmpint (subagent_approval_request_get_status (stored), ==, racers[k].verdict);
              g_assert_cmpstr (subagent_approval_request_get_approved_by (stored), ==, racers[k].actor);
            }
      g_assert_cmpuint (winners, ==, 1);
    }
  g_cond_clear (&cond);
  g_mutex_clear (&mutex);
}

static void
test_prune_keeps_pending (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) done = ats_make_request ("done", "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) waiting = ats_make_request ("waiting", "delete_file", "/b");
  g_autoptr(SubagentApprovalRequest) mixed_done = ats_make_request ("mixed", "delete_file", "/c");
  g_autoptr(SubagentApprovalRequest) mixed_pending = ats_make_request ("mixed", "delete_file", "/d");
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) runs = NULL;

  ats_save_one (f->sink, "done", done);
  g_assert_true (subagent_approval_sink_update_status (f->sink, "done", subagent_approval_request_get_request_id (done),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, NULL, NULL));
  ats_save_one (f->sink, "waiting", waiting);
  ats_save_one (f->sink, "mixed", mixed_done);
  ats_save_one (f->sink, "mixed", mixed_pending);
  g_assert_true (subagent_approval_sink_update_status (f->sink, "mixed",
                                                       subagent_approval_request_get_request_id (mixed_done),
                                                       SUBAGENT_APPROVAL_STATUS_DENIED, NULL, NULL, NULL));

  /* Too young to go. */
  g_assert_cmpuint (subagent_approval_sink_prune_stale (f->sink, G_TIME_SPAN_HOUR, &error), ==, 0);
  g_assert_no_error (error);
  /* Any age: only the run with nothing pending goes. */
  g_assert_cmpuint (subagent_approval_sink_prune_stale (f->sink, 0, &error), ==, 1);
  g_assert_no_error (error);
  runs = subagent_approval_sink_list_runs (f->sink, &error);
  g_assert_no_error (error);
  g_assert_cmpstrv (runs, ((const char * const[]) { "mixed", "waiting", NULL }));
  g_assert_cmpuint (subagent_approval_sink_prune_stale (f->sink, 0, &error), ==, 0);
  g_assert_cmpint (ats_stored_status (f->sink, "waiting", waiting), ==, SUBAGENT_APPROVAL_STATUS_PENDING);
}

static void
test_list_runs (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request ("zeta", "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) b = ats_make_request ("alpha", "delete_file", "/b");
  g_autoptr(SubagentApprovalRequest) c = ats_make_request ("Beta", "delete_file", "/c");
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) runs = NULL;

  assert_no_runs (f);
  ats_save_one (f->sink, "zeta", a);
  ats_save_one (f->sink, "alpha", b);
  ats_save_one (f->sink, "Beta", c);
  runs = subagent_approval_sink_list_runs (f->sink, &error);
  g_assert_no_error (error);
  /* Byte order, as strcmp() sorts. */
  g_assert_cmpstrv (runs, ((const char * const[]) { "Beta", "alpha", "zeta", NULL }));
}

/* Integrity */

static void
test_integrity_right_key (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(SubagentApprovalSink) reader = ats_store_new_sink (f, KEY);
  g_autoptr(GPtrArray) requests = NULL;

  ats_save_one (f->sink, RUN, a);
  /* Another sink (process) with the same key reads and changes it. */
  requests = ats_load (reader, RUN);
  g_assert_cmpuint (requests->len, ==, 1);
  g_assert_true (subagent_approval_sink_update_status (reader, RUN, subagent_approval_request_get_request_id (a),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, NULL, NULL));
  g_clear_pointer (&requests, g_ptr_array_unref);
  requests = ats_load (f->sink, RUN);
  g_assert_cmpint (subagent_approval_request_get_status (requests->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpuint (f->integrity_failures, ==, 0);
}

static void
test_integrity_wrong_key (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(SubagentApprovalSink) writer = ats_store_new_sink (f, "another key");
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(GError) error = NULL;

  ats_save_one (writer, RUN, a);
  assert_rejected (f, RUN);
  /* Nor does a verdict get signed over it. */
  g_test_expect_message (ATS_LOG_DOMAIN, G_LOG_LEVEL_WARNING, ATS_INTEGRITY_WARNING);
  g_assert_false (subagent_approval_sink_update_status (f->sink, RUN, subagent_approval_request_get_request_id (a),
                                                        SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, NULL, &error));
  g_test_assert_expected_messages ();
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
}

static void
test_integrity_unsigned_with_key (Fixture       *f,
                                  gconstpointer  data)
{
  g_autoptr(SubagentApprovalSink) writer = ats_store_new_sink (f, NULL);
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");

  ats_save_one (writer, RUN, a);
  assert_rejected (f, RUN);
}

/* A verdict given to a harmless call must not end up on a dangerous one. */
static void
test_integrity_moved_verdict (Fixture       *f,
                              gconstpointer  data)
{
  const char *key = data;
  const char *runs[] = { "swap-1", "swap-2" };

  for (guint i = 0; i < (key != NULL ? 2 : 1); i++)
    {
      g_autoptr(SubagentApprovalRequest) dangerous = ats_make_request (runs[i], "delete_file", "/etc");
      g_autoptr(SubagentApprovalRequest) harmless = ats_make_request (runs[i], "read_file", "/notes");
      g_autoptr(GPtrArray) batch = g_ptr_array_new ();

      g_ptr_array_add (batch, dangerous);
      g_ptr_array_add (batch, harmless);
      g_assert_true (subagent_approval_sink_save (f->sink, runs[i], batch, NULL));
      g_assert_true (subagent_approval_sink_update_status (f->sink, runs[i],
                                                           subagent_approval_request_get_request_id (harmless),
                                                           SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, NULL, NULL));
      if (i == 0)
        /* The digest no longer matches the action, whoever signs. */
        ats_store_tamper (f, runs[i], ATS_TAMPER_SWAP_ACTIONS, key);
      else
        /* Moving the digests along breaks the signature. */
        ats_store_tamper (f, runs[i], ATS_TAMPER_SWAP_ACTIONS_AND_DIGESTS, NULL);
      assert_rejected (f, runs[i]);
    }
}

/* Writing a verdict, or editing any member, without the key is seen. */
static void
test_integrity_tampered (Fixture       *f,
                         gconstpointer  data)
{
  const AtsTamper tampers[] = { ATS_TAMPER_FORGE_VERDICT, ATS_TAMPER_RENAME_SUBAGENT };

  /* i / 2: the run was read (empty) before the save, so what the store
   * wrote itself is what it remembers of the row. */
  for (guint i = 0; i < 2 * G_N_ELEMENTS (tampers); i++)
    {
      g_autofree char *run = g_strdup_printf ("tampered-%u", i);
      g_autoptr(SubagentApprovalRequest) a = ats_make_request (run, "delete_file", "/a");
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) before = NULL;

      if (i / G_N_ELEMENTS (tampers) == 1)
        {
          g_autoptr(GPtrArray) empty = ats_load (f->sink, run);

          g_assert_cmpuint (empty->len, ==, 0);
        }
      ats_save_one (f->sink, run, a);
      /* Seen intact first: what a store remembers of it must not help later. */
      before = ats_load (f->sink, run);
      g_assert_cmpuint (before->len, ==, 1);
      ats_store_tamper (f, run, tampers[i % G_N_ELEMENTS (tampers)], NULL);
      assert_rejected (f, run);
      /* A forged row gets no verdict signed over it either. */
      g_test_expect_message (ATS_LOG_DOMAIN, G_LOG_LEVEL_WARNING, ATS_INTEGRITY_WARNING);
      g_assert_false (subagent_approval_sink_update_status (f->sink, run, subagent_approval_request_get_request_id (a),
                                                            SUBAGENT_APPROVAL_STATUS_DENIED, NULL, NULL, &error));
      g_test_assert_expected_messages ();
      g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
    }
}

/* Watching */

typedef struct {
  gboolean woke;
  gint64 woke_at;
  GThread *thread;
} Wake;

static void
on_changed (SubagentApprovalSink *sink,
            const char           *run_id,
            Wake                 *wake)
{
  if (!g_str_equal (run_id, RUN))
    return;
  if (!wake->woke)
    {
      wake->woke_at = g_get_monotonic_time ();
      wake->thread = g_thread_self ();
    }
  wake->woke = TRUE;
}

static gboolean
on_wake_timeout (gpointer data)
{
  g_error ("no “changed” signal within 20 s");
  return G_SOURCE_REMOVE;
}

static void
watch_other_process (Fixture  *f,
                     gboolean  rewatch)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autofree char *spec = ats_store_spec (f, 'b');
  g_autoptr(GSubprocess) helper = NULL;
  g_autoptr(GPtrArray) requests = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  Wake wake = { FALSE, 0, NULL };
  gulong handler;
  guint timeout_id;
  gint64 start = 0;

  ats_save_one (f->sink, RUN, a);
  handler = g_signal_connect (f->sink, "changed", G_CALLBACK (on_changed), &wake);
  if (rewatch)
    {
      /* Another run watched and dropped first: whatever the store keeps
       * of that watch (the postgres store its connection) must serve the
       * next one. */
      subagent_approval_sink_watch (f->sink, "other-run");
      subagent_approval_sink_unwatch (f->sink, "other-run");
    }
  subagent_approval_sink_watch (f->sink, RUN);
  /* Our own save may be reported too: only what comes after counts. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  wake.woke = FALSE;

  helper = ats_spawn_helper (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "verdict", spec, RUN,
                             subagent_approval_request_get_request_id (a), NULL);
  g_assert_no_error (error);
  timeout_id = g_timeout_add_seconds (20, on_wake_timeout, NULL);
  sat_wait_for_flag (&wake.woke);
  g_source_remove (timeout_id);

  g_subprocess_communicate_utf8 (helper, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_successful (helper));
  g_assert_true (g_str_has_prefix (out, "START "));
  start = g_ascii_strtoll (out + strlen ("START "), NULL, 10);
  /* A notification comes within milliseconds; the bound leaves room for a
   * loaded CI machine and sanitizers, but not for a polling interval. */
  g_test_message ("verdict to wake: %" G_GINT64_FORMAT " µs", wake.woke_at - start);
  g_assert_cmpint (wake.woke_at - start, <, G_USEC_PER_SEC);

  requests = ats_load (f->sink, RUN);
  g_assert_cmpint (subagent_approval_request_get_status (requests->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpstr (subagent_approval_request_get_approved_by (requests->pdata[0]), ==, "verdict-helper");
  subagent_approval_sink_unwatch (f->sink, RUN);
  g_signal_handler_disconnect (f->sink, handler);
}

static void
test_watch_other_process (Fixture       *f,
                          gconstpointer  data)
{
  watch_other_process (f, FALSE);
}

static void
test_watch_again_other_process (Fixture       *f,
                                gconstpointer  data)
{
  watch_other_process (f, TRUE);
}

typedef struct {
  SubagentApprovalSink *sink;
  GAsyncQueue *ready;
  Wake wake;
} ThreadWatch;

static gpointer
watch_in_thread (gpointer data)
{
  ThreadWatch *tw = data;
  g_autoptr(GMainContext) context = g_main_context_new ();

  g_main_context_push_thread_default (context);
  /* Two watches and one unwatch leave one watch. */
  subagent_approval_sink_watch (tw->sink, RUN);
  subagent_approval_sink_watch (tw->sink, RUN);
  subagent_approval_sink_unwatch (tw->sink, RUN);
  g_async_queue_push (tw->ready, GINT_TO_POINTER (1));
  while (!tw->wake.woke)
    g_main_context_iteration (context, TRUE);
  subagent_approval_sink_unwatch (tw->sink, RUN);
  g_main_context_pop_thread_default (context);
  return NULL;
}

static void
test_watch_thread_default_context (Fixture       *f,
                                   gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  ThreadWatch tw = { f->sink, g_async_queue_new (), { FALSE, 0, NULL } };
  GThread *thread;

  ats_save_one (f->sink, RUN, a);
  g_signal_connect (f->sink, "changed", G_CALLBACK (on_changed), &tw.wake);
  thread = g_thread_new ("watcher", watch_in_thread, &tw);
  g_async_queue_pop (tw.ready);
  g_assert_true (subagent_approval_sink_update_status (f->sink, RUN, subagent_approval_request_get_request_id (a),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, NULL, NULL));
  g_thread_join (thread);
  g_assert_true (tw.wake.thread == thread);
  g_async_queue_unref (tw.ready);
}

static void
add (const char    *path,
     void         (*func) (Fixture *, gconstpointer),
     gconstpointer  key)
{
  g_autofree char *full = g_strdup_printf ("/approval-sink/%s/%s", ats_store_name (ats_store_kind), path);

  g_test_add (full, Fixture, key, ats_store_fixture_set_up, func, ats_store_fixture_tear_down);
}

int
main (int   argc,
      char *argv[])
{
  /* The key comes from each test, never from the environment. */
  g_unsetenv ("SUBAGENT_APPROVAL_HMAC_KEY");
  ats_store_parse_args (&argc, &argv);
  g_test_init (&argc, &argv, NULL);

  add ("state/invalid-ids-are-errors-and-store-nothing", test_invalid_ids, NULL);
  add ("state/save-merges-and-stored-verdicts-win", test_save_merges, NULL);
  add ("state/update-status-is-compare-and-set-from-pending", test_update_status_cas, NULL);
  add ("state/threads-one-winner-per-compare-and-set", test_threads_compare_and_set, NULL);
  add ("state/batch-is-compare-and-set-per-request-in-one-write", test_batch_compare_and_set, NULL);
  add ("state/batch-races-one-winner-per-request", test_batch_races, NULL);
  add ("state/batch-races-one-winner-per-request-with-key", test_batch_races, KEY);
  add ("state/prune-keeps-pending", test_prune_keeps_pending, NULL);
  add ("state/list-runs-in-byte-order", test_list_runs, NULL);
  add ("integrity/right-key-verifies-across-sinks", test_integrity_right_key, KEY);
  add ("integrity/wrong-key-loads-empty", test_integrity_wrong_key, KEY);
  add ("integrity/unsigned-with-key-loads-empty", test_integrity_unsigned_with_key, KEY);
  add ("integrity/tampering-without-the-key-is-detected", test_integrity_tampered, KEY);
  add ("digest/moved-verdict-without-key", test_integrity_moved_verdict, NULL);
  add ("digest/moved-verdict-with-key", test_integrity_moved_verdict, KEY);
  add ("watch/other-process-verdict-wakes-watcher", test_watch_other_process, NULL);
  add ("watch/other-process-verdict-wakes-watcher-after-unwatch", test_watch_again_other_process, NULL);
  add ("watch/emits-in-thread-default-context", test_watch_thread_default_context, NULL);

  return g_test_run ();
}
