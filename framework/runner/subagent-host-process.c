/* subagent-host-process.c: a child process of the command runner.
 *
 * A command child on the host (shared, worktree and snapshot isolation) is
 * started with posix_spawn(). GSubprocess in GLib 2.74 always fork()s, and a
 * fork copies the host's page tables and write-protects every page of its
 * heap: the host then takes a copy-on-write fault, with a TLB shootdown on
 * every core running one of its threads, for each page it writes after each
 * spawn. glibc's posix_spawn() shares the address space until exec
 * (CLONE_VM | CLONE_VFORK), so none of that happens. A backend that runs its
 * children elsewhere (a container) keeps its own spawnv() and GSubprocess.
 *
 * What the child gets is what GSubprocess gives it: the three pipes, the
 * child root as working directory, the environment, argv[0] searched in the
 * host's PATH, every other descriptor as the host has it (GLib and we open
 * all of ours close-on-exec). In addition its signal mask is empty and every
 * signal is at its default action, whatever the host ignores or blocks (but
 * glibc's two reserved signals, 32 and 33, which glibc leaves ignored).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>

#include "subagent.h"
#include "subagent-host-process-private.h"

extern char **environ;

struct _SubagentHostProcess
{
  GSubprocess *subprocess;      /* a backend's own spawnv(); else NULL */
  GCancellable *wait_cancellable;

  /* Spawned directly: */
  GPid pid;                     /* 0 once reaped */
  GOutputStream *stdin_pipe;
  GInputStream *stdout_pipe;
  GInputStream *stderr_pipe;
  GSource *watch;
  int wait_status;
  gboolean exited;

  SubagentHostProcessExited callback;
  gpointer user_data;
  GDestroyNotify destroy;
};

/* A pipe whose both ends are close-on-exec and above the standard streams,
 * so that placing one end on 0, 1 or 2 in the child cannot clobber another. */
static gboolean
make_pipe (int      fds[2],
           GError **error)
{
  if (pipe2 (fds, O_CLOEXEC) != 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot make a pipe: %s", g_strerror (saved));
      return FALSE;
    }
  for (guint i = 0; i < 2; i++)
    if (fds[i] <= STDERR_FILENO)
      {
        int moved = fcntl (fds[i], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
        int saved = errno;

        close (fds[i]);
        fds[i] = moved;
        if (moved < 0)
          {
            close (fds[1 - i]);
            g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot make a pipe: %s",
                         g_strerror (saved));
            return FALSE;
          }
      }
  return TRUE;
}

static void
close_fds (int *fds,
           guint n)
{
  for (guint i = 0; i < n; i++)
    if (fds[i] >= 0)
      {
        close (fds[i]);
        fds[i] = -1;
      }
}

/* posix_spawnp() with the three pipes on 0, 1, 2 and @cwd as working
 * directory. On success the host's ends are in @host_ends (stdin's write
 * end, stdout's and stderr's read ends). */
