/* subagent-session-log.c: an append-only, group-committed file of session records.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subagent.h"
#include "subagent-state-path-private.h"
#include "subagent-records-private.h"
#include "subagent-session-private.h"

/* A line longer than this is no record (a session file's own bound). */
#define SESSION_LINE_MAX_BYTES (16 * 1024 * 1024)
/* A log is read this much at a time: its size is not bounded. */
#define SESSION_LOG_CHUNK_BYTES (1024 * 1024)
#define SESSION_LOG_SUFFIX ".jsonl"

/**
 * SubagentSessionLog:
 *
 * The session records of one parent run, as lines of JSON appended to
 * `<sessions_dir>/<log_id>.jsonl`.
 *
 * When subagent_session_log_append() returns, the record is in the file:
 * other processes read it, and it survives the host's crash. It reaches the
 * disk moments later: a thread of the log `fdatasync()`s whatever was
 * appended since its last sync, at most 50 ms after an append (so
 * that records of children finishing close together share one sync: one
 * sync per record cost about as much CPU as a trivial child, and one every
 * 10 ms still 0.011 ms of the host's CPU per child when some 2,000 trivial
 * children ended each second, docs/performance.md), and no child waits
 * for one. subagent_session_log_sync() waits until
 * everything appended so far is on disk; dropping the last reference to the
 * log does too. No file is created per record. Both matter on a busy
 * filesystem, where creating a file and syncing it cost far more than the
 * run of a small child (docs/performance.md).
 *
 * A later record of the same session (a follow-up) supersedes the earlier
 * one; subagent_session_log_read_dir() and subagent_session_log_lookup()
 * read every log of a directory, together with single-record files written
 * by subagent_session_save(), and return the latest record of each session.
 * A line torn by a crash is skipped and reported, never fatal.
 */

struct _SubagentSessionLog
{
  GObject parent_instance;

  char *dir;
  char *path;

  GMutex lock;
  GCond cond;
  int fd;                       /* -1 until the first append */
  gboolean needs_newline;       /* the file ends in a torn line */
  guint64 size;                 /* the file's length, as far as our writes tell */
  gboolean size_known;          /* FALSE after a failed write: no spans from then on */
  guint64 appended;             /* records written so far */
  guint64 synced;               /* of those, known to be on disk */
  guint sync_waiters;           /* in subagent_session_log_sync() */
  gboolean syncer_idle;         /* waits for a first append to sync */
  GThread *syncer;              /* started with the first append */
  gboolean quit;
  GError *sync_error;           /* a failed sync: sticky, since the kernel reports a lost write once */
};

G_DEFINE_FINAL_TYPE (SubagentSessionLog, subagent_session_log, G_TYPE_OBJECT)

static void
subagent_session_log_finalize (GObject *object)
{
  SubagentSessionLog *self = SUBAGENT_SESSION_LOG (object);

  /* The syncer makes the last records durable before it leaves. */
  if (self->syncer != NULL)
    {
      g_mutex_lock (&self->lock);
      self->quit = TRUE;
      g_cond_broadcast (&self->cond);
      g_mutex_unlock (&self->lock);
      g_thread_join (self->syncer);
    }
  if (self->fd >= 0)
    close (self->fd);
  g_clear_error (&self->sync_error);
  g_free (self->dir);
  g_free (self->path);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  G_OBJECT_CLASS (subagent_session_log_parent_class)->finalize (object);
}

static void
subagent_session_log_class_init (SubagentSessionLogClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_session_log_finalize;
}

static void
subagent_session_log_init (SubagentSessionLog *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->fd = -1;
}

/**
 * subagent_session_log_new:
 * @sessions_dir: the directory of session records
 * @log_id: names the log file: 1–128 characters of `[A-Za-z0-9_-]`, normally
 *   the parent's run id
 * @error: return location for a #GError
 *
 * Nothing is created until the first append.
 *
 * Returns: (transfer full): the log, or %NULL with @error set
 *   (%SUBAGENT_ERROR_INVALID_ARGUMENT) for an invalid @log_id
 */
