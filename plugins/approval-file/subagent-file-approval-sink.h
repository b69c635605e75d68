/* subagent-file-approval-sink.h: a SubagentApprovalSink on JSON files.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

#define SUBAGENT_TYPE_FILE_APPROVAL_SINK (subagent_file_approval_sink_get_type ())
G_DECLARE_FINAL_TYPE (SubagentFileApprovalSink, subagent_file_approval_sink, SUBAGENT, FILE_APPROVAL_SINK, GObject)

gboolean subagent_file_approval_sink_register (SubagentPluginModule  *module,
                                               GError               **error);

G_END_DECLS
