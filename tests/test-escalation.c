/* test-escalation.c: what a hostile host child tries, under Landlock.
 *
 * For shared, worktree and directory-snapshot children started by
 * `subagentctl run` (the host), a probe script tries to write outside its
 * child root and outside its write_scope, read the host's environment and
 * memory and the approval key file, signal the host, connect over TCP with
 * `network: none` and keep a capability that reaches past Landlock, and,
 * in a worktree, plant a git hook or rewrite the user's branch, while
 * `git add` and `git commit` still work.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "test-support.h"

/* Prints "name:ok" or "name:denied:<the shell's error>" per attempt. */
static const char probe_script[] =
  "#!/bin/bash\n"
  "host=$PPID\n"
  "while [ \"$(cat /proc/$host/comm)\" != subagentctl ] && [ \"$host\" -gt 1 ]; do\n"
  "  host=$(awk '{print $4}' /proc/$host/stat)\n"
  "done\n"
  "t() { if err=$( (eval \"$2\") 2>&1 >/dev/null); then echo \"$1:ok\"; else echo \"$1:denied:${err##*: }\"; fi; }\n"
  "t write_root 'echo x > in-root.txt'\n"
  "t write_outside 'echo x > \"$OUTSIDE/escaped.txt\"'\n"
  "t tmpdir 'echo x > \"$TMPDIR/t\" && [ \"$TMPDIR\" != /tmp ]'\n"
  "t dev_null 'echo x > /dev/null'\n"
  "t environ_key \"grep -a -q -e SUBAGENT_APPROVAL_HMAC_KEY=$ENV_KEY /proc/$host/environ\"\n"
  "t environ \"exec 3</proc/$host/environ\"\n"
  "t mem \"exec 3</proc/$host/mem\"\n"
  "t key 'cat \"$KEY_FILE\"'\n"
  "t signal \"kill -0 $host\"\n"
  "t tcp 'exec 3<>/dev/tcp/127.0.0.1/$TCP_PORT'\n"
  "echo \"caps:$(awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):/ { printf \"%s%s\", sep, $2; sep = \",\" }' /proc/self/status)\"\n"
  "if [ -f .git ]; then\n"
  "  common=$(git rev-parse --git-common-dir)\n"
  "  t git_commit 'git add in-root.txt && git commit -qm child'\n"
  "  t hook 'echo x > \"$common/hooks/post-checkout\"'\n"
  "  t git_config 'echo x >> \"$common/config\"'\n"
  "  t user_branch 'echo x > \"$common/refs/heads/main\"'\n"
  "fi\n"
  "if [ -n \"$SCOPED\" ]; then\n"
  "  t scope_inside 'echo x > allowed/inside.txt'\n"
  "  t scope_outside 'echo x > outside-scope.txt'\n"
  "fi\n";

