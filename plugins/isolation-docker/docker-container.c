/* docker-container.c: one child's container through the Engine API:
 * image check, create (hardened), start, the bind probe, removal.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "docker-private.h"

#define SLEEP_FOREVER "2147483647"
/* /tmp inside: a tmpfs, as the root is read-only. */
#define TMP_OPTIONS "rw,nosuid,nodev,size=268435456,mode=1777"

/**
 * docker_error_to_isolation:
 * @error: (inout): an error of docker-engine.c, replaced by its
 *   %SUBAGENT_ISOLATION_ERROR counterpart (others are left alone)
 * @code: the code for refusals (%DOCKER_ENGINE_ERROR_FAILED and friends)
 */
void
docker_error_to_isolation (GError **error,
                           int      code)
{
  GError *e;

  if (error == NULL || *error == NULL || (*error)->domain != DOCKER_ENGINE_ERROR)
    return;
  e = *error;
  switch (e->code)
    {
    case DOCKER_ENGINE_ERROR_ADDRESS:
      e->code = SUBAGENT_ISOLATION_ERROR_INVALID_OPTION;
      break;
    case DOCKER_ENGINE_ERROR_UNREACHABLE:
    case DOCKER_ENGINE_ERROR_TOO_OLD:
      e->code = SUBAGENT_ISOLATION_ERROR_UNAVAILABLE;
      break;
    default:
      e->code = code;
    }
  e->domain = SUBAGENT_ISOLATION_ERROR;
}

/**
 * docker_container_check_image:
 * @engine: a negotiated engine
 * @image: an image reference
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Returns: %TRUE if @image is on the engine (nothing is ever pulled)
 */
gboolean
docker_container_check_image (DockerEngine  *engine,
                              const char    *image,
                              GCancellable  *cancellable,
                              GError       **error)
{
  g_autofree char *escaped = g_uri_escape_string (image, "/:@", FALSE);
  g_autofree char *path = g_strdup_printf ("/images/%s/json", escaped);
  g_autoptr(GError) local_error = NULL;

  if (docker_engine_call (engine, "GET", path, NULL, NULL, NULL, cancellable, &local_error))
    return TRUE;
  if (g_error_matches (local_error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_NOT_FOUND))
    {
      g_autofree char *described = docker_engine_describe (engine);
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Image “%s” is not on %s; libsubagent never pulls: load it first "
                   "(pull, load or import) or set docker.image", image, described);
      return FALSE;
    }
  docker_error_to_isolation (&local_error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED);
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

static void
add_label (JsonBuilder *b,
           const char  *name,
           const char  *value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_string_value (b, value ? value : "");
}

static void
add_labels (JsonBuilder      *b,
            const DockerSpec *spec)
{
  g_autofree char *pid = g_strdup_printf ("%d", (int) getpid ());

  json_builder_begin_object (b);
  add_label (b, DOCKER_LABEL_SESSION, spec->key);
  add_label (b, DOCKER_LABEL_PARENT_RUN, spec->parent_run_id);
  add_label (b, DOCKER_LABEL_OWNER_PID, pid);
  add_label (b, DOCKER_LABEL_OWNER_HOST, g_get_host_name ());
  if (spec->pool)
    add_label (b, DOCKER_LABEL_POOL, "true");
  json_builder_end_object (b);
}

static void
add_ulimit (JsonBuilder *b,
            const char  *name,
            gint64       value)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "Name");
  json_builder_add_string_value (b, name);
  json_builder_set_member_name (b, "Soft");
  json_builder_add_int_value (b, value);
  json_builder_set_member_name (b, "Hard");
  json_builder_add_int_value (b, value);
  json_builder_end_object (b);
}

static void
add_bind (JsonBuilder *b,
          const char  *source,
          const char  *target,
          gboolean     read_only)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "Type");
  json_builder_add_string_value (b, "bind");
  json_builder_set_member_name (b, "Source");
  json_builder_add_string_value (b, source);
  json_builder_set_member_name (b, "Target");
  json_builder_add_string_value (b, target);
  json_builder_set_member_name (b, "ReadOnly");
  json_builder_add_boolean_value (b, read_only);
  json_builder_end_object (b);
}

/* The copy-mode workspace: a tmpfs volume made writable for the user at
 * mount time (a disk volume's root would stay root's, and the user has no
 * capability to change that). */
