/* test-subagentctl-plugins.c: `subagentctl plugins` lists without loading,
 * `subagentctl plugins inspect` loads in a child process. Uses the plugin
 * fixtures of tests/fixtures/plugins/ and the in-tree isolation-docker plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdarg.h>
#include <string.h>

#include "test-support.h"

#define DEAD_DOCKER_HOST "unix:///nonexistent/subagent-test/docker.sock"

/* strstr() assertions that show both strings when they fail. */
#define assert_contains(haystack, needle) check_contains (__FILE__, __LINE__, G_STRFUNC, haystack, needle, TRUE)
#define assert_lacks(haystack, needle) check_contains (__FILE__, __LINE__, G_STRFUNC, haystack, needle, FALSE)

static void
check_contains (const char *file,
                int         line,
                const char *func,
                const char *haystack,
                const char *needle,
                gboolean    expected)
{
  g_autofree char *message = NULL;

  if ((haystack != NULL && strstr (haystack, needle) != NULL) == expected)
    return;
  message = g_strdup_printf ("“%s” %s “%s”", haystack ? haystack : "(null)",
                             expected ? "does not contain" : "contains", needle);
  g_assertion_message (G_LOG_DOMAIN, file, line, func, message);
}

static char *
fixture_dir (const char *name)
{
  return g_test_build_filename (G_TEST_BUILT, "fixtures", "plugins", name, NULL);
}

static char *
run_ctl (const char  *plugin_path,
         gboolean     ld_debug,
         int         *exit_status,
         char       **err_out,
         const char  *first_arg,
         ...)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  char *out = NULL;
  va_list ap;

  g_ptr_array_add (argv, (gpointer) sat_subagentctl ());
  va_start (ap, first_arg);
  for (const char *a = first_arg; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_setenv (launcher, "SUBAGENT_PLUGIN_PATH", plugin_path, TRUE);
  if (ld_debug)
    g_subprocess_launcher_setenv (launcher, "LD_DEBUG", "files", TRUE);
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, err_out, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (proc));
  *exit_status = g_subprocess_get_exit_status (proc);
  return out;
}

static char *
fixture_path (const char *first,
              ...)
{
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);
  va_list ap;

  va_start (ap, first);
  for (const char *f = first; f != NULL; f = va_arg (ap, const char *))
    g_ptr_array_add (dirs, fixture_dir (f));
  va_end (ap);
  g_ptr_array_add (dirs, NULL);
  return g_strjoinv (":", (char **) dirs->pdata);
}

static void
test_ctl_list_without_loading (void)
{
  g_autofree char *path = fixture_path ("test-isolation", "cannot-open", "bad-descriptor", NULL);
  int status = -1;
  g_autofree char *err = NULL;
  g_autofree char *out = run_ctl (path, TRUE, &status, &err, "plugins", NULL);

  g_assert_cmpint (status, ==, 0);
  assert_contains (out, "test-isolation 0.0.1");
  assert_contains (out, "  backends:    test-echo");
  assert_contains (out, "  interface:   SubagentIsolationProvider");
  assert_contains (out, "/libsubagent-test-isolation.so");
  assert_contains (out, "Fixture: a working isolation backend");
  assert_contains (out, "cannot-open");
  assert_contains (err, "skipped:");
  assert_contains (err, "garbage.plugin");
  /* LD_DEBUG=files logs every object the loader maps: the library, never a plugin. */
  assert_contains (err, "libsubagent-1.0.so");
  assert_lacks (err, "libsubagent-test-isolation.so");
  assert_lacks (err, "libsubagent-cannot-open.so");
}

static void
test_ctl_list_json (void)
{
  g_autofree char *path = fixture_path ("test-isolation", "bad-descriptor", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  int status = -1;
  g_autofree char *err = NULL;
  g_autofree char *out = run_ctl (path, FALSE, &status, &err, "plugins", "--json", NULL);
  JsonObject *root, *plugin;
  JsonArray *plugins;

  g_assert_cmpint (status, ==, 0);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  plugins = json_object_get_array_member (root, "plugins");
  g_assert_cmpuint (json_array_get_length (plugins), ==, 1);
  plugin = json_array_get_object_element (plugins, 0);
  g_assert_cmpstr (json_object_get_string_member (plugin, "name"), ==, "test-isolation");
  g_assert_false (json_object_get_boolean_member (plugin, "loaded"));
  g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (plugin, "provides"), 0), ==, "test-echo");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "diagnostics")), ==, 2);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "search_path")), ==, 3);
}

static void
test_ctl_inspect_good (void)
{
  g_autofree char *path = fixture_path ("test-isolation", NULL);
  int status = -1;
  g_autofree char *err = NULL;
  g_autofree char *out = run_ctl (path, TRUE, &status, &err, "plugins", "inspect", "test-isolation", NULL);
  g_auto(GStrv) lines = g_strsplit (err, "\n", -1);
  guint64 cli_pid = g_ascii_strtoull (lines[0], NULL, 10), loader_pid = 0;

  g_assert_cmpint (status, ==, 0);
  /* LD_DEBUG lines start with the pid: the CLI's own never opens the plugin. */
  for (guint i = 0; lines[i] != NULL && loader_pid == 0; i++)
    if (strstr (lines[i], "libsubagent-test-isolation.so [0];  dynamically loaded") != NULL)
      loader_pid = g_ascii_strtoull (lines[i], NULL, 10);
  g_assert_cmpuint (cli_pid, !=, 0);
  g_assert_cmpuint (loader_pid, !=, 0);
  g_assert_cmpuint (loader_pid, !=, cli_pid);
  assert_contains (out, "Name:        test-isolation\n");
  assert_contains (out, "Version:     0.0.1\n");
  assert_contains (out, "License:     LGPL-2.1-or-later\n");
  assert_contains (out, "ABI:         1.0 (host 1.0)\n");
  assert_contains (out, "  test-echo → TestEchoIsolation\n");
  assert_contains (out, "    implements: SubagentIsolationProvider\n");
  assert_contains (out, "    available:  yes\n");
}

