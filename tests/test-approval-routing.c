/* test-approval-routing.c: children's approval requests, from the child
 * protocol through the manager's route to the parent run's queue.
 *
 * The child is tests/fixtures/children/ask-approval.sh, which speaks the
 * protocol over an interactive stdin; the test answers through the queue.
 * test-approval-routing-cli.c has the approvers in other processes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include "approval-routing-support.h"

/* Counts ::request-added, which may come from any thread. */
typedef struct {
  GMutex lock;
  GPtrArray *ids;
} Added;

static void
on_request_added (SubagentApprovalQueue *queue, SubagentApprovalRequest *request, Added *added)
{
  g_mutex_lock (&added->lock);
  g_ptr_array_add (added->ids, g_strdup (subagent_approval_request_get_request_id (request)));
  g_mutex_unlock (&added->lock);
  g_main_context_wakeup (NULL);
}

static guint
added_count (Added *added)
{
  guint n;

  g_mutex_lock (&added->lock);
  n = added->ids->len;
  g_mutex_unlock (&added->lock);
  return n;
}

static void
wait_for_added (Added *added, guint count)
{
  while (added_count (added) < count)
    g_main_context_iteration (NULL, TRUE);
}

/* A host queue on a memory sink, watched by @added. */
static SubagentApprovalQueue *
host_queue (SubagentManager *manager, Added *added)
{
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *run = g_strdup_printf ("host-%s", subagent_manager_get_run_id (manager));
  SubagentApprovalQueue *queue = subagent_approval_queue_get (run, sink, &error);

  g_assert_no_error (error);
  g_mutex_init (&added->lock);
  added->ids = g_ptr_array_new_with_free_func (g_free);
  g_signal_connect (queue, "request-added", G_CALLBACK (on_request_added), added);
  subagent_manager_set_approval_queue (manager, queue);
  return queue;
}

static void
added_clear (SubagentApprovalQueue *queue, Added *added)
{
  g_signal_handlers_disconnect_by_data (queue, added);
  subagent_approval_queue_release (subagent_approval_queue_get_parent_run_id (queue));
  g_ptr_array_unref (added->ids);
  g_mutex_clear (&added->lock);
}

/* --- the permission table decides without a queue ------------------------ */

static void
test_sink_none_is_unattended (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(JsonObject) answer = NULL;
  g_autoptr(GError) error = NULL;

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  manager = ars_new_manager (f->root, "approvals: { sink: none }\n", SUBAGENT_PERMISSION_MODE_PROMPT);
  answer = ars_run_for_one_answer (manager, NULL);
  ars_assert_answer (answer, "req-1", FALSE, NULL);
  g_assert_cmpstr (json_object_get_string_member (answer, "reason"), ==, SUBAGENT_APPROVAL_UNATTENDED_REASON);
  queue = subagent_manager_dup_approval_queue (manager, &error);
  g_assert_no_error (error);
  g_assert_null (queue);
  g_assert_false (ars_approvals_dir_exists (f->root));
}

static void
test_host_marks_unattended (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(JsonObject) answer = NULL;

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  manager = ars_new_manager (f->root, "approvals: { sink: memory }\n", SUBAGENT_PERMISSION_MODE_PROMPT);
  subagent_manager_set_unattended (manager, TRUE);
  answer = ars_run_for_one_answer (manager, NULL);
  ars_assert_answer (answer, "req-1", FALSE, SUBAGENT_APPROVAL_UNATTENDED_REASON);
  g_object_get (manager, "approval-queue", &queue, NULL);
  g_assert_null (queue);
}

static void
test_read_only_refuses_without_asking (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(JsonObject) answer = NULL;
  g_autoptr(GPtrArray) pending = NULL;
  Added added;

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  manager = ars_new_manager (f->root, NULL, SUBAGENT_PERMISSION_MODE_READ_ONLY);
  queue = host_queue (manager, &added);
  answer = ars_run_for_one_answer (manager, NULL);
  ars_assert_answer (answer, "req-1", FALSE, "read-only");
  g_assert_cmpuint (added_count (&added), ==, 0);
  pending = subagent_approval_queue_list_pending (queue);
  g_assert_cmpuint (pending->len, ==, 0);
  added_clear (queue, &added);
}

