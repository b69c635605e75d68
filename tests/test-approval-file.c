/* test-approval-file.c: what is particular to the approval-file plugin, a
 * SubagentApprovalSink on JSON files: atomic writes, files and names in the
 * directory, the signed document and its key. What every store must do is
 * in test-approval-conformance.c (run here with --store=file), the
 * multi-process tests in test-approval-stress.c, the CLI's in
 * test-approval-cli.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <sys/inotify.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "approval-test-support.h"

#define RUN "run-1"

/* Rewrites the run's file through @edit (on the parsed root object); with
 * @resign_key the result is signed again as a key holder would. */
static void
tamper (Fixture    *f,
        const char *run,
        void      (*edit) (JsonObject *root),
        const char *resign_key)
{
  g_autofree char *path = g_strdup_printf ("%s/%s.json", f->dir, run);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *root;
  g_autofree char *text = NULL;

  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  edit (root);
  if (resign_key != NULL)
    {
      g_autofree char *canonical = NULL;
      g_autofree char *signature = NULL;

      json_object_remove_member (root, "signature");
      canonical = subagent_json_to_canonical_string (json_parser_get_root (parser));
      signature = g_compute_hmac_for_string (G_CHECKSUM_SHA256, (const guchar *) resign_key,
                                             strlen (resign_key), canonical, -1);
      json_object_set_string_member (root, "signature", signature);
    }
  text = json_to_string (json_parser_get_root (parser), FALSE);
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
}

static void
assert_rejected (Fixture *f)
{
  g_autoptr(GPtrArray) requests = NULL;
  guint before = f->integrity_failures;

  g_test_expect_message (ATS_LOG_DOMAIN, G_LOG_LEVEL_WARNING, ATS_INTEGRITY_WARNING);
  requests = ats_load (f->sink, RUN);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (requests->len, ==, 0);
  g_assert_cmpuint (f->integrity_failures, ==, before + 1);
}

/* Store */

static void
test_plugin_provides_file_sink (Fixture       *f,
                                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentPluginInfo) info =
    subagent_plugin_registry_find_for_backend (subagent_plugin_registry_get_default (),
                                               SUBAGENT_TYPE_APPROVAL_SINK, "file", &error);
  g_autofree char *root = NULL;

  g_assert_no_error (error);
  g_assert_cmpstr (subagent_plugin_info_get_name (info), ==, "approval-file");
  g_assert_true (SUBAGENT_IS_APPROVAL_SINK (f->sink));
  g_object_get (f->sink, "root", &root, NULL);
  g_assert_cmpstr (root, ==, f->root);

  /* The configuration freezes at first use. */
  g_strfreev (subagent_approval_sink_list_runs (f->sink, &error));
  g_assert_no_error (error);
  g_test_expect_message (ATS_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*can only be set before*");
  g_object_set (f->sink, "root", "/elsewhere", NULL);
  g_test_assert_expected_messages ();
}

static void
test_atomic_write_no_temp_files (Fixture       *f,
                                 gconstpointer  data)
{
  g_auto(GStrv) names = NULL;
  g_autoptr(GPtrArray) requests = NULL;

  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(SubagentApprovalRequest) request = ats_make_request (RUN, "delete_file", "/a");

      ats_save_one (f->sink, RUN, request);
      g_assert_true (subagent_approval_sink_update_status (f->sink, RUN,
                                                           subagent_approval_request_get_request_id (request),
                                                           SUBAGENT_APPROVAL_STATUS_DENIED, "no", "tester", NULL));
    }
  names = ats_dir_entries (f->dir);
  g_assert_cmpuint (g_strv_length (names), ==, 2);
  g_assert_cmpstr (names[0], ==, RUN ".json");
  g_assert_cmpstr (names[1], ==, RUN ".json.lock");
  requests = ats_load (f->sink, RUN);
  g_assert_cmpuint (requests->len, ==, 5);
}

static void
on_changed_count (SubagentApprovalSink *sink,
                  const char           *run,
                  guint                *count)
{
  (*count)++;
}

/* inotify queues a rename's events within the rename: what is readable
 * now is all there is. */
