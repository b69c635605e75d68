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
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "docker-private.h"

struct _SubagentDockerIsolation
{
  GObject parent_instance;

  GMutex lock;
  char *binary;         /* under lock; only for old configurations */
  char *host;           /* under lock */
  char *context;        /* under lock: config docker.context */
  char *transfer;       /* under lock: config docker.transfer */
  GHashTable *images;   /* under lock: "address\nimage" → gint64 time it was seen */
  GHashTable *no_bind;  /* under lock: "address\ndir\ndevice" → gint64 time a bind probe failed */
  GHashTable *bind_ok;  /* under lock: the same keys → gint64 time a bind probe passed */
  GHashTable *no_tar;   /* under lock: "address\nimage" → gint64 time its exec copy-in could not run */
  DockerPools *pools;   /* warm containers (option container_pool); locks itself */
};

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

static const char * const excluded_names[] = { ".subagent", ".git", NULL };

#define DEFAULT_USER "65534:65534"
#define DEFAULT_NETWORK "none"
#define DEFAULT_PIDS_LIMIT 512
#define DEFAULT_NOFILE 4096
/* How long an image, once seen on an engine, is trusted to be there
 * without asking again (a create that fails asks again anyway), and a
 * failed bind probe is trusted to fail again. */
#define CACHE_TTL_USEC (300 * G_USEC_PER_SEC)

/* ---- options ------------------------------------------------------------ */

static gboolean
word_is_valid (const char *text,
               const char *extra_chars)
{
  if (text == NULL || *text == '\0' || *text == '-' || strlen (text) > 255)
    return FALSE;
  for (const char *p = text; *p; p++)
    if (!g_ascii_isalnum (*p) && strchr (extra_chars, *p) == NULL)
      return FALSE;
  return TRUE;
}

/* Digits and an optional unit (b, k, m, g), as docker's --memory takes. */
static gboolean
memory_limit_is_valid (const char *text)
{
  const char *p = text;
  gboolean nonzero = FALSE;

  if (text == NULL || !g_ascii_isdigit (*p))
    return FALSE;
  for (; g_ascii_isdigit (*p); p++)
    nonzero |= *p != '0';
  if (*p != '\0' && strchr ("bkmgBKMG", *p) != NULL)
    p++;
  return nonzero && *p == '\0' && p - text <= 20;
}

/* A string option; a present value of another type is an error, not a
 * silent default. */
static gboolean
option_string (SubagentIsolationRequest  *request,
               const char                *key,
               const char                *default_value,
               const char               **out,
               GError                   **error)
{
  JsonObject *options = subagent_isolation_request_get_options (request);
  JsonNode *node = options ? json_object_get_member (options, key) : NULL;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      *out = default_value;
      return TRUE;
    }
  if (json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Docker option %s must be a string (quote it in config.yaml)", key);
      return FALSE;
    }
  *out = json_node_get_string (node);
  return TRUE;
}

static gboolean
path_is_within (const char *path,
                const char *dir)
{
  gsize len = strlen (dir);

  return g_str_equal (path, dir) || g_str_equal (dir, "/") ||
         (strncmp (path, dir, len) == 0 && path[len] == '/');
}

static char *
resolve_dir (const char *path)
{
  char *real = realpath (path, NULL);
  char *result = NULL;

  if (real != NULL && g_file_test (real, G_FILE_TEST_IS_DIR))
    result = g_strdup (real);
  free (real);
  return result;
}

/* ---- options ------------------------------------------------------------- */

/* An integer option, as a number or a string of digits. */
static gboolean
option_int (SubagentIsolationRequest  *request,
            const char                *key,
            gint64                     default_value,
            gint64                    *out,
            GError                   **error)
{
  JsonObject *options = subagent_isolation_request_get_options (request);
  JsonNode *node = options ? json_object_get_member (options, key) : NULL;
  guint64 value = 0;

  *out = default_value;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (json_node_get_value_type (node) == G_TYPE_INT64 && json_node_get_int (node) >= 0)
    {
      *out = json_node_get_int (node);
      return TRUE;
    }
  if (json_node_get_value_type (node) == G_TYPE_STRING &&
      g_ascii_string_to_unsigned (json_node_get_string (node), 10, 0, G_MAXINT64, &value, NULL))
    {
      *out = (gint64) value;
      return TRUE;
    }
  g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
               "Docker option %s must be a whole number of 0 or more", key);
  return FALSE;
}

/* "512m" → bytes (units b, k, m, g as docker takes them). */
static gint64
size_to_bytes (const char *text)
{
  char *end = NULL;
  guint64 value = g_ascii_strtoull (text, &end, 10);

  switch (g_ascii_tolower (*end))
    {
    case 'k': return (gint64) value << 10;
    case 'm': return (gint64) value << 20;
    case 'g': return (gint64) value << 30;
    default: return (gint64) value;
    }
}

/* ---- prepare ------------------------------------------------------------ */

typedef enum { TRANSFER_AUTO, TRANSFER_BIND, TRANSFER_COPY } Transfer;

