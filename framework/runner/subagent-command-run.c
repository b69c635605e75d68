/* subagent-command-run.c: one run of a SubagentCommandRunner.
 *
 * The child's lifecycle: spawn inside the isolation, feed stdin, read the
 * stdout protocol and the stderr tail, enforce limits, stop the child and
 * everything it started, report an outcome.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "subagent.h"
#include "subagent-json-line-private.h"
#include "subagent-cgroup-private.h"
#include "subagent-child-process-private.h"
#include "subagent-command-approvals-private.h"
#include "subagent-command-run-private.h"
#include "subagent-fd-watch-private.h"
#include "subagent-confinement-private.h"
#include "subagent-host-process-private.h"
#include "subagent-json-private.h"

extern char **environ;

/* Bounds on what an untrusted child can make the host keep. */
#define OUTPUT_MAX_BYTES (4 * 1024 * 1024)
#define STDERR_TAIL_BYTES (64 * 1024)
#define STDERR_READ_CHUNK 8192
/* A stdout line longer than this is cut: its rest is dropped, with a note. */
#define LINE_MAX_BYTES (1024 * 1024)
#define STDOUT_READ_CHUNK 65536
/* After the child exits, how long a process it left behind may hold its
 * stdout/stderr open before the runner stops reading, and how often the
 * runner looks for such processes meanwhile. */
#define DRAIN_MS 2000
/* A child that keeps running after its final answer is stopped after this. */
#define FINAL_GRACE_MS 5000
#define DRAIN_SWEEP_MS 100

typedef struct {
  SubagentRunContext *context;
  char *label;                   /* “name” for messages */
  SubagentHostProcess *process;
  SubagentChildConfinement confinement;
  GPid pid;                      /* 0 once reaped */
  char *token;
  /* What the run started: the child's own cgroup when it joined one (then
   * @processes is NULL), else found in /proc by parentage and run token. */
  const char *cgroup;            /* owned by @process */
  SubagentRunProcesses *processes;
  GBytes *stdin_text;            /* until the child is started */
  SubagentPipeWriter *stdin_writer;
  gboolean interactive_stdin;
  gboolean warned_eof_approval;
  SubagentCommandApprovals *approvals;  /* approval_request messages */
  /* Reading stdout and stderr until both end; @output_hold is a reference
   * to the run's task meanwhile. */
  SubagentFdWatch *stdout_watch;
  SubagentFdWatch *stderr_watch;
  GTask *output_hold;
  guint8 *read_buffer;          /* STDOUT_READ_CHUNK bytes */
  GByteArray *line;              /* the stdout line being read */
  gboolean line_cut;             /* dropping the rest of an over-long line */
  guint lines_cut;
  guint kill_grace_ms;

  GSource *timeout_source;
  GSource *cancel_source;
  GSource *grace_source;
  GSource *drain_source;
  GSource *final_grace_source;
  gint64 drain_deadline;

  GString *output;
  gboolean output_truncated;
  GByteArray *stderr_tail;
  char *final_answer;            /* NULL until a final message */
  guint iterations;
  guint tool_calls;
  double cost_cents;

  const char *stop_reason;       /* set when the runner stops the child */
  char *stop_message;
  gboolean exited;
  gboolean stdout_done;
  gboolean stderr_done;
  gboolean completed;
} RunState;

static void
clear_source (GSource **source)
{
  if (*source != NULL)
    {
      g_source_destroy (*source);
      g_clear_pointer (source, g_source_unref);
    }
}

static void
run_state_free (RunState *state)
{
  clear_source (&state->timeout_source);
  clear_source (&state->cancel_source);
  clear_source (&state->grace_source);
  clear_source (&state->drain_source);
  clear_source (&state->final_grace_source);
  g_clear_pointer (&state->stdin_writer, subagent_pipe_writer_free);
  g_clear_pointer (&state->approvals, subagent_command_approvals_free);
  _subagent_fd_watch_remove (g_steal_pointer (&state->stdout_watch));
  _subagent_fd_watch_remove (g_steal_pointer (&state->stderr_watch));
  g_free (state->read_buffer);
  g_clear_pointer (&state->process, subagent_host_process_free);
  _subagent_child_confinement_clear (&state->confinement, TRUE);
  g_clear_object (&state->context);
  g_string_free (state->output, TRUE);
  g_byte_array_unref (state->stderr_tail);
  g_clear_pointer (&state->line, g_byte_array_unref);
  g_free (state->final_answer);
  g_free (state->stop_message);
  g_free (state->label);
  g_clear_pointer (&state->processes, subagent_run_processes_free);
  g_clear_pointer (&state->stdin_text, g_bytes_unref);
  g_free (state->token);
  g_free (state);
}

static char *
stderr_tail_text (RunState *state)
{
  g_autofree char *valid = NULL;

  if (state->stderr_tail->len == 0)
    return g_strdup ("");
  valid = g_utf8_make_valid ((const char *) state->stderr_tail->data, state->stderr_tail->len);

  return g_strdup (g_strstrip (valid));
}

