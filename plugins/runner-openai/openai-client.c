/* openai-client.c: POST /chat/completions with streaming, retries and
 * timeouts, on libsoup 3's blocking API in the loop's own thread.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "openai-private.h"

#define BACKOFF_BASE_MS 500
#define BACKOFF_MAX_MS 8000
#define RETRY_AFTER_MAX_S 60
#define BODY_MAX (16 * 1024 * 1024)
#define EXCERPT_MAX 300

struct _OpenaiClient
{
  SoupSession *session;
  char *url;
  char *authorization;     /* "Bearer …", or NULL; never logged */
  JsonObject *headers;     /* extra headers, or NULL */
  guint connect_timeout;
  guint read_timeout;
  guint max_retries;
  guint retries;           /* retries made so far (all turns) */
  OpenaiWatchdog *watchdog;
  GCancellable *stop;
};

static gboolean
is_loopback (const char *url)
{
  g_autoptr(GUri) uri = g_uri_parse (url, G_URI_FLAGS_NONE, NULL);
  const char *host = uri ? g_uri_get_host (uri) : NULL;

  return host != NULL && (g_str_equal (host, "localhost") || g_str_has_prefix (host, "127.") ||
                          g_str_equal (host, "::1") || g_str_equal (host, "[::1]"));
}

OpenaiClient *
openai_client_new (JsonObject      *model,
                   OpenaiWatchdog  *watchdog,
                   GCancellable    *stop,
                   GError         **error)
{
  g_autoptr(OpenaiClient) self = g_new0 (OpenaiClient, 1);
  const char *base_url = json_object_get_string_member (model, "base_url");
  const char *key_env = json_object_get_string_member_with_default (model, "api_key_env", NULL);
  g_autofree char *trimmed = g_strdup (base_url);
  gsize len = strlen (trimmed);

  self->watchdog = watchdog;
  self->stop = g_object_ref (stop);
  if (key_env != NULL)
    {
      const char *key = g_getenv (key_env);

      if (key == NULL || *key == '\0')
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                       "Model “%s” takes its API key from the environment variable %s (models.%s.api_key_env), "
                       "which is not set: export %s, or remove api_key_env for a server that needs no key",
                       json_object_get_string_member (model, "name"), key_env,
                       json_object_get_string_member (model, "name"), key_env);
          return NULL;
        }
      self->authorization = g_strconcat ("Bearer ", key, NULL);
    }
  while (len > 0 && trimmed[len - 1] == '/')
    trimmed[--len] = '\0';
  self->url = g_strconcat (trimmed, "/chat/completions", NULL);
  if (json_object_has_member (model, "headers"))
    self->headers = json_object_ref (json_object_get_object_member (model, "headers"));
  self->connect_timeout = json_object_get_int_member_with_default (model, "connect_timeout_seconds", 10);
  self->read_timeout = json_object_get_int_member_with_default (model, "read_timeout_seconds", 120);
  self->max_retries = json_object_get_int_member_with_default (model, "max_retries", 2);
  /* Timeouts are the watchdog's; libsoup's own would cut long generations. */
  self->session = soup_session_new_with_options ("timeout", 0, "idle-timeout", 60,
                                                 "user-agent", "libsubagent-runner-openai/" PLUGIN_VERSION,
                                                 NULL);
  /* A server on this machine is never reached through a proxy. */
  if (is_loopback (self->url))
    g_object_set (self->session, "proxy-resolver", NULL, NULL);
  return g_steal_pointer (&self);
}

void
openai_client_free (OpenaiClient *self)
{
  if (self == NULL)
    return;
  g_clear_object (&self->session);
  g_free (self->url);
  if (self->authorization != NULL)
    {
      memset (self->authorization, 0, strlen (self->authorization));
      g_free (self->authorization);
    }
  g_clear_pointer (&self->headers, json_object_unref);
  g_clear_object (&self->stop);
  g_free (self);
}

guint
openai_client_get_retries (OpenaiClient *self)
{
  return self->retries;
}

