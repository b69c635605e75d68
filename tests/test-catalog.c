/* test-catalog.c: SubagentCatalog (loading .subagent and Claude Code agent
 * files, lookups, diagnostics) and `subagentctl defs`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <unistd.h>

#include "test-support.h"

static char *
fixture (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "fixtures", "defs", name, NULL);
}

static SubagentCatalog *
load_fixture (const char *name)
{
  g_autofree char *root = fixture (name);
  g_autoptr(GError) error = NULL;
  SubagentCatalog *catalog = subagent_catalog_new_for_root (root, &error);

  g_assert_no_error (error);
  g_assert_nonnull (catalog);
  return catalog;
}

/* The one diagnostic of the file ending in @suffix with @code. */
static SubagentDiagnostic *
find_diagnostic (SubagentCatalog *catalog,
                 const char      *suffix,
                 SubagentDefError code)
{
  GPtrArray *diagnostics = subagent_catalog_get_diagnostics (catalog);
  SubagentDiagnostic *found = NULL;

  for (guint i = 0; i < diagnostics->len; i++)
    {
      SubagentDiagnostic *d = diagnostics->pdata[i];

      if (g_str_has_suffix (subagent_diagnostic_get_file (d), suffix) && subagent_diagnostic_get_code (d) == code)
        {
          g_assert_null (found);
          found = d;
        }
    }
  if (found == NULL)
    g_error ("no diagnostic with code %d for %s", code, suffix);
  return found;
}

static void
assert_diagnostic (SubagentDiagnostic         *d,
                   guint                       line,
                   guint                       column,
                   SubagentDiagnosticSeverity  severity,
                   const char                 *reason_pattern)
{
  g_test_message ("%s:%u:%u: %s", subagent_diagnostic_get_file (d), subagent_diagnostic_get_line (d),
                  subagent_diagnostic_get_column (d), subagent_diagnostic_get_reason (d));
  g_assert_cmpuint (subagent_diagnostic_get_line (d), ==, line);
  g_assert_cmpuint (subagent_diagnostic_get_column (d), ==, column);
  g_assert_cmpint (subagent_diagnostic_get_severity (d), ==, severity);
  g_assert_true (g_pattern_match_simple (reason_pattern, subagent_diagnostic_get_reason (d)));
}

static void
test_missing_directories_are_empty (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-catalog");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentCatalog) catalog = subagent_catalog_new ();
  g_autoptr(GPtrArray) list = NULL;

  g_assert_true (subagent_catalog_load (catalog, root, &error));
  g_assert_no_error (error);
  list = subagent_catalog_list (catalog);
  g_assert_cmpuint (list->len, ==, 0);
  g_assert_cmpuint (subagent_catalog_get_diagnostics (catalog)->len, ==, 0);
  g_assert_false (subagent_catalog_has_errors (catalog));
  sat_rm_rf (root);
}

static void
test_root_must_be_a_directory (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-catalog");
  g_autofree char *file = g_build_filename (root, "plain-file", NULL);
  g_autofree char *missing = g_build_filename (root, "missing", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentCatalog) catalog = NULL;

  sat_write_file (root, "plain-file", "x");
  catalog = subagent_catalog_new_for_root (missing, &error);
  g_assert_null (catalog);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, missing));
  g_clear_error (&error);

  catalog = subagent_catalog_new_for_root (file, &error);
  g_assert_null (catalog);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY);
  sat_rm_rf (root);
}

