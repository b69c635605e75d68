/* subagentctl-run.c: `subagentctl run`, any program as an isolated child agent.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib-unix.h>
#include <stdio.h>

#include "subagentctl.h"

typedef struct {
  GMainLoop *loop;
  SubagentRunResult *result;
  GError *error;
} RunWait;

static void
run_done (GObject      *source,
          GAsyncResult *res,
          gpointer      user_data)
{
  RunWait *wait = user_data;

  wait->result = subagent_manager_run_finish (SUBAGENT_MANAGER (source), res, &wait->error);
  g_main_loop_quit (wait->loop);
}

static gboolean
on_interrupt (gpointer user_data)
{
  g_cancellable_cancel (G_CANCELLABLE (user_data));
  return G_SOURCE_CONTINUE;
}

/* --option KEY=VALUE: VALUE is parsed as JSON when it parses (true, 3,
 * "x"), else taken as a string. */
static gboolean
apply_isolation_options (SubagentRunOptions  *options,
                         char               **pairs,
                         GError             **error)
{
  for (guint i = 0; pairs != NULL && pairs[i] != NULL; i++)
    {
      const char *eq = strchr (pairs[i], '=');
      g_autofree char *key = NULL;
      g_autoptr(JsonNode) value = NULL;

      if (eq == NULL || eq == pairs[i])
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                       "--option “%s” must look like KEY=VALUE, such as keep_branch=true", pairs[i]);
          return FALSE;
        }
      key = g_strndup (pairs[i], eq - pairs[i]);
      value = json_from_string (eq + 1, NULL);
      if (value == NULL || !JSON_NODE_HOLDS_VALUE (value))
        {
          g_clear_pointer (&value, json_node_unref);
          value = json_node_init_string (json_node_alloc (), eq + 1);
        }
      subagent_run_options_set_isolation_option (options, key, value);
    }
  return TRUE;
}

static void
print_human (SubagentRunResult *result)
{
  g_autoptr(JsonObject) object = subagent_run_result_to_json (result);
  const char *answer = json_object_get_string_member_with_default (object, "final_answer", "");
  JsonObject *review = json_object_get_member (object, "review") && JSON_NODE_HOLDS_OBJECT (json_object_get_member (object, "review"))
                       ? json_object_get_object_member (object, "review") : NULL;

  printf ("status:     %s\n", json_object_get_string_member_with_default (object, "status", ""));
  printf ("run id:     %s\n", json_object_get_string_member_with_default (object, "run_id", ""));
  if (json_object_has_member (object, "iterations"))
    printf ("usage:      %" G_GINT64_FORMAT " iterations, %" G_GINT64_FORMAT " tool calls, %.2f cents\n",
            json_object_get_int_member_with_default (object, "iterations", 0),
            json_object_get_int_member_with_default (object, "tool_calls", 0),
            json_object_get_double_member_with_default (object, "cost_cents", 0));
  if (review != NULL)
    printf ("review:     %s\n", json_object_get_string_member_with_default (review, "patch_path", ""));
  printf ("message:    %s\n", json_object_get_string_member_with_default (object, "message", ""));
  if (answer != NULL && *answer != '\0')
    printf ("\n%s\n", answer);
}