static GPid
spawn_with_pipes (const char         *cwd,
                  const char * const *argv,
                  const char * const *envp,
                  int                 host_ends[3],
                  GError            **error)
{
  int fds[6] = { -1, -1, -1, -1, -1, -1 };  /* stdin r/w, stdout r/w, stderr r/w */
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t none, all;
  pid_t pid = 0;
  int status;

  for (guint i = 0; i < 3; i++)
    if (!make_pipe (fds + 2 * i, error))
      {
        close_fds (fds, G_N_ELEMENTS (fds));
        return 0;
      }

  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_adddup2 (&actions, fds[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2 (&actions, fds[3], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2 (&actions, fds[5], STDERR_FILENO);
  posix_spawn_file_actions_addchdir_np (&actions, cwd);
  posix_spawnattr_init (&attr);
  sigemptyset (&none);
  sigfillset (&all);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  status = posix_spawnp (&pid, argv[0], &actions, &attr, (char * const *) argv,
                         (char * const *) (envp != NULL ? envp : (const char * const *) environ));
  posix_spawnattr_destroy (&attr);
  posix_spawn_file_actions_destroy (&actions);

  /* The child's ends, whatever happened. */
  close (fds[0]);
  close (fds[3]);
  close (fds[5]);
  if (status != 0)
    {
      close (fds[1]);
      close (fds[2]);
      close (fds[4]);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (status), "Failed to execute child process “%s” (%s)",
                   argv[0], g_strerror (status));
      return 0;
    }
  host_ends[0] = fds[1];
  host_ends[1] = fds[2];
  host_ends[2] = fds[4];
  return pid;
}

/**
 * subagent_host_process_spawn: (skip)
 * @isolation: the run's isolation
 * @argv: the command line
 * @envp: (nullable): its environment; %NULL to inherit
 * @error: return location for a #GError
 *
 * Starts @argv in @isolation with its standard streams on pipes: directly
 * when the isolation runs its processes on the host, else through the
 * backend's subagent_isolation_context_spawnv().
 *
 * Returns: the process, or %NULL with @error set
 *   (%SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED)
 */
SubagentHostProcess *
subagent_host_process_spawn (SubagentIsolationContext  *isolation,
                             const char * const        *argv,
                             const char * const        *envp,
                             GError                   **error)
{
  g_autoptr(SubagentHostProcess) self = g_new0 (SubagentHostProcess, 1);
  g_autoptr(GError) local_error = NULL;
  int ends[3];

  g_return_val_if_fail (argv != NULL && argv[0] != NULL, NULL);

  if (!_subagent_isolation_context_spawns_on_host (isolation))
    {
      self->subprocess = subagent_isolation_context_spawnv (isolation, argv, envp,
                                                            G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                            G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                            G_SUBPROCESS_FLAGS_STDERR_PIPE,
                                                            error);
      if (self->subprocess == NULL)
        return NULL;
      if (g_subprocess_get_identifier (self->subprocess) != NULL)
        self->pid = (GPid) g_ascii_strtoll (g_subprocess_get_identifier (self->subprocess), NULL, 10);
      return g_steal_pointer (&self);
    }

  self->pid = spawn_with_pipes (subagent_isolation_context_get_child_root (isolation), argv, envp, ends,
                                &local_error);
  if (self->pid == 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                   "Cannot start “%s” in %s: %s", argv[0], subagent_isolation_context_get_child_root (isolation),
                   local_error->message);
      return NULL;
    }
  self->stdin_pipe = g_unix_output_stream_new (ends[0], TRUE);
  self->stdout_pipe = g_unix_input_stream_new (ends[1], TRUE);
  self->stderr_pipe = g_unix_input_stream_new (ends[2], TRUE);
  return g_steal_pointer (&self);
}

GOutputStream *
subagent_host_process_get_stdin (SubagentHostProcess *self)
{
  return self->subprocess ? g_subprocess_get_stdin_pipe (self->subprocess) : self->stdin_pipe;
}

GInputStream *
subagent_host_process_get_stdout (SubagentHostProcess *self)
{
  return self->subprocess ? g_subprocess_get_stdout_pipe (self->subprocess) : self->stdout_pipe;
}

GInputStream *
subagent_host_process_get_stderr (SubagentHostProcess *self)
{
  return self->subprocess ? g_subprocess_get_stderr_pipe (self->subprocess) : self->stderr_pipe;
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
    kill (self->pid, signum);
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
  g_clear_pointer (&self->watch, g_source_unref);
  notify_exited (self);
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
  g_return_if_fail (self->callback == NULL && self->watch == NULL);

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
  if (self->subprocess == NULL && !self->exited && self->pid > 0)
    {
      kill (self->pid, SIGKILL);
      while (waitpid (self->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  if (self->wait_cancellable != NULL)
    g_cancellable_cancel (self->wait_cancellable);
  if (self->destroy != NULL)
    self->destroy (self->user_data);
  g_clear_object (&self->wait_cancellable);
  g_clear_object (&self->subprocess);
  g_clear_object (&self->stdin_pipe);
  g_clear_object (&self->stdout_pipe);
  g_clear_object (&self->stderr_pipe);
  g_free (self);
}