static SubagentRunOutcome *
build_outcome (RunState *state)
{
  g_autofree char *answer = NULL;
  g_autofree char *output = NULL;
  g_autofree char *message = NULL;
  g_autofree char *tail = stderr_tail_text (state);
  const char *reason = state->stop_reason;

  output = g_strdup (state->output->str);
  answer = state->final_answer ? g_strdup (state->final_answer) : g_strstrip (g_strdup (output));

  if (reason != NULL)
    message = g_strdup (state->stop_message);
  else if (subagent_host_process_get_if_exited (state->process) && subagent_host_process_get_exit_status (state->process) == 0)
    reason = SUBAGENT_STOP_REASON_COMPLETE;
  else
    {
      reason = SUBAGENT_STOP_REASON_ERROR;
      if (subagent_host_process_get_if_signaled (state->process))
        message = g_strdup_printf ("Child %s was killed by signal %d (%s)", state->label,
                                   subagent_host_process_get_term_sig (state->process),
                                   g_strsignal (subagent_host_process_get_term_sig (state->process)));
      else
        message = g_strdup_printf ("Child %s exited with status %d", state->label,
                                   subagent_host_process_get_exit_status (state->process));
    }

  /* The parent needs the child's last words to understand a failure. */
  if ((g_str_equal (reason, SUBAGENT_STOP_REASON_ERROR) ||
       g_str_equal (reason, SUBAGENT_STOP_REASON_TIMEOUT)) && *tail != '\0')
    {
      char *with_tail = g_strdup_printf ("%s; its stderr ends with:\n%s", message, tail);

      g_free (message);
      message = with_tail;
    }
  if (state->lines_cut > 0)
    {
      char *with_note = g_strdup_printf ("%s%s(%u output line%s longer than %d bytes cut short)",
                                         message ? message : "", message && *message ? " " : "",
                                         state->lines_cut, state->lines_cut == 1 ? "" : "s", LINE_MAX_BYTES);

      g_free (message);
      message = with_note;
    }
  if (state->output_truncated)
    {
      char *with_note = g_strdup_printf ("%s%s(output truncated at %d bytes)",
                                         message ? message : "", message && *message ? " " : "",
                                         OUTPUT_MAX_BYTES);

      g_free (message);
      message = with_note;
    }

  return g_object_new (SUBAGENT_TYPE_RUN_OUTCOME,
                       "stop-reason", reason,
                       "iterations", state->iterations,
                       "tool-calls", state->tool_calls,
                       "cost-cents", state->cost_cents > 0 ? state->cost_cents : 0.0,
                       "final-answer", answer,
                       "output", output,
                       "message", message,
                       "confinement", state->confinement.applied,
                       NULL);
}

/* Sends @signum to what the run started, the child itself excepted (its
 * descendants by parentage too while it is not reaped: @root_alive). */
static void
signal_leftovers (RunState *state,
                  gboolean  root_alive,
                  int       signum)
{
  if (state->processes != NULL)
    subagent_run_processes_signal (state->processes, root_alive, signum);
  else if (state->cgroup != NULL && signum == SIGKILL && !root_alive)
    _subagent_cgroup_kill (state->cgroup);  /* nothing to read when empty */
  else if (state->cgroup != NULL)
    _subagent_cgroup_signal (state->cgroup, signum, root_alive ? state->pid : 0);
}

static void
maybe_complete (GTask *task)
{
  RunState *state = g_task_get_task_data (task);

  if (state->completed || !state->exited || !state->stdout_done || !state->stderr_done)
    return;
  /* A request still waiting is being cancelled; its queue must say so
   * before the run reports its end. */
  if (subagent_command_approvals_get_in_flight (state->approvals) > 0)
    return;
  state->completed = TRUE;
  /* A process caught mid-exec by the exit sweep shows no environment yet;
   * look once more. (cgroup.kill at the exit left nothing to look for: it
   * also kills what is being forked meanwhile.) */
  if (state->processes != NULL)
    subagent_run_processes_signal (state->processes, FALSE, SIGKILL);
  clear_source (&state->timeout_source);
  clear_source (&state->cancel_source);
  clear_source (&state->grace_source);
  clear_source (&state->drain_source);
  clear_source (&state->final_grace_source);
  g_clear_pointer (&state->stdin_writer, subagent_pipe_writer_free);
  g_task_return_pointer (task, build_outcome (state), g_object_unref);
}

static void
signal_child (RunState *state,
              int       signum)
{
  if (state->pid != 0)
    {
      /* Descendants first, while they are still linked to the child. */
      signal_leftovers (state, TRUE, signum);
      subagent_host_process_send_signal (state->process, signum);
    }
  else
    signal_leftovers (state, FALSE, signum);
}

static gboolean
on_grace_over (gpointer user_data)
{
  RunState *state = g_task_get_task_data (user_data);

  g_clear_pointer (&state->grace_source, g_source_unref);
  if (!state->exited)
    {
      g_debug ("Child %s did not stop on SIGTERM; killing it", state->label);
      signal_child (state, SIGKILL);
    }
  return G_SOURCE_REMOVE;
}

/* The first reason to stop the child wins; a child that already ended keeps its own result. */
static void
stop_child (GTask      *task,
            const char *reason,
            char       *message)
{
  RunState *state = g_task_get_task_data (task);

  if (state->stop_reason != NULL || state->exited)
    {
      g_free (message);
      return;
    }
  state->stop_reason = reason;
  state->stop_message = message;
  clear_source (&state->timeout_source);
  subagent_command_approvals_stop (state->approvals);
  if (state->stdin_writer != NULL)
    subagent_pipe_writer_close (state->stdin_writer, TRUE);
  signal_child (state, SIGTERM);
  state->grace_source = g_timeout_source_new (state->kill_grace_ms);
  g_task_attach_source (task, state->grace_source, on_grace_over);
}

static gboolean
on_timeout (gpointer user_data)
{
  GTask *task = user_data;
  RunState *state = g_task_get_task_data (task);

  g_clear_pointer (&state->timeout_source, g_source_unref);
  stop_child (task, SUBAGENT_STOP_REASON_TIMEOUT,
              g_strdup_printf ("Child %s ran past its wall-clock limit of %u s and was stopped",
                               state->label, subagent_run_context_get_timeout_seconds (state->context)));
  return G_SOURCE_REMOVE;
}

