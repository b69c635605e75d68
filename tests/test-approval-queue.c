/* test-approval-queue.c: the centralized approval queue, its registry and the memory sink.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <unistd.h>

#include "test-support.h"

/* Collects requests as the queue announces them, from any thread. Each
 * handler holds a reference: a signal being emitted on a watcher thread
 * may still run its handler after the test disconnected it. */
typedef struct {
  gatomicrefcount ref;
  GMutex lock;
  GCond cond;
  GPtrArray *added;
  GPtrArray *resolved;
} Observer;

static void
on_added (SubagentApprovalQueue   *queue,
          SubagentApprovalRequest *request,
          Observer                *observer)
{
  g_mutex_lock (&observer->lock);
  g_ptr_array_add (observer->added, g_object_ref (request));
  g_cond_broadcast (&observer->cond);
  g_mutex_unlock (&observer->lock);
}

static void
on_resolved (SubagentApprovalQueue   *queue,
             SubagentApprovalRequest *request,
             Observer                *observer)
{
  g_mutex_lock (&observer->lock);
  g_ptr_array_add (observer->resolved, g_object_ref (request));
  g_cond_broadcast (&observer->cond);
  g_mutex_unlock (&observer->lock);
}

static Observer *
observer_ref (Observer *observer)
{
  g_atomic_ref_count_inc (&observer->ref);
  return observer;
}

static void
observer_unref (gpointer data,
                GClosure *closure)
{
  Observer *observer = data;

  if (!g_atomic_ref_count_dec (&observer->ref))
    return;
  g_ptr_array_unref (observer->added);
  g_ptr_array_unref (observer->resolved);
  g_mutex_clear (&observer->lock);
  g_cond_clear (&observer->cond);
  g_free (observer);
}

static Observer *
observer_new (SubagentApprovalQueue *queue)
{
  Observer *observer = g_new0 (Observer, 1);

  g_atomic_ref_count_init (&observer->ref);
  g_mutex_init (&observer->lock);
  g_cond_init (&observer->cond);
  observer->added = g_ptr_array_new_with_free_func (g_object_unref);
  observer->resolved = g_ptr_array_new_with_free_func (g_object_unref);
  g_signal_connect_data (queue, "request-added", G_CALLBACK (on_added), observer_ref (observer), observer_unref, 0);
  g_signal_connect_data (queue, "request-resolved", G_CALLBACK (on_resolved), observer_ref (observer),
                         observer_unref, 0);
  return observer;
}

/* The handlers' references go when no emission runs them any more. */
static void
observer_free (SubagentApprovalQueue *queue,
               Observer              *observer)
{
  g_signal_handlers_disconnect_by_data (queue, observer);
  observer_unref (observer, NULL);
}

/* Blocks until @n requests were added (a condition, not a sleep); fails after 10 s. */
static SubagentApprovalRequest *
observer_wait_added (Observer *observer,
                     guint     n)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  SubagentApprovalRequest *request;

  g_mutex_lock (&observer->lock);
  while (observer->added->len < n)
    g_assert_true (g_cond_wait_until (&observer->cond, &observer->lock, deadline));
  request = g_object_ref (observer->added->pdata[n - 1]);
  g_mutex_unlock (&observer->lock);
  return request;
}

static char *
unique_run_id (const char *what)
{
  static gint counter;

  return g_strdup_printf ("%s-%d-%d", what, (int) getpid (), g_atomic_int_add (&counter, 1));
}

static SubagentApprovalRequest *
new_request (SubagentApprovalQueue *queue,
             const char            *subagent_id,
             const char            *tool,
             guint                  timeout)
{
  return subagent_approval_request_new (subagent_id, subagent_approval_queue_get_parent_run_id (queue),
                                        "writer", tool, NULL, "prompt", "worktree", 0, NULL, timeout);
}

typedef struct {
  SubagentApprovalQueue *queue;
  SubagentApprovalRequest *request;
  GCancellable *cancellable;
  SubagentApprovalStatus status;
  GError *error;
} SyncSubmit;

static gpointer
sync_submit_thread (gpointer data)
{
  SyncSubmit *submit = data;

  submit->status = subagent_approval_queue_submit_sync (submit->queue, submit->request,
                                                        submit->cancellable, &submit->error);
  return NULL;
}

static GThread *
start_sync_submit (SyncSubmit *submit)
{
  return g_thread_new ("submitter", sync_submit_thread, submit);
}

typedef struct {
  gboolean done;
  SubagentApprovalStatus status;
  GError *error;
} AsyncResult;