static void
test_yaml_every_field (void)
{
  g_autoptr(SubagentCatalog) catalog = load_fixture ("full");
  SubagentDef *def = subagent_catalog_lookup (catalog, "full-yaml");
  const char * const *strv;

  g_assert_nonnull (def);
  g_assert_cmpstr (subagent_def_get_name (def), ==, "Full_Yaml");
  g_assert_cmpstr (subagent_def_get_description (def), ==, "Reviews patches and reports problems");
  g_assert_cmpstr (subagent_def_get_system_prompt (def), ==, "You review patches.\nReport problems only.\n");
  g_assert_cmpstr (subagent_def_get_model (def), ==, "claude-sonnet-4");
  g_assert_cmpint (subagent_def_get_permission_mode (def), ==, SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE);
  g_assert_cmpuint (subagent_def_get_max_iterations (def), ==, 12);
  g_assert_cmpuint (subagent_def_get_max_tool_calls (def), ==, 40);
  strv = subagent_def_get_tool_whitelist (def);
  g_assert_cmpuint (g_strv_length ((GStrv) strv), ==, 3);
  g_assert_cmpstr (strv[2], ==, "Bash");
  strv = subagent_def_get_disallowed_tools (def);
  g_assert_cmpuint (g_strv_length ((GStrv) strv), ==, 2);
  g_assert_cmpstr (strv[1], ==, "Edit");
  g_assert_cmpuint (subagent_def_get_max_depth (def), ==, 2);
  g_assert_cmpstr (subagent_def_get_isolation (def), ==, "worktree");
  g_assert_true (subagent_def_get_background (def));
  g_assert_cmpstr (subagent_def_get_effort (def), ==, "high");
  strv = subagent_def_get_command (def);
  g_assert_cmpuint (g_strv_length ((GStrv) strv), ==, 4);
  g_assert_cmpstr (strv[3], ==, "--mode=review");
  strv = subagent_def_get_write_scope (def);
  g_assert_cmpuint (g_strv_length ((GStrv) strv), ==, 2);
  g_assert_cmpstr (strv[1], ==, ".md");
  g_assert_cmpfloat (subagent_def_get_cpu_quota (def), ==, 1.5);
  g_assert_cmpstr (subagent_def_get_memory_limit (def), ==, "512m");
  g_assert_cmpuint (subagent_def_get_timeout_seconds (def), ==, 600);
  g_assert_cmpfloat (subagent_def_get_max_cost_cents (def), ==, 25.5);
  g_assert_cmpuint (subagent_def_get_max_follow_ups (def), ==, 4);
  g_assert_cmpstr (subagent_def_get_network (def), ==, "bridge");
  g_assert_true (g_str_has_suffix (subagent_def_get_source_path (def), "/.subagent/agents/full-yaml.yaml"));
  g_assert_true (g_path_is_absolute (subagent_def_get_source_path (def)));
  g_assert_cmpuint (subagent_catalog_get_diagnostics (catalog)->len, ==, 0);
}

static void
test_json_every_field (void)
{
  g_autoptr(SubagentCatalog) catalog = load_fixture ("full");
  SubagentDef *def = subagent_catalog_lookup (catalog, "full-json");
  const char * const *strv;

  g_assert_nonnull (def);
  g_assert_cmpstr (subagent_def_get_description (def), ==, "Writes tests");
  g_assert_cmpstr (subagent_def_get_system_prompt (def), ==, "You write tests.");
  g_assert_cmpstr (subagent_def_get_model (def), ==, "gpt-5");
  g_assert_cmpint (subagent_def_get_permission_mode (def), ==, SUBAGENT_PERMISSION_MODE_READ_ONLY);
  g_assert_cmpuint (subagent_def_get_max_iterations (def), ==, 7);
  g_assert_cmpuint (subagent_def_get_max_tool_calls (def), ==, 0);
  strv = subagent_def_get_tool_whitelist (def);
  g_assert_cmpuint (g_strv_length ((GStrv) strv), ==, 2);
  g_assert_cmpstr (strv[1], ==, "Grep");
  g_assert_cmpstr (subagent_def_get_disallowed_tools (def)[0], ==, "Bash");
  g_assert_cmpuint (subagent_def_get_max_depth (def), ==, 3);
  g_assert_cmpstr (subagent_def_get_isolation (def), ==, "directory-snapshot");
  g_assert_false (subagent_def_get_background (def));
  g_assert_cmpstr (subagent_def_get_effort (def), ==, "low");
  strv = subagent_def_get_command (def);
  g_assert_cmpuint (g_strv_length ((GStrv) strv), ==, 3);
  g_assert_cmpstr (strv[2], ==, "echo done");
  g_assert_cmpstr (subagent_def_get_write_scope (def)[0], ==, "tests/");
  g_assert_cmpfloat (subagent_def_get_cpu_quota (def), ==, 2.0);
  g_assert_cmpstr (subagent_def_get_memory_limit (def), ==, "1g");
  g_assert_cmpuint (subagent_def_get_timeout_seconds (def), ==, 30);
  g_assert_cmpfloat (subagent_def_get_max_cost_cents (def), ==, 10.0);
  g_assert_cmpuint (subagent_def_get_max_follow_ups (def), ==, 0);
  g_assert_cmpstr (subagent_def_get_network (def), ==, "none");
}

