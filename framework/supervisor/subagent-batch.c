/* subagent-batch.c: many children at once, results in input order.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-supervisor-private.h"
#include "subagent-isolation-name-private.h"

/**
 * SubagentBatchItem:
 *
 * One task of a batch (reference 001's `subagent_batch` items): the task
 * and, optionally, the definition, isolation and limits to run it with.
 * Immutable.
 */
struct _SubagentBatchItem
{
  GObject parent_instance;

  char *task;
  SubagentRunOptions *options;
};

static gboolean
is_blank (const char *text)
{
  for (; text != NULL && *text != '\0'; text++)
    if (!g_ascii_isspace (*text))
      return FALSE;
  return TRUE;
}

G_DEFINE_FINAL_TYPE (SubagentBatchItem, subagent_batch_item, G_TYPE_OBJECT)

static void
subagent_batch_item_finalize (GObject *object)
{
  SubagentBatchItem *self = SUBAGENT_BATCH_ITEM (object);

  g_free (self->task);
  g_clear_object (&self->options);
  G_OBJECT_CLASS (subagent_batch_item_parent_class)->finalize (object);
}

static void
subagent_batch_item_class_init (SubagentBatchItemClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_batch_item_finalize;
}

static void
subagent_batch_item_init (SubagentBatchItem *self)
{
}

/**
 * subagent_batch_item_new:
 * @task: what the child should do
 * @options: (nullable): how to run it; copied (its batch index is replaced
 *   by the item's position)
 *
 * Creates a new #SubagentBatchItem.
 *
 * Returns: (transfer full): a new #SubagentBatchItem
 *
 * Since: 0.2
 */
SubagentBatchItem *
subagent_batch_item_new (const char         *task,
                         SubagentRunOptions *options)
{
  SubagentBatchItem *self;

  g_return_val_if_fail (task != NULL, NULL);
  g_return_val_if_fail (options == NULL || SUBAGENT_IS_RUN_OPTIONS (options), NULL);

  self = g_object_new (SUBAGENT_TYPE_BATCH_ITEM, NULL);
  self->task = g_strdup (task);
  self->options = _subagent_run_options_copy (options);
  return self;
}

static gboolean
read_limit (JsonObject  *object,
            const char  *key,
            guint       *out,
            GError     **error)
{
  JsonNode *node = json_object_get_member (object, key);

  *out = 0;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64 ||
      json_node_get_int (node) < 1 || json_node_get_int (node) > G_MAXINT)
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "“%s” of a batch item must be a whole number ≥ 1", key);
      return FALSE;
    }
  *out = (guint) json_node_get_int (node);
  return TRUE;
}

static gboolean
read_string (JsonObject   *object,
             const char   *key,
             const char  **out,
             GError      **error)
{
  JsonNode *node = json_object_get_member (object, key);

  *out = NULL;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "“%s” of a batch item must be a string", key);
      return FALSE;
    }
  *out = json_node_get_string (node);
  return TRUE;
}

/**
 * subagent_batch_item_new_from_json:
 * @object: `{"task": ..., "def_name"?, "isolation"?, "max_iterations"?, "max_tool_calls"?,
 *   "interactive"?, "skill_path"?, "skill_risk_level"?}`
 * @error: return location for a #GError
 *
 * Reads one batch item as reference 001's `subagent_batch` tool takes it.
 * Other members, a blank task, a definition name or isolation mode that
 * cannot be one, and limits below 1 are %SUBAGENT_ERROR_INVALID_ARGUMENT.
 *
 * Returns: (transfer full) (nullable): the item, or %NULL with @error set
 */
