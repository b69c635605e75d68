/* test-snapshot.c: the tree copier and the isolation-snapshot plugin
 * (copy, reflink fallback, overlay mounts, failures, cleanup).
 *
 * Runs as root (overlay mounts and tmpfs mounts are real).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <linux/fs.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-support.h"

static SubagentPluginRegistry *registry;
static char *cache_home;

/* ---- helpers ------------------------------------------------------------ */

static gint
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

static SubagentIsolationProvider *
snapshot_provider (void)
{
  g_autoptr(GError) error = NULL;
  SubagentIsolationProvider *provider =
    subagent_plugin_registry_get_isolation_provider (registry, "directory-snapshot", &error);

  g_assert_no_error (error);
  g_assert_nonnull (provider);
  return provider;
}

static SubagentIsolationContext *
try_prepare (const char    *parent,
             const char    *key,
             const char    *strategy,
             const char    *snapshot_dir,
             GCancellable  *cancellable,
             GError       **error)
{
  g_autoptr(SubagentIsolationProvider) provider = snapshot_provider ();
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autoptr(JsonObject) options = json_object_new ();

  if (strategy != NULL)
    json_object_set_string_member (options, "strategy", strategy);
  if (snapshot_dir != NULL)
    json_object_set_string_member (options, "snapshot_dir", snapshot_dir);
  request = g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST,
                          "parent-root", parent, "isolation", "directory-snapshot",
                          "session-key", key, "parent-run-id", "run-snap", "options", options, NULL);
  return subagent_isolation_provider_prepare (provider, request, cancellable, error);
}

static SubagentIsolationContext *
prepare_ok (const char *parent,
            const char *key,
            const char *strategy,
            const char *snapshot_dir)
{
  g_autoptr(GError) error = NULL;
  SubagentIsolationContext *context = try_prepare (parent, key, strategy, snapshot_dir, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (context);
  return context;
}

static const char *
used_strategy (SubagentIsolationContext *context)
{
  GVariant *data = subagent_isolation_context_get_backend_data (context);
  const char *strategy = NULL;

  g_assert_nonnull (data);
  g_assert_true (g_variant_lookup (data, "strategy", "&s", &strategy));
  return strategy;
}

static char *
snapshot_base (SubagentIsolationContext *context)
{
  return g_path_get_dirname (subagent_isolation_context_get_child_root (context));
}

static gboolean
test_at (const char *dir,
         const char *rel,
         GFileTest   test)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);

  return g_file_test (path, test);
}

static gboolean
record_exists (const char *parent,
               const char *key)
{
  g_autofree char *path = subagent_owner_record_path (parent, key);

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static void
set_times (const char *path,
           time_t      sec,
           long        nsec)
{
  struct timespec times[2] = { { sec, nsec }, { sec, nsec } };

  g_assert_cmpint (utimensat (AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW), ==, 0);
}

/* Replaces *slot with dir/rel and returns it. */
static const char *
path_in (char       **slot,
         const char  *dir,
         const char  *rel)
{
  g_free (*slot);
  *slot = g_build_filename (dir, rel, NULL);
  return *slot;
}

/* A parent with every kind of entry the copy must handle. */
static char *
make_rich_parent (void)
{
  char *dir = sat_make_temp_dir ("snap-parent");
  g_autofree char *p = NULL;
  guchar binary[512];

  for (guint i = 0; i < sizeof binary; i++)
    binary[i] = (guchar) (i * 37);
  sat_write_file (dir, "a.txt", "alpha\n");
  sat_write_file (dir, "sub/b.txt", "bravo\n");
  sat_write_file (dir, "sub/.subagent/nested.txt", "only the top-level .subagent is left out\n");
  sat_write_file (dir, "exec.sh", "#!/bin/sh\necho hi\n");
  sat_write_file (dir, "ro.txt", "read only\n");
  sat_write_file (dir, ".subagent/owners/x.json", "{}");
  sat_write_file (dir, ".git/HEAD", "ref: refs/heads/main\n");
  p = g_build_filename (dir, "sub/deep", NULL);
  g_assert_cmpint (g_mkdir_with_parents (p, 0755), ==, 0);
  g_clear_pointer (&p, g_free);
  p = g_build_filename (dir, "sub/deep/blob.bin", NULL);
  g_assert_true (g_file_set_contents (p, (const char *) binary, sizeof binary, NULL));
  g_clear_pointer (&p, g_free);

#define AT(rel) path_in (&p, dir, rel)
  g_assert_cmpint (chmod (AT ("exec.sh"), 0755), ==, 0);
  g_assert_cmpint (chmod (AT ("ro.txt"), 0444), ==, 0);
  g_assert_cmpint (symlink ("a.txt", AT ("link-to-a")), ==, 0);
  g_assert_cmpint (symlink ("/etc/hostname", AT ("abs-link")), ==, 0);
  g_assert_cmpint (symlink ("missing", AT ("dangling")), ==, 0);
  g_assert_cmpint (symlink ("sub", AT ("sub-link")), ==, 0);
  g_assert_cmpint (mkfifo (AT ("pipe"), 0644), ==, 0);
  set_times (AT ("a.txt"), 1234567890, 123456789);
  set_times (AT ("link-to-a"), 1200000000, 5);
  set_times (AT ("sub/deep/blob.bin"), 1300000000, 999999999);
  g_assert_cmpint (chmod (AT ("sub/deep"), 0750), ==, 0);
  set_times (AT ("sub/deep"), 1111111111, 987654321);
  set_times (AT ("sub"), 1111111112, 1);
#undef AT
  return dir;
}

/* Asserts that copy mirrors orig: names, types, modes, times, contents,
 * link targets; skipping the names the snapshot leaves out. */
static void
assert_same_tree (const char *orig,
                  const char *copy,
                  gboolean    top)
{
  g_autoptr(GDir) dir = g_dir_open (orig, 0, NULL);
  g_autoptr(GDir) copy_dir = g_dir_open (copy, 0, NULL);
  guint n_orig = 0, n_copy = 0;
  const char *name;
  struct stat so, sc;

  g_assert_nonnull (dir);
  g_assert_nonnull (copy_dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *po = g_build_filename (orig, name, NULL);
      g_autofree char *pc = g_build_filename (copy, name, NULL);

      g_assert_cmpint (lstat (po, &so), ==, 0);
      if ((top && (g_str_equal (name, ".subagent") || g_str_equal (name, ".git"))) || S_ISFIFO (so.st_mode))
        {
          g_assert_false (g_file_test (pc, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK));
          continue;
        }
      n_orig++;
      g_assert_cmpint (lstat (pc, &sc), ==, 0);
      g_assert_cmphex (so.st_mode & S_IFMT, ==, sc.st_mode & S_IFMT);
      g_assert_cmpint (so.st_mtim.tv_sec, ==, sc.st_mtim.tv_sec);
      g_assert_cmpint (so.st_mtim.tv_nsec, ==, sc.st_mtim.tv_nsec);
      if (S_ISLNK (so.st_mode))
        {
          g_autofree char *to = g_file_read_link (po, NULL);
          g_autofree char *tc = g_file_read_link (pc, NULL);
          g_assert_cmpstr (to, ==, tc);
          continue;
        }
      g_assert_cmphex (so.st_mode & 07777, ==, sc.st_mode & 07777);
      if (S_ISDIR (so.st_mode))
        assert_same_tree (po, pc, FALSE);
      else
        {
          g_autofree char *co = NULL, *cc = NULL;
          gsize lo, lc;
          g_assert_true (g_file_get_contents (po, &co, &lo, NULL));
          g_assert_true (g_file_get_contents (pc, &cc, &lc, NULL));
          g_assert_cmpmem (co, lo, cc, lc);
        }
    }
  while (g_dir_read_name (copy_dir) != NULL)
    n_copy++;
  g_assert_cmpuint (n_orig, ==, n_copy);
}

static gboolean
is_mounted (const char *path)
{
  g_autofree char *info = NULL;
  g_auto(GStrv) lines = NULL;

  g_assert_true (g_file_get_contents ("/proc/self/mountinfo", &info, NULL, NULL));
  lines = g_strsplit (info, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) fields = g_strsplit (lines[i], " ", 6);
      if (g_strv_length (fields) >= 5 && g_str_equal (fields[4], path))
        return TRUE;
    }
  return FALSE;
}

