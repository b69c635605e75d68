/* test-cli.c: subagentctl as a user meets it (issue 12): the version, help,
 * one exit-code table and one usage style, errors printed once, command
 * strings through the shell, what the child sees of its definition,
 * interactive definitions, error results with every key, Claude Code agent
 * files, kept worktree branches. Everything through the built subagentctl.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "test-support.h"

/* subagentctl in @root; returns the exit status. What *out and *err held
 * from an earlier call is freed first. */
#define ctl(root, out, err, ...) \
  (clear_outputs ((out), (err)), sat_run_ctl ((root), (out), (err), __VA_ARGS__, NULL))

static void
clear_outputs (char **out,
               char **err)
{
  if (out != NULL)
    g_clear_pointer (out, g_free);
  if (err != NULL)
    g_clear_pointer (err, g_free);
}

static guint
count_occurrences (const char *haystack,
                   const char *needle)
{
  guint n = 0;

  for (const char *p = strstr (haystack, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

static guint
count_lines (const char *text)
{
  guint n = 0;

  for (const char *p = text; *p != '\0'; p++)
    n += *p == '\n';
  return n;
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

/* ---- 1. conventions --------------------------------------------------- */

static void
test_version (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");
  g_autofree char *out = NULL, *out2 = NULL, *err = NULL;

  g_assert_cmpint (ctl (root, &out, &err, "--version"), ==, 0);
  g_assert_true (g_str_has_prefix (out, "subagentctl "));
  g_assert_cmpstr (err, ==, "");
  g_assert_cmpint (ctl (root, &out2, NULL, "version"), ==, 0);
  g_assert_cmpstr (out, ==, out2);
  sat_rm_rf (root);
}

static void
test_help_command (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");
  g_autofree char *out = NULL, *global = NULL, *err = NULL;

  g_assert_cmpint (ctl (root, &out, NULL, "help", "run"), ==, 0);
  /* The command's own help, in the one usage style; not the global list. */
  g_assert_nonnull (strstr (out, "subagentctl run [OPTION…] [--] TASK…"));
  g_assert_nonnull (strstr (out, "--keep-branch"));
  g_assert_null (strstr (out, "Commands:"));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (ctl (root, &out, NULL, "help", "approvals"), ==, 0);
  g_assert_nonnull (strstr (out, "subagentctl approvals [OPTION…] list | approve ID"));
  g_assert_nonnull (strstr (out, "-r, --root"));
  g_assert_cmpint (ctl (root, &global, NULL, "help"), ==, 0);
  g_assert_nonnull (strstr (global, "Commands:"));
  g_assert_nonnull (strstr (global, "2 usage error"));
  g_assert_cmpint (ctl (root, NULL, &err, "help", "nosuch"), ==, 2);
  g_assert_cmpuint (count_lines (err), ==, 1);
  sat_rm_rf (root);
}

/* The same mistake gives the same status everywhere; one line on stderr,
 * in one style. */
static void
test_usage_errors_exit_2 (void)
{
  static const char * const cases[][4] = {
    { "run", "--bogus", NULL },
    { "run", NULL },
    { "defs", "--bogus", NULL },
    { "defs", "extra", NULL },
    { "approvals", NULL },
    { "approvals", "frobnicate", NULL },
    { "approvals", "approve", NULL },
    { "worktrees", NULL },
    { "worktrees", "--bogus", NULL },
    { "prune", "extra", NULL },
    { "plugins", "bogus", NULL },
    { "batch", NULL },
    { "team", "only-a-name", NULL },
    { "sessions", "extra", NULL },
    { "follow-up", NULL },
    { "--events", "bogus", NULL },
    { "mcp", "extra", NULL },
    { "nosuch-command", NULL },
  };
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *out = NULL, *err = NULL;
      int status = ctl (root, &out, &err, cases[i][0], cases[i][1], cases[i][2]);

      g_test_message ("subagentctl %s %s: %d: %s", cases[i][0], cases[i][1] ? cases[i][1] : "", status, err);
      g_assert_cmpint (status, ==, 2);
      g_assert_cmpstr (out, ==, "");
      g_assert_cmpuint (count_lines (err), ==, 1);
      g_assert_true (g_str_has_prefix (err, "subagentctl"));
      if (!g_str_equal (cases[i][0], "nosuch-command"))
        {
          g_autofree char *hint = g_strdup_printf ("(see `subagentctl help %s`)", cases[i][0]);
          g_autofree char *prefix = g_strdup_printf ("subagentctl %s: ", cases[i][0]);

          g_assert_true (g_str_has_prefix (err, prefix));
          g_assert_nonnull (strstr (err, hint));
        }
    }
  sat_rm_rf (root);
}

static void
test_approvals_short_root (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");
  g_autofree char *elsewhere = sat_make_temp_dir ("subagent-cli-cwd");
  g_autofree char *out = NULL;

  g_assert_cmpint (ctl (elsewhere, &out, NULL, "approvals", "-r", root, "list", "--json"), ==, 0);
  g_assert_cmpstr (g_strstrip (out), ==, "[]");
  sat_rm_rf (root);
  sat_rm_rf (elsewhere);
}

/* ---- 9. error results ------------------------------------------------ */

static void
test_run_error_printed_once (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (ctl (root, &out, &err, "run", "--def", "nosuch", "--", "task"), ==, 1);
  g_assert_cmpuint (count_occurrences (out, "Unknown subagent definition") +
                    count_occurrences (err, "Unknown subagent definition"), ==, 1);
  g_assert_cmpuint (count_lines (err), ==, 1);
  g_assert_nonnull (strstr (out, "status:     error"));
  /* No blank run id line. */
  g_assert_null (strstr (out, "run id:"));
  sat_rm_rf (root);
}

static void
test_run_error_json_has_every_key (void)
{
  static const char * const keys[] = {
    "run_id", "status", "iterations", "tool_calls", "cost_cents", "final_answer", "lineage", "message", NULL
  };
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonObject) result = NULL;
  JsonObject *lineage;

  g_assert_cmpint (ctl (root, &out, &err, "run", "--def", "nosuch", "--json", "--", "task"), ==, 1);
  g_assert_cmpstr (err, ==, "");
  result = parse_object (out);
  for (guint i = 0; keys[i] != NULL; i++)
    g_assert_true (json_object_has_member (result, keys[i]));
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "error");
  g_assert_cmpfloat (json_object_get_double_member (result, "cost_cents"), ==, 0.0);
  lineage = json_object_get_object_member (result, "lineage");
  g_assert_nonnull (lineage);
  g_assert_cmpstr (json_object_get_string_member (lineage, "def_name"), ==, "nosuch");
  g_assert_cmpint (json_object_get_int_member (lineage, "depth"), ==, 1);
  g_assert_true (json_object_get_null_member (lineage, "batch_index"));
  sat_rm_rf (root);
}

/* A file the user can see is not "unknown": it was skipped, and
 * `defs --check` says why (issue 12 item 9, issue 18 item 5). */
static void
test_malformed_definition_reported (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonObject) result = NULL;
  const char *message;

  sat_write_file (root, ".subagent/agents/broken.yaml", "name: broken\ntools: [Read\n");
  g_assert_cmpint (ctl (root, &out, &err, "run", "--def", "broken", "--json", "--", "task"), ==, 1);
  result = parse_object (out);
  message = json_object_get_string_member (result, "message");
  g_assert_null (strstr (message, "Unknown"));
  g_assert_nonnull (strstr (message, "broken.yaml"));
  g_assert_nonnull (strstr (message, "skipped"));
  g_assert_nonnull (strstr (message, "subagentctl defs --check"));
  sat_rm_rf (root);
}

