/* subagent-team.h: teams of definitions from `<root>/.subagent/teams/`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-batch.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_TEAM (subagent_team_get_type ())
G_DECLARE_FINAL_TYPE (SubagentTeam, subagent_team, SUBAGENT, TEAM, GObject)

SubagentTeam       *subagent_team_new_from_json   (JsonObject    *object,
                                                   const char    *source_path,
                                                   GError       **error);
SubagentTeam       *subagent_team_load_file       (const char    *path,
                                                   GError       **error);
GPtrArray          *subagent_team_list            (const char    *root,
                                                   GError       **error);
SubagentTeam       *subagent_team_lookup          (const char    *root,
                                                   const char    *name,
                                                   GError       **error);
const char         *subagent_team_get_name        (SubagentTeam  *self);
const char         *subagent_team_get_description (SubagentTeam  *self);
const char * const *subagent_team_get_members     (SubagentTeam  *self);
const char         *subagent_team_get_aggregator  (SubagentTeam  *self);
const char         *subagent_team_get_source_path (SubagentTeam  *self);
GPtrArray          *subagent_team_make_items      (SubagentTeam  *self,
                                                   const char    *task);
char               *subagent_team_aggregator_task (SubagentTeam  *self,
                                                   const char    *task,
                                                   GPtrArray     *member_results);

G_END_DECLS
