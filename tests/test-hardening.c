/* test-hardening.c: regression tests of the defects an adversarial review
 * found (issue 11, section 2), one test path per defect, through the
 * library and `subagentctl` as a host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "test-support.h"

#define DEEP 100000

typedef struct {
  char *root;
  char *base;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autofree char *repo = sat_make_git_repo ("README", "hello\n", NULL);

  f->root = realpath (repo, NULL);
  f->base = sat_make_temp_dir ("hardening");
  g_mkdir_with_parents (f->base, 0755);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  sat_rm_rf (f->root);
  sat_rm_rf (f->base);
  free (f->root);
  g_free (f->base);
}

static char *
deep_json (guint depth)
{
  GString *s = g_string_sized_new (depth * 2 + 1);

  for (guint i = 0; i < depth; i++)
    g_string_append_c (s, '[');
  for (guint i = 0; i < depth; i++)
    g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

/* Runs subagentctl; asserts it was not killed by a signal; returns its exit status. */
static int
ctl_no_crash (const char  *root,
              char       **out,
              char       **err,
              const char  *first,
              ...) G_GNUC_NULL_TERMINATED;

static int
ctl_no_crash (const char  *root,
              char       **out,
              char       **err,
              const char  *first,
              ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  va_list ap;

  g_ptr_array_add (argv, (gpointer) sat_subagentctl ());
  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_set_cwd (launcher, root);
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, out, err, &error);
  g_assert_no_error (error);
  g_assert_false (g_subprocess_get_if_signaled (proc));
  return g_subprocess_get_exit_status (proc);
}

static JsonObject *
parse_object (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

/* ---- deep JSON --------------------------------------------------------- */

static void
test_deep_json_check_depth (void)
{
  g_autofree char *deep = deep_json (DEEP);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();

  g_assert_true (subagent_json_check_depth ("{\"a\": [[\"[[[[\"]]]}", -1, 3, NULL));
  g_assert_false (subagent_json_check_depth ("[[[[]]]]", -1, 3, &error));
  g_assert_error (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_INVALID_DATA);
  g_clear_error (&error);
  /* Escaped quotes do not end a string. */
  g_assert_true (subagent_json_check_depth ("[\"\\\"[[[[[\"]", -1, 1, NULL));
  g_assert_false (subagent_json_parser_load_bounded (parser, deep, -1, &error));
  g_assert_error (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_INVALID_DATA);
}

static void
test_deep_json_child_protocol (Fixture       *f,
                               gconstpointer  data)
{
  g_autofree char *deep = deep_json (DEEP);
  g_autofree char *script = g_strdup_printf ("printf '%%s\\n' '%s'; echo '{\"type\":\"final\",\"answer\":\"survived\"}'", deep);
  g_autofree char *script_path = g_build_filename (f->base, "deep.sh", NULL);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonObject) result = NULL;

  g_assert_true (g_file_set_contents (script_path, script, -1, NULL));
  {
    g_autofree char *def = g_strdup_printf ("name: deep\ncommand: [/bin/sh, %s]\n", script_path);
    sat_write_file (f->root, ".subagent/agents/deep.yaml", def);
  }
  g_assert_cmpint (ctl_no_crash (f->root, &out, &err, "run", "--json", "-i", "shared", "-d", "deep", "t", NULL), ==, 0);
  result = parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (result, "final_answer"), ==, "survived");
}

