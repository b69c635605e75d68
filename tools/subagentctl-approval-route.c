/* subagentctl-approval-route.c: where the approval requests of the children
 * of `subagentctl run` (and `batch`) go.
 *
 * To the queue of the parent run — the file queue under
 * <root>/.subagent/approvals/ unless config.yaml names another sink — so that
 * `subagentctl approvals` in another terminal, or any other program, answers
 * them. Each request is announced on stderr with the commands that answer
 * it. When stdin is a terminal, an inline prompt on /dev/tty answers through
 * the same queue: whichever verdict comes first wins. With neither a queue
 * (`approvals.sink: none`) nor a terminal, the children are unattended.
 *
 * The queue emits its signals on whatever thread made the change (a child's
 * waiting thread, the store watcher); everything here runs on the main
 * context, where the signals are forwarded.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <gio/gunixinputstream.h>

#include "subagentctl.h"

#define ARGUMENTS_SHOWN 200

struct _SactlApprovalRoute
{
  gatomicrefcount ref;
  SubagentApprovalQueue *queue;
  char *root;
  GMainContext *context;
  gulong added_id;
  gulong resolved_id;

  /* The inline prompt (tty_fd >= 0). */
  int tty_fd;
  GDataInputStream *tty_in;
  GCancellable *cancellable;
  gboolean reading;
  GQueue prompts;                      /* SubagentApprovalRequest, oldest first */
  SubagentApprovalRequest *current;    /* the one on screen */

  /* Events forwarded to the main context and not yet handled, oldest
   * first: forward() runs on any thread. */
  GMutex lock;
  GQueue pending;
  gboolean closed;                     /* sactl_approval_route_free() ran */
};

static SactlApprovalRoute *
route_ref (SactlApprovalRoute *route)
{
  g_atomic_ref_count_inc (&route->ref);
  return route;
}

static void
route_unref (SactlApprovalRoute *route)
{
  if (!g_atomic_ref_count_dec (&route->ref))
    return;
  g_queue_clear_full (&route->prompts, g_object_unref);
  g_clear_object (&route->current);
  g_clear_object (&route->tty_in);
  g_clear_object (&route->cancellable);
  if (route->tty_fd >= 0)
    close (route->tty_fd);
  g_clear_object (&route->queue);
  g_main_context_unref (route->context);
  g_mutex_clear (&route->lock);
  g_free (route->root);
  g_free (route);
}

static void
tty_print (SactlApprovalRoute *route,
           const char         *format,
           ...) G_GNUC_PRINTF (2, 3);

static void
tty_print (SactlApprovalRoute *route,
           const char         *format,
           ...)
{
  g_autofree char *text = NULL;
  const char *p;
  size_t left;
  va_list ap;

  if (route->tty_fd < 0)
    return;
  va_start (ap, format);
  text = g_strdup_vprintf (format, ap);
  va_end (ap);
  for (p = text, left = strlen (text); left > 0;)
    {
      ssize_t n = write (route->tty_fd, p, left);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      p += n;
      left -= (size_t) n;
    }
}

/* The call in one line, cut to a readable length; the child controls it, so
 * control characters are shown escaped (json-glib escapes them). */
static char *
describe_call (SubagentApprovalRequest *request)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *arguments = NULL;

  json_node_set_object (node, subagent_approval_request_get_tool_arguments (request));
  arguments = json_to_string (node, FALSE);
  if (g_utf8_strlen (arguments, -1) > ARGUMENTS_SHOWN)
    {
      g_autofree char *cut = g_utf8_substring (arguments, 0, ARGUMENTS_SHOWN);

      g_free (arguments);
      arguments = g_strconcat (cut, "…", NULL);
    }
  return g_strdup_printf ("%s %s", subagent_approval_request_get_tool_name (request), arguments);
}

static void show_next_prompt (SactlApprovalRoute *route);

typedef struct {
  SubagentApprovalRequest *request;
  gboolean approve;
} Verdict;

static void
verdict_free (Verdict *verdict)
{
  g_object_unref (verdict->request);
  g_free (verdict);
}

