/* subagent-approval-queue.c: the centralized approval queue of one parent run.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-approval-private.h"

/**
 * SubagentApprovalQueue:
 *
 * The centralized approval queue of one parent run: its children submit
 * destructive tool calls as #SubagentApprovalRequest and wait; a person, the
 * parent, or another process gives verdicts.
 *
 * There is one queue per parent run, kept in a process-wide registry:
 * subagent_approval_queue_get() returns the run's queue, creating it on
 * first use; subagent_approval_queue_try_get() only looks;
 * subagent_approval_queue_release() removes it. The registry is the only
 * global state of the approval code and is guarded by a #GMutex.
 *
 * The queue owns the request state machine (`docs/approvals.md`): a request
 * leaves %SUBAGENT_APPROVAL_STATUS_PENDING once, for approval, denial,
 * timeout (after its #SubagentApprovalRequest:timeout-seconds) or
 * cancellation, and never changes again.
 *
 * With a #SubagentApprovalSink, every request is saved when submitted and
 * every verdict goes through the sink's compare-and-set, so two processes
 * cannot both resolve one request. Verdicts written elsewhere reach the
 * queue through #SubagentApprovalSink::changed: the queue watches its run on
 * a private #GMainContext run by a small worker thread it owns, and reloads
 * from the store there. That is what lets subagent_approval_queue_submit_sync()
 * block any thread — even the one that runs the application's main loop —
 * on a #GCond and still wake when another process answers.
 *
 * All methods are thread-safe. #SubagentApprovalQueue::request-added and
 * #SubagentApprovalQueue::request-resolved are emitted on the thread that
 * made the change (a submitter, an approver, or the watcher thread), never
 * with a lock held; handlers that touch a UI must hop to its main context.
 */

G_DEFINE_FINAL_TYPE (SubagentApprovalQueue, subagent_approval_queue, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PARENT_RUN_ID,
  PROP_SINK,
  PROP_DEFAULT_TIMEOUT,
  N_PROPS
};

enum {
  SIGNAL_REQUEST_ADDED,
  SIGNAL_REQUEST_RESOLVED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void
subagent_approval_entry_free (SubagentApprovalEntry *entry)
{
  g_object_unref (entry->request);
  g_ptr_array_unref (entry->async_waits);
  g_free (entry);
}

/* Called with the lock held. */
SubagentApprovalEntry *
subagent_approval_queue_add_entry_locked (SubagentApprovalQueue   *self,
                                          SubagentApprovalRequest *request)
{
  SubagentApprovalEntry *entry = g_new0 (SubagentApprovalEntry, 1);

  entry->request = g_object_ref (request);
  entry->seq = self->next_seq++;
  entry->async_waits = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_approval_async_wait_unref);
  g_hash_table_insert (self->entries, g_strdup (subagent_approval_request_get_request_id (request)), entry);
  return entry;
}

SubagentApprovalRequest *
subagent_approval_queue_lookup (SubagentApprovalQueue *self,
                                const char            *request_id)
{
  SubagentApprovalEntry *entry;
  SubagentApprovalRequest *request = NULL;

  g_mutex_lock (&self->lock);
  entry = request_id ? g_hash_table_lookup (self->entries, request_id) : NULL;
  if (entry != NULL)
    request = g_object_ref (entry->request);
  g_mutex_unlock (&self->lock);
  return request;
}

/* After @request left PENDING in memory: wake every waiter and tell listeners. */
void
subagent_approval_queue_notify_resolved (SubagentApprovalQueue   *self,
                                         SubagentApprovalRequest *request)
{
  g_autoptr(GPtrArray) waits = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_approval_async_wait_unref);
  SubagentApprovalEntry *entry;

  g_mutex_lock (&self->lock);
  g_cond_broadcast (&self->cond);
  entry = g_hash_table_lookup (self->entries, subagent_approval_request_get_request_id (request));
  if (entry != NULL)
    for (guint i = 0; i < entry->async_waits->len; i++)
      g_ptr_array_add (waits, subagent_approval_async_wait_ref (entry->async_waits->pdata[i]));
  g_mutex_unlock (&self->lock);

  for (guint i = 0; i < waits->len; i++)
    subagent_approval_async_wait_complete (waits->pdata[i], NULL);
  g_signal_emit (self, signals[SIGNAL_REQUEST_RESOLVED], 0, request);
}

/* Loads the store and merges it: pending requests missing here are added
 * (terminal ones are history, and may have been dropped by cleanup());
 * pending ones the store has resolved adopt the stored verdict and wake
 * their waiters. A terminal state here is never touched. *focus_out gets
 * the stored copy of @focus_id, if any. */
