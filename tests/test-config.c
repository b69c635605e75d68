/* test-config.c: `.subagent/config.yaml`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-support.h"

static void
test_defaults_without_file (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = subagent_config_load_for_root (root, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (subagent_config_get_default_isolation (config), ==, "shared");
  g_assert_cmpint (subagent_config_get_permission_mode (config), ==, SUBAGENT_PERMISSION_MODE_PROMPT);
  g_assert_cmpuint (subagent_config_get_approval_timeout (config), ==, 180);
  g_assert_cmpuint (subagent_config_get_max_parallel (config), ==, 4);
  g_assert_cmpuint (subagent_config_get_max_agents (config), ==, 128);
  g_assert_cmpstr (subagent_config_get_approval_sink (config), ==, "file");
  g_assert_cmpuint (g_strv_length ((GStrv) subagent_config_get_runner_command (config)), ==, 0);
  g_assert_null (subagent_config_get_backend_options (config, "worktree"));
  sat_rm_rf (root);
}

static void
test_every_key (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = NULL;
  JsonObject *worktree, *snapshot, *docker;

  sat_write_file (root, ".subagent/config.yaml",
                  "isolation: worktree\n"
                  "permission_mode: workspace_write\n"
                  "plugins:\n"
                  "  path: [/opt/a, /opt/b]\n"
                  "  backends: { worktree: isolation-worktree }\n"
                  "runner:\n"
                  "  command: \"my-agent --stdio 'two words'\"\n"
                  "  timeout_seconds: 600\n"
                  "  max_parallel: 0\n"
                  "  max_agents: 10\n"
                  "budget: { max_cost_cents: 12.5 }\n"
                  "approvals: { sink: memory, timeout_seconds: 30, hmac_key_file: /k }\n"
                  "worktree: { pool_size: 2, keep_branch: true }\n"
                  "snapshot: { strategy: copy }\n"
                  "docker: { image: busybox, network: bridge }\n");
  config = subagent_config_load_for_root (root, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_config_get_default_isolation (config), ==, "worktree");
  g_assert_cmpint (subagent_config_get_permission_mode (config), ==, SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE);
  g_assert_cmpstr (subagent_config_get_plugin_path (config)[1], ==, "/opt/b");
  g_assert_cmpstr (subagent_config_get_plugin_for_backend (config, "worktree"), ==, "isolation-worktree");
  g_assert_null (subagent_config_get_plugin_for_backend (config, "docker"));
  g_assert_cmpstr (subagent_config_get_runner_command (config)[2], ==, "two words");
  g_assert_cmpuint (subagent_config_get_runner_timeout (config), ==, 600);
  g_assert_cmpuint (subagent_config_get_max_parallel (config), ==, 1);  /* floor 1 */
  g_assert_cmpuint (subagent_config_get_max_agents (config), ==, 10);
  g_assert_cmpfloat (subagent_config_get_max_cost_cents (config), ==, 12.5);
  g_assert_cmpstr (subagent_config_get_approval_sink (config), ==, "memory");
  g_assert_cmpuint (subagent_config_get_approval_timeout (config), ==, 30);
  g_assert_cmpstr (subagent_config_get_hmac_key_file (config), ==, "/k");
  worktree = subagent_config_get_backend_options (config, "worktree");
  snapshot = subagent_config_get_backend_options (config, "directory-snapshot");
  docker = subagent_config_get_backend_options (config, "docker");
  g_assert_cmpint (json_object_get_int_member (worktree, "pool_size"), ==, 2);
  g_assert_true (json_object_get_boolean_member (worktree, "keep_branch"));
  g_assert_cmpstr (json_object_get_string_member (snapshot, "strategy"), ==, "copy");
  g_assert_cmpstr (json_object_get_string_member (docker, "network"), ==, "bridge");
  g_assert_cmpuint (g_strv_length ((GStrv) subagent_config_get_warnings (config)), ==, 0);
  sat_rm_rf (root);
}

static void
test_unknown_keys_warn (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = NULL;

  sat_write_file (root, ".subagent/config.yaml", "isolaton: shared\nworktree: { pool: 1 }\n");
  g_test_expect_message ("Subagent", G_LOG_LEVEL_WARNING, "*unknown key “isolaton” ignored*");
  g_test_expect_message ("Subagent", G_LOG_LEVEL_WARNING, "*unknown key “worktree.pool” ignored*");
  config = subagent_config_load_for_root (root, &error);
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length ((GStrv) subagent_config_get_warnings (config)), ==, 2);
  g_assert_cmpstr (subagent_config_get_default_isolation (config), ==, "shared");
  sat_rm_rf (root);
}

static void
check_bad_value (const char *yaml,
                 const char *key)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = NULL;
  g_autofree char *expected = g_strdup_printf ("“%s”", key);

  sat_write_file (root, ".subagent/config.yaml", yaml);
  config = subagent_config_load_for_root (root, &error);
  g_assert_null (config);
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, expected));
  g_assert_nonnull (strstr (error->message, "config.yaml"));
  sat_rm_rf (root);
}

static void
test_bad_values_are_errors (void)
{
  check_bad_value ("isolation: vm\n", "isolation");
  check_bad_value ("permission_mode: root\n", "permission_mode");
  check_bad_value ("runner: { timeout_seconds: -1 }\n", "runner.timeout_seconds");
  check_bad_value ("runner: { max_parallel: many }\n", "runner.max_parallel");
  check_bad_value ("runner: { command: [1, 2] }\n", "runner.command");
  check_bad_value ("approvals: { timeout_seconds: 0 }\n", "approvals.timeout_seconds");
  check_bad_value ("budget: { max_cost_cents: -3 }\n", "budget.max_cost_cents");
  check_bad_value ("worktree: [1]\n", "worktree");
  check_bad_value ("plugins: { backends: { worktree: [a] } }\n", "plugins.backends");
  check_bad_value ("approvals: { sink: postgres, postgres: [1] }\n", "approvals.postgres");
}

