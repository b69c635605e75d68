/* approval-file-commit.c: the writes of the approval-file store: saves
 * and verdicts, committed in groups (one locked read-modify-write and one
 * fsync'd atomic write for the operations of a run that meet in this
 * process).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "approval-file-format.h"
#include "approval-file-io.h"
#include "approval-file-store.h"
#include "approval-file-store-private.h"

/* Group commit. Saves and verdicts of one run that meet in this process
 * share one locked read-modify-write and one fsync'd atomic write: the
 * first caller becomes the writer, applies every operation queued until it
 * holds the lock and has applied the ones before, in order, to the version
 * it read under the lock, writes once and completes each with its own
 * result. Callers that arrive later queue up for the next write. Each operation
 * sees exactly the state the ones before it left, as if they had run one
 * by one, so the compare-and-set of every verdict stays exact.
 *
 * Callers that come together once (the children of a batch submitting,
 * an approver deciding what it sees pending from several threads) tend to
 * come together again, but not at the same microsecond: so a writer first
 * waits for as many operations as the run's recent writes here had, for at
 * most as long as its last write took (see linger()). A run whose writes
 * all had one operation never waits. */
typedef enum { OP_QUEUED, OP_TAKEN, OP_DONE } OpState;

typedef struct {
  /* save */
  GPtrArray *requests;
  /* update_status */
  const char *request_id;
  SubagentApprovalStatus status;
  const char *reason;
  const char *actor;
  /* out */
  OpState state;
  gboolean lost;           /* a verdict whose request some version showed decided */
  gboolean result;
  gboolean changed;        /* it changed the version being written */
  GError *error;
  gboolean follows;        /* not the first operation of one caller's batch */
  /* No look at the file before the lock: a verdict its caller just saw
   * pending (unlocked), or a save, which has nothing to settle there (a
   * version new to this process found under the lock is still parsed with
   * the lock let go). */
  gboolean checked;
} Op;

#define RECENT_WRITES 8
#define LINGER_MAX_US 2000
#define QUEUES_MAX_RUNS 32

typedef struct {
  GPtrArray *queued;       /* Op*, in arrival order */
  gboolean writing;        /* a writer holds (or is taking) the run's lock */
  gboolean lingering;      /* the writer waits for more operations */
  /* This run's recent writes in this process: */
  guint batch_sizes[RECENT_WRITES];
  guint next_size;
  gint64 last_write_us;    /* from waiting for the lock to the directory fsync */
} RunQueue;

static void
run_queue_free (gpointer data)
{
  RunQueue *queue = data;

  g_ptr_array_unref (queue->queued);
  g_free (queue);
}

static guint
run_queue_recent_batch (RunQueue *queue)
{
  guint most = 0;

  for (guint i = 0; i < RECENT_WRITES; i++)
    most = MAX (most, queue->batch_sizes[i]);
  return most;
}

/* Call with commit_mutex held, when nobody uses @queue. A queue that
 * remembers shared writes is kept for the next ones, while few are kept. */
static void
run_queue_release (AfsStore   *self,
                   const char *run_id,
                   RunQueue   *queue)
{
  if (queue->queued->len > 0)
    return;
  if (run_queue_recent_batch (queue) > 1 && g_hash_table_size (self->queues) <= QUEUES_MAX_RUNS)
    return;
  g_hash_table_remove (self->queues, run_id);
}

/* How many operations of @batch came with an earlier one of the same call. */
static guint
batch_extra_ops (GPtrArray *batch)
{
  guint extra = 0;

  for (guint i = 0; i < batch->len; i++)
    extra += ((Op *) batch->pdata[i])->follows;
  return extra;
}

