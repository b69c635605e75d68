/* subagent-confinement-cache-private.h: Landlock rulesets reused across
 * children with the same rights.
 *
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

#include "subagent-landlock-private.h"

G_BEGIN_DECLS

typedef struct _SubagentConfinementCache SubagentConfinementCache;
typedef struct _SubagentConfinementLease SubagentConfinementLease;

SubagentConfinementCache *_subagent_confinement_cache_new   (void);
SubagentConfinementCache *_subagent_confinement_cache_ref   (SubagentConfinementCache *self);
void                      _subagent_confinement_cache_unref (SubagentConfinementCache *self);

/* A ruleset for @policy (built, or reused when the same policy was built
 * before and none of its paths changed since) and a temporary directory
 * for one child, which it may write in. NULL with @error set when either
 * cannot be made; @ruleset_failed tells which. The ruleset fd stays the
 * cache's. */
SubagentConfinementLease *_subagent_confinement_cache_acquire (SubagentConfinementCache  *self,
                                                               SubagentLandlockPolicy    *policy,
                                                               gboolean                  *ruleset_failed,
                                                               GError                   **error);
int                       _subagent_confinement_lease_get_ruleset_fd (SubagentConfinementLease *lease);
const char               *_subagent_confinement_lease_get_tmpdir     (SubagentConfinementLease *lease);
/* Empties the child's temporary directory (what the child left there is
 * deleted before this returns) and gives it back for a later child. */
void                      _subagent_confinement_lease_release        (SubagentConfinementLease *lease);

/* Statistics for tests: rulesets built, and reused. */
void                      _subagent_confinement_cache_get_stats      (SubagentConfinementCache *self,
                                                                      guint                    *built,
                                                                      guint                    *reused);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SubagentConfinementCache, _subagent_confinement_cache_unref)

G_END_DECLS