static char *
mount_tmpfs (const char *options)
{
  char *dir = sat_make_temp_dir ("snap-tmpfs");

  g_assert_cmpint (mount ("tmpfs", dir, "tmpfs", 0, options), ==, 0);
  return dir;
}

static void
unmount_and_remove (char *dir)
{
  g_assert_cmpint (umount2 (dir, MNT_DETACH), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
  g_free (dir);
}

static void
assert_cleaned (SubagentIsolationContext *context,
                const char               *parent)
{
  g_autofree char *base = snapshot_base (context);
  g_autofree char *record = subagent_owner_record_path (parent, subagent_isolation_context_get_session_key (context));

  subagent_isolation_context_cleanup (context);
  g_assert_true (subagent_isolation_context_is_cleaned_up (context));
  g_assert_false (g_file_test (base, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (record, G_FILE_TEST_EXISTS));
}

static SubagentIsolationContext *
prepare_pooled (const char *parent,
                const char *key,
                const char *snapshot_dir,
                gint64      pool_size)
{
  g_autoptr(SubagentIsolationProvider) provider = snapshot_provider ();
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autoptr(JsonObject) options = json_object_new ();
  g_autoptr(GError) error = NULL;
  SubagentIsolationContext *context;

  json_object_set_string_member (options, "strategy", "copy");
  json_object_set_string_member (options, "snapshot_dir", snapshot_dir);
  json_object_set_int_member (options, "pool_size", pool_size);
  request = g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST,
                          "parent-root", parent, "isolation", "directory-snapshot",
                          "session-key", key, "parent-run-id", "run-snap", "options", options, NULL);
  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (context);
  return context;
}

static gboolean
recycled (SubagentIsolationContext *context)
{
  gboolean value = FALSE;

  g_assert_true (g_variant_lookup (subagent_isolation_context_get_backend_data (context), "recycled", "b", &value));
  return value;
}

/* Parked trees in snapshot_dir's pool, over all parents. */
static guint
pooled_trees (const char *snapshot_dir)
{
  g_autofree char *pool = g_build_filename (snapshot_dir, ".pool", NULL);
  g_autoptr(GDir) parents = g_dir_open (pool, 0, NULL);
  const char *name;
  guint n = 0;

  while (parents != NULL && (name = g_dir_read_name (parents)) != NULL)
    {
      g_autofree char *dir = g_build_filename (pool, name, NULL);
      g_autoptr(GDir) entries = g_dir_open (dir, 0, NULL);
      while (entries != NULL && g_dir_read_name (entries) != NULL)
        n++;
    }
  return n;
}

/* The one tree parked in snapshot_dir's pool (asserts there is one), or
 * with suffix, a file beside it. */
static char *
pooled_path (const char *snapshot_dir,
             const char *name)
{
  g_autofree char *pool = g_build_filename (snapshot_dir, ".pool", NULL);
  g_autoptr(GDir) parents = g_dir_open (pool, 0, NULL);
  const char *parent_id, *entry;
  char *found = NULL;

  g_assert_nonnull (parents);
  while ((parent_id = g_dir_read_name (parents)) != NULL)
    {
      g_autofree char *dir = g_build_filename (pool, parent_id, NULL);
      g_autoptr(GDir) entries = g_dir_open (dir, 0, NULL);
      while (entries != NULL && (entry = g_dir_read_name (entries)) != NULL)
        {
          g_assert_null (found);
          found = g_build_filename (dir, entry, name, NULL);
        }
    }
  g_assert_nonnull (found);
  return found;
}

static gboolean
full_sync (SubagentIsolationContext *context)
{
  gboolean value = FALSE;

  g_assert_true (g_variant_lookup (subagent_isolation_context_get_backend_data (context), "pool-full-sync", "b", &value));
  return value;
}

/* ---- the pool ------------------------------------------------------------ */

/* A tree back from the pool is what a fresh copy of the parent is, after a
 * child that edited files behind size and mtime (ctime gives it away),
 * changed modes, types and links, and after the parent moved on. */
static void
test_pool_recycled_equals_fresh_copy (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *snapdir = sat_make_temp_dir ("snap-pool");
  g_autoptr(SubagentIsolationContext) first = prepare_pooled (parent, "pool-1", snapdir, 1);
  g_autoptr(SubagentIsolationContext) second = NULL;
  g_autoptr(SubagentIsolationContext) fresh = NULL;
  g_autofree char *first_base = snapshot_base (first);
  g_autofree char *p = NULL;
  const char *child = subagent_isolation_context_get_child_root (first);

  g_assert_false (recycled (first));
  assert_same_tree (parent, child, TRUE);

#define AT(rel) path_in (&p, child, rel)
  /* Same size, same mtime, other bytes. */
  sat_write_file (child, "a.txt", "ALPHA\n");
  set_times (AT ("a.txt"), 1234567890, 123456789);
  g_assert_cmpint (chmod (AT ("exec.sh"), 0600), ==, 0);
  sat_write_file (child, "new.txt", "made by the child\n");
  sat_write_file (child, "newdir/x/y.txt", "deep\n");
  g_assert_cmpint (g_unlink (AT ("sub/b.txt")), ==, 0);
  g_assert_cmpint (g_unlink (AT ("link-to-a")), ==, 0);
  sat_write_file (child, "link-to-a", "a file now\n");
  g_assert_cmpint (g_unlink (AT ("sub/deep/blob.bin")), ==, 0);
  g_assert_cmpint (g_mkdir (AT ("sub/deep/blob.bin"), 0755), ==, 0);
  g_assert_cmpint (g_unlink (AT ("abs-link")), ==, 0);
  g_assert_cmpint (symlink ("/etc/passwd", AT ("abs-link")), ==, 0);
  g_assert_cmpint (mkfifo (AT ("child-pipe"), 0644), ==, 0);
  g_assert_cmpint (chmod (AT ("sub/deep"), 0700), ==, 0);
#undef AT

  subagent_isolation_context_cleanup (first);
  g_assert_false (g_file_test (first_base, G_FILE_TEST_EXISTS));
  g_assert_false (record_exists (parent, "pool-1"));
  g_assert_cmpuint (pooled_trees (snapdir), ==, 1);
  {
    /* Synced when parked: the child's edits are gone already. */
    g_autofree char *parked = pooled_path (snapdir, "tree");
    assert_same_tree (parent, parked, TRUE);
  }

  /* The parent moves on, once behind size and mtime too. */
  sat_write_file (parent, "sub/b.txt", "BRAVO\n");
  path_in (&p, parent, "sub/b.txt");
  set_times (p, 1111111111, 0);
  sat_write_file (parent, "added.txt", "added\n");
  g_assert_cmpint (g_unlink (path_in (&p, parent, "dangling")), ==, 0);

  second = prepare_pooled (parent, "pool-2", snapdir, 1);
  g_assert_true (recycled (second));
  g_assert_true (full_sync (second));  /* the parent changed since the park */
  g_assert_cmpuint (pooled_trees (snapdir), ==, 0);
  fresh = prepare_ok (parent, "pool-fresh", "copy", snapdir);
  g_assert_false (recycled (fresh));
  assert_same_tree (parent, subagent_isolation_context_get_child_root (second), TRUE);
  assert_same_tree (subagent_isolation_context_get_child_root (fresh),
                    subagent_isolation_context_get_child_root (second), FALSE);
  {
    g_autofree char *content = sat_read_file (subagent_isolation_context_get_child_root (second), "a.txt");
    g_assert_cmpstr (content, ==, "alpha\n");
  }

  assert_cleaned (fresh, parent);
  subagent_isolation_context_cleanup (second);
  g_assert_cmpuint (pooled_trees (snapdir), ==, 1);
  sat_rm_rf (snapdir);
  sat_rm_rf (parent);
}

/* A parent unchanged since the park: prepare only checks the parent against
 * the manifest, and the tree it hands out is a fresh copy's. Then every kind
 * of parent change the check must see, one per round, each behind the
 * directory listing or behind size and mtime; and a torn manifest. */
static void
test_pool_checks_parent_since_park (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *snapdir = sat_make_temp_dir ("snap-pool");
  g_autofree char *p = NULL;
  g_autoptr(SubagentIsolationContext) fresh = NULL;
  SubagentIsolationContext *context;
  const char *child;
  struct stat st;

  context = prepare_pooled (parent, "check-0", snapdir, 1);
  child = subagent_isolation_context_get_child_root (context);
  /* A hostile child: an edit behind size and mtime, a hard link out of the
   * tree (a later write through it would land in the next child's file). */
  g_assert_cmpint (lstat (path_in (&p, child, "ro.txt"), &st), ==, 0);
  g_assert_cmpint (chmod (p, 0644), ==, 0);
  sat_write_file (child, "ro.txt", "READ ONLY\n");
  g_assert_cmpint (chmod (p, 0444), ==, 0);
  set_times (p, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  {
    g_autofree char *from = g_build_filename (child, "exec.sh", NULL);
    g_autofree char *to = g_build_filename (snapdir, "stolen-link", NULL);
    g_assert_cmpint (link (from, to), ==, 0);
  }
  /* ctime comes from a coarse clock: an entry changed in the tick the park
   * sync begins is never trusted, so let the parent's creation age. */
  g_usleep (50000);
  subagent_isolation_context_cleanup (context);
  g_object_unref (context);

  /* Nothing changed in the parent: checked, not synced. */
  context = prepare_pooled (parent, "check-1", snapdir, 1);
  g_assert_true (recycled (context));
  g_assert_false (full_sync (context));
  child = subagent_isolation_context_get_child_root (context);
  fresh = prepare_ok (parent, "check-fresh", "copy", snapdir);
  assert_same_tree (parent, child, TRUE);
  assert_same_tree (subagent_isolation_context_get_child_root (fresh), child, FALSE);
  g_assert_cmpint (lstat (path_in (&p, child, "exec.sh"), &st), ==, 0);
  g_assert_cmpuint (st.st_nlink, ==, 1);
  assert_cleaned (fresh, parent);
  g_clear_object (&fresh);
  subagent_isolation_context_cleanup (context);
  g_object_unref (context);

  for (guint round = 0; round < 7; round++)
    {
      g_autofree char *manifest = NULL;

      switch (round)
        {
        case 0:  /* same size, same mtime, other bytes */
          g_assert_cmpint (lstat (path_in (&p, parent, "a.txt"), &st), ==, 0);
          sat_write_file (parent, "a.txt", "ALPHA\n");
          set_times (p, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
          break;
        case 1:  /* a file added deep down, with an old mtime */
          sat_write_file (parent, "sub/deep/added.txt", "added\n");
          set_times (path_in (&p, parent, "sub/deep/added.txt"), 1000000000, 0);
          break;
        case 2:  /* a file removed, the directory's mtime put back */
          g_assert_cmpint (lstat (path_in (&p, parent, "sub"), &st), ==, 0);
          g_assert_cmpint (g_unlink (path_in (&p, parent, "sub/b.txt")), ==, 0);
          set_times (path_in (&p, parent, "sub"), st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
          break;
        case 3:  /* a mode */
          g_assert_cmpint (chmod (path_in (&p, parent, "exec.sh"), 0700), ==, 0);
          break;
        case 4:  /* a link retargeted, same length */
          g_assert_cmpint (g_unlink (path_in (&p, parent, "link-to-a")), ==, 0);
          g_assert_cmpint (symlink ("ro.txt", p), ==, 0);
          break;
        case 5:  /* a directory swapped for a file */
          sat_rm_rf (path_in (&p, parent, "sub/deep"));
          sat_write_file (parent, "sub/deep", "a file now\n");
          break;
        case 6:  /* nothing in the parent, but the manifest is torn */
          manifest = pooled_path (snapdir, "manifest");
          g_assert_true (g_file_set_contents (manifest, "SNAPMAN1\x05", 9, NULL));
          break;
        }
      context = prepare_pooled (parent, "check-n", snapdir, 1);
      g_assert_true (recycled (context));
      if (!full_sync (context))
        g_error ("round %u: the change was not seen", round);
      child = subagent_isolation_context_get_child_root (context);
      assert_same_tree (parent, child, TRUE);
      fresh = prepare_ok (parent, "check-fresh", "copy", snapdir);
      assert_same_tree (subagent_isolation_context_get_child_root (fresh), child, FALSE);
      assert_cleaned (fresh, parent);
      g_clear_object (&fresh);
      subagent_isolation_context_cleanup (context);
      g_object_unref (context);
    }
  {
    g_autofree char *content = sat_read_file (parent, "a.txt");
    g_assert_cmpstr (content, ==, "ALPHA\n");
  }
  /* After all that, an unchanged parent is again only checked. */
  context = prepare_pooled (parent, "check-last", snapdir, 1);
  g_assert_true (recycled (context));
  g_assert_false (full_sync (context));
  assert_same_tree (parent, subagent_isolation_context_get_child_root (context), TRUE);
  subagent_isolation_context_cleanup (context);
  g_object_unref (context);
  sat_rm_rf (snapdir);
  sat_rm_rf (parent);
}

/* A process the child left behind (out of its group, so the runner's kill
 * missed it) with its working directory or an open file in the tree: the
 * tree is not parked, it is removed. */
static void
test_pool_refuses_tree_still_held (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *snapdir = sat_make_temp_dir ("snap-pool");
  const char * const scripts[] = {
    "exec sleep 60",                                /* working directory */
    "exec 3>>sub/b.txt; cd /; exec sleep 60",       /* an open file */
  };

  for (guint i = 0; i < G_N_ELEMENTS (scripts); i++)
    {
      g_autoptr(SubagentIsolationContext) context = prepare_pooled (parent, "held", snapdir, 1);
      g_autofree char *base = snapshot_base (context);
      const char *argv[] = { "setsid", "sh", "-c", scripts[i], NULL };
      g_autoptr(GError) error = NULL;
      GPid pid = 0;
      int status;

      g_assert_true (g_spawn_async (subagent_isolation_context_get_child_root (context), (char **) argv, NULL,
                                    G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, &error));
      g_assert_no_error (error);
      /* Until the shell has opened the file and left the tree. */
      for (guint tries = 0; tries < 500; tries++)
        {
          g_autofree char *fd3 = g_strdup_printf ("/proc/%d/fd/3", pid);
          g_autofree char *cwd = g_strdup_printf ("/proc/%d/cwd", pid);
          g_autofree char *cwd_target = g_file_read_link (cwd, NULL);
          g_autofree char *comm = NULL;
          g_autofree char *comm_path = g_strdup_printf ("/proc/%d/comm", pid);

          if (g_file_get_contents (comm_path, &comm, NULL, NULL) && g_str_has_prefix (comm, "sleep") &&
              (i == 0 || (g_file_test (fd3, G_FILE_TEST_EXISTS) && g_strcmp0 (cwd_target, "/") == 0)))
            break;
          g_usleep (10000);
        }
      subagent_isolation_context_cleanup (context);
      g_assert_false (g_file_test (base, G_FILE_TEST_EXISTS));
      g_assert_cmpuint (pooled_trees (snapdir), ==, 0);
      g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
    }

  /* With the process gone, the same tree is parked. */
  {
    g_autoptr(SubagentIsolationContext) context = prepare_pooled (parent, "held", snapdir, 1);
    subagent_isolation_context_cleanup (context);
    g_assert_cmpuint (pooled_trees (snapdir), ==, 1);
  }
  sat_rm_rf (snapdir);
  sat_rm_rf (parent);
}

/* The pool keeps at most pool_size trees of a parent; the rest are removed. */
static void
test_pool_never_grows_past_its_size (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *snapdir = sat_make_temp_dir ("snap-pool");
  SubagentIsolationContext *contexts[3];

  for (guint i = 0; i < G_N_ELEMENTS (contexts); i++)
    {
      g_autofree char *key = g_strdup_printf ("bound-%u", i);
      contexts[i] = prepare_pooled (parent, key, snapdir, 2);
    }
  for (guint i = 0; i < G_N_ELEMENTS (contexts); i++)
    {
      g_autofree char *base = snapshot_base (contexts[i]);
      subagent_isolation_context_cleanup (contexts[i]);
      g_assert_false (g_file_test (base, G_FILE_TEST_EXISTS));
      g_object_unref (contexts[i]);
    }
  g_assert_cmpuint (pooled_trees (snapdir), ==, 2);
  sat_rm_rf (snapdir);
  sat_rm_rf (parent);
}

/* ---- the copy ------------------------------------------------------------ */

static void
test_copy_preserves_tree (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *snapdir = sat_make_temp_dir ("snap-dir");
  g_autoptr(SubagentIsolationContext) context = prepare_ok (parent, "copy-1", "copy", snapdir);
  const char *child = subagent_isolation_context_get_child_root (context);
  g_autofree char *base = snapshot_base (context);
  g_autofree char *real_snapdir = realpath (snapdir, NULL);
  g_autofree char *expected_base = g_build_filename (real_snapdir, "copy-1", NULL);
  g_autofree char *marker = g_build_filename (base, ".subagent-snapshot", NULL);
  g_autoptr(JsonObject) record = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpstr (used_strategy (context), ==, "copy");
  g_assert_cmpstr (subagent_isolation_context_get_isolation (context), ==, "directory-snapshot");
  g_assert_cmpstr (subagent_isolation_context_get_container_path (context), ==, child);
  g_assert_cmpstr (base, ==, expected_base);
  g_assert_false (g_str_has_prefix (child, parent));
  assert_same_tree (parent, child, TRUE);
  g_assert_true (g_file_test (marker, G_FILE_TEST_IS_REGULAR));

  record = subagent_owner_record_load (parent, "copy-1", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (record, "kind"), ==, "snapshot");
  g_assert_cmpstr (json_object_get_string_member (record, "resource"), ==, base);
  g_assert_cmpstr (json_object_get_string_member (record, "parent_run_id"), ==, "run-snap");

  assert_cleaned (context, parent);
  sat_rm_rf (parent);
  sat_rm_rf (snapdir);
}

static void
test_copy_spawn_runs_in_child_root (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *snapdir = sat_make_temp_dir ("snap-dir");
  g_autoptr(SubagentIsolationContext) context = prepare_ok (parent, "spawn-1", "copy", snapdir);
  const char * const argv[] = { "sh", "-c", "pwd && echo child > written.txt", NULL };
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *expected = g_strconcat (subagent_isolation_context_get_child_root (context), "\n", NULL);

  proc = subagent_isolation_context_spawnv (context, argv, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, expected);
  g_assert_false (test_at (parent, "written.txt", G_FILE_TEST_EXISTS));

  assert_cleaned (context, parent);
  sat_rm_rf (parent);
  sat_rm_rf (snapdir);
}

static void
test_reflink_falls_back_to_copy (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *ext4_dir = sat_make_temp_dir ("snap-dir");
  char *tmpfs_dir = mount_tmpfs ("size=16m");
  const char *dirs[] = { ext4_dir, tmpfs_dir };

  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autofree char *key = g_strdup_printf ("reflink-%u", i);
      g_autoptr(SubagentIsolationContext) context = prepare_ok (parent, key, "reflink", dirs[i]);
      const char * const *warnings = subagent_isolation_context_get_warnings (context);

      /* ext4 and tmpfs refuse FICLONE: every file was copied, and the
       * context says so. */
      g_test_message ("reflink on %s used: %s", dirs[i], used_strategy (context));
      g_assert_cmpstr (used_strategy (context), ==, "copy");
      g_assert_nonnull (warnings);
      g_assert_nonnull (warnings[0]);
      g_assert_nonnull (strstr (warnings[0], "reflink"));
      assert_same_tree (parent, subagent_isolation_context_get_child_root (context), TRUE);
      assert_cleaned (context, parent);
    }
  unmount_and_remove (tmpfs_dir);
  sat_rm_rf (parent);
  sat_rm_rf (ext4_dir);
}

static void
test_copy_error_removes_partial_snapshot (void)
{
  g_autofree char *parent = sat_make_temp_dir ("snap-parent");
  char *tiny = mount_tmpfs ("size=256k");
  g_autofree char *big = g_malloc0 (1024 * 1024);
  g_autofree char *big_path = g_build_filename (parent, "big.dat", NULL);
  g_autofree char *base = g_build_filename (tiny, "full-1", NULL);
  g_autofree char *record = subagent_owner_record_path (parent, "full-1");
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = NULL;

  for (guint i = 0; i < 20; i++)
    {
      g_autofree char *name = g_strdup_printf ("small/f%02u.txt", i);
      sat_write_file (parent, name, "small file\n");
    }
  g_assert_true (g_file_set_contents (big_path, big, 1024 * 1024, NULL));

  /* The snapshot runs out of space half-way. */
  context = try_prepare (parent, "full-1", "copy", tiny, NULL, &error);
  g_assert_null (context);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, g_strerror (ENOSPC)));
  g_assert_nonnull (strstr (error->message, "big.dat"));
  g_assert_false (g_file_test (base, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (record, G_FILE_TEST_EXISTS));
  dir = g_dir_open (tiny, 0, NULL);
  g_assert_null (g_dir_read_name (dir));

  g_clear_pointer (&dir, g_dir_close);
  unmount_and_remove (tiny);
  sat_rm_rf (parent);
}

/* The snapshot directory gets the ext2/3/4 top-directory flag where the
 * filesystem has it (so snapshots spread over block groups); where it has
 * not, the snapshot works all the same. */
static gboolean
get_dir_flags (const char *dir,
               int        *flags)
{
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  gboolean ok;

  g_assert_cmpint (fd, >=, 0);
  ok = ioctl (fd, FS_IOC_GETFLAGS, flags) == 0;
  close (fd);
  return ok;
}

static gboolean
filesystem_takes_topdir_flag (const char *dir)
{
  g_autofree char *probe = g_build_filename (dir, "probe", NULL);
  gboolean takes = FALSE;
  int flags = 0;
  int fd;

  g_assert_cmpint (g_mkdir (probe, 0700), ==, 0);
  fd = open (probe, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  if (ioctl (fd, FS_IOC_GETFLAGS, &flags) == 0)
    {
      flags |= FS_TOPDIR_FL;
      takes = ioctl (fd, FS_IOC_SETFLAGS, &flags) == 0;
    }
  close (fd);
  g_assert_cmpint (g_rmdir (probe), ==, 0);
  return takes;
}

static void
test_copy_spreads_snapshots (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *scratch = sat_make_temp_dir ("snap-dir");
  g_autofree char *snapdir = g_build_filename (scratch, "snaps", NULL);
  char *tmpfs_dir = mount_tmpfs ("size=16m");
  const char *dirs[] = { snapdir, tmpfs_dir };
  gboolean takes_flag = filesystem_takes_topdir_flag (scratch);

  g_test_message ("%s takes the top-directory flag: %s", scratch, takes_flag ? "yes" : "no");
  g_assert_false (filesystem_takes_topdir_flag (tmpfs_dir));
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autofree char *key = g_strdup_printf ("spread-%u", i);
      g_autoptr(SubagentIsolationContext) context = prepare_ok (parent, key, "copy", dirs[i]);
      int flags = 0;

      assert_same_tree (parent, subagent_isolation_context_get_child_root (context), TRUE);
      if (i == 0 && takes_flag)
        {
          g_assert_true (get_dir_flags (snapdir, &flags));
          g_assert_cmphex (flags & FS_TOPDIR_FL, ==, FS_TOPDIR_FL);
        }
      else if (get_dir_flags (dirs[i], &flags))
        g_assert_cmphex (flags & FS_TOPDIR_FL, ==, 0);
      assert_cleaned (context, parent);
    }
  unmount_and_remove (tmpfs_dir);
  sat_rm_rf (parent);
  sat_rm_rf (scratch);
}

static void
test_cleanup_twice (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *snapdir = sat_make_temp_dir ("snap-dir");
  g_autoptr(SubagentIsolationContext) context = prepare_ok (parent, "twice-1", "copy", snapdir);
  g_autoptr(SubagentIsolationProvider) provider = snapshot_provider ();
  g_autoptr(SubagentIsolationContext) rebuilt = NULL;

  assert_cleaned (context, parent);
  subagent_isolation_context_cleanup (context);
  g_assert_true (subagent_isolation_context_is_cleaned_up (context));

  /* The provider's own cleanup, on a context rebuilt from what a record
   * holds, is idempotent too. */
  rebuilt = g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                          "provider", provider, "isolation", "directory-snapshot",
                          "parent-root", parent, "session-key", "twice-1",
                          "child-root", subagent_isolation_context_get_child_root (context), NULL);
  SUBAGENT_ISOLATION_PROVIDER_GET_IFACE (provider)->cleanup (provider, rebuilt);
  SUBAGENT_ISOLATION_PROVIDER_GET_IFACE (provider)->cleanup (provider, rebuilt);
  g_assert_false (g_file_test (subagent_isolation_context_get_child_root (context), G_FILE_TEST_EXISTS));
  sat_rm_rf (parent);
  sat_rm_rf (snapdir);
}

static void
test_cleanup_spares_unmarked_directory (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *victim = sat_make_temp_dir ("snap-victim");
  g_autofree char *tree = g_build_filename (victim, "tree", NULL);
  g_autoptr(SubagentIsolationProvider) provider = snapshot_provider ();
  g_autoptr(SubagentIsolationContext) forged = NULL;

  /* A context pointing at a directory we did not make removes nothing. */
  sat_write_file (tree, "precious.txt", "keep me\n");
  forged = g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                         "provider", provider, "isolation", "directory-snapshot",
                         "parent-root", parent, "session-key", "forged-1",
                         "child-root", tree, NULL);
  subagent_isolation_context_cleanup (forged);
  g_assert_true (test_at (tree, "precious.txt", G_FILE_TEST_IS_REGULAR));
  sat_rm_rf (victim);
  sat_rm_rf (parent);
}