SubagentBatchItem *
subagent_batch_item_new_from_json (JsonObject  *object,
                                   GError     **error)
{
  static const char * const known[] = { "task", "def_name", "isolation", "max_iterations", "max_tool_calls",
                                        "interactive", "skill_path", "skill_risk_level", NULL };
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(GList) members = NULL;
  const char *task, *def_name, *isolation, *skill_path, *risk;
  SubagentRiskLevel level = SUBAGENT_RISK_LEVEL_NONE;
  guint max_iterations, max_tool_calls;
  char mode[SUBAGENT_ISOLATION_NAME_MAX + 1];

  g_return_val_if_fail (object != NULL, NULL);

  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    if (!g_strv_contains (known, l->data))
      {
        g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                     "A batch item has an unknown member “%s”; items take task, def_name, isolation, "
                     "max_iterations, max_tool_calls, interactive, skill_path and skill_risk_level", (const char *) l->data);
        return NULL;
      }
  if (!read_string (object, "task", &task, error) ||
      !read_string (object, "def_name", &def_name, error) ||
      !read_string (object, "isolation", &isolation, error) ||
      !read_string (object, "skill_path", &skill_path, error) ||
      !read_string (object, "skill_risk_level", &risk, error) ||
      !read_limit (object, "max_iterations", &max_iterations, error) ||
      !read_limit (object, "max_tool_calls", &max_tool_calls, error))
    return NULL;
  if (task == NULL || is_blank (task))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT, "A batch item needs a non-empty “task”");
      return NULL;
    }
  if (def_name != NULL && !subagent_def_name_is_valid (def_name))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "“%s” cannot name a definition (use letters, digits, “-” and “_”)", def_name);
      return NULL;
    }
  /* Spelling only here: whether the mode exists on this host is the
   * manager's to say when the item runs (an error result listing them). */
  if (isolation != NULL && !_subagent_isolation_normalize_to (isolation, mode, NULL))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "“%s” cannot name an isolation mode: use shared, auto, or a backend an installed plugin "
                   "provides (letters, digits, “-” and “_”)", isolation);
      return NULL;
    }
  if (!subagent_risk_level_from_string (risk, &level) || (risk != NULL && level == SUBAGENT_RISK_LEVEL_NONE))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Unknown skill_risk_level “%s”: use low, medium, high or critical", risk);
      return NULL;
    }
  subagent_run_options_set_def_name (options, def_name);
  subagent_run_options_set_isolation (options, isolation);
  subagent_run_options_set_skill_path (options, skill_path);
  subagent_run_options_set_risk_level (options, level);
  subagent_run_options_set_max_iterations (options, max_iterations);
  subagent_run_options_set_max_tool_calls (options, max_tool_calls);
  if (json_object_has_member (object, "interactive"))
    {
      JsonNode *node = json_object_get_member (object, "interactive");

      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                       "A batch item's “interactive” must be true or false");
          return NULL;
        }
      subagent_run_options_set_interactive (options, json_node_get_boolean (node));
    }
  return subagent_batch_item_new (task, options);
}

/**
 * subagent_batch_items_from_json:
 * @array: an array of item objects
 * @error: return location for a #GError
 *
 * Reads a whole batch with subagent_batch_item_new_from_json(); the error
 * names the position of the first bad item.
 *
 * Returns: (transfer container) (element-type SubagentBatchItem) (nullable):
 *   the items, or %NULL with @error set
 */
GPtrArray *
subagent_batch_items_from_json (JsonArray  *array,
                                GError    **error)
{
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);

  g_return_val_if_fail (array != NULL, NULL);

  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);
      g_autoptr(GError) local = NULL;
      SubagentBatchItem *item;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                       "Batch item %u is not an object with a “task”", i);
          return NULL;
        }
      if ((item = subagent_batch_item_new_from_json (json_node_get_object (node), &local)) == NULL)
        {
          g_set_error (error, local->domain, local->code, "Batch item %u: %s", i, local->message);
          return NULL;
        }
      g_ptr_array_add (items, item);
    }
  return g_steal_pointer (&items);
}

/**
 * subagent_batch_item_get_task:
 * @self: a #SubagentBatchItem
 *
 * Gets the task.
 *
 * Returns: (transfer none): the task
 *
 * Since: 0.2
 */
const char *
subagent_batch_item_get_task (SubagentBatchItem *self)
{
  g_return_val_if_fail (SUBAGENT_IS_BATCH_ITEM (self), NULL);
  return self->task;
}