typedef struct {
  const char *key;
  const char *parent_run_id;
  const char *image;
  const char *network;
  const char *user;
  const char *memory;
  double cpus;
  gint64 pids_limit, nofile, nproc;
  gint64 max_file;
  gint64 pool_size;     /* option container_pool */
  Transfer transfer;
  gboolean copy_in_exec; /* option copy_in: auto (the image's tar first) or archive */
  gboolean worktree;    /* workspace: worktree (base stays NULL) */
  char *parent;
  char *dir;            /* the resolved workspace_dir (snapshot) */
  char *base;
  char *tree;
  char *name;
  DockerEngine *engine;
} Plan;

static void
plan_clear (Plan *plan)
{
  g_free (plan->parent);
  g_free (plan->dir);
  g_free (plan->base);
  g_free (plan->tree);
  g_free (plan->name);
  g_clear_pointer (&plan->engine, docker_engine_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Plan, plan_clear)

static gboolean
read_plan (SubagentDockerIsolation   *self,
           SubagentIsolationRequest  *request,
           Plan                      *plan,
           GError                   **error)
{
  const char *parent_option = subagent_isolation_request_get_parent_root (request);
  const char *binary, *host, *context, *workspace, *dir_option, *transfer, *copy_in;
  g_autofree char *default_host = NULL;
  g_autofree char *default_context = NULL;
  g_autofree char *default_transfer = NULL;
  g_autofree char *default_dir = NULL;
  g_autoptr(GError) local_error = NULL;

  g_mutex_lock (&self->lock);
  default_host = g_strdup (self->host);
  default_context = g_strdup (self->context);
  default_transfer = g_strdup (self->transfer ? self->transfer : "auto");
  g_mutex_unlock (&self->lock);

  plan->key = subagent_isolation_request_get_session_key (request);
  plan->parent_run_id = subagent_isolation_request_get_parent_run_id (request);
  plan->memory = subagent_isolation_request_get_memory_limit (request);
  plan->cpus = subagent_isolation_request_get_cpu_quota (request);
  if (plan->memory != NULL && *plan->memory == '\0')
    plan->memory = NULL;

  if (!subagent_isolation_session_key_is_valid (plan->key))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Invalid session key “%s”: use 1 to 128 of [A-Za-z0-9_-]", plan->key ? plan->key : "");
      return FALSE;
    }
  if (!option_string (request, "image", NULL, &plan->image, error) ||
      !option_string (request, "binary", NULL, &binary, error) ||
      !option_string (request, "host", default_host, &host, error) ||
      !option_string (request, "context", default_context, &context, error) ||
      !option_string (request, "network", DEFAULT_NETWORK, &plan->network, error) ||
      !option_string (request, "user", DEFAULT_USER, &plan->user, error) ||
      !option_string (request, "workspace", "snapshot", &workspace, error) ||
      !option_string (request, "workspace_dir", NULL, &dir_option, error) ||
      !option_string (request, "transfer", default_transfer, &transfer, error) ||
      !option_string (request, "copy_in", "auto", &copy_in, error) ||
      !option_int (request, "pids_limit", DEFAULT_PIDS_LIMIT, &plan->pids_limit, error) ||
      !option_int (request, "nofile", DEFAULT_NOFILE, &plan->nofile, error) ||
      !option_int (request, "nproc", 0, &plan->nproc, error) ||
      !option_int (request, "transfer_max_file", (gint64) DOCKER_DEFAULT_MAX_FILE, &plan->max_file, error) ||
      !option_int (request, "container_pool", 0, &plan->pool_size, error))
    return FALSE;
  if (plan->pool_size > DOCKER_POOL_MAX)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Docker option container_pool %" G_GINT64_FORMAT " is out of range: use 0 to %d",
                   plan->pool_size, DOCKER_POOL_MAX);
      return FALSE;
    }

  if (plan->memory != NULL && !memory_limit_is_valid (plan->memory))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Invalid memory limit “%s”: use a positive number of bytes with an optional unit "
                   "b, k, m or g (e.g. 512m, 2g)", plan->memory);
      return FALSE;
    }
  if (!isfinite (plan->cpus) || plan->cpus < 0.0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Invalid CPU quota %g: use a positive number of cores (e.g. 0.5)", plan->cpus);
      return FALSE;
    }
  if (plan->image == NULL || *plan->image == '\0')
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Docker isolation needs an image: set docker.image in .subagent/config.yaml "
                   "(or the run's image option)");
      return FALSE;
    }
  if (!word_is_valid (plan->image, "._-/:@"))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Invalid image reference “%s”", plan->image);
      return FALSE;
    }
  if (!word_is_valid (plan->network, "._-:"))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Invalid network “%s”: use none (the default), bridge, host or a network name", plan->network);
      return FALSE;
    }
  if (!word_is_valid (plan->user, "._-:"))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Invalid user “%s”: use uid[:gid] or a user name of the image", plan->user);
      return FALSE;
    }
  if (binary != NULL && *binary != '\0')
    {
      g_auto(GStrv) argv = NULL;
      if (!g_shell_parse_argv (binary, NULL, &argv, &local_error))
        {
          g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                       "Option binary “%s” is not a command line: %s (it is ignored: the engine is reached "
                       "through its API; set host instead)", binary, local_error->message);
          return FALSE;
        }
    }
  plan->worktree = g_ascii_strcasecmp (workspace, "worktree") == 0;
  if (!plan->worktree && g_ascii_strcasecmp (workspace, "snapshot") != 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Unknown docker workspace “%s”: use snapshot (the default) or worktree", workspace);
      return FALSE;
    }
  if (g_ascii_strcasecmp (transfer, "auto") == 0)
    plan->transfer = TRANSFER_AUTO;
  else if (g_ascii_strcasecmp (transfer, "bind") == 0)
    plan->transfer = TRANSFER_BIND;
  else if (g_ascii_strcasecmp (transfer, "copy") == 0)
    plan->transfer = TRANSFER_COPY;
  else
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Unknown docker transfer “%s”: use auto (the default), bind or copy", transfer);
      return FALSE;
    }
  plan->copy_in_exec = g_ascii_strcasecmp (copy_in, "auto") == 0;
  if (!plan->copy_in_exec && g_ascii_strcasecmp (copy_in, "archive") != 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Unknown docker copy_in “%s”: use auto (the default) or archive", copy_in);
      return FALSE;
    }
  if (plan->max_file <= 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Docker option transfer_max_file must be a positive number of bytes");
      return FALSE;
    }
  if (host != NULL && *host != '\0' && (strchr (host, ' ') != NULL || *host == '-'))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Option host “%s” is not an engine address; use e.g. unix:///run/docker.sock", host);
      return FALSE;
    }

  plan->engine = docker_engine_new (host, context, error);
  if (plan->engine == NULL)
    {
      docker_error_to_isolation (error, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION);
      return FALSE;
    }

  if (parent_option == NULL || (plan->parent = resolve_dir (parent_option)) == NULL)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Cannot give a container a copy of %s: it is not an existing directory",
                   parent_option ? parent_option : "(no parent root)");
      return FALSE;
    }
  plan->name = g_strconcat ("subagent-", plan->key, NULL);
  if (plan->worktree)
    return TRUE;   /* the worktree backend decides where the tree goes */
  if (dir_option == NULL)
    dir_option = default_dir = g_build_filename (g_get_user_cache_dir (), "subagent", "docker", NULL);
  if (!g_path_is_absolute (dir_option))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Docker option workspace_dir “%s” must be an absolute path", dir_option);
      return FALSE;
    }
  if (g_mkdir_with_parents (dir_option, 0700) != 0 || (plan->dir = resolve_dir (dir_option)) == NULL)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not create the container workspace directory %s: %s; set option workspace_dir",
                   dir_option, g_strerror (saved));
      return FALSE;
    }
  if (path_is_within (plan->dir, plan->parent))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Workspace directory %s is inside the parent %s: the copy would copy itself; "
                   "set option workspace_dir to a directory outside it", plan->dir, plan->parent);
      return FALSE;
    }

  /* Each workspace in a block group of its own: made right after another
   * was removed, its files would otherwise be created among the removed
   * one's recently freed inodes, slowly (ext4). */
  subagent_tree_spread_subdirectories (plan->dir);
  plan->base = g_build_filename (plan->dir, plan->key, NULL);
  plan->tree = g_build_filename (plan->base, DOCKER_TREE, NULL);
  return TRUE;
}

