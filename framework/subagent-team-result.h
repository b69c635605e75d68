/* subagent-team-result.h: running a team, and what it gives.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-team.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_TEAM_RESULT (subagent_team_result_get_type ())
G_DECLARE_FINAL_TYPE (SubagentTeamResult, subagent_team_result, SUBAGENT, TEAM_RESULT, GObject)

SubagentTeam      *subagent_team_result_get_team           (SubagentTeamResult *self);
GPtrArray         *subagent_team_result_get_member_results (SubagentTeamResult *self);
SubagentRunResult *subagent_team_result_get_aggregate      (SubagentTeamResult *self);
const char        *subagent_team_result_get_final_answer   (SubagentTeamResult *self);
JsonObject        *subagent_team_result_to_json            (SubagentTeamResult *self);

void                subagent_supervisor_run_team_async  (SubagentSupervisor   *self,
                                                         const char           *team_name,
                                                         const char           *task,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
SubagentTeamResult *subagent_supervisor_run_team_finish (SubagentSupervisor   *self,
                                                         GAsyncResult         *result,
                                                         GError              **error);

G_END_DECLS
