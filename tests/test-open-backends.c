/* test-open-backends.c: backends come from plugins. Which isolation modes
 * exist, what `auto` and a deprecated alias stand for, plugin options
 * (declared, validated, handed over by one configure call), and leftovers
 * reclaimed by the plugin that made them; the in-tree fixture plugin
 * `test-isolation` (backend `test-echo`) selected by name like any other.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "test-support.h"

#define assert_contains(haystack, needle) \
  G_STMT_START { \
    const char *h__ = (haystack); \
    if (h__ == NULL || strstr (h__, (needle)) == NULL) \
      g_error ("“%s” does not contain “%s”", h__ ? h__ : "(null)", (needle)); \
  } G_STMT_END

static char *fixture_path;   /* the test-isolation fixture's build dir */

static char *
built_plugin (const char *name)
{
  return g_test_build_filename (G_TEST_BUILT, "..", "plugins", name, NULL);
}

/* The fixture, then the worktree and snapshot plugins: no docker, no sink. */
static SubagentPluginRegistry *
make_registry (void)
{
  g_autofree char *worktree = built_plugin ("isolation-worktree");
  g_autofree char *snapshot = built_plugin ("isolation-snapshot");
  const char *path[] = { fixture_path, worktree, snapshot, NULL };

  return subagent_plugin_registry_new (path);
}

static SubagentConfig *
config_from_yaml (const char *root,
                  const char *yaml)
{
  g_autoptr(GError) error = NULL;
  SubagentConfig *config;

  sat_write_file (root, ".subagent/config.yaml", yaml);
  config = subagent_config_load_for_root (root, &error);
  g_assert_no_error (error);
  return config;
}

/* ---- modes ---------------------------------------------------------------- */

static void
test_modes_come_from_descriptors (void)
{
  g_autoptr(SubagentPluginRegistry) registry = make_registry ();
  g_auto(GStrv) modes = subagent_plugin_registry_list_isolation_modes (registry);
  const char * const expected[] = { "shared", "auto", "test-echo", "worktree", "directory-snapshot", NULL };
  g_autoptr(SubagentPluginRegistry) empty = subagent_plugin_registry_new ((const char * const []) { "/nonexistent", NULL });
  g_auto(GStrv) builtin = subagent_plugin_registry_list_isolation_modes (empty);

  g_assert_cmpstrv (modes, expected);
  /* No plugin: only what is built in. */
  g_assert_cmpstrv (builtin, ((const char * const []) { "shared", "auto", NULL }));
  /* Nothing was loaded to learn them. */
  for (guint i = 0; i < 1; i++)
    {
      g_autoptr(GPtrArray) plugins = subagent_plugin_registry_list_plugins (registry);
      for (guint j = 0; j < plugins->len; j++)
        g_assert_false (subagent_plugin_info_is_loaded (plugins->pdata[j]));
    }
}

static void
test_resolve_names_and_aliases (void)
{
  g_autoptr(SubagentPluginRegistry) registry = make_registry ();
  g_autoptr(GError) error = NULL;
  gboolean alias = TRUE;

  g_assert_cmpstr (subagent_plugin_registry_resolve_isolation (registry, " Test-Echo ", &alias, &error), ==, "test-echo");
  g_assert_no_error (error);
  g_assert_false (alias);
  g_assert_cmpstr (subagent_plugin_registry_resolve_isolation (registry, NULL, NULL, &error), ==, "shared");
  g_assert_cmpstr (subagent_plugin_registry_resolve_isolation (registry, "auto", NULL, &error), ==, "auto");
  /* The alias is the snapshot descriptor's (Aliases=container;). */
  g_assert_cmpstr (subagent_plugin_registry_resolve_isolation (registry, "container", &alias, &error), ==,
                   "directory-snapshot");
  g_assert_true (alias);

  g_assert_null (subagent_plugin_registry_resolve_isolation (registry, "tmpdir", NULL, &error));
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNKNOWN_MODE);
  assert_contains (error->message, "“tmpdir”");
  assert_contains (error->message, "this host has shared, auto, test-echo, worktree, directory-snapshot");
  g_clear_error (&error);
  g_assert_null (subagent_plugin_registry_resolve_isolation (registry, "no good", NULL, &error));
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNKNOWN_MODE);
}

