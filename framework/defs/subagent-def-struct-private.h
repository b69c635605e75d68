/* subagent-def-struct-private.h: the fields of SubagentDef, shared by
 * subagent-def.c (the object) and subagent-def-getters.c. Not installed,
 * not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-def-struct-private.h is internal to libsubagent."
#endif

#include "subagent.h"

G_BEGIN_DECLS

struct _SubagentDef
{
  GObject parent_instance;

  char *name;
  char *description;
  char *system_prompt;
  char *model;
  SubagentPermissionMode permission_mode;
  guint max_iterations;
  guint max_tool_calls;
  GStrv tool_whitelist;
  GStrv disallowed_tools;
  guint max_depth;
  char *isolation;
  gboolean background;
  gboolean interactive;
  gboolean iterations_unset;
  gboolean tool_calls_unset;
  char *effort;
  GStrv command;
  GStrv write_scope;
  double cpu_quota;
  char *memory_limit;
  guint timeout_seconds;
  double max_cost_cents;
  guint max_follow_ups;
  char *network;
  char *runner;
  SubagentConfinement confinement;
  char *source_path;
};

G_END_DECLS