static gboolean
reload_internal (SubagentApprovalQueue    *self,
                 const char               *focus_id,
                 SubagentApprovalRequest **focus_out,
                 GError                  **error)
{
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GPtrArray) added = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) changed = g_ptr_array_new_with_free_func (g_object_unref);

  if (self->sink == NULL)
    return TRUE;
  stored = subagent_approval_sink_load (self->sink, self->parent_run_id, error);
  if (stored == NULL)
    return FALSE;

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < stored->len; i++)
    {
      SubagentApprovalRequest *disk = g_ptr_array_index (stored, i);
      const char *id = subagent_approval_request_get_request_id (disk);
      SubagentApprovalEntry *entry;

      if (g_strcmp0 (subagent_approval_request_get_parent_run_id (disk), self->parent_run_id) != 0)
        continue;
      if (focus_out != NULL && g_strcmp0 (id, focus_id) == 0)
        g_set_object (focus_out, disk);
      entry = g_hash_table_lookup (self->entries, id);
      if (entry == NULL && !subagent_approval_status_is_terminal (subagent_approval_request_get_status (disk)))
        {
          subagent_approval_queue_add_entry_locked (self, disk);
          g_ptr_array_add (added, g_object_ref (disk));
        }
      else if (entry != NULL &&
               subagent_approval_status_is_terminal (subagent_approval_request_get_status (disk)) &&
               !subagent_approval_status_is_terminal (subagent_approval_request_get_status (entry->request)))
        {
          g_ptr_array_add (changed, g_object_ref (entry->request));
          g_ptr_array_add (changed, g_object_ref (disk));
        }
    }
  g_mutex_unlock (&self->lock);

  for (guint i = 0; i < added->len; i++)
    g_signal_emit (self, signals[SIGNAL_REQUEST_ADDED], 0, added->pdata[i]);
  for (guint i = 0; i + 1 < changed->len; i += 2)
    if (subagent_approval_request_adopt (changed->pdata[i], changed->pdata[i + 1]))
      subagent_approval_queue_notify_resolved (self, changed->pdata[i]);
  return TRUE;
}

/**
 * subagent_approval_queue_reload_from_store:
 * @self: a queue
 * @error: return location for a #GError
 *
 * Merges the sink's state into the queue: pending requests stored by another
 * process are added, and pending requests that were resolved elsewhere take
 * the stored verdict — which wakes whoever waits for them. A request that
 * is terminal here never changes. Without a sink this does nothing.
 *
 * The queue calls this itself when its sink emits
 * #SubagentApprovalSink::changed.
 *
 * Returns: %TRUE on success, %FALSE with @error set if the store could not be read
 */
gboolean
subagent_approval_queue_reload_from_store (SubagentApprovalQueue  *self,
                                           GError                **error)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return reload_internal (self, NULL, NULL, error);
}

/**
 * subagent_approval_queue_resolve:
 * @self: a queue
 * @request_id: the request to resolve
 * @status: the terminal state to reach
 * @reason: (nullable): why, for every state but approval
 * @actor: (nullable): who gives the verdict
 * @error: return location for a #GError
 *
 * Gives a verdict. With a sink the verdict is first applied through the
 * sink's compare-and-set: if another process resolved the request first,
 * its verdict is adopted here and this call fails with
 * %SUBAGENT_APPROVAL_ERROR_NOT_PENDING. If the store fails, an approval is
 * refused (%SUBAGENT_APPROVAL_ERROR_STORE), since nothing then stops another
 * process from denying it; a denial, timeout or cancellation still applies
 * here, because refusing is always safe.
 *
 * Returns: %TRUE if this call resolved the request
 */
