/* subagent-command-output.c: reading a command run's child: its stdout
 * split into lines and protocol messages (usage, final, approval_request)
 * checked against the run's limits, and its stderr tail.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "subagent.h"
#include "subagent-json-line-private.h"
#include "subagent-command-run-state-private.h"
#include "subagent-json-private.h"

/* A child that keeps running after its final answer is stopped after this. */
#define FINAL_GRACE_MS 5000

static void
check_limits (GTask *task)
{
  RunState *state = g_task_get_task_data (task);
  guint max_iterations = subagent_run_context_get_max_iterations (state->context);
  guint max_tool_calls = subagent_run_context_get_max_tool_calls (state->context);
  double max_cost = subagent_run_context_get_max_cost_cents (state->context);

  if (max_iterations > 0 && state->iterations > max_iterations)
    _subagent_command_run_stop_child (task, SUBAGENT_STOP_REASON_MAX_TURNS,
                                      g_strdup_printf ("Child %s reported %u iterations, past its max-iterations limit of %u; it was stopped",
                                                       state->label, state->iterations, max_iterations));
  else if (max_tool_calls > 0 && state->tool_calls > max_tool_calls)
    _subagent_command_run_stop_child (task, SUBAGENT_STOP_REASON_MAX_TURNS,
                                      g_strdup_printf ("Child %s reported %u tool calls, past its max-tool-calls limit of %u; it was stopped",
                                                       state->label, state->tool_calls, max_tool_calls));
  else if (max_cost > 0 && state->cost_cents > max_cost)
    _subagent_command_run_stop_child (task, SUBAGENT_STOP_REASON_BUDGET,
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
  _subagent_command_run_stop_child (task, SUBAGENT_STOP_REASON_COMPLETE,
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
  /* Most children print a few lines: those are read on the stack, and the
   * large buffer is made for a child whose output fills a small one (one
   * 64 KiB malloc and free per child made glibc consolidate its fast bins). */
  guint8 small[STDERR_READ_CHUNK];
  guint8 *buffer = state->read_buffer != NULL ? state->read_buffer : small;
  gsize size = buffer == small ? sizeof small : is_stdout ? STDOUT_READ_CHUNK : STDERR_READ_CHUNK;
  gssize n;

  n = read (fd, buffer, size);
  if (n == (gssize) size && buffer == small)
    state->read_buffer = g_malloc (STDOUT_READ_CHUNK);
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
    take_chunk (task, buffer, (gsize) n);
  else
    {
      g_byte_array_append (state->stderr_tail, buffer, (guint) n);
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
  _subagent_command_run_maybe_complete (task);
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

void
_subagent_command_run_start_reading (GTask    *task,
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
void
_subagent_command_run_stop_reading (GTask    *task,
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
