/* subagent-manager-private.h: what the manager's files share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"

G_BEGIN_DECLS

struct _SubagentManager
{
  GObject parent_instance;

  char *root;
  char *run_id;
  SubagentConfig *config;
  SubagentCatalog *catalog;
  SubagentPluginRegistry *plugins;
  SubagentAuditLog *audit;
  SubagentToolRegistry *tools;
  SubagentRunner *runner;
  SubagentPermissionMode permission_mode;

  GMutex lock;
  GHashTable *sessions;  /* run id → SubagentSession */
  GHashTable *providers; /* backend → SubagentIsolationProvider, configured for root */
  SubagentSessionLog *session_log;  /* `sessions/<run_id>.jsonl`, made on first use */

  /* Approvals (subagent-manager-approvals.c), guarded by approval_lock. */
  GMutex approval_lock;
  SubagentApprovalQueue *approval_queue;  /* the host's, or made on first need */
  SubagentApprovalSink *approval_sink;    /* the host's; NULL: config.yaml's */
  gboolean approval_queue_owned;          /* made here: released at finalize */
  gboolean approvals_unattended;
  GError *approval_error;                 /* why the configured sink could not be set up */
};

char *_subagent_manager_new_run_id (void) G_GNUC_INTERNAL;

/* The queue a child's requests go to, if one is at hand without any I/O (the
 * host's, or made for an earlier run). *must_make is set when none is at
 * hand yet but this child could ask (see docs/approvals.md, "Routing"). */
SubagentApprovalQueue *_subagent_manager_peek_approval_queue (SubagentManager        *self,
                                                              SubagentPermissionMode  mode,
                                                              const char             *isolation,
                                                              SubagentRunner         *runner,
                                                              gboolean               *must_make) G_GNUC_INTERNAL;
/* Makes the parent run's queue from the sink (loading a plugin and reading
 * the store: blocking). NULL without an error when children are unattended. */
SubagentApprovalQueue *_subagent_manager_make_approval_queue (SubagentManager  *self,
                                                              GError          **error) G_GNUC_INTERNAL;
/* The same in a worker thread. */
void                   _subagent_manager_make_approval_queue_async  (SubagentManager      *self,
                                                                     GAsyncReadyCallback   callback,
                                                                     gpointer              user_data) G_GNUC_INTERNAL;
SubagentApprovalQueue *_subagent_manager_make_approval_queue_finish (SubagentManager      *self,
                                                                     GAsyncResult         *result,
                                                                     GError              **error) G_GNUC_INTERNAL;
/* Forgets the queue made here (not one the host gave). */
void                   _subagent_manager_drop_approval_queue (SubagentManager *self) G_GNUC_INTERNAL;

/* What a SubagentSupervisor adds to one run (all optional). The caller
 * keeps @hooks alive until the run's callback; the out fields are written
 * before it is called. */
typedef struct {
  /* in */
  const char *run_id;                      /* the child's run id; NULL: a new one */
  double max_cost_cents;                   /* > 0: caps the definition's budget */
  SubagentApprovalQueue *approval_queue;   /* routes the child's approvals here */
  gboolean keep_workspace;                 /* leave the workspace for follow-ups */
  SubagentIsolationContext *reuse_context; /* run in this kept workspace, no prepare */
  SubagentSession *resume;                 /* a follow-up of this session */
  /* the child's running totals, from the runner's thread */
  void (*usage_func) (gpointer data, guint iterations, guint tool_calls, double cost_cents);
  gpointer usage_data;
  /* out */
  char *workspace_root;                    /* the child root, once prepared */
  gboolean workspace_disposed;             /* a workspace apart from the root was cleaned up */
  SubagentIsolationContext *kept_context;  /* the workspace kept for follow-ups */
} SubagentRunHooks;

void _subagent_manager_run_hooked_async (SubagentManager     *self,
                                         const char          *task,
                                         SubagentRunOptions  *options,
                                         SubagentRunHooks    *hooks,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data) G_GNUC_INTERNAL;

G_END_DECLS
