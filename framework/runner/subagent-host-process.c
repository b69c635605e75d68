/* subagent-host-process.c: a child process of the command runner, once
 * started (subagent-host-process-spawn.c starts it, and says what it gets):
 * its streams, its signals, its exit and its end.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gunixinputstream.h>

#include "subagent.h"
#include "subagent-host-process-struct-private.h"

/* Lets the child's cgroup serve a later child once this one is done:
 * only when no record outside this process names it. */
void
subagent_host_process_set_cgroup_reusable (SubagentHostProcess *self,
                                           gboolean             reusable)
{
  self->cgroup_reusable = reusable;
}

void
subagent_host_process_kill_cgroup (SubagentHostProcess *self)
{
  if (self->cgroup != NULL)
    _subagent_child_cgroup_kill (self->cgroup);
}

/* The child's own cgroup (a path), or NULL when it has none. */
const char *
subagent_host_process_get_cgroup (SubagentHostProcess *self)
{
  return self->cgroup != NULL ? self->cgroup->path : NULL;
}

/* The stdin of a backend's own process (a GSubprocess); NULL for a child
 * spawned directly, whose descriptor subagent_host_process_steal_stdin_fd()
 * hands over. */
GOutputStream *
subagent_host_process_get_stdin (SubagentHostProcess *self)
{
  return self->subprocess ? g_subprocess_get_stdin_pipe (self->subprocess) : NULL;
}

/* Whether the stdin text given to subagent_host_process_spawn_async() is
 * in the child's pipe already (and the pipe closed unless it was to stay
 * open); if not, the caller writes it. */
gboolean
subagent_host_process_get_stdin_written (SubagentHostProcess *self)
{
  return self->stdin_written;
}

/* The write end of a directly spawned child's stdin, now the caller's to
 * close; -1 for a GSubprocess, once handed over, or once closed after the
 * text written before the spawn. */
int
subagent_host_process_steal_stdin_fd (SubagentHostProcess *self)
{
  int fd = self->stdin_fd;

  self->stdin_fd = -1;
  return fd;
}

/* The read end of the child's stdout; the process owns it. */
int
subagent_host_process_get_stdout_fd (SubagentHostProcess *self)
{
  /* GSubprocess's pipes are GUnixInputStreams on this platform. */
  if (self->subprocess != NULL)
    return g_unix_input_stream_get_fd (G_UNIX_INPUT_STREAM (g_subprocess_get_stdout_pipe (self->subprocess)));
  return self->stdout_fd;
}

/* The read end of the child's stderr; the process owns it. */
int
subagent_host_process_get_stderr_fd (SubagentHostProcess *self)
{
  if (self->subprocess != NULL)
    return g_unix_input_stream_get_fd (G_UNIX_INPUT_STREAM (g_subprocess_get_stderr_pipe (self->subprocess)));
  return self->stderr_fd;
}

/* The child's pid while it runs, 0 once it has been reaped (or when a
 * backend's process has no pid on this host). */
GPid
subagent_host_process_get_pid (SubagentHostProcess *self)
{
  return self->exited ? 0 : self->pid;
}

/* Never signals a pid that was reaped and may have been reused. */
void
subagent_host_process_send_signal (SubagentHostProcess *self,
                                   int                  signum)
{
  if (self->subprocess != NULL)
    g_subprocess_send_signal (self->subprocess, signum);
  else if (!self->exited && self->pid > 0)
    {
      /* The whole group: what the child started without leaving it too. */
      if (!self->own_group || kill (-self->pid, signum) != 0)
        kill (self->pid, signum);
    }
}

static void
notify_exited (SubagentHostProcess *self)
{
  SubagentHostProcessExited callback = self->callback;
  gpointer user_data = self->user_data;
  GDestroyNotify destroy = self->destroy;

  self->callback = NULL;
  self->user_data = NULL;
  self->destroy = NULL;
  if (callback != NULL)
    callback (user_data);
  if (destroy != NULL)
    destroy (user_data);
}

static void
on_child_watch (GPid     pid,
                int      wait_status,
                gpointer user_data)
{
  SubagentHostProcess *self = user_data;

  self->wait_status = wait_status;
  self->exited = TRUE;
  /* Whatever is left in its group belongs to the finished child. The group
   * id cannot be taken by a new process while the group has members. */
  if (self->own_group)
    kill (-self->pid, SIGKILL);
  /* And what left the group: the cgroup holds it still. */
  if (self->cgroup != NULL)
    self->cgroup_empty = _subagent_child_cgroup_kill (self->cgroup) == 0;
  g_clear_pointer (&self->watch, g_source_unref);
  notify_exited (self);
}

static void
on_pidfd_readable (int           fd,
                   GIOCondition  condition,
                   gpointer      user_data)
{
  SubagentHostProcess *self = user_data;
  int status = 0;
  pid_t reaped;

  do
    reaped = waitpid (self->pid, &status, WNOHANG);
  while (reaped < 0 && errno == EINTR);
  if (reaped == 0)
    return;   /* not yet (cannot happen once readable) */
  if (reaped < 0)
    {
      /* Reaped elsewhere (a host calling waitpid(-1)): no status to tell. */
      g_debug ("Could not reap child %d: %s", (int) self->pid, g_strerror (errno));
      status = W_EXITCODE (255, 0);
    }
  _subagent_fd_watch_remove (g_steal_pointer (&self->pidfd_watch));
  on_child_watch (self->pid, status, self);
}

