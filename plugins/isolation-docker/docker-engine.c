/* docker-engine.c: the Docker Engine API without the CLI: where the engine
 * is, and which API version it speaks (requests: docker-engine-http.c).
 *
 * Where the engine is, as the docker CLI decides it: option `host` (the
 * plugin's), else DOCKER_HOST, else a context (option `context`, else
 * DOCKER_CONTEXT, else `currentContext` of $DOCKER_CONFIG/config.json,
 * default ~/.docker), read from
 * $DOCKER_CONFIG/contexts/meta/<sha256 of the name>/meta.json with its TLS
 * files in contexts/tls/<sha256>/docker/, else unix:///var/run/docker.sock.
 * Addresses: unix://PATH, tcp://HOST[:PORT] (TLS when DOCKER_TLS_VERIFY or
 * DOCKER_TLS is set, or the context says so; certificates from
 * DOCKER_CERT_PATH, default ~/.docker: ca.pem, cert.pem, key.pem). ssh://
 * is refused with a way around it (forward the socket).
 *
 * The API version is negotiated once per address and process (`/_ping`'s
 * `API-Version`, capped at DOCKER_API_MAX, refused below DOCKER_API_MIN).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "docker-engine-private.h"

G_DEFINE_QUARK (subagent-docker-engine-error-quark, docker_engine_error)

#define DEFAULT_SOCKET "unix:///var/run/docker.sock"
#define NEGOTIATED_TTL_USEC (300 * G_USEC_PER_SEC)

/* ---- addresses ---------------------------------------------------------- */

static char *
docker_config_dir (void)
{
  const char *env = g_getenv ("DOCKER_CONFIG");

  if (env != NULL && *env != '\0')
    return g_strdup (env);
  return g_build_filename (g_get_home_dir (), ".docker", NULL);
}

static gboolean
env_is_set (const char *name)
{
  const char *value = g_getenv (name);

  return value != NULL && *value != '\0';
}

static gboolean
parse_address (DockerEngine  *engine,
               GError       **error)
{
  const char *a = engine->address;

  if (g_str_has_prefix (a, "unix://"))
    {
      engine->socket_path = g_strdup (a + strlen ("unix://"));
      if (*engine->socket_path != '/')
        goto bad;
      engine->tls = FALSE;
      return TRUE;
    }
  if (g_str_has_prefix (a, "tcp://") || g_str_has_prefix (a, "https://") || g_str_has_prefix (a, "http://"))
    {
      const char *rest = strstr (a, "://") + 3;
      g_autofree char *hostport = g_strndup (rest, strcspn (rest, "/"));
      guint16 port = 0;
      const char *colon;

      if (g_str_has_prefix (a, "https://"))
        engine->tls = TRUE;
      if (*hostport == '[')
        {
          const char *end = strchr (hostport, ']');
          if (end == NULL)
            goto bad;
          engine->tcp_host = g_strndup (hostport + 1, end - hostport - 1);
          colon = end[1] == ':' ? end + 1 : NULL;
        }
      else
        {
          colon = strrchr (hostport, ':');
          engine->tcp_host = colon ? g_strndup (hostport, colon - hostport) : g_strdup (hostport);
        }
      if (colon != NULL)
        {
          guint64 p;
          if (!g_ascii_string_to_unsigned (colon + 1, 10, 1, 65535, &p, NULL))
            goto bad;
          port = (guint16) p;
        }
      if (*engine->tcp_host == '\0')
        goto bad;
      engine->tcp_port = port ? port : (engine->tls ? 2376 : 2375);
      return TRUE;
    }
  if (g_str_has_prefix (a, "ssh://"))
    {
      g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_ADDRESS,
                   "Engine address %s (%s): ssh:// is not supported; forward the engine's socket instead "
                   "(ssh -nNT -L /tmp/remote-docker.sock:/var/run/docker.sock HOST) and set docker.host "
                   "to unix:///tmp/remote-docker.sock", a, engine->origin);
      return FALSE;
    }
  if (g_str_has_prefix (a, "npipe://") || g_str_has_prefix (a, "fd://"))
    {
      g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_ADDRESS,
                   "Engine address %s (%s): only unix://, tcp:// and https:// are supported", a, engine->origin);
      return FALSE;
    }
