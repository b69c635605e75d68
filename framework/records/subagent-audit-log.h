/* subagent-audit-log.h: the parent's append-only audit log (JSON lines).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define SUBAGENT_AUDIT_EVENT_LINEAGE "subagent_lineage"

#define SUBAGENT_TYPE_AUDIT_LOG (subagent_audit_log_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentAuditLog, subagent_audit_log, SUBAGENT, AUDIT_LOG, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentAuditLog *subagent_audit_log_new      (const char        *path);
SUBAGENT_AVAILABLE_IN_ALL
const char       *subagent_audit_log_get_path (SubagentAuditLog  *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean          subagent_audit_log_record   (SubagentAuditLog  *self,
                                               const char        *event,
                                               JsonObject        *fields,
                                               GError           **error);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray        *subagent_audit_log_read     (SubagentAuditLog  *self,
                                               const char        *event,
                                               GError           **error);

G_END_DECLS
