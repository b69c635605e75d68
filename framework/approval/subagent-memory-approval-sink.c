/* subagent-memory-approval-sink.c: the built-in approval sink, queues kept in memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"

/**
 * SubagentMemoryApprovalSink:
 *
 * The built-in #SubagentApprovalSink: queues kept in this process's memory.
 * It gives a queue the same code path as a persistent store (merge,
 * compare-and-set, change notification) without touching the disk, and lets
 * tests change a queue's store behind its back.
 *
 * Thread-safe. Every write emits #SubagentApprovalSink::changed for the
 * written run, from an idle source attached to each watching context.
 */
struct _SubagentMemoryApprovalSink
{
  GObject parent_instance;

  GMutex lock;
  GHashTable *runs;   /* run id → MemoryRun */
  GPtrArray *watches; /* MemoryWatch */
};

typedef struct {
  GPtrArray *requests; /* SubagentApprovalRequest, insertion order */
  gint64 updated_at;   /* g_get_real_time () */
} MemoryRun;

typedef struct {
  char *run_id;
  GMainContext *context;
  guint count;
} MemoryWatch;

typedef struct {
  GWeakRef sink;
  char *run_id;
} ChangedIdle;

static void memory_sink_iface_init (SubagentApprovalSinkInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SubagentMemoryApprovalSink, subagent_memory_approval_sink, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SUBAGENT_TYPE_APPROVAL_SINK, memory_sink_iface_init))

static void
memory_run_free (MemoryRun *run)
{
  g_ptr_array_unref (run->requests);
  g_free (run);
}

static void
memory_watch_free (MemoryWatch *watch)
{
  g_free (watch->run_id);
  g_main_context_unref (watch->context);
  g_free (watch);
}

static void
changed_idle_free (ChangedIdle *idle)
{
  g_weak_ref_clear (&idle->sink);
  g_free (idle->run_id);
  g_free (idle);
}

static gboolean
changed_idle_cb (gpointer data)
{
  ChangedIdle *idle = data;
  g_autoptr(SubagentApprovalSink) sink = g_weak_ref_get (&idle->sink);

  if (sink != NULL)
    subagent_approval_sink_emit_changed (sink, idle->run_id);
  return G_SOURCE_REMOVE;
}

/* Called with the lock held. */
static void
schedule_changed (SubagentMemoryApprovalSink *self,
                  const char                 *run_id)
{
  for (guint i = 0; i < self->watches->len; i++)
    {
      MemoryWatch *watch = g_ptr_array_index (self->watches, i);
      g_autoptr(GSource) source = NULL;
      ChangedIdle *idle;

      if (g_strcmp0 (watch->run_id, run_id) != 0)
        continue;
      idle = g_new0 (ChangedIdle, 1);
      g_weak_ref_init (&idle->sink, self);
      idle->run_id = g_strdup (run_id);
      source = g_idle_source_new ();
      g_source_set_static_name (source, "[subagent] memory approval sink changed");
      g_source_set_callback (source, changed_idle_cb, idle, (GDestroyNotify) changed_idle_free);
      g_source_attach (source, watch->context);
    }
}

static SubagentApprovalRequest *
find_request (MemoryRun  *run,
              const char *request_id,
              guint      *index)
{
  for (guint i = 0; run != NULL && i < run->requests->len; i++)
    {
      SubagentApprovalRequest *request = g_ptr_array_index (run->requests, i);

      if (g_strcmp0 (subagent_approval_request_get_request_id (request), request_id) == 0)
        {
          if (index != NULL)
            *index = i;
          return request;
        }
    }
  return NULL;
}

static gboolean
memory_save (SubagentApprovalSink  *sink,
             const char            *parent_run_id,
             GPtrArray             *requests,
             GError               **error)
{
  SubagentMemoryApprovalSink *self = SUBAGENT_MEMORY_APPROVAL_SINK (sink);
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  MemoryRun *run = g_hash_table_lookup (self->runs, parent_run_id);

  if (run == NULL)
    {
      run = g_new0 (MemoryRun, 1);
      run->requests = g_ptr_array_new_with_free_func (g_object_unref);
      g_hash_table_insert (self->runs, g_strdup (parent_run_id), run);
    }
  for (guint i = 0; i < requests->len; i++)
    {
      SubagentApprovalRequest *given = g_ptr_array_index (requests, i);
      guint index;
      SubagentApprovalRequest *stored = find_request (run, subagent_approval_request_get_request_id (given), &index);

      if (stored == NULL)
        g_ptr_array_add (run->requests, subagent_approval_request_copy (given));
      else if (!subagent_approval_status_is_terminal (subagent_approval_request_get_status (stored)))
        {
          g_object_unref (run->requests->pdata[index]);
          run->requests->pdata[index] = subagent_approval_request_copy (given);
        }
    }
  run->updated_at = g_get_real_time ();
  schedule_changed (self, parent_run_id);
  return TRUE;
}

static GPtrArray *
memory_load (SubagentApprovalSink  *sink,
             const char            *parent_run_id,
             GError               **error)
{
  SubagentMemoryApprovalSink *self = SUBAGENT_MEMORY_APPROVAL_SINK (sink);
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  MemoryRun *run = g_hash_table_lookup (self->runs, parent_run_id);
  GPtrArray *snapshot = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; run != NULL && i < run->requests->len; i++)
    g_ptr_array_add (snapshot, subagent_approval_request_copy (g_ptr_array_index (run->requests, i)));
  return snapshot;
}

