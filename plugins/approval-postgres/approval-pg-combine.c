/* approval-pg-combine.c: group commit for approval-postgres.
 *
 * A caller that finds nobody leading takes the whole queue (its own call
 * among it), carries it out without the lock, marks it done and gives the
 * lead up; a caller whose call is still queued then leads the calls that
 * arrived meanwhile. Nobody leads for longer than one group.
 *
 * Callers that came together once (an approver deciding from several
 * threads what it saw pending, the children of a batch submitting) come
 * together again, but not at the same microsecond: so a leader first waits
 * for as many calls as the recent groups had, for at most as long as the
 * last group took (and never over LINGER_MAX_US), as the file store's
 * writer does. Where every recent group had one call, nobody waits.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "approval-pg-combine.h"

#define RECENT_GROUPS 8
#define LINGER_MAX_US 2000

struct _ApgCombiner
{
  ApgCombineFunc func;
  ApgSameGroupFunc same_group;
  gpointer user_data;
  GMutex lock;
  GCond done_cond;
  GPtrArray *queue;        /* ApgCombinedCall*, guarded by lock */
  gboolean leading;        /* a thread is carrying out calls */
  gboolean lingering;      /* the leader waits for more calls */
  GCond linger_cond;
  /* The recent groups, guarded by lock: */
  guint group_sizes[RECENT_GROUPS];
  guint next_size;
  gint64 last_group_us;
};

/* Called and returns with the lock held. */
static void
linger (ApgCombiner *self)
{
  guint expected = 1;
  gint64 until;

  for (guint i = 0; i < RECENT_GROUPS; i++)
    expected = MAX (expected, self->group_sizes[i]);
  if (self->queue->len >= expected)
    return;
  until = g_get_monotonic_time () + MIN (self->last_group_us, LINGER_MAX_US);
  self->lingering = TRUE;
  while (self->queue->len < expected)
    if (!g_cond_wait_until (&self->linger_cond, &self->lock, until))
      break;
  self->lingering = FALSE;
}

ApgCombiner *
apg_combiner_new (ApgCombineFunc   func,
                  ApgSameGroupFunc same_group,
                  gpointer         user_data)
{
  ApgCombiner *self = g_new0 (ApgCombiner, 1);

  self->func = func;
  self->same_group = same_group;
  self->user_data = user_data;
  g_mutex_init (&self->lock);
  g_cond_init (&self->done_cond);
  g_cond_init (&self->linger_cond);
  self->queue = g_ptr_array_new ();
  return self;
}

void
apg_combiner_free (ApgCombiner *self)
{
  g_assert (!self->leading && self->queue->len == 0);
  g_ptr_array_unref (self->queue);
  g_cond_clear (&self->done_cond);
  g_cond_clear (&self->linger_cond);
  g_mutex_clear (&self->lock);
  g_free (self);
}

/* Hands @calls to the combine function group by group (calls that may
 * share a statement), each group in arrival order. */
static void
carry_out (ApgCombiner *self,
           GPtrArray   *calls)
{
  g_autofree gboolean *taken = g_new0 (gboolean, calls->len);

  for (guint i = 0; i < calls->len; i++)
    {
      g_autoptr(GPtrArray) group = NULL;

      if (taken[i])
        continue;
      group = g_ptr_array_new ();
      for (guint j = i; j < calls->len; j++)
        if (!taken[j] && self->same_group (calls->pdata[i], calls->pdata[j]))
          {
            taken[j] = TRUE;
            g_ptr_array_add (group, calls->pdata[j]);
          }
      self->func (group, self->user_data);
    }
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
      carry_out (self, alone);
      call->done = TRUE;
      return;
    }

  g_mutex_lock (&self->lock);
  call->done = FALSE;
  g_ptr_array_add (self->queue, call);
  if (self->lingering)
    g_cond_signal (&self->linger_cond);
  while (!call->done)
    {
      g_autoptr(GPtrArray) group = NULL;
      gpointer previous;
      gint64 started;

      if (self->leading)
        {
          g_cond_wait (&self->done_cond, &self->lock);
          continue;
        }
      /* Our call is still queued: an earlier leader's group would have
       * marked it done before giving the lead up. */
      self->leading = TRUE;
      linger (self);
      group = g_steal_pointer (&self->queue);
      self->queue = g_ptr_array_new ();
      g_mutex_unlock (&self->lock);
      previous = g_private_get (&leading_here);
      g_private_set (&leading_here, self);
      started = g_get_monotonic_time ();
      carry_out (self, group);
      g_private_set (&leading_here, previous);
      g_mutex_lock (&self->lock);
      self->last_group_us = g_get_monotonic_time () - started;
      self->group_sizes[self->next_size++ % RECENT_GROUPS] = group->len;
      for (guint i = 0; i < group->len; i++)
        ((ApgCombinedCall *) group->pdata[i])->done = TRUE;
      /* Whoever is still queued takes the lead next. */
      self->leading = FALSE;
      g_cond_broadcast (&self->done_cond);
    }
  g_mutex_unlock (&self->lock);
}
