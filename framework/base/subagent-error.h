/* subagent-error.h: the error domains of libsubagent, one per area.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <glib.h>

G_BEGIN_DECLS

/**
 * SubagentError:
 * @SUBAGENT_ERROR_FAILED: a generic failure; the message says what failed
 * @SUBAGENT_ERROR_INVALID_ARGUMENT: a caller passed a value the API refuses
 * @SUBAGENT_ERROR_NOT_FOUND: a named definition, session or object does not exist
 * @SUBAGENT_ERROR_DEPTH_EXCEEDED: the child would run deeper than its definition's max-depth
 * @SUBAGENT_ERROR_CANCELLED: the run was cancelled
 * @SUBAGENT_ERROR_TIMED_OUT: a wall-clock limit was exceeded
 * @SUBAGENT_ERROR_CHILD_FAILED: the child program failed or crashed
 * @SUBAGENT_ERROR_BUDGET_EXCEEDED: a cost budget is spent
 *
 * General errors of runs and the manager.
 */
typedef enum {
  SUBAGENT_ERROR_FAILED,
  SUBAGENT_ERROR_INVALID_ARGUMENT,
  SUBAGENT_ERROR_NOT_FOUND,
  SUBAGENT_ERROR_DEPTH_EXCEEDED,
  SUBAGENT_ERROR_CANCELLED,
  SUBAGENT_ERROR_TIMED_OUT,
  SUBAGENT_ERROR_CHILD_FAILED,
  SUBAGENT_ERROR_BUDGET_EXCEEDED,
} SubagentError;

/**
 * SubagentDefError:
 * @SUBAGENT_DEF_ERROR_PARSE: the file is not valid YAML, JSON or front matter
 * @SUBAGENT_DEF_ERROR_MISSING_NAME: the definition has no (or an empty) `name`
 * @SUBAGENT_DEF_ERROR_BAD_SUFFIX: the file name has a suffix definitions do not use
 * @SUBAGENT_DEF_ERROR_INVALID_VALUE: a field has a value of the wrong type or range
 * @SUBAGENT_DEF_ERROR_UNREADABLE: the file cannot be read, is too large, or resolves outside its root
 * @SUBAGENT_DEF_ERROR_DUPLICATE_NAME: another file already defines this name (or shadows it)
 * @SUBAGENT_DEF_ERROR_UNKNOWN_KEY: the definition has a key libsubagent does not use (ignored)
 * @SUBAGENT_DEF_ERROR_DEPRECATED: a value is a deprecated spelling (still accepted)
 *
 * Errors (and diagnostic codes) of definition loading.
 */
typedef enum {
  SUBAGENT_DEF_ERROR_PARSE,
  SUBAGENT_DEF_ERROR_MISSING_NAME,
  SUBAGENT_DEF_ERROR_BAD_SUFFIX,
  SUBAGENT_DEF_ERROR_INVALID_VALUE,
  SUBAGENT_DEF_ERROR_UNREADABLE,
  SUBAGENT_DEF_ERROR_DUPLICATE_NAME,
  SUBAGENT_DEF_ERROR_UNKNOWN_KEY,
  SUBAGENT_DEF_ERROR_DEPRECATED,
} SubagentDefError;

/**
 * SubagentToolError:
 * @SUBAGENT_TOOL_ERROR_NOT_FOUND: no tool of that name is in the registry
 * @SUBAGENT_TOOL_ERROR_NOT_ALLOWED: the tool exists in the parent but not in this (child) view
 * @SUBAGENT_TOOL_ERROR_INVALID_ARGUMENTS: the arguments do not fit the tool
 * @SUBAGENT_TOOL_ERROR_FAILED: the tool ran and failed
 * @SUBAGENT_TOOL_ERROR_DENIED: an approval or permission policy refused the call
 *
 * Errors of tool registries and tool invocation.
 */
