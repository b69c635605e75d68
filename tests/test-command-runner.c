/* test-command-runner.c: SubagentCommandRunner running real child programs
 * (tests/fixtures/children/) inside a `shared` isolation in a temp dir.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-support.h"

typedef struct {
  char *root;
  SubagentIsolationProvider *provider;
  SubagentIsolationContext *isolation;
  SubagentCommandRunner *runner;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autofree char *key = subagent_isolation_new_session_key ("parent-1", "child");

  f->root = sat_make_temp_dir ("cmd-runner");
  f->provider = subagent_shared_isolation_new ();
  request = subagent_isolation_request_new (f->root, SUBAGENT_ISOLATION_SHARED, key);
  f->isolation = subagent_isolation_provider_prepare (f->provider, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (f->isolation);
  f->runner = subagent_command_runner_new ();
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  subagent_isolation_context_cleanup (f->isolation);
  g_clear_object (&f->isolation);
  g_clear_object (&f->provider);
  g_clear_object (&f->runner);
  sat_rm_rf (f->root);
  g_free (f->root);
}

static char *
child_path (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "fixtures", "children", name, NULL);
}

/* A definition whose command is the fixture @child with an optional argument. */
static SubagentDef *
new_def (const char *name,
         const char *child,
         const char *arg,
         const char *system_prompt)
{
  g_autofree char *path = child ? child_path (child) : NULL;
  const char *argv[] = { path, arg, NULL };

  return g_object_new (SUBAGENT_TYPE_DEF,
                       "name", name,
                       "command", path ? argv : NULL,
                       "system-prompt", system_prompt,
                       NULL);
}

static SubagentRunContext *
new_context (Fixture     *f,
             SubagentDef *def,
             const char  *task,
             guint        timeout_seconds,
             double       max_cost_cents)
{
  return g_object_new (SUBAGENT_TYPE_RUN_CONTEXT,
                       "definition", def,
                       "isolation", f->isolation,
                       "task", task,
                       "parent-run-id", "parent-1",
                       "depth", 1,
                       "timeout-seconds", timeout_seconds,
                       "max-cost-cents", max_cost_cents,
                       NULL);
}