static void
test_auto_from_descriptors_and_config (void)
{
  g_autoptr(SubagentPluginRegistry) registry = make_registry ();
  g_autofree char *fixture_only_path = g_strdup (fixture_path);
  g_autoptr(SubagentPluginRegistry) fixture_only =
    subagent_plugin_registry_new ((const char * const []) { fixture_only_path, NULL });
  g_autofree char *root = sat_make_temp_dir ("open-auto");
  g_autoptr(SubagentConfig) config = config_from_yaml (root, "auto_isolation: { other: test-echo }\n");
  g_autoptr(SubagentConfig) bad = NULL;
  g_autoptr(GError) error = NULL;

  /* Auto=git and Auto=other in the descriptors. */
  g_assert_cmpstr (subagent_plugin_registry_resolve_auto (registry, NULL, TRUE, &error), ==, "worktree");
  g_assert_cmpstr (subagent_plugin_registry_resolve_auto (registry, NULL, FALSE, &error), ==, "directory-snapshot");
  g_assert_no_error (error);
  /* config.yaml overrides one choice and keeps the other. */
  g_assert_cmpstr (subagent_plugin_registry_resolve_auto (registry, config, FALSE, &error), ==, "test-echo");
  g_assert_cmpstr (subagent_plugin_registry_resolve_auto (registry, config, TRUE, &error), ==, "worktree");
  g_assert_no_error (error);
  /* Nothing to pick: an error that says how to fix it. */
  g_assert_null (subagent_plugin_registry_resolve_auto (fixture_only, NULL, TRUE, &error));
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNKNOWN_MODE);
  assert_contains (error->message, "auto_isolation");
  g_clear_error (&error);
  bad = config_from_yaml (root, "auto_isolation: { git: nowhere }\n");
  g_assert_null (subagent_plugin_registry_resolve_auto (registry, bad, TRUE, &error));
  assert_contains (error->message, "auto_isolation.git");
  assert_contains (error->message, "“nowhere”");
  sat_rm_rf (root);
}

/* ---- the in-tree fixture, selected by name -------------------------------- */

