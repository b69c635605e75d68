/* test-docker-copy-in.c: a copied workspace goes into the container through
 * the image's own `tar` (an exec fed from the tar made in process) or, where
 * that cannot be used or does not prove itself, through PUT archive; either
 * way the child finds exactly the snapshot: contents, modes, owners,
 * modification times, links.
 *
 * Engines as in test-docker.c: DOCKER_HOST, SUBAGENT_TEST_PODMAN_HOST and
 * SUBAGENT_TEST_REMOTE_HOST, all started by scripts/run-tests; every test
 * forces `transfer: copy`, so each engine copies.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include "docker-test-support.h"

static DtsEngine engines[] = {
  { "docker", "DOCKER_HOST", "bind", NULL, NULL },
  { "podman", "SUBAGENT_TEST_PODMAN_HOST", "bind", NULL, NULL },
  { "remote", "SUBAGENT_TEST_REMOTE_HOST", "copy", NULL, NULL },
};

/* An mtime far from now, so a copy that lost it shows. */
#define OLD_MTIME 1262304000   /* 2010-01-01 */

static const char *
copy_in_of (SubagentIsolationContext *context)
{
  const char *method = NULL;

  g_assert_true (g_variant_lookup (subagent_isolation_context_get_backend_data (context), "copy-in", "&s",
                                   &method));
  return method;
}

static void
set_old_mtime (const char *root,
               const char *rel)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  struct utimbuf times = { OLD_MTIME, OLD_MTIME };

  g_assert_cmpint (g_utime (path, &times), ==, 0);
}

static void
set_mode (const char *root,
          const char *rel,
          mode_t      mode)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);

  g_assert_cmpint (g_chmod (path, mode), ==, 0);
}

/* A parent whose tree tells a faithful copy from a careless one: modes
 * other than the umask's, an old mtime on files and directories, a link,
 * an empty directory and a long name. */
static char *
make_telling_parent (void)
{
  char *parent = dts_make_parent ();
  g_autofree char *long_name = g_strnfill (150, 'n');
  g_autofree char *long_rel = g_strconcat ("long/", long_name, NULL);
  g_autofree char *link = g_build_filename (parent, "modes", "link", NULL);
  g_autofree char *empty = g_build_filename (parent, "empty", NULL);

  sat_write_file (parent, "modes/group-writable.txt", "shared\n");
  sat_write_file (parent, "modes/tool.sh", "echo tool\n");
  sat_write_file (parent, "modes/private.txt", "mine\n");
  sat_write_file (parent, "modes/locked/inner.txt", "inner\n");
  sat_write_file (parent, long_rel, "long\n");
  g_assert_cmpint (symlink ("tool.sh", link), ==, 0);
  g_assert_cmpint (g_mkdir (empty, 0700), ==, 0);
  set_mode (parent, "modes/group-writable.txt", 0664);
  set_mode (parent, "modes/tool.sh", 0775);
  set_mode (parent, "modes/private.txt", 0600);
  set_mode (parent, "modes/locked/inner.txt", 0640);
  set_mode (parent, "modes/locked", 0750);
  set_old_mtime (parent, "modes/group-writable.txt");
  set_old_mtime (parent, "modes/locked/inner.txt");
  set_old_mtime (parent, "modes/locked");
  set_old_mtime (parent, "empty");
  return parent;
}

static gint
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

static char *
sorted_lines (const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr(GPtrArray) kept = g_ptr_array_new ();

  for (guint i = 0; lines[i] != NULL; i++)
    if (*lines[i] != '\0')
      g_ptr_array_add (kept, lines[i]);
  g_ptr_array_sort (kept, compare_strings);
  g_ptr_array_add (kept, NULL);
  return g_strjoinv ("\n", (char **) kept->pdata);
}

/* "MODE UID MTIME ./REL" of every entry below @dir but links, as the
 * container's `stat -c '%a %u %Y %n'` prints them for the user 65534. */
static void
list_tree (const char *root,
           const char *rel,
           GString    *out)
{
  g_autofree char *dir_path = g_build_filename (root, rel, NULL);
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (rel, name, NULL);
      g_autofree char *path = g_build_filename (root, child, NULL);
      struct stat st;

      g_assert_cmpint (lstat (path, &st), ==, 0);
      if (S_ISLNK (st.st_mode))
        continue;
      g_string_append_printf (out, "%o 65534 %lld %s\n", (unsigned) (st.st_mode & 07777), (long long) st.st_mtime,
                              child);
      if (S_ISDIR (st.st_mode))
        list_tree (root, child, out);
    }
}

/* Runs @script with the image's `sh`, or with `busybox sh` where the
 * image has no `sh` (@busybox); returns its stdout. */
