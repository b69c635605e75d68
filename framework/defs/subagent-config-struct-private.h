/* subagent-config-struct-private.h: the fields of SubagentConfig, shared by
 * subagent-config.c (the object and its getters), subagent-config-load.c
 * (reading the file) and subagent-config-sections.c (plugin sections).
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-config-struct-private.h is internal to libsubagent."
#endif

#include "subagent.h"
#include "subagent-yaml-private.h"

G_BEGIN_DECLS

struct _SubagentConfig
{
  GObject parent_instance;

  char *source;
  char *default_isolation;
  SubagentPermissionMode permission_mode;
  GHashTable *backend_plugins;   /* backend → plugin name */
  GStrv plugin_path;
  GHashTable *sections;          /* plugin section name → JsonObject, as written */
  GHashTable *lines;             /* "section/key" (or "section") → line (GUINT_TO_POINTER) */
  char *auto_git;
  char *auto_other;
  GStrv runner_command;
  guint runner_timeout;
  guint max_parallel;
  guint default_max_iterations;
  guint default_max_tool_calls;
  guint max_agents;
  double max_cost_cents;
  char *approval_sink;
  guint approval_timeout;
  SubagentConfinement confinement;
  GStrv exclude;
  guint64 review_max_file_size;
  SubagentRoutingPolicy *routing;
  GPtrArray *warnings;
  char *model_runner;
  JsonObject *models;            /* name → normalized settings */
  char *default_model;
  GHashTable *model_aliases;     /* lower-case alias → model name */
};

/* Keeps @section as the plugin section @name, with the lines of it and of
 * its keys; @parent names the mapping it sits in, NULL at the top
 * (subagent-config-sections.c). */
G_GNUC_INTERNAL
void _subagent_config_keep_section (SubagentConfig              *self,
                                    const SubagentYamlParseInfo *info,
                                    const char                  *parent,
                                    const char                  *name,
                                    JsonObject                  *section);

G_END_DECLS
