/* subagent-host-process-spawn.c: starting a child process of the command
 * runner.
 *
 * A command child on the host (shared, worktree and snapshot isolation) is
 * started with vfork() and execve(), the vfork() made with clone3() where
 * it can be, to start the child in its own cgroup (see
 * _subagent_clone3_vfork()). GSubprocess in GLib 2.74 always fork()s,
 * and a fork copies the host's page tables and write-protects
 * every page of its heap: the host then takes a copy-on-write fault, with a
 * TLB shootdown on every core running one of its threads, for each page it
 * writes after each spawn. vfork() shares the address space until exec, as
 * glibc's posix_spawn() does (CLONE_VM | CLONE_VFORK), so none of that
 * happens; unlike posix_spawn() it lets the child enter its Landlock domain,
 * its own session and PR_SET_PDEATHSIG before exec. A backend that runs its
 * children elsewhere (a container) keeps its own spawnv() and GSubprocess.
 *
 * What the child gets is what GSubprocess gives it: the three pipes, the
 * child root as working directory, the environment, argv[0] searched in the
 * host's PATH, every other descriptor as the host has it (GLib and we open
 * all of ours close-on-exec). In addition its signal mask is empty and every
 * signal is at its default action, whatever the host ignores or blocks (but
 * glibc's two reserved signals, 32 and 33, which glibc leaves ignored); it
 * leads its own session and process group (signals go to the group); it is
 * SIGKILLed when the host dies (PR_SET_PDEATHSIG; the "parent" is the
 * spawning thread, one thread that lives as long as the host: see
 * spawner_main()).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "subagent.h"
#include "subagent-clone3-private.h"
#include "subagent-context-source-private.h"
#include "subagent-host-process-struct-private.h"
#include "subagent-landlock-private.h"

extern char **environ;

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

/* The child between vfork() and exec: nothing but system calls on memory
 * the host prepared, since it shares the host's address space (and the
 * host's thread waits). A failure is left in @exec_errno. */
static void
child_exec (const char         *path,
            const char         *cwd,
            const char * const *argv,
            const char * const *envp,
            const int           fds[6],
            int                 ruleset_fd,
            int                 cgroup_fd,
            volatile int       *cgroup_joined,
            pid_t               host_pid,
            volatile int       *exec_errno,
            int                 err_fd)
{
  struct sigaction dfl = { 0 };
  sigset_t none;
  int saved;

  /* Its own cgroup first: from here on, whatever it starts is in it too,
   * however it leaves the session and process group. A refusal (no write
   * access to the common ancestor) leaves it where the host is; the host
   * reads the outcome from @cgroup_joined, which is its own memory (vfork)
   * and which it reads only after the exec: no /proc/<pid>/cgroup to read. */
  if (cgroup_fd >= 0 && write (cgroup_fd, "0", 1) == 1)
    *cgroup_joined = 1;

  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++)
    sigaction (sig, &dfl, NULL);  /* fails harmlessly on SIGKILL, SIGSTOP, glibc's own */
  /* Its own session and process group: signals to the group reach what it
   * starts, and it has no controlling terminal to inject input into. */
  setsid ();
  /* Dies with the host, even when the host is SIGKILLed. */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != host_pid)
    {
      saved = errno ? errno : ESRCH;
      goto fail;
    }
  if (dup2 (fds[0], STDIN_FILENO) < 0 || dup2 (fds[3], STDOUT_FILENO) < 0 || dup2 (fds[5], STDERR_FILENO) < 0)
    {
      saved = errno;
      goto fail;
    }
  if (chdir (cwd) != 0)
    {
      saved = errno;
      goto fail;
    }
  /* A root child keeps no CAP_SYS_PTRACE past exec (with it, it could
   * read a non-dumpable host's memory and environment), nor CAP_SYS_ADMIN
   * and CAP_PERFMON, which get past Landlock's ptrace scoping to the host's
   * /proc/<pid>/environ: _subagent_landlock_restrict_self() drops them. */
  if (ruleset_fd >= 0 && (saved = _subagent_landlock_restrict_self (ruleset_fd)) != 0)
    goto fail;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  execve (path, (char * const *) argv, (char * const *) envp);
  saved = errno;

