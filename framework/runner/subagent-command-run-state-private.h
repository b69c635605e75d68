/* subagent-command-run-state-private.h: what the files of one command
 * run share: its state and the calls between them (the lifecycle in
 * subagent-command-run.c, reading the child's output and protocol in
 * subagent-command-output.c, what the child is given in
 * subagent-command-env.c).
 *
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"
#include "subagent-child-process-private.h"
#include "subagent-command-approvals-private.h"
#include "subagent-confinement-private.h"
#include "subagent-deadline-private.h"
#include "subagent-fd-watch-private.h"
#include "subagent-host-process-private.h"

G_BEGIN_DECLS

/* Bounds on what an untrusted child can make the host keep. */
#define OUTPUT_MAX_BYTES (4 * 1024 * 1024)
#define STDERR_TAIL_BYTES (64 * 1024)
#define STDERR_READ_CHUNK 8192
/* A stdout line longer than this is cut: its rest is dropped, with a note. */
#define LINE_MAX_BYTES (1024 * 1024)
#define STDOUT_READ_CHUNK 65536

/* One command run: the task data of its GTask. */
typedef struct {
  SubagentRunContext *context;
  char *label;                   /* “name” for messages */
  SubagentHostProcess *process;
  SubagentChildConfinement confinement;
  GPid pid;                      /* 0 once reaped */
  char *token;
  /* What the run started: the child's own cgroup when it joined one (then
   * @processes is NULL), else found in /proc by parentage and run token. */
  const char *cgroup;            /* owned by @process */
  SubagentRunProcesses *processes;
  GBytes *stdin_text;            /* until the child is started */
  SubagentPipeWriter *stdin_writer;
  gboolean interactive_stdin;
  gboolean warned_eof_approval;
  SubagentCommandApprovals *approvals;  /* approval_request messages */
  /* Reading stdout and stderr until both end; @output_hold is a reference
   * to the run's task meanwhile. */
  SubagentFdWatch *stdout_watch;
  SubagentFdWatch *stderr_watch;
  GTask *output_hold;
  guint8 *read_buffer;          /* STDOUT_READ_CHUNK bytes, once output fills a small one */
  GByteArray *line;              /* the stdout line being read */
  gboolean line_cut;             /* dropping the rest of an over-long line */
  guint lines_cut;
  guint kill_grace_ms;

  SubagentDeadline *deadline;    /* the wall-clock limit */
  GCancellable *cancellable;     /* the task's */
  gulong cancel_handler;         /* 0 when not connected */
  GSource *grace_source;
  GSource *drain_source;
  GSource *final_grace_source;
  gint64 drain_deadline;

  GString *output;
  gboolean output_truncated;
  GByteArray *stderr_tail;
  char *final_answer;            /* NULL until a final message */
  guint iterations;
  guint tool_calls;
  double cost_cents;

  const char *stop_reason;       /* set when the runner stops the child */
  char *stop_message;
  gboolean exited;
  gboolean stdout_done;
  gboolean stderr_done;
  gboolean completed;
} RunState;

/* ---- the run's lifecycle (subagent-command-run.c) ---------------------- */
/* The first reason to stop the child wins; @message is taken. */
void _subagent_command_run_stop_child    (GTask      *task,
                                          const char *reason,
                                          char       *message) G_GNUC_INTERNAL;
/* Completes the task once the child has exited and both streams ended. */
void _subagent_command_run_maybe_complete (GTask *task) G_GNUC_INTERNAL;

/* ---- reading the child's output (subagent-command-output.c) ------------ */
void _subagent_command_run_start_reading (GTask    *task,
                                          RunState *state) G_GNUC_INTERNAL;
void _subagent_command_run_stop_reading  (GTask    *task,
                                          RunState *state) G_GNUC_INTERNAL;

/* ---- what the child is given (subagent-command-env.c) ------------------ */
/* The environment is one block: g_free() frees the array and its strings. */
char  **_subagent_command_run_build_environment (RunState *state,
                                                 gboolean  interactive_stdin,
                                                 gsize     task_bytes,
                                                 gsize     prompt_bytes) G_GNUC_INTERNAL;
GBytes *_subagent_command_run_build_stdin_text  (SubagentRunContext *context) G_GNUC_INTERNAL;

G_END_DECLS