static void
drain_events (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* "changed" is left out for versions this sink alone wrote since the one
 * it last announced (each process of a request and its verdict has seen
 * its own write), but never when another writer's version lies under one
 * of ours: whoever listens must still learn of it. */
static void
test_changed_skips_only_own_writes (Fixture       *f,
                                    gconstpointer  data)
{
  g_autoptr(SubagentApprovalSink) other = ats_new_sink (f->root, data);
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) b = ats_make_request (RUN, "delete_file", "/b");
  g_autoptr(SubagentApprovalRequest) c = ats_make_request (RUN, "delete_file", "/c");
  g_autoptr(SubagentApprovalRequest) d = ats_make_request (RUN, "delete_file", "/d");
  guint changed = 0;
  gulong handler = g_signal_connect (f->sink, "changed", G_CALLBACK (on_changed_count), &changed);

  subagent_approval_sink_watch (f->sink, RUN);
  ats_save_one (f->sink, RUN, a);
  drain_events ();
  /* A watch that announced nothing yet announces once. */
  g_assert_cmpuint (changed, ==, 1);

  ats_save_one (f->sink, RUN, b);
  ats_save_one (f->sink, RUN, c);
  drain_events ();
  g_assert_cmpuint (changed, ==, 1);

  /* Another sink's verdict, then our save on top of it before the watch
   * reads its events: the file then holds our version, yet the verdict
   * under it is news. */
  g_assert_true (subagent_approval_sink_update_status (other, RUN, subagent_approval_request_get_request_id (a),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "other", NULL));
  ats_save_one (f->sink, RUN, d);
  drain_events ();
  g_assert_cmpuint (changed, ==, 2);
  g_assert_cmpint (ats_stored_status (f->sink, RUN, a), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);

  /* Another writer's version alone is announced, and our verdict on top
   * of the version announced is not. */
  g_assert_true (subagent_approval_sink_update_status (other, RUN, subagent_approval_request_get_request_id (b),
                                                       SUBAGENT_APPROVAL_STATUS_DENIED, "no", "other", NULL));
  drain_events ();
  g_assert_cmpuint (changed, ==, 3);
  g_assert_true (subagent_approval_sink_update_status (f->sink, RUN, subagent_approval_request_get_request_id (c),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "us", NULL));
  drain_events ();
  g_assert_cmpuint (changed, ==, 3);

  /* Removed by another sink's prune: announced. */
  g_assert_true (subagent_approval_sink_update_status (other, RUN, subagent_approval_request_get_request_id (d),
                                                       SUBAGENT_APPROVAL_STATUS_DENIED, "no", "other", NULL));
  drain_events ();
  g_assert_cmpuint (changed, ==, 4);
  g_assert_cmpuint (subagent_approval_sink_prune_stale (other, 0, NULL), ==, 1);
  drain_events ();
  g_assert_cmpuint (changed, ==, 5);

  subagent_approval_sink_unwatch (f->sink, RUN);
  g_signal_handler_disconnect (f->sink, handler);
}

static void
test_invalid_ids (Fixture       *f,
                  gconstpointer  data)
{
  g_autofree char *long_id = g_strnfill (129, 'a');
  g_autofree char *max_id = g_strnfill (128, 'a');
  const char *bad[] = { "../x", "", long_id, "r\xc3\xa9sum\xc3\xa9", "a/b", ".", "..", "a.json", "a b", NULL };
  g_autoptr(GPtrArray) requests = NULL;
  g_autofree char *parent = g_path_get_dirname (f->root);
  g_autofree char *outside = g_build_filename (parent, "x.json", NULL);

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
      g_assert_false (subagent_approval_sink_update_status (f->sink, bad[i], "request-1", SUBAGENT_APPROVAL_STATUS_APPROVED,
                                                            NULL, NULL, &error));
      g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INVALID_ID);
      g_clear_error (&error);
      g_test_expect_message ("Subagent", G_LOG_LEVEL_CRITICAL, "*subagent_approval_id_is_valid*");
      subagent_approval_sink_watch (f->sink, bad[i]);
      g_test_assert_expected_messages ();
    }
  /* Nothing was created for them, inside the store or beside the root. */
  g_assert_false (g_file_test (f->dir, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (outside, G_FILE_TEST_EXISTS));

  /* 128 characters is the longest id that works. */
  requests = ats_load (f->sink, max_id);
  g_assert_cmpuint (requests->len, ==, 0);
}