static void
apply_save (GPtrArray *working,
            Op        *op)
{
  for (guint i = 0; i < op->requests->len; i++)
    {
      SubagentApprovalRequest *given = op->requests->pdata[i];
      SubagentApprovalRequest *old;
      g_autofree char *new_text = NULL;
      guint slot = 0;

      old = afs_requests_find (working, subagent_approval_request_get_request_id (given), &slot);
      /* A stored verdict is final: whatever the caller holds loses. */
      if (old != NULL && subagent_approval_request_get_status (old) != SUBAGENT_APPROVAL_STATUS_PENDING)
        continue;
      if (old != NULL)
        {
          new_text = afs_request_canonical (given);
          if (g_str_equal (afs_request_text (old, TRUE), new_text))
            continue;
          g_object_unref (working->pdata[slot]);
          working->pdata[slot] = subagent_approval_request_copy (given);
        }
      else
        g_ptr_array_add (working, subagent_approval_request_copy (given));
      op->changed = TRUE;
    }
  op->result = TRUE;
}

/* Whether @request_id is in @requests and pending; *slot gets its index. */
static gboolean
is_pending (GPtrArray  *requests,
            const char *request_id,
            guint      *slot)
{
  SubagentApprovalRequest *target = afs_requests_find (requests, request_id, slot);

  return target != NULL && subagent_approval_request_get_status (target) == SUBAGENT_APPROVAL_STATUS_PENDING;
}

static void
apply_update (AfsStore  *self,
              GPtrArray *working,
              Op        *op)
{
  g_autoptr(SubagentApprovalRequest) decided = NULL;
  guint slot = 0;

  if (!is_pending (working, op->request_id, &slot))
    return;
  decided = subagent_approval_request_copy (working->pdata[slot]);
  if (!subagent_approval_request_transition (decided, op->status, op->reason, op->actor))
    return;
  g_object_unref (working->pdata[slot]);
  working->pdata[slot] = g_steal_pointer (&decided);
  op->result = op->changed = TRUE;
}

static void
fail_ops (GPtrArray    *ops,
          const GError *error,
          gboolean      only_changed)
{
  for (guint i = 0; i < ops->len; i++)
    {
      Op *op = ops->pdata[i];

      /* A save that changed nothing may still rest on an earlier one of
       * the batch (the same request), so every save fails with the write. */
      if (only_changed && !op->changed && op->requests == NULL)
        continue;
      op->result = FALSE;
      g_clear_error (&op->error);
      op->error = g_error_copy (error);
    }
}

/* A verdict is final, so an update whose request @version already shows
 * decided has lost its compare-and-set in every later version too: it is
 * settled without the lock. Without this, the losers of a race queue on
 * the flock behind the winner only to find the request decided, each one
 * parsing the winner's version while it holds the lock (a convoy that
 * grows with the number of deciders). A request missing from @version is
 * not settled: a save earlier in the batch may add it. Returns whether
 * every operation is settled. */
static gboolean
settle_lost_updates (GPtrArray *version,
                     gpointer   data)
{
  GPtrArray *ops = data;
  gboolean all = TRUE;

  for (guint i = 0; i < ops->len; i++)
    {
      Op *op = ops->pdata[i];
      SubagentApprovalRequest *request;
      guint slot = 0;

      if (op->requests == NULL && !op->lost
          && (request = afs_requests_find (version, op->request_id, &slot)) != NULL
          && subagent_approval_request_get_status (request) != SUBAGENT_APPROVAL_STATUS_PENDING)
        op->lost = TRUE;
      all &= op->lost;
    }
  return all;
}

/* Moves the operations queued for @run_id since @ops was taken to the end
 * of @ops, and returns how many. The writer calls it with the run's lock
 * held: callers that arrived while it waited for the lock (often held by
 * another process's write) or read the file join this write rather than
 * wait for it and make one more. */
static guint
take_queued (AfsStore   *self,
             const char *run_id,
             GPtrArray  *ops)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->commit_mutex);
  RunQueue *queue = g_hash_table_lookup (self->queues, run_id);
  guint taken = queue->queued->len;

  for (guint i = 0; i < taken; i++)
    {
      ((Op *) queue->queued->pdata[i])->state = OP_TAKEN;
      g_ptr_array_add (ops, queue->queued->pdata[i]);
    }
  g_ptr_array_set_size (queue->queued, 0);
  return taken;
}

/* Whether no operation of @ops needs a look at the file before the lock
 * (see Op.checked). */
