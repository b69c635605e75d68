/* test-docker-tls.c: the docker backend's engine errors that need an engine
 * of the test's own making.
 *
 *  - TLS: certificates made with the openssl CLI (a CA, a server
 *    certificate for 127.0.0.1, a client certificate), and a TLS-terminating
 *    proxy in this process (GTlsServerConnection, client certificate
 *    required) on 127.0.0.1 in front of the local engine's unix socket
 *    (DOCKER_HOST). A run goes through it with DOCKER_TLS_VERIFY and
 *    DOCKER_CERT_PATH; with another CA the engine is unavailable and the
 *    error names the address.
 *  - API too old: a fake engine on 127.0.0.1 answering /_ping and /version
 *    with API 1.12: the error names the address and both versions.
 *
 * A separate program: the TLS variables it sets are read by every engine
 * made in the process.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "docker-test-support.h"

#if defined(__SANITIZE_ADDRESS__)
/* LeakSanitizer's exit-time tracer crashes ("Tracer caught signal 11")
 * scanning the threads of this process once GnuTLS has run in it through
 * the dlopen'ed GIO TLS module (its thread-local storage): the leak check
 * is off for this program only; AddressSanitizer's own checks stay on, and
 * the same provider paths are leak-checked without TLS by test-docker. */
int __lsan_is_turned_off (void);
int
__lsan_is_turned_off (void)
{
  return 1;
}
#endif

/* ---- a server on 127.0.0.1, on a thread of its own ------------------------ */

typedef struct {
  GThread *thread;
  GMainContext *context;
  GMainLoop *loop;
  GMutex lock;
  GCond ready;
  guint16 port;          /* under lock; 0 until listening */
  /* The TLS proxy: */
  GTlsCertificate *certificate;
  GTlsDatabase *database;
  GTlsCertificate *ca;
  char *upstream;        /* the engine's unix socket */
  /* Else the fake engine: */
  const char *api_version;
} Server;

typedef struct {
  GIOStream *tls;
  Server *server;
} Pending;

static void
spliced (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  GIOStream *upstream = user_data;

  g_io_stream_splice_finish (result, NULL);
  g_object_unref (upstream);
}

static void
handshaken (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  Pending *pending = user_data;
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketAddress) address = NULL;
  GSocketConnection *upstream;
  g_autoptr(GError) error = NULL;

  if (!g_tls_connection_handshake_finish (G_TLS_CONNECTION (source), result, &error))
    {
      /* The client refused us (wrong CA), or we refused it. */
      g_test_message ("proxy: handshake failed: %s", error->message);
      goto out;
    }
  address = g_unix_socket_address_new (pending->server->upstream);
  upstream = g_socket_client_connect (client, G_SOCKET_CONNECTABLE (address), NULL, NULL);
  if (upstream == NULL)
    goto out;
  g_io_stream_splice_async (pending->tls, G_IO_STREAM (upstream),
                            G_IO_STREAM_SPLICE_CLOSE_STREAM1 | G_IO_STREAM_SPLICE_CLOSE_STREAM2 |
                            G_IO_STREAM_SPLICE_WAIT_FOR_BOTH,
                            G_PRIORITY_DEFAULT, NULL, spliced, upstream);
out:
  g_object_unref (pending->tls);
  g_free (pending);
}

/* Reads a request's head (the fake engine's requests have no body). */
static char *
read_head (GIOStream *stream)
{
  GString *head = g_string_new (NULL);
  char c;

  while (g_input_stream_read (g_io_stream_get_input_stream (stream), &c, 1, NULL, NULL) == 1)
    {
      g_string_append_c (head, c);
      if (g_str_has_suffix (head->str, "\r\n\r\n") || head->len > 16384)
        break;
    }
  return g_string_free (head, FALSE);
}