static void
store_result (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

static SubagentRunOutcome *
wait_outcome (Fixture        *f,
              GAsyncResult  **result,
              GError        **error)
{
  SubagentRunOutcome *outcome;

  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
  outcome = subagent_runner_run_finish (SUBAGENT_RUNNER (f->runner), *result, error);
  g_clear_object (result);
  return outcome;
}

static SubagentRunOutcome *
run_and_wait (Fixture            *f,
              SubagentRunContext *context,
              GCancellable       *cancellable,
              GError            **error)
{
  GAsyncResult *result = NULL;

  subagent_runner_run_async (SUBAGENT_RUNNER (f->runner), context, cancellable, store_result, &result);
  return wait_outcome (f, &result, error);
}

/* Blocks until the child writes to the workspace's FIFO: it is then running
 * and has recorded its pids. */
static void
wait_child_ready (Fixture *f)
{
  g_autofree char *fifo = g_build_filename (f->root, "ready.fifo", NULL);
  char buffer[64];
  int fd;

  fd = open (fifo, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  while (read (fd, buffer, sizeof buffer) > 0)
    ;
  close (fd);
}

static void
make_ready_fifo (Fixture *f)
{
  g_autofree char *fifo = g_build_filename (f->root, "ready.fifo", NULL);

  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
}

static void
read_pids (Fixture *f,
           int     *shell,
           int     *grandchild)
{
  g_autofree char *text = sat_read_file (f->root, "pids");

  g_assert_nonnull (text);
  g_assert_cmpint (sscanf (text, "%d %d", shell, grandchild), ==, 2);
}

/* Running means: has a /proc entry and is not a zombie. */
static gboolean
pid_is_running (int pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *stat = NULL;
  const char *paren;
  char state = 'X';

  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return FALSE;
  paren = strrchr (stat, ')');
  if (paren == NULL || sscanf (paren + 1, " %c", &state) != 1)
    return FALSE;
  return state != 'Z' && state != 'X';
}

/* A process the runner killed may still be tearing down when the run
 * returns (its pipes close before it becomes a zombie). Wait for the end
 * through a pidfd, which becomes readable when the process has exited;
 * a `sleep 300` nobody killed would not end within the bound. */
static void
assert_process_ends (int pid)
{
  struct pollfd pfd;
  int fd = (int) syscall (SYS_pidfd_open, pid, 0);

  if (fd < 0)
    {
      g_assert_cmpint (errno, ==, ESRCH);   /* already reaped */
      return;
    }
  pfd.fd = fd;
  pfd.events = POLLIN;
  pfd.revents = 0;
  g_assert_cmpint (poll (&pfd, 1, 10000), ==, 1);
  close (fd);
  g_assert_false (pid_is_running (pid));
}

static void
test_plain_stdout_answer (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("plain", "echo-task.sh", NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "Do the thing", 0, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = run_and_wait (f, context, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, SUBAGENT_STOP_REASON_COMPLETE);
  g_assert_cmpint (subagent_run_outcome_get_status (outcome), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_run_outcome_get_final_answer (outcome), ==, "plain answer");
  g_assert_cmpstr (subagent_run_outcome_get_output (outcome), ==, "  plain answer  ");
  g_assert_cmpstr (subagent_run_outcome_get_message (outcome), ==, "");
}

/* Runs @argv with @task on its stdin and checks that it printed the
 * cksum of exactly @task's bytes (the task ends with a newline: none is
 * added). */
static void
assert_child_read_task (Fixture      *f,
                        const char  **argv,
                        GString      *task)
{
  g_autoptr(SubagentDef) def = g_object_new (SUBAGENT_TYPE_DEF, "name", "counter", "command", argv, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, task->str, 0, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = run_and_wait (f, context, NULL, &error);
  g_autofree char *expected = NULL;
  g_autofree char *path = g_build_filename (f->root, "task.txt", NULL);
  g_autofree char *command = NULL;
  g_autofree char *standard_output = NULL;
  int status;

  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, SUBAGENT_STOP_REASON_COMPLETE);
  g_assert_true (g_file_set_contents (path, task->str, task->len, NULL));
  command = g_strdup_printf ("/bin/sh -c 'cksum < \"%s\"'", path);
  g_assert_true (g_spawn_command_line_sync (command, &standard_output, NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  expected = g_strstrip (g_steal_pointer (&standard_output));
  g_assert_cmpstr (subagent_run_outcome_get_final_answer (outcome), ==, expected);
}

/* A task of @length bytes, lines of text ending in a newline. */
static GString *
make_task (gsize length)
{
  GString *task = g_string_sized_new (length);

  for (guint i = 0; task->len < length; i++)
    g_string_append_printf (task, "line %u\n", i);
  g_string_truncate (task, length - 1);
  g_string_append_c (task, '\n');
  return task;
}

/* A task larger than a pipe's buffer reaches the child whole, byte for
 * byte: the stdin writer waits for the pipe to drain between writes (here
 * the child sleeps before reading, so the pipe fills first). */
static void
test_large_stdin_arrives_whole (Fixture       *f,
                                gconstpointer  data)
{
  const char *argv[] = { "/bin/sh", "-c", "sleep 0.2; cksum", NULL };
  g_autoptr(GString) task = make_task (3 * 1024 * 1024 - 32);

  assert_child_read_task (f, argv, task);
}

/* Around PIPE_BUF, where the text stops being put in the pipe before the
 * child starts and goes through the writer instead: whole either way. */
static void
test_stdin_around_pipe_buf (Fixture       *f,
                            gconstpointer  data)
{
  const char *argv[] = { "cksum", NULL };
  const gsize lengths[] = { 1, PIPE_BUF - 1, PIPE_BUF, PIPE_BUF + 1, 2 * PIPE_BUF };

  for (guint i = 0; i < G_N_ELEMENTS (lengths); i++)
    {
      g_autoptr(GString) task = make_task (lengths[i]);

      g_test_message ("a task of %zu bytes", lengths[i]);
      g_assert_cmpuint (task->len, ==, lengths[i]);
      assert_child_read_task (f, argv, task);
    }
}

/* A child on the host starts in the child root, with an empty signal mask
 * and no ignored signals whatever the host does, and a command name is
 * looked up in PATH. */
static void
test_host_child_starts_clean (Fixture       *f,
                              gconstpointer  data)
{
  /* grep reads its own status: the shell, waiting for a child, may have
   * blocked signals of its own for a moment. */
  const char *argv[] = { "sh", "-c", "pwd; exec grep -E '^Sig(Blk|Ign)' /proc/self/status", NULL };
  g_autoptr(SubagentDef) def = g_object_new (SUBAGENT_TYPE_DEF, "name", "clean", "command", argv, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "Report", 0, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = NULL;
  g_autofree char *root = realpath (f->root, NULL);
  g_autofree char *expected = NULL;
  void (*old_pipe) (int) = signal (SIGPIPE, SIG_IGN);
  sigset_t block, old_mask;
  const char *answer;
  guint64 ignored;

  sigemptyset (&block);
  sigaddset (&block, SIGUSR1);
  pthread_sigmask (SIG_BLOCK, &block, &old_mask);
  outcome = run_and_wait (f, context, NULL, &error);
  pthread_sigmask (SIG_SETMASK, &old_mask, NULL);
  signal (SIGPIPE, old_pipe);

  g_assert_no_error (error);
  g_assert_cmpint (subagent_run_outcome_get_status (outcome), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  answer = subagent_run_outcome_get_final_answer (outcome);
  expected = g_strdup_printf ("%s\nSigBlk:\t0000000000000000\nSigIgn:\t", root);
  if (!g_str_has_prefix (answer, expected))
    g_error ("Expected the child to report “%s…”, it said “%s”", expected, answer);
  /* glibc's posix_spawn leaves its two reserved signals (32, 33: bits 31
   * and 32) ignored; nothing a program may use. */
  ignored = g_ascii_strtoull (answer + strlen (expected), NULL, 16);
  g_assert_cmphex (ignored & ~(G_GUINT64_CONSTANT (3) << 31), ==, 0);
}

/* With the host's own standard streams closed, the pipes' descriptors are
 * the low ones; the child still gets each pipe on the right stream. */
static void
test_host_child_with_std_streams_closed (Fixture       *f,
                                         gconstpointer  data)
{
  if (g_test_subprocess ())
    {
      g_autoptr(SubagentDef) def = new_def ("plain", "echo-task.sh", NULL, NULL);
      g_autoptr(SubagentRunContext) context = new_context (f, def, "Closed streams", 0, 0);
      g_autoptr(GError) error = NULL;
      g_autoptr(SubagentRunOutcome) outcome = NULL;
      g_autofree char *stdin_text = NULL;

      close (STDIN_FILENO);
      close (STDOUT_FILENO);
      outcome = run_and_wait (f, context, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (subagent_run_outcome_get_final_answer (outcome), ==, "plain answer");
      stdin_text = sat_read_file (f->root, "stdin.txt");
      g_assert_cmpstr (stdin_text, ==, "Closed streams\n");
      g_printerr ("child ok\n");
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*child ok*");
}

static void
test_system_prompt_prefix (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("prompted", "echo-task.sh", NULL, "You are a careful tester.");
  g_autoptr(SubagentRunContext) context = new_context (f, def, "Check the build", 0, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = run_and_wait (f, context, NULL, &error);
  g_autofree char *stdin_text = sat_read_file (f->root, "stdin.txt");

  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, "complete");
  g_assert_cmpstr (stdin_text, ==, "You are a careful tester.\n\nCheck the build\n");
}

static void
record_usage (SubagentRunContext *context,
              guint               iterations,
              guint               tool_calls,
              double              cost_cents,
              GString            *reports)
{
  g_string_append_printf (reports, "%u/%u/%.2f;", iterations, tool_calls, cost_cents);
}

static void
test_json_usage_and_final (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("protocol", "protocol.sh", NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "go", 0, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) reports = g_string_new (NULL);
  g_autoptr(SubagentRunOutcome) outcome = NULL;

  /* Running totals are reported as they come. */
  g_signal_connect (context, "usage", G_CALLBACK (record_usage), reports);
  outcome = run_and_wait (f, context, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (reports->str, ==, "1/1/0.50;2/3/1.50;");
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, "complete");
  g_assert_cmpstr (subagent_run_outcome_get_final_answer (outcome), ==, "the answer");
  g_assert_cmpuint (subagent_run_outcome_get_iterations (outcome), ==, 2);
  g_assert_cmpuint (subagent_run_outcome_get_tool_calls (outcome), ==, 3);
  g_assert_cmpfloat (subagent_run_outcome_get_cost_cents (outcome), ==, 1.5);
  /* Non-protocol lines, unknown message types included, are output. */
  g_assert_cmpstr (subagent_run_outcome_get_output (outcome), ==,
                   "thinking about it\nnot json {\n{\"type\":\"something-new\",\"x\":1}");
}

static void
add_tool (SubagentSimpleToolRegistry *registry,
          const char                 *name)
{
  g_autoptr(SubagentTool) tool = subagent_tool_new (name, "a test tool", NULL, FALSE, NULL, NULL, NULL);

  subagent_simple_tool_registry_add (registry, tool);
}

static void
test_environment (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("envdef", "env.sh", NULL, NULL);
  g_autoptr(SubagentSimpleToolRegistry) tools = subagent_simple_tool_registry_new ();
  g_autoptr(SubagentRunContext) context = NULL;
  g_autoptr(SubagentRunOutcome) outcome = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GHashTable) vars = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_auto(GStrv) lines = NULL;

  add_tool (tools, "beta");
  add_tool (tools, "alpha");
  context = g_object_new (SUBAGENT_TYPE_RUN_CONTEXT,
                          "definition", def, "isolation", f->isolation, "task", "t",
                          "run-id", "run-env-1", "parent-run-id", "parent-env", "depth", 2,
                          "tools", tools, "permission-mode", SUBAGENT_PERMISSION_MODE_READ_ONLY,
                          "max-iterations", 7, "max-tool-calls", 9, "batch-index", 3, "max-cost-cents", 250.5,
                          NULL);
  /* A host variable the run replaces appears once, with the run's value;
   * one that only shares a replaced name's first letters stays. */
  g_setenv ("SUBAGENT_DEPTH", "99", TRUE);
  g_setenv ("SUBAGENT_DEPTHS", "kept", TRUE);
  /* main() put the approval signing key in our environment; it must never
   * reach a child, and the host erases it before it starts one. */
  outcome = run_and_wait (f, context, NULL, &error);
  g_unsetenv ("SUBAGENT_DEPTH");
  g_unsetenv ("SUBAGENT_DEPTHS");
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, "complete");

  lines = g_strsplit (subagent_run_outcome_get_output (outcome), "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *eq = strchr (lines[i], '=');
      g_autofree char *name = NULL;

      g_assert_nonnull (eq);
      name = g_strndup (lines[i], eq - lines[i]);
      g_assert_false (g_hash_table_contains (vars, name));  /* each name once */
      g_hash_table_insert (vars, g_steal_pointer (&name), g_strdup (eq + 1));
    }
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_RUN_ID"), ==, "run-env-1");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_PARENT_RUN_ID"), ==, "parent-env");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_DEPTH"), ==, "2");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_DEPTHS"), ==, "kept");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_MAX_COST_CENTS"), ==, "250.50");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_DEF_NAME"), ==, "envdef");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_CHILD_ROOT"), ==,
                   subagent_isolation_context_get_child_root (f->isolation));
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_MAX_ITERATIONS"), ==, "7");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_MAX_TOOL_CALLS"), ==, "9");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_PERMISSION_MODE"), ==, "read-only");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_TOOLS"), ==, "alpha,beta");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_BATCH_INDEX"), ==, "3");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_ISOLATION"), ==, "shared");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_STDIN_MODE"), ==, "eof");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_TASK_BYTES"), ==, "2");
  g_assert_cmpstr (g_hash_table_lookup (vars, "SUBAGENT_PROTOCOL"), ==, "1");
  g_assert_false (g_hash_table_contains (vars, "SUBAGENT_APPROVAL_HMAC_KEY"));
}

