/* test-approval-policy.c: the permission table and a child's approval handler.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <unistd.h>

#include "test-support.h"

#define A SUBAGENT_APPROVAL_REQUIREMENT_ALLOW
#define N SUBAGENT_APPROVAL_REQUIREMENT_NEEDS_APPROVAL
#define R SUBAGENT_APPROVAL_REQUIREMENT_REFUSE

static void
test_policy_table (void)
{
  /* The table of docs/approvals.md, every cell:
   * { mode, non-destructive inside, non-destructive outside, destructive inside, destructive outside } */
  static const struct {
    SubagentPermissionMode mode;
    SubagentApprovalRequirement cells[4];
  } table[] = {
    { SUBAGENT_PERMISSION_MODE_INHERIT,            { A, A, N, N } },
    { SUBAGENT_PERMISSION_MODE_READ_ONLY,          { A, A, R, R } },
    { SUBAGENT_PERMISSION_MODE_PROMPT,             { A, A, N, N } },
    { SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE,    { A, A, A, N } },
    { SUBAGENT_PERMISSION_MODE_ALLOW,              { A, A, A, A } },
    { SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS, { A, A, A, A } },
  };

  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    for (guint cell = 0; cell < 4; cell++)
      {
        gboolean destructive = cell >= 2;
        gboolean inside = cell % 2 == 0;
        SubagentApprovalRequirement got = subagent_approval_policy_evaluate (table[i].mode, destructive, inside);

        g_test_message ("%s destructive=%d inside=%d -> %s", subagent_permission_mode_to_string (table[i].mode),
                        destructive, inside, subagent_approval_requirement_to_string (got));
        g_assert_cmpint (got, ==, table[i].cells[cell]);
      }
}

#undef A
#undef N
#undef R

static void
test_effective_mode (void)
{
  /* Never looser than the parent, never inherit. */
  for (int parent = SUBAGENT_PERMISSION_MODE_READ_ONLY; parent <= SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS; parent++)
    for (int requested = SUBAGENT_PERMISSION_MODE_INHERIT; requested <= SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS; requested++)
      {
        SubagentPermissionMode mode = subagent_approval_policy_effective_mode (parent, requested, "worktree");

        g_assert_cmpint (mode, !=, SUBAGENT_PERMISSION_MODE_INHERIT);
        g_assert_cmpint (mode, <=, parent);
        if (requested != SUBAGENT_PERMISSION_MODE_INHERIT)
          g_assert_cmpint (mode, <=, requested);
      }
  g_assert_cmpint (subagent_approval_policy_effective_mode (SUBAGENT_PERMISSION_MODE_INHERIT,
                                                            SUBAGENT_PERMISSION_MODE_INHERIT, "docker"),
                   ==, SUBAGENT_PERMISSION_MODE_PROMPT);
  /* An isolated child gets workspace-write at most (issue 11, section 1). */
  g_assert_cmpint (subagent_approval_policy_effective_mode (SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS,
                                                            SUBAGENT_PERMISSION_MODE_ALLOW, "worktree"),
                   ==, SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE);
  g_assert_cmpint (subagent_approval_policy_effective_mode (SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS,
                                                            SUBAGENT_PERMISSION_MODE_INHERIT, "docker"),
                   ==, SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE);
  g_assert_cmpint (subagent_approval_policy_effective_mode (SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS,
                                                            SUBAGENT_PERMISSION_MODE_INHERIT, "shared"),
                   ==, SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS);
  /* `allow` is bounded by the isolation; shared has none. */
  g_assert_cmpint (subagent_approval_policy_effective_mode (SUBAGENT_PERMISSION_MODE_ALLOW,
                                                            SUBAGENT_PERMISSION_MODE_INHERIT, "shared"),
                   ==, SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE);
  g_assert_cmpint (subagent_approval_policy_effective_mode (SUBAGENT_PERMISSION_MODE_ALLOW,
                                                            SUBAGENT_PERMISSION_MODE_INHERIT, NULL),
                   ==, SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE);
  g_assert_cmpint (subagent_approval_policy_effective_mode (SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS,
                                                            SUBAGENT_PERMISSION_MODE_INHERIT, "shared"),
                   ==, SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS);
  /* A child asking for more than its parent gets the parent's mode. */
  g_assert_cmpint (subagent_approval_policy_effective_mode (SUBAGENT_PERMISSION_MODE_READ_ONLY,
                                                            SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS, "docker"),
                   ==, SUBAGENT_PERMISSION_MODE_READ_ONLY);
}

