/* subagent-command-runner.h: a runner that runs a program as the child agent.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include "subagent-runner.h"

G_BEGIN_DECLS

/* What the runner allows itself when it stops a child (SIGTERM → SIGKILL). */
#define SUBAGENT_COMMAND_RUNNER_DEFAULT_KILL_GRACE_MS 5000

#define SUBAGENT_TYPE_COMMAND_RUNNER (subagent_command_runner_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentCommandRunner, subagent_command_runner, SUBAGENT, COMMAND_RUNNER, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentCommandRunner *subagent_command_runner_new (void);

SUBAGENT_AVAILABLE_IN_ALL
char   **subagent_command_runner_dup_default_command (SubagentCommandRunner *self);
SUBAGENT_AVAILABLE_IN_ALL
void     subagent_command_runner_set_default_command (SubagentCommandRunner *self,
                                                      const char * const    *argv);
SUBAGENT_AVAILABLE_IN_ALL
gboolean subagent_command_runner_get_interactive_stdin (SubagentCommandRunner *self);
SUBAGENT_AVAILABLE_IN_ALL
void     subagent_command_runner_set_interactive_stdin (SubagentCommandRunner *self,
                                                        gboolean               interactive);
SUBAGENT_AVAILABLE_IN_ALL
guint    subagent_command_runner_get_kill_grace_ms (SubagentCommandRunner *self);
SUBAGENT_AVAILABLE_IN_ALL
void     subagent_command_runner_set_kill_grace_ms (SubagentCommandRunner *self,
                                                    guint                  grace_ms);

G_END_DECLS
