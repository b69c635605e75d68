/* docker-copy-in.c: the workspace into a container's /workspace.
 *
 * Two ways, the same tar stream (docker-tar-write.c) either way:
 *
 *  - through a `tar` run in the container (an exec whose stdin is the
 *    stream): the engine only passes bytes along. The engine's own PUT
 *    archive re-executes dockerd for every copy and unpacks in Go, file by
 *    file, which costs more than the whole copy-in through `tar`
 *    (docs/performance.md, Docker). The exec runs as the container's user
 *    with all of the container's confinement, under `umask 0` so the modes
 *    are the tree's, and lists what it extracted (`-v`). Each directory's
 *    entry comes again after its contents, so an extractor that sets a
 *    directory's time on meeting it (busybox) keeps the tree's times.
 *  - PUT /containers/{id}/archive: works on every image, and is the only
 *    way on podman, whose API makes the copy volume root's until the
 *    archive's top entry gives it to the user.
 *
 * The exec's result is taken only when it proves itself: exit status 0,
 * one listed name per entry written, and no setuid, setgid or sticky bit
 * in the tree (a non-root `tar` may drop them). Anything else (an image
 * without `sh` or `tar`, a `tar` that refused a name or printed its list
 * another way, a special mode) is followed by the PUT archive of the whole
 * tree, which replaces what the exec left: the result is then exactly the
 * archive's. A copy never ends with a partial workspace reported as done.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "docker-engine.h"

/* What the exec runs: the tree's modes as they are, owners as they come
 * (the user's own), the names listed on stdout. */
#define EXTRACT_SCRIPT "umask 0 && exec tar -xovf - -C /workspace"

/* The most of the exec's stderr kept to explain a fall-back. */
#define STDERR_KEPT 2048

/* How long the stream into tar may still be written after tar's output
 * ended: it has read everything it wanted by then. */
#define FEED_GRACE_USEC (5 * G_USEC_PER_SEC)

typedef struct {
  DockerResponse *stream;
  const char *root;
  const char * const *exclude;
  const SubagentExcludeSet *secrets;
  guint uid, gid;
  GCancellable *cancellable;   /* the caller's, or the drain's failure */
  DockerTarStats stats;
  GError *error;
  GMutex lock;
  GCond cond;
  gboolean done;               /* under lock */
} Feeder;

static gpointer
feed_stdin (gpointer data)
{
  Feeder *feeder = data;
  GOutputStream *out = docker_response_get_output (feeder->stream);

  if (docker_tar_write_tree (feeder->root, feeder->exclude, feeder->secrets, feeder->uid, feeder->gid, out, TRUE,
                             &feeder->stats, feeder->cancellable, &feeder->error))
    (void) g_output_stream_flush (out, feeder->cancellable, &feeder->error);
  /* End of input even after a failure: tar then stops on its own. */
  (void) docker_response_close_write (feeder->stream, feeder->error == NULL ? &feeder->error : NULL);
  g_mutex_lock (&feeder->lock);
  feeder->done = TRUE;
  g_cond_signal (&feeder->cond);
  g_mutex_unlock (&feeder->lock);
  return NULL;
}

/* Waits for the feeder, stopping it first when @stop or when it is still
 * writing FEED_GRACE_USEC after tar's output ended. */
static void
feeder_join (Feeder  *feeder,
             GThread *thread,
             gboolean stop)
{
  gint64 deadline = g_get_monotonic_time () + FEED_GRACE_USEC;

  g_mutex_lock (&feeder->lock);
  while (!stop && !feeder->done)
    if (!g_cond_wait_until (&feeder->cond, &feeder->lock, deadline))
      stop = TRUE;
  g_mutex_unlock (&feeder->lock);
  if (stop)
    g_cancellable_cancel (feeder->cancellable);
  g_thread_join (thread);
}

static void
cancel_other (GCancellable *cancellable,
              gpointer      other)
{
  g_cancellable_cancel (G_CANCELLABLE (other));
}

/* Reads the exec's stream to its end: the lines on stdout are counted, the
 * start of stderr (or of the engine's unframed words) kept. */
static gboolean
drain_output (DockerResponse *stream,
              guint64        *out_lines,
              GString        *err,
              GCancellable   *cancellable,
              GError        **error)
{
  char buffer[65536];

  for (;;)
    {
      guint8 head[8];
      gsize got = 0;
      gboolean framed;
      guint32 size;

      if (!docker_exec_read_frame (stream, head, &got, &framed, &size, cancellable, error))
        return FALSE;
      if (got == 0)
        return TRUE;
      if (!framed)
        {
          gssize n;

          g_string_append_len (err, (const char *) head, got);
          while ((n = docker_response_read (stream, buffer, sizeof buffer, cancellable, error)) > 0)
            if (err->len < STDERR_KEPT)
              g_string_append_len (err, buffer, MIN ((gsize) n, STDERR_KEPT - err->len));
          return n == 0;
        }
      while (size > 0)
        {
          gsize want = MIN (size, sizeof buffer);

          if (!docker_response_read_fully (stream, buffer, want, &got, cancellable, error))
            return FALSE;
          if (got < want)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT, "the stream ended inside a frame");
              return FALSE;
            }
          if (head[0] == 1)
            {
              for (const char *p = buffer; (p = memchr (p, '\n', buffer + got - p)) != NULL; p++)
                (*out_lines)++;
            }
          else if (err->len < STDERR_KEPT)
            g_string_append_len (err, buffer, MIN (got, STDERR_KEPT - err->len));
          size -= got;
        }
    }
}