static void
answer_as_old_engine (Server            *server,
                      GSocketConnection *connection)
{
  g_autofree char *head = read_head (G_IO_STREAM (connection));
  g_autofree char *body = NULL;
  g_autofree char *response = NULL;

  if (strstr (head, "_ping") != NULL)
    body = g_strdup ("OK");
  else
    body = g_strdup_printf ("{\"Version\": \"1.0.0\", \"ApiVersion\": \"%s\", \"MinAPIVersion\": \"%s\"}",
                            server->api_version, server->api_version);
  response = g_strdup_printf ("HTTP/1.1 200 OK\r\nApi-Version: %s\r\nServer: Docker/1.0.0 (linux)\r\n"
                              "Content-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
                              server->api_version, strstr (head, "_ping") ? "text/plain" : "application/json",
                              strlen (body), body);
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (connection)), response, strlen (response),
                             NULL, NULL, NULL);
  g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
}

/* The client's certificate must be the test CA's: GnuTLS' own check of a
 * client certificate is stricter than a test CA needs (purpose, identity). */
static gboolean
accept_client (GTlsConnection       *connection,
               GTlsCertificate      *peer,
               GTlsCertificateFlags  errors,
               gpointer              user_data)
{
  Server *server = user_data;

  return g_tls_certificate_verify (peer, NULL, server->ca) == 0;
}

static gboolean
incoming (GSocketService    *service,
          GSocketConnection *connection,
          GObject           *source,
          gpointer           user_data)
{
  Server *server = user_data;
  Pending *pending;
  GIOStream *tls;

  if (server->api_version != NULL)
    {
      answer_as_old_engine (server, connection);
      return TRUE;
    }
  tls = g_tls_server_connection_new (G_IO_STREAM (connection), server->certificate, NULL);
  g_assert_nonnull (tls);
  g_object_set (tls, "authentication-mode", G_TLS_AUTHENTICATION_REQUIRED, NULL);
  g_tls_connection_set_database (G_TLS_CONNECTION (tls), server->database);
  g_signal_connect (tls, "accept-certificate", G_CALLBACK (accept_client), server);
  pending = g_new0 (Pending, 1);
  pending->tls = tls;
  pending->server = server;
  g_tls_connection_handshake_async (G_TLS_CONNECTION (tls), G_PRIORITY_DEFAULT, NULL, handshaken, pending);
  return TRUE;
}

static gpointer
serve (gpointer data)
{
  Server *server = data;
  g_autoptr(GSocketService) service = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) wanted = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GError) error = NULL;

  g_main_context_push_thread_default (server->context);
  service = g_socket_service_new ();
  g_socket_listener_add_address (G_SOCKET_LISTENER (service), wanted, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
                                 NULL, &bound, &error);
  g_assert_no_error (error);
  g_signal_connect (service, "incoming", G_CALLBACK (incoming), server);
  g_socket_service_start (service);
  g_mutex_lock (&server->lock);
  server->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  g_cond_signal (&server->ready);
  g_mutex_unlock (&server->lock);
  g_main_loop_run (server->loop);
  g_socket_service_stop (service);
  g_socket_listener_close (G_SOCKET_LISTENER (service));
  g_main_context_pop_thread_default (server->context);
  return NULL;
}

static Server *
server_start (Server *server)
{
  g_mutex_init (&server->lock);
  g_cond_init (&server->ready);
  server->context = g_main_context_new ();
  server->loop = g_main_loop_new (server->context, FALSE);
  server->thread = g_thread_new ("test-server", serve, server);
  g_mutex_lock (&server->lock);
  while (server->port == 0)
    g_cond_wait (&server->ready, &server->lock);
  g_mutex_unlock (&server->lock);
  return server;
}