/**
 * subagent_batch_item_get_options:
 * @self: a #SubagentBatchItem
 *
 * Gets the item's options (do not change them).
 *
 * Returns: (transfer none): the item's options (do not change them)
 *
 * Since: 0.2
 */
SubagentRunOptions *
subagent_batch_item_get_options (SubagentBatchItem *self)
{
  g_return_val_if_fail (SUBAGENT_IS_BATCH_ITEM (self), NULL);
  return self->options;
}

/* One batch in flight. The feeding runs where the supervisor emits its
 * events, the collecting where the caller waits: hence the lock. */
typedef struct {
  gatomicrefcount ref;
  GMutex lock;
  SubagentSupervisor *supervisor;
  GTask *task;
  GPtrArray *items;
  GPtrArray *results;   /* SubagentRunResult*, by position; NULL until known */
  guint next;           /* the first item not spawned yet */
  guint remaining;      /* items without a result */
  GCancellable *cancellable;
  GSource *cancel_source;  /* fires in the supervisor's context */
  GPtrArray *run_ids;      /* by position; NULL until spawned */
  gboolean returned;
  gboolean feeding;
  gboolean feed_again;
  gboolean stopped;        /* no item starts any more */
} Batch;

static Batch *
batch_ref (Batch *batch)
{
  g_atomic_ref_count_inc (&batch->ref);
  return batch;
}

static void
batch_unref (Batch *batch)
{
  if (!g_atomic_ref_count_dec (&batch->ref))
    return;
  g_clear_object (&batch->supervisor);
  g_clear_object (&batch->task);
  g_clear_object (&batch->cancellable);
  g_ptr_array_unref (batch->run_ids);
  g_ptr_array_unref (batch->items);
  g_ptr_array_unref (batch->results);
  g_mutex_clear (&batch->lock);
  g_free (batch);
}

typedef struct {
  Batch *batch;
  guint index;
} BatchWait;

/* Lock held. Returns the task to complete, if the batch is over. An item
 * settles once: one a stop settled while its spawn went through keeps
 * that answer when its child ends. */
static GTask *
batch_settle_locked (Batch              *batch,
                     guint               index,
                     SubagentRunResult  *result)
{
  if (g_ptr_array_index (batch->results, index) != NULL)
    return NULL;
  g_ptr_array_index (batch->results, index) = g_object_ref (result);
  if (--batch->remaining > 0 || batch->returned)
    return NULL;
  batch->returned = TRUE;
  return g_steal_pointer (&batch->task);
}

static void
batch_return (Batch *batch,
              GTask *task)
{
  GPtrArray *results;

  if (task == NULL)
    return;
  if (batch->cancel_source != NULL)
    {
      g_source_destroy (batch->cancel_source);
      g_clear_pointer (&batch->cancel_source, g_source_unref);
    }
  results = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < batch->results->len; i++)
    g_ptr_array_add (results, g_object_ref (g_ptr_array_index (batch->results, i)));
  /* Whoever gets the results finds the children's events in the file. */
  _subagent_supervisor_write_held_events (batch->supervisor);
  g_task_return_pointer (task, results, (GDestroyNotify) g_ptr_array_unref);
  g_object_unref (task);
}

static void
batch_wait_free (BatchWait *wait)
{
  batch_unref (wait->batch);
  g_free (wait);
}

/* The supervisor tells a batch of its child's end directly: no event is
 * made for it, and no wait (a task and a waiter) either. */
static void
item_ended (SubagentRunResult *result,
            const GError      *closed,
            gpointer           data)
{
  BatchWait *wait = data;
  Batch *batch = wait->batch;
  g_autoptr(SubagentRunResult) error_result = NULL;
  GTask *task = NULL;

  if (result == NULL)
    result = error_result = subagent_run_result_new_error (closed->message, NULL);
  g_mutex_lock (&batch->lock);
  task = batch_settle_locked (batch, wait->index, result);
  g_mutex_unlock (&batch->lock);
  batch_return (batch, task);
}