gboolean
subagent_approval_queue_resolve (SubagentApprovalQueue   *self,
                                 const char              *request_id,
                                 SubagentApprovalStatus   status,
                                 const char              *reason,
                                 const char              *actor,
                                 GError                 **error)
{
  g_autoptr(SubagentApprovalRequest) request = NULL;
  g_autoptr(SubagentApprovalRequest) stored = NULL;
  gboolean store_lacks_it = FALSE;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), FALSE);
  g_return_val_if_fail (subagent_approval_status_is_terminal (status), FALSE);
  g_return_val_if_fail (status <= SUBAGENT_APPROVAL_STATUS_CANCELLED, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  request = subagent_approval_queue_lookup (self, request_id);
  if (request == NULL)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_NOT_FOUND,
                   "No approval request “%s” in the queue of run %s",
                   request_id ? request_id : "(null)", self->parent_run_id);
      return FALSE;
    }
  if (subagent_approval_status_is_terminal (subagent_approval_request_get_status (request)))
    goto not_pending;

  if (self->sink != NULL)
    {
      g_autoptr(GError) local_error = NULL;
      gboolean won = subagent_approval_sink_update_status (self->sink, self->parent_run_id, request_id,
                                                           status, reason, actor, &local_error);

      if (local_error != NULL && status == SUBAGENT_APPROVAL_STATUS_APPROVED)
        {
          g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                       "Cannot record the approval of request %s of run %s: %s; it stays pending",
                       request_id, self->parent_run_id, local_error->message);
          return FALSE;
        }
      if (local_error != NULL)
        g_warning ("Cannot record the %s verdict of approval request %s of run %s: %s; "
                   "it applies in this process only",
                   subagent_approval_status_to_string (status), request_id, self->parent_run_id,
                   local_error->message);
      else
        {
          /* Adopt the stored verdict, ours or another writer's, with its stamps. */
          if (!reload_internal (self, request_id, &stored, &local_error))
            g_debug ("Reloading run %s after a verdict failed: %s", self->parent_run_id, local_error->message);
          if (won && subagent_approval_status_is_terminal (subagent_approval_request_get_status (request)))
            return TRUE;
          if (!won && stored != NULL)
            goto not_pending;
          store_lacks_it = !won && stored == NULL;
        }
    }

  if (!subagent_approval_request_transition (request, status, reason, actor))
    goto not_pending;
  if (store_lacks_it)
    {
      g_autoptr(GPtrArray) one = g_ptr_array_new ();
      g_autoptr(GError) save_error = NULL;

      g_ptr_array_add (one, request);
      if (!subagent_approval_sink_save (self->sink, self->parent_run_id, one, &save_error))
        g_warning ("Cannot store approval request %s of run %s: %s",
                   request_id, self->parent_run_id, save_error->message);
    }
  subagent_approval_queue_notify_resolved (self, request);
  return TRUE;

not_pending:
  g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_NOT_PENDING,
               "Approval request %s of run %s is already %s",
               request_id, self->parent_run_id,
               subagent_approval_status_to_string (subagent_approval_request_get_status (request)));
  return FALSE;
}

/* Gives one verdict to each of @request_ids, through one
 * subagent_approval_sink_update_status_batch(): one write for all of them
 * in the file and postgres stores, each request still its own
 * compare-and-set. The same rules as subagent_approval_queue_resolve()
 * apply per request; requests missing here or not pending are skipped.
 * Returns how many this call resolved. */
guint
subagent_approval_queue_resolve_many (SubagentApprovalQueue   *self,
                                      const char * const      *request_ids,
                                      SubagentApprovalStatus   status,
                                      const char              *reason,
                                      const char              *actor)
{
  g_autoptr(GPtrArray) targets = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) ids = g_ptr_array_new ();
  g_autoptr(GArray) won = NULL;
  g_autoptr(GError) error = NULL;
  guint count = 0;

  for (guint i = 0; request_ids != NULL && request_ids[i] != NULL; i++)
    {
      SubagentApprovalRequest *request = subagent_approval_queue_lookup (self, request_ids[i]);

      if (request == NULL || subagent_approval_status_is_terminal (subagent_approval_request_get_status (request)))
        {
          g_debug ("Approval request %s of run %s is missing or not pending; not resolved",
                   request_ids[i], self->parent_run_id);
          g_clear_object (&request);
          continue;
        }
      g_ptr_array_add (targets, request);
      g_ptr_array_add (ids, (gpointer) subagent_approval_request_get_request_id (request));
    }
  if (targets->len == 0)
    return 0;
  g_ptr_array_add (ids, NULL);

  if (self->sink == NULL)
    {
      for (guint i = 0; i < targets->len; i++)
        if (subagent_approval_request_transition (targets->pdata[i], status, reason, actor))
          {
            subagent_approval_queue_notify_resolved (self, targets->pdata[i]);
            count++;
          }
      return count;
    }

  won = subagent_approval_sink_update_status_batch (self->sink, self->parent_run_id,
                                                    (const char * const *) ids->pdata, status, reason, actor,
                                                    &error);
  if (won == NULL)
    {
      /* As for one request: an approval nothing stored is refused, while
       * refusing is always safe to apply here. */
      if (status == SUBAGENT_APPROVAL_STATUS_APPROVED)
        {
          g_warning ("Cannot record the approval of %u request%s of run %s: %s; they stay pending",
                     targets->len, targets->len == 1 ? "" : "s", self->parent_run_id, error->message);
          return 0;
        }
      g_warning ("Cannot record the %s verdict of %u approval request%s of run %s: %s; it applies in this "
                 "process only", subagent_approval_status_to_string (status), targets->len,
                 targets->len == 1 ? "" : "s", self->parent_run_id, error->message);
      for (guint i = 0; i < targets->len; i++)
        if (subagent_approval_request_transition (targets->pdata[i], status, reason, actor))
          {
            subagent_approval_queue_notify_resolved (self, targets->pdata[i]);
            count++;
          }
      return count;
    }

  /* Adopt the stored verdicts, ours and other writers', with their stamps. */
  if (!reload_internal (self, NULL, NULL, &error))
    g_debug ("Reloading run %s after verdicts failed: %s", self->parent_run_id, error->message);
  for (guint i = 0; i < targets->len; i++)
    {
      SubagentApprovalRequest *request = targets->pdata[i];
      gboolean pending = !subagent_approval_status_is_terminal (subagent_approval_request_get_status (request));

      if (g_array_index (won, gboolean, i))
        {
          count++;
          if (pending && subagent_approval_request_transition (request, status, reason, actor))
            subagent_approval_queue_notify_resolved (self, request);
        }
      /* Lost, yet still pending here: the store lacks it (or could not be
       * read back); the one-request path knows what to do then. */
      else if (pending && subagent_approval_queue_resolve (self, ids->pdata[i], status, reason, actor, NULL))
        count++;
    }
  return count;
}