static gboolean
on_cancelled (GCancellable *cancellable,
              gpointer      user_data)
{
  GTask *task = user_data;
  RunState *state = g_task_get_task_data (task);

  g_clear_pointer (&state->cancel_source, g_source_unref);
  stop_child (task, SUBAGENT_STOP_REASON_CANCELLED,
              g_strdup_printf ("Child %s was cancelled", state->label));
  return G_SOURCE_REMOVE;
}

static void
check_limits (GTask *task)
{
  RunState *state = g_task_get_task_data (task);
  guint max_iterations = subagent_run_context_get_max_iterations (state->context);
  guint max_tool_calls = subagent_run_context_get_max_tool_calls (state->context);
  double max_cost = subagent_run_context_get_max_cost_cents (state->context);

  if (max_iterations > 0 && state->iterations > max_iterations)
    stop_child (task, SUBAGENT_STOP_REASON_MAX_TURNS,
                g_strdup_printf ("Child %s reported %u iterations, past its max-iterations limit of %u; it was stopped",
                                 state->label, state->iterations, max_iterations));
  else if (max_tool_calls > 0 && state->tool_calls > max_tool_calls)
    stop_child (task, SUBAGENT_STOP_REASON_MAX_TURNS,
                g_strdup_printf ("Child %s reported %u tool calls, past its max-tool-calls limit of %u; it was stopped",
                                 state->label, state->tool_calls, max_tool_calls));
  else if (max_cost > 0 && state->cost_cents > max_cost)
    stop_child (task, SUBAGENT_STOP_REASON_BUDGET,
                g_strdup_printf ("Child %s reported a cost of %.2f cents, past its budget of %.2f cents; it was stopped",
                                 state->label, state->cost_cents, max_cost));
}

/* Usage counters are cumulative: a lower report never lowers them. */
static gboolean
apply_usage (RunState   *state,
             JsonObject *message)
{
  g_autoptr(GError) error = NULL;
  gint64 iterations = state->iterations;
  gint64 tool_calls = state->tool_calls;
  double cost = state->cost_cents;

  if (!subagent_json_read_int (message, "usage message", "iterations", 0, G_MAXUINT, &iterations, &error) ||
      !subagent_json_read_int (message, "usage message", "tool_calls", 0, G_MAXUINT, &tool_calls, &error) ||
      !subagent_json_read_amount (message, "usage message", "cost_cents", &cost, &error))
    {
      g_debug ("Child %s: ignoring a usage report: %s", state->label, error->message);
      return FALSE;
    }
  if ((guint) iterations > state->iterations || (guint) tool_calls > state->tool_calls || cost > state->cost_cents)
    {
      state->iterations = MAX (state->iterations, (guint) iterations);
      state->tool_calls = MAX (state->tool_calls, (guint) tool_calls);
      state->cost_cents = MAX (state->cost_cents, cost);
      /* Running totals, for hosts that show them while the child works. */
      subagent_run_context_report_usage (state->context, state->iterations, state->tool_calls, state->cost_cents);
    }
  return TRUE;
}

static void
handle_usage (GTask      *task,
              RunState   *state,
              JsonObject *message)
{
  if (apply_usage (state, message))
    check_limits (task);
}

static gboolean
on_final_grace_over (gpointer user_data)
{
  GTask *task = user_data;
  RunState *state = g_task_get_task_data (task);

  g_clear_pointer (&state->final_grace_source, g_source_unref);
  stop_child (task, SUBAGENT_STOP_REASON_COMPLETE,
              g_strdup_printf ("Child %s kept running %d s after its final answer and was stopped",
                               state->label, FINAL_GRACE_MS / 1000));
  return G_SOURCE_REMOVE;
}

static void
handle_final (GTask      *task,
              RunState   *state,
              JsonObject *message)
{
  g_autoptr(GError) error = NULL;
  const char *answer;

  if (!subagent_json_read_string (message, "final message", "answer", TRUE, &answer, &error))
    {
      g_debug ("Child %s: ignoring a final message: %s", state->label, error->message);
      return;
    }
  g_free (state->final_answer);
  state->final_answer = g_strdup (answer);
  /* The child has nothing more to ask for; readers of stdin may stop now,
   * and no verdict could reach it any more. */
  if (state->stdin_writer != NULL)
    subagent_pipe_writer_close (state->stdin_writer, FALSE);
  subagent_command_approvals_stop (state->approvals);
  if (apply_usage (state, message))
    check_limits (task);
  /* Its answer is in; it gets a grace period to exit, then is stopped, so
   * a child that lingers cannot hold the host without a timeout. */
  if (state->final_grace_source == NULL && !state->exited)
    {
      state->final_grace_source = g_timeout_source_new (FINAL_GRACE_MS);
      g_task_attach_source (task, state->final_grace_source, on_final_grace_over);
    }
}

/* Protocol messages, by "type". Adding one is adding a row. */
typedef void (*MessageHandler) (GTask *task, RunState *state, JsonObject *message);

static void
handle_approval_request (GTask      *task,
                         RunState   *state,
                         JsonObject *message)
{
  /* In eof mode no answer could reach the child: nothing is put up for
   * approval. Said once per run, where the user looks, with the fix. */
  if (!state->interactive_stdin)
    {
      if (!state->warned_eof_approval)
        g_warning ("Child %s sent an approval request, but its stdin is closed (eof mode), so no verdict "
                   "could reach it; it is ignored. Set `interactive: true` in its definition "
                   "(or pass --interactive) for a child that asks for approvals",
                   state->label);
      state->warned_eof_approval = TRUE;
      return;
    }
  if (state->approvals != NULL)
    subagent_command_approvals_handle (state->approvals, message);
}

