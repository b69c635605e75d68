/* subagent-run-result.h: what a run hands back to the parent agent.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <json-glib/json-glib.h>

#include "subagent-lineage.h"
#include "subagent-runner.h"
#include "subagent-types.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_RUN_RESULT (subagent_run_result_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentRunResult, subagent_run_result, SUBAGENT, RUN_RESULT, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentRunResult *subagent_run_result_new (SubagentRunStatus  status,
                                            const char        *run_id,
                                            guint              iterations,
                                            guint              tool_calls,
                                            double             cost_cents,
                                            const char        *final_answer,
                                            SubagentLineage   *lineage,
                                            JsonObject        *review,
                                            const char        *message,
                                            const char        *stop_reason,
                                            const char        *session_id);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunResult *subagent_run_result_new_error (const char      *message,
                                                  SubagentLineage *lineage);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunResult *subagent_run_result_new_from_outcome (const char         *run_id,
                                                         SubagentRunOutcome *outcome,
                                                         SubagentLineage    *lineage,
                                                         JsonObject         *review,
                                                         const char         *session_id);

SUBAGENT_AVAILABLE_IN_ALL
SubagentRunStatus  subagent_run_result_get_status       (SubagentRunResult *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_run_result_get_run_id       (SubagentRunResult *self);
SUBAGENT_AVAILABLE_IN_ALL
guint              subagent_run_result_get_iterations   (SubagentRunResult *self);
SUBAGENT_AVAILABLE_IN_ALL
guint              subagent_run_result_get_tool_calls   (SubagentRunResult *self);
SUBAGENT_AVAILABLE_IN_ALL
double             subagent_run_result_get_cost_cents   (SubagentRunResult *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_run_result_get_final_answer (SubagentRunResult *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentLineage   *subagent_run_result_get_lineage      (SubagentRunResult *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject        *subagent_run_result_get_review       (SubagentRunResult *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_run_result_get_message      (SubagentRunResult *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_run_result_get_stop_reason  (SubagentRunResult *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_run_result_get_session_id   (SubagentRunResult *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean           subagent_run_result_is_error         (SubagentRunResult *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject        *subagent_run_result_to_json          (SubagentRunResult *self);

/* The part of a run result the parent's model sees. */
SUBAGENT_AVAILABLE_IN_ALL
JsonObject *subagent_run_result_project    (SubagentRunResult  *self,
                                            const char         *root,
                                            gboolean            resumable);
SUBAGENT_AVAILABLE_IN_ALL
char       *subagent_run_result_dup_reason (SubagentRunResult  *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean    subagent_run_result_check      (SubagentRunResult  *self,
                                            GError            **error);

G_END_DECLS
