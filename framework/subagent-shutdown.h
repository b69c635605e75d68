/* subagent-shutdown.h: stopping a supervisor and what it reports.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-supervisor.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_SHUTDOWN_REPORT (subagent_shutdown_report_get_type ())
G_DECLARE_FINAL_TYPE (SubagentShutdownReport, subagent_shutdown_report, SUBAGENT, SHUTDOWN_REPORT, GObject)

gboolean            subagent_shutdown_report_get_clean           (SubagentShutdownReport *self);
guint               subagent_shutdown_report_get_n_cancelled     (SubagentShutdownReport *self);
const char * const *subagent_shutdown_report_get_unstopped       (SubagentShutdownReport *self);
const char * const *subagent_shutdown_report_get_kept_workspaces (SubagentShutdownReport *self);

void                    subagent_supervisor_shutdown_async  (SubagentSupervisor   *self,
                                                             guint                 timeout_ms,
                                                             GCancellable         *cancellable,
                                                             GAsyncReadyCallback   callback,
                                                             gpointer              user_data);
SubagentShutdownReport *subagent_supervisor_shutdown_finish (SubagentSupervisor   *self,
                                                             GAsyncResult         *result,
                                                             GError              **error);
SubagentShutdownReport *subagent_supervisor_shutdown        (SubagentSupervisor   *self,
                                                             guint                 timeout_ms,
                                                             GError              **error);

G_END_DECLS
