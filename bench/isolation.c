/* bench/isolation.c: preparing and cleaning up a child workspace, against
 * what a user would run instead (git worktree, cp -a), side by side in one
 * run on a generated mid-size repository. Prints medians and ratios.
 *
 * Usage: bench-isolation [--files N] [--rounds N] [--only worktree|snapshot|pool] [--keep]
 *
 * `--only pool` measures only what the snapshot pool's target compares:
 * `cp -a` into a `chattr +T` parent against a pooled snapshot prepare
 * (also with one parent file rewritten since the tree was parked).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <subagent.h>

static int n_files = 2400;
static int rounds = 7;

static double
now_ms (void)
{
  return g_get_monotonic_time () / 1000.0;
}

static int
cmp_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (GArray *samples)
{
  g_array_sort (samples, cmp_double);
  return g_array_index (samples, double, samples->len / 2);
}

static void
run_or_die (const char *cwd, const char * const *argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) proc = NULL;

  g_subprocess_launcher_set_cwd (launcher, cwd);
  proc = g_subprocess_launcher_spawnv (launcher, argv, &error);
  if (proc == NULL || !g_subprocess_wait_check (proc, NULL, &error))
    g_error ("%s: %s", argv[0], error->message);
}

/* A repository shaped like a mid-size C project: n files in ~n/24 dirs,
 * 1–40 KiB each, fixed seed so every run measures the same tree. */
static char *
make_repository (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("subagent-bench-repo-XXXXXX", &error);
  GRand *rand = g_rand_new_with_seed (42);
  g_autofree char *chunk = g_malloc (40 * 1024);

  g_assert_no_error (error);
  for (int i = 0; i < 40 * 1024; i++)
    chunk[i] = "abcdefghijklmnopqrstuvwxyz \n{}();"[i % 34];
  for (int i = 0; i < n_files; i++)
    {
      g_autofree char *sub = g_strdup_printf ("%s/src/mod%03d", dir, i / 24);
      g_autofree char *path = g_strdup_printf ("%s/file%04d.c", sub, i);
      gsize size = 1024 + g_rand_int_range (rand, 0, 39 * 1024);

      g_mkdir_with_parents (sub, 0755);
      chunk[0] = (char) ('A' + i % 26);
      if (!g_file_set_contents (path, chunk, size, &error))
        g_error ("%s", error->message);
    }
  g_rand_free (rand);
  run_or_die (dir, (const char *[]) { "git", "init", "-q", "-b", "main", NULL });
  run_or_die (dir, (const char *[]) { "git", "add", "-A", NULL });
  run_or_die (dir, (const char *[]) { "git", "-c", "user.name=bench", "-c", "user.email=bench@invalid",
                                      "commit", "-q", "-m", "tree", NULL });
  /* A real clone is packed; loose objects would measure zlib, not checkout. */
  run_or_die (dir, (const char *[]) { "git", "repack", "-adq", NULL });
  run_or_die (dir, (const char *[]) { "git", "prune-packed", NULL });
  run_or_die (dir, (const char *[]) { "sync", NULL });
  return dir;
}

static SubagentIsolationProvider *
provider (const char *backend)
{
  g_autoptr(GError) error = NULL;
  SubagentIsolationProvider *p =
    subagent_plugin_registry_get_isolation_provider (subagent_plugin_registry_get_default (), backend, &error);

  if (p == NULL)
    g_error ("%s (set SUBAGENT_PLUGIN_PATH to the build's plugin dirs)", error->message);
  return p;
}

static SubagentIsolationRequest *
request (const char *root, const char *backend, const char *key, JsonObject *options)
{
  return g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST,
                       "parent-root", root, "isolation", backend, "session-key", key,
                       "parent-run-id", "bench", "def-name", "bench", "options", options, NULL);
}

typedef struct {
  GArray *prepare;
  GArray *cleanup;
} Samples;

static Samples
samples_new (void)
{
  return (Samples) { g_array_new (FALSE, FALSE, sizeof (double)), g_array_new (FALSE, FALSE, sizeof (double)) };
}

/* What a parent agent does between two children: rewrite one file the
 * way editors and GLib do (a new file renamed over the old one), so both
 * the file and its directory change. */
static void
edit_parent (const char *root)
{
  static int edits = 0;
  g_autofree char *path = g_strdup_printf ("%s/src/mod050/file1200.c", root);
  g_autofree char *text = g_strdup_printf ("/* edit %d */\nint x = %d;\n", edits, edits);
  g_autoptr(GError) error = NULL;

  edits++;
  if (!g_file_set_contents (path, text, -1, &error))
    g_error ("%s", error->message);
}

