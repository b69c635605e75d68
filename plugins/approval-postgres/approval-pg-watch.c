/* approval-pg-watch.c: "changed" for approval-postgres, from LISTEN/NOTIFY.
 *
 * Each main context that watches has its own connection that LISTENs on the
 * schema's channel, and one GSource in that context that polls the
 * connection's socket (PQsocket): a verdict committed by any host wakes
 * the watcher within a round trip, with no polling. The NOTIFY payload is
 * the run id; only watched runs are reported.
 *
 * Notifications sent while the connection is down are lost. So when it
 * breaks, the same source retries the connection with exponential backoff
 * (a ready time, not a thread), and once it LISTENs again emits "changed"
 * for every run it watches: the queues reload and miss nothing.
 *
 * A context that stops watching its last run leaves its connection to the
 * next context that starts (UNLISTENed meanwhile, so the server queues
 * nothing for it): a queue per run, made and dropped run after run, does
 * not cost a new server process each time (about 5 ms of the server's CPU
 * here).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "approval-pg-conn.h"
#include "approval-pg-watch.h"

typedef struct {
  GSource source;
  ApgWatchSet *set;
  GWeakRef sink;
  GMainContext *context;
  PGconn *conn;            /* NULL while reconnecting */
  gpointer fd_tag;
  gint64 backoff;
  gboolean reload;         /* emit "changed" for every run once connected */
  GHashTable *runs;        /* run id → number of watches; guarded by set->mutex */
} Listener;

struct _ApgWatchSet
{
  SubagentApprovalSink *sink;
  char *conninfo;
  char *channel;
  GMutex mutex;
  GPtrArray *listeners;    /* Listener*, each a GSource reference; guarded by mutex */
  PGconn *spare;           /* connected, listening to nothing; guarded by mutex */
};

/* Runs @sql on @conn, which it closes on failure. */
static gboolean
run_or_close (PGconn      *conn,
              const char  *sql,
              const char  *what,
              GError     **error)
{
  PGresult *result = PQexec (conn, sql);

  if (PQresultStatus (result) != PGRES_COMMAND_OK)
    {
      apg_set_error (error, conn, result, what);
      PQclear (result);
      PQfinish (conn);
      return FALSE;
    }
  PQclear (result);
  return TRUE;
}

/* LISTENs on @channel; closes @conn on failure. */
static gboolean
listen_on (PGconn      *conn,
           const char  *channel,
           GError     **error)
{
  g_autofree char *quoted = PQescapeIdentifier (conn, channel, strlen (channel));
  g_autofree char *sql = NULL;

  if (quoted == NULL)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE, "LISTEN: %s", PQerrorMessage (conn));
      PQfinish (conn);
      return FALSE;
    }
  sql = g_strconcat ("LISTEN ", quoted, NULL);
  return run_or_close (conn, sql, "LISTEN", error);
}

/* Drops the notifications @conn has received. */
static void
drain_notifies (PGconn *conn)
{
  for (PGnotify *notify; (notify = PQnotifies (conn)) != NULL;)
    PQfreemem (notify);
}

/* The spare connection, if it still answers; @locked: whether the caller
 * holds the set's mutex. */
static PGconn *
take_spare (ApgWatchSet *set,
            gboolean     locked)
{
  PGconn *conn;

  if (!locked)
    g_mutex_lock (&set->mutex);
  conn = g_steal_pointer (&set->spare);
  if (!locked)
    g_mutex_unlock (&set->mutex);
  if (conn == NULL)
    return NULL;
  /* A server that restarted meanwhile closed it: reading finds that. */
  if (!PQconsumeInput (conn) || PQstatus (conn) != CONNECTION_OK)
    {
      g_clear_pointer (&conn, PQfinish);
      return NULL;
    }
  drain_notifies (conn);
  return conn;
}

/* Connects (or takes the spare connection) and LISTENs; on failure leaves
 * listener->conn NULL and returns the error. @locked: whether the caller
 * holds the set's mutex. */