static void
test_allow_approves_without_asking (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentManager) isolating = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(JsonObject) isolated = NULL;
  g_autoptr(JsonObject) full = NULL;
  Added added;

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  /* An isolated child of an `allow` parent gets workspace-write: a write
   * outside its workspace (/etc/motd) needs an approval, which nobody can
   * give here (no sink): denied. */
  isolating = ars_new_manager (f->root, "approvals: { sink: none }\n", SUBAGENT_PERMISSION_MODE_ALLOW);
  isolated = ars_run_for_one_answer (isolating, "directory-snapshot");
  ars_assert_answer (isolated, "req-1", FALSE, "no approver can reach this subagent");
  {
    g_autofree char *config = g_build_filename (f->root, ".subagent", "config.yaml", NULL);

    g_unlink (config);
  }

  manager = ars_new_manager (f->root, NULL, SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS);
  queue = host_queue (manager, &added);
  full = ars_run_for_one_answer (manager, "shared");
  ars_assert_answer (full, "req-1", TRUE, "danger-full-access");
  g_assert_cmpuint (added_count (&added), ==, 0);
  added_clear (queue, &added);
}

/* The request's own classification: a read-only call, or one that stays in
 * the workspace, is what the table says for it. */
static void
test_request_classifies_its_call (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(SubagentRunOptions) options = ars_asker_options (NULL);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GPtrArray) answers = NULL;
  Added added;

  ars_write_asker (f->root, 3, ARS_SPECS ("{\"type\":\"approval_request\",\"id\":\"inside\",\"tool\":\"edit\",\"arguments\":{\"path\":\"a.txt\"},\"inside_workspace\":true}",
                                  "{\"type\":\"approval_request\",\"id\":\"look\",\"tool\":\"cat\",\"arguments\":{},\"destructive\":false}",
                                  "outside"));
  manager = ars_new_manager (f->root, NULL, SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE);
  queue = host_queue (manager, &added);
  subagent_manager_run_async (manager, "edit", options, NULL, ars_on_run_done, &result);
  wait_for_added (&added, 1);
  g_assert_true (subagent_approval_queue_deny (queue, g_ptr_array_index (added.ids, 0), "outside the workspace", "test"));
  ars_wait_for_result (&result);

  answers = ars_answers_of (result);
  g_assert_cmpuint (answers->len, ==, 3);
  ars_assert_answer (answers->pdata[0], "inside", TRUE, "workspace-write allows it");
  ars_assert_answer (answers->pdata[1], "look", TRUE, "without asking");
  ars_assert_answer (answers->pdata[2], "outside", FALSE, "outside the workspace");
  g_assert_cmpuint (added_count (&added), ==, 1);
  added_clear (queue, &added);
}

static void
test_invalid_requests (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(SubagentRunOptions) options = ars_asker_options (NULL);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GPtrArray) answers = NULL;
  g_autoptr(GError) error = NULL;
  Added added;

  ars_write_asker (f->root, 3, ARS_SPECS ("{\"type\":\"approval_request\",\"id\":\"../../etc\",\"tool\":\"rm\",\"arguments\":{}}",
                                  "{\"type\":\"approval_request\",\"tool\":\"rm\",\"arguments\":{}}",
                                  "{\"type\":\"approval_request\",\"id\":\"t1\",\"tool\":\"rm -rf /\",\"arguments\":{}}",
                                  "{\"type\":\"approval_request\",\"id\":\"t2\",\"tool\":\"rm\",\"arguments\":[\"/\"]}",
                                  "{\"type\":\"approval_request\",\"id\":\"t3\",\"tool\":\"rm\",\"arguments\":{},\"destructive\":\"no\"}"));
  manager = ars_new_manager (f->root, NULL, SUBAGENT_PERMISSION_MODE_PROMPT);
  queue = host_queue (manager, &added);
  result = subagent_manager_run (manager, "t", options, NULL, &error);
  g_assert_no_error (error);

  /* No usable id: no answer at all (the child cannot tell what it is for). */
  answers = ars_answers_of (result);
  g_assert_cmpuint (answers->len, ==, 3);
  ars_assert_answer (answers->pdata[0], "t1", FALSE, "Invalid approval request: approval_request: “tool” must be a tool name");
  ars_assert_answer (answers->pdata[1], "t2", FALSE, "“arguments” must be an object");
  ars_assert_answer (answers->pdata[2], "t3", FALSE, "“destructive” must be true or false");
  g_assert_cmpuint (added_count (&added), ==, 0);
  added_clear (queue, &added);
}