static void
test_save_unchanged_does_not_rewrite (Fixture       *f,
                                      gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autofree char *path = g_build_filename (f->dir, RUN ".json", NULL);
  GStatBuf before, after;

  ats_save_one (f->sink, RUN, a);
  g_assert_cmpint (g_stat (path, &before), ==, 0);
  ats_save_one (f->sink, RUN, a);
  g_assert_cmpint (g_stat (path, &after), ==, 0);
  g_assert_cmpuint (before.st_ino, ==, after.st_ino);
}

static void
test_prune_keeps_pending_and_unverifiable (Fixture       *f,
                                           gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) done = ats_make_request ("done", "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) waiting = ats_make_request ("waiting", "delete_file", "/b");
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;

  ats_save_one (f->sink, "done", done);
  g_assert_true (subagent_approval_sink_update_status (f->sink, "done", subagent_approval_request_get_request_id (done),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, NULL, NULL));
  ats_save_one (f->sink, "waiting", waiting);
  sat_write_file (f->dir, "broken.json", "{\"version\": 1, \"requests\": [");
  sat_write_file (f->dir, ".done.json.Ab12Cd", "left by a killed writer");

  /* Too young to go. */
  g_assert_cmpuint (subagent_approval_sink_prune_stale (f->sink, G_TIME_SPAN_HOUR, &error), ==, 0);
  g_assert_no_error (error);

  g_test_expect_message (ATS_LOG_DOMAIN, G_LOG_LEVEL_WARNING, ATS_INTEGRITY_WARNING);
  g_assert_cmpuint (subagent_approval_sink_prune_stale (f->sink, 0, &error), ==, 1);
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  g_assert_cmpuint (f->integrity_failures, ==, 1);

  names = ats_dir_entries (f->dir);
  g_assert_cmpuint (g_strv_length (names), ==, 4);
  g_assert_cmpstr (names[0], ==, "broken.json");
  g_assert_cmpstr (names[1], ==, "broken.json.lock");
  g_assert_cmpstr (names[2], ==, "waiting.json");
  g_assert_cmpstr (names[3], ==, "waiting.json.lock");
}

static void
test_list_runs (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request ("zeta", "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) b = ats_make_request ("alpha", "delete_file", "/b");
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) none = subagent_approval_sink_list_runs (f->sink, &error);
  g_auto(GStrv) runs = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (none), ==, 0);
  ats_save_one (f->sink, "zeta", a);
  ats_save_one (f->sink, "alpha", b);
  sat_write_file (f->dir, "not an id.json", "{}");
  sat_write_file (f->dir, "notes.txt", "");
  runs = subagent_approval_sink_list_runs (f->sink, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (runs), ==, 2);
  g_assert_cmpstr (runs[0], ==, "alpha");
  g_assert_cmpstr (runs[1], ==, "zeta");
}

static void
test_symlinked_dir_refused (Fixture       *f,
                            gconstpointer  data)
{
  g_autofree char *elsewhere = sat_make_temp_dir ("approval-elsewhere");
  g_autofree char *subagent_dir = g_build_filename (f->root, ".subagent", NULL);
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(GPtrArray) batch = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;

  g_assert_cmpint (g_mkdir (subagent_dir, 0700), ==, 0);
  g_assert_cmpint (symlink (elsewhere, f->dir), ==, 0);
  g_ptr_array_add (batch, a);
  g_assert_false (subagent_approval_sink_save (f->sink, RUN, batch, &error));
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE);
  names = ats_dir_entries (elsewhere);
  g_assert_cmpuint (g_strv_length (names), ==, 0);
  sat_rm_rf (elsewhere);
}

/* Integrity */

#define KEY "correct horse battery staple"