static gboolean
all_checked (GPtrArray *ops)
{
  for (guint i = 0; i < ops->len; i++)
    if (!((Op *) ops->pdata[i])->checked)
      return FALSE;
  return TRUE;
}

/* One locked read-modify-write for @ops, in order, and for the operations
 * that join them once the lock is held. */
static void
write_batch (AfsStore   *self,
             const char *run_id,
             GPtrArray  *ops)
{
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GPtrArray) working = NULL;
  g_autoptr(GError) read_error = NULL;
  g_autoptr(GError) write_error = NULL;
  g_autoptr(GBytes) on_disk = NULL;
  gboolean changed = FALSE;
  guint next = 0;
  AfsSpare replaced = AFS_SPARE_INIT;
  int lock_fd;

  lock_fd = afs_store_lock_and_read (self, run_id, all_checked (ops), settle_lost_updates, ops, &stored, &on_disk, &read_error);
  if (lock_fd < 0 && read_error == NULL)
    return;
  if (lock_fd >= 0)
    take_queued (self, run_id, ops);
  if (lock_fd < 0 || (stored == NULL
                      && !g_error_matches (read_error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY)))
    {
      afs_unlock (lock_fd);
      fail_ops (ops, read_error, FALSE);
      return;
    }
  if (stored != NULL)
    working = afs_requests_share (stored);
  else if (self->key != NULL)
    {
      /* A file that fails its signature must not hide the requests this
       * host knows are pending: it goes aside, the last trusted version
       * comes back, and the approver is told. */
      g_autoptr(GPtrArray) trusted = afs_store_cache_last_trusted (self, run_id);
      g_autofree char *aside = afs_store_quarantine (self, run_id);

      if (aside != NULL)
        g_prefix_error (&read_error, "moved aside to %s: ", aside);
      afs_store_report_integrity (self, run_id, read_error);
      if (trusted != NULL)
        {
          working = afs_requests_share (trusted);
          changed = TRUE;
        }
    }

  /* Operations that join while these are applied come after them, in
   * their order, on the same version. They missed settle_lost_updates(),
   * which only saves work: an update that lost finds its request decided
   * in @working. */
  do
    {
      for (; next < ops->len; next++)
        {
          Op *op = ops->pdata[next];

          if (op->lost)
            continue;
          if (working == NULL && op->requests == NULL)
            {
              /* Rewriting an untrusted file would sign what someone else wrote. */
              afs_store_report_integrity (self, run_id, read_error);
              op->error = g_error_copy (read_error);
              continue;
            }
          if (working == NULL)
            {
              /* Nothing of an untrusted file is kept (so nothing of it gets
               * signed): the caller's requests replace it. */
              afs_store_report_integrity (self, run_id, read_error);
              working = g_ptr_array_new_with_free_func (g_object_unref);
              changed = TRUE;
            }
          if (op->requests != NULL)
            apply_save (working, op);
          else
            apply_update (self, working, op);
          changed |= op->changed;
        }
    }
  while (take_queued (self, run_id, ops) > 0);

  if (changed && !afs_store_write_requests (self, run_id, working, on_disk, &replaced, &write_error))
    changed = FALSE;
  afs_unlock (lock_fd);
  /* The directory fsync comes after unlocking: other processes' writes
   * overlap it. */
  if (write_error == NULL && changed)
    afs_store_sync_dir (self, &write_error);
  /* Then the replaced version becomes the next write's temp inode, or
   * goes (its inode freed, which on an ext4 mounted with `discard`, as
   * here, waits for the device: 0.1 to 0.6 ms) and a spare inode is made.
   * Freeing and making were tried in a thread of their own, so that the
   * caller returns at the directory fsync: one at a time, it made no
   * difference beyond the noise of this disk (median 40 % against 41 % of
   * the bare write rate, 6 runs each), for two more context switches a
   * write. Keeping the replaced version took one at a time from 34–36 %
   * to 43–48 % of the bare write rate (alternating runs, 4 December). */
  if (write_error == NULL)
    afs_store_keep_spare (self, &replaced);
  afs_spare_clear (&replaced);
  if (changed)
    afs_store_make_spare (self);
  if (write_error != NULL)
    fail_ops (ops, write_error, TRUE);
}

