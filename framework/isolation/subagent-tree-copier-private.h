/* subagent-tree-copier-private.h: the copy job of subagent_tree_copy().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "subagent-secrets.h"
#include "subagent-tree-copier.h"

G_BEGIN_DECLS

/* subagent_tree_copy() without its argument checks. */
G_GNUC_INTERNAL gboolean _subagent_tree_copy (const char           *source,
                              const char           *dest,
                              SubagentCopyStrategy  strategy,
                              const char * const   *exclude_top_level,
                              const SubagentExcludeSet *exclude,
                              SubagentCopyStrategy *out_used,
                              GCancellable         *cancellable,
                              GError              **error);

G_END_DECLS
