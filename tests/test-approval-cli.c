/* test-approval-cli.c: `subagentctl approvals`, run as a separate process
 * against a store this test fills through a sink: the approval-file plugin,
 * or with --store=postgres the approval-postgres one, which subagentctl
 * finds through the workspace's config.yaml.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "approval-test-support.h"

#define RUN "run-1"

/* subagentctl approvals */

/* Runs `subagentctl approvals --root ROOT ARGS...`; returns its stdout,
 * *status gets its exit status and *err (if non-NULL) its stderr. */
static char *
ctl (Fixture     *f,
     int         *status,
     char       **err,
     const char  *first_arg,
     ...) G_GNUC_NULL_TERMINATED;

static char *
ctl (Fixture     *f,
     int         *status,
     char       **err,
     const char  *first_arg,
     ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *err_text = NULL;
  char *out = NULL;
  va_list ap;

  g_ptr_array_add (argv, (gpointer) sat_subagentctl ());
  g_ptr_array_add (argv, "approvals");
  g_ptr_array_add (argv, "--root");
  g_ptr_array_add (argv, f->root);
  va_start (ap, first_arg);
  for (const char *a = first_arg; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  proc = g_subprocess_newv ((const char * const *) argv->pdata,
                            G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, &err_text, &error);
  g_assert_no_error (error);
  *status = g_subprocess_get_if_exited (proc) ? g_subprocess_get_exit_status (proc) : -1;
  if (err != NULL)
    *err = g_steal_pointer (&err_text);
  return out;
}

static void
test_cli_list_json (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) b = ats_make_request ("run-2", "delete_file", "/b");
  g_autoptr(SubagentApprovalRequest) c = ats_make_request ("run-2", "write_file", "/c");
  g_autoptr(JsonObject) reference = subagent_approval_request_to_json (a);
  g_autoptr(GList) expected_keys = g_list_append (json_object_get_members (reference), (gpointer) "abandoned");
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *all = NULL;
  JsonArray *array;
  int status;

  ats_save_one (f->sink, RUN, a);
  ats_save_one (f->sink, "run-2", b);
  ats_save_one (f->sink, "run-2", c);
  g_assert_true (subagent_approval_sink_update_status (f->sink, "run-2", subagent_approval_request_get_request_id (b),
                                                       SUBAGENT_APPROVAL_STATUS_DENIED, NULL, NULL, NULL));

  out = ctl (f, &status, NULL, "list", "--json", NULL);
  g_assert_cmpint (status, ==, 0);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (json_parser_get_root (parser)));
  array = json_node_get_array (json_parser_get_root (parser));
  /* Pending only, unless --all. */
  g_assert_cmpuint (json_array_get_length (array), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(GList) keys = json_object_get_members (json_array_get_object_element (array, i));
      GList *k = keys, *e = expected_keys;

      g_assert_cmpstr (keys->data, ==, "request_id");
      for (; k != NULL && e != NULL; k = k->next, e = e->next)
        g_assert_cmpstr (k->data, ==, e->data);
      g_assert_true (k == NULL && e == NULL);
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (array, i), "status"), ==, "pending");
    }

  all = ctl (f, &status, NULL, "list", "--json", "--all", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (all, subagent_approval_request_get_request_id (b)));
  g_free (out);
  out = ctl (f, &status, NULL, "list", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, subagent_approval_request_get_request_id (a)));
  g_assert_nonnull (strstr (out, "write_file"));
}

