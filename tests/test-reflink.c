/* test-reflink.c: the reflink strategy on a filesystem that has it.
 *
 * ext4 and tmpfs refuse FICLONE, so the snapshot tests there only see the
 * fallback. This program makes an XFS image, mounts it on a loop device (as
 * root: scripts/run-tests installs xfsprogs) and copies on it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <sys/stat.h>

#include "test-support.h"

typedef struct {
  char *dir;      /* holds the image and the mount point */
  char *mount;
} Xfs;

static void
xfs_setup (Xfs *x, gconstpointer data)
{
  g_autofree char *image = NULL;

  x->dir = sat_make_temp_dir ("reflink");
  image = g_build_filename (x->dir, "xfs.img", NULL);
  x->mount = g_build_filename (x->dir, "mnt", NULL);
  g_assert_cmpint (g_mkdir_with_parents (x->mount, 0755), ==, 0);
  g_free (sat_run (x->dir, FALSE, NULL, "truncate", "-s", "320M", image, NULL));
  g_free (sat_run (x->dir, FALSE, NULL, "mkfs.xfs", "-q", "-m", "reflink=1", image, NULL));
  g_free (sat_run (x->dir, FALSE, NULL, "mount", "-o", "loop", image, x->mount, NULL));
}

static void
xfs_teardown (Xfs *x, gconstpointer data)
{
  g_free (sat_run (x->dir, FALSE, NULL, "umount", x->mount, NULL));
  sat_rm_rf (x->dir);
  g_free (x->dir);
  g_free (x->mount);
}

static void
make_tree (const char *root)
{
  g_autofree char *big = g_strnfill (256 * 1024, 'r');

  sat_write_file (root, "README", "hello\n");
  sat_write_file (root, "src/big.bin", big);
  sat_write_file (root, "src/deep/er/file.c", "int x;\n");
  sat_write_file (root, ".subagent/state", "not copied\n");
  {
    g_autofree char *script = g_build_filename (root, "run.sh", NULL);
    sat_write_file (root, "run.sh", "#!/bin/sh\n");
    g_assert_cmpint (chmod (script, 0755), ==, 0);
  }
}

static void
assert_same_file (const char *a_root, const char *b_root, const char *rel)
{
  g_autofree char *a = sat_read_file (a_root, rel);
  g_autofree char *b = sat_read_file (b_root, rel);

  g_assert_nonnull (a);
  g_assert_cmpstr (a, ==, b);
}

static void
test_tree_copy_uses_reflink (Xfs *x, gconstpointer data)
{
  g_autofree char *src = g_build_filename (x->mount, "parent", NULL);
  g_autofree char *dst = g_build_filename (x->mount, "copy", NULL);
  g_autofree char *script = g_build_filename (dst, "run.sh", NULL);
  g_autofree char *excluded = g_build_filename (dst, ".subagent", NULL);
  const char * const exclude[] = { ".subagent", ".git", NULL };
  SubagentCopyStrategy used = SUBAGENT_COPY_STRATEGY_AUTO;
  g_autoptr(GError) error = NULL;
  struct stat st;

  make_tree (src);
  g_assert_true (subagent_tree_copy (src, dst, SUBAGENT_COPY_STRATEGY_REFLINK, exclude, &used, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (used, ==, SUBAGENT_COPY_STRATEGY_REFLINK);
  assert_same_file (src, dst, "README");
  assert_same_file (src, dst, "src/big.bin");
  assert_same_file (src, dst, "src/deep/er/file.c");
  g_assert_cmpint (stat (script, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0755);
  g_assert_false (g_file_test (excluded, G_FILE_TEST_EXISTS));

  /* A clone is a copy: writing it leaves the parent alone. */
  sat_write_file (dst, "src/big.bin", "changed");
  {
    g_autofree char *parent = sat_read_file (src, "src/big.bin");
    g_assert_cmpuint (strlen (parent), ==, 256 * 1024);
  }
}

static void
test_auto_picks_reflink (Xfs *x, gconstpointer data)
{
  g_autofree char *src = g_build_filename (x->mount, "parent", NULL);
  g_autofree char *dst = g_build_filename (x->mount, "copy", NULL);
  SubagentCopyStrategy used = SUBAGENT_COPY_STRATEGY_COPY;
  g_autoptr(GError) error = NULL;

  make_tree (src);
  g_assert_true (subagent_tree_copy (src, dst, SUBAGENT_COPY_STRATEGY_AUTO, NULL, &used, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (used, ==, SUBAGENT_COPY_STRATEGY_REFLINK);
  assert_same_file (src, dst, "src/big.bin");
}

static void
test_snapshot_backend_reflink (Xfs *x, gconstpointer data)
{
  g_autofree char *src = g_build_filename (x->mount, "parent", NULL);
  g_autofree char *snapshots = g_build_filename (x->mount, "snapshots", NULL);
  g_autoptr(SubagentIsolationProvider) provider = NULL;
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(JsonObject) options = json_object_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *child_root = NULL;
  const char *strategy = NULL;
  GVariant *data_v;

  make_tree (src);
  json_object_set_string_member (options, "strategy", "reflink");
  json_object_set_string_member (options, "snapshot_dir", snapshots);
  provider = subagent_plugin_registry_get_isolation_provider (subagent_plugin_registry_get_default (),
                                                              "directory-snapshot", &error);
  g_assert_no_error (error);
  request = g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST, "parent-root", src, "isolation", "directory-snapshot",
                          "session-key", "reflink-key", "options", options, NULL);
  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  g_assert_no_error (error);
  child_root = g_strdup (subagent_isolation_context_get_child_root (context));
  data_v = subagent_isolation_context_get_backend_data (context);
  g_assert_nonnull (data_v);
  g_assert_true (g_variant_lookup (data_v, "strategy", "&s", &strategy));
  g_assert_cmpstr (strategy, ==, "reflink");
  assert_same_file (src, child_root, "src/big.bin");
  subagent_isolation_context_cleanup (context);
  g_assert_false (g_file_test (child_root, G_FILE_TEST_EXISTS));
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/reflink/tree-copy-uses-reflink", Xfs, NULL, xfs_setup, test_tree_copy_uses_reflink, xfs_teardown);
  g_test_add ("/reflink/auto-picks-reflink", Xfs, NULL, xfs_setup, test_auto_picks_reflink, xfs_teardown);
  g_test_add ("/reflink/snapshot-backend-reflink", Xfs, NULL, xfs_setup, test_snapshot_backend_reflink, xfs_teardown);
  return g_test_run ();
}
