/* bench/docker.c: the docker isolation backend (Engine API) against the
 * bare docker CLI, in one run:
 *
 *  1. on the local engine (DOCKER_HOST or --host): ours = provider prepare
 *     (image check, workspace copy, owner record, create + start + bind
 *     probe through the API) + one spawnv of `true` (the exec helper) +
 *     cleanup; bare = what a user would type: `docker run -d … sleep` with
 *     the same hardening and bind mount, `docker exec … true`,
 *     `docker rm -f`. Target: ours ≤ 0.8× bare (the CLI pays a process
 *     start and a client set-up per step). The same cycle again with a
 *     warm container pool (option container_pool, --pool-size, default 1):
 *     prepare takes a container made and started beforehand; the pool's
 *     background refill is waited out before every timed cycle of any
 *     kind, so it never runs inside what is timed (it is off the critical
 *     path, not gone: its time is printed too).
 *  2. on the remote-like engine (--remote, default
 *     $SUBAGENT_TEST_REMOTE_HOST), a tree of --copy-files files (2,000):
 *     copy-in as a run makes it (a tar made in process, fed to the `tar`
 *     in the container, docker-copy-in.c; PUT archive where that cannot
 *     be used) and by PUT archive alone vs `docker cp DIR/.
 *     C:/workspace`; copy-out = GET archive applied to a directory vs
 *     `docker cp C:/workspace/. DIR`, both into an empty directory and, for
 *     ours, into the up-to-date snapshot (what a run does). Target ≤ 0.7×.
 *
 * Each pair alternates, iteration by iteration, so drift of the machine
 * hits both alike. Prints medians and ratios as Markdown tables.
 *
 * Usage: docker [--iterations N] [--files N] [--copy-files N] [--image IMAGE]
 *               [--host ADDRESS] [--remote ADDRESS] [--pool-size N]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include <subagent.h>

#include "docker-engine.h"

#define TARGET_CYCLE 0.8
#define TARGET_COPY 0.7

static G_NORETURN void
die (const char *what,
     GError     *error)
{
  fprintf (stderr, "docker bench: %s: %s\n", what, error ? error->message : "failed");
  exit (1);
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static double
median (GArray *samples)
{
  g_array_sort (samples, compare_doubles);
  if (samples->len == 0)
    return 0;
  if (samples->len % 2 == 1)
    return g_array_index (samples, double, samples->len / 2);
  return (g_array_index (samples, double, samples->len / 2 - 1) +
          g_array_index (samples, double, samples->len / 2)) / 2;
}

/* Runs engine + args; returns stdout, dies on failure. */
static char *
engine (char       **engine_argv,
        const char  *first,
        ...) G_GNUC_NULL_TERMINATED;

static char *
engine (char       **engine_argv,
        const char  *first,
        ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  va_list ap;

  for (guint i = 0; engine_argv[i] != NULL; i++)
    g_ptr_array_add (argv, engine_argv[i]);
  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  proc = g_subprocess_newv ((const char * const *) argv->pdata,
                            G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  if (proc == NULL || !g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, &err, &error))
    die ("running the engine", error);
  if (!g_subprocess_get_successful (proc))
    {
      fprintf (stderr, "docker bench: %s %s failed: %s\n", engine_argv[0], first, err);
      exit (1);
    }
  return g_strstrip (g_steal_pointer (&out));
}

