/* subagent-run-options.h: the per-run inputs of subagent_manager_run().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define SUBAGENT_TYPE_RUN_OPTIONS (subagent_run_options_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentRunOptions, subagent_run_options, SUBAGENT, RUN_OPTIONS, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentRunOptions *subagent_run_options_new (void);

SUBAGENT_AVAILABLE_IN_ALL
void        subagent_run_options_set_def_name        (SubagentRunOptions *self, const char *def_name);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_run_options_get_def_name        (SubagentRunOptions *self);
SUBAGENT_AVAILABLE_IN_ALL
void        subagent_run_options_set_parent_run_id   (SubagentRunOptions *self, const char *parent_run_id);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_run_options_get_parent_run_id   (SubagentRunOptions *self);
SUBAGENT_AVAILABLE_IN_ALL
void        subagent_run_options_set_depth           (SubagentRunOptions *self, guint depth);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_run_options_get_depth           (SubagentRunOptions *self);
SUBAGENT_AVAILABLE_IN_ALL
void        subagent_run_options_set_isolation       (SubagentRunOptions *self, const char *isolation);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_run_options_get_isolation       (SubagentRunOptions *self);
SUBAGENT_AVAILABLE_IN_ALL
void        subagent_run_options_set_max_iterations  (SubagentRunOptions *self, guint max_iterations);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_run_options_get_max_iterations  (SubagentRunOptions *self);
SUBAGENT_AVAILABLE_IN_ALL
void        subagent_run_options_set_max_tool_calls  (SubagentRunOptions *self, guint max_tool_calls);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_run_options_get_max_tool_calls  (SubagentRunOptions *self);
SUBAGENT_AVAILABLE_IN_ALL
void        subagent_run_options_set_batch_index     (SubagentRunOptions *self, gint batch_index);
SUBAGENT_AVAILABLE_IN_ALL
gint        subagent_run_options_get_batch_index     (SubagentRunOptions *self);
SUBAGENT_AVAILABLE_IN_ALL
void        subagent_run_options_set_cpu_quota       (SubagentRunOptions *self, double cpu_quota);
SUBAGENT_AVAILABLE_IN_ALL
double      subagent_run_options_get_cpu_quota       (SubagentRunOptions *self);
SUBAGENT_AVAILABLE_IN_ALL
void        subagent_run_options_set_memory_limit    (SubagentRunOptions *self, const char *memory_limit);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_run_options_get_memory_limit    (SubagentRunOptions *self);
SUBAGENT_AVAILABLE_IN_ALL
void        subagent_run_options_set_timeout_seconds (SubagentRunOptions *self, guint timeout_seconds);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_run_options_get_timeout_seconds (SubagentRunOptions *self);
SUBAGENT_AVAILABLE_IN_ALL
void        subagent_run_options_set_command         (SubagentRunOptions *self, const char * const *command);
SUBAGENT_AVAILABLE_IN_ALL
const char * const *subagent_run_options_get_command (SubagentRunOptions *self);
SUBAGENT_AVAILABLE_IN_ALL
void        subagent_run_options_set_isolation_option (SubagentRunOptions *self, const char *key, JsonNode *value);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject *subagent_run_options_get_isolation_options (SubagentRunOptions *self);

G_END_DECLS