int
sactl_cmd_run (int    argc,
               char **argv)
{
  g_autofree char *root_option = NULL;
  g_autofree char *def_name = NULL;
  g_autofree char *isolation = NULL;
  g_autofree char *memory_limit = NULL;
  g_autofree char *command_line = NULL;
  g_auto(GStrv) option_pairs = NULL;
  g_auto(GStrv) task_words = NULL;
  int depth = 0;
  int timeout = 0;
  double cpu_quota = 0;
  gboolean json = FALSE;
  gboolean interactive = FALSE;
  const GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &root_option, "Workspace root (default: current directory)", "DIR" },
    { "def", 'd', 0, G_OPTION_ARG_STRING, &def_name, "Definition to run", "NAME" },
    { "isolation", 'i', 0, G_OPTION_ARG_STRING, &isolation, "shared, auto, or a backend an installed plugin provides (see `subagentctl plugins`)", "MODE" },
    { "depth", 0, 0, G_OPTION_ARG_INT, &depth, "The parent's depth (default 0)", "N" },
    { "command", 'c', 0, G_OPTION_ARG_STRING, &command_line, "Child program (shell words) instead of the definition's", "CMD" },
    { "cpu-quota", 0, 0, G_OPTION_ARG_DOUBLE, &cpu_quota, "CPUs the child may use (backends that enforce limits)", "CPUS" },
    { "memory-limit", 0, 0, G_OPTION_ARG_STRING, &memory_limit, "Memory limit such as 64m (backends that enforce limits)", "SIZE" },
    { "timeout", 't', 0, G_OPTION_ARG_INT, &timeout, "Wall-clock limit in seconds", "SECONDS" },
    { "option", 'o', 0, G_OPTION_ARG_STRING_ARRAY, &option_pairs, "Isolation backend option", "KEY=VALUE" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the result object as JSON", NULL },
    { "interactive", 0, 0, G_OPTION_ARG_NONE, &interactive,
      "The child speaks the approval protocol: its stdin stays open for verdicts (docs/child-protocol.md)", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &task_words, NULL, "TASK..." },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("[--] TASK... — run a child agent");
  g_autoptr(GError) error = NULL;
  g_autofree char *root = NULL;
  g_autofree char *task = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentRunOptions) options = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GMainLoop) loop = NULL;
  g_autoptr(SactlApprovalRoute) route = NULL;
  RunWait wait = { NULL, };
  SubagentRunStatus status;
  guint sigint_id, sigterm_id;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return sactl_fail (error);
  if (task_words == NULL || task_words[0] == NULL)
    return sactl_fail_message ("run: give the task, such as: subagentctl run --def NAME -- \"fix the tests\"");
  if (depth < 0 || timeout < 0 || cpu_quota < 0)
    return sactl_fail_message ("run: --depth, --timeout and --cpu-quota must not be negative");

  task = g_strjoinv (" ", task_words);
  if ((root = sactl_resolve_root (root_option, &error)) == NULL)
    return sactl_fail (error);
  if ((manager = subagent_manager_new (root, &error)) == NULL)
    return sactl_fail (error);

  options = subagent_run_options_new ();
  subagent_run_options_set_def_name (options, def_name);
  subagent_run_options_set_isolation (options, isolation);
  subagent_run_options_set_depth (options, (guint) depth);
  subagent_run_options_set_timeout_seconds (options, (guint) timeout);
  subagent_run_options_set_cpu_quota (options, cpu_quota);
  subagent_run_options_set_memory_limit (options, memory_limit);
  if (command_line != NULL)
    {
      g_auto(GStrv) command = NULL;
      if (!g_shell_parse_argv (command_line, NULL, &command, &error))
        return sactl_fail_message ("run: --command “%s” does not parse: %s", command_line, error->message);
      subagent_run_options_set_command (options, (const char * const *) command);
    }
  if (!apply_isolation_options (options, option_pairs, &error))
    return sactl_fail (error);

  /* Only a child with an open stdin can get a verdict: route its requests
   * to the parent run's queue (and the terminal). */
  if (interactive)
    {
      SubagentRunner *runner = subagent_manager_get_runner (manager);

      if (SUBAGENT_IS_COMMAND_RUNNER (runner))
        subagent_command_runner_set_interactive_stdin (SUBAGENT_COMMAND_RUNNER (runner), TRUE);
      route = sactl_approval_route_new (manager, root, &error);
      if (route == NULL && error != NULL)
        {
          fprintf (stderr, "subagentctl: warning: %s; the child is unattended (what needs an approval is denied)\n",
                   error->message);
          g_clear_error (&error);
        }
    }

  /* Ctrl-C cancels the child: it is killed and its workspace cleaned up. */
  loop = g_main_loop_new (NULL, FALSE);
  wait.loop = loop;
  sigint_id = g_unix_signal_add (SIGINT, on_interrupt, cancellable);
  sigterm_id = g_unix_signal_add (SIGTERM, on_interrupt, cancellable);
  subagent_manager_run_async (manager, task, options, cancellable, run_done, &wait);
  g_main_loop_run (loop);
  g_source_remove (sigint_id);
  g_source_remove (sigterm_id);

  if (wait.result == NULL)
    {
      int code = sactl_fail (wait.error);
      g_clear_error (&wait.error);
      return code;
    }

  if (json)
    {
      g_autoptr(JsonObject) object = subagent_run_result_to_json (wait.result);
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), object);
      sactl_print_json (node);
    }
  else
    print_human (wait.result);

  status = subagent_run_result_get_status (wait.result);
  if (status == SUBAGENT_RUN_STATUS_ERROR || status == SUBAGENT_RUN_STATUS_FAILED)
    fprintf (stderr, "subagentctl: %s\n", subagent_run_result_get_message (wait.result));
  g_object_unref (wait.result);
  return status == SUBAGENT_RUN_STATUS_COMPLETE || status == SUBAGENT_RUN_STATUS_PARTIAL ? 0 : 1;
}
