/* subagent-manager-wrap-up.c: the end of a child run: its review (and
 * write_scope marks), the lineage audit line, the session record, and the
 * cleanup of its workspace.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-json-private.h"
#include "subagent-json-line-private.h"
#include "subagent-records-private.h"
#include "subagent-manager-private.h"
#include "subagent-manager-run-private.h"
#include "subagent-review-private.h"
#include "subagent-scratch-private.h"

/* Worktrees diff against the commit the child started from (backend-data
 * `base-commit`); snapshots and containers against the parent's tree. */
static SubagentReview *
capture_review_of_context (const char                *root,
                           SubagentIsolationContext  *context,
                           guint64                    max_file_size,
                           GError                   **error)
{
  GVariant *data = subagent_isolation_context_get_backend_data (context);
  const char *base_commit = NULL;
  const char *parent_root = subagent_isolation_context_get_parent_root (context);
  gboolean child_ignores = TRUE;
  g_autofree const char **exclude = NULL;

  if (data != NULL)
    {
      /* What a copied workspace left out (`exclude`, as): never a deletion. */
      g_variant_lookup (data, "exclude", "^a&s", &exclude);
      g_variant_lookup (data, "base-commit", "&s", &base_commit);
      /* A backend whose child could edit .gitignore unseen (a container)
       * says `review-child-ignores` = false: nothing it hides counts. */
      g_variant_lookup (data, "review-child-ignores", "b", &child_ignores);
    }
  if (base_commit != NULL)
    return _subagent_review_capture_full (root, subagent_isolation_context_get_session_key (context),
                                          NULL, base_commit, NULL,
                                          subagent_isolation_context_get_child_root (context),
                                          max_file_size, !child_ignores, NULL, NULL, error);
  return _subagent_review_capture_full (root, subagent_isolation_context_get_session_key (context),
                                        parent_root, NULL, NULL,
                                        subagent_isolation_context_get_child_root (context),
                                        max_file_size, FALSE, exclude, NULL, error);
}

/* An isolation option given as true or "true" (a config file or --option). */
static gboolean
option_is_true (JsonObject *options,
                const char *key)
{
  JsonNode *node = options ? json_object_get_member (options, key) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  if (json_node_get_value_type (node) == G_TYPE_BOOLEAN)
    return json_node_get_boolean (node);
  if (json_node_get_value_type (node) == G_TYPE_STRING)
    return g_ascii_strcasecmp (json_node_get_string (node), "true") == 0;
  return FALSE;
}

/* Whether @path (relative, as the review lists it) lies inside one of the
 * definition's write_scope entries: a directory (and what is under it), a
 * file, or a glob over the path or its last component ("*.md"). */
static gboolean
path_in_write_scope (const char * const *scope,
                     const char         *path)
{
  const char *base = strrchr (path, '/');

  base = base != NULL ? base + 1 : path;
  for (guint i = 0; scope[i] != NULL; i++)
    {
      g_autofree char *entry = g_strdup (scope[i]);
      gsize len;

      while (g_str_has_prefix (entry, "./"))
        memmove (entry, entry + 2, strlen (entry + 2) + 1);
      len = strlen (entry);
      while (len > 0 && entry[len - 1] == '/')
        entry[--len] = '\0';
      if (len == 0)
        return TRUE;
      if (strpbrk (entry, "*?") != NULL)
        {
          if (g_pattern_match_simple (entry, path) || g_pattern_match_simple (entry, base))
            return TRUE;
        }
      else if (g_str_equal (path, entry) || (g_str_has_prefix (path, entry) && path[len] == '/'))
        return TRUE;
    }
  return FALSE;
}

/* The review marks what the child changed outside its write_scope: a line
 * `outside-write-scope<TAB>path` in the `.status` file, and the paths in
 * the review object's `outside_write_scope`. The kernel enforces the scope
 * for host children; this shows it for every backend. */
