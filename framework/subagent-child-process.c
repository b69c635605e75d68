/* subagent-child-process.c: plumbing of the command runner.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "subagent-child-process-private.h"

struct _SubagentPipeWriter
{
  GOutputStream *stream;        /* NULL once closed */
  GMainContext *context;
  GQueue pending;               /* of GBytes */
  gsize offset;                 /* into the head of @pending */
  GSource *source;              /* waiting for the pipe to be writable */
  gboolean close_requested;
};

/* SIGPIPE is thread-directed for a write to a broken pipe: blocking it in
 * this thread turns it into EPIPE, and the pending signal it leaves is
 * consumed before the mask is restored. No process-wide disposition changes. */
typedef struct {
  sigset_t old_mask;
  gboolean was_pending;
} PipeGuard;

static void
pipe_guard_begin (PipeGuard *guard)
{
  sigset_t set, pending;

  sigemptyset (&set);
  sigaddset (&set, SIGPIPE);
  pthread_sigmask (SIG_BLOCK, &set, &guard->old_mask);
  sigemptyset (&pending);
  sigpending (&pending);
  guard->was_pending = sigismember (&pending, SIGPIPE) == 1;
}

/* A write that loses its reader part-way returns a short count and still
 * raises SIGPIPE, so look at what is pending rather than at the result. */
static void
pipe_guard_end (PipeGuard *guard)
{
  sigset_t pending;

  sigemptyset (&pending);
  sigpending (&pending);
  if (!guard->was_pending && sigismember (&pending, SIGPIPE) == 1)
    {
      sigset_t set;
      struct timespec zero = { 0, 0 };

      sigemptyset (&set);
      sigaddset (&set, SIGPIPE);
      while (sigtimedwait (&set, NULL, &zero) < 0 && errno == EINTR)
        ;
    }
  pthread_sigmask (SIG_SETMASK, &guard->old_mask, NULL);
}

static void
close_now (SubagentPipeWriter *self)
{
  if (self->source != NULL)
    {
      g_source_destroy (self->source);
      g_clear_pointer (&self->source, g_source_unref);
    }
  g_queue_clear_full (&self->pending, (GDestroyNotify) g_bytes_unref);
  self->offset = 0;
  if (self->stream != NULL)
    {
      g_output_stream_close (self->stream, NULL, NULL);
      g_clear_object (&self->stream);
    }
}

static void flush (SubagentPipeWriter *self);

static gboolean
on_writable (GObject  *stream,
             gpointer  user_data)
{
  SubagentPipeWriter *self = user_data;
  GSource *source = g_steal_pointer (&self->source);

  flush (self);
  g_source_unref (source);
  return G_SOURCE_REMOVE;
}

static void
wait_writable (SubagentPipeWriter *self)
{
  if (self->source != NULL)
    return;
  self->source = g_pollable_output_stream_create_source (G_POLLABLE_OUTPUT_STREAM (self->stream), NULL);
  g_source_set_callback (self->source, (GSourceFunc) G_CALLBACK (on_writable), self, NULL);
  g_source_attach (self->source, self->context);
}

static void
flush (SubagentPipeWriter *self)
{
  gboolean pollable;

  if (self->stream == NULL)
    return;
  pollable = G_IS_POLLABLE_OUTPUT_STREAM (self->stream) &&
             g_pollable_output_stream_can_poll (G_POLLABLE_OUTPUT_STREAM (self->stream));

  while (!g_queue_is_empty (&self->pending))
    {
      GBytes *head = g_queue_peek_head (&self->pending);
      gsize size;
      const guint8 *data = g_bytes_get_data (head, &size);
      g_autoptr(GError) error = NULL;
      PipeGuard guard;
      gssize n;

      pipe_guard_begin (&guard);
      if (pollable)
        n = g_pollable_output_stream_write_nonblocking (G_POLLABLE_OUTPUT_STREAM (self->stream),
                                                        data + self->offset, size - self->offset,
                                                        NULL, &error);
      else
        {
          /* Only exotic backends; GSubprocess pipes always poll. */
          gsize written = 0;

          n = g_output_stream_write_all (self->stream, data + self->offset, size - self->offset,
                                         &written, NULL, &error) ? (gssize) written : -1;
        }
      pipe_guard_end (&guard);

      if (n < 0)
        {
          if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            {
              wait_writable (self);
              return;
            }
          g_debug ("Stopped writing to the child's stdin: %s", error->message);
          close_now (self);
          return;
        }
      self->offset += (gsize) n;
      if (self->offset == size)
        {
          g_bytes_unref (g_queue_pop_head (&self->pending));
          self->offset = 0;
        }
    }
  if (self->close_requested)
    close_now (self);
}

SubagentPipeWriter *
subagent_pipe_writer_new (GOutputStream *stream,
                          GMainContext  *context)
{
  SubagentPipeWriter *self = g_new0 (SubagentPipeWriter, 1);

  self->stream = g_object_ref (stream);
  self->context = context ? g_main_context_ref (context) : g_main_context_ref_thread_default ();
  g_queue_init (&self->pending);
  return self;
}