/* Issue 18 item 5: items refused before they start keep their lineage. */
static void
test_batch_refused_item_keeps_lineage (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonArray *results;
  JsonObject *refused, *lineage;

  sat_write_file (root, ".subagent/agents/ok.yaml", "name: ok\ncommand: echo fine\n");
  sat_write_file (root, "items.json",
                  "[{\"task\": \"a\", \"def_name\": \"ok\"}, {\"task\": \"b\", \"def_name\": \"nosuch\"}]");
  g_assert_cmpint (ctl (root, &out, &err, "batch", "--json", "items.json"), ==, 1);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  results = json_node_get_array (json_parser_get_root (parser));
  g_assert_cmpuint (json_array_get_length (results), ==, 2);
  refused = json_array_get_object_element (results, 1);
  g_assert_cmpstr (json_object_get_string_member (refused, "status"), ==, "error");
  lineage = json_object_get_object_member (refused, "lineage");
  g_assert_nonnull (lineage);
  g_assert_cmpint (json_object_get_int_member (lineage, "batch_index"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (lineage, "def_name"), ==, "nosuch");
  sat_rm_rf (root);
}

/* ---- 2. command strings through the shell ---------------------------- */

static void
test_command_string_runs_in_shell (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *readme = NULL;
  g_autoptr(JsonObject) result = NULL;

  sat_write_file (root, "README", "");
  g_assert_cmpint (ctl (root, &out, &err, "run", "-i", "shared", "--json",
                        "--command", "echo x >> README; cat", "--", "the task"), ==, 0);
  readme = sat_read_file (root, "README");
  g_assert_cmpstr (readme, ==, "x\n");
  result = parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (result, "final_answer"), ==, "the task");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&result, json_object_unref);

  /* A definition's `command:` string too; a list runs as is. */
  sat_write_file (root, ".subagent/agents/shell.yaml", "name: shell\ncommand: \"cat >/dev/null; echo hi | tr h H\"\n");
  sat_write_file (root, ".subagent/agents/argv.yaml", "name: argv\ncommand: [echo, \"x >> README; y\"]\n");
  g_assert_cmpint (ctl (root, &out, &err, "run", "-d", "shell", "--json", "--", "t"), ==, 0);
  result = parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (result, "final_answer"), ==, "Hi");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&result, json_object_unref);
  g_assert_cmpint (ctl (root, &out, &err, "run", "-d", "argv", "--json", "--", "t"), ==, 0);
  result = parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (result, "final_answer"), ==, "x >> README; y");
  sat_rm_rf (root);
}