/* The result of an item the stopped batch never started. */
static SubagentRunResult *
never_started_result (Batch             *batch,
                      SubagentBatchItem *item,
                      guint              index)
{
  SubagentRunOptions *options = item->options;
  SubagentManager *manager = batch->supervisor->manager;
  const char *def_name = subagent_run_options_get_def_name (options);
  const char *isolation = subagent_run_options_get_isolation (options);
  const char *parent = subagent_run_options_get_parent_run_id (options);
  g_autoptr(SubagentLineage) lineage = NULL;

  /* What it would have run with, as far as known without starting it. */
  if (isolation == NULL)
    isolation = subagent_config_get_default_isolation (subagent_manager_get_config (manager));
  lineage = subagent_lineage_new (parent ? parent : subagent_manager_get_run_id (manager),
                                  def_name ? def_name : "default", subagent_run_options_get_depth (options) + 1,
                                  isolation, (gint) index, NULL, NULL);

  return subagent_run_result_new (SUBAGENT_RUN_STATUS_CANCELLED, "", 0, 0, 0.0, "", lineage, NULL,
                                  "Cancelled before it started: the batch was stopped",
                                  SUBAGENT_STOP_REASON_CANCELLED, NULL);
}

/* The batch's cancellable fired: nothing starts any more, what never
 * started ends `cancelled` now, what runs is cancelled and reports as it
 * ends. Runs in the supervisor's context, like the feeding. */
static gboolean
batch_stop (GCancellable *cancellable,
            gpointer      user_data)
{
  Batch *batch = user_data;
  g_autoptr(GPtrArray) running = g_ptr_array_new_with_free_func (g_free);
  GTask *task = NULL;

  g_mutex_lock (&batch->lock);
  if (batch->stopped)
    {
      g_mutex_unlock (&batch->lock);
      return G_SOURCE_REMOVE;
    }
  batch->stopped = TRUE;
  for (guint i = 0; i < batch->items->len; i++)
    {
      if (g_ptr_array_index (batch->results, i) != NULL)
        continue;
      if (g_ptr_array_index (batch->run_ids, i) != NULL)
        g_ptr_array_add (running, g_strdup (g_ptr_array_index (batch->run_ids, i)));
      else if (i >= batch->next)
        {
          g_autoptr(SubagentRunResult) cancelled = never_started_result (batch, g_ptr_array_index (batch->items, i), i);
          GTask *done = batch_settle_locked (batch, i, cancelled);

          task = task ? task : done;
        }
    }
  batch->next = batch->items->len;
  g_mutex_unlock (&batch->lock);

  for (guint i = 0; i < running->len; i++)
    subagent_supervisor_cancel (batch->supervisor, running->pdata[i], SUBAGENT_CANCEL_CAUSE_USER);
  batch_return (batch, task);
  return G_SOURCE_REMOVE;
}

static void batch_feed (Batch *batch);

static void
batch_slot_freed (gpointer data,
                  gpointer unused)
{
  batch_feed (data);
}

/* Spawns what the outstanding cap lets in; the rest waits for a slot (a
 * refused spawn leaves the batch waiting for the next child to end). One
 * feeder at a time keeps the input order: a spawn runs the supervisor's
 * actions, whose handlers and ends may ask to feed again; the running
 * feeder then goes on. */