/* Connected: from now on the server gets read_timeout per step. */
static void
on_network_event (SoupMessage        *message,
                  GSocketClientEvent  event,
                  GIOStream          *connection,
                  gpointer            user_data)
{
  OpenaiClient *self = user_data;
  GCancellable *io = g_object_get_data (G_OBJECT (message), "openai-io");

  if (event == G_SOCKET_CLIENT_COMPLETE && io != NULL)
    openai_watchdog_arm (self->watchdog, io,
                         g_get_monotonic_time () + (gint64) self->read_timeout * G_USEC_PER_SEC);
}

static char *
excerpt (GBytes *body)
{
  gsize size = 0;
  const char *data = body ? g_bytes_get_data (body, &size) : NULL;
  g_autofree char *valid = NULL;
  g_autofree char *cut = NULL;

  if (data == NULL || size == 0)
    return g_strdup ("no body");
  valid = g_utf8_make_valid (data, MIN (size, EXCERPT_MAX * 4));
  cut = g_utf8_substring (valid, 0, MIN (g_utf8_strlen (valid, -1), EXCERPT_MAX));
  g_strstrip (cut);
  return g_strdup (cut);
}

/* Reads a small error body; failures give an empty one. */
static GBytes *
read_error_body (GInputStream *stream,
                 GCancellable *io)
{
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();

  g_output_stream_splice (out, stream, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, io, NULL);
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
}

typedef enum {
  ATTEMPT_OK,
  ATTEMPT_RETRY,    /* transient: 429, 5xx, or a transport failure before any output */
  ATTEMPT_FAIL,
} AttemptResult;