static void
test_options_are_validated (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *snapdir = sat_make_temp_dir ("snap-dir");
  g_autofree char *inside = g_build_filename (parent, "snaps", NULL);
  g_autoptr(SubagentIsolationContext) first = prepare_ok (parent, "dup-1", "copy", snapdir);
  struct {
    const char *key, *strategy, *dir;
    int code;
  } cases[] = {
    { "bad-1", "teleport", snapdir, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION },
    { "bad-2", "copy", inside, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION },
    { "bad-3", "copy", "relative/dir", SUBAGENT_ISOLATION_ERROR_INVALID_OPTION },
    { "../up", "copy", snapdir, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED },
    /* A key in use: the existing snapshot must survive the refusal. */
    { "dup-1", "copy", snapdir, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SubagentIsolationContext) context =
        try_prepare (parent, cases[i].key, cases[i].strategy, cases[i].dir, NULL, &error);

      g_assert_null (context);
      g_assert_error (error, SUBAGENT_ISOLATION_ERROR, cases[i].code);
    }
  assert_same_tree (parent, subagent_isolation_context_get_child_root (first), TRUE);
  assert_cleaned (first, parent);
  sat_rm_rf (parent);
  sat_rm_rf (snapdir);
}

static void
test_default_snapshot_dir (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autoptr(SubagentIsolationContext) context = prepare_ok (parent, "default-1", "copy", NULL);
  g_autofree char *real_cache = realpath (cache_home, NULL);
  g_autofree char *expected = g_build_filename (real_cache, "subagent", "snapshots", "default-1", "tree", NULL);

  g_assert_cmpstr (subagent_isolation_context_get_child_root (context), ==, expected);
  assert_cleaned (context, parent);
  sat_rm_rf (parent);
}