SubagentSessionLog *
subagent_session_log_new (const char  *sessions_dir,
                          const char  *log_id,
                          GError     **error)
{
  SubagentSessionLog *self;
  g_autofree char *file = NULL;

  g_return_val_if_fail (sessions_dir != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!subagent_session_id_is_valid (log_id))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "“%s” cannot name a session log: use 1–128 characters of [A-Za-z0-9_-]",
                   log_id ? log_id : "(null)");
      return NULL;
    }
  self = g_object_new (SUBAGENT_TYPE_SESSION_LOG, NULL);
  self->dir = g_strdup (sessions_dir);
  file = g_strconcat (log_id, SESSION_LOG_SUFFIX, NULL);
  self->path = g_build_filename (sessions_dir, file, NULL);
  return self;
}

/**
 * subagent_session_log_get_path:
 * @self: a #SubagentSessionLog
 *
 * Gets the log file's path (it may not exist yet).
 *
 * Returns: the log file's path (it may not exist yet)
 *
 * Since: 0.2
 */
const char *
subagent_session_log_get_path (SubagentSessionLog *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SESSION_LOG (self), NULL);
  return self->path;
}

static gboolean
set_errno_error (GError     **error,
                 int          saved,
                 const char  *what,
                 const char  *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Could not %s %s: %s", what, path,
               g_strerror (saved));
  return FALSE;
}

/* Opens the log for appending; a new file's directory entry is synced. A
 * file that ends mid-line (a crash during a write) gets a newline first, so
 * the torn line stays alone and every later record reads back. */