static void
test_unattended_denies_at_once (void)
{
  g_autoptr(SubagentApprovalHandler) handler =
    subagent_approval_handler_new (NULL, "child-u", "writer", 0, "worktree", NULL, SUBAGENT_PERMISSION_MODE_PROMPT);
  g_autofree char *reason = NULL;
  gint64 start = g_get_monotonic_time ();
  SubagentApprovalDecision decision;

  g_assert_true (subagent_approval_handler_is_unattended (handler));
  decision = subagent_approval_handler_check (handler, "rm", NULL, TRUE, TRUE, NULL, &reason);
  g_assert_cmpint (decision, ==, SUBAGENT_APPROVAL_DECISION_DENY);
  g_assert_cmpstr (reason, ==, "no approver can reach this subagent");
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC / 10);

  /* What the policy allows needs no approver. */
  g_clear_pointer (&reason, g_free);
  decision = subagent_approval_handler_check (handler, "ls", NULL, FALSE, TRUE, NULL, &reason);
  g_assert_cmpint (decision, ==, SUBAGENT_APPROVAL_DECISION_ALLOW);
  g_assert_null (reason);
}

static void
count_added (SubagentApprovalQueue   *queue,
             SubagentApprovalRequest *request,
             guint                   *count)
{
  (*count)++;
}

static void
test_handler_policy_without_asking (void)
{
  g_autofree char *run = g_strdup_printf ("policy-%d", (int) getpid ());
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, NULL, NULL);
  g_autoptr(SubagentApprovalHandler) read_only =
    subagent_approval_handler_new (queue, "child-r", "reader", SUBAGENT_NO_BATCH_INDEX, "worktree", NULL,
                                   SUBAGENT_PERMISSION_MODE_READ_ONLY);
  g_autoptr(SubagentApprovalHandler) workspace =
    subagent_approval_handler_new (queue, "child-w", "writer", 1, "worktree", NULL,
                                   SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE);
  g_autofree char *reason = NULL;
  guint added = 0;

  g_signal_connect (queue, "request-added", G_CALLBACK (count_added), &added);
  g_assert_false (subagent_approval_handler_is_unattended (read_only));
  g_assert_cmpint (subagent_approval_handler_check (read_only, "rm", NULL, TRUE, TRUE, NULL, &reason),
                   ==, SUBAGENT_APPROVAL_DECISION_DENY);
  g_assert_nonnull (strstr (reason, "read-only"));
  g_assert_cmpint (subagent_approval_handler_check (read_only, "cat", NULL, FALSE, FALSE, NULL, NULL),
                   ==, SUBAGENT_APPROVAL_DECISION_ALLOW);
  g_assert_cmpint (subagent_approval_handler_check (workspace, "write", NULL, TRUE, TRUE, NULL, NULL),
                   ==, SUBAGENT_APPROVAL_DECISION_ALLOW);
  /* Refusals and allowed calls never reach the queue. */
  g_assert_cmpuint (added, ==, 0);

  g_signal_handlers_disconnect_by_data (queue, &added);
  subagent_approval_queue_release (run);
}

typedef struct {
  SubagentApprovalHandler *handler;
  const char *tool;
  JsonObject *arguments;
  GCancellable *cancellable;
  SubagentApprovalDecision decision;
  char *reason;
} Check;

static gpointer
check_thread (gpointer data)
{
  Check *check = data;

  check->decision = subagent_approval_handler_check (check->handler, check->tool, check->arguments, TRUE, FALSE,
                                                     check->cancellable, &check->reason);
  return NULL;
}

typedef struct {
  GMutex lock;
  GCond cond;
  SubagentApprovalRequest *request;
} Arrival;

static void
on_arrival (SubagentApprovalQueue   *queue,
            SubagentApprovalRequest *request,
            Arrival                 *arrival)
{
  g_mutex_lock (&arrival->lock);
  g_set_object (&arrival->request, request);
  g_cond_signal (&arrival->cond);
  g_mutex_unlock (&arrival->lock);
}

static SubagentApprovalRequest *
wait_arrival (Arrival *arrival)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  SubagentApprovalRequest *request;

  g_mutex_lock (&arrival->lock);
  while (arrival->request == NULL)
    g_assert_true (g_cond_wait_until (&arrival->cond, &arrival->lock, deadline));
  request = g_steal_pointer (&arrival->request);
  g_mutex_unlock (&arrival->lock);
  return request;
}

