/* approval-routing-support.c: fixtures of the approval routing tests.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "approval-routing-support.h"

void
ars_fixture_setup (Fixture *f, gconstpointer data)
{
  f->root = sat_make_temp_dir ("approval-routing");
}

void
ars_fixture_teardown (Fixture *f, gconstpointer data)
{
  sat_rm_rf (f->root);
  g_free (f->root);
}

void
ars_write_asker (const char         *root,
                 guint               answers,
                 const char * const *specs)
{
  g_autofree char *child = g_test_build_filename (G_TEST_DIST, "fixtures", "children", "ask-approval.sh", NULL);
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *text = NULL;
  g_autofree char *count = g_strdup_printf ("%u", answers);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, "asker");
  json_builder_set_member_name (builder, "command");
  json_builder_begin_array (builder);
  json_builder_add_string_value (builder, child);
  json_builder_add_string_value (builder, count);
  for (guint i = 0; specs[i] != NULL; i++)
    json_builder_add_string_value (builder, specs[i]);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  node = json_builder_get_root (builder);
  text = json_to_string (node, FALSE);
  sat_write_file (root, ".subagent/agents/asker.json", text);
}

SubagentManager *
ars_new_manager (const char             *root,
                 const char             *config_yaml,
                 SubagentPermissionMode  mode)
{
  g_autoptr(GError) error = NULL;
  SubagentManager *manager;

  if (config_yaml != NULL)
    sat_write_file (root, ".subagent/config.yaml", config_yaml);
  manager = subagent_manager_new (root, &error);
  g_assert_no_error (error);
  subagent_manager_set_permission_mode (manager, mode);
  subagent_command_runner_set_interactive_stdin (SUBAGENT_COMMAND_RUNNER (subagent_manager_get_runner (manager)),
                                                 TRUE);
  return manager;
}

SubagentRunOptions *
ars_asker_options (const char *isolation)
{
  SubagentRunOptions *options = subagent_run_options_new ();

  subagent_run_options_set_def_name (options, "asker");
  subagent_run_options_set_isolation (options, isolation ? isolation : "shared");
  return options;
}

void
ars_on_run_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  SubagentRunResult **out = user_data;

  *out = subagent_manager_run_finish (SUBAGENT_MANAGER (source), result, &error);
  g_assert_no_error (error);
}

void
ars_wait_for_result (SubagentRunResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
}

GPtrArray *
ars_answers_of (SubagentRunResult *result)
{
  GPtrArray *answers = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  g_auto(GStrv) lines = g_strsplit (subagent_run_result_get_final_answer (result), "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "got: "))
      {
        g_autoptr(JsonNode) node = json_from_string (lines[i] + 5, NULL);

        g_assert_nonnull (node);
        g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
        g_assert_cmpstr (json_object_get_string_member (json_node_get_object (node), "type"), ==, "approval_response");
        g_ptr_array_add (answers, json_node_dup_object (node));
      }
  return answers;
}

void
ars_assert_answer (JsonObject *answer,
                   const char *id,
                   gboolean    approved,
                   const char *reason_part)
{
  g_assert_cmpstr (json_object_get_string_member (answer, "id"), ==, id);
  g_assert_cmpint (json_object_get_boolean_member (answer, "approved"), ==, approved);
  if (reason_part != NULL)
    g_assert_nonnull (strstr (json_object_get_string_member (answer, "reason"), reason_part));
}

JsonObject *
ars_run_for_one_answer (SubagentManager *manager,
                        const char      *isolation)
{
  g_autoptr(SubagentRunOptions) options = ars_asker_options (isolation);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GPtrArray) answers = NULL;
  g_autoptr(GError) error = NULL;

  result = subagent_manager_run (manager, "write the motd", options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_nonnull (strstr (subagent_run_result_get_final_answer (result), "done"));
  answers = ars_answers_of (result);
  g_assert_cmpuint (answers->len, ==, 1);
  return json_object_ref (answers->pdata[0]);
}

gboolean
ars_approvals_dir_exists (const char *root)
{
  g_autofree char *dir = g_build_filename (root, ".subagent", "approvals", NULL);
  return g_file_test (dir, G_FILE_TEST_EXISTS);
}

