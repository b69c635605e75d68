/* subagent-team-result.h: running a team, and what it gives.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include "subagent-team.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_TEAM_RESULT (subagent_team_result_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentTeamResult, subagent_team_result, SUBAGENT, TEAM_RESULT, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentTeam      *subagent_team_result_get_team           (SubagentTeamResult *self);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray         *subagent_team_result_get_member_results (SubagentTeamResult *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunResult *subagent_team_result_get_aggregate      (SubagentTeamResult *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_team_result_get_final_answer   (SubagentTeamResult *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject        *subagent_team_result_to_json            (SubagentTeamResult *self);

G_END_DECLS