/* "address\nSUFFIX": keys of the per-engine caches. */
static char *
engine_key (Plan       *plan,
            const char *suffix)
{
  return g_strdup_printf ("%s\n%s", docker_engine_get_address (plan->engine), suffix);
}

static gboolean
cache_fresh (SubagentDockerIsolation *self,
             GHashTable              *table,
             const char              *key)
{
  gpointer seen = NULL;
  gboolean fresh;

  g_mutex_lock (&self->lock);
  fresh = g_hash_table_lookup_extended (table, key, NULL, &seen) &&
          g_get_monotonic_time () - (gint64) GPOINTER_TO_SIZE (seen) < CACHE_TTL_USEC;
  g_mutex_unlock (&self->lock);
  return fresh;
}

static void
cache_set (SubagentDockerIsolation *self,
           GHashTable              *table,
           const char              *key,
           gboolean                 present)
{
  g_mutex_lock (&self->lock);
  if (present)
    g_hash_table_insert (table, g_strdup (key), GSIZE_TO_POINTER ((gsize) g_get_monotonic_time ()));
  else
    g_hash_table_remove (table, key);
  g_mutex_unlock (&self->lock);
}

/* Checks the image once per engine and TTL: a round trip every prepare
 * would otherwise pay. */
static gboolean
check_image_cached (SubagentDockerIsolation  *self,
                    Plan                     *plan,
                    GCancellable             *cancellable,
                    GError                  **error)
{
  g_autofree char *key = engine_key (plan, plan->image);

  if (cache_fresh (self, self->images, key))
    return TRUE;
  if (!docker_container_check_image (plan->engine, plan->image, cancellable, error))
    return FALSE;
  cache_set (self, self->images, key, TRUE);
  return TRUE;
}