typedef struct {
  char *base;       /* temp dir holding everything */
  char *root;       /* the workspace (a git repository) */
  char *outside;    /* a directory outside every child root */
  char *key_file;
  char *script;
  GSocketListener *listener;
  guint16 port;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *config = NULL;
  g_autofree char *repo = NULL;

  f->base = sat_make_temp_dir ("escalation");
  repo = sat_make_git_repo ("README", "hello\n", NULL);
  f->root = realpath (repo, NULL);
  g_free (sat_run (f->root, FALSE, NULL, "git", "branch", "-M", "main", NULL));
  f->outside = g_build_filename (f->base, "outside", NULL);
  g_mkdir_with_parents (f->outside, 0755);
  f->key_file = g_build_filename (f->base, "approval.key", NULL);
  g_assert_true (g_file_set_contents (f->key_file, "0123456789abcdef0123456789abcdef", -1, NULL));
  f->script = g_build_filename (f->base, "probe.sh", NULL);
  g_assert_true (g_file_set_contents (f->script, probe_script, -1, NULL));
  g_chmod (f->script, 0755);

  config = g_strdup_printf ("confinement: required\napproval-file:\n  key_file: %s\n", f->key_file);
  sat_write_file (f->root, ".subagent/config.yaml", config);

  f->listener = g_socket_listener_new ();
  f->port = g_socket_listener_add_any_inet_port (f->listener, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (f->port, >, 0);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_socket_listener_close (f->listener);
  g_clear_object (&f->listener);
  sat_rm_rf (f->root);
  sat_rm_rf (f->base);
  free (f->root);
  g_free (f->base);
  g_free (f->outside);
  g_free (f->key_file);
  g_free (f->script);
}

/* Runs the probe as definition @name in @isolation; returns attempt → result. */
static GHashTable *
run_probe (Fixture    *f,
           const char *isolation,
           const char *def_yaml_extra,
           gboolean    scoped)
{
  g_autofree char *def = g_strdup_printf ("name: probe\ncommand: [%s]\nnetwork: none\n%s", f->script,
                                          def_yaml_extra ? def_yaml_extra : "");
  g_autofree char *port = g_strdup_printf ("%u", f->port);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  GHashTable *results = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  JsonObject *result;
  int status;

  sat_write_file (f->root, ".subagent/agents/probe.yaml", def);
  g_setenv ("OUTSIDE", f->outside, TRUE);
  g_setenv ("KEY_FILE", f->key_file, TRUE);
  g_setenv ("TCP_PORT", port, TRUE);
  g_setenv ("ENV_KEY", "escalation-env-key-value", TRUE);
  g_setenv ("SUBAGENT_APPROVAL_HMAC_KEY", "escalation-env-key-value", TRUE);
  if (scoped)
    g_setenv ("SCOPED", "1", TRUE);
  else
    g_unsetenv ("SCOPED");
  status = sat_run_ctl (f->root, &out, &err, "run", "--json", "-i", isolation, "-d", "probe", "probe", NULL);
  g_test_message ("subagentctl: %s\n%s", out, err);
  g_assert_cmpint (status, ==, 0);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  result = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "complete");
  g_assert_cmpstr (json_object_get_string_member (result, "confinement"), ==, "landlock");

  lines = g_strsplit (json_object_get_string_member (result, "final_answer"), "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *colon = strchr (lines[i], ':');

      if (colon != NULL)
        g_hash_table_insert (results, g_strndup (lines[i], colon - lines[i]), g_strdup (colon + 1));
    }
  return results;
}

static void
assert_result (GHashTable *results,
               const char *attempt,
               const char *expected)
{
  const char *got = g_hash_table_lookup (results, attempt);

  g_test_message ("%s: %s", attempt, got);
  g_assert_nonnull (got);
  if (g_str_equal (expected, "ok"))
    g_assert_cmpstr (got, ==, "ok");
  else
    g_assert_true (g_str_has_prefix (got, expected));
}

/* @caps: CapInh, CapPrm, CapEff, CapBnd and CapAmb of a process the child
 * started, in hex. A root child's exec gives it back its whole bounding
 * set: CAP_SYS_PTRACE (19), CAP_SYS_ADMIN (21) and CAP_PERFMON (38) must
 * be out of that too, and nothing may be ambient. */
static void
assert_no_host_reaching_caps (const char *caps)
{
  const guint64 reaching = (G_GUINT64_CONSTANT (1) << 19) | (G_GUINT64_CONSTANT (1) << 21) |
                           (G_GUINT64_CONSTANT (1) << 38);
  g_auto(GStrv) sets = NULL;

  g_assert_nonnull (caps);
  sets = g_strsplit (caps, ",", -1);
  g_assert_cmpuint (g_strv_length (sets), ==, 5);
  for (guint i = 0; i < 5; i++)
    g_assert_cmphex (g_ascii_strtoull (sets[i], NULL, 16) & reaching, ==, 0);
  g_assert_cmphex (g_ascii_strtoull (sets[4], NULL, 16), ==, 0);
  /* As root, the rest of the bounding set is still there (the check
   * above is not passing on an empty one). */
  if (getuid () == 0)
    g_assert_cmphex (g_ascii_strtoull (sets[3], NULL, 16), !=, 0);
}

static void
assert_host_out_of_reach (Fixture    *f,
                          GHashTable *results)
{
  g_autofree char *escaped = g_build_filename (f->outside, "escaped.txt", NULL);

  assert_result (results, "write_root", "ok");
  assert_result (results, "write_outside", "denied:Permission denied");
  g_assert_false (g_file_test (escaped, G_FILE_TEST_EXISTS));
  assert_result (results, "tmpdir", "ok");
  assert_result (results, "dev_null", "ok");
  /* Landlock's ptrace scoping refuses the host's environ (a root child
   * first loses CAP_SYS_ADMIN and CAP_PERFMON, which would get past it);
   * the host also erases the key from that block before it starts a child. */
  assert_result (results, "environ", "denied:Permission denied");
  assert_result (results, "environ_key", "denied:");
  assert_result (results, "mem", "denied:Permission denied");
  assert_result (results, "key", "denied:Permission denied");
  assert_result (results, "signal", "denied:");
  assert_result (results, "tcp", "denied:Permission denied");
  assert_no_host_reaching_caps (g_hash_table_lookup (results, "caps"));
}