static void
on_verdict_given (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  SactlApprovalRoute *route = user_data;
  Verdict *verdict = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    tty_print (route, "(request %s was not changed: %s)\n",
               subagent_approval_request_get_request_id (verdict->request),
               error ? error->message : "it was answered elsewhere first");
  route_unref (route);
}

/* In a worker thread: a verdict goes through the store, which blocks. */
static void
give_verdict_thread (GTask        *task,
                     gpointer      source_object,
                     gpointer      task_data,
                     GCancellable *cancellable)
{
  SubagentApprovalQueue *queue = source_object;
  Verdict *verdict = task_data;
  const char *id = subagent_approval_request_get_request_id (verdict->request);
  GError *error = NULL;

  if (subagent_approval_queue_resolve (queue, id,
                                       verdict->approve ? SUBAGENT_APPROVAL_STATUS_APPROVED
                                                        : SUBAGENT_APPROVAL_STATUS_DENIED,
                                       verdict->approve ? NULL : "Denied at the terminal", "terminal", &error))
    g_task_return_boolean (task, TRUE);
  else if (g_error_matches (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_NOT_PENDING))
    {
      g_clear_error (&error);
      g_task_return_boolean (task, FALSE);
    }
  else
    g_task_return_error (task, error);
}

static void
give_verdict (SactlApprovalRoute      *route,
              SubagentApprovalRequest *request,
              gboolean                 approve)
{
  g_autoptr(GTask) task = g_task_new (route->queue, NULL, on_verdict_given, route_ref (route));
  Verdict *verdict = g_new0 (Verdict, 1);

  verdict->request = g_object_ref (request);
  verdict->approve = approve;
  g_task_set_task_data (task, verdict, (GDestroyNotify) verdict_free);
  g_task_run_in_thread (task, give_verdict_thread);
}

static void read_answer (SactlApprovalRoute *route);

static void
on_answer (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  SactlApprovalRoute *route = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *line = g_data_input_stream_read_line_finish (G_DATA_INPUT_STREAM (source), result, NULL, &error);

  route->reading = FALSE;
  if (line == NULL)
    {
      /* The terminal is gone (or we are shutting down): stop prompting. */
      if (error == NULL || !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          close (route->tty_fd);
          route->tty_fd = -1;
          g_queue_clear_full (&route->prompts, g_object_unref);
          g_clear_object (&route->current);
        }
      route_unref (route);
      return;
    }
  if (route->current != NULL)
    {
      g_autoptr(SubagentApprovalRequest) request = g_steal_pointer (&route->current);
      const char *answer = g_strstrip (line);
      gboolean approve = g_ascii_strcasecmp (answer, "y") == 0 || g_ascii_strcasecmp (answer, "yes") == 0;

      give_verdict (route, request, approve);
    }
  show_next_prompt (route);
  route_unref (route);
}

static void
read_answer (SactlApprovalRoute *route)
{
  if (route->reading || route->tty_fd < 0)
    return;
  route->reading = TRUE;
  g_data_input_stream_read_line_async (route->tty_in, G_PRIORITY_DEFAULT, route->cancellable,
                                       on_answer, route_ref (route));
}

static void
show_next_prompt (SactlApprovalRoute *route)
{
  g_autofree char *call = NULL;

  if (route->current != NULL || route->tty_fd < 0)
    return;
  while ((route->current = g_queue_pop_head (&route->prompts)) != NULL &&
         subagent_approval_request_get_status (route->current) != SUBAGENT_APPROVAL_STATUS_PENDING)
    g_clear_object (&route->current);
  if (route->current == NULL)
    return;
  call = describe_call (route->current);
  tty_print (route, "\nChild “%s” (run %s) wants to run %s\napprove? [y/N] ",
             subagent_approval_request_get_subagent_name (route->current),
             subagent_approval_request_get_subagent_id (route->current), call);
  read_answer (route);
}

