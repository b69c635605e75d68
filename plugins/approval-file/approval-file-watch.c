/* approval-file-watch.c: "changed" for approval files, from inotify.
 *
 * Files are replaced by rename, so a watch on the directory sees every new
 * version as IN_MOVED_TO of "<run>.json" the moment it lands: a verdict
 * written by any process wakes the watchers within about a millisecond, with
 * no polling (GFileMonitor would add a hop through GLib's worker thread).
 * Each main context that watches has its own inotify instance, so the
 * signal is emitted in the context of the caller of watch().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <glib-unix.h>

#include "approval-file-io.h"
#include "approval-file-watch.h"

typedef struct {
  AfsWatchSet *set;
  GWeakRef sink;
  GMainContext *context;
  GSource *source;
  int fd;
  GHashTable *runs;        /* run id → number of watches; guarded by set->mutex */
  /* run id → the version "changed" was last emitted for (absent: none);
   * guarded by set->mutex */
  GHashTable *announced;
} Watcher;

struct _AfsWatchSet
{
  SubagentApprovalSink *sink;
  AfsWatchOwnFunc own_only;
  GMutex mutex;
  GPtrArray *watchers;     /* of Watcher; guarded by mutex */
};

AfsWatchSet *
afs_watch_set_new (SubagentApprovalSink *sink,
                   AfsWatchOwnFunc       own_only)
{
  AfsWatchSet *self = g_new0 (AfsWatchSet, 1);

  self->sink = sink;
  self->own_only = own_only;
  g_mutex_init (&self->mutex);
  self->watchers = g_ptr_array_new ();
  return self;
}

static void
destroy_source (GSource *source)
{
  /* Destroying the source frees its Watcher (the callback data). */
  g_source_destroy (source);
  g_source_unref (source);
}

void
afs_watch_set_free (AfsWatchSet *self)
{
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) destroy_source);

  g_mutex_lock (&self->mutex);
  for (guint i = 0; i < self->watchers->len; i++)
    g_ptr_array_add (sources, ((Watcher *) self->watchers->pdata[i])->source);
  g_ptr_array_set_size (self->watchers, 0);
  g_mutex_unlock (&self->mutex);

  g_clear_pointer (&sources, g_ptr_array_unref);
  g_ptr_array_unref (self->watchers);
  g_mutex_clear (&self->mutex);
  g_free (self);
}

static void
watcher_free (gpointer data)
{
  Watcher *watcher = data;

  g_weak_ref_clear (&watcher->sink);
  close (watcher->fd);
  g_main_context_unref (watcher->context);
  g_hash_table_unref (watcher->runs);
  g_hash_table_unref (watcher->announced);
  g_free (watcher);
}

typedef struct {
  char *run;
  gboolean forced;         /* events were lost: emit whatever the file holds */
  GBytes *announced;       /* nullable */
} Change;

static void
change_free (gpointer data)
{
  Change *change = data;

  g_free (change->run);
  g_clear_pointer (&change->announced, g_bytes_unref);
  g_free (change);
}

static void
add_changed (GPtrArray  *changed,
             Watcher    *watcher,
             const char *run,
             gboolean    forced)
{
  Change *change;

  for (guint i = 0; i < changed->len; i++)
    if (g_str_equal (((Change *) changed->pdata[i])->run, run))
      {
        ((Change *) changed->pdata[i])->forced |= forced;
        return;
      }
  change = g_new0 (Change, 1);
  change->run = g_strdup (run);
  change->forced = forced;
  change->announced = g_hash_table_lookup (watcher->announced, run);
  if (change->announced != NULL)
    g_bytes_ref (change->announced);
  g_ptr_array_add (changed, change);
}