static void
measure_provider_full (const char *root, const char *backend, JsonObject *options, Samples *s, int warmup,
                       gboolean edit)
{
  g_autoptr(SubagentIsolationProvider) p = provider (backend);

  for (int i = -warmup; i < 1; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *key = subagent_isolation_new_session_key ("bench", backend);
      g_autoptr(SubagentIsolationRequest) req = request (root, backend, key, options);
      g_autoptr(SubagentIsolationContext) ctx = NULL;
      double t0, t1, t2;

      if (edit)
        edit_parent (root);
      t0 = now_ms ();
      ctx = subagent_isolation_provider_prepare (p, req, NULL, &error);
      if (ctx == NULL)
        g_error ("%s prepare: %s", backend, error->message);
      t1 = now_ms ();
      subagent_isolation_context_cleanup (ctx);
      t2 = now_ms ();
      if (i >= 0)
        {
          double a = t1 - t0, b = t2 - t1;
          g_array_append_val (s->prepare, a);
          g_array_append_val (s->cleanup, b);
        }
    }
}

static void
measure_provider (const char *root, const char *backend, JsonObject *options, Samples *s, int warmup)
{
  measure_provider_full (root, backend, options, s, warmup, FALSE);
}

/* git worktree add into parent, or into the repository's .subagent/ when
 * NULL (where a user would put it: the parent's own layout). */
static void
measure_git_cli (const char *root, const char *parent, Samples *s)
{
  static int i = 0;

  for (i++; ; )
    {
      g_autofree char *branch = g_strdup_printf ("bench/cli-%d", i);
      g_autofree char *path = parent != NULL ? g_strdup_printf ("%s/cli-%d", parent, i)
                                             : g_strdup_printf ("%s/.subagent/cli-%d", root, i);
      double t0 = now_ms (), t1, t2;

      run_or_die (root, (const char *[]) { "git", "worktree", "add", "-q", "-b", branch, path, "HEAD", NULL });
      t1 = now_ms ();
      run_or_die (root, (const char *[]) { "git", "worktree", "remove", "--force", path, NULL });
      run_or_die (root, (const char *[]) { "git", "branch", "-q", "-D", branch, NULL });
      t2 = now_ms ();
      {
        double a = t1 - t0, b = t2 - t1;
        g_array_append_val (s->prepare, a);
        g_array_append_val (s->cleanup, b);
      }
      break;
    }
}

/* cp -a of the tree into a fresh directory under parent (or under the
 * temporary directory if NULL). */
static void
measure_cp (const char *root, const char *parent, Samples *s)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *base = NULL;

  if (parent == NULL)
    base = g_dir_make_tmp ("subagent-bench-cp-XXXXXX", &error);
  else
    {
      base = g_build_filename (parent, "cp-XXXXXX", NULL);
      if (g_mkdtemp (base) == NULL)
        g_error ("%s: %s", base, g_strerror (errno));
    }
  g_assert_no_error (error);

  for (int i = 0; i < 1; i++)
    {
      g_autofree char *dest = g_strdup_printf ("%s/copy-%d", base, i);
      double t0 = now_ms (), t1, t2;

      /* Like the snapshot: the working tree without .git or .subagent. */
      g_mkdir_with_parents (dest, 0755);
      run_or_die (root, (const char *[]) { "cp", "-a", "src", dest, NULL });
      t1 = now_ms ();
      run_or_die (base, (const char *[]) { "rm", "-rf", dest, NULL });
      t2 = now_ms ();
      {
        double a = t1 - t0, b = t2 - t1;
        g_array_append_val (s->prepare, a);
        g_array_append_val (s->cleanup, b);
      }
    }
  run_or_die ("/", (const char *[]) { "rm", "-rf", base, NULL });
}

/* A directory with the ext2/3/4 top-directory flag, as the snapshot plugin
 * gives its snapshot directory: cp -a into it shows how much of the
 * snapshot's lead is placement (which block group the new files land in)
 * rather than the copy itself. NULL where the filesystem refuses the flag. */