typedef enum {
  SUBAGENT_TOOL_ERROR_NOT_FOUND,
  SUBAGENT_TOOL_ERROR_NOT_ALLOWED,
  SUBAGENT_TOOL_ERROR_INVALID_ARGUMENTS,
  SUBAGENT_TOOL_ERROR_FAILED,
  SUBAGENT_TOOL_ERROR_DENIED,
} SubagentToolError;

/**
 * SubagentIsolationError:
 * @SUBAGENT_ISOLATION_ERROR_UNKNOWN_MODE: the isolation mode is not one of the supported ones
 * @SUBAGENT_ISOLATION_ERROR_UNAVAILABLE: the backend cannot work here (no git repository, no engine...)
 * @SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED: creating the workspace failed; nothing was left behind
 * @SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED: a process could not be started inside the isolation
 * @SUBAGENT_ISOLATION_ERROR_NOT_IMPLEMENTED: the backend is not implemented yet
 * @SUBAGENT_ISOLATION_ERROR_INVALID_OPTION: an option of the request is invalid
 *
 * Errors of isolation providers.
 */
typedef enum {
  SUBAGENT_ISOLATION_ERROR_UNKNOWN_MODE,
  SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
  SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
  SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
  SUBAGENT_ISOLATION_ERROR_NOT_IMPLEMENTED,
  SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
} SubagentIsolationError;

/**
 * SubagentPluginError:
 * @SUBAGENT_PLUGIN_ERROR_NOT_FOUND: no plugin provides the asked backend or name
 * @SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR: the `.plugin` file is unreadable or lacks a key
 * @SUBAGENT_PLUGIN_ERROR_OPEN_FAILED: the module file could not be opened (see g_module_error())
 * @SUBAGENT_PLUGIN_ERROR_MISSING_SYMBOL: the module exports no `subagent_plugin_descriptor`
 * @SUBAGENT_PLUGIN_ERROR_ABI_MISMATCH: the module was built for another plugin ABI
 * @SUBAGENT_PLUGIN_ERROR_WRONG_INTERFACE: the registered type does not implement the declared interface
 * @SUBAGENT_PLUGIN_ERROR_REGISTER_FAILED: the module's register function failed or registered nothing
 *
 * Errors of plugin discovery and loading. Every message names the file.
 */
typedef enum {
  SUBAGENT_PLUGIN_ERROR_NOT_FOUND,
  SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR,
  SUBAGENT_PLUGIN_ERROR_OPEN_FAILED,
  SUBAGENT_PLUGIN_ERROR_MISSING_SYMBOL,
  SUBAGENT_PLUGIN_ERROR_ABI_MISMATCH,
  SUBAGENT_PLUGIN_ERROR_WRONG_INTERFACE,
  SUBAGENT_PLUGIN_ERROR_REGISTER_FAILED,
} SubagentPluginError;

/**
 * SubagentConfigError:
 * @SUBAGENT_CONFIG_ERROR_PARSE: the configuration file is not valid YAML
 * @SUBAGENT_CONFIG_ERROR_INVALID_VALUE: a key has a value of the wrong type or range
 *
 * Errors of `config.yaml`.
 */
typedef enum {
  SUBAGENT_CONFIG_ERROR_PARSE,
  SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
} SubagentConfigError;

/**
 * SubagentApprovalError:
 * @SUBAGENT_APPROVAL_ERROR_INVALID_ID: a run or request id has characters outside `[A-Za-z0-9_-]` or a bad length
 * @SUBAGENT_APPROVAL_ERROR_NOT_FOUND: no such request
 * @SUBAGENT_APPROVAL_ERROR_NOT_PENDING: the request already reached a terminal state
 * @SUBAGENT_APPROVAL_ERROR_STORE: the store could not be read or written
 * @SUBAGENT_APPROVAL_ERROR_INTEGRITY: a signature is missing or does not verify
 * @SUBAGENT_APPROVAL_ERROR_TIMED_OUT: nobody answered in time
 * @SUBAGENT_APPROVAL_ERROR_UNATTENDED: no approver can reach this subagent
 *
 * Errors of the approval queue and its sinks.
 */
