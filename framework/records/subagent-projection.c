/* subagent-projection.c: the part of a run result the parent's model sees.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"

/* Reasons are for a model to read: one line, bounded. */
#define REASON_MAX_CHARS 400

/* The command runner appends the child's stderr tail after this marker;
 * the tail is a host diagnostic (it may hold a stack trace). */
#define STDERR_TAIL_MARKER "; its stderr ends with:"

static char *
first_line (const char *message)
{
  g_autofree char *line = NULL;
  const char *end;
  char *marker;

  if (message == NULL)
    return g_strdup ("");
  end = strchr (message, '\n');
  line = end ? g_strndup (message, end - message) : g_strdup (message);
  if ((marker = strstr (line, STDERR_TAIL_MARKER)) != NULL)
    *marker = '\0';
  g_strstrip (line);
  if (g_utf8_strlen (line, -1) > REASON_MAX_CHARS)
    {
      char *cut = g_utf8_offset_to_pointer (line, REASON_MAX_CHARS);
      *cut = '\0';
      return g_strconcat (line, "…", NULL);
    }
  return g_steal_pointer (&line);
}

static gboolean
is_known_stop_reason (const char *reason)
{
  static const char * const known[] = {
    SUBAGENT_STOP_REASON_COMPLETE, SUBAGENT_STOP_REASON_MAX_TURNS, SUBAGENT_STOP_REASON_MAX_TOKENS,
    SUBAGENT_STOP_REASON_CANCELLED, SUBAGENT_STOP_REASON_ERROR, SUBAGENT_STOP_REASON_USAGE_LIMIT,
    SUBAGENT_STOP_REASON_BUDGET, SUBAGENT_STOP_REASON_TIMEOUT,
  };

  for (gsize i = 0; i < G_N_ELEMENTS (known); i++)
    if (g_str_equal (reason, known[i]))
      return TRUE;
  return FALSE;
}

/**
 * subagent_run_result_dup_reason:
 * @self: a #SubagentRunResult
 *
 * Why a run did not complete, in one line for the parent's model:
 *
 * - a failure gives its message without host diagnostics (no stderr tail),
 *   or `unknown failure` when it has none; a stop reason libsubagent does
 *   not know gives `unknown stop reason: REASON`; `usage_limit` adds that a
 *   fresh subagent should take over;
 * - a partial or cancelled run gives its stop reason, such as `budget`,
 *   `max_turns` or `cancelled`, followed by `: ` and the first line of its
 *   message when it has one.
 *
 * Returns: (transfer full) (nullable): the reason; %NULL for a complete run
 */
char *
subagent_run_result_dup_reason (SubagentRunResult *self)
{
  SubagentRunStatus status;
  const char *stop_reason;
  g_autofree char *line = NULL;

  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), NULL);

  status = subagent_run_result_get_status (self);
  stop_reason = subagent_run_result_get_stop_reason (self);
  line = first_line (subagent_run_result_get_message (self));

  switch (status)
    {
    case SUBAGENT_RUN_STATUS_COMPLETE:
      return NULL;
    case SUBAGENT_RUN_STATUS_PARTIAL:
    case SUBAGENT_RUN_STATUS_CANCELLED:
      if (*stop_reason == '\0')
        stop_reason = status == SUBAGENT_RUN_STATUS_CANCELLED ? SUBAGENT_STOP_REASON_CANCELLED : "limit reached";
      return *line ? g_strdup_printf ("%s: %s", stop_reason, line) : g_strdup (stop_reason);
    case SUBAGENT_RUN_STATUS_FAILED:
      if (*stop_reason != '\0' && !is_known_stop_reason (stop_reason))
        return *line ? g_strdup_printf ("unknown stop reason: %s (%s)", stop_reason, line)
                     : g_strdup_printf ("unknown stop reason: %s", stop_reason);
      if (g_str_equal (stop_reason, SUBAGENT_STOP_REASON_USAGE_LIMIT))
        return g_strdup_printf ("%s; delegate the rest of the task to a fresh subagent",
                                *line ? line : "the child reached its usage limit");
      return *line ? g_steal_pointer (&line) : g_strdup ("unknown failure");
    case SUBAGENT_RUN_STATUS_ERROR:
    default:
      return *line ? g_steal_pointer (&line) : g_strdup ("unknown failure");
    }
}