static void
test_nonzero_exit (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("failing", "fail.sh", NULL, NULL);
  /* Bigger than a pipe buffer, so writing it hits the closed pipe: the host must survive. */
  g_autofree char *big_task = g_strnfill (1024 * 1024, 'x');
  g_autoptr(SubagentRunContext) context = new_context (f, def, big_task, 0, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = run_and_wait (f, context, NULL, &error);
  const char *message;

  g_assert_no_error (error);
  message = subagent_run_outcome_get_message (outcome);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, SUBAGENT_STOP_REASON_ERROR);
  g_assert_cmpint (subagent_run_outcome_get_status (outcome), ==, SUBAGENT_RUN_STATUS_FAILED);
  g_assert_nonnull (strstr (message, "exited with status 3"));
  g_assert_nonnull (strstr (message, "something broke"));
  g_assert_nonnull (strstr (message, "failing"));
  g_assert_cmpstr (subagent_run_outcome_get_output (outcome), ==, "partial output");
}

static void
test_killed_by_signal (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("doomed", "self-kill.sh", NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "t", 0, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = run_and_wait (f, context, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, SUBAGENT_STOP_REASON_ERROR);
  g_assert_nonnull (strstr (subagent_run_outcome_get_message (outcome), "killed by signal 9"));
}

static void
test_timeout_kills_child_and_grandchild (Fixture       *f,
                                         gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("sleepy", "hang.sh", NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "t", 1, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = NULL;
  GAsyncResult *result = NULL;
  gint64 start = g_get_monotonic_time ();
  int shell, grandchild;

  make_ready_fifo (f);
  subagent_runner_run_async (SUBAGENT_RUNNER (f->runner), context, NULL, store_result, &result);
  wait_child_ready (f);
  read_pids (f, &shell, &grandchild);
  g_assert_true (pid_is_running (grandchild));
  outcome = wait_outcome (f, &result, &error);

  g_assert_no_error (error);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 15 * G_USEC_PER_SEC);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, SUBAGENT_STOP_REASON_TIMEOUT);
  g_assert_cmpint (subagent_run_outcome_get_status (outcome), ==, SUBAGENT_RUN_STATUS_FAILED);
  g_assert_nonnull (strstr (subagent_run_outcome_get_message (outcome), "wall-clock limit of 1 s"));
  assert_process_ends (shell);
  assert_process_ends (grandchild);
}