static void
mark_write_scope (RunState   *state,
                  JsonObject *review)
{
  const char * const *scope = subagent_def_get_write_scope (state->def);
  const char *status_path = json_object_get_string_member_with_default (review, "status_path", NULL);
  g_autofree char *status = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GString) marks = g_string_new (NULL);
  JsonArray *outside;

  if (scope == NULL || status_path == NULL || !g_file_get_contents (status_path, &status, NULL, NULL))
    return;
  outside = json_array_new ();
  lines = g_strsplit (status, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *tab = strchr (lines[i], '\t');
      const char *path;

      if (tab == NULL)
        continue;
      path = tab + 1;
      /* A rename lists "old -> new": the new path is what was written. */
      if (strstr (path, " -> ") != NULL)
        path = strstr (path, " -> ") + 4;
      if (!path_in_write_scope (scope, path))
        {
          g_string_append_printf (marks, "outside-write-scope\t%s\n", path);
          json_array_add_string_element (outside, path);
        }
    }
  json_object_set_array_member (review, "outside_write_scope", outside);
  if (marks->len > 0)
    {
      g_autoptr(GString) updated = g_string_new (status);
      g_autoptr(GError) error = NULL;

      g_string_append (updated, marks->str);
      if (!g_file_set_contents_full (status_path, updated->str, updated->len, G_FILE_SET_CONTENTS_CONSISTENT,
                                     0644, &error))
        g_warning ("Cannot mark the write_scope in %s: %s", status_path, error->message);
    }
}

/* NULL with error set when the review could not be taken: the run then
 * ends with an error result (what the child did cannot be shown), and its
 * workspace is still cleaned up. */
static JsonObject *
capture_review (RunState  *state,
                GError   **error)
{
  SubagentIsolationContext *context = state->context;
  g_autoptr(SubagentReview) review = NULL;

  if (g_str_equal (subagent_isolation_context_get_parent_root (context),
                   subagent_isolation_context_get_child_root (context)))
    return NULL;  /* shared: the parent already sees every change */

  review = capture_review_of_context (state->manager->root, context,
                                      subagent_config_get_review_max_file_size (state->manager->config), error);
  if (review == NULL)
    return NULL;
  {
    JsonObject *json = subagent_review_to_json (review);

    mark_write_scope (state, json);
    return json;
  }
}

/* The lineage record, its members written directly in this order: no
 * JsonObject per child (tests/test-manager.c reads one back). */
static void
record_lineage (RunState          *state,
                SubagentRunResult *result)
{
  GString *members = _subagent_scratch_take (SUBAGENT_SCRATCH_AUDIT_MEMBERS);
  g_autoptr(GError) error = NULL;

  _subagent_json_line_append_string_member (members, "run_id", state->run_id);
  _subagent_json_line_append_string_member (members, "parent_run_id", state->parent_run_id);
  _subagent_json_line_append_string_member (members, "def_name", subagent_def_get_name (state->def));
  _subagent_json_line_append_int_member (members, "depth", state->depth + 1);
  _subagent_json_line_append_string_member (members, "isolation", state->isolation);
  _subagent_json_line_append_index_member (members, "batch_index", state->batch_index);
  _subagent_json_line_append_string_member (members, "status",
                                            subagent_run_status_to_string (subagent_run_result_get_status (result)));
  _subagent_json_line_append_int_member (members, "iterations", subagent_run_result_get_iterations (result));
  _subagent_json_line_append_int_member (members, "tool_calls", subagent_run_result_get_tool_calls (result));
  _subagent_json_line_append_amount_member (members, "cost_cents", subagent_run_result_get_cost_cents (result));
  if (subagent_run_result_get_confinement (result) != NULL)
    _subagent_json_line_append_string_member (members, "confinement", subagent_run_result_get_confinement (result));
  _subagent_json_line_append_key (members, "lineage", FALSE);
  _subagent_lineage_append_json (state->lineage, members);
  if (state->risk != SUBAGENT_RISK_LEVEL_NONE)
    _subagent_json_line_append_string_member (members, "risk_level", subagent_risk_level_to_string (state->risk));
  if (state->skill != NULL)
    _subagent_json_line_append_string_member (members, "skill", subagent_skill_get_relative_path (state->skill));
  if (state->routing != NULL)
    _subagent_json_line_append_string_member (members, "routing", state->routing);
  if (!_subagent_audit_log_record_members (state->manager->audit, SUBAGENT_AUDIT_EVENT_LINEAGE, members, &error))
    g_warning ("%s", error->message);
  _subagent_scratch_give (SUBAGENT_SCRATCH_AUDIT_MEMBERS, members);
}

