/* subagent-config-private.h: helpers of SubagentConfig shared with the
 * routing policy.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

G_GNUC_INTERNAL gboolean _subagent_config_parse_size (JsonNode *node,
                                                      guint64  *out);

G_END_DECLS