static char *
make_spread_parent (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("subagent-bench-spread-XXXXXX", &error);
  int fd, flags = 0;

  g_assert_no_error (error);
  fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ioctl (fd, FS_IOC_GETFLAGS, &flags) != 0 ||
      (flags |= FS_TOPDIR_FL, ioctl (fd, FS_IOC_SETFLAGS, &flags) != 0))
    {
      if (fd >= 0)
        close (fd);
      g_rmdir (dir);
      g_free (dir);
      return NULL;
    }
  close (fd);
  return dir;
}

static void
report (const char *what, Samples *s, double baseline_prepare, double baseline_total, const char *against)
{
  double p = median (s->prepare), c = median (s->cleanup);

  printf ("  %-34s prepare %8.1f ms  cleanup %8.1f ms  total %8.1f ms", what, p, c, p + c);
  if (baseline_prepare > 0)
    printf ("   prepare %.2fx, total %.2fx %s", p / baseline_prepare, (p + c) / baseline_total, against);
  printf ("\n");
}

int
main (int argc, char *argv[])
{
  gboolean keep = FALSE;
  g_autofree char *only = NULL;
  gboolean do_worktree, do_snapshot, do_pool_only;
  const GOptionEntry entries[] = {
    { "files", 0, 0, G_OPTION_ARG_INT, &n_files, "Files in the generated repository", "N" },
    { "rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Measured rounds per contender", "N" },
    { "only", 0, 0, G_OPTION_ARG_STRING, &only, "Measure only the worktree, the snapshot or the snapshot pool contenders", "worktree|snapshot|pool" },
    { "keep", 0, 0, G_OPTION_ARG_NONE, &keep, "Keep the generated repository", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("— isolation prepare/cleanup benchmark");
  g_autoptr(GError) error = NULL;
  g_autofree char *root = NULL;
  g_autoptr(JsonObject) cold = json_object_new ();
  g_autoptr(JsonObject) pooled = json_object_new ();
  g_autoptr(JsonObject) copy = json_object_new ();
  g_autoptr(JsonObject) overlay = json_object_new ();
  g_autoptr(JsonObject) snap_pool = json_object_new ();
  Samples git_cli = samples_new (), git_spread = samples_new (), ours_cold = samples_new (), ours_pooled = samples_new ();
  Samples cp = samples_new (), cp_spread = samples_new (), snap_copy = samples_new (), snap_overlay = samples_new ();
  Samples snap_pooled = samples_new (), snap_pooled_edit = samples_new ();
  g_autofree char *spread_parent = NULL;
  g_autofree char *snapshot_dir = NULL;
  double git_p, git_t, cp_p, cp_t;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    g_error ("%s", error->message);
  if (only != NULL && !g_str_equal (only, "worktree") && !g_str_equal (only, "snapshot") && !g_str_equal (only, "pool"))
    g_error ("--only takes worktree, snapshot or pool, not “%s”", only);
  do_pool_only = only != NULL && g_str_equal (only, "pool");
  do_worktree = only == NULL || g_str_equal (only, "worktree");
  do_snapshot = only == NULL || g_str_equal (only, "snapshot") || do_pool_only;

  root = make_repository ();
  spread_parent = make_spread_parent ();
  printf ("repository: %d files in %s; %d rounds each, medians\n\n", n_files, root, rounds);

  json_object_set_int_member (pooled, "pool_size", 2);
  /* Snapshots, and the pool's parked trees, in a directory of this run's
   * own, removed at the end: a pool in the user's cache would outlive the
   * generated repository. */
  snapshot_dir = g_dir_make_tmp ("subagent-bench-snapshots-XXXXXX", &error);
  g_assert_no_error (error);
  json_object_set_string_member (copy, "snapshot_dir", snapshot_dir);
  json_object_set_string_member (overlay, "snapshot_dir", snapshot_dir);
  json_object_set_string_member (snap_pool, "snapshot_dir", snapshot_dir);
  json_object_set_string_member (copy, "strategy", "copy");
  json_object_set_string_member (overlay, "strategy", "overlay");
  json_object_set_string_member (snap_pool, "strategy", "copy");
  json_object_set_int_member (snap_pool, "pool_size", 2);

  /* One warm-up round (it fills the pool), then rounds that interleave the
   * contenders, so drift in this machine's load hits them all alike. */
  for (int round = 0; round <= rounds; round++)
    {
      gboolean warm = round == 0;
      Samples *dst[10] = { &git_cli, &ours_cold, &ours_pooled, &cp, &snap_copy, &snap_overlay, &cp_spread, &git_spread,
                           &snap_pooled, &snap_pooled_edit };
      Samples scratch[10];

      if (warm)
        for (int i = 0; i < 10; i++)
          {
            scratch[i] = samples_new ();
            dst[i] = &scratch[i];
          }
      if (do_worktree)
        {
          measure_git_cli (root, NULL, dst[0]);
          if (spread_parent != NULL)
            measure_git_cli (root, spread_parent, dst[7]);
          measure_provider (root, "worktree", cold, dst[1], 0);
          measure_provider (root, "worktree", pooled, dst[2], warm ? 1 : 0);
        }
      if (do_snapshot)
        {
          if (!do_pool_only)
            measure_cp (root, NULL, dst[3]);
          if (spread_parent != NULL)
            measure_cp (root, spread_parent, dst[6]);
          if (!do_pool_only)
            {
              measure_provider (root, "directory-snapshot", copy, dst[4], 0);
              measure_provider (root, "directory-snapshot", overlay, dst[5], 0);
            }
          measure_provider (root, "directory-snapshot", snap_pool, dst[8], warm ? 1 : 0);
          measure_provider_full (root, "directory-snapshot", snap_pool, dst[9], 0, TRUE);
        }
      if (warm)
        for (int i = 0; i < 10; i++)
          {
            g_array_unref (scratch[i].prepare);
            g_array_unref (scratch[i].cleanup);
          }
    }

  if (do_worktree)
    {
      git_p = median (git_cli.prepare);
      git_t = git_p + median (git_cli.cleanup);
      printf ("worktree (against git worktree add -b / remove --force / branch -D):\n");
      report ("git CLI", &git_cli, 0, 0, "");
      report ("libsubagent worktree, cold", &ours_cold, git_p, git_t, "of git");
      report ("libsubagent worktree, pooled", &ours_pooled, git_p, git_t, "of git");
      if (spread_parent != NULL)
        report ("git CLI, parent with chattr +T", &git_spread, git_p, git_t, "of git");
      printf ("  pooled prepare is %.1fx faster than git worktree add\n\n", git_p / median (ours_pooled.prepare));
    }
  if (do_pool_only)
    {
      if (spread_parent == NULL)
        g_error ("--only pool needs a filesystem with the top-directory flag (ext2/3/4)");
      cp_p = median (cp_spread.prepare);
      cp_t = cp_p + median (cp_spread.cleanup);
      printf ("snapshot pool (against cp -a / rm -rf into a parent with chattr +T):\n");
      report ("cp -a, parent with chattr +T", &cp_spread, 0, 0, "");
      report ("libsubagent snapshot, pooled", &snap_pooled, cp_p, cp_t, "of cp -a +T");
      report ("pooled, one file edited before", &snap_pooled_edit, cp_p, cp_t, "of cp -a +T");
      printf ("  pooled snapshot prepare is %.1fx faster than cp -a into a parent with chattr +T\n",
              cp_p / median (snap_pooled.prepare));
      printf ("  with one parent file edited since the park: %.1fx faster\n", cp_p / median (snap_pooled_edit.prepare));
    }
  else if (do_snapshot)
    {
      cp_p = median (cp.prepare);
      cp_t = cp_p + median (cp.cleanup);
      printf ("directory snapshot (against cp -a / rm -rf):\n");
      report ("cp -a", &cp, 0, 0, "");
      if (spread_parent != NULL)
        report ("cp -a, parent with chattr +T", &cp_spread, cp_p, cp_t, "of cp -a");
      report ("libsubagent snapshot, copy", &snap_copy, cp_p, cp_t, "of cp -a");
      report ("libsubagent snapshot, overlay", &snap_overlay, cp_p, cp_t, "of cp -a");
      report ("libsubagent snapshot, pooled", &snap_pooled, cp_p, cp_t, "of cp -a");
      report ("pooled, one file edited before", &snap_pooled_edit, cp_p, cp_t, "of cp -a");
      if (spread_parent != NULL)
        {
          printf ("  snapshot copy prepare is %.2fx of cp -a into a parent with chattr +T\n",
                  median (snap_copy.prepare) / median (cp_spread.prepare));
          printf ("  pooled snapshot prepare is %.1fx faster than cp -a into a parent with chattr +T\n",
                  median (cp_spread.prepare) / median (snap_pooled.prepare));
        }
    }

  if (spread_parent != NULL)
    g_rmdir (spread_parent);
  if (!keep)
    run_or_die ("/", (const char *[]) { "rm", "-rf", root, snapshot_dir, NULL });
  return 0;
}
