/* subagent-config.h: `<root>/.subagent/config.yaml`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <json-glib/json-glib.h>

#include "subagent-types.h"

G_BEGIN_DECLS

#define SUBAGENT_DEFAULT_APPROVAL_TIMEOUT_SECONDS 180
#define SUBAGENT_DEFAULT_MAX_PARALLEL 4
#define SUBAGENT_DEFAULT_MAX_AGENTS 128

#define SUBAGENT_TYPE_CONFIG (subagent_config_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentConfig, subagent_config, SUBAGENT, CONFIG, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentConfig *subagent_config_new           (void);
SUBAGENT_AVAILABLE_IN_ALL
SubagentConfig *subagent_config_new_from_json (JsonObject  *object,
                                               const char  *source,
                                               GError     **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentConfig *subagent_config_load_file     (const char  *path,
                                               GError     **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentConfig *subagent_config_load_for_root (const char  *root,
                                               GError     **error);

SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_config_get_source             (SubagentConfig *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_config_get_default_isolation  (SubagentConfig *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentPermissionMode subagent_config_get_permission_mode    (SubagentConfig *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_config_get_plugin_for_backend (SubagentConfig *self,
                                                               const char     *backend);
SUBAGENT_AVAILABLE_IN_ALL
const char * const    *subagent_config_get_plugin_path        (SubagentConfig *self);
SUBAGENT_AVAILABLE_IN_0_2
JsonObject            *subagent_config_get_section            (SubagentConfig *self,
                                                               const char     *name);
SUBAGENT_AVAILABLE_IN_0_2
GStrv                  subagent_config_list_sections          (SubagentConfig *self);
SUBAGENT_AVAILABLE_IN_0_2
guint                  subagent_config_get_line               (SubagentConfig *self,
                                                               const char     *section,
                                                               const char     *key);
SUBAGENT_AVAILABLE_IN_0_2
const char            *subagent_config_get_auto_isolation     (SubagentConfig *self,
                                                               gboolean        git_work_tree);
SUBAGENT_AVAILABLE_IN_ALL
const char * const    *subagent_config_get_runner_command     (SubagentConfig *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                  subagent_config_get_runner_timeout     (SubagentConfig *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                  subagent_config_get_max_parallel       (SubagentConfig *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                  subagent_config_get_max_agents         (SubagentConfig *self);
SUBAGENT_AVAILABLE_IN_ALL
double                 subagent_config_get_max_cost_cents     (SubagentConfig *self);
SUBAGENT_AVAILABLE_IN_ALL
const char            *subagent_config_get_approval_sink      (SubagentConfig *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                  subagent_config_get_approval_timeout   (SubagentConfig *self);
SUBAGENT_AVAILABLE_IN_ALL
const char * const    *subagent_config_get_warnings           (SubagentConfig *self);

G_END_DECLS