fail:
  /* The host resumes once this process execs or exits (vfork), and then
   * reads this from its own memory; @err_fd only where vfork() is a fork(). */
  *exec_errno = saved;
  if (err_fd >= 0)
    while (write (err_fd, &saved, sizeof saved) < 0 && errno == EINTR)
      ;
  _exit (127);
}

/* Whether vfork() shares the host's memory, as it does but under valgrind,
 * which makes it a fork(): what the child leaves in @exec_errno or
 * @cgroup_joined would then never reach the host. Asked once. */
static gboolean
vfork_shares_memory (void)
{
  static gsize answer;   /* 1: shared, 2: not */

  if (g_once_init_enter (&answer))
    {
      volatile int flag = 0;
      sigset_t all, old;
      pid_t pid;

      sigfillset (&all);
      pthread_sigmask (SIG_SETMASK, &all, &old);
      pid = vfork ();
      if (pid == 0)
        {
          flag = 1;
          _exit (0);
        }
      pthread_sigmask (SIG_SETMASK, &old, NULL);
      if (pid > 0)
        while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
          ;
      g_once_init_leave (&answer, flag ? 1 : 2);
    }
  return answer == 1;
}

/* One spawn: what the child needs (the host's memory, shared with it until
 * exec, so nothing here may change or be freed before the spawn is done),
 * and what it left. */
typedef struct {
  SubagentHostProcess *process;
  char *path;
  char *cwd;
  char **argv;
  char **envp;                  /* one block; NULL: the host's environ */
  int ruleset_fd;
  int fds[6];                   /* stdin r/w, stdout r/w, stderr r/w */
  int err_pipe[2];              /* only where vfork() is a fork() */
  int pidfd;                    /* from clone3(), else -1 */
  volatile int cgroup_joined;
  volatile int exec_errno;
  pid_t host_pid;
  pid_t pid;
  int child_errno;

  GMainContext *context;
  GSource *mailbox;             /* where it goes back to @context; NULL: an idle source */
  SubagentHostProcessSpawned callback;
  gpointer user_data;
} SpawnJob;

static void
spawn_job_free (SpawnJob *job)
{
  close_fds (job->fds, G_N_ELEMENTS (job->fds));
  close_fds (job->err_pipe, G_N_ELEMENTS (job->err_pipe));
  close_fds (&job->pidfd, 1);
  g_clear_pointer (&job->process, subagent_host_process_free);
  g_free (job->path);
  g_free (job->cwd);
  g_strfreev (job->argv);
  g_free (job->envp);  /* one block */
  g_clear_pointer (&job->mailbox, g_source_unref);
  g_clear_pointer (&job->context, g_main_context_unref);
  g_free (job);
}

/* The pipes, made by the thread that asked for the spawn. */
static gboolean
spawn_job_make_pipes (SpawnJob  *job,
                      GError   **error)
{
  for (guint i = 0; i < 3; i++)
    if (!make_pipe (job->fds + 2 * i, error))
      return FALSE;
  if (!vfork_shares_memory () && !make_pipe (job->err_pipe, error))
    return FALSE;
  return TRUE;
}

/* Puts @text in the child's stdin pipe before the child exists, when it
 * fits: the pipe is new, so at most PIPE_BUF bytes go in at once without
 * blocking, and its read end is still ours, so no SIGPIPE can come. That
 * spares the run a non-blocking writer, the signal mask around its write
 * and, for a child that exits without reading, the EPIPE. */
static void
prefill_stdin (SpawnJob *job,
               GBytes   *text,
               gboolean  keep_open)
{
  gsize size;
  const char *data = g_bytes_get_data (text, &size);
  ssize_t n = 0;

  if (size > PIPE_BUF)
    return;
  if (size > 0)
    do
      n = write (job->fds[1], data, size);
    while (n < 0 && errno == EINTR);
  /* POSIX makes such a write all or nothing: nothing written, the caller
   * writes it as it writes a long text. */
  if (n <= 0 && size > 0)
    return;
  if (n != (ssize_t) size)
    g_warning ("Only %zd of the %zu bytes of the child's stdin went into its pipe", n, size);
  job->process->stdin_written = TRUE;
  if (!keep_open)
    close_fds (job->fds + 1, 1);
}

/* The child of @job, from either way of starting it below: one not
 * @born_in_cgroup moves itself into the process's cgroup, if it has one. */
