/* docker-tar.c: the workspace as a tar stream through the engine, both
 * ways, in process: PUT /containers/{id}/archive streams the tree in (the
 * writer: docker-tar-write.c), GET /containers/{id}/archive?path=/workspace
 * brings /workspace back (the reader: docker-tar-apply.c, with what it
 * does on disk in docker-tar-apply-files.c and docker-tar-creators.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <gio/gio.h>

#include "docker-tar-private.h"

gboolean
docker_tar_errno_error (GError    **error,
                        int         saved,
                        const char *what,
                        const char *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Could not %s %s: %s", what, path,
               g_strerror (saved));
  return FALSE;
}

/* The names in the directory @dir_fd (@rel below the root, for errors),
 * but `.`, `..` and those in @leave_out; read through a descriptor of its
 * own, so @dir_fd stays usable. */
GPtrArray *
docker_tar_list_dir (int                  dir_fd,
                     const char          *rel,
                     const char * const  *leave_out,
                     GError             **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  int dup_fd = fcntl (dir_fd, F_DUPFD_CLOEXEC, 3);
  struct dirent *de;
  DIR *dir;

  if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
    {
      int saved = errno;
      if (dup_fd >= 0)
        close (dup_fd);
      docker_tar_errno_error (error, saved, "read directory", *rel ? rel : ".");
      return NULL;
    }
  rewinddir (dir);   /* the offset is shared with dir_fd's description */
  while ((de = readdir (dir)) != NULL)
    if (!g_str_equal (de->d_name, ".") && !g_str_equal (de->d_name, "..") &&
        !(leave_out != NULL && g_strv_contains (leave_out, de->d_name)))
      g_ptr_array_add (names, g_strdup (de->d_name));
  closedir (dir);
  return g_steal_pointer (&names);
}

/* ---- through the engine --------------------------------------------------- */

typedef struct {
  const char *root;
  const char * const *exclude;
  const SubagentExcludeSet *secrets;
  guint uid, gid;
} PutJob;

static gboolean
put_writer (GOutputStream  *out,
            gpointer        user_data,
            GCancellable   *cancellable,
            GError        **error)
{
  PutJob *job = user_data;

  return docker_tar_write_tree (job->root, job->exclude, job->secrets, job->uid, job->gid, out, FALSE, NULL, cancellable,
                                error);
}

/**
 * docker_tar_put:
 * @engine: the engine
 * @container: a running container
 * @root: the local tree
 * @exclude: (nullable) (array zero-terminated=1): top-level names to leave out
 * @uid: owner of the entries inside
 * @gid: group of the entries inside
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Streams @root into the container's /workspace (PUT archive, chunked).
 *
 * Returns: %TRUE if the engine took all of it
 */
gboolean
docker_tar_put (DockerEngine        *engine,
                const char          *container,
                const char          *root,
                const char * const  *exclude,
                const SubagentExcludeSet *secrets,
                guint                uid,
                guint                gid,
                GCancellable        *cancellable,
                GError             **error)
{
  g_autofree char *path = g_strdup_printf ("/containers/%s/archive?path=/workspace", container);
  g_autoptr(DockerResponse) response = NULL;
  PutJob job = { root, exclude, secrets, uid, gid };

  response = docker_engine_request (engine, "PUT", path, "application/x-tar", NULL, put_writer, &job, FALSE,
                                    cancellable, error);
  return response != NULL &&
         docker_response_check (response, engine, "copy the workspace into the container", cancellable, error);
}

static gssize
read_response (gpointer       source,
               void          *buffer,
               gsize          size,
               GCancellable  *cancellable,
               GError       **error)
{
  return docker_response_read (source, buffer, size, cancellable, error);
}

/**
 * docker_tar_fetch:
 * @engine: the engine
 * @container: a container (running or not)
 * @root: the local tree to bring up to date
 * @keep: (nullable) (array zero-terminated=1): top-level names left alone
 * @max_file_size: the largest file accepted
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Fetches the container's /workspace (GET archive) and applies it to @root
 * with docker_tar_apply().
 *
 * Returns: %TRUE if @root now holds what /workspace holds
 */
gboolean
docker_tar_fetch (DockerEngine        *engine,
                  const char          *container,
                  const char          *root,
                  const char * const  *keep,
                  const SubagentExcludeSet *secrets,
                  guint64              max_file_size,
                  GCancellable        *cancellable,
                  GError             **error)
{
  g_autofree char *path = g_strdup_printf ("/containers/%s/archive?path=/workspace", container);
  g_autoptr(DockerResponse) response = NULL;

  response = docker_engine_request (engine, "GET", path, NULL, NULL, NULL, NULL, FALSE, cancellable, error);
  if (response == NULL ||
      !docker_response_check (response, engine, "copy /workspace out of the container", cancellable, error))
    return FALSE;
  return docker_tar_apply (read_response, response, root, keep, secrets, max_file_size, cancellable, error);
}