/* ---- overlay ------------------------------------------------------------- */

static char *
make_flat_parent (guint    n_files,
                  gboolean with_git)
{
  char *dir = sat_make_temp_dir ("snap-flat");

  sat_write_file (dir, ".subagent/state.json", "{}");
  if (with_git)
    sat_write_file (dir, ".git/HEAD", "ref: refs/heads/main\n");
  for (guint i = 0; i < n_files; i++)
    {
      g_autofree char *name = g_strdup_printf ("d%02u/f%04u.txt", i % 50, i);
      sat_write_file (dir, name, "content\n");
    }
  return dir;
}

static void
test_overlay_mounts_without_copying (void)
{
  const guint sizes[] = { 10, 3000 };

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      /* The small parent gets its .git only after the mount. */
      g_autofree char *parent = make_flat_parent (sizes[s], s > 0);
      g_autofree char *snapdir = sat_make_temp_dir ("snap-dir");
      g_autofree char *key = g_strdup_printf ("overlay-%u", sizes[s]);
      g_autoptr(SubagentIsolationContext) context = prepare_ok (parent, key, "overlay", snapdir);
      const char *child = subagent_isolation_context_get_child_root (context);
      g_autofree char *base = snapshot_base (context);
      g_autofree char *upper = g_build_filename (base, "upper", NULL);
      g_autoptr(GDir) dir = NULL;
      g_autoptr(GPtrArray) upper_names = g_ptr_array_new_with_free_func (g_free);
      g_autofree char *seen = NULL;
      const char *name;

      g_assert_cmpstr (used_strategy (context), ==, "overlay");
      g_assert_true (is_mounted (child));

      /* O(1): the upper layer holds only the two whiteouts, whatever the size. */
      dir = g_dir_open (upper, 0, NULL);
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = g_build_filename (upper, name, NULL);
          struct stat st;
          g_assert_cmpint (lstat (path, &st), ==, 0);
          g_assert_true (S_ISCHR (st.st_mode));
          g_assert_cmpuint (st.st_rdev, ==, 0);
          g_ptr_array_add (upper_names, g_strdup (name));
        }
      g_ptr_array_sort (upper_names, compare_strings);
      g_assert_cmpuint (upper_names->len, ==, 2);

      /* The child sees the parent's files but neither .subagent nor .git. */
      seen = sat_read_file (child, "d00/f0000.txt");
      g_assert_cmpstr (seen, ==, "content\n");
      g_assert_false (test_at (child, ".subagent", G_FILE_TEST_EXISTS));
      g_assert_false (test_at (child, ".git", G_FILE_TEST_EXISTS));
      if (s == 0)
        {
          sat_write_file (parent, ".git/HEAD", "ref: refs/heads/main\n");
          g_assert_false (test_at (child, ".git", G_FILE_TEST_EXISTS));
        }

      /* Writes land in the upper layer, never in the parent. */
      sat_write_file (child, "d00/f0000.txt", "changed by the child\n");
      sat_write_file (child, "new.txt", "new\n");
      g_clear_pointer (&seen, g_free);
      seen = sat_read_file (parent, "d00/f0000.txt");
      g_assert_cmpstr (seen, ==, "content\n");
      g_assert_false (test_at (parent, "new.txt", G_FILE_TEST_EXISTS));
      g_clear_pointer (&seen, g_free);
      seen = sat_read_file (upper, "d00/f0000.txt");
      g_assert_cmpstr (seen, ==, "changed by the child\n");
      g_assert_true (test_at (upper, "new.txt", G_FILE_TEST_IS_REGULAR));

      assert_cleaned (context, parent);
      g_assert_false (is_mounted (child));
      g_assert_true (test_at (parent, ".subagent/state.json", G_FILE_TEST_IS_REGULAR));
      sat_rm_rf (parent);
      sat_rm_rf (snapdir);
    }
}

