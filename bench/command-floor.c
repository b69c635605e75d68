/* bench/command-floor.c: the floor of a command child — for each child,
 * only what the framework has to do (its own cgroup, a Landlock domain,
 * its own session, three pipes, three records appended and synced every
 * 50 ms), in plain C on a GLib main loop. Between it and a bare
 * posix_spawn() lies what those duties cost; between the supervisor and
 * it, what the framework adds (bench/supervisor.c prints both).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include "command-floor.h"
#include "subagent-clone3-private.h"

static G_NORETURN void
floor_fail (const char *what)
{
  fprintf (stderr, "command floor: %s: %s\n", what, g_strerror (errno));
  exit (1);
}

/* The floor: command children with nothing but what the framework has to
 * do for each (confinement.c, host-process-spawn.c, session-log.c), in plain C on
 * the same main loop. Each child is born in a cgroup of its slot (or joins
 * it, where clone3() cannot start it there), resets its
 * signals, gets its own session, dies with the host, has three pipes and
 * the workspace as its directory, drops the capabilities that reach the
 * host and enters a Landlock domain (reads everywhere, writes in the
 * workspace and its temporary directory) before it execs; the host writes
 * its task to its stdin, watches its pidfd, reads its output to the end,
 * reaps it, signals its group, reads its cgroup's state, empties its
 * temporary directory and appends a session record, an audit line and an
 * event line, the session records synced by a thread at most 50 ms later
 * (the audit trail, as the framework's, is written, not synced: a host
 * killed at once keeps both, a crash of the machine may lose the last
 * audit lines). */
typedef struct _Floor Floor;

typedef struct {
  Floor *floor;
  GPid pid;
  int pidfd, out, err, slot;
} FloorChild;

struct _Floor {
  guint left;                   /* to start */
  guint running;
  guint parallel;
  gboolean done;
  guint extra_host_us;          /* host CPU spent on top, per child */
  const char *program;          /* what each child runs */
  char *workspace;
  char *tmpdir;
  char **envp;
  int ruleset;                  /* -1: no Landlock here */
  int cgroup_procs[16];         /* one per slot; -1: no cgroup */
  int cgroup_dirfds[16];
  int cgroup_events[16];
  char *cgroup_dirs[16];
  int records, audit, events;
  FloorChild children[16];
  gboolean busy[16];
  GMutex lock;
  GCond cond;
  guint64 appended, synced;
  gboolean quit, syncer_idle;
  GThread *syncer;
};

static gpointer
floor_sync_thread (gpointer data)
{
  Floor *floor = data;

  g_mutex_lock (&floor->lock);
  for (;;)
    {
      guint64 target;

      floor->syncer_idle = TRUE;
      while (floor->synced == floor->appended && !floor->quit)
        g_cond_wait (&floor->cond, &floor->lock);
      floor->syncer_idle = FALSE;
      if (floor->synced == floor->appended)
        break;
      if (!floor->quit)
        {
          /* Let appends gather, as the session log does. */
          g_mutex_unlock (&floor->lock);
          g_usleep (50 * G_TIME_SPAN_MILLISECOND);
          g_mutex_lock (&floor->lock);
        }
      target = floor->appended;
      g_mutex_unlock (&floor->lock);
      fdatasync (floor->records);
      g_mutex_lock (&floor->lock);
      floor->synced = target;
    }
  g_mutex_unlock (&floor->lock);
  return NULL;
}

static void
floor_append (int         fd,
              const char *format,
              ...) G_GNUC_PRINTF (2, 3);

static void
floor_append (int         fd,
              const char *format,
              ...)
{
  char line[1024];
  va_list args;
  int n;

  va_start (args, format);
  n = g_vsnprintf (line, sizeof line, format, args);
  va_end (args);
  if (write (fd, line, MIN ((gsize) n, sizeof line - 1)) < 0)
    floor_fail ("floor record");
}

static void
floor_empty_tmpdir (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);

      /* `true` leaves nothing; a real child's tree would be walked. */
      if (g_remove (child) != 0)
        floor_fail ("empty the temporary directory");
    }
}

static void floor_more (Floor *floor);

static gint64
thread_cpu_us (void)
{
  struct timespec now;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * G_USEC_PER_SEC + now.tv_nsec / 1000;
}

/* Host CPU as a heavier framework would spend it, on the loop's thread
 * once a child has ended (CPU time, not wall: a preempted thread goes on). */
