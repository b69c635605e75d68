/* docker-isolation.c: the `docker` isolation backend, on the Engine API.
 *
 * prepare() gives the child a snapshot copy of the parent's working tree
 * (subagent_tree_copy(), leaving out `.subagent/` and `.git`) in
 * `<workspace_dir>/<session_key>/tree`, and one long-lived container
 * (`sleep` as its only process) that sees that tree at /workspace, in one
 * of two ways (option `transfer`):
 *
 *  - `bind`: the tree is bind-mounted. Only after a probe proves the
 *    engine sees the host's directory: a nonce file written into the tree
 *    is read back through the engine (an engine on another machine, or in
 *    another mount namespace, would mount an empty directory of its own —
 *    the child would work in nothing and the run would look complete).
 *    A probe's verdict, either way, holds for five minutes per engine
 *    address and workspace directory (with its device).
 *  - `copy`: the tree is streamed into a tmpfs volume at /workspace (a
 *    tar made in process, entries owned by the container's user, fed to
 *    the image's own `tar` through an exec, or with PUT archive where that
 *    cannot be used or does not prove itself: docker-copy-in.c; option
 *    `copy_in: archive` always takes PUT archive), and every exec ends with the container's /workspace fetched
 *    back (GET archive) and applied to the tree, deletions included
 *    (docker-exec-helper.c), so the review works unchanged.
 *  - `auto` (the default): bind when the probe passes, else copy.
 *
 * The container is made through the API (docker-container.c), never the
 * CLI: no implicit pull (the image is checked once per engine and five
 * minutes, and again whenever create fails, so a missing image is an
 * error naming it and the engine), a read-only root with a tmpfs /tmp,
 * `NetworkMode none` unless option `network` says otherwise, all
 * capabilities dropped, no-new-privileges, user `65534:65534` unless
 * option `user` says otherwise, CPU and memory limits from the request, a
 * pids limit (option `pids_limit`, default 512, 0 for none), a `nofile`
 * ulimit (option `nofile`, default 4096; `nproc` only when asked: it
 * counts the user's processes across the whole host), and labels
 * `io.subagent.session`, `io.subagent.parent-run`, `io.subagent.owner-pid`,
 * `io.subagent.owner-host`. Its name is `subagent-<session_key>`.
 * spawnv() runs each process of the child through the exec helper
 * (docker-context.c); cleanup() removes the container, its volume and the
 * workspace.
 *
 * The provider is configurable: config.yaml's `docker:` section gives the
 * engine is_available() asks (`host`, `context`) and the default
 * `transfer`; a request's own options win.
 *
 * Request options: `image` (required), `host` (the engine's address,
 * overrides DOCKER_HOST), `context` (a docker context), `transfer`,
 * `copy_in` (`auto` or `archive`), `transfer_max_file` (the largest file copied back, default 1 GiB),
 * `network`, `user`, `pids_limit`, `nofile`, `nproc`, `workspace`
 * (`snapshot`, or `worktree`: docker-worktree.c, with the worktree options
 * `keep_branch`, `include_dirty`, `pool_size`), `workspace_dir` (default
 * `$XDG_CACHE_HOME/subagent/docker`; snapshot only), `container_pool`
 * (snapshot only: warm containers of the same options, started for the
 * next prepare, docker-pool.c). `binary` is accepted
 * for old configurations and ignored: no command line is run.
 *
 * An owner record (kind `container`, resource = the container's name,
 * extra: `binary` (`docker`, for `subagentctl prune`), `global_args`,
 * `host`, `workspace` (snapshot only)) is written before the container is
 * made, so a process killed at any point leaves something prune can find;
 * cleanup removes it last.
 *
 * Backend data (a{sv}) of a context: `engine` (as: the engine's address,
 * TLS files and API version as arguments), `engine-host` (s),
 * `container-name` (s), `workspace-base` (s), `image` (s), `user` (s),
 * `network` (s), `transfer` (s: bind or copy), `copy-in` (s, copy mode:
 * exec or archive, the way the tree went in), `transfer-max-file` (t),
 * `copy-strategy` (s), `workspace-copy-usec` (x), `transfer-usec` (x),
 * `pooled` (b: the container came from the pool);
 * with a worktree, `workspace` = `worktree`, `base-commit` and
 * `common-dir` (the review diffs the commit) and `worktree-*` (cleanup
 * rebuilds the worktree's context from them).
 *
 * Here: the type, its configuration and is_available(); a request's
 * options read into a plan in docker-plan.c; prepare() in docker-prepare.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "docker-isolation-private.h"

enum {
  PROP_0,
  PROP_BINARY,
  PROP_HOST,
  PROP_POOL_READY,
  PROP_POOL_FILLING,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void provider_iface_init (SubagentIsolationProviderInterface *iface);
static void configurable_iface_init (SubagentConfigurableInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SubagentDockerIsolation, subagent_docker_isolation, G_TYPE_OBJECT,
                                G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_ISOLATION_PROVIDER, provider_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_CONFIGURABLE, configurable_iface_init))

/* ---- availability ------------------------------------------------------- */