/* The bare sequence; returns its wall time in seconds. */
static double
bare_cycle (char       **engine_argv,
            const char  *image,
            const char  *mount_dir)
{
  g_autofree char *volume = g_strdup_printf ("%s:/workspace", mount_dir);
  g_autofree char *id = NULL;
  gint64 start = g_get_monotonic_time ();

  id = engine (engine_argv, "run", "--detach", "--pull", "never", "--network", "none", "--cap-drop", "ALL",
               "--security-opt", "no-new-privileges", "--user", "65534:65534", "--read-only",
               "--tmpfs", "/tmp", "--pids-limit", "512", "--ulimit", "nofile=4096:4096", "--volume", volume,
               "--workdir", "/workspace", "--entrypoint", "sleep", image, "2147483647", NULL);
  g_free (engine (engine_argv, "exec", "--interactive", "--workdir", "/workspace", id, "true", NULL));
  g_free (engine (engine_argv, "rm", "-f", id, NULL));
  return (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
}

/* Sums of ours' phases: prepare, exec, cleanup; [0] plain, [1] pooled. */
static gint64 phase_usec[2][3];
static guint pooled_hits;

/* Waits until @provider's pool is full (or stopped): its refill must not
 * run inside a timed cycle. Returns the seconds waited. */
static double
wait_pool_idle (SubagentIsolationProvider *provider)
{
  gint64 start = g_get_monotonic_time ();
  guint filling = 1;

  for (;;)
    {
      g_object_get (provider, "pool-filling", &filling, NULL);
      if (filling == 0)
        break;
      g_usleep (5000);
    }
  return (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
}

/* Ours; returns its wall time in seconds, the copy's in *copy_seconds. */
static double
provider_cycle (SubagentIsolationProvider *provider,
                const char                *parent,
                const char                *image,
                const char                *host,
                guint                      index,
                int                        pool_size,
                double                    *copy_seconds)
{
  g_autoptr(JsonObject) options = json_object_new ();
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = g_strdup_printf ("bench-%d-%s%u", (int) getpid (), pool_size > 0 ? "p" : "", index);
  gboolean pooled = FALSE;
  const char * const argv[] = { "true", NULL };
  gint64 copy_usec = 0;
  gint64 start;

  json_object_set_string_member (options, "image", image);
  json_object_set_string_member (options, "host", host);
  if (pool_size > 0)
    json_object_set_int_member (options, "container_pool", pool_size);
  request = g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST, "parent-root", parent, "isolation", "docker",
                          "session-key", key, "parent-run-id", "bench", "options", options, NULL);

  gint64 t1, t2;

  start = g_get_monotonic_time ();
  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  if (context == NULL)
    die ("prepare", error);
  t1 = g_get_monotonic_time ();
  proc = subagent_isolation_context_spawnv (context, argv, NULL, G_SUBPROCESS_FLAGS_NONE, &error);
  if (proc == NULL || !g_subprocess_wait_check (proc, NULL, &error))
    die ("exec true", error);
  t2 = g_get_monotonic_time ();
  subagent_isolation_context_cleanup (context);
  phase_usec[pool_size > 0][0] += t1 - start;
  phase_usec[pool_size > 0][1] += t2 - t1;
  phase_usec[pool_size > 0][2] += g_get_monotonic_time () - t2;
  g_variant_lookup (subagent_isolation_context_get_backend_data (context), "pooled", "b", &pooled);
  pooled_hits += pooled;
  g_variant_lookup (subagent_isolation_context_get_backend_data (context), "workspace-copy-usec", "x", &copy_usec);
  *copy_seconds = copy_usec / (double) G_USEC_PER_SEC;
  return (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
}

static double
seconds_since (gint64 start)
{
  return (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
}

static void
make_tree (const char *root,
           int         files)
{
  g_autoptr(GError) error = NULL;

  for (int i = 0; i < files; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/src/d%02d/file-%04d.c", root, i % 40, i);
      g_autofree char *dir = g_path_get_dirname (path);
      g_autofree char *text = g_strdup_printf ("/* file %d */\nint f%d (void) { return %d; }\n%s", i, i, i,
                                               i % 10 == 0 ? "/* a somewhat longer file, every tenth */\n" : "");

      g_mkdir_with_parents (dir, 0755);
      if (!g_file_set_contents (path, text, -1, &error))
        die ("writing a tree", error);
    }
}

static char *
fresh_dir (const char *name)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *template = g_strdup_printf ("docker-bench-%s-XXXXXX", name);
  char *dir = g_dir_make_tmp (template, &error);

  if (dir == NULL)
    die ("temp dir", error);
  return dir;
}

/* Copy-in and copy-out of a tree on the remote-like engine, ours vs `docker cp`. */
static void
bench_copy (const char *remote,
            const char *image,
            int         files,
            int         iterations)
{
  g_autofree char *cli_host = g_strdup (remote);
  char *engine_argv[] = { (char *) "docker", (char *) "-H", cli_host, NULL };
  g_autoptr(DockerEngine) api = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) in_ours = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) in_bare = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) in_put = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) out_ours = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) out_ours_update = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) out_bare = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *tree = fresh_dir ("tree");
  g_autofree char *id = NULL;
  double mi_ours, mi_put, mi_bare, mo_ours, mo_bare, mo_update;
  const char *copy_in_method = "none";

  api = docker_engine_new (remote, NULL, &error);
  if (api == NULL || !docker_engine_negotiate (api, NULL, &error))
    die ("remote engine", error);
  make_tree (tree, files);
  id = engine (engine_argv, "run", "--detach", "--pull", "never", "--network", "none", "--user", "0",
               "--mount", "type=volume,dst=/workspace,volume-driver=local,volume-opt=type=tmpfs,"
               "volume-opt=device=tmpfs,volume-opt=o=mode=1777",
               "--entrypoint", "sleep", image, "2147483647", NULL);

  for (int i = 0; i < iterations + 1; i++)
    {
      g_autofree char *out_a = fresh_dir ("out-ours");
      g_autofree char *out_b = fresh_dir ("out-bare");
      g_autofree char *source = g_strdup_printf ("%s/.", tree);
      g_autofree char *target = g_strdup_printf ("%s:/workspace", id);
      g_autofree char *from = g_strdup_printf ("%s:/workspace/.", id);
      double t_ours = 0, t_put = 0, t_bare = 0, t_out_ours = 0, t_out_bare = 0, t_update = 0;
      gint64 start;

      for (int order = 0; order < 2; order++)
        {
          if ((order == 0) == (i % 2 == 0))
            {
              start = g_get_monotonic_time ();
              if (!docker_copy_in (api, id, "0", tree, NULL, NULL, 0, 0, TRUE, &copy_in_method, NULL, NULL, &error))
                die ("copy-in", error);
              t_ours = seconds_since (start);
              start = g_get_monotonic_time ();
              if (!docker_tar_put (api, id, tree, NULL, NULL, 0, 0, NULL, &error))
                die ("PUT archive", error);
              t_put = seconds_since (start);
              start = g_get_monotonic_time ();
              if (!docker_tar_fetch (api, id, out_a, NULL, NULL, G_MAXUINT64, NULL, &error))
                die ("GET archive", error);
              t_out_ours = seconds_since (start);
              /* What a run does: the snapshot is up to date but for the child's changes. */
              start = g_get_monotonic_time ();
              if (!docker_tar_fetch (api, id, out_a, NULL, NULL, G_MAXUINT64, NULL, &error))
                die ("GET archive", error);
              t_update = seconds_since (start);
            }
          else
            {
              start = g_get_monotonic_time ();
              g_free (engine (engine_argv, "cp", source, target, NULL));
              t_bare = seconds_since (start);
              start = g_get_monotonic_time ();
              g_free (engine (engine_argv, "cp", from, out_b, NULL));
              t_out_bare = seconds_since (start);
            }
        }
      if (i > 0)   /* the first is a warm-up */
        {
          g_array_append_val (in_ours, t_ours);
          g_array_append_val (in_put, t_put);
          g_array_append_val (in_bare, t_bare);
          g_array_append_val (out_ours, t_out_ours);
          g_array_append_val (out_bare, t_out_bare);
          g_array_append_val (out_ours_update, t_update);
        }
      subagent_tree_remove (out_a, NULL, NULL);
      subagent_tree_remove (out_b, NULL, NULL);
    }
  g_free (engine (engine_argv, "rm", "-f", "-v", id, NULL));
  subagent_tree_remove (tree, NULL, NULL);

  mi_ours = median (in_ours);
  mi_bare = median (in_bare);
  mi_put = median (in_put);
  mo_ours = median (out_ours);
  mo_bare = median (out_bare);
  mo_update = median (out_ours_update);
  printf ("\nremote-like engine %s, a tree of %d files, %d iterations\n\n", remote, files, iterations);
  printf ("| measure | median | vs `docker cp` |\n| --- | --- | --- |\n");
  printf ("| copy-in, `docker cp DIR/. C:/workspace` | %.3f s | 1.00× |\n", mi_bare);
  printf ("| copy-in as a run makes it (%s) | %.3f s | %.2f× (target ≤ %.1f×: %s) |\n",
          g_str_equal (copy_in_method, "exec") ? "tar in the container, fed from a tar made in process"
                                               : "PUT archive: the image has no usable tar",
          mi_ours, mi_ours / mi_bare, TARGET_COPY, mi_ours / mi_bare <= TARGET_COPY ? "met" : "NOT met");
  printf ("| copy-in, PUT archive (tar made in process; the fall-back) | %.3f s | %.2f× |\n", mi_put,
          mi_put / mi_bare);
  printf ("| copy-out, `docker cp C:/workspace/. DIR` | %.3f s | 1.00× |\n", mo_bare);
  printf ("| copy-out, GET archive applied to an empty DIR | %.3f s | %.2f× (target ≤ %.1f×: %s) |\n", mo_ours,
          mo_ours / mo_bare, TARGET_COPY, mo_ours / mo_bare <= TARGET_COPY ? "met" : "NOT met");
  printf ("| copy-out, GET archive applied to the up-to-date snapshot | %.3f s | %.2f× |\n", mo_update,
          mo_update / mo_bare);
}

