/* subagent-run-context-struct-private.h: the fields of SubagentRunContext,
 * shared by subagent-run-context.c (the object) and
 * subagent-run-context-getters.c. Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-run-context-struct-private.h is internal to libsubagent."
#endif

#include "subagent.h"
#include "subagent-run-context-private.h"

G_BEGIN_DECLS

struct _SubagentRunContext
{
  GObject parent_instance;

  char *task;
  SubagentDef *definition;
  guint depth;
  char *run_id;
  char *parent_run_id;
  SubagentLineage *lineage;
  SubagentToolRegistry *tools;
  SubagentPermissionMode permission_mode;
  SubagentIsolationContext *isolation;
  guint max_iterations;
  guint max_tool_calls;
  guint timeout_seconds;
  double max_cost_cents;
  gint batch_index;
  GObject *approval_handler;
  JsonObject *model;
  JsonArray *transcript;
  SubagentConfinement confinement;
  GStrv hidden_paths;
  SubagentSkill *skill;
  SubagentConfinementCache *confinement_cache;
};

G_END_DECLS