static void
test_deep_json_definition (Fixture       *f,
                           gconstpointer  data)
{
  g_autofree char *deep = deep_json (DEEP);
  g_autofree char *def = g_strdup_printf ("{\"name\": \"deep\", \"tools\": %s}", deep);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  sat_write_file (f->root, ".subagent/agents/deep.json", def);
  sat_write_file (f->root, ".subagent/agents/fine.yaml", "name: fine\ncommand: [/bin/true]\n");
  g_autofree char *both = NULL;

  ctl_no_crash (f->root, &out, &err, "defs", NULL);
  g_assert_nonnull (strstr (out, "fine"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  ctl_no_crash (f->root, &out, &err, "defs", "--check", NULL);
  both = g_strconcat (out, err, NULL);
  g_assert_nonnull (strstr (both, "deeper than 512"));
}

static void
test_deep_json_approvals_file (Fixture       *f,
                               gconstpointer  data)
{
  g_autofree char *deep = deep_json (DEEP);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  sat_write_file (f->root, ".subagent/approvals/planted.json", deep);
  ctl_no_crash (f->root, &out, &err, "approvals", "list", NULL);
}

static void
test_deep_json_batch_input (Fixture       *f,
                            gconstpointer  data)
{
  g_autofree char *deep = deep_json (DEEP);
  g_autofree char *path = g_build_filename (f->base, "batch.json", NULL);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  g_assert_true (g_file_set_contents (path, deep, -1, NULL));
  g_assert_cmpint (ctl_no_crash (f->root, &out, &err, "batch", path, NULL), !=, 0);
  g_assert_nonnull (strstr (err, "deeper than 512"));
}

static void
test_deep_json_session_log (Fixture       *f,
                            gconstpointer  data)
{
  g_autofree char *deep = deep_json (DEEP);
  g_autofree char *line = g_strconcat (deep, "\n", NULL);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  sat_write_file (f->root, ".subagent/sessions/planted.jsonl", line);
  sat_write_file (f->root, ".subagent/sessions/planted2.json", deep);
  ctl_no_crash (f->root, &out, &err, "sessions", NULL);
}

static void
test_deep_json_config (Fixture       *f,
                       gconstpointer  data)
{
  g_autofree char *deep = deep_json (DEEP);
  g_autofree char *config = g_strconcat ("isolation: ", deep, "\n", NULL);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  sat_write_file (f->root, ".subagent/config.yaml", config);
  g_assert_cmpint (ctl_no_crash (f->root, &out, &err, "run", "-c", "true", "t", NULL), !=, 0);
  g_assert_nonnull (strstr (err, "deeper than"));
}

/* ---- the approval key --------------------------------------------------- */

static void
test_hmac_key_scrubbed_from_environ (Fixture       *f,
                                     gconstpointer  data)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonObject) result = NULL;

  /* Unconfined, so that only the scrub stands between the child and the key. */
  sat_write_file (f->root, ".subagent/agents/peek.yaml",
                  "name: peek\nconfinement: none\n"
                  "command: [/bin/sh, -c, 'grep -a -c SUBAGENT_APPROVAL_HMAC_KEY=hardening-key /proc/$PPID/environ; true']\n");
  g_setenv ("SUBAGENT_APPROVAL_HMAC_KEY", "hardening-key", TRUE);
  g_assert_cmpint (ctl_no_crash (f->root, &out, &err, "run", "--json", "-i", "shared", "-d", "peek", "t", NULL), ==, 0);
  g_unsetenv ("SUBAGENT_APPROVAL_HMAC_KEY");
  result = parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (result, "final_answer"), ==, "0");
}

/* ---- depth through the CLI ---------------------------------------------- */

static void
test_depth_cli_nesting_refused (Fixture       *f,
                                gconstpointer  data)
{
  g_autofree char *def = g_strdup_printf ("name: outer\nmax_depth: 1\nconfinement: none\n"
                                          "command: [/bin/sh, -c, '%s run --json -i shared -d inner t']\n",
                                          sat_subagentctl ());
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(JsonObject) inner = NULL;
  const char *answer;

  sat_write_file (f->root, ".subagent/agents/outer.yaml", def);
  sat_write_file (f->root, ".subagent/agents/inner.yaml", "name: inner\nmax_depth: 5\ncommand: [/bin/echo, inner ran]\n");
  ctl_no_crash (f->root, &out, &err, "run", "--json", "-i", "shared", "-d", "outer", "t", NULL);
  result = parse_object (out);
  answer = json_object_get_string_member (result, "final_answer");
  inner = parse_object (answer);
  g_assert_cmpstr (json_object_get_string_member (inner, "status"), ==, "error");
  g_assert_nonnull (strstr (json_object_get_string_member (inner, "message"), "cannot start at depth 2"));
  /* Its parent is the outer run, not a new top level. */
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (inner, "lineage"), "parent_run_id"),
                   ==, json_object_get_string_member (result, "run_id"));
}

/* ---- leftovers of a SIGKILLed host --------------------------------------- */

static gboolean
process_gone (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *stat = NULL;
  const char *p;

  if (kill (pid, 0) != 0 && errno == ESRCH)
    return TRUE;
  /* A zombie nobody reaped yet is gone too. */
  if (!g_file_get_contents (path, &stat, NULL, NULL) || (p = strrchr (stat, ')')) == NULL)
    return TRUE;
  return p[2] == 'Z' || p[2] == 'X';
}

static void
wait_for_file (const char *path)
{
  for (guint i = 0; i < 300 && !g_file_test (path, G_FILE_TEST_EXISTS); i++)
    g_usleep (50 * 1000);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
}