JsonObject *
docker_owner_extra (DockerEngine *engine)
{
  JsonObject *extra = json_object_new ();

  /* reclaim (subagentctl prune) reaches the same engine through its API
   * (`api`, `host`); `binary` and `global_args` keep older readers working. */
  json_object_set_boolean_member (extra, "api", TRUE);
  json_object_set_string_member (extra, "binary", "docker");
  json_object_set_array_member (extra, "global_args", json_array_new ());
  json_object_set_string_member (extra, "host", docker_engine_get_address (engine));
  return extra;
}

/* @pool_slot: the key a warm container was made under (its label and,
 * until taken, its marker), which reclaim then accepts too. */
static gboolean
save_owner (Plan        *plan,
            const char  *pool_slot,
            GError     **error)
{
  g_autoptr(JsonObject) extra = docker_owner_extra (plan->engine);
  g_autoptr(GError) local_error = NULL;

  if (plan->base != NULL)
    json_object_set_string_member (extra, "workspace", plan->base);
  if (pool_slot != NULL)
    json_object_set_string_member (extra, "pool_slot", pool_slot);
  if (!subagent_owner_record_save (plan->parent, plan->key, DOCKER_OWNER_KIND, plan->name,
                                   plan->parent_run_id, extra, &local_error))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Cannot record who owns container %s: %s", plan->name, local_error->message);
      return FALSE;
    }
  return TRUE;
}

/* "1000", "1000:100" → ids; a name → FALSE (as docker_workspace_give_to_user). */
static gboolean
numeric_user (const char *user,
              guint      *uid,
              guint      *gid)
{
  g_auto(GStrv) parts = g_strsplit (user, ":", 2);
  guint64 u, g;

  if (!g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXUINT32 - 1, &u, NULL))
    return FALSE;
  if (parts[1] == NULL)
    g = u;
  else if (!g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT32 - 1, &g, NULL))
    return FALSE;
  *uid = (guint) u;
  *gid = (guint) g;
  return TRUE;
}

static void
fill_spec (Plan       *plan,
           DockerSpec *spec,
           gboolean    bind)
{
  memset (spec, 0, sizeof *spec);
  spec->name = plan->name;
  spec->key = plan->key;
  spec->parent_run_id = plan->parent_run_id;
  spec->image = plan->image;
  spec->user = plan->user;
  spec->network = plan->network;
  spec->cpus = plan->cpus;
  spec->memory_bytes = plan->memory ? size_to_bytes (plan->memory) : 0;
  spec->pids_limit = plan->pids_limit;
  spec->nofile = plan->nofile;
  spec->nproc = plan->nproc;
  spec->numeric_user = numeric_user (plan->user, &spec->uid, &spec->gid);
  spec->bind_source = bind ? plan->tree : NULL;
  spec->bind_git_read_only = bind && plan->worktree;
}

typedef struct {
  Plan *plan;
  GCancellable *cancellable;
  gboolean bind;            /* in: try a bind mount; out: it worked */
  const char *probe_name;   /* bind: the nonce file in the tree */
  const char *nonce;
  char *container_id;
  char *bind_refusal;       /* why the engine cannot bind the tree */
  char *ulimit_refusal;     /* why the engine would not set ulimits */
  GError *error;
} StartJob;

static gboolean
says_bind_source_missing (const GError *error)
{
  return error != NULL && (strstr (error->message, "bind source path does not exist") != NULL ||
                           strstr (error->message, "no such file or directory") != NULL);
}

/* Creates and starts the container; with job->bind, probes the mount and
 * removes the container again when the engine does not see the tree. */
static gpointer
start_in_thread (gpointer data)
{
  StartJob *job = data;
  Plan *plan = job->plan;
  DockerSpec spec;
  g_autoptr(GError) local_error = NULL;

retry:
  fill_spec (plan, &spec, job->bind);
  if (job->ulimit_refusal != NULL)
    spec.nofile = spec.nproc = 0;
  job->container_id = docker_container_create (plan->engine, &spec, job->cancellable, &local_error);
  if (job->container_id == NULL)
    {
      if (job->bind && says_bind_source_missing (local_error))
        {
          job->bind = FALSE;
          job->bind_refusal = g_strdup (local_error->message);
          return NULL;
        }
      job->error = g_steal_pointer (&local_error);
      return NULL;
    }
  if (!docker_container_start (plan->engine, job->container_id, job->cancellable, &local_error))
    {
      /* Ulimits only where the engine may set them (a rootless or
       * confined engine may not raise one): without them, and say so. */
      if (job->ulimit_refusal == NULL && (spec.nofile > 0 || spec.nproc > 0) &&
          strstr (local_error->message, "rlimit") != NULL)
        {
          job->ulimit_refusal = g_strdup (local_error->message);
          g_clear_error (&local_error);
          g_clear_pointer (&job->container_id, g_free);
          if (!docker_container_remove (plan->engine, plan->name, &job->error))
            return NULL;
          goto retry;
        }
      job->error = g_steal_pointer (&local_error);
      return NULL;
    }
  if (job->bind && job->probe_name != NULL &&
      !docker_container_probe (plan->engine, job->container_id, job->probe_name, job->nonce, job->cancellable,
                               &local_error))
    {
      if (local_error != NULL)
        {
          job->error = g_steal_pointer (&local_error);
          return NULL;
        }
      job->bind = FALSE;
      job->bind_refusal = g_strdup_printf ("the probe file %s written into %s is not in the container's %s",
                                           job->probe_name, plan->tree, DOCKER_WORKDIR);
      if (!docker_container_remove (plan->engine, plan->name, &job->error))
        return NULL;
      g_clear_pointer (&job->container_id, g_free);
    }
  return NULL;
}

