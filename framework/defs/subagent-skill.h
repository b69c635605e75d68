/* subagent-skill.h: a skill a child runs (a Claude-style SKILL.md).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <gio/gio.h>

#include "subagent-types.h"
#include "subagent-version.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_SKILL (subagent_skill_get_type ())
SUBAGENT_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (SubagentSkill, subagent_skill, SUBAGENT, SKILL, GObject)

SUBAGENT_AVAILABLE_IN_0_2
SubagentSkill      *subagent_skill_load              (const char     *root,
                                                      const char     *path,
                                                      GError        **error);
SUBAGENT_AVAILABLE_IN_0_2
const char         *subagent_skill_get_path          (SubagentSkill  *self);
SUBAGENT_AVAILABLE_IN_0_2
const char         *subagent_skill_get_relative_path (SubagentSkill  *self);
SUBAGENT_AVAILABLE_IN_0_2
const char         *subagent_skill_get_name          (SubagentSkill  *self);
SUBAGENT_AVAILABLE_IN_0_2
const char         *subagent_skill_get_description   (SubagentSkill  *self);
SUBAGENT_AVAILABLE_IN_0_2
SubagentRiskLevel   subagent_skill_get_risk_level    (SubagentSkill  *self);
SUBAGENT_AVAILABLE_IN_0_2
const char * const *subagent_skill_get_allowed_tools (SubagentSkill  *self);
SUBAGENT_AVAILABLE_IN_0_2
const char         *subagent_skill_get_body          (SubagentSkill  *self);

G_END_DECLS