void
subagent_approval_queue_emit_added (SubagentApprovalQueue   *self,
                                    SubagentApprovalRequest *request)
{
  g_signal_emit (self, signals[SIGNAL_REQUEST_ADDED], 0, request);
}

static void
on_store_changed (GObject *target)
{
  SubagentApprovalQueue *self = SUBAGENT_APPROVAL_QUEUE (target);
  g_autoptr(GError) error = NULL;

  if (!subagent_approval_queue_reload_from_store (self, &error))
    g_warning ("Cannot reload the approval queue of run %s from its store: %s",
               self->parent_run_id, error->message);
}

static void
subagent_approval_queue_constructed (GObject *object)
{
  SubagentApprovalQueue *self = SUBAGENT_APPROVAL_QUEUE (object);

  G_OBJECT_CLASS (subagent_approval_queue_parent_class)->constructed (object);

  g_return_if_fail (subagent_approval_id_is_valid (self->parent_run_id));
  if (self->sink != NULL)
    self->watcher = subagent_approval_sink_watcher_start (self->sink, self->parent_run_id,
                                                          object, on_store_changed);
}

static void
subagent_approval_queue_dispose (GObject *object)
{
  SubagentApprovalQueue *self = SUBAGENT_APPROVAL_QUEUE (object);

  /* Before chaining up: the watcher thread may still hold a reference it
   * took through its weak pointer, and must be done with it. */
  g_clear_pointer (&self->watcher, subagent_approval_sink_watcher_stop);

  G_OBJECT_CLASS (subagent_approval_queue_parent_class)->dispose (object);
}

static void
subagent_approval_queue_finalize (GObject *object)
{
  SubagentApprovalQueue *self = SUBAGENT_APPROVAL_QUEUE (object);

  g_hash_table_unref (self->entries);
  g_clear_object (&self->sink);
  g_free (self->parent_run_id);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);

  G_OBJECT_CLASS (subagent_approval_queue_parent_class)->finalize (object);
}