/* ---- 7. what the child sees ------------------------------------------ */

static void
test_child_sees_definition (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *env = NULL, *prompt = NULL, *task = NULL;

  sat_write_file (root, ".subagent/agents/seer.md",
                  "---\nname: seer\nmodel: opus-7\ntools: Read, Grep, Bash\ndisallowed_tools: Bash\n"
                  "command: [sh, -c, 'env > env.txt; head -c \"$SUBAGENT_SYSTEM_PROMPT_BYTES\" > prompt.txt; "
                  "head -c 2 >/dev/null; cat > task.txt']\n---\n"
                  "First paragraph.\n\nSecond paragraph, after a blank line.\n");
  g_assert_cmpint (ctl (root, &out, &err, "run", "-d", "seer", "--", "the\n\ntask"), ==, 0);
  env = sat_read_file (root, "env.txt");
  g_assert_nonnull (strstr (env, "\nSUBAGENT_MODEL=opus-7\n"));
  g_assert_nonnull (strstr (env, "\nSUBAGENT_TOOLS=Read,Grep\n"));
  prompt = sat_read_file (root, "prompt.txt");
  g_assert_cmpstr (prompt, ==, "First paragraph.\n\nSecond paragraph, after a blank line.");
  task = sat_read_file (root, "task.txt");
  g_assert_cmpstr (task, ==, "the\n\ntask\n");
  sat_rm_rf (root);
}

/* ---- 8. interactive definitions -------------------------------------- */