typedef enum {
  SUBAGENT_APPROVAL_ERROR_INVALID_ID,
  SUBAGENT_APPROVAL_ERROR_NOT_FOUND,
  SUBAGENT_APPROVAL_ERROR_NOT_PENDING,
  SUBAGENT_APPROVAL_ERROR_STORE,
  SUBAGENT_APPROVAL_ERROR_INTEGRITY,
  SUBAGENT_APPROVAL_ERROR_TIMED_OUT,
  SUBAGENT_APPROVAL_ERROR_UNATTENDED,
} SubagentApprovalError;

/**
 * SubagentSupervisorError:
 * @SUBAGENT_SUPERVISOR_ERROR_OUTSTANDING_CAP: running plus queued children reached 2 × max-parallel
 * @SUBAGENT_SUPERVISOR_ERROR_AGENT_CAP: the parent reached its total agent cap
 * @SUBAGENT_SUPERVISOR_ERROR_CLOSED: the supervisor is shut down
 * @SUBAGENT_SUPERVISOR_ERROR_NOT_ACTIVE: no child with that id is queued or running
 * @SUBAGENT_SUPERVISOR_ERROR_STILL_RUNNING: a follow-up names a child that is still queued or running
 * @SUBAGENT_SUPERVISOR_ERROR_FOLLOW_UP_LIMIT: the session already had its definition's max-follow-ups
 * @SUBAGENT_SUPERVISOR_ERROR_WORKSPACE_GONE: the session's workspace was not kept or no longer exists
 *
 * Errors of the supervisor.
 */
typedef enum {
  SUBAGENT_SUPERVISOR_ERROR_OUTSTANDING_CAP,
  SUBAGENT_SUPERVISOR_ERROR_AGENT_CAP,
  SUBAGENT_SUPERVISOR_ERROR_CLOSED,
  SUBAGENT_SUPERVISOR_ERROR_NOT_ACTIVE,
  SUBAGENT_SUPERVISOR_ERROR_STILL_RUNNING,
  SUBAGENT_SUPERVISOR_ERROR_FOLLOW_UP_LIMIT,
  SUBAGENT_SUPERVISOR_ERROR_WORKSPACE_GONE,
} SubagentSupervisorError;

#define SUBAGENT_ERROR (subagent_error_quark ())
#define SUBAGENT_DEF_ERROR (subagent_def_error_quark ())
#define SUBAGENT_TOOL_ERROR (subagent_tool_error_quark ())
#define SUBAGENT_ISOLATION_ERROR (subagent_isolation_error_quark ())
#define SUBAGENT_PLUGIN_ERROR (subagent_plugin_error_quark ())
#define SUBAGENT_CONFIG_ERROR (subagent_config_error_quark ())
#define SUBAGENT_APPROVAL_ERROR (subagent_approval_error_quark ())
#define SUBAGENT_SUPERVISOR_ERROR (subagent_supervisor_error_quark ())

SUBAGENT_AVAILABLE_IN_ALL
GQuark subagent_error_quark (void);
SUBAGENT_AVAILABLE_IN_ALL
GQuark subagent_def_error_quark (void);
SUBAGENT_AVAILABLE_IN_ALL
GQuark subagent_tool_error_quark (void);
SUBAGENT_AVAILABLE_IN_ALL
GQuark subagent_isolation_error_quark (void);
SUBAGENT_AVAILABLE_IN_ALL
GQuark subagent_plugin_error_quark (void);
SUBAGENT_AVAILABLE_IN_ALL
GQuark subagent_config_error_quark (void);
SUBAGENT_AVAILABLE_IN_ALL
GQuark subagent_approval_error_quark (void);
SUBAGENT_AVAILABLE_IN_ALL
GQuark subagent_supervisor_error_quark (void);

G_END_DECLS
