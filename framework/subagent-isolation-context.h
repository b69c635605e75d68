/* subagent-isolation-context.h: a prepared, immutable workspace.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _SubagentIsolationProvider SubagentIsolationProvider;

#define SUBAGENT_TYPE_ISOLATION_CONTEXT (subagent_isolation_context_get_type ())
G_DECLARE_FINAL_TYPE (SubagentIsolationContext, subagent_isolation_context, SUBAGENT, ISOLATION_CONTEXT, GObject)

/* Providers build contexts with g_object_new() and the construct-only
 * properties: provider, parent-root, child-root, isolation, session-key,
 * worktree-path, container-path, container-id, branch, cpu-quota,
 * memory-limit, warnings, backend-data (a{sv}). */

SubagentIsolationProvider *subagent_isolation_context_get_provider      (SubagentIsolationContext *self);
const char                *subagent_isolation_context_get_parent_root   (SubagentIsolationContext *self);
const char                *subagent_isolation_context_get_child_root    (SubagentIsolationContext *self);
const char                *subagent_isolation_context_get_isolation     (SubagentIsolationContext *self);
const char                *subagent_isolation_context_get_session_key   (SubagentIsolationContext *self);
const char                *subagent_isolation_context_get_worktree_path (SubagentIsolationContext *self);
const char                *subagent_isolation_context_get_container_path (SubagentIsolationContext *self);
const char                *subagent_isolation_context_get_container_id  (SubagentIsolationContext *self);
const char                *subagent_isolation_context_get_branch        (SubagentIsolationContext *self);
double                     subagent_isolation_context_get_cpu_quota     (SubagentIsolationContext *self);
const char                *subagent_isolation_context_get_memory_limit  (SubagentIsolationContext *self);
const char * const        *subagent_isolation_context_get_warnings      (SubagentIsolationContext *self);
GVariant                  *subagent_isolation_context_get_backend_data  (SubagentIsolationContext *self);
gboolean                   subagent_isolation_context_is_cleaned_up     (SubagentIsolationContext *self);

void         subagent_isolation_context_cleanup (SubagentIsolationContext *self);
GSubprocess *subagent_isolation_context_spawnv  (SubagentIsolationContext  *self,
                                                 const char * const        *argv,
                                                 const char * const        *envp,
                                                 GSubprocessFlags           flags,
                                                 GError                   **error);

G_END_DECLS