bad:
  g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_ADDRESS,
               "Engine address “%s” (%s) is not one: use unix:///PATH, tcp://HOST:PORT or https://HOST:PORT",
               a, engine->origin);
  return FALSE;
}

static gboolean
set_tls_files (DockerEngine  *engine,
               const char    *dir,
               gboolean       required,
               GError       **error)
{
  g_autofree char *ca = g_build_filename (dir, "ca.pem", NULL);
  g_autofree char *cert = g_build_filename (dir, "cert.pem", NULL);
  g_autofree char *key = g_build_filename (dir, "key.pem", NULL);

  if (g_file_test (ca, G_FILE_TEST_IS_REGULAR))
    engine->ca_file = g_steal_pointer (&ca);
  if (g_file_test (cert, G_FILE_TEST_IS_REGULAR) && g_file_test (key, G_FILE_TEST_IS_REGULAR))
    {
      engine->cert_file = g_steal_pointer (&cert);
      engine->key_file = g_steal_pointer (&key);
    }
  if (required && engine->tls_verify && engine->ca_file == NULL)
    {
      g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_ADDRESS,
                   "TLS verification of the engine at %s (%s) needs %s/ca.pem: set DOCKER_CERT_PATH "
                   "to the directory holding ca.pem, cert.pem and key.pem", engine->address, engine->origin, dir);
      return FALSE;
    }
  return TRUE;
}

/* Reads a context's endpoint: its meta.json and TLS files. */
static gboolean
load_context (DockerEngine  *engine,
              const char    *name,
              GError       **error)
{
  g_autofree char *config = docker_config_dir ();
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, name, -1);
  g_autofree char *meta = g_build_filename (config, "contexts", "meta", digest, "meta.json", NULL);
  g_autofree char *tls_dir = g_build_filename (config, "contexts", "tls", digest, "docker", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) local_error = NULL;
  JsonObject *root, *endpoints, *docker;
  const char *host;

  if (g_str_equal (name, "default"))
    {
      engine->address = g_strdup (DEFAULT_SOCKET);
      engine->origin = g_strdup ("context default");
      return TRUE;
    }
  if (!json_parser_load_from_file (parser, meta, &local_error) ||
      !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_ADDRESS,
                   "Docker context “%s” is unknown: cannot read %s: %s", name, meta,
                   local_error ? local_error->message : "not a JSON object");
      return FALSE;
    }
  root = json_node_get_object (json_parser_get_root (parser));
  endpoints = json_object_has_member (root, "Endpoints") ? json_object_get_object_member (root, "Endpoints") : NULL;
  docker = endpoints && json_object_has_member (endpoints, "docker")
           ? json_object_get_object_member (endpoints, "docker") : NULL;
  host = docker && json_object_has_member (docker, "Host") ? json_object_get_string_member (docker, "Host") : NULL;
  if (host == NULL || *host == '\0')
    {
      g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_ADDRESS,
                   "Docker context “%s” (%s) has no docker endpoint host", name, meta);
      return FALSE;
    }
  engine->address = g_strdup (host);
  engine->origin = g_strdup_printf ("context %s", name);
  if (g_file_test (tls_dir, G_FILE_TEST_IS_DIR))
    {
      engine->tls = TRUE;
      engine->tls_verify = !(json_object_has_member (docker, "SkipTLSVerify") &&
                             json_object_get_boolean_member (docker, "SkipTLSVerify"));
      if (!set_tls_files (engine, tls_dir, TRUE, error))
        return FALSE;
    }
  return TRUE;
}