static void
floor_spend (guint us)
{
  gint64 until = thread_cpu_us () + us;

  while (us > 0 && thread_cpu_us () < until)
    ;
}

static void
drain (int fd)
{
  char buffer[4096];

  while (read (fd, buffer, sizeof buffer) > 0)
    ;
}

static gboolean
floor_exited (int          fd,
              GIOCondition condition,
              gpointer     user_data)
{
  FloorChild *child = user_data;
  Floor *floor = child->floor;
  char state[256];
  int status;

  drain (child->out);
  drain (child->err);
  if (waitpid (child->pid, &status, 0) != child->pid || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    floor_fail ("true (floor)");
  kill (-child->pid, SIGKILL);  /* what it left in its group */
  if (floor->cgroup_events[child->slot] >= 0 && pread (floor->cgroup_events[child->slot], state, sizeof state, 0) < 0)
    floor_fail ("cgroup.events");
  close (child->pidfd);
  close (child->out);
  close (child->err);
  floor_empty_tmpdir (floor->tmpdir);
  floor_append (floor->records, "{\"session_id\":\"%08x%08x\",\"def_name\":\"bench\",\"status\":\"complete\","
                "\"exit_status\":%d,\"ended_at\":%" G_GINT64_FORMAT ",\"summary\":\"\"}\n",
                g_random_int (), g_random_int (), WEXITSTATUS (status), g_get_real_time ());
  floor_append (floor->audit, "{\"event\":\"subagent_lineage\",\"ts\":%" G_GINT64_FORMAT ",\"child_run_id\":\"%08x\","
                "\"def_name\":\"bench\",\"depth\":1}\n", g_get_real_time (), g_random_int ());
  floor_append (floor->events, "{\"event\":\"completed\",\"time\":%" G_GINT64_FORMAT ",\"status\":\"complete\"}\n",
                g_get_real_time ());
  g_mutex_lock (&floor->lock);
  floor->appended++;
  if (floor->syncer_idle)
    g_cond_signal (&floor->cond);
  g_mutex_unlock (&floor->lock);
  floor_spend (floor->extra_host_us);

  floor->busy[child->slot] = FALSE;
  floor->running--;
  floor_more (floor);
  return G_SOURCE_REMOVE;
}

/* Between vfork() and exec: system calls only. @in_cgroup: born there. */
static G_NORETURN void
floor_child_exec (Floor     *floor,
                  int        slot,
                  const int  fds[6],
                  pid_t      host,
                  gboolean   in_cgroup)
{
  struct sigaction dfl = { 0 };
  const char *argv[] = { floor->program, NULL };
  sigset_t none;

  if (!in_cgroup && floor->cgroup_procs[slot] >= 0 && write (floor->cgroup_procs[slot], "0", 1) != 1)
    _exit (126);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++)
    sigaction (sig, &dfl, NULL);
  setsid ();
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != host)
    _exit (126);
  if (dup2 (fds[0], 0) < 0 || dup2 (fds[3], 1) < 0 || dup2 (fds[5], 2) < 0 || chdir (floor->workspace) != 0)
    _exit (126);
  if (floor->ruleset >= 0)
    {
      prctl (PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0);
      prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall (SYS_landlock_restrict_self, floor->ruleset, 0) != 0)
        _exit (125);
    }
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  execve (floor->program, (char * const *) argv, floor->envp);
  _exit (127);
}

typedef struct {
  Floor *floor;
  int slot;
  const int *fds;
  pid_t host;
} FloorSpawn;

#ifdef SUBAGENT_HAVE_CLONE3_VFORK
static void
floor_child_in_cgroup (gpointer data)
{
  FloorSpawn *spawn = data;

  floor_child_exec (spawn->floor, spawn->slot, spawn->fds, spawn->host, TRUE);
}
#endif

/* The child started in its slot's cgroup as the framework starts one,
 * else 0. */
static pid_t
floor_clone_into_cgroup (FloorSpawn *spawn)
{
#ifdef SUBAGENT_HAVE_CLONE3_VFORK
  static gboolean refused;
  struct clone_args args = { 0 };
  long ret;

  if (refused || spawn->floor->cgroup_dirfds[spawn->slot] < 0)
    return 0;
  args.flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = (guint64) spawn->floor->cgroup_dirfds[spawn->slot];
  ret = _subagent_clone3_vfork (&args, floor_child_in_cgroup, spawn);
  if (ret > 0)
    return (pid_t) ret;
  refused = TRUE;
#endif
  return 0;
}

