/* subagent-supervisor-private.h: the supervisor's state, and what it shares
 * with batches, teams, follow-ups, shutdown and the delegation tools. Not
 * installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"
#include "subagent-manager-private.h"

G_BEGIN_DECLS

typedef enum {
  SUBAGENT_JOB_QUEUED,
  SUBAGENT_JOB_RUNNING,
  SUBAGENT_JOB_DONE,
} SubagentJobState;

/* What a job's own observer is told when the child ends: its result, or
 * why there is none (a shutdown gave up on it). In the supervisor's
 * context, before the job's waiters. */
typedef void (*SubagentJobEndedFunc) (SubagentRunResult *result,
                                      const GError      *closed,
                                      gpointer           data);

/* One child, from its acceptance on. Fields are guarded by the
 * supervisor's lock. */
typedef struct {
  gatomicrefcount ref;
  SubagentSupervisor *owner;        /* strong while queued or running */
  char *run_id;
  char *task;
  SubagentRunOptions *options;
  char *def_name;
  char *parent_run_id;
  char *isolation;                  /* as requested, for a child that never runs */
  guint depth;                      /* the child's */
  gint batch_index;
  guint follow_up;                  /* 0, or which follow-up of its session */
  SubagentJobState state;
  GCancellable *cancellable;        /* the supervisor's, never a caller's */
  gboolean cancel_requested;
  SubagentCancelCause cause;
  gboolean abandoned;               /* a shutdown gave up waiting for it */
  SubagentRunHooks hooks;
  SubagentSession *resume;
  SubagentIsolationContext *reuse;
  SubagentApprovalQueue *approval_queue;
  GDateTime *accepted_at;
  GDateTime *started_at;
  SubagentRunResult *result;
  GPtrArray *waiters;               /* SubagentWaiter* */
  GString *line_shared;             /* what each of its event lines has after the time */
  GString *line_last;               /* ...and last (accepted_at, follow_up) */
  SubagentJobEndedFunc ended;       /* told once, before the waiters (a batch's) */
  gpointer ended_data;
  GDestroyNotify ended_destroy;
} SubagentJob;

typedef enum {
  SUBAGENT_ACTION_EVENT,            /* emit an event */
  SUBAGENT_ACTION_START,            /* hand a job to the manager */
  SUBAGENT_ACTION_RETURN,           /* complete a job's waiters */
  SUBAGENT_ACTION_SHUTDOWN_DONE,    /* finish a pending shutdown */
} SubagentActionKind;

/* An event action holds the parts of an event (its job, kind, time and
 * the caller's details, without what every event of the job carries): the
 * supervisor writes its line from them and makes the event, with those
 * members added and sealed, only when a handler will see it. */
typedef struct {
  SubagentActionKind kind;
  SubagentJob *job;
  SubagentEventKind event_kind;     /* an event's: */
  GDateTime *time;
  JsonObject *details;
  gboolean terminal;                /* the details are the job's result's (terminal_members()) */
} SubagentAction;

enum {
  SIGNAL_EVENT,
  SIGNAL_KIND_FIRST,                /* one per SubagentEventKind, in order */
  N_SUPERVISOR_SIGNALS = SIGNAL_KIND_FIRST + SUBAGENT_EVENT_USAGE + 1
};
extern guint _subagent_supervisor_signals[N_SUPERVISOR_SIGNALS] G_GNUC_INTERNAL;

struct _SubagentSupervisor
{
  GObject parent_instance;

  SubagentManager *manager;
  GMainContext *context;            /* where children start and signals are emitted */
  guint max_parallel;
  gint max_agents_setting;
  guint max_agents;
  double max_cost_cents;
  char *events_path;
  gboolean events_path_set;
  SubagentEventsWriter *writer;
  gint keep_workspaces;             /* atomic */

  GMutex lock;
  GHashTable *jobs;                 /* run id → SubagentJob, the latest finished ones too */
  guint results_in_memory;
  GQueue finished;                  /* SubagentJob* (a reference each) whose result can be read back, oldest first */
  gboolean results_dropped;         /* some left the table: look in the session records */
  GQueue queue;                     /* SubagentJob*, FIFO */
  guint n_running;
  gboolean closed;
  GHashTable *agents;               /* parent run id → children started (GUINT_TO_POINTER) */
  GHashTable *spent;                /* parent run id → double* */
  GHashTable *kept;                 /* run id → SubagentIsolationContext kept for follow-ups */
  GHashTable *queues;               /* parent run id → SubagentApprovalQueue we listen to */
  GHashTable *unattended;           /* parent run ids whose queue could not be made */
  GQueue pending;                   /* SubagentAction*, in order */
  GQueue slot_waiters;              /* SubagentSlotWaiter*: spawns the outstanding cap refused */
  GTask *shutdown_task;
  GSource *shutdown_timeout;
  guint shutdown_cancelled;
};