static void
test_integrity_no_key (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autofree char *text = NULL;
  g_autoptr(GPtrArray) requests = NULL;

  ats_save_one (f->sink, RUN, a);
  text = sat_read_file (f->dir, RUN ".json");
  g_assert_null (strstr (text, "\"signature\""));
  requests = ats_load (f->sink, RUN);
  g_assert_cmpuint (requests->len, ==, 1);
  g_assert_cmpuint (f->integrity_failures, ==, 0);
}

static void
test_integrity_flipped_byte (Fixture       *f,
                             gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autofree char *path = g_build_filename (f->dir, RUN ".json", NULL);
  g_autofree char *original = NULL;
  gsize length = 0;

  ats_save_one (f->sink, RUN, a);
  g_assert_true (g_file_get_contents (path, &original, &length, NULL));
  g_assert_cmpint (original[length - 1], ==, '\n');

  /* Every single-bit change anywhere in the document is refused. */
  for (gsize i = 0; i + 1 < length; i++)
    {
      g_autofree char *copy = g_memdup2 (original, length);

      copy[i] ^= 0x01;
      /* No fsync: hundreds of rewrites, read back by this process only. */
      g_assert_true (g_file_set_contents_full (path, copy, (gssize) length, G_FILE_SET_CONTENTS_NONE, 0600, NULL));
      assert_rejected (f);
    }
  g_assert_cmpuint (f->integrity_failures, ==, length - 1);
}

static void
swap_actions (JsonObject *root)
{
  JsonArray *requests = json_object_get_array_member (root, "requests");
  JsonObject *a = json_array_get_object_element (requests, 0);
  JsonObject *b = json_array_get_object_element (requests, 1);
  const char *members[] = { "tool_name", "tool_arguments" };

  for (guint i = 0; i < G_N_ELEMENTS (members); i++)
    {
      JsonNode *na = json_node_copy (json_object_get_member (a, members[i]));
      JsonNode *nb = json_node_copy (json_object_get_member (b, members[i]));

      json_object_set_member (a, members[i], nb);
      json_object_set_member (b, members[i], na);
    }
}

static void
swap_actions_and_digests (JsonObject *root)
{
  JsonArray *requests = json_object_get_array_member (root, "requests");
  JsonObject *a = json_array_get_object_element (requests, 0);
  JsonObject *b = json_array_get_object_element (requests, 1);
  g_autofree char *da = g_strdup (json_object_get_string_member (a, "action_digest"));

  swap_actions (root);
  json_object_set_string_member (a, "action_digest", json_object_get_string_member (b, "action_digest"));
  json_object_set_string_member (b, "action_digest", da);
}

/* A verdict given to a harmless call must not end up on a dangerous one. */
static void
test_integrity_moved_verdict (Fixture       *f,
                              gconstpointer  data)
{
  const char *key = data;
  g_autoptr(SubagentApprovalRequest) dangerous = ats_make_request (RUN, "delete_file", "/etc");
  g_autoptr(SubagentApprovalRequest) harmless = ats_make_request (RUN, "read_file", "/notes");
  g_autoptr(GPtrArray) batch = g_ptr_array_new ();

  g_ptr_array_add (batch, dangerous);
  g_ptr_array_add (batch, harmless);
  g_assert_true (subagent_approval_sink_save (f->sink, RUN, batch, NULL));
  g_assert_true (subagent_approval_sink_update_status (f->sink, RUN, subagent_approval_request_get_request_id (harmless),
                                                       SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, NULL, NULL));

  /* The digest no longer matches the action, whoever signs the file. */
  tamper (f, RUN, swap_actions, key);
  assert_rejected (f);

  if (key != NULL)
    {
      g_autoptr(GPtrArray) kept = NULL;

      /* Moving the digests along breaks the signature. The save moves the
       * untrusted file aside and brings back the version this host last
       * trusted, whose verdict (harmless approved) stays. */
      g_test_expect_message (ATS_LOG_DOMAIN, G_LOG_LEVEL_WARNING, ATS_INTEGRITY_WARNING);
      g_assert_true (subagent_approval_sink_save (f->sink, RUN, batch, NULL));
      g_test_assert_expected_messages ();
      kept = ats_load (f->sink, RUN);
      g_assert_cmpuint (kept->len, ==, 2);
      for (guint i = 0; i < kept->len; i++)
        if (g_str_equal (subagent_approval_request_get_request_id (kept->pdata[i]),
                         subagent_approval_request_get_request_id (harmless)))
          g_assert_cmpint (subagent_approval_request_get_status (kept->pdata[i]), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);
      tamper (f, RUN, swap_actions_and_digests, NULL);
      assert_rejected (f);
    }
}

