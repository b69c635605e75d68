/* test-config.c: `.subagent/config.yaml`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

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
  /* One string is a shell command line. */
  g_assert_cmpstr (subagent_config_get_runner_command (config)[0], ==, "/bin/sh");
  g_assert_cmpstr (subagent_config_get_runner_command (config)[2], ==, "my-agent --stdio 'two words'");
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

/* Mode names come from configuration, definitions, batches and MCP clients:
 * none of them may be interned (GLib's quark table never shrinks, and it
 * leaks its old array each time it grows; the config fuzzer found that). */
static void
test_mode_names_not_interned (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = NULL;
  g_autoptr(JsonNode) def_json = NULL;
  g_autoptr(JsonNode) item_json = NULL;
  g_autoptr(SubagentDef) def = NULL;
  g_autoptr(SubagentBatchItem) item = NULL;
  g_autoptr(SubagentPluginRegistry) registry = NULL;

  sat_write_file (root, ".subagent/config.yaml", "isolation: ' Quark-Probe-Config '\n");
  config = subagent_config_load_for_root (root, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_config_get_default_isolation (config), ==, "quark-probe-config");
  g_assert_cmpuint (g_quark_try_string ("quark-probe-config"), ==, 0);

  def_json = json_from_string ("{\"name\": \"d\", \"description\": \"d\", \"isolation\": \"quark-probe-def\"}",
                               &error);
  g_assert_no_error (error);
  def = subagent_def_new_from_json (json_node_get_object (def_json), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_quark_try_string ("quark-probe-def"), ==, 0);

  item_json = json_from_string ("{\"task\": \"t\", \"isolation\": \"Quark-Probe-Batch\"}", &error);
  g_assert_no_error (error);
  item = subagent_batch_item_new_from_json (json_node_get_object (item_json), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_quark_try_string ("quark-probe-batch"), ==, 0);

  registry = subagent_plugin_registry_new (NULL);
  g_assert_null (subagent_plugin_registry_resolve_isolation (registry, "quark-probe-registry", NULL, &error));
  g_assert_nonnull (error);
  g_assert_cmpuint (g_quark_try_string ("quark-probe-registry"), ==, 0);
  g_clear_error (&error);
  g_assert_true (subagent_plugin_registry_resolve_isolation (registry, " AUTO", NULL, &error) ==
                 g_intern_static_string (SUBAGENT_ISOLATION_AUTO));
  g_assert_no_error (error);
  sat_rm_rf (root);
}

/* `approvals: {sink: postgres, postgres: {…}}`: the sink's section nested
 * under approvals: is its plugin section, as a top-level one would be. */
static void
test_sink_section_nested_under_approvals (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = NULL;
  g_autoptr(SubagentConfig) twice = NULL;
  g_autoptr(SubagentConfig) scalar = NULL;
  JsonObject *section;

  sat_write_file (root, ".subagent/config.yaml",
                  "approvals:\n  sink: postgres\n  timeout_seconds: 30\n"
                  "  postgres:\n    conninfo: \"host=db.internal\"\n    schema: team_a\n");
  config = subagent_config_load_for_root (root, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_config_get_approval_sink (config), ==, "postgres");
  g_assert_cmpuint (g_strv_length ((GStrv) subagent_config_get_warnings (config)), ==, 0);
  section = subagent_config_get_section (config, "postgres");
  g_assert_nonnull (section);
  g_assert_cmpstr (json_object_get_string_member (section, "schema"), ==, "team_a");
  g_assert_cmpuint (subagent_config_get_line (config, "postgres", "schema"), ==, 6);

  sat_write_file (root, ".subagent/config.yaml",
                  "approvals:\n  sink: postgres\n  postgres: {schema: a}\npostgres: {schema: b}\n");
  twice = subagent_config_load_for_root (root, &error);
  g_assert_null (twice);
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "approvals.postgres"));
  g_clear_error (&error);

  sat_write_file (root, ".subagent/config.yaml", "approvals:\n  sink: postgres\n  postgres: yes\n");
  scalar = subagent_config_load_for_root (root, &error);
  g_assert_null (scalar);
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  g_clear_error (&error);
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