static AttemptResult
attempt (OpenaiClient  *self,
         GBytes        *body,
         OpenaiTurn   **turn_out,
         gint64        *retry_after_ms,
         GError       **error)
{
  g_autoptr(SoupMessage) message = soup_message_new ("POST", self->url);
  g_autoptr(GCancellable) io = g_cancellable_new ();
  g_autoptr(GInputStream) stream = NULL;
  g_autoptr(GDataInputStream) data = NULL;
  g_autoptr(OpenaiTurn) turn = NULL;
  g_autoptr(GError) local_error = NULL;
  SoupMessageHeaders *headers;
  const char *content_type;
  gulong stop_handler;
  guint status;
  gboolean timed_out;

  *retry_after_ms = -1;
  if (message == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "cannot make a request to %s", self->url);
      return ATTEMPT_FAIL;
    }
  headers = soup_message_get_request_headers (message);
  if (self->headers != NULL)
    {
      JsonObjectIter iter;
      const char *name;
      JsonNode *value;

      json_object_iter_init (&iter, self->headers);
      while (json_object_iter_next (&iter, &name, &value))
        soup_message_headers_replace (headers, name, json_node_get_string (value));
    }
  if (self->authorization != NULL)
    soup_message_headers_replace (headers, "Authorization", self->authorization);
  soup_message_headers_replace (headers, "Accept", "text/event-stream, application/json");
  soup_message_set_request_body_from_bytes (message, "application/json", body);
  g_object_set_data (G_OBJECT (message), "openai-io", io);
  g_signal_connect (message, "network-event", G_CALLBACK (on_network_event), self);

  /* The run's stop (cancel, run timeout) ends the request at once. */
  stop_handler = g_cancellable_connect (self->stop, G_CALLBACK (openai_cancel_other), io, NULL);
  openai_watchdog_arm (self->watchdog, io,
                       g_get_monotonic_time () + (gint64) (self->connect_timeout + self->read_timeout) * G_USEC_PER_SEC);
  stream = soup_session_send (self->session, message, io, &local_error);
  timed_out = openai_watchdog_disarm (self->watchdog);
  if (stream == NULL)
    {
      g_cancellable_disconnect (self->stop, stop_handler);
      if (g_cancellable_is_cancelled (self->stop))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "the request was cancelled");
          return ATTEMPT_FAIL;
        }
      if (timed_out)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                     "the model server at %s did not answer in time (connect_timeout_seconds %u, "
                     "read_timeout_seconds %u)", self->url, self->connect_timeout, self->read_timeout);
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot reach the model server at %s: %s",
                     self->url, local_error->message);
      return ATTEMPT_RETRY;
    }

  status = soup_message_get_status (message);
  if (status < 200 || status >= 300)
    {
      g_autoptr(GBytes) error_body = NULL;
      const char *retry_after = soup_message_headers_get_one (soup_message_get_response_headers (message),
                                                              "Retry-After");
      g_autofree char *text = NULL;

      openai_watchdog_arm (self->watchdog, io, g_get_monotonic_time () + (gint64) self->read_timeout * G_USEC_PER_SEC);
      error_body = read_error_body (stream, io);
      openai_watchdog_disarm (self->watchdog);
      g_cancellable_disconnect (self->stop, stop_handler);
      text = excerpt (error_body);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the model server at %s answered %u %s: %s",
                   self->url, status, soup_message_get_reason_phrase (message)
                   ? soup_message_get_reason_phrase (message) : "", text);
      if (retry_after != NULL)
        {
          char *end = NULL;
          gint64 seconds = g_ascii_strtoll (retry_after, &end, 10);

          if (end != retry_after && *end == '\0' && seconds >= 0)
            *retry_after_ms = MIN (seconds, RETRY_AFTER_MAX_S) * 1000;
          else
            {
              g_autoptr(GDateTime) when = soup_date_time_new_from_http_string (retry_after);
              g_autoptr(GDateTime) now = g_date_time_new_now_utc ();

              if (when != NULL)
                *retry_after_ms = CLAMP (g_date_time_difference (when, now) / 1000, 0, RETRY_AFTER_MAX_S * 1000);
            }
        }
      return (status == 429 || status >= 500) ? ATTEMPT_RETRY : ATTEMPT_FAIL;
    }

  turn = openai_turn_new ();
  content_type = soup_message_headers_get_content_type (soup_message_get_response_headers (message), NULL);
  if (content_type != NULL && g_ascii_strcasecmp (content_type, "application/json") == 0)
    {
      /* A server that ignored `stream`: one whole completion. */
      g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
      g_autoptr(GBytes) whole = NULL;
      g_autoptr(JsonParser) parser = json_parser_new_immutable ();

      openai_watchdog_arm (self->watchdog, io, g_get_monotonic_time () + (gint64) self->read_timeout * G_USEC_PER_SEC);
      g_output_stream_splice (out, stream, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, io, &local_error);
      timed_out = openai_watchdog_disarm (self->watchdog);
      g_cancellable_disconnect (self->stop, stop_handler);
      whole = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
      if (local_error == NULL &&
          !json_parser_load_from_data (parser, g_bytes_get_data (whole, NULL), g_bytes_get_size (whole), &local_error))
        g_prefix_error (&local_error, "the model server's answer is not JSON: ");
      if (local_error == NULL && JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        openai_turn_feed_chunk (turn, json_node_get_object (json_parser_get_root (parser)), &local_error);
      if (local_error != NULL)
        {
          if (g_cancellable_is_cancelled (self->stop))
            g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "the request was cancelled");
          else
            g_set_error (error, G_IO_ERROR, timed_out ? G_IO_ERROR_TIMED_OUT : G_IO_ERROR_FAILED,
                         "reading the answer of %s failed: %s", self->url,
                         timed_out ? "it sent nothing for read_timeout_seconds" : local_error->message);
          return ATTEMPT_FAIL;
        }
      *turn_out = g_steal_pointer (&turn);
      return ATTEMPT_OK;
    }

  data = g_data_input_stream_new (stream);
  g_data_input_stream_set_newline_type (G_DATA_INPUT_STREAM (data), G_DATA_STREAM_NEWLINE_TYPE_ANY);
  while (!turn->done)
    {
      g_autofree char *line = NULL;
      gsize length = 0;

      openai_watchdog_arm (self->watchdog, io, g_get_monotonic_time () + (gint64) self->read_timeout * G_USEC_PER_SEC);
      line = g_data_input_stream_read_line (data, &length, io, &local_error);
      timed_out = openai_watchdog_disarm (self->watchdog);
      if (line == NULL)
        break;
      if (!openai_turn_feed_sse_line (turn, line, &local_error))
        break;
    }
  if (local_error == NULL)
    openai_turn_parse_pending (turn, &local_error);
  g_cancellable_disconnect (self->stop, stop_handler);
  /* An unfinished body is dropped, not drained: closing it with a cancelled
   * cancellable makes libsoup close the connection at once. */
  if (!turn->done || local_error != NULL)
    g_cancellable_cancel (io);
  g_input_stream_close (stream, io, NULL);

  if (local_error != NULL)
    {
      gboolean retry = !turn->visible && !g_cancellable_is_cancelled (self->stop);

      if (g_cancellable_is_cancelled (self->stop))
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "the request was cancelled");
      else if (timed_out)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                     "the model server at %s stopped sending its answer: nothing came for %u s "
                     "(models.*.read_timeout_seconds)", self->url, self->read_timeout);
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "reading the answer of %s failed: %s",
                     self->url, local_error->message);
      /* Reference 003: retry a transport failure only before visible output. */
      return retry ? ATTEMPT_RETRY : ATTEMPT_FAIL;
    }
  if (!turn->done && !turn->visible)
    {
      /* The stream ended before any event: a cut connection, not an answer. */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                   "the model server at %s ended its answer before sending anything", self->url);
      return ATTEMPT_RETRY;
    }
  *turn_out = g_steal_pointer (&turn);
  return ATTEMPT_OK;
}

