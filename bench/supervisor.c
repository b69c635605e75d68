/* bench/supervisor.c: what the supervisor costs, in one run:
 *
 *  1. 1,000 children whose runner answers at once (in process), in `shared`
 *     isolation, through a supervisor (batch, max-parallel 4) — against the
 *     same 1,000 through the manager alone, one after the other. The
 *     difference per child is the supervisor's overhead (target ≤ 0.5 ms);
 *     the total per child is what the whole framework costs (run contract,
 *     session record, audit line, events file).
 *  2. 1,000 command children running `true` through the manager and a
 *     supervisor (batch, max-parallel 4) — against 1,000 plain GSubprocess
 *     spawns of `true` and 1,000 bare posix_spawn() + waitpid()s, 4 at a
 *     time. Target (issue 16): supervisor ≤ 1.2× the bare spawns. The CPU
 *     columns split this process (the framework) from its children. A
 *     fourth loop, the floor, is plain C doing for each child only what the
 *     framework must (its own cgroup, a Landlock domain, its own session,
 *     three pipes, three records appended, the session records synced
 *     every 10 ms; bench/command-floor.c): what is
 *     left between it and the supervisor is the framework's own cost.
 *  3. The same command children through the manager with `confinement:
 *     none` against the default (a Landlock domain, a private TMPDIR, its
 *     own session): what confinement costs per child.
 *  4. Only with --only host-budget: the floor again with 0–200 µs of host
 *     CPU spent on top per child, to read off how much host CPU per child
 *     the 1.2× target leaves on this machine (beside the supervisor's).
 *
 * --child PROGRAM runs another program than `true` in every command child
 * (all loops alike): a static one that only exits measures the spawn
 * without the child's own run.
 *
 * Usage: supervisor [--children N] [--parallel P]
 *        [--only in-process|command|command-manager|command-supervisor|command-bare|command-floor|host-budget]
 * (command-*: only those children, for perf and strace.)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

extern char **environ;

#include <subagent.h>

#include "command-floor.h"

/* A runner that answers at once. */
#define BENCH_TYPE_RUNNER (bench_runner_get_type ())
G_DECLARE_FINAL_TYPE (BenchRunner, bench_runner, BENCH, RUNNER, GObject)

struct _BenchRunner
{
  GObject parent_instance;
};

static void bench_runner_iface_init (SubagentRunnerInterface *iface);
G_DEFINE_FINAL_TYPE_WITH_CODE (BenchRunner, bench_runner, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SUBAGENT_TYPE_RUNNER, bench_runner_iface_init))

static void
bench_run_async (SubagentRunner *runner, SubagentRunContext *context, GCancellable *cancellable,
                 GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr(GTask) task = g_task_new (runner, cancellable, callback, user_data);

  g_task_return_pointer (task, subagent_run_outcome_new (SUBAGENT_STOP_REASON_COMPLETE, 1, 0, 0.01, "ok", "", ""),
                         g_object_unref);
}

static SubagentRunOutcome *
bench_run_finish (SubagentRunner *runner, GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
bench_runner_iface_init (SubagentRunnerInterface *iface)
{
  iface->run_async = bench_run_async;
  iface->run_finish = bench_run_finish;
}

static void bench_runner_class_init (BenchRunnerClass *klass) { }
static void bench_runner_init (BenchRunner *self) { }

static G_NORETURN void
die (const char *what,
     GError     *error)
{
  fprintf (stderr, "supervisor bench: %s: %s\n", what, error ? error->message : "failed");
  exit (1);
}

static char *
make_root (const char *definition)
{
  g_autoptr(GError) error = NULL;
  char *root = g_dir_make_tmp ("subagent-bench-XXXXXX", &error);
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;

  if (root == NULL)
    die ("temp dir", error);
  dir = g_build_filename (root, ".subagent", "agents", NULL);
  g_mkdir_with_parents (dir, 0755);
  path = g_build_filename (dir, "bench.yaml", NULL);
  if (!g_file_set_contents (path, definition, -1, &error))
    die ("definition", error);
  g_free (path);
  /* No approval store on disk: nothing here asks, and plugins may be absent. */
  path = g_build_filename (root, ".subagent", "config.yaml", NULL);
  if (!g_file_set_contents (path, "approvals:\n  sink: memory\n", -1, &error))
    die ("configuration", error);
  return root;
}

/* What each command child runs: `/bin/true` unless --child names another
 * program (an absolute path). The GSubprocess and bare loops spawn `true`
 * found on PATH, as the figures before --child were taken, or that
 * program. */
static const char *child_program = "/bin/true";
static const char *spawned_program = "true";

/* A root whose definition runs child_program, with @extra YAML before it. */
static char *
command_root (const char *extra)
{
  g_autofree char *definition = g_strdup_printf ("name: bench\nisolation: shared\n%scommand: [\"%s\"]\n", extra,
                                                 child_program);

  return make_root (definition);
}

static void
remove_tree (const char *root)
{
  g_autoptr(GSubprocess) rm = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, NULL, "rm", "-rf", "--", root, NULL);

  if (rm != NULL)
    g_subprocess_wait (rm, NULL, NULL);
}