static void
test_manager_runs_fixture_by_name (void)
{
  g_autofree char *root = sat_make_temp_dir ("open-manager");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(SubagentRunResult) unknown = NULL;

  manager = subagent_manager_new (root, &error);
  g_assert_no_error (error);
  subagent_run_options_set_isolation (options, "test-echo");
  subagent_run_options_set_command (options, (const char * const []) { "true", NULL });
  result = subagent_manager_run (manager, "do it", options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_lineage_get_isolation (subagent_run_result_get_lineage (result)), ==, "test-echo");

  subagent_run_options_set_isolation (options, "moon");
  unknown = subagent_manager_run (manager, "do it", options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (subagent_run_result_get_status (unknown), ==, SUBAGENT_RUN_STATUS_ERROR);
  assert_contains (subagent_run_result_get_message (unknown), "Unknown isolation mode “moon”");
  assert_contains (subagent_run_result_get_message (unknown), "test-echo");
  sat_rm_rf (root);
}

static void
test_cli_selects_fixture_by_name (void)
{
  g_autofree char *root = sat_make_temp_dir ("open-cli");
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *lineage;

  g_assert_cmpint (sat_run_ctl (root, &out, &err, "run", "--json", "--isolation", "test-echo",
                                "--command", "echo from-the-fixture", "say hi", NULL), ==, 0);
  node = json_from_string (out, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (node), "status"), ==, "complete");
  lineage = json_object_get_object_member (json_node_get_object (node), "lineage");
  g_assert_cmpstr (json_object_get_string_member (lineage, "isolation"), ==, "test-echo");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* A definition and a batch item name it too. */
  sat_write_file (root, ".subagent/agents/echo.yaml",
                  "name: echo\nisolation: test-echo\ncommand: [sh, -c, 'echo by-definition']\n");
  g_assert_cmpint (sat_run_ctl (root, &out, &err, "defs", "--check", NULL), ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (sat_run_ctl (root, &out, &err, "run", "--def", "echo", "go", NULL), ==, 0);
  assert_contains (out, "by-definition");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  sat_write_file (root, "batch.json", "[{\"task\": \"a\", \"def_name\": \"echo\", \"isolation\": \"test-echo\"}]");
  g_assert_cmpint (sat_run_ctl (root, &out, &err, "batch", "--json", "batch.json", NULL), ==, 0);
  assert_contains (out, "\"isolation\" : \"test-echo\"");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* A mode no plugin provides: defs --check lists what this host has. */
  sat_write_file (root, ".subagent/agents/far.yaml", "name: far\nisolation: far-away\n");
  g_assert_cmpint (sat_run_ctl (root, &out, &err, "defs", "--check", NULL), ==, 1);
  assert_contains (out, "far.yaml");
  assert_contains (out, "Unknown isolation mode “far-away”");
  assert_contains (out, "test-echo");
  sat_rm_rf (root);
}

/* ---- options -------------------------------------------------------------- */

static void
test_descriptor_declares_options (void)
{
  g_autoptr(SubagentPluginRegistry) registry = make_registry ();
  g_autoptr(SubagentPluginInfo) info = subagent_plugin_registry_find_plugin (registry, "isolation-worktree", NULL);
  g_autoptr(GPtrArray) options = subagent_plugin_info_get_options (info);
  SubagentPluginOption *pool = subagent_plugin_options_find (options, "pool_size");
  g_autoptr(JsonNode) two = json_from_string ("2", NULL);
  g_autoptr(JsonNode) word = json_from_string ("\"two\"", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_cmpstr (subagent_plugin_info_get_section (info), ==, "worktree");
  g_assert_cmpstrv (subagent_plugin_info_get_leftovers (info), ((const char * const []) { "worktree", NULL }));
  g_assert_nonnull (pool);
  g_assert_cmpstr (subagent_plugin_option_get_value_type (pool), ==, "integer");
  g_assert_cmpstr (subagent_plugin_option_get_default (pool), ==, "0");
  g_assert_nonnull (subagent_plugin_option_get_description (pool));
  g_assert_true (subagent_plugin_option_check_value (pool, two, &error));
  g_assert_false (subagent_plugin_option_check_value (pool, word, &error));
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  /* Read from the descriptor alone. */
  g_assert_false (subagent_plugin_info_is_loaded (info));
}

static void
test_bad_option_declarations_are_refused (void)
{
  g_autofree char *dir = sat_make_temp_dir ("open-descriptors");
  g_autofree char *path = g_build_filename (dir, "x.plugin", NULL);
  static const char *const cases[] = {
    "[Option size]\nType=float\n",
    "[Option 9lives]\nType=integer\n",
    "Auto=sometimes\n",
    "Leftovers=../etc;\n",
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SubagentPluginInfo) info = NULL;
      g_autofree char *text = g_strdup_printf ("[Plugin]\nName=x\nModule=x.so\nInterface=SubagentIsolationProvider\n"
                                               "Provides=x;\nABI=1.0\n%s%s",
                                               cases[i][0] == '[' ? "" : cases[i], cases[i][0] == '[' ? cases[i] : "");

      sat_write_file (dir, "x.plugin", text);
      info = subagent_plugin_info_new_from_file (path, &error);
      g_test_message ("case %u", i);
      g_assert_null (info);
      g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR);
      assert_contains (error->message, path);
    }
  sat_rm_rf (dir);
}