static pid_t
read_pid (const char *path)
{
  g_autofree char *text = NULL;

  for (guint i = 0; i < 100; i++)
    {
      g_clear_pointer (&text, g_free);
      if (g_file_get_contents (path, &text, NULL, NULL) && strchr (text, '\n') != NULL)
        break;
      g_usleep (20 * 1000);
    }
  g_assert_nonnull (text);
  return (pid_t) g_ascii_strtoll (text, NULL, 10);
}

/* Waits until every owner record lists its child process: the host
 * records it right after the spawn, while the child may already run. */
static GPtrArray *
wait_for_recorded_processes (Fixture *f,
                             guint    n_records)
{
  for (guint t = 0; ; t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) records = subagent_owner_record_list (f->root, &error);
      guint with = 0;

      g_assert_no_error (error);
      for (guint i = 0; i < records->len; i++)
        if (json_object_has_member (records->pdata[i], "processes"))
          with++;
      if (with == n_records && records->len == n_records)
        return g_steal_pointer (&records);
      g_assert_cmpuint (t, <, 500);
      g_usleep (20 * 1000);
    }
}

/* A child that leaves `sleep` running in the background and waits; its
 * host is SIGKILLed; prune must stop the sleeps before it removes the
 * snapshots. */
static void
run_killed_and_prune (Fixture *f,
                      guint    n_items)
{
  g_autofree char *def = g_strdup_printf (
    "name: lingerer\nconfinement: none\n"
    "command: [/bin/sh, -c, 'sleep 300 & echo $! > %s/pid-${SUBAGENT_BATCH_INDEX:-0}.tmp; "
    "mv %s/pid-${SUBAGENT_BATCH_INDEX:-0}.tmp %s/pid-${SUBAGENT_BATCH_INDEX:-0}; wait']\n",
    f->base, f->base, f->base);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GSubprocess) host = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(GArray) pids = g_array_new (FALSE, FALSE, sizeof (pid_t));
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  sat_write_file (f->root, ".subagent/agents/lingerer.yaml", def);
  g_subprocess_launcher_set_cwd (launcher, f->root);
  if (n_items == 1)
    host = g_subprocess_launcher_spawn (launcher, &error, sat_subagentctl (), "run", "-i", "directory-snapshot",
                                        "-d", "lingerer", "t", NULL);
  else
    {
      g_autofree char *batch = g_build_filename (f->base, "batch.json", NULL);
      GString *items = g_string_new ("[");

      for (guint i = 0; i < n_items; i++)
        g_string_append_printf (items, "%s{\"task\": \"t\", \"def_name\": \"lingerer\", \"isolation\": \"directory-snapshot\"}",
                                i ? "," : "");
      g_string_append (items, "]");
      g_assert_true (g_file_set_contents (batch, items->str, -1, NULL));
      g_string_free (items, TRUE);
      host = g_subprocess_launcher_spawn (launcher, &error, sat_subagentctl (), "batch", "--max-parallel", "4",
                                          batch, NULL);
    }
  g_assert_no_error (error);

  for (guint i = 0; i < n_items; i++)
    {
      g_autofree char *name = g_strdup_printf ("pid-%u", n_items == 1 ? 0 : i);
      g_autofree char *path = g_build_filename (f->base, name, NULL);
      pid_t pid;

      wait_for_file (path);
      pid = read_pid (path);
      g_assert_cmpint (pid, >, 1);
      g_array_append_val (pids, pid);
    }
  records = wait_for_recorded_processes (f, n_items);

  g_subprocess_force_exit (host);
  g_subprocess_wait (host, NULL, NULL);
  /* The host is gone; its background sleeps are not. */
  for (guint i = 0; i < pids->len; i++)
    g_assert_false (process_gone (g_array_index (pids, pid_t, i)));

  g_assert_cmpint (ctl_no_crash (f->root, &out, &err, "prune", NULL), ==, 0);
  for (guint i = 0; i < pids->len; i++)
    {
      pid_t pid = g_array_index (pids, pid_t, i);

      for (guint t = 0; t < 500 && !process_gone (pid); t++)
        g_usleep (20 * 1000);
      g_assert_true (process_gone (pid));
    }
  g_clear_pointer (&records, g_ptr_array_unref);
  records = subagent_owner_record_list (f->root, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (records->len, ==, 0);
}

static void
test_prune_stops_leftovers_of_killed_run (Fixture       *f,
                                          gconstpointer  data)
{
  run_killed_and_prune (f, 1);
}

static void
test_prune_stops_leftovers_of_killed_batch (Fixture       *f,
                                            gconstpointer  data)
{
  run_killed_and_prune (f, 3);
}


/* ---- the env -i + double fork + setsid escape: the cgroup ------------------ */