static void
submit_done (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  AsyncResult *out = user_data;

  out->status = subagent_approval_queue_submit_finish (SUBAGENT_APPROVAL_QUEUE (source), result, &out->error);
  out->done = TRUE;
}

static void
test_registry_get_or_create (void)
{
  g_autofree char *run = unique_run_id ("registry");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentApprovalQueue) first = NULL;
  g_autoptr(SubagentApprovalQueue) second = NULL;
  g_autoptr(SubagentApprovalQueue) looked_up = NULL;
  g_autoptr(SubagentApprovalQueue) after = NULL;
  g_autoptr(SubagentApprovalQueue) fresh = NULL;

  g_assert_null (subagent_approval_queue_try_get (run));
  first = subagent_approval_queue_get (run, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (first);
  g_assert_cmpstr (subagent_approval_queue_get_parent_run_id (first), ==, run);
  g_assert_cmpuint (subagent_approval_queue_get_default_timeout (first), ==, 180);

  second = subagent_approval_queue_get (run, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (first == second);
  looked_up = subagent_approval_queue_try_get (run);
  g_assert_true (looked_up == first);

  g_assert_true (subagent_approval_queue_release (run));
  g_assert_false (subagent_approval_queue_release (run));
  after = subagent_approval_queue_try_get (run);
  g_assert_null (after);
  fresh = subagent_approval_queue_get (run, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (fresh != first);
  g_assert_true (subagent_approval_queue_release (run));
}

static void
test_registry_rejects (void)
{
  g_autofree char *run = unique_run_id ("sinks");
  g_autoptr(SubagentApprovalSink) sink_a = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalSink) sink_b = subagent_memory_approval_sink_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(SubagentApprovalQueue) again = NULL;
  SubagentApprovalQueue *refused;

  refused = subagent_approval_queue_get ("../escape", NULL, &error);
  g_assert_null (refused);
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INVALID_ID);
  g_clear_error (&error);
  g_assert_null (subagent_approval_queue_try_get (""));

  queue = subagent_approval_queue_get (run, sink_a, &error);
  g_assert_no_error (error);
  g_assert_true (subagent_approval_queue_get_sink (queue) == sink_a);
  refused = subagent_approval_queue_get (run, sink_b, &error);
  g_assert_null (refused);
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  again = subagent_approval_queue_get (run, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (again == queue);
  g_assert_true (subagent_approval_queue_release (run));
}

static void
test_centralized_truth_table (void)
{
  static const struct {
    const char *run;
    gint batch;
    gboolean parallel;
    gboolean expected;
  } rows[] = {
    { "run", SUBAGENT_NO_BATCH_INDEX, FALSE, FALSE },
    { "run", SUBAGENT_NO_BATCH_INDEX, TRUE, TRUE },
    { "run", 0, FALSE, TRUE },  /* index 0 is a batch index, not "none" */
    { "run", 0, TRUE, TRUE },
    { "run", 7, FALSE, TRUE },
    { "run", 7, TRUE, TRUE },
    { "", SUBAGENT_NO_BATCH_INDEX, FALSE, FALSE },
    { "", SUBAGENT_NO_BATCH_INDEX, TRUE, FALSE },
    { "", 0, FALSE, FALSE },
    { "", 3, TRUE, FALSE },
    { NULL, SUBAGENT_NO_BATCH_INDEX, FALSE, FALSE },
    { NULL, SUBAGENT_NO_BATCH_INDEX, TRUE, FALSE },
    { NULL, 0, FALSE, FALSE },
    { NULL, 3, TRUE, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_test_message ("row %u: run=%s batch=%d parallel=%d", i, rows[i].run ? rows[i].run : "(null)",
                      rows[i].batch, rows[i].parallel);
      g_assert_cmpint (subagent_should_use_centralized_approval (rows[i].run, rows[i].batch, rows[i].parallel),
                       ==, rows[i].expected);
    }
}

static void
test_sync_approve_from_other_thread (void)
{
  g_autofree char *run = unique_run_id ("sync-approve");
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, NULL, NULL);
  Observer *observer = observer_new (queue);
  g_autoptr(SubagentApprovalRequest) request = new_request (queue, "child-a", "rm", 60);
  g_autoptr(SubagentApprovalRequest) seen = NULL;
  SyncSubmit submit = { queue, request, NULL, 0, NULL };
  GThread *thread = start_sync_submit (&submit);

  seen = observer_wait_added (observer, 1);
  g_assert_true (seen == request);
  g_assert_true (subagent_approval_queue_approve (queue, subagent_approval_request_get_request_id (request), "alice"));
  g_thread_join (thread);

  g_assert_no_error (submit.error);
  g_assert_cmpint (submit.status, ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpstr (subagent_approval_request_get_approved_by (request), ==, "alice");
  g_assert_cmpuint (observer->resolved->len, ==, 1);
  /* Terminal never changes: every later verdict is refused. */
  g_assert_false (subagent_approval_queue_deny (queue, subagent_approval_request_get_request_id (request), NULL, NULL));
  g_assert_false (subagent_approval_queue_cancel (queue, subagent_approval_request_get_request_id (request)));
  g_assert_false (subagent_approval_queue_approve (queue, "no-such-request", NULL));
  g_assert_cmpint (subagent_approval_request_get_status (request), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpuint (observer->resolved->len, ==, 1);

  observer_free (queue, observer);
  subagent_approval_queue_release (run);
}

static void
test_sync_timeout (void)
{
  g_autofree char *run = unique_run_id ("sync-timeout");
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, sink, NULL);
  g_autoptr(SubagentApprovalRequest) request = new_request (queue, "child-a", "rm", 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) stored = NULL;
  gint64 start = g_get_monotonic_time ();
  SubagentApprovalStatus status;
  gint64 elapsed;

  status = subagent_approval_queue_submit_sync (queue, request, NULL, &error);
  elapsed = g_get_monotonic_time () - start;
  g_assert_no_error (error);
  g_assert_cmpint (status, ==, SUBAGENT_APPROVAL_STATUS_TIMEOUT);
  g_assert_cmpint (elapsed, >=, G_USEC_PER_SEC - 1000);
  g_assert_cmpint (elapsed, <, 5 * G_USEC_PER_SEC);
  g_assert_nonnull (subagent_approval_request_get_denied_at (request));
  g_assert_nonnull (strstr (subagent_approval_request_get_denial_reason (request), "1 s"));

  /* The timeout is persisted. */
  stored = subagent_approval_sink_load (sink, run, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (stored->len, ==, 1);
  g_assert_cmpint (subagent_approval_request_get_status (stored->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_TIMEOUT);
  subagent_approval_queue_release (run);
}

static void
test_async_timeout (void)
{
  g_autofree char *run = unique_run_id ("async-timeout");
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, sink, NULL);
  g_autoptr(SubagentApprovalRequest) request = new_request (queue, "child-a", "rm", 1);
  g_autoptr(GPtrArray) stored = NULL;
  AsyncResult result = { 0 };
  gint64 start = g_get_monotonic_time ();

  subagent_approval_queue_submit_async (queue, request, NULL, submit_done, &result);
  sat_wait_for_flag (&result.done);
  g_assert_no_error (result.error);
  g_assert_cmpint (result.status, ==, SUBAGENT_APPROVAL_STATUS_TIMEOUT);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, G_USEC_PER_SEC - 1000);
  g_assert_cmpint (subagent_approval_request_get_status (request), ==, SUBAGENT_APPROVAL_STATUS_TIMEOUT);
  stored = subagent_approval_sink_load (sink, run, NULL);
  g_assert_cmpuint (stored->len, ==, 1);
  g_assert_cmpint (subagent_approval_request_get_status (stored->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_TIMEOUT);
  subagent_approval_queue_release (run);
}

static void
test_sync_cancellable (void)
{
  g_autofree char *run = unique_run_id ("sync-cancel");
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, NULL, NULL);
  Observer *observer = observer_new (queue);
  g_autoptr(SubagentApprovalRequest) request = new_request (queue, "child-a", "rm", 60);
  g_autoptr(SubagentApprovalRequest) seen = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  SyncSubmit submit = { queue, request, cancellable, 0, NULL };
  GThread *thread = start_sync_submit (&submit);

  seen = observer_wait_added (observer, 1);
  g_cancellable_cancel (cancellable);
  g_thread_join (thread);

  g_assert_no_error (submit.error);
  g_assert_cmpint (submit.status, ==, SUBAGENT_APPROVAL_STATUS_CANCELLED);
  g_assert_cmpint (subagent_approval_request_get_status (request), ==, SUBAGENT_APPROVAL_STATUS_CANCELLED);
  g_assert_false (subagent_approval_queue_approve (queue, subagent_approval_request_get_request_id (request), NULL));
  observer_free (queue, observer);
  subagent_approval_queue_release (run);
}

static void
cancel_on_added (SubagentApprovalQueue   *queue,
                 SubagentApprovalRequest *request,
                 GCancellable            *cancellable)
{
  g_cancellable_cancel (cancellable);
}

static void
test_async_cancellable (void)
{
  g_autofree char *run = unique_run_id ("async-cancel");
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, sink, NULL);
  g_autoptr(SubagentApprovalRequest) request = new_request (queue, "child-a", "rm", 60);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GPtrArray) stored = NULL;
  AsyncResult result = { 0 };
  gulong id = g_signal_connect (queue, "request-added", G_CALLBACK (cancel_on_added), cancellable);

  subagent_approval_queue_submit_async (queue, request, cancellable, submit_done, &result);
  sat_wait_for_flag (&result.done);
  g_signal_handler_disconnect (queue, id);

  g_assert_no_error (result.error);
  g_assert_cmpint (result.status, ==, SUBAGENT_APPROVAL_STATUS_CANCELLED);
  stored = subagent_approval_sink_load (sink, run, NULL);
  g_assert_cmpuint (stored->len, ==, 1);
  g_assert_cmpint (subagent_approval_request_get_status (stored->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_CANCELLED);
  subagent_approval_queue_release (run);
}

static void
test_cancel_wakes_waiter (void)
{
  g_autofree char *run = unique_run_id ("cancel");
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, NULL, NULL);
  Observer *observer = observer_new (queue);
  g_autoptr(SubagentApprovalRequest) request = new_request (queue, "child-a", "rm", 60);
  g_autoptr(SubagentApprovalRequest) seen = NULL;
  SyncSubmit submit = { queue, request, NULL, 0, NULL };
  GThread *thread = start_sync_submit (&submit);

  seen = observer_wait_added (observer, 1);
  g_assert_true (subagent_approval_queue_cancel (queue, subagent_approval_request_get_request_id (request)));
  g_thread_join (thread);
  g_assert_cmpint (submit.status, ==, SUBAGENT_APPROVAL_STATUS_CANCELLED);
  g_assert_false (subagent_approval_queue_cancel (queue, subagent_approval_request_get_request_id (request)));
  observer_free (queue, observer);
  subagent_approval_queue_release (run);
}

