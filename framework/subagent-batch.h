/* subagent-batch.h: many children at once, results in input order.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-supervisor.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_BATCH_ITEM (subagent_batch_item_get_type ())
G_DECLARE_FINAL_TYPE (SubagentBatchItem, subagent_batch_item, SUBAGENT, BATCH_ITEM, GObject)

SubagentBatchItem  *subagent_batch_item_new            (const char          *task,
                                                        SubagentRunOptions  *options);
SubagentBatchItem  *subagent_batch_item_new_from_json  (JsonObject          *object,
                                                        GError             **error);
GPtrArray          *subagent_batch_items_from_json     (JsonArray           *array,
                                                        GError             **error);
const char         *subagent_batch_item_get_task       (SubagentBatchItem   *self);
SubagentRunOptions *subagent_batch_item_get_options    (SubagentBatchItem   *self);

void       subagent_supervisor_run_batch_async  (SubagentSupervisor   *self,
                                                 GPtrArray            *items,
                                                 GCancellable         *cancellable,
                                                 GAsyncReadyCallback   callback,
                                                 gpointer              user_data);
GPtrArray *subagent_supervisor_run_batch_finish (SubagentSupervisor   *self,
                                                 GAsyncResult         *result,
                                                 GError              **error);

G_END_DECLS