static double
usage_seconds (int who)
{
  struct rusage usage;

  getrusage (who, &usage);
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

/* CPU seconds used so far by this process (all threads) and its reaped
 * children: tells work apart from waiting. */
static double
cpu_seconds (void)
{
  return usage_seconds (RUSAGE_SELF) + usage_seconds (RUSAGE_CHILDREN);
}

/* This process's user and system CPU seconds and context switches so
 * far: where the host's time goes (the framework's code or the kernel) and
 * how often its threads sleep and wake (on this VM a wake-up from another
 * core costs about 12 µs of CPU). */
typedef struct {
  double user;
  double system;
  double switches;
} HostUsage;

static HostUsage
host_usage (void)
{
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  return (HostUsage) {
    usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6,
    usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6,
    usage.ru_nvcsw + usage.ru_nivcsw,
  };
}

/* Of cpu_seconds(), this process's alone (the framework; a child's time
 * between vfork and exec counts as the child's). */
static double
host_cpu_seconds (void)
{
  HostUsage usage = host_usage ();

  return usage.user + usage.system;
}

typedef struct {
  gboolean done;
  GAsyncResult *result;
} Wait;

static void
waited (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Wait *wait = user_data;

  wait->result = g_object_ref (result);
  wait->done = TRUE;
}

static void
spin (gboolean *done)
{
  while (!*done)
    g_main_context_iteration (NULL, TRUE);
}

/* Seconds for @n children as one batch through a supervisor. */
static double
through_supervisor (SubagentManager *manager,
                    guint            n,
                    guint            parallel)
{
  g_autoptr(SubagentSupervisor) supervisor = g_object_new (SUBAGENT_TYPE_SUPERVISOR, "manager", manager,
                                                           "max-parallel", parallel, "max-agents", 0, NULL);
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(GPtrArray) results = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentShutdownReport) report = NULL;
  Wait wait = { FALSE, NULL };
  gint64 start;

  subagent_run_options_set_def_name (options, "bench");
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (items, subagent_batch_item_new ("go", options));

  start = g_get_monotonic_time ();
  subagent_supervisor_run_batch_async (supervisor, items, NULL, waited, &wait);
  spin (&wait.done);
  results = subagent_supervisor_run_batch_finish (supervisor, wait.result, &error);
  g_object_unref (wait.result);
  if (results == NULL)
    die ("batch", error);
  for (guint i = 0; i < results->len; i++)
    if (subagent_run_result_get_status (results->pdata[i]) != SUBAGENT_RUN_STATUS_COMPLETE)
      die (subagent_run_result_get_message (results->pdata[i]), NULL);
  report = subagent_supervisor_shutdown (supervisor, 0, NULL);
  return (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
}

typedef struct {
  SubagentManager *manager;
  SubagentRunOptions *options;
  guint left;       /* to start */
  guint running;
  gboolean done;
} ManagerRuns;

static void manager_more (ManagerRuns *runs);

static void
manager_ran (GObject *source, GAsyncResult *res, gpointer user_data)
{
  ManagerRuns *runs = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunResult) result = subagent_manager_run_finish (SUBAGENT_MANAGER (source), res, &error);

  if (result == NULL || subagent_run_result_get_status (result) != SUBAGENT_RUN_STATUS_COMPLETE)
    die (result ? subagent_run_result_get_message (result) : "manager run", error);
  runs->running--;
  manager_more (runs);
}

static void
manager_more (ManagerRuns *runs)
{
  while (runs->left > 0 && runs->running < GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (runs->options), "parallel")))
    {
      runs->left--;
      runs->running++;
      subagent_manager_run_async (runs->manager, "go", runs->options, NULL, manager_ran, runs);
    }
  if (runs->left == 0 && runs->running == 0)
    runs->done = TRUE;
}

