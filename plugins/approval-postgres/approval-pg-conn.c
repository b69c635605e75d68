/* approval-pg-conn.c: connections to the approval-postgres server.
 *
 * A sink keeps a few connections for its operations (any thread takes one,
 * runs its statement and gives it back) and one more per watching main
 * context for LISTEN (approval-pg-watch.c). A server that goes away
 * (restart, network) is retried with exponential backoff; every operation
 * of the store is written so that running it again after a lost reply is
 * safe (approval-pg-store.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "approval-pg-conn.h"

static void
conn_free (ApgConn *conn)
{
  PQfinish (conn->pg);
  g_free (conn);
}

static void
ignore_notice (void       *arg,
               const char *message)
{
  /* "relation … already exists, skipping" and the like: not for stderr. */
  g_debug ("PostgreSQL: %s", message);
}

/* Where we talk to, for messages: never the password. */
static char *
describe_server (PGconn *conn)
{
  const char *host = PQhost (conn);
  const char *port = PQport (conn);
  const char *db = PQdb (conn);

  return g_strdup_printf ("%s%s%s, database %s", host && *host ? host : "(default host)",
                          port && *port ? ":" : "", port && *port ? port : "", db && *db ? db : "(default)");
}

PGconn *
apg_connect (const char  *conninfo,
             GError     **error)
{
  /* connect_timeout first: a value in @conninfo wins over it. */
  const char *keywords[] = { "connect_timeout", "application_name", "dbname", NULL };
  const char *values[] = { "10", "subagent-approvals", conninfo, NULL };
  PGconn *conn = PQconnectdbParams (keywords, values, 1);

  if (conn == NULL)
    {
      g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                           "Cannot connect to the approvals database: out of memory");
      return NULL;
    }
  if (PQstatus (conn) != CONNECTION_OK)
    {
      g_autofree char *server = describe_server (conn);
      g_autofree char *message = g_strchomp (g_strdup (PQerrorMessage (conn)));

      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                   "Cannot connect to the approvals database (%s): %s", server, message);
      PQfinish (conn);
      return NULL;
    }
  PQsetNoticeProcessor (conn, ignore_notice, NULL);
  return conn;
}

gboolean
apg_connection_lost (PGconn         *conn,
                     const PGresult *result)
{
  const char *state;

  if (PQstatus (conn) != CONNECTION_OK)
    return TRUE;
  if (result == NULL)
    return TRUE;
  state = PQresultErrorField (result, PG_DIAG_SQLSTATE);
  /* 08: connection exceptions; 57P01-57P03: shutdown, crash, starting up. */
  return state != NULL && (g_str_has_prefix (state, "08") || g_str_has_prefix (state, "57P"));
}

void
apg_set_error (GError        **error,
               PGconn         *conn,
               const PGresult *result,
               const char     *what)
{
  const char *message = result ? PQresultErrorMessage (result) : NULL;
  g_autofree char *text = g_strdup (message && *message ? message : PQerrorMessage (conn));

  g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
               "%s failed on the approvals database: %s", what, g_strchomp (text));
}

gint64
apg_backoff_next (gint64 delay_us)
{
  return MIN (delay_us * 2, APG_BACKOFF_MAX_US);
}

struct _ApgPool
{
  char *conninfo;
  guint max;
  GMutex mutex;
  GCond cond;
  GQueue idle;             /* ApgConn* */
  guint open;              /* idle + in use + being connected */
  gboolean reached;        /* a connection was made once */
};

ApgPool *
apg_pool_new (const char *conninfo,
              guint       max_connections)
{
  ApgPool *self = g_new0 (ApgPool, 1);

  self->conninfo = g_strdup (conninfo);
  self->max = MAX (max_connections, 1);
  g_mutex_init (&self->mutex);
  g_cond_init (&self->cond);
  g_queue_init (&self->idle);
  return self;
}

void
apg_pool_free (ApgPool *self)
{
  ApgConn *conn;

  while ((conn = g_queue_pop_head (&self->idle)) != NULL)
    conn_free (conn);
  g_cond_clear (&self->cond);
  g_mutex_clear (&self->mutex);
  /* Scrubbed: it may hold a password. */
  memset (self->conninfo, 0, strlen (self->conninfo));
  g_free (self->conninfo);
  g_free (self);
}

ApgConn *
apg_pool_acquire (ApgPool  *self,
                  GError  **error)
{
  gint64 deadline = g_get_monotonic_time () + APG_RECONNECT_DEADLINE_US;
  gint64 delay = APG_BACKOFF_FIRST_US;

  for (;;)
    {
      g_autoptr(GError) local_error = NULL;
      ApgConn *conn = NULL;
      PGconn *pg;

      g_mutex_lock (&self->mutex);
      while (self->idle.length == 0 && self->open >= self->max)
        g_cond_wait (&self->cond, &self->mutex);
      conn = g_queue_pop_head (&self->idle);
      if (conn == NULL)
        self->open++;
      g_mutex_unlock (&self->mutex);

      if (conn != NULL && PQstatus (conn->pg) == CONNECTION_OK)
        return conn;
      if (conn != NULL)
        conn_free (conn);

      /* Connect outside the lock: the others keep using theirs. */
      pg = apg_connect (self->conninfo, &local_error);
      if (pg != NULL)
        {
          g_atomic_int_set (&self->reached, TRUE);
          conn = g_new0 (ApgConn, 1);
          conn->pg = pg;
          return conn;
        }

      apg_pool_release (self, NULL, TRUE);
      /* A server never reached is a mistake to report at once; one that
       * answered before is waited for (a restart, a network blip). */
      if (!g_atomic_int_get (&self->reached) || g_get_monotonic_time () + delay > deadline)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
      g_usleep (delay);
      delay = apg_backoff_next (delay);
    }
}

void
apg_pool_release (ApgPool  *self,
                  ApgConn  *conn,
                  gboolean  broken)
{
  g_mutex_lock (&self->mutex);
  if (conn != NULL && !broken && PQstatus (conn->pg) == CONNECTION_OK
      && PQtransactionStatus (conn->pg) == PQTRANS_IDLE)
    g_queue_push_head (&self->idle, conn);
  else
    {
      if (conn != NULL)
        conn_free (conn);
      self->open--;
    }
  g_cond_signal (&self->cond);
  g_mutex_unlock (&self->mutex);
}