/* In eof mode no verdict could reach the child: nothing is put up. */
static void
test_eof_mode_puts_nothing_up (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(SubagentRunOptions) options = ars_asker_options (NULL);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  Added added;

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  manager = ars_new_manager (f->root, NULL, SUBAGENT_PERMISSION_MODE_PROMPT);
  subagent_command_runner_set_interactive_stdin (SUBAGENT_COMMAND_RUNNER (subagent_manager_get_runner (manager)),
                                                 FALSE);
  queue = host_queue (manager, &added);
  /* ... and the host says so, once, with the fix (issue 12 item 8). */
  g_test_expect_message ("Subagent", G_LOG_LEVEL_WARNING,
                         "*sent an approval request, but its stdin is closed (eof mode)*interactive: true*");
  result = subagent_manager_run (manager, "t", options, NULL, &error);
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_FAILED);
  g_assert_nonnull (strstr (subagent_run_result_get_final_answer (result), "stdin closed before an answer"));
  g_assert_cmpuint (added_count (&added), ==, 0);
  added_clear (queue, &added);
}

/* --- the queue answers ---------------------------------------------------- */

static void
test_prompt_asks_the_queue (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(SubagentApprovalRequest) request = NULL;
  g_autoptr(SubagentRunOptions) options = ars_asker_options (NULL);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GPtrArray) answers = NULL;
  g_autoptr(GError) error = NULL;
  Added added = { 0 };

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  manager = ars_new_manager (f->root, "approvals: { sink: memory, timeout_seconds: 600 }\n", SUBAGENT_PERMISSION_MODE_PROMPT);
  queue = subagent_manager_dup_approval_queue (manager, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_approval_queue_get_parent_run_id (queue), ==, subagent_manager_get_run_id (manager));
  g_assert_cmpuint (subagent_approval_queue_get_default_timeout (queue), ==, 600);
  g_mutex_init (&added.lock);
  added.ids = g_ptr_array_new_with_free_func (g_free);
  g_signal_connect (queue, "request-added", G_CALLBACK (on_request_added), &added);

  subagent_manager_run_async (manager, "write the motd", options, NULL, ars_on_run_done, &result);
  wait_for_added (&added, 1);
  request = subagent_approval_queue_get_request (queue, g_ptr_array_index (added.ids, 0));
  g_assert_cmpstr (subagent_approval_request_get_tool_name (request), ==, "write_file");
  g_assert_cmpstr (json_object_get_string_member (subagent_approval_request_get_tool_arguments (request), "path"),
                   ==, "/etc/motd");
  g_assert_cmpstr (subagent_approval_request_get_subagent_name (request), ==, "asker");
  g_assert_cmpstr (subagent_approval_request_get_permission_mode (request), ==, "prompt");
  g_assert_cmpstr (subagent_approval_request_get_isolation (request), ==, "shared");
  g_assert_cmpuint (subagent_approval_request_get_timeout_seconds (request), ==, 600);
  g_assert_true (subagent_approval_queue_approve (queue, subagent_approval_request_get_request_id (request), "test"));
  ars_wait_for_result (&result);

  g_assert_cmpstr (subagent_approval_request_get_subagent_id (request), ==, subagent_run_result_get_run_id (result));
  answers = ars_answers_of (result);
  g_assert_cmpuint (answers->len, ==, 1);
  ars_assert_answer (answers->pdata[0], "req-1", TRUE, "Approved");
  g_assert_cmpint (subagent_approval_request_get_status (request), ==, SUBAGENT_APPROVAL_STATUS_APPROVED);

  g_signal_handlers_disconnect_by_data (queue, &added);
  g_ptr_array_unref (added.ids);
  g_mutex_clear (&added.lock);
}

static int
compare_answer_ids (gconstpointer a, gconstpointer b)
{
  return strcmp (json_object_get_string_member (*(JsonObject **) a, "id"),
                 json_object_get_string_member (*(JsonObject **) b, "id"));
}