static const struct {
  const char *type;
  MessageHandler handler;
} message_handlers[] = {
  { "usage", handle_usage },
  { "final", handle_final },
  { "approval_request", handle_approval_request },
};

static gboolean
dispatch_message (GTask      *task,
                  RunState   *state,
                  const char *line)
{
  g_autoptr(JsonObject) object = NULL;
  const char *type;

  object = subagent_child_message_parse (line, &type);
  if (object == NULL)
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (message_handlers); i++)
    if (g_str_equal (type, message_handlers[i].type))
      {
        message_handlers[i].handler (task, state, object);
        return TRUE;
      }
  return FALSE;
}

static void
append_output (RunState   *state,
               const char *line)
{
  gsize len = strlen (line);

  if (state->output_truncated)
    return;
  if (state->output->len + len + 1 > OUTPUT_MAX_BYTES)
    {
      state->output_truncated = TRUE;
      return;
    }
  if (state->output->len > 0)
    g_string_append_c (state->output, '\n');
  g_string_append_len (state->output, line, len);
}

static void
handle_line (GTask *task,
             char  *raw,
             gsize  length,
             gboolean cut)
{
  RunState *state = g_task_get_task_data (task);
  g_autofree char *line = NULL;

  if (length > 0 && raw[length - 1] == '\r')
    raw[--length] = '\0';
  /* NUL bytes would cut the line short; treat the line as text up to there. */
  line = g_utf8_make_valid (raw, -1);
  /* A cut line is never a protocol message. */
  if (cut || !dispatch_message (task, state, line))
    append_output (state, line);
}

/* Splits what was read into lines; keeps at most LINE_MAX_BYTES of one. */
static void
take_chunk (GTask        *task,
            const guint8 *data,
            gsize         size)
{
  RunState *state = g_task_get_task_data (task);

  while (size > 0)
    {
      const guint8 *newline = memchr (data, '\n', size);
      gsize n = newline != NULL ? (gsize) (newline - data) : size;

      if (!state->line_cut)
        {
          gsize room = LINE_MAX_BYTES - state->line->len;

          g_byte_array_append (state->line, data, MIN (n, room));
          if (n > room)
            {
              state->line_cut = TRUE;
              state->lines_cut++;
              g_byte_array_append (state->line, (const guint8 *) "", 1);
              handle_line (task, (char *) state->line->data, state->line->len - 1, TRUE);
              g_byte_array_set_size (state->line, 0);
            }
        }
      if (newline == NULL)
        return;
      if (state->line_cut)
        state->line_cut = FALSE;
      else
        {
          g_byte_array_append (state->line, (const guint8 *) "", 1);
          handle_line (task, (char *) state->line->data, state->line->len - 1, FALSE);
          g_byte_array_set_size (state->line, 0);
        }
      data = newline + 1;
      size -= n + 1;
    }
}

/* The child's stdout and stderr, read from their descriptors in the run's
 * context (subagent-fd-watch.c: one epoll source for all runs of the
 * context): a read() whenever one is readable, no GInputStream, GTask or
 * source per read (a trivial child's output took three of each). The pipes
 * are the host's; GSubprocess's (a backend's spawnv()) are
 * GUnixInputStreams whose descriptors are read the same way. Whether a
 * descriptor blocks does not matter: it is read only when the poll said it
 * is readable, once per dispatch. */
static void
stdout_ended (GTask    *task,
              RunState *state,
              gboolean  failed)
{
  /* A last line without a newline still counts. */
  if (state->line->len > 0 && !state->line_cut && !failed)
    {
      g_byte_array_append (state->line, (const guint8 *) "", 1);
      handle_line (task, (char *) state->line->data, state->line->len - 1, FALSE);
    }
  g_byte_array_set_size (state->line, 0);
  state->stdout_done = TRUE;
}

/* Reads once from @fd; FALSE at its end (or on an error). */
static gboolean
read_stream (GTask    *task,
             RunState *state,
             int       fd,
             gboolean  is_stdout)
{
  gssize n;

  if (state->read_buffer == NULL)
    state->read_buffer = g_malloc (STDOUT_READ_CHUNK);
  n = read (fd, state->read_buffer, is_stdout ? STDOUT_READ_CHUNK : STDERR_READ_CHUNK);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return TRUE;
  if (n <= 0)
    {
      if (n < 0)
        g_debug ("Child %s: stopped reading %s: %s", state->label, is_stdout ? "stdout" : "stderr",
                 g_strerror (errno));
      if (is_stdout)
        stdout_ended (task, state, n < 0);
      else
        state->stderr_done = TRUE;
      return FALSE;
    }
  if (is_stdout)
    take_chunk (task, state->read_buffer, (gsize) n);
  else
    {
      g_byte_array_append (state->stderr_tail, state->read_buffer, (guint) n);
      if (state->stderr_tail->len > STDERR_TAIL_BYTES)
        g_byte_array_remove_range (state->stderr_tail, 0, state->stderr_tail->len - STDERR_TAIL_BYTES);
    }
  return TRUE;
}

