/* subagent-command-run.c: one run of a SubagentCommandRunner.
 *
 * The child's lifecycle: spawn inside the isolation, feed stdin, read the
 * stdout protocol and the stderr tail, enforce limits, stop the child and
 * everything it started, report an outcome. Reading the child's output
 * is in subagent-command-output.c, its environment and stdin text in
 * subagent-command-env.c; subagent-command-run-state-private.h holds the
 * state they share.
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
#include "subagent-command-run-private.h"
#include "subagent-command-run-state-private.h"

/* After the child exits, how long a process it left behind may hold its
 * stdout/stderr open before the runner stops reading, and how often the
 * runner looks for such processes meanwhile. */
#define DRAIN_MS 2000
#define DRAIN_SWEEP_MS 100

static void
clear_source (GSource **source)
{
  if (*source != NULL)
    {
      g_source_destroy (*source);
      g_clear_pointer (source, g_source_unref);
    }
}

/* The run no longer listens to its cancellable. (The handler holds the
 * task: run_state_free() finds it disconnected.) */
static void
disconnect_cancel (RunState *state)
{
  if (state->cancel_handler != 0)
    g_cancellable_disconnect (state->cancellable, state->cancel_handler);
  state->cancel_handler = 0;
}

static void
run_state_free (RunState *state)
{
  g_clear_pointer (&state->deadline, _subagent_deadline_remove);
  disconnect_cancel (state);
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
    subagent_host_process_kill_cgroup (state->process);
  else if (state->cgroup != NULL)
    _subagent_cgroup_signal (state->cgroup, signum, root_alive ? state->pid : 0);
}

void
_subagent_command_run_maybe_complete (GTask *task)
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
  g_clear_pointer (&state->deadline, _subagent_deadline_remove);
  disconnect_cancel (state);
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
void
_subagent_command_run_stop_child (GTask      *task,
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
  g_clear_pointer (&state->deadline, _subagent_deadline_remove);
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

  state->deadline = NULL;  /* being called: gone once this returns */
  _subagent_command_run_stop_child (task, SUBAGENT_STOP_REASON_TIMEOUT,
                                    g_strdup_printf ("Child %s ran past its wall-clock limit of %u s and was stopped",
                                                     state->label, subagent_run_context_get_timeout_seconds (state->context)));
  return G_SOURCE_REMOVE;
}

static gboolean
on_cancelled (gpointer user_data)
{
  GTask *task = user_data;
  RunState *state = g_task_get_task_data (task);

  _subagent_command_run_stop_child (task, SUBAGENT_STOP_REASON_CANCELLED,
                                    g_strdup_printf ("Child %s was cancelled", state->label));
  return G_SOURCE_REMOVE;
}

/* In whichever thread cancelled (or in g_cancellable_connect(), when that
 * was before): the child is stopped from the run's own context, never from
 * within the signal, whose handler cannot be disconnected while it runs. */
static void
on_cancel_signal (GCancellable *cancellable,
                  gpointer      user_data)
{
  GTask *task = user_data;
  GSource *idle = g_idle_source_new ();

  /* At the run's priority, as the GCancellableSource it replaces was. */
  g_source_set_priority (idle, g_task_get_priority (task));
  g_source_set_callback (idle, on_cancelled, g_object_ref (task), g_object_unref);
  g_source_set_static_name (idle, "[libsubagent] command child cancelled");
  g_source_attach (idle, g_task_get_context (task));
  g_source_unref (idle);
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
  _subagent_command_run_stop_reading (user_data, state);
  _subagent_command_run_maybe_complete (user_data);
  return G_SOURCE_REMOVE;
}

static void
on_exited (gpointer user_data)
{
  GTask *task = user_data;
  RunState *state = g_task_get_task_data (task);

  state->exited = TRUE;
  state->pid = 0;
  g_clear_pointer (&state->deadline, _subagent_deadline_remove);
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
  _subagent_command_run_maybe_complete (task);
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
  _subagent_command_run_maybe_complete (user_data);
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
  g_autofree char **envp = NULL;  /* one block */
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

  state->stdin_text = _subagent_command_run_build_stdin_text (context);
  prompt = subagent_def_get_system_prompt (def);
  envp = _subagent_command_run_build_environment (state, state->interactive_stdin,
                                                  g_bytes_get_size (state->stdin_text),
                                                  prompt != NULL ? strlen (prompt) : 0);
  /* With a cgroup of its own the child's leftovers are found there: the
   * /proc counters that a sweep needs are then not read. */
  if (!subagent_host_process_expects_cgroup (isolation))
    state->processes = subagent_run_processes_new (state->token);
  /* The rest in on_spawned(): a host child is started by the spawning
   * thread, while this one goes on with other runs. The task is held
   * until then. */
  subagent_host_process_spawn_async (isolation, g_steal_pointer (&argv), g_steal_pointer (&envp),
                                     state->confinement.ruleset_fd, state->stdin_text, state->interactive_stdin,
                                     g_task_get_context (task),
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
  gboolean stdin_written;
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

  /* The text is usually in the pipe already; an interactive child's stdin
   * stays open for the verdicts. */
  stdin_written = subagent_host_process_get_stdin_written (state->process);
  if (!stdin_written || state->interactive_stdin)
    {
      int stdin_fd = subagent_host_process_steal_stdin_fd (state->process);

      state->stdin_writer = stdin_fd >= 0 ? subagent_pipe_writer_new_fd (stdin_fd, g_task_get_context (task))
                                          : subagent_pipe_writer_new (subagent_host_process_get_stdin (state->process),
                                                                      g_task_get_context (task));
    }
  if (!stdin_written)
    {
      subagent_pipe_writer_write (state->stdin_writer, stdin_text);
      if (!state->interactive_stdin)
        subagent_pipe_writer_close (state->stdin_writer, FALSE);
    }
  state->approvals = subagent_command_approvals_new (context, g_task_get_context (task), state->label,
                                                     write_to_child, on_approvals_idle, G_OBJECT (task), task);

  state->line = g_byte_array_new ();
  _subagent_command_run_start_reading (task, state);
  subagent_host_process_wait (state->process, g_task_get_context (task), on_exited, g_object_ref (task), g_object_unref);

  timeout = subagent_run_context_get_timeout_seconds (context);
  if (timeout > 0)
    {
      state->deadline = _subagent_deadline_add (g_task_get_context (task),
                                                g_get_monotonic_time () + timeout * G_TIME_SPAN_SECOND, on_timeout,
                                                g_object_ref (task), g_object_unref);
    }
  if (cancellable != NULL)
    {
      /* A handler, not a GCancellableSource: no source per child in the
       * context, looked at in every iteration. */
      state->cancellable = cancellable;
      state->cancel_handler = g_cancellable_connect (cancellable, G_CALLBACK (on_cancel_signal), g_object_ref (task),
                                                     g_object_unref);
    }
}