/* Whether @pid runs (not a zombie). */
static gboolean
process_runs (pid_t pid)
{
  return !process_gone (pid);
}

/* A child leaves two sleeps: A in its process group, B escaped (cleared
 * environment, double fork, setsid: neither the group nor the run token
 * reaches it). Its host is SIGKILLed, then `prune` runs. With a cgroup per
 * child both die by cgroup.kill; without one (no delegation, or
 * SUBAGENT_CHILD_CGROUP=0) A dies by its group and B is out of reach. */
static void
run_escape_and_prune (Fixture  *f,
                      gboolean  allow_cgroup)
{
  g_autofree char *script = g_strdup_printf (
    "#!/bin/sh\n"
    "sleep 300 & echo $! > %1$s/pid-a.tmp; mv %1$s/pid-a.tmp %1$s/pid-a\n"
    "env -i /bin/sh -c 'setsid /bin/sh -c \"sleep 300 & echo \\$! > %1$s/pid-b.tmp; mv %1$s/pid-b.tmp %1$s/pid-b\" &'\n"
    "wait\n", f->base);
  g_autofree char *script_path = g_build_filename (f->base, "escape.sh", NULL);
  g_autofree char *def = g_strdup_printf ("name: escaper\nconfinement: none\ncommand: [/bin/sh, %s]\n", script_path);
  g_autofree char *pid_a_path = g_build_filename (f->base, "pid-a", NULL);
  g_autofree char *pid_b_path = g_build_filename (f->base, "pid-b", NULL);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GSubprocess) host = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) records = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *cgroup = NULL;
  JsonArray *processes;
  pid_t a, b;

  g_assert_true (g_file_set_contents (script_path, script, -1, NULL));
  sat_write_file (f->root, ".subagent/agents/escaper.yaml", def);
  g_subprocess_launcher_set_cwd (launcher, f->root);
  if (!allow_cgroup)
    g_subprocess_launcher_setenv (launcher, "SUBAGENT_CHILD_CGROUP", "0", TRUE);
  host = g_subprocess_launcher_spawn (launcher, &error, sat_subagentctl (), "run", "-i", "directory-snapshot",
                                      "-d", "escaper", "t", NULL);
  g_assert_no_error (error);
  wait_for_file (pid_a_path);
  wait_for_file (pid_b_path);
  a = read_pid (pid_a_path);
  b = read_pid (pid_b_path);
  g_assert_cmpint (a, >, 1);
  g_assert_cmpint (b, >, 1);

  records = wait_for_recorded_processes (f, 1);
  processes = json_object_get_array_member (records->pdata[0], "processes");
  g_assert_nonnull (processes);
  cgroup = g_strdup (json_object_get_string_member_with_default (json_array_get_object_element (processes, 0),
                                                                 "cgroup", NULL));
  if (allow_cgroup && cgroup == NULL)
    {
      /* Loud, not skipped: the fallback is still checked below. */
      g_printerr ("\n*** This machine cannot delegate a cgroup v2 to the host (see the debug messages of "
                  "G_MESSAGES_DEBUG=all); checking the process-group fallback only ***\n");
      g_test_message ("NO CGROUP DELEGATION: checking the fallback only");
    }
  if (!allow_cgroup)
    g_assert_null (cgroup);

  g_subprocess_force_exit (host);
  g_subprocess_wait (host, NULL, NULL);
  g_assert_true (process_runs (a));
  g_assert_true (process_runs (b));

  g_assert_cmpint (ctl_no_crash (f->root, &out, &err, "prune", NULL), ==, 0);
  for (guint t = 0; t < 500 && (process_runs (a) || (cgroup != NULL && process_runs (b))); t++)
    g_usleep (20 * 1000);
  /* Mechanism: the group kill reaches A either way. */
  g_assert_false (process_runs (a));
  if (cgroup != NULL)
    {
      /* Only cgroup.kill reaches B: no group, no token in its environment. */
      g_assert_false (process_runs (b));
      g_assert_false (g_file_test (cgroup, G_FILE_TEST_EXISTS));
    }
  else
    {
      g_test_message ("fallback: the escaped process %d survives prune, as documented", (int) b);
      g_assert_true (process_runs (b));
      kill (b, SIGKILL);
    }
}

static void
test_prune_kills_escape_via_cgroup (Fixture       *f,
                                    gconstpointer  data)
{
  run_escape_and_prune (f, TRUE);
}

static void
test_prune_escape_without_cgroup (Fixture       *f,
                                  gconstpointer  data)
{
  run_escape_and_prune (f, FALSE);
}