static gboolean
docker_is_available (SubagentIsolationProvider  *provider,
                     GError                    **error)
{
  SubagentDockerIsolation *self = SUBAGENT_DOCKER_ISOLATION (provider);
  g_autoptr(DockerEngine) engine = NULL;
  g_autofree char *host = NULL;
  g_autofree char *context = NULL;
  g_autofree char *version = NULL;

  g_mutex_lock (&self->lock);
  host = g_strdup (self->host);
  context = g_strdup (self->context);
  g_mutex_unlock (&self->lock);

  engine = docker_engine_new (host, context, error);
  if (engine == NULL)
    {
      docker_error_to_isolation (error, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE);
      return FALSE;
    }
  /* A server must answer: a socket file alone is not an engine. */
  version = docker_engine_server_version (engine, NULL, error);
  if (version == NULL)
    {
      docker_error_to_isolation (error, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE);
      return FALSE;
    }
  return TRUE;
}

/* ---- the type ----------------------------------------------------------- */

static SubagentReclaimOutcome
docker_reclaim (SubagentIsolationProvider  *provider,
                const char                 *root,
                JsonObject                 *record,
                SubagentReclaimFlags        flags,
                char                      **reason)
{
  return docker_reclaim_container ((flags & SUBAGENT_RECLAIM_FLAGS_DRY_RUN) != 0, record, reason);
}

/* ---- configuration ------------------------------------------------------ */

/* A string member of the config section, or NULL; another type is an error. */
static gboolean
config_string (JsonObject   *options,
               const char   *key,
               const char  **out,
               GError      **error)
{
  JsonNode *node = json_object_get_member (options, key);

  *out = NULL;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                   "docker: option “%s” must be a string", key);
      return FALSE;
    }
  *out = json_node_get_string (node);
  return TRUE;
}

/* The options of isolation-docker.plugin, from the loaded type. */
static GPtrArray *
docker_list_options (SubagentConfigurable *configurable)
{
  GPtrArray *options = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_plugin_option_unref);
  static const struct { const char *name, *type, *value, *doc; } declared[] = {
    { "image", "string", NULL, "The image children run in (required)" },
    { "host", "string", NULL, "The engine's address: unix:///PATH, tcp://HOST:PORT or https://HOST:PORT; default: "
                              "DOCKER_HOST, a docker context, unix:///var/run/docker.sock" },
    { "context", "string", NULL, "A docker context (~/.docker/contexts) naming the engine, when no host is given" },
    { "transfer", "string", "auto", "How /workspace reaches the container: bind (after a probe proves the engine "
                                    "sees it), copy (streamed in, copied back after each process), or auto" },
    { "copy_in", "string", "auto", "How a copied workspace goes in: auto (through the image's own sh and tar, "
                                   "checked, else PUT archive) or archive (always the engine's PUT archive)" },
    { "network", "string", "none", "The container's network: none, or a network the engine has" },
    { "user", "string", "65534:65534", "The user children run as inside the container" },
    { "workspace", "string", "snapshot", "What the container works in at /workspace: snapshot (a copy) or "
                                         "worktree (a git worktree)" },
    { "workspace_dir", "string", "$XDG_CACHE_HOME/subagent/docker", "Where snapshot workspaces are made "
                                                                    "(absolute, outside the parent)" },
    { "transfer_max_file", "integer", "1073741824", "The largest single file copied back from the container, in "
                                                    "bytes (copy mode)" },
    { "pids_limit", "integer", "512", "The most processes the container may hold; 0 for no limit" },
    { "nofile", "integer", "4096", "The open-files ulimit inside the container, where the engine may set it; 0 "
                                   "for the engine's default" },
    { "nproc", "integer", "0", "The nproc ulimit (per user id, host-wide), where the engine may set it; 0 leaves "
                               "it unset" },
    { "keep_branch", "boolean", "false", "workspace: worktree only: keep the worktree's branch afterwards" },
    { "include_dirty", "boolean", "false", "workspace: worktree only: carry the parent's uncommitted changes" },
    { "pool_size", "integer", "0", "workspace: worktree only: worktrees kept for reuse" },
    { "container_pool", "integer", "0", "workspace: snapshot only: started containers kept ready for the next "
                                        "child with the same options (0 to 16); each is used once" },
    { "binary", "string", NULL, "Accepted for old configurations and ignored: the engine is reached through its API" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (declared); i++)
    g_ptr_array_add (options, subagent_plugin_option_new (declared[i].name, declared[i].type, declared[i].value,
                                                          declared[i].doc, NULL));
  return options;
}