static void
add_copy_volume (JsonBuilder      *b,
                 const DockerSpec *spec)
{
  g_autofree char *options = spec->numeric_user
                             ? g_strdup_printf ("uid=%u,gid=%u,mode=0755", spec->uid, spec->gid)
                             : g_strdup ("mode=1777");

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "Type");
  json_builder_add_string_value (b, "volume");
  json_builder_set_member_name (b, "Target");
  json_builder_add_string_value (b, DOCKER_WORKDIR);
  json_builder_set_member_name (b, "VolumeOptions");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "Labels");
  add_labels (b, spec);
  json_builder_set_member_name (b, "DriverConfig");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "Name");
  json_builder_add_string_value (b, "local");
  json_builder_set_member_name (b, "Options");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "type");
  json_builder_add_string_value (b, "tmpfs");
  json_builder_set_member_name (b, "device");
  json_builder_add_string_value (b, "tmpfs");
  json_builder_set_member_name (b, "o");
  json_builder_add_string_value (b, options);
  json_builder_end_object (b);
  json_builder_end_object (b);
  json_builder_end_object (b);
  json_builder_end_object (b);
}

static JsonNode *
create_body (const DockerSpec *spec)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "Image");
  json_builder_add_string_value (b, spec->image);
  /* Whatever the image's entrypoint, PID 1 only waits for execs. */
  json_builder_set_member_name (b, "Entrypoint");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, "sleep");
  json_builder_end_array (b);
  json_builder_set_member_name (b, "Cmd");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, SLEEP_FOREVER);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "User");
  json_builder_add_string_value (b, spec->user);
  json_builder_set_member_name (b, "WorkingDir");
  json_builder_add_string_value (b, DOCKER_WORKDIR);
  json_builder_set_member_name (b, "StopTimeout");
  json_builder_add_int_value (b, 1);
  json_builder_set_member_name (b, "Labels");
  add_labels (b, spec);

  json_builder_set_member_name (b, "HostConfig");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "NetworkMode");
  json_builder_add_string_value (b, spec->network);
  json_builder_set_member_name (b, "CapDrop");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, "ALL");
  json_builder_end_array (b);
  json_builder_set_member_name (b, "SecurityOpt");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, "no-new-privileges");
  json_builder_end_array (b);
  json_builder_set_member_name (b, "ReadonlyRootfs");
  json_builder_add_boolean_value (b, TRUE);
  json_builder_set_member_name (b, "Tmpfs");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "/tmp");
  json_builder_add_string_value (b, TMP_OPTIONS);
  json_builder_end_object (b);
  if (spec->cpus > 0.0)
    {
      json_builder_set_member_name (b, "NanoCpus");
      json_builder_add_int_value (b, (gint64) (spec->cpus * 1e9 + 0.5));
    }
  if (spec->memory_bytes > 0)
    {
      json_builder_set_member_name (b, "Memory");
      json_builder_add_int_value (b, spec->memory_bytes);
      /* No swap beyond the limit: the limit is the limit. */
      json_builder_set_member_name (b, "MemorySwap");
      json_builder_add_int_value (b, spec->memory_bytes);
    }
  /* 0 asks for none: -1, so an engine's own default (podman's 2048)
   * does not apply either. */
  json_builder_set_member_name (b, "PidsLimit");
  json_builder_add_int_value (b, spec->pids_limit > 0 ? spec->pids_limit : -1);
  if (spec->nofile > 0 || spec->nproc > 0)
    {
      json_builder_set_member_name (b, "Ulimits");
      json_builder_begin_array (b);
      if (spec->nofile > 0)
        add_ulimit (b, "nofile", spec->nofile);
      if (spec->nproc > 0)
        add_ulimit (b, "nproc", spec->nproc);
      json_builder_end_array (b);
    }
  json_builder_set_member_name (b, "Mounts");
  json_builder_begin_array (b);
  if (spec->bind_source != NULL)
    {
      add_bind (b, spec->bind_source, DOCKER_WORKDIR, FALSE);
      /* A worktree's `.git` file points at the parent's git dir, which is
       * not mounted; read-only, the child cannot point the host's review
       * at a repository of its own. */
      if (spec->bind_git_read_only)
        {
          g_autofree char *git = g_build_filename (spec->bind_source, ".git", NULL);
          add_bind (b, git, DOCKER_WORKDIR "/.git", TRUE);
        }
    }
  else
    add_copy_volume (b, spec);
  json_builder_end_array (b);
  json_builder_end_object (b);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/**
 * docker_container_create:
 * @engine: a negotiated engine
 * @spec: what to make
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Creates the container (not started) named @spec's name.
 *
 * Returns: (transfer full) (nullable): its id
 */
char *
docker_container_create (DockerEngine      *engine,
                         const DockerSpec  *spec,
                         GCancellable      *cancellable,
                         GError           **error)
{
  g_autoptr(JsonNode) body = create_body (spec);
  g_autoptr(JsonNode) answer = NULL;
  g_autofree char *escaped = g_uri_escape_string (spec->name, NULL, FALSE);
  g_autofree char *path = g_strdup_printf ("/containers/create?name=%s", escaped);
  const char *id;

  if (!docker_engine_call (engine, "POST", path, body, NULL, &answer, cancellable, error))
    return NULL;
  if (answer == NULL || !JSON_NODE_HOLDS_OBJECT (answer) ||
      (id = json_object_get_string_member_with_default (json_node_get_object (answer), "Id", NULL)) == NULL)
    {
      g_autofree char *described = docker_engine_describe (engine);
      g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_FAILED,
                   "%s created container %s without saying its id", described, spec->name);
      return NULL;
    }
  return g_strdup (id);
}