static void
test_cli_approve_deny (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) b = ats_make_request (RUN, "delete_file", "/b");
  g_autoptr(SubagentApprovalRequest) c = ats_make_request ("run-2", "delete_file", "/c");
  g_autoptr(GPtrArray) requests = NULL;
  const char *id_a = subagent_approval_request_get_request_id (a);
  const char *id_b = subagent_approval_request_get_request_id (b);
  const char *id_c = subagent_approval_request_get_request_id (c);
  g_autofree char *err = NULL;
  int status;

  ats_save_one (f->sink, RUN, a);
  ats_save_one (f->sink, RUN, b);
  ats_save_one (f->sink, "run-2", c);

  g_free (ctl (f, &status, NULL, "approve", id_a, "--by", "alice", NULL));
  g_assert_cmpint (status, ==, 0);
  g_free (ctl (f, &status, &err, "approve", id_a, NULL));
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, "is not pending any more"));
  g_clear_pointer (&err, g_free);
  g_free (ctl (f, &status, NULL, "deny", id_b, "--reason", "not now", NULL));
  g_assert_cmpint (status, ==, 0);
  g_free (ctl (f, &status, &err, "approve", "no-such-request", NULL));
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, "No approval request no-such-request"));
  g_clear_pointer (&err, g_free);
  g_free (ctl (f, &status, &err, "approve", "../x", NULL));
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, "Invalid request id"));
  g_clear_pointer (&err, g_free);
  g_free (ctl (f, &status, NULL, "approve", id_c, "--run", RUN, NULL));
  g_assert_cmpint (status, ==, 1);
  g_free (ctl (f, &status, NULL, "deny", id_c, "--run", "run-2", NULL));
  g_assert_cmpint (status, ==, 0);

  requests = ats_load (f->sink, RUN);
  g_assert_cmpint (subagent_approval_request_get_status (ats_find (requests, id_a)), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpstr (subagent_approval_request_get_approved_by (ats_find (requests, id_a)), ==, "alice");
  g_assert_cmpint (subagent_approval_request_get_status (ats_find (requests, id_b)), ==, SUBAGENT_APPROVAL_STATUS_DENIED);
  g_assert_cmpstr (subagent_approval_request_get_denial_reason (ats_find (requests, id_b)), ==, "not now");
  g_assert_cmpint (ats_stored_status (f->sink, "run-2", c), ==, SUBAGENT_APPROVAL_STATUS_DENIED);
}

static void
test_cli_approve_all_deny_all (Fixture       *f,
                               gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) b = ats_make_request (RUN, "delete_file", "/b");
  g_autoptr(SubagentApprovalRequest) c = ats_make_request ("run-2", "delete_file", "/c");
  g_autofree char *out = NULL;
  int status;

  ats_save_one (f->sink, RUN, a);
  ats_save_one (f->sink, RUN, b);
  ats_save_one (f->sink, "run-2", c);

  out = ctl (f, &status, NULL, "approve-all", "--run", RUN, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "Approved 2 "));
  g_free (out);
  out = ctl (f, &status, NULL, "deny-all", "--reason", "closing", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "Denied 1 "));
  g_assert_cmpint (ats_stored_status (f->sink, RUN, a), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpint (ats_stored_status (f->sink, RUN, b), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpint (ats_stored_status (f->sink, "run-2", c), ==, SUBAGENT_APPROVAL_STATUS_DENIED);
}

static void
test_cli_prune (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request ("done", "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) b = ats_make_request ("waiting", "delete_file", "/b");
  g_autofree char *out = NULL;
  g_auto(GStrv) runs = NULL;
  int status;

  ats_save_one (f->sink, "done", a);
  ats_save_one (f->sink, "waiting", b);
  g_assert_true (subagent_approval_sink_update_status (f->sink, "done", subagent_approval_request_get_request_id (a),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, NULL, NULL));
  out = ctl (f, &status, NULL, "prune", "--older-than", "1h", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "Removed 0 "));
  g_free (out);
  out = ctl (f, &status, NULL, "prune", "--older-than", "0s", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "Removed 1 "));
  g_free (ctl (f, &status, NULL, "prune", "--older-than", "soon", NULL));
  g_assert_cmpint (status, !=, 0);
  /* Without --older-than, prune only marks abandoned requests. */
  g_free (out);
  out = ctl (f, &status, NULL, "prune", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "Marked 0 abandoned"));
  g_assert_null (strstr (out, "Removed"));

  runs = subagent_approval_sink_list_runs (f->sink, NULL);
  g_assert_cmpuint (g_strv_length (runs), ==, 1);
  g_assert_cmpstr (runs[0], ==, "waiting");
}