/* One stream ended: when both have, the run may complete. */
static void
output_ended (GTask            *task,
              RunState         *state,
              SubagentFdWatch **watch)
{
  GTask *hold;

  _subagent_fd_watch_remove (g_steal_pointer (watch));
  if (state->stdout_watch != NULL || state->stderr_watch != NULL)
    return;
  hold = g_steal_pointer (&state->output_hold);
  maybe_complete (task);
  g_clear_object (&hold);
}

static void
on_output_ready (int          fd,
                 GIOCondition condition,
                 gpointer     user_data)
{
  GTask *task = user_data;
  RunState *state = g_task_get_task_data (task);
  gboolean is_stdout = fd == subagent_host_process_get_stdout_fd (state->process);

  if (!read_stream (task, state, fd, is_stdout))
    output_ended (task, state, is_stdout ? &state->stdout_watch : &state->stderr_watch);
}

static void
start_reading (GTask    *task,
               RunState *state)
{
  GMainContext *context = g_task_get_context (task);

  state->output_hold = g_object_ref (task);
  state->stdout_watch = _subagent_fd_watch_add (context, subagent_host_process_get_stdout_fd (state->process),
                                                G_IO_IN, on_output_ready, task);
  state->stderr_watch = _subagent_fd_watch_add (context, subagent_host_process_get_stderr_fd (state->process),
                                                G_IO_IN, on_output_ready, task);
}

/* Stops reading what a leftover process holds open: both streams end here.
 * The caller holds a reference to @task. */
static void
stop_reading (GTask    *task,
              RunState *state)
{
  if (state->output_hold == NULL)
    return;
  _subagent_fd_watch_remove (g_steal_pointer (&state->stdout_watch));
  _subagent_fd_watch_remove (g_steal_pointer (&state->stderr_watch));
  g_clear_object (&state->output_hold);
  if (!state->stdout_done)
    stdout_ended (task, state, TRUE);
  state->stderr_done = TRUE;
}

/* The pipes are still held after the exit: something the child started is
 * alive. Sweep again (it may have been caught mid-exec), until the deadline. */
static gboolean
on_drain_tick (gpointer user_data)
{
  RunState *state = g_task_get_task_data (user_data);

  if (g_get_monotonic_time () < state->drain_deadline)
    {
      signal_leftovers (state, FALSE, SIGKILL);
      return G_SOURCE_CONTINUE;
    }
  g_clear_pointer (&state->drain_source, g_source_unref);
  g_debug ("Child %s: a leftover process holds its output open; no longer reading", state->label);
  stop_reading (user_data, state);
  maybe_complete (user_data);
  return G_SOURCE_REMOVE;
}

static void
on_exited (gpointer user_data)
{
  GTask *task = user_data;
  RunState *state = g_task_get_task_data (task);

  state->exited = TRUE;
  state->pid = 0;
  clear_source (&state->timeout_source);
  clear_source (&state->final_grace_source);
  clear_source (&state->grace_source);
  if (state->stdin_writer != NULL)
    subagent_pipe_writer_close (state->stdin_writer, TRUE);
  /* Nobody is left to act on a verdict: cancel the requests still waiting. */
  subagent_command_approvals_stop (state->approvals);
  /* Whatever the child left running belongs to the finished run. (A
   * child's cgroup was killed when it was reaped, just before this.) */
  if (state->processes != NULL)
    subagent_run_processes_signal (state->processes, FALSE, SIGKILL);
  if (!state->stdout_done || !state->stderr_done)
    {
      state->drain_deadline = g_get_monotonic_time () + DRAIN_MS * G_TIME_SPAN_MILLISECOND;
      state->drain_source = g_timeout_source_new (DRAIN_SWEEP_MS);
      g_task_attach_source (task, state->drain_source, on_drain_tick);
    }
  maybe_complete (task);
}

/* TRUE when the host gave the parent no tools of its own (subagentctl, a
 * host without a tool system): nothing then narrows the definition's. */
static gboolean
parent_has_no_tools (SubagentToolRegistry *tools)
{
  SubagentToolRegistry *parent;
  g_auto(GStrv) names = NULL;

  if (tools == NULL)
    return TRUE;
  if (!SUBAGENT_IS_CHILD_TOOL_REGISTRY (tools))
    return FALSE;
  parent = subagent_child_tool_registry_get_parent (SUBAGENT_CHILD_TOOL_REGISTRY (tools));
  names = parent ? subagent_tool_registry_list_names (parent) : NULL;
  return names == NULL || names[0] == NULL;
}

/* The tools the child may use: its registry's when a parent registry
 * narrows them, else what its definition declares (`tools:` minus
 * `disallowed_tools:`), so that a wrapper can pass them on to its agent. */
static char *
join_tool_names (SubagentToolRegistry *tools,
                 SubagentDef          *def)
{
  g_auto(GStrv) names = NULL;
  const char * const *whitelist = subagent_def_get_tool_whitelist (def);
  const char * const *disallowed = subagent_def_get_disallowed_tools (def);
  g_autoptr(GStrvBuilder) builder = NULL;

  if (!parent_has_no_tools (tools))
    {
      names = subagent_tool_registry_list_names (tools);
      return g_strjoinv (",", names);
    }
  if (whitelist == NULL)
    return g_strdup ("");
  builder = g_strv_builder_new ();
  for (guint i = 0; whitelist[i] != NULL; i++)
    if (disallowed == NULL || !g_strv_contains (disallowed, whitelist[i]))
      g_strv_builder_add (builder, whitelist[i]);
  names = g_strv_builder_end (builder);
  return g_strjoinv (",", names);
}

/* The child's environment under construction: the host's, less what the
 * run sets or removes, plus the run's variables. Built in one pass over
 * the host's environment (g_environ_setenv() per variable scanned and
 * copied it each time: some 30 passes per child). */
