/* test-confinement-cache.c: a manager reuses its children's Landlock
 * rulesets only for children with the same rights.
 *
 * One manager runs command children of three definitions in the same
 * shared workspace: open, `network: none`, and `write_scope: [allowed]`.
 * A probe in each child reports what its domain lets it do: a definition
 * that differs in network or write scope gets its own domain, whatever ran
 * before it, and a child of the same definition gets the one already built.
 * (Which ruleset a child entered shows in its TMPDIR: the directories of
 * one ruleset's children are in one parent.) A child's TMPDIR is empty when it starts, even when a previous child
 * left files in the directory it gets; everything is gone once the manager
 * is freed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <glib/gstdio.h>

#include "test-support.h"

/* Prints "name:ok" or "name:denied" per attempt, then the TMPDIR. */
static const char probe_script[] =
  "#!/bin/bash\n"
  "t() { if (eval \"$2\") >/dev/null 2>&1; then echo \"$1:ok\"; else echo \"$1:denied\"; fi; }\n"
  "t tmp_empty '[ -z \"$(ls -A \"$TMPDIR\")\" ]'\n"
  "t tmp_write 'echo x > \"$TMPDIR/left-behind\" && mkdir \"$TMPDIR/sub\" && echo y > \"$TMPDIR/sub/f\"'\n"
  "t root 'echo x > in-root.txt'\n"
  "t scope 'echo x > allowed/inside.txt'\n"
  "t tcp 'exec 3<>/dev/tcp/127.0.0.1/$TCP_PORT'\n"
  "echo \"tmpmode:$(stat -c %a \"$TMPDIR\")\"\n"
  "echo \"tmpdir:$TMPDIR\"\n";

/* A child that puts another directory, open to all, where its TMPDIR was
 * (which it may: it can write the TMPDIRs' parent). */
static const char swap_script[] =
  "#!/bin/bash\n"
  "cat > /dev/null\n"
  "mv \"$TMPDIR\" \"$TMPDIR.moved\" && mkdir -m 0777 \"$TMPDIR\" && echo planted > \"$TMPDIR/planted\" && "
  "echo swapped\n"
  "echo \"tmpdir:$TMPDIR\"\n";