/* ---- an endless stdout line ---------------------------------------------- */

static void
test_stdout_line_cap (Fixture       *f,
                      gconstpointer  data)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonObject) result = NULL;

  /* 8 MiB without a newline, then a final message on a line of its own. */
  sat_write_file (f->root, ".subagent/agents/flood.yaml",
                  "name: flood\n"
                  "command: [/bin/sh, -c, 'head -c 8388608 /dev/zero | tr \"\\\\0\" x; echo; "
                  "echo \"{\\\"type\\\":\\\"final\\\",\\\"answer\\\":\\\"done\\\"}\"']\n");
  g_assert_cmpint (ctl_no_crash (f->root, &out, &err, "run", "--json", "-i", "shared", "-d", "flood", "t", NULL), ==, 0);
  result = parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (result, "final_answer"), ==, "done");
  g_assert_nonnull (strstr (json_object_get_string_member (result, "message"), "cut short"));
}

/* ---- a huge cost ------------------------------------------------------- */

static void
test_huge_cost_valid_json (Fixture       *f,
                           gconstpointer  data)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *sessions = NULL;
  g_autofree char *audit = NULL;
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_auto(GStrv) lines = NULL;

  sat_write_file (f->root, ".subagent/agents/spender.yaml",
                  "name: spender\n"
                  "command: [/bin/echo, '{\"type\":\"final\",\"answer\":\"spent\",\"cost_cents\":1e20}']\n");
  ctl_no_crash (f->root, &out, &err, "run", "--json", "-i", "shared", "-d", "spender", "t", NULL);
  g_assert_null (strstr (out, "e+"));
  result = parse_object (out);
  g_assert_cmpfloat (json_object_get_double_member (result, "cost_cents"), <, 1e17);
  g_assert_cmpfloat (json_object_get_double_member (result, "cost_cents"), >=, 1e15);
  /* The session record and the audit record are valid JSON too. */
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (ctl_no_crash (f->root, &sessions, &err, "sessions", "--json", NULL), ==, 0);
  g_assert_nonnull (strstr (sessions, json_object_get_string_member (result, "run_id")));
  audit = sat_read_file (f->root, ".subagent/audit.jsonl");
  lines = g_strsplit (g_strstrip (audit), "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;

      json_parser_load_from_data (parser, lines[i], -1, &error);
      g_assert_no_error (error);
    }
}

/* ---- write_scope in the review ------------------------------------------ */

static void
test_write_scope_marked_in_review (Fixture       *f,
                                   gconstpointer  data)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *status = NULL;
  g_autoptr(JsonObject) result = NULL;
  JsonObject *review;
  JsonArray *outside;

  /* Unconfined, so the write outside the scope happens and only the review
   * can show it (as for a container child). */
  sat_write_file (f->root, ".subagent/agents/scoped.yaml",
                  "name: scoped\nconfinement: none\nwrite_scope: [allowed/, '*.md']\n"
                  "command: [/bin/sh, -c, 'mkdir -p allowed && echo a > allowed/a.txt && echo n > notes.md "
                  "&& echo o > other.txt']\n");
  g_assert_cmpint (ctl_no_crash (f->root, &out, &err, "run", "--json", "-i", "directory-snapshot", "-d", "scoped",
                                 "t", NULL), ==, 0);
  result = parse_object (out);
  review = json_object_get_object_member (result, "review");
  g_assert_nonnull (review);
  outside = json_object_get_array_member (review, "outside_write_scope");
  g_assert_cmpuint (json_array_get_length (outside), ==, 1);
  g_assert_cmpstr (json_array_get_string_element (outside, 0), ==, "other.txt");
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "status_path"), &status, NULL, NULL));
  g_assert_nonnull (strstr (status, "outside-write-scope\tother.txt\n"));
  g_assert_null (strstr (status, "outside-write-scope\tallowed/a.txt"));
}

/* ---- a final answer, then no exit ---------------------------------------- */

static void
test_final_then_grace_period (Fixture       *f,
                              gconstpointer  data)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonObject) result = NULL;
  gint64 start = g_get_monotonic_time ();

  sat_write_file (f->root, ".subagent/agents/lingering.yaml",
                  "name: lingering\n"
                  "command: [/bin/sh, -c, 'echo \"{\\\"type\\\":\\\"final\\\",\\\"answer\\\":\\\"ok\\\"}\"; exec sleep 600']\n");
  g_assert_cmpint (ctl_no_crash (f->root, &out, &err, "run", "--json", "-i", "shared", "-d", "lingering", "t", NULL),
                   ==, 0);
  result = parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "complete");
  g_assert_cmpstr (json_object_get_string_member (result, "final_answer"), ==, "ok");
  g_assert_nonnull (strstr (json_object_get_string_member (result, "message"), "after its final answer"));
  g_assert_cmpint (g_get_monotonic_time () - start, <, 60 * G_TIME_SPAN_SECOND);
}

