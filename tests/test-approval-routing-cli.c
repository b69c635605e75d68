/* test-approval-routing-cli.c: the approver is another process.
 *
 * A command child (tests/fixtures/children/ask-approval.sh) asks for an
 * approval; `subagentctl approvals` in a separate process answers it, or the
 * inline prompt of `subagentctl run` on a terminal (a pty) does, through the
 * same file queue, and the child continues with the verdict.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <gio/gunixinputstream.h>

#include "approval-routing-support.h"

typedef struct {
  gboolean done;
  char *out;
  char *err;
} Io;

static void
on_communicated (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Io *io = user_data;
  g_autoptr(GError) error = NULL;

  g_subprocess_communicate_utf8_finish (G_SUBPROCESS (source), result, &io->out, &io->err, &error);
  g_assert_no_error (error);
  io->done = TRUE;
}

static void
io_clear (Io *io)
{
  g_free (io->out);
  g_free (io->err);
}

/* `subagentctl approvals list --json` (of every run under @root), run
 * without blocking the main context, where a child may be waiting. */
static JsonArray *
list_requests (const char *root,
               gboolean    all)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(JsonNode) node = NULL;
  Io io = { 0 };

  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                           sat_subagentctl (), "approvals", "list", "--json", "--root", root,
                           all ? "--all" : NULL, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8_async (proc, NULL, NULL, on_communicated, &io);
  sat_wait_for_flag (&io.done);
  if (!g_subprocess_get_successful (proc))
    g_error ("approvals list failed: %s", io.err);
  node = json_from_string (io.out, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (node));
  io_clear (&io);
  return json_node_dup_array (node);
}

static void
on_store_changed (GFileMonitor *monitor, GFile *file, GFile *other, GFileMonitorEvent event, gpointer flag)
{
  *(gboolean *) flag = TRUE;
}

/* Waits until another process sees @count pending requests under @root:
 * the list is read again whenever the store's directory changes. */
static JsonArray *
wait_for_listed (const char *root,
                 guint       count)
{
  g_autofree char *dir = g_build_filename (root, ".subagent", "approvals", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (dir);
  g_autoptr(GFileMonitor) monitor = NULL;
  g_autoptr(GError) error = NULL;
  gboolean changed = TRUE;  /* look once before any change */

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  monitor = g_file_monitor_directory (file, G_FILE_MONITOR_WATCH_MOVES, NULL, &error);
  g_assert_no_error (error);
  g_signal_connect (monitor, "changed", G_CALLBACK (on_store_changed), &changed);
  for (;;)
    {
      g_autoptr(JsonArray) listed = NULL;

      sat_wait_for_flag (&changed);
      changed = FALSE;
      listed = list_requests (root, FALSE);
      if (json_array_get_length (listed) >= count)
        {
          g_signal_handlers_disconnect_by_data (monitor, &changed);
          return g_steal_pointer (&listed);
        }
    }
}

/* The child's answers in `subagentctl run` output ("got: {...}" lines). */
static JsonObject *
answer_in_output (const char *out)
{
  const char *got = strstr (out, "got: ");
  g_autofree char *line = NULL;
  g_autoptr(JsonNode) node = NULL;

  g_assert_nonnull (got);
  line = g_strndup (got + 5, strcspn (got + 5, "\n"));
  node = json_from_string (line, NULL);
  g_assert_nonnull (node);
  return json_node_dup_object (node);
}

static GSubprocess *
spawn_cli_run (const char *root,
               Io         *io)
{
  g_autoptr(GError) error = NULL;
  GSubprocess *proc;

  /* stdin is a pipe, not a terminal: no inline prompt. */
  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                           G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                           sat_subagentctl (), "run", "--interactive", "--root", root, "--def", "asker",
                           "--", "write", "the", "motd", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8_async (proc, NULL, NULL, on_communicated, io);
  return proc;
}

static void
test_cli_run_approved_elsewhere (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(JsonArray) listed = NULL;
  g_autoptr(JsonArray) after = NULL;
  g_autoptr(JsonObject) answer = NULL;
  g_autofree char *approved = NULL;
  g_autofree char *hint = NULL;
  g_autofree char *parent = NULL;
  JsonObject *request;
  const char *id;
  Io io = { 0 };

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  run = spawn_cli_run (f->root, &io);
  listed = wait_for_listed (f->root, 1);
  request = json_array_get_object_element (listed, 0);
  id = json_object_get_string_member (request, "request_id");
  g_assert_cmpstr (json_object_get_string_member (request, "subagent_name"), ==, "asker");
  g_assert_cmpstr (json_object_get_string_member (request, "tool_name"), ==, "write_file");
  g_assert_cmpstr (json_object_get_string_member (request, "status"), ==, "pending");

  /* A separate process gives the verdict. */
  approved = sat_run (NULL, FALSE, NULL, sat_subagentctl (), "approvals", "approve", id, "--root", f->root, NULL);
  g_assert_nonnull (strstr (approved, id));
  sat_wait_for_flag (&io.done);
  g_assert_true (g_subprocess_get_successful (run));

  answer = answer_in_output (io.out);
  ars_assert_answer (answer, "req-1", TRUE, "Approved");
  g_assert_nonnull (strstr (io.out, "done"));
  /* stderr named the parent run and how to answer. */
  parent = g_strdup_printf ("of parent run %s", json_object_get_string_member (request, "parent_run_id"));
  hint = g_strdup_printf ("subagentctl approvals approve %s --root", id);
  g_assert_nonnull (strstr (io.err, parent));
  g_assert_nonnull (strstr (io.err, hint));
  after = list_requests (f->root, TRUE);
  g_assert_cmpuint (json_array_get_length (after), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (after, 0), "status"), ==, "approved");
  io_clear (&io);
}

