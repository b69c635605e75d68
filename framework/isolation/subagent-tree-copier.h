/* subagent-tree-copier.h: copies and removes directory trees (snapshots,
 * container workspaces).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gio/gio.h>

#include "subagent-secrets.h"

G_BEGIN_DECLS

/**
 * SubagentCopyStrategy:
 * @SUBAGENT_COPY_STRATEGY_AUTO: clone files where the filesystem can, copy the rest
 * @SUBAGENT_COPY_STRATEGY_REFLINK: clone files with `FICLONE`; falls back to a
 *   plain copy for the whole tree as soon as the filesystem refuses
 * @SUBAGENT_COPY_STRATEGY_COPY: copy the bytes (`copy_file_range()`), never clone
 *
 * How subagent_tree_copy() copies regular files. As a reported result,
 * %SUBAGENT_COPY_STRATEGY_REFLINK means at least one file was cloned and
 * %SUBAGENT_COPY_STRATEGY_COPY means every file was copied.
 */
typedef enum {
  SUBAGENT_COPY_STRATEGY_AUTO,
  SUBAGENT_COPY_STRATEGY_REFLINK,
  SUBAGENT_COPY_STRATEGY_COPY,
} SubagentCopyStrategy;

#define SUBAGENT_TYPE_COPY_STRATEGY (subagent_copy_strategy_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
GType subagent_copy_strategy_get_type (void) G_GNUC_CONST;

SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_copy_strategy_to_string   (SubagentCopyStrategy  strategy);
SUBAGENT_AVAILABLE_IN_ALL
gboolean    subagent_copy_strategy_from_string (const char           *text,
                                                SubagentCopyStrategy *out_strategy);

SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_tree_copy        (const char           *source,
                                    const char           *dest,
                                    SubagentCopyStrategy  strategy,
                                    const char * const   *exclude_top_level,
                                    SubagentCopyStrategy *out_used,
                                    GCancellable         *cancellable,
                                    GError              **error);
SUBAGENT_AVAILABLE_IN_0_2
gboolean subagent_tree_copy_excluding (const char               *source,
                                       const char               *dest,
                                       SubagentCopyStrategy      strategy,
                                       const char * const       *exclude_top_level,
                                       const SubagentExcludeSet *exclude,
                                       SubagentCopyStrategy     *out_used,
                                       GCancellable             *cancellable,
                                       GError                  **error);
SUBAGENT_AVAILABLE_IN_ALL
void     subagent_tree_copy_async  (const char           *source,
                                    const char           *dest,
                                    SubagentCopyStrategy  strategy,
                                    const char * const   *exclude_top_level,
                                    GCancellable         *cancellable,
                                    GAsyncReadyCallback   callback,
                                    gpointer              user_data);
SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_tree_copy_finish (GAsyncResult         *result,
                                    SubagentCopyStrategy *out_used,
                                    GError              **error);

SUBAGENT_AVAILABLE_IN_0_2
void     subagent_tree_spread_subdirectories (const char *dir);

SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_tree_remove      (const char           *path,
                                    GCancellable         *cancellable,
                                    GError              **error);

G_END_DECLS