/* The writer of @queue, before it locks: waits for as many operations as
 * the run's recent writes here had, for at most the time its last write
 * took. An operation that comes within that time would otherwise cost a
 * write of its own. Called and returns with commit_mutex held. */
static void
linger (AfsStore *self,
        RunQueue *queue)
{
  guint expected = run_queue_recent_batch (queue);
  gint64 until = g_get_monotonic_time () + MIN (queue->last_write_us, LINGER_MAX_US);

  queue->lingering = TRUE;
  while (queue->queued->len < expected)
    if (!g_cond_wait_until (&self->linger_cond, &self->commit_mutex, until))
      break;
  queue->lingering = FALSE;
}

/* Queues @ops (all at once, so that one write takes them all) and waits
 * until a writer, perhaps this thread, has completed them. */
static void
commit_ops (AfsStore    *self,
            const char  *run_id,
            Op         **ops,
            guint        n_ops)
{
  Op *last = ops[n_ops - 1];

  g_mutex_lock (&self->commit_mutex);
  {
    RunQueue *queue = g_hash_table_lookup (self->queues, run_id);

    if (queue == NULL)
      {
        queue = g_new0 (RunQueue, 1);
        queue->queued = g_ptr_array_new ();
        g_hash_table_insert (self->queues, g_strdup (run_id), queue);
      }
    for (guint i = 0; i < n_ops; i++)
      g_ptr_array_add (queue->queued, ops[i]);
    if (queue->lingering)
      g_cond_broadcast (&self->linger_cond);
  }
  /* Writers take the whole queue: our operations finish together. */
  while (last->state != OP_DONE)
    {
      RunQueue *queue = g_hash_table_lookup (self->queues, run_id);
      g_autoptr(GPtrArray) batch = NULL;
      gint64 started;

      /* Our operations are queued (the queue exists) or taken by a writer. */
      if (last->state != OP_QUEUED || queue->writing)
        {
          g_cond_wait (&self->commit_cond, &self->commit_mutex);
          continue;
        }
      queue->writing = TRUE;
      linger (self, queue);
      batch = g_steal_pointer (&queue->queued);
      queue->queued = g_ptr_array_new ();
      for (guint i = 0; i < batch->len; i++)
        ((Op *) batch->pdata[i])->state = OP_TAKEN;
      g_mutex_unlock (&self->commit_mutex);

      started = g_get_monotonic_time ();
      write_batch (self, run_id, batch);

      g_mutex_lock (&self->commit_mutex);
      queue = g_hash_table_lookup (self->queues, run_id);
      queue->writing = FALSE;
      queue->last_write_us = g_get_monotonic_time () - started;
      /* What the next writer may wait for is other callers' operations,
       * not the size of one caller's batch: a batch counts as one. */
      queue->batch_sizes[queue->next_size++ % RECENT_WRITES] = batch->len - batch_extra_ops (batch);
      run_queue_release (self, run_id, queue);
      for (guint i = 0; i < batch->len; i++)
        ((Op *) batch->pdata[i])->state = OP_DONE;
      g_cond_broadcast (&self->commit_cond);
    }
  g_mutex_unlock (&self->commit_mutex);
}

static gboolean
commit_op (AfsStore    *self,
           const char  *run_id,
           Op          *op,
           GError     **error)
{
  commit_ops (self, run_id, &op, 1);
  if (op->error != NULL)
    {
      g_propagate_error (error, op->error);
      return FALSE;
    }
  return op->result;
}

gboolean
afs_store_save (AfsStore    *self,
                const char  *parent_run_id,
                GPtrArray   *requests,
                GError     **error)
{
  Op op = { .requests = requests, .checked = TRUE };

  return commit_op (self, parent_run_id, &op, error);
}