/* The exec's way. Returns %TRUE when the workspace is in place; %FALSE
 * with *why set when the archive should do it instead (*image_refused
 * when the image cannot run the exec at all), or with @error set when
 * nothing should be tried any more (cancelled). */
static gboolean
copy_in_by_exec (DockerEngine        *engine,
                 const char          *container,
                 const char          *user,
                 const char          *root,
                 const char * const  *exclude,
                 const SubagentExcludeSet *secrets,
                 guint                uid,
                 guint                gid,
                 char               **why,
                 gboolean            *image_refused,
                 GCancellable        *cancellable,
                 GError             **error)
{
  static const char * const argv[] = { "sh", "-c", EXTRACT_SCRIPT, NULL };
  g_autoptr(JsonNode) config = docker_exec_config (argv, user, "/", NULL, TRUE);
  g_autoptr(DockerResponse) stream = NULL;
  g_autoptr(GString) err = g_string_new (NULL);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GCancellable) feed_cancellable = g_cancellable_new ();
  g_autofree char *exec_id = NULL;
  Feeder feeder = { NULL, root, exclude, secrets, uid, gid, feed_cancellable, { 0, FALSE }, NULL };
  GThread *thread;
  gulong handler = 0;
  guint64 lines = 0;
  gboolean drained;
  DockerExecEnd end;

  stream = docker_exec_open (engine, container, config, &exec_id, cancellable, &local_error);
  if (stream == NULL)
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      *why = g_strdup (local_error->message);
      return FALSE;
    }

  feeder.stream = stream;
  g_mutex_init (&feeder.lock);
  g_cond_init (&feeder.cond);
  if (cancellable != NULL)
    handler = g_cancellable_connect (cancellable, G_CALLBACK (cancel_other), feed_cancellable, NULL);
  thread = g_thread_new ("subagent-docker-copy-in", feed_stdin, &feeder);
  drained = drain_output (stream, &lines, err, cancellable, &local_error);
  feeder_join (&feeder, thread, !drained);
  if (handler != 0)
    g_cancellable_disconnect (cancellable, handler);
  g_mutex_clear (&feeder.lock);
  g_cond_clear (&feeder.cond);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    {
      g_clear_error (&feeder.error);
      return FALSE;
    }
  if (!drained)
    {
      *why = g_strdup_printf ("its stream failed: %s", local_error->message);
      g_clear_error (&feeder.error);
      return FALSE;
    }

  end = docker_exec_wait (engine, exec_id);
  if (!end.known || end.exit_code != 0)
    {
      /* 126 and 127: the shell or tar is not there, or cannot run. */
      *image_refused = end.pid == 0 || end.exit_code == 126 || end.exit_code == 127;
      *why = g_strdup_printf ("tar in the container ended with status %" G_GINT64_FORMAT ": %s",
                              end.exit_code, g_strstrip (err->str));
      g_clear_error (&feeder.error);
      return FALSE;
    }
  if (feeder.error != NULL)
    {
      *why = g_strdup_printf ("the stream into tar failed: %s", feeder.error->message);
      g_clear_error (&feeder.error);
      return FALSE;
    }
  if (lines != feeder.stats.entries)
    {
      *why = g_strdup_printf ("tar in the container listed %" G_GUINT64_FORMAT " names for %" G_GUINT64_FORMAT
                              " entries", lines, feeder.stats.entries);
      return FALSE;
    }
  if (feeder.stats.special_modes)
    {
      *why = g_strdup ("the tree has setuid, setgid or sticky modes");
      return FALSE;
    }
  return TRUE;
}

/**
 * docker_copy_in:
 * @engine: the engine
 * @container: a running container with a writable /workspace
 * @user: (nullable): the container's user, who runs the exec
 * @root: the local tree
 * @exclude: (nullable) (array zero-terminated=1): top-level names to leave out
 * @secrets: (nullable): names never copied
 * @uid: owner of the entries inside
 * @gid: group of the entries inside
 * @use_exec: try the `tar` in the container first
 * @out_method: (out) (optional): "exec" or "archive", the way that did it
 * @out_image_refused: (out) (optional): whether the image could not run
 *   the exec at all (no `sh` or `tar`): worth remembering
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Copies @root into the container's /workspace: through a `tar` run in
 * the container when @use_exec (and the engine is not podman) and that
 * proves itself, otherwise (or after it) with PUT archive.
 *
 * Returns: %TRUE when /workspace holds the tree
 */
gboolean
docker_copy_in (DockerEngine        *engine,
                const char          *container,
                const char          *user,
                const char          *root,
                const char * const  *exclude,
                const SubagentExcludeSet *secrets,
                guint                uid,
                guint                gid,
                gboolean             use_exec,
                const char         **out_method,
                gboolean            *out_image_refused,
                GCancellable        *cancellable,
                GError             **error)
{
  g_autofree char *why = NULL;
  gboolean image_refused = FALSE;

  if (out_image_refused != NULL)
    *out_image_refused = FALSE;

  if (use_exec && !docker_engine_is_podman (engine))
    {
      g_autoptr(GError) local_error = NULL;

      if (copy_in_by_exec (engine, container, user, root, exclude, secrets, uid, gid, &why, &image_refused,
                           cancellable, &local_error))
        {
          if (out_method != NULL)
            *out_method = "exec";
          return TRUE;
        }
      if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      g_debug ("copy-in through tar in container %s: %s; using PUT archive", container, why);
    }
  if (out_method != NULL)
    *out_method = "archive";
  if (out_image_refused != NULL)
    *out_image_refused = image_refused;
  return docker_tar_put (engine, container, root, exclude, secrets, uid, gid, cancellable, error);
}
