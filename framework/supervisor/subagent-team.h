/* subagent-team.h: teams of definitions from `<root>/.subagent/teams/`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include "subagent-batch-item.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_TEAM (subagent_team_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentTeam, subagent_team, SUBAGENT, TEAM, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentTeam       *subagent_team_new_from_json   (JsonObject    *object,
                                                   const char    *source_path,
                                                   GError       **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentTeam       *subagent_team_load_file       (const char    *path,
                                                   GError       **error);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray          *subagent_team_list            (const char    *root,
                                                   GError       **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentTeam       *subagent_team_lookup          (const char    *root,
                                                   const char    *name,
                                                   GError       **error);
SUBAGENT_AVAILABLE_IN_ALL
const char         *subagent_team_get_name        (SubagentTeam  *self);
SUBAGENT_AVAILABLE_IN_ALL
const char         *subagent_team_get_description (SubagentTeam  *self);
SUBAGENT_AVAILABLE_IN_ALL
const char * const *subagent_team_get_members     (SubagentTeam  *self);
SUBAGENT_AVAILABLE_IN_ALL
const char         *subagent_team_get_aggregator  (SubagentTeam  *self);
SUBAGENT_AVAILABLE_IN_ALL
const char         *subagent_team_get_source_path (SubagentTeam  *self);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray          *subagent_team_make_items      (SubagentTeam  *self,
                                                   const char    *task);
SUBAGENT_AVAILABLE_IN_ALL
char               *subagent_team_aggregator_task (SubagentTeam  *self,
                                                   const char    *task,
                                                   GPtrArray     *member_results);

G_END_DECLS
