/* subagent-postgres-approval-sink.h: a SubagentApprovalSink on PostgreSQL.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

#define SUBAGENT_TYPE_POSTGRES_APPROVAL_SINK (subagent_postgres_approval_sink_get_type ())
G_DECLARE_FINAL_TYPE (SubagentPostgresApprovalSink, subagent_postgres_approval_sink, SUBAGENT, POSTGRES_APPROVAL_SINK, GObject)

gboolean subagent_postgres_approval_sink_register (SubagentPluginModule  *module,
                                                   GError               **error);

G_END_DECLS
