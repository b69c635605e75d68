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

/* The construct-only properties of a #SubagentRunContext as one struct,
 * for _subagent_run_context_new(). Borrowed: the context takes its own
 * copies and references. */
typedef struct {
  const char *task;
  SubagentDef *definition;
  guint depth;
  const char *run_id;
  const char *parent_run_id;
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
  const char * const *hidden_paths;
  SubagentSkill *skill;
} SubagentRunContextInit;

/* A context as g_object_new() and those properties would build it, without
 * a GValue and a lookup by name for each of the twenty: for a command
 * child, that was a tenth of its host's work. */
SubagentRunContext       *_subagent_run_context_new                   (const SubagentRunContextInit *init);

/* The manager's Landlock ruleset cache (a reference is taken), or NULL: a
 * child of a context without one gets a ruleset built for it alone. */
void                      _subagent_run_context_set_confinement_cache (SubagentRunContext       *self,
                                                                       SubagentConfinementCache *cache);
SubagentConfinementCache *_subagent_run_context_get_confinement_cache (SubagentRunContext       *self);

G_END_DECLS