/* Submits @n requests asynchronously; their results land in @results. */
static GPtrArray *
submit_many (SubagentApprovalQueue *queue,
             const char * const    *subagents,
             guint                  n,
             AsyncResult           *results)
{
  GPtrArray *requests = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < n; i++)
    {
      SubagentApprovalRequest *request = new_request (queue, subagents[i], "rm", 60);

      g_ptr_array_add (requests, request);
      subagent_approval_queue_submit_async (queue, request, NULL, submit_done, &results[i]);
    }
  return requests;
}

static void
wait_all (AsyncResult *results,
          guint        n)
{
  for (guint i = 0; i < n; i++)
    sat_wait_for_flag (&results[i].done);
}

static void
test_batch_and_all_pending (void)
{
  static const char * const subagents[] = { "c0", "c1", "c2", "c3", "c4" };
  g_autofree char *run = unique_run_id ("batch");
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, NULL, NULL);
  AsyncResult results[5] = { { 0 } };
  g_autoptr(GPtrArray) requests = submit_many (queue, subagents, 5, results);
  g_autoptr(GPtrArray) pending = subagent_approval_queue_list_pending (queue);
  const char *approve_ids[] = {
    subagent_approval_request_get_request_id (requests->pdata[0]),
    subagent_approval_request_get_request_id (requests->pdata[1]),
    "unknown-request",
    NULL,
  };
  const char *deny_ids[] = {
    subagent_approval_request_get_request_id (requests->pdata[1]), /* already approved */
    subagent_approval_request_get_request_id (requests->pdata[2]),
    NULL,
  };

  g_assert_cmpuint (pending->len, ==, 5);
  g_assert_cmpuint (subagent_approval_queue_approve_batch (queue, approve_ids, "alice"), ==, 2);
  g_assert_cmpuint (subagent_approval_queue_deny_batch (queue, deny_ids, "no", "alice"), ==, 1);
  g_assert_cmpuint (subagent_approval_queue_approve_all_pending (queue, "bob"), ==, 2);
  g_assert_cmpuint (subagent_approval_queue_deny_all_pending (queue, "late", "bob"), ==, 0);
  g_assert_cmpuint (subagent_approval_queue_approve_all_pending (queue, "bob"), ==, 0);
  wait_all (results, 5);

  g_assert_cmpint (results[0].status, ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpint (results[1].status, ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpint (results[2].status, ==, SUBAGENT_APPROVAL_STATUS_DENIED);
  g_assert_cmpint (results[3].status, ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpint (results[4].status, ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpstr (subagent_approval_request_get_denial_reason (requests->pdata[2]), ==, "no");
  g_assert_cmpstr (subagent_approval_request_get_approved_by (requests->pdata[3]), ==, "bob");

  g_clear_pointer (&pending, g_ptr_array_unref);
  pending = subagent_approval_queue_list_pending (queue);
  g_assert_cmpuint (pending->len, ==, 0);
  subagent_approval_queue_release (run);
}

static void
test_deny_all_and_cancel_for_subagent (void)
{
  static const char * const subagents[] = { "alpha", "beta", "alpha", "gamma" };
  g_autofree char *run = unique_run_id ("per-subagent");
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, NULL, NULL);
  AsyncResult results[4] = { { 0 } };
  g_autoptr(GPtrArray) requests = submit_many (queue, subagents, 4, results);
  g_autoptr(JsonArray) json = NULL;

  g_assert_cmpuint (subagent_approval_queue_cancel_for_subagent (queue, "alpha"), ==, 2);
  g_assert_cmpuint (subagent_approval_queue_cancel_for_subagent (queue, "alpha"), ==, 0);
  json = subagent_approval_queue_pending_to_json (queue);
  g_assert_cmpuint (json_array_get_length (json), ==, 2);
  g_assert_cmpuint (subagent_approval_queue_deny_all_pending (queue, "shutting down", "system"), ==, 2);
  wait_all (results, 4);

  g_assert_cmpint (results[0].status, ==, SUBAGENT_APPROVAL_STATUS_CANCELLED);
  g_assert_cmpint (results[1].status, ==, SUBAGENT_APPROVAL_STATUS_DENIED);
  g_assert_cmpint (results[2].status, ==, SUBAGENT_APPROVAL_STATUS_CANCELLED);
  g_assert_cmpint (results[3].status, ==, SUBAGENT_APPROVAL_STATUS_DENIED);
  subagent_approval_queue_release (run);
}

static void
test_list_pending_and_cleanup (void)
{
  static const char * const subagents[] = { "c0", "c1", "c2" };
  g_autofree char *run = unique_run_id ("listing");
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, NULL, NULL);
  AsyncResult results[3] = { { 0 } };
  g_autoptr(GPtrArray) requests = submit_many (queue, subagents, 3, results);
  g_autoptr(GPtrArray) pending = subagent_approval_queue_list_pending (queue);
  g_autoptr(JsonArray) json = subagent_approval_queue_pending_to_json (queue);
  g_autoptr(SubagentApprovalRequest) got = NULL;
  const char *first_id = subagent_approval_request_get_request_id (requests->pdata[0]);

  /* Oldest first, and the JSON snapshot says the same. */
  g_assert_cmpuint (pending->len, ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      g_assert_true (pending->pdata[i] == requests->pdata[i]);
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (json, i), "request_id"), ==,
                       subagent_approval_request_get_request_id (requests->pdata[i]));
    }
  got = subagent_approval_queue_get_request (queue, first_id);
  g_assert_true (got == requests->pdata[0]);
  g_assert_null (subagent_approval_queue_get_request (queue, "missing"));

  /* Pending requests are never dropped. */
  g_assert_cmpuint (subagent_approval_queue_cleanup (queue), ==, 0);
  g_assert_true (subagent_approval_queue_deny (queue, first_id, NULL, NULL));
  g_assert_cmpuint (subagent_approval_queue_cleanup (queue), ==, 1);
  /* The submitter already had its verdict handed over. */
  sat_wait_for_flag (&results[0].done);
  g_assert_cmpint (results[0].status, ==, SUBAGENT_APPROVAL_STATUS_DENIED);
  g_clear_object (&got);
  got = subagent_approval_queue_get_request (queue, first_id);
  g_assert_null (got);
  g_clear_pointer (&pending, g_ptr_array_unref);
  pending = subagent_approval_queue_list_pending (queue);
  g_assert_cmpuint (pending->len, ==, 2);

  g_assert_cmpuint (subagent_approval_queue_cancel_for_subagent (queue, "c1"), ==, 1);
  g_assert_cmpuint (subagent_approval_queue_cancel_for_subagent (queue, "c2"), ==, 1);
  wait_all (results, 3);
  g_assert_cmpuint (subagent_approval_queue_cleanup (queue), ==, 2);
  subagent_approval_queue_release (run);
}

