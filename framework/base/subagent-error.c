/* subagent-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent-error.h"

/**
 * subagent_error_quark:
 *
 * The error domain of general errors of libsubagent: the codes of #SubagentError.
 *
 * Returns: the quark of the domain, also written %SUBAGENT_ERROR
 *
 * Since: 0.2
 */
G_DEFINE_QUARK (subagent-error-quark, subagent_error)
/**
 * subagent_def_error_quark:
 *
 * The error domain of errors in subagent definitions: the codes of #SubagentDefError.
 *
 * Returns: the quark of the domain, also written %SUBAGENT_DEF_ERROR
 *
 * Since: 0.2
 */
G_DEFINE_QUARK (subagent-def-error-quark, subagent_def_error)
/**
 * subagent_tool_error_quark:
 *
 * The error domain of errors of tool registries and tool calls: the codes of #SubagentToolError.
 *
 * Returns: the quark of the domain, also written %SUBAGENT_TOOL_ERROR
 *
 * Since: 0.2
 */
G_DEFINE_QUARK (subagent-tool-error-quark, subagent_tool_error)
/**
 * subagent_isolation_error_quark:
 *
 * The error domain of errors of isolation providers: the codes of #SubagentIsolationError.
 *
 * Returns: the quark of the domain, also written %SUBAGENT_ISOLATION_ERROR
 *
 * Since: 0.2
 */
G_DEFINE_QUARK (subagent-isolation-error-quark, subagent_isolation_error)
/**
 * subagent_plugin_error_quark:
 *
 * The error domain of errors loading plugins: the codes of #SubagentPluginError.
 *
 * Returns: the quark of the domain, also written %SUBAGENT_PLUGIN_ERROR
 *
 * Since: 0.2
 */
G_DEFINE_QUARK (subagent-plugin-error-quark, subagent_plugin_error)
/**
 * subagent_config_error_quark:
 *
 * The error domain of errors in the configuration: the codes of #SubagentConfigError.
 *
 * Returns: the quark of the domain, also written %SUBAGENT_CONFIG_ERROR
 *
 * Since: 0.2
 */
G_DEFINE_QUARK (subagent-config-error-quark, subagent_config_error)
/**
 * subagent_approval_error_quark:
 *
 * The error domain of errors of approval queues and sinks: the codes of #SubagentApprovalError.
 *
 * Returns: the quark of the domain, also written %SUBAGENT_APPROVAL_ERROR
 *
 * Since: 0.2
 */
G_DEFINE_QUARK (subagent-approval-error-quark, subagent_approval_error)
/**
 * subagent_supervisor_error_quark:
 *
 * The error domain of errors of the supervisor: the codes of #SubagentSupervisorError.
 *
 * Returns: the quark of the domain, also written %SUBAGENT_SUPERVISOR_ERROR
 *
 * Since: 0.2
 */
G_DEFINE_QUARK (subagent-supervisor-error-quark, subagent_supervisor_error)
