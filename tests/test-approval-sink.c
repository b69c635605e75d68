/* test-approval-sink.c: the approval sink interface and the in-memory sink.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <glib/gstdio.h>

#include "test-support.h"

static void
test_memory_sink_merge_and_cas (void)
{
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalRequest) request =
    subagent_approval_request_new ("child-a", "run-m", "writer", "rm", NULL, NULL, NULL, 1, NULL, 60);
  g_autoptr(SubagentApprovalRequest) stale = subagent_approval_request_copy (request);
  g_autoptr(GPtrArray) one = g_ptr_array_new ();
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) error = NULL;
  const char *id = subagent_approval_request_get_request_id (request);

  stored = subagent_approval_sink_load (sink, "run-m", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (stored->len, ==, 0);
  g_clear_pointer (&stored, g_ptr_array_unref);

  g_ptr_array_add (one, request);
  g_assert_true (subagent_approval_sink_save (sink, "run-m", one, &error));
  g_assert_true (subagent_approval_sink_update_status (sink, "run-m", id, SUBAGENT_APPROVAL_STATUS_APPROVED,
                                                       NULL, "alice", &error));
  g_assert_no_error (error);
  /* Compare-and-set: only from pending; missing is not an error. */
  g_assert_false (subagent_approval_sink_update_status (sink, "run-m", id, SUBAGENT_APPROVAL_STATUS_DENIED,
                                                        NULL, "bob", &error));
  g_assert_no_error (error);
  g_assert_false (subagent_approval_sink_update_status (sink, "run-m", "missing", SUBAGENT_APPROVAL_STATUS_DENIED,
                                                        NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (subagent_approval_sink_update_status (sink, "run-m", "bad/id", SUBAGENT_APPROVAL_STATUS_DENIED,
                                                        NULL, NULL, &error));
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INVALID_ID);
  g_clear_error (&error);

  /* Saving a stale pending copy does not undo the stored verdict. */
  g_ptr_array_index (one, 0) = stale;
  g_assert_true (subagent_approval_sink_save (sink, "run-m", one, &error));
  stored = subagent_approval_sink_load (sink, "run-m", &error);
  g_assert_cmpuint (stored->len, ==, 1);
  g_assert_cmpint (subagent_approval_request_get_status (stored->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpstr (subagent_approval_request_get_approved_by (stored->pdata[0]), ==, "alice");
  /* The snapshot is a copy. */
  g_assert_true (stored->pdata[0] != request);
  g_assert_cmpint (subagent_approval_request_get_status (request), ==, SUBAGENT_APPROVAL_STATUS_PENDING);

  /* A request of another run is refused. */
  g_assert_false (subagent_approval_sink_save (sink, "run-other", one, &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
}

typedef struct {
  SubagentApprovalSink *sink;
  GMutex lock;
  GCond cond;
  gboolean ready;
  GThread *emitted_on;
  char *emitted_run;
  GMainLoop *loop;
} WatchThread;

static void
on_changed (SubagentApprovalSink *sink,
            const char           *run,
            WatchThread          *watch)
{
  watch->emitted_on = g_thread_self ();
  watch->emitted_run = g_strdup (run);
  g_main_loop_quit (watch->loop);
}

static gpointer
watch_thread (gpointer data)
{
  WatchThread *watch = data;
  g_autoptr(GMainContext) context = g_main_context_new ();
  gulong id;

  g_main_context_push_thread_default (context);
  watch->loop = g_main_loop_new (context, FALSE);
  id = g_signal_connect (watch->sink, "changed", G_CALLBACK (on_changed), watch);
  subagent_approval_sink_watch (watch->sink, "run-w");
  g_mutex_lock (&watch->lock);
  watch->ready = TRUE;
  g_cond_signal (&watch->cond);
  g_mutex_unlock (&watch->lock);
  g_main_loop_run (watch->loop);
  subagent_approval_sink_unwatch (watch->sink, "run-w");
  g_signal_handler_disconnect (watch->sink, id);
  g_main_loop_unref (watch->loop);
  g_main_context_pop_thread_default (context);
  return NULL;
}

static void
test_memory_sink_changed_in_watcher_context (void)
{
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalRequest) request =
    subagent_approval_request_new ("child-a", "run-w", "writer", "rm", NULL, NULL, NULL, 1, NULL, 60);
  g_autoptr(GPtrArray) one = g_ptr_array_new ();
  WatchThread watch = { sink };
  GThread *thread;

  g_mutex_init (&watch.lock);
  g_cond_init (&watch.cond);
  thread = g_thread_new ("watcher", watch_thread, &watch);
  g_mutex_lock (&watch.lock);
  while (!watch.ready)
    g_cond_wait (&watch.cond, &watch.lock);
  g_mutex_unlock (&watch.lock);

  g_ptr_array_add (one, request);
  g_assert_true (subagent_approval_sink_save (sink, "run-w", one, NULL));
  g_thread_join (thread);

  g_assert_true (watch.emitted_on == thread);
  g_assert_cmpstr (watch.emitted_run, ==, "run-w");
  g_free (watch.emitted_run);
  g_mutex_clear (&watch.lock);
  g_cond_clear (&watch.cond);
}

static void
test_memory_sink_prune_keeps_pending (void)
{
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalRequest) pending =
    subagent_approval_request_new ("child-a", "run-p1", "writer", "rm", NULL, NULL, NULL, 1, NULL, 60);
  g_autoptr(SubagentApprovalRequest) done =
    subagent_approval_request_new ("child-b", "run-p2", "writer", "rm", NULL, NULL, NULL, 1, NULL, 60);
  g_autoptr(GPtrArray) one = g_ptr_array_new ();
  g_auto(GStrv) runs = NULL;
  g_autoptr(GError) error = NULL;

  g_ptr_array_add (one, pending);
  g_assert_true (subagent_approval_sink_save (sink, "run-p1", one, NULL));
  g_assert_true (subagent_approval_request_transition (done, SUBAGENT_APPROVAL_STATUS_DENIED, NULL, NULL));
  g_ptr_array_index (one, 0) = done;
  g_assert_true (subagent_approval_sink_save (sink, "run-p2", one, NULL));

  runs = subagent_approval_sink_list_runs (sink, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (runs), ==, 2);
  g_assert_cmpstr (runs[0], ==, "run-p1");
  g_assert_cmpstr (runs[1], ==, "run-p2");
  /* A long max age keeps everything; age 0 prunes all but the pending run. */
  g_assert_cmpuint (subagent_approval_sink_prune_stale (sink, G_TIME_SPAN_HOUR, &error), ==, 0);
  g_assert_cmpuint (subagent_approval_sink_prune_stale (sink, 0, &error), ==, 1);
  g_assert_no_error (error);
  g_clear_pointer (&runs, g_strfreev);
  runs = subagent_approval_sink_list_runs (sink, &error);
  g_assert_cmpstrv (runs, ((const char * const[]) { "run-p1", NULL }));
}

/* The key-file helper both approval stores use. */
static void
test_key_from_file (void)
{
  g_autofree char *dir = g_dir_make_tmp ("subagent-key-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "approval.key", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) key = NULL;

  g_assert_nonnull (dir);
  /* Missing. */
  g_assert_null (subagent_approval_key_from_file (path, &error));
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  g_clear_error (&error);

  /* Readable by others: refused, and the message says how to fix it. */
  g_assert_true (g_file_set_contents (path, "s3cret\n\r\n", -1, NULL));
  g_assert_cmpint (g_chmod (path, 0640), ==, 0);
  g_assert_null (subagent_approval_key_from_file (path, &error));
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  g_assert_nonnull (strstr (error->message, "chmod 600"));
  g_clear_error (&error);

  /* Private: the key, without its trailing newlines. */
  g_assert_cmpint (g_chmod (path, 0600), ==, 0);
  key = subagent_approval_key_from_file (path, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (key, NULL), g_bytes_get_size (key), "s3cret", 6);

  /* Only newlines: empty. A directory: not a regular file. */
  g_assert_true (g_file_set_contents (path, "\n\n", -1, NULL));
  g_assert_cmpint (g_chmod (path, 0600), ==, 0);
  g_assert_null (subagent_approval_key_from_file (path, &error));
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  g_assert_nonnull (strstr (error->message, "empty"));
  g_clear_error (&error);
  g_assert_cmpint (g_chmod (dir, 0700), ==, 0);
  g_assert_null (subagent_approval_key_from_file (dir, &error));
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);

  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/approval/sink/memory/merge-and-compare-and-set", test_memory_sink_merge_and_cas);
  g_test_add_func ("/approval/sink/memory/changed-in-watcher-context", test_memory_sink_changed_in_watcher_context);
  g_test_add_func ("/approval/sink/memory/prune-keeps-pending", test_memory_sink_prune_keeps_pending);
  g_test_add_func ("/approval/key/from-file-must-be-private", test_key_from_file);
  return g_test_run ();
}