static void
test_markdown_every_field (void)
{
  g_autoptr(SubagentCatalog) catalog = load_fixture ("full");
  SubagentDef *def = subagent_catalog_lookup (catalog, "full-md");
  const char * const *strv;

  g_assert_nonnull (def);
  g_assert_cmpstr (subagent_def_get_description (def), ==, "Explains code");
  /* the body, trimmed, is the prompt */
  g_assert_cmpstr (subagent_def_get_system_prompt (def), ==, "You explain code.\n\nKeep answers short.");
  g_assert_null (subagent_def_get_model (def));
  g_assert_cmpint (subagent_def_get_permission_mode (def), ==, SUBAGENT_PERMISSION_MODE_PROMPT);
  g_assert_cmpuint (subagent_def_get_max_iterations (def), ==, 3);
  g_assert_cmpuint (subagent_def_get_max_tool_calls (def), ==, 9);
  strv = subagent_def_get_tool_whitelist (def);
  g_assert_cmpuint (g_strv_length ((GStrv) strv), ==, 2);
  g_assert_cmpstr (strv[1], ==, "Glob");
  strv = subagent_def_get_disallowed_tools (def);
  g_assert_cmpuint (g_strv_length ((GStrv) strv), ==, 2);
  g_assert_cmpstr (strv[1], ==, "Write");
  g_assert_cmpuint (subagent_def_get_max_depth (def), ==, 1);
  g_assert_cmpstr (subagent_def_get_isolation (def), ==, "docker");
  g_assert_true (subagent_def_get_background (def));
  g_assert_cmpstr (subagent_def_get_effort (def), ==, "medium");
  strv = subagent_def_get_command (def);
  g_assert_cmpuint (g_strv_length ((GStrv) strv), ==, 2);
  g_assert_cmpstr (strv[0], ==, "./bin/explainer");
  g_assert_cmpstr (subagent_def_get_write_scope (def)[0], ==, "notes/explain.txt");
  g_assert_cmpfloat (subagent_def_get_cpu_quota (def), ==, 0.5);
  g_assert_cmpstr (subagent_def_get_memory_limit (def), ==, "256MiB");
  g_assert_cmpuint (subagent_def_get_timeout_seconds (def), ==, 90);
  g_assert_cmpfloat (subagent_def_get_max_cost_cents (def), ==, 3.0);
  g_assert_cmpuint (subagent_def_get_max_follow_ups (def), ==, 1);
  g_assert_cmpstr (subagent_def_get_network (def), ==, "host");
}

static void
test_claude_code_agent (void)
{
  g_autoptr(SubagentCatalog) catalog = load_fixture ("claude");
  SubagentDef *def = subagent_catalog_lookup (catalog, "code-reviewer");
  const char * const *tools;

  g_assert_nonnull (def);
  tools = subagent_def_get_tool_whitelist (def);
  g_assert_cmpuint (g_strv_length ((GStrv) tools), ==, 4);
  g_assert_cmpstr (tools[0], ==, "Read");
  g_assert_cmpstr (tools[3], ==, "Bash");
  g_assert_null (subagent_def_get_model (def));
  g_assert_cmpstr (subagent_def_get_system_prompt (def), ==, "You are a senior code reviewer.");
  g_assert_true (g_str_has_suffix (subagent_def_get_source_path (def), "/.claude/agents/code-reviewer.md"));
  /* Claude Code's color is not ours: loaded, with a warning on its line */
  assert_diagnostic (find_diagnostic (catalog, "code-reviewer.md", SUBAGENT_DEF_ERROR_UNKNOWN_KEY),
                     6, 1, SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING, "“color” is not a definition field*");
  g_assert_false (subagent_catalog_has_errors (catalog));
}

