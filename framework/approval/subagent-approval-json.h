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

/**
 * SUBAGENT_JSON_MAX_DEPTH:
 *
 * How deep arrays and objects may nest in JSON libsubagent reads: deeper
 * input is refused before it reaches the parser, whose recursion has no
 * limit of its own.
 */
#define SUBAGENT_JSON_MAX_DEPTH 512

SUBAGENT_AVAILABLE_IN_0_2
gboolean subagent_json_check_depth (const char  *data,
                                    gssize       length,
                                    guint        max_depth,
                                    GError     **error);
SUBAGENT_AVAILABLE_IN_0_2
gboolean subagent_json_parser_load_bounded (JsonParser  *parser,
                                            const char  *data,
                                            gssize       length,
                                            GError     **error);

SUBAGENT_AVAILABLE_IN_ALL
char *subagent_json_to_canonical_string       (JsonNode   *node);
SUBAGENT_AVAILABLE_IN_ALL
char *subagent_approval_compute_action_digest (const char *tool_name,
                                               JsonObject *tool_arguments);

G_END_DECLS