static void
test_submit_rejects (void)
{
  g_autofree char *run = unique_run_id ("rejects");
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, NULL, NULL);
  g_autoptr(SubagentApprovalRequest) foreign =
    subagent_approval_request_new ("child-a", "another-run", "writer", "rm", NULL, NULL, NULL,
                                   SUBAGENT_NO_BATCH_INDEX, NULL, 5);
  g_autoptr(SubagentApprovalRequest) done = new_request (queue, "child-a", "rm", 5);
  g_autoptr(GError) error = NULL;
  SubagentApprovalStatus status;

  status = subagent_approval_queue_submit_sync (queue, foreign, NULL, &error);
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (status, ==, SUBAGENT_APPROVAL_STATUS_CANCELLED);
  g_clear_error (&error);

  g_assert_true (subagent_approval_request_transition (done, SUBAGENT_APPROVAL_STATUS_DENIED, NULL, NULL));
  subagent_approval_queue_submit_sync (queue, done, NULL, &error);
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_NOT_PENDING);
  g_assert_null (subagent_approval_queue_get_request (queue, subagent_approval_request_get_request_id (done)));
  subagent_approval_queue_release (run);
}

static void
test_default_timeout_property (void)
{
  g_autofree char *run = unique_run_id ("timeout-prop");
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, NULL, NULL);
  guint value = 0;

  subagent_approval_queue_set_default_timeout (queue, 42);
  g_object_get (queue, "default-timeout", &value, NULL);
  g_assert_cmpuint (value, ==, 42);
  g_object_set (queue, "default-timeout", 7, NULL);
  g_assert_cmpuint (subagent_approval_queue_get_default_timeout (queue), ==, 7);
  subagent_approval_queue_release (run);
}