static void
test_auto_prefers_overlay_then_copies (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *snapdir = sat_make_temp_dir ("snap-dir");
  /* overlayfs options cannot carry ':' in a path: no overlay there. */
  g_autofree char *colon_dir = g_build_filename (snapdir, "with:colon", NULL);
  g_autoptr(SubagentIsolationContext) overlay = prepare_ok (parent, "auto-1", NULL, snapdir);
  g_autoptr(SubagentIsolationContext) copied = prepare_ok (parent, "auto-2", "auto", colon_dir);
  g_autoptr(SubagentIsolationContext) refused = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpstr (used_strategy (overlay), ==, "overlay");
  g_assert_cmpstr (used_strategy (copied), ==, "copy");
  assert_same_tree (parent, subagent_isolation_context_get_child_root (copied), TRUE);

  /* An explicit overlay that cannot mount is unavailable, and leaves nothing. */
  refused = try_prepare (parent, "auto-3", "overlay", colon_dir, NULL, &error);
  g_assert_null (refused);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE);
  g_assert_false (test_at (colon_dir, "auto-3", G_FILE_TEST_EXISTS));
  g_assert_false (record_exists (parent, "auto-3"));

  assert_cleaned (overlay, parent);
  assert_cleaned (copied, parent);
  sat_rm_rf (parent);
  sat_rm_rf (snapdir);
}