static void
batch_feed (Batch *batch)
{
  SubagentSupervisor *self = batch->supervisor;
  SubagentSpawnExtras extras = {
    .centralized_approval = TRUE, .count_as_agent = TRUE, .in_batch = TRUE,
    .ended = item_ended, .ended_destroy = (GDestroyNotify) batch_wait_free,
  };

  /* A child cancelled with the batch ends before the cancellable's source
   * is dispatched: its end must not start the next item. */
  if (batch->cancellable != NULL && g_cancellable_is_cancelled (batch->cancellable))
    {
      batch_stop (batch->cancellable, batch);
      return;
    }
  g_mutex_lock (&batch->lock);
  if (batch->feeding)
    {
      batch->feed_again = TRUE;
      g_mutex_unlock (&batch->lock);
      return;
    }
  batch->feeding = TRUE;
  for (;;)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *run_id = NULL;
      SubagentBatchItem *item;
      GTask *task = NULL;
      BatchWait *wait;
      guint index;

      batch->feed_again = FALSE;
      if (batch->returned || batch->stopped || batch->next >= batch->items->len)
        break;
      /* Full: wait for a slot now, not after a refused spawn (whose error
       * was formatted and this item's wait made and freed, once a child). */
      if (_subagent_supervisor_wait_for_slot (self, batch_slot_freed, batch_ref (batch),
                                              (GDestroyNotify) batch_unref))
        break;
      index = batch->next;
      item = g_ptr_array_index (batch->items, index);
      /* The spawn copies the item's options and sets the index in its copy. */
      extras.batch_index = (gint) index;
      wait = g_new0 (BatchWait, 1);
      wait->batch = batch_ref (batch);
      wait->index = index;
      extras.ended_data = wait;
      g_mutex_unlock (&batch->lock);

      run_id = _subagent_supervisor_spawn_full (self, item->task, item->options, &extras, &error);
      /* Taken by the job it made, else still ours. */
      if (run_id == NULL)
        batch_wait_free (wait);

      g_mutex_lock (&batch->lock);
      if (batch->stopped)
        {
          /* Stopped during the spawn: the stop already settled this item
           * as never started; what did start is cancelled at once. */
          g_mutex_unlock (&batch->lock);
          if (run_id != NULL)
            subagent_supervisor_cancel (self, run_id, SUBAGENT_CANCEL_CAUSE_USER);
          g_mutex_lock (&batch->lock);
          break;
        }
      if (run_id != NULL)
        g_ptr_array_index (batch->run_ids, index) = g_strdup (run_id);
      /* Any child's end frees a slot the outstanding cap counts: the next
       * one feeds the batch again, unless one freed while we tried. */
      if (run_id == NULL && g_error_matches (error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_OUTSTANDING_CAP))
        {
          if (batch->feed_again ||
              !_subagent_supervisor_wait_for_slot (self, batch_slot_freed, batch_ref (batch),
                                                   (GDestroyNotify) batch_unref))
            continue;
          break;
        }
      batch->next++;
      if (run_id == NULL)
        {
          /* Refused for good (closed, budget, agent cap): that item's answer. */
          g_autoptr(SubagentRunResult) refused = subagent_run_result_new_error (error->message, NULL);

          task = batch_settle_locked (batch, index, refused);
          g_mutex_unlock (&batch->lock);
          batch_return (batch, task);
          g_mutex_lock (&batch->lock);
          continue;
        }
      /* A stopped batch still collects the result of each child it
       * started: item_ended() is told of every end. */
    }
  batch->feeding = FALSE;
  g_mutex_unlock (&batch->lock);
}

static void
free_parents (gpointer data)
{
  g_list_free_full (data, g_free);
}

static void
make_queues (GTask        *task,
             gpointer      source,
             gpointer      task_data,
             GCancellable *cancellable)
{
  for (GList *l = task_data; l != NULL; l = l->next)
    {
      g_autoptr(SubagentApprovalQueue) queue = _subagent_supervisor_get_approval_queue (source, l->data);
    }
  g_task_return_boolean (task, TRUE);
}

static void
queues_ready (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Batch *batch = user_data;

  if (batch->cancellable != NULL && g_cancellable_is_cancelled (batch->cancellable))
    batch_stop (batch->cancellable, batch);
  else
    batch_feed (batch);
  batch_unref (batch);
}

/**
 * subagent_supervisor_run_batch_async:
 * @self: a #SubagentSupervisor
 * @items: (element-type SubagentBatchItem): the tasks
 * @cancellable: (nullable): stops the batch: items not started yet never
 *   start and end `cancelled` (lineage with their `batch_index`), the
 *   batch's running children are cancelled, and the batch returns every
 *   item's result as usual
 * @callback: (scope async): called with the results
 * @user_data: (closure): data for @callback
 *
 * Runs a batch: each item becomes a child whose lineage carries its
 * position as `batch_index`, and whose approvals go through the parent
 * run's centralized approval queue (made first, in a thread, when it does
 * not exist yet). Children are spawned as the outstanding cap lets them
 * in, in input order. A batch larger than what
 * the parent may still start fails at once with
 * %SUBAGENT_SUPERVISOR_ERROR_AGENT_CAP, before anything runs.
 */
