/* subagent-manager.h: runs child agents for a parent (reference 001 run_subagent).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

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
G_DECLARE_FINAL_TYPE (SubagentManager, subagent_manager, SUBAGENT, MANAGER, GObject)

SubagentManager *subagent_manager_new (const char  *root,
                                       GError     **error);

const char             *subagent_manager_get_root            (SubagentManager *self);
SubagentConfig         *subagent_manager_get_config          (SubagentManager *self);
SubagentCatalog        *subagent_manager_get_catalog         (SubagentManager *self);
SubagentPluginRegistry *subagent_manager_get_plugin_registry (SubagentManager *self);
SubagentAuditLog       *subagent_manager_get_audit_log       (SubagentManager *self);
const char             *subagent_manager_get_run_id          (SubagentManager *self);
SubagentToolRegistry   *subagent_manager_get_tools           (SubagentManager *self);
void                    subagent_manager_set_tools           (SubagentManager      *self,
                                                              SubagentToolRegistry *tools);
SubagentRunner         *subagent_manager_get_runner          (SubagentManager *self);
void                    subagent_manager_set_runner          (SubagentManager *self,
                                                              SubagentRunner  *runner);
SubagentPermissionMode  subagent_manager_get_permission_mode (SubagentManager *self);
void                    subagent_manager_set_permission_mode (SubagentManager        *self,
                                                              SubagentPermissionMode  mode);

SubagentApprovalQueue  *subagent_manager_dup_approval_queue  (SubagentManager        *self,
                                                              GError                **error);
void                    subagent_manager_set_approval_queue  (SubagentManager        *self,
                                                              SubagentApprovalQueue  *queue);
SubagentApprovalSink   *subagent_manager_get_approval_sink   (SubagentManager        *self);
void                    subagent_manager_set_approval_sink   (SubagentManager        *self,
                                                              SubagentApprovalSink   *sink);
gboolean                subagent_manager_get_unattended      (SubagentManager        *self);
void                    subagent_manager_set_unattended      (SubagentManager        *self,
                                                              gboolean                unattended);

SubagentDef *subagent_manager_get_def   (SubagentManager *self,
                                         const char      *name);
GPtrArray   *subagent_manager_list_defs (SubagentManager *self);

void               subagent_manager_run_async  (SubagentManager     *self,
                                                const char          *task,
                                                SubagentRunOptions  *options,
                                                GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);
SubagentRunResult *subagent_manager_run_finish (SubagentManager     *self,
                                                GAsyncResult        *result,
                                                GError             **error);
SubagentRunResult *subagent_manager_run        (SubagentManager     *self,
                                                const char          *task,
                                                SubagentRunOptions  *options,
                                                GCancellable        *cancellable,
                                                GError             **error);

SubagentSession *subagent_manager_get_session   (SubagentManager *self,
                                                 const char      *run_id);
GPtrArray       *subagent_manager_list_sessions (SubagentManager *self);

G_END_DECLS