static void
test_reload_wakes_sync_waiter (void)
{
  g_autofree char *run = unique_run_id ("reload-wakes");
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, sink, NULL);
  Observer *observer = observer_new (queue);
  g_autoptr(SubagentApprovalRequest) request = new_request (queue, "child-a", "rm", 60);
  g_autoptr(SubagentApprovalRequest) seen = NULL;
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) error = NULL;
  SyncSubmit submit = { queue, request, NULL, 0, NULL };
  GThread *thread = start_sync_submit (&submit);

  seen = observer_wait_added (observer, 1);
  /* Another process answers through the store, behind the queue's back. */
  g_assert_true (subagent_approval_sink_update_status (sink, run, subagent_approval_request_get_request_id (request),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "other-process",
                                                       &error));
  g_assert_no_error (error);
  g_thread_join (thread);

  g_assert_no_error (submit.error);
  g_assert_cmpint (submit.status, ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpstr (subagent_approval_request_get_approved_by (request), ==, "other-process");
  stored = subagent_approval_sink_load (sink, run, NULL);
  g_assert_cmpstr (subagent_approval_request_get_approved_at (stored->pdata[0]), ==,
                   subagent_approval_request_get_approved_at (request));
  observer_free (queue, observer);
  subagent_approval_queue_release (run);
}