static void
test_subagent_wins_over_claude (void)
{
  g_autoptr(SubagentCatalog) catalog = load_fixture ("claude");
  SubagentDef *def = subagent_catalog_lookup (catalog, "shadowed");

  g_assert_nonnull (def);
  g_assert_cmpstr (subagent_def_get_description (def), ==, "the libsubagent version");
  g_assert_true (g_str_has_suffix (subagent_def_get_source_path (def), "/.subagent/agents/shadowed.yaml"));
  assert_diagnostic (find_diagnostic (catalog, "/.claude/agents/shadowed.md", SUBAGENT_DEF_ERROR_DUPLICATE_NAME),
                     2, 1, SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING, "*.subagent/agents/shadowed.yaml, which wins*");
  g_assert_cmpuint (subagent_catalog_get_n_definitions (catalog), ==, 2);
}

static void
test_lookup_case_and_dash_insensitive (void)
{
  g_autoptr(SubagentCatalog) catalog = load_fixture ("full");
  SubagentDef *def = subagent_catalog_lookup (catalog, "full-yaml");

  g_assert_nonnull (def);
  g_assert_true (subagent_catalog_lookup (catalog, "FULL_YAML") == def);
  g_assert_true (subagent_catalog_lookup (catalog, "Full-Yaml") == def);
  g_assert_true (subagent_catalog_lookup (catalog, "full_md") == subagent_catalog_lookup (catalog, "FULL-MD"));
  g_assert_null (subagent_catalog_lookup (catalog, "fullyaml"));
  g_assert_null (subagent_catalog_lookup (catalog, "full-yaml "));
}

static void
test_list_sorted (void)
{
  g_autoptr(SubagentCatalog) catalog = load_fixture ("full");
  g_autoptr(GPtrArray) list = subagent_catalog_list (catalog);

  g_assert_cmpuint (list->len, ==, 3);
  g_assert_cmpstr (subagent_def_get_name (list->pdata[0]), ==, "full-json");
  g_assert_cmpstr (subagent_def_get_name (list->pdata[1]), ==, "full-md");
  g_assert_cmpstr (subagent_def_get_name (list->pdata[2]), ==, "Full_Yaml");
}

static void
test_add_in_code (void)
{
  g_autoptr(SubagentCatalog) catalog = load_fixture ("full");
  g_autoptr(SubagentDef) host = subagent_def_new ("host-helper");
  g_autoptr(SubagentDef) replacement = subagent_def_new ("FULL_JSON");
  g_autoptr(GPtrArray) list = NULL;

  subagent_catalog_add (catalog, host);
  subagent_catalog_add (catalog, replacement);
  list = subagent_catalog_list (catalog);
  /* the list keeps its own references */
  g_clear_object (&catalog);
  g_assert_cmpuint (list->len, ==, 4);
  g_assert_true (list->pdata[0] == replacement);
  g_assert_null (subagent_def_get_source_path (list->pdata[0]));
  g_assert_true (list->pdata[3] == host);
}

