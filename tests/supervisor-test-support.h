/* supervisor-test-support.h: a runner the tests hold at the gate, and
 * helpers for the supervisor, batch, team, tool and follow-up tests.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "test-support.h"

G_BEGIN_DECLS

/* Decides a run's outcome from its context; NULL keeps it at the gate until
 * gate_runner_release(). Called on the main thread. */
typedef SubagentRunOutcome *(*GateDecideFunc) (SubagentRunContext *context,
                                               gpointer            user_data);

#define GATE_TYPE_RUNNER (gate_runner_get_type ())
G_DECLARE_FINAL_TYPE (GateRunner, gate_runner, GATE, RUNNER, GObject)

GateRunner         *gate_runner_new              (void);
/* Every run is decided by @func (default: all wait at the gate). */
void                gate_runner_set_decide       (GateRunner     *self,
                                                  GateDecideFunc  func,
                                                  gpointer        user_data);
/* Cancellation then no longer ends a run (a child that will not stop). */
void                gate_runner_set_ignore_cancel (GateRunner    *self,
                                                   gboolean       ignore);
/* Runs ask their approval handler for this destructive tool first (in a
 * thread), and answer "approved" or "denied: REASON". */
void                gate_runner_set_approval_tool (GateRunner    *self,
                                                   const char    *tool_name);
guint               gate_runner_get_n_started    (GateRunner     *self);
/* The task of the i-th run started, in start order. */
const char         *gate_runner_get_started_task (GateRunner     *self,
                                                  guint           index);
/* The context of the (latest) run with that task. */
SubagentRunContext *gate_runner_get_context      (GateRunner     *self,
                                                  const char     *task);
gboolean            gate_runner_is_waiting       (GateRunner     *self,
                                                  const char     *task);
/* Ends the waiting run with that task; asserts there is one. */
void                gate_runner_release          (GateRunner         *self,
                                                  const char         *task,
                                                  SubagentRunOutcome *outcome);
void                gate_runner_release_all      (GateRunner     *self);

/* An outcome that completed with @answer and @cost. */
SubagentRunOutcome *sst_complete (const char *answer,
                                  double      cost);

/* A root (a temp dir, or a git repo with @git) with the given definitions
 * (NAME, YAML, ..., NULL). */
char               *sst_make_root (gboolean    git,
                                   const char *first_name,
                                   ...) G_GNUC_NULL_TERMINATED;
SubagentManager    *sst_manager_new (const char *root,
                                     GateRunner *runner);
SubagentSupervisor *sst_supervisor_new (SubagentManager *manager,
                                        guint            max_parallel,
                                        gint             max_agents,
                                        double           max_cost_cents);

/* Iterates the default main context until *flag. */
void                sst_wait_flag   (gboolean *flag);
/* Waits for a child (iterating the default context). */
SubagentRunResult  *sst_wait_result (SubagentSupervisor *supervisor,
                                     const char         *run_id,
                                     GError            **error);
/* Every field of a result as text (its JSON, session id, stop reason and
 * confinement): a result rebuilt from its record must give the same. */
char               *sst_result_text (SubagentRunResult *result);
/* Iterates until the gate holds @n runs in all. */
void                sst_wait_started (GateRunner *runner,
                                      guint       n);
/* Runs the pending idle work of the default context. */
void                sst_flush_main  (void);

/* Records every event of a supervisor. */
typedef struct {
  GPtrArray *events;  /* SubagentEvent */
  gulong handler;
  SubagentSupervisor *supervisor;
} SstRecorder;

void     sst_recorder_start (SstRecorder        *recorder,
                             SubagentSupervisor *supervisor);
void     sst_recorder_stop  (SstRecorder        *recorder);
/* The kinds of @run_id's events, as "accepted,queued,started,..." */
char    *sst_recorder_kinds (SstRecorder        *recorder,
                             const char         *run_id);
SubagentEvent *sst_recorder_find (SstRecorder       *recorder,
                                  const char        *run_id,
                                  SubagentEventKind  kind);

G_END_DECLS
