/* subagent-fd-watch.c: descriptors of many runs watched by one epoll
 * source per main context.
 *
 * Each command child has three descriptors the host waits on: stdout,
 * stderr and its pidfd. As GSources of their own (GLib 2.74), every
 * descriptor added or removed wakes the context (g_main_context_add_poll()
 * writes its eventfd, then the loop goes round once more to rebuild its
 * poll set), and each source is allocated, attached, checked at every
 * iteration and destroyed per child. Here the descriptors of all runs of a
 * context are in one epoll instance, which is the one descriptor of one
 * source that lives as long as the context: a child costs an
 * epoll_ctl() to add and one to remove each descriptor, nothing more.
 *
 * Watches are level-triggered, like GLib's. A callback may remove any
 * watch, its own included; a removed watch is not called again, even for
 * an event already read in the same dispatch. The source may recurse (a
 * callback may iterate the context, as a handler that waits for another
 * child does): a watch whose callback is running is not called from the
 * nested iteration, and is left out of the epoll set meanwhile so that the
 * nested loop does not spin on it, as GLib blocks a source that is being
 * dispatched.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <glib-unix.h>

#include "subagent-context-source-private.h"
#include "subagent-fd-watch-private.h"

typedef struct {
  GSource source;
  GMainContext *context;         /* not a reference: its key in @sources */
  int epfd;
  guint dispatching;             /* depth of nested dispatches */
  GSList *dead;                  /* removed while dispatching, freed after */
} EpollSource;

struct _SubagentFdWatch {
  EpollSource *owner;            /* NULL when @fallback is used */
  GSource *fallback;             /* no epoll instance could be made */
  int fd;
  guint32 events;
  SubagentFdWatchFunc func;
  gpointer user_data;
  gboolean removed;
  gboolean running;              /* its callback is on the stack */
  gboolean suspended;            /* left out of the epoll set meanwhile */
};

static SubagentContextSources sources;

static guint32
to_epoll (GIOCondition condition)
{
  return (condition & G_IO_IN ? EPOLLIN : 0) | (condition & G_IO_OUT ? EPOLLOUT : 0) |
         (condition & G_IO_PRI ? EPOLLPRI : 0);
}

static GIOCondition
to_condition (guint32 events)
{
  return (events & EPOLLIN ? G_IO_IN : 0) | (events & EPOLLOUT ? G_IO_OUT : 0) |
         (events & EPOLLPRI ? G_IO_PRI : 0) | (events & EPOLLERR ? G_IO_ERR : 0) |
         (events & EPOLLHUP ? G_IO_HUP : 0);
}

/* In or out of the epoll set. Out rather than no events: a hung-up pipe
 * reports EPOLLHUP whatever the events asked for. */
static void
set_listening (SubagentFdWatch *watch,
               gboolean         listening)
{
  struct epoll_event event = { .events = watch->events, .data.ptr = watch };

  if (epoll_ctl (watch->owner->epfd, listening ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, watch->fd, &event) != 0)
    g_debug ("Cannot %s descriptor %d in the epoll set: %s", listening ? "put back" : "leave out", watch->fd,
             g_strerror (errno));
}

static void
call_watch (SubagentFdWatch *watch,
            GIOCondition     condition)
{
  watch->running = TRUE;
  watch->func (watch->fd, condition, watch->user_data);
  watch->running = FALSE;
  if (!watch->removed && watch->suspended)
    {
      watch->suspended = FALSE;
      set_listening (watch, TRUE);
    }
}

static gboolean
epoll_source_dispatch (GSource     *source,
                       GSourceFunc  callback,
                       gpointer     user_data)
{
  EpollSource *self = (EpollSource *) source;
  struct epoll_event events[16];
  int n;

  do
    n = epoll_wait (self->epfd, events, G_N_ELEMENTS (events), 0);
  while (n < 0 && errno == EINTR);

  self->dispatching++;
  for (int i = 0; i < n; i++)
    {
      SubagentFdWatch *watch = events[i].data.ptr;

      if (watch->removed)
        continue;
      if (watch->running)
        {
          /* A nested iteration: its callback is still on the stack. */
          if (!watch->suspended)
            {
              watch->suspended = TRUE;
              set_listening (watch, FALSE);
            }
          continue;
        }
      call_watch (watch, to_condition (events[i].events));
    }
  if (--self->dispatching == 0)
    g_slist_free_full (g_steal_pointer (&self->dead), g_free);
  return G_SOURCE_CONTINUE;
}