static void
floor_spawn (Floor *floor,
             int    slot)
{
  FloorChild *child = &floor->children[slot];
  pid_t host = getpid ();
  sigset_t all, old;
  int fds[6];
  pid_t pid;

  for (int i = 0; i < 3; i++)
    if (pipe2 (fds + 2 * i, O_CLOEXEC) != 0)
      floor_fail ("pipe");
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  pid = floor_clone_into_cgroup (&(FloorSpawn) { floor, slot, fds, host });
  if (pid == 0)
    {
      pid = vfork ();
      if (pid == 0)
        floor_child_exec (floor, slot, fds, host, FALSE);
    }
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (pid < 0)
    floor_fail ("vfork");
  close (fds[0]);
  close (fds[3]);
  close (fds[5]);
  if (write (fds[1], "go\n", 3) < 0 && errno != EPIPE)
    floor_fail ("stdin");
  close (fds[1]);
  child->floor = floor;
  child->pid = pid;
  child->slot = slot;
  child->out = fds[2];
  child->err = fds[4];
  child->pidfd = syscall (SYS_pidfd_open, pid, 0);
  if (child->pidfd < 0)
    floor_fail ("pidfd_open");
  g_unix_fd_add (child->pidfd, G_IO_IN, floor_exited, child);
}

static void
floor_more (Floor *floor)
{
  for (int slot = 0; slot < (int) floor->parallel && floor->left > 0; slot++)
    if (!floor->busy[slot])
      {
        floor->busy[slot] = TRUE;
        floor->left--;
        floor->running++;
        floor_spawn (floor, slot);
      }
  if (floor->left == 0 && floor->running == 0)
    floor->done = TRUE;
}

/* A ruleset like the framework's default: read and execute everywhere,
 * write in @workspace and @tmpdir (and /dev/null), signals and abstract
 * sockets scoped. -1 without Landlock. */