/* The child's session record, written from the run: its line goes to the
 * log and stays in memory, and the SubagentSession is made of it only if
 * someone asks (subagent_manager_get_session()). */
static void
keep_session (RunState          *state,
              SubagentRunResult *result,
              JsonObject        *review,
              gboolean           workspace_kept)
{
  SubagentManager *self = state->manager;
  g_autoptr(GDateTime) completed = g_date_time_new_now_utc ();
  g_autoptr(SubagentSessionLog) log = NULL;
  GString *line = _subagent_scratch_take (SUBAGENT_SCRATCH_SESSION_LINE);
  g_autoptr(GError) error = NULL;
  SubagentSessionSpan span;
  gboolean logged;
  GBytes *kept;
  /* A follow-up continues its session: usage adds up (reference 003). */
  SubagentSession *resume = state->hooks ? state->hooks->resume : NULL;
  SubagentSessionView view = {
    .session_id = state->run_id,
    .def_name = subagent_def_get_name (state->def),
    .parent_run_id = state->parent_run_id,
    .status = subagent_run_result_get_status (result),
    .started_at = resume ? subagent_session_get_started_at (resume) : state->started_at,
    .completed_at = completed,
    .depth = state->depth + 1,
    .batch_index = state->batch_index,
    .isolation = state->isolation,
    .worktree_path = subagent_lineage_get_worktree_path (state->lineage),
    .container_path = subagent_lineage_get_container_path (state->lineage),
    .iterations = subagent_run_result_get_iterations (result) + (resume ? subagent_session_get_iterations (resume) : 0),
    .tool_calls = subagent_run_result_get_tool_calls (result) + (resume ? subagent_session_get_tool_calls (resume) : 0),
    .cost_cents = subagent_run_result_get_cost_cents (result) + (resume ? subagent_session_get_cost_cents (resume) : 0),
    .final_answer = subagent_run_result_get_final_answer (result),
    .review = review,
    .task = resume ? subagent_session_get_task (resume) : state->task,
    .follow_ups = resume ? subagent_session_get_follow_ups (resume) + 1 : 0,
    .workspace_kept = workspace_kept,
    .child_root = subagent_isolation_context_get_child_root (state->context),
    .transcript = state->outcome ? subagent_run_outcome_get_transcript (state->outcome) : NULL,
  };

  _subagent_session_view_normalize (&view);
  /* What the supervisor needs to give this run's result back once it left memory. */
  _subagent_session_view_set_last_run (&view, result);
  /* Compact: strings escape their newlines. Kept as written, before the
   * log may lead it with a newline. */
  _subagent_session_view_append_line (&view, line);
  kept = g_bytes_new (line->str, line->len);
  g_string_append_c (line, '\n');

  /* One log per manager: concurrent children share its writes. */
  g_mutex_lock (&self->lock);
  if (self->session_log == NULL)
    {
      g_autofree char *sessions_dir = g_build_filename (self->root, ".subagent", "sessions", NULL);

      self->session_log = subagent_session_log_new (sessions_dir, self->run_id, &error);
    }
  log = self->session_log ? g_object_ref (self->session_log) : NULL;
  g_mutex_unlock (&self->lock);
  logged = log != NULL && _subagent_session_log_append_line_at (log, state->run_id, line, &span, &error);
  _subagent_scratch_give (SUBAGENT_SCRATCH_SESSION_LINE, line);
  if (!logged)
    g_warning ("Cannot keep the session record of run %s: %s", state->run_id, error->message);

  g_mutex_lock (&self->lock);
  _subagent_manager_keep_session_locked (self, state->run_id, kept, logged ? &span : NULL);
  g_mutex_unlock (&self->lock);
}

