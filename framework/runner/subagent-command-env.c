/* subagent-command-env.c: what a command run gives its child: the
 * environment (the host's, less secrets, plus the run's SUBAGENT_*
 * variables) and the text on its stdin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-command-run-state-private.h"

extern char **environ;


/* TRUE when the host gave the parent no tools of its own (subagentctl, a
 * host without a tool system): nothing then narrows the definition's. */
static gboolean
parent_has_no_tools (SubagentToolRegistry *tools)
{
  SubagentToolRegistry *parent;
  g_auto(GStrv) names = NULL;

  if (tools == NULL)
    return TRUE;
  if (!SUBAGENT_IS_CHILD_TOOL_REGISTRY (tools))
    return FALSE;
  parent = subagent_child_tool_registry_get_parent (SUBAGENT_CHILD_TOOL_REGISTRY (tools));
  names = parent ? subagent_tool_registry_list_names (parent) : NULL;
  return names == NULL || names[0] == NULL;
}

/* The tools the child may use: its registry's when a parent registry
 * narrows them, else what its definition declares (`tools:` minus
 * `disallowed_tools:`), so that a wrapper can pass them on to its agent. */
static char *
join_tool_names (SubagentToolRegistry *tools,
                 SubagentDef          *def)
{
  g_auto(GStrv) names = NULL;
  const char * const *whitelist = subagent_def_get_tool_whitelist (def);
  const char * const *disallowed = subagent_def_get_disallowed_tools (def);
  g_autoptr(GStrvBuilder) builder = NULL;

  if (!parent_has_no_tools (tools))
    {
      names = subagent_tool_registry_list_names (tools);
      return g_strjoinv (",", names);
    }
  if (whitelist == NULL)
    return g_strdup ("");
  builder = g_strv_builder_new ();
  for (guint i = 0; whitelist[i] != NULL; i++)
    if (disallowed == NULL || !g_strv_contains (disallowed, whitelist[i]))
      g_strv_builder_add (builder, whitelist[i]);
  names = g_strv_builder_end (builder);
  return g_strjoinv (",", names);
}

/* The child's environment under construction: the host's, less what the
 * run sets or removes, plus the run's variables. Built in one pass over
 * the host's environment (g_environ_setenv() per variable scanned and
 * copied it each time: some 30 passes per child). */
typedef struct {
  GPtrArray *own;                /* "KEY=VALUE" the run sets, owned until env_end() */
  GPtrArray *drop;               /* keys taken out of the host's (static strings) */
} EnvBuilder;

static void
env_set (EnvBuilder *env,
         const char *key,
         const char *value)
{
  g_ptr_array_add (env->own, g_strconcat (key, "=", value, NULL));
  g_ptr_array_add (env->drop, (gpointer) key);
}

static void
env_unset (EnvBuilder *env,
           const char *key)
{
  g_ptr_array_add (env->drop, (gpointer) key);
}

static char **
env_end (EnvBuilder *env)
{
  GPtrArray *result = g_ptr_array_new_full (64 + env->own->len, NULL);
  guint8 first[256] = { 0 };

  /* Only an entry whose first byte starts a replaced name is compared with
   * the replaced names (most of the host's are not: PATH, HOME, LANG...). */
  for (guint i = 0; i < env->drop->len; i++)
    first[*(const guchar *) g_ptr_array_index (env->drop, i)] = 1;
  for (char **p = environ; *p != NULL; p++)
    {
      const char *eq = strchr (*p, '=');
      gsize key_len = eq != NULL ? (gsize) (eq - *p) : strlen (*p);
      gboolean dropped = FALSE;

      for (guint i = 0; first[*(const guchar *) *p] && i < env->drop->len && !dropped; i++)
        {
          const char *key = g_ptr_array_index (env->drop, i);

          dropped = strncmp (*p, key, key_len) == 0 && key[key_len] == '\0';
        }
      if (!dropped && eq != NULL)
        g_ptr_array_add (result, g_strdup (*p));
    }
  for (guint i = 0; i < env->own->len; i++)
    g_ptr_array_add (result, g_ptr_array_index (env->own, i));
  g_ptr_array_unref (env->own);   /* its strings are the result's now */
  g_ptr_array_unref (env->drop);
  g_ptr_array_add (result, NULL);
  return (char **) g_ptr_array_free (result, FALSE);
}

