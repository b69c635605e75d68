/* bench/docker.c: the docker isolation backend against the bare engine CLI,
 * in one run, on one engine and one image:
 *
 *  - ours: provider prepare (image check, workspace copy, owner record,
 *    `run -d`) + one spawnv of `true` + cleanup (`rm -f`, workspace and
 *    record removal);
 *  - bare: what a user would type: `run -d … sleep` with the same flags and
 *    bind mount, `exec … true`, `rm -f`.
 *
 * The two alternate, iteration by iteration, so drift of the machine hits
 * both alike. The workspace copy is something the bare sequence does not
 * do; it is timed on its own (the provider reports it in the context's
 * `workspace-copy-usec`). The provider copies while `run -d` starts the
 * container, so the headline ratio includes only the part of the copy that
 * outlasts `run`; the last row subtracts the whole copy (a lower bound).
 * Prints medians and ratios as a Markdown table.
 *
 * Usage: docker [--iterations N] [--files N] [--image IMAGE] [--binary CMDLINE]
 * The engine is DOCKER_HOST's (or podman, with --binary "podman ...").
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include <subagent.h>

#define TARGET_OVERHEAD 0.15

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
            gboolean     podman,
            const char  *image,
            const char  *mount_dir)
{
  g_autofree char *volume = g_strdup_printf ("%s:/workspace", mount_dir);
  g_autofree char *id = NULL;
  gint64 start = g_get_monotonic_time ();

  id = engine (engine_argv, "run", "--detach", "--pull", "never", "--network", "none", "--cap-drop", "ALL",
               "--security-opt", "no-new-privileges", "--user", "65534:65534", "--volume", volume,
               "--workdir", "/workspace", "--entrypoint", "sleep", image, "2147483647", NULL);
  g_free (engine (engine_argv, "exec", "--interactive", "--workdir", "/workspace", id, "true", NULL));
  if (podman)
    g_free (engine (engine_argv, "rm", "-f", "--time", "0", id, NULL));
  else
    g_free (engine (engine_argv, "rm", "-f", id, NULL));
  return (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
}

/* Ours; returns its wall time in seconds, the copy's in *copy_seconds. */
static double
provider_cycle (SubagentIsolationProvider *provider,
                const char                *parent,
                const char                *image,
                const char                *binary,
                guint                      index,
                double                    *copy_seconds)
{
  g_autoptr(JsonObject) options = json_object_new ();
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = g_strdup_printf ("bench-%d-%u", (int) getpid (), index);
  const char * const argv[] = { "true", NULL };
  gint64 copy_usec = 0;
  gint64 start;

  json_object_set_string_member (options, "image", image);
  json_object_set_string_member (options, "binary", binary);
  request = g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST, "parent-root", parent, "isolation", "docker",
                          "session-key", key, "parent-run-id", "bench", "options", options, NULL);

  start = g_get_monotonic_time ();
  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  if (context == NULL)
    die ("prepare", error);
  proc = subagent_isolation_context_spawnv (context, argv, NULL, G_SUBPROCESS_FLAGS_NONE, &error);
  if (proc == NULL || !g_subprocess_wait_check (proc, NULL, &error))
    die ("exec true", error);
  subagent_isolation_context_cleanup (context);
  g_variant_lookup (subagent_isolation_context_get_backend_data (context), "workspace-copy-usec", "x", &copy_usec);
  *copy_seconds = copy_usec / (double) G_USEC_PER_SEC;
  return (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
}

