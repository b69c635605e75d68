/* approval-pg-combine.c: group commit for approval-postgres.
 *
 * A caller that finds nobody leading takes the whole queue (its own call
 * among it), carries it out without the lock, marks it done and gives the
 * lead up; a caller whose call is still queued then leads the calls that
 * arrived meanwhile. Nobody waits for a timer, so a lone call costs one
 * lock, and nobody leads for longer than one group.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "approval-pg-combine.h"

struct _ApgCombiner
{
  ApgCombineFunc func;
  gpointer user_data;
  GMutex lock;
  GCond done_cond;
  GPtrArray *queue;        /* ApgCombinedCall*, guarded by lock */
  gboolean leading;        /* a thread is carrying out calls */
};

ApgCombiner *
apg_combiner_new (ApgCombineFunc func,
                  gpointer       user_data)
{
  ApgCombiner *self = g_new0 (ApgCombiner, 1);

  self->func = func;
  self->user_data = user_data;
  g_mutex_init (&self->lock);
  g_cond_init (&self->done_cond);
  self->queue = g_ptr_array_new ();
  return self;
}

void
apg_combiner_free (ApgCombiner *self)
{
  g_assert (!self->leading && self->queue->len == 0);
  g_ptr_array_unref (self->queue);
  g_cond_clear (&self->done_cond);
  g_mutex_clear (&self->lock);
  g_free (self);
}

/* The combiner this thread is leading, if any. */
static GPrivate leading_here;

void
apg_combiner_run (ApgCombiner     *self,
                  ApgCombinedCall *call)
{
  /* A call made while leading (from a signal handler the work ran) would
   * wait for itself: it is carried out at once instead. */
  if (g_private_get (&leading_here) == self)
    {
      g_autoptr(GPtrArray) alone = g_ptr_array_new ();

      g_ptr_array_add (alone, call);
      self->func (alone, self->user_data);
      call->done = TRUE;
      return;
    }

  g_mutex_lock (&self->lock);
  call->done = FALSE;
  g_ptr_array_add (self->queue, call);
  while (!call->done)
    {
      g_autoptr(GPtrArray) group = NULL;
      gpointer previous;

      if (self->leading)
        {
          g_cond_wait (&self->done_cond, &self->lock);
          continue;
        }
      /* Our call is still queued: an earlier leader's group would have
       * marked it done before giving the lead up. */
      self->leading = TRUE;
      group = g_steal_pointer (&self->queue);
      self->queue = g_ptr_array_new ();
      g_mutex_unlock (&self->lock);
      previous = g_private_get (&leading_here);
      g_private_set (&leading_here, self);
      self->func (group, self->user_data);
      g_private_set (&leading_here, previous);
      g_mutex_lock (&self->lock);
      for (guint i = 0; i < group->len; i++)
        ((ApgCombinedCall *) group->pdata[i])->done = TRUE;
      /* Whoever is still queued takes the lead next. */
      self->leading = FALSE;
      g_cond_broadcast (&self->done_cond);
    }
  g_mutex_unlock (&self->lock);
}
