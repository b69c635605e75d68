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
#include "subagent-json-line-private.h"
#include "subagent-scratch-private.h"

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
 * copied it each time: some 30 passes per child), the run's entries in one
 * buffer and the names it replaces in an array of a fixed size (a run sets
 * or removes at most ENV_MAX names). */
#define ENV_MAX 40

typedef struct {
  GString *own;                  /* the "KEY=VALUE\0" entries the run sets */
  const char *drop[ENV_MAX];     /* keys taken out of the host's (static strings) */
  gsize drop_len[ENV_MAX];       /* their lengths, compared first */
  guint n_own, n_drop;
} EnvBuilder;

static void
env_unset (EnvBuilder *env,
           const char *key)
{
  if (G_UNLIKELY (env->n_drop == ENV_MAX))
    g_error ("A child's environment sets more than %d names: raise ENV_MAX", ENV_MAX);
  env->drop_len[env->n_drop] = strlen (key);
  env->drop[env->n_drop++] = key;
}

static void
env_set (EnvBuilder *env,
         const char *key,
         const char *value)
{
  env_unset (env, key);
  g_string_append (env->own, key);
  g_string_append_c (env->own, '=');
  g_string_append_len (env->own, value, (gssize) strlen (value) + 1);
  env->n_own++;
}

/* @value in decimal, without printf (a child's environment has a dozen). */
static void
env_set_number (EnvBuilder *env,
                const char *key,
                guint64     value)
{
  char text[SUBAGENT_INT_TEXT_SIZE];

  env_set (env, key, _subagent_format_int ((gint64) MIN (value, (guint64) G_MAXINT64), text));
}

/* @value as "%.2f" does it; whole cents (a budget usually is) without
 * printf. */
static void
env_set_cents (EnvBuilder *env,
               const char *key,
               double      value)
{
  double hundredths = value * 100;
  char number[G_ASCII_DTOSTR_BUF_SIZE];

  if (hundredths >= 0 && hundredths < 1e15 && hundredths == (double) (gint64) hundredths)
    {
      gint64 whole = (gint64) hundredths;
      char text[SUBAGENT_INT_TEXT_SIZE];
      char *end;

      /* The integer part, then two digits: room for both in @number. */
      end = g_stpcpy (number, _subagent_format_int (whole / 100, text));
      *end++ = '.';
      *end++ = (char) ('0' + whole % 100 / 10);
      *end++ = (char) ('0' + whole % 10);
      *end = '\0';
    }
  else
    g_ascii_formatd (number, sizeof number, "%.2f", value);
  env_set (env, key, number);
}

/* Whether the host's @entry keeps its place: not a name the run replaces
 * (@first marks the first bytes of those, which most of the host's names,
 * PATH, HOME, LANG..., do not start with). */
static gboolean
env_keeps (const EnvBuilder *env,
           const guint8     *first,
           const char       *entry)
{
  const char *eq = strchr (entry, '=');
  gsize key_len;

  if (eq == NULL)
    return FALSE;
  key_len = (gsize) (eq - entry);
  for (guint i = 0; first[*(const guchar *) entry] && i < env->n_drop; i++)
    if (env->drop_len[i] == key_len && memcmp (entry, env->drop[i], key_len) == 0)
      return FALSE;
  return TRUE;
}

/* The environment as one block, the array first and its strings after it,
 * so that one g_free() frees it (as the spawn does): a child's forty-odd
 * entries were as many allocations, and as many frees. */
