/* subagent-routing.h: the risk policy that routes `isolation: auto`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "subagent-types.h"
#include "subagent-version.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_ROUTING_POLICY (subagent_routing_policy_get_type ())
SUBAGENT_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (SubagentRoutingPolicy, subagent_routing_policy, SUBAGENT, ROUTING_POLICY, GObject)

SUBAGENT_AVAILABLE_IN_0_2
SubagentRoutingPolicy  *subagent_routing_policy_new_default            (void);
SUBAGENT_AVAILABLE_IN_0_2
SubagentRoutingPolicy  *subagent_routing_policy_new_from_json          (JsonObject            *object,
                                                                        const char            *source,
                                                                        GError               **error);
SUBAGENT_AVAILABLE_IN_0_2
gboolean                subagent_routing_policy_get_strict             (SubagentRoutingPolicy *self);
SUBAGENT_AVAILABLE_IN_0_2
const char * const     *subagent_routing_policy_get_backends           (SubagentRoutingPolicy *self,
                                                                        SubagentRiskLevel      level);
SUBAGENT_AVAILABLE_IN_0_2
double                  subagent_routing_policy_get_cpu_quota          (SubagentRoutingPolicy *self,
                                                                        SubagentRiskLevel      level);
SUBAGENT_AVAILABLE_IN_0_2
const char             *subagent_routing_policy_get_memory_limit       (SubagentRoutingPolicy *self,
                                                                        SubagentRiskLevel      level);
SUBAGENT_AVAILABLE_IN_0_2
guint                   subagent_routing_policy_get_pids_limit         (SubagentRoutingPolicy *self,
                                                                        SubagentRiskLevel      level);
SUBAGENT_AVAILABLE_IN_0_2
const char             *subagent_routing_policy_get_network            (SubagentRoutingPolicy *self,
                                                                        SubagentRiskLevel      level);
SUBAGENT_AVAILABLE_IN_0_2
const char             *subagent_routing_policy_get_confinement        (SubagentRoutingPolicy *self,
                                                                        SubagentRiskLevel      level);
SUBAGENT_AVAILABLE_IN_0_2
SubagentPermissionMode  subagent_routing_policy_get_permission_ceiling (SubagentRoutingPolicy *self,
                                                                        SubagentRiskLevel      level);

G_END_DECLS