static void
test_broken_files_become_diagnostics (void)
{
  g_autoptr(SubagentCatalog) catalog = load_fixture ("broken");
  GPtrArray *diagnostics = subagent_catalog_get_diagnostics (catalog);

  /* the good files still load */
  g_assert_nonnull (subagent_catalog_lookup (catalog, "a-good"));
  g_assert_nonnull (subagent_catalog_lookup (catalog, "unknown-key"));
  g_assert_cmpstr (subagent_def_get_isolation (subagent_catalog_lookup (catalog, "old-isolation")), ==, "container");
  g_assert_cmpuint (subagent_catalog_get_n_definitions (catalog), ==, 3);
  g_assert_true (subagent_catalog_has_errors (catalog));
  g_assert_cmpuint (diagnostics->len, ==, 10);

  assert_diagnostic (find_diagnostic (catalog, "/bad-syntax.yaml", SUBAGENT_DEF_ERROR_PARSE),
                     3, 8, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, "invalid YAML: mapping values are not allowed*");
  assert_diagnostic (find_diagnostic (catalog, "/bad.json", SUBAGENT_DEF_ERROR_PARSE),
                     3, 22, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, "invalid JSON: *");
  assert_diagnostic (find_diagnostic (catalog, "/wrong-types.yaml", SUBAGENT_DEF_ERROR_INVALID_VALUE),
                     3, 1, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, "field “max_iterations” must be a whole number*“five”*");
  assert_diagnostic (find_diagnostic (catalog, "/no-name.yaml", SUBAGENT_DEF_ERROR_MISSING_NAME),
                     1, 1, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, "there is no “name”*");
  assert_diagnostic (find_diagnostic (catalog, "/notes.txt", SUBAGENT_DEF_ERROR_BAD_SUFFIX),
                     0, 0, SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING, "not a definition file*");
  assert_diagnostic (find_diagnostic (catalog, "/.claude/agents/helper.txt", SUBAGENT_DEF_ERROR_BAD_SUFFIX),
                     0, 0, SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING, "*Claude Code agents end in .md*");
  assert_diagnostic (find_diagnostic (catalog, "/unclosed.md", SUBAGENT_DEF_ERROR_PARSE),
                     1, 1, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, "*never closed*");
  assert_diagnostic (find_diagnostic (catalog, "/duplicate.yaml", SUBAGENT_DEF_ERROR_DUPLICATE_NAME),
                     1, 1, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, "name “A_Good” is already defined by .subagent/agents/a-good.yaml*");
  assert_diagnostic (find_diagnostic (catalog, "/unknown-key.yaml", SUBAGENT_DEF_ERROR_UNKNOWN_KEY),
                     3, 1, SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING, "“colour” is not a definition field; ignored");
  assert_diagnostic (find_diagnostic (catalog, "/old-isolation.yaml", SUBAGENT_DEF_ERROR_DEPRECATED),
                     2, 1, SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING, "*container*deprecated*Aliases=*");

  /* sorted by file name, so .claude comes first */
  for (guint i = 1; i < diagnostics->len; i++)
    g_assert_cmpint (strcmp (subagent_diagnostic_get_file (diagnostics->pdata[i - 1]),
                             subagent_diagnostic_get_file (diagnostics->pdata[i])), <=, 0);
  g_assert_true (g_str_has_suffix (subagent_diagnostic_get_file (diagnostics->pdata[0]), "helper.txt"));
}

static void
test_markdown_problems (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-catalog");
  g_autoptr(SubagentCatalog) catalog = NULL;
  g_autoptr(GError) error = NULL;

  sat_write_file (root, ".subagent/agents/plain.md", "# Just notes\n");
  sat_write_file (root, ".subagent/agents/both.md", "---\nname: both\nprompt: from front matter\n---\nfrom body\n");
  sat_write_file (root, ".subagent/agents/front-only.md", "---\nname: front-only\nsystem_prompt: kept\n---\n\n");
  sat_write_file (root, ".subagent/agents/list.md", "---\n- a\n- b\n---\nbody\n");
  sat_write_file (root, ".subagent/agents/syntax.md", "---\nname: syntax\ntools: [Read\n---\nbody\n");
  sat_write_file (root, ".subagent/agents/.hidden.yaml", "not: [valid\n");
  sat_write_file (root, ".subagent/agents/sub/inner.yaml", "name: inner\n");
  catalog = subagent_catalog_new_for_root (root, &error);
  g_assert_no_error (error);

  assert_diagnostic (find_diagnostic (catalog, "/plain.md", SUBAGENT_DEF_ERROR_MISSING_NAME),
                     1, 1, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, "there is no YAML front matter*");
  assert_diagnostic (find_diagnostic (catalog, "/both.md", SUBAGENT_DEF_ERROR_INVALID_VALUE),
                     3, 1, SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING, "“prompt” in the front matter is ignored*line 5*");
  g_assert_cmpstr (subagent_def_get_system_prompt (subagent_catalog_lookup (catalog, "both")), ==, "from body");
  g_assert_cmpstr (subagent_def_get_system_prompt (subagent_catalog_lookup (catalog, "front-only")), ==, "kept");
  assert_diagnostic (find_diagnostic (catalog, "/list.md", SUBAGENT_DEF_ERROR_PARSE),
                     2, 1, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, "the front matter is a list*");
  /* positions count from the file's first line, not the front matter's */
  g_assert_cmpuint (subagent_diagnostic_get_line (find_diagnostic (catalog, "/syntax.md", SUBAGENT_DEF_ERROR_PARSE)), >=, 3);
  /* dot files and subdirectories are not read, and say nothing */
  g_assert_null (subagent_catalog_lookup (catalog, "inner"));
  g_assert_cmpuint (subagent_catalog_get_diagnostics (catalog)->len, ==, 4);
  g_assert_cmpuint (subagent_catalog_get_n_definitions (catalog), ==, 2);
  sat_rm_rf (root);
}