static G_GNUC_NORETURN void
spawn_job_child (SpawnJob *job,
                 gboolean  born_in_cgroup)
{
  SubagentChildCgroup *cgroup = job->process->cgroup;

  child_exec (job->path, job->cwd, (const char * const *) job->argv,
              job->envp != NULL ? (const char * const *) job->envp : (const char * const *) environ,
              job->fds, job->ruleset_fd, cgroup != NULL && !born_in_cgroup ? cgroup->procs_fd : -1,
              &job->cgroup_joined, job->host_pid, &job->exec_errno, job->err_pipe[1]);
  g_assert_not_reached ();
}

#ifdef SUBAGENT_HAVE_CLONE3_VFORK
/* Cleared the first time the kernel knows no clone3() or CLONE_INTO_CGROUP
 * (before 5.7), or refuses it (a seccomp filter). */
static gint clone3_usable = TRUE;

static void
spawn_job_child_in_cgroup (gpointer job)
{
  spawn_job_child (job, TRUE);
}
#endif

/* Starts @job's child in its cgroup with clone3(); 0 where that cannot be
 * done (the caller then vfork()s). */
static pid_t
spawn_job_clone_into_cgroup (SpawnJob *job)
{
#ifdef SUBAGENT_HAVE_CLONE3_VFORK
  SubagentChildCgroup *cgroup = job->process->cgroup;
  struct clone_args args = { 0 };
  long ret;

  if (cgroup == NULL || !g_atomic_int_get (&clone3_usable))
    return 0;
  /* And its pidfd, which the run's exit watch would open. */
  args.flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP | CLONE_PIDFD;
  args.pidfd = (guint64) (guintptr) &job->pidfd;
  args.exit_signal = SIGCHLD;
  args.cgroup = (guint64) cgroup->dir_fd;
  ret = _subagent_clone3_vfork (&args, spawn_job_child_in_cgroup, job);
  if (ret > 0)
    {
      job->cgroup_joined = 1;
      return (pid_t) ret;
    }
  if (ret == -ENOSYS || ret == -EINVAL || ret == -E2BIG || ret == -EPERM)
    g_atomic_int_set (&clone3_usable, FALSE);
  /* Else the cgroup refused the child (EACCES, EBUSY...): the child's
   * write to cgroup.procs then meets the same answer, which it reports. */
#endif
  return 0;
}

/* vfork() and exec: only this thread waits for the child to exec; the
 * child's ends are closed here. Leaves the pid in @job->pid (0 on failure,
 * with @job->child_errno). */
static void
spawn_job_run (SpawnJob *job)
{
  sigset_t all, old;
  pid_t pid;
  int child_errno = 0;

  /* No handler of the host may run in the child before it resets them. */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  pid = spawn_job_clone_into_cgroup (job);
  if (pid == 0)
    {
      pid = vfork ();
      if (pid == 0)
        spawn_job_child (job, FALSE);
      child_errno = errno;
    }
  pthread_sigmask (SIG_SETMASK, &old, NULL);

  /* The child's ends, whatever happened. */
  close (job->fds[0]);
  close (job->fds[3]);
  close (job->fds[5]);
  job->fds[0] = job->fds[3] = job->fds[5] = -1;
  if (job->err_pipe[0] >= 0)
    {
      ssize_t n;

      close (job->err_pipe[1]);
      job->err_pipe[1] = -1;
      /* EOF: the exec happened (the pipe is close-on-exec). */
      do
        n = read (job->err_pipe[0], (int *) &job->exec_errno, sizeof job->exec_errno);
      while (n < 0 && errno == EINTR);
      if (n <= 0)
        job->exec_errno = 0;
      close (job->err_pipe[0]);
      job->err_pipe[0] = -1;
    }
  if (pid > 0 && (child_errno = job->exec_errno) != 0)
    while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
      ;
  job->pid = pid > 0 && child_errno == 0 ? pid : 0;
  job->child_errno = child_errno;
}

/* Tells the caller that @job's child could not be started, and why. */
static void
spawn_job_fail (SpawnJob   *job,
                const char *why)
{
  g_autoptr(GError) error = g_error_new (SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                                         "Cannot start “%s” in %s: %s", job->argv[0], job->cwd, why);

  job->callback (NULL, error, job->user_data);
}

