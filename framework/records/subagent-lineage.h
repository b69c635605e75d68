/* subagent-lineage.h: the parent → child relationship of a run.
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
 * SUBAGENT_NO_BATCH_INDEX:
 *
 * The batch index of a child that is not part of a batch.
 */
#define SUBAGENT_NO_BATCH_INDEX (-1)

#define SUBAGENT_TYPE_LINEAGE (subagent_lineage_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentLineage, subagent_lineage, SUBAGENT, LINEAGE, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentLineage *subagent_lineage_new (const char *parent_run_id,
                                       const char *def_name,
                                       guint       depth,
                                       const char *isolation,
                                       gint        batch_index,
                                       const char *worktree_path,
                                       const char *container_path);
SUBAGENT_AVAILABLE_IN_ALL
SubagentLineage *subagent_lineage_new_from_json (JsonObject *object,
                                                 GError    **error);

SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_lineage_get_parent_run_id  (SubagentLineage *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_lineage_get_def_name       (SubagentLineage *self);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_lineage_get_depth          (SubagentLineage *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_lineage_get_isolation      (SubagentLineage *self);
SUBAGENT_AVAILABLE_IN_ALL
gint        subagent_lineage_get_batch_index    (SubagentLineage *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_lineage_get_worktree_path  (SubagentLineage *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_lineage_get_container_path (SubagentLineage *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject *subagent_lineage_to_json            (SubagentLineage *self);

G_END_DECLS