/* ---- the tree copier itself ---------------------------------------------- */

static void
copied_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  gboolean *done = user_data;
  g_autoptr(GError) error = NULL;
  SubagentCopyStrategy used = SUBAGENT_COPY_STRATEGY_AUTO;

  g_assert_true (subagent_tree_copy_finish (result, &used, &error));
  g_assert_no_error (error);
  g_assert_cmpint (used, ==, SUBAGENT_COPY_STRATEGY_COPY);
  *done = TRUE;
}

static void
test_tree_copy_async_and_excludes (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *scratch = sat_make_temp_dir ("copy-dest");
  g_autofree char *dest = g_build_filename (scratch, "tree", NULL);
  const char * const exclude[] = { ".subagent", ".git", NULL };
  gboolean done = FALSE;

  subagent_tree_copy_async (parent, dest, SUBAGENT_COPY_STRATEGY_AUTO, exclude, NULL, copied_cb, &done);
  sat_wait_for_flag (&done);
  assert_same_tree (parent, dest, TRUE);
  g_assert_true (test_at (dest, "sub/.subagent/nested.txt", G_FILE_TEST_IS_REGULAR));
  sat_rm_rf (parent);
  sat_rm_rf (scratch);
}

static void
test_tree_copy_refusals (void)
{
  g_autofree char *parent = make_rich_parent ();
  g_autofree char *inside = g_build_filename (parent, "sub", "copy", NULL);
  g_autofree char *scratch = sat_make_temp_dir ("copy-dest");
  g_autofree char *dest = g_build_filename (scratch, "tree", NULL);
  g_autofree char *no_parent = g_build_filename (scratch, "missing", "tree", NULL);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;

  g_assert_false (subagent_tree_copy (parent, inside, SUBAGENT_COPY_STRATEGY_COPY, NULL, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_false (g_file_test (inside, G_FILE_TEST_EXISTS));
  g_clear_error (&error);

  g_assert_false (subagent_tree_copy (parent, no_parent, SUBAGENT_COPY_STRATEGY_COPY, NULL, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, no_parent));
  g_clear_error (&error);

  g_cancellable_cancel (cancellable);
  g_assert_false (subagent_tree_copy (parent, dest, SUBAGENT_COPY_STRATEGY_COPY, NULL, NULL, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_false (g_file_test (dest, G_FILE_TEST_EXISTS));
  sat_rm_rf (parent);
  sat_rm_rf (scratch);
}

/* Files are created with their final mode: whatever the umask, the copy
 * has the source's permission bits, without set-user/group-ID. */
static void
test_tree_copy_modes_under_umask (void)
{
  const mode_t modes[] = { 0666, 0777, 0640, 0604, 0400, 0000, 04755, 02750, 0644 };
  const mode_t umasks[] = { 0, 022, 077, 0777 };
  g_autofree char *parent = sat_make_temp_dir ("copy-modes");
  g_autofree char *scratch = sat_make_temp_dir ("copy-dest");
  mode_t saved_umask;

  for (guint i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      g_autofree char *name = g_strdup_printf ("m%05o", (unsigned) modes[i]);
      g_autofree char *path = g_build_filename (parent, name, NULL);

      sat_write_file (parent, name, name);
      g_assert_cmpint (chmod (path, modes[i]), ==, 0);
    }

  for (guint u = 0; u < G_N_ELEMENTS (umasks); u++)
    {
      g_autofree char *dest = g_strdup_printf ("%s/umask-%03o", scratch, (unsigned) umasks[u]);
      g_autoptr(GError) error = NULL;
      gboolean ok;

      saved_umask = umask (umasks[u]);
      ok = subagent_tree_copy (parent, dest, SUBAGENT_COPY_STRATEGY_COPY, NULL, NULL, NULL, &error);
      umask (saved_umask);
      g_assert_no_error (error);
      g_assert_true (ok);
      for (guint i = 0; i < G_N_ELEMENTS (modes); i++)
        {
          g_autofree char *name = g_strdup_printf ("m%05o", (unsigned) modes[i]);
          g_autofree char *path = g_build_filename (dest, name, NULL);
          g_autofree char *content = NULL;
          struct stat st;

          g_assert_cmpint (lstat (path, &st), ==, 0);
          g_assert_true (S_ISREG (st.st_mode));
          g_assert_cmpuint (st.st_mode & 07777, ==, modes[i] & 01777);
          /* Tests run as root: even mode 0 reads back. */
          g_assert_true (g_file_get_contents (path, &content, NULL, NULL));
          g_assert_cmpstr (content, ==, name);
        }
    }
  sat_rm_rf (parent);
  sat_rm_rf (scratch);
}

static guint
count_open_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

/* Directories stay open while their files wait to be copied; a tree with
 * far more directories than descriptors left still copies, and nothing
 * stays open afterwards. */
static void
test_tree_copy_many_directories (void)
{
  g_autofree char *parent = sat_make_temp_dir ("copy-wide");
  g_autofree char *scratch = sat_make_temp_dir ("copy-dest");
  g_autofree char *dest = g_build_filename (scratch, "tree", NULL);
  g_autoptr(GString) deep = g_string_new ("deep");
  g_autoptr(GError) error = NULL;
  struct rlimit saved, tight;
  guint fds_before;
  gboolean ok;

  /* Hard links make the parent quickly; the copy makes separate files,
   * which keeps the workers busy while the walk runs ahead. */
  sat_write_file (parent, "first.txt", "shared content\n");
  for (guint i = 0; i < 500; i++)
    {
      g_autofree char *dir = g_strdup_printf ("%s/d%03u", parent, i);

      g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
      for (guint j = 0; j < 6; j++)
        {
          g_autofree char *first = g_build_filename (parent, "first.txt", NULL);
          g_autofree char *name = g_strdup_printf ("%s/f%u.txt", dir, j);

          g_assert_cmpint (link (first, name), ==, 0);
        }
    }
  for (guint i = 0; i < 20; i++)
    {
      g_autofree char *file = NULL;

      g_string_append_printf (deep, "/l%02u", i);
      file = g_strdup_printf ("%s/f.txt", deep->str);
      sat_write_file (parent, file, file);
    }

  /* 520 directories (1,040 descriptors if all stayed open), room for 400. */
  fds_before = count_open_fds ();
  g_assert_cmpint (getrlimit (RLIMIT_NOFILE, &saved), ==, 0);
  tight = saved;
  tight.rlim_cur = MIN (saved.rlim_cur, (rlim_t) fds_before + 400);
  g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &tight), ==, 0);
  ok = subagent_tree_copy (parent, dest, SUBAGENT_COPY_STRATEGY_COPY, NULL, NULL, NULL, &error);
  g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &saved), ==, 0);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_cmpuint (count_open_fds (), ==, fds_before);
  assert_same_tree (parent, dest, FALSE);

  sat_rm_rf (parent);
  sat_rm_rf (scratch);
}