static void
test_shared (Fixture       *f,
             gconstpointer  data)
{
  g_autoptr(GHashTable) results = run_probe (f, "shared", NULL, FALSE);

  assert_host_out_of_reach (f, results);
}

static void
test_snapshot (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GHashTable) results = run_probe (f, "directory-snapshot", NULL, FALSE);
  g_autofree char *in_parent = g_build_filename (f->root, "in-root.txt", NULL);

  assert_host_out_of_reach (f, results);
  /* The parent's tree is outside a snapshot child's root. */
  g_assert_false (g_file_test (in_parent, G_FILE_TEST_EXISTS));
}

static void
test_worktree (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GHashTable) results = run_probe (f, "worktree", NULL, FALSE);
  g_autofree char *hook = g_build_filename (f->root, ".git", "hooks", "post-checkout", NULL);
  g_autofree char *main_ref = NULL;

  assert_host_out_of_reach (f, results);
  assert_result (results, "git_commit", "ok");
  assert_result (results, "hook", "denied:Permission denied");
  assert_result (results, "git_config", "denied:Permission denied");
  assert_result (results, "user_branch", "denied:Permission denied");
  g_assert_false (g_file_test (hook, G_FILE_TEST_EXISTS));
  main_ref = sat_run (f->root, FALSE, NULL, "git", "log", "--format=%s", "-1", "main", NULL);
  g_assert_cmpstr (g_strstrip (main_ref), !=, "child");
}

/* write_scope is enforced by the kernel, for each host isolation. */
static void
test_write_scope (Fixture       *f,
                  gconstpointer  data)
{
  const char *isolation = data;
  g_autoptr(GHashTable) results = run_probe (f, isolation, "write_scope: [allowed]\n", TRUE);

  assert_result (results, "scope_inside", "ok");
  assert_result (results, "scope_outside", "denied:Permission denied");
  assert_result (results, "write_root", "denied:Permission denied");
  assert_result (results, "tmpdir", "ok");
}

/* confinement: none in the definition (config not `required`) runs unconfined and says so. */
static void
test_confinement_none_reported (Fixture       *f,
                                gconstpointer  data)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *audit = NULL;

  sat_write_file (f->root, ".subagent/config.yaml", "confinement: landlock\n");
  sat_write_file (f->root, ".subagent/agents/loose.yaml", "name: loose\nconfinement: none\ncommand: [/bin/true]\n");
  g_assert_cmpint (sat_run_ctl (f->root, &out, &err, "run", "--json", "-i", "shared", "-d", "loose", "t", NULL), ==, 0);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json_parser_get_root (parser)), "confinement"),
                   ==, "none");
  audit = sat_read_file (f->root, ".subagent/audit.jsonl");
  g_assert_nonnull (strstr (audit, "\"confinement\":\"none\""));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/escalation/shared", Fixture, NULL, fixture_setup, test_shared, fixture_teardown);
  g_test_add ("/escalation/worktree", Fixture, NULL, fixture_setup, test_worktree, fixture_teardown);
  g_test_add ("/escalation/directory-snapshot", Fixture, NULL, fixture_setup, test_snapshot, fixture_teardown);
  g_test_add ("/escalation/write-scope/shared", Fixture, "shared", fixture_setup, test_write_scope, fixture_teardown);
  g_test_add ("/escalation/write-scope/worktree", Fixture, "worktree", fixture_setup, test_write_scope,
              fixture_teardown);
  g_test_add ("/escalation/write-scope/directory-snapshot", Fixture, "directory-snapshot", fixture_setup,
              test_write_scope, fixture_teardown);
  g_test_add ("/escalation/confinement-none-reported", Fixture, NULL, fixture_setup, test_confinement_none_reported,
              fixture_teardown);
  return g_test_run ();
}