/* Undoes a half-made workspace: container, directory, record, worktree. */
static void
undo_prepare (Plan                     *plan,
              gboolean                  container_started,
              SubagentIsolationContext *worktree)
{
  g_autoptr(GError) error = NULL;
  gboolean complete = TRUE;

  if (container_started && !docker_container_remove (plan->engine, plan->name, &error))
    {
      g_message ("Could not remove container %s of a failed prepare: %s", plan->name, error->message);
      g_clear_error (&error);
      complete = FALSE;
    }
  if (plan->base != NULL && !docker_workspace_remove (plan->base, plan->key, &error))
    {
      g_message ("Could not remove workspace %s of a failed prepare: %s", plan->base, error->message);
      complete = FALSE;
    }
  /* What could not go keeps its record, so prune retries it; a worktree
   * still mounted in a container stays for prune too. */
  if (complete)
    subagent_owner_record_remove (plan->parent, plan->key);
  if (complete && worktree != NULL)
    {
      g_clear_error (&error);
      if (!docker_workspace_take_back (plan->tree, &error))
        g_message ("Could not take worktree %s back: %s", plan->tree, error->message);
      subagent_isolation_context_cleanup (worktree);
    }
}

/* The bind caches' key: the engine, the directory trees are made in and
 * its device. */
static char *
bind_cache_key (Plan       *plan,
                const char *trees_dir)
{
  g_autofree char *suffix = NULL;
  struct stat st;

  suffix = g_strdup_printf ("%s\n%ju", trees_dir, stat (trees_dir, &st) == 0 ? (uintmax_t) st.st_dev : 0);
  return engine_key (plan, suffix);
}

/* A warm container for this prepare's exact options, if the pool has one
 * and the transfer mode is already known (a bind trusted by a passed
 * probe, or copy); NULL: the plain path. *out_signature is set whenever
 * the mode is known. */
static DockerPoolSlot *
take_from_pool (SubagentDockerIsolation  *self,
                Plan                     *plan,
                GCancellable             *cancellable,
                char                    **out_signature)
{
  g_autofree char *key = bind_cache_key (plan, plan->dir);
  DockerPoolSlot *slot;
  DockerSpec spec;
  gboolean bind;

  *out_signature = NULL;
  if (plan->transfer != TRANSFER_COPY && cache_fresh (self, self->bind_ok, key))
    bind = TRUE;
  else if (plan->transfer == TRANSFER_COPY ||
           (plan->transfer == TRANSFER_AUTO && cache_fresh (self, self->no_bind, key)))
    bind = FALSE;
  else
    return NULL;   /* a probe first, on the plain path */
  fill_spec (plan, &spec, bind);
  *out_signature = docker_pools_signature (plan->engine, &spec, plan->parent, plan->dir);
  slot = docker_pools_take (self->pools, *out_signature);
  /* Someone may have removed or stopped it meanwhile. */
  if (slot != NULL && !docker_container_is_running (plan->engine, slot->id, cancellable, NULL))
    {
      g_debug ("Pooled container %s is not running any more: removing it", slot->name);
      docker_pools_discard (self->pools, plan->engine, plan->parent, slot);
      slot = NULL;
    }
  return slot;
}

/* Makes a taken warm container this session's: its own owner record
 * (naming the slot, whose label the container carries) replaces the
 * slot's, and the workspace marker gets the session's key. */
static gboolean
adopt_slot (Plan            *plan,
            DockerPoolSlot  *slot,
            GError         **error)
{
  g_autoptr(GError) local_error = NULL;

  g_free (plan->name);
  plan->name = g_strdup (slot->name);
  g_free (plan->base);
  plan->base = g_strdup (slot->base);
  g_free (plan->tree);
  plan->tree = g_strdup (slot->tree);
  if (!save_owner (plan, slot->slot, error))
    return FALSE;
  subagent_owner_record_remove (plan->parent, slot->slot);
  if (!subagent_owner_marker_write (plan->base, DOCKER_MARKER, plan->key, plan->parent, &local_error))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not write the workspace marker: %s", local_error->message);
      return FALSE;
    }
  return TRUE;
}

