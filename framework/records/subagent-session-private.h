/* subagent-session-private.h: the session's instance struct (shared by
 * subagent-session.c and -getters.c), and what the session log shares with
 * the session's serializer. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"
#include "subagent-records-private.h"

G_BEGIN_DECLS

struct _SubagentSession
{
  GObject parent_instance;

  char *session_id;
  char *def_name;
  char *parent_run_id;
  SubagentRunStatus status;
  GDateTime *started_at;
  guint depth;
  gint batch_index;
  char *isolation;
  char *worktree_path;
  char *container_path;
  GDateTime *completed_at;
  guint iterations;
  guint tool_calls;
  double cost_cents;
  char *final_answer;
  JsonObject *review;
  JsonArray *transcript;
  char *task;
  guint follow_ups;
  gboolean workspace_kept;
  char *child_root;

  /* The latest run's own result beside the session's totals (a follow-up's
   * usage adds up), kept so that the result can be rebuilt once it left
   * memory (_subagent_run_result_new_from_session()). Set by the manager;
   * the record's `last_run` member. */
  gboolean has_last_run;
  guint last_iterations;
  guint last_tool_calls;
  double last_cost_cents;
  char *last_message;
  char *last_stop_reason;
  char *last_confinement;

  SubagentLineage *lineage;
};

/* Its line, from a view of its members (subagent-records-private.h). */
void _subagent_session_append_line (SubagentSession *self,
                                    GString         *out) G_GNUC_INTERNAL;
G_END_DECLS