static char *
current_context (void)
{
  g_autofree char *config = docker_config_dir ();
  g_autofree char *file = g_build_filename (config, "config.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *root;

  if (env_is_set ("DOCKER_CONTEXT"))
    return g_strdup (g_getenv ("DOCKER_CONTEXT"));
  if (!json_parser_load_from_file (parser, file, NULL) || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return NULL;
  root = json_node_get_object (json_parser_get_root (parser));
  if (!json_object_has_member (root, "currentContext"))
    return NULL;
  return g_strdup (json_object_get_string_member (root, "currentContext"));
}

/**
 * docker_engine_new:
 * @host: (nullable): an address that overrides everything else
 * @context: (nullable): a docker context to use when no host is given
 * @error: return location for a #GError (%DOCKER_ENGINE_ERROR_ADDRESS)
 *
 * Finds the engine as the docker CLI would. Nothing is contacted yet.
 *
 * Returns: (transfer full) (nullable): the engine
 */
DockerEngine *
docker_engine_new (const char  *host,
                   const char  *context,
                   GError     **error)
{
  g_autoptr(DockerEngine) engine = g_new0 (DockerEngine, 1);
  g_autofree char *current = NULL;

  if (host != NULL && *host != '\0')
    {
      engine->address = g_strdup (host);
      engine->origin = g_strdup ("option host");
    }
  else if (context == NULL && env_is_set ("DOCKER_HOST"))
    {
      engine->address = g_strdup (g_getenv ("DOCKER_HOST"));
      engine->origin = g_strdup ("DOCKER_HOST");
    }
  else if ((context != NULL && *context != '\0') || (current = current_context ()) != NULL)
    {
      if (!load_context (engine, context && *context ? context : current, error))
        return NULL;
    }
  else
    {
      engine->address = g_strdup (DEFAULT_SOCKET);
      engine->origin = g_strdup ("the default socket");
    }

  /* The environment's TLS settings apply to an address not from a context. */
  if (!g_str_has_prefix (engine->origin, "context") &&
      (env_is_set ("DOCKER_TLS_VERIFY") || env_is_set ("DOCKER_TLS")) &&
      !g_str_has_prefix (engine->address, "unix://"))
    {
      g_autofree char *dir = env_is_set ("DOCKER_CERT_PATH") ? g_strdup (g_getenv ("DOCKER_CERT_PATH"))
                                                            : docker_config_dir ();
      engine->tls = TRUE;
      engine->tls_verify = env_is_set ("DOCKER_TLS_VERIFY");
      if (!set_tls_files (engine, dir, TRUE, error))
        return NULL;
    }
  if (!parse_address (engine, error))
    return NULL;
  return g_steal_pointer (&engine);
}

void
docker_engine_free (DockerEngine *engine)
{
  if (engine == NULL)
    return;
  g_free (engine->address);
  g_free (engine->origin);
  g_free (engine->ca_file);
  g_free (engine->cert_file);
  g_free (engine->key_file);
  g_free (engine->api);
  g_free (engine->socket_path);
  g_free (engine->tcp_host);
  g_free (engine);
}

/* The whole engine as `--name value` arguments (for the exec helper). */
GPtrArray *
docker_engine_to_argv (DockerEngine *engine)
{
  GPtrArray *args = g_ptr_array_new_with_free_func (g_free);

#define PAIR(n, v) G_STMT_START { if ((v) != NULL) { g_ptr_array_add (args, g_strdup (n)); \
                                   g_ptr_array_add (args, g_strdup (v)); } } G_STMT_END
  PAIR ("--host", engine->address);
  PAIR ("--origin", engine->origin);
  PAIR ("--api", engine->api);
  PAIR ("--tls-ca", engine->ca_file);
  PAIR ("--tls-cert", engine->cert_file);
  PAIR ("--tls-key", engine->key_file);
#undef PAIR
  if (engine->tls)
    g_ptr_array_add (args, g_strdup (engine->tls_verify ? "--tls-verify" : "--tls"));
  if (engine->podman)
    g_ptr_array_add (args, g_strdup ("--podman"));
  return args;
}

/**
 * docker_engine_new_from_argv:
 * @args: (array zero-terminated=1): what docker_engine_to_argv() made
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the engine
 */