static void
test_two_requests_in_flight (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(SubagentRunOptions) options = ars_asker_options (NULL);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GPtrArray) answers = NULL;
  g_autoptr(GPtrArray) pending = NULL;
  const char *first_id, *second_id;
  Added added;

  ars_write_asker (f->root, 2, ARS_SPECS ("first", "second"));
  manager = ars_new_manager (f->root, NULL, SUBAGENT_PERMISSION_MODE_PROMPT);
  queue = host_queue (manager, &added);
  subagent_manager_run_async (manager, "two things", options, NULL, ars_on_run_done, &result);
  wait_for_added (&added, 2);
  pending = subagent_approval_queue_list_pending (queue);
  g_assert_cmpuint (pending->len, ==, 2);
  /* Oldest first; tell them apart by what they write. */
  first_id = subagent_approval_request_get_request_id (pending->pdata[0]);
  second_id = subagent_approval_request_get_request_id (pending->pdata[1]);
  if (g_str_equal (json_object_get_string_member (subagent_approval_request_get_tool_arguments (pending->pdata[0]), "text"),
                   "hello from second"))
    {
      const char *swap = first_id;
      first_id = second_id;
      second_id = swap;
    }
  /* Answered in the other order, each verdict reaches its own request. */
  g_assert_true (subagent_approval_queue_approve (queue, second_id, "test"));
  g_assert_true (subagent_approval_queue_deny (queue, first_id, "one at a time", "test"));
  ars_wait_for_result (&result);

  answers = ars_answers_of (result);
  g_assert_cmpuint (answers->len, ==, 2);
  g_ptr_array_sort (answers, compare_answer_ids);
  ars_assert_answer (answers->pdata[0], "first", FALSE, "one at a time");
  ars_assert_answer (answers->pdata[1], "second", TRUE, "Approved");
  added_clear (queue, &added);
}

static void
test_cancel_marks_request_cancelled (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(SubagentApprovalRequest) request = NULL;
  g_autoptr(SubagentRunOptions) options = ars_asker_options (NULL);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  Added added;

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  manager = ars_new_manager (f->root, NULL, SUBAGENT_PERMISSION_MODE_PROMPT);
  queue = host_queue (manager, &added);
  subagent_manager_run_async (manager, "wait", options, cancellable, ars_on_run_done, &result);
  wait_for_added (&added, 1);
  g_cancellable_cancel (cancellable);
  ars_wait_for_result (&result);

  /* Cancelled, or partial if the child printed something as its stdin closed. */
  g_assert_cmpstr (subagent_run_result_get_stop_reason (result), ==, SUBAGENT_STOP_REASON_CANCELLED);
  /* The run reported its end only once its request was cancelled. */
  request = subagent_approval_queue_get_request (queue, g_ptr_array_index (added.ids, 0));
  g_assert_cmpint (subagent_approval_request_get_status (request), ==, SUBAGENT_APPROVAL_STATUS_CANCELLED);
  g_assert_nonnull (strstr (subagent_approval_request_get_denial_reason (request), "cancelled"));
  added_clear (queue, &added);
}

static void
test_run_timeout_marks_request_cancelled (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(SubagentApprovalRequest) request = NULL;
  g_autoptr(SubagentRunOptions) options = ars_asker_options (NULL);
  g_autoptr(SubagentRunResult) result = NULL;
  Added added;

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  manager = ars_new_manager (f->root, NULL, SUBAGENT_PERMISSION_MODE_PROMPT);
  queue = host_queue (manager, &added);
  subagent_run_options_set_timeout_seconds (options, 1);
  subagent_manager_run_async (manager, "wait", options, NULL, ars_on_run_done, &result);
  ars_wait_for_result (&result);

  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_FAILED);
  g_assert_nonnull (strstr (subagent_run_result_get_message (result), "wall-clock limit"));
  g_assert_cmpuint (added_count (&added), ==, 1);
  request = subagent_approval_queue_get_request (queue, g_ptr_array_index (added.ids, 0));
  g_assert_cmpint (subagent_approval_request_get_status (request), ==, SUBAGENT_APPROVAL_STATUS_CANCELLED);
  added_clear (queue, &added);
}