static void
test_tree_remove_never_crosses_mounts (void)
{
  g_autofree char *scratch = sat_make_temp_dir ("remove");
  g_autofree char *mnt = g_build_filename (scratch, "a", "mnt", NULL);
  g_autoptr(GError) error = NULL;

  sat_write_file (scratch, "a/file.txt", "x");
  g_assert_cmpint (g_mkdir_with_parents (mnt, 0755), ==, 0);
  g_assert_cmpint (mount ("tmpfs", mnt, "tmpfs", 0, "size=1m"), ==, 0);
  sat_write_file (mnt, "mounted.txt", "must survive");

  g_assert_false (subagent_tree_remove (scratch, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_BUSY);
  g_assert_true (test_at (mnt, "mounted.txt", G_FILE_TEST_IS_REGULAR));
  g_clear_error (&error);

  g_assert_cmpint (umount2 (mnt, 0), ==, 0);
  g_assert_true (subagent_tree_remove (scratch, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (scratch, G_FILE_TEST_EXISTS));
  /* Idempotent. */
  g_assert_true (subagent_tree_remove (scratch, NULL, &error));
  g_assert_no_error (error);
}

static void
test_copy_strategy_names (void)
{
  SubagentCopyStrategy s;

  g_assert_true (subagent_copy_strategy_from_string ("Reflink", &s));
  g_assert_cmpint (s, ==, SUBAGENT_COPY_STRATEGY_REFLINK);
  g_assert_true (subagent_copy_strategy_from_string (NULL, &s));
  g_assert_cmpint (s, ==, SUBAGENT_COPY_STRATEGY_AUTO);
  g_assert_false (subagent_copy_strategy_from_string ("overlay", &s));
  g_assert_cmpstr (subagent_copy_strategy_to_string (SUBAGENT_COPY_STRATEGY_COPY), ==, "copy");
  g_assert_true (G_TYPE_IS_ENUM (SUBAGENT_TYPE_COPY_STRATEGY));
}

int
main (int argc, char *argv[])
{
  int rc;

  /* Before GLib caches it: the default snapshot dir lives under it. */
  cache_home = sat_make_temp_dir ("snap-cache");
  g_setenv ("XDG_CACHE_HOME", cache_home, TRUE);
  g_test_init (&argc, &argv, NULL);
  registry = subagent_plugin_registry_new (NULL);

  g_test_add_func ("/snapshot/copy/preserves-content-modes-times-links", test_copy_preserves_tree);
  g_test_add_func ("/snapshot/pool/recycled-equals-fresh-copy", test_pool_recycled_equals_fresh_copy);
  g_test_add_func ("/snapshot/pool/never-grows-past-its-size", test_pool_never_grows_past_its_size);
  g_test_add_func ("/snapshot/pool/checks-parent-since-park", test_pool_checks_parent_since_park);
  g_test_add_func ("/snapshot/pool/refuses-tree-still-held", test_pool_refuses_tree_still_held);
  g_test_add_func ("/snapshot/copy/spawn-runs-in-child-root", test_copy_spawn_runs_in_child_root);
  g_test_add_func ("/snapshot/reflink/falls-back-to-copy-on-ext4-and-tmpfs", test_reflink_falls_back_to_copy);
  g_test_add_func ("/snapshot/copy/error-removes-partial-snapshot", test_copy_error_removes_partial_snapshot);
  g_test_add_func ("/snapshot/copy/spreads-snapshots", test_copy_spreads_snapshots);
  g_test_add_func ("/snapshot/cleanup/twice", test_cleanup_twice);
  g_test_add_func ("/snapshot/cleanup/spares-unmarked-directory", test_cleanup_spares_unmarked_directory);
  g_test_add_func ("/snapshot/options/validated", test_options_are_validated);
  g_test_add_func ("/snapshot/options/default-snapshot-dir", test_default_snapshot_dir);
  g_test_add_func ("/snapshot/overlay/mounts-without-copying", test_overlay_mounts_without_copying);
  g_test_add_func ("/snapshot/auto/prefers-overlay-then-copies", test_auto_prefers_overlay_then_copies);
  g_test_add_func ("/tree-copier/async-and-excludes", test_tree_copy_async_and_excludes);
  g_test_add_func ("/tree-copier/refusals", test_tree_copy_refusals);
  g_test_add_func ("/tree-copier/modes-under-umask", test_tree_copy_modes_under_umask);
  g_test_add_func ("/tree-copier/many-directories", test_tree_copy_many_directories);
  g_test_add_func ("/tree-copier/remove-never-crosses-mounts", test_tree_remove_never_crosses_mounts);
  g_test_add_func ("/tree-copier/strategy-names", test_copy_strategy_names);

  rc = g_test_run ();
  g_clear_object (&registry);
  sat_rm_rf (cache_home);
  g_free (cache_home);
  return rc;
}
