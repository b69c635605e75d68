/* docker-exec.c: one process run in a container through the Engine API:
 * the exec's creation, its stream taken over, how it ended.
 *
 * Shared by the plugin (the copy-in, docker-copy-in.c) and the exec helper
 * (a child's processes), so both ask the engine the same way.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "docker-engine.h"

/**
 * docker_exec_config:
 * @argv: (array zero-terminated=1): the program and its arguments
 * @user: (nullable): who runs it; %NULL for the container's user
 * @workdir: (nullable): where; %NULL for the container's
 * @env: (nullable) (array zero-terminated=1): its environment (`NAME=value`)
 * @attach_stdin: whether its stdin is the stream's (else it reads nothing)
 *
 * An exec's configuration: stdout and stderr attached, no TTY.
 *
 * Returns: (transfer full): the JSON body of POST /containers/{id}/exec
 */
JsonNode *
docker_exec_config (const char * const *argv,
                    const char         *user,
                    const char         *workdir,
                    const char * const *env,
                    gboolean            attach_stdin)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "AttachStdin");
  json_builder_add_boolean_value (b, attach_stdin);
  json_builder_set_member_name (b, "AttachStdout");
  json_builder_add_boolean_value (b, TRUE);
  json_builder_set_member_name (b, "AttachStderr");
  json_builder_add_boolean_value (b, TRUE);
  json_builder_set_member_name (b, "Tty");
  json_builder_add_boolean_value (b, FALSE);
  if (user != NULL)
    {
      json_builder_set_member_name (b, "User");
      json_builder_add_string_value (b, user);
    }
  if (workdir != NULL)
    {
      json_builder_set_member_name (b, "WorkingDir");
      json_builder_add_string_value (b, workdir);
    }
  if (env != NULL)
    {
      json_builder_set_member_name (b, "Env");
      json_builder_begin_array (b);
      for (guint i = 0; env[i] != NULL; i++)
        json_builder_add_string_value (b, env[i]);
      json_builder_end_array (b);
    }
  json_builder_set_member_name (b, "Cmd");
  json_builder_begin_array (b);
  for (guint i = 0; argv[i] != NULL; i++)
    json_builder_add_string_value (b, argv[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/**
 * docker_exec_open:
 * @engine: the engine
 * @container: a running container
 * @config: the exec's configuration (`Cmd`, `Attach*`, `User`, …)
 * @out_exec_id: (out): the exec's id, to ask docker_exec_wait() later
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Creates the exec and starts it attached: the connection is taken over
 * (`Upgrade: tcp`), so the response's body is the multiplexed stream of
 * its stdout and stderr and docker_response_get_output() writes its stdin.
 *
 * Returns: (transfer full): the stream, or %NULL with @error set
 */
DockerResponse *
docker_exec_open (DockerEngine  *engine,
                  const char    *container,
                  JsonNode      *config,
                  char         **out_exec_id,
                  GCancellable  *cancellable,
                  GError       **error)
{
  static const char start_body[] = "{\"Detach\":false,\"Tty\":false}";
  g_autoptr(GBytes) body = g_bytes_new_static (start_body, sizeof start_body - 1);
  g_autofree char *create_path = g_strdup_printf ("/containers/%s/exec", container);
  g_autofree char *start_path = NULL;
  g_autoptr(JsonNode) created = NULL;
  g_autoptr(DockerResponse) stream = NULL;
  const char *id;

  if (!docker_engine_call (engine, "POST", create_path, config, NULL, &created, cancellable, error))
    return NULL;
  if (created == NULL || !JSON_NODE_HOLDS_OBJECT (created) ||
      (id = json_object_get_string_member_with_default (json_node_get_object (created), "Id", NULL)) == NULL)
    {
      g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_FAILED,
                   "%s answered an exec's creation without its id", docker_engine_get_address (engine));
      return NULL;
    }
  start_path = g_strdup_printf ("/exec/%s/start", id);
  stream = docker_engine_request (engine, "POST", start_path, "application/json", body, NULL, NULL, TRUE,
                                  cancellable, error);
  if (stream == NULL)
    return NULL;
  if (docker_response_get_status (stream) != 101 && docker_response_get_status (stream) != 200)
    {
      if (docker_response_check (stream, engine, "start the exec", cancellable, error))
        g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_FAILED,
                     "%s answered an exec's start with status %u", docker_engine_get_address (engine),
                     docker_response_get_status (stream));
      return NULL;
    }
  *out_exec_id = g_strdup (id);
  return g_steal_pointer (&stream);
}

/**
 * docker_exec_wait:
 * @engine: the engine
 * @exec_id: an exec whose stream has ended
 *
 * Asks the engine how the exec ended (exec inspect), a few seconds at
 * most: the stream ends with the process, but its status may lag.
 *
 * Returns: the end; `known` is %FALSE when the engine never said
 */
DockerExecEnd
docker_exec_wait (DockerEngine *engine,
                  const char   *exec_id)
{
  g_autofree char *path = g_strdup_printf ("/exec/%s/json", exec_id);
  DockerExecEnd end = { FALSE, -1, 0 };

  for (guint attempt = 0; attempt < 500; attempt++)
    {
      g_autoptr(JsonNode) node = NULL;
      JsonObject *object;
      JsonNode *code;

      if (!docker_engine_call (engine, "GET", path, NULL, NULL, &node, NULL, NULL) || node == NULL ||
          !JSON_NODE_HOLDS_OBJECT (node))
        break;
      object = json_node_get_object (node);
      if (json_object_has_member (object, "Pid"))
        end.pid = json_object_get_int_member (object, "Pid");
      code = json_object_get_member (object, "ExitCode");
      if (!json_object_get_boolean_member_with_default (object, "Running", FALSE) && code != NULL &&
          !JSON_NODE_HOLDS_NULL (code))
        {
          end.exit_code = json_node_get_int (code);
          end.known = TRUE;
          break;
        }
      g_usleep (20 * 1000);
    }
  return end;
}

/**
 * docker_exec_read_frame:
 * @stream: an exec's stream (docker_exec_open())
 * @head: (out caller-allocates) (array fixed-size=8): the frame's header
 * @out_got: (out): how many bytes of @head were read
 * @out_framed: (out): whether @head is a frame header
 * @out_size: (out): the frame's length, when it is one
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads the next frame's header: the stream (1 stdout, 2 stderr), three
 * zero bytes and a big-endian length. At the end of the stream *out_got
 * is 0. Bytes that are no frame header (podman writes its exec errors
 * unframed) are left in @head for the caller, with *out_framed %FALSE.
 *
 * Returns: %FALSE on a read error or a header cut short
 */
gboolean
docker_exec_read_frame (DockerResponse *stream,
                        guint8          head[8],
                        gsize          *out_got,
                        gboolean       *out_framed,
                        guint32        *out_size,
                        GCancellable   *cancellable,
                        GError        **error)
{
  *out_size = 0;
  *out_framed = FALSE;
  if (!docker_response_read_fully (stream, head, 8, out_got, cancellable, error))
    return FALSE;
  if (*out_got == 0)
    return TRUE;
  if (*out_got < 8)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT, "the stream ended inside a frame header");
      return FALSE;
    }
  *out_framed = head[0] <= 2 && head[1] == 0 && head[2] == 0 && head[3] == 0;
  if (*out_framed)
    *out_size = ((guint32) head[4] << 24) | ((guint32) head[5] << 16) | ((guint32) head[6] << 8) | head[7];
  return TRUE;
}