static gboolean
open_log (SubagentSessionLog  *self,
          GError             **error)
{
  struct stat st;
  char last;
  int dir_fd;

  /* An existing log is only reused through real directories. */
  if (!_subagent_state_dir_ensure (self->dir, 0700, error))
    return FALSE;
  self->fd = open (self->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (self->fd >= 0)
    {
      self->size_known = fstat (self->fd, &st) == 0;
      self->size = self->size_known ? (guint64) st.st_size : 0;
      if (self->size_known && st.st_size > 0)
        {
          int reader = open (self->path, O_RDONLY | O_CLOEXEC);

          if (reader >= 0 && pread (reader, &last, 1, st.st_size - 1) == 1 && last != '\n')
            self->needs_newline = TRUE;
          if (reader >= 0)
            close (reader);
        }
      return TRUE;
    }
  if (errno != ENOENT)
    return set_errno_error (error, errno, "open the session log", self->path);
  if (!_subagent_state_dir_ensure (self->dir, 0700, error))
    return FALSE;
  self->fd = open (self->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (self->fd < 0)
    return set_errno_error (error, errno, "create the session log", self->path);
  self->size = 0;
  self->size_known = TRUE;
  dir_fd = open (self->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0)
    {
      (void) fsync (dir_fd);
      close (dir_fd);
    }
  return TRUE;
}

/* How long the sync thread lets appends gather before it syncs them,
 * unless someone waits for the sync (or the log is closing). What a
 * machine's crash (not the host's) may take of the last records. */
#define SYNC_DELAY_MS 50

/* Syncs what was appended, as long as the log lives; one sync covers
 * every record written before it starts. */
static gpointer
sync_thread (gpointer data)
{
  SubagentSessionLog *self = data;

  g_mutex_lock (&self->lock);
  for (;;)
    {
      guint64 target;
      int saved = 0;

      self->syncer_idle = TRUE;
      while (self->synced == self->appended && !self->quit)
        g_cond_wait (&self->cond, &self->lock);
      self->syncer_idle = FALSE;
      if (self->synced == self->appended)
        break;
      {
        gint64 deadline = g_get_monotonic_time () + SYNC_DELAY_MS * G_TIME_SPAN_MILLISECOND;

        while (!self->quit && self->sync_waiters == 0)
          if (!g_cond_wait_until (&self->cond, &self->lock, deadline))
            break;
      }
      target = self->appended;
      g_mutex_unlock (&self->lock);

      if (fdatasync (self->fd) != 0)
        saved = errno;

      g_mutex_lock (&self->lock);
      if (saved != 0)
        {
          g_clear_error (&self->sync_error);
          set_errno_error (&self->sync_error, saved, "flush the session log", self->path);
          g_warning ("%s", self->sync_error->message);
        }
      self->synced = target;
      g_cond_broadcast (&self->cond);
    }
  g_mutex_unlock (&self->lock);
  return NULL;
}

/* Writes @text (a record and its newline) with one write() where the
 * kernel allows, so that concurrent appenders never interleave within it,
 * and says in @span where the record went (length 0 when this log lost
 * track of the file's length). Called locked. */
static gboolean
write_record (SubagentSessionLog   *self,
              GString              *text,
              SubagentSessionSpan  *span,
              GError              **error)
{
  gsize done = 0;

  if (self->fd < 0 && !open_log (self, error))
    return FALSE;
  span->offset = self->size + (self->needs_newline ? 1 : 0);
  span->length = self->size_known ? text->len - 1 : 0;
  if (self->needs_newline)
    g_string_prepend_c (text, '\n');
  while (done < text->len)
    {
      gssize n = write (self->fd, text->str + done, text->len - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;

          /* What reached the file may end mid-line. */
          self->needs_newline = done > 0 || self->needs_newline;
          self->size_known = FALSE;
          return set_errno_error (error, saved, "append to the session log", self->path);
        }
      done += (gsize) n;
    }
  self->size += text->len;
  self->needs_newline = FALSE;
  return TRUE;
}

/**
 * subagent_session_log_append:
 * @self: a #SubagentSessionLog
 * @session: the record to append
 * @error: return location for a #GError
 *
 * Appends @session. It is in the file when this returns and on disk soon
 * after (see subagent_session_log_sync()). It may block briefly on the
 * filesystem; call it from a worker thread, or use
 * subagent_session_log_append_async().
 *
 * Returns: %TRUE on success; %FALSE with @error set (a #GIOErrorEnum, or
 *   %SUBAGENT_ERROR_INVALID_ARGUMENT for a session whose id is invalid)
 */
gboolean
subagent_session_log_append (SubagentSessionLog  *self,
                             SubagentSession     *session,
                             GError             **error)
{
  g_autoptr(GString) line = NULL;
  SubagentSessionSpan span;

  g_return_val_if_fail (SUBAGENT_IS_SESSION_LOG (self), FALSE);
  g_return_val_if_fail (SUBAGENT_IS_SESSION (session), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* Compact: strings escape their newlines. */
  line = g_string_sized_new (1024);
  _subagent_session_append_line (session, line);
  g_string_append_c (line, '\n');
  return _subagent_session_log_append_line_at (self, subagent_session_get_session_id (session), line, &span, error);
}

gboolean
_subagent_session_log_append_line_at (SubagentSessionLog   *self,
                                      const char           *session_id,
                                      GString              *line,
                                      SubagentSessionSpan  *span,
                                      GError              **error)
{
  gboolean ok;

  if (!subagent_session_id_is_valid (session_id))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Refusing to log session “%s”: a session id must be 1–128 characters of [A-Za-z0-9_-]",
                   session_id);
      return FALSE;
    }
  g_mutex_lock (&self->lock);
  ok = write_record (self, line, span, error);
  if (ok)
    {
      self->appended++;
      if (self->syncer == NULL)
        self->syncer = g_thread_new ("subagent-sessions", sync_thread, self);
      /* While it gathers appends, waking it for each would only cost a
       * context switch: it syncs this one with the others. */
      else if (self->syncer_idle)
        g_cond_broadcast (&self->cond);
    }
  g_mutex_unlock (&self->lock);
  return ok;
}

SubagentSession *
_subagent_session_new_from_line (const char  *line,
                                 gsize        length,
                                 GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  JsonNode *root;

  if (!subagent_json_parser_load_bounded (parser, line, (gssize) length, error) ||
      (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  return subagent_session_new_from_json (json_node_get_object (root), error);
}

SubagentSession *
_subagent_session_log_read_at (SubagentSessionLog        *self,
                               const SubagentSessionSpan *span,
                               const char                *session_id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentSession) session = NULL;
  g_autofree char *data = NULL;
  gsize done = 0;
  int fd;

  if (span->length == 0 || span->length > SESSION_LINE_MAX_BYTES)
    return NULL;
  fd = open (self->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return NULL;
  data = g_malloc (span->length);
  while (done < span->length)
    {
      gssize n = pread (fd, data + done, span->length - done, (off_t) (span->offset + done));

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      done += (gsize) n;
    }
  close (fd);
  if (done < span->length)
    return NULL;
  session = _subagent_session_new_from_line (data, span->length, &error);
  if (session == NULL)
    {
      g_debug ("%s at %" G_GUINT64_FORMAT ": no session record%s%s", self->path, span->offset,
               error ? ": " : "", error ? error->message : "");
      return NULL;
    }
  /* Another writer of this file would have moved the records. */
  if (g_strcmp0 (subagent_session_get_session_id (session), session_id) != 0)
    return NULL;
  return g_steal_pointer (&session);
}

/**
 * subagent_session_log_sync:
 * @self: a #SubagentSessionLog
 * @error: return location for a #GError
 *
 * Waits until every record appended before the call is on disk.
 *
 * Returns: %TRUE when they are; %FALSE with @error set once a sync of this
 *   log has failed (a #GIOErrorEnum): records written before it may be lost
 */
gboolean
subagent_session_log_sync (SubagentSessionLog  *self,
                           GError             **error)
{
  guint64 target;
  gboolean ok = TRUE;

  g_return_val_if_fail (SUBAGENT_IS_SESSION_LOG (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_mutex_lock (&self->lock);
  target = self->appended;
  /* The sync thread stops gathering appends for us. */
  self->sync_waiters++;
  g_cond_broadcast (&self->cond);
  while (self->synced < target)
    g_cond_wait (&self->cond, &self->lock);
  self->sync_waiters--;
  if (self->sync_error != NULL)
    {
      g_propagate_error (error, g_error_copy (self->sync_error));
      ok = FALSE;
    }
  g_mutex_unlock (&self->lock);
  return ok;
}

static void
append_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  GError *error = NULL;

  if (subagent_session_log_append (source_object, task_data, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/**
 * subagent_session_log_append_async:
 * @self: a #SubagentSessionLog
 * @session: the record to append
 * @cancellable: (nullable): a #GCancellable; an append that has started completes
 * @callback: (scope async): called once the record is in the file, or failed
 * @user_data: (closure): data for @callback
 *
 * Runs subagent_session_log_append() in a worker thread.
 */
void
subagent_session_log_append_async (SubagentSessionLog  *self,
                                   SubagentSession     *session,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SUBAGENT_IS_SESSION_LOG (self));
  g_return_if_fail (SUBAGENT_IS_SESSION (session));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, subagent_session_log_append_async);
  g_task_set_task_data (task, g_object_ref (session), g_object_unref);
  g_task_run_in_thread (task, append_thread);
}

/**
 * subagent_session_log_append_finish:
 * @self: a #SubagentSessionLog
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes subagent_session_log_append_async().
 *
 * Returns: %TRUE when the record is in the file
 */
gboolean
subagent_session_log_append_finish (SubagentSessionLog  *self,
                                    GAsyncResult        *result,
                                    GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* ------------------------------------------------------------------------ */

/* The latest record of a session: by completion time, then by reading order. */
static gboolean
supersedes (SubagentSession *candidate,
            SubagentSession *current)
{
  GDateTime *a = subagent_session_get_completed_at (candidate);
  GDateTime *b = subagent_session_get_completed_at (current);

  if (a == NULL || b == NULL)
    return b == NULL;
  return g_date_time_compare (a, b) >= 0;
}

static void
keep_latest (GHashTable      *latest,
             SubagentSession *session)
{
  SubagentSession *current = g_hash_table_lookup (latest, subagent_session_get_session_id (session));

  if (current == NULL || supersedes (session, current))
    g_hash_table_replace (latest, g_strdup (subagent_session_get_session_id (session)), g_object_ref (session));
}

static void
read_line (const char *path,
           guint       line_number,
           const char *line,
           gsize       length,
           GHashTable *latest,
           GPtrArray  *skipped)
{
  g_autoptr(SubagentSession) session = NULL;
  g_autoptr(GError) error = NULL;

  if (length == 0)
    return;
  session = _subagent_session_new_from_line (line, length, &error);
  if (session == NULL)
    {
      g_ptr_array_add (skipped, g_strdup_printf ("%s:%u: not a session record%s%s", path, line_number,
                                                 error ? ": " : " (not a JSON object)", error ? error->message : ""));
      return;
    }
  keep_latest (latest, session);
}

/* Reads the log a chunk at a time, so that neither its size nor memory
 * bounds what reads back; a line past SESSION_LINE_MAX_BYTES is skipped. */
static void
read_log (const char *path,
          GHashTable *latest,
          GPtrArray  *skipped)
{
  g_autoptr(GByteArray) buffer = g_byte_array_new ();
  guint line_number = 0;
  gboolean too_long = FALSE;    /* inside a line past the bound: dropped */
  gboolean eof = FALSE;
  guint64 total = 0;
  struct stat st;
  int fd;

  fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    {
      int saved = errno;

      g_ptr_array_add (skipped, g_strdup_printf ("%s: cannot open it: %s", path, g_strerror (saved)));
      return;
    }
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      g_ptr_array_add (skipped, g_strdup_printf ("%s: not a regular file", path));
      return;
    }
  while (!eof)
    {
      guint old = buffer->len;
      /* No more than the file holds, for the usual small log. */
      gsize want = (guint64) st.st_size > total ? MIN ((guint64) st.st_size - total + 1, SESSION_LOG_CHUNK_BYTES)
                                                  : 4096;
      gsize start = 0;
      gssize n;

      g_byte_array_set_size (buffer, old + (guint) want);
      while ((n = read (fd, buffer->data + old, want)) < 0 && errno == EINTR)
        ;
      if (n < 0)
        {
          int saved = errno;

          g_ptr_array_add (skipped, g_strdup_printf ("%s: cannot read it: %s", path, g_strerror (saved)));
          n = 0;
        }
      g_byte_array_set_size (buffer, old + (guint) n);
      total += (guint64) n;
      eof = n == 0;
      /* Each whole line; at the end, what is left (a line torn by a crash). */
      while (start < buffer->len)
        {
          const guint8 *newline = memchr (buffer->data + start, '\n', buffer->len - start);
          gsize end = newline ? (gsize) (newline - buffer->data) : buffer->len;

          if (newline == NULL && !eof)
            break;
          line_number++;
          if (too_long)
            g_ptr_array_add (skipped, g_strdup_printf ("%s:%u: not a session record (longer than %d bytes)", path,
                                                       line_number, SESSION_LINE_MAX_BYTES));
          else
            read_line (path, line_number, (const char *) buffer->data + start, end - start, latest, skipped);
          too_long = FALSE;
          start = newline ? end + 1 : buffer->len;
        }
      g_byte_array_remove_range (buffer, 0, (guint) start);
      if (buffer->len > SESSION_LINE_MAX_BYTES)
        {
          too_long = TRUE;
          g_byte_array_set_size (buffer, 0);
        }
    }
  if (too_long)
    g_ptr_array_add (skipped, g_strdup_printf ("%s:%u: not a session record (longer than %d bytes)", path,
                                               line_number + 1, SESSION_LINE_MAX_BYTES));
  close (fd);
}

GHashTable *
_subagent_session_log_read_back (SubagentSessionLog *self)
{
  GHashTable *latest = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);

  g_return_val_if_fail (SUBAGENT_IS_SESSION_LOG (self), latest);

  read_log (self->path, latest, problems);
  /* A line being appended right now reads as torn: it is in memory still. */
  for (guint i = 0; i < problems->len; i++)
    g_debug ("Reading back %s: %s", self->path, (const char *) problems->pdata[i]);
  return latest;
}

static gint
compare_started (gconstpointer a,
                 gconstpointer b)
{
  GDateTime *ta = subagent_session_get_started_at (*(SubagentSession **) a);
  GDateTime *tb = subagent_session_get_started_at (*(SubagentSession **) b);

  if (ta == NULL || tb == NULL)
    return (ta == NULL) - (tb == NULL);
  return g_date_time_compare (ta, tb);
}

/**
 * subagent_session_log_read_dir:
 * @sessions_dir: the directory of session records
 * @skipped: (out) (optional) (transfer full): what could not be read, one
 *   message per file or line, naming it
 * @error: return location for a #GError
 *
 * Reads every session log (`*.jsonl`) and single-record file (`*.json`) in
 * @sessions_dir. A directory that does not exist holds no sessions.
 *
 * Returns: (transfer container) (element-type SubagentSession): the latest
 *   record of each session, oldest start first; %NULL with @error set when
 *   the directory cannot be listed
 */
GPtrArray *
subagent_session_log_read_dir (const char  *sessions_dir,
                               GStrv       *skipped,
                               GError     **error)
{
  g_autoptr(GHashTable) latest = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDir) dir = NULL;
  GPtrArray *sessions;
  GHashTableIter iter;
  gpointer value;
  const char *entry;

  g_return_val_if_fail (sessions_dir != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  dir = g_dir_open (sessions_dir, 0, &local_error);
  if (dir == NULL && !g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;

      if (entry[0] == '.')
        continue;  /* a temporary file of subagent_session_save() */
      path = g_build_filename (sessions_dir, entry, NULL);
      if (g_str_has_suffix (entry, SESSION_LOG_SUFFIX))
        read_log (path, latest, problems);
      else if (g_str_has_suffix (entry, ".json"))
        {
          g_autoptr(GError) bad = NULL;
          g_autoptr(SubagentSession) session = subagent_session_load (path, &bad);

          if (session != NULL)
            keep_latest (latest, session);
          else
            g_ptr_array_add (problems, g_strdup (bad->message));
        }
    }

  sessions = g_ptr_array_new_with_free_func (g_object_unref);
  g_hash_table_iter_init (&iter, latest);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (sessions, g_object_ref (value));
  g_ptr_array_sort (sessions, compare_started);
  if (skipped != NULL)
    {
      g_ptr_array_add (problems, NULL);
      *skipped = (GStrv) g_ptr_array_free (g_steal_pointer (&problems), FALSE);
    }
  return sessions;
}

/**
 * subagent_session_log_lookup:
 * @sessions_dir: the directory of session records
 * @session_id: the session (a child's run id)
 * @error: return location for a #GError
 *
 * Finds the latest record of @session_id among the logs and files of
 * @sessions_dir.
 *
 * Returns: (transfer full): the session, or %NULL with @error set
 *   (%SUBAGENT_ERROR_NOT_FOUND when no record names it,
 *   %SUBAGENT_ERROR_INVALID_ARGUMENT for an invalid id)
 */
SubagentSession *
subagent_session_log_lookup (const char  *sessions_dir,
                             const char  *session_id,
                             GError     **error)
{
  g_autoptr(GPtrArray) sessions = NULL;

  g_return_val_if_fail (sessions_dir != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!subagent_session_id_is_valid (session_id))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "“%s” is not a session id: use the run id of a child (1–128 characters of [A-Za-z0-9_-])",
                   session_id ? session_id : "(null)");
      return NULL;
    }
  sessions = subagent_session_log_read_dir (sessions_dir, NULL, error);
  if (sessions == NULL)
    return NULL;
  for (guint i = 0; i < sessions->len; i++)
    if (g_str_equal (subagent_session_get_session_id (sessions->pdata[i]), session_id))
      return g_object_ref (sessions->pdata[i]);
  g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_NOT_FOUND,
               "No session %s in %s (subagentctl sessions lists the kept ones)", session_id, sessions_dir);
  return NULL;
}