static void
test_library_run_denied_elsewhere (Fixture *f, gconstpointer data)
{
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentRunOptions) options = ars_asker_options (NULL);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(JsonArray) listed = NULL;
  g_autoptr(GPtrArray) answers = NULL;
  g_autofree char *denied = NULL;
  JsonObject *request;

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  /* The default sink: files under .subagent/approvals, through the plugin. */
  manager = ars_new_manager (f->root, NULL, SUBAGENT_PERMISSION_MODE_PROMPT);
  subagent_manager_run_async (manager, "write the motd", options, NULL, ars_on_run_done, &result);
  listed = wait_for_listed (f->root, 1);
  request = json_array_get_object_element (listed, 0);
  g_assert_cmpstr (json_object_get_string_member (request, "parent_run_id"), ==, subagent_manager_get_run_id (manager));
  denied = sat_run (NULL, FALSE, NULL, sat_subagentctl (), "approvals", "deny",
                    json_object_get_string_member (request, "request_id"), "--reason", "not on a Friday",
                    "--root", f->root, NULL);
  ars_wait_for_result (&result);

  g_assert_cmpstr (json_object_get_string_member (request, "subagent_id"), ==, subagent_run_result_get_run_id (result));
  answers = ars_answers_of (result);
  g_assert_cmpuint (answers->len, ==, 1);
  ars_assert_answer (answers->pdata[0], "req-1", FALSE, "not on a Friday");
}

static void
test_cli_run_unattended (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(JsonObject) answer = NULL;
  Io io = { 0 };

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  sat_write_file (f->root, ".subagent/config.yaml", "approvals: { sink: none }\n");
  run = spawn_cli_run (f->root, &io);
  sat_wait_for_flag (&io.done);
  g_assert_true (g_subprocess_get_successful (run));
  answer = answer_in_output (io.out);
  ars_assert_answer (answer, "req-1", FALSE, NULL);
  g_assert_cmpstr (json_object_get_string_member (answer, "reason"), ==, SUBAGENT_APPROVAL_UNATTENDED_REASON);
  g_assert_null (strstr (io.err, "approval request"));
  g_assert_false (ars_approvals_dir_exists (f->root));
  io_clear (&io);
}

/* `subagentctl run` on a terminal of its own (a pty whose master we hold). */
typedef struct {
  int master;
  GInputStream *in;
  GString *seen;
  gboolean closed;
} Terminal;

static void
become_terminal_session (gpointer data)
{
  /* After GLib set up fd 0 (the pty): make it our controlling terminal. */
  setsid ();
  ioctl (STDIN_FILENO, TIOCSCTTY, 0);
}

static void read_terminal (Terminal *t);