static gboolean
memory_update_status (SubagentApprovalSink    *sink,
                      const char              *parent_run_id,
                      const char              *request_id,
                      SubagentApprovalStatus   status,
                      const char              *reason,
                      const char              *actor,
                      GError                 **error)
{
  SubagentMemoryApprovalSink *self = SUBAGENT_MEMORY_APPROVAL_SINK (sink);
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  MemoryRun *run = g_hash_table_lookup (self->runs, parent_run_id);
  SubagentApprovalRequest *stored = find_request (run, request_id, NULL);

  if (stored == NULL || !subagent_approval_request_transition (stored, status, reason, actor))
    return FALSE;
  run->updated_at = g_get_real_time ();
  schedule_changed (self, parent_run_id);
  return TRUE;
}

static gboolean
run_has_pending (MemoryRun *run)
{
  for (guint i = 0; i < run->requests->len; i++)
    if (!subagent_approval_status_is_terminal (subagent_approval_request_get_status (run->requests->pdata[i])))
      return TRUE;
  return FALSE;
}

static guint
memory_prune_stale (SubagentApprovalSink  *sink,
                    GTimeSpan              max_age,
                    GError               **error)
{
  SubagentMemoryApprovalSink *self = SUBAGENT_MEMORY_APPROVAL_SINK (sink);
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  gint64 now = g_get_real_time ();
  GHashTableIter iter;
  gpointer key, value;
  guint removed = 0;

  g_hash_table_iter_init (&iter, self->runs);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      MemoryRun *run = value;

      if (now - run->updated_at >= max_age && !run_has_pending (run))
        {
          schedule_changed (self, key);
          g_hash_table_iter_remove (&iter);
          removed++;
        }
    }
  return removed;
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b,
                 gpointer      user_data)
{
  return g_strcmp0 (*(char * const *) a, *(char * const *) b);
}

static GStrv
memory_list_runs (SubagentApprovalSink  *sink,
                  GError               **error)
{
  SubagentMemoryApprovalSink *self = SUBAGENT_MEMORY_APPROVAL_SINK (sink);
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autofree const char **keys = (const char **) g_hash_table_get_keys_as_array (self->runs, NULL);
  GStrv runs = g_strdupv ((char **) keys);

  g_qsort_with_data (runs, g_strv_length (runs), sizeof (char *), compare_strings, NULL);
  return runs;
}

static void
memory_watch (SubagentApprovalSink *sink,
              const char           *parent_run_id)
{
  SubagentMemoryApprovalSink *self = SUBAGENT_MEMORY_APPROVAL_SINK (sink);
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();
  MemoryWatch *watch;

  for (guint i = 0; i < self->watches->len; i++)
    {
      watch = g_ptr_array_index (self->watches, i);
      if (watch->context == context && g_strcmp0 (watch->run_id, parent_run_id) == 0)
        {
          watch->count++;
          return;
        }
    }
  watch = g_new0 (MemoryWatch, 1);
  watch->run_id = g_strdup (parent_run_id);
  watch->context = g_steal_pointer (&context);
  watch->count = 1;
  g_ptr_array_add (self->watches, watch);
}

static void
memory_unwatch (SubagentApprovalSink *sink,
                const char           *parent_run_id)
{
  SubagentMemoryApprovalSink *self = SUBAGENT_MEMORY_APPROVAL_SINK (sink);
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();

  for (guint i = 0; i < self->watches->len; i++)
    {
      MemoryWatch *watch = g_ptr_array_index (self->watches, i);

      if (watch->context == context && g_strcmp0 (watch->run_id, parent_run_id) == 0)
        {
          if (--watch->count == 0)
            g_ptr_array_remove_index_fast (self->watches, i);
          return;
        }
    }
}

static void
memory_sink_iface_init (SubagentApprovalSinkInterface *iface)
{
  iface->save = memory_save;
  iface->load = memory_load;
  iface->update_status = memory_update_status;
  iface->prune_stale = memory_prune_stale;
  iface->list_runs = memory_list_runs;
  iface->watch = memory_watch;
  iface->unwatch = memory_unwatch;
}

static void
subagent_memory_approval_sink_finalize (GObject *object)
{
  SubagentMemoryApprovalSink *self = SUBAGENT_MEMORY_APPROVAL_SINK (object);

  g_hash_table_unref (self->runs);
  g_ptr_array_unref (self->watches);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (subagent_memory_approval_sink_parent_class)->finalize (object);
}

static void
subagent_memory_approval_sink_class_init (SubagentMemoryApprovalSinkClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_memory_approval_sink_finalize;
}

static void
subagent_memory_approval_sink_init (SubagentMemoryApprovalSink *self)
{
  g_mutex_init (&self->lock);
  self->runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) memory_run_free);
  self->watches = g_ptr_array_new_with_free_func ((GDestroyNotify) memory_watch_free);
}

/**
 * subagent_memory_approval_sink_new:
 *
 * Creates an empty in-memory sink.
 *
 * Returns: (transfer full): the new sink
 */
SubagentApprovalSink *
subagent_memory_approval_sink_new (void)
{
  return g_object_new (SUBAGENT_TYPE_MEMORY_APPROVAL_SINK, NULL);
}