static void
test_ctl_inspect_docker_json (void)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  int status = -1;
  g_autofree char *err = NULL;
  g_autofree char *out = run_ctl (g_getenv ("SUBAGENT_PLUGIN_PATH"), FALSE, &status, &err,
                                  "plugins", "inspect", "isolation-docker", "--json", NULL);
  JsonObject *root, *backend;
  JsonArray *backends;

  g_assert_cmpint (status, ==, 0);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "name"), ==, "isolation-docker");
  g_assert_cmpstr (json_object_get_string_member (root, "license"), ==, "LGPL-2.1-or-later");
  g_assert_cmpstr (json_object_get_string_member (root, "abi"), ==, "1.0");
  backends = json_object_get_array_member (root, "backends");
  g_assert_cmpuint (json_array_get_length (backends), ==, 1);
  backend = json_array_get_object_element (backends, 0);
  g_assert_cmpstr (json_object_get_string_member (backend, "backend"), ==, "docker");
  g_assert_cmpstr (json_object_get_string_member (backend, "type"), ==, "SubagentDockerIsolation");
  g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (backend, "interfaces"), 0), ==,
                   "SubagentIsolationProvider");
  /* main() points DOCKER_HOST at a dead socket: the reason names it. */
  g_assert_false (json_object_get_boolean_member (backend, "available"));
  assert_contains (json_object_get_string_member (backend, "unavailable_reason"), DEAD_DOCKER_HOST);
  /* The options its descriptor declares, and who reclaims its leftovers. */
  g_assert_cmpstr (json_object_get_string_member (root, "section"), ==, "docker");
  g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (root, "leftovers"), 0), ==, "container");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (json_object_get_array_member (root, "options"), 0),
                                                  "name"), ==, "image");
}

static void
test_ctl_inspect_prints_options (void)
{
  int status = -1;
  g_autofree char *err = NULL;
  g_autofree char *out = run_ctl (g_getenv ("SUBAGENT_PLUGIN_PATH"), FALSE, &status, &err,
                                  "plugins", "inspect", "isolation-worktree", NULL);

  g_assert_cmpint (status, ==, 0);
  assert_contains (out, "    implements: SubagentIsolationProvider, SubagentConfigurable\n");
  assert_contains (out, "Leftovers:   worktree (reclaimed by `subagentctl prune`)\n");
  assert_contains (out, "Options:     config.yaml section “worktree”\n");
  assert_contains (out, "  pool_size (integer, default 0): ");
  assert_contains (out, "  keep_branch (boolean, default false): ");
  g_assert_null (strstr (out, "MISMATCH"));
}

static void
test_ctl_inspect_crash_survives (void)
{
  g_autofree char *path = fixture_path ("crashing", NULL);
  int status = -1;
  g_autofree char *err = NULL;
  g_autofree char *out = run_ctl (path, FALSE, &status, &err, "plugins", "inspect", "crashing", NULL);

  /* The CLI itself exits normally, and says what happened to whom. */
  g_assert_cmpint (status, !=, 0);
  assert_contains (err, "plugin “crashing” crashed while loading");
  assert_contains (err, "crashing.plugin");
}

static void
test_ctl_inspect_errors (void)
{
  g_autofree char *path = fixture_path ("wrong-interface", "missing-symbol", NULL);
  int status = -1;
  g_autofree char *err = NULL;
  g_autofree char *out = run_ctl (path, FALSE, &status, &err, "plugins", "inspect", "wrong-interface", NULL);
  g_autofree char *err2 = NULL;
  g_autofree char *out2 = NULL;
  g_autofree char *err3 = NULL;
  g_autofree char *out3 = NULL;

  g_assert_cmpint (status, ==, 1);
  assert_contains (err, "wrong-interface.plugin");
  assert_contains (err, "FixtureNotAProvider");

  out2 = run_ctl (path, FALSE, &status, &err2, "plugins", "inspect", "missing-symbol", NULL);
  g_assert_cmpint (status, ==, 1);
  assert_contains (err2, "libsubagent-missing-symbol.so");
  assert_contains (err2, "SUBAGENT_PLUGIN_DEFINE");

  out3 = run_ctl (path, FALSE, &status, &err3, "plugins", "inspect", "no-such-plugin", NULL);
  g_assert_cmpint (status, ==, 1);
  assert_contains (err3, "No plugin provides the name “no-such-plugin”");
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  /* Whether an engine runs here must not change what inspect reports. */
  g_setenv ("DOCKER_HOST", DEAD_DOCKER_HOST, TRUE);

  g_test_add_func ("/subagentctl/plugins/list-without-loading", test_ctl_list_without_loading);
  g_test_add_func ("/subagentctl/plugins/list-json", test_ctl_list_json);
  g_test_add_func ("/subagentctl/plugins/inspect-good", test_ctl_inspect_good);
  g_test_add_func ("/subagentctl/plugins/inspect-docker-json", test_ctl_inspect_docker_json);
  g_test_add_func ("/subagentctl/plugins/inspect-prints-options", test_ctl_inspect_prints_options);
  g_test_add_func ("/subagentctl/plugins/inspect-crash-survives", test_ctl_inspect_crash_survives);
  g_test_add_func ("/subagentctl/plugins/inspect-errors", test_ctl_inspect_errors);

  return g_test_run ();
}