static void
on_terminal_read (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Terminal *t = user_data;
  g_autoptr(GBytes) bytes = g_input_stream_read_bytes_finish (G_INPUT_STREAM (source), result, NULL);

  /* EIO once every process closed the pty. */
  if (bytes == NULL || g_bytes_get_size (bytes) == 0)
    {
      t->closed = TRUE;
      return;
    }
  g_string_append_len (t->seen, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  read_terminal (t);
}

static void
read_terminal (Terminal *t)
{
  g_input_stream_read_bytes_async (t->in, 4096, G_PRIORITY_DEFAULT, NULL, on_terminal_read, t);
}

static void
wait_for_terminal_text (Terminal *t, const char *text)
{
  while (strstr (t->seen->str, text) == NULL)
    {
      if (t->closed)
        g_error ("the terminal closed before showing “%s”; it showed:\n%s", text, t->seen->str);
      g_main_context_iteration (NULL, TRUE);
    }
}

static GSubprocess *
spawn_cli_run_on_terminal (const char *root,
                           Terminal   *t,
                           Io         *io)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GError) error = NULL;
  GSubprocess *proc;
  int slave;

  t->master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (t->master, >=, 0);
  g_assert_cmpint (grantpt (t->master), ==, 0);
  g_assert_cmpint (unlockpt (t->master), ==, 0);
  slave = open (ptsname (t->master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (slave, >=, 0);
  t->in = g_unix_input_stream_new (t->master, FALSE);
  t->seen = g_string_new (NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_take_stdin_fd (launcher, slave);
  g_subprocess_launcher_set_child_setup (launcher, become_terminal_session, NULL, NULL);
  proc = g_subprocess_launcher_spawn (launcher, &error, sat_subagentctl (), "run", "--interactive", "--root", root,
                                      "--def", "asker", "--", "write", "the", "motd", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8_async (proc, NULL, NULL, on_communicated, io);
  read_terminal (t);
  return proc;
}

static void
terminal_close (Terminal *t)
{
  /* The read in flight ends with the pty (EIO) once the run exited. */
  while (!t->closed)
    g_main_context_iteration (NULL, TRUE);
  g_object_unref (t->in);
  close (t->master);
  g_string_free (t->seen, TRUE);
}

static void
test_terminal_prompt_approves (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(JsonObject) answer = NULL;
  g_autoptr(JsonArray) after = NULL;
  JsonObject *stored;
  Terminal t = { 0 };
  Io io = { 0 };

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  run = spawn_cli_run_on_terminal (f->root, &t, &io);
  wait_for_terminal_text (&t, "approve? [y/N] ");
  g_assert_nonnull (strstr (t.seen->str, "wants to run write_file {\"path\":\"/etc/motd\""));
  g_assert_cmpint (write (t.master, "y\n", 2), ==, 2);
  sat_wait_for_flag (&io.done);
  g_assert_true (g_subprocess_get_successful (run));

  answer = answer_in_output (io.out);
  ars_assert_answer (answer, "req-1", TRUE, "Approved");
  /* The prompt answered through the same (file) queue. */
  after = list_requests (f->root, TRUE);
  g_assert_cmpuint (json_array_get_length (after), ==, 1);
  stored = json_array_get_object_element (after, 0);
  g_assert_cmpstr (json_object_get_string_member (stored, "status"), ==, "approved");
  g_assert_cmpstr (json_object_get_string_member (stored, "approved_by"), ==, "terminal");
  terminal_close (&t);
  io_clear (&io);
}

static void
test_another_process_beats_the_prompt (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(JsonArray) listed = NULL;
  g_autoptr(JsonObject) answer = NULL;
  g_autofree char *denied = NULL;
  Terminal t = { 0 };
  Io io = { 0 };

  ars_write_asker (f->root, 1, ARS_SPECS ("req-1"));
  run = spawn_cli_run_on_terminal (f->root, &t, &io);
  wait_for_terminal_text (&t, "approve? [y/N] ");
  listed = wait_for_listed (f->root, 1);
  denied = sat_run (NULL, FALSE, NULL, sat_subagentctl (), "approvals", "deny",
                    json_object_get_string_member (json_array_get_object_element (listed, 0), "request_id"),
                    "--reason", "decided elsewhere", "--root", f->root, NULL);
  /* The prompt is withdrawn; the first verdict is the one the child gets. */
  wait_for_terminal_text (&t, "(answered elsewhere: denied)");
  sat_wait_for_flag (&io.done);
  g_assert_true (g_subprocess_get_successful (run));
  answer = answer_in_output (io.out);
  ars_assert_answer (answer, "req-1", FALSE, "decided elsewhere");
  terminal_close (&t);
  io_clear (&io);
}


int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add ("/approval-routing/" path, Fixture, NULL, ars_fixture_setup, func, ars_fixture_teardown)
  ADD ("e2e/cli-run-approved-by-another-process", test_cli_run_approved_elsewhere);
  ADD ("e2e/library-run-denied-by-another-process", test_library_run_denied_elsewhere);
  ADD ("e2e/cli-run-unattended-without-queue-or-terminal", test_cli_run_unattended);
  ADD ("e2e/terminal-prompt-approves", test_terminal_prompt_approves);
  ADD ("e2e/another-process-beats-the-prompt", test_another_process_beats_the_prompt);
#undef ADD
  return g_test_run ();
}