DockerEngine *
docker_engine_new_from_argv (const char * const *args,
                             GError            **error)
{
  g_autoptr(DockerEngine) engine = g_new0 (DockerEngine, 1);

  for (guint i = 0; args[i] != NULL; i++)
    {
      char **slot = NULL;

      if (g_str_equal (args[i], "--tls"))
        engine->tls = TRUE;
      else if (g_str_equal (args[i], "--tls-verify"))
        engine->tls = engine->tls_verify = TRUE;
      else if (g_str_equal (args[i], "--podman"))
        engine->podman = TRUE;
      else if (g_str_equal (args[i], "--host"))
        slot = &engine->address;
      else if (g_str_equal (args[i], "--origin"))
        slot = &engine->origin;
      else if (g_str_equal (args[i], "--api"))
        slot = &engine->api;
      else if (g_str_equal (args[i], "--tls-ca"))
        slot = &engine->ca_file;
      else if (g_str_equal (args[i], "--tls-cert"))
        slot = &engine->cert_file;
      else if (g_str_equal (args[i], "--tls-key"))
        slot = &engine->key_file;
      else
        {
          g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_ADDRESS, "Unknown engine argument %s", args[i]);
          return NULL;
        }
      if (slot != NULL)
        {
          if (args[i + 1] == NULL)
            {
              g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_ADDRESS, "%s needs a value", args[i]);
              return NULL;
            }
          g_free (*slot);
          *slot = g_strdup (args[++i]);
        }
    }
  if (engine->address == NULL)
    {
      g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_ADDRESS, "No engine address (--host)");
      return NULL;
    }
  if (engine->origin == NULL)
    engine->origin = g_strdup ("given");
  if (!parse_address (engine, error))
    return NULL;
  return g_steal_pointer (&engine);
}

void
docker_engine_add_to_data (DockerEngine    *engine,
                           GVariantBuilder *builder)
{
  g_autoptr(GPtrArray) args = docker_engine_to_argv (engine);

  g_ptr_array_add (args, NULL);
  g_variant_builder_add (builder, "{sv}", "engine", g_variant_new_strv ((const char * const *) args->pdata, -1));
  g_variant_builder_add (builder, "{sv}", "engine-host", g_variant_new_string (engine->address));
}

/**
 * docker_engine_new_from_data:
 * @backend_data: (nullable): a context's backend data (`engine`)
 *
 * Returns: (transfer full) (nullable): the engine a context was prepared
 *   with (with `engine-host` overriding its address), or %NULL
 */
DockerEngine *
docker_engine_new_from_data (GVariant *backend_data)
{
  g_autofree const char **args = NULL;
  const char *host = NULL;
  DockerEngine *engine;

  if (backend_data == NULL || !g_variant_lookup (backend_data, "engine", "^a&s", &args))
    return NULL;
  engine = docker_engine_new_from_argv (args, NULL);
  if (engine != NULL && g_variant_lookup (backend_data, "engine-host", "&s", &host) &&
      !g_str_equal (host, engine->address))
    {
      g_free (engine->address);
      g_clear_pointer (&engine->socket_path, g_free);
      g_clear_pointer (&engine->tcp_host, g_free);
      engine->address = g_strdup (host);
      if (!parse_address (engine, NULL))
        g_clear_pointer (&engine, docker_engine_free);
    }
  return engine;
}

const char *
docker_engine_get_address (DockerEngine *engine)
{
  return engine->address;
}

const char *
docker_engine_get_origin (DockerEngine *engine)
{
  return engine->origin;
}

const char *
docker_engine_get_api_version (DockerEngine *engine)
{
  return engine->api;
}

gboolean
docker_engine_is_podman (DockerEngine *engine)
{
  return engine->podman;
}

/* A unix socket is on this machine; a TCP engine may be anywhere. */
gboolean
docker_engine_is_local (DockerEngine *engine)
{
  return engine->socket_path != NULL;
}

/* "the engine at tcp://127.0.0.1:2375 (DOCKER_HOST)" */
char *
docker_engine_describe (DockerEngine *engine)
{
  return g_strdup_printf ("the engine at %s (%s%s)", engine->address, engine->origin,
                          engine->tls ? (engine->tls_verify ? ", TLS verified" : ", TLS unverified") : "");
}

/* ---- version negotiation -------------------------------------------------- */

static gboolean
parse_version (const char *text,
               guint      *major,
               guint      *minor)
{
  return text != NULL && sscanf (text, "%u.%u", major, minor) == 2;
}

