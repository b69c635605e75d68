/* subagent-follow-up.h: resuming a finished child's session with a new task.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-supervisor.h"

G_BEGIN_DECLS

SubagentSession *subagent_supervisor_find_session    (SubagentSupervisor  *self,
                                                      const char          *session_id,
                                                      GError             **error);
gboolean         subagent_supervisor_can_follow_up   (SubagentSupervisor  *self,
                                                      const char          *session_id,
                                                      GError             **error);
char            *subagent_supervisor_follow_up       (SubagentSupervisor  *self,
                                                      const char          *session_id,
                                                      const char          *task,
                                                      GError             **error);
JsonObject      *subagent_supervisor_project_result  (SubagentSupervisor  *self,
                                                      SubagentRunResult   *result);

G_END_DECLS