/* ---- state paths through symbolic links --------------------------------- */

static gboolean
dir_is_empty (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);

  return dir == NULL || g_dir_read_name (dir) == NULL;
}

static void
test_state_paths_not_followed (Fixture       *f,
                               gconstpointer  data)
{
  g_autofree char *outside_sessions = g_build_filename (f->base, "sessions", NULL);
  g_autofree char *outside_reviews = g_build_filename (f->base, "reviews", NULL);
  g_autofree char *outside_audit = g_build_filename (f->base, "audit.jsonl", NULL);
  g_autofree char *sessions = g_build_filename (f->root, ".subagent", "sessions", NULL);
  g_autofree char *reviews = g_build_filename (f->root, ".subagent", "reviews", NULL);
  g_autofree char *audit = g_build_filename (f->root, ".subagent", "audit.jsonl", NULL);
  g_autofree char *audit_after = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  sat_write_file (f->root, ".subagent/agents/writer.yaml",
                  "name: writer\ncommand: [/bin/sh, -c, 'echo x > new.txt; echo done']\n");
  g_mkdir_with_parents (outside_sessions, 0700);
  g_mkdir_with_parents (outside_reviews, 0755);
  g_assert_true (g_file_set_contents (outside_audit, "untouched\n", -1, NULL));
  g_assert_cmpint (symlink (outside_sessions, sessions), ==, 0);
  g_assert_cmpint (symlink (outside_reviews, reviews), ==, 0);
  g_assert_cmpint (symlink (outside_audit, audit), ==, 0);
  ctl_no_crash (f->root, &out, &err, "run", "--json", "-i", "directory-snapshot", "-d", "writer", "t", NULL);
  g_assert_true (dir_is_empty (outside_sessions));
  g_assert_true (dir_is_empty (outside_reviews));
  g_assert_true (g_file_get_contents (outside_audit, &audit_after, NULL, NULL));
  g_assert_cmpstr (audit_after, ==, "untouched\n");
}

static void
test_state_dir_symlink_not_followed (Fixture       *f,
                                     gconstpointer  data)
{
  g_autofree char *outside = g_build_filename (f->base, "state", NULL);
  g_autofree char *link = g_build_filename (f->root, ".subagent", NULL);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GDir) dir = NULL;
  const char *name;

  g_mkdir_with_parents (outside, 0755);
  g_assert_cmpint (symlink (outside, link), ==, 0);
  ctl_no_crash (f->root, &out, &err, "run", "--json", "-i", "directory-snapshot", "-c", "/bin/true", "t", NULL);
  /* Reading through it is harmless; writing state there is not. */
  dir = g_dir_open (outside, 0, NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_error ("state written through the .subagent symlink: %s", name);
}


/* ---- secrets left out of copied workspaces -------------------------------- */

/* The parent's secrets, at the top and deeper, beside ordinary files. */
static void
plant_secrets (const char *root)
{
  sat_write_file (root, ".env", "TOKEN=parent\n");
  sat_write_file (root, "app/.env.production", "TOKEN=prod\n");
  sat_write_file (root, "certs/server.pem", "-----BEGIN-----\n");
  sat_write_file (root, "certs/server.key", "key\n");
  sat_write_file (root, "home/.ssh/config", "Host x\n");
  sat_write_file (root, "id_rsa", "rsa\n");
  sat_write_file (root, "deploy/credentials.json", "{}\n");
  sat_write_file (root, ".netrc", "machine x\n");
  sat_write_file (root, "custom.secret", "custom\n");
  sat_write_file (root, "app/main.c", "int main;\n");
}

/* A child that fails unless it sees exactly what it should, then writes
 * its own .env (which must not come back) and one ordinary file. */
#define SECRET_PROBE \
  "for f in .env app/.env.production certs/server.pem certs/server.key home/.ssh id_rsa " \
  "deploy/credentials.json .netrc; do if test -e $f; then echo LEAK $f; exit 3; fi; done; " \
  "test -f app/main.c || exit 4; echo child > .env; echo done > result.txt"

/* Runs the probe child in @isolation with @options; checks the run
 * succeeded and the review shows the child's file, no deletion, no .env. */