/* Reads lines of @stream up to and including one that starts with @prefix. */
static void
read_until (GDataInputStream *stream,
            const char       *prefix,
            GString          *seen)
{
  for (;;)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *line = g_data_input_stream_read_line_utf8 (stream, NULL, NULL, &error);

      g_assert_no_error (error);
      if (line == NULL)
        g_error ("output ended before a line starting with “%s”; got:\n%s", prefix, seen->str);
      g_string_append_printf (seen, "%s\n", line);
      if (g_str_has_prefix (line, prefix))
        return;
    }
}

static void
test_cli_watch (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request ("late-run", "delete_file", "/a");
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GDataInputStream) stream = NULL;
  g_autoptr(GString) seen = g_string_new (NULL);
  g_autoptr(GError) error = NULL;

  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, sat_subagentctl (), "approvals", "--root", f->root,
                           "watch", "--count", "2", NULL);
  g_assert_no_error (error);
  stream = g_data_input_stream_new (g_subprocess_get_stdout_pipe (proc));
  read_until (stream, "--- 0 pending", seen);

  /* A run that did not exist when the watch started shows up too. */
  ats_save_one (f->sink, "late-run", a);
  read_until (stream, "--- 1 pending", seen);
  read_until (stream, "  ", seen);
  g_assert_nonnull (strstr (seen->str, subagent_approval_request_get_request_id (a)));
  g_subprocess_wait_check (proc, NULL, &error);
  g_assert_no_error (error);
}


typedef struct {
  Fixture *f;
  const char *request_id;
  gboolean stored;
  gboolean resolved;
  SubagentApprovalStatus status;
} QueueWait;

static void
on_store_changed (SubagentApprovalSink *sink,
                  const char           *run_id,
                  QueueWait            *w)
{
  g_autoptr(GPtrArray) requests = ats_load (sink, run_id);

  if (ats_find (requests, w->request_id) != NULL)
    w->stored = TRUE;
}

static void
on_submitted (GObject      *queue,
              GAsyncResult *result,
              gpointer      data)
{
  QueueWait *w = data;
  g_autoptr(GError) error = NULL;

  w->status = subagent_approval_queue_submit_finish (SUBAGENT_APPROVAL_QUEUE (queue), result, &error);
  g_assert_no_error (error);
  w->resolved = TRUE;
}

static gboolean
on_queue_timeout (gpointer data)
{
  g_error ("the waiting queue was not woken within 20 s");
  return G_SOURCE_REMOVE;
}

/* The whole way: a queue of this process waits; `subagentctl approvals
 * approve`, another process with no queue, writes the verdict; the store's
 * "changed" (inotify, or NOTIFY) wakes the queue. */