static gboolean
quit_loop (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

static void
server_stop (Server *server)
{
  g_main_context_invoke (server->context, quit_loop, server->loop);
  g_thread_join (server->thread);
  g_main_loop_unref (server->loop);
  g_main_context_unref (server->context);
  g_clear_object (&server->certificate);
  g_clear_object (&server->database);
  g_clear_object (&server->ca);
  g_free (server->upstream);
  g_mutex_clear (&server->lock);
  g_cond_clear (&server->ready);
}

/* ---- certificates ---------------------------------------------------------- */

static void
openssl (const char *dir,
         const char *script)
{
  const char * const argv[] = { "sh", "-ec", script, NULL };
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_PIPE |
                                                                        G_SUBPROCESS_FLAGS_STDOUT_SILENCE);
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;

  g_subprocess_launcher_set_cwd (launcher, dir);
  proc = g_subprocess_launcher_spawnv (launcher, argv, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, NULL, &err, &error);
  g_assert_no_error (error);
  if (!g_subprocess_get_successful (proc))
    g_error ("openssl failed in %s: %s", dir, err);
}

/* A CA (ca.pem, ca-key.pem) in dir; with a server certificate for
 * 127.0.0.1 (server.pem, server-key.pem) and a client certificate
 * (cert.pem, key.pem) when @leaves. */
static void
make_certificates (const char *dir,
                   gboolean    leaves)
{
  openssl (dir, "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
                "-subj /CN=subagent-test-ca -keyout ca-key.pem -out ca.pem");
  if (!leaves)
    return;
  openssl (dir, "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' >server.ext; "
                "printf 'extendedKeyUsage=clientAuth\\n' >client.ext; "
                "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 "
                "-keyout server-key.pem -out server.csr; "
                "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 "
                "-extfile server.ext -out server.pem; "
                "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=subagent-client "
                "-keyout key.pem -out client.csr; "
                "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 "
                "-extfile client.ext -out cert.pem");
}

/* ---- tests ------------------------------------------------------------------ */

/* A docker provider of its own (no caches shared with other tests) for @address. */
static SubagentIsolationProvider *
provider_for (const char *address)
{
  g_autoptr(SubagentIsolationProvider) loaded = dts_provider ();

  return g_object_new (G_OBJECT_TYPE (loaded), "host", address, NULL);
}

