/* subagent-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent-error.h"

G_DEFINE_QUARK (subagent-error-quark, subagent_error)
G_DEFINE_QUARK (subagent-def-error-quark, subagent_def_error)
G_DEFINE_QUARK (subagent-tool-error-quark, subagent_tool_error)
G_DEFINE_QUARK (subagent-isolation-error-quark, subagent_isolation_error)
G_DEFINE_QUARK (subagent-plugin-error-quark, subagent_plugin_error)
G_DEFINE_QUARK (subagent-config-error-quark, subagent_config_error)
G_DEFINE_QUARK (subagent-approval-error-quark, subagent_approval_error)
G_DEFINE_QUARK (subagent-supervisor-error-quark, subagent_supervisor_error)
