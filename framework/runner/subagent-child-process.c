/* subagent-child-process.c: plumbing of the command runner.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <glib-unix.h>

#include "subagent.h"
#include "subagent-child-process-private.h"
#include "subagent-json-private.h"

struct _SubagentPipeWriter
{
  int fd;                       /* written with write(); -1 once closed */
  GOutputStream *stream;        /* a GSubprocess's pipe, when not written through @fd */
  GMainContext *context;
  GQueue pending;               /* of GBytes */
  gsize offset;                 /* into the head of @pending */
  GSource *source;              /* waiting for the pipe to be writable */
  gboolean close_requested;
};

/* SIGPIPE is thread-directed for a write to a broken pipe: blocking it in
 * this thread turns it into EPIPE, and the signal the write raises is
 * consumed before the mask is restored. No process-wide disposition
 * changes. */
typedef struct {
  sigset_t old_mask;
  gboolean was_pending;
} PipeGuard;

static void
pipe_guard_begin (PipeGuard *guard)
{
  sigset_t set;

  sigemptyset (&set);
  sigaddset (&set, SIGPIPE);
  pthread_sigmask (SIG_BLOCK, &set, &guard->old_mask);
  /* Only a SIGPIPE this thread blocked already can be pending here (one it
   * did not block would have been delivered): only then look. */
  guard->was_pending = FALSE;
  if (sigismember (&guard->old_mask, SIGPIPE) == 1)
    {
      sigset_t pending;

      sigemptyset (&pending);
      sigpending (&pending);
      guard->was_pending = sigismember (&pending, SIGPIPE) == 1;
    }
}

/* A write raises SIGPIPE only when the reader is gone: it then fails
 * (EPIPE) or, having lost its reader part-way, returns a short count, so
 * the pending signals are looked at only after such a write (@wrote_all:
 * it wrote everything it was given). */
static void
pipe_guard_end (PipeGuard *guard,
                gboolean   wrote_all)
{
  sigset_t pending;

  sigemptyset (&pending);
  if (!wrote_all && !guard->was_pending && sigpending (&pending) == 0 && sigismember (&pending, SIGPIPE) == 1)
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
  else if (self->fd >= 0)
    close (self->fd);
  self->fd = -1;
}

static void flush (SubagentPipeWriter *self);

static gboolean
on_writable (gpointer user_data)
{
  SubagentPipeWriter *self = user_data;
  GSource *source = g_steal_pointer (&self->source);

  flush (self);
  g_source_unref (source);
  return G_SOURCE_REMOVE;
}

static gboolean
on_stream_writable (GObject  *stream,
                    gpointer  user_data)
{
  return on_writable (user_data);
}

static gboolean
on_fd_writable (int           fd,
                GIOCondition  condition,
                gpointer      user_data)
{
  return on_writable (user_data);
}

static void
wait_writable (SubagentPipeWriter *self)
{
  if (self->source != NULL)
    return;
  if (self->stream != NULL)
    {
      self->source = g_pollable_output_stream_create_source (G_POLLABLE_OUTPUT_STREAM (self->stream), NULL);
      g_source_set_callback (self->source, (GSourceFunc) G_CALLBACK (on_stream_writable), self, NULL);
    }
  else
    {
      self->source = g_unix_fd_source_new (self->fd, G_IO_OUT | G_IO_ERR | G_IO_HUP);
      g_source_set_callback (self->source, (GSourceFunc) G_CALLBACK (on_fd_writable), self, NULL);
    }
  g_source_attach (self->source, self->context);
}

/* Writes what it can of @data without blocking: the count, 0 when the
 * pipe is full, -1 (with @error) when the child no longer reads. */