static void
epoll_source_finalize (GSource *source)
{
  EpollSource *self = (EpollSource *) source;

  _subagent_context_source_forget (&sources, self->context, source);
  g_slist_free_full (g_steal_pointer (&self->dead), g_free);
  close (self->epfd);
}

static GSourceFuncs epoll_source_funcs = {
  NULL, NULL, epoll_source_dispatch, epoll_source_finalize, NULL, NULL,
};

static GSource *
epoll_source_new (GMainContext *context)
{
  EpollSource *self;
  int epfd = epoll_create1 (EPOLL_CLOEXEC);

  if (epfd < 0)
    return NULL;
  self = (EpollSource *) g_source_new (&epoll_source_funcs, sizeof (EpollSource));
  self->context = context;
  self->epfd = epfd;
  g_source_add_unix_fd (&self->source, epfd, G_IO_IN);
  g_source_set_can_recurse (&self->source, TRUE);
  g_source_set_static_name (&self->source, "[libsubagent] command children's descriptors");
  return &self->source;
}

/* The context's source, made at its first watch; it goes with the context. */
static EpollSource *
source_for (GMainContext *context)
{
  return (EpollSource *) _subagent_context_source_get (&sources, context, epoll_source_new);
}

static gboolean
on_fallback_ready (int           fd,
                   GIOCondition  condition,
                   gpointer      user_data)
{
  SubagentFdWatch *watch = user_data;

  watch->func (fd, condition, watch->user_data);
  return G_SOURCE_CONTINUE;
}

/* Watches @fd for @events (and errors and hangups, always) in @context
 * until _subagent_fd_watch_remove(), which must come before @fd is closed. */
SubagentFdWatch *
_subagent_fd_watch_add (GMainContext        *context,
                        int                  fd,
                        GIOCondition         events,
                        SubagentFdWatchFunc  func,
                        gpointer             user_data)
{
  SubagentFdWatch *watch = g_new0 (SubagentFdWatch, 1);
  EpollSource *owner;

  if (context == NULL)
    context = g_main_context_default ();
  watch->fd = fd;
  watch->events = to_epoll (events);
  watch->func = func;
  watch->user_data = user_data;
  owner = source_for (context);
  if (owner != NULL)
    {
      struct epoll_event event = { .events = watch->events, .data.ptr = watch };

      if (epoll_ctl (owner->epfd, EPOLL_CTL_ADD, fd, &event) == 0)
        {
          watch->owner = owner;
          return watch;
        }
      g_debug ("Cannot watch descriptor %d through epoll: %s", fd, g_strerror (errno));
    }
  /* A GSource of its own, as before. */
  watch->fallback = g_unix_fd_source_new (fd, events | G_IO_HUP | G_IO_ERR);
  g_source_set_callback (watch->fallback, (GSourceFunc) (void (*) (void)) on_fallback_ready, watch, NULL);
  g_source_set_static_name (watch->fallback, "[libsubagent] command child descriptor");
  g_source_attach (watch->fallback, context);
  return watch;
}

/* Stops watching; @watch is freed (after the dispatch that is running, if
 * any). Call it in the watch's context, before closing the descriptor. */
void
_subagent_fd_watch_remove (SubagentFdWatch *watch)
{
  EpollSource *owner;

  if (watch == NULL)
    return;
  if (watch->fallback != NULL)
    {
      g_source_destroy (watch->fallback);
      g_source_unref (watch->fallback);
      g_free (watch);
      return;
    }
  owner = watch->owner;
  if (!watch->suspended && epoll_ctl (owner->epfd, EPOLL_CTL_DEL, watch->fd, NULL) != 0)
    g_debug ("Cannot stop watching descriptor %d: %s", watch->fd, g_strerror (errno));
  watch->removed = TRUE;
  if (owner->dispatching > 0 || watch->running)
    owner->dead = g_slist_prepend (owner->dead, watch);
  else
    g_free (watch);
}