/* approvals.timeout_seconds reaches the requests: no verdict, a denial. */
static void
test_queue_timeout_denies (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(JsonObject) answer = NULL;

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  manager = ars_new_manager (f->root, "approvals: { sink: memory, timeout_seconds: 1 }\n", SUBAGENT_PERMISSION_MODE_PROMPT);
  answer = ars_run_for_one_answer (manager, NULL);
  ars_assert_answer (answer, "req-1", FALSE, "(timeout): No verdict within 1 s");
}

/* --- an in-process runner asks through the same handler ------------------- */

/* A runner whose "tool executor" asks the handler for one destructive call
 * in a thread of its own, and ends the run as soon as the request is up,
 * leaving it pending: the manager must cancel it. */
#define TYPE_ASKING_RUNNER (asking_runner_get_type ())
G_DECLARE_FINAL_TYPE (AskingRunner, asking_runner, ASKING, RUNNER, GObject)

struct _AskingRunner
{
  GObject parent_instance;
  GThread *thread;
  SubagentApprovalHandler *handler;
  GTask *task;                    /* until the request is up */
  gulong added_id;
  SubagentApprovalDecision decision;
  char *reason;
};

static void asking_runner_iface_init (SubagentRunnerInterface *iface);
G_DEFINE_FINAL_TYPE_WITH_CODE (AskingRunner, asking_runner, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SUBAGENT_TYPE_RUNNER, asking_runner_iface_init))

static gpointer
asking_thread (gpointer data)
{
  AskingRunner *self = data;
  g_autoptr(JsonObject) arguments = json_object_new ();

  json_object_set_string_member (arguments, "branch", "main");
  self->decision = subagent_approval_handler_check (self->handler, "delete_branch", arguments, TRUE, FALSE,
                                                    NULL, &self->reason);
  return NULL;
}

/* On the asking thread, once the request is stored. */
static void
asking_on_added (SubagentApprovalQueue *queue, SubagentApprovalRequest *request, AskingRunner *self)
{
  GTask *task = g_steal_pointer (&self->task);

  if (task == NULL)
    return;
  g_task_return_pointer (task, subagent_run_outcome_new (SUBAGENT_STOP_REASON_COMPLETE, 1, 1, 0, "asked", "asked", ""),
                         g_object_unref);
  g_object_unref (task);
}

static void
asking_run_async (SubagentRunner *runner, SubagentRunContext *context, GCancellable *cancellable,
                  GAsyncReadyCallback callback, gpointer user_data)
{
  AskingRunner *self = ASKING_RUNNER (runner);
  SubagentApprovalQueue *queue;

  /* The route every runner finds on its context. */
  self->handler = g_object_ref (SUBAGENT_APPROVAL_HANDLER (subagent_run_context_get_approval_handler (context)));
  queue = subagent_approval_handler_get_queue (self->handler);
  g_assert_nonnull (queue);
  self->task = g_task_new (self, cancellable, callback, user_data);
  self->added_id = g_signal_connect (queue, "request-added", G_CALLBACK (asking_on_added), self);
  self->thread = g_thread_new ("asking", asking_thread, self);
}