static void
test_symlink_outside_root_refused (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-catalog");
  g_autofree char *outside = sat_make_temp_dir ("subagent-outside");
  g_autofree char *target = g_build_filename (outside, "secret.yaml", NULL);
  g_autofree char *link = g_build_filename (root, ".subagent", "agents", "secret.yaml", NULL);
  g_autofree char *inside_target = g_build_filename (root, "shared", "ok.yaml", NULL);
  g_autofree char *inside_link = g_build_filename (root, ".subagent", "agents", "ok.yaml", NULL);
  g_autofree char *claude_dir = g_build_filename (root, ".claude", NULL);
  g_autoptr(SubagentCatalog) catalog = NULL;
  g_autoptr(GError) error = NULL;

  sat_write_file (outside, "secret.yaml", "name: secret\n");
  sat_write_file (outside, "agents/elsewhere.md", "---\nname: elsewhere\n---\n");
  sat_write_file (root, "shared/ok.yaml", "name: linked-ok\n");
  sat_write_file (root, ".subagent/agents/plain.yaml", "name: plain\n");
  g_assert_cmpint (symlink (target, link), ==, 0);
  g_assert_cmpint (symlink (inside_target, inside_link), ==, 0);
  /* a whole agents directory elsewhere */
  g_assert_cmpint (symlink (outside, claude_dir), ==, 0);

  catalog = subagent_catalog_new_for_root (root, &error);
  g_assert_no_error (error);
  g_assert_null (subagent_catalog_lookup (catalog, "secret"));
  g_assert_null (subagent_catalog_lookup (catalog, "elsewhere"));
  g_assert_nonnull (subagent_catalog_lookup (catalog, "linked-ok"));
  g_assert_nonnull (subagent_catalog_lookup (catalog, "plain"));
  assert_diagnostic (find_diagnostic (catalog, "/.subagent/agents/secret.yaml", SUBAGENT_DEF_ERROR_UNREADABLE),
                     0, 0, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, "resolves to *outside the workspace root*");
  assert_diagnostic (find_diagnostic (catalog, "/.claude/agents", SUBAGENT_DEF_ERROR_UNREADABLE),
                     0, 0, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, "resolves to *outside the workspace root*");
  sat_rm_rf (root);
  sat_rm_rf (outside);
}

static void
test_diagnostics_to_json_and_string (void)
{
  g_autoptr(SubagentCatalog) catalog = load_fixture ("broken");
  g_autoptr(JsonNode) node = subagent_catalog_diagnostics_to_json (catalog);
  g_autofree char *root = fixture ("broken");
  g_autofree char *real_root = realpath (root, NULL);
  SubagentDiagnostic *d = find_diagnostic (catalog, "/wrong-types.yaml", SUBAGENT_DEF_ERROR_INVALID_VALUE);
  g_autofree char *line = subagent_diagnostic_to_string (d, real_root);
  g_autofree char *absolute = subagent_diagnostic_to_string (d, NULL);
  JsonArray *array = json_node_get_array (node);
  JsonObject *first;

  g_assert_cmpstr (line, ==, ".subagent/agents/wrong-types.yaml:3:1: error: field “max_iterations” must be a "
                   "whole number from 1 to 2147483647, not the text “five”");
  g_assert_true (g_str_has_prefix (absolute, "/"));
  g_assert_cmpuint (json_array_get_length (array), ==, subagent_catalog_get_diagnostics (catalog)->len);
  first = json_array_get_object_element (array, 0);
  g_assert_true (g_str_has_suffix (json_object_get_string_member (first, "file"), "/.claude/agents/helper.txt"));
  g_assert_cmpint (json_object_get_int_member (first, "line"), ==, 0);
  g_assert_cmpstr (json_object_get_string_member (first, "severity"), ==, "warning");
  g_assert_cmpstr (json_object_get_string_member (first, "code"), ==, "bad-suffix");
  g_assert_true (json_object_has_member (first, "reason"));
}