int
main (int   argc,
      char *argv[])
{
  int iterations = 10;
  int files = 50;
  g_autofree char *image = g_strdup (g_getenv ("SUBAGENT_TEST_IMAGE") ? g_getenv ("SUBAGENT_TEST_IMAGE")
                                                                     : "subagent-busybox:latest");
  g_autofree char *binary = g_strdup ("docker");
  const GOptionEntry entries[] = {
    { "iterations", 'n', 0, G_OPTION_ARG_INT, &iterations, "Cycles of each kind (default 10)", "N" },
    { "files", 0, 0, G_OPTION_ARG_INT, &files, "Files in the parent tree (default 50)", "N" },
    { "image", 0, 0, G_OPTION_ARG_STRING, &image, "Image (default $SUBAGENT_TEST_IMAGE)", "IMAGE" },
    { "binary", 0, 0, G_OPTION_ARG_STRING, &binary, "Engine command line (default docker)", "CMDLINE" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- docker isolation vs the bare engine CLI");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentIsolationProvider) provider = NULL;
  g_autoptr(GArray) ours = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) copies = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) ours_without_copy = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) bare = g_array_new (FALSE, FALSE, sizeof (double));
  g_auto(GStrv) engine_argv = NULL;
  g_autofree char *parent = NULL;
  g_autofree char *mount_dir = NULL;
  g_autofree char *cache = NULL;
  double m_ours, m_copy, m_bare, overhead;
  gboolean podman;

  /* Found beside the build's plugins unless the caller says otherwise. */
  g_setenv ("SUBAGENT_PLUGIN_PATH", BENCH_PLUGIN_PATH, FALSE);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    die ("options", error);
  if (iterations < 1 || files < 0)
    die ("options", NULL);
  if (!g_shell_parse_argv (binary, NULL, &engine_argv, &error))
    die ("--binary", error);
  podman = strstr (engine_argv[0], "podman") != NULL;

  /* Workspaces in a private cache dir, set before GLib reads it. */
  cache = g_dir_make_tmp ("docker-bench-cache-XXXXXX", &error);
  if (cache == NULL)
    die ("temp dir", error);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  parent = g_dir_make_tmp ("docker-bench-parent-XXXXXX", &error);
  mount_dir = g_dir_make_tmp ("docker-bench-bare-XXXXXX", &error);
  if (parent == NULL || mount_dir == NULL)
    die ("temp dir", error);
  for (int i = 0; i < files; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/src/file-%03d.c", parent, i);
      g_autofree char *dir = g_path_get_dirname (path);
      g_autofree char *text = g_strdup_printf ("/* file %d */\nint f%d (void) { return %d; }\n", i, i, i);

      g_mkdir_with_parents (dir, 0755);
      if (!g_file_set_contents (path, text, -1, &error))
        die ("writing the parent tree", error);
    }
  g_chmod (mount_dir, 0777);

  provider = subagent_plugin_registry_get_isolation_provider (subagent_plugin_registry_get_default (), "docker", &error);
  if (provider == NULL)
    die ("loading the docker plugin", error);
  g_object_set (provider, "binary", binary, NULL);
  if (!subagent_isolation_provider_is_available (provider, &error))
    die ("engine", error);

  /* One warm-up of each: first-use costs (plugin, page cache) are not the subject. */
  {
    double copy;
    provider_cycle (provider, parent, image, binary, 0, &copy);
    bare_cycle (engine_argv, podman, image, mount_dir);
  }
  for (int i = 0; i < iterations; i++)
    {
      double copy = 0, t_ours, t_bare;

      /* Alternate which goes first, so neither always runs on a warmer engine. */
      if (i % 2 == 0)
        {
          t_ours = provider_cycle (provider, parent, image, binary, i + 1, &copy);
          t_bare = bare_cycle (engine_argv, podman, image, mount_dir);
        }
      else
        {
          t_bare = bare_cycle (engine_argv, podman, image, mount_dir);
          t_ours = provider_cycle (provider, parent, image, binary, i + 1, &copy);
        }
      g_array_append_val (ours, t_ours);
      g_array_append_val (copies, copy);
      t_ours -= copy;
      g_array_append_val (ours_without_copy, t_ours);
      g_array_append_val (bare, t_bare);
    }

  m_ours = median (ours);
  m_copy = median (copies);
  m_bare = median (bare);
  overhead = m_ours / m_bare - 1.0;

  printf ("engine: %s, image %s, %d iterations, parent tree of %d files\n\n", binary, image, iterations, files);
  printf ("| measure | median | vs bare CLI |\n| --- | --- | --- |\n");
  printf ("| bare CLI: `run -d … sleep` + `exec true` + `rm -f` | %.3f s | 1.00× |\n", m_bare);
  printf ("| provider: prepare + spawnv `true` + cleanup | %.3f s | %.2f× (overhead %+.1f%%, target ≤ %.0f%%: %s) |\n",
          m_ours, m_ours / m_bare, overhead * 100, TARGET_OVERHEAD * 100,
          overhead <= TARGET_OVERHEAD ? "met" : "NOT met");
  printf ("| workspace copy (inside prepare, overlapped with `run -d`) | %.1f ms | |\n", m_copy * 1000);
  printf ("| provider minus the whole copy time (lower bound) | %.3f s | %.2f× |\n",
          median (ours_without_copy), median (ours_without_copy) / m_bare);

  subagent_tree_remove (parent, NULL, NULL);
  subagent_tree_remove (mount_dir, NULL, NULL);
  subagent_tree_remove (cache, NULL, NULL);
  return 0;
}