static void
on_subprocess_waited (GObject      *source,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  SubagentHostProcess *self = user_data;

  /* It fails only when cancelled, and then @self is already gone. */
  if (!g_subprocess_wait_finish (G_SUBPROCESS (source), result, NULL))
    return;
  self->exited = TRUE;
  notify_exited (self);
}

/* Calls @callback in @context once the child has exited. One waiter only;
 * @destroy frees @user_data after the call, or when @self is freed first. */
void
subagent_host_process_wait (SubagentHostProcess       *self,
                            GMainContext              *context,
                            SubagentHostProcessExited  callback,
                            gpointer                   user_data,
                            GDestroyNotify             destroy)
{
  g_return_if_fail (self->callback == NULL && self->watch == NULL && self->pidfd_watch == NULL);

  self->callback = callback;
  self->user_data = user_data;
  self->destroy = destroy;
  if (self->subprocess != NULL)
    {
      /* GSubprocess dispatches to the thread-default context: use @context. */
      self->wait_cancellable = g_cancellable_new ();
      g_main_context_push_thread_default (context);
      g_subprocess_wait_async (self->subprocess, self->wait_cancellable, on_subprocess_waited, self);
      g_main_context_pop_thread_default (context);
      return;
    }
  /* A pidfd turns readable when the child exits, in @context's own poll:
   * GLib 2.74's child watch goes through SIGCHLD and its worker thread,
   * which then wakes @context (two more context switches per child). */
  if (self->pidfd < 0)
    self->pidfd = (int) syscall (SYS_pidfd_open, self->pid, 0);
  if (self->pidfd >= 0)
    {
      /* With the run's output, in the context's one epoll source. */
      self->pidfd_watch = _subagent_fd_watch_add (context, self->pidfd, G_IO_IN, on_pidfd_readable, self);
      return;
    }
  /* Kernels before 5.3. */
  self->watch = g_child_watch_source_new (self->pid);
  g_source_set_callback (self->watch, (GSourceFunc) G_CALLBACK (on_child_watch), self, NULL);
  g_source_set_static_name (self->watch, "[libsubagent] command child exit");
  g_source_attach (self->watch, context);
}

gboolean
subagent_host_process_get_if_exited (SubagentHostProcess *self)
{
  if (self->subprocess != NULL)
    return g_subprocess_get_if_exited (self->subprocess);
  return self->exited && WIFEXITED (self->wait_status);
}

int
subagent_host_process_get_exit_status (SubagentHostProcess *self)
{
  if (self->subprocess != NULL)
    return g_subprocess_get_exit_status (self->subprocess);
  return WEXITSTATUS (self->wait_status);
}

gboolean
subagent_host_process_get_if_signaled (SubagentHostProcess *self)
{
  if (self->subprocess != NULL)
    return g_subprocess_get_if_signaled (self->subprocess);
  return self->exited && WIFSIGNALED (self->wait_status);
}

int
subagent_host_process_get_term_sig (SubagentHostProcess *self)
{
  if (self->subprocess != NULL)
    return g_subprocess_get_term_sig (self->subprocess);
  return WTERMSIG (self->wait_status);
}

/* The command runner frees the process only after it exited; should that
 * ever not hold, the child is killed and reaped rather than left a zombie. */
void
subagent_host_process_free (SubagentHostProcess *self)
{
  if (self == NULL)
    return;
  if (self->watch != NULL)
    {
      g_source_destroy (self->watch);
      g_clear_pointer (&self->watch, g_source_unref);
    }
  _subagent_fd_watch_remove (g_steal_pointer (&self->pidfd_watch));
  if (self->subprocess == NULL && !self->exited && self->pid > 0)
    {
      if (!self->own_group || kill (-self->pid, SIGKILL) != 0)
        kill (self->pid, SIGKILL);
      while (waitpid (self->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  /* Reused only once the child is reaped: a live one would still be in it. */
  _subagent_child_cgroup_release (g_steal_pointer (&self->cgroup),
                                  self->cgroup_reusable && (self->exited || self->pid <= 0),
                                  self->cgroup_empty);
  if (self->wait_cancellable != NULL)
    g_cancellable_cancel (self->wait_cancellable);
  if (self->destroy != NULL)
    self->destroy (self->user_data);
  g_clear_object (&self->wait_cancellable);
  g_clear_object (&self->subprocess);
  if (self->stdin_fd >= 0)
    close (self->stdin_fd);
  if (self->pidfd >= 0)
    close (self->pidfd);
  if (self->stdout_fd >= 0)
    close (self->stdout_fd);
  if (self->stderr_fd >= 0)
    close (self->stderr_fd);
  g_free (self);
}