static gssize
write_some (SubagentPipeWriter  *self,
            gboolean             pollable,
            const guint8        *data,
            gsize                size,
            GError             **error)
{
  PipeGuard guard;
  gssize n;

  pipe_guard_begin (&guard);
  if (self->stream == NULL)
    {
      do
        n = write (self->fd, data, size);
      while (n < 0 && errno == EINTR);
      if (n < 0 && errno == EAGAIN)
        n = 0;
      else if (n < 0)
        {
          int saved = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "%s", g_strerror (saved));
        }
    }
  else if (pollable)
    {
      g_autoptr(GError) local_error = NULL;

      n = g_pollable_output_stream_write_nonblocking (G_POLLABLE_OUTPUT_STREAM (self->stream), data, size,
                                                      NULL, &local_error);
      if (n < 0 && g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        n = 0;
      else if (n < 0)
        g_propagate_error (error, g_steal_pointer (&local_error));
    }
  else
    {
      /* Only exotic backends; GSubprocess pipes always poll. */
      gsize written = 0;

      n = g_output_stream_write_all (self->stream, data, size, &written, NULL, error) ? (gssize) written : -1;
    }
  pipe_guard_end (&guard, n == (gssize) size);
  return n;
}

static void
flush (SubagentPipeWriter *self)
{
  gboolean pollable = FALSE;

  if (self->fd < 0 && self->stream == NULL)
    return;
  if (self->stream != NULL)
    pollable = G_IS_POLLABLE_OUTPUT_STREAM (self->stream) &&
               g_pollable_output_stream_can_poll (G_POLLABLE_OUTPUT_STREAM (self->stream));

  while (!g_queue_is_empty (&self->pending))
    {
      GBytes *head = g_queue_peek_head (&self->pending);
      gsize size;
      const guint8 *data = g_bytes_get_data (head, &size);
      g_autoptr(GError) error = NULL;
      gssize n = write_some (self, pollable, data + self->offset, size - self->offset, &error);

      if (n == 0)
        {
          wait_writable (self);
          return;
        }
      if (n < 0)
        {
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

  self->fd = -1;
  self->stream = g_object_ref (stream);
  self->context = context ? g_main_context_ref (context) : g_main_context_ref_thread_default ();
  g_queue_init (&self->pending);
  return self;
}

SubagentPipeWriter *
subagent_pipe_writer_new_fd (int           fd,
                             GMainContext *context)
{
  SubagentPipeWriter *self = g_new0 (SubagentPipeWriter, 1);

  /* The host's end alone (the child's is another open file): a full pipe
   * must not block the main context. */
  if (fcntl (fd, F_SETFL, O_NONBLOCK) != 0)
    g_debug ("Cannot make the child's stdin non-blocking: %s", g_strerror (errno));
  self->fd = fd;
  self->context = context ? g_main_context_ref (context) : g_main_context_ref_thread_default ();
  g_queue_init (&self->pending);
  return self;
}

void
subagent_pipe_writer_write (SubagentPipeWriter *self,
                            GBytes             *bytes)
{
  if (subagent_pipe_writer_is_closed (self) || self->close_requested || g_bytes_get_size (bytes) == 0)
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
  return self->stream == NULL && self->fd < 0;
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

/* Finding what a run left behind.
 *
 * A run's processes are its child's descendants (linked by ppid while their
 * parents live) and whatever carries the run's token in its environment
 * (reparented orphans and daemons). Reading every process of the system for
 * that is what made a short child cost several times a bare spawn, so a
 * sweep only looks at processes that can belong to the run:
 *
 * - every one of them was created after the child, so its pid was allocated
 *   after the child's. The kernel allocates pids cyclically, so they lie in
 *   (child pid, last allocated pid], read from /proc/loadavg. That holds
 *   while the allocation cursor has not gone all the way round since the
 *   spawn; the cursor advances once per fork (counted by "processes" in
 *   /proc/stat) plus once per pid in use it skips (at most three per
 *   thread: pid, process group, session), so a sweep probes the range only
 *   while forks + 3 × threads stay under half of pid_max and the range is
 *   short. Otherwise it reads all of /proc, as before;
 * - in either case a process that started before the child cannot be the
 *   run's, so its environment is not read. */

#define PROBE_MAX_PIDS 4096
#define STAT_BUFFER 1024

struct _SubagentRunProcesses
{
  char *tag;                    /* "SUBAGENT_RUN_TOKEN=<token>" */
  int proc_fd;                  /* /proc, -1 if it could not be opened */
  GPid root;                    /* the child; 0 before it is spawned */
  guint64 root_start;           /* its start time in clock ticks; 0 if unknown */
  guint64 forks_before;         /* "processes" of /proc/stat before the spawn */
  guint64 threads_before;
  guint64 pid_max;
  gboolean counters_known;      /* the three above were read */
};

typedef struct {
  GPid pid;
  GPid ppid;
  guint64 start;
} ProcEntry;

/* Reads a small /proc file relative to @dir_fd into @buffer (NUL-terminated). */
static gssize
read_small (int         dir_fd,
            const char *path,
            char       *buffer,
            gsize       size)
{
  gssize n;
  int fd = openat (dir_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

  if (fd < 0)
    return -1;
  do
    n = read (fd, buffer, size - 1);
  while (n < 0 && errno == EINTR);
  close (fd);
  if (n < 0)
    return -1;
  buffer[n] = '\0';
  return n;
}

/* "pid (comm) state ppid ... starttime(22) ...": comm may hold spaces and
 * parentheses, so fields are counted from the last ')'. */
static gboolean
parse_stat (const char *text,
            GPid       *ppid,
            guint64    *start)
{
  const char *p = strrchr (text, ')');
  char state;
  int parent;

  if (p == NULL || sscanf (p + 1, " %c %d", &state, &parent) != 2)
    return FALSE;
  /* After ')' come fields 3..; starttime is field 22, 20 fields on. */
  for (int field = 3; field <= 22 && p != NULL; field++)
    p = strchr (p + 1, ' ');
  if (p == NULL)
    return FALSE;
  *ppid = (GPid) parent;
  *start = g_ascii_strtoull (p + 1, NULL, 10);
  return TRUE;
}

static gboolean
read_entry (int       proc_fd,
            GPid      pid,
            ProcEntry *entry)
{
  char path[32];
  char buffer[STAT_BUFFER];

  g_snprintf (path, sizeof path, "%d/stat", (int) pid);
  if (read_small (proc_fd, path, buffer, sizeof buffer) <= 0 ||
      !parse_stat (buffer, &entry->ppid, &entry->start))
    return FALSE;
  entry->pid = pid;
  return TRUE;
}

/* The last pid allocated and the number of threads, from /proc/loadavg
 * ("0.00 0.00 0.00 1/80 12345"), and the forks since boot from /proc/stat. */
static gboolean
read_counters (int      proc_fd,
               GPid    *last_pid,
               guint64 *threads,
               guint64 *forks)
{
  char buffer[128];
  char *p;
  g_autofree char *stat = NULL;
  gsize length = 0;

  if (read_small (proc_fd, "loadavg", buffer, sizeof buffer) <= 0 ||
      (p = strchr (buffer, '/')) == NULL)
    return FALSE;
  *threads = g_ascii_strtoull (p + 1, &p, 10);
  *last_pid = (GPid) g_ascii_strtoll (p, NULL, 10);
  if (*last_pid <= 0)
    return FALSE;
  /* /proc/stat outgrows a small buffer on many-CPU machines; one read()
   * into the stack does on a few. */
  {
    char small[4096];
    gssize n = read_small (proc_fd, "stat", small, sizeof small);

    if (n > 0 && (gsize) n < sizeof small - 1)
      {
        if ((p = strstr (small, "\nprocesses ")) == NULL)
          return FALSE;
        *forks = g_ascii_strtoull (p + strlen ("\nprocesses "), NULL, 10);
        return *forks > 0;
      }
  }
  if (!g_file_get_contents ("/proc/stat", &stat, &length, NULL) ||
      (p = strstr (stat, "\nprocesses ")) == NULL)
    return FALSE;
  *forks = g_ascii_strtoull (p + strlen ("\nprocesses "), NULL, 10);
  return *forks > 0;
}

/* Call before spawning the child: the fork count it reads must predate it. */
SubagentRunProcesses *
subagent_run_processes_new (const char *token)
{
  SubagentRunProcesses *self = g_new0 (SubagentRunProcesses, 1);
  char buffer[64];
  GPid last_pid;

  self->tag = g_strdup_printf ("%s=%s", SUBAGENT_RUN_TOKEN_ENV, token);
  self->proc_fd = open ("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (self->proc_fd >= 0 &&
      read_small (self->proc_fd, "sys/kernel/pid_max", buffer, sizeof buffer) > 0 &&
      (self->pid_max = g_ascii_strtoull (buffer, NULL, 10)) > 0 &&
      read_counters (self->proc_fd, &last_pid, &self->threads_before, &self->forks_before))
    self->counters_known = TRUE;
  return self;
}

/* After the spawn: no counters, so every sweep reads all of /proc. */
SubagentRunProcesses *
subagent_run_processes_new_unbounded (const char *token)
{
  SubagentRunProcesses *self = g_new0 (SubagentRunProcesses, 1);

  self->tag = g_strdup_printf ("%s=%s", SUBAGENT_RUN_TOKEN_ENV, token);
  self->proc_fd = open ("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return self;
}

void
subagent_run_processes_set_root (SubagentRunProcesses *self,
                                 GPid                  root)
{
  ProcEntry entry;

  self->root = root;
  /* /proc of another pid namespace would not show our child under its pid. */
  if (self->proc_fd >= 0 && root > 0 && read_entry (self->proc_fd, root, &entry) && entry.ppid == getpid ())
    self->root_start = entry.start;
  else
    self->counters_known = FALSE;
}

void
subagent_run_processes_free (SubagentRunProcesses *self)
{
  if (self == NULL)
    return;
  if (self->proc_fd >= 0)
    close (self->proc_fd);
  g_free (self->tag);
  g_free (self);
}

/* The processes created since the child, or NULL when that range cannot be
 * trusted (see above) and all of /proc must be read. */
static GArray *
probe_new_processes (SubagentRunProcesses *self)
{
  GArray *entries;
  GPid last_pid;
  guint64 threads, forks, span;

  if (!self->counters_known || !read_counters (self->proc_fd, &last_pid, &threads, &forks) ||
      forks < self->forks_before || (guint64) last_pid >= self->pid_max)
    return NULL;
  if ((forks - self->forks_before) + 3 * MAX (threads, self->threads_before) >= self->pid_max / 2)
    return NULL;
  span = last_pid >= self->root ? (guint64) (last_pid - self->root)
                                : self->pid_max - (guint64) self->root + (guint64) last_pid;
  if (span > PROBE_MAX_PIDS)
    return NULL;

  entries = g_array_new (FALSE, FALSE, sizeof (ProcEntry));
  for (guint64 i = 1; i <= span; i++)
    {
      GPid pid = (GPid) (((guint64) self->root + i) % self->pid_max);
      ProcEntry entry;

      /* Thread ids answer too; a thread stands for its process below. */
      if (pid > 0 && read_entry (self->proc_fd, pid, &entry) && entry.start >= self->root_start)
        g_array_append_val (entries, entry);
    }
  return entries;
}

/* Every process in /proc that started no earlier than the child. */
static GArray *
list_processes (SubagentRunProcesses *self)
{
  GArray *entries = g_array_new (FALSE, FALSE, sizeof (ProcEntry));
  /* A description of its own: a dup() would share the read position. */
  int fd = self->proc_fd >= 0 ? openat (self->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *dirent;

  if (dir == NULL)
    {
      if (fd >= 0)
        close (fd);
      return entries;
    }
  while ((dirent = readdir (dir)) != NULL)
    {
      ProcEntry entry;

      if (!g_ascii_isdigit (dirent->d_name[0]))
        continue;
      if (read_entry (self->proc_fd, (GPid) g_ascii_strtoll (dirent->d_name, NULL, 10), &entry) &&
          entry.start >= self->root_start)
        g_array_append_val (entries, entry);
    }
  closedir (dir);
  return entries;
}

/* Whether @pid runs as @uid and has @tag in its environment. */
static gboolean
environ_has_entry (int         proc_fd,
                   GPid        pid,
                   uid_t       uid,
                   const char *tag)
{
  char path[32];
  g_autoptr(GByteArray) data = g_byte_array_new ();
  guint8 chunk[4096];
  struct stat st;
  gssize n;
  int fd;

  g_snprintf (path, sizeof path, "%d/environ", (int) pid);
  fd = openat (proc_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return FALSE;
  /* Only our own processes: even root leaves other users' alone. */
  if (fstat (fd, &st) != 0 || st.st_uid != uid)
    {
      close (fd);
      return FALSE;
    }
  while ((n = read (fd, chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      g_byte_array_append (data, chunk, (guint) n);
  close (fd);
  for (gsize i = 0; i < data->len; )
    {
      const char *entry = (const char *) data->data + i;
      gsize len = strnlen (entry, data->len - i);

      if (len == strlen (tag) && memcmp (entry, tag, len) == 0)
        return TRUE;
      i += len + 1;
    }
  return FALSE;
}

/* A thread of this very process: its id answers in /proc but must never be signalled. */
static gboolean
is_own_thread (int  proc_fd,
               GPid pid)
{
  char path[48];

  g_snprintf (path, sizeof path, "self/task/%d", (int) pid);
  return faccessat (proc_fd, path, F_OK, 0) == 0;
}

guint
subagent_run_processes_signal (SubagentRunProcesses *self,
                               gboolean              root_alive,
                               int                   signum)
{
  g_autoptr(GArray) entries = NULL;
  g_autoptr(GHashTable) targets = g_hash_table_new (NULL, NULL);
  GPid self_pid = getpid ();
  uid_t self_uid = geteuid ();
  GHashTableIter iter;
  gpointer key;
  guint signalled = 0;
  gboolean grew;

  g_return_val_if_fail (self != NULL, 0);

  if (self->proc_fd < 0)
    return 0;
  root_alive = root_alive && self->root > 0;
  entries = probe_new_processes (self);
  if (entries == NULL)
    entries = list_processes (self);

  /* Descendants of the live child: grow the set until no entry joins it. */
  grew = root_alive;
  if (root_alive)
    g_hash_table_add (targets, GINT_TO_POINTER (self->root));
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

  for (guint i = 0; i < entries->len; i++)
    {
      ProcEntry *e = &g_array_index (entries, ProcEntry, i);

      if (e->pid != self_pid && e->pid != self->root &&
          !g_hash_table_contains (targets, GINT_TO_POINTER (e->pid)) &&
          environ_has_entry (self->proc_fd, e->pid, self_uid, self->tag))
        g_hash_table_add (targets, GINT_TO_POINTER (e->pid));
    }

  g_hash_table_remove (targets, GINT_TO_POINTER (self->root));
  g_hash_table_iter_init (&iter, targets);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      GPid pid = GPOINTER_TO_INT (key);

      if (pid > 1 && pid != self_pid && !is_own_thread (self->proc_fd, pid) && kill (pid, signum) == 0)
        signalled++;
    }
  return signalled;
}

JsonObject *
subagent_child_message_parse (const char  *line,
                              const char **type)
{
  g_autoptr(JsonParser) parser = NULL;
  JsonNode *root;
  JsonObject *object;

  while (g_ascii_isspace (*line))
    line++;
  if (*line != '{')
    return NULL;
  parser = json_parser_new_immutable ();
  if (!subagent_json_parser_load_bounded (parser, line, -1, NULL))
    return NULL;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  object = json_node_get_object (root);
  if (!subagent_json_read_string (object, "message", "type", TRUE, type, NULL))
    return NULL;
  return json_object_ref (object);
}
