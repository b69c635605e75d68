/* subagent-command-run-private.h: one run of a SubagentCommandRunner.
 *
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"

G_BEGIN_DECLS

/* Spawns @argv (taken) for @context and completes @task with a
 * SubagentRunOutcome (or an error if the child cannot be started). */
void subagent_command_run_start (GTask              *task,
                                 SubagentRunContext *context,
                                 char              **argv,
                                 gboolean            interactive_stdin,
                                 guint               kill_grace_ms,
                                 GCancellable       *cancellable);

G_END_DECLS