static void
test_sigkill_after_grace (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("stubborn", "hang.sh", "stubborn", NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "t", 1, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = NULL;
  GAsyncResult *result = NULL;
  int shell, grandchild;

  subagent_command_runner_set_kill_grace_ms (f->runner, 200);
  make_ready_fifo (f);
  subagent_runner_run_async (SUBAGENT_RUNNER (f->runner), context, NULL, store_result, &result);
  wait_child_ready (f);
  read_pids (f, &shell, &grandchild);
  outcome = wait_outcome (f, &result, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, SUBAGENT_STOP_REASON_TIMEOUT);
  assert_process_ends (shell);
  assert_process_ends (grandchild);
}

static void
test_cancel_kills (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("cancelme", "hang.sh", NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "t", 0, 0);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = NULL;
  GAsyncResult *result = NULL;
  int shell, grandchild;

  make_ready_fifo (f);
  subagent_runner_run_async (SUBAGENT_RUNNER (f->runner), context, cancellable, store_result, &result);
  wait_child_ready (f);
  read_pids (f, &shell, &grandchild);
  g_cancellable_cancel (cancellable);
  outcome = wait_outcome (f, &result, &error);

  /* Cancellation is an outcome, not an error. */
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, SUBAGENT_STOP_REASON_CANCELLED);
  g_assert_cmpint (subagent_run_outcome_get_status (outcome), ==, SUBAGENT_RUN_STATUS_CANCELLED);
  assert_process_ends (shell);
  assert_process_ends (grandchild);
}