static void
test_config_sections_are_validated (void)
{
  g_autoptr(SubagentPluginRegistry) registry = make_registry ();
  g_autofree char *root = sat_make_temp_dir ("open-validate");
  g_autoptr(SubagentConfig) good = NULL;
  g_autoptr(SubagentConfig) unknown = NULL;
  g_autoptr(SubagentConfig) wrong = NULL;
  g_auto(GStrv) warnings = NULL;
  g_autoptr(GError) error = NULL;

  good = config_from_yaml (root, "worktree:\n  pool_size: 2\n  keep_branch: true\nsnapshot: { strategy: copy }\n");
  g_assert_true (subagent_plugin_registry_validate_config (registry, good, &warnings, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (warnings), ==, 0);
  g_clear_pointer (&warnings, g_strfreev);

  unknown = config_from_yaml (root, "isolation: shared\nworktree:\n  pool_size: 2\n  pool: 3\nsomething: { a: 1 }\n");
  g_assert_true (subagent_plugin_registry_validate_config (registry, unknown, &warnings, &error));
  g_assert_cmpuint (g_strv_length (warnings), ==, 2);
  assert_contains (warnings[0], "config.yaml:5: section “something” is no installed plugin's");
  assert_contains (warnings[1], "config.yaml:4: unknown key “worktree.pool” ignored: plugin isolation-worktree has "
                                "pool_size, keep_branch, include_dirty");

  wrong = config_from_yaml (root, "snapshot:\n  strategy: copy\n  snapshot_dir: [a, b]\n");
  g_assert_false (subagent_plugin_registry_validate_config (registry, wrong, NULL, &error));
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  assert_contains (error->message, "config.yaml:3: “snapshot.snapshot_dir”");
  assert_contains (error->message, "must be a string");
  sat_rm_rf (root);
}

static void
test_manager_refuses_wrong_option_type (void)
{
  g_autofree char *root = sat_make_temp_dir ("open-manager-config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = NULL;

  sat_write_file (root, ".subagent/config.yaml", "worktree: { pool_size: lots }\n");
  manager = subagent_manager_new (root, &error);
  g_assert_null (manager);
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  assert_contains (error->message, "config.yaml:1: “worktree.pool_size”");
  sat_rm_rf (root);
}

/* One call configures a sink like a provider: root and its own section. */
static void
test_sinks_are_configured_like_providers (void)
{
  g_autofree char *sink_dir = built_plugin ("approval-file");
  g_autoptr(SubagentPluginRegistry) registry =
    subagent_plugin_registry_new ((const char * const []) { sink_dir, NULL });
  g_autofree char *root = sat_make_temp_dir ("open-configure");
  g_autofree char *key_path = g_build_filename (root, "keys", "approval.key", NULL);
  g_autoptr(SubagentConfig) config = config_from_yaml (root, "approval-file: { key_file: keys/approval.key }\n");
  g_autoptr(GObject) sink = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *got_root = NULL, *got_key = NULL;
  g_autoptr(GPtrArray) options = NULL;

  sink = subagent_plugin_registry_create_configured (registry, config, SUBAGENT_TYPE_APPROVAL_SINK, "file", root, &error);
  g_assert_no_error (error);
  g_assert_true (SUBAGENT_IS_APPROVAL_SINK (sink));
  g_object_get (sink, "root", &got_root, "key-file", &got_key, NULL);
  g_assert_cmpstr (got_root, ==, root);
  g_assert_cmpstr (got_key, ==, key_path);
  /* The loaded type lists the options its descriptor declares. */
  g_assert_true (SUBAGENT_IS_CONFIGURABLE (sink));
  options = subagent_configurable_list_options (SUBAGENT_CONFIGURABLE (sink));
  g_assert_cmpuint (options->len, ==, 1);
  g_assert_cmpstr (subagent_plugin_option_get_name (options->pdata[0]), ==, "key_file");
  sat_rm_rf (root);
}

/* approval-postgres through the same call: its `postgres` section becomes
 * its properties (no server needed); a password in the connection string
 * is refused before any connection, and never echoed. */
static void
test_postgres_sink_is_configured (void)
{
  g_autofree char *sink_dir = built_plugin ("approval-postgres");
  g_autoptr(SubagentPluginRegistry) registry =
    subagent_plugin_registry_new ((const char * const []) { sink_dir, NULL });
  g_autofree char *root = sat_make_temp_dir ("open-configure-pg");
  g_autofree char *key_path = g_build_filename (root, "keys", "approval.key", NULL);
  g_autoptr(SubagentConfig) config =
    config_from_yaml (root, "approvals: { sink: postgres }\n"
                            "postgres: { conninfo: \"host=db.invalid dbname=ops\", schema: team_a, "
                            "key_file: keys/approval.key, max_connections: 2 }\n");
  g_autoptr(SubagentConfig) bad_schema = NULL;
  g_autoptr(SubagentConfig) with_password = NULL;
  g_autoptr(GObject) sink = NULL;
  g_autoptr(GObject) refused = NULL;
  g_autoptr(GObject) secret = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *conninfo = NULL, *schema = NULL, *key_file = NULL;
  g_auto(GStrv) runs = NULL;
  guint max_connections = 0;

  g_assert_cmpuint (g_strv_length ((GStrv) subagent_config_get_warnings (config)), ==, 0);
  sink = subagent_plugin_registry_create_configured (registry, config, SUBAGENT_TYPE_APPROVAL_SINK,
                                                     subagent_config_get_approval_sink (config), root, &error);
  g_assert_no_error (error);
  g_object_get (sink, "conninfo", &conninfo, "schema", &schema, "key-file", &key_file,
                "max-connections", &max_connections, NULL);
  g_assert_cmpstr (conninfo, ==, "host=db.invalid dbname=ops");
  g_assert_cmpstr (schema, ==, "team_a");
  g_assert_cmpstr (key_file, ==, key_path);
  g_assert_cmpuint (max_connections, ==, 2);

  /* The same options nested under approvals:, as the sink's name. */
  {
    g_autoptr(SubagentConfig) nested =
      config_from_yaml (root, "approvals: { sink: postgres, postgres: { conninfo: \"host=db.invalid dbname=b\", "
                              "schema: team_b } }\n");
    g_autoptr(GObject) nested_sink = NULL;
    g_autofree char *nested_schema = NULL;

    g_assert_cmpuint (g_strv_length ((GStrv) subagent_config_get_warnings (nested)), ==, 0);
    nested_sink = subagent_plugin_registry_create_configured (registry, nested, SUBAGENT_TYPE_APPROVAL_SINK,
                                                              subagent_config_get_approval_sink (nested), root, &error);
    g_assert_no_error (error);
    g_object_get (nested_sink, "schema", &nested_schema, NULL);
    g_assert_cmpstr (nested_schema, ==, "team_b");
  }

  bad_schema = config_from_yaml (root, "postgres: { schema: \"a; DROP TABLE x\" }\n");
  refused = subagent_plugin_registry_create_configured (registry, bad_schema, SUBAGENT_TYPE_APPROVAL_SINK, "postgres",
                                                        root, &error);
  g_assert_null (refused);
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  g_clear_error (&error);

  with_password = config_from_yaml (root, "postgres: { conninfo: \"host=db.invalid user=agents password=hunter2\" }\n");
  secret = subagent_plugin_registry_create_configured (registry, with_password, SUBAGENT_TYPE_APPROVAL_SINK, "postgres",
                                                       root, &error);
  g_assert_no_error (error);
  runs = subagent_approval_sink_list_runs (SUBAGENT_APPROVAL_SINK (secret), &error);
  g_assert_null (runs);
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE);
  assert_contains (error->message, ".pgpass");
  g_assert_null (strstr (error->message, "hunter2"));
  sat_rm_rf (root);
}

/* What validation without loading relies on: each in-tree plugin type that
 * lists its options lists exactly what its descriptor declares. */
static void
test_types_agree_with_descriptors (void)
{
  g_autofree char *worktree = built_plugin ("isolation-worktree");
  g_autofree char *snapshot = built_plugin ("isolation-snapshot");
  g_autofree char *sink = built_plugin ("approval-file");
  g_autofree char *postgres = built_plugin ("approval-postgres");
  g_autofree char *docker = built_plugin ("isolation-docker");
  g_autoptr(SubagentPluginRegistry) registry =
    subagent_plugin_registry_new ((const char * const []) { worktree, snapshot, sink, postgres, docker, NULL });
  static const struct { const char *plugin, *backend; GType (*iface) (void); } cases[] = {
    { "isolation-docker", "docker", subagent_isolation_provider_get_type },
    { "isolation-worktree", "worktree", subagent_isolation_provider_get_type },
    { "isolation-snapshot", "directory-snapshot", subagent_isolation_provider_get_type },
    { "approval-file", "file", subagent_approval_sink_get_type },
    { "approval-postgres", "postgres", subagent_approval_sink_get_type },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(SubagentPluginInfo) info = subagent_plugin_registry_find_plugin (registry, cases[i].plugin, NULL);
      g_autoptr(GPtrArray) declared = subagent_plugin_info_get_options (info);
      g_autoptr(GObject) object = NULL;
      g_autoptr(GPtrArray) listed = NULL;
      g_autoptr(GError) error = NULL;

      object = subagent_plugin_registry_create (registry, cases[i].iface (), cases[i].backend, &error);
      g_assert_no_error (error);
      g_assert_true (SUBAGENT_IS_CONFIGURABLE (object));
      listed = subagent_configurable_list_options (SUBAGENT_CONFIGURABLE (object));
      g_test_message ("%s: %u declared, %u listed", cases[i].plugin, declared->len, listed->len);
      g_assert_cmpuint (listed->len, ==, declared->len);
      for (guint j = 0; j < listed->len; j++)
        {
          SubagentPluginOption *mine = listed->pdata[j];
          SubagentPluginOption *theirs = subagent_plugin_options_find (declared, subagent_plugin_option_get_name (mine));

          g_assert_nonnull (theirs);
          g_assert_cmpstr (subagent_plugin_option_get_value_type (mine), ==, subagent_plugin_option_get_value_type (theirs));
          g_assert_cmpstr (subagent_plugin_option_get_default (mine), ==, subagent_plugin_option_get_default (theirs));
        }
    }
}

/* ---- leftovers ------------------------------------------------------------ */

static void
test_leftovers_go_to_their_plugin (void)
{
  g_autoptr(SubagentPluginRegistry) registry = make_registry ();
  g_autoptr(SubagentPluginInfo) snapshot = NULL;
  g_autoptr(SubagentPluginInfo) container = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) shared = NULL;
  g_autoptr(JsonObject) record = json_object_new ();
  g_autofree char *reason = NULL;

  snapshot = subagent_plugin_registry_find_for_leftovers (registry, "snapshot", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_plugin_info_get_name (snapshot), ==, "isolation-snapshot");
  container = subagent_plugin_registry_find_for_leftovers (registry, "container", &error);
  g_assert_null (container);
  g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_NOT_FOUND);
  assert_contains (error->message, "“container”");

  /* A backend that leaves nothing behind skips, and says so. */
  shared = subagent_plugin_registry_create_configured (registry, NULL, SUBAGENT_TYPE_ISOLATION_PROVIDER, "shared",
                                                       "/", NULL);
  json_object_set_string_member (record, "kind", "x");
  g_assert_cmpint (subagent_isolation_provider_reclaim (SUBAGENT_ISOLATION_PROVIDER (shared), "/", record,
                                                        SUBAGENT_RECLAIM_FLAGS_NONE, &reason),
                   ==, SUBAGENT_RECLAIM_SKIPPED);
  assert_contains (reason, "reclaims no leftovers");
}