static void
subagent_approval_queue_get_property (GObject    *object,
                                      guint       prop_id,
                                      GValue     *value,
                                      GParamSpec *pspec)
{
  SubagentApprovalQueue *self = SUBAGENT_APPROVAL_QUEUE (object);

  switch (prop_id)
    {
    case PROP_PARENT_RUN_ID:
      g_value_set_string (value, self->parent_run_id);
      break;
    case PROP_SINK:
      g_value_set_object (value, self->sink);
      break;
    case PROP_DEFAULT_TIMEOUT:
      g_value_set_uint (value, subagent_approval_queue_get_default_timeout (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_approval_queue_set_property (GObject      *object,
                                      guint         prop_id,
                                      const GValue *value,
                                      GParamSpec   *pspec)
{
  SubagentApprovalQueue *self = SUBAGENT_APPROVAL_QUEUE (object);

  switch (prop_id)
    {
    case PROP_PARENT_RUN_ID:
      self->parent_run_id = g_value_dup_string (value);
      break;
    case PROP_SINK:
      self->sink = g_value_dup_object (value);
      break;
    case PROP_DEFAULT_TIMEOUT:
      subagent_approval_queue_set_default_timeout (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_approval_queue_class_init (SubagentApprovalQueueClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = subagent_approval_queue_constructed;
  object_class->dispose = subagent_approval_queue_dispose;
  object_class->finalize = subagent_approval_queue_finalize;
  object_class->get_property = subagent_approval_queue_get_property;
  object_class->set_property = subagent_approval_queue_set_property;

  /**
   * SubagentApprovalQueue:parent-run-id:
   *
   * The parent run whose children submit to this queue.
   */
  properties[PROP_PARENT_RUN_ID] =
    g_param_spec_string ("parent-run-id", NULL, "The parent run id", NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentApprovalQueue:sink:
   *
   * Where requests are stored and verdicts of other processes read; %NULL
   * keeps the queue in this process only.
   */
  properties[PROP_SINK] =
    g_param_spec_object ("sink", NULL, "The store", SUBAGENT_TYPE_APPROVAL_SINK,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentApprovalQueue:default-timeout:
   *
   * The timeout, in seconds, given to requests built for this queue (by
   * #SubagentApprovalHandler); a request's own timeout wins.
   */
  properties[PROP_DEFAULT_TIMEOUT] =
    g_param_spec_uint ("default-timeout", NULL, "The default timeout in seconds",
                       1, SUBAGENT_APPROVAL_MAX_TIMEOUT_SECONDS, SUBAGENT_APPROVAL_DEFAULT_TIMEOUT_SECONDS,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SubagentApprovalQueue::request-added:
   * @self: the queue
   * @request: the new request
   *
   * A request was submitted here — and, with a sink, stored, so a handler
   * may answer it through the store — or a pending request was found in
   * the store. Emitted on the thread that added it.
   */
  signals[SIGNAL_REQUEST_ADDED] =
    g_signal_new ("request-added", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, SUBAGENT_TYPE_APPROVAL_REQUEST);
  /**
   * SubagentApprovalQueue::request-resolved:
   * @self: the queue
   * @request: the request, now in a terminal state
   *
   * A request left %SUBAGENT_APPROVAL_STATUS_PENDING: approved, denied, timed
   * out or cancelled, here or in another process. Emitted once per request,
   * on the thread that applied the verdict.
   */
  signals[SIGNAL_REQUEST_RESOLVED] =
    g_signal_new ("request-resolved", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, SUBAGENT_TYPE_APPROVAL_REQUEST);
}

static void
subagent_approval_queue_init (SubagentApprovalQueue *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->entries = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                         (GDestroyNotify) subagent_approval_entry_free);
  self->default_timeout = SUBAGENT_APPROVAL_DEFAULT_TIMEOUT_SECONDS;
}

/**
 * subagent_approval_queue_get_parent_run_id:
 * @self: a queue
 *
 * Gets the parent run id.
 *
 * Returns: (transfer none): the parent run id
 *
 * Since: 0.2
 */
const char *
subagent_approval_queue_get_parent_run_id (SubagentApprovalQueue *self)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), NULL);
  return self->parent_run_id;
}

/**
 * subagent_approval_queue_get_sink:
 * @self: a queue
 *
 * Gets the queue's store.
 *
 * Returns: (transfer none) (nullable): the queue's store
 *
 * Since: 0.2
 */
SubagentApprovalSink *
subagent_approval_queue_get_sink (SubagentApprovalQueue *self)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), NULL);
  return self->sink;
}

/**
 * subagent_approval_queue_get_default_timeout:
 * @self: a queue
 *
 * Gets the default timeout in seconds.
 *
 * Returns: the default timeout in seconds
 *
 * Since: 0.2
 */
guint
subagent_approval_queue_get_default_timeout (SubagentApprovalQueue *self)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), SUBAGENT_APPROVAL_DEFAULT_TIMEOUT_SECONDS);
  return g_atomic_int_get (&self->default_timeout);
}

/**
 * subagent_approval_queue_set_default_timeout:
 * @self: a queue
 * @seconds: the timeout for new requests, 1 to %SUBAGENT_APPROVAL_MAX_TIMEOUT_SECONDS
 *
 * Sets #SubagentApprovalQueue:default-timeout.
 */
void
subagent_approval_queue_set_default_timeout (SubagentApprovalQueue *self,
                                             guint                  seconds)
{
  g_return_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self));
  g_return_if_fail (seconds >= 1 && seconds <= SUBAGENT_APPROVAL_MAX_TIMEOUT_SECONDS);

  if ((guint) g_atomic_int_exchange (&self->default_timeout, seconds) != seconds)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DEFAULT_TIMEOUT]);
}

