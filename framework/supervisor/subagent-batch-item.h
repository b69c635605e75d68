/* subagent-batch-item.h: one task of a batch and its options.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <json-glib/json-glib.h>

#include "subagent-run-options.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_BATCH_ITEM (subagent_batch_item_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentBatchItem, subagent_batch_item, SUBAGENT, BATCH_ITEM, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentBatchItem  *subagent_batch_item_new            (const char          *task,
                                                        SubagentRunOptions  *options);
SUBAGENT_AVAILABLE_IN_ALL
SubagentBatchItem  *subagent_batch_item_new_from_json  (JsonObject          *object,
                                                        GError             **error);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray          *subagent_batch_items_from_json     (JsonArray           *array,
                                                        GError             **error);
SUBAGENT_AVAILABLE_IN_ALL
const char         *subagent_batch_item_get_task       (SubagentBatchItem   *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunOptions *subagent_batch_item_get_options    (SubagentBatchItem   *self);

G_END_DECLS