static gboolean
listener_connect (Listener  *listener,
                  gboolean   locked,
                  GError   **error)
{
  ApgWatchSet *set = listener->set;
  PGconn *conn = take_spare (set, locked);

  /* A spare whose server went away may look fine until it is used: its
   * LISTEN failing only means a new connection is needed. */
  if (conn != NULL && !listen_on (conn, set->channel, NULL))
    conn = NULL;
  if (conn == NULL)
    {
      if ((conn = apg_connect (set->conninfo, error)) == NULL || !listen_on (conn, set->channel, error))
        return FALSE;
    }
  /* The socket is read without blocking; a notify is read whole or later. */
  PQsetnonblocking (conn, 1);
  listener->conn = conn;
  listener->fd_tag = g_source_add_unix_fd (&listener->source, PQsocket (conn), G_IO_IN | G_IO_HUP | G_IO_ERR);
  listener->backoff = APG_BACKOFF_FIRST_US;
  g_source_set_ready_time (&listener->source, -1);
  return TRUE;
}

/* Keeps the connection of a listener that goes as the set's spare. Called
 * with the set's mutex held. */
static void
listener_park (Listener *listener)
{
  ApgWatchSet *set = listener->set;
  g_autoptr(GError) error = NULL;
  PGconn *conn;

  if (listener->conn == NULL)
    return;
  g_source_remove_unix_fd (&listener->source, listener->fd_tag);
  listener->fd_tag = NULL;
  conn = g_steal_pointer (&listener->conn);
  if (!run_or_close (conn, "UNLISTEN *", "UNLISTEN", &error))
    return;
  drain_notifies (conn);
  if (set->spare != NULL)
    PQfinish (set->spare);
  set->spare = conn;
}

static void
listener_disconnect (Listener *listener)
{
  if (listener->fd_tag != NULL)
    g_source_remove_unix_fd (&listener->source, listener->fd_tag);
  listener->fd_tag = NULL;
  g_clear_pointer (&listener->conn, PQfinish);
}

static void
schedule_reconnect (Listener *listener)
{
  g_source_set_ready_time (&listener->source, g_get_monotonic_time () + listener->backoff);
  listener->backoff = apg_backoff_next (listener->backoff);
  listener->reload = TRUE;
}

static void
add_changed (GPtrArray  *changed,
             const char *run)
{
  if (!g_ptr_array_find_with_equal_func (changed, run, g_str_equal, NULL))
    g_ptr_array_add (changed, g_strdup (run));
}

static void
add_all_runs (Listener  *listener,
              GPtrArray *changed)
{
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, listener->runs);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    add_changed (changed, key);
}

static gboolean
listener_dispatch (GSource     *source,
                   GSourceFunc  callback,
                   gpointer     user_data)
{
  Listener *listener = (Listener *) source;
  g_autoptr(SubagentApprovalSink) sink = g_weak_ref_get (&listener->sink);
  g_autoptr(GPtrArray) changed = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;

  /* Holding the sink keeps it, and so the set, from being disposed. */
  if (sink == NULL)
    return G_SOURCE_REMOVE;

  if (listener->conn == NULL)
    {
      if (g_source_get_ready_time (source) > g_get_monotonic_time ())
        return G_SOURCE_CONTINUE;
      if (!listener_connect (listener, FALSE, &error))
        {
          g_debug ("Approvals: LISTEN connection still down: %s", error->message);
          schedule_reconnect (listener);
          return G_SOURCE_CONTINUE;
        }
    }
  else if (!PQconsumeInput (listener->conn) || PQstatus (listener->conn) != CONNECTION_OK)
    {
      g_debug ("Approvals: LISTEN connection lost: %s", PQerrorMessage (listener->conn));
      listener_disconnect (listener);
      /* Right away the first time: a restarted server is often back. */
      g_source_set_ready_time (source, g_get_monotonic_time ());
      listener->reload = TRUE;
      return G_SOURCE_CONTINUE;
    }

  g_mutex_lock (&listener->set->mutex);
  if (listener->reload)
    add_all_runs (listener, changed);
  listener->reload = FALSE;
  for (PGnotify *notify; listener->conn != NULL && (notify = PQnotifies (listener->conn)) != NULL; PQfreemem (notify))
    if (g_hash_table_contains (listener->runs, notify->extra))
      add_changed (changed, notify->extra);
  g_mutex_unlock (&listener->set->mutex);

  /* Once per run and batch of notifications: a burst is one reload. */
  for (guint i = 0; i < changed->len; i++)
    subagent_approval_sink_emit_changed (sink, changed->pdata[i]);
  return G_SOURCE_CONTINUE;
}