gboolean
docker_container_start (DockerEngine  *engine,
                        const char    *id,
                        GCancellable  *cancellable,
                        GError       **error)
{
  g_autofree char *path = g_strdup_printf ("/containers/%s/start", id);

  return docker_engine_call (engine, "POST", path, NULL, NULL, NULL, cancellable, error);
}

/**
 * docker_container_is_running:
 * @engine: the engine
 * @id: a container id
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Returns: %TRUE if the container exists and runs (a warm container taken
 *   from the pool is checked once: someone may have removed it meanwhile)
 */
gboolean
docker_container_is_running (DockerEngine  *engine,
                             const char    *id,
                             GCancellable  *cancellable,
                             GError       **error)
{
  g_autofree char *escaped = g_uri_escape_string (id, NULL, FALSE);
  g_autofree char *path = g_strdup_printf ("/containers/%s/json", escaped);
  g_autoptr(JsonNode) answer = NULL;
  JsonObject *state;

  if (!docker_engine_call (engine, "GET", path, NULL, NULL, &answer, cancellable, error))
    return FALSE;
  if (answer == NULL || !JSON_NODE_HOLDS_OBJECT (answer) ||
      !json_object_has_member (json_node_get_object (answer), "State") ||
      !JSON_NODE_HOLDS_OBJECT (json_object_get_member (json_node_get_object (answer), "State")))
    return FALSE;
  state = json_object_get_object_member (json_node_get_object (answer), "State");
  return json_object_get_boolean_member_with_default (state, "Running", FALSE);
}

/**
 * docker_container_remove:
 * @engine: the engine
 * @container: an id or name
 * @error: return location for a #GError
 *
 * Kills and removes the container with its anonymous volumes. Podman's
 * forced removal waits for the stop timeout first, so it is killed
 * before. A container already gone is success.
 *
 * Returns: %TRUE if the container no longer exists
 */
gboolean
docker_container_remove (DockerEngine  *engine,
                         const char    *container,
                         GError       **error)
{
  g_autofree char *escaped = g_uri_escape_string (container, NULL, FALSE);
  g_autofree char *kill_path = g_strdup_printf ("/containers/%s/kill?signal=KILL", escaped);
  g_autofree char *path = g_strdup_printf ("/containers/%s?force=1&v=1", escaped);
  g_autoptr(GError) local_error = NULL;

  if (docker_engine_is_podman (engine))
    (void) docker_engine_call (engine, "POST", kill_path, NULL, NULL, NULL, NULL, NULL);
  if (docker_engine_call (engine, "DELETE", path, NULL, NULL, NULL, NULL, &local_error) ||
      g_error_matches (local_error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_NOT_FOUND))
    return TRUE;
  /* Removal already under way elsewhere: it ends the same. */
  if (g_error_matches (local_error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_CONFLICT) &&
      strstr (local_error->message, "in progress") != NULL)
    return TRUE;
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

/**
 * docker_container_probe:
 * @engine: the engine
 * @container: a container with the host directory bind-mounted at /workspace
 * @name: the probe file's name in that directory
 * @nonce: what the host wrote into it
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads the probe file back through the engine (GET archive): only an
 * engine that sees the host's directory finds it with the same content.
 *
 * Returns: %TRUE if the engine sees the host directory; %FALSE with no
 *   error when it does not, with an error when it could not be asked
 */
gboolean
docker_container_probe (DockerEngine  *engine,
                        const char    *container,
                        const char    *name,
                        const char    *nonce,
                        GCancellable  *cancellable,
                        GError       **error)
{
  g_autofree char *path = g_strdup_printf ("/containers/%s/archive?path=" DOCKER_WORKDIR "/%s", container, name);
  g_autoptr(DockerResponse) response = NULL;
  g_autoptr(GError) local_error = NULL;
  char header[512];
  char content[128] = { 0 };
  gsize got = 0;

  response = docker_engine_request (engine, "GET", path, NULL, NULL, NULL, NULL, FALSE, cancellable, error);
  if (response == NULL)
    return FALSE;
  if (docker_response_get_status (response) == 404)
    return FALSE;
  if (!docker_response_check (response, engine, "read the probe file", cancellable, error))
    return FALSE;
  if (!docker_response_read_fully (response, header, sizeof header, &got, cancellable, error) || got < sizeof header)
    return FALSE;
  if (!docker_response_read_fully (response, content, MIN (strlen (nonce), sizeof content - 1), &got, cancellable,
                                   error))
    return FALSE;
  return got == strlen (nonce) && memcmp (content, nonce, got) == 0;
}
