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
  g_assert_null (subagent_config_get_section (config, "worktree"));
  g_assert_null (subagent_config_get_auto_isolation (config, TRUE));
  g_assert_null (subagent_config_get_auto_isolation (config, FALSE));
  sat_rm_rf (root);
}

static void
test_every_key (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = NULL;
  g_auto(GStrv) sections = NULL;
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
                  "approvals: { sink: memory, timeout_seconds: 30 }\n"
                  "auto_isolation: { git: Worktree, other: tmpdir }\n"
                  "worktree: { pool_size: 2, keep_branch: true }\n"
                  "snapshot: { strategy: copy }\n"
                  "docker:\n"
                  "  image: busybox\n"
                  "  network: bridge\n");
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
  g_assert_cmpstr (subagent_config_get_auto_isolation (config, TRUE), ==, "worktree");
  g_assert_cmpstr (subagent_config_get_auto_isolation (config, FALSE), ==, "tmpdir");
  /* Plugin sections pass through as written, whatever their keys. */
  worktree = subagent_config_get_section (config, "worktree");
  snapshot = subagent_config_get_section (config, "snapshot");
  docker = subagent_config_get_section (config, "docker");
  sections = subagent_config_list_sections (config);
  g_assert_cmpstrv (sections, ((const char * const []) { "docker", "snapshot", "worktree", NULL }));
  /* ...with the line of each key, for the registry's messages. */
  g_assert_cmpuint (subagent_config_get_line (config, "docker", NULL), ==, 16);
  g_assert_cmpuint (subagent_config_get_line (config, "docker", "network"), ==, 18);
  g_assert_cmpuint (subagent_config_get_line (config, "docker", "nothing"), ==, 0);
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

  /* A plugin section's keys are the plugin's (the registry checks them,
   * see test-plugin-registry); a framework section's are the config's. */
  sat_write_file (root, ".subagent/config.yaml", "isolaton: shared\nworktree: { pool: 1 }\nrunner: { commnd: x }\n");
  g_test_expect_message ("Subagent", G_LOG_LEVEL_WARNING, "*unknown key “isolaton” ignored*");
  g_test_expect_message ("Subagent", G_LOG_LEVEL_WARNING, "*unknown key “runner.commnd” ignored*");
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
  check_bad_value ("isolation: no good\n", "isolation");
  check_bad_value ("auto_isolation: { git: auto }\n", "auto_isolation");
  check_bad_value ("auto_isolation: { other: [a] }\n", "auto_isolation.other");
  check_bad_value ("permission_mode: root\n", "permission_mode");
  check_bad_value ("runner: { timeout_seconds: -1 }\n", "runner.timeout_seconds");
  check_bad_value ("runner: { max_parallel: many }\n", "runner.max_parallel");
  check_bad_value ("runner: { command: [1, 2] }\n", "runner.command");
  check_bad_value ("approvals: { timeout_seconds: 0 }\n", "approvals.timeout_seconds");
  check_bad_value ("budget: { max_cost_cents: -3 }\n", "budget.max_cost_cents");
  check_bad_value ("plugins: { backends: { worktree: [a] } }\n", "plugins.backends");
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

/* The configuration only spells modes: which exist, and what the alias
 * `container` stands for, the plugin registry says (test-plugin-registry). */
static void
test_modes_are_spelled_not_checked (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = NULL;
  g_autoptr(SubagentConfig) other = NULL;

  sat_write_file (root, ".subagent/config.yaml", "isolation: Container\n");
  config = subagent_config_load_for_root (root, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_config_get_default_isolation (config), ==, "container");
  sat_write_file (root, ".subagent/config.yaml", "isolation: ' tmpdir '\n");
  other = subagent_config_load_for_root (root, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_config_get_default_isolation (other), ==, "tmpdir");
  sat_rm_rf (root);
}

static void
test_scalar_top_level_key_warns (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = NULL;

  sat_write_file (root, ".subagent/config.yaml", "worktree: [1]\n");
  g_test_expect_message ("Subagent", G_LOG_LEVEL_WARNING, "*unknown key “worktree” ignored*mapping*");
  config = subagent_config_load_for_root (root, &error);
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  g_assert_null (subagent_config_get_section (config, "worktree"));
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
  g_test_add_func ("/config/modes-are-spelled-not-checked", test_modes_are_spelled_not_checked);
  g_test_add_func ("/config/scalar-top-level-key-warns", test_scalar_top_level_key_warns);
  return g_test_run ();
}