static void
test_cli_approve_wakes_waiting_queue (Fixture       *f,
                                      gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(GError) error = NULL;
  QueueWait w = { f, subagent_approval_request_get_request_id (a), FALSE, FALSE, SUBAGENT_APPROVAL_STATUS_PENDING };
  guint timeout_id;
  gulong handler;
  int status;

  queue = subagent_approval_queue_get (RUN, f->sink, &error);
  g_assert_no_error (error);
  handler = g_signal_connect (f->sink, "changed", G_CALLBACK (on_store_changed), &w);
  subagent_approval_sink_watch (f->sink, RUN);
  timeout_id = g_timeout_add_seconds (20, on_queue_timeout, NULL);
  subagent_approval_queue_submit_async (queue, a, NULL, on_submitted, &w);
  sat_wait_for_flag (&w.stored);

  g_free (ctl (f, &status, NULL, "approve", w.request_id, "--by", "operator", NULL));
  g_assert_cmpint (status, ==, 0);
  sat_wait_for_flag (&w.resolved);
  g_source_remove (timeout_id);
  g_assert_cmpint (w.status, ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
  subagent_approval_sink_unwatch (f->sink, RUN);
  subagent_approval_queue_release (RUN);
  /* The queue's watcher thread emits "changed" on this sink too: it must be
   * gone before @w (on this stack) is. */
  g_clear_object (&queue);
  g_signal_handler_disconnect (f->sink, handler);
}

/* ---- requests of a dead host ----------------------------------------------- */

/* A real host (approval-stress-helper submit: it saves a request and waits
 * for its verdict) is SIGKILLed: its request is then abandoned; list says
 * so, approve refuses (nobody waits), approve-all skips it, and prune marks
 * it abandoned, kept in the store. While the host lives, none of that. */
static void
test_cli_dead_host_request_abandoned (Fixture       *f,
                                      gconstpointer  data)
{
  g_autofree char *spec = ats_store_spec (f, 'a');
  g_autoptr(GSubprocess) host = NULL;
  g_autoptr(GPtrArray) requests = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *id = NULL;
  g_autoptr(SubagentApprovalRequest) first = NULL;
  SubagentApprovalRequest *r;
  const char *boot_id = NULL, *host_name = NULL;
  gint64 pid = 0;
  guint64 start = 0;
  int status;

  host = ats_spawn_helper (G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, "submit", spec, "dead-host", "1", NULL);
  g_assert_no_error (error);
  for (int i = 0; i < 400; i++)
    {
      g_clear_pointer (&requests, g_ptr_array_unref);
      requests = subagent_approval_sink_load (f->sink, "dead-host", NULL);
      if (requests != NULL && requests->len == 1)
        break;
      g_usleep (50 * 1000);
    }
  g_assert_nonnull (requests);
  g_assert_cmpuint (requests->len, ==, 1);
  r = requests->pdata[0];
  id = g_strdup (subagent_approval_request_get_request_id (r));
  first = g_object_ref (r);
  /* The request names its waiting host: that process, on this machine. */
  g_assert_true (subagent_approval_request_get_host (r, &pid, &start, &boot_id, &host_name));
  g_assert_cmpint (pid, ==, atoi (g_subprocess_get_identifier (host)));
  g_assert_cmpuint (start, >, 0);
  g_assert_cmpstr (host_name, ==, g_get_host_name ());
  g_assert_false (subagent_approval_request_is_abandoned (r));
  out = ctl (f, &status, NULL, "list", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, id));
  g_assert_null (strstr (out, "abandoned"));
  g_clear_pointer (&out, g_free);

  g_subprocess_force_exit (host);
  g_assert_true (g_subprocess_wait (host, NULL, NULL));
  g_assert_true (g_subprocess_get_if_signaled (host));

  g_clear_pointer (&requests, g_ptr_array_unref);
  requests = subagent_approval_sink_load (f->sink, "dead-host", &error);
  g_assert_no_error (error);
  g_assert_true (subagent_approval_request_is_abandoned (requests->pdata[0]));

  out = ctl (f, &status, NULL, "list", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "[abandoned: its host, pid "));
  g_clear_pointer (&out, g_free);
  out = ctl (f, &status, NULL, "list", "--json", NULL);
  g_assert_cmpint (status, ==, 0);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  g_assert_true (json_object_get_boolean_member (
    json_array_get_object_element (json_node_get_array (json_parser_get_root (parser)), 0), "abandoned"));
  g_clear_pointer (&out, g_free);

  /* Approving it would report success to nobody: refused, nothing changes. */
  out = ctl (f, &status, &err, "approve", id, NULL);
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, "nobody is waiting"));
  g_assert_cmpint (ats_stored_status (f->sink, "dead-host", first), ==, SUBAGENT_APPROVAL_STATUS_PENDING);
  g_clear_pointer (&out, g_free);
  out = ctl (f, &status, NULL, "approve-all", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "Approved 0 requests"));
  g_assert_nonnull (strstr (out, "Skipped 1 abandoned request"));
  g_assert_cmpint (ats_stored_status (f->sink, "dead-host", first), ==, SUBAGENT_APPROVAL_STATUS_PENDING);
  g_clear_pointer (&out, g_free);

  /* prune expires it, auditable: status, reason naming the host, actor. */
  out = ctl (f, &status, NULL, "prune", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "Marked 1 abandoned request"));
  g_assert_cmpint (ats_stored_status (f->sink, "dead-host", first), ==, SUBAGENT_APPROVAL_STATUS_ABANDONED);
  g_clear_pointer (&requests, g_ptr_array_unref);
  requests = subagent_approval_sink_load (f->sink, "dead-host", &error);
  g_assert_no_error (error);
  r = requests->pdata[0];
  g_assert_nonnull (strstr (subagent_approval_request_get_denial_reason (r), "pid"));
  g_assert_cmpstr (subagent_approval_request_get_approved_by (r), ==, "subagentctl approvals prune");
  g_clear_pointer (&out, g_free);
  out = ctl (f, &status, NULL, "list", "--all", NULL);
  g_assert_nonnull (strstr (out, "[abandoned]"));
}