typedef struct {
  Observer *observer;
  SubagentApprovalSink *sink;
  const char *run;
} Answerer;

static gpointer
answer_thread (gpointer data)
{
  Answerer *answerer = data;
  g_autoptr(SubagentApprovalRequest) request = observer_wait_added (answerer->observer, 1);

  subagent_approval_sink_update_status (answerer->sink, answerer->run,
                                        subagent_approval_request_get_request_id (request),
                                        SUBAGENT_APPROVAL_STATUS_DENIED, "not today", "cli", NULL);
  return NULL;
}

/* The waiter blocks the thread that owns the default main context; the
 * queue's own watcher thread must still deliver the store's change. */
static void
test_reload_wakes_main_thread_waiter (void)
{
  g_autofree char *run = unique_run_id ("reload-main");
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, sink, NULL);
  Observer *observer = observer_new (queue);
  g_autoptr(SubagentApprovalRequest) request = new_request (queue, "child-a", "rm", 60);
  g_autoptr(GError) error = NULL;
  Answerer answerer = { observer, sink, run };
  GThread *thread = g_thread_new ("answerer", answer_thread, &answerer);
  SubagentApprovalStatus status;

  g_assert_true (g_main_context_acquire (g_main_context_default ()));
  status = subagent_approval_queue_submit_sync (queue, request, NULL, &error);
  g_main_context_release (g_main_context_default ());
  g_thread_join (thread);

  g_assert_no_error (error);
  g_assert_cmpint (status, ==, SUBAGENT_APPROVAL_STATUS_DENIED);
  g_assert_cmpstr (subagent_approval_request_get_denial_reason (request), ==, "not today");
  observer_free (queue, observer);
  subagent_approval_queue_release (run);
}