char **
_subagent_command_run_build_environment (RunState  *state,
                                         gboolean   interactive_stdin,
                                         gsize      task_bytes,
                                         gsize      prompt_bytes)
{
  SubagentRunContext *context = state->context;
  SubagentDef *def = subagent_run_context_get_definition (context);
  SubagentIsolationContext *isolation = subagent_run_context_get_isolation (context);
  EnvBuilder env = { g_ptr_array_new (), g_ptr_array_new () };
  char number[G_ASCII_DTOSTR_BUF_SIZE];
  char depth[24], max_depth[24], max_iterations[24], max_tool_calls[24], timeout[24], bytes[24], prompt_length[24];
  g_autofree char *tools = join_tool_names (subagent_run_context_get_tools (context), def);
  guint64 inherited = g_ascii_strtoull (g_getenv ("SUBAGENT_MAX_DEPTH") ? g_getenv ("SUBAGENT_MAX_DEPTH") : "0", NULL, 10);
  const char *model = subagent_def_get_model (def);
  gint batch_index = subagent_run_context_get_batch_index (context);

  g_snprintf (depth, sizeof depth, "%u", subagent_run_context_get_depth (context));
  /* The tighter of the definition's limit and one the host itself runs under. */
  g_snprintf (max_depth, sizeof max_depth, "%u",
              inherited > 0 ? (guint) MIN (inherited, subagent_def_get_max_depth (def)) : subagent_def_get_max_depth (def));
  g_snprintf (max_iterations, sizeof max_iterations, "%u", subagent_run_context_get_max_iterations (context));
  g_snprintf (max_tool_calls, sizeof max_tool_calls, "%u", subagent_run_context_get_max_tool_calls (context));
  g_snprintf (timeout, sizeof timeout, "%u", subagent_run_context_get_timeout_seconds (context));
  g_snprintf (bytes, sizeof bytes, "%" G_GSIZE_FORMAT, task_bytes);
  g_snprintf (prompt_length, sizeof prompt_length, "%" G_GSIZE_FORMAT, prompt_bytes);

  /* The key signs approval verdicts; a child holding it could forge them. */
  env_unset (&env, "SUBAGENT_APPROVAL_HMAC_KEY");
  env_set (&env, "SUBAGENT_PROTOCOL", "1");
  env_set (&env, "SUBAGENT_RUN_ID", subagent_run_context_get_run_id (context));
  env_set (&env, "SUBAGENT_PARENT_RUN_ID", subagent_run_context_get_parent_run_id (context));
  env_set (&env, "SUBAGENT_DEPTH", depth);
  env_set (&env, "SUBAGENT_MAX_DEPTH", max_depth);
  env_set (&env, "SUBAGENT_DEF_NAME", subagent_def_get_name (def));
  env_set (&env, "SUBAGENT_CHILD_ROOT", subagent_isolation_context_get_child_root (isolation));
  env_set (&env, "SUBAGENT_ISOLATION", subagent_isolation_context_get_isolation (isolation));
  env_set (&env, "SUBAGENT_MAX_ITERATIONS", max_iterations);
  env_set (&env, "SUBAGENT_MAX_TOOL_CALLS", max_tool_calls);
  env_set (&env, "SUBAGENT_TIMEOUT_SECONDS", timeout);
  g_ascii_formatd (number, sizeof number, "%.2f", subagent_run_context_get_max_cost_cents (context));
  env_set (&env, "SUBAGENT_MAX_COST_CENTS", number);
  env_set (&env, "SUBAGENT_PERMISSION_MODE",
           subagent_permission_mode_to_string (subagent_run_context_get_permission_mode (context)));
  env_set (&env, "SUBAGENT_TOOLS", tools);
  if (batch_index != SUBAGENT_NO_BATCH_INDEX)
    {
      char index[24];

      g_snprintf (index, sizeof index, "%d", batch_index);
      env_set (&env, "SUBAGENT_BATCH_INDEX", index);
    }
  else
    env_unset (&env, "SUBAGENT_BATCH_INDEX");
  env_set (&env, "SUBAGENT_STDIN_MODE", interactive_stdin ? "interactive" : "eof");
  env_set (&env, "SUBAGENT_TASK_BYTES", bytes);
  /* stdin is PROMPT "\n\n" TASK: the prompt's length splits it, blank
   * lines in the prompt or not (0: no prompt, no separator). */
  env_set (&env, "SUBAGENT_SYSTEM_PROMPT_BYTES", prompt_length);
  env_set (&env, "SUBAGENT_MODEL", model ? model : "");
  env_set (&env, SUBAGENT_RUN_TOKEN_ENV, state->token);
  if (state->confinement.tmpdir != NULL)
    {
      env_set (&env, "TMPDIR", state->confinement.tmpdir);
      env_set (&env, "TMP", state->confinement.tmpdir);
      env_set (&env, "TEMP", state->confinement.tmpdir);
    }
  env_set (&env, "SUBAGENT_CONFINEMENT", state->confinement.applied);
  if (subagent_run_context_get_skill (context) != NULL)
    {
      SubagentSkill *skill = subagent_run_context_get_skill (context);
      /* The workspace's own copy when it has one (snapshots, containers'
       * copies, tracked files of a worktree), else the parent's file. */
      g_autofree char *in_child = g_build_filename (subagent_isolation_context_get_child_root (isolation),
                                                    subagent_skill_get_relative_path (skill), NULL);

      env_set (&env, "SUBAGENT_SKILL_FILE",
               g_file_test (in_child, G_FILE_TEST_IS_REGULAR) ? in_child : subagent_skill_get_path (skill));
      env_set (&env, "SUBAGENT_SKILL_NAME", subagent_skill_get_name (skill));
    }
  else
    {
      env_unset (&env, "SUBAGENT_SKILL_FILE");
      env_unset (&env, "SUBAGENT_SKILL_NAME");
    }
  return env_end (&env);
}

/* "system prompt\n\n[skill block\n\n]task\n": each block only when there
 * is one; the skill comes after the definition's prompt. */
GBytes *
_subagent_command_run_build_stdin_text (SubagentRunContext *context)
{
  const char *prompt = subagent_def_get_system_prompt (subagent_run_context_get_definition (context));
  const char *task = subagent_run_context_get_task (context);
  SubagentSkill *skill = subagent_run_context_get_skill (context);
  GString *text = g_string_new (NULL);

  if (prompt != NULL && *prompt != '\0')
    {
      g_string_append (text, prompt);
      g_string_append (text, "\n\n");
    }
  if (skill != NULL)
    {
      g_string_append_printf (text, "Skill \"%s\" (%s):\n%s\n\n", subagent_skill_get_name (skill),
                              subagent_skill_get_relative_path (skill), subagent_skill_get_body (skill));
    }
  g_string_append (text, task);
  if (text->len == 0 || text->str[text->len - 1] != '\n')
    g_string_append_c (text, '\n');
  return g_string_free_to_bytes (text);
}