static void
test_prune_skips_kinds_no_plugin_reclaims (void)
{
  g_autofree char *root = sat_make_temp_dir ("open-prune");
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *record_path = NULL;

  g_assert_true (subagent_owner_record_save (root, "odd-1", "mystery", "/nowhere", "run", NULL, &error));
  /* Dead for sure: another boot. */
  record_path = subagent_owner_record_path (root, "odd-1");
  {
    g_autofree char *text = NULL;
    g_autoptr(JsonNode) node = NULL;

    g_assert_true (g_file_get_contents (record_path, &text, NULL, NULL));
    node = json_from_string (text, NULL);
    json_object_set_string_member (json_node_get_object (node), "boot_id", "00000000-0000-0000-0000-000000000000");
    g_free (text);
    text = json_to_string (node, FALSE);
    g_assert_true (g_file_set_contents (record_path, text, -1, NULL));
  }
  g_assert_cmpint (sat_run_ctl (root, &out, &err, "prune", "--json", NULL), ==, 0);
  assert_contains (out, "\"action\" : \"skipped\"");
  assert_contains (out, "No installed plugin reclaims leftovers of kind “mystery”");
  g_assert_true (g_file_test (record_path, G_FILE_TEST_EXISTS));
  sat_rm_rf (root);
}

/* prune opens only the plugins whose descriptors claim a dead record's kind. */
static void
test_prune_loads_only_plugins_with_leftovers (void)
{
  g_autofree char *root = sat_make_temp_dir ("open-prune-loads");
  g_autofree char *gone = g_build_filename (root, "no-such-snapshot", NULL);
  g_autofree char *record_path = NULL;
  g_autofree char *text = NULL;
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (subagent_owner_record_save (root, "snap-1", "snapshot", gone, "run", NULL, &error));
  record_path = subagent_owner_record_path (root, "snap-1");
  g_assert_true (g_file_get_contents (record_path, &text, NULL, NULL));
  node = json_from_string (text, NULL);
  json_object_set_string_member (json_node_get_object (node), "boot_id", "00000000-0000-0000-0000-000000000000");
  g_free (text);
  text = json_to_string (node, FALSE);
  g_assert_true (g_file_set_contents (record_path, text, -1, NULL));

  g_setenv ("LD_DEBUG", "files", TRUE);
  g_assert_cmpint (sat_run_ctl (root, &out, &err, "prune", "--json", NULL), ==, 0);
  g_unsetenv ("LD_DEBUG");
  assert_contains (out, "\"action\" : \"removed\"");
  assert_contains (out, "already gone");
  g_assert_false (g_file_test (record_path, G_FILE_TEST_EXISTS));
  assert_contains (err, "libsubagent-isolation-snapshot.so");
  g_assert_null (strstr (err, "libsubagent-isolation-worktree.so"));
  g_assert_null (strstr (err, "libsubagent-isolation-docker.so"));
  g_assert_null (strstr (err, "libsubagent-test-isolation.so"));
  sat_rm_rf (root);
}