static void
on_loaded (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  GError **error = user_data;

  g_assert_cmpint (subagent_catalog_load_finish (SUBAGENT_CATALOG (source), result, error), ==, *error == NULL);
  g_object_set_data (source, "done", GINT_TO_POINTER (1));
}

static void
wait_loaded (SubagentCatalog *catalog)
{
  while (g_object_get_data (G_OBJECT (catalog), "done") == NULL)
    g_main_context_iteration (NULL, TRUE);
}

static void
test_load_async (void)
{
  g_autoptr(SubagentCatalog) catalog = subagent_catalog_new ();
  g_autofree char *root = fixture ("broken");
  GError *error = NULL;

  subagent_catalog_load_async (catalog, root, NULL, on_loaded, &error);
  /* nothing changes before the callback, on this context */
  g_assert_cmpuint (subagent_catalog_get_n_definitions (catalog), ==, 0);
  wait_loaded (catalog);
  g_assert_no_error (error);
  g_assert_cmpuint (subagent_catalog_get_n_definitions (catalog), ==, 3);
  g_assert_cmpuint (subagent_catalog_get_diagnostics (catalog)->len, ==, 10);
}

static void
test_load_async_cancelled (void)
{
  g_autoptr(SubagentCatalog) catalog = subagent_catalog_new ();
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autofree char *root = fixture ("broken");
  GError *error = NULL;

  g_cancellable_cancel (cancellable);
  subagent_catalog_load_async (catalog, root, cancellable, on_loaded, &error);
  wait_loaded (catalog);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (subagent_catalog_get_n_definitions (catalog), ==, 0);
  g_assert_cmpuint (subagent_catalog_get_diagnostics (catalog)->len, ==, 0);
  g_clear_error (&error);
}

/* ---- subagentctl defs --------------------------------------------------- */

static void
test_cli_lists_definitions (void)
{
  g_autofree char *root = fixture ("claude");
  int status = -1;
  g_autofree char *out = sat_run (NULL, TRUE, &status, sat_subagentctl (), "defs", "--root", root, NULL);

  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_str_has_prefix (out, "NAME "));
  g_assert_true (g_regex_match_simple ("^code-reviewer +shared +Expert code review specialist.* +\\.claude/agents/code-reviewer\\.md$",
                                       out, G_REGEX_MULTILINE, 0));
  g_assert_true (g_regex_match_simple ("^Shadowed +worktree +the libsubagent version +\\.subagent/agents/shadowed\\.yaml$",
                                       out, G_REGEX_MULTILINE, 0));
}

static void
test_cli_check_reports_and_fails (void)
{
  g_autofree char *root = fixture ("broken");
  int status = -1;
  g_autofree char *out = sat_run (NULL, TRUE, &status, sat_subagentctl (), "defs", "--root", root, "--check", NULL);
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);

  g_assert_cmpint (status, ==, 1);
  g_assert_cmpuint (g_strv_length (lines), ==, 11);   /* ten lines and the final "" */
  g_assert_cmpstr (lines[0], ==, ".claude/agents/helper.txt:0:0: warning: not an agent file "
                   "(Claude Code agents end in .md); ignored");
  g_assert_cmpstr (lines[1], ==, ".subagent/agents/bad-syntax.yaml:3:8: error: invalid YAML: "
                   "mapping values are not allowed in this context");
  g_assert_true (g_strv_contains ((const char * const *) lines,
                                  ".subagent/agents/wrong-types.yaml:3:1: error: field “max_iterations” must be "
                                  "a whole number from 1 to 2147483647, not the text “five”"));
  g_assert_true (g_strv_contains ((const char * const *) lines,
                                  ".subagent/agents/unknown-key.yaml:3:1: warning: “colour” is not a definition "
                                  "field; ignored"));
}

static void
test_cli_check_clean_exits_zero (void)
{
  g_autofree char *full = fixture ("full");
  g_autofree char *claude = fixture ("claude");
  int status = -1;
  g_autofree char *out = sat_run (NULL, TRUE, &status, sat_subagentctl (), "defs", "--root", full, "--check", NULL);
  g_autofree char *warnings = NULL;

  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (out, ==, "");
  /* warnings alone do not fail the check */
  warnings = sat_run (NULL, TRUE, &status, sat_subagentctl (), "defs", "--check", "--root", claude, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (warnings, "code-reviewer.md:6:1: warning:"));
}