typedef struct {
  GPtrArray *own;                /* "KEY=VALUE" the run sets, owned until env_end() */
  GPtrArray *drop;               /* keys taken out of the host's (static strings) */
} EnvBuilder;

static void
env_set (EnvBuilder *env,
         const char *key,
         const char *value)
{
  g_ptr_array_add (env->own, g_strconcat (key, "=", value, NULL));
  g_ptr_array_add (env->drop, (gpointer) key);
}

static void
env_unset (EnvBuilder *env,
           const char *key)
{
  g_ptr_array_add (env->drop, (gpointer) key);
}

static char **
env_end (EnvBuilder *env)
{
  GPtrArray *result = g_ptr_array_new_full (64 + env->own->len, NULL);
  guint8 first[256] = { 0 };

  /* Only an entry whose first byte starts a replaced name is compared with
   * the replaced names (most of the host's are not: PATH, HOME, LANG...). */
  for (guint i = 0; i < env->drop->len; i++)
    first[*(const guchar *) g_ptr_array_index (env->drop, i)] = 1;
  for (char **p = environ; *p != NULL; p++)
    {
      const char *eq = strchr (*p, '=');
      gsize key_len = eq != NULL ? (gsize) (eq - *p) : strlen (*p);
      gboolean dropped = FALSE;

      for (guint i = 0; first[*(const guchar *) *p] && i < env->drop->len && !dropped; i++)
        {
          const char *key = g_ptr_array_index (env->drop, i);

          dropped = strncmp (*p, key, key_len) == 0 && key[key_len] == '\0';
        }
      if (!dropped && eq != NULL)
        g_ptr_array_add (result, g_strdup (*p));
    }
  for (guint i = 0; i < env->own->len; i++)
    g_ptr_array_add (result, g_ptr_array_index (env->own, i));
  g_ptr_array_unref (env->own);   /* its strings are the result's now */
  g_ptr_array_unref (env->drop);
  g_ptr_array_add (result, NULL);
  return (char **) g_ptr_array_free (result, FALSE);
}

static char **
build_environment (RunState  *state,
                   gboolean   interactive_stdin,
                   gsize      task_bytes,
                   gsize      prompt_bytes)
{
  SubagentRunContext *context = state->context;
  SubagentDef *def = subagent_run_context_get_definition (context);
  SubagentIsolationContext *isolation = subagent_run_context_get_isolation (context);
  EnvBuilder env = { g_ptr_array_new (), g_ptr_array_new () };
  char number[G_ASCII_DTOSTR_BUF_SIZE];
  char depth[24], max_depth[24], max_iterations[24], max_tool_calls[24], timeout[24], bytes[24], prompt_length[24];
  g_autofree char *tools = join_tool_names (subagent_run_context_get_tools (context), def);
  guint64 inherited = g_ascii_strtoull (g_getenv ("SUBAGENT_MAX_DEPTH") ? g_getenv ("SUBAGENT_MAX_DEPTH") : "0", NULL, 10);
  const char *model = subagent_def_get_model (def);
  gint batch_index = subagent_run_context_get_batch_index (context);

  g_snprintf (depth, sizeof depth, "%u", subagent_run_context_get_depth (context));
  /* The tighter of the definition's limit and one the host itself runs under. */
  g_snprintf (max_depth, sizeof max_depth, "%u",
              inherited > 0 ? (guint) MIN (inherited, subagent_def_get_max_depth (def)) : subagent_def_get_max_depth (def));
  g_snprintf (max_iterations, sizeof max_iterations, "%u", subagent_run_context_get_max_iterations (context));
  g_snprintf (max_tool_calls, sizeof max_tool_calls, "%u", subagent_run_context_get_max_tool_calls (context));
  g_snprintf (timeout, sizeof timeout, "%u", subagent_run_context_get_timeout_seconds (context));
  g_snprintf (bytes, sizeof bytes, "%" G_GSIZE_FORMAT, task_bytes);
  g_snprintf (prompt_length, sizeof prompt_length, "%" G_GSIZE_FORMAT, prompt_bytes);

  /* The key signs approval verdicts; a child holding it could forge them. */
  env_unset (&env, "SUBAGENT_APPROVAL_HMAC_KEY");
  env_set (&env, "SUBAGENT_PROTOCOL", "1");
  env_set (&env, "SUBAGENT_RUN_ID", subagent_run_context_get_run_id (context));
  env_set (&env, "SUBAGENT_PARENT_RUN_ID", subagent_run_context_get_parent_run_id (context));
  env_set (&env, "SUBAGENT_DEPTH", depth);
  env_set (&env, "SUBAGENT_MAX_DEPTH", max_depth);
  env_set (&env, "SUBAGENT_DEF_NAME", subagent_def_get_name (def));
  env_set (&env, "SUBAGENT_CHILD_ROOT", subagent_isolation_context_get_child_root (isolation));
  env_set (&env, "SUBAGENT_ISOLATION", subagent_isolation_context_get_isolation (isolation));
  env_set (&env, "SUBAGENT_MAX_ITERATIONS", max_iterations);
  env_set (&env, "SUBAGENT_MAX_TOOL_CALLS", max_tool_calls);
  env_set (&env, "SUBAGENT_TIMEOUT_SECONDS", timeout);
  g_ascii_formatd (number, sizeof number, "%.2f", subagent_run_context_get_max_cost_cents (context));
  env_set (&env, "SUBAGENT_MAX_COST_CENTS", number);
  env_set (&env, "SUBAGENT_PERMISSION_MODE",
           subagent_permission_mode_to_string (subagent_run_context_get_permission_mode (context)));
  env_set (&env, "SUBAGENT_TOOLS", tools);
  if (batch_index != SUBAGENT_NO_BATCH_INDEX)
    {
      char index[24];

      g_snprintf (index, sizeof index, "%d", batch_index);
      env_set (&env, "SUBAGENT_BATCH_INDEX", index);
    }
  else
    env_unset (&env, "SUBAGENT_BATCH_INDEX");
  env_set (&env, "SUBAGENT_STDIN_MODE", interactive_stdin ? "interactive" : "eof");
  env_set (&env, "SUBAGENT_TASK_BYTES", bytes);
  /* stdin is PROMPT "\n\n" TASK: the prompt's length splits it, blank
   * lines in the prompt or not (0: no prompt, no separator). */
  env_set (&env, "SUBAGENT_SYSTEM_PROMPT_BYTES", prompt_length);
  env_set (&env, "SUBAGENT_MODEL", model ? model : "");
  env_set (&env, SUBAGENT_RUN_TOKEN_ENV, state->token);
  if (state->confinement.tmpdir != NULL)
    {
      env_set (&env, "TMPDIR", state->confinement.tmpdir);
      env_set (&env, "TMP", state->confinement.tmpdir);
      env_set (&env, "TEMP", state->confinement.tmpdir);
    }
  env_set (&env, "SUBAGENT_CONFINEMENT", state->confinement.applied);
  if (subagent_run_context_get_skill (context) != NULL)
    {
      SubagentSkill *skill = subagent_run_context_get_skill (context);
      /* The workspace's own copy when it has one (snapshots, containers'
       * copies, tracked files of a worktree), else the parent's file. */
      g_autofree char *in_child = g_build_filename (subagent_isolation_context_get_child_root (isolation),
                                                    subagent_skill_get_relative_path (skill), NULL);

      env_set (&env, "SUBAGENT_SKILL_FILE",
               g_file_test (in_child, G_FILE_TEST_IS_REGULAR) ? in_child : subagent_skill_get_path (skill));
      env_set (&env, "SUBAGENT_SKILL_NAME", subagent_skill_get_name (skill));
    }
  else
    {
      env_unset (&env, "SUBAGENT_SKILL_FILE");
      env_unset (&env, "SUBAGENT_SKILL_NAME");
    }
  return env_end (&env);
}

