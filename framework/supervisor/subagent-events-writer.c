/* subagent-events-writer.c: the events file a supervisor appends to, one
 * JSON line per event (the events themselves: subagent-events.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <glib/gstdio.h>

#include "subagent.h"
#include "subagent-fd-private.h"
#include "subagent-supervisor-private.h"

/**
 * SubagentEventsWriter:
 *
 * Appends events, one JSON object per line, to a file such as
 * `<root>/.subagent/events.jsonl`. Each line is appended with one `write()`
 * (`O_APPEND`) in the caller's thread, in the order given, never
 * interleaved with other writers' lines: once subagent_events_writer_write()
 * returns the line is in the file (the page cache), so a host that exits or
 * is killed right after loses none. A supervisor writes the lines of one
 * round of its actions together, in one `write()`: before it emits a
 * signal, before it returns a child's result, and when the round ends. The
 * file and its directory are made on the first write. A write error is
 * kept until subagent_events_writer_flush() reports it.
 */
struct _SubagentEventsWriter
{
  GObject parent_instance;

  char *path;
  GMutex lock;
  int fd;              /* -1 until the first write */
  GError *error;       /* the first write error, until flush reports it */
  GString *held;       /* whole lines not written yet */
};

G_DEFINE_FINAL_TYPE (SubagentEventsWriter, subagent_events_writer, G_TYPE_OBJECT)

/* Appends @len bytes of lines; with the lock held. */
static void
append_locked (SubagentEventsWriter *self,
               const char           *data,
               gsize                 len)
{
  g_autoptr(GError) error = NULL;
  int write_errno;

  if (len == 0)
    return;
  if (self->fd < 0)
    {
      g_autofree char *dir = g_path_get_dirname (self->path);

      if (g_mkdir_with_parents (dir, 0755) != 0 ||
          (self->fd = g_open (self->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
        {
          int saved = errno;
          g_set_error (&error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "Cannot open the events file %s: %s", self->path, g_strerror (saved));
        }
    }
  if (self->fd >= 0 && (write_errno = _subagent_write_all (self->fd, data, len)) != 0)
    g_set_error (&error, G_IO_ERROR, g_io_error_from_errno (write_errno),
                 "Cannot append to the events file %s: %s", self->path, g_strerror (write_errno));
  if (error != NULL && self->error == NULL)
    self->error = g_steal_pointer (&error);
}

/* The held lines go first, in the order they came. */
static void
write_held_locked (SubagentEventsWriter *self)
{
  if (self->held->len == 0)
    return;
  append_locked (self, self->held->str, self->held->len);
  g_string_truncate (self->held, 0);
}

static void
subagent_events_writer_finalize (GObject *object)
{
  SubagentEventsWriter *self = SUBAGENT_EVENTS_WRITER (object);

  write_held_locked (self);
  g_string_free (self->held, TRUE);

  if (self->error != NULL)
    g_debug ("%s", self->error->message);
  g_clear_error (&self->error);
  if (self->fd >= 0)
    close (self->fd);
  g_free (self->path);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (subagent_events_writer_parent_class)->finalize (object);
}

static void
subagent_events_writer_class_init (SubagentEventsWriterClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_events_writer_finalize;
}

static void
subagent_events_writer_init (SubagentEventsWriter *self)
{
  g_mutex_init (&self->lock);
  self->fd = -1;
  self->held = g_string_sized_new (1024);
}

/**
 * subagent_events_writer_new:
 * @path: the JSON-lines file to append to
 *
 * Creates a new #SubagentEventsWriter.
 *
 * Returns: (transfer full): a new #SubagentEventsWriter
 *
 * Since: 0.2
 */
SubagentEventsWriter *
subagent_events_writer_new (const char *path)
{
  SubagentEventsWriter *self;

  g_return_val_if_fail (path != NULL && *path != '\0', NULL);

  self = g_object_new (SUBAGENT_TYPE_EVENTS_WRITER, NULL);
  self->path = g_strdup (path);
  return self;
}

/**
 * subagent_events_writer_get_path:
 * @self: a #SubagentEventsWriter
 *
 * Gets the file written to.
 *
 * Returns: (transfer none): the file written to
 *
 * Since: 0.2
 */
const char *
subagent_events_writer_get_path (SubagentEventsWriter *self)
{
  g_return_val_if_fail (SUBAGENT_IS_EVENTS_WRITER (self), NULL);
  return self->path;
}

/**
 * subagent_events_writer_write:
 * @self: a #SubagentEventsWriter
 * @event: the event to append
 *
 * Appends @event's line to the file with one `write()` (a page-cache write:
 * no `fsync`). Safe to call from any thread.
 */
void
subagent_events_writer_write (SubagentEventsWriter *self,
                              SubagentEvent        *event)
{
  g_autofree char *line = NULL;

  g_return_if_fail (SUBAGENT_IS_EVENTS_WRITER (self));
  g_return_if_fail (SUBAGENT_IS_EVENT (event));

  line = subagent_event_to_line (event);
  _subagent_events_writer_write_line (self, line);
}

/* Appends @line, one whole event's, as subagent_events_writer_write(). */
void
_subagent_events_writer_write_line (SubagentEventsWriter *self,
                                    const char           *line)
{
  g_mutex_lock (&self->lock);
  write_held_locked (self);
  append_locked (self, line, strlen (line));
  g_mutex_unlock (&self->lock);
}

GString *
_subagent_events_writer_begin_held (SubagentEventsWriter *self)
{
  g_mutex_lock (&self->lock);
  return self->held;
}

void
_subagent_events_writer_end_held (SubagentEventsWriter *self)
{
  g_mutex_unlock (&self->lock);
}

void
_subagent_events_writer_write_held (SubagentEventsWriter *self)
{
  g_mutex_lock (&self->lock);
  write_held_locked (self);
  g_mutex_unlock (&self->lock);
}

/**
 * subagent_events_writer_flush:
 * @self: a #SubagentEventsWriter
 * @error: return location for a #GError
 *
 * Writes the lines a supervisor still holds back (it writes the lines of
 * one round of its actions together, before it emits a signal or returns
 * a result), then reports the first write error since the last flush.
 * A line given to subagent_events_writer_write() is already in the file.
 *
 * Returns: %FALSE, with @error set, when a write failed since the last flush
 */
gboolean
subagent_events_writer_flush (SubagentEventsWriter  *self,
                              GError               **error)
{
  GError *failure;

  g_return_val_if_fail (SUBAGENT_IS_EVENTS_WRITER (self), FALSE);

  g_mutex_lock (&self->lock);
  write_held_locked (self);
  failure = g_steal_pointer (&self->error);
  g_mutex_unlock (&self->lock);

  if (failure != NULL)
    {
      g_propagate_error (error, failure);
      return FALSE;
    }
  return TRUE;
}
