/* test-fd-watch.c: the descriptors of many command children watched by one
 * epoll source per main context (framework/runner/subagent-fd-watch.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "subagent-fd-watch-private.h"

typedef struct {
  int fds[2];
  SubagentFdWatch *watch;
  GString *received;
  guint calls;
  gboolean ended;
  guint *open_count;
} Pipe;

static void
pipe_open (Pipe  *pipe_,
           guint *open_count)
{
  g_assert_cmpint (pipe2 (pipe_->fds, O_CLOEXEC), ==, 0);
  pipe_->received = g_string_new (NULL);
  pipe_->open_count = open_count;
  if (open_count != NULL)
    (*open_count)++;
}

static void
pipe_close (Pipe *pipe_)
{
  _subagent_fd_watch_remove (g_steal_pointer (&pipe_->watch));
  if (pipe_->fds[0] >= 0)
    close (pipe_->fds[0]);
  if (pipe_->fds[1] >= 0)
    close (pipe_->fds[1]);
  g_string_free (pipe_->received, TRUE);
}

/* Reads once; at the end, removes its watch (as the runner does). */
static void
on_readable (int          fd,
             GIOCondition condition,
             gpointer     user_data)
{
  Pipe *pipe_ = user_data;
  char buffer[7];
  gssize n = read (fd, buffer, sizeof buffer);

  pipe_->calls++;
  if (n > 0)
    {
      g_string_append_len (pipe_->received, buffer, n);
      return;
    }
  pipe_->ended = TRUE;
  _subagent_fd_watch_remove (g_steal_pointer (&pipe_->watch));
  if (pipe_->open_count != NULL)
    (*pipe_->open_count)--;
}

/* Forty pipes, each written in several reads' worth and closed: every one
 * delivers all its bytes, in order, and ends; every watch is removed by
 * its own callback. */
static void
test_many_descriptors (void)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  Pipe pipes[40] = { 0 };
  guint open_count = 0;

  for (guint i = 0; i < G_N_ELEMENTS (pipes); i++)
    {
      g_autofree char *text = g_strdup_printf ("pipe %u says hello, at some length", i);

      pipe_open (&pipes[i], &open_count);
      pipes[i].watch = _subagent_fd_watch_add (context, pipes[i].fds[0], G_IO_IN, on_readable, &pipes[i]);
      g_assert_cmpint (write (pipes[i].fds[1], text, strlen (text)), ==, (gssize) strlen (text));
      close (pipes[i].fds[1]);
      pipes[i].fds[1] = -1;
    }
  while (open_count > 0)
    g_main_context_iteration (context, TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (pipes); i++)
    {
      g_autofree char *text = g_strdup_printf ("pipe %u says hello, at some length", i);

      g_assert_cmpstr (pipes[i].received->str, ==, text);
      g_assert_true (pipes[i].ended);
      g_assert_null (pipes[i].watch);
      pipe_close (&pipes[i]);
    }
  /* Nothing is left to dispatch. */
  g_assert_false (g_main_context_iteration (context, FALSE));
}

typedef struct {
  Pipe a;
  Pipe b;
} Pair;

/* The first of two ready descriptors to be called removes the other:
 * that one is not called, though its event was read in the same batch. */
static void
on_ready_remove_other (int          fd,
                       GIOCondition condition,
                       gpointer     user_data)
{
  Pair *pair = user_data;
  Pipe *self = fd == pair->a.fds[0] ? &pair->a : &pair->b;
  Pipe *other = self == &pair->a ? &pair->b : &pair->a;

  self->calls++;
  _subagent_fd_watch_remove (g_steal_pointer (&self->watch));
  _subagent_fd_watch_remove (g_steal_pointer (&other->watch));
}

static void
test_remove_other_in_same_dispatch (void)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  Pair pair = { 0 };

  pipe_open (&pair.a, NULL);
  pipe_open (&pair.b, NULL);
  pair.a.watch = _subagent_fd_watch_add (context, pair.a.fds[0], G_IO_IN, on_ready_remove_other, &pair);
  pair.b.watch = _subagent_fd_watch_add (context, pair.b.fds[0], G_IO_IN, on_ready_remove_other, &pair);
  g_assert_cmpint (write (pair.a.fds[1], "x", 1), ==, 1);
  g_assert_cmpint (write (pair.b.fds[1], "y", 1), ==, 1);
  for (guint i = 0; i < 5; i++)
    g_main_context_iteration (context, FALSE);
  g_assert_cmpuint (pair.a.calls + pair.b.calls, ==, 1);
  pipe_close (&pair.a);
  pipe_close (&pair.b);
}

