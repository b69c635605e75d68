/* test-def.c: SubagentDef (defaults, every field, validation) and the YAML
 * reader behind definition files.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>

#include "test-support.h"
#include "subagent-def-private.h"
#include "subagent-yaml-private.h"

static JsonObject *
object_from_json (const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = json_from_string (text, &error);

  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
  return json_object_ref (json_node_get_object (node));
}

static JsonObject *
object_from_yaml (const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = subagent_yaml_parse (text, -1, "test.yaml", &error);

  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
  return json_object_ref (json_node_get_object (node));
}

static void
assert_strv (const char * const *strv,
             const char         *first,
             ...) G_GNUC_NULL_TERMINATED;

static void
assert_strv (const char * const *strv,
             const char         *first,
             ...)
{
  va_list ap;
  guint i = 0;

  g_assert_nonnull (strv);
  va_start (ap, first);
  for (const char *s = first; s != NULL; s = va_arg (ap, const char *), i++)
    g_assert_cmpstr (strv[i], ==, s);
  va_end (ap);
  g_assert_null (strv[i]);
}

static void
assert_defaults (SubagentDef *def)
{
  g_assert_cmpstr (subagent_def_get_description (def), ==, "");
  g_assert_cmpstr (subagent_def_get_system_prompt (def), ==, "");
  g_assert_null (subagent_def_get_model (def));
  g_assert_cmpint (subagent_def_get_permission_mode (def), ==, SUBAGENT_PERMISSION_MODE_INHERIT);
  g_assert_cmpuint (subagent_def_get_max_iterations (def), ==, 5);
  g_assert_cmpuint (subagent_def_get_max_tool_calls (def), ==, 8);
  g_assert_null (subagent_def_get_tool_whitelist (def));
  g_assert_null (subagent_def_get_disallowed_tools (def));
  g_assert_cmpuint (subagent_def_get_max_depth (def), ==, 1);
  g_assert_cmpstr (subagent_def_get_isolation (def), ==, "shared");
  g_assert_false (subagent_def_get_background (def));
  g_assert_null (subagent_def_get_effort (def));
  g_assert_null (subagent_def_get_command (def));
  g_assert_null (subagent_def_get_write_scope (def));
  g_assert_cmpfloat (subagent_def_get_cpu_quota (def), ==, 0.0);
  g_assert_null (subagent_def_get_memory_limit (def));
  g_assert_cmpuint (subagent_def_get_timeout_seconds (def), ==, 0);
  g_assert_cmpfloat (subagent_def_get_max_cost_cents (def), ==, 0.0);
  g_assert_cmpuint (subagent_def_get_max_follow_ups (def), ==, 3);
  g_assert_null (subagent_def_get_network (def));
}

static void
test_defaults_new (void)
{
  g_autoptr(SubagentDef) def = subagent_def_new ("helper");

  g_assert_cmpstr (subagent_def_get_name (def), ==, "helper");
  g_assert_null (subagent_def_get_source_path (def));
  assert_defaults (def);
}

static void
test_defaults_from_json (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) object = object_from_json ("{\"name\": \"helper\", \"model\": null, \"tools\": null}");
  g_autoptr(SubagentDef) def = subagent_def_new_from_json (object, "/w/helper.json", &error);

  g_assert_no_error (error);
  g_assert_cmpstr (subagent_def_get_source_path (def), ==, "/w/helper.json");
  assert_defaults (def);
}

static const char every_field_json[] =
  "{\"name\": \"every\", \"description\": \"d\", \"system_prompt\": \"p\", \"model\": \"m\","
  " \"permission_mode\": \"workspace_write\", \"max_iterations\": 11, \"max_tool_calls\": 0,"
  " \"tools\": [\"Read\", \"Grep\"], \"disallowed_tools\": \"Bash\", \"max_depth\": 4,"
  " \"isolation\": \"Worktree\", \"background\": true, \"effort\": \"high\","
  " \"command\": [\"python3\", \"-u\", \"a b.py\"], \"write_scope\": [\"docs/\", \".md\"],"
  " \"cpu_quota\": 1.5, \"memory_limit\": 512, \"timeout_seconds\": 60, \"max_cost_cents\": 12.5,"
  " \"max_follow_ups\": 0, \"network\": \"bridge\"}";

static void
assert_every_field (SubagentDef *def)
{
  g_assert_cmpstr (subagent_def_get_name (def), ==, "every");
  g_assert_cmpstr (subagent_def_get_description (def), ==, "d");
  g_assert_cmpstr (subagent_def_get_system_prompt (def), ==, "p");
  g_assert_cmpstr (subagent_def_get_model (def), ==, "m");
  g_assert_cmpint (subagent_def_get_permission_mode (def), ==, SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE);
  g_assert_cmpuint (subagent_def_get_max_iterations (def), ==, 11);
  g_assert_cmpuint (subagent_def_get_max_tool_calls (def), ==, 0);
  assert_strv (subagent_def_get_tool_whitelist (def), "Read", "Grep", NULL);
  assert_strv (subagent_def_get_disallowed_tools (def), "Bash", NULL);
  g_assert_cmpuint (subagent_def_get_max_depth (def), ==, 4);
  g_assert_cmpstr (subagent_def_get_isolation (def), ==, "worktree");
  g_assert_true (subagent_def_get_background (def));
  g_assert_cmpstr (subagent_def_get_effort (def), ==, "high");
  assert_strv (subagent_def_get_command (def), "python3", "-u", "a b.py", NULL);
  assert_strv (subagent_def_get_write_scope (def), "docs/", ".md", NULL);
  g_assert_cmpfloat (subagent_def_get_cpu_quota (def), ==, 1.5);
  g_assert_cmpstr (subagent_def_get_memory_limit (def), ==, "512");
  g_assert_cmpuint (subagent_def_get_timeout_seconds (def), ==, 60);
  g_assert_cmpfloat (subagent_def_get_max_cost_cents (def), ==, 12.5);
  g_assert_cmpuint (subagent_def_get_max_follow_ups (def), ==, 0);
  g_assert_cmpstr (subagent_def_get_network (def), ==, "bridge");
}

static void
test_json_every_field (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) object = object_from_json (every_field_json);
  g_autoptr(SubagentDef) def = subagent_def_new_from_json (object, NULL, &error);

  g_assert_no_error (error);
  assert_every_field (def);
}

static void
test_yaml_every_field (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) object = object_from_yaml (
    "name: every\ndescription: d\nprompt: p\nmodel: m\npermission_mode: workspace-write\n"
    "max_iterations: 11\nmax_tool_calls: 0\ntool_whitelist: [Read, Grep]\ndisallowedTools: Bash\n"
    "max_depth: 4\nisolation: worktree\nbackground: yes\neffort: high\n"
    "command: [python3, -u, 'a b.py']\nwrite_scope:\n  - docs/\n  - .md\ncpu_quota: 1.5\n"
    "memory_limit: 512\ntimeout_seconds: 60\nmax_cost_cents: 12.5\nmax_follow_ups: 0\nnetwork: bridge\n");
  g_autoptr(SubagentDef) def = subagent_def_new_from_json (object, "every.yaml", &error);

  g_assert_no_error (error);
  assert_every_field (def);
}

static void
test_properties_construct_only (void)
{
  const char *tools[] = { "Read", NULL };
  g_autoptr(SubagentDef) def = g_object_new (SUBAGENT_TYPE_DEF, "name", "props", "max-depth", 3,
                                             "tool-whitelist", tools, "permission-mode",
                                             SUBAGENT_PERMISSION_MODE_PROMPT, NULL);
  g_autofree char *isolation = NULL;
  guint n_pspecs = 0;
  g_autofree GParamSpec **pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (def), &n_pspecs);

  g_assert_cmpuint (subagent_def_get_max_depth (def), ==, 3);
  assert_strv (subagent_def_get_tool_whitelist (def), "Read", NULL);
  g_assert_cmpint (subagent_def_get_permission_mode (def), ==, SUBAGENT_PERMISSION_MODE_PROMPT);
  g_object_get (def, "isolation", &isolation, NULL);
  g_assert_cmpstr (isolation, ==, "shared");

  for (guint i = 0; i < n_pspecs; i++)
    g_assert_true (pspecs[i]->flags & G_PARAM_CONSTRUCT_ONLY);
  g_assert_cmpuint (n_pspecs, ==, 25);

  if (g_test_subprocess ())
    {
      g_object_set (def, "max-depth", 9, NULL);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*construct*");
}

static void
test_new_rejects_bad_name (void)
{
  g_assert_true (subagent_def_name_is_valid ("Code_reviewer-2"));
  g_assert_false (subagent_def_name_is_valid ("two words"));
  g_assert_false (subagent_def_name_is_valid ("../etc"));
  g_assert_false (subagent_def_name_is_valid (""));
  g_assert_false (subagent_def_name_is_valid (NULL));

  if (g_test_subprocess ())
    {
      subagent_def_new ("no/slashes");
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*subagent_def_name_is_valid*");
}

static void
test_claude_code_comma_tools (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) object = object_from_json (
    "{\"name\": \"cc\", \"tools\": \"Read, Grep,  Glob ,, Read\", \"disallowedTools\": \"Bash\","
    " \"model\": \"inherit\"}");
  g_autoptr(SubagentDef) def = subagent_def_new_from_json (object, NULL, &error);
  g_autoptr(JsonObject) empty = object_from_json ("{\"name\": \"none\", \"tools\": \"\"}");
  g_autoptr(SubagentDef) no_tools = subagent_def_new_from_json (empty, NULL, &error);

  g_assert_no_error (error);
  assert_strv (subagent_def_get_tool_whitelist (def), "Read", "Grep", "Glob", NULL);
  assert_strv (subagent_def_get_disallowed_tools (def), "Bash", NULL);
  /* Claude Code's model: inherit is the parent's model */
  g_assert_null (subagent_def_get_model (def));
  /* an empty list is "no tools", unlike a missing key ("all tools") */
  g_assert_nonnull (subagent_def_get_tool_whitelist (no_tools));
  g_assert_null (subagent_def_get_tool_whitelist (no_tools)[0]);
}