static void
test_reload_adds_stored_pending (void)
{
  g_autofree char *run = unique_run_id ("reload-adds");
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, sink, NULL);
  Observer *observer = observer_new (queue);
  g_autoptr(SubagentApprovalRequest) elsewhere = new_request (queue, "remote-child", "rm", 60);
  g_autoptr(SubagentApprovalRequest) old = new_request (queue, "remote-child", "ls", 60);
  g_autoptr(GPtrArray) batch = g_ptr_array_new ();
  g_autoptr(SubagentApprovalRequest) seen = NULL;
  g_autoptr(SubagentApprovalRequest) mine = NULL;
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (subagent_approval_request_transition (old, SUBAGENT_APPROVAL_STATUS_DENIED, NULL, NULL));
  g_ptr_array_add (batch, old);
  g_ptr_array_add (batch, elsewhere);
  g_assert_true (subagent_approval_sink_save (sink, run, batch, &error));
  g_assert_no_error (error);

  /* Only the pending one is of interest to approvers here. */
  seen = observer_wait_added (observer, 1);
  g_assert_cmpstr (subagent_approval_request_get_request_id (seen), ==,
                   subagent_approval_request_get_request_id (elsewhere));
  g_assert_true (subagent_approval_queue_reload_from_store (queue, &error));
  g_assert_no_error (error);
  mine = subagent_approval_queue_get_request (queue, subagent_approval_request_get_request_id (old));
  g_assert_null (mine);

  g_assert_true (subagent_approval_queue_approve (queue, subagent_approval_request_get_request_id (elsewhere), "alice"));
  stored = subagent_approval_sink_load (sink, run, NULL);
  g_assert_cmpuint (stored->len, ==, 2);
  g_assert_cmpint (subagent_approval_request_get_status (stored->pdata[1]), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  observer_free (queue, observer);
  subagent_approval_queue_release (run);
}

static void
test_verdict_loses_to_store (void)
{
  g_autofree char *run = unique_run_id ("cas");
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, sink, NULL);
  g_autoptr(SubagentApprovalRequest) request = new_request (queue, "child-a", "rm", 60);
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) error = NULL;
  AsyncResult result = { 0 };
  const char *id = subagent_approval_request_get_request_id (request);

  subagent_approval_queue_submit_async (queue, request, NULL, submit_done, &result);
  /* Persisting runs in a worker: wait until the store holds it. */
  while (stored == NULL || stored->len == 0)
    {
      g_clear_pointer (&stored, g_ptr_array_unref);
      g_main_context_iteration (NULL, TRUE);
      stored = subagent_approval_sink_load (sink, run, NULL);
    }
  g_assert_cmpint (subagent_approval_request_get_status (stored->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_PENDING);

  g_assert_true (subagent_approval_sink_update_status (sink, run, id, SUBAGENT_APPROVAL_STATUS_DENIED,
                                                       "first", "cli", NULL));
  /* Whether or not the watcher already reloaded, this approval must lose. */
  g_assert_false (subagent_approval_queue_resolve (queue, id, SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "gui", &error));
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_NOT_PENDING);
  sat_wait_for_flag (&result.done);
  g_assert_cmpint (result.status, ==, SUBAGENT_APPROVAL_STATUS_DENIED);
  g_assert_cmpstr (subagent_approval_request_get_approved_by (request), ==, "cli");
  g_clear_pointer (&stored, g_ptr_array_unref);
  stored = subagent_approval_sink_load (sink, run, NULL);
  g_assert_cmpint (subagent_approval_request_get_status (stored->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_DENIED);
  g_assert_cmpstr (subagent_approval_request_get_denied_at (stored->pdata[0]), ==,
                   subagent_approval_request_get_denied_at (request));
  subagent_approval_queue_release (run);
}

typedef struct {
  GMutex lock;
  GCond cond;
  gboolean disposed;
  GThread *disposed_on;
  SubagentApprovalQueue *queue; /* the test's only reference */
} LastRef;

static void
drop_last_ref (SubagentApprovalQueue   *queue,
               SubagentApprovalRequest *request,
               LastRef                 *last)
{
  g_clear_object (&last->queue);
}