static SubagentConfig *
load_yaml (const char *root,
           const char *yaml)
{
  g_autoptr(GError) error = NULL;
  SubagentConfig *config;

  sat_write_file (root, ".subagent/config.yaml", yaml);
  config = subagent_config_load_for_root (root, &error);
  g_assert_no_error (error);
  return config;
}

/* The chosen sink's options become its properties; other sinks' sections
 * are unknown keys; an option the sink does not have is an error. */
static void
test_approval_sink_options (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autofree char *key_path = g_build_filename (root, "keys/approval.key", NULL);
  g_autoptr(SubagentConfig) config = NULL;
  g_autoptr(SubagentConfig) wrong = NULL;
  g_autoptr(GObject) sink = NULL;
  g_autoptr(GObject) other = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *conninfo = NULL;
  g_autofree char *schema = NULL;
  g_autofree char *key_file = NULL;
  guint max_connections = 0;

  config = load_yaml (root, "approvals:\n"
                            "  sink: postgres\n"
                            "  hmac_key_file: keys/approval.key\n"
                            "  postgres: { conninfo: \"host=db.invalid dbname=ops\", schema: team_a, max_connections: 2 }\n");
  g_assert_cmpuint (g_strv_length ((GStrv) subagent_config_get_warnings (config)), ==, 0);
  sink = subagent_plugin_registry_create (subagent_plugin_registry_get_default (), SUBAGENT_TYPE_APPROVAL_SINK,
                                          subagent_config_get_approval_sink (config), &error);
  g_assert_no_error (error);
  g_assert_true (subagent_config_configure_approval_sink (config, sink, root, &error));
  g_assert_no_error (error);
  g_object_get (sink, "conninfo", &conninfo, "schema", &schema, "key-file", &key_file,
                "max-connections", &max_connections, NULL);
  g_assert_cmpstr (conninfo, ==, "host=db.invalid dbname=ops");
  g_assert_cmpstr (schema, ==, "team_a");
  g_assert_cmpstr (key_file, ==, key_path);
  g_assert_cmpuint (max_connections, ==, 2);

  wrong = load_yaml (root, "approvals: { sink: postgres, postgres: { conninfo: x, colour: blue } }\n");
  other = subagent_plugin_registry_create (subagent_plugin_registry_get_default (), SUBAGENT_TYPE_APPROVAL_SINK,
                                           "postgres", &error);
  g_assert_false (subagent_config_configure_approval_sink (wrong, other, root, &error));
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "colour"));
  sat_rm_rf (root);
}

/* A password in the connection string is refused before any connection. */
static void
test_approval_postgres_refuses_password (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) sink = subagent_plugin_registry_create (subagent_plugin_registry_get_default (),
                                                             SUBAGENT_TYPE_APPROVAL_SINK, "postgres", &error);
  g_auto(GStrv) runs = NULL;

  g_assert_no_error (error);
  g_object_set (sink, "conninfo", "host=db.invalid user=agents password=hunter2", NULL);
  runs = subagent_approval_sink_list_runs (SUBAGENT_APPROVAL_SINK (sink), &error);
  g_assert_null (runs);
  g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE);
  g_assert_nonnull (strstr (error->message, ".pgpass"));
  g_assert_null (strstr (error->message, "hunter2"));
}

static void
test_parse_error_names_file (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = NULL;

  sat_write_file (root, ".subagent/config.yaml", "isolation: [shared\n");
  config = subagent_config_load_for_root (root, &error);
  g_assert_null (config);
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_PARSE);
  g_assert_nonnull (strstr (error->message, "config.yaml"));
  sat_rm_rf (root);
}

static void
test_env_overrides_root (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autofree char *other = sat_make_temp_dir ("config-env");
  g_autofree char *path = g_build_filename (other, "custom.yaml", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = NULL;

  sat_write_file (root, ".subagent/config.yaml", "isolation: worktree\n");
  sat_write_file (other, "custom.yaml", "isolation: docker\n");
  g_setenv ("SUBAGENT_CONFIG", path, TRUE);
  config = subagent_config_load_for_root (root, &error);
  g_unsetenv ("SUBAGENT_CONFIG");
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_config_get_default_isolation (config), ==, "docker");
  g_assert_cmpstr (subagent_config_get_source (config), ==, path);
  sat_rm_rf (root);
  sat_rm_rf (other);
}

static void
test_container_alias_warns (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = NULL;

  sat_write_file (root, ".subagent/config.yaml", "isolation: container\n");
  g_test_expect_message ("Subagent", G_LOG_LEVEL_WARNING, "*container*deprecated*");
  config = subagent_config_load_for_root (root, &error);
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_config_get_default_isolation (config), ==, "directory-snapshot");
  sat_rm_rf (root);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/config/defaults-without-file", test_defaults_without_file);
  g_test_add_func ("/config/every-key", test_every_key);
  g_test_add_func ("/config/unknown-keys-warn", test_unknown_keys_warn);
  g_test_add_func ("/config/bad-values-are-errors", test_bad_values_are_errors);
  g_test_add_func ("/config/parse-error-names-file", test_parse_error_names_file);
  g_test_add_func ("/config/env-overrides-root", test_env_overrides_root);
  g_test_add_func ("/config/container-alias-warns", test_container_alias_warns);
  g_test_add_func ("/config/approval-sink-options-become-properties", test_approval_sink_options);
  g_test_add_func ("/config/approval-postgres-refuses-a-password", test_approval_postgres_refuses_password);
  return g_test_run ();
}