static void
test_interactive_definition (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonArray *results;

  sat_write_file (root, ".subagent/agents/talker.yaml",
                  "name: talker\ninteractive: true\ncommand: 'echo \"$SUBAGENT_STDIN_MODE\"'\n");
  sat_write_file (root, ".subagent/agents/plain.yaml", "name: plain\ncommand: 'echo \"$SUBAGENT_STDIN_MODE\"'\n");
  g_assert_cmpint (ctl (root, &out, &err, "run", "-d", "talker", "--json", "--", "t"), ==, 0);
  result = parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (result, "final_answer"), ==, "interactive");
  g_clear_pointer (&out, g_free);

  /* A batch item says it per item. */
  sat_write_file (root, "items.json",
                  "[{\"task\": \"a\", \"def_name\": \"plain\", \"interactive\": true},"
                  " {\"task\": \"b\", \"def_name\": \"plain\"}]");
  g_assert_cmpint (ctl (root, &out, &err, "batch", "--json", "items.json"), ==, 0);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  results = json_node_get_array (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (results, 0), "final_answer"), ==,
                   "interactive");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (results, 1), "final_answer"), ==,
                   "eof");
  sat_rm_rf (root);
}

static void
test_approval_request_in_eof_mode_warns (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");
  g_autofree char *out = NULL, *err = NULL;

  sat_write_file (root, ".subagent/agents/asker.yaml",
                  "name: asker\ncommand: >-\n  cat >/dev/null;\n"
                  "  echo '{\"type\":\"approval_request\",\"id\":\"r1\",\"tool\":\"Bash\",\"arguments\":{}}';\n"
                  "  echo '{\"type\":\"approval_request\",\"id\":\"r2\",\"tool\":\"Bash\",\"arguments\":{}}';\n"
                  "  echo done\n");
  g_assert_cmpint (ctl (root, &out, &err, "run", "-d", "asker", "--", "t"), ==, 0);
  /* Once per run, naming the fix. */
  g_assert_cmpuint (count_occurrences (err, "interactive: true"), ==, 1);
  g_assert_nonnull (strstr (err, "eof mode"));
  sat_rm_rf (root);
}

/* ---- 6. Claude Code agent files -------------------------------------- */

#define CLAUDE_AGENT \
  "---\n" \
  "name: code-reviewer\n" \
  "description: Use this agent after writing code. Examples:\\n<example>Context: the user wrote a parser.\\n" \
  "user: \"I added a parser\"\\nassistant: \"Let me review it\"</example>\n" \
  "tools: Read, Grep, Glob, Bash\n" \
  "model: sonnet\n" \
  "---\n" \
  "You review code.\n"

static void
test_claude_agent_file (void)
{
  g_autofree char *root = sat_make_temp_dir ("subagent-cli");
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonObject) result = NULL;
  const char *message;

  sat_write_file (root, ".claude/agents/code-reviewer.md", CLAUDE_AGENT);
  /* Read as Claude Code reads it: listed, with its description. */
  g_assert_cmpint (ctl (root, &out, &err, "defs", "--json"), ==, 0);
  g_assert_nonnull (strstr (out, "\"code-reviewer\""));
  g_assert_nonnull (strstr (out, "<example>Context: the user wrote a parser."));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* No command and no model configured: the error names the keys to set in
   * the workspace's config, not the file shared with Claude Code. */
  g_assert_cmpint (ctl (root, &out, &err, "run", "-d", "code-reviewer", "--json", "--", "review"), ==, 1);
  result = parse_object (out);
  message = json_object_get_string_member (result, "message");
  g_assert_nonnull (strstr (message, "default_model:"));
  g_assert_nonnull (strstr (message, "models:"));
  g_assert_nonnull (strstr (message, "runner.command"));
  g_assert_nonnull (strstr (message, ".subagent/config.yaml"));
  g_assert_null (strstr (message, "default-command"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&result, json_object_unref);

  /* With runner.command it runs, with the configured limits, not 5 / 8. */
  sat_write_file (root, ".subagent/config.yaml",
                  "runner:\n  command: 'cat >/dev/null; echo \"$SUBAGENT_MAX_ITERATIONS/$SUBAGENT_MAX_TOOL_CALLS/"
                  "$SUBAGENT_MODEL/$SUBAGENT_TOOLS\"'\n");
  g_assert_cmpint (ctl (root, &out, &err, "run", "-d", "code-reviewer", "--json", "--", "review"), ==, 0);
  result = parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (result, "final_answer"), ==, "50/200/sonnet/Read,Grep,Glob,Bash");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&result, json_object_unref);

  sat_write_file (root, ".subagent/config.yaml",
                  "runner:\n  max_iterations: 7\n  max_tool_calls: 70\n"
                  "  command: 'cat >/dev/null; echo \"$SUBAGENT_MAX_ITERATIONS/$SUBAGENT_MAX_TOOL_CALLS\"'\n");
  g_assert_cmpint (ctl (root, &out, &err, "run", "-d", "code-reviewer", "--json", "--", "review"), ==, 0);
  result = parse_object (out);
  g_assert_cmpstr (json_object_get_string_member (result, "final_answer"), ==, "7/70");
  sat_rm_rf (root);
}