typedef struct {
  char *root;
  SubagentManager *manager;
  GSocketListener *listener;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *script = NULL;
  g_autofree char *port = NULL;
  g_autofree char *root = sat_make_temp_dir ("confinement-cache");
  guint16 tcp_port;

  f->root = realpath (root, NULL);
  script = g_build_filename (f->root, "probe.sh", NULL);
  g_assert_true (g_file_set_contents (script, probe_script, -1, NULL));
  g_chmod (script, 0755);
  g_free (script);
  script = g_build_filename (f->root, "swap.sh", NULL);
  g_assert_true (g_file_set_contents (script, swap_script, -1, NULL));
  g_chmod (script, 0755);
  sat_write_file (f->root, ".subagent/agents/swapper.yaml",
                  "name: swapper\nisolation: shared\ncommand: [./swap.sh]\n");
  sat_write_file (f->root, ".subagent/agents/open.yaml",
                  "name: open\nisolation: shared\ncommand: [./probe.sh]\n");
  sat_write_file (f->root, ".subagent/agents/nonet.yaml",
                  "name: nonet\nisolation: shared\nnetwork: none\ncommand: [./probe.sh]\n");
  sat_write_file (f->root, ".subagent/agents/scoped.yaml",
                  "name: scoped\nisolation: shared\nwrite_scope: [allowed]\ncommand: [./probe.sh]\n");

  f->listener = g_socket_listener_new ();
  tcp_port = g_socket_listener_add_any_inet_port (f->listener, NULL, &error);
  g_assert_no_error (error);
  port = g_strdup_printf ("%u", tcp_port);
  g_setenv ("TCP_PORT", port, TRUE);

  f->manager = subagent_manager_new (f->root, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_clear_object (&f->manager);
  g_socket_listener_close (f->listener);
  g_clear_object (&f->listener);
  sat_rm_rf (f->root);
  free (f->root);
}

/* The probe's answer of one child of @def. */
static char *
run_probe (Fixture    *f,
           const char *def)
{
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *answer;

  subagent_run_options_set_def_name (options, def);
  result = subagent_manager_run (f->manager, "probe", options, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  answer = subagent_run_result_get_final_answer (result);
  g_assert_nonnull (answer);
  g_test_message ("%s: %s", def, answer);
  return g_strdup (answer);
}

static void
assert_probe (const char *answer,
              const char *name,
              gboolean    allowed)
{
  g_autofree char *line = g_strdup_printf ("%s:%s\n", name, allowed ? "ok" : "denied");

  if (strstr (answer, line) == NULL)
    g_error ("expected “%s” in the probe's answer:\n%s", g_strstrip (g_strdup (line)), answer);
}

static char *
probe_tmpdir (const char *answer)
{
  const char *start = strstr (answer, "tmpdir:");
  const char *end;

  g_assert_nonnull (start);
  start += strlen ("tmpdir:");
  end = strchr (start, '\n');
  return end != NULL ? g_strndup (start, end - start) : g_strdup (start);
}

/* The directory a child's TMPDIR is in: one per ruleset of the cache. */
static char *
probe_domain (const char *answer)
{
  g_autofree char *tmpdir = probe_tmpdir (answer);

  return g_path_get_dirname (tmpdir);
}

static void
test_domains (Fixture       *f,
              gconstpointer  data)
{
  g_autofree char *allowed = g_build_filename (f->root, "allowed", NULL);
  g_autofree char *first = NULL, *second = NULL, *nonet = NULL, *third = NULL, *scoped = NULL,
                  *fourth = NULL, *rescoped = NULL;
  g_autofree char *tmp_first = NULL, *tmp_second = NULL, *open_domain = NULL, *base = NULL;
  g_autofree char *nonet_domain = NULL, *scoped_domain = NULL, *rescoped_domain = NULL;

  if (subagent_confinement_get_landlock_abi () < 4)
    {
      /* The CI kernels have ABI >= 4 (network rules); say so loudly if not. */
      g_error ("this test needs Landlock ABI 4 (network rules); the kernel has %d",
               subagent_confinement_get_landlock_abi ());
    }
  g_mkdir_with_parents (allowed, 0755);

  first = run_probe (f, "open");
  assert_probe (first, "tmp_empty", TRUE);
  assert_probe (first, "tmp_write", TRUE);
  assert_probe (first, "root", TRUE);
  assert_probe (first, "scope", TRUE);
  assert_probe (first, "tcp", TRUE);
  tmp_first = probe_tmpdir (first);
  open_domain = probe_domain (first);

  /* Same rights: the same ruleset (the same TMPDIR, emptied: what the
   * first child left is gone once its run returned). */
  g_assert_true (g_file_test (tmp_first, G_FILE_TEST_IS_DIR));
  {
    g_autoptr(GDir) dir = g_dir_open (tmp_first, 0, NULL);

    g_assert_nonnull (dir);
    g_assert_null (g_dir_read_name (dir));
  }
  second = run_probe (f, "open");
  assert_probe (second, "tmp_empty", TRUE);
  assert_probe (second, "tmp_write", TRUE);
  assert_probe (second, "tcp", TRUE);
  tmp_second = probe_tmpdir (second);
  g_assert_cmpstr (tmp_second, ==, tmp_first);

  /* network: none is another domain, built for it. */
  nonet = run_probe (f, "nonet");
  assert_probe (nonet, "tcp", FALSE);
  assert_probe (nonet, "root", TRUE);
  assert_probe (nonet, "tmp_empty", TRUE);
  assert_probe (nonet, "tmp_write", TRUE);
  nonet_domain = probe_domain (nonet);
  g_assert_cmpstr (nonet_domain, !=, open_domain);

  /* ... and does not leak into the open definition's children. */
  third = run_probe (f, "open");
  assert_probe (third, "tcp", TRUE);
  {
    g_autofree char *third_domain = probe_domain (third);

    g_assert_cmpstr (third_domain, ==, open_domain);
  }

  /* A write scope narrows writes to it. */
  scoped = run_probe (f, "scoped");
  assert_probe (scoped, "scope", TRUE);
  assert_probe (scoped, "root", FALSE);
  assert_probe (scoped, "tcp", TRUE);
  assert_probe (scoped, "tmp_write", TRUE);
  scoped_domain = probe_domain (scoped);
  g_assert_cmpstr (scoped_domain, !=, open_domain);
  g_assert_cmpstr (scoped_domain, !=, nonet_domain);

  fourth = run_probe (f, "open");
  assert_probe (fourth, "root", TRUE);
  assert_probe (fourth, "tcp", TRUE);

  /* The scope directory replaced by another: the rule held the old inode,
   * so the ruleset is built again (reused, writes there would fail). */
  sat_rm_rf (allowed);
  g_mkdir_with_parents (allowed, 0755);
  rescoped = run_probe (f, "scoped");
  assert_probe (rescoped, "scope", TRUE);
  assert_probe (rescoped, "root", FALSE);
  rescoped_domain = probe_domain (rescoped);
  g_assert_cmpstr (rescoped_domain, !=, scoped_domain);

  /* The TMPDIRs removed behind the manager's back (a temp cleaner): the
   * next child gets a new one, and still its domain. */
  {
    g_autofree char *again = NULL;
    g_autofree char *again_domain = NULL;
    g_autofree char *children_base = g_path_get_dirname (open_domain);

    sat_rm_rf (children_base);
    again = run_probe (f, "open");
    assert_probe (again, "tmp_empty", TRUE);
    assert_probe (again, "tmp_write", TRUE);
    assert_probe (again, "tcp", TRUE);
    again_domain = probe_domain (again);
    g_assert_cmpstr (again_domain, !=, open_domain);
    g_assert_true (g_file_test (again_domain, G_FILE_TEST_IS_DIR));
    g_free (open_domain);
    open_domain = g_steal_pointer (&again_domain);
  }

  /* The manager freed, no TMPDIR remains once the last runs' tasks are
   * released (they may be, just after their results returned). */
  base = g_path_get_dirname (open_domain);
  g_clear_object (&f->manager);
  {
    gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

    while (g_file_test (base, G_FILE_TEST_EXISTS) && g_get_monotonic_time () < deadline)
      {
        while (g_main_context_iteration (NULL, FALSE))
          ;
        g_usleep (10 * 1000);
      }
  }
  g_assert_false (g_file_test (tmp_first, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (open_domain, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (rescoped_domain, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (base, G_FILE_TEST_EXISTS));
}

/* A TMPDIR whose path a child pointed at another directory is not handed
 * to the next child: it gets a private, empty one of its own. */
static void
test_replaced_tmpdir_not_reused (Fixture       *f,
                                 gconstpointer  data)
{
  g_autofree char *before = run_probe (f, "open");
  g_autofree char *swapped = run_probe (f, "swapper");
  g_autofree char *after = run_probe (f, "open");
  g_autofree char *swapped_tmpdir = probe_tmpdir (swapped);
  g_autofree char *after_tmpdir = probe_tmpdir (after);
  g_autofree char *before_domain = probe_domain (before);
  g_autofree char *after_domain = probe_domain (after);

  g_assert_nonnull (strstr (swapped, "swapped\n"));
  /* Same rights, same ruleset: the swapper took the directory the first
   * child left, and the third child is of that ruleset too. */
  g_assert_cmpstr (after_domain, ==, before_domain);
  g_assert_cmpstr (after_tmpdir, !=, swapped_tmpdir);
  assert_probe (after, "tmp_empty", TRUE);
  if (strstr (after, "tmpmode:700\n") == NULL)
    g_error ("expected a private TMPDIR in the probe's answer:\n%s", after);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/confinement-cache/domains", Fixture, NULL, fixture_setup, test_domains, fixture_teardown);
  g_test_add ("/confinement-cache/replaced-tmpdir-not-reused", Fixture, NULL, fixture_setup,
              test_replaced_tmpdir_not_reused, fixture_teardown);
  return g_test_run ();
}