/* The extras of one spawn. */
typedef struct {
  gboolean centralized_approval;    /* route approvals through the parent run's queue */
  SubagentSession *resume;          /* a follow-up of this session (run id = its id) */
  SubagentIsolationContext *reuse;  /* ...in this kept workspace */
  gboolean count_as_agent;          /* counts against max-agents (follow-ups do not) */
  gboolean in_batch;                /* the child is item @batch_index of a batch... */
  gint batch_index;                 /* ...whatever the options say (they are the item's) */
  SubagentJobEndedFunc ended;       /* the job's own observer (data taken only when the job is made) */
  gpointer ended_data;
  GDestroyNotify ended_destroy;
} SubagentSpawnExtras;

/* subagent-supervisor-wait.c: one caller waiting for a child. */
typedef struct _SubagentWaiter SubagentWaiter;
void _subagent_waiter_unref    (SubagentWaiter    *waiter) G_GNUC_INTERNAL;
/* Returns @result (or @error) to the waiter, unless it was cancelled. */
void _subagent_waiter_complete (SubagentWaiter    *waiter,
                                SubagentRunResult *result,
                                const GError      *error) G_GNUC_INTERNAL;

/* subagent-supervisor-jobs.c */
GError *_subagent_job_abandoned_error (SubagentJob *job) G_GNUC_INTERNAL;
SubagentJob *_subagent_job_ref   (SubagentJob *job) G_GNUC_INTERNAL;
void         _subagent_job_unref (SubagentJob *job) G_GNUC_INTERNAL;
void         _subagent_action_free (SubagentAction *action) G_GNUC_INTERNAL;

char *_subagent_supervisor_spawn_full (SubagentSupervisor         *self,
                                       const char                 *task,
                                       SubagentRunOptions         *options,
                                       const SubagentSpawnExtras  *extras,
                                       GError                    **error) G_GNUC_INTERNAL;
void  _subagent_supervisor_add_waiter (SubagentSupervisor  *self,
                                       const char          *run_id,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data) G_GNUC_INTERNAL;
SubagentCancelOutcome _subagent_supervisor_cancel (SubagentSupervisor  *self,
                                                   const char          *run_id,
                                                   SubagentCancelCause  cause) G_GNUC_INTERNAL;
/* With @close, also refuses new children from now on (shutdown). */
guint _subagent_supervisor_cancel_all (SubagentSupervisor  *self,
                                       SubagentCancelCause  cause,
                                       gboolean             close) G_GNUC_INTERNAL;

double _subagent_supervisor_spent_locked (SubagentSupervisor *self,
                                          const char         *parent_run_id) G_GNUC_INTERNAL;

/* Queues an action (lock held) / an event of @job with @details (the
 * caller's fresh object, or NULL) / runs the queued actions in the
 * supervisor's context (lock not held). */
void _subagent_supervisor_push_locked (SubagentSupervisor *self,
                                       SubagentActionKind  kind,
                                       SubagentJob        *job) G_GNUC_INTERNAL;
void _subagent_supervisor_push_event_locked (SubagentSupervisor *self,
                                             SubagentJob        *job,
                                             SubagentEventKind   kind,
                                             JsonObject         *details) G_GNUC_INTERNAL;
void _subagent_supervisor_kick        (SubagentSupervisor *self) G_GNUC_INTERNAL;
/* Writes the event lines held back in this round (see
 * _subagent_events_writer_begin_held()): before a result or an event
 * leaves the supervisor. */
void _subagent_supervisor_write_held_events (SubagentSupervisor *self) G_GNUC_INTERNAL;
/* For a spawn the outstanding cap refuses or refused: calls @func (@data)
 * in the supervisor's context when a child next ends, and then @destroy.
 * Returns FALSE, having called @destroy at once, when the cap has room (a
 * child ended since the refusal) or the supervisor is closed: spawn now. */
gboolean _subagent_supervisor_wait_for_slot (SubagentSupervisor *self,
                                             GFunc               func,
                                             gpointer            data,
                                             GDestroyNotify      destroy) G_GNUC_INTERNAL;
/* Drops the spawns still waiting for a slot (dispose). */
void _subagent_supervisor_clear_slot_waiters (SubagentSupervisor *self) G_GNUC_INTERNAL;
SubagentEvent *_subagent_event_new_take (SubagentEventKind  kind,
                                         const char        *run_id,
                                         const char        *parent_run_id,
                                         const char        *def_name,
                                         guint              depth,
                                         gint               batch_index,
                                         JsonObject        *details,
                                         GDateTime         *time) G_GNUC_INTERNAL;
/* Appends members to a line, each with its leading comma. */
typedef void (*SubagentLineMembersFunc) (GString *out,
                                         gpointer data);
