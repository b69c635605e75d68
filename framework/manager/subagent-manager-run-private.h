/* subagent-manager-run-private.h: what the files of one child run share:
 * its state (subagent-manager-run.c), what it resolves before it starts
 * (subagent-manager-resolve.c) and its wrap-up (subagent-manager-wrap-up.c).
 *
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"
#include "subagent-manager-private.h"

G_BEGIN_DECLS

/* One child run, from the depth guard to the session record. */
typedef struct {
  SubagentManager *manager;
  char *task;
  SubagentDef *def;
  char *parent_run_id;
  char *run_id;
  char *session_key;
  char *isolation;
  guint depth;
  guint max_depth_ceiling;       /* inherited from further up; 0: none */
  gint batch_index;
  guint max_iterations;
  guint max_tool_calls;
  guint timeout_seconds;
  double cpu_quota;
  char *memory_limit;
  JsonObject *isolation_options;
  GDateTime *started_at;

  SubagentIsolationContext *context;
  SubagentLineage *lineage;
  SubagentRunOutcome *outcome;
  GError *runner_error;
  SubagentRunHooks *hooks;  /* the supervisor's, not owned; may be NULL */
  SubagentApprovalQueue *approval_queue;      /* where the child's requests go; NULL: unattended */
  SubagentApprovalHandler *approval_handler;  /* the child's route, on its run context */
  SubagentRunner *runner;                     /* what runs this child (_subagent_manager_select_runner) */
  JsonObject *model;                          /* the model's settings, for a model runner */
  SubagentRunOptions *options;  /* a copy; NULL when none were given */

  /* Skills and risk routing (issue 19). */
  SubagentSkill *skill;
  SubagentRiskLevel risk;
  char *routing;                        /* how auto chose, for message, lineage, audit */
  SubagentPermissionMode ceiling;       /* the risk level's; INHERIT: none */
} RunState;

/* ---- before the child starts (subagent-manager-resolve.c) --------------- */
/* The definition to run: a named one, or the default; a command override
 * makes a copy that runs it. */
SubagentDef *_subagent_manager_resolve_def (SubagentManager     *self,
                                            SubagentRunOptions  *options,
                                            GError             **error) G_GNUC_INTERNAL;
/* The request's options: the plugin's section, then the run's overrides. */
JsonObject *_subagent_manager_merged_isolation_options (SubagentManager    *self,
                                                        const char         *isolation,
                                                        SubagentRunOptions *options) G_GNUC_INTERNAL;
/* Sets @state's runner (and model); FALSE with @message when it cannot. */
gboolean _subagent_manager_select_runner (RunState            *state,
                                          SubagentRunOptions  *options,
                                          char               **message) G_GNUC_INTERNAL;
/* The permission mode the child gets. */
SubagentPermissionMode _subagent_manager_child_mode (RunState *state) G_GNUC_INTERNAL;

/* ---- after it ran (subagent-manager-wrap-up.c) -------------------------- */
/* A GTaskThreadFunc: review, records, cleanup; returns the run's result. */
void _subagent_manager_run_wrap_up (GTask        *task,
                                    gpointer      source_object,
                                    gpointer      task_data,
                                    GCancellable *cancellable) G_GNUC_INTERNAL;

G_END_DECLS