static SubagentRunOutcome *
asking_run_finish (SubagentRunner *runner, GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
asking_runner_iface_init (SubagentRunnerInterface *iface)
{
  iface->run_async = asking_run_async;
  iface->run_finish = asking_run_finish;
}

static void
asking_runner_finalize (GObject *object)
{
  AskingRunner *self = ASKING_RUNNER (object);

  g_clear_object (&self->handler);
  g_free (self->reason);
  G_OBJECT_CLASS (asking_runner_parent_class)->finalize (object);
}

static void
asking_runner_class_init (AskingRunnerClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = asking_runner_finalize;
}

static void
asking_runner_init (AskingRunner *self)
{
}

static void
test_in_process_runner (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(AskingRunner) runner = g_object_new (TYPE_ASKING_RUNNER, NULL);
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  SubagentApprovalRequest *request;

  sat_write_file (f->root, ".subagent/agents/inproc.yaml", "name: inproc\n");
  manager = ars_new_manager (f->root, NULL, SUBAGENT_PERMISSION_MODE_PROMPT);
  subagent_manager_set_runner (manager, SUBAGENT_RUNNER (runner));
  subagent_manager_set_approval_sink (manager, sink);
  subagent_run_options_set_def_name (options, "inproc");
  result = subagent_manager_run (manager, "clean up branches", options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);

  /* The manager made its run's queue on the host's sink, and cancelled the
   * request the child left pending; the waiting call got a denial. */
  g_thread_join (g_steal_pointer (&runner->thread));
  g_signal_handler_disconnect (subagent_approval_handler_get_queue (runner->handler), runner->added_id);
  g_object_get (manager, "approval-queue", &queue, NULL);
  g_assert_true (subagent_approval_handler_get_queue (runner->handler) == queue);
  g_assert_true (subagent_approval_queue_get_sink (queue) == sink);
  g_assert_cmpint (runner->decision, ==, SUBAGENT_APPROVAL_DECISION_DENY);
  g_assert_nonnull (strstr (runner->reason, "cancelled"));
  stored = subagent_approval_sink_load (sink, subagent_manager_get_run_id (manager), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (stored->len, ==, 1);
  request = stored->pdata[0];
  g_assert_cmpstr (subagent_approval_request_get_tool_name (request), ==, "delete_branch");
  g_assert_cmpstr (subagent_approval_request_get_subagent_id (request), ==, subagent_run_result_get_run_id (result));
  g_assert_cmpint (subagent_approval_request_get_status (request), ==, SUBAGENT_APPROVAL_STATUS_CANCELLED);
}

/* The file sink is a plugin: a host whose children cannot ask maps none. */
static void
test_no_plugin_until_a_child_can_ask (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *root = sat_make_temp_dir ("approval-lazy");
      g_autoptr(SubagentManager) manager = NULL;
      g_autoptr(JsonObject) allowed = NULL;
      g_autoptr(JsonObject) timed_out = NULL;
      g_autofree char *maps_before = NULL;
      g_autofree char *maps_after = NULL;

      ars_write_asker (root, 1, ARS_SPECS ("req-1"));
      manager = ars_new_manager (root, "approvals: { timeout_seconds: 1 }\n", SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS);
      allowed = ars_run_for_one_answer (manager, NULL);
      ars_assert_answer (allowed, "req-1", TRUE, NULL);
      g_assert_true (g_file_get_contents ("/proc/self/maps", &maps_before, NULL, NULL));
      g_assert_null (strstr (maps_before, "libsubagent-approval-"));
      g_assert_false (ars_approvals_dir_exists (root));

      /* A child that can ask gets the file queue (the default sink). */
      subagent_manager_set_permission_mode (manager, SUBAGENT_PERMISSION_MODE_PROMPT);
      timed_out = ars_run_for_one_answer (manager, NULL);
      ars_assert_answer (timed_out, "req-1", FALSE, "No verdict within 1 s");
      g_assert_true (g_file_get_contents ("/proc/self/maps", &maps_after, NULL, NULL));
      g_assert_nonnull (strstr (maps_after, "libsubagent-approval-file"));
      g_assert_true (ars_approvals_dir_exists (root));
      g_clear_object (&manager);
      sat_rm_rf (root);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add ("/approval-routing/" path, Fixture, NULL, ars_fixture_setup, func, ars_fixture_teardown)
  ADD ("policy/sink-none-is-unattended", test_sink_none_is_unattended);
  ADD ("policy/host-marks-unattended", test_host_marks_unattended);
  ADD ("policy/read-only-refuses-without-asking", test_read_only_refuses_without_asking);
  ADD ("policy/allow-approves-without-asking", test_allow_approves_without_asking);
  ADD ("policy/request-classifies-its-call", test_request_classifies_its_call);
  ADD ("protocol/invalid-requests", test_invalid_requests);
  ADD ("protocol/eof-mode-puts-nothing-up", test_eof_mode_puts_nothing_up);
  ADD ("queue/prompt-asks-the-queue", test_prompt_asks_the_queue);
  ADD ("queue/two-requests-in-flight", test_two_requests_in_flight);
  ADD ("queue/cancel-marks-request-cancelled", test_cancel_marks_request_cancelled);
  ADD ("queue/run-timeout-marks-request-cancelled", test_run_timeout_marks_request_cancelled);
  ADD ("queue/queue-timeout-denies", test_queue_timeout_denies);
  ADD ("manager/in-process-runner-uses-the-handler", test_in_process_runner);
#undef ADD
  g_test_add_func ("/approval-routing/manager/no-plugin-until-a-child-can-ask", test_no_plugin_until_a_child_can_ask);
  return g_test_run ();
}