static gboolean
on_inotify (int          fd,
            GIOCondition condition,
            gpointer     user_data)
{
  Watcher *watcher = user_data;
  g_autoptr(SubagentApprovalSink) sink = g_weak_ref_get (&watcher->sink);
  g_autoptr(GPtrArray) changed = g_ptr_array_new_with_free_func (change_free);
  char buf[8192] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  ssize_t n;

  /* Holding the sink keeps it, and so the set, from being disposed. */
  if (sink == NULL)
    return G_SOURCE_REMOVE;

  g_mutex_lock (&watcher->set->mutex);
  /* Until a read that did not fill half the buffer: the usual wake-up
   * holds a few events, and any that came since make the descriptor
   * readable again, so no read only to find it empty. */
  do
    {
      n = read (fd, buf, sizeof buf);
      for (char *p = buf; n > 0 && p < buf + n;)
        {
          const struct inotify_event *event = (const struct inotify_event *) p;
          g_autofree char *run = NULL;

          p += sizeof (struct inotify_event) + event->len;
          if (event->mask & (IN_Q_OVERFLOW | IN_IGNORED))
            {
              /* Events were lost, or the directory went: tell every run. */
              GHashTableIter iter;
              gpointer key;

              g_hash_table_iter_init (&iter, watcher->runs);
              while (g_hash_table_iter_next (&iter, &key, NULL))
                add_changed (changed, watcher, key, TRUE);
            }
          else if (event->len > 0 && afs_parse_run_file_name (event->name, &run)
                   && g_hash_table_contains (watcher->runs, run))
            add_changed (changed, watcher, run, FALSE);
        }
    }
  while (n > (ssize_t) sizeof buf / 2);
  g_mutex_unlock (&watcher->set->mutex);

  /* Once per run and batch of events: a burst of writes is one reload.
   * Versions this sink wrote on top of the one last announced, and no
   * other, are no news to whoever listens here: the two processes of a
   * request and its verdict each reloaded their own write before. */
  for (guint i = 0; i < changed->len; i++)
    {
      Change *change = changed->pdata[i];
      g_autoptr(GBytes) current = NULL;

      if (!change->forced && watcher->set->own_only != NULL
          && watcher->set->own_only (sink, change->run, change->announced, &current))
        continue;
      g_mutex_lock (&watcher->set->mutex);
      if (g_hash_table_contains (watcher->runs, change->run))
        {
          if (current != NULL)
            g_hash_table_insert (watcher->announced, g_strdup (change->run), g_bytes_ref (current));
          else
            g_hash_table_remove (watcher->announced, change->run);
        }
      g_mutex_unlock (&watcher->set->mutex);
      subagent_approval_sink_emit_changed (sink, change->run);
    }
  return G_SOURCE_CONTINUE;
}

static Watcher *
watcher_new (AfsWatchSet   *set,
             GMainContext  *context,
             const char    *dir,
             GError       **error)
{
  Watcher *watcher;
  int fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);

  /* Every way a run's file can change: our renames, deletion by prune, and
   * a tool that rewrites or moves it. Temp files show up too (IN_CLOSE_WRITE)
   * and are filtered out by name. */
  if (fd < 0 || inotify_add_watch (fd, dir, IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE | IN_ONLYDIR) < 0)
    {
      int saved_errno = errno;

      if (fd >= 0)
        close (fd);
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                   "Cannot watch %s with inotify: %s", dir, g_strerror (saved_errno));
      return NULL;
    }
  watcher = g_new0 (Watcher, 1);
  watcher->set = set;
  g_weak_ref_init (&watcher->sink, set->sink);
  watcher->context = g_main_context_ref (context);
  watcher->fd = fd;
  watcher->runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  watcher->announced = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_bytes_unref);
  watcher->source = g_unix_fd_source_new (fd, G_IO_IN);
  g_source_set_static_name (watcher->source, "[subagent] approval-file watch");
  /* GLib takes a source that may not recurse out of the poll set while it
   * dispatches and puts it back after, each time writing the context's
   * wakeup eventfd, so every wake-up cost a second, empty main loop
   * iteration. on_inotify() holds no lock while it emits, so a handler
   * that iterates this context again only makes it read on. */
  g_source_set_can_recurse (watcher->source, TRUE);
  g_source_set_callback (watcher->source, G_SOURCE_FUNC (on_inotify), watcher, watcher_free);
  g_source_attach (watcher->source, context);
  return watcher;
}

static Watcher *
find_watcher (AfsWatchSet  *self,
              GMainContext *context,
              guint        *index)
{
  for (guint i = 0; i < self->watchers->len; i++)
    if (((Watcher *) self->watchers->pdata[i])->context == context)
      {
        *index = i;
        return self->watchers->pdata[i];
      }
  return NULL;
}

gboolean
afs_watch_set_add (AfsWatchSet  *self,
                   const char   *dir,
                   const char   *run_id,
                   GError      **error)
{
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  guint index, count;
  Watcher *watcher = find_watcher (self, context, &index);

  if (watcher == NULL)
    {
      watcher = watcher_new (self, context, dir, error);
      if (watcher == NULL)
        return FALSE;
      g_ptr_array_add (self->watchers, watcher);
    }
  count = GPOINTER_TO_UINT (g_hash_table_lookup (watcher->runs, run_id));
  g_hash_table_insert (watcher->runs, g_strdup (run_id), GUINT_TO_POINTER (count + 1));
  return TRUE;
}

void
afs_watch_set_remove (AfsWatchSet *self,
                      const char  *run_id)
{
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  guint index, count;
  Watcher *watcher = find_watcher (self, context, &index);

  if (watcher == NULL)
    return;
  count = GPOINTER_TO_UINT (g_hash_table_lookup (watcher->runs, run_id));
  if (count > 1)
    g_hash_table_insert (watcher->runs, g_strdup (run_id), GUINT_TO_POINTER (count - 1));
  else
    {
      g_hash_table_remove (watcher->runs, run_id);
      g_hash_table_remove (watcher->announced, run_id);
    }
  /* With its last run gone, the context's inotify instance goes too. */
  if (g_hash_table_size (watcher->runs) == 0)
    {
      g_ptr_array_remove_index_fast (self->watchers, index);
      destroy_source (watcher->source);
    }
}
