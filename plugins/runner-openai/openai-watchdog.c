/* openai-watchdog.c: cancels what overran its time.
 *
 * The agent loop runs blocking I/O in a thread of its own; a blocking
 * read returns as soon as its GCancellable fires, so timing out is
 * cancelling at the right moment. One thread per run keeps the deadlines:
 * the run's own (timeout_seconds) and the one I/O step armed at a time.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "openai-private.h"

struct _OpenaiWatchdog
{
  GMutex lock;
  GCond cond;
  GThread *thread;
  gboolean quit;

  GCancellable *run_stop;   /* cancelled when the run's deadline passes */
  gint64 run_deadline;      /* 0: none */
  gboolean run_expired;

  GCancellable *io;         /* armed step, or NULL */
  gint64 io_deadline;
  gboolean io_fired;
  gint64 wake_at;           /* when the thread wakes next; G_MAXINT64: only when signalled */
};

static gpointer
watchdog_thread (gpointer data)
{
  OpenaiWatchdog *self = data;

  g_mutex_lock (&self->lock);
  while (!self->quit)
    {
      gint64 now = g_get_monotonic_time ();
      gint64 next = G_MAXINT64;

      if (self->run_deadline != 0 && now >= self->run_deadline)
        {
          self->run_deadline = 0;
          self->run_expired = TRUE;
          g_cancellable_cancel (self->run_stop);
        }
      if (self->io != NULL && now >= self->io_deadline)
        {
          self->io_fired = TRUE;
          g_cancellable_cancel (self->io);
          g_clear_object (&self->io);
        }
      if (self->run_deadline != 0)
        next = MIN (next, self->run_deadline);
      if (self->io != NULL)
        next = MIN (next, self->io_deadline);
      self->wake_at = next;
      if (next == G_MAXINT64)
        g_cond_wait (&self->cond, &self->lock);
      else
        g_cond_wait_until (&self->cond, &self->lock, next);
    }
  g_mutex_unlock (&self->lock);
  return NULL;
}

OpenaiWatchdog *
openai_watchdog_new (GCancellable *run_stop,
                     guint         run_timeout_seconds)
{
  OpenaiWatchdog *self = g_new0 (OpenaiWatchdog, 1);

  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->run_stop = g_object_ref (run_stop);
  self->wake_at = 0;
  if (run_timeout_seconds > 0)
    self->run_deadline = g_get_monotonic_time () + (gint64) run_timeout_seconds * G_USEC_PER_SEC;
  self->thread = g_thread_new ("subagent-model-watchdog", watchdog_thread, self);
  return self;
}

void
openai_watchdog_free (OpenaiWatchdog *self)
{
  if (self == NULL)
    return;
  g_mutex_lock (&self->lock);
  self->quit = TRUE;
  g_cond_signal (&self->cond);
  g_mutex_unlock (&self->lock);
  g_thread_join (self->thread);
  g_clear_object (&self->io);
  g_object_unref (self->run_stop);
  g_cond_clear (&self->cond);
  g_mutex_clear (&self->lock);
  g_free (self);
}

void
openai_watchdog_arm (OpenaiWatchdog *self,
                     GCancellable   *io,
                     gint64          deadline_us)
{
  g_mutex_lock (&self->lock);
  g_set_object (&self->io, io);
  self->io_deadline = deadline_us;
  self->io_fired = FALSE;
  /* Re-arming moves the deadline later: the thread finds that out when it
   * wakes, so only an earlier deadline needs to wake it (one less context
   * switch per stream line). */
  if (deadline_us < self->wake_at)
    g_cond_signal (&self->cond);
  g_mutex_unlock (&self->lock);
}

gboolean
openai_watchdog_disarm (OpenaiWatchdog *self)
{
  gboolean fired;

  g_mutex_lock (&self->lock);
  g_clear_object (&self->io);
  fired = self->io_fired;
  self->io_fired = FALSE;
  g_mutex_unlock (&self->lock);
  return fired;
}

gboolean
openai_watchdog_run_expired (OpenaiWatchdog *self)
{
  gboolean expired;

  g_mutex_lock (&self->lock);
  expired = self->run_expired;
  g_mutex_unlock (&self->lock);
  return expired;
}

void
openai_cancel_other (GCancellable *cancellable,
                     gpointer      other)
{
  g_cancellable_cancel (G_CANCELLABLE (other));
}
