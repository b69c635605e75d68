/* approval-pg-conn.h: connections to the approval-postgres server.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libpq-fe.h>
#include <subagent.h>

G_BEGIN_DECLS

/* How long an operation keeps reconnecting (with backoff) to a server that
 * went away before it fails: long enough for a server restart. */
#define APG_RECONNECT_DEADLINE_US (60 * G_USEC_PER_SEC)
#define APG_BACKOFF_FIRST_US (10 * 1000)
#define APG_BACKOFF_MAX_US (G_USEC_PER_SEC)

/* Opens a blocking connection from @conninfo (a libpq connection string or
 * URI; libpq's PG* variables fill in what it leaves out). The error names
 * the server (host, port, database), never the password. */
PGconn   *apg_connect         (const char  *conninfo,
                               GError     **error);

/* Whether a failed statement failed because the connection is gone (or the
 * server is shutting down or starting): worth a retry on a new one. */
gboolean  apg_connection_lost (PGconn         *conn,
                               const PGresult *result);

/* Sets @error from a failed @result (or the connection's message). */
void      apg_set_error       (GError        **error,
                               PGconn         *conn,
                               const PGresult *result,
                               const char     *what);

/* The next backoff delay after @delay_us. */
gint64    apg_backoff_next    (gint64 delay_us);

/* A small pool of connections shared by every thread of a sink. */
typedef struct _ApgPool ApgPool;

/* A pooled connection and what its user keeps about it. */
typedef struct {
  PGconn *pg;
  guint64 prepared;        /* the user's: which statements are prepared on it */
} ApgConn;

ApgPool  *apg_pool_new        (const char  *conninfo,
                               guint        max_connections);
void      apg_pool_free       (ApgPool     *self);
/* A connection in state CONNECTION_OK, or NULL with @error: at once when
 * the server was never reached, else once it could not be reached again
 * before APG_RECONNECT_DEADLINE_US. A new connection has @prepared 0. */
ApgConn  *apg_pool_acquire    (ApgPool     *self,
                               GError     **error);
/* Gives @conn back; a @broken one is closed instead. */
void      apg_pool_release    (ApgPool     *self,
                               ApgConn     *conn,
                               gboolean     broken);

G_END_DECLS