static void
announce (SactlApprovalRoute      *route,
          SubagentApprovalRequest *request)
{
  const char *id = subagent_approval_request_get_request_id (request);
  g_autofree char *call = describe_call (request);
  g_autofree char *quoted_root = g_shell_quote (route->root);

  fprintf (stderr,
           "subagentctl: child “%s” (run %s) asks to run %s\n"
           "subagentctl:   approval request %s of parent run %s; answer it from anywhere with\n"
           "subagentctl:     subagentctl approvals approve %s --root %s\n"
           "subagentctl:     subagentctl approvals deny %s --reason TEXT --root %s\n",
           subagent_approval_request_get_subagent_name (request),
           subagent_approval_request_get_subagent_id (request), call,
           id, subagent_approval_request_get_parent_run_id (request),
           id, quoted_root, id, quoted_root);
  fflush (stderr);
}

typedef struct {
  SactlApprovalRoute *route;
  SubagentApprovalRequest *request;
  gboolean resolved;
  GSource *source;                     /* owns the event */
} Event;

static void
event_free (Event *event)
{
  route_unref (event->route);
  g_object_unref (event->request);
  g_free (event);
}

/* Announces an added @request (and prompts for it), or says a @resolved
 * one's verdict and withdraws its prompt if it is on screen. */
static void
handle_event (SactlApprovalRoute      *route,
              SubagentApprovalRequest *request,
              gboolean                 resolved)
{
  const char *id = subagent_approval_request_get_request_id (request);
  SubagentApprovalStatus status = subagent_approval_request_get_status (request);

  if (!resolved)
    {
      if (status != SUBAGENT_APPROVAL_STATUS_PENDING)
        return;
      announce (route, request);
      if (route->tty_fd >= 0)
        {
          g_queue_push_tail (&route->prompts, g_object_ref (request));
          show_next_prompt (route);
        }
      return;
    }

  fprintf (stderr, "subagentctl: approval request %s: %s%s%s\n", id, subagent_approval_status_to_string (status),
           subagent_approval_request_get_denial_reason (request) ? " — " : "",
           subagent_approval_request_get_denial_reason (request) ? subagent_approval_request_get_denial_reason (request) : "");
  fflush (stderr);
  /* Answered elsewhere while on screen: withdraw the prompt. */
  if (route->current != NULL && g_str_equal (subagent_approval_request_get_request_id (route->current), id))
    {
      g_clear_object (&route->current);
      tty_print (route, "\n(%s: %s)\n",
                 status == SUBAGENT_APPROVAL_STATUS_APPROVED || status == SUBAGENT_APPROVAL_STATUS_DENIED
                   ? "answered elsewhere" : "withdrawn",
                 subagent_approval_status_to_string (status));
      show_next_prompt (route);
    }
}

static gboolean
on_event (gpointer data)
{
  Event *event = data;

  g_mutex_lock (&event->route->lock);
  g_queue_remove (&event->route->pending, event);
  g_mutex_unlock (&event->route->lock);
  if (!event->route->closed)
    handle_event (event->route, event->request, event->resolved);
  return G_SOURCE_REMOVE;
}

/* At the default priority, not an idle's: a run that keeps the main context
 * busy would otherwise end before its verdicts are shown, and a prompt
 * answered elsewhere would never be withdrawn. */
static void
forward (SactlApprovalRoute      *route,
         SubagentApprovalRequest *request,
         gboolean                 resolved)
{
  Event *event = g_new0 (Event, 1);
  g_autoptr(GSource) source = g_idle_source_new ();

  event->route = route_ref (route);
  event->request = g_object_ref (request);
  event->resolved = resolved;
  event->source = source;
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, on_event, event, (GDestroyNotify) event_free);
  g_mutex_lock (&route->lock);
  g_queue_push_tail (&route->pending, event);
  g_source_attach (source, route->context);
  g_mutex_unlock (&route->lock);
}

static void
on_request_added (SubagentApprovalQueue   *queue,
                  SubagentApprovalRequest *request,
                  SactlApprovalRoute      *route)
{
  forward (route, request, FALSE);
}

static void
on_request_resolved (SubagentApprovalQueue   *queue,
                     SubagentApprovalRequest *request,
                     SactlApprovalRoute      *route)
{
  forward (route, request, TRUE);
}

static void
signal_closure_notify (gpointer  data,
                       GClosure *closure)
{
  route_unref (data);
}

/* /dev/tty, when stdin is a terminal we run in the foreground of (reading
 * it from the background would stop us with SIGTTIN); else -1. */
