/* subagent-supervisor.h: parallel children of one parent: caps, queue,
 * cancellation, shutdown, events, budgets and follow-ups (reference 003).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gio/gio.h>

#include "subagent-events.h"
#include "subagent-manager.h"
#include "subagent-batch-item.h"
#include "subagent-shutdown-report.h"
#include "subagent-team-result.h"

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
SUBAGENT_AVAILABLE_IN_ALL
GType subagent_cancel_outcome_get_type (void) G_GNUC_CONST;

#define SUBAGENT_TYPE_SUPERVISOR (subagent_supervisor_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentSupervisor, subagent_supervisor, SUBAGENT, SUPERVISOR, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentSupervisor *subagent_supervisor_new (SubagentManager *manager);

SUBAGENT_AVAILABLE_IN_ALL
SubagentManager *subagent_supervisor_get_manager         (SubagentSupervisor *self);
SUBAGENT_AVAILABLE_IN_ALL
guint            subagent_supervisor_get_max_parallel    (SubagentSupervisor *self);
SUBAGENT_AVAILABLE_IN_ALL
guint            subagent_supervisor_get_max_outstanding (SubagentSupervisor *self);
SUBAGENT_AVAILABLE_IN_ALL
guint            subagent_supervisor_get_max_agents      (SubagentSupervisor *self);
SUBAGENT_AVAILABLE_IN_ALL
double           subagent_supervisor_get_max_cost_cents  (SubagentSupervisor *self);
SUBAGENT_AVAILABLE_IN_ALL
double           subagent_supervisor_get_spent_cents     (SubagentSupervisor *self,
                                                          const char         *parent_run_id);
SUBAGENT_AVAILABLE_IN_ALL
const char      *subagent_supervisor_get_events_path     (SubagentSupervisor *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean         subagent_supervisor_get_keep_workspaces (SubagentSupervisor *self);
SUBAGENT_AVAILABLE_IN_ALL
void             subagent_supervisor_set_keep_workspaces (SubagentSupervisor *self,
                                                          gboolean            keep);
SUBAGENT_AVAILABLE_IN_ALL
guint            subagent_supervisor_get_results_in_memory (SubagentSupervisor *self);
SUBAGENT_AVAILABLE_IN_ALL
void             subagent_supervisor_set_results_in_memory (SubagentSupervisor *self,
                                                            guint               n_results);
SUBAGENT_AVAILABLE_IN_ALL
guint            subagent_supervisor_get_n_running       (SubagentSupervisor *self);
SUBAGENT_AVAILABLE_IN_ALL
guint            subagent_supervisor_get_n_queued        (SubagentSupervisor *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean         subagent_supervisor_is_closed           (SubagentSupervisor *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean         subagent_supervisor_is_active           (SubagentSupervisor *self,
                                                          const char         *run_id);

SUBAGENT_AVAILABLE_IN_ALL
char              *subagent_supervisor_spawn       (SubagentSupervisor  *self,
                                                    const char          *task,
                                                    SubagentRunOptions  *options,
                                                    GError             **error);
SUBAGENT_AVAILABLE_IN_ALL
void               subagent_supervisor_wait_async  (SubagentSupervisor  *self,
                                                    const char          *run_id,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunResult *subagent_supervisor_wait_finish (SubagentSupervisor  *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);
SUBAGENT_AVAILABLE_IN_ALL
void               subagent_supervisor_run_async   (SubagentSupervisor  *self,
                                                    const char          *task,
                                                    SubagentRunOptions  *options,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunResult *subagent_supervisor_run_finish  (SubagentSupervisor  *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunResult *subagent_supervisor_lookup_result (SubagentSupervisor *self,
                                                      const char         *run_id);

SUBAGENT_AVAILABLE_IN_ALL
SubagentCancelOutcome subagent_supervisor_cancel     (SubagentSupervisor  *self,
                                                      const char          *run_id,
                                                      SubagentCancelCause  cause);
SUBAGENT_AVAILABLE_IN_ALL
guint                 subagent_supervisor_cancel_all (SubagentSupervisor  *self,
                                                      SubagentCancelCause  cause);

/* Batches: many children at once, results in input order. */
SUBAGENT_AVAILABLE_IN_ALL
void       subagent_supervisor_run_batch_async  (SubagentSupervisor   *self,
                                                 GPtrArray            *items,
                                                 GCancellable         *cancellable,
                                                 GAsyncReadyCallback   callback,
                                                 gpointer              user_data);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray *subagent_supervisor_run_batch_finish (SubagentSupervisor   *self,
                                                 GAsyncResult         *result,
                                                 GError              **error);

/* Teams: running a team, and what it gives. */
SUBAGENT_AVAILABLE_IN_ALL
void                subagent_supervisor_run_team_async  (SubagentSupervisor   *self,
                                                         const char           *team_name,
                                                         const char           *task,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
SUBAGENT_AVAILABLE_IN_ALL
SubagentTeamResult *subagent_supervisor_run_team_finish (SubagentSupervisor   *self,
                                                         GAsyncResult         *result,
                                                         GError              **error);

/* Follow-ups: resuming a finished child's session with a new task. */
SUBAGENT_AVAILABLE_IN_ALL
SubagentSession *subagent_supervisor_find_session    (SubagentSupervisor  *self,
                                                      const char          *session_id,
                                                      GError             **error);
SUBAGENT_AVAILABLE_IN_ALL
gboolean         subagent_supervisor_can_follow_up   (SubagentSupervisor  *self,
                                                      const char          *session_id,
                                                      GError             **error);
SUBAGENT_AVAILABLE_IN_ALL
char            *subagent_supervisor_follow_up       (SubagentSupervisor  *self,
                                                      const char          *session_id,
                                                      const char          *task,
                                                      GError             **error);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject      *subagent_supervisor_project_result  (SubagentSupervisor  *self,
                                                      SubagentRunResult   *result);

/* Shutdown: stopping a supervisor, and what it reports. */
SUBAGENT_AVAILABLE_IN_ALL
void                    subagent_supervisor_shutdown_async  (SubagentSupervisor   *self,
                                                             guint                 timeout_ms,
                                                             GCancellable         *cancellable,
                                                             GAsyncReadyCallback   callback,
                                                             gpointer              user_data);
SUBAGENT_AVAILABLE_IN_ALL
SubagentShutdownReport *subagent_supervisor_shutdown_finish (SubagentSupervisor   *self,
                                                             GAsyncResult         *result,
                                                             GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentShutdownReport *subagent_supervisor_shutdown        (SubagentSupervisor   *self,
                                                             guint                 timeout_ms,
                                                             GError              **error);

G_END_DECLS
