/* subagent-session.h: the record kept of one child run.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "subagent-lineage.h"
#include "subagent-types.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_SESSION (subagent_session_get_type ())
G_DECLARE_FINAL_TYPE (SubagentSession, subagent_session, SUBAGENT, SESSION, GObject)

/* Built with g_object_new() and construct-only properties: session-id,
 * def-name, parent-run-id, status, started-at, depth, batch-index, isolation,
 * worktree-path, container-path, completed-at, iterations, tool-calls,
 * cost-cents, final-answer, review, task, follow-ups, workspace-kept,
 * child-root. Its JSON form and files: subagent-session-io.h. */

const char        *subagent_session_get_session_id     (SubagentSession *self);
const char        *subagent_session_get_def_name       (SubagentSession *self);
const char        *subagent_session_get_parent_run_id  (SubagentSession *self);
SubagentRunStatus  subagent_session_get_status         (SubagentSession *self);
GDateTime         *subagent_session_get_started_at     (SubagentSession *self);
guint              subagent_session_get_depth          (SubagentSession *self);
gint               subagent_session_get_batch_index    (SubagentSession *self);
const char        *subagent_session_get_isolation      (SubagentSession *self);
const char        *subagent_session_get_worktree_path  (SubagentSession *self);
const char        *subagent_session_get_container_path (SubagentSession *self);
GDateTime         *subagent_session_get_completed_at   (SubagentSession *self);
guint              subagent_session_get_iterations     (SubagentSession *self);
guint              subagent_session_get_tool_calls     (SubagentSession *self);
double             subagent_session_get_cost_cents     (SubagentSession *self);
const char        *subagent_session_get_final_answer   (SubagentSession *self);
JsonObject        *subagent_session_get_review         (SubagentSession *self);
JsonArray         *subagent_session_get_transcript     (SubagentSession *self);
const char        *subagent_session_get_task           (SubagentSession *self);
guint              subagent_session_get_follow_ups     (SubagentSession *self);
gboolean           subagent_session_get_workspace_kept (SubagentSession *self);
const char        *subagent_session_get_child_root     (SubagentSession *self);
SubagentLineage   *subagent_session_get_lineage        (SubagentSession *self);

G_END_DECLS