void
_subagent_manager_run_wrap_up (GTask        *task,
                               gpointer      source_object,
                               gpointer      task_data,
                               GCancellable *cancellable)
{
  RunState *state = task_data;
  g_autoptr(JsonObject) review = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GError) review_error = NULL;
  gboolean separate = !g_str_equal (subagent_isolation_context_get_parent_root (state->context),
                                    subagent_isolation_context_get_child_root (state->context));
  gboolean keep = state->hooks != NULL && state->hooks->keep_workspace && state->outcome != NULL && separate;

  /* Requests the child left waiting have nobody to act on them now. */
  if (state->approval_handler != NULL)
    {
      guint cancelled = subagent_approval_handler_cancel_pending (state->approval_handler);

      if (cancelled > 0)
        g_debug ("Run %s ended with %u approval request(s) pending; they were cancelled", state->run_id, cancelled);
    }

  if (state->outcome != NULL)
    review = capture_review (state, &review_error);
  /* A kept branch is what the user merges: name it next to the patch. */
  if (review != NULL && subagent_isolation_context_get_branch (state->context) != NULL &&
      option_is_true (state->isolation_options, "keep_branch"))
    json_object_set_string_member (review, "branch", subagent_isolation_context_get_branch (state->context));

  /* Cleanup guarantee: whatever the child did — unless the supervisor keeps
   * the workspace for follow-ups, and then owns its cleanup. */
  if (keep)
    state->hooks->kept_context = g_object_ref (state->context);
  else
    {
      subagent_isolation_context_cleanup (state->context);
      if (state->hooks != NULL && separate)
        state->hooks->workspace_disposed = TRUE;
    }

  if (state->outcome == NULL)
    {
      g_autofree char *message = g_strdup_printf ("Subagent run %s could not run: %s", state->run_id,
                                                  state->runner_error ? state->runner_error->message : "unknown error");
      result = subagent_run_result_new_error (message, state->lineage);
      record_lineage (state, result);
      g_task_return_pointer (task, g_steal_pointer (&result), g_object_unref);
      return;
    }

  if (review_error != NULL)
    {
      g_autofree char *message = g_strdup_printf ("Subagent run %s ended but its review could not be taken "
                                                  "(the run counts as failed): %s",
                                                  state->run_id, review_error->message);

      g_debug ("%s", message);
      result = subagent_run_result_new_error (message, state->lineage);
    }
  else if (state->routing != NULL)
    {
      /* The message says where auto routed the child, and why. */
      const char *said = subagent_run_outcome_get_message (state->outcome);
      g_autofree char *message = said && *said ? g_strdup_printf ("%s (isolation: %s)", said, state->routing)
                                               : g_strdup_printf ("isolation: %s", state->routing);

      result = subagent_run_result_new (subagent_run_outcome_get_status (state->outcome), state->run_id,
                                        subagent_run_outcome_get_iterations (state->outcome),
                                        subagent_run_outcome_get_tool_calls (state->outcome),
                                        subagent_run_outcome_get_cost_cents (state->outcome),
                                        subagent_run_outcome_get_final_answer (state->outcome),
                                        state->lineage, review, message,
                                        subagent_run_outcome_get_stop_reason (state->outcome), state->run_id);
    }
  else
    result = subagent_run_result_new_from_outcome (state->run_id, state->outcome, state->lineage, review, state->run_id);
  record_lineage (state, result);
  keep_session (state, result, review, keep);
  g_task_return_pointer (task, g_steal_pointer (&result), g_object_unref);
}