/* Seconds for @n children through the manager alone, @parallel at a time
 * (what a host without a supervisor would do). */
static double
through_manager (SubagentManager *manager,
                 guint            n,
                 guint            parallel)
{
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  ManagerRuns runs = { manager, options, n, 0, FALSE };
  gint64 start = g_get_monotonic_time ();

  subagent_run_options_set_def_name (options, "bench");
  g_object_set_data (G_OBJECT (options), "parallel", GUINT_TO_POINTER (parallel));
  manager_more (&runs);
  spin (&runs.done);
  return (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
}

typedef struct {
  guint left;      /* to start */
  guint running;
  guint parallel;
  gboolean done;
} Spawns;

static void spawn_more (Spawns *spawns);

static void
spawn_exited (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Spawns *spawns = user_data;
  g_autoptr(GError) error = NULL;

  if (!g_subprocess_wait_check_finish (G_SUBPROCESS (source), result, &error))
    die ("true", error);
  spawns->running--;
  spawn_more (spawns);
}

static void
spawn_more (Spawns *spawns)
{
  while (spawns->left > 0 && spawns->running < spawns->parallel)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GSubprocess) process = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, spawned_program,
                                                                NULL);

      if (process == NULL)
        die ("spawn", error);
      spawns->left--;
      spawns->running++;
      g_subprocess_wait_check_async (process, NULL, spawn_exited, spawns);
    }
  if (spawns->left == 0 && spawns->running == 0)
    spawns->done = TRUE;
}

static void spawn_more_posix (Spawns *spawns);

static void
posix_exited (GPid pid, int status, gpointer user_data)
{
  Spawns *spawns = user_data;

  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    die ("true (posix_spawn)", NULL);
  spawns->running--;
  spawn_more_posix (spawns);
}

static void
spawn_more_posix (Spawns *spawns)
{
  while (spawns->left > 0 && spawns->running < spawns->parallel)
    {
      char *argv[] = { (char *) spawned_program, NULL };
      pid_t pid;

      if (posix_spawnp (&pid, spawned_program, NULL, NULL, argv, environ) != 0)
        die ("posix_spawn", NULL);
      spawns->left--;
      spawns->running++;
      g_child_watch_add (pid, posix_exited, spawns);
    }
  if (spawns->left == 0 && spawns->running == 0)
    spawns->done = TRUE;
}

/* Seconds for @n floor children (command-floor.c), in a directory of
 * their own. */
static double
floor_spawns (guint     n,
              guint     parallel,
              guint     extra_host_us,
              gboolean *confined)
{
  g_autofree char *root = make_root ("name: bench\n");
  double seconds = command_floor_run (child_program, root, n, parallel, extra_host_us, confined);

  remove_tree (root);
  return seconds;
}

/* Seconds for @n spawns of `true`, @parallel at a time, each started by
 * @more: plain GSubprocess, or bare posix_spawn() (the primitive the command
 * runner uses for a child on the host), for scale. */