/* config.yaml's `docker:` section. Per-run options reach prepare through
 * the request anyway; what is kept here is what has no request: the
 * engine is_available() asks (`host`, `context`). `transfer` is checked
 * here too, so a typo fails when the workspace is loaded, not at a run. */
static gboolean
docker_configure (SubagentConfigurable  *configurable,
                  const char            *root,
                  JsonObject            *options,
                  GError               **error)
{
  SubagentDockerIsolation *self = SUBAGENT_DOCKER_ISOLATION (configurable);
  const char *host, *context, *transfer, *copy_in;

  if (!config_string (options, "host", &host, error) ||
      !config_string (options, "context", &context, error) ||
      !config_string (options, "transfer", &transfer, error) ||
      !config_string (options, "copy_in", &copy_in, error))
    return FALSE;
  if (host != NULL && (*host == '\0' || strchr (host, ' ') != NULL || *host == '-'))
    {
      g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                   "docker: option “host” is “%s”, not an engine address; use e.g. unix:///run/docker.sock", host);
      return FALSE;
    }
  if (transfer != NULL && g_ascii_strcasecmp (transfer, "auto") != 0 && g_ascii_strcasecmp (transfer, "bind") != 0 &&
      g_ascii_strcasecmp (transfer, "copy") != 0)
    {
      g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                   "docker: option “transfer” is “%s”: use auto (the default), bind or copy", transfer);
      return FALSE;
    }
  if (copy_in != NULL && g_ascii_strcasecmp (copy_in, "auto") != 0 && g_ascii_strcasecmp (copy_in, "archive") != 0)
    {
      g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                   "docker: option “copy_in” is “%s”: use auto (the default) or archive", copy_in);
      return FALSE;
    }
  /* Checked here too, so a bad pool size fails at load, not at a run. */
  {
    JsonNode *pool = json_object_get_member (options, "container_pool");

    if (pool != NULL && !JSON_NODE_HOLDS_NULL (pool) &&
        (json_node_get_value_type (pool) != G_TYPE_INT64 || json_node_get_int (pool) < 0 ||
         json_node_get_int (pool) > DOCKER_POOL_MAX))
      {
        g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                     "docker: option “container_pool” must be a whole number from 0 to %d", DOCKER_POOL_MAX);
        return FALSE;
      }
  }
  g_mutex_lock (&self->lock);
  if (host != NULL)
    {
      g_free (self->host);
      self->host = g_strdup (host);
    }
  if (context != NULL && *context != '\0')
    {
      g_free (self->context);
      self->context = g_strdup (context);
    }
  if (transfer != NULL)
    {
      g_free (self->transfer);
      self->transfer = g_strdup (transfer);
    }
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static void
configurable_iface_init (SubagentConfigurableInterface *iface)
{
  iface->list_options = docker_list_options;
  iface->configure = docker_configure;
}