/* The exec of @job's program failed with @errno_value (GLib's words). */
static void
spawn_job_fail_exec (SpawnJob *job,
                     int       errno_value)
{
  g_autofree char *why = g_strdup_printf ("Failed to execute child process “%s” (%s)", job->argv[0],
                                          g_strerror (errno_value));

  spawn_job_fail (job, why);
}

/* Back in the thread of @job->context: the process, or why not. */
static void
spawn_job_finish (SpawnJob *job)
{
  SubagentHostProcess *self = job->process;

  if (job->pid == 0)
    {
      spawn_job_fail_exec (job, job->child_errno);
      return;
    }
  self->pid = job->pid;
  self->own_group = TRUE;
  if (self->cgroup != NULL && !job->cgroup_joined)
    {
      g_debug ("Child “%s” could not join the cgroup %s; prune stops its process group and run token only",
               job->argv[0], self->cgroup->path);
      _subagent_child_cgroup_release (g_steal_pointer (&self->cgroup), FALSE, FALSE);
    }
  /* The descriptors themselves, no GUnixInputStream or GUnixOutputStream:
   * GLib probes each one's pollability with an epoll instance of its own. */
  self->stdin_fd = job->fds[1];
  self->stdout_fd = job->fds[2];
  self->stderr_fd = job->fds[4];
  self->pidfd = job->pidfd;
  job->fds[1] = job->fds[2] = job->fds[4] = job->pidfd = -1;
  job->process = NULL;
  job->callback (self, NULL, job->user_data);
}

static gboolean
spawn_job_done (gpointer data)
{
  spawn_job_finish (data);
  return G_SOURCE_REMOVE;
}

/* Spawned children back to the thread of their context: one source per
 * context, as long-lived as it, woken through an eventfd. An idle source
 * per child was allocated and freed each time, and attaching it took the
 * context's lock, which the context's thread, just woken, then waited for
 * (a futex round trip per child). */
typedef struct {
  GSource source;
  GMainContext *context;        /* not a reference: its key in @mailboxes */
  int efd;
  GMutex lock;
  GQueue done;                  /* SpawnJob, in spawning order */
} Mailbox;

static SubagentContextSources mailboxes;

static gboolean
mailbox_dispatch (GSource     *source,
                  GSourceFunc  callback,
                  gpointer     user_data)
{
  Mailbox *self = (Mailbox *) source;
  GQueue done = G_QUEUE_INIT;
  SpawnJob *job;
  guint64 count;

  g_mutex_lock (&self->lock);
  /* Emptied with the queue: a job posted after this wakes the context again. */
  if (read (self->efd, &count, sizeof count) < 0 && errno != EAGAIN)
    g_debug ("Cannot read the spawned children's eventfd: %s", g_strerror (errno));
  done = self->done;
  g_queue_init (&self->done);
  g_mutex_unlock (&self->lock);
  while ((job = g_queue_pop_head (&done)) != NULL)
    {
      spawn_job_finish (job);
      spawn_job_free (job);
    }
  return G_SOURCE_CONTINUE;
}

static void
mailbox_finalize (GSource *source)
{
  Mailbox *self = (Mailbox *) source;

  _subagent_context_source_forget (&mailboxes, self->context, source);
  /* No job is left: each holds the context, and this goes with it. */
  g_mutex_clear (&self->lock);
  close (self->efd);
}

static GSourceFuncs mailbox_funcs = {
  NULL, NULL, mailbox_dispatch, mailbox_finalize, NULL, NULL,
};

static GSource *
mailbox_new (GMainContext *context)
{
  Mailbox *self;
  int efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);

  if (efd < 0)
    return NULL;
  self = (Mailbox *) g_source_new (&mailbox_funcs, sizeof (Mailbox));
  self->context = context;
  self->efd = efd;
  g_mutex_init (&self->lock);
  g_queue_init (&self->done);
  g_source_add_unix_fd (&self->source, efd, G_IO_IN);
  /* GLib blocks a source that may not recurse while dispatching it,
   * taking its descriptor out of the poll set and back, and each of
   * those wakes the context (two eventfd writes and a turn of the loop
   * per child). Jobs are taken from the queue before any is finished,
   * so a nested dispatch finishes only later ones. */
  g_source_set_can_recurse (&self->source, TRUE);
  g_source_set_static_name (&self->source, "[libsubagent] command children spawned");
  return &self->source;
}

