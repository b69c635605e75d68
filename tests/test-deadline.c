/* test-deadline.c: the wall-clock limits of many command runs on one
 * source per main context (framework/runner/subagent-deadline.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib.h>

#include "subagent-deadline-private.h"

#define MS G_TIME_SPAN_MILLISECOND

typedef struct _Log Log;

/* One deadline's record: when it was called, how often it was destroyed. */
typedef struct {
  Log *log;
  const char *name;
  gint64 when;
  SubagentDeadline *deadline;
  gint64 called_at;              /* 0: never */
  guint destroyed;
  /* What its callback does besides being called. */
  SubagentDeadline **remove;     /* removes this one */
  gint64 add_after;              /* adds @added this much later; 0: nothing */
} Item;

struct _Log {
  GMainContext *context;
  GString *order;
  Item *added;
};

static gboolean
on_deadline (gpointer data)
{
  Item *item = data;

  g_assert_cmpint (item->called_at, ==, 0);
  item->called_at = g_get_monotonic_time ();
  g_string_append (item->log->order, item->name);
  if (item->remove != NULL)
    _subagent_deadline_remove (*item->remove);
  /* Its own handle: removing it here does nothing. */
  _subagent_deadline_remove (item->deadline);
  if (item->add_after > 0)
    {
      Item *added = item->log->added;

      added->log = item->log;
      added->when = g_get_monotonic_time () + item->add_after;
      added->deadline = _subagent_deadline_add (item->log->context, added->when, on_deadline, added, NULL);
    }
  return G_SOURCE_REMOVE;
}

static void
on_destroy (gpointer data)
{
  Item *item = data;

  item->destroyed++;
}

static void
add (Log    *log,
     Item   *item,
     gint64  in)
{
  item->log = log;
  item->when = g_get_monotonic_time () + in;
  item->deadline = _subagent_deadline_add (log->context, item->when, on_deadline, item, on_destroy);
}

/* Iterates @log's context until @ms have passed. */
static void
run_for (Log  *log,
         guint ms)
{
  gint64 end = g_get_monotonic_time () + ms * MS;

  while (g_get_monotonic_time () < end)
    g_main_context_iteration (log->context, FALSE), g_usleep (500);
}

static void
log_init (Log *log)
{
  log->context = g_main_context_new ();
  log->order = g_string_new (NULL);
}

static void
log_clear (Log *log)
{
  g_main_context_unref (log->context);
  g_string_free (log->order, TRUE);
}

/* Added out of order, called in time order, none early, each destroyed once. */
static void
test_order (void)
{
  Log log;
  Item c = { .name = "c" }, a = { .name = "a" }, b = { .name = "b" };

  log_init (&log);
  add (&log, &c, 90 * MS);
  add (&log, &a, 30 * MS);
  add (&log, &b, 60 * MS);
  run_for (&log, 200);
  g_assert_cmpstr (log.order->str, ==, "abc");
  g_assert_cmpint (a.called_at, >=, a.when);
  g_assert_cmpint (b.called_at, >=, b.when);
  g_assert_cmpint (c.called_at, >=, c.when);
  g_assert_cmpuint (a.destroyed + b.destroyed + c.destroyed, ==, 3);
  log_clear (&log);
}

/* Removed before its time: never called, destroyed at once; the first one
 * removed, the next still comes on time. */
static void
test_remove (void)
{
  Log log;
  Item a = { .name = "a" }, b = { .name = "b" }, c = { .name = "c" };

  log_init (&log);
  add (&log, &a, 30 * MS);
  add (&log, &b, 50 * MS);
  add (&log, &c, 70 * MS);
  _subagent_deadline_remove (a.deadline);
  g_assert_cmpuint (a.destroyed, ==, 1);
  _subagent_deadline_remove (NULL);
  run_for (&log, 150);
  g_assert_cmpstr (log.order->str, ==, "bc");
  g_assert_cmpint (a.called_at, ==, 0);
  g_assert_cmpuint (a.destroyed, ==, 1);
  g_assert_cmpuint (b.destroyed, ==, 1);
  g_assert_cmpuint (c.destroyed, ==, 1);
  log_clear (&log);
}

/* A callback removes a later deadline, and adds one earlier than the rest. */
static void
test_callback_changes_the_list (void)
{
  Log log;
  Item a = { .name = "a" }, b = { .name = "b" }, c = { .name = "c" }, d = { .name = "d" };

  log_init (&log);
  log.added = &d;
  a.remove = &b.deadline;
  a.add_after = 10 * MS;
  add (&log, &a, 20 * MS);
  add (&log, &b, 40 * MS);
  add (&log, &c, 120 * MS);
  run_for (&log, 200);
  /* In time order: d, added 10 ms after a was called, before c unless a
   * stalled machine called a late. */
  g_assert_cmpstr (log.order->str, ==, d.when <= c.when ? "adc" : "acd");
  g_assert_cmpint (b.called_at, ==, 0);
  g_assert_cmpuint (b.destroyed, ==, 1);
  g_assert_cmpint (d.called_at, >=, d.when);
  log_clear (&log);
}

/* Deadlines of two contexts are apart: iterating one calls only its own. */
static void
test_contexts_apart (void)
{
  Log one, two;
  Item a = { .name = "a" }, b = { .name = "b" };

  log_init (&one);
  log_init (&two);
  add (&one, &a, 10 * MS);
  add (&two, &b, 10 * MS);
  run_for (&one, 60);
  g_assert_cmpstr (one.order->str, ==, "a");
  g_assert_cmpint (b.called_at, ==, 0);
  run_for (&two, 20);
  g_assert_cmpstr (two.order->str, ==, "b");
  log_clear (&one);
  log_clear (&two);
}

/* A context freed with deadlines pending destroys them, uncalled. */
static void
test_context_freed (void)
{
  Log log;
  Item a = { .name = "a" };

  log_init (&log);
  add (&log, &a, 10 * G_TIME_SPAN_SECOND);
  g_main_context_unref (g_steal_pointer (&log.context));
  g_assert_cmpint (a.called_at, ==, 0);
  g_assert_cmpuint (a.destroyed, ==, 1);
  g_string_free (log.order, TRUE);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/deadline/order", test_order);
  g_test_add_func ("/deadline/remove", test_remove);
  g_test_add_func ("/deadline/callback-changes-the-list", test_callback_changes_the_list);
  g_test_add_func ("/deadline/contexts-apart", test_contexts_apart);
  g_test_add_func ("/deadline/context-freed", test_context_freed);
  return g_test_run ();
}
