/* subagent-deadline.c: wall-clock limits of many runs on one source per
 * main context.
 *
 * Every command run has a wall-clock limit, and nearly every child ends
 * long before it. As a timeout GSource each, a child cost a source
 * allocated, attached (the context's lock, its sorted source list), looked
 * at in every iteration of the loop and destroyed. Here the deadlines of
 * all runs of a context are a list in time order on one source that lives
 * as long as the context, whose ready time is the first deadline: a child
 * costs a list link, and the context's lock only when its deadline comes
 * first. Runs with the same limit start in time order, so a new deadline
 * usually goes last, and the first to end is usually the first.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent-context-source-private.h"
#include "subagent-deadline-private.h"

typedef struct {
  GSource source;
  GMainContext *context;         /* not a reference: its key in @sources */
  GQueue deadlines;              /* SubagentDeadline, earliest first */
} DeadlineSource;

struct _SubagentDeadline {
  DeadlineSource *owner;
  GList link;                    /* in @owner->deadlines */
  gint64 when;
  GSourceFunc func;
  gpointer data;
  GDestroyNotify destroy;
};

static SubagentContextSources sources;

/* The source's ready time is never later than the first deadline, but may
 * be earlier: a removed deadline leaves it as it was, to be found past at
 * its time (nothing due then), because g_source_set_ready_time() wakes the
 * context each time, its own thread included (GLib 2.74): a run that ends
 * would cost a turn of the loop. */
static void
update_ready_time (DeadlineSource *self)
{
  GList *first = g_queue_peek_head_link (&self->deadlines);
  gint64 when = first != NULL ? ((SubagentDeadline *) first->data)->when : -1;

  if (g_source_get_ready_time (&self->source) != when)
    g_source_set_ready_time (&self->source, when);
}

static void
deadline_free (SubagentDeadline *deadline)
{
  if (deadline->destroy != NULL)
    deadline->destroy (deadline->data);
  g_free (deadline);
}

static gboolean
deadline_source_dispatch (GSource     *source,
                          GSourceFunc  callback,
                          gpointer     user_data)
{
  DeadlineSource *self = (DeadlineSource *) source;
  gint64 now = g_source_get_time (source);
  SubagentDeadline *first;

  /* One at a time: a callback may add or remove others. */
  while ((first = g_queue_peek_head (&self->deadlines)) != NULL && first->when <= now)
    {
      g_queue_unlink (&self->deadlines, &first->link);
      first->owner = NULL;
      first->func (first->data);
      deadline_free (first);
    }
  update_ready_time (self);
  return G_SOURCE_CONTINUE;
}

static void
deadline_source_finalize (GSource *source)
{
  DeadlineSource *self = (DeadlineSource *) source;

  _subagent_context_source_forget (&sources, self->context, source);
  /* The context went first: its runs' limits go with it, uncalled. */
  while (!g_queue_is_empty (&self->deadlines))
    {
      SubagentDeadline *deadline = g_queue_peek_head (&self->deadlines);

      g_queue_unlink (&self->deadlines, &deadline->link);
      deadline->owner = NULL;
      deadline_free (deadline);
    }
}

static GSourceFuncs deadline_source_funcs = {
  NULL, NULL, deadline_source_dispatch, deadline_source_finalize, NULL, NULL,
};

static GSource *
deadline_source_new (GMainContext *context)
{
  DeadlineSource *self = (DeadlineSource *) g_source_new (&deadline_source_funcs, sizeof (DeadlineSource));

  self->context = context;
  g_queue_init (&self->deadlines);
  g_source_set_static_name (&self->source, "[libsubagent] command children's time limits");
  return &self->source;
}

/* The context's source, made at its first deadline; it goes with the context. */
static DeadlineSource *
source_for (GMainContext *context)
{
  return (DeadlineSource *) _subagent_context_source_get (&sources, context, deadline_source_new);
}

SubagentDeadline *
_subagent_deadline_add (GMainContext   *context,
                        gint64          when,
                        GSourceFunc     func,
                        gpointer        data,
                        GDestroyNotify  destroy)
{
  SubagentDeadline *deadline = g_new0 (SubagentDeadline, 1);
  DeadlineSource *owner = source_for (context != NULL ? context : g_main_context_default ());
  GList *after;
  gint64 ready;

  deadline->owner = owner;
  deadline->link.data = deadline;
  deadline->when = when;
  deadline->func = func;
  deadline->data = data;
  deadline->destroy = destroy;
  /* From the end: the latest deadlines are usually the newest. */
  for (after = g_queue_peek_tail_link (&owner->deadlines);
       after != NULL && ((SubagentDeadline *) after->data)->when > when;
       after = after->prev)
    ;
  if (after != NULL)
    g_queue_insert_after_link (&owner->deadlines, after, &deadline->link);
  else
    g_queue_push_head_link (&owner->deadlines, &deadline->link);
  ready = g_source_get_ready_time (&owner->source);
  if (ready < 0 || when < ready)
    g_source_set_ready_time (&owner->source, when);
  return deadline;
}

void
_subagent_deadline_remove (SubagentDeadline *deadline)
{
  DeadlineSource *owner;

  /* Without an owner it is being called or freed already: that frees it. */
  if (deadline == NULL || deadline->owner == NULL)
    return;
  owner = deadline->owner;
  g_queue_unlink (&owner->deadlines, &deadline->link);
  deadline->owner = NULL;
  deadline_free (deadline);
}