/* Another writer rewrites a pending request under its id with other
 * arguments and a digest recomputed for them, and approves it: the host
 * waiting for its own call must not take that verdict. */
static void
approve_other_action (JsonObject *root)
{
  JsonObject *request = json_array_get_object_element (json_object_get_array_member (root, "requests"), 0);
  JsonObject *args = json_object_new ();
  g_autofree char *digest = NULL;

  json_object_set_string_member (args, "path", "/etc/shadow");
  digest = subagent_approval_compute_action_digest (json_object_get_string_member (request, "tool_name"), args);
  json_object_set_object_member (request, "tool_arguments", args);
  json_object_set_string_member (request, "action_digest", digest);
  json_object_set_string_member (request, "status", "approved");
  json_object_set_string_member (request, "approved_at", json_object_get_string_member (request, "created_at"));
  json_object_set_string_member (request, "approved_by", "rewriter");
}

typedef struct {
  SubagentApprovalQueue *queue;
  SubagentApprovalRequest *request;
  SubagentApprovalStatus status;
} Submit;

static gpointer
submit_thread (gpointer data)
{
  Submit *submit = data;

  submit->status = subagent_approval_queue_submit_sync (submit->queue, submit->request, NULL, NULL);
  return NULL;
}

static void
test_integrity_verdict_bound_to_action (Fixture       *f,
                                        gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (RUN, f->sink, &error);
  g_autoptr(JsonObject) args = json_object_new ();
  g_autoptr(SubagentApprovalRequest) request = NULL;
  Submit submit = { 0 };
  GThread *thread;

  g_assert_no_error (error);
  json_object_set_string_member (args, "path", "/notes");
  request = subagent_approval_request_new ("child-1", RUN, "writer", "write_file", args, "prompt", "shared",
                                           SUBAGENT_NO_BATCH_INDEX, NULL, 2);
  submit.queue = queue;
  submit.request = request;
  thread = g_thread_new ("submit", submit_thread, &submit);
  for (guint i = 0; i < 200; i++)
    {
      g_autoptr(GPtrArray) stored = subagent_approval_sink_load (f->sink, RUN, NULL);

      if (stored != NULL && stored->len == 1)
        break;
      g_usleep (10 * 1000);
    }
  tamper (f, RUN, approve_other_action, NULL);
  g_thread_join (thread);
  g_assert_cmpint (submit.status, !=, SUBAGENT_APPROVAL_STATUS_APPROVED);
  g_assert_cmpint (subagent_approval_request_get_status (request), !=, SUBAGENT_APPROVAL_STATUS_APPROVED);
  subagent_approval_queue_release (RUN);
}

/* approve_all_pending() and approve_batch() of a queue on the file store:
 * one atomic write for all their verdicts, each still a compare-and-set
 * (a request another process denied meanwhile keeps that verdict). */
static guint
count_pending (SubagentApprovalQueue *queue)
{
  g_autoptr(GPtrArray) pending = subagent_approval_queue_list_pending (queue);

  return pending->len;
}

