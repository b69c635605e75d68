/* subagent-session.h: the record kept of one child run.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "subagent-lineage.h"
#include "subagent-types.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_SESSION (subagent_session_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentSession, subagent_session, SUBAGENT, SESSION, GObject)

/* Built with g_object_new() and construct-only properties: session-id,
 * def-name, parent-run-id, status, started-at, depth, batch-index, isolation,
 * worktree-path, container-path, completed-at, iterations, tool-calls,
 * cost-cents, final-answer, review, task, follow-ups, workspace-kept,
 * child-root. Its JSON form and files: subagent-session-io.h. */

SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_session_get_session_id     (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_session_get_def_name       (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_session_get_parent_run_id  (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunStatus  subagent_session_get_status         (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
GDateTime         *subagent_session_get_started_at     (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
guint              subagent_session_get_depth          (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
gint               subagent_session_get_batch_index    (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_session_get_isolation      (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_session_get_worktree_path  (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_session_get_container_path (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
GDateTime         *subagent_session_get_completed_at   (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
guint              subagent_session_get_iterations     (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
guint              subagent_session_get_tool_calls     (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
double             subagent_session_get_cost_cents     (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_session_get_final_answer   (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject        *subagent_session_get_review         (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_session_get_task           (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
guint              subagent_session_get_follow_ups     (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean           subagent_session_get_workspace_kept (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_session_get_child_root     (SubagentSession *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentLineage   *subagent_session_get_lineage        (SubagentSession *self);

/* The JSON form and the files of session records. */
SUBAGENT_AVAILABLE_IN_ALL
gboolean          subagent_session_id_is_valid   (const char           *session_id);

SUBAGENT_AVAILABLE_IN_ALL
SubagentSession  *subagent_session_new_from_json (JsonObject           *object,
                                                  GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject       *subagent_session_to_json       (SubagentSession      *self);

SUBAGENT_AVAILABLE_IN_ALL
gboolean          subagent_session_save          (SubagentSession      *self,
                                                  const char           *sessions_dir,
                                                  GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
void              subagent_session_save_async    (SubagentSession      *self,
                                                  const char           *sessions_dir,
                                                  GCancellable         *cancellable,
                                                  GAsyncReadyCallback   callback,
                                                  gpointer              user_data);
SUBAGENT_AVAILABLE_IN_ALL
gboolean          subagent_session_save_finish   (SubagentSession      *self,
                                                  GAsyncResult         *result,
                                                  GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentSession  *subagent_session_load          (const char           *path,
                                                  GError              **error);

G_END_DECLS
