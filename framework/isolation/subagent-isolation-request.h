/* subagent-isolation-request.h: what a provider is asked to prepare.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <json-glib/json-glib.h>

#include "subagent-secrets.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_ISOLATION_REQUEST (subagent_isolation_request_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentIsolationRequest, subagent_isolation_request, SUBAGENT, ISOLATION_REQUEST, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentIsolationRequest *subagent_isolation_request_new (const char *parent_root,
                                                          const char *isolation,
                                                          const char *session_key);

SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_isolation_request_get_parent_root   (SubagentIsolationRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_isolation_request_get_isolation     (SubagentIsolationRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_isolation_request_get_session_key   (SubagentIsolationRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_isolation_request_get_parent_run_id (SubagentIsolationRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_isolation_request_get_def_name      (SubagentIsolationRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
double      subagent_isolation_request_get_cpu_quota     (SubagentIsolationRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_isolation_request_get_memory_limit  (SubagentIsolationRequest *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject *subagent_isolation_request_get_options       (SubagentIsolationRequest *self);
SUBAGENT_AVAILABLE_IN_0_2
const char * const *subagent_isolation_request_get_exclude     (SubagentIsolationRequest *self);
SUBAGENT_AVAILABLE_IN_0_2
SubagentExcludeSet *subagent_isolation_request_get_exclude_set (SubagentIsolationRequest *self);

/* Options accessors: typed reads of the backend options object, with defaults. */
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_isolation_request_get_option_string  (SubagentIsolationRequest *self,
                                                           const char               *key,
                                                           const char               *default_value);
SUBAGENT_AVAILABLE_IN_ALL
gboolean    subagent_isolation_request_get_option_boolean (SubagentIsolationRequest *self,
                                                           const char               *key,
                                                           gboolean                  default_value);
SUBAGENT_AVAILABLE_IN_ALL
gint64      subagent_isolation_request_get_option_int     (SubagentIsolationRequest *self,
                                                           const char               *key,
                                                           gint64                    default_value);

G_END_DECLS
