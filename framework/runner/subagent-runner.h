/* subagent-runner.h: the host's agent loop, as libsubagent sees it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gio/gio.h>

#include "subagent-run-context.h"

G_BEGIN_DECLS

/* Stop reasons a runner reports (reference 003). */
#define SUBAGENT_STOP_REASON_COMPLETE "complete"
#define SUBAGENT_STOP_REASON_MAX_TURNS "max_turns"
#define SUBAGENT_STOP_REASON_MAX_TOKENS "max_tokens"
#define SUBAGENT_STOP_REASON_CANCELLED "cancelled"
#define SUBAGENT_STOP_REASON_ERROR "error"
#define SUBAGENT_STOP_REASON_USAGE_LIMIT "usage_limit"
#define SUBAGENT_STOP_REASON_BUDGET "budget"
#define SUBAGENT_STOP_REASON_TIMEOUT "timeout"

/* SubagentRunOutcome: what a runner reports back (immutable). */
#define SUBAGENT_TYPE_RUN_OUTCOME (subagent_run_outcome_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentRunOutcome, subagent_run_outcome, SUBAGENT, RUN_OUTCOME, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentRunOutcome *subagent_run_outcome_new (const char *stop_reason,
                                              guint       iterations,
                                              guint       tool_calls,
                                              double      cost_cents,
                                              const char *final_answer,
                                              const char *output,
                                              const char *message);

SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_run_outcome_get_stop_reason  (SubagentRunOutcome *self);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_run_outcome_get_iterations   (SubagentRunOutcome *self);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_run_outcome_get_tool_calls   (SubagentRunOutcome *self);
SUBAGENT_AVAILABLE_IN_ALL
double      subagent_run_outcome_get_cost_cents   (SubagentRunOutcome *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_run_outcome_get_final_answer (SubagentRunOutcome *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_run_outcome_get_output       (SubagentRunOutcome *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_run_outcome_get_message      (SubagentRunOutcome *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunStatus subagent_run_outcome_get_status (SubagentRunOutcome *self);

SUBAGENT_AVAILABLE_IN_ALL
SubagentRunStatus subagent_stop_reason_to_status (const char *stop_reason,
                                                  gboolean    produced_output);

#define SUBAGENT_TYPE_RUNNER (subagent_runner_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (SubagentRunner, subagent_runner, SUBAGENT, RUNNER, GObject)

/**
 * SubagentRunnerInterface:
 * @run_async: runs the child described by the context
 * @run_finish: finishes @run_async; an outcome also for children that failed or were cancelled, %NULL only when the runner itself could not run
 *
 * The virtual methods of #SubagentRunner.
 */
struct _SubagentRunnerInterface
{
  GTypeInterface g_iface;

  void                (*run_async)  (SubagentRunner      *self,
                                     SubagentRunContext  *context,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data);
  SubagentRunOutcome *(*run_finish) (SubagentRunner      *self,
                                     GAsyncResult        *result,
                                     GError             **error);

  /*< private >*/
  gpointer padding[8];
};

SUBAGENT_AVAILABLE_IN_ALL
void                subagent_runner_run_async  (SubagentRunner      *self,
                                                SubagentRunContext  *context,
                                                GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunOutcome *subagent_runner_run_finish (SubagentRunner      *self,
                                                GAsyncResult        *result,
                                                GError             **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentRunOutcome *subagent_runner_run        (SubagentRunner      *self,
                                                SubagentRunContext  *context,
                                                GCancellable        *cancellable,
                                                GError             **error);

G_END_DECLS
