/* docker-engine-http.c: the Docker Engine API over HTTP/1.1: connections
 * (unix socket, TCP, TCP+TLS), chunked request bodies, requests and their
 * answers.
 *
 * Every request opens its own connection (`Connection: close`): a unix
 * socket costs microseconds, and nothing is shared between threads.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <gio/gunixsocketaddress.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>

#include "docker-engine-private.h"

#define MAX_HEADER_LINES 200
#define MAX_ERROR_BODY (64 * 1024)
#define MAX_JSON_BODY (64 * 1024 * 1024)

struct _DockerResponse
{
  GIOStream *conn;
  GDataInputStream *in;
  guint status;
  GHashTable *headers;   /* lower-case name → value */
  enum { BODY_NONE, BODY_LENGTH, BODY_CHUNKED, BODY_EOF } mode;
  guint64 remaining;     /* BODY_LENGTH: left; BODY_CHUNKED: left in chunk */
  gboolean done;
};

/* ---- connections ---------------------------------------------------------- */

/* DOCKER_TLS without DOCKER_TLS_VERIFY: encrypted, not authenticated. */
static gboolean
accept_any_certificate (GTlsConnection       *connection,
                        GTlsCertificate      *peer_cert,
                        GTlsCertificateFlags  errors,
                        gpointer              user_data)
{
  return TRUE;
}

static GIOStream *
engine_connect (DockerEngine  *engine,
                GCancellable  *cancellable,
                GError       **error)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketConnection) conn = NULL;
  g_autoptr(GIOStream) tls = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *described = docker_engine_describe (engine);

  g_socket_client_set_timeout (client, 30);
  if (engine->socket_path != NULL)
    {
      g_autoptr(GSocketAddress) address = g_unix_socket_address_new (engine->socket_path);
      conn = g_socket_client_connect (client, G_SOCKET_CONNECTABLE (address), cancellable, &local_error);
    }
  else
    conn = g_socket_client_connect_to_host (client, engine->tcp_host, engine->tcp_port, cancellable, &local_error);
  if (conn == NULL)
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_UNREACHABLE,
                     "No container engine answers: cannot connect to %s: %s; start the engine, or point "
                     "DOCKER_HOST (or docker.host) at a running one", described, local_error->message);
      return NULL;
    }
  /* The engine answers small requests: no Nagle delay on them. */
  if (engine->tcp_host != NULL)
    g_socket_set_option (g_socket_connection_get_socket (conn), IPPROTO_TCP, TCP_NODELAY, 1, NULL);
  if (!engine->tls)
    return G_IO_STREAM (g_steal_pointer (&conn));

  {
    g_autoptr(GSocketConnectable) identity = g_network_address_new (engine->tcp_host, engine->tcp_port);
    g_autoptr(GTlsCertificate) cert = NULL;
    g_autoptr(GTlsDatabase) database = NULL;

    tls = g_tls_client_connection_new (G_IO_STREAM (conn), identity, &local_error);
    if (tls == NULL)
      goto tls_failed;
    if (engine->cert_file != NULL)
      {
        cert = g_tls_certificate_new_from_files (engine->cert_file, engine->key_file, &local_error);
        if (cert == NULL)
          goto tls_failed;
        g_tls_connection_set_certificate (G_TLS_CONNECTION (tls), cert);
      }
    if (engine->ca_file != NULL)
      {
        database = g_tls_file_database_new (engine->ca_file, &local_error);
        if (database == NULL)
          goto tls_failed;
        g_tls_connection_set_database (G_TLS_CONNECTION (tls), database);
      }
G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    g_tls_client_connection_set_validation_flags (G_TLS_CLIENT_CONNECTION (tls),
                                                  engine->tls_verify ? G_TLS_CERTIFICATE_VALIDATE_ALL : 0);
G_GNUC_END_IGNORE_DEPRECATIONS
    if (!engine->tls_verify)
      g_signal_connect (tls, "accept-certificate", G_CALLBACK (accept_any_certificate), NULL);
    if (!g_tls_connection_handshake (G_TLS_CONNECTION (tls), cancellable, &local_error))
      goto tls_failed;
    return g_steal_pointer (&tls);
  }

tls_failed:
  if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_propagate_error (error, g_steal_pointer (&local_error));
  else
    g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_UNREACHABLE,
                 "TLS with %s failed: %s; check DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem) and DOCKER_TLS_VERIFY",
                 described, local_error->message);
  return NULL;
}