static void
run_secret_probe (Fixture    *f,
                  const char *isolation,
                  const char *option1,
                  const char *option2,
                  const char *option3)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *status = NULL;
  g_autofree char *patch = NULL;
  g_autofree char *parent_env = NULL;
  g_autoptr(JsonObject) result = NULL;
  JsonObject *review;
  int rc;

  rc = ctl_no_crash (f->root, &out, &err, "run", "--json", "-i", isolation, "--option", option1,
                     "--option", option2, "--option", option3, "-d", "probe", "t", NULL);
  if (rc != 0)
    g_printerr ("run: %s\n%s\n", out, err);
  g_assert_cmpint (rc, ==, 0);
  result = parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "complete");
  review = json_object_get_object_member (result, "review");
  g_assert_nonnull (review);
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "status_path"), &status, NULL, NULL));
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "patch_path"), &patch, NULL, NULL));
  /* Excluded files exist in the parent, not in the workspace: never a deletion. */
  g_assert_null (strstr (status, "deleted\t"));
  g_assert_nonnull (strstr (status, "result.txt"));
  /* The child's own .env is not offered back over the parent's. */
  g_assert_null (strstr (status, ".env"));
  g_assert_null (strstr (patch, ".env"));
  {
    g_autofree char *env_path = g_build_filename (f->root, ".env", NULL);
    g_assert_true (g_file_get_contents (env_path, &parent_env, NULL, NULL));
    g_assert_cmpstr (parent_env, ==, "TOKEN=parent\n");
  }
}

static void
write_probe_definition (Fixture *f)
{
  sat_write_file (f->root, ".subagent/agents/probe.yaml",
                  "name: probe\nconfinement: none\ncommand: [/bin/sh, -c, '" SECRET_PROBE "']\n");
  plant_secrets (f->root);
}

static void
test_secrets_not_copied_into_snapshot (Fixture       *f,
                                       gconstpointer  data)
{
  g_autofree char *snapshots = g_build_filename (f->base, "snapshots", NULL);
  g_autofree char *dir_option = g_strconcat ("snapshot_dir=", snapshots, NULL);

  write_probe_definition (f);
  run_secret_probe (f, "directory-snapshot", "strategy=copy", dir_option, "pool_size=0");
}

static void
test_secrets_not_copied_into_pooled_snapshot (Fixture       *f,
                                              gconstpointer  data)
{
  g_autofree char *snapshots = g_build_filename (f->base, "snapshots", NULL);
  g_autofree char *dir_option = g_strconcat ("snapshot_dir=", snapshots, NULL);

  write_probe_definition (f);
  /* The first run parks its tree (with the child's .env in it); the
   * second takes it from the pool and syncs it: the .env must go. */
  for (int i = 0; i < 3; i++)
    run_secret_probe (f, "directory-snapshot", "strategy=copy", dir_option, "pool_size=2");
}

static void
test_secrets_not_copied_into_overlay_snapshot (Fixture       *f,
                                               gconstpointer  data)
{
  g_autofree char *snapshots = g_build_filename (f->base, "snapshots", NULL);
  g_autofree char *dir_option = g_strconcat ("snapshot_dir=", snapshots, NULL);

  if (geteuid () != 0)
    {
      /* Overlays need root; the copy strategies are covered above. */
      g_test_message ("not root: the overlay strategy cannot mount here; checking the copy instead");
      write_probe_definition (f);
      run_secret_probe (f, "directory-snapshot", "strategy=copy", dir_option, "pool_size=0");
      return;
    }
  write_probe_definition (f);
  run_secret_probe (f, "directory-snapshot", "strategy=overlay", dir_option, "pool_size=0");
}

static void
test_secrets_config_exclude_overrides (Fixture       *f,
                                       gconstpointer  data)
{
  g_autofree char *snapshots = g_build_filename (f->base, "snapshots", NULL);
  g_autofree char *dir_option = g_strconcat ("snapshot_dir=", snapshots, NULL);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonObject) result = NULL;

  plant_secrets (f->root);
  /* The list replaces the defaults: custom.secret goes, .env stays. */
  sat_write_file (f->root, ".subagent/config.yaml", "exclude: ['*.secret']\n");
  sat_write_file (f->root, ".subagent/agents/probe.yaml",
                  "name: probe\nconfinement: none\ncommand: [/bin/sh, -c, "
                  "'test ! -e custom.secret && test -f .env && test -f certs/server.pem']\n");
  g_assert_cmpint (ctl_no_crash (f->root, &out, &err, "run", "--json", "-i", "directory-snapshot",
                                 "--option", "strategy=copy", "--option", dir_option, "-d", "probe", "t", NULL),
                   ==, 0);
  result = parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "complete");
}