/* An approval verdict for the child; dropped once its stdin is closed
 * (eof mode, after its final answer, or once it is stopped). */
static void
write_to_child (GBytes   *line,
                gpointer  user_data)
{
  g_autoptr(GBytes) bytes = line;
  RunState *state = g_task_get_task_data (user_data);

  if (state->stdin_writer != NULL && !subagent_pipe_writer_is_closed (state->stdin_writer))
    subagent_pipe_writer_write (state->stdin_writer, bytes);
  else
    g_debug ("Child %s: its stdin is closed; an approval verdict is dropped", state->label);
}

static void
on_approvals_idle (gpointer user_data)
{
  maybe_complete (user_data);
}

/* "system prompt\n\n[skill block\n\n]task\n": each block only when there
 * is one; the skill comes after the definition's prompt. */
static GBytes *
build_stdin_text (SubagentRunContext *context)
{
  const char *prompt = subagent_def_get_system_prompt (subagent_run_context_get_definition (context));
  const char *task = subagent_run_context_get_task (context);
  SubagentSkill *skill = subagent_run_context_get_skill (context);
  GString *text = g_string_new (NULL);

  if (prompt != NULL && *prompt != '\0')
    {
      g_string_append (text, prompt);
      g_string_append (text, "\n\n");
    }
  if (skill != NULL)
    {
      g_string_append_printf (text, "Skill \"%s\" (%s):\n%s\n\n", subagent_skill_get_name (skill),
                              subagent_skill_get_relative_path (skill), subagent_skill_get_body (skill));
    }
  g_string_append (text, task);
  if (text->len == 0 || text->str[text->len - 1] != '\n')
    g_string_append_c (text, '\n');
  return g_string_free_to_bytes (text);
}

static void on_spawned (SubagentHostProcess *process, GError *error, gpointer user_data);