static double
timed_spawns (guint   n,
              guint   parallel,
              void  (*more) (Spawns *spawns))
{
  Spawns spawns = { n, 0, parallel, FALSE };
  gint64 start = g_get_monotonic_time ();

  more (&spawns);
  spin (&spawns.done);
  return (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
}

/* 1. In-process children, shared isolation. */
static void
bench_in_process (guint children,
                  guint parallel)
{
  g_autofree char *root = make_root ("name: bench\nisolation: shared\n");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = subagent_manager_new (root, &error);
  g_autoptr(BenchRunner) runner = g_object_new (BENCH_TYPE_RUNNER, NULL);
  double man1, man, sup, cpu[4];

  if (manager == NULL)
    die ("manager", error);
  subagent_manager_set_runner (manager, SUBAGENT_RUNNER (runner));
  through_manager (manager, 50, 1);  /* warm up: thread pool, page cache */
  cpu[0] = cpu_seconds ();
  man1 = through_manager (manager, children, 1);
  cpu[1] = cpu_seconds ();
  man = through_manager (manager, children, parallel);
  cpu[2] = cpu_seconds ();
  sup = through_supervisor (manager, children, parallel);
  cpu[3] = cpu_seconds ();
  g_clear_object (&manager);
  remove_tree (root);

  printf ("in-process runner, shared isolation:\n");
  printf ("  manager alone, 1 at a time    %7.3f s  %7.3f ms/child         cpu %6.3f ms/child\n", man1,
          1000 * man1 / children, 1000 * (cpu[1] - cpu[0]) / children);
  printf ("  manager alone, %u at a time    %7.3f s  %7.3f ms/child         cpu %6.3f ms/child\n", parallel, man,
          1000 * man / children, 1000 * (cpu[2] - cpu[1]) / children);
  printf ("  supervisor (batch)            %7.3f s  %7.3f ms/child         cpu %6.3f ms/child (target <= 0.5 ms)\n",
          sup, 1000 * sup / children, 1000 * (cpu[3] - cpu[2]) / children);
  printf ("  supervisor over the manager             %+7.3f ms/child\n", 1000 * (sup - man) / children);
}

/* 2. Command children running `true`. */
static void
bench_commands (guint children,
                guint parallel)
{
  g_autofree char *root = command_root ("");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = subagent_manager_new (root, &error);
  double plain, man, sup, bare, duties, cpu[6], host[6];
  gboolean confined;

  if (manager == NULL)
    die ("manager", error);
  timed_spawns (50, parallel, spawn_more);
  cpu[0] = cpu_seconds ();
  host[0] = host_cpu_seconds ();
  plain = timed_spawns (children, parallel, spawn_more);
  cpu[1] = cpu_seconds ();
  host[1] = host_cpu_seconds ();
  man = through_manager (manager, children, parallel);
  cpu[2] = cpu_seconds ();
  host[2] = host_cpu_seconds ();
  sup = through_supervisor (manager, children, parallel);
  cpu[3] = cpu_seconds ();
  host[3] = host_cpu_seconds ();
  bare = timed_spawns (children, parallel, spawn_more_posix);
  cpu[4] = cpu_seconds ();
  host[4] = host_cpu_seconds ();
  duties = floor_spawns (children, parallel, 0, &confined);
  cpu[5] = cpu_seconds ();
  host[5] = host_cpu_seconds ();
  g_clear_object (&manager);
  remove_tree (root);

  {
    g_autofree char *open_root = command_root ("confinement: none\n");
    g_autoptr(SubagentManager) unconfined = subagent_manager_new (open_root, &error);
    g_autofree char *confined_root = command_root ("");
    g_autoptr(SubagentManager) confined = subagent_manager_new (confined_root, &error);
    double none, landlock, none_cpu, landlock_cpu, t0;

    if (unconfined == NULL || confined == NULL)
      die ("manager", error);
    t0 = cpu_seconds ();
    none = through_manager (unconfined, children, parallel);
    none_cpu = cpu_seconds () - t0;
    t0 = cpu_seconds ();
    landlock = through_manager (confined, children, parallel);
    landlock_cpu = cpu_seconds () - t0;
    printf ("confinement of command children (manager, %u at a time):\n", parallel);
    printf ("  confinement: none             %7.3f s  %7.3f ms/child         cpu %6.3f ms/child\n", none,
            1000 * none / children, 1000 * none_cpu / children);
    printf ("  landlock (default)            %7.3f s  %7.3f ms/child  %5.2fx  cpu %6.3f ms/child (wall %+.3f, cpu %+.3f "
            "ms/child)\n", landlock, 1000 * landlock / children, landlock / none, 1000 * landlock_cpu / children,
            1000 * (landlock - none) / children, 1000 * (landlock_cpu - none_cpu) / children);
    g_clear_object (&unconfined);
    g_clear_object (&confined);
    remove_tree (open_root);
    remove_tree (confined_root);
  }

  printf ("command children running %s, %u at a time (cpu: this process + its children; host: this process):\n",
          spawned_program, parallel);
  printf ("  plain GSubprocess spawns      %7.3f s  %7.3f ms/child         cpu %6.3f ms/child, host %6.3f\n", plain,
          1000 * plain / children, 1000 * (cpu[1] - cpu[0]) / children, 1000 * (host[1] - host[0]) / children);
  printf ("  manager alone                 %7.3f s  %7.3f ms/child  %5.2fx  cpu %6.3f ms/child, host %6.3f\n", man,
          1000 * man / children, man / plain, 1000 * (cpu[2] - cpu[1]) / children,
          1000 * (host[2] - host[1]) / children);
  printf ("  supervisor (batch)            %7.3f s  %7.3f ms/child  %5.2fx  cpu %6.3f ms/child, host %6.3f\n",
          sup, 1000 * sup / children, sup / plain, 1000 * (cpu[3] - cpu[2]) / children,
          1000 * (host[3] - host[2]) / children);
  printf ("  bare posix_spawn + waitpid    %7.3f s  %7.3f ms/child         cpu %6.3f ms/child, host %6.3f\n",
          bare, 1000 * bare / children, 1000 * (cpu[4] - cpu[3]) / children, 1000 * (host[4] - host[3]) / children);
  printf ("  floor (plain C, same duties)  %7.3f s  %7.3f ms/child         cpu %6.3f ms/child, host %6.3f%s\n",
          duties, 1000 * duties / children, 1000 * (cpu[5] - cpu[4]) / children, 1000 * (host[5] - host[4]) / children,
          confined ? "" : " (NOT confined: no Landlock or no writable cgroup2 here)");
  printf ("  supervisor ÷ bare posix_spawn: %.2fx wall, %.2fx cpu (target <= 1.2x wall); manager ÷ bare: %.2fx wall, "
          "%.2fx cpu\n", sup / bare, (cpu[3] - cpu[2]) / (cpu[4] - cpu[3]), man / bare,
          (cpu[2] - cpu[1]) / (cpu[4] - cpu[3]));
  printf ("  floor ÷ bare posix_spawn: %.2fx wall, %.2fx cpu (what the duties cost); supervisor ÷ floor: %.2fx wall, "
          "%.2fx cpu (what the framework adds)\n", duties / bare, (cpu[5] - cpu[4]) / (cpu[4] - cpu[3]), sup / duties,
          (cpu[3] - cpu[2]) / (cpu[5] - cpu[4]));
}

/* Only the manager's or the supervisor's command children (Landlock, the
 * default), or only the bare spawns, with nothing else in the process: what `perf record` and
 * `strace -c -f` should look at. */
static void
profile_commands (guint       children,
                  guint       parallel,
                  const char *which)
{
  gboolean manager_alone = g_str_equal (which, "command-manager");
  gboolean supervisor = g_str_equal (which, "command-supervisor");
  gboolean duties = g_str_equal (which, "command-floor");
  gboolean confined = TRUE;
  g_autofree char *root = command_root ("");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = subagent_manager_new (root, &error);
  double wall, cpu0;
  HostUsage usage0, usage1;

  if (manager == NULL)
    die ("manager", error);
  cpu0 = cpu_seconds ();
  usage0 = host_usage ();
  wall = manager_alone ? through_manager (manager, children, parallel)
       : supervisor ? through_supervisor (manager, children, parallel)
       : duties ? floor_spawns (children, parallel, 0, &confined)
              : timed_spawns (children, parallel, spawn_more_posix);
  usage1 = host_usage ();
  printf ("  %s %7.3f s  %7.3f ms/child  cpu %6.3f ms/child, host %6.3f%s\n",
          manager_alone ? "manager alone              " : supervisor ? "supervisor (batch)         "
          : duties ? "floor (plain C)            " : "bare posix_spawn + waitpid ",
          wall, 1000 * wall / children, 1000 * (cpu_seconds () - cpu0) / children,
          1000 * (usage1.user + usage1.system - usage0.user - usage0.system) / children,
          confined ? "" : " (NOT confined)");
  printf ("  host per child: user %.3f ms, system %.3f ms, %.2f context switches (all its threads)\n",
          1000 * (usage1.user - usage0.user) / children, 1000 * (usage1.system - usage0.system) / children,
          (usage1.switches - usage0.switches) / children);
  g_clear_object (&manager);
  remove_tree (root);
}

/* How much host CPU per child the 1.2× target leaves: the floor again with
 * 0–200 µs of host CPU spent on top of its own per child, against the bare
 * spawns measured before and after, and the supervisor's own host CPU in
 * the same run. */
static void
bench_host_budget (guint children,
                   guint parallel)
{
  static const guint extra[] = { 0, 50, 100, 150, 200 };
  g_autofree char *root = command_root ("");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = subagent_manager_new (root, &error);
  double bare, wall[G_N_ELEMENTS (extra)], host[G_N_ELEMENTS (extra)], sup, sup_host, h0, allowed = -1;
  gboolean confined = TRUE;

  if (manager == NULL)
    die ("manager", error);
  timed_spawns (50, parallel, spawn_more_posix);
  bare = timed_spawns (children, parallel, spawn_more_posix);
  for (guint i = 0; i < G_N_ELEMENTS (extra); i++)
    {
      gboolean slot_confined;

      h0 = host_cpu_seconds ();
      wall[i] = floor_spawns (children, parallel, extra[i], &slot_confined);
      host[i] = 1000 * (host_cpu_seconds () - h0) / children;
      confined = confined && slot_confined;
    }
  h0 = host_cpu_seconds ();
  sup = through_supervisor (manager, children, parallel);
  sup_host = 1000 * (host_cpu_seconds () - h0) / children;
  bare = (bare + timed_spawns (children, parallel, spawn_more_posix)) / 2;
  g_clear_object (&manager);
  remove_tree (root);

  printf ("host CPU per child against wall time, %u at a time (bare posix_spawn %.3f ms/child, mean of before and "
          "after):\n", parallel, 1000 * bare / children);
  for (guint i = 0; i < G_N_ELEMENTS (extra); i++)
    {
      printf ("  floor + %3u us of host CPU     host %6.3f ms/child  %7.3f ms/child  %5.2fx bare%s\n", extra[i],
              host[i], 1000 * wall[i] / children, wall[i] / bare, confined ? "" : " (NOT confined)");
      /* Where the ratio crosses 1.2, between this point and the last. */
      if (allowed < 0 && i > 0 && wall[i - 1] / bare <= 1.2 && wall[i] / bare > 1.2)
        allowed = host[i - 1] + (host[i] - host[i - 1]) * (1.2 - wall[i - 1] / bare) / (wall[i] / bare - wall[i - 1] / bare);
    }
  printf ("  supervisor (batch)            host %6.3f ms/child  %7.3f ms/child  %5.2fx bare\n", sup_host,
          1000 * sup / children, sup / bare);
  if (allowed >= 0)
    printf ("  the 1.2x target allows about %.3f ms of host CPU per child here\n", allowed);
  else
    printf ("  the floor's ratios did not cross 1.2x between 0 and %u us: no budget read off this run\n",
            extra[G_N_ELEMENTS (extra) - 1]);
}

int
main (int argc, char *argv[])
{
  int children = 1000;
  int parallel = 4;
  g_autofree char *only = NULL;
  g_autofree char *child = NULL;
  const GOptionEntry entries[] = {
    { "children", 'n', 0, G_OPTION_ARG_INT, &children, "Children per measurement (default 1000)", "N" },
    { "parallel", 'p', 0, G_OPTION_ARG_INT, &parallel, "max-parallel (default 4)", "P" },
    { "child", 0, 0, G_OPTION_ARG_FILENAME, &child, "What each command child runs, an absolute path (default /bin/true)",
      "PROGRAM" },
    { "only", 0, 0, G_OPTION_ARG_STRING, &only,
      "Measure only in-process or command children; command-manager, command-supervisor, command-bare and "
      "command-floor run only those children, for perf and strace; host-budget measures the host CPU per child "
      "that the 1.2x target allows",
      "in-process|command|command-manager|command-supervisor|command-bare|command-floor|host-budget" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("— supervisor overhead");
  g_autoptr(GError) error = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    die ("options", error);
  if (children < 1 || parallel < 1)
    die ("--children and --parallel must be at least 1", NULL);
  if (child != NULL)
    {
      if (!g_path_is_absolute (child) || strpbrk (child, "\"\\\n") != NULL ||
          !g_file_test (child, G_FILE_TEST_IS_EXECUTABLE))
        die ("--child takes the absolute path of an executable (without quotes or backslashes)", NULL);
      child_program = spawned_program = child;
    }
  if (only != NULL && !g_str_equal (only, "in-process") && !g_str_equal (only, "command") &&
      !g_str_equal (only, "command-manager") && !g_str_equal (only, "command-supervisor") &&
      !g_str_equal (only, "command-bare") && !g_str_equal (only, "command-floor") &&
      !g_str_equal (only, "host-budget"))
    die ("--only takes in-process, command, command-manager, command-supervisor, command-bare, command-floor or "
         "host-budget", NULL);
  if (only != NULL && g_str_has_prefix (only, "command-"))
    {
      profile_commands (children, parallel, only);
      return 0;
    }

  printf ("# supervisor bench: %d children, max-parallel %d, command children run %s\n", children, parallel,
          child_program);
  if (only == NULL || g_str_equal (only, "in-process"))
    bench_in_process (children, parallel);
  if (only == NULL || g_str_equal (only, "command"))
    bench_commands (children, parallel);
  if (only != NULL && g_str_equal (only, "host-budget"))
    bench_host_budget (children, parallel);
  return 0;
}