static void
test_queue_batch_verdicts_one_write (Fixture       *f,
                                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (RUN, f->sink, &error);
  g_autoptr(SubagentApprovalSink) other = ats_new_sink (f->root, data);
  g_autoptr(GPtrArray) made = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) stored = NULL;
  const char *ids[4];
  int fd;

  g_assert_no_error (error);
  for (guint i = 0; i < 8; i++)
    {
      g_autofree char *path = g_strdup_printf ("/q/%u", i);

      g_ptr_array_add (made, ats_make_request (RUN, "delete_file", path));
    }
  /* Stored by another process; the queue takes them from the store. */
  g_assert_true (subagent_approval_sink_save (other, RUN, made, &error));
  g_assert_no_error (error);
  g_assert_true (subagent_approval_queue_reload_from_store (queue, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_pending (queue), ==, 8);

  /* The other process denies request 1 behind the queue's back. */
  g_assert_true (subagent_approval_sink_update_status (other, RUN, subagent_approval_request_get_request_id (made->pdata[1]),
                                                       SUBAGENT_APPROVAL_STATUS_DENIED, "no", "bob", &error));
  fd = ats_watch_run_writes (f->dir);
  for (guint i = 0; i < 3; i++)
    ids[i] = subagent_approval_request_get_request_id (made->pdata[i]);
  ids[3] = NULL;
  g_assert_cmpuint (subagent_approval_queue_approve_batch (queue, ids, "amy"), ==, 2);
  g_assert_cmpuint (ats_count_run_writes (fd, RUN), ==, 1);
  g_assert_cmpuint (count_pending (queue), ==, 5);

  g_assert_cmpuint (subagent_approval_queue_approve_all_pending (queue, "amy"), ==, 5);
  g_assert_cmpuint (ats_count_run_writes (fd, RUN), ==, 1);
  g_assert_cmpuint (count_pending (queue), ==, 0);
  close (fd);

  stored = ats_load (other, RUN);
  for (guint i = 0; i < made->len; i++)
    {
      SubagentApprovalRequest *r = ats_find (stored, subagent_approval_request_get_request_id (made->pdata[i]));

      g_assert_cmpint (subagent_approval_request_get_status (r), ==,
                       i == 1 ? SUBAGENT_APPROVAL_STATUS_DENIED : SUBAGENT_APPROVAL_STATUS_APPROVED);
      g_assert_cmpstr (subagent_approval_request_get_approved_by (r), ==, i == 1 ? "bob" : "amy");
    }
  subagent_approval_queue_release (RUN);
}

/* A writer without the key must not turn a signed queue into an unsigned
 * one its keyed host would refuse. */
static void
test_keyless_writer_refuses_signed_file (Fixture       *f,
                                         gconstpointer  data)
{
  g_autoptr(SubagentApprovalSink) keyless = ats_new_sink (f->root, NULL);
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) b = ats_make_request (RUN, "delete_file", "/b");
  g_autoptr(GPtrArray) batch = g_ptr_array_new ();
  g_autoptr(GPtrArray) requests = NULL;
  g_autoptr(GError) error = NULL;

  ats_save_one (f->sink, RUN, a);
  g_ptr_array_add (batch, b);
  g_assert_false (subagent_approval_sink_save (keyless, RUN, batch, &error));
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  g_assert_nonnull (strstr (error->message, "is signed"));
  g_clear_error (&error);
  g_assert_false (subagent_approval_sink_update_status (keyless, RUN, subagent_approval_request_get_request_id (a),
                                                        SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, NULL, &error));
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  /* The keyed host still reads its queue. */
  requests = ats_load (f->sink, RUN);
  g_assert_cmpuint (requests->len, ==, 1);
  g_assert_cmpint (subagent_approval_request_get_status (requests->pdata[0]), ==, SUBAGENT_APPROVAL_STATUS_PENDING);
}

static void
append_garbage_request (JsonObject *root)
{
  json_object_set_string_member (root, "updated_at", "tampered");
}

/* A tampered file goes aside; the keyed host keeps the pending requests it
 * trusted and the approver is told (integrity-failed). */
static void
test_tampered_file_quarantined (Fixture       *f,
                                gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(SubagentApprovalRequest) b = ats_make_request (RUN, "delete_file", "/b");
  g_autoptr(GPtrArray) requests = NULL;
  g_autoptr(GDir) dir = NULL;
  const char *name;
  guint aside = 0;

  ats_save_one (f->sink, RUN, a);
  tamper (f, RUN, append_garbage_request, NULL);
  g_test_expect_message (ATS_LOG_DOMAIN, G_LOG_LEVEL_WARNING, ATS_INTEGRITY_WARNING);
  ats_save_one (f->sink, RUN, b);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (f->integrity_failures, >=, 1);
  requests = ats_load (f->sink, RUN);
  g_assert_cmpuint (requests->len, ==, 2);
  dir = g_dir_open (f->dir, 0, NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, RUN ".json.tampered-"))
      aside++;
  g_assert_cmpuint (aside, ==, 1);
}