/**
 * subagent_approval_queue_get_request:
 * @self: a queue
 * @request_id: a request id
 *
 * Gets the request, or %NULL if the queue does not hold it.
 *
 * Returns: (transfer full) (nullable): the request, or %NULL if the queue
 *   does not hold it
 *
 * Since: 0.2
 */
SubagentApprovalRequest *
subagent_approval_queue_get_request (SubagentApprovalQueue *self,
                                     const char            *request_id)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), NULL);
  return subagent_approval_queue_lookup (self, request_id);
}

typedef struct {
  SubagentApprovalRequest *request;
  GDateTime *created;
  guint64 seq;
} SortItem;

static int
compare_items (gconstpointer a,
               gconstpointer b)
{
  const SortItem *x = a, *y = b;
  int cmp = 0;

  if (x->created != NULL && y->created != NULL)
    cmp = g_date_time_compare (x->created, y->created);
  if (cmp == 0)
    cmp = x->seq < y->seq ? -1 : x->seq > y->seq;
  return cmp;
}

/**
 * subagent_approval_queue_list_pending:
 * @self: a queue
 *
 * A snapshot of the pending requests, oldest first (by `created_at`, then
 * by arrival). The array frees its elements when it is freed.
 *
 * Returns: (transfer container) (element-type SubagentApprovalRequest): the pending requests
 */
GPtrArray *
subagent_approval_queue_list_pending (SubagentApprovalQueue *self)
{
  g_autoptr(GTimeZone) utc = g_time_zone_new_utc ();
  g_autoptr(GArray) items = g_array_new (FALSE, FALSE, sizeof (SortItem));
  GPtrArray *pending = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), pending);

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->entries);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      SubagentApprovalEntry *entry = value;
      SortItem item;

      if (subagent_approval_status_is_terminal (subagent_approval_request_get_status (entry->request)))
        continue;
      item.request = g_object_ref (entry->request);
      item.seq = entry->seq;
      item.created = NULL;
      g_array_append_val (items, item);
    }
  g_mutex_unlock (&self->lock);

  for (guint i = 0; i < items->len; i++)
    {
      SortItem *item = &g_array_index (items, SortItem, i);
      item->created = g_date_time_new_from_iso8601 (subagent_approval_request_get_created_at (item->request), utc);
    }
  g_array_sort (items, compare_items);
  for (guint i = 0; i < items->len; i++)
    {
      SortItem *item = &g_array_index (items, SortItem, i);
      g_ptr_array_add (pending, item->request);
      g_clear_pointer (&item->created, g_date_time_unref);
    }
  return pending;
}

/**
 * subagent_approval_queue_pending_to_json:
 * @self: a queue
 *
 * The pending requests as subagent_approval_request_to_json() objects,
 * oldest first — what a UI lists for a person to answer.
 *
 * Returns: (transfer full): a JSON array
 */
JsonArray *
subagent_approval_queue_pending_to_json (SubagentApprovalQueue *self)
{
  g_autoptr(GPtrArray) pending = NULL;
  JsonArray *array = json_array_new ();

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), array);

  pending = subagent_approval_queue_list_pending (self);
  for (guint i = 0; i < pending->len; i++)
    json_array_add_object_element (array, subagent_approval_request_to_json (pending->pdata[i]));
  return array;
}

/**
 * subagent_approval_queue_cleanup:
 * @self: a queue
 *
 * Drops the terminal requests nobody waits for any more; pending requests
 * and those whose submitter has not yet returned stay. The store is not
 * changed.
 *
 * Returns: how many requests were dropped
 */
guint
subagent_approval_queue_cleanup (SubagentApprovalQueue *self)
{
  GHashTableIter iter;
  gpointer value;
  guint removed = 0;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_QUEUE (self), 0);

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->entries);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      SubagentApprovalEntry *entry = value;

      if (entry->waiters == 0 &&
          subagent_approval_status_is_terminal (subagent_approval_request_get_status (entry->request)))
        {
          g_hash_table_iter_remove (&iter);
          removed++;
        }
    }
  g_mutex_unlock (&self->lock);
  return removed;
}
