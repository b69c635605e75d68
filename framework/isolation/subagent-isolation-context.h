/* subagent-isolation-context.h: a prepared, immutable workspace.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _SubagentIsolationProvider SubagentIsolationProvider;

#define SUBAGENT_TYPE_ISOLATION_CONTEXT (subagent_isolation_context_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentIsolationContext, subagent_isolation_context, SUBAGENT, ISOLATION_CONTEXT, GObject)

/* Providers build contexts with g_object_new() and the construct-only
 * properties: provider, parent-root, child-root, isolation, session-key,
 * worktree-path, container-path, container-id, branch, cpu-quota,
 * memory-limit, warnings, backend-data (a{sv}). */

SUBAGENT_AVAILABLE_IN_ALL
SubagentIsolationProvider *subagent_isolation_context_get_provider      (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
const char                *subagent_isolation_context_get_parent_root   (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
const char                *subagent_isolation_context_get_child_root    (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
const char                *subagent_isolation_context_get_isolation     (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
const char                *subagent_isolation_context_get_session_key   (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
const char                *subagent_isolation_context_get_worktree_path (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
const char                *subagent_isolation_context_get_container_path (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
const char                *subagent_isolation_context_get_container_id  (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
const char                *subagent_isolation_context_get_branch        (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
double                     subagent_isolation_context_get_cpu_quota     (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
const char                *subagent_isolation_context_get_memory_limit  (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
const char * const        *subagent_isolation_context_get_warnings      (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
GVariant                  *subagent_isolation_context_get_backend_data  (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean                   subagent_isolation_context_is_cleaned_up     (SubagentIsolationContext *self);

SUBAGENT_AVAILABLE_IN_ALL
void         subagent_isolation_context_cleanup (SubagentIsolationContext *self);
SUBAGENT_AVAILABLE_IN_ALL
GSubprocess *subagent_isolation_context_spawnv  (SubagentIsolationContext  *self,
                                                 const char * const        *argv,
                                                 const char * const        *envp,
                                                 GSubprocessFlags           flags,
                                                 GError                   **error);

G_END_DECLS