typedef struct {
  GMainContext *context;
  Pipe outer;
  Pipe inner;
  guint nested_iterations;
} Nested;

static void
on_inner_ready (int          fd,
                GIOCondition condition,
                gpointer     user_data)
{
  Nested *nested = user_data;

  nested->inner.calls++;
  _subagent_fd_watch_remove (g_steal_pointer (&nested->inner.watch));
}

static gboolean
write_inner (gpointer user_data)
{
  Nested *nested = user_data;

  g_assert_cmpint (write (nested->inner.fds[1], "i", 1), ==, 1);
  return G_SOURCE_REMOVE;
}

/* Like a handler that waits for another child: it iterates the context
 * from inside a callback, while its own descriptor stays readable. */
static void
on_outer_ready (int          fd,
                GIOCondition condition,
                gpointer     user_data)
{
  Nested *nested = user_data;
  g_autoptr(GSource) later = g_timeout_source_new (100);

  nested->outer.calls++;
  g_source_set_callback (later, write_inner, nested, NULL);
  g_source_attach (later, nested->context);
  while (nested->inner.calls == 0)
    {
      g_main_context_iteration (nested->context, TRUE);
      nested->nested_iterations++;
    }
  /* Not read: still readable. */
  _subagent_fd_watch_remove (g_steal_pointer (&nested->outer.watch));
}

/* The nested iteration dispatches the other descriptor, never the one
 * whose callback is running, and does not spin on it meanwhile. */
static void
test_nested_iteration (gconstpointer data)
{
  gboolean hung_up = GPOINTER_TO_INT (data);
  g_autoptr(GMainContext) context = g_main_context_new ();
  Nested nested = { context };

  pipe_open (&nested.outer, NULL);
  pipe_open (&nested.inner, NULL);
  nested.outer.watch = _subagent_fd_watch_add (context, nested.outer.fds[0], G_IO_IN, on_outer_ready, &nested);
  nested.inner.watch = _subagent_fd_watch_add (context, nested.inner.fds[0], G_IO_IN, on_inner_ready, &nested);
  g_assert_cmpint (write (nested.outer.fds[1], "o", 1), ==, 1);
  /* A pipe whose writer is gone reports a hang-up whatever events were
   * asked for: the running watch must be out of the set, not just quiet. */
  if (hung_up)
    {
      close (nested.outer.fds[1]);
      nested.outer.fds[1] = -1;
    }
  while (nested.outer.watch != NULL)
    g_main_context_iteration (context, TRUE);
  g_assert_cmpuint (nested.outer.calls, ==, 1);
  g_assert_cmpuint (nested.inner.calls, ==, 1);
  /* 100 ms of waiting: a loop spinning on the readable descriptor would
   * have gone round thousands of times. */
  g_assert_cmpuint (nested.nested_iterations, <, 10);
  pipe_close (&nested.outer);
  pipe_close (&nested.inner);
}

/* Each context has its own source: a descriptor watched in one is not
 * dispatched by iterating another. */
static void
test_contexts_apart (void)
{
  g_autoptr(GMainContext) one = g_main_context_new ();
  g_autoptr(GMainContext) two = g_main_context_new ();
  Pipe a = { 0 }, b = { 0 };
  guint open_count = 0;

  pipe_open (&a, &open_count);
  pipe_open (&b, &open_count);
  a.watch = _subagent_fd_watch_add (one, a.fds[0], G_IO_IN, on_readable, &a);
  b.watch = _subagent_fd_watch_add (two, b.fds[0], G_IO_IN, on_readable, &b);
  g_assert_cmpint (write (a.fds[1], "a", 1), ==, 1);
  g_assert_cmpint (write (b.fds[1], "b", 1), ==, 1);
  for (guint i = 0; i < 3; i++)
    g_main_context_iteration (two, FALSE);
  g_assert_cmpuint (a.calls, ==, 0);
  g_assert_cmpstr (b.received->str, ==, "b");
  g_main_context_iteration (one, FALSE);
  g_assert_cmpstr (a.received->str, ==, "a");
  pipe_close (&a);
  pipe_close (&b);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/fd-watch/many-descriptors-one-source", test_many_descriptors);
  g_test_add_func ("/fd-watch/removed-in-same-dispatch-not-called", test_remove_other_in_same_dispatch);
  g_test_add_data_func ("/fd-watch/nested-iteration-skips-running-watch", GINT_TO_POINTER (FALSE),
                        test_nested_iteration);
  g_test_add_data_func ("/fd-watch/nested-iteration-skips-running-hung-up-watch", GINT_TO_POINTER (TRUE),
                        test_nested_iteration);
  g_test_add_func ("/fd-watch/contexts-apart", test_contexts_apart);
  return g_test_run ();
}