static int
compare_versions (const char *a,
                  const char *b)
{
  guint amaj = 0, amin = 0, bmaj = 0, bmin = 0;

  parse_version (a, &amaj, &amin);
  parse_version (b, &bmaj, &bmin);
  if (amaj != bmaj)
    return amaj < bmaj ? -1 : 1;
  return amin < bmin ? -1 : amin > bmin;
}

typedef struct {
  char *api;
  gboolean podman;
  gint64 when;
} Negotiated;

static void
negotiated_free (gpointer data)
{
  Negotiated *n = data;

  g_free (n->api);
  g_free (n);
}

static GMutex negotiated_lock;
static GHashTable *negotiated;   /* address → Negotiated */

/**
 * docker_engine_negotiate:
 * @engine: the engine
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Asks `/_ping` which API version the engine speaks and settles on the
 * newest both sides know (remembered per address for a few minutes).
 *
 * Returns: %TRUE if the engine answered with a version we can use
 */
gboolean
docker_engine_negotiate (DockerEngine  *engine,
                         GCancellable  *cancellable,
                         GError       **error)
{
  g_autoptr(DockerResponse) response = NULL;
  g_autofree char *described = NULL;
  const char *server_api, *server;
  Negotiated *known;
  gint64 now = g_get_monotonic_time ();

  if (engine->api != NULL)
    return TRUE;
  g_mutex_lock (&negotiated_lock);
  if (negotiated == NULL)
    negotiated = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, negotiated_free);
  known = g_hash_table_lookup (negotiated, engine->address);
  if (known != NULL && now - known->when < NEGOTIATED_TTL_USEC)
    {
      engine->api = g_strdup (known->api);
      engine->podman = known->podman;
    }
  g_mutex_unlock (&negotiated_lock);
  if (engine->api != NULL)
    return TRUE;

  response = docker_engine_request (engine, "GET", "//_ping", NULL, NULL, NULL, NULL, FALSE, cancellable, error);
  if (response == NULL)
    return FALSE;
  described = docker_engine_describe (engine);
  if (!docker_response_check (response, engine, "answer /_ping", cancellable, error))
    return FALSE;
  server_api = docker_response_get_header (response, "api-version");
  server = docker_response_get_header (response, "server");
  if (server_api == NULL)
    {
      g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_TOO_OLD,
                   "%s answers /_ping without an API-Version: not a Docker engine, or one older than API %s",
                   described, DOCKER_API_MIN);
      return FALSE;
    }
  if (compare_versions (server_api, DOCKER_API_MIN) < 0)
    {
      g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_TOO_OLD,
                   "%s speaks API %s; libsubagent needs at least %s (Docker 17.06): upgrade the engine",
                   described, server_api, DOCKER_API_MIN);
      return FALSE;
    }
  engine->api = g_strdup (compare_versions (server_api, DOCKER_API_MAX) > 0 ? DOCKER_API_MAX : server_api);
  engine->podman = docker_response_get_header (response, "libpod-api-version") != NULL ||
                   (server != NULL && strstr (server, "Libpod") != NULL);

  g_mutex_lock (&negotiated_lock);
  known = g_new0 (Negotiated, 1);
  known->api = g_strdup (engine->api);
  known->podman = engine->podman;
  known->when = now;
  g_hash_table_replace (negotiated, g_strdup (engine->address), known);
  g_mutex_unlock (&negotiated_lock);
  return TRUE;
}

/* `/version`'s engine version ("20.10.24"), after negotiation. */
char *
docker_engine_server_version (DockerEngine  *engine,
                              GCancellable  *cancellable,
                              GError       **error)
{
  g_autoptr(JsonNode) node = NULL;
  JsonObject *object;

  if (!docker_engine_negotiate (engine, cancellable, error) ||
      !docker_engine_call (engine, "GET", "/version", NULL, NULL, &node, cancellable, error))
    return NULL;
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node) ||
      !json_object_has_member ((object = json_node_get_object (node)), "Version"))
    {
      g_autofree char *described = docker_engine_describe (engine);
      g_set_error (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_FAILED, "%s answers /version without a Version",
                   described);
      return NULL;
    }
  return g_strdup (json_object_get_string_member (object, "Version"));
}