static void
test_command_string_runs_in_shell (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) object = object_from_json ("{\"name\": \"c\", \"command\": \"cat; echo x >> README\"}");
  g_autoptr(SubagentDef) def = subagent_def_new_from_json (object, NULL, &error);
  g_autoptr(JsonObject) list = object_from_json ("{\"name\": \"l\", \"command\": [\"echo\", \"x >> README\"]}");
  g_autoptr(SubagentDef) argv_def = subagent_def_new_from_json (list, NULL, &error);

  /* A string is a shell command line; a list runs as is (issue 12). */
  g_assert_no_error (error);
  assert_strv (subagent_def_get_command (def), "/bin/sh", "-c", "cat; echo x >> README", NULL);
  assert_strv (subagent_def_get_command (argv_def), "echo", "x >> README", NULL);
}

typedef struct {
  const char *json;
  int code;
  const char *field;     /* must appear in the message */
  const char *pointer;
} BadCase;

static const BadCase bad_cases[] = {
  { "{\"description\": \"x\"}", SUBAGENT_DEF_ERROR_MISSING_NAME, "name", "/name" },
  { "{\"name\": \"\"}", SUBAGENT_DEF_ERROR_MISSING_NAME, "name", "/name" },
  { "{\"name\": null}", SUBAGENT_DEF_ERROR_MISSING_NAME, "name", "/name" },
  { "{\"name\": 5}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "name", "/name" },
  { "{\"name\": \"two words\"}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "name", "/name" },
  { "{\"name\": \"x\", \"description\": 5}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "description", "/description" },
  { "{\"name\": \"x\", \"prompt\": [1]}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "prompt", "/prompt" },
  { "{\"name\": \"x\", \"model\": 3}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "model", "/model" },
  { "{\"name\": \"x\", \"permission_mode\": \"root\"}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "permission_mode", "/permission_mode" },
  { "{\"name\": \"x\", \"max_iterations\": \"five\"}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "max_iterations", "/max_iterations" },
  { "{\"name\": \"x\", \"max_iterations\": 0}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "max_iterations", "/max_iterations" },
  { "{\"name\": \"x\", \"max_iterations\": 2.5}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "max_iterations", "/max_iterations" },
  { "{\"name\": \"x\", \"max_tool_calls\": -1}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "max_tool_calls", "/max_tool_calls" },
  { "{\"name\": \"x\", \"tools\": 5}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "tools", "/tools" },
  { "{\"name\": \"x\", \"tools\": [\"Read\", 1]}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "tools", "/tools/1" },
  { "{\"name\": \"x\", \"tools\": [\"\"]}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "tools", "/tools/0" },
  { "{\"name\": \"x\", \"tools\": \"Read\", \"tool_whitelist\": \"Grep\"}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "tool_whitelist", "/tool_whitelist" },
  { "{\"name\": \"x\", \"disallowedTools\": {\"a\": 1}}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "disallowedTools", "/disallowedTools" },
  { "{\"name\": \"x\", \"max_depth\": 0}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "max_depth", "/max_depth" },
  { "{\"name\": \"x\", \"isolation\": \"no/such mode\"}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "isolation", "/isolation" },
  { "{\"name\": \"x\", \"background\": \"yes\"}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "background", "/background" },
  { "{\"name\": \"x\", \"effort\": false}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "effort", "/effort" },
  { "{\"name\": \"x\", \"command\": \"\"}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "command", "/command" },
  { "{\"name\": \"x\", \"command\": []}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "command", "/command" },
  { "{\"name\": \"x\", \"command\": [\"a\", 2]}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "command", "/command/1" },
  { "{\"name\": \"x\", \"write_scope\": \"docs\"}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "write_scope", "/write_scope" },
  { "{\"name\": \"x\", \"write_scope\": [\"ok\", \"/etc\"]}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "write_scope", "/write_scope/1" },
  { "{\"name\": \"x\", \"write_scope\": [\"a/../../b\"]}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "write_scope", "/write_scope/0" },
  { "{\"name\": \"x\", \"cpu_quota\": -1}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "cpu_quota", "/cpu_quota" },
  { "{\"name\": \"x\", \"cpu_quota\": \"2\"}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "cpu_quota", "/cpu_quota" },
  { "{\"name\": \"x\", \"memory_limit\": \"lots\"}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "memory_limit", "/memory_limit" },
  { "{\"name\": \"x\", \"memory_limit\": 0}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "memory_limit", "/memory_limit" },
  { "{\"name\": \"x\", \"timeout_seconds\": 1e12}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "timeout_seconds", "/timeout_seconds" },
  { "{\"name\": \"x\", \"max_cost_cents\": -5}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "max_cost_cents", "/max_cost_cents" },
  { "{\"name\": \"x\", \"max_follow_ups\": true}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "max_follow_ups", "/max_follow_ups" },
  { "{\"name\": \"x\", \"network\": \"bad net\"}", SUBAGENT_DEF_ERROR_INVALID_VALUE, "network", "/network" },
};

static void
test_invalid_values_name_field_and_file (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (bad_cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonObject) object = object_from_json (bad_cases[i].json);
      g_autofree char *pointer = NULL;
      g_autofree char *reason = NULL;
      g_autofree char *quoted = g_strdup_printf ("“%s”", bad_cases[i].field);
      g_autoptr(SubagentDef) def = subagent_def_new_from_json_full (object, "/w/agents/bad.json",
                                                                    &pointer, &reason, &error);

      g_test_message ("case %u: %s", i, bad_cases[i].json);
      g_assert_null (def);
      g_assert_error (error, SUBAGENT_DEF_ERROR, bad_cases[i].code);
      g_assert_true (g_str_has_prefix (error->message, "/w/agents/bad.json: "));
      g_assert_nonnull (strstr (error->message, quoted));
      g_assert_nonnull (strstr (reason, quoted));
      g_assert_null (strstr (reason, "/w/agents/bad.json"));
      g_assert_cmpstr (pointer, ==, bad_cases[i].pointer);
    }
}

static void
test_unknown_keys_ignored (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) object = object_from_json ("{\"name\": \"u\", \"color\": \"blue\", \"hooks\": {}}");
  g_autoptr(SubagentDef) def = subagent_def_new_from_json (object, NULL, &error);

  g_assert_no_error (error);
  assert_defaults (def);
  g_assert_false (subagent_def_is_known_key ("color"));
  g_assert_false (subagent_def_is_known_key ("source_path"));
  for (const char * const *k = (const char * const[]) { "name", "prompt", "system_prompt", "tools", "tool_whitelist",
                                                       "disallowedTools", "disallowed_tools", "network",
                                                       "max_follow_ups", NULL }; *k; k++)
    g_assert_true (subagent_def_is_known_key (*k));
}

static void
test_to_json_round_trip (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) object = object_from_json (every_field_json);
  g_autoptr(SubagentDef) def = subagent_def_new_from_json (object, "/w/every.json", &error);
  g_autoptr(JsonObject) out = subagent_def_to_json (def);
  g_autoptr(SubagentDef) again = NULL;
  g_autoptr(JsonObject) out_again = NULL;
  g_autoptr(SubagentDef) plain = subagent_def_new ("plain");
  g_autoptr(JsonObject) plain_json = subagent_def_to_json (plain);
  g_autoptr(JsonNode) a = NULL;
  g_autoptr(JsonNode) b = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (json_object_get_size (out), ==, 25);
  g_assert_cmpstr (json_object_get_string_member (out, "permission_mode"), ==, "workspace-write");
  g_assert_cmpstr (json_object_get_string_member (out, "source_path"), ==, "/w/every.json");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (out, "tool_whitelist")), ==, 2);

  again = subagent_def_new_from_json (out, "/w/every.json", &error);
  g_assert_no_error (error);
  assert_every_field (again);
  out_again = subagent_def_to_json (again);
  a = json_node_init_object (json_node_alloc (), out);
  b = json_node_init_object (json_node_alloc (), out_again);
  g_assert_true (json_node_equal (a, b));

  /* unset optional fields are null, not missing */
  g_assert_true (json_object_has_member (plain_json, "model"));
  g_assert_true (json_object_get_null_member (plain_json, "model"));
  g_assert_true (json_object_get_null_member (plain_json, "tool_whitelist"));
  g_assert_cmpint (json_object_get_int_member (plain_json, "max_follow_ups"), ==, 3);
}

/* ---- YAML reader -------------------------------------------------------- */

static void
test_yaml_scalars_typed (void)
{
  g_autoptr(JsonObject) o = object_from_yaml (
    "a: ~\nb: yes\nc: No\nd: 42\ne: -3.5\nf: 0x1F\ng: '42'\nh: \"true\"\ni: hello world\n"
    "j: 1e3\nk: .inf\nl:\nm: 007\nn: !!str 12\no: 99999999999999999999\np: null\n");

  g_assert_true (json_object_get_null_member (o, "a"));
  g_assert_true (json_object_get_boolean_member (o, "b"));
  g_assert_false (json_object_get_boolean_member (o, "c"));
  g_assert_cmpint (json_node_get_value_type (json_object_get_member (o, "d")), ==, G_TYPE_INT64);
  g_assert_cmpint (json_object_get_int_member (o, "d"), ==, 42);
  g_assert_cmpfloat (json_object_get_double_member (o, "e"), ==, -3.5);
  g_assert_cmpint (json_object_get_int_member (o, "f"), ==, 31);
  g_assert_cmpstr (json_object_get_string_member (o, "g"), ==, "42");
  g_assert_cmpstr (json_object_get_string_member (o, "h"), ==, "true");
  g_assert_cmpstr (json_object_get_string_member (o, "i"), ==, "hello world");
  g_assert_cmpfloat (json_object_get_double_member (o, "j"), ==, 1000.0);
  g_assert_cmpstr (json_object_get_string_member (o, "k"), ==, ".inf");
  g_assert_true (json_object_get_null_member (o, "l"));
  g_assert_cmpint (json_object_get_int_member (o, "m"), ==, 7);
  g_assert_cmpstr (json_object_get_string_member (o, "n"), ==, "12");
  g_assert_cmpint (json_node_get_value_type (json_object_get_member (o, "o")), ==, G_TYPE_DOUBLE);
  g_assert_true (json_object_get_null_member (o, "p"));
}

static void
test_yaml_structure (void)
{
  g_autoptr(JsonObject) o = object_from_yaml (
    "list:\n  - one\n  - {k: v, n: [1, 2]}\nliteral: |\n  line 1\n  line 2\nfolded: >\n  a\n  b\n"
    "base: &b {x: 1}\ncopy: *b\n");
  JsonArray *list = json_object_get_array_member (o, "list");
  JsonObject *copy = json_object_get_object_member (o, "copy");

  g_assert_cmpuint (json_array_get_length (list), ==, 2);
  g_assert_cmpstr (json_array_get_string_element (list, 0), ==, "one");
  g_assert_cmpint (json_array_get_length (json_object_get_array_member (json_array_get_object_element (list, 1), "n")), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (o, "literal"), ==, "line 1\nline 2\n");
  g_assert_cmpstr (json_object_get_string_member (o, "folded"), ==, "a b\n");
  g_assert_cmpint (json_object_get_int_member (copy, "x"), ==, 1);
  /* an alias is a copy, not the anchored object itself */
  g_assert_true (copy != json_object_get_object_member (o, "base"));
}

static void
test_yaml_empty_is_null (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) empty = subagent_yaml_parse ("", 0, NULL, &error);
  g_autoptr(JsonNode) comment = subagent_yaml_parse ("# nothing\n", -1, NULL, &error);

  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_NULL (empty));
  g_assert_true (JSON_NODE_HOLDS_NULL (comment));
}

typedef struct {
  const char *text;
  guint line;
  guint column;
  const char *problem;   /* pattern */
} YamlErrorCase;

static void
test_yaml_errors_have_position (void)
{
  static const YamlErrorCase cases[] = {
    { "name: x\ndescription: fine\n  model: oops\n", 3, 8, "mapping values are not allowed*" },
    { "a: 1\nb: 2\na: 3\n", 3, 1, "duplicate key “a”*" },
    { "a: 1\n---\nb: 2\n", 2, 1, "a second YAML document*" },
    { "a: *nowhere\n", 1, 4, "alias “*nowhere”*" },
    { "? [1, 2]\n: v\n", 1, 3, "a mapping key must be*" },
    { "tools: [Read, Grep\nmodel: x\n", 2, 6, "did not find expected*(while parsing a flow sequence at line 1, column 8)" },
    { "a: \"ok\"\nb: \xff\xfe\n", 2, 4, "*UTF-8*" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto(SubagentYamlParseInfo) info = { .want_marks = TRUE };
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) node = subagent_yaml_parse_full (cases[i].text, -1, "dir/f.yaml", &info, &error);
      g_autofree char *prefix = g_strdup_printf ("dir/f.yaml:%u:%u: ", cases[i].line, cases[i].column);
      g_autofree char *shown = g_strescape (cases[i].text, NULL);

      g_test_message ("case %u: %s", i, shown);
      g_assert_null (node);
      g_assert_error (error, SUBAGENT_DEF_ERROR, SUBAGENT_DEF_ERROR_PARSE);
      g_assert_true (g_str_has_prefix (error->message, prefix));
      g_assert_cmpuint (info.error_mark.line, ==, cases[i].line);
      g_assert_cmpuint (info.error_mark.column, ==, cases[i].column);
      g_assert_true (g_pattern_match_simple (cases[i].problem, info.problem));
      g_assert_true (g_str_has_suffix (error->message, info.problem));
      g_assert_null (info.marks);
    }
}

static void
test_yaml_limits (void)
{
  g_autoptr(GString) bomb = g_string_new ("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
  g_autoptr(GString) deep = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;

  /* each level holds ten copies of the one before: 10^6 values at level 6 */
  for (char c = 'b'; c <= 'g'; c++)
    g_string_append_printf (bomb, "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n",
                            c, c, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
  node = subagent_yaml_parse (bomb->str, -1, "bomb.yaml", &error);
  g_assert_null (node);
  g_assert_error (error, SUBAGENT_DEF_ERROR, SUBAGENT_DEF_ERROR_PARSE);
  g_assert_nonnull (strstr (error->message, "more than"));
  g_clear_error (&error);

  for (guint i = 0; i < 300; i++)
    g_string_append_c (deep, '[');
  node = subagent_yaml_parse (deep->str, -1, "deep.yaml", &error);
  g_assert_null (node);
  g_assert_error (error, SUBAGENT_DEF_ERROR, SUBAGENT_DEF_ERROR_PARSE);
  g_assert_nonnull (strstr (error->message, "nesting deeper"));
}

static void
test_yaml_marks (void)
{
  g_auto(SubagentYamlParseInfo) info = { .first_line = 2, .want_marks = TRUE };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = subagent_yaml_parse_full ("name: x\ntools:\n  - Read\n  - Grep\na/b~c: 1\n", -1,
                                                       NULL, &info, &error);
  SubagentYamlMark mark;

  g_assert_no_error (error);
  g_assert_nonnull (node);
  g_assert_true (subagent_yaml_parse_info_get_mark (&info, "", &mark));
  g_assert_cmpuint (mark.line, ==, 2);
  g_assert_true (subagent_yaml_parse_info_get_mark (&info, "/tools", &mark));
  g_assert_cmpuint (mark.line, ==, 3);
  g_assert_cmpuint (mark.column, ==, 1);
  g_assert_true (subagent_yaml_parse_info_get_mark (&info, "/tools/1", &mark));
  g_assert_cmpuint (mark.line, ==, 5);
  g_assert_cmpuint (mark.column, ==, 5);
  g_assert_true (subagent_yaml_parse_info_get_mark (&info, "/a~1b~0c", &mark));
  g_assert_cmpuint (mark.line, ==, 6);
  g_assert_false (subagent_yaml_parse_info_get_mark (&info, "/missing", &mark));
}

static void
test_yaml_parse_file (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-yaml");
  g_autofree char *path = g_build_filename (dir, "config.yaml", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing.yaml", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(JsonNode) none = NULL;

  sat_write_file (dir, "config.yaml", "plugins:\n  isolation: [worktree]\n");
  node = subagent_yaml_parse_file (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_array_get_string_element (
    json_object_get_array_member (json_object_get_object_member (json_node_get_object (node), "plugins"), "isolation"), 0),
    ==, "worktree");

  none = subagent_yaml_parse_file (missing, NULL, &error);
  g_assert_null (none);
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  sat_rm_rf (dir);
}

static void
test_front_matter_split (void)
{
  char *front = NULL;
  char *body = NULL;
  guint body_line = 0;

  g_assert_true (subagent_yaml_split_front_matter ("---\nname: a\n---\nBody\n", &front, &body, &body_line));
  g_assert_cmpstr (front, ==, "name: a\n");
  g_assert_cmpstr (body, ==, "Body\n");
  g_assert_cmpuint (body_line, ==, 4);
  g_clear_pointer (&front, g_free);
  g_clear_pointer (&body, g_free);

  /* BOM, CRLF, trailing blanks after the marker, "..." as the closer */
  g_assert_true (subagent_yaml_split_front_matter ("\xEF\xBB\xBF---  \r\nname: a\r\nx: 1\r\n...\r\n\r\nBody", &front, &body, &body_line));
  g_assert_cmpstr (front, ==, "name: a\r\nx: 1\r\n");
  g_assert_cmpstr (body, ==, "\r\nBody");
  g_assert_cmpuint (body_line, ==, 5);
  g_clear_pointer (&front, g_free);
  g_clear_pointer (&body, g_free);

  /* empty front matter, closer at the very end */
  g_assert_true (subagent_yaml_split_front_matter ("---\n---", &front, &body, &body_line));
  g_assert_cmpstr (front, ==, "");
  g_assert_cmpstr (body, ==, "");
  g_clear_pointer (&front, g_free);
  g_clear_pointer (&body, g_free);

  /* no front matter: "----" and "--- x" do not open one */
  for (const char * const *t = (const char * const[]) { "Just text\n", "----\nname: a\n---\n", "--- x\n---\n", "", NULL }; *t; t++)
    {
      g_assert_false (subagent_yaml_split_front_matter (*t, &front, &body, &body_line));
      g_assert_null (front);
      g_assert_cmpstr (body, ==, *t);
      g_assert_cmpuint (body_line, ==, 1);
      g_assert_false (subagent_yaml_has_front_matter_opening (*t));
      g_clear_pointer (&body, g_free);
    }

  /* opened but never closed */
  g_assert_false (subagent_yaml_split_front_matter ("---\nname: a\nBody\n", &front, &body, NULL));
  g_assert_true (subagent_yaml_has_front_matter_opening ("---\nname: a\nBody\n"));
  g_assert_null (front);
  g_clear_pointer (&body, g_free);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/def/defaults/new", test_defaults_new);
  g_test_add_func ("/def/defaults/from-json", test_defaults_from_json);
  g_test_add_func ("/def/fields/every-field-from-json", test_json_every_field);
  g_test_add_func ("/def/fields/every-field-from-yaml", test_yaml_every_field);
  g_test_add_func ("/def/fields/construct-only-properties", test_properties_construct_only);
  g_test_add_func ("/def/fields/new-rejects-bad-name", test_new_rejects_bad_name);
  g_test_add_func ("/def/fields/claude-code-comma-separated-tools", test_claude_code_comma_tools);
  g_test_add_func ("/def/fields/command-string-runs-in-shell", test_command_string_runs_in_shell);
  g_test_add_func ("/def/validation/invalid-values-name-field-and-file", test_invalid_values_name_field_and_file);
  g_test_add_func ("/def/validation/unknown-keys-ignored", test_unknown_keys_ignored);
  g_test_add_func ("/def/json/to-json-round-trips-every-field", test_to_json_round_trip);
  g_test_add_func ("/yaml/scalars/plain-typed-quoted-strings", test_yaml_scalars_typed);
  g_test_add_func ("/yaml/structure/nested-block-scalars-aliases", test_yaml_structure);
  g_test_add_func ("/yaml/structure/empty-is-null", test_yaml_empty_is_null);
  g_test_add_func ("/yaml/errors/file-line-column", test_yaml_errors_have_position);
  g_test_add_func ("/yaml/errors/alias-bomb-and-deep-nesting-refused", test_yaml_limits);
  g_test_add_func ("/yaml/marks/json-pointer-positions", test_yaml_marks);
  g_test_add_func ("/yaml/file/parse-and-missing", test_yaml_parse_file);
  g_test_add_func ("/yaml/front-matter/split", test_front_matter_split);
  return g_test_run ();
}