/* ---- the chunked request body --------------------------------------------- */

#define DOCKER_TYPE_CHUNKED_OUTPUT (docker_chunked_output_get_type ())
G_DECLARE_FINAL_TYPE (DockerChunkedOutput, docker_chunked_output, DOCKER, CHUNKED_OUTPUT, GFilterOutputStream)

struct _DockerChunkedOutput
{
  GFilterOutputStream parent_instance;
};

G_DEFINE_TYPE (DockerChunkedOutput, docker_chunked_output, G_TYPE_FILTER_OUTPUT_STREAM)

static gssize
chunked_write (GOutputStream  *stream,
               const void     *buffer,
               gsize           count,
               GCancellable   *cancellable,
               GError        **error)
{
  GOutputStream *base = g_filter_output_stream_get_base_stream (G_FILTER_OUTPUT_STREAM (stream));
  char head[32];
  int len;

  if (count == 0)
    return 0;
  len = g_snprintf (head, sizeof head, "%zx\r\n", count);
  if (!g_output_stream_write_all (base, head, len, NULL, cancellable, error) ||
      !g_output_stream_write_all (base, buffer, count, NULL, cancellable, error) ||
      !g_output_stream_write_all (base, "\r\n", 2, NULL, cancellable, error))
    return -1;
  return count;
}

static gboolean
chunked_close (GOutputStream  *stream,
               GCancellable   *cancellable,
               GError        **error)
{
  GOutputStream *base = g_filter_output_stream_get_base_stream (G_FILTER_OUTPUT_STREAM (stream));

  /* The end of the body, not of the connection: the answer comes on it. */
  return g_output_stream_write_all (base, "0\r\n\r\n", 5, NULL, cancellable, error) &&
         g_output_stream_flush (base, cancellable, error);
}

static void
docker_chunked_output_class_init (DockerChunkedOutputClass *klass)
{
  GOutputStreamClass *stream_class = G_OUTPUT_STREAM_CLASS (klass);

  stream_class->write_fn = chunked_write;
  stream_class->close_fn = chunked_close;
}

static void
docker_chunked_output_init (DockerChunkedOutput *self)
{
}

/* ---- requests ------------------------------------------------------------- */

void
docker_response_free (DockerResponse *response)
{
  if (response == NULL)
    return;
  g_clear_object (&response->in);
  if (response->conn != NULL)
    g_io_stream_close (response->conn, NULL, NULL);
  g_clear_object (&response->conn);
  g_clear_pointer (&response->headers, g_hash_table_unref);
  g_free (response);
}

static char *
read_line (DockerResponse  *response,
           GCancellable    *cancellable,
           GError         **error)
{
  g_autoptr(GError) local_error = NULL;
  gsize len = 0;
  char *line = g_data_input_stream_read_line (response->in, &len, cancellable, &local_error);

  if (line == NULL && local_error == NULL)
    g_set_error (&local_error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT, "the engine closed the connection");
  if (line == NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  if (len > 0 && line[len - 1] == '\r')
    line[len - 1] = '\0';
  return line;
}

static gboolean
read_head (DockerResponse  *response,
           gboolean         head_only,
           GCancellable    *cancellable,
           GError         **error)
{
  g_autofree char *status_line = read_line (response, cancellable, error);
  const char *value;
  guint lines = 0;

  if (status_line == NULL)
    return FALSE;
  if (!g_str_has_prefix (status_line, "HTTP/1.") || strlen (status_line) < 12 ||
      sscanf (status_line + 9, "%3u", &response->status) != 1)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "not an HTTP answer: “%.60s”", status_line);
      return FALSE;
    }
  response->headers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (;;)
    {
      g_autofree char *line = read_line (response, cancellable, error);
      char *colon;

      if (line == NULL)
        return FALSE;
      if (*line == '\0')
        break;
      if (++lines > MAX_HEADER_LINES || (colon = strchr (line, ':')) == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "bad HTTP header “%.60s”", line);
          return FALSE;
        }
      *colon = '\0';
      g_hash_table_replace (response->headers, g_ascii_strdown (line, -1), g_strdup (g_strstrip (colon + 1)));
    }

  if (head_only || response->status == 204 || response->status == 304 || response->status / 100 == 1)
    response->mode = response->status == 101 ? BODY_EOF : BODY_NONE;
  else if ((value = docker_response_get_header (response, "transfer-encoding")) != NULL &&
           g_ascii_strcasecmp (value, "chunked") == 0)
    response->mode = BODY_CHUNKED;
  else if ((value = docker_response_get_header (response, "content-length")) != NULL)
    {
      if (!g_ascii_string_to_unsigned (value, 10, 0, G_MAXUINT64, &response->remaining, NULL))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "bad Content-Length “%s”", value);
          return FALSE;
        }
      response->mode = BODY_LENGTH;
    }
  else
    response->mode = BODY_EOF;
  response->done = response->mode == BODY_NONE || (response->mode == BODY_LENGTH && response->remaining == 0);
  return TRUE;
}