int
main (int   argc,
      char *argv[])
{
  int iterations = 10;
  int files = 50;
  int copy_files = 2000;
  int pool_size = 1;
  g_autofree char *image = g_strdup (g_getenv ("SUBAGENT_TEST_IMAGE") ? g_getenv ("SUBAGENT_TEST_IMAGE")
                                                                     : "subagent-busybox:latest");
  g_autofree char *host = g_strdup (g_getenv ("DOCKER_HOST") ? g_getenv ("DOCKER_HOST")
                                                            : "unix:///var/run/docker.sock");
  g_autofree char *remote = g_strdup (g_getenv ("SUBAGENT_TEST_REMOTE_HOST"));
  g_autofree char *only = NULL;
  const GOptionEntry entries[] = {
    { "only", 0, 0, G_OPTION_ARG_STRING, &only, "Run only one part: cycle or copy", "PART" },
    { "iterations", 'n', 0, G_OPTION_ARG_INT, &iterations, "Cycles of each kind (default 10)", "N" },
    { "files", 0, 0, G_OPTION_ARG_INT, &files, "Files in the parent tree of the cycle (default 50)", "N" },
    { "pool-size", 0, 0, G_OPTION_ARG_INT, &pool_size, "Warm containers of the pooled cycle (default 1; 0: "
      "no pooled cycle)", "N" },
    { "copy-files", 0, 0, G_OPTION_ARG_INT, &copy_files, "Files in the copied tree (default 2000)", "N" },
    { "image", 0, 0, G_OPTION_ARG_STRING, &image, "Image (default $SUBAGENT_TEST_IMAGE)", "IMAGE" },
    { "host", 0, 0, G_OPTION_ARG_STRING, &host, "Local engine (default $DOCKER_HOST)", "ADDRESS" },
    { "remote", 0, 0, G_OPTION_ARG_STRING, &remote, "Remote-like engine (default $SUBAGENT_TEST_REMOTE_HOST)",
      "ADDRESS" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- docker isolation (Engine API) vs the docker CLI");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentIsolationProvider) provider = NULL;
  g_autoptr(SubagentIsolationProvider) pooled_provider = NULL;
  g_autoptr(GArray) pooled = g_array_new (FALSE, FALSE, sizeof (double));
  double refill_wait = 0;
  g_autoptr(GArray) ours = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) copies = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) bare = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *parent = NULL;
  g_autofree char *mount_dir = NULL;
  g_autofree char *cache = NULL;
  char *engine_argv[] = { (char *) "docker", (char *) "-H", NULL, NULL };
  double m_ours, m_copy, m_bare, m_pooled = 0;

  /* Found beside the build's plugins unless the caller says otherwise. */
  g_setenv ("SUBAGENT_PLUGIN_PATH", BENCH_PLUGIN_PATH, FALSE);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    die ("options", error);
  if (iterations < 1 || files < 0 || copy_files < 1 || pool_size < 0 || pool_size > 16)
    die ("options", NULL);
  engine_argv[2] = host;

  /* Workspaces in a private cache dir, set before GLib reads it. */
  cache = fresh_dir ("cache");
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  parent = fresh_dir ("parent");
  mount_dir = fresh_dir ("bare");
  make_tree (parent, files);
  g_chmod (mount_dir, 0777);

  provider = subagent_plugin_registry_get_isolation_provider (subagent_plugin_registry_get_default (), "docker", &error);
  if (provider == NULL)
    die ("loading the docker plugin", error);
  g_object_set (provider, "host", host, NULL);
  if (!subagent_isolation_provider_is_available (provider, &error))
    die ("engine", error);
  /* The pooled cycle on a provider of its own: its pool and caches apart. */
  pooled_provider = g_object_new (G_OBJECT_TYPE (provider), "host", host, NULL);

  if (only != NULL && g_str_equal (only, "copy"))
    goto copy;
  /* One warm-up of each: first-use costs (plugin, page cache) are not the subject. */
  {
    double copy;
    provider_cycle (provider, parent, image, host, 0, 0, &copy);
    bare_cycle (engine_argv, image, mount_dir);
    if (pool_size > 0)
      {
        /* Probes the bind (plain path) and starts the pool. */
        provider_cycle (pooled_provider, parent, image, host, 0, pool_size, &copy);
        wait_pool_idle (pooled_provider);
      }
    memset (phase_usec, 0, sizeof phase_usec);
    pooled_hits = 0;
  }
  for (int i = 0; i < iterations; i++)
    {
      double copy = 0, t_ours = 0, t_bare = 0, t_pooled = 0;
      int kinds = pool_size > 0 ? 3 : 2;

      /* Rotate which goes first, so none always runs on a warmer engine;
       * the pool is full (its refill done) before each. */
      for (int k = 0; k < kinds; k++)
        {
          int kind = (i + k) % kinds;

          if (pool_size > 0)
            refill_wait += wait_pool_idle (pooled_provider);
          if (kind == 0)
            t_ours = provider_cycle (provider, parent, image, host, i + 1, 0, &copy);
          else if (kind == 1)
            t_bare = bare_cycle (engine_argv, image, mount_dir);
          else
            {
              double pooled_copy;
              t_pooled = provider_cycle (pooled_provider, parent, image, host, i + 1, pool_size, &pooled_copy);
            }
        }
      g_array_append_val (ours, t_ours);
      g_array_append_val (copies, copy);
      g_array_append_val (bare, t_bare);
      if (pool_size > 0)
        g_array_append_val (pooled, t_pooled);
    }
  if (pool_size > 0)
    refill_wait += wait_pool_idle (pooled_provider);

  m_ours = median (ours);
  m_copy = median (copies);
  m_bare = median (bare);
  if (pool_size > 0)
    m_pooled = median (pooled);

  printf ("local engine %s, image %s, %d iterations, parent tree of %d files\n\n", host, image, iterations, files);
  printf ("| measure | median | vs bare CLI |\n| --- | --- | --- |\n");
  printf ("| bare CLI: `docker run -d … sleep` + `docker exec true` + `docker rm -f` | %.3f s | 1.00× |\n", m_bare);
  printf ("| API: prepare + spawnv `true` + cleanup | %.3f s | %.2f× (target ≤ %.1f×: %s) |\n",
          m_ours, m_ours / m_bare, TARGET_CYCLE, m_ours / m_bare <= TARGET_CYCLE ? "met" : "NOT met");
  printf ("| workspace copy (inside prepare, overlapped with create + start) | %.1f ms | |\n", m_copy * 1000);
  printf ("| API phases, means: prepare / exec `true` / cleanup | %.0f / %.0f / %.0f ms | |\n",
          phase_usec[0][0] / 1000.0 / iterations, phase_usec[0][1] / 1000.0 / iterations,
          phase_usec[0][2] / 1000.0 / iterations);
  if (pool_size > 0)
    {
      printf ("| API, warm pool (container_pool: %d): prepare + spawnv `true` + cleanup | %.3f s | %.2f× "
              "(target ≤ %.1f×: %s) |\n", pool_size, m_pooled, m_pooled / m_bare, TARGET_CYCLE,
              m_pooled / m_bare <= TARGET_CYCLE ? "met" : "NOT met");
      printf ("| warm pool phases, means: prepare / exec `true` / cleanup | %.0f / %.0f / %.0f ms | |\n",
              phase_usec[1][0] / 1000.0 / iterations, phase_usec[1][1] / 1000.0 / iterations,
              phase_usec[1][2] / 1000.0 / iterations);
      printf ("| warm pool: prepares served from the pool | %u of %d | |\n", pooled_hits, iterations);
      printf ("| warm pool: background refill waited out before timed cycles (mean per cycle; off the "
              "critical path, not gone) | %.0f ms | |\n", refill_wait * 1000 / iterations);
    }

copy:
  if (only != NULL && g_str_equal (only, "cycle"))
    ;
  else if (remote != NULL && *remote != '\0')
    bench_copy (remote, image, copy_files, iterations);
  else
    printf ("\n(no remote-like engine: pass --remote or set SUBAGENT_TEST_REMOTE_HOST for the copy figures)\n");

  subagent_tree_remove (parent, NULL, NULL);
  subagent_tree_remove (mount_dir, NULL, NULL);
  subagent_tree_remove (cache, NULL, NULL);
  return 0;
}