static void
test_cancelled_before_start (Fixture       *f,
                             gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("never", "echo-task.sh", NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "t", 0, 0);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = NULL;
  g_autofree char *stdin_text = NULL;

  g_cancellable_cancel (cancellable);
  outcome = run_and_wait (f, context, cancellable, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, "cancelled");
  g_assert_cmpint (subagent_run_outcome_get_status (outcome), ==, SUBAGENT_RUN_STATUS_CANCELLED);
  stdin_text = sat_read_file (f->root, "stdin.txt");
  g_assert_null (stdin_text);   /* the child never ran */
}

static void
run_usage_limit (Fixture    *f,
                 const char *field,
                 guint       max_iterations,
                 guint       max_tool_calls,
                 double      max_cost,
                 const char *expected_reason,
                 const char *expected_words)
{
  g_autoptr(SubagentDef) def = new_def ("greedy", "usage-loop.sh", field, NULL);
  g_autoptr(SubagentRunContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = NULL;
  gint64 start = g_get_monotonic_time ();

  context = g_object_new (SUBAGENT_TYPE_RUN_CONTEXT,
                          "definition", def, "isolation", f->isolation, "task", "t",
                          "max-iterations", max_iterations, "max-tool-calls", max_tool_calls,
                          "max-cost-cents", max_cost, NULL);
  outcome = run_and_wait (f, context, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 15 * G_USEC_PER_SEC);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, expected_reason);
  g_assert_cmpint (subagent_run_outcome_get_status (outcome), ==, SUBAGENT_RUN_STATUS_PARTIAL);
  g_assert_nonnull (strstr (subagent_run_outcome_get_message (outcome), expected_words));
}

static void
test_max_turns_iterations (Fixture       *f,
                           gconstpointer  data)
{
  run_usage_limit (f, "iterations", 3, 100, 0, SUBAGENT_STOP_REASON_MAX_TURNS, "max-iterations limit of 3");
}

static void
test_max_turns_tool_calls (Fixture       *f,
                           gconstpointer  data)
{
  run_usage_limit (f, "tool_calls", 100, 2, 0, SUBAGENT_STOP_REASON_MAX_TURNS, "max-tool-calls limit of 2");
}

static void
test_budget_stop (Fixture       *f,
                  gconstpointer  data)
{
  run_usage_limit (f, "cost_cents", 100, 100, 2.5, SUBAGENT_STOP_REASON_BUDGET, "budget of 2.50 cents");
}

static void
test_leftover_process_killed (Fixture       *f,
                              gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("messy", "leftover.sh", NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "t", 0, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = run_and_wait (f, context, NULL, &error);
  g_autofree char *pid_text = sat_read_file (f->root, "leftover.pid");

  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, "complete");
  g_assert_cmpstr (subagent_run_outcome_get_final_answer (outcome), ==, "done");
  g_assert_nonnull (pid_text);
  assert_process_ends (atoi (pid_text));
}

/* A daemon that left the child's process tree and closed its stdio is still
 * the run's: the exit sweep finds it by the run's token. */
static void
test_daemon_killed (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("daemonizer", "daemon.sh", NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "t", 0, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = run_and_wait (f, context, NULL, &error);
  g_autofree char *pid_text = sat_read_file (f->root, "daemon.pid");

  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, "complete");
  g_assert_nonnull (pid_text);
  g_assert_cmpint (atoi (pid_text), >, 1);
  assert_process_ends (atoi (pid_text));
}

/* A process that cleared its environment, left the session and was
 * reparented: with a cgroup per child (the default where the host may make
 * one) the end of the run kills it. Each round first runs a child that
 * leaves nothing, whose emptied cgroup the escaping child then reuses
 * (empty cgroups of shared runs are kept for the next child). Without a cgroup
 * (SUBAGENT_CHILD_CGROUP=0, the no-cgroup run of this program) nothing
 * finds it: the test then checks that it is still running and stops it. */
static void
test_escaped_process_killed_via_cgroup (Fixture       *f,
                                        gconstpointer  data)
{
  gboolean cgroup_off = g_strcmp0 (g_getenv ("SUBAGENT_CHILD_CGROUP"), "0") == 0;

  for (guint round = 0; round < 2; round++)
    {
      g_autoptr(SubagentDef) clean_def = new_def ("clean", "answer-task.sh", NULL, NULL);
      g_autoptr(SubagentRunContext) clean_context = new_context (f, clean_def, "t", 0, 0);
      g_autoptr(SubagentRunOutcome) clean_outcome = NULL;
      g_autoptr(SubagentDef) def = new_def ("escaper", "escape.sh", NULL, NULL);
      g_autoptr(SubagentRunContext) context = new_context (f, def, "t", 0, 0);
      g_autoptr(GError) error = NULL;
      g_autoptr(SubagentRunOutcome) outcome = NULL;
      g_autofree char *pid_text = NULL;
      int pid;

      clean_outcome = run_and_wait (f, clean_context, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (subagent_run_outcome_get_stop_reason (clean_outcome), ==, "complete");
      outcome = run_and_wait (f, context, NULL, &error);
      pid_text = sat_read_file (f->root, "escape.pid");
      g_assert_no_error (error);
      g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, "complete");
      g_assert_nonnull (pid_text);
      pid = atoi (pid_text);
      g_assert_cmpint (pid, >, 1);
      if (cgroup_off)
        {
          g_assert_true (pid_is_running (pid));
          g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
        }
      assert_process_ends (pid);
    }
}

