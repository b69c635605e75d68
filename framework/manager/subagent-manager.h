/* subagent-manager.h: runs child agents for a parent (reference 001 run_subagent).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gio/gio.h>

#include "subagent-approval-queue.h"
#include "subagent-approval-sink.h"
#include "subagent-audit-log.h"
#include "subagent-catalog.h"
#include "subagent-config.h"
#include "subagent-plugin-registry.h"
#include "subagent-run-options.h"
#include "subagent-run-result.h"
#include "subagent-runner.h"
#include "subagent-session.h"
#include "subagent-tool-registry.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_MANAGER (subagent_manager_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentManager, subagent_manager, SUBAGENT, MANAGER, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentManager *subagent_manager_new (const char  *root,
                                       GError     **error);

SUBAGENT_AVAILABLE_IN_ALL
const char             *subagent_manager_get_root            (SubagentManager *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentConfig         *subagent_manager_get_config          (SubagentManager *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentCatalog        *subagent_manager_get_catalog         (SubagentManager *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentPluginRegistry *subagent_manager_get_plugin_registry (SubagentManager *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentAuditLog       *subagent_manager_get_audit_log       (SubagentManager *self);
SUBAGENT_AVAILABLE_IN_ALL
const char             *subagent_manager_get_run_id          (SubagentManager *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentToolRegistry   *subagent_manager_get_tools           (SubagentManager *self);
SUBAGENT_AVAILABLE_IN_ALL
void                    subagent_manager_set_tools           (SubagentManager      *self,
                                                              SubagentToolRegistry *tools);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunner         *subagent_manager_get_runner          (SubagentManager *self);
SUBAGENT_AVAILABLE_IN_ALL
void                    subagent_manager_set_runner          (SubagentManager *self,
                                                              SubagentRunner  *runner);
SUBAGENT_AVAILABLE_IN_ALL
SubagentPermissionMode  subagent_manager_get_permission_mode (SubagentManager *self);
SUBAGENT_AVAILABLE_IN_ALL
void                    subagent_manager_set_permission_mode (SubagentManager        *self,
                                                              SubagentPermissionMode  mode);

SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalQueue  *subagent_manager_dup_approval_queue  (SubagentManager        *self,
                                                              GError                **error);
SUBAGENT_AVAILABLE_IN_ALL
void                    subagent_manager_set_approval_queue  (SubagentManager        *self,
                                                              SubagentApprovalQueue  *queue);
SUBAGENT_AVAILABLE_IN_ALL
SubagentApprovalSink   *subagent_manager_get_approval_sink   (SubagentManager        *self);
SUBAGENT_AVAILABLE_IN_ALL
void                    subagent_manager_set_approval_sink   (SubagentManager        *self,
                                                              SubagentApprovalSink   *sink);
SUBAGENT_AVAILABLE_IN_ALL
gboolean                subagent_manager_get_unattended      (SubagentManager        *self);
SUBAGENT_AVAILABLE_IN_ALL
void                    subagent_manager_set_unattended      (SubagentManager        *self,
                                                              gboolean                unattended);

SUBAGENT_AVAILABLE_IN_ALL
SubagentDef *subagent_manager_get_def   (SubagentManager *self,
                                         const char      *name);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray   *subagent_manager_list_defs (SubagentManager *self);

SUBAGENT_AVAILABLE_IN_ALL
void               subagent_manager_run_async  (SubagentManager     *self,
                                                const char          *task,
                                                SubagentRunOptions  *options,
                                                GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunResult *subagent_manager_run_finish (SubagentManager     *self,
                                                GAsyncResult        *result,
                                                GError             **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunResult *subagent_manager_run        (SubagentManager     *self,
                                                const char          *task,
                                                SubagentRunOptions  *options,
                                                GCancellable        *cancellable,
                                                GError             **error);

SUBAGENT_AVAILABLE_IN_ALL
SubagentSession *subagent_manager_get_session   (SubagentManager *self,
                                                 const char      *run_id);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray       *subagent_manager_list_sessions (SubagentManager *self);
SUBAGENT_AVAILABLE_IN_ALL
guint            subagent_manager_get_sessions_in_memory (SubagentManager *self);
SUBAGENT_AVAILABLE_IN_ALL
void             subagent_manager_set_sessions_in_memory (SubagentManager *self,
                                                          guint            n_sessions);

G_END_DECLS