/**
 * docker_engine_request:
 * @engine: the engine
 * @method: GET, POST, PUT, DELETE, HEAD
 * @path: the path after the version prefix (`/containers/json?all=1`);
 *   an unversioned path starts with `//` (`//_ping`)
 * @content_type: (nullable): of @body or of what @writer writes
 * @body: (nullable): the whole body
 * @writer: (nullable): writes a chunked body instead
 * @writer_data: for @writer
 * @upgrade: ask to take the connection over (exec, attach)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Sends one request on a connection of its own and reads the answer's
 * head; the body is read with docker_response_read().
 *
 * Returns: (transfer full) (nullable): the response, whatever its status
 */
DockerResponse *
docker_engine_request (DockerEngine      *engine,
                       const char        *method,
                       const char        *path,
                       const char        *content_type,
                       GBytes            *body,
                       DockerBodyWriter   writer,
                       gpointer           writer_data,
                       gboolean           upgrade,
                       GCancellable      *cancellable,
                       GError           **error)
{
  g_autoptr(DockerResponse) response = g_new0 (DockerResponse, 1);
  g_autoptr(GString) head = g_string_new (NULL);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *described = NULL;
  GOutputStream *out;

  response->conn = engine_connect (engine, cancellable, error);
  if (response->conn == NULL)
    return NULL;
  out = g_io_stream_get_output_stream (response->conn);

  if (g_str_has_prefix (path, "//"))
    g_string_append_printf (head, "%s %s HTTP/1.1\r\n", method, path + 1);
  else
    g_string_append_printf (head, "%s /v%s%s HTTP/1.1\r\n", method, engine->api ? engine->api : DOCKER_API_MIN, path);
  g_string_append (head, "Host: docker\r\nUser-Agent: libsubagent\r\n");
  if (content_type != NULL)
    g_string_append_printf (head, "Content-Type: %s\r\n", content_type);
  if (writer != NULL)
    g_string_append (head, "Transfer-Encoding: chunked\r\n");
  else if (body != NULL || g_str_equal (method, "POST") || g_str_equal (method, "PUT"))
    g_string_append_printf (head, "Content-Length: %zu\r\n", body ? g_bytes_get_size (body) : 0);
  if (upgrade)
    g_string_append (head, "Connection: Upgrade\r\nUpgrade: tcp\r\n");
  else
    g_string_append (head, "Connection: close\r\n");
  g_string_append (head, "\r\n");

  if (!g_output_stream_write_all (out, head->str, head->len, NULL, cancellable, &local_error) ||
      (body != NULL && g_bytes_get_size (body) > 0 &&
       !g_output_stream_write_all (out, g_bytes_get_data (body, NULL), g_bytes_get_size (body), NULL,
                                   cancellable, &local_error)))
    goto failed;
  if (writer != NULL)
    {
      g_autoptr(GOutputStream) chunked = g_object_new (DOCKER_TYPE_CHUNKED_OUTPUT, "base-stream", out,
                                                       "close-base-stream", FALSE, NULL);
      g_autoptr(GOutputStream) buffered = g_buffered_output_stream_new_sized (chunked, 256 * 1024);

      g_filter_output_stream_set_close_base_stream (G_FILTER_OUTPUT_STREAM (buffered), TRUE);
      if (!writer (buffered, writer_data, cancellable, &local_error))
        {
          /* The engine may have refused early: its answer says why. */
          g_autoptr(GError) writer_error = g_steal_pointer (&local_error);

          response->in = g_data_input_stream_new (g_io_stream_get_input_stream (response->conn));
          g_filter_input_stream_set_close_base_stream (G_FILTER_INPUT_STREAM (response->in), FALSE);
          if (!g_error_matches (writer_error, G_IO_ERROR, G_IO_ERROR_CANCELLED) &&
              read_head (response, FALSE, cancellable, NULL) && response->status >= 400)
            return g_steal_pointer (&response);
          g_propagate_error (error, g_steal_pointer (&writer_error));
          return NULL;
        }
      if (!g_output_stream_close (buffered, cancellable, &local_error))
        goto failed;
    }
  if (!g_output_stream_flush (out, cancellable, &local_error))
    goto failed;

  response->in = g_data_input_stream_new (g_io_stream_get_input_stream (response->conn));
  g_filter_input_stream_set_close_base_stream (G_FILTER_INPUT_STREAM (response->in), FALSE);
  g_buffered_input_stream_set_buffer_size (G_BUFFERED_INPUT_STREAM (response->in), 256 * 1024);
  if (!read_head (response, g_str_equal (method, "HEAD"), cancellable, &local_error))
    goto failed;
  return g_steal_pointer (&response);

failed:
  if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  described = docker_engine_describe (engine);
  g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_UNREACHABLE,
               "%s %s to %s failed: %s", method, path, described, local_error->message);
  return NULL;
}