/* @context's mailbox (a reference for a job), made at its first spawn;
 * NULL when no eventfd can be made. */
static GSource *
mailbox_for (GMainContext *context)
{
  GSource *self = _subagent_context_source_get (&mailboxes, context, mailbox_new);

  return self != NULL ? g_source_ref (self) : NULL;
}

/* In the spawning thread: @job goes back to its context. */
static void
mailbox_post (GSource  *source,
              SpawnJob *job)
{
  Mailbox *self = (Mailbox *) source;
  static const guint64 one = 1;
  gboolean first;

  g_mutex_lock (&self->lock);
  first = g_queue_is_empty (&self->done);
  g_queue_push_tail (&self->done, job);
  g_mutex_unlock (&self->lock);
  /* A job already waiting has woken the context. */
  if (first && write (self->efd, &one, sizeof one) < 0)
    g_warning ("Cannot wake the context of a spawned child: %s", g_strerror (errno));
}

/* The spawning thread. vfork() suspends the thread that calls it until
 * the child execs (its pre-exec work and the first half of execve(), about
 * a quarter of a millisecond for `true` here): in the run's own thread that
 * was time no other child's exit or start could be handled. This thread
 * lives as long as the process: PR_SET_PDEATHSIG's "parent" is the thread
 * that spawned the child, so a thread that ends would take its children
 * with it. A process that forks gets its own thread at its first spawn
 * (pthread_atfork). */
static GAsyncQueue *spawner_queue;
static pid_t spawner_pid;
G_LOCK_DEFINE_STATIC (spawner);

static gpointer
spawner_main (gpointer data)
{
  GAsyncQueue *queue = data;

  for (;;)
    {
      SpawnJob *job = g_async_queue_pop (queue);
      GSource *idle;

      spawn_job_run (job);
      if (job->mailbox != NULL)
        {
          mailbox_post (job->mailbox, job);
          continue;
        }
      idle = g_idle_source_new ();
      g_source_set_priority (idle, G_PRIORITY_DEFAULT);
      g_source_set_callback (idle, spawn_job_done, job, (GDestroyNotify) spawn_job_free);
      g_source_set_static_name (idle, "[libsubagent] command child spawned");
      g_source_attach (idle, job->context);
      g_source_unref (idle);
    }
  return NULL;
}

static void
spawner_forget (void)
{
  /* The child of a fork() has no spawning thread: its first spawn makes
   * one. (The old queue is the parent's; it stays allocated.) */
  spawner_queue = NULL;
  spawner_pid = 0;
}

/* The spawning thread's queue, and the host's pid (cached: getpid() is a
 * system call). */
static GAsyncQueue *
spawner (pid_t *host_pid)
{
  static gsize atfork_once;
  GAsyncQueue *queue;

  if (g_once_init_enter (&atfork_once))
    {
      pthread_atfork (NULL, NULL, spawner_forget);
      g_once_init_leave (&atfork_once, 1);
    }
  G_LOCK (spawner);
  if (spawner_queue == NULL)
    {
      spawner_queue = g_async_queue_new ();
      spawner_pid = getpid ();
      g_thread_unref (g_thread_new ("subagent-spawn", spawner_main, g_async_queue_ref (spawner_queue)));
    }
  queue = spawner_queue;
  *host_pid = spawner_pid;
  G_UNLOCK (spawner);
  return queue;
}

/* Whether a child spawned in @isolation will get a cgroup of its own (so
 * its leftovers are found there, not in /proc): it runs on the host, the
 * host may make cgroups, and vfork() shares memory, the only way the host
 * learns the child joined. */
gboolean
subagent_host_process_expects_cgroup (SubagentIsolationContext *isolation)
{
  return _subagent_isolation_context_spawns_on_host (isolation) && vfork_shares_memory () &&
         _subagent_cgroup_available ();
}