static void
test_tls_run_and_wrong_ca (void)
{
  const char *docker_host = g_getenv ("DOCKER_HOST");
  g_autofree char *certs = sat_make_temp_dir ("docker-tls");
  g_autofree char *other = sat_make_temp_dir ("docker-tls-other");
  g_autofree char *server_cert = g_build_filename (certs, "server.pem", NULL);
  g_autofree char *server_key = g_build_filename (certs, "server-key.pem", NULL);
  g_autofree char *ca = g_build_filename (certs, "ca.pem", NULL);
  g_autofree char *parent = dts_make_parent ();
  g_autofree char *address = NULL;
  g_autofree char *out = NULL;
  g_autoptr(SubagentIsolationProvider) provider = NULL;
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  DtsEngine tls_engine = { "tls", NULL, "bind", NULL, NULL };
  DtsEngine local = { "docker", "DOCKER_HOST", "bind", NULL, NULL };
  Server proxy = { 0 };
  const char *engine_host = NULL;
  int status = -1;

  g_assert_nonnull (docker_host);
  g_assert_true (g_str_has_prefix (docker_host, "unix://"));
  g_assert_true (dts_engine_setup (&local));
  make_certificates (certs, TRUE);
  make_certificates (other, FALSE);
  /* The wrong CA's directory has a client certificate too: only the CA differs. */
  for (guint i = 0; i < 2; i++)
    {
      const char *name = i == 0 ? "cert.pem" : "key.pem";
      g_autofree char *from = g_build_filename (certs, name, NULL);
      g_autofree char *to = g_build_filename (other, name, NULL);
      g_autofree char *text = NULL;
      g_file_get_contents (from, &text, NULL, &error);
      g_assert_no_error (error);
      g_file_set_contents (to, text, -1, &error);
      g_assert_no_error (error);
    }

  proxy.certificate = g_tls_certificate_new_from_files (server_cert, server_key, &error);
  g_assert_no_error (error);
  proxy.database = g_tls_file_database_new (ca, &error);
  g_assert_no_error (error);
  proxy.ca = g_tls_certificate_new_from_file (ca, &error);
  g_assert_no_error (error);
  proxy.upstream = g_strdup (docker_host + strlen ("unix://"));
  server_start (&proxy);
  address = g_strdup_printf ("tcp://127.0.0.1:%u", proxy.port);

  /* Verified TLS, client certificate shown: a whole run goes through. */
  g_setenv ("DOCKER_TLS_VERIFY", "1", TRUE);
  g_setenv ("DOCKER_CERT_PATH", certs, TRUE);
  tls_engine.host = g_strdup (address);
  provider = provider_for (address);
  subagent_isolation_provider_is_available (provider, &error);
  g_assert_no_error (error);
  request = dts_make_request (&tls_engine, parent, "tls-run-1", 0, NULL, NULL);
  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (subagent_isolation_context_get_backend_data (context), "engine-host", "&s",
                                   &engine_host));
  g_assert_cmpstr (engine_host, ==, address);
  out = dts_run_in (context, NULL, NULL, &status, "cat /workspace/existing.txt; echo through-tls");
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "first line\nthrough-tls"));
  subagent_isolation_context_cleanup (context);
  g_clear_object (&context);
  dts_assert_nothing_left (&local, "io.subagent.session=tls-run-1", parent);

  /* Another CA: the engine's certificate is not trusted; the error says where. */
  g_setenv ("DOCKER_CERT_PATH", other, TRUE);
  g_clear_object (&provider);
  provider = provider_for (address);
  g_assert_false (subagent_isolation_provider_is_available (provider, &error));
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE);
  g_test_message ("wrong CA: %s", error->message);
  g_assert_nonnull (strstr (error->message, address + strlen ("tcp://")));
  g_assert_nonnull (strstr (error->message, "TLS"));
  g_clear_error (&error);

  g_unsetenv ("DOCKER_TLS_VERIFY");
  g_unsetenv ("DOCKER_CERT_PATH");
  server_stop (&proxy);
  g_free (tls_engine.host);
  g_free (local.host);
  g_strfreev (local.argv);
  sat_rm_rf (certs);
  sat_rm_rf (other);
  sat_rm_rf (parent);
}

static void
test_api_too_old (void)
{
  Server fake = { .api_version = "1.12" };
  g_autoptr(SubagentIsolationProvider) provider = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *address = NULL;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autoptr(SubagentIsolationContext) context = NULL;
  DtsEngine old = { "old", NULL, "bind", NULL, NULL };

  server_start (&fake);
  address = g_strdup_printf ("tcp://127.0.0.1:%u", fake.port);
  provider = provider_for (address);
  g_assert_false (subagent_isolation_provider_is_available (provider, &error));
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE);
  g_test_message ("too old: %s", error->message);
  g_assert_nonnull (strstr (error->message, address + strlen ("tcp://")));
  g_assert_nonnull (strstr (error->message, "1.12"));
  g_assert_nonnull (strstr (error->message, "1.30"));
  g_clear_error (&error);

  /* prepare says the same, and makes nothing. */
  old.host = address;
  request = dts_make_request (&old, parent, "too-old-1", 0, NULL, NULL);
  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  g_assert_null (context);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "1.12"));
  {
    g_autofree char *record = subagent_owner_record_path (parent, "too-old-1");
    g_assert_false (g_file_test (record, G_FILE_TEST_EXISTS));
  }
  server_stop (&fake);
  sat_rm_rf (parent);
}

int
main (int argc, char *argv[])
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  dts_init ();
  g_unsetenv ("DOCKER_TLS_VERIFY");
  g_unsetenv ("DOCKER_TLS");
  g_unsetenv ("DOCKER_CERT_PATH");
  g_test_add_func ("/docker-engine/api-too-old-names-address-and-versions", test_api_too_old);
  g_test_add_func ("/docker-engine/tls/run-verified-and-wrong-ca-names-address", test_tls_run_and_wrong_ca);
  rc = g_test_run ();
  dts_shutdown ();
  return rc;
}