static void
provider_iface_init (SubagentIsolationProviderInterface *iface)
{
  iface->is_available = docker_is_available;
  iface->prepare = docker_prepare;
  iface->spawnv = docker_context_spawnv;
  iface->cleanup = docker_context_cleanup;
  iface->reclaim = docker_reclaim;
}

static void
subagent_docker_isolation_get_property (GObject    *object,
                                        guint       prop_id,
                                        GValue     *value,
                                        GParamSpec *pspec)
{
  SubagentDockerIsolation *self = SUBAGENT_DOCKER_ISOLATION (object);

  g_mutex_lock (&self->lock);
  switch (prop_id)
    {
    case PROP_BINARY:
      g_value_set_string (value, self->binary);
      break;
    case PROP_HOST:
      g_value_set_string (value, self->host);
      break;
    case PROP_POOL_READY:
    case PROP_POOL_FILLING:
      {
        guint ready, filling;

        docker_pools_counts (self->pools, &ready, &filling);
        g_value_set_uint (value, prop_id == PROP_POOL_READY ? ready : filling);
      }
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
  g_mutex_unlock (&self->lock);
}

static void
subagent_docker_isolation_set_property (GObject      *object,
                                        guint         prop_id,
                                        const GValue *value,
                                        GParamSpec   *pspec)
{
  SubagentDockerIsolation *self = SUBAGENT_DOCKER_ISOLATION (object);

  g_mutex_lock (&self->lock);
  switch (prop_id)
    {
    case PROP_BINARY:
      g_free (self->binary);
      self->binary = g_value_dup_string (value);
      break;
    case PROP_HOST:
      g_free (self->host);
      self->host = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
  g_mutex_unlock (&self->lock);
}

static void
subagent_docker_isolation_finalize (GObject *object)
{
  SubagentDockerIsolation *self = SUBAGENT_DOCKER_ISOLATION (object);

  /* Idle warm containers go with the provider. */
  g_clear_pointer (&self->pools, docker_pools_free);
  g_free (self->binary);
  g_free (self->host);
  g_free (self->context);
  g_free (self->transfer);
  g_hash_table_unref (self->images);
  g_hash_table_unref (self->no_bind);
  g_hash_table_unref (self->bind_ok);
  g_hash_table_unref (self->no_tar);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (subagent_docker_isolation_parent_class)->finalize (object);
}

static void
subagent_docker_isolation_class_init (SubagentDockerIsolationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = subagent_docker_isolation_get_property;
  object_class->set_property = subagent_docker_isolation_set_property;
  object_class->finalize = subagent_docker_isolation_finalize;

  /**
   * SubagentDockerIsolation:binary:
   *
   * Kept for old configurations and ignored: the engine is reached
   * through its API (#SubagentDockerIsolation:host), never a command line.
   */
  properties[PROP_BINARY] = g_param_spec_string ("binary", NULL, NULL, NULL,
                                                 G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentDockerIsolation:host:
   *
   * The engine address used when a request has no `host` option; %NULL
   * keeps DOCKER_HOST (or DOCKER_CONTEXT, the current context, the
   * default socket).
   */
  properties[PROP_HOST] = g_param_spec_string ("host", NULL, NULL, NULL,
                                               G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentDockerIsolation:pool-ready:
   *
   * Warm containers waiting for a prepare (option `container_pool`).
   */
  properties[PROP_POOL_READY] = g_param_spec_uint ("pool-ready", NULL, NULL, 0, G_MAXUINT, 0,
                                                   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentDockerIsolation:pool-filling:
   *
   * Warm containers being made or still to make in the background; 0 when
   * every pool is full (or stopped after a failure). Benchmarks wait for 0
   * so the refill does not run inside what they time.
   */
  properties[PROP_POOL_FILLING] = g_param_spec_uint ("pool-filling", NULL, NULL, 0, G_MAXUINT, 0,
                                                     G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_docker_isolation_class_finalize (SubagentDockerIsolationClass *klass)
{
}

static void
subagent_docker_isolation_init (SubagentDockerIsolation *self)
{
  g_mutex_init (&self->lock);
  self->images = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->no_bind = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->bind_ok = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->no_tar = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->pools = docker_pools_new ();
}

void
subagent_docker_isolation_register (GTypeModule *module)
{
  subagent_docker_isolation_register_type (module);
}