static void
listener_finalize (GSource *source)
{
  Listener *listener = (Listener *) source;

  g_clear_pointer (&listener->conn, PQfinish);
  g_weak_ref_clear (&listener->sink);
  g_main_context_unref (listener->context);
  g_hash_table_unref (listener->runs);
}

static GSourceFuncs listener_funcs = {
  .dispatch = listener_dispatch,
  .finalize = listener_finalize,
};

ApgWatchSet *
apg_watch_set_new (SubagentApprovalSink *sink,
                   const char           *conninfo,
                   const char           *channel)
{
  ApgWatchSet *self = g_new0 (ApgWatchSet, 1);

  self->sink = sink;
  self->conninfo = g_strdup (conninfo);
  self->channel = g_strdup (channel);
  g_mutex_init (&self->mutex);
  self->listeners = g_ptr_array_new ();
  return self;
}

static void
destroy_listener (gpointer data)
{
  g_source_destroy (data);
  g_source_unref (data);
}

void
apg_watch_set_free (ApgWatchSet *self)
{
  g_autoptr(GPtrArray) listeners = NULL;

  g_mutex_lock (&self->mutex);
  listeners = g_steal_pointer (&self->listeners);
  g_mutex_unlock (&self->mutex);
  g_ptr_array_set_free_func (listeners, destroy_listener);
  g_clear_pointer (&listeners, g_ptr_array_unref);
  g_clear_pointer (&self->spare, PQfinish);
  g_mutex_clear (&self->mutex);
  memset (self->conninfo, 0, strlen (self->conninfo));
  g_free (self->conninfo);
  g_free (self->channel);
  g_free (self);
}

static Listener *
find_listener (ApgWatchSet  *self,
               GMainContext *context,
               guint        *index)
{
  for (guint i = 0; i < self->listeners->len; i++)
    if (((Listener *) self->listeners->pdata[i])->context == context)
      {
        *index = i;
        return self->listeners->pdata[i];
      }
  return NULL;
}

void
apg_watch_set_add (ApgWatchSet *self,
                   const char  *run_id)
{
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  guint index, count;
  Listener *listener = find_listener (self, context, &index);

  if (listener == NULL)
    {
      g_autoptr(GError) error = NULL;

      listener = (Listener *) g_source_new (&listener_funcs, sizeof (Listener));
      g_source_set_static_name (&listener->source, "[subagent] approval-postgres listen");
      listener->set = self;
      g_weak_ref_init (&listener->sink, self->sink);
      listener->context = g_main_context_ref (context);
      listener->backoff = APG_BACKOFF_FIRST_US;
      listener->runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      /* Connected before watch() returns: a change made after it is seen. */
      if (!listener_connect (listener, TRUE, &error))
        {
          g_warning ("Cannot listen for approval changes yet (retrying): %s", error->message);
          schedule_reconnect (listener);
        }
      g_source_attach (&listener->source, context);
      g_ptr_array_add (self->listeners, listener);
    }
  count = GPOINTER_TO_UINT (g_hash_table_lookup (listener->runs, run_id));
  g_hash_table_insert (listener->runs, g_strdup (run_id), GUINT_TO_POINTER (count + 1));
}

void
apg_watch_set_remove (ApgWatchSet *self,
                      const char  *run_id)
{
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  guint index, count;
  Listener *listener = find_listener (self, context, &index);

  if (listener == NULL)
    return;
  count = GPOINTER_TO_UINT (g_hash_table_lookup (listener->runs, run_id));
  if (count > 1)
    g_hash_table_insert (listener->runs, g_strdup (run_id), GUINT_TO_POINTER (count - 1));
  else
    g_hash_table_remove (listener->runs, run_id);
  /* With its last run gone, the context's source goes too; its
   * connection waits for the next. */
  if (g_hash_table_size (listener->runs) == 0)
    {
      g_ptr_array_remove_index_fast (self->listeners, index);
      /* Only where no other thread can be dispatching the source (which
       * reads its connection): otherwise it closes with the source. */
      if (g_main_context_acquire (listener->context))
        {
          listener_park (listener);
          g_main_context_release (listener->context);
        }
      destroy_listener (listener);
    }
}