static char *
run_script (SubagentIsolationContext *context,
            gboolean                  busybox,
            const char               *script,
            int                      *status)
{
  const char * const sh_argv[] = { "sh", "-c", script, NULL };
  const char * const busybox_argv[] = { "busybox", "sh", "-c", script, NULL };
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  char *out = NULL;

  proc = subagent_isolation_context_spawnv (context, busybox ? busybox_argv : sh_argv, NULL,
                                            G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, &err, &error);
  g_assert_no_error (error);
  if (err != NULL && *err != '\0')
    g_test_message ("stderr: %s", err);
  *status = g_subprocess_get_exit_status (proc);
  return out;
}

/* The child sees exactly the snapshot's tree. */
static void
assert_workspace_is_snapshot (SubagentIsolationContext *context,
                              gboolean                  busybox)
{
  g_autoptr(GString) expected = g_string_new (NULL);
  g_autofree char *expected_sorted = NULL;
  g_autofree char *seen = NULL;
  g_autofree char *seen_sorted = NULL;
  g_autofree char *rest = NULL;
  g_autofree char *long_name = g_strnfill (150, 'n');
  g_autofree char *script = NULL;
  int status = -1;

  list_tree (subagent_isolation_context_get_child_root (context), ".", expected);
  seen = run_script (context, busybox, "cd /workspace && find . -mindepth 1 ! -type l -exec stat -c '%a %u %Y %n' {} +",
                     &status);
  g_assert_cmpint (status, ==, 0);
  expected_sorted = sorted_lines (expected->str);
  seen_sorted = sorted_lines (seen);
  g_assert_cmpstr (seen_sorted, ==, expected_sorted);

  script = g_strdup_printf ("cd /workspace && readlink modes/link && cat modes/group-writable.txt "
                            "modes/locked/inner.txt long/%s sub/nested.txt", long_name);
  rest = run_script (context, busybox, script, &status);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (rest, ==, "tool.sh\nshared\ninner\nlong\nnested\n");
}

/* Prepares a copy-mode workspace of @parent as session @key (with option
 * copy_in when @copy_in is set) and checks the way the tree went in. */
