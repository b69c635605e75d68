/* subagent-manager-private.h: what the manager's files share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"
#include "subagent-confinement-cache-private.h"
#include "subagent-records-private.h"

G_BEGIN_DECLS

struct _SubagentManager
{
  GObject parent_instance;

  char *root;
  char *run_id;
  SubagentConfig *config;
  SubagentCatalog *catalog;
  SubagentPluginRegistry *plugins;
  GStrv secret_files;     /* hidden from every child; config and plugins are fixed */
  SubagentAuditLog *audit;
  SubagentConfinementCache *confinement_cache;  /* Landlock rulesets of its children */
  SubagentToolRegistry *tools;
  SubagentRunner *runner;
  SubagentRunner *command_runner;  /* the built-in one, for `runner: command` */
  gboolean runner_is_default;      /* the host set no runner of its own */
  GHashTable *plugin_runners;      /* backend name → SubagentRunner, made on first use */
  SubagentPermissionMode permission_mode;

  GMutex lock;
  GHashTable *sessions;  /* run id → SubagentKeptSession*, those kept in memory */
  GQueue sessions_logged;  /* SubagentLoggedSession* of those also in session_log, oldest first */
  guint sessions_in_memory;  /* how many of those stay in memory */
  GHashTable *sessions_on_disk;  /* run id → SubagentLoggedSession*, of those that left memory */
  GHashTable *providers; /* backend → SubagentIsolationProvider, configured for root */
  SubagentSessionLog *session_log;  /* `sessions/<run_id>.jsonl`, made on first use */

  /* Approvals (subagent-manager-approvals.c), guarded by approval_lock. */
  GMutex approval_lock;
  SubagentApprovalQueue *approval_queue;  /* the host's, or made on first need */
  SubagentApprovalSink *approval_sink;    /* the host's; NULL: config.yaml's */
  gboolean approval_queue_owned;          /* made here: released at finalize */
  gboolean approvals_unattended;
  GError *approval_error;                 /* why the configured sink could not be set up */
};

char *_subagent_manager_new_run_id (void) G_GNUC_INTERNAL;

/* A session record in session_log, and where it is in the file. */
typedef struct {
  char *run_id;
  SubagentSessionSpan span;
} SubagentLoggedSession;

void _subagent_logged_session_free (SubagentLoggedSession *logged) G_GNUC_INTERNAL;

/* A session record kept in memory: its line, and the session made of it
 * once someone asked (a child's record is written from its run, and most
 * are never asked for). */
typedef struct {
  GBytes *line;              /* until the session is made of it */
  SubagentSession *session;  /* NULL until asked for */
} SubagentKeptSession;

void _subagent_kept_session_free (SubagentKeptSession *kept) G_GNUC_INTERNAL;

/* Keeps the record @line holds (transfer full, no newline), @logged (its
 * place) when it is in session_log: the oldest logged ones leave memory
 * past sessions_in_memory, and are read back from their place when asked
 * for; one whose record could not be written (@logged NULL) never leaves.
 * Called with the lock held. */
void _subagent_manager_keep_session_locked (SubagentManager           *self,
                                            const char                *run_id,
                                            GBytes                    *line,
                                            const SubagentSessionSpan *logged) G_GNUC_INTERNAL;

/* Whether this manager keeps a session record of @run_id, in memory or in
 * its log: subagent_manager_get_session() without reading it. */
gboolean _subagent_manager_has_session (SubagentManager *self,
                                        const char      *run_id) G_GNUC_INTERNAL;

/* The queue a child's requests go to, if one is at hand without any I/O (the
 * host's, or made for an earlier run). *must_make is set when none is at
 * hand yet but this child could ask (see docs/approvals.md, "Routing"). */
SubagentApprovalQueue *_subagent_manager_peek_approval_queue (SubagentManager        *self,
                                                              SubagentPermissionMode  mode,
                                                              const char             *isolation,
                                                              SubagentRunner         *runner,
                                                              gboolean               *must_make) G_GNUC_INTERNAL;
/* Makes the parent run's queue from the sink (loading a plugin and reading
 * the store: blocking). NULL without an error when children are unattended. */
SubagentApprovalQueue *_subagent_manager_make_approval_queue (SubagentManager  *self,
                                                              GError          **error) G_GNUC_INTERNAL;
/* The same in a worker thread. */
void                   _subagent_manager_make_approval_queue_async  (SubagentManager      *self,
                                                                     GAsyncReadyCallback   callback,
                                                                     gpointer              user_data) G_GNUC_INTERNAL;