/* Sleeps @ms unless the run stops first; FALSE if it did. */
static gboolean
wait_unless_stopped (GCancellable *stop,
                     gint64        ms)
{
  GPollFD pfd;

  if (ms <= 0)
    return !g_cancellable_is_cancelled (stop);
  if (!g_cancellable_make_pollfd (stop, &pfd))
    {
      g_usleep (ms * 1000);
      return !g_cancellable_is_cancelled (stop);
    }
  g_poll (&pfd, 1, (gint) ms);
  g_cancellable_release_fd (stop);
  return !g_cancellable_is_cancelled (stop);
}

OpenaiTurn *
openai_client_chat (OpenaiClient   *self,
                    GBytes         *body,
                    OpenaiFailure  *failure,
                    GError        **error)
{
  GBytes *bytes = body;
  g_autoptr(GError) last_error = NULL;
  guint attempts = 0;

  *failure = OPENAI_FAILURE_NONE;
  for (;;)
    {
      OpenaiTurn *turn = NULL;
      gint64 retry_after_ms = -1;
      AttemptResult result;
      gint64 delay;

      g_clear_error (&last_error);
      attempts++;
      result = attempt (self, bytes, &turn, &retry_after_ms, &last_error);
      if (result == ATTEMPT_OK)
        return turn;
      if (g_cancellable_is_cancelled (self->stop))
        break;
      if (result == ATTEMPT_FAIL || attempts > self->max_retries)
        break;
      delay = retry_after_ms >= 0 ? retry_after_ms
                                  : MIN ((gint64) BACKOFF_BASE_MS << (attempts - 1), BACKOFF_MAX_MS);
      g_debug ("Model request failed (%s); retry %u of %u in %" G_GINT64_FORMAT " ms",
               last_error->message, attempts, self->max_retries, delay);
      self->retries++;
      if (!wait_unless_stopped (self->stop, delay))
        break;
    }

  if (g_cancellable_is_cancelled (self->stop))
    {
      *failure = openai_watchdog_run_expired (self->watchdog) ? OPENAI_FAILURE_RUN_TIMEOUT : OPENAI_FAILURE_CANCELLED;
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "%s",
                   *failure == OPENAI_FAILURE_RUN_TIMEOUT ? "the run reached its timeout_seconds"
                                                          : "the run was cancelled");
      return NULL;
    }
  *failure = OPENAI_FAILURE_SERVER;
  if (attempts > 1)
    g_set_error (error, last_error->domain, last_error->code, "%s (gave up after %u attempts; models.*.max_retries is %u)",
                 last_error->message, attempts, self->max_retries);
  else
    g_propagate_error (error, g_steal_pointer (&last_error));
  return NULL;
}