/**
 * subagent_host_process_spawn_async: (skip)
 * @isolation: the run's isolation
 * @argv: (transfer full): the command line
 * @envp: (transfer full) (nullable): its environment, the array and its strings
 *   in one allocation that g_free() frees (as
 *   _subagent_command_run_build_environment() makes it); %NULL to inherit
 * @ruleset_fd: a Landlock ruleset the child enters before exec, or -1; it
 *   must stay open until @callback is called
 * @stdin_text: (nullable): what the child reads on stdin, put in the pipe
 *   before the child exists when it fits (see
 *   subagent_host_process_get_stdin_written())
 * @keep_stdin_open: whether the child's stdin stays open after
 *   @stdin_text written that way (for later writes); else the child reads
 *   end-of-file after it
 * @context: where @callback is called
 * @callback: called once with the process (transfer full) or an error
 * @user_data: for @callback
 *
 * Starts @argv in @isolation with its standard streams on pipes: directly
 * when the isolation runs its processes on the host (in its own session,
 * killed with the host, confined by @ruleset_fd), else through the
 * backend's subagent_isolation_context_spawnv().
 *
 * A host child is started by the spawning thread (see spawner_main()) and
 * @callback comes from an idle source in @context; a backend's process,
 * and any failure before the spawn, calls @callback before this returns.
 * The error is %SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED.
 */
void
subagent_host_process_spawn_async (SubagentIsolationContext   *isolation,
                                   char                      **argv,
                                   char                      **envp,
                                   int                         ruleset_fd,
                                   GBytes                     *stdin_text,
                                   gboolean                    keep_stdin_open,
                                   GMainContext               *context,
                                   SubagentHostProcessSpawned  callback,
                                   gpointer                    user_data)
{
  SpawnJob *job;
  SubagentHostProcess *self;
  g_autoptr(GError) local_error = NULL;

  g_return_if_fail (argv != NULL && argv[0] != NULL);

  job = g_new0 (SpawnJob, 1);
  for (guint i = 0; i < G_N_ELEMENTS (job->fds); i++)
    job->fds[i] = -1;
  job->err_pipe[0] = job->err_pipe[1] = -1;
  job->pidfd = -1;
  job->argv = argv;
  job->envp = envp;
  job->cwd = g_strdup (subagent_isolation_context_get_child_root (isolation));
  job->ruleset_fd = ruleset_fd;
  job->callback = callback;
  job->user_data = user_data;
  job->process = self = g_new0 (SubagentHostProcess, 1);
  self->stdin_fd = -1;
  self->stdout_fd = -1;
  self->stderr_fd = -1;
  self->pidfd = -1;

  if (!_subagent_isolation_context_spawns_on_host (isolation))
    {
      g_autoptr(GError) error = NULL;

      self->subprocess = subagent_isolation_context_spawnv (isolation, (const char * const *) argv,
                                                            (const char * const *) envp,
                                                            G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                            G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                            G_SUBPROCESS_FLAGS_STDERR_PIPE,
                                                            &error);
      if (self->subprocess == NULL)
        callback (NULL, error, user_data);
      else
        {
          if (g_subprocess_get_identifier (self->subprocess) != NULL)
            self->pid = (GPid) g_ascii_strtoll (g_subprocess_get_identifier (self->subprocess), NULL, 10);
          job->process = NULL;
          callback (self, NULL, user_data);
        }
      spawn_job_free (job);
      return;
    }

  /* Looked up in the host's PATH, as posix_spawnp() would, before the child
   * exists: the child only calls execve(). */
  job->path = strchr (argv[0], '/') != NULL ? g_strdup (argv[0]) : g_find_program_in_path (argv[0]);
  if (job->path == NULL)
    {
      spawn_job_fail_exec (job, ENOENT);
      spawn_job_free (job);
      return;
    }
  if (subagent_host_process_expects_cgroup (isolation))
    {
      g_autoptr(GError) cgroup_error = NULL;

      self->cgroup = _subagent_child_cgroup_new (&cgroup_error);
      if (self->cgroup == NULL)
        g_debug ("Child “%s” gets no cgroup of its own: %s; prune stops its process group and run token only",
                 argv[0], cgroup_error->message);
    }
  if (!spawn_job_make_pipes (job, &local_error))
    {
      spawn_job_fail (job, local_error->message);
      spawn_job_free (job);
      return;
    }
  if (stdin_text != NULL)
    prefill_stdin (job, stdin_text, keep_stdin_open);
  job->context = g_main_context_ref (context);
  job->mailbox = mailbox_for (context);
  g_async_queue_push (spawner (&job->host_pid), job);
}