void
subagent_command_run_start (GTask              *task,
                            SubagentRunContext *context,
                            char              **argv_owned,
                            gboolean            interactive_stdin,
                            guint               kill_grace_ms,
                            GCancellable       *cancellable)
{
  g_auto(GStrv) argv = argv_owned;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) envp = NULL;
  SubagentDef *def = subagent_run_context_get_definition (context);
  SubagentIsolationContext *isolation = subagent_run_context_get_isolation (context);
  RunState *state;
  const char *prompt;

  state = g_new0 (RunState, 1);
  g_task_set_task_data (task, state, (GDestroyNotify) run_state_free);
  state->context = g_object_ref (context);
  state->label = g_strdup_printf ("“%s” (%s, run %s)", subagent_def_get_name (def), argv[0],
                                  subagent_run_context_get_run_id (context));
  state->token = _subagent_uuid_string_random (TRUE);
  state->output = g_string_new (NULL);
  state->stderr_tail = g_byte_array_new ();
  state->confinement = (SubagentChildConfinement) SUBAGENT_CHILD_CONFINEMENT_INIT;
  state->interactive_stdin = interactive_stdin;
  state->kill_grace_ms = kill_grace_ms;

  if (g_cancellable_is_cancelled (cancellable))
    {
      g_autofree char *message = g_strdup_printf ("Child %s was cancelled before it started", state->label);

      g_task_return_pointer (task, subagent_run_outcome_new (SUBAGENT_STOP_REASON_CANCELLED, 0, 0, 0,
                                                             NULL, NULL, message),
                             g_object_unref);
      return;
    }

  /* Before any child exists: the key leaves the environment /proc shows. */
  g_bytes_unref (subagent_approval_key_from_environment ());
  if (!_subagent_isolation_context_spawns_on_host (isolation))
    state->confinement.applied = SUBAGENT_CONFINEMENT_APPLIED_CONTAINER;
  else if (!_subagent_child_confinement_prepare (context, &state->confinement, &error))
    {
      g_task_return_new_error (task, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                               "Could not start child %s: %s", state->label, error->message);
      return;
    }

  state->stdin_text = build_stdin_text (context);
  prompt = subagent_def_get_system_prompt (def);
  envp = build_environment (state, state->interactive_stdin, g_bytes_get_size (state->stdin_text),
                            prompt != NULL ? strlen (prompt) : 0);
  /* With a cgroup of its own the child's leftovers are found there: the
   * /proc counters that a sweep needs are then not read. */
  if (!subagent_host_process_expects_cgroup (isolation))
    state->processes = subagent_run_processes_new (state->token);
  /* The rest in on_spawned(): a host child is started by the spawning
   * thread, while this one goes on with other runs. The task is held
   * until then. */
  subagent_host_process_spawn_async (isolation, g_steal_pointer (&argv), g_steal_pointer (&envp),
                                     state->confinement.ruleset_fd, g_task_get_context (task),
                                     on_spawned, g_object_ref (task));
}

static void
on_spawned (SubagentHostProcess *process,
            GError              *error,
            gpointer             user_data)
{
  g_autoptr(GTask) task = user_data;
  RunState *state = g_task_get_task_data (task);
  SubagentRunContext *context = state->context;
  SubagentIsolationContext *isolation = subagent_run_context_get_isolation (context);
  GCancellable *cancellable = g_task_get_cancellable (task);
  g_autoptr(GBytes) stdin_text = g_steal_pointer (&state->stdin_text);
  guint timeout;

  state->process = process;
  /* The child holds its domain now; the temp dir goes with the run. */
  _subagent_child_confinement_clear (&state->confinement, FALSE);
  if (state->process == NULL)
    {
      g_task_return_new_error (task, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                               "Could not start child %s: %s", state->label, error->message);
      return;
    }
  state->pid = subagent_host_process_get_pid (state->process);
  state->cgroup = subagent_host_process_get_cgroup (state->process);
  if (state->cgroup == NULL && state->processes == NULL)
    {
      /* It could not join its cgroup after all: sweep /proc, all of it (the
       * counters that narrow a sweep had to be read before the spawn). */
      state->processes = subagent_run_processes_new_unbounded (state->token);
    }
  else if (state->cgroup != NULL && state->processes != NULL)
    g_clear_pointer (&state->processes, subagent_run_processes_free);
  if (state->processes != NULL)
    subagent_run_processes_set_root (state->processes, state->pid);
  /* Prune stops what a killed host leaves running in the workspace. Shared
   * isolation makes no workspace, hence no owner record: nothing to look
   * up (the lookup failed every time, with a path built, a stat, a GError
   * and a debug message per child), and its cgroup may serve a later child. */
  if (SUBAGENT_IS_SHARED_ISOLATION (subagent_isolation_context_get_provider (isolation)))
    subagent_host_process_set_cgroup_reusable (state->process, TRUE);
  else if (_subagent_isolation_context_spawns_on_host (isolation) && state->pid > 0)
    {
      g_autoptr(GError) record_error = NULL;

      if (!subagent_owner_record_add_process_full (subagent_isolation_context_get_parent_root (isolation),
                                                   subagent_isolation_context_get_session_key (isolation),
                                                   state->pid, state->token,
                                                   subagent_host_process_get_cgroup (state->process),
                                                   &record_error))
        {
          g_debug ("Child %s is in no owner record: %s", state->label, record_error->message);
          /* Nothing outside this process knows its cgroup: it may serve a later child. */
          subagent_host_process_set_cgroup_reusable (state->process, TRUE);
        }
    }

  {
    int stdin_fd = subagent_host_process_steal_stdin_fd (state->process);

    state->stdin_writer = stdin_fd >= 0 ? subagent_pipe_writer_new_fd (stdin_fd, g_task_get_context (task))
                                        : subagent_pipe_writer_new (subagent_host_process_get_stdin (state->process),
                                                                    g_task_get_context (task));
  }
  subagent_pipe_writer_write (state->stdin_writer, stdin_text);
  if (!state->interactive_stdin)
    subagent_pipe_writer_close (state->stdin_writer, FALSE);
  state->approvals = subagent_command_approvals_new (context, g_task_get_context (task), state->label,
                                                     write_to_child, on_approvals_idle, G_OBJECT (task), task);

  state->line = g_byte_array_new ();
  start_reading (task, state);
  subagent_host_process_wait (state->process, g_task_get_context (task), on_exited, g_object_ref (task), g_object_unref);

  timeout = subagent_run_context_get_timeout_seconds (context);
  if (timeout > 0)
    {
      state->timeout_source = g_timeout_source_new_seconds (timeout);
      g_task_attach_source (task, state->timeout_source, on_timeout);
    }
  if (cancellable != NULL)
    {
      state->cancel_source = g_cancellable_source_new (cancellable);
      g_task_attach_source (task, state->cancel_source, (GSourceFunc) G_CALLBACK (on_cancelled));
    }
}

