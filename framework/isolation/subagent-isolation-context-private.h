/* subagent-isolation-context-private.h: what the library knows of an
 * isolation context beyond its public getters. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-isolation-context-private.h is internal to libsubagent."
#endif

#include "subagent-isolation-context.h"
#include "subagent-isolation-provider.h"

G_BEGIN_DECLS

/* Marks @self's child root as a canonical path (realpath()'s, made by the
 * provider just now), so that a confinement built for it need not resolve
 * it again. */
G_GNUC_INTERNAL void     _subagent_isolation_context_set_child_root_resolved (SubagentIsolationContext *self);
G_GNUC_INTERNAL gboolean _subagent_isolation_context_get_child_root_resolved (SubagentIsolationContext *self);

/* The built-in shared backend's prepare without a request object: what the
 * manager calls for each child of a shared workspace. */
G_GNUC_INTERNAL SubagentIsolationContext *_subagent_shared_isolation_prepare (SubagentIsolationProvider  *provider,
                                                                              const char                 *parent_root,
                                                                              const char                 *session_key,
                                                                              double                      cpu_quota,
                                                                              const char                 *memory_limit,
                                                                              GCancellable               *cancellable,
                                                                              GError                    **error);

G_END_DECLS
