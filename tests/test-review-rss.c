/* test-review-rss.c: issue 18, item 1 — a child that leaves a 200 GB sparse
 * file and a 1 GB real file in its worktree or snapshot does not take the
 * host down: `subagentctl run` (the host, a child process of this test)
 * finishes with a review listing both, and its peak RSS (from wait4's
 * rusage, which includes what it waited for) stays under 200 MB.
 * Built twice: the slow suite runs the worktree and snapshot children, the
 * docker suite (-DRSS_DOCKER, an engine started by scripts/run-tests) a
 * container child.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-support.h"
#ifdef RSS_DOCKER
#include "docker-test-support.h"
#endif

#define RSS_LIMIT_KB (200 * 1024)

static const char child_command[] =
  "sh -c 'truncate -s 200G sparse.bin && head -c 1073741824 /dev/urandom > real.bin'";

/* Runs subagentctl in root; returns its stdout, and its peak RSS in KiB. */
static char *
run_host (const char  *root,
          const char  *isolation,
          const char  *extra_option,
          long        *out_maxrss_kb,
          int         *out_status)
{
  g_autofree char *out_path = g_build_filename (root, "..", "host-out.json", NULL);
  const char *argv[16];
  struct rusage usage;
  char *text = NULL;
  pid_t pid;
  guint n = 0;
  int status;

  argv[n++] = sat_subagentctl ();
  argv[n++] = "run";
  argv[n++] = "--json";
  argv[n++] = "--root";
  argv[n++] = root;
  if (isolation != NULL)
    {
      argv[n++] = "--isolation";
      argv[n++] = isolation;
      argv[n++] = "--command";
      argv[n++] = child_command;
    }
  else
    {
      /* The definition (docker) names its own command. */
      argv[n++] = "--def";
      argv[n++] = "rss";
    }
  if (extra_option != NULL)
    {
      argv[n++] = "--option";
      argv[n++] = extra_option;
    }
  argv[n++] = "--";
  argv[n++] = "leave a huge sparse file and a big real one";
  argv[n] = NULL;

  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      FILE *out = freopen (out_path, "w", stdout);

      if (out == NULL || chdir (root) != 0)
        _exit (127);
      execv (argv[0], (char **) argv);
      _exit (127);
    }
  g_assert_cmpint (wait4 (pid, &status, 0, &usage), ==, pid);
  g_assert_true (g_file_get_contents (out_path, &text, NULL, NULL));
  g_unlink (out_path);
  *out_maxrss_kb = usage.ru_maxrss;
  *out_status = status;
  return text;
}

static void
check_run (const char *root,
           const char *isolation,
           const char *extra_option)
{
  g_autofree char *out = NULL;
  g_autofree char *status_text = NULL;
  g_autoptr(JsonNode) node = NULL;
  JsonObject *result, *review;
  long maxrss_kb = 0;
  int status = 0;

  out = run_host (root, isolation, extra_option, &maxrss_kb, &status);
  g_test_message ("%s: host peak RSS %ld KiB", isolation ? isolation : "docker", maxrss_kb);
  g_assert_true (WIFEXITED (status));
  node = json_from_string (out, NULL);
  g_assert_nonnull (node);
  result = json_node_get_object (node);
  if (g_strcmp0 (json_object_get_string_member (result, "status"), "complete") != 0)
    g_test_message ("result: %s", out);
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "complete");
  review = json_object_get_object_member (result, "review");
  g_assert_nonnull (review);
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "status_path"), &status_text, NULL, NULL));
  g_assert_nonnull (strstr (status_text, "added\tsparse.bin\tbinary over-limit size 214748364800 blocks-sha256 "));
  g_assert_nonnull (strstr (status_text, "added\treal.bin\tbinary over-limit size 1073741824 blocks-sha256 "));
  g_assert_cmpint (maxrss_kb, <, RSS_LIMIT_KB);
}

#ifndef RSS_DOCKER
static void
test_worktree_child (void)
{
  g_autofree char *repo = sat_make_git_repo ("README", "hello\n", NULL);

  check_run (repo, "worktree", NULL);
  sat_rm_rf (repo);
}

static void
test_snapshot_child (void)
{
  g_autofree char *root = sat_make_temp_dir ("review-rss-root");
  g_autofree char *snapshots = sat_make_temp_dir ("review-rss-snapshots");
  g_autofree char *option = g_strdup_printf ("snapshot_dir=%s", snapshots);

  sat_write_file (root, "README", "hello\n");
  check_run (root, "directory-snapshot", option);
  sat_rm_rf (root);
  sat_rm_rf (snapshots);
}
#endif

#ifdef RSS_DOCKER
static void
test_docker_child (void)
{
  DtsEngine engine = { "docker", "DOCKER_HOST", "bind", NULL, NULL };
  g_autofree char *root = NULL;

  g_assert_true (dts_engine_setup (&engine));
  root = dts_make_root (&engine, "rss",
                                         "truncate -s 200G sparse.bin && head -c 1073741824 /dev/urandom > real.bin");

  check_run (root, NULL, NULL);
  sat_rm_rf (root);
  g_free (engine.host);
  g_strfreev (engine.argv);
}
#endif

int
main (int   argc,
      char *argv[])
{
  int rc;

  g_test_init (&argc, &argv, NULL);
#ifdef RSS_DOCKER
  dts_init ();
  g_test_add_func ("/review-rss/docker-child", test_docker_child);
#else
  g_test_add_func ("/review-rss/worktree-child", test_worktree_child);
  g_test_add_func ("/review-rss/snapshot-child", test_snapshot_child);
#endif
  rc = g_test_run ();
#ifdef RSS_DOCKER
  dts_shutdown ();
#endif
  return rc;
}