static gboolean
update_failed (AfsStore    *self,
               const char  *run_id,
               GError      *local_error,
               GError     **error)
{
  if (g_error_matches (local_error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY))
    afs_store_report_integrity (self, run_id, local_error);
  g_propagate_error (error, local_error);
  return FALSE;
}

gboolean
afs_store_update_status (AfsStore                *self,
                         const char              *parent_run_id,
                         const char              *request_id,
                         SubagentApprovalStatus   status,
                         const char              *reason,
                         const char              *actor,
                         GError                 **error)
{
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) local_error = NULL;
  Op op = { .request_id = request_id, .status = status, .reason = reason, .actor = actor, .checked = TRUE };
  guint slot = 0;

  /* A verdict, once in any version of the file, is final: a request seen
   * decided (or missing) there fails the compare-and-set without the lock,
   * so the racers that lose do not queue up behind the winner. No file, no
   * request: no lock file is left behind for a mistyped run. */
  stored = afs_store_read_requests (self, parent_run_id, TRUE, &local_error);
  if (stored == NULL)
    return update_failed (self, parent_run_id, g_steal_pointer (&local_error), error);
  if (!is_pending (stored, request_id, &slot))
    return FALSE;
  return commit_op (self, parent_run_id, &op, error);
}

gboolean
afs_store_update_batch (AfsStore                *self,
                        const char              *parent_run_id,
                        const char * const      *request_ids,
                        guint                    n_requests,
                        SubagentApprovalStatus   status,
                        const char              *reason,
                        const char              *actor,
                        gboolean                *won,
                        GError                 **error)
{
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *path = afs_run_file_path (self->dir, parent_run_id);
  g_autofree Op *ops = NULL;
  g_autofree Op **queued = NULL;
  g_autoptr(GHashTable) asked = g_hash_table_new (g_str_hash, g_str_equal);
  GError *failure = NULL;
  guint n_queued = 0;

  memset (won, 0, n_requests * sizeof (gboolean));
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return TRUE;
  /* As in afs_store_update_status(): what some version shows decided (or
   * does not hold) has lost already; an id given twice is asked once. */
  stored = afs_store_read_requests (self, parent_run_id, TRUE, &local_error);
  if (stored == NULL)
    return update_failed (self, parent_run_id, g_steal_pointer (&local_error), error);
  ops = g_new0 (Op, n_requests);
  queued = g_new0 (Op *, n_requests);
  for (guint i = 0; i < n_requests; i++)
    {
      guint slot = 0;

      if (!g_hash_table_add (asked, (gpointer) request_ids[i]) || !is_pending (stored, request_ids[i], &slot))
        continue;
      ops[i] = (Op) { .request_id = request_ids[i], .status = status, .reason = reason, .actor = actor,
                      .follows = n_queued > 0, .checked = TRUE };
      queued[n_queued++] = &ops[i];
    }
  if (n_queued == 0)
    return TRUE;

  /* One write for all: each operation is still its own compare-and-set,
   * applied in order to the version read under the lock. */
  commit_ops (self, parent_run_id, queued, n_queued);
  for (guint i = 0; i < n_requests; i++)
    {
      if (ops[i].request_id == NULL)
        continue;
      won[i] = ops[i].error == NULL && ops[i].result;
      if (ops[i].error != NULL && failure == NULL)
        failure = g_steal_pointer (&ops[i].error);
      g_clear_error (&ops[i].error);
    }
  if (failure != NULL)
    {
      memset (won, 0, n_requests * sizeof (gboolean));
      g_propagate_error (error, failure);
      return FALSE;
    }
  return TRUE;
}

void
afs_store_commit_init (AfsStore *self)
{
  g_mutex_init (&self->commit_mutex);
  g_cond_init (&self->commit_cond);
  g_cond_init (&self->linger_cond);
  self->queues = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, run_queue_free);
}

void
afs_store_commit_clear (AfsStore *self)
{
  g_hash_table_unref (self->queues);
  g_cond_clear (&self->linger_cond);
  g_cond_clear (&self->commit_cond);
  g_mutex_clear (&self->commit_mutex);
}