guint
docker_response_get_status (DockerResponse *response)
{
  return response->status;
}

const char *
docker_response_get_header (DockerResponse *response,
                            const char     *name)
{
  return g_hash_table_lookup (response->headers, name);
}

GOutputStream *
docker_response_get_output (DockerResponse *response)
{
  return g_io_stream_get_output_stream (response->conn);
}

/* Ends what we send on a taken-over connection (stdin's end), keeping
 * what we receive open. */
gboolean
docker_response_close_write (DockerResponse  *response,
                             GError         **error)
{
  if (G_IS_SOCKET_CONNECTION (response->conn))
    return g_socket_shutdown (g_socket_connection_get_socket (G_SOCKET_CONNECTION (response->conn)),
                              FALSE, TRUE, error);
  return g_output_stream_close (g_io_stream_get_output_stream (response->conn), NULL, error);
}

/**
 * docker_response_read:
 * @response: a response
 * @buffer: where to put what is read
 * @size: its size
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads the body, without its transfer encoding.
 *
 * Returns: bytes read, 0 at its end, -1 on error
 */
gssize
docker_response_read (DockerResponse  *response,
                      void            *buffer,
                      gsize            size,
                      GCancellable    *cancellable,
                      GError         **error)
{
  GInputStream *in = G_INPUT_STREAM (response->in);
  gssize n;

  if (response->done || size == 0)
    return 0;
  if (response->mode == BODY_CHUNKED && response->remaining == 0)
    {
      g_autofree char *line = read_line (response, cancellable, error);
      guint64 chunk;
      char *end = NULL;

      if (line == NULL)
        return -1;
      if (*line == '\0')   /* the CRLF after the previous chunk */
        {
          g_free (line);
          if ((line = read_line (response, cancellable, error)) == NULL)
            return -1;
        }
      chunk = g_ascii_strtoull (line, &end, 16);
      if (end == line)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "bad chunk size “%.20s”", line);
          return -1;
        }
      if (chunk == 0)
        {
          /* Trailers, then the end. */
          for (;;)
            {
              g_autofree char *trailer = read_line (response, cancellable, error);
              if (trailer == NULL)
                return -1;
              if (*trailer == '\0')
                break;
            }
          response->done = TRUE;
          return 0;
        }
      response->remaining = chunk;
    }
  if (response->mode != BODY_EOF && size > response->remaining)
    size = response->remaining;
  n = g_input_stream_read (in, buffer, size, cancellable, error);
  if (n < 0)
    return -1;
  if (n == 0)
    {
      if (response->mode == BODY_EOF)
        {
          response->done = TRUE;
          return 0;
        }
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT, "the engine closed the connection mid-answer");
      return -1;
    }
  if (response->mode != BODY_EOF)
    {
      response->remaining -= n;
      if (response->mode == BODY_LENGTH && response->remaining == 0)
        response->done = TRUE;
    }
  return n;
}

/* Exactly @size bytes, or fewer only at the body's end. */
gboolean
docker_response_read_fully (DockerResponse  *response,
                            void            *buffer,
                            gsize            size,
                            gsize           *out_read,
                            GCancellable    *cancellable,
                            GError         **error)
{
  gsize done = 0;

  while (done < size)
    {
      gssize n = docker_response_read (response, (char *) buffer + done, size - done, cancellable, error);
      if (n < 0)
        return FALSE;
      if (n == 0)
        break;
      done += n;
    }
  *out_read = done;
  return TRUE;
}

