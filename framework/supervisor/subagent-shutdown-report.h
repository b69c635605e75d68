/* subagent-shutdown-report.h: what a supervisor's shutdown reports.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <glib-object.h>

G_BEGIN_DECLS

#define SUBAGENT_TYPE_SHUTDOWN_REPORT (subagent_shutdown_report_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentShutdownReport, subagent_shutdown_report, SUBAGENT, SHUTDOWN_REPORT, GObject)

SUBAGENT_AVAILABLE_IN_ALL
gboolean            subagent_shutdown_report_get_clean           (SubagentShutdownReport *self);
SUBAGENT_AVAILABLE_IN_ALL
guint               subagent_shutdown_report_get_n_cancelled     (SubagentShutdownReport *self);
SUBAGENT_AVAILABLE_IN_ALL
const char * const *subagent_shutdown_report_get_unstopped       (SubagentShutdownReport *self);
SUBAGENT_AVAILABLE_IN_ALL
const char * const *subagent_shutdown_report_get_kept_workspaces (SubagentShutdownReport *self);

G_END_DECLS