static int
floor_ruleset (const char *workspace,
               const char *tmpdir)
{
  struct { guint64 handled_access_fs, handled_access_net, scoped; } attr = { 0 };
  const guint64 all = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;
  const struct { const char *path; guint64 access; } rules[] = {
    { "/", LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR },
    { workspace, all },
    { tmpdir, all },
    { "/dev/null", LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE },
  };
  long abi = syscall (SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  int ruleset;

  if (abi < 1)
    return -1;
  attr.handled_access_fs = all;
  attr.scoped = abi >= 6 ? 3 : 0;  /* abstract unix sockets, signals */
  ruleset = syscall (SYS_landlock_create_ruleset, &attr, abi >= 6 ? sizeof attr : 2 * sizeof (guint64), 0);
  if (ruleset < 0)
    return -1;
  for (guint i = 0; i < G_N_ELEMENTS (rules); i++)
    {
      struct landlock_path_beneath_attr rule = { .allowed_access = rules[i].access };

      rule.parent_fd = open (rules[i].path, O_PATH | O_CLOEXEC);
      if (rule.parent_fd < 0 || syscall (SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
        floor_fail ("landlock rule");
      close (rule.parent_fd);
    }
  return ruleset;
}

/* One cgroup per slot below this process's own, when cgroup2 is mounted
 * (on its own in a hybrid layout) and writable. Returns whether every slot
 * has one; else the floor runs without (and says so). */
static gboolean
floor_cgroups (Floor *floor,
               guint  parallel)
{
  const char *mount = g_file_test ("/sys/fs/cgroup/unified/cgroup.procs", G_FILE_TEST_EXISTS)
                      ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup";
  g_autofree char *text = NULL;
  const char *own;

  for (guint i = 0; i < G_N_ELEMENTS (floor->cgroup_procs); i++)
    floor->cgroup_procs[i] = floor->cgroup_dirfds[i] = floor->cgroup_events[i] = -1;
  if (!g_file_get_contents ("/proc/self/cgroup", &text, NULL, NULL) || (own = strstr (text, "0::/")) == NULL)
    return FALSE;
  own += 3;
  *strchrnul (own, '\n') = '\0';
  for (guint i = 0; i < parallel; i++)
    {
      g_autofree char *dir = g_strdup_printf ("%s%s/subagent-bench-floor-%d-%u", mount,
                                              g_str_equal (own, "/") ? "" : own, getpid (), i);
      g_autofree char *procs = g_build_filename (dir, "cgroup.procs", NULL);
      g_autofree char *events = g_build_filename (dir, "cgroup.events", NULL);

      if (mkdir (dir, 0755) != 0)
        return FALSE;
      floor->cgroup_dirfds[i] = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      floor->cgroup_dirs[i] = g_steal_pointer (&dir);
      floor->cgroup_procs[i] = open (procs, O_WRONLY | O_CLOEXEC);
      floor->cgroup_events[i] = open (events, O_RDONLY | O_CLOEXEC);
      if (floor->cgroup_procs[i] < 0 || floor->cgroup_events[i] < 0)
        return FALSE;
    }
  return TRUE;
}

/**
 * command_floor_run:
 * @program: the absolute path of what each child runs, such as `/bin/true`
 * @workspace: an existing directory the children run in (their records,
 *   and their temporary directory, are made in it)
 * @n: how many children
 * @parallel: how many at a time (at most 16)
 * @extra_host_us: host CPU to spend on top for each child, in µs (0: none)
 * @confined: (out): whether they ran in a Landlock domain and a cgroup
 *
 * Runs @n floor children of @program, @parallel at a time, on the
 * thread-default main context. With @extra_host_us, the loop spends that
 * much CPU more after each child, as a framework with more to do per child
 * would: how the wall time grows with it is the host CPU a target allows.
 *
 * Returns: the seconds it took
 */
double
command_floor_run (const char *program,
                   const char *workspace,
                   guint       n,
                   guint       parallel,
                   guint       extra_host_us,
                   gboolean   *confined)
{
  Floor floor = { n, 0, MIN (parallel, G_N_ELEMENTS (floor.children)), FALSE, extra_host_us };
  g_auto(GStrv) env = g_get_environ ();
  g_autofree char *records = g_build_filename (workspace, "records.jsonl", NULL);
  g_autofree char *audit = g_build_filename (workspace, "audit.jsonl", NULL);
  g_autofree char *events = g_build_filename (workspace, "events.jsonl", NULL);
  void (*old_pipe) (int);
  gint64 start;

  floor.program = program;
  floor.workspace = (char *) workspace;
  floor.tmpdir = g_build_filename (workspace, "tmp", NULL);
  if (g_mkdir_with_parents (floor.tmpdir, 0700) != 0)
    floor_fail ("temporary directory");
  env = g_environ_setenv (env, "TMPDIR", floor.tmpdir, TRUE);
  env = g_environ_setenv (env, "SUBAGENT_RUN_ID", "0123456789abcdef0123456789abcdef", TRUE);
  floor.envp = env;
  floor.ruleset = floor_ruleset (workspace, floor.tmpdir);
  *confined = floor_cgroups (&floor, floor.parallel) && floor.ruleset >= 0;
  floor.records = open (records, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  floor.audit = open (audit, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  floor.events = open (events, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (floor.records < 0 || floor.audit < 0 || floor.events < 0)
    floor_fail ("floor records");
  g_mutex_init (&floor.lock);
  g_cond_init (&floor.cond);
  floor.syncer = g_thread_new ("floor-sync", floor_sync_thread, &floor);
  /* A child may be gone before its task is written (the framework blocks
   * SIGPIPE around that write). */
  old_pipe = signal (SIGPIPE, SIG_IGN);

  start = g_get_monotonic_time ();
  floor_more (&floor);
  while (!floor.done)
    g_main_context_iteration (NULL, TRUE);
  start = g_get_monotonic_time () - start;
  signal (SIGPIPE, old_pipe);

  g_mutex_lock (&floor.lock);
  floor.quit = TRUE;
  g_cond_signal (&floor.cond);
  g_mutex_unlock (&floor.lock);
  g_thread_join (floor.syncer);
  g_mutex_clear (&floor.lock);
  g_cond_clear (&floor.cond);
  close (floor.records);
  close (floor.audit);
  close (floor.events);
  if (floor.ruleset >= 0)
    close (floor.ruleset);
  for (guint i = 0; i < G_N_ELEMENTS (floor.cgroup_procs); i++)
    {
      if (floor.cgroup_procs[i] >= 0)
        close (floor.cgroup_procs[i]);
      if (floor.cgroup_dirfds[i] >= 0)
        close (floor.cgroup_dirfds[i]);
      if (floor.cgroup_events[i] >= 0)
        close (floor.cgroup_events[i]);
      if (floor.cgroup_dirs[i] != NULL)
        rmdir (floor.cgroup_dirs[i]);
      g_free (floor.cgroup_dirs[i]);
    }
  g_free (floor.tmpdir);
  return start / (double) G_USEC_PER_SEC;
}