static void
test_interactive_stdin_closed_after_final (Fixture       *f,
                                           gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("chatty", "interactive.sh", NULL, "Prompt.");
  g_autoptr(SubagentRunContext) context = new_context (f, def, "Task.", 0, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = NULL;
  g_autofree char *task_text = NULL;
  g_autofree char *after = NULL;

  subagent_command_runner_set_interactive_stdin (f->runner, TRUE);
  outcome = run_and_wait (f, context, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, "complete");
  g_assert_cmpstr (subagent_run_outcome_get_final_answer (outcome), ==, "got it in interactive mode");
  g_assert_cmpstr (subagent_run_outcome_get_output (outcome), ==, "stdin closed");
  task_text = sat_read_file (f->root, "task.txt");
  g_assert_cmpstr (task_text, ==, "Prompt.\n\nTask.\n");
  after = sat_read_file (f->root, "after-final.txt");
  g_assert_cmpstr (after, ==, "");
}

static void
test_default_command (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("no-command", NULL, NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "via default", 0, 0);
  g_autofree char *path = child_path ("answer-task.sh");
  const char *argv[] = { path, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) missing = NULL;
  g_autoptr(SubagentRunOutcome) outcome = NULL;
  g_auto(GStrv) copy = NULL;

  missing = run_and_wait (f, context, NULL, &error);
  g_assert_null (missing);
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_object_set (f->runner, "default-command", argv, NULL);
  copy = subagent_command_runner_dup_default_command (f->runner);
  g_assert_cmpstrv (copy, argv);
  outcome = run_and_wait (f, context, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_final_answer (outcome), ==, "answer to: via default");
}

static void
test_spawn_failure_is_error (Fixture       *f,
                             gconstpointer  data)
{
  const char *argv[] = { "/nonexistent/agent-program", NULL };
  g_autoptr(SubagentDef) def = g_object_new (SUBAGENT_TYPE_DEF, "name", "ghost", "command", argv, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "t", 0, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = run_and_wait (f, context, NULL, &error);

  g_assert_null (outcome);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED);
  g_assert_nonnull (strstr (error->message, "ghost"));
}

typedef struct {
  guint pending;
  GPtrArray *outcomes;
  Fixture *fixture;
} Batch;

static void
on_batch_done (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  Batch *batch = user_data;
  g_autoptr(GError) error = NULL;
  SubagentRunOutcome *outcome = subagent_runner_run_finish (SUBAGENT_RUNNER (source), result, &error);

  g_assert_no_error (error);
  g_ptr_array_add (batch->outcomes, outcome);
  batch->pending--;
}

/* Starts @n runs at once, task-<i> each, of @def or (every fourth, when
 * given) of @fourth, and waits for all: their outcomes, in completion order. */
static GPtrArray *
run_batch (Fixture     *f,
           guint        n,
           SubagentDef *def,
           SubagentDef *fourth)
{
  g_autoptr(GPtrArray) contexts = g_ptr_array_new_with_free_func (g_object_unref);
  Batch batch = { n, g_ptr_array_new_with_free_func (g_object_unref), f };

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *task = g_strdup_printf ("task-%u", i);
      SubagentRunContext *context = new_context (f, fourth != NULL && i % 4 == 3 ? fourth : def, task, 60, 0);

      g_ptr_array_add (contexts, context);
      subagent_runner_run_async (SUBAGENT_RUNNER (f->runner), context, NULL, on_batch_done, &batch);
    }
  while (batch.pending > 0)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (batch.outcomes->len, ==, n);
  return batch.outcomes;
}

/* Every task-<i> but the skipped ones (every fourth, with @skip_fourth)
 * was answered. */
static void
assert_answered (GHashTable *answers,
                 guint       n,
                 gboolean    skip_fourth)
{
  for (guint i = 0; i < n; i++)
    if (!skip_fourth || i % 4 != 3)
      {
        g_autofree char *expected = g_strdup_printf ("answer to: task-%u", i);

        g_assert_true (g_hash_table_contains (answers, expected));
      }
}

static void
test_concurrent_runs (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("parallel", "answer-task.sh", NULL, NULL);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) outcomes = run_batch (f, 10, def, NULL);

  for (guint i = 0; i < outcomes->len; i++)
    {
      SubagentRunOutcome *outcome = outcomes->pdata[i];

      g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, "complete");
      g_hash_table_add (seen, g_strdup (subagent_run_outcome_get_final_answer (outcome)));
    }
  assert_answered (seen, 10, FALSE);
}