GBytes *
docker_response_read_all (DockerResponse  *response,
                          gsize            limit,
                          GCancellable    *cancellable,
                          GError         **error)
{
  g_autoptr(GByteArray) data = g_byte_array_new ();
  char buffer[16384];

  for (;;)
    {
      gssize n = docker_response_read (response, buffer, sizeof buffer, cancellable, error);
      if (n < 0)
        return NULL;
      if (n == 0)
        break;
      if (data->len + (gsize) n > limit)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE, "the engine's answer exceeds %zu bytes", limit);
          return NULL;
        }
      g_byte_array_append (data, (const guint8 *) buffer, n);
    }
  return g_byte_array_free_to_bytes (g_steal_pointer (&data));
}

/* The engine's own words from an error answer ({"message": …} or text). */
static char *
error_message (GBytes *body)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  gsize size = 0;
  const char *data = body ? g_bytes_get_data (body, &size) : NULL;
  g_autofree char *text = NULL;

  if (data != NULL && size > 0 && json_parser_load_from_data (parser, data, size, NULL) &&
      JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      JsonObject *object = json_node_get_object (json_parser_get_root (parser));
      if (json_object_has_member (object, "message"))
        return g_strdup (json_object_get_string_member (object, "message"));
    }
  text = data ? g_utf8_make_valid (data, MIN (size, 2000)) : g_strdup ("no message");
  return g_strdup (g_strstrip (text));
}

/**
 * docker_response_check:
 * @response: a response
 * @engine: its engine, for the message
 * @what: what was asked (“create the container”)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Turns a status of 400 or more into an error carrying the engine's
 * message (the body is read for it).
 *
 * Returns: %TRUE for a status below 400
 */
gboolean
docker_response_check (DockerResponse  *response,
                       DockerEngine    *engine,
                       const char      *what,
                       GCancellable    *cancellable,
                       GError         **error)
{
  g_autoptr(GBytes) body = NULL;
  g_autofree char *message = NULL;
  g_autofree char *described = NULL;
  int code;

  if (response->status < 400)
    return TRUE;
  body = docker_response_read_all (response, MAX_ERROR_BODY, cancellable, NULL);
  message = error_message (body);
  described = docker_engine_describe (engine);
  code = response->status == 404 ? DOCKER_ENGINE_ERROR_NOT_FOUND
         : response->status == 409 ? DOCKER_ENGINE_ERROR_CONFLICT : DOCKER_ENGINE_ERROR_FAILED;
  g_set_error (error, DOCKER_ENGINE_ERROR, code, "Could not %s on %s (HTTP %u): %s",
               what, described, response->status, message);
  return FALSE;
}

gboolean
docker_engine_call (DockerEngine  *engine,
                    const char    *method,
                    const char    *path,
                    JsonNode      *body,
                    guint         *out_status,
                    JsonNode     **out_json,
                    GCancellable  *cancellable,
                    GError       **error)
{
  g_autoptr(DockerResponse) response = NULL;
  g_autoptr(GBytes) request_body = NULL;
  g_autoptr(GBytes) answer = NULL;
  g_autofree char *what = g_strdup_printf ("%s %s", method, path);
  gsize size = 0;
  const char *data;

  if (body != NULL)
    {
      gsize length = 0;
      char *text = json_to_string (body, FALSE);
      length = strlen (text);
      request_body = g_bytes_new_take (text, length);
    }
  response = docker_engine_request (engine, method, path, body ? "application/json" : NULL, request_body,
                                    NULL, NULL, FALSE, cancellable, error);
  if (response == NULL)
    return FALSE;
  if (out_status != NULL)
    *out_status = response->status;
  if (!docker_response_check (response, engine, what, cancellable, error))
    return FALSE;
  answer = docker_response_read_all (response, MAX_JSON_BODY, cancellable, error);
  if (answer == NULL)
    return FALSE;
  data = g_bytes_get_data (answer, &size);
  if (out_json != NULL)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(GError) local_error = NULL;

      *out_json = NULL;
      if (size == 0)
        return TRUE;
      if (!json_parser_load_from_data (parser, data, size, &local_error))
        {
          g_autofree char *described = docker_engine_describe (engine);
          g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_FAILED,
                       "%s: %s answered no JSON: %s", what, described, local_error->message);
          return FALSE;
        }
      *out_json = json_node_ref (json_parser_get_root (parser));
    }
  return TRUE;
}
