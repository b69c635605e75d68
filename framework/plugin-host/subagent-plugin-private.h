/* subagent-plugin-private.h: what the plugin registry shares with
 * SubagentPluginInfo. Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-plugin-private.h is internal to libsubagent."
#endif

#include "subagent-plugin-info.h"

G_BEGIN_DECLS

/* Opens and checks @info's module; returns it (transfer full) or NULL with @error. */
typedef SubagentPluginModule *(*SubagentPluginLoadFunc) (SubagentPluginInfo  *info,
                                                         GError             **error);

/* Runs @load_func at most once per info, under the info's lock, and keeps
 * its result: later calls (from any thread) return the module or the error. */
G_GNUC_INTERNAL
gboolean subagent_plugin_info_load_once (SubagentPluginInfo      *self,
                                         SubagentPluginLoadFunc   load_func,
                                         GError                 **error);

G_END_DECLS