/* Many children started at once, through the one spawning thread: each
 * run gets its own child's output and exit status. */
static void
test_many_runs_keep_their_outcomes (Fixture       *f,
                                    gconstpointer  data)
{
  g_autoptr(SubagentDef) answer = new_def ("answer", "answer-task.sh", NULL, NULL);
  g_autoptr(SubagentDef) failing = new_def ("failing", "fail.sh", NULL, NULL);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) outcomes = run_batch (f, 64, answer, failing);
  guint failed = 0;

  for (guint i = 0; i < outcomes->len; i++)
    {
      SubagentRunOutcome *outcome = outcomes->pdata[i];

      if (g_str_equal (subagent_run_outcome_get_stop_reason (outcome), SUBAGENT_STOP_REASON_ERROR))
        {
          g_assert_nonnull (strstr (subagent_run_outcome_get_message (outcome), "exited with status 3"));
          g_assert_cmpstr (subagent_run_outcome_get_output (outcome), ==, "partial output");
          failed++;
          continue;
        }
      g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, SUBAGENT_STOP_REASON_COMPLETE);
      g_hash_table_add (seen, g_strdup (subagent_run_outcome_get_final_answer (outcome)));
    }
  g_assert_cmpuint (failed, ==, 16);
  g_assert_cmpuint (g_hash_table_size (seen), ==, 48);
  assert_answered (seen, 64, TRUE);
}

/* Cancelled while its child is being started (the spawning thread has it,
 * the run's context has not heard back yet): the child is stopped once it
 * exists and the run says cancelled. */
static void
test_cancel_while_spawning (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("cancelme", "hang.sh", NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "t", 0, 0);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = NULL;
  g_autofree char *pids = NULL;
  GAsyncResult *result = NULL;

  subagent_runner_run_async (SUBAGENT_RUNNER (f->runner), context, cancellable, store_result, &result);
  g_cancellable_cancel (cancellable);
  outcome = wait_outcome (f, &result, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, SUBAGENT_STOP_REASON_CANCELLED);
  g_assert_cmpint (subagent_run_outcome_get_status (outcome), ==, SUBAGENT_RUN_STATUS_CANCELLED);
  /* If it got as far as recording its grandchild, that one is gone too
   * (the file may also be there but empty: stopped between the shell's
   * redirection and its echo). */
  pids = sat_read_file (f->root, "pids");
  if (pids != NULL && *pids != '\0')
    {
      int shell, grandchild;

      g_assert_cmpint (sscanf (pids, "%d %d", &shell, &grandchild), ==, 2);
      assert_process_ends (shell);
      assert_process_ends (grandchild);
    }
}

typedef struct {
  Fixture *f;
  SubagentRunContext *context;
  GMainContext *main_context;
  GCancellable *cancellable;
  GAsyncResult *result;
} ThreadRun;

static gpointer
start_run_and_leave (gpointer data)
{
  ThreadRun *run = data;

  g_main_context_push_thread_default (run->main_context);
  subagent_runner_run_async (SUBAGENT_RUNNER (run->f->runner), run->context, run->cancellable, store_result,
                             &run->result);
  g_main_context_pop_thread_default (run->main_context);
  wait_child_ready (run->f);
  return NULL;   /* this thread ends here, its child must not */
}

/* PR_SET_PDEATHSIG kills a child when the *thread* that spawned it ends.
 * A run started from a short-lived thread (a worker that hands its
 * context on) keeps its child: children are spawned by a thread that
 * lasts as long as the host. */
static void
test_child_outlives_requesting_thread (Fixture       *f,
                                       gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("outlive", "hang.sh", NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "t", 0, 0);
  g_autoptr(GMainContext) main_context = g_main_context_new ();
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = NULL;
  ThreadRun run = { f, context, main_context, cancellable, NULL };
  struct pollfd pfd;
  int shell, grandchild;

  make_ready_fifo (f);
  g_thread_join (g_thread_new ("short-lived", start_run_and_leave, &run));
  read_pids (f, &shell, &grandchild);
  /* A death signal would have been sent as the thread ended: give it time. */
  pfd.fd = (int) syscall (SYS_pidfd_open, shell, 0);
  g_assert_cmpint (pfd.fd, >=, 0);
  pfd.events = POLLIN;
  pfd.revents = 0;
  g_assert_cmpint (poll (&pfd, 1, 300), ==, 0);
  close (pfd.fd);
  g_assert_true (pid_is_running (shell));

  g_cancellable_cancel (cancellable);
  while (run.result == NULL)
    g_main_context_iteration (main_context, TRUE);
  outcome = subagent_runner_run_finish (SUBAGENT_RUNNER (f->runner), run.result, &error);
  g_clear_object (&run.result);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_stop_reason (outcome), ==, SUBAGENT_STOP_REASON_CANCELLED);
  assert_process_ends (shell);
  assert_process_ends (grandchild);
}

/* The spawning thread is the process's: the child of a fork() has none
 * (threads do not survive fork()) and makes its own at its first spawn. */
