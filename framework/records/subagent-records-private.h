/* subagent-records-private.h: what the manager takes from the records
 * beyond their API: the lineage record of a child written directly, the
 * audit line from its parts, the session log read back, a session's latest
 * run's result. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"

G_BEGIN_DECLS

/* Appends json_to_string() of subagent_lineage_to_json (@self), written
 * directly (no object: one per child). */
void     _subagent_lineage_append_json      (SubagentLineage   *self,
                                             GString           *out) G_GNUC_INTERNAL;

/* Appends the record {"event": @event, "ts": now, then @members}, as
 * subagent_audit_log_record() does for fields in that order; @members is
 * what follows the fixed two, each member led by its comma (`,"k":v`), none
 * named "event" or "ts". */
gboolean _subagent_audit_log_record_members (SubagentAuditLog  *self,
                                             const char        *event,
                                             const GString     *members,
                                             GError           **error) G_GNUC_INTERNAL;

/* Where subagent_session_log_append() put a record in the log's file: its
 * line, without the newline. A length of 0: unknown (the log lost track of
 * the file's length after a failed write). */
typedef struct {
  guint64 offset;
  gsize length;
} SubagentSessionSpan;

/* The record of @session_id at @span of this log's file, read alone; NULL
 * when it is not there (another writer moved it, or it cannot be read):
 * then read the whole log back. */
SubagentSession *_subagent_session_log_read_at (SubagentSessionLog        *self,
                                                const SubagentSessionSpan *span,
                                                const char                *session_id) G_GNUC_INTERNAL;

/* This log's own file read back: session id → the latest record of that
 * session in it (transfer full). What cannot be read is logged at debug
 * level and left out. */
GHashTable *_subagent_session_log_read_back (SubagentSessionLog *self) G_GNUC_INTERNAL;

/* A session record's members, borrowed: what its line is written from,
 * whether from a SubagentSession or straight from a finished run (the
 * manager logs a child's record without making the object). */
typedef struct {
  const char *session_id;
  const char *def_name;
  const char *parent_run_id;
  SubagentRunStatus status;
  GDateTime *started_at;
  guint depth;
  gint batch_index;
  const char *isolation;
  const char *worktree_path;
  const char *container_path;
  GDateTime *completed_at;
  guint iterations;
  guint tool_calls;
  double cost_cents;
  const char *final_answer;
  JsonObject *review;
  JsonArray *transcript;
  const char *task;
  guint follow_ups;
  gboolean workspace_kept;
  const char *child_root;
  gboolean has_last_run;
  guint last_iterations;
  guint last_tool_calls;
  double last_cost_cents;
  const char *last_message;
  const char *last_stop_reason;
  const char *last_confinement;
} SubagentSessionView;

/* Gives @view's strings the forms the object's properties store (an
 * empty id is "", an empty path none, no isolation "shared"), so that its
 * line is the line of the session made of the same values. */
void _subagent_session_view_normalize (SubagentSessionView *view) G_GNUC_INTERNAL;
/* Keeps @result's own parts (its usage, message, stop reason and
 * confinement) in @view, written to the record as `last_run`: the
 * session's usage is the total of its runs. */
void _subagent_session_view_set_last_run (SubagentSessionView *view,
                                          SubagentRunResult   *result) G_GNUC_INTERNAL;
/* Appends json_to_string() of subagent_session_to_json() of the session
 * @view describes, written directly (no object, copies or generator: one
 * per child). */
void _subagent_session_view_append_line (const SubagentSessionView *view,
                                         GString                   *out) G_GNUC_INTERNAL;
/* The session a record's line holds; NULL with @error set (or not, for a
 * line that is no JSON object) when it holds none. */
SubagentSession *_subagent_session_new_from_line (const char  *line,
                                                  gsize        length,
                                                  GError     **error) G_GNUC_INTERNAL;

/* subagent_session_log_append() of the record @line holds (with its
 * newline; it may gain a leading one, after a torn write), which is
 * @session_id's; and where it went. */
gboolean _subagent_session_log_append_line_at (SubagentSessionLog   *self,
                                               const char           *session_id,
                                               GString              *line,
                                               SubagentSessionSpan  *span,
                                               GError              **error) G_GNUC_INTERNAL;

/* The result subagent_manager_run() returned for @session's latest run,
 * rebuilt from its record; %NULL when the record does not keep it (written
 * before `last_run` was). */
SubagentRunResult *_subagent_run_result_new_from_session (SubagentSession *session) G_GNUC_INTERNAL;

G_END_DECLS
