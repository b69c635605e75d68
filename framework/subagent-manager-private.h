/* subagent-manager-private.h: what the manager's files share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"

G_BEGIN_DECLS

struct _SubagentManager
{
  GObject parent_instance;

  char *root;
  char *run_id;
  SubagentConfig *config;
  SubagentCatalog *catalog;
  SubagentPluginRegistry *plugins;
  SubagentAuditLog *audit;
  SubagentToolRegistry *tools;
  SubagentRunner *runner;
  SubagentPermissionMode permission_mode;

  GMutex lock;
  GHashTable *sessions;  /* run id → SubagentSession */
};

char *_subagent_manager_new_run_id (void) G_GNUC_INTERNAL;

G_END_DECLS