/* A planted symlink or a huge file is skipped with a warning, like invalid
 * JSON: the other runs' queues stay usable. */
static void
test_bad_file_does_not_block_others (Fixture       *f,
                                     gconstpointer  data)
{
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autofree char *link = g_build_filename (f->dir, "planted.json", NULL);
  g_autofree char *big = g_build_filename (f->dir, "huge.json", NULL);
  g_autoptr(GPtrArray) requests = NULL;
  g_auto(GStrv) runs = NULL;
  g_autoptr(GError) error = NULL;
  FILE *file;

  ats_save_one (f->sink, RUN, a);
  g_assert_cmpint (symlink ("/etc/passwd", link), ==, 0);
  file = fopen (big, "w");
  g_assert_nonnull (file);
  g_assert_cmpint (ftruncate (fileno (file), 70 * 1024 * 1024), ==, 0);
  fclose (file);
  runs = subagent_approval_sink_list_runs (f->sink, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (runs), ==, 3);
  for (guint i = 0; runs[i] != NULL; i++)
    {
      g_autoptr(GPtrArray) loaded = NULL;

      if (!g_str_equal (runs[i], RUN))
        g_test_expect_message (ATS_LOG_DOMAIN, G_LOG_LEVEL_WARNING, ATS_INTEGRITY_WARNING);
      loaded = subagent_approval_sink_load (f->sink, runs[i], &error);
      g_assert_no_error (error);
      g_assert_nonnull (loaded);
      g_test_assert_expected_messages ();
      g_assert_cmpuint (loaded->len, ==, g_str_equal (runs[i], RUN) ? 1 : 0);
    }
}

/* The host never writes a queue file larger than its readers accept. */
static void
test_write_bounded_by_read_limit (Fixture       *f,
                                  gconstpointer  data)
{
  g_autoptr(GPtrArray) batch = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GError) error = NULL;
  g_autofree char *filler = g_malloc (1024 * 1024 + 1);
  g_autofree char *path = g_strdup_printf ("%s/%s.json", f->dir, RUN);

  memset (filler, 'x', 1024 * 1024);
  filler[1024 * 1024] = '\0';
  for (guint i = 0; i < 70; i++)
    g_ptr_array_add (batch, ats_make_request (RUN, "write_file", filler));
  g_assert_false (subagent_approval_sink_save (f->sink, RUN, batch, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "past the"));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_integrity_key_file (Fixture       *f,
                         gconstpointer  data)
{
  g_autofree char *key_path = g_build_filename (f->root, "approval.key", NULL);
  g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
  g_autoptr(GPtrArray) batch = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) loose = NULL;
  g_autoptr(GObject) strict = NULL;
  g_autoptr(SubagentApprovalSink) by_property = ats_new_sink (f->root, KEY);
  g_autoptr(GPtrArray) requests = NULL;

  g_ptr_array_add (batch, a);
  g_assert_true (g_file_set_contents (key_path, KEY "\n", -1, NULL));

  g_assert_cmpint (g_chmod (key_path, 0644), ==, 0);
  loose = subagent_plugin_registry_create (subagent_plugin_registry_get_default (), SUBAGENT_TYPE_APPROVAL_SINK, "file", &error);
  g_object_set (loose, "root", f->root, "key-file", key_path, NULL);
  /* Refused whether or not the caller looks at errors: never unsigned. */
  g_assert_false (subagent_approval_sink_save (SUBAGENT_APPROVAL_SINK (loose), RUN, batch, NULL));
  g_assert_false (subagent_approval_sink_save (SUBAGENT_APPROVAL_SINK (loose), RUN, batch, &error));
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  g_assert_nonnull (strstr (error->message, "chmod 600"));
  g_clear_error (&error);
  g_assert_false (g_file_test (f->dir, G_FILE_TEST_EXISTS));

  /* Mode 0600: the key is the file's text without its newline. */
  g_assert_cmpint (g_chmod (key_path, 0600), ==, 0);
  strict = subagent_plugin_registry_create (subagent_plugin_registry_get_default (), SUBAGENT_TYPE_APPROVAL_SINK, "file", &error);
  g_object_set (strict, "root", f->root, "key-file", key_path, NULL);
  g_assert_true (subagent_approval_sink_save (SUBAGENT_APPROVAL_SINK (strict), RUN, batch, &error));
  g_assert_no_error (error);
  requests = ats_load (by_property, RUN);
  g_assert_cmpuint (requests->len, ==, 1);
}