/* A document written before hosts were recorded still reads, and is never
 * taken for abandoned (nobody can tell). */
static void
test_cli_old_request_without_host (Fixture       *f,
                                   gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(JsonObject) object = subagent_approval_request_to_json (a);
  g_autoptr(SubagentApprovalRequest) old = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (json_object_has_member (object, "host"));
  json_object_remove_member (object, "host");
  old = subagent_approval_request_new_from_json (object, &error);
  g_assert_no_error (error);
  g_assert_false (subagent_approval_request_get_host (old, NULL, NULL, NULL, NULL));
  g_assert_false (subagent_approval_request_is_abandoned (old));
  g_clear_pointer (&object, json_object_unref);
  object = subagent_approval_request_to_json (old);
  g_assert_false (json_object_has_member (object, "host"));
  /* A malformed host is refused like any other altered member. */
  {
    JsonObject *bad = json_object_new ();

    json_object_set_string_member (bad, "pid", "1");
    json_object_set_object_member (object, "host", bad);
    g_clear_object (&old);
    old = subagent_approval_request_new_from_json (object, &error);
    g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  }
}

static void
add (const char  *path,
     void       (*func) (Fixture *, gconstpointer))
{
  g_autofree char *full = g_strdup_printf ("/approval-cli/%s/%s", ats_store_name (ats_store_kind), path);

  g_test_add (full, Fixture, NULL, ats_store_fixture_set_up, func, ats_store_fixture_tear_down);
}

#define ADD(path, func) add (path, func)

int
main (int   argc,
      char *argv[])
{
  g_unsetenv ("SUBAGENT_APPROVAL_HMAC_KEY");
  ats_store_parse_args (&argc, &argv);
  g_test_init (&argc, &argv, NULL);

  ADD ("list/json-objects-start-with-request-id", test_cli_list_json);
  ADD ("approve-deny/decide-one-request", test_cli_approve_deny);
  ADD ("approve-all-deny-all/decide-every-pending-request", test_cli_approve_all_deny_all);
  ADD ("prune/removes-only-old-decided-queues", test_cli_prune);
  ADD ("requests-of-dead-host-abandoned/list-approve-prune", test_cli_dead_host_request_abandoned);
  ADD ("requests-of-dead-host-abandoned/old-document-without-host", test_cli_old_request_without_host);
  ADD ("watch/re-renders-on-change-and-exits-after-count", test_cli_watch);
  ADD ("approve/wakes-a-queue-waiting-in-another-process", test_cli_approve_wakes_waiting_queue);

  return g_test_run ();
}
