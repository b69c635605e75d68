/* approval-pg-store-private.h: what the store's files share (the store
 * itself, its statements, cache and reads in approval-pg-store.c, saves in
 * approval-pg-save.c, verdicts in approval-pg-decide.c, listing and
 * pruning in approval-pg-prune.c). Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "approval-pg-combine.h"
#include "approval-pg-conn.h"
#include "approval-pg-store.h"

G_BEGIN_DECLS

/* The statements the store runs; prepared once per connection, so the
 * server parses, analyses and plans each only once per connection. */
typedef enum {
  SQL_LOAD,
  SQL_SAVE,
  SQL_READ_ONE,
  SQL_DECIDE,
  SQL_READ_MANY,
  SQL_DECIDE_MANY,
  SQL_LIST,
  SQL_PRUNABLE,
  SQL_PRUNE,
  N_SQL
} Sql;

/* A row of a run as the store last read or wrote it (approval-pg-store.c);
 * reference counted. */
typedef struct _CachedRow CachedRow;

struct _ApgStore
{
  char *schema;
  char *channel;
  GBytes *key;             /* nullable */
  ApgIntegrityFunc report;
  gpointer report_data;
  ApgPool *pool;
  char *conninfo;
  GMutex mutex;
  gboolean schema_ready;   /* guarded by mutex */
  GHashTable *cache;       /* run id → CachedRun; guarded by mutex */
  /* The statements, with the schema in them, prepared on each connection
   * the first time it runs them (a bit of ApgConn.prepared each). */
  char *sql[N_SQL];
  /* Group commit of the calls made at once from several threads. */
  ApgCombiner *saves;
  ApgCombiner *verdicts;
};

/* The outcome of one attempt of an operation on one connection. */
typedef enum {
  STEP_DONE,
  STEP_FAILED,
  STEP_LOST,               /* the connection went: try again on a new one */
  STEP_RETRY,              /* the server undid the statement to break a deadlock
                            * or a serialization conflict: the whole operation
                            * again (each statement commits alone) */
} Step;

typedef Step (*StoreOp) (ApgStore  *self,
                         ApgConn   *conn,
                         gpointer   data,
                         GError   **error);

/* approval-pg-store.c */
PGresult   *apg_store_exec             (ApgStore           *self,
                                        ApgConn            *conn,
                                        Sql                 which,
                                        const char * const *params,
                                        const char         *what,
                                        Step               *step,
                                        GError            **error);
gboolean    apg_store_run_op           (ApgStore           *self,
                                        StoreOp             op,
                                        gpointer            data,
                                        GError            **error);
void        apg_store_report_integrity (ApgStore           *self,
                                        const char         *run_id,
                                        const GError       *error);
SubagentApprovalRequest *apg_store_verify_row (ApgStore    *self,
                                               const char  *run_id,
                                               const char  *request_id,
                                               const char  *status,
                                               const char  *document,
                                               const char  *signature,
                                               GError     **error);
void        apg_cached_row_release     (gpointer            data);
CachedRow  *apg_own_row_new            (PGresult                *result,
                                        int                      r,
                                        SubagentApprovalRequest *request);
void        apg_store_cache_merge_own  (ApgStore           *self,
                                        const char         *run_id,
                                        GHashTable         *rows);
void        apg_store_cache_forget_run (ApgStore           *self,
                                        const char         *run_id);
SubagentApprovalRequest *apg_store_cached_pending (ApgStore    *self,
                                                   const char  *run_id,
                                                   const char  *request_id,
                                                   char       **version);
char       *apg_store_sign_document    (ApgStore           *self,
                                        JsonNode           *document);
GPtrArray  *apg_store_read_run         (ApgStore           *self,
                                        const char         *run_id,
                                        GError            **error);

/* approval-pg-save.c: the saves' group commit (ApgCombineFunc and
 * ApgSameGroupFunc of ApgStore.saves). */
void        apg_store_save_queued        (GPtrArray             *calls,
                                          gpointer               user_data);
gboolean    apg_store_same_save_group    (const ApgCombinedCall *a,
                                          const ApgCombinedCall *b);

/* approval-pg-decide.c: the verdicts' group commit (ApgStore.verdicts). */
void        apg_store_decide_queued      (GPtrArray             *calls,
                                          gpointer               user_data);
gboolean    apg_store_same_verdict_group (const ApgCombinedCall *a,
                                          const ApgCombinedCall *b);

G_END_DECLS