static void
test_models (void)
{
  g_autofree char *root = sat_make_temp_dir ("config");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentConfig) config = NULL;
  g_auto(GStrv) names = NULL;
  JsonObject *local, *hosted, *alias;

  sat_write_file (root, ".subagent/config.yaml",
                  "runner: { model_runner: my-runner }\n"
                  "models:\n"
                  "  local:\n"
                  "    base_url: http://127.0.0.1:8080/v1/\n"
                  "    model: qwen2.5-coder\n"
                  "  hosted:\n"
                  "    base_url: https://api.example.invalid/v1\n"
                  "    model: big-1\n"
                  "    api_key_env: EXAMPLE_API_KEY\n"
                  "    input_cents_per_mtok: 300\n"
                  "    output_cents_per_mtok: 1500\n"
                  "    max_tokens: 4096\n"
                  "    temperature: 0.2\n"
                  "    headers: { X-Team: agents }\n"
                  "default_model: sonnet\n"
                  "model_aliases: { Sonnet: hosted, haiku: local }\n");
  config = subagent_config_load_for_root (root, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_config_get_model_runner (config), ==, "my-runner");
  g_assert_cmpstr (subagent_config_get_default_model (config), ==, "sonnet");
  names = subagent_config_list_models (config);
  g_assert_cmpstr (names[0], ==, "hosted");
  g_assert_cmpstr (names[1], ==, "local");
  g_assert_null (names[2]);
  local = subagent_config_get_model (config, "local");
  g_assert_cmpstr (json_object_get_string_member (local, "name"), ==, "local");
  g_assert_false (json_object_has_member (local, "api_key_env"));
  g_assert_cmpint (json_object_get_int_member (local, "read_timeout_seconds"), ==, 120);
  g_assert_cmpint (json_object_get_int_member (local, "max_retries"), ==, 2);
  g_assert_cmpfloat (json_object_get_double_member (local, "input_cents_per_mtok"), ==, 0);
  hosted = subagent_config_get_model (config, "hosted");
  g_assert_cmpstr (json_object_get_string_member (hosted, "api_key_env"), ==, "EXAMPLE_API_KEY");
  g_assert_cmpint (json_object_get_int_member (hosted, "max_tokens"), ==, 4096);
  g_assert_cmpfloat (json_object_get_double_member (hosted, "output_cents_per_mtok"), ==, 1500);
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (hosted, "headers"), "X-Team"), ==, "agents");
  /* Aliases ignore case: a Claude Code file's `model: sonnet`. */
  alias = subagent_config_get_model (config, "SONNET");
  g_assert_true (alias == hosted);
  g_assert_true (subagent_config_get_model (config, "haiku") == local);
  g_assert_null (subagent_config_get_model (config, "opus"));
  sat_rm_rf (root);
}

static void
test_bad_models (void)
{
  static const struct { const char *yaml; const char *key; } cases[] = {
    { "models: [a]\n", "“models”" },
    { "models: { m: { model: x } }\n", "models.m.base_url" },
    { "models: { m: { base_url: ftp://x, model: x } }\n", "models.m.base_url" },
    { "models: { m: { base_url: http://x } }\n", "models.m.model" },
    { "models: { m: { base_url: http://x, model: x, api_key_env: sk-abc123 } }\n", "models.m.api_key_env" },
    { "models: { m: { base_url: http://x, model: x, api_key: sk-abc123 } }\n", "models.m.api_key" },
    { "models: { m: { base_url: http://x, model: x, input_cents_per_mtok: -1 } }\n", "models.m.input_cents_per_mtok" },
    { "models: { m: { base_url: http://x, model: x, temperature: 3 } }\n", "models.m.temperature" },
    { "models: { m: { base_url: http://x, model: x, max_tokens: 0 } }\n", "models.m.max_tokens" },
    { "models: { m: { base_url: http://x, model: x, headers: { A: [1] } } }\n", "models.m.headers" },
    { "models: { m: { base_url: http://x, model: x } }\ndefault_model: n\n", "“default_model”" },
    { "models: { m: { base_url: http://x, model: x } }\nmodel_aliases: { sonnet: n }\n", "model_aliases.sonnet" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *root = sat_make_temp_dir ("config");
      g_autoptr(GError) error = NULL;
      g_autoptr(SubagentConfig) config = NULL;

      sat_write_file (root, ".subagent/config.yaml", cases[i].yaml);
      config = subagent_config_load_for_root (root, &error);
      g_assert_null (config);
      g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
      if (strstr (error->message, cases[i].key) == NULL)
        g_error ("case %u: “%s” does not name %s", i, error->message, cases[i].key);
      sat_rm_rf (root);
    }
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
  g_test_add_func ("/config/mode-names-not-interned", test_mode_names_not_interned);
  g_test_add_func ("/config/sink-section-nested-under-approvals", test_sink_section_nested_under_approvals);
  g_test_add_func ("/config/scalar-top-level-key-warns", test_scalar_top_level_key_warns);
  g_test_add_func ("/config/models", test_models);
  g_test_add_func ("/config/bad-models", test_bad_models);
  return g_test_run ();
}