void
subagent_pipe_writer_write (SubagentPipeWriter *self,
                            GBytes             *bytes)
{
  if (self->stream == NULL || self->close_requested || g_bytes_get_size (bytes) == 0)
    return;
  g_queue_push_tail (&self->pending, g_bytes_ref (bytes));
  if (self->source == NULL)
    flush (self);
}

void
subagent_pipe_writer_close (SubagentPipeWriter *self,
                            gboolean            discard)
{
  self->close_requested = TRUE;
  if (discard)
    close_now (self);
  else if (self->source == NULL)
    flush (self);
}

gboolean
subagent_pipe_writer_is_closed (SubagentPipeWriter *self)
{
  return self->stream == NULL;
}

void
subagent_pipe_writer_free (SubagentPipeWriter *self)
{
  if (self == NULL)
    return;
  close_now (self);
  g_main_context_unref (self->context);
  g_free (self);
}

typedef struct {
  GPid pid;
  GPid ppid;
  uid_t uid;
} ProcEntry;

/* All processes with their parents, from /proc/<pid>/stat. */
static GArray *
list_processes (void)
{
  GArray *entries = g_array_new (FALSE, FALSE, sizeof (ProcEntry));
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  const char *name;

  if (dir == NULL)
    return entries;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *dir_path = NULL;
      g_autofree char *path = NULL;
      g_autofree char *text = NULL;
      const char *close_paren;
      struct stat st;
      ProcEntry entry;
      char state;
      int ppid;

      if (!g_ascii_isdigit (name[0]))
        continue;
      dir_path = g_build_filename ("/proc", name, NULL);
      path = g_build_filename (dir_path, "stat", NULL);
      if (stat (dir_path, &st) != 0 || !g_file_get_contents (path, &text, NULL, NULL))
        continue;
      /* "pid (comm) state ppid ...": comm may hold spaces and parentheses. */
      close_paren = strrchr (text, ')');
      if (close_paren == NULL || sscanf (close_paren + 1, " %c %d", &state, &ppid) != 2)
        continue;
      entry.pid = (GPid) g_ascii_strtoll (name, NULL, 10);
      entry.ppid = (GPid) ppid;
      entry.uid = st.st_uid;
      g_array_append_val (entries, entry);
    }
  return entries;
}

static gboolean
environ_has_entry (GPid        pid,
                   const char *entry)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/environ", (int) pid);
  g_autofree char *data = NULL;
  gsize length = 0;

  if (!g_file_get_contents (path, &data, &length, NULL))
    return FALSE;
  for (gsize i = 0; i < length; i += strlen (data + i) + 1)
    if (g_str_equal (data + i, entry))
      return TRUE;
  return FALSE;
}

guint
subagent_signal_run_processes (GPid        root,
                               const char *token,
                               int         signum)
{
  g_autoptr(GArray) entries = list_processes ();
  g_autoptr(GHashTable) targets = g_hash_table_new (NULL, NULL);
  g_autofree char *tag = token ? g_strdup_printf ("%s=%s", SUBAGENT_RUN_TOKEN_ENV, token) : NULL;
  GPid self_pid = getpid ();
  uid_t self_uid = geteuid ();
  GHashTableIter iter;
  gpointer key;
  guint signalled = 0;
  gboolean grew = root > 0;

  /* Descendants of @root: grow the set until no entry joins it. */
  if (root > 0)
    g_hash_table_add (targets, GINT_TO_POINTER (root));
  while (grew)
    {
      grew = FALSE;
      for (guint i = 0; i < entries->len; i++)
        {
          ProcEntry *e = &g_array_index (entries, ProcEntry, i);

          if (g_hash_table_contains (targets, GINT_TO_POINTER (e->ppid)) &&
              !g_hash_table_contains (targets, GINT_TO_POINTER (e->pid)))
            {
              g_hash_table_add (targets, GINT_TO_POINTER (e->pid));
              grew = TRUE;
            }
        }
    }

  if (tag != NULL)
    for (guint i = 0; i < entries->len; i++)
      {
        ProcEntry *e = &g_array_index (entries, ProcEntry, i);

        /* Only our own processes: even root leaves other users' alone. */
        if (e->pid != self_pid && e->uid == self_uid &&
            !g_hash_table_contains (targets, GINT_TO_POINTER (e->pid)) &&
            environ_has_entry (e->pid, tag))
          g_hash_table_add (targets, GINT_TO_POINTER (e->pid));
      }

  g_hash_table_remove (targets, GINT_TO_POINTER (root));
  g_hash_table_iter_init (&iter, targets);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      GPid pid = GPOINTER_TO_INT (key);

      if (pid > 1 && pid != self_pid && kill (pid, signum) == 0)
        signalled++;
    }
  return signalled;
}