/* ---- the secret exclude list (for copied workspaces) --------------------- */

static void
test_secret_exclude_patterns (void)
{
  const char * const custom[] = { "*.secret", "vault/", NULL };
  g_autoptr(SubagentConfig) config = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (subagent_secret_path_is_excluded (NULL, ".env"));
  g_assert_true (subagent_secret_path_is_excluded (NULL, "app/.env.production"));
  g_assert_true (subagent_secret_path_is_excluded (NULL, "certs/server.pem"));
  g_assert_true (subagent_secret_path_is_excluded (NULL, "keys/api.key"));
  g_assert_true (subagent_secret_path_is_excluded (NULL, "home/.ssh/config"));
  g_assert_true (subagent_secret_path_is_excluded (NULL, "id_rsa.pub"));
  g_assert_true (subagent_secret_path_is_excluded (NULL, "deploy/credentials.json"));
  g_assert_true (subagent_secret_path_is_excluded (NULL, ".netrc"));
  g_assert_false (subagent_secret_path_is_excluded (NULL, "src/env.c"));
  g_assert_false (subagent_secret_path_is_excluded (NULL, "docs/keys.md"));
  g_assert_false (subagent_secret_path_is_excluded (NULL, ".ssh"));  /* a file named so: only dirs match */
  g_assert_true (subagent_secret_path_is_excluded (custom, "a/b.secret"));
  g_assert_true (subagent_secret_path_is_excluded (custom, "vault/x"));
  g_assert_false (subagent_secret_path_is_excluded (custom, ".env"));

  json_parser_load_from_data (parser, "{\"exclude\": [\"*.secret\"]}", -1, &error);
  g_assert_no_error (error);
  config = subagent_config_new_from_json (json_node_get_object (json_parser_get_root (parser)), "test", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_config_get_exclude (config)[0], ==, "*.secret");
  g_assert_null (subagent_config_get_exclude (config)[1]);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_setup, func, fixture_teardown)
  g_test_add_func ("/hardening/deep-json/check-depth", test_deep_json_check_depth);
  g_test_add_func ("/hardening/secrets/exclude-patterns", test_secret_exclude_patterns);
  ADD ("/hardening/deep-json/child-protocol", test_deep_json_child_protocol);
  ADD ("/hardening/deep-json/definition", test_deep_json_definition);
  ADD ("/hardening/deep-json/approvals-file", test_deep_json_approvals_file);
  ADD ("/hardening/deep-json/batch-input", test_deep_json_batch_input);
  ADD ("/hardening/deep-json/session-log", test_deep_json_session_log);
  ADD ("/hardening/deep-json/config", test_deep_json_config);
  ADD ("/hardening/hmac-key/scrubbed-from-host-environ", test_hmac_key_scrubbed_from_environ);
  ADD ("/hardening/depth/cli-nesting-refused", test_depth_cli_nesting_refused);
  ADD ("/hardening/killed-host/prune-stops-leftovers", test_prune_stops_leftovers_of_killed_run);
  ADD ("/hardening/killed-host/prune-stops-leftovers-of-batch", test_prune_stops_leftovers_of_killed_batch);
  ADD ("/hardening/killed-host/escaped-child-killed-via-cgroup", test_prune_kills_escape_via_cgroup);
  ADD ("/hardening/killed-host/escaped-child-fallback-without-cgroup", test_prune_escape_without_cgroup);
  ADD ("/hardening/stdout/line-capped", test_stdout_line_cap);
  ADD ("/hardening/cost/huge-cost-valid-json", test_huge_cost_valid_json);
  ADD ("/hardening/review/write-scope-marked", test_write_scope_marked_in_review);
  ADD ("/hardening/final/grace-period-then-stopped", test_final_then_grace_period);
  ADD ("/hardening/state-paths/not-followed", test_state_paths_not_followed);
  ADD ("/hardening/state-paths/state-dir-symlink-not-followed", test_state_dir_symlink_not_followed);
  ADD ("/hardening/secrets-not-copied-into-snapshot", test_secrets_not_copied_into_snapshot);
  ADD ("/hardening/secrets-not-copied-into-snapshot/pooled", test_secrets_not_copied_into_pooled_snapshot);
  ADD ("/hardening/secrets-not-copied-into-snapshot/overlay", test_secrets_not_copied_into_overlay_snapshot);
  ADD ("/hardening/secrets-not-copied-into-snapshot/config-exclude-overrides", test_secrets_config_exclude_overrides);
  return g_test_run ();
}