SubagentApprovalQueue *_subagent_manager_make_approval_queue_finish (SubagentManager      *self,
                                                                     GAsyncResult         *result,
                                                                     GError              **error) G_GNUC_INTERNAL;
/* Forgets the queue made here (not one the host gave). */
void                   _subagent_manager_drop_approval_queue (SubagentManager *self) G_GNUC_INTERNAL;

/* What a SubagentSupervisor adds to one run (all optional). The caller
 * keeps @hooks alive until the run's callback; the out fields are written
 * before it is called. A run with hooks keeps a reference to its options
 * instead of a copy: the supervisor passes its job's own, which it never
 * changes. */
typedef struct {
  /* in */
  const char *run_id;                      /* the child's run id; NULL: a new one */
  double max_cost_cents;                   /* > 0: caps the definition's budget */
  SubagentApprovalQueue *approval_queue;   /* routes the child's approvals here */
  gboolean keep_workspace;                 /* leave the workspace for follow-ups */
  SubagentIsolationContext *reuse_context; /* run in this kept workspace, no prepare */
  SubagentSession *resume;                 /* a follow-up of this session */
  /* the child's running totals, from the runner's thread */
  void (*usage_func) (gpointer data, guint iterations, guint tool_calls, double cost_cents);
  gpointer usage_data;
  /* out */
  char *workspace_root;                    /* the child root, once prepared */
  gboolean workspace_disposed;             /* a workspace apart from the root was cleaned up */
  SubagentIsolationContext *kept_context;  /* the workspace kept for follow-ups */
} SubagentRunHooks;

/* The provider of a backend: the plugin config.yaml pins for it, or
 * whichever plugin provides it (may load a module). */
SubagentIsolationProvider *_subagent_manager_isolation_provider_for (SubagentManager  *self,
                                                                     const char       *backend,
                                                                     GError          **error) G_GNUC_INTERNAL;

/* subagent-manager-routing.c: the risk policy's choice for @level: the
 * first backend of its list that is installed and available. *out_note
 * says which and why ("medium risk: docker unavailable (…), used
 * directory-snapshot"). Blocks (loads plugins, asks engines). NULL with
 * @error when none is (or, strict, when the first is not). */
char *_subagent_manager_route (SubagentManager    *self,
                               SubagentRiskLevel   level,
                               char              **out_note,
                               GError            **error) G_GNUC_INTERNAL;

/* The run's skill (loaded from options' skill path, refused outside the
 * root) and its risk: the caller's, else the skill's, else medium for a
 * skill that names none. */
gboolean _subagent_manager_resolve_skill (SubagentManager     *self,
                                          SubagentRunOptions  *options,
                                          SubagentSkill      **out_skill,
                                          SubagentRiskLevel   *out_risk,
                                          GError             **error) G_GNUC_INTERNAL;

/* _subagent_manager_route() in a worker thread. */
void  _subagent_manager_route_async  (SubagentManager     *self,
                                      SubagentRiskLevel    level,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data) G_GNUC_INTERNAL;
char *_subagent_manager_route_finish (SubagentManager     *self,
                                      GAsyncResult        *result,
                                      char               **out_note,
                                      GError             **error) G_GNUC_INTERNAL;

/* Applies the routed @level's limits to a run on @backend, as ceilings
 * (what the run asked for stays when tighter); the policy's pids, network
 * and confinement go into @isolation_options only when @backend's plugin
 * declares those options. Returns the level's permission ceiling. */
SubagentPermissionMode _subagent_manager_apply_risk_limits (SubagentManager    *self,
                                                            const char         *backend,
                                                            SubagentRiskLevel   level,
                                                            double             *cpu_quota,
                                                            char              **memory_limit,
                                                            JsonObject         *isolation_options) G_GNUC_INTERNAL;

/* Whether docker-notation memory limit @a ("512m") is below @b; an
 * unparsable one counts as no limit. */
gboolean _subagent_memory_limit_is_below (const char *a,
                                          const char *b) G_GNUC_INTERNAL;

void _subagent_manager_run_hooked_async (SubagentManager     *self,
                                         const char          *task,
                                         SubagentRunOptions  *options,
                                         SubagentRunHooks    *hooks,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data) G_GNUC_INTERNAL;

/* The values of the `secret-file` options set in config.yaml, absolute:
 * worked out once, by the manager's init, into its secret_files. */
GStrv _subagent_manager_secret_files (SubagentManager *self) G_GNUC_INTERNAL;

G_END_DECLS