static void
queue_gone (gpointer  data,
            GObject  *where)
{
  LastRef *last = data;

  g_mutex_lock (&last->lock);
  last->disposed = TRUE;
  last->disposed_on = g_thread_self ();
  g_cond_signal (&last->cond);
  g_mutex_unlock (&last->lock);
}

/* The watcher thread may end up dropping the queue's last reference; it
 * then cannot join itself and must detach instead of deadlocking. */
static void
test_last_reference_on_watcher_thread (void)
{
  g_autofree char *run = unique_run_id ("last-ref");
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalRequest) request = NULL;
  g_autoptr(SubagentApprovalRequest) seen = NULL;
  g_autoptr(GPtrArray) one = g_ptr_array_new ();
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  LastRef last = { 0 };
  Observer *observer;

  g_mutex_init (&last.lock);
  g_cond_init (&last.cond);
  last.queue = subagent_approval_queue_get (run, sink, NULL);
  g_assert_true (subagent_approval_queue_release (run));
  observer = observer_new (last.queue);
  g_signal_connect (last.queue, "request-resolved", G_CALLBACK (drop_last_ref), &last);
  g_object_weak_ref (G_OBJECT (last.queue), queue_gone, &last);

  /* Another process stores a request, then answers it. */
  request = new_request (last.queue, "remote", "rm", 60);
  g_ptr_array_add (one, request);
  g_assert_true (subagent_approval_sink_save (sink, run, one, NULL));
  seen = observer_wait_added (observer, 1);
  g_assert_true (subagent_approval_sink_update_status (sink, run, subagent_approval_request_get_request_id (request),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "cli", NULL));

  g_mutex_lock (&last.lock);
  while (!last.disposed)
    g_assert_true (g_cond_wait_until (&last.cond, &last.lock, deadline));
  g_mutex_unlock (&last.lock);
  g_assert_true (last.disposed_on != g_thread_self ());
  g_assert_cmpint (subagent_approval_request_get_status (seen), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);

  /* The observer's queue is gone; only its memory is left to free. */
  g_ptr_array_unref (observer->added);
  g_ptr_array_unref (observer->resolved);
  g_mutex_clear (&observer->lock);
  g_cond_clear (&observer->cond);
  g_free (observer);
  g_mutex_clear (&last.lock);
  g_cond_clear (&last.cond);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/approval/queue/registry/get-or-create-vs-try-get", test_registry_get_or_create);
  g_test_add_func ("/approval/queue/registry/rejects-bad-id-and-other-sink", test_registry_rejects);
  g_test_add_func ("/approval/queue/centralized/truth-table", test_centralized_truth_table);
  g_test_add_func ("/approval/queue/sync/approved-from-other-thread", test_sync_approve_from_other_thread);
  g_test_add_func ("/approval/queue/sync/times-out", test_sync_timeout);
  g_test_add_func ("/approval/queue/async/times-out", test_async_timeout);
  g_test_add_func ("/approval/queue/sync/cancellable-cancels-request", test_sync_cancellable);
  g_test_add_func ("/approval/queue/async/cancellable-cancels-request", test_async_cancellable);
  g_test_add_func ("/approval/queue/cancel/wakes-waiter", test_cancel_wakes_waiter);
  g_test_add_func ("/approval/queue/verdicts/batch-and-all-pending", test_batch_and_all_pending);
  g_test_add_func ("/approval/queue/verdicts/cancel-for-subagent", test_deny_all_and_cancel_for_subagent);
  g_test_add_func ("/approval/queue/list-pending-and-cleanup", test_list_pending_and_cleanup);
  g_test_add_func ("/approval/queue/submit/rejects", test_submit_rejects);
  g_test_add_func ("/approval/queue/default-timeout", test_default_timeout_property);
  g_test_add_func ("/approval/queue/store/reload-wakes-sync-waiter", test_reload_wakes_sync_waiter);
  g_test_add_func ("/approval/queue/store/reload-wakes-main-thread-waiter", test_reload_wakes_main_thread_waiter);
  g_test_add_func ("/approval/queue/store/reload-adds-stored-pending", test_reload_adds_stored_pending);
  g_test_add_func ("/approval/queue/store/verdict-loses-to-store", test_verdict_loses_to_store);
  g_test_add_func ("/approval/queue/store/last-reference-on-watcher-thread", test_last_reference_on_watcher_thread);
  return g_test_run ();
}