static int
open_terminal (void)
{
  int fd;

  if (!isatty (STDIN_FILENO))
    return -1;
  fd = open ("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0 && tcgetpgrp (fd) != getpgrp ())
    {
      close (fd);
      return -1;
    }
  return fd;
}

SactlApprovalRoute *
sactl_approval_route_new (SubagentManager  *manager,
                          const char       *root,
                          GError          **error)
{
  g_autoptr(SubagentApprovalQueue) queue = NULL;
  SactlApprovalRoute *route;
  int tty_fd;

  queue = subagent_manager_dup_approval_queue (manager, error);
  if (queue == NULL && error != NULL && *error != NULL)
    return NULL;
  tty_fd = open_terminal ();
  if (queue == NULL && tty_fd >= 0 && !subagent_manager_get_unattended (manager))
    {
      /* approvals.sink: none, but someone sits at the terminal: a queue in
       * this process only, answered from the prompt. */
      g_autoptr(SubagentApprovalSink) memory = subagent_memory_approval_sink_new ();

      queue = subagent_approval_queue_get (subagent_manager_get_run_id (manager), memory, error);
      if (queue == NULL)
        {
          close (tty_fd);
          return NULL;
        }
      subagent_approval_queue_set_default_timeout (queue,
        subagent_config_get_approval_timeout (subagent_manager_get_config (manager)));
      subagent_manager_set_approval_queue (manager, queue);
    }
  if (queue == NULL)
    {
      if (tty_fd >= 0)
        close (tty_fd);
      return NULL;  /* unattended */
    }

  route = g_new0 (SactlApprovalRoute, 1);
  g_atomic_ref_count_init (&route->ref);
  route->queue = g_steal_pointer (&queue);
  route->root = g_strdup (root);
  route->context = g_main_context_ref_thread_default ();
  route->tty_fd = tty_fd;
  route->cancellable = g_cancellable_new ();
  g_queue_init (&route->prompts);
  g_mutex_init (&route->lock);
  g_queue_init (&route->pending);
  if (tty_fd >= 0)
    {
      route->tty_in = g_data_input_stream_new (g_unix_input_stream_new (tty_fd, FALSE));
      /* The stream took its own reference to the base stream. */
      g_object_unref (g_filter_input_stream_get_base_stream (G_FILTER_INPUT_STREAM (route->tty_in)));
    }
  route->added_id = g_signal_connect_data (route->queue, "request-added", G_CALLBACK (on_request_added),
                                           route_ref (route), signal_closure_notify, 0);
  route->resolved_id = g_signal_connect_data (route->queue, "request-resolved", G_CALLBACK (on_request_resolved),
                                              route_ref (route), signal_closure_notify, 0);
  return route;
}

/* Stops announcing and prompting; verdicts already on their way still land.
 * What the run ended before showing is shown here: the events forwarded
 * but not yet handled, and a verdict given elsewhere to the prompt on
 * screen whose event is not even forwarded yet (the queue wakes the
 * child's wait before it tells its listeners). */
void
sactl_approval_route_free (SactlApprovalRoute *route)
{
  GQueue pending = G_QUEUE_INIT;
  Event *event;

  if (route == NULL)
    return;
  g_signal_handler_disconnect (route->queue, route->added_id);
  g_signal_handler_disconnect (route->queue, route->resolved_id);
  g_mutex_lock (&route->lock);
  pending = route->pending;
  g_queue_init (&route->pending);
  g_mutex_unlock (&route->lock);
  while ((event = g_queue_pop_head (&pending)) != NULL)
    {
      handle_event (route, event->request, event->resolved);
      g_source_destroy (event->source);  /* frees @event */
    }
  if (route->current != NULL &&
      subagent_approval_request_get_status (route->current) != SUBAGENT_APPROVAL_STATUS_PENDING)
    {
      g_autoptr(SubagentApprovalRequest) request = g_object_ref (route->current);

      handle_event (route, request, TRUE);
    }
  route->closed = TRUE;
  g_cancellable_cancel (route->cancellable);
  if (route->current != NULL)
    tty_print (route, "\n");
  route_unref (route);
}
