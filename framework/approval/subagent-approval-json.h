/* subagent-approval-json.h: canonical JSON and the action digest of a tool call.
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

SUBAGENT_AVAILABLE_IN_ALL
char *subagent_json_to_canonical_string       (JsonNode   *node);
SUBAGENT_AVAILABLE_IN_ALL
char *subagent_approval_compute_action_digest (const char *tool_name,
                                               JsonObject *tool_arguments);

G_END_DECLS