static char **
env_end (EnvBuilder *env)
{
  guint8 first[256] = { 0 };
  gsize n_env = 0, n = 0, text_size = env->own->len, array_size;
  char **result;
  char *text;

  for (guint i = 0; i < env->n_drop; i++)
    first[*(const guchar *) env->drop[i]] = 1;
  for (char **p = environ; *p != NULL; p++)
    n_env++;
  /* The host's entries kept, then the block grown to hold their text. */
  result = g_new (char *, n_env + env->n_own + 1);
  for (char **p = environ; *p != NULL && n < n_env; p++)
    if (env_keeps (env, first, *p))
      {
        result[n++] = *p;
        text_size += strlen (*p) + 1;
      }
  array_size = (n + env->n_own + 1) * sizeof (char *);
  result = g_realloc (result, array_size + text_size);
  text = (char *) result + array_size;
  for (gsize i = 0; i < n; i++)
    {
      gsize size = strlen (result[i]) + 1;

      result[i] = memcpy (text, result[i], size);
      text += size;
    }
  memcpy (text, env->own->str, env->own->len);
  for (guint i = 0; i < env->n_own; i++)
    {
      result[n + i] = text;
      text += strlen (text) + 1;
    }
  result[n + env->n_own] = NULL;
  _subagent_scratch_give (SUBAGENT_SCRATCH_CHILD_ENV, env->own);
  return result;
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
  EnvBuilder env = { _subagent_scratch_take (SUBAGENT_SCRATCH_CHILD_ENV), { NULL }, { 0 }, 0, 0 };
  g_autofree char *tools = join_tool_names (subagent_run_context_get_tools (context), def);
  guint64 inherited = g_ascii_strtoull (g_getenv ("SUBAGENT_MAX_DEPTH") ? g_getenv ("SUBAGENT_MAX_DEPTH") : "0", NULL, 10);
  const char *model = subagent_def_get_model (def);
  gint batch_index = subagent_run_context_get_batch_index (context);

  /* The key signs approval verdicts; a child holding it could forge them. */
  env_unset (&env, "SUBAGENT_APPROVAL_HMAC_KEY");
  env_set (&env, "SUBAGENT_PROTOCOL", "1");
  env_set (&env, "SUBAGENT_RUN_ID", subagent_run_context_get_run_id (context));
  env_set (&env, "SUBAGENT_PARENT_RUN_ID", subagent_run_context_get_parent_run_id (context));
  env_set_number (&env, "SUBAGENT_DEPTH", subagent_run_context_get_depth (context));
  /* The tighter of the definition's limit and one the host itself runs under. */
  env_set_number (&env, "SUBAGENT_MAX_DEPTH",
                  inherited > 0 ? MIN (inherited, subagent_def_get_max_depth (def)) : subagent_def_get_max_depth (def));
  env_set (&env, "SUBAGENT_DEF_NAME", subagent_def_get_name (def));
  env_set (&env, "SUBAGENT_CHILD_ROOT", subagent_isolation_context_get_child_root (isolation));
  env_set (&env, "SUBAGENT_ISOLATION", subagent_isolation_context_get_isolation (isolation));
  env_set_number (&env, "SUBAGENT_MAX_ITERATIONS", subagent_run_context_get_max_iterations (context));
  env_set_number (&env, "SUBAGENT_MAX_TOOL_CALLS", subagent_run_context_get_max_tool_calls (context));
  env_set_number (&env, "SUBAGENT_TIMEOUT_SECONDS", subagent_run_context_get_timeout_seconds (context));
  env_set_cents (&env, "SUBAGENT_MAX_COST_CENTS", subagent_run_context_get_max_cost_cents (context));
  env_set (&env, "SUBAGENT_PERMISSION_MODE",
           subagent_permission_mode_to_string (subagent_run_context_get_permission_mode (context)));
  env_set (&env, "SUBAGENT_TOOLS", tools);
  if (batch_index >= 0)
    env_set_number (&env, "SUBAGENT_BATCH_INDEX", (guint) batch_index);
  else
    env_unset (&env, "SUBAGENT_BATCH_INDEX");
  env_set (&env, "SUBAGENT_STDIN_MODE", interactive_stdin ? "interactive" : "eof");
  env_set_number (&env, "SUBAGENT_TASK_BYTES", task_bytes);
  /* stdin is PROMPT "\n\n" TASK: the prompt's length splits it, blank
   * lines in the prompt or not (0: no prompt, no separator). */
  env_set_number (&env, "SUBAGENT_SYSTEM_PROMPT_BYTES", prompt_bytes);
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