static void
test_integrity_env_key (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *root = sat_make_temp_dir ("approval-env");
      g_autoptr(SubagentApprovalSink) from_env = NULL;
      g_autoptr(SubagentApprovalSink) by_property = ats_new_sink (root, KEY);
      g_autoptr(SubagentApprovalRequest) a = ats_make_request (RUN, "delete_file", "/a");
      g_autoptr(GPtrArray) requests = NULL;

      g_setenv ("SUBAGENT_APPROVAL_HMAC_KEY", KEY, TRUE);
      from_env = ats_new_sink (root, NULL);
      ats_save_one (from_env, RUN, a);
      requests = ats_load (by_property, RUN);
      g_assert_cmpuint (requests->len, ==, 1);
      sat_rm_rf (root);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

#define ADD(path, func, key) \
  g_test_add ("/approval-file/" path, Fixture, key, ats_fixture_set_up, func, ats_fixture_tear_down)

int
main (int   argc,
      char *argv[])
{
  /* The key comes from each test, never from the environment. */
  g_unsetenv ("SUBAGENT_APPROVAL_HMAC_KEY");
  g_test_init (&argc, &argv, NULL);

  ADD ("plugin/registry-provides-the-file-sink", test_plugin_provides_file_sink, NULL);
  ADD ("integrity/verdict-bound-to-its-action", test_integrity_verdict_bound_to_action, NULL);
  ADD ("integrity/keyless-writer-refuses-signed-file", test_keyless_writer_refuses_signed_file, KEY);
  ADD ("integrity/tampered-file-quarantined", test_tampered_file_quarantined, KEY);
  ADD ("store/bad-file-does-not-block-others", test_bad_file_does_not_block_others, NULL);
  ADD ("store/write-bounded-by-read-limit", test_write_bounded_by_read_limit, NULL);
  ADD ("store/atomic-write-leaves-no-temp-files", test_atomic_write_no_temp_files, NULL);
  ADD ("store/queue-batch-verdicts-make-one-write", test_queue_batch_verdicts_one_write, NULL);
  ADD ("store/queue-batch-verdicts-make-one-write-signed", test_queue_batch_verdicts_one_write, KEY);
  ADD ("store/invalid-ids-are-errors-never-paths", test_invalid_ids, NULL);
  ADD ("watch/changed-skips-only-own-writes", test_changed_skips_only_own_writes, NULL);
  ADD ("watch/changed-skips-only-own-writes-signed", test_changed_skips_only_own_writes, KEY);
  ADD ("store/save-without-changes-does-not-rewrite", test_save_unchanged_does_not_rewrite, NULL);
  ADD ("store/prune-keeps-pending-and-unverifiable", test_prune_keeps_pending_and_unverifiable, NULL);
  ADD ("store/list-runs-is-sorted-and-skips-strangers", test_list_runs, NULL);
  ADD ("store/symlinked-directory-is-refused", test_symlinked_dir_refused, NULL);
  ADD ("integrity/no-key-files-are-unsigned", test_integrity_no_key, NULL);
  ADD ("integrity/flipped-byte-loads-empty", test_integrity_flipped_byte, KEY);
  ADD ("integrity/untrusted-file-is-replaced-by-a-save", test_integrity_moved_verdict, KEY);
  ADD ("integrity/key-file-must-be-private", test_integrity_key_file, NULL);
  g_test_add_func ("/approval-file/integrity/key-from-environment", test_integrity_env_key);

  return g_test_run ();
}
