/* approval-pg-store.h: the approval queues of a PostgreSQL database.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

/* The version of the tables this plugin creates and reads. */
#define APG_SCHEMA_VERSION 2

/* Called (in the caller's thread) when a run's rows do not verify; the
 * store then treats the run as holding nothing. */
typedef void (*ApgIntegrityFunc) (const char   *run_id,
                                  const GError *error,
                                  gpointer      user_data);

typedef struct _ApgStore ApgStore;

/* The store in @schema (validated: [A-Za-z_][A-Za-z0-9_]*) of the database
 * @conninfo names, signing with @key if non-NULL, with at most
 * @max_connections connections for its operations. Every function may be
 * called from any thread. Nothing connects before the first operation. */
ApgStore   *apg_store_new           (const char       *conninfo,
                                     const char       *schema,
                                     GBytes           *key,
                                     guint             max_connections,
                                     ApgIntegrityFunc  report,
                                     gpointer          report_data);
void        apg_store_free          (ApgStore         *self);
const char *apg_store_get_conninfo  (ApgStore         *self);
/* The NOTIFY channel of the schema; the payload is the run id. */
const char *apg_store_get_channel   (ApgStore         *self);

/* The SubagentApprovalSink methods, with the semantics documented there. */
GPtrArray  *apg_store_load          (ApgStore                *self,
                                     const char              *parent_run_id,
                                     GError                 **error);
gboolean    apg_store_save          (ApgStore                *self,
                                     const char              *parent_run_id,
                                     GPtrArray               *requests,
                                     GError                 **error);
gboolean    apg_store_update_status (ApgStore                *self,
                                     const char              *parent_run_id,
                                     const char              *request_id,
                                     SubagentApprovalStatus   status,
                                     const char              *reason,
                                     const char              *actor,
                                     GError                 **error);
guint       apg_store_prune         (ApgStore                *self,
                                     GTimeSpan                max_age,
                                     GError                 **error);
GStrv       apg_store_list_runs     (ApgStore                *self,
                                     GError                 **error);

/* Whether @schema is a name the store accepts. */
gboolean    apg_schema_name_is_valid (const char *schema);

G_END_DECLS
