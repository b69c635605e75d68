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
/**
 * SUBAGENT_STOP_REASON_COMPLETE:
 *
 * The stop reason of a child that finished its task.
 *
 * Since: 0.2
 */
#define SUBAGENT_STOP_REASON_COMPLETE "complete"
/**
 * SUBAGENT_STOP_REASON_MAX_TURNS:
 *
 * The stop reason of a child that used all its iterations or tool calls.
 *
 * Since: 0.2
 */
#define SUBAGENT_STOP_REASON_MAX_TURNS "max_turns"
/**
 * SUBAGENT_STOP_REASON_MAX_TOKENS:
 *
 * The stop reason of a child whose model hit its output limit.
 *
 * Since: 0.2
 */
#define SUBAGENT_STOP_REASON_MAX_TOKENS "max_tokens"
/**
 * SUBAGENT_STOP_REASON_CANCELLED:
 *
 * The stop reason of a child that was cancelled.
 *
 * Since: 0.2
 */
#define SUBAGENT_STOP_REASON_CANCELLED "cancelled"
/**
 * SUBAGENT_STOP_REASON_ERROR:
 *
 * The stop reason of a child that failed.
 *
 * Since: 0.2
 */
#define SUBAGENT_STOP_REASON_ERROR "error"
/**
 * SUBAGENT_STOP_REASON_USAGE_LIMIT:
 *
 * The stop reason of a child stopped by a usage limit of its model's
 * provider.
 *
 * Since: 0.2
 */
#define SUBAGENT_STOP_REASON_USAGE_LIMIT "usage_limit"
/**
 * SUBAGENT_STOP_REASON_BUDGET:
 *
 * The stop reason of a child that spent its cost budget.
 *
 * Since: 0.2
 */
#define SUBAGENT_STOP_REASON_BUDGET "budget"
/**
 * SUBAGENT_STOP_REASON_TIMEOUT:
 *
 * The stop reason of a child that ran past its wall-clock limit.
 *
 * Since: 0.2
 */
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
SUBAGENT_AVAILABLE_IN_0_2
JsonArray  *subagent_run_outcome_get_transcript   (SubagentRunOutcome *self);
SUBAGENT_AVAILABLE_IN_0_2
const char *subagent_run_outcome_get_confinement  (SubagentRunOutcome *self);
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
 * @run_async: runs the child described by the context. The default runs
 *   @run in a worker thread.
 * @run_finish: finishes @run_async; an outcome also for children that failed
 *   or were cancelled, %NULL only when the runner itself could not run. The
 *   default takes the outcome from a #GTask, whether it was returned with
 *   g_task_return_pointer() or g_task_return_value().
 * @run: runs the child and blocks until it has ended (Since: 0.2). An
 *   implementation may give only this one: the default @run_async calls it
 *   in a worker thread. The natural vfunc for a runner in Python (`do_run`).
 * @start: starts the child; the implementation later completes @task with
 *   g_task_return_value() (an outcome) or g_task_return_error() (Since: 0.2).
 *   The default @run_async calls it on the caller's thread. The natural
 *   vfunc for a runner in a language without threads, such as JavaScript
 *   (`vfunc_start`): no callback to pass on.
 *
 * The virtual methods of #SubagentRunner. Implement one of @run, @start or
 * @run_async (the last with @run_finish, unless it completes a #GTask with
 * g_task_return_value()).
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
  SubagentRunOutcome *(*run)        (SubagentRunner      *self,
                                     SubagentRunContext  *context,
                                     GCancellable        *cancellable,
                                     GError             **error);
  void                (*start)      (SubagentRunner      *self,
                                     SubagentRunContext  *context,
                                     GTask               *task);

  /*< private >*/
  gpointer padding[6];
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