static void
test_spawn_after_fork (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("forked", "answer-task.sh", NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "before the fork", 30, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = run_and_wait (f, context, NULL, &error);
  int status = 0;
  pid_t pid;

  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_final_answer (outcome), ==, "answer to: before the fork");
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      g_autoptr(SubagentRunContext) again = new_context (f, def, "after the fork", 30, 0);
      g_autoptr(GMainContext) main_context = g_main_context_new ();
      g_autoptr(SubagentRunOutcome) second = NULL;
      GAsyncResult *result = NULL;

      alarm (30);   /* a spawn that never comes back fails, not hangs */
      g_main_context_push_thread_default (main_context);
      subagent_runner_run_async (SUBAGENT_RUNNER (f->runner), again, NULL, store_result, &result);
      while (result == NULL)
        g_main_context_iteration (main_context, TRUE);
      second = subagent_runner_run_finish (SUBAGENT_RUNNER (f->runner), result, NULL);
      _exit (second != NULL && g_strcmp0 (subagent_run_outcome_get_final_answer (second), "answer to: after the fork") == 0
             ? 0 : 1);
    }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
}

static gboolean
set_flag (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

static void
test_sync_run_keeps_caller_context_still (Fixture       *f,
                                          gconstpointer  data)
{
  g_autoptr(SubagentDef) def = new_def ("sync", "answer-task.sh", NULL, NULL);
  g_autoptr(SubagentRunContext) context = new_context (f, def, "synchronously", 0, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunOutcome) outcome = NULL;
  gboolean fired = FALSE;
  guint id = g_idle_add (set_flag, &fired);

  outcome = subagent_runner_run (SUBAGENT_RUNNER (f->runner), context, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_run_outcome_get_final_answer (outcome), ==, "answer to: synchronously");
  g_assert_false (fired);   /* the caller's main context was not iterated */
  g_source_remove (id);
}

int
main (int argc, char *argv[])
{
  /* Before any thread exists: setenv() is not thread-safe. */
  g_setenv ("SUBAGENT_APPROVAL_HMAC_KEY", "test-secret-key", TRUE);
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("/command-runner/answer/plain-stdout-trimmed", test_plain_stdout_answer);
  ADD ("/command-runner/stdin/system-prompt-prefix", test_system_prompt_prefix);
  ADD ("/command-runner/stdin/larger-than-pipe-arrives-whole", test_large_stdin_arrives_whole);
  ADD ("/command-runner/stdin/around-pipe-buf", test_stdin_around_pipe_buf);
  ADD ("/command-runner/spawn/host-child-starts-clean", test_host_child_starts_clean);
  ADD ("/command-runner/spawn/host-std-streams-closed", test_host_child_with_std_streams_closed);
  ADD ("/command-runner/protocol/usage-and-final", test_json_usage_and_final);
  ADD ("/command-runner/environment/run-variables-no-hmac-key", test_environment);
  ADD ("/command-runner/exit/nonzero-is-error-with-stderr", test_nonzero_exit);
  ADD ("/command-runner/exit/signal-is-error", test_killed_by_signal);
  ADD ("/command-runner/limits/timeout-kills-child-and-grandchild", test_timeout_kills_child_and_grandchild);
  ADD ("/command-runner/limits/sigkill-after-grace", test_sigkill_after_grace);
  ADD ("/command-runner/cancel/kills-child-and-reports-cancelled", test_cancel_kills);
  ADD ("/command-runner/cancel/before-start-spawns-nothing", test_cancelled_before_start);
  ADD ("/command-runner/limits/max-turns-on-iterations", test_max_turns_iterations);
  ADD ("/command-runner/limits/max-turns-on-tool-calls", test_max_turns_tool_calls);
  ADD ("/command-runner/limits/budget", test_budget_stop);
  ADD ("/command-runner/cleanup/leftover-process-killed", test_leftover_process_killed);
  ADD ("/command-runner/cleanup/reparented-daemon-killed", test_daemon_killed);
  ADD ("/command-runner/cleanup/escaped-process-killed-via-cgroup", test_escaped_process_killed_via_cgroup);
  ADD ("/command-runner/stdin/interactive-closed-after-final", test_interactive_stdin_closed_after_final);
  ADD ("/command-runner/command/default-command-and-missing", test_default_command);
  ADD ("/command-runner/command/spawn-failure-is-error", test_spawn_failure_is_error);
  ADD ("/command-runner/concurrency/ten-runs-at-once", test_concurrent_runs);
  ADD ("/command-runner/concurrency/many-runs-keep-their-outcomes", test_many_runs_keep_their_outcomes);
  ADD ("/command-runner/cancel/while-spawning", test_cancel_while_spawning);
  ADD ("/command-runner/spawn/child-outlives-requesting-thread", test_child_outlives_requesting_thread);
  ADD ("/command-runner/spawn/after-fork", test_spawn_after_fork);
  ADD ("/command-runner/sync/does-not-iterate-caller-context", test_sync_run_keeps_caller_context_still);
#undef ADD

  return g_test_run ();
}