/* An event's line from its parts: `{"event":…,"time":…`, then @shared
 * (what every event of one child has, from
 * _subagent_event_line_append_shared()), the @details, what @members
 * appends (either may be NULL), @last (NULL, or what a supervisor's
 * made event has last in its details, from
 * _subagent_event_line_append_last()), and `}` and the newline. */
void           _subagent_event_line_append_shared (GString    *out,
                                                   const char *run_id,
                                                   const char *parent_run_id,
                                                   const char *def_name,
                                                   guint       depth,
                                                   gint        batch_index) G_GNUC_INTERNAL;
void           _subagent_event_line_append_last   (GString    *out,
                                                   GDateTime  *accepted_at,
                                                   guint       follow_up) G_GNUC_INTERNAL;
void           _subagent_event_line_append (GString                 *out,
                                            SubagentEventKind        kind,
                                            GDateTime               *time,
                                            const GString           *shared,
                                            JsonObject              *details,
                                            SubagentLineMembersFunc  members,
                                            gpointer                 members_data,
                                            const GString           *last) G_GNUC_INTERNAL;
void           _subagent_events_writer_write_line (SubagentEventsWriter *self,
                                                   const char           *line) G_GNUC_INTERNAL;
/* Lines held back to go out in one write: begin returns the buffer to
 * append whole lines to, locked until end; write_held writes them (the
 * writer's other writes and its flush write them first). */
GString       *_subagent_events_writer_begin_held (SubagentEventsWriter *self) G_GNUC_INTERNAL;
void           _subagent_events_writer_end_held   (SubagentEventsWriter *self) G_GNUC_INTERNAL;
void           _subagent_events_writer_write_held (SubagentEventsWriter *self) G_GNUC_INTERNAL;

/* Blocks until the child ends; iterates the supervisor's main context when
 * the calling thread owns it (or can), else waits on a private one.
 * @cancellable ends the wait, never the child. */
SubagentRunResult *_subagent_supervisor_wait_sync (SubagentSupervisor  *self,
                                                   const char          *run_id,
                                                   GCancellable        *cancellable,
                                                   GError             **error) G_GNUC_INTERNAL;
/* Iterates the supervisor's context (or waits) until *done. */
void _subagent_supervisor_block_until (SubagentSupervisor *self,
                                       gboolean           *done) G_GNUC_INTERNAL;

/* How many more children @parent_run_id may start (G_MAXUINT: no cap). */
guint _subagent_supervisor_agents_left (SubagentSupervisor *self,
                                        const char         *parent_run_id) G_GNUC_INTERNAL;

/* Kept workspaces: take one out for a follow-up, look, dispose of all. */
SubagentIsolationContext *_subagent_supervisor_take_kept    (SubagentSupervisor *self,
                                                             const char         *run_id) G_GNUC_INTERNAL;
char                     *_subagent_supervisor_dup_kept_root (SubagentSupervisor *self,
                                                              const char         *run_id) G_GNUC_INTERNAL;
void                      _subagent_supervisor_dispose_kept (SubagentSupervisor *self) G_GNUC_INTERNAL;

/* The centralized approval queue of @parent_run_id (NULL: unattended). */
SubagentApprovalQueue *_subagent_supervisor_get_approval_queue (SubagentSupervisor  *self,
                                                                const char          *parent_run_id) G_GNUC_INTERNAL;
void                   _subagent_supervisor_disconnect_queues  (SubagentSupervisor  *self) G_GNUC_INTERNAL;
/* Listens to the approval events of @parent_run_id's queue, if it exists. */
void                   _subagent_supervisor_watch_approvals    (SubagentSupervisor  *self,
                                                                const char          *parent_run_id) G_GNUC_INTERNAL;

/* subagent-supervisor-results.c: a finished @job's result stays in memory
 * among the latest (lock held); a follow-up replaces @job (lock held);
 * whether a child whose job left memory has a record (no I/O); its result,
 * from that record (a blocking read; NULL when unknown). */
void _subagent_supervisor_keep_result_locked   (SubagentSupervisor *self,
                                                SubagentJob        *job) G_GNUC_INTERNAL;
void _subagent_supervisor_forget_result_locked (SubagentSupervisor *self,
                                                SubagentJob        *job) G_GNUC_INTERNAL;
gboolean _subagent_supervisor_has_dropped_result (SubagentSupervisor *self,
                                                  const char         *run_id) G_GNUC_INTERNAL;
SubagentRunResult *_subagent_supervisor_read_back_result (SubagentSupervisor *self,
                                                          const char         *run_id) G_GNUC_INTERNAL;

/* subagent-shutdown.c: called (lock held) when the last child stopped. */
void _subagent_supervisor_shutdown_done (SubagentSupervisor *self) G_GNUC_INTERNAL;

/* A copy of @options (or new options) that a job may change. */
SubagentRunOptions *_subagent_run_options_copy (SubagentRunOptions *options) G_GNUC_INTERNAL;

G_END_DECLS