/* ---- 10. kept branches ----------------------------------------------- */

static void
test_keep_branch (void)
{
  g_autofree char *repo = sat_make_git_repo ("README", "hello\n", NULL);
  g_autofree char *out = NULL, *err = NULL, *branches = NULL, *human = NULL;
  g_autoptr(JsonObject) result = NULL;
  JsonObject *review;
  const char *branch;
  g_autofree char *ref = NULL;

  g_assert_cmpint (ctl (repo, &out, &err, "run", "-i", "worktree", "--keep-branch", "--json",
                        "--command", "cat >/dev/null; echo more >> README", "--", "t"), ==, 0);
  result = parse_object (out);
  review = json_object_get_object_member (result, "review");
  g_assert_nonnull (review);
  branch = json_object_get_string_member (review, "branch");
  g_assert_true (g_str_has_prefix (branch, "subagent/"));
  ref = g_strconcat ("refs/heads/", branch, NULL);
  g_free (sat_run (repo, FALSE, NULL, "git", "show-ref", "--verify", "--quiet", ref, NULL));

  /* Without --keep-branch the branch goes, and the result names none. */
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&result, json_object_unref);
  g_assert_cmpint (ctl (repo, &out, &err, "run", "-i", "worktree", "--json",
                        "--command", "cat >/dev/null", "--", "t"), ==, 0);
  result = parse_object (out);
  g_assert_false (json_object_has_member (json_object_get_object_member (result, "review"), "branch"));
  branches = sat_run (repo, FALSE, NULL, "git", "branch", "--list", "subagent/*", NULL);
  g_assert_cmpuint (count_lines (branches), ==, 1);

  /* The human form says what to merge. */
  g_assert_cmpint (ctl (repo, &human, &err, "run", "-i", "worktree", "--keep-branch",
                        "--command", "cat >/dev/null", "--", "t"), ==, 0);
  g_assert_nonnull (strstr (human, "branch:     subagent/"));
  g_assert_nonnull (strstr (human, "git merge subagent/"));
  sat_rm_rf (repo);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/cli/conventions/version", test_version);
  g_test_add_func ("/cli/conventions/help-command", test_help_command);
  g_test_add_func ("/cli/conventions/usage-errors-exit-2", test_usage_errors_exit_2);
  g_test_add_func ("/cli/conventions/approvals-short-root", test_approvals_short_root);
  g_test_add_func ("/cli/errors/printed-once", test_run_error_printed_once);
  g_test_add_func ("/cli/errors/json-has-every-key", test_run_error_json_has_every_key);
  g_test_add_func ("/cli/errors/malformed-definition", test_malformed_definition_reported);
  g_test_add_func ("/cli/errors/batch-refused-item-keeps-lineage", test_batch_refused_item_keeps_lineage);
  g_test_add_func ("/cli/command/string-runs-in-shell", test_command_string_runs_in_shell);
  g_test_add_func ("/cli/child/sees-definition", test_child_sees_definition);
  g_test_add_func ("/cli/interactive/definition-and-batch-item", test_interactive_definition);
  g_test_add_func ("/cli/interactive/eof-mode-warns", test_approval_request_in_eof_mode_warns);
  g_test_add_func ("/cli/claude/agent-file", test_claude_agent_file);
  g_test_add_func ("/cli/worktree/keep-branch", test_keep_branch);
  return g_test_run ();
}
