/* subagent-supervisor.h: parallel children of one parent: caps, queue,
 * cancellation, shutdown, events, budgets and follow-ups (reference 003).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <gio/gio.h>

#include "subagent-events.h"
#include "subagent-manager.h"

G_BEGIN_DECLS

/**
 * SUBAGENT_SUPERVISOR_DEFAULT_SHUTDOWN_TIMEOUT_MS:
 *
 * How long subagent_supervisor_shutdown() waits for children by default (10 s).
 */
#define SUBAGENT_SUPERVISOR_DEFAULT_SHUTDOWN_TIMEOUT_MS 10000

/**
 * SubagentCancelOutcome:
 * @SUBAGENT_CANCEL_OUTCOME_NOT_ACTIVE: the supervisor has no child of that id
 * @SUBAGENT_CANCEL_OUTCOME_ALREADY_FINISHED: the child had already ended; nothing changed
 * @SUBAGENT_CANCEL_OUTCOME_ACCEPTED: the child is being cancelled (a queued one never runs)
 *
 * What subagent_supervisor_cancel() did.
 */
typedef enum {
  SUBAGENT_CANCEL_OUTCOME_NOT_ACTIVE,
  SUBAGENT_CANCEL_OUTCOME_ALREADY_FINISHED,
  SUBAGENT_CANCEL_OUTCOME_ACCEPTED,
} SubagentCancelOutcome;

#define SUBAGENT_TYPE_CANCEL_OUTCOME (subagent_cancel_outcome_get_type ())
GType subagent_cancel_outcome_get_type (void) G_GNUC_CONST;

#define SUBAGENT_TYPE_SUPERVISOR (subagent_supervisor_get_type ())
G_DECLARE_FINAL_TYPE (SubagentSupervisor, subagent_supervisor, SUBAGENT, SUPERVISOR, GObject)

SubagentSupervisor *subagent_supervisor_new (SubagentManager *manager);

SubagentManager *subagent_supervisor_get_manager         (SubagentSupervisor *self);
guint            subagent_supervisor_get_max_parallel    (SubagentSupervisor *self);
guint            subagent_supervisor_get_max_outstanding (SubagentSupervisor *self);
guint            subagent_supervisor_get_max_agents      (SubagentSupervisor *self);
double           subagent_supervisor_get_max_cost_cents  (SubagentSupervisor *self);
double           subagent_supervisor_get_spent_cents     (SubagentSupervisor *self,
                                                          const char         *parent_run_id);
const char      *subagent_supervisor_get_events_path     (SubagentSupervisor *self);
gboolean         subagent_supervisor_get_keep_workspaces (SubagentSupervisor *self);
void             subagent_supervisor_set_keep_workspaces (SubagentSupervisor *self,
                                                          gboolean            keep);
guint            subagent_supervisor_get_n_running       (SubagentSupervisor *self);
guint            subagent_supervisor_get_n_queued        (SubagentSupervisor *self);
gboolean         subagent_supervisor_is_closed           (SubagentSupervisor *self);
gboolean         subagent_supervisor_is_active           (SubagentSupervisor *self,
                                                          const char         *run_id);

char              *subagent_supervisor_spawn       (SubagentSupervisor  *self,
                                                    const char          *task,
                                                    SubagentRunOptions  *options,
                                                    GError             **error);
void               subagent_supervisor_wait_async  (SubagentSupervisor  *self,
                                                    const char          *run_id,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
SubagentRunResult *subagent_supervisor_wait_finish (SubagentSupervisor  *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);
void               subagent_supervisor_run_async   (SubagentSupervisor  *self,
                                                    const char          *task,
                                                    SubagentRunOptions  *options,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
SubagentRunResult *subagent_supervisor_run_finish  (SubagentSupervisor  *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);
SubagentRunResult *subagent_supervisor_lookup_result (SubagentSupervisor *self,
                                                      const char         *run_id);

SubagentCancelOutcome subagent_supervisor_cancel     (SubagentSupervisor  *self,
                                                      const char          *run_id,
                                                      SubagentCancelCause  cause);
guint                 subagent_supervisor_cancel_all (SubagentSupervisor  *self,
                                                      SubagentCancelCause  cause);

G_END_DECLS
