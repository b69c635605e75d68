/* subagent-run-context-private.h: what a manager gives its runs' contexts
 * beyond the public properties.
 *
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent-run-context.h"
#include "subagent-confinement-cache-private.h"

G_BEGIN_DECLS

/* The manager's Landlock ruleset cache (a reference is taken), or NULL: a
 * child of a context without one gets a ruleset built for it alone. */
void                      _subagent_run_context_set_confinement_cache (SubagentRunContext       *self,
                                                                       SubagentConfinementCache *cache);
SubagentConfinementCache *_subagent_run_context_get_confinement_cache (SubagentRunContext       *self);

G_END_DECLS