static char *
new_nonce (void)
{
  return g_strdup_printf ("%08x%08x%08x%08x", g_random_int (), g_random_int (), g_random_int (), g_random_int ());
}

static SubagentIsolationContext *
docker_prepare (SubagentIsolationProvider  *provider,
                SubagentIsolationRequest   *request,
                GCancellable               *cancellable,
                GError                    **error)
{
  SubagentDockerIsolation *self = SUBAGENT_DOCKER_ISOLATION (provider);
  g_auto (Plan) plan = { 0 };
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *container_id = NULL;
  g_autofree char *nonce = NULL;
  g_autofree char *probe_name = NULL;
  g_autofree char *probe_path = NULL;
  g_autofree char *no_bind_key = NULL;
  g_autofree char *described = NULL;
  g_autoptr(SubagentIsolationContext) worktree = NULL;
  g_autoptr(DockerPoolSlot) slot = NULL;
  g_autofree char *pool_signature = NULL;
  SubagentCopyStrategy copy_used = SUBAGENT_COPY_STRATEGY_COPY;
  static const char * const worktree_keep[] = { ".git", NULL };
  gboolean started = FALSE;
  gboolean world_writable = FALSE;
  gboolean copied = TRUE;
  gboolean bind_trusted, tried_bind;
  gboolean given = FALSE;   /* the tree was handed to the container's user */
  StartJob job = { 0 };
  GThread *thread = NULL;
  GVariantBuilder data;
  gint64 copy_start, copy_usec = 0, transfer_usec = 0;
  const char *copy_in_method = NULL;   /* copy mode: "exec" or "archive" */
  DockerSpec spec;
  SubagentExcludeSet *secrets = subagent_isolation_request_get_exclude_set (request);

  if (!read_plan (self, request, &plan, error))
    return NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  /* Nothing exists yet: a dead engine or a missing image leaves nothing. */
  if (!docker_engine_negotiate (plan.engine, cancellable, error))
    {
      docker_error_to_isolation (error, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE);
      return NULL;
    }
  if (!check_image_cached (self, &plan, cancellable, error))
    return NULL;
  described = docker_engine_describe (plan.engine);

  if (!plan.worktree && plan.pool_size > 0)
    slot = take_from_pool (self, &plan, cancellable, &pool_signature);
  if (slot != NULL)
    {
      /* A warm container: nothing ran in it; only the workspace is filled. */
      started = TRUE;
      if (!adopt_slot (&plan, slot, &local_error))
        goto failed;
      copy_start = g_get_monotonic_time ();
      if (!subagent_tree_copy_excluding (plan.parent, plan.tree, SUBAGENT_COPY_STRATEGY_AUTO, excluded_names,
                                         secrets, &copy_used, cancellable, &local_error))
        goto failed;
      copy_usec = g_get_monotonic_time () - copy_start;
      if (slot->bind)
        {
          if (!docker_workspace_give_to_user (plan.tree, plan.user, &world_writable, &local_error))
            goto failed;
          given = TRUE;
        }
      container_id = g_strdup (slot->id);
      job.bind = slot->bind;
      job.ulimit_refusal = g_steal_pointer (&slot->ulimit_refusal);
      goto container_ready;
    }

  if (plan.worktree)
    {
      worktree = docker_worktree_prepare (request, cancellable, error);
      if (worktree == NULL)
        return NULL;
      plan.tree = g_strdup (subagent_isolation_context_get_child_root (worktree));
      if (!save_owner (&plan, NULL, &local_error))
        goto failed;
    }
  else
    {
      if (!docker_workspace_create (plan.base, plan.key, plan.parent, error))
        return NULL;
      if (!save_owner (&plan, NULL, &local_error))
        {
          (void) subagent_tree_remove (plan.base, NULL, NULL);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
      if (mkdir (plan.tree, 0700) != 0)
        {
          int saved = errno;
          g_set_error (&local_error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                       "Could not create %s: %s", plan.tree, g_strerror (saved));
          goto failed;
        }
    }

  /* Bind only where a probe proves the engine sees the tree. What a probe
   * found holds for the directory the trees are made in (its device
   * included) on that engine for a while: an engine that failed it lately
   * goes straight to copy, one that passed it binds without asking again
   * (a create the engine refuses for a missing source still falls back). */
  {
    g_autofree char *tree_parent = g_path_get_dirname (plan.tree);
    g_autofree char *trees_dir = plan.worktree ? g_strdup (tree_parent) : g_path_get_dirname (tree_parent);

    no_bind_key = bind_cache_key (&plan, trees_dir);
  }
  job.plan = &plan;
  job.cancellable = cancellable;
  job.bind = plan.transfer == TRANSFER_BIND ||
             (plan.transfer == TRANSFER_AUTO && !cache_fresh (self, self->no_bind, no_bind_key));
  bind_trusted = job.bind && cache_fresh (self, self->bind_ok, no_bind_key);
  tried_bind = job.bind;
  if (job.bind && !bind_trusted)
    {
      nonce = new_nonce ();
      probe_name = g_strconcat (DOCKER_PROBE_PREFIX, nonce, NULL);
      probe_path = g_build_filename (plan.tree, probe_name, NULL);
      job.probe_name = probe_name;
      job.nonce = nonce;
      if (!g_file_set_contents (probe_path, nonce, -1, &local_error))
        goto failed;
    }

  started = TRUE;   /* even a failed or cancelled create may have made it */
  if (!plan.worktree)
    {
      /* The container starts while the tree is copied; nothing runs in it
       * before both are done. */
      thread = g_thread_try_new ("subagent-docker-start", start_in_thread, &job, NULL);
      copy_start = g_get_monotonic_time ();
      copied = subagent_tree_copy_excluding (plan.parent, plan.tree, SUBAGENT_COPY_STRATEGY_AUTO, excluded_names,
                                             secrets, &copy_used, cancellable, &local_error);
      copy_usec = g_get_monotonic_time () - copy_start;
      /* A bind known to work: the tree goes to the container's user while
       * the container still starts. */
      if (copied && bind_trusted)
        {
          copied = docker_workspace_give_to_user (plan.tree, plan.user, &world_writable, &local_error);
          given = copied;
        }
    }
  if (thread != NULL)
    g_thread_join (thread);
  else
    start_in_thread (&job);
  if (probe_path != NULL)
    (void) g_unlink (probe_path);
  container_id = g_steal_pointer (&job.container_id);
  if (!copied)
    {
      g_clear_error (&job.error);
      goto failed;
    }
  if (job.error != NULL)
    {
      local_error = g_steal_pointer (&job.error);
      goto start_failed;
    }

  if (tried_bind && !job.bind)
    {
      /* The engine works somewhere that does not hold this directory. */
      if (plan.transfer == TRANSFER_BIND)
        {
          g_set_error (&local_error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                       "%s cannot see the host directory %s (%s): it runs on another machine or in another "
                       "mount namespace, and the child would work in an empty directory; set "
                       "docker.transfer to copy (or auto, the default)", described, plan.tree, job.bind_refusal);
          g_free (job.bind_refusal);
          goto failed;
        }
      g_debug ("%s cannot bind %s (%s): copying the workspace", described, plan.tree, job.bind_refusal);
      g_clear_pointer (&job.bind_refusal, g_free);
      cache_set (self, self->no_bind, no_bind_key, TRUE);
      cache_set (self, self->bind_ok, no_bind_key, FALSE);
      world_writable = FALSE;
      if (given && !docker_workspace_take_back (plan.tree, &local_error))
        goto failed;
      given = FALSE;
      job.bind = FALSE;
      start_in_thread (&job);
      container_id = g_steal_pointer (&job.container_id);
      if (job.error != NULL)
        {
          local_error = g_steal_pointer (&job.error);
          goto start_failed;
        }
    }
  else if (probe_name != NULL)
    {
      cache_set (self, self->no_bind, no_bind_key, FALSE);
      cache_set (self, self->bind_ok, no_bind_key, TRUE);
    }

container_ready:
  if (job.bind)
    {
      if ((!given && !docker_workspace_give_to_user (plan.tree, plan.user, &world_writable, &local_error)) ||
          (plan.worktree && !world_writable && !docker_worktree_keep_ownership (plan.tree, &local_error)))
        goto failed;
    }
  else
    {
      gint64 start = g_get_monotonic_time ();
      g_autofree char *tar_key = engine_key (&plan, plan.image);
      gboolean image_refused = FALSE;

      fill_spec (&plan, &spec, FALSE);
      if (!docker_copy_in (plan.engine, container_id, plan.user, plan.tree, plan.worktree ? worktree_keep : NULL,
                           secrets, spec.numeric_user ? spec.uid : 0, spec.numeric_user ? spec.gid : 0,
                           plan.copy_in_exec && !cache_fresh (self, self->no_tar, tar_key), &copy_in_method,
                           &image_refused, cancellable, &local_error))
        {
          if (!g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            {
              g_autoptr(GError) put_error = g_steal_pointer (&local_error);
              g_set_error (&local_error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                           "Could not copy the workspace %s into container %s: %s", plan.tree, plan.name,
                           put_error->message);
            }
          goto failed;
        }
      /* An image that cannot run the exec goes straight to the archive
       * for a while. */
      if (image_refused)
        cache_set (self, self->no_tar, tar_key, TRUE);
      transfer_usec = g_get_monotonic_time () - start;
    }

  if (worktree != NULL)
    for (const char * const *w = subagent_isolation_context_get_warnings (worktree); *w != NULL; w++)
      g_ptr_array_add (warnings, g_strdup (*w));
  if (job.ulimit_refusal != NULL)
    g_ptr_array_add (warnings, g_strdup_printf ("The engine would not set the nofile/nproc ulimits (%s); the "
                                                "container runs with the engine's defaults", job.ulimit_refusal));
  if (world_writable)
    g_ptr_array_add (warnings, g_strdup_printf ("The workspace %s is writable for everyone on the host: "
                                                "user “%s” could not be given it by id", plan.tree, plan.user));
  g_ptr_array_add (warnings, NULL);

  g_variant_builder_init (&data, G_VARIANT_TYPE_VARDICT);
  docker_engine_add_to_data (plan.engine, &data);
  g_variant_builder_add (&data, "{sv}", "container-name", g_variant_new_string (plan.name));
  g_variant_builder_add (&data, "{sv}", "image", g_variant_new_string (plan.image));
  g_variant_builder_add (&data, "{sv}", "user", g_variant_new_string (plan.user));
  g_variant_builder_add (&data, "{sv}", "network", g_variant_new_string (plan.network));
  g_variant_builder_add (&data, "{sv}", "transfer", g_variant_new_string (job.bind ? "bind" : "copy"));
  if (copy_in_method != NULL)
    g_variant_builder_add (&data, "{sv}", "copy-in", g_variant_new_string (copy_in_method));
  g_variant_builder_add (&data, "{sv}", "transfer-max-file", g_variant_new_uint64 ((guint64) plan.max_file));
  g_variant_builder_add (&data, "{sv}", "transfer-usec", g_variant_new_int64 (transfer_usec));
  g_variant_builder_add (&data, "{sv}", "pooled", g_variant_new_boolean (slot != NULL));
  /* Left out of the workspace: copy-back keeps them, the review skips them. */
  g_variant_builder_add (&data, "{sv}", "exclude",
                         g_variant_new_strv (subagent_isolation_request_get_exclude (request), -1));
  g_variant_builder_add (&data, "{sv}", "workspace", g_variant_new_string (worktree ? "worktree" : "snapshot"));
  if (worktree != NULL)
    docker_worktree_add_to_data (worktree, &data);
  else
    {
      g_variant_builder_add (&data, "{sv}", "workspace-base", g_variant_new_string (plan.base));
      g_variant_builder_add (&data, "{sv}", "copy-strategy",
                             g_variant_new_string (subagent_copy_strategy_to_string (copy_used)));
      g_variant_builder_add (&data, "{sv}", "workspace-copy-usec", g_variant_new_int64 (copy_usec));
    }
  g_free (job.ulimit_refusal);
  /* Keep (or start) warm containers for the next prepare like this one;
   * made in the background, never on this one's path. */
  if (!plan.worktree && plan.pool_size > 0)
    {
      g_free (pool_signature);
      fill_spec (&plan, &spec, job.bind);
      pool_signature = docker_pools_signature (plan.engine, &spec, plan.parent, plan.dir);
      docker_pools_want (self->pools, pool_signature, (guint) plan.pool_size, plan.engine, &spec, plan.parent,
                         plan.dir);
    }
  g_debug ("Container %s (%s) of %s ready on %s, workspace %s (%s)", plan.name, container_id, plan.parent,
           described, plan.tree, job.bind ? "bind" : "copy");

  return g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                       "provider", provider,
                       "parent-root", plan.parent,
                       "child-root", plan.tree,
                       "isolation", DOCKER_BACKEND,
                       "session-key", plan.key,
                       "container-path", plan.tree,
                       "container-id", container_id,
                       "worktree-path", worktree ? plan.tree : NULL,
                       "branch", worktree ? subagent_isolation_context_get_branch (worktree) : NULL,
                       "cpu-quota", plan.cpus,
                       "memory-limit", plan.memory,
                       "warnings", (char **) warnings->pdata,
                       "backend-data", g_variant_builder_end (&data),
                       NULL);

start_failed:
  /* Maybe the image went away since it was last seen: say so if so. */
  {
    g_autofree char *key = engine_key (&plan, plan.image);
    cache_set (self, self->images, key, FALSE);
  }
  if (!g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_autoptr(GError) image_error = NULL;

      if (!docker_container_check_image (plan.engine, plan.image, cancellable, &image_error))
        {
          g_clear_error (&local_error);
          local_error = g_steal_pointer (&image_error);
        }
      else if (local_error->domain == DOCKER_ENGINE_ERROR && local_error->code != DOCKER_ENGINE_ERROR_UNREACHABLE)
        {
          g_autoptr(GError) create_error = g_steal_pointer (&local_error);
          g_set_error (&local_error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                       "Could not start a container from image “%s”: %s", plan.image, create_error->message);
        }
    }
failed:
  g_free (job.ulimit_refusal);
  undo_prepare (&plan, started, worktree);
  docker_error_to_isolation (&local_error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED);
  if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
      local_error->domain == SUBAGENT_ISOLATION_ERROR)
    g_propagate_error (error, g_steal_pointer (&local_error));
  else
    g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                 "Could not make the container workspace of %s: %s; nothing was left behind",
                 plan.parent, local_error->message);
  return NULL;
}

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