static SubagentIsolationContext *
prepare_copy (DtsEngine  *e,
              const char *parent,
              const char *key,
              const char *copy_in,
              const char *expected_method)
{
  g_autoptr(SubagentIsolationRequest) request =
    dts_make_request (e, parent, key, 0, NULL, "transfer", "copy", "copy_in", copy_in, NULL);
  g_autoptr(GError) error = NULL;
  SubagentIsolationContext *context = dts_prepare (request, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (copy_in_of (context), ==, expected_method);
  return context;
}

static void
finish (DtsEngine                *e,
        SubagentIsolationContext *context,
        const char               *key,
        char                     *parent)
{
  g_autofree char *label = g_strdup_printf ("io.subagent.session=%s", key);

  subagent_isolation_context_cleanup (context);
  g_object_unref (context);
  dts_assert_nothing_left (e, label, parent);
  sat_rm_rf (parent);
  g_free (parent);
}

/* The image's tar does it (busybox here), and nothing is lost. On podman
 * the archive does it: its API makes the volume root's until then. */
static void
test_exec_copy_in_is_faithful (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  char *parent = make_telling_parent ();
  SubagentIsolationContext *context =
    prepare_copy (e, parent, "copy-in-exec", NULL, g_str_equal (e->name, "podman") ? "archive" : "exec");

  assert_workspace_is_snapshot (context, FALSE);
  finish (e, context, "copy-in-exec", parent);
}

/* `copy_in: archive` takes the engine's PUT archive, with the same result. */
static void
test_archive_copy_in_is_faithful (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  char *parent = make_telling_parent ();
  SubagentIsolationContext *context = prepare_copy (e, parent, "copy-in-archive", "archive", "archive");

  assert_workspace_is_snapshot (context, FALSE);
  finish (e, context, "copy-in-archive", parent);
}

/* An image without `sh` (busybox's sh runs its own tar even without a
 * /bin/tar link): the exec cannot run, the archive does it, and again for
 * the next workspace (which the provider sends straight to the archive;
 * this test sees only that the result is the archive's both times). */
static void
test_image_without_shell_falls_back (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = make_telling_parent ();
  g_autofree char *maker = g_strdup_printf ("subagent-test-nosh-maker-%d", getpid ());
  g_autofree char *image = g_strdup_printf ("localhost/subagent-test-nosh-%d:latest", getpid ());
  g_autoptr(GError) error = NULL;

  g_free (dts_engine_run (e, NULL, "run", "--name", maker, "--user", "0", "--network", "none", "--entrypoint", "rm",
                          dts_image (), "/bin/sh", NULL));
  g_free (dts_engine_run (e, NULL, "commit", maker, image, NULL));
  dts_remove_container (e, maker);

  for (int round = 0; round < 2; round++)
    {
      g_autofree char *key = g_strdup_printf ("copy-in-nosh-%d", round);
      g_autofree char *label = g_strdup_printf ("io.subagent.session=%s", key);
      g_autoptr(SubagentIsolationRequest) request =
        dts_make_request (e, parent, key, 0, NULL, "transfer", "copy", "image", image, NULL);
      g_autoptr(SubagentIsolationContext) context = dts_prepare (request, &error);
      int status = -1;
      g_autofree char *which = NULL;

      g_assert_no_error (error);
      g_assert_cmpstr (copy_in_of (context), ==, "archive");
      which = run_script (context, TRUE, "ls /bin/sh || echo none", &status);
      g_assert_cmpstr (which, ==, "none\n");
      assert_workspace_is_snapshot (context, TRUE);
      subagent_isolation_context_cleanup (context);
      dts_assert_nothing_left (e, label, parent);
    }
  g_free (dts_engine_run (e, NULL, "rmi", image, NULL));
  sat_rm_rf (parent);
}

/* Setuid, setgid and sticky bits, which a tar run as the user may drop:
 * the exec's result is not taken, the archive makes them exact. */
static void
test_special_modes_are_exact (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  char *parent = make_telling_parent ();
  SubagentIsolationContext *context;
  g_autofree char *shared_path = NULL;
  GStatBuf st;

  sat_write_file (parent, "shared/inner.txt", "in a setgid directory\n");
  sat_write_file (parent, "sticky/inner.txt", "in a sticky directory\n");
  set_mode (parent, "shared", 02775);
  set_mode (parent, "sticky", 01777);
  context = prepare_copy (e, parent, "copy-in-special", NULL, "archive");
  /* The snapshot kept them (else there would be nothing to check). */
  shared_path = g_build_filename (subagent_isolation_context_get_child_root (context), "shared", NULL);
  g_assert_cmpint (g_stat (shared_path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 02775);
  assert_workspace_is_snapshot (context, FALSE);
  finish (e, context, "copy-in-special", parent);
}

/* A name busybox tar lists on two lines: the count does not match, so the
 * archive does it; the file is there all the same. */
static void
test_unlistable_name_falls_back (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  char *parent = make_telling_parent ();
  SubagentIsolationContext *context;
  g_autofree char *seen = NULL;
  int status = -1;

  sat_write_file (parent, "two\nlines.txt", "odd name\n");
  context = prepare_copy (e, parent, "copy-in-newline", NULL, "archive");
  seen = run_script (context, FALSE, "cat /workspace/two*lines.txt", &status);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (seen, ==, "odd name\n");
  finish (e, context, "copy-in-newline", parent);
}

/* A misspelt copy_in fails: at prepare, and at configuration load. */
static void
test_bad_copy_in_option (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request =
    dts_make_request (e, parent, "copy-in-bad", 0, NULL, "transfer", "copy", "copy_in", "tarball", NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(SubagentIsolationProvider) configured = NULL;
  g_autoptr(GError) error = NULL;

  context = dts_prepare (request, &error);
  g_assert_null (context);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION);
  g_assert_nonnull (strstr (error->message, "tarball"));
  g_clear_error (&error);

  configured = dts_configured_provider ("{\"copy_in\": \"tarball\"}", parent, &error);
  g_assert_null (configured);
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "copy_in"));
  dts_assert_nothing_left (e, "io.subagent.session=copy-in-bad", parent);
  sat_rm_rf (parent);
}

int
main (int argc, char *argv[])
{
  static const struct {
    const char *path;
    GTestDataFunc func;
    gboolean exec_engines_only;   /* podman never tries the exec (and cannot commit through its API) */
  } tests[] = {
    { "exec-is-faithful", test_exec_copy_in_is_faithful, FALSE },
    { "archive-is-faithful", test_archive_copy_in_is_faithful, FALSE },
    { "image-without-shell-falls-back", test_image_without_shell_falls_back, TRUE },
    { "special-modes-are-exact", test_special_modes_are_exact, FALSE },
    { "unlistable-name-falls-back", test_unlistable_name_falls_back, FALSE },
    { "bad-option", test_bad_copy_in_option, FALSE },
  };
  int rc;

  g_test_init (&argc, &argv, NULL);
  dts_init ();
  for (guint i = 0; i < G_N_ELEMENTS (engines); i++)
    {
      if (!dts_engine_setup (&engines[i]))
        continue;
      for (guint t = 0; t < G_N_ELEMENTS (tests); t++)
        {
          g_autofree char *path = g_strdup_printf ("/docker-copy-in/%s/%s", engines[i].name, tests[t].path);

          if (tests[t].exec_engines_only && g_str_equal (engines[i].name, "podman"))
            continue;
          g_test_add_data_func (path, &engines[i], tests[t].func);
        }
    }
  rc = g_test_run ();
  for (guint i = 0; i < G_N_ELEMENTS (engines); i++)
    {
      g_strfreev (engines[i].argv);
      g_free (engines[i].host);
    }
  dts_shutdown ();
  return rc;
}