/* The worktree path relative to @root, when the workspace lies under it. */
static char *
project_relative (const char *root,
                  const char *path)
{
  g_autoptr(GFile) root_file = NULL;
  g_autoptr(GFile) path_file = NULL;

  if (root == NULL || path == NULL || *path == '\0')
    return NULL;
  root_file = g_file_new_for_path (root);
  path_file = g_file_new_for_path (path);
  return g_file_get_relative_path (root_file, path_file);
}

/**
 * subagent_run_result_project:
 * @self: a #SubagentRunResult
 * @root: (nullable): the parent's workspace root, for `worktree_path`
 * @resumable: whether the child's session can take a follow-up
 *
 * The envelope the parent's model receives for a delegation (reference
 * 003's `ProjectToolResult`), and nothing else:
 *
 * - `output`: the child's answer, exactly;
 * - `status`: left out when the run completed; else `partial`,
 *   `cancelled` or `failed` (a run that could not start is `failed`);
 * - `reason`: subagent_run_result_dup_reason(), when not complete;
 * - `continuation`: the session id, when @resumable and a session was kept;
 * - `worktree_path`: the worktree's path relative to @root, for a
 *   worktree-isolated child whose worktree lies under @root.
 *
 * Usage counters, costs, lineage, review paths, runner messages and stderr
 * are host diagnostics and stay out.
 *
 * Returns: (transfer full): a new JSON object
 */
JsonObject *
subagent_run_result_project (SubagentRunResult *self,
                             const char        *root,
                             gboolean           resumable)
{
  JsonObject *object;
  SubagentRunStatus status;
  SubagentLineage *lineage;
  const char *session_id;
  g_autofree char *reason = NULL;
  g_autofree char *relative = NULL;

  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), NULL);

  status = subagent_run_result_get_status (self);
  object = json_object_new ();
  json_object_set_string_member (object, "output", subagent_run_result_get_final_answer (self));
  if (status != SUBAGENT_RUN_STATUS_COMPLETE)
    json_object_set_string_member (object, "status",
                                   subagent_run_status_to_string (status == SUBAGENT_RUN_STATUS_ERROR
                                                                  ? SUBAGENT_RUN_STATUS_FAILED : status));
  if ((reason = subagent_run_result_dup_reason (self)) != NULL)
    json_object_set_string_member (object, "reason", reason);

  session_id = subagent_run_result_get_session_id (self);
  if (resumable && session_id != NULL)
    json_object_set_string_member (object, "continuation", session_id);

  lineage = subagent_run_result_get_lineage (self);
  if (lineage != NULL &&
      (relative = project_relative (root, subagent_lineage_get_worktree_path (lineage))) != NULL)
    json_object_set_string_member (object, "worktree_path", relative);
  return object;
}

/**
 * subagent_run_result_check:
 * @self: a #SubagentRunResult
 * @error: return location for a #GError
 *
 * Turns a failed run into a tool failure. A child that ran and failed gives
 * %SUBAGENT_ERROR_CHILD_FAILED naming the child's session ("its session ID
 * has the story") with subagent_run_result_dup_reason() — never the
 * child's stderr or a stack trace; a child that could not start gives the
 * reason it could not.
 *
 * Returns: %TRUE for a complete, partial or cancelled run
 */
gboolean
subagent_run_result_check (SubagentRunResult  *self,
                           GError            **error)
{
  SubagentRunStatus status;
  SubagentLineage *lineage;
  const char *def_name;
  const char *session_id;
  g_autofree char *reason = NULL;

  g_return_val_if_fail (SUBAGENT_IS_RUN_RESULT (self), FALSE);

  status = subagent_run_result_get_status (self);
  if (status != SUBAGENT_RUN_STATUS_FAILED && status != SUBAGENT_RUN_STATUS_ERROR)
    return TRUE;

  lineage = subagent_run_result_get_lineage (self);
  def_name = lineage ? subagent_lineage_get_def_name (lineage) : "subagent";
  session_id = subagent_run_result_get_session_id (self);
  reason = subagent_run_result_dup_reason (self);
  if (session_id != NULL)
    g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_CHILD_FAILED,
                 "The subagent “%s” failed (%s); its session %s has the story",
                 def_name, reason, session_id);
  else if (*subagent_run_result_get_run_id (self) != '\0')
    g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_CHILD_FAILED,
                 "The subagent “%s” failed (%s); see run %s in the parent's audit log",
                 def_name, reason, subagent_run_result_get_run_id (self));
  else
    g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_CHILD_FAILED,
                 "The subagent “%s” could not start: %s", def_name, reason);
  return FALSE;
}
