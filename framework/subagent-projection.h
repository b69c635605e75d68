/* subagent-projection.h: the part of a run result the parent's model sees.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-run-result.h"

G_BEGIN_DECLS

JsonObject *subagent_run_result_project    (SubagentRunResult  *self,
                                            const char         *root,
                                            gboolean            resumable);
char       *subagent_run_result_dup_reason (SubagentRunResult  *self);
gboolean    subagent_run_result_check      (SubagentRunResult  *self,
                                            GError            **error);

G_END_DECLS