static void
test_handler_routes_to_queue (void)
{
  g_autofree char *run = g_strdup_printf ("route-%d", (int) getpid ());
  g_autoptr(SubagentApprovalSink) sink = subagent_memory_approval_sink_new ();
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, sink, NULL);
  g_autoptr(SubagentApprovalHandler) handler =
    subagent_approval_handler_new (queue, "child-7", "writer", 3, "worktree", "/tmp/wt-7",
                                   SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE);
  g_autoptr(JsonObject) arguments = json_object_new ();
  Arrival arrival = { 0 };
  Check check = { handler, "write_file", arguments, NULL, 0, NULL };
  GThread *thread;
  SubagentApprovalRequest *request;

  json_object_set_string_member (arguments, "path", "/etc/hosts");
  g_mutex_init (&arrival.lock);
  g_cond_init (&arrival.cond);
  g_signal_connect (queue, "request-added", G_CALLBACK (on_arrival), &arrival);

  /* Outside the workspace: needs an approval, which is given. */
  thread = g_thread_new ("child", check_thread, &check);
  request = wait_arrival (&arrival);
  g_assert_cmpstr (subagent_approval_request_get_subagent_id (request), ==, "child-7");
  g_assert_cmpstr (subagent_approval_request_get_parent_run_id (request), ==, run);
  g_assert_cmpstr (subagent_approval_request_get_subagent_name (request), ==, "writer");
  g_assert_cmpstr (subagent_approval_request_get_tool_name (request), ==, "write_file");
  g_assert_cmpstr (json_object_get_string_member (subagent_approval_request_get_tool_arguments (request), "path"),
                   ==, "/etc/hosts");
  g_assert_cmpint (subagent_approval_request_get_batch_index (request), ==, 3);
  g_assert_cmpstr (subagent_approval_request_get_isolation (request), ==, "worktree");
  g_assert_cmpstr (subagent_approval_request_get_worktree_path (request), ==, "/tmp/wt-7");
  g_assert_cmpstr (subagent_approval_request_get_permission_mode (request), ==, "workspace-write");
  g_assert_cmpuint (subagent_approval_request_get_timeout_seconds (request), ==, 180);
  g_assert_true (subagent_approval_queue_approve (queue, subagent_approval_request_get_request_id (request), "alice"));
  g_thread_join (thread);
  g_clear_object (&request);
  g_assert_cmpint (check.decision, ==, SUBAGENT_APPROVAL_DECISION_ALLOW);
  g_assert_null (check.reason);

  /* Denied: the handler says why. */
  thread = g_thread_new ("child", check_thread, &check);
  request = wait_arrival (&arrival);
  g_assert_true (subagent_approval_queue_deny (queue, subagent_approval_request_get_request_id (request),
                                               "not that file", "alice"));
  g_thread_join (thread);
  g_clear_object (&request);
  g_assert_cmpint (check.decision, ==, SUBAGENT_APPROVAL_DECISION_DENY);
  g_assert_nonnull (strstr (check.reason, "not that file"));
  g_clear_pointer (&check.reason, g_free);

  /* The child ends while waiting: its pending requests are cancelled. */
  thread = g_thread_new ("child", check_thread, &check);
  request = wait_arrival (&arrival);
  g_assert_cmpuint (subagent_approval_handler_cancel_pending (handler), ==, 1);
  g_thread_join (thread);
  g_clear_object (&request);
  g_assert_cmpint (check.decision, ==, SUBAGENT_APPROVAL_DECISION_DENY);
  g_assert_nonnull (strstr (check.reason, "cancelled"));
  g_clear_pointer (&check.reason, g_free);

  g_signal_handlers_disconnect_by_data (queue, &arrival);
  g_mutex_clear (&arrival.lock);
  g_cond_clear (&arrival.cond);
  subagent_approval_queue_release (run);
}

static void
test_handler_timeout_from_queue_default (void)
{
  g_autofree char *run = g_strdup_printf ("handler-timeout-%d", (int) getpid ());
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, NULL, NULL);
  g_autoptr(SubagentApprovalHandler) handler =
    subagent_approval_handler_new (queue, "child-t", "writer", 0, "docker", NULL, SUBAGENT_PERMISSION_MODE_PROMPT);
  g_autofree char *reason = NULL;
  gint64 start = g_get_monotonic_time ();

  subagent_approval_queue_set_default_timeout (queue, 1);
  g_assert_cmpint (subagent_approval_handler_check (handler, "rm", NULL, TRUE, TRUE, NULL, &reason),
                   ==, SUBAGENT_APPROVAL_DECISION_DENY);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, G_USEC_PER_SEC - 1000);
  g_assert_nonnull (strstr (reason, "timeout"));
  subagent_approval_queue_release (run);
}

static void
test_handler_cancellable (void)
{
  g_autofree char *run = g_strdup_printf ("handler-cancel-%d", (int) getpid ());
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_get (run, NULL, NULL);
  g_autoptr(SubagentApprovalHandler) handler =
    subagent_approval_handler_new (queue, "child-c", "writer", 0, "docker", NULL, SUBAGENT_PERMISSION_MODE_PROMPT);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autofree char *reason = NULL;

  /* Already cancelled: the request is cancelled, never approved. */
  g_cancellable_cancel (cancellable);
  g_assert_cmpint (subagent_approval_handler_check (handler, "rm", NULL, TRUE, TRUE, cancellable, &reason),
                   ==, SUBAGENT_APPROVAL_DECISION_DENY);
  g_assert_nonnull (strstr (reason, "cancelled"));
  subagent_approval_queue_release (run);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/approval/policy/table", test_policy_table);
  g_test_add_func ("/approval/policy/effective-mode", test_effective_mode);
  g_test_add_func ("/approval/handler/unattended-denies-at-once", test_unattended_denies_at_once);
  g_test_add_func ("/approval/handler/policy-decides-without-asking", test_handler_policy_without_asking);
  g_test_add_func ("/approval/handler/routes-to-queue", test_handler_routes_to_queue);
  g_test_add_func ("/approval/handler/timeout-from-queue-default", test_handler_timeout_from_queue_default);
  g_test_add_func ("/approval/handler/cancellable", test_handler_cancellable);
  return g_test_run ();
}