int
main (int argc, char *argv[])
{
  const char *env = g_getenv ("SUBAGENT_PLUGIN_PATH");
  g_autofree char *path = NULL;

  g_test_init (&argc, &argv, NULL);
  /* The fixture first on the path, for this process and subagentctl. */
  fixture_path = g_test_build_filename (G_TEST_BUILT, "fixtures", "plugins", "test-isolation", NULL);
  path = env && *env ? g_strconcat (fixture_path, ":", env, NULL) : g_strdup (fixture_path);
  g_setenv ("SUBAGENT_PLUGIN_PATH", path, TRUE);

  g_test_add_func ("/open-backends/modes/come-from-descriptors", test_modes_come_from_descriptors);
  g_test_add_func ("/open-backends/modes/resolve-names-and-aliases", test_resolve_names_and_aliases);
  g_test_add_func ("/open-backends/modes/auto-from-descriptors-and-config", test_auto_from_descriptors_and_config);
  g_test_add_func ("/open-backends/fixture/manager-runs-it-by-name", test_manager_runs_fixture_by_name);
  g_test_add_func ("/open-backends/fixture/cli-selects-it-by-name", test_cli_selects_fixture_by_name);
  g_test_add_func ("/open-backends/options/descriptor-declares-them", test_descriptor_declares_options);
  g_test_add_func ("/open-backends/options/bad-declarations-are-refused", test_bad_option_declarations_are_refused);
  g_test_add_func ("/open-backends/options/config-sections-are-validated", test_config_sections_are_validated);
  g_test_add_func ("/open-backends/options/manager-refuses-wrong-type", test_manager_refuses_wrong_option_type);
  g_test_add_func ("/open-backends/configure/sinks-like-providers", test_sinks_are_configured_like_providers);
  g_test_add_func ("/open-backends/configure/postgres-sink-section", test_postgres_sink_is_configured);
  g_test_add_func ("/open-backends/options/types-agree-with-descriptors", test_types_agree_with_descriptors);
  g_test_add_func ("/open-backends/leftovers/go-to-their-plugin", test_leftovers_go_to_their_plugin);
  g_test_add_func ("/open-backends/leftovers/prune-skips-unclaimed-kinds", test_prune_skips_kinds_no_plugin_reclaims);
  g_test_add_func ("/open-backends/leftovers/prune-loads-only-their-plugins", test_prune_loads_only_plugins_with_leftovers);
  int rc = g_test_run ();
  g_free (fixture_path);
  return rc;
}