static void
test_cli_json (void)
{
  g_autofree char *root = fixture ("broken");
  int status = -1;
  g_autofree char *out = sat_run (NULL, TRUE, &status, sat_subagentctl (), "defs", "--root", root, "--json", NULL);
  g_autofree char *checked = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(JsonNode) both = NULL;
  g_autoptr(GError) error = NULL;
  JsonArray *defs;
  JsonObject *object;

  g_assert_cmpint (status, ==, 0);
  node = json_from_string (out, &error);
  g_assert_no_error (error);
  defs = json_node_get_array (node);
  g_assert_cmpuint (json_array_get_length (defs), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (defs, 0), "name"), ==, "a-good");
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (defs, 0), "max_iterations"), ==, 5);

  checked = sat_run (NULL, TRUE, &status, sat_subagentctl (), "defs", "--root", root, "--json", "--check", NULL);
  g_assert_cmpint (status, ==, 1);
  both = json_from_string (checked, &error);
  g_assert_no_error (error);
  object = json_node_get_object (both);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (object, "definitions")), ==, 3);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (object, "diagnostics")), ==, 10);
}

static void
test_cli_bad_usage (void)
{
  g_autofree char *missing = g_build_filename (g_get_tmp_dir (), "subagent-no-such-root", "x", NULL);
  int status = -1;
  g_autofree char *a = sat_run (NULL, TRUE, &status, sat_subagentctl (), "defs", "--bogus", NULL);
  g_autofree char *b = NULL;

  g_assert_cmpint (status, ==, 2);
  b = sat_run (NULL, TRUE, &status, sat_subagentctl (), "defs", "--root", missing, NULL);
  g_assert_cmpint (status, ==, 1);
  g_assert_cmpstr (b, ==, "");
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catalog/load/missing-directories-are-empty", test_missing_directories_are_empty);
  g_test_add_func ("/catalog/load/root-must-be-a-directory", test_root_must_be_a_directory);
  g_test_add_func ("/catalog/load/yaml-every-field", test_yaml_every_field);
  g_test_add_func ("/catalog/load/json-every-field", test_json_every_field);
  g_test_add_func ("/catalog/load/markdown-every-field-body-is-prompt", test_markdown_every_field);
  g_test_add_func ("/catalog/load/claude-code-agent", test_claude_code_agent);
  g_test_add_func ("/catalog/load/subagent-wins-over-claude", test_subagent_wins_over_claude);
  g_test_add_func ("/catalog/load/async-changes-catalog-on-caller-context", test_load_async);
  g_test_add_func ("/catalog/load/async-cancelled-changes-nothing", test_load_async_cancelled);
  g_test_add_func ("/catalog/lookup/case-and-dash-insensitive", test_lookup_case_and_dash_insensitive);
  g_test_add_func ("/catalog/list/sorted-by-name", test_list_sorted);
  g_test_add_func ("/catalog/add/in-code-definition-replaces-same-name", test_add_in_code);
  g_test_add_func ("/catalog/diagnostics/broken-files-skipped-with-positions", test_broken_files_become_diagnostics);
  g_test_add_func ("/catalog/diagnostics/markdown-front-matter-problems", test_markdown_problems);
  g_test_add_func ("/catalog/diagnostics/symlink-outside-root-refused", test_symlink_outside_root_refused);
  g_test_add_func ("/catalog/diagnostics/to-json-and-string", test_diagnostics_to_json_and_string);
  g_test_add_func ("/cli/defs/lists-definitions", test_cli_lists_definitions);
  g_test_add_func ("/cli/defs/check-prints-diagnostics-and-exits-1", test_cli_check_reports_and_fails);
  g_test_add_func ("/cli/defs/check-clean-exits-0", test_cli_check_clean_exits_zero);
  g_test_add_func ("/cli/defs/json-and-json-check", test_cli_json);
  g_test_add_func ("/cli/defs/bad-usage-and-missing-root", test_cli_bad_usage);
  return g_test_run ();
}