void
subagent_supervisor_run_batch_async (SubagentSupervisor  *self,
                                     GPtrArray           *items,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GHashTable) per_parent = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GTask) prepare = NULL;
  GHashTableIter iter;
  gpointer key, value;
  GList *parents;
  Batch *batch;

  g_return_if_fail (SUBAGENT_IS_SUPERVISOR (self));
  g_return_if_fail (items != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, subagent_supervisor_run_batch_async);
  g_task_set_check_cancellable (task, FALSE);

  for (guint i = 0; i < items->len; i++)
    {
      SubagentBatchItem *item = g_ptr_array_index (items, i);
      const char *parent = subagent_run_options_get_parent_run_id (item->options);

      g_return_if_fail (SUBAGENT_IS_BATCH_ITEM (item));
      if (parent == NULL)
        parent = subagent_manager_get_run_id (self->manager);
      g_hash_table_replace (per_parent, (gpointer) parent,
                            GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (per_parent, parent)) + 1));
    }
  g_hash_table_iter_init (&iter, per_parent);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (GPOINTER_TO_UINT (value) > _subagent_supervisor_agents_left (self, key))
      {
        g_task_return_new_error (task, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_AGENT_CAP,
                                 "A batch of %u subagents is more than the parent run %s may still start (%u; "
                                 "runner.max_agents)", GPOINTER_TO_UINT (value), (const char *) key,
                                 _subagent_supervisor_agents_left (self, key));
        return;
      }
  if (items->len == 0)
    {
      g_task_return_pointer (task, g_ptr_array_new_with_free_func (g_object_unref), (GDestroyNotify) g_ptr_array_unref);
      return;
    }

  batch = g_new0 (Batch, 1);
  g_atomic_ref_count_init (&batch->ref);
  g_mutex_init (&batch->lock);
  batch->supervisor = g_object_ref (self);
  batch->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  batch->task = g_steal_pointer (&task);
  batch->items = g_ptr_array_ref (items);
  batch->results = g_ptr_array_new_full (items->len, g_object_unref);
  g_ptr_array_set_size (batch->results, items->len);
  batch->run_ids = g_ptr_array_new_full (items->len, g_free);
  g_ptr_array_set_size (batch->run_ids, items->len);
  batch->remaining = items->len;
  /* Making the approval queue may load a sink plugin and read its store:
   * in a thread, before the first child; the spawns then find it made. */
  parents = g_hash_table_get_keys (per_parent);
  for (GList *l = parents; l != NULL; l = l->next)
    l->data = g_strdup (l->data);
  if (cancellable != NULL)
    {
      batch->cancel_source = g_cancellable_source_new (cancellable);
      g_source_set_callback (batch->cancel_source, (GSourceFunc) (void (*) (void)) batch_stop,
                             batch_ref (batch), (GDestroyNotify) batch_unref);
      g_source_set_static_name (batch->cancel_source, "[subagent] batch stop");
      g_source_attach (batch->cancel_source, self->context);
    }

  prepare = g_task_new (self, NULL, queues_ready, batch);
  g_task_set_task_data (prepare, parents, free_parents);
  g_task_run_in_thread (prepare, make_queues);
}

/**
 * subagent_supervisor_run_batch_finish:
 * @self: a #SubagentSupervisor
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes the operation started with subagent_supervisor_run_batch_async().
 *
 * Returns: (transfer container) (element-type SubagentRunResult) (nullable):
 *   one result per item, in input order whatever the finishing order; an
 *   item the supervisor refused has an error result, an item a stopped
 *   batch never started a `cancelled` one. %NULL with @error set for the
 *   agent cap.
 *
 * Since: 0.2
 */
GPtrArray *
subagent_supervisor_run_batch_finish (SubagentSupervisor  *self,
                                      GAsyncResult        *result,
                                      GError             **error)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
