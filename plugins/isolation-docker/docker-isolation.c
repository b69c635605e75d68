/* docker-isolation.c: the `docker` isolation backend.
 *
 * prepare() gives the child a snapshot copy of the parent's working tree
 * (subagent_tree_copy(), leaving out `.subagent/` and `.git`) in
 * `<workspace_dir>/<session_key>/tree`, then starts one long-lived
 * container (`sleep` as its only process) with that tree bind-mounted at
 * /workspace. The copy runs while `run -d` starts the container (nothing
 * runs in it before both are done), so a small tree costs no time. spawnv()
 * runs every process of the child inside it with `exec -i`; cleanup()
 * removes the container (`rm -f`) and the workspace (docker-context.c).
 * The review compares the parent with the workspace on the host, exactly as
 * for a directory snapshot.
 *
 * The container: no implicit pull (`--pull never`; the image is checked
 * with `image inspect` before anything is made, once per engine and five
 * minutes, and again whenever `run` fails, so a missing image is an error
 * naming it), `--network none` unless option `network` says
 * otherwise, `--cap-drop ALL`, `--security-opt no-new-privileges`, user
 * `65534:65534` unless option `user` says otherwise (the workspace is
 * handed to that user), `--cpus` and `--memory` from the request's limits,
 * and labels `io.subagent.session`, `io.subagent.parent-run`,
 * `io.subagent.owner-pid`, `io.subagent.owner-host`. Its name is
 * `subagent-<session_key>`.
 *
 * Request options: `image` (required), `binary` (the engine command line,
 * default `docker`), `host` (overrides DOCKER_HOST), `context`, `network`,
 * `user`, `workspace` (`snapshot`, or `worktree`: docker-worktree.c, with
 * the worktree options `keep_branch`, `include_dirty`, `pool_size`),
 * `workspace_dir` (default `$XDG_CACHE_HOME/subagent/docker`; snapshot only).
 *
 * An owner record (kind `container`, resource = the container's name,
 * extra: `binary`, `global_args`, `host`, `workspace` (snapshot only)) is written before
 * the container is started, so a process killed at any point leaves
 * something `subagentctl prune` can find; cleanup removes it last.
 *
 * Backend data (a{sv}) of a context: `engine-argv` (as), `engine-host` (s,
 * when set), `container-name` (s), `workspace-base` (s), `image` (s),
 * `user` (s), `network` (s), `copy-strategy` (s), `workspace-copy-usec`
 * (x); with a worktree, `workspace` = `worktree`, `base-commit` and
 * `common-dir` (the review diffs the commit) and `worktree-*` (cleanup
 * rebuilds the worktree's context from them). Cleanup needs only the engine, the container and the workspace, so
 * it works from any thread, after the engine restarted, or after the
 * container died.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker-private.h"

struct _SubagentDockerIsolation
{
  GObject parent_instance;

  GMutex lock;
  char *binary;         /* under lock */
  char *host;           /* under lock */
  GHashTable *images;   /* under lock: "engine\nhost\nimage" → gint64 time it was seen */
};

enum {
  PROP_0,
  PROP_BINARY,
  PROP_HOST,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void provider_iface_init (SubagentIsolationProviderInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SubagentDockerIsolation, subagent_docker_isolation, G_TYPE_OBJECT,
                                G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_ISOLATION_PROVIDER, provider_iface_init))

static const char * const excluded_names[] = { ".subagent", ".git", NULL };

#define DEFAULT_USER "65534:65534"
#define DEFAULT_NETWORK "none"
#define SLEEP_FOREVER "2147483647"
/* How long an image, once seen on an engine, is trusted to be there
 * without asking again (a `run` that fails asks again anyway). */
#define IMAGE_SEEN_TTL_USEC (300 * G_USEC_PER_SEC)

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

/* ---- prepare ------------------------------------------------------------ */

typedef struct {
  const char *key;
  const char *parent_run_id;
  const char *image;
  const char *network;
  const char *user;
  const char *memory;
  double cpus;
  gboolean worktree;    /* workspace: worktree (base stays NULL) */
  char *parent;
  char *base;
  char *tree;
  char *name;
  DockerCli *cli;
} Plan;

static void
plan_clear (Plan *plan)
{
  g_free (plan->parent);
  g_free (plan->base);
  g_free (plan->tree);
  g_free (plan->name);
  g_clear_pointer (&plan->cli, docker_cli_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Plan, plan_clear)

static gboolean
read_plan (SubagentDockerIsolation   *self,
           SubagentIsolationRequest  *request,
           Plan                      *plan,
           GError                   **error)
{
  const char *parent_option = subagent_isolation_request_get_parent_root (request);
  const char *binary, *host, *context, *workspace, *dir_option;
  g_autofree char *default_binary = NULL;
  g_autofree char *default_host = NULL;
  g_autofree char *default_dir = NULL;
  g_autofree char *dir = NULL;

  g_mutex_lock (&self->lock);
  default_binary = g_strdup (self->binary);
  default_host = g_strdup (self->host);
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
      !option_string (request, "binary", default_binary, &binary, error) ||
      !option_string (request, "host", default_host, &host, error) ||
      !option_string (request, "context", NULL, &context, error) ||
      !option_string (request, "network", DEFAULT_NETWORK, &plan->network, error) ||
      !option_string (request, "user", DEFAULT_USER, &plan->user, error) ||
      !option_string (request, "workspace", "snapshot", &workspace, error) ||
      !option_string (request, "workspace_dir", NULL, &dir_option, error))
    return FALSE;

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
  plan->worktree = g_ascii_strcasecmp (workspace, "worktree") == 0;
  if (!plan->worktree && g_ascii_strcasecmp (workspace, "snapshot") != 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Unknown docker workspace “%s”: use snapshot (the default) or worktree", workspace);
      return FALSE;
    }

  plan->cli = docker_cli_new (binary, host, context, error);
  if (plan->cli == NULL)
    return FALSE;

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
  if (g_mkdir_with_parents (dir_option, 0700) != 0 || (dir = resolve_dir (dir_option)) == NULL)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not create the container workspace directory %s: %s; set option workspace_dir",
                   dir_option, g_strerror (saved));
      return FALSE;
    }
  if (path_is_within (dir, plan->parent))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Workspace directory %s is inside the parent %s: the copy would copy itself; "
                   "set option workspace_dir to a directory outside it", dir, plan->parent);
      return FALSE;
    }
  /* `-v SOURCE:TARGET` cannot carry a ':' (nor `--mount` a ','). */
  if (strpbrk (dir, ":,") != NULL)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Workspace directory %s holds ':' or ',' and cannot be bind-mounted; set option workspace_dir",
                   dir);
      return FALSE;
    }

  plan->base = g_build_filename (dir, plan->key, NULL);
  plan->tree = g_build_filename (plan->base, DOCKER_TREE, NULL);
  return TRUE;
}

/* Fails with a message that tells a missing image from a dead engine. */
static gboolean
check_image (Plan          *plan,
             GCancellable  *cancellable,
             GError       **error)
{
  const char * const args[] = { "image", "inspect", "--format", "{{.Id}}", "--", plan->image, NULL };
  g_autofree char *err = NULL;
  g_autofree char *described = NULL;
  g_autoptr(GError) local_error = NULL;
  int status = 0;

  if (!docker_cli_run (plan->cli, args, DOCKER_QUICK_TIMEOUT_MS, cancellable, &status, NULL, &err, error))
    return FALSE;
  if (status == 0)
    return TRUE;
  if (!docker_cli_check_server (plan->cli, cancellable, &local_error))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  described = docker_cli_describe (plan->cli);
  g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
               "Image “%s” is not on the engine (%s): %s; libsubagent never pulls: load it first "
               "(pull, load or import) or set docker.image", plan->image, described, err);
  return FALSE;
}

static char *
image_cache_key (Plan *plan)
{
  g_autofree char *line = g_strjoinv (" ", (char **) docker_cli_get_argv (plan->cli));
  const char *host = docker_cli_get_host (plan->cli);

  return g_strdup_printf ("%s\n%s\n%s", line, host ? host : "", plan->image);
}

/* Checks the image once per engine and TTL: the check is an engine round
 * trip that every prepare would otherwise pay. */
static gboolean
check_image_cached (SubagentDockerIsolation  *self,
                    Plan                     *plan,
                    GCancellable             *cancellable,
                    GError                  **error)
{
  g_autofree char *key = image_cache_key (plan);
  gint64 now = g_get_monotonic_time ();
  gpointer seen = NULL;
  gboolean fresh;

  g_mutex_lock (&self->lock);
  fresh = g_hash_table_lookup_extended (self->images, key, NULL, &seen) &&
          now - (gint64) GPOINTER_TO_SIZE (seen) < IMAGE_SEEN_TTL_USEC;
  g_mutex_unlock (&self->lock);
  if (fresh)
    return TRUE;
  if (!check_image (plan, cancellable, error))
    return FALSE;
  g_mutex_lock (&self->lock);
  g_hash_table_insert (self->images, g_steal_pointer (&key), GSIZE_TO_POINTER ((gsize) now));
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static void
forget_image (SubagentDockerIsolation *self,
              Plan                    *plan)
{
  g_autofree char *key = image_cache_key (plan);

  g_mutex_lock (&self->lock);
  g_hash_table_remove (self->images, key);
  g_mutex_unlock (&self->lock);
}

static gboolean
save_owner (Plan    *plan,
            GError **error)
{
  g_autoptr(JsonObject) extra = docker_cli_to_owner_extra (plan->cli);
  g_autoptr(GError) local_error = NULL;

  if (plan->base != NULL)
    json_object_set_string_member (extra, "workspace", plan->base);
  if (!subagent_owner_record_save (plan->parent, plan->key, DOCKER_OWNER_KIND, plan->name,
                                   plan->parent_run_id, extra, &local_error))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Cannot record who owns container %s: %s", plan->name, local_error->message);
      return FALSE;
    }
  return TRUE;
}

static char *
start_container (Plan          *plan,
                 GCancellable  *cancellable,
                 GError       **error)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *described = NULL;
  g_auto(GStrv) lines = NULL;
  char cpus[G_ASCII_DTOSTR_BUF_SIZE];
  int status = 0;

#define ADD(x) g_ptr_array_add (args, g_strdup (x))
#define ADD_PRINTF(...) g_ptr_array_add (args, g_strdup_printf (__VA_ARGS__))
  ADD ("run"); ADD ("--detach"); ADD ("--pull"); ADD ("never");
  ADD ("--name"); ADD (plan->name);
  ADD ("--label"); ADD_PRINTF ("%s=%s", DOCKER_LABEL_SESSION, plan->key);
  ADD ("--label"); ADD_PRINTF ("%s=%s", DOCKER_LABEL_PARENT_RUN, plan->parent_run_id ? plan->parent_run_id : "");
  ADD ("--label"); ADD_PRINTF ("%s=%d", DOCKER_LABEL_OWNER_PID, (int) getpid ());
  ADD ("--label"); ADD_PRINTF ("%s=%s", DOCKER_LABEL_OWNER_HOST, g_get_host_name ());
  ADD ("--network"); ADD (plan->network);
  ADD ("--cap-drop"); ADD ("ALL");
  ADD ("--security-opt"); ADD ("no-new-privileges");
  ADD ("--user"); ADD (plan->user);
  if (plan->cpus > 0.0)
    {
      ADD ("--cpus");
      ADD (g_ascii_formatd (cpus, sizeof cpus, "%.3f", plan->cpus));
    }
  if (plan->memory != NULL)
    {
      ADD ("--memory"); ADD (plan->memory);
    }
  ADD ("--volume"); ADD_PRINTF ("%s:%s", plan->tree, DOCKER_WORKDIR);
  /* A worktree's `.git` file points at the parent's git dir, which is not
   * mounted: git inside does not work on it, and read-only the child
   * cannot point the host's review at a repository of its own. */
  if (plan->worktree)
    {
      ADD ("--volume"); ADD_PRINTF ("%s/.git:%s/.git:ro", plan->tree, DOCKER_WORKDIR);
    }
  ADD ("--workdir"); ADD (DOCKER_WORKDIR);
  /* Whatever the image's entrypoint, PID 1 only waits for `exec`. */
  ADD ("--entrypoint"); ADD ("sleep");
  ADD (plan->image);
  ADD (SLEEP_FOREVER);
  g_ptr_array_add (args, NULL);
#undef ADD
#undef ADD_PRINTF

  if (!docker_cli_run (plan->cli, (const char * const *) args->pdata, DOCKER_RUN_TIMEOUT_MS, cancellable,
                       &status, &out, &err, error))
    return NULL;
  lines = g_strsplit (g_strstrip (out), "\n", -1);
  if (status != 0 || lines[0] == NULL || *lines[0] == '\0')
    {
      described = docker_cli_describe (plan->cli);
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not start a container from image “%s” through %s (exit status %d): %s",
                   plan->image, described, status, err);
      return NULL;
    }
  /* The id is the last line; podman may print warnings before it. */
  return g_strdup (g_strstrip (lines[g_strv_length (lines) - 1]));
}

typedef struct {
  Plan *plan;
  GCancellable *cancellable;
  char *container_id;
  GError *error;
} StartJob;

static gpointer
start_in_thread (gpointer data)
{
  StartJob *job = data;

  job->container_id = start_container (job->plan, job->cancellable, &job->error);
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

  if (container_started && !docker_cli_remove_container (plan->cli, plan->name, &error))
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
  g_autoptr(SubagentIsolationContext) worktree = NULL;
  SubagentCopyStrategy copy_used = SUBAGENT_COPY_STRATEGY_COPY;
  gboolean started = FALSE;
  gboolean world_writable = FALSE;
  gboolean copied;
  StartJob job = { 0 };
  GThread *thread;
  GVariantBuilder data;
  gint64 copy_start, copy_usec = 0;

  if (!read_plan (self, request, &plan, error))
    return NULL;
  /* Nothing exists yet: a missing image or a dead engine leaves nothing. */
  if (!check_image_cached (self, &plan, cancellable, error))
    return NULL;
  job.plan = &plan;
  job.cancellable = cancellable;

  if (plan.worktree)
    {
      worktree = docker_worktree_prepare (request, cancellable, error);
      if (worktree == NULL)
        return NULL;
      plan.tree = g_strdup (subagent_isolation_context_get_child_root (worktree));
      if (strpbrk (plan.tree, ":,") != NULL)
        {
          g_set_error (&local_error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                       "Worktree %s holds ':' or ',' and cannot be bind-mounted; use workspace: snapshot",
                       plan.tree);
          goto failed;
        }
      if (!save_owner (&plan, &local_error))
        goto failed;
      started = TRUE;
      copied = docker_workspace_give_to_user (plan.tree, plan.user, &world_writable, &local_error) &&
               (world_writable || docker_worktree_keep_ownership (plan.tree, &local_error));
      if (copied)
        start_in_thread (&job);
      goto container_done;
    }

  if (!docker_workspace_create (plan.base, plan.key, plan.parent, error))
    return NULL;
  if (!save_owner (&plan, &local_error))
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

  /* The container starts while the tree is copied into its bind mount;
   * nothing runs in it before both are done. */
  started = TRUE;   /* even a failed or cancelled `run` may have made it */
  thread = g_thread_try_new ("subagent-docker-run", start_in_thread, &job, NULL);
  copy_start = g_get_monotonic_time ();
  copied = subagent_tree_copy (plan.parent, plan.tree, SUBAGENT_COPY_STRATEGY_AUTO, excluded_names, &copy_used,
                               cancellable, &local_error);
  copy_usec = g_get_monotonic_time () - copy_start;
  if (copied && !docker_workspace_give_to_user (plan.tree, plan.user, &world_writable, &local_error))
    copied = FALSE;
  if (thread != NULL)
    g_thread_join (thread);
  else
    start_in_thread (&job);
container_done:
  container_id = g_steal_pointer (&job.container_id);
  if (!copied)
    {
      g_clear_error (&job.error);
      goto failed;
    }
  if (container_id == NULL)
    {
      local_error = g_steal_pointer (&job.error);
      /* Maybe the image went away since it was last seen: say so if so. */
      forget_image (self, &plan);
      if (!g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_autoptr(GError) image_error = NULL;

          if (!check_image (&plan, cancellable, &image_error))
            {
              g_clear_error (&local_error);
              local_error = g_steal_pointer (&image_error);
            }
        }
      goto failed;
    }
  if (worktree != NULL)
    for (const char * const *w = subagent_isolation_context_get_warnings (worktree); *w != NULL; w++)
      g_ptr_array_add (warnings, g_strdup (*w));
  if (world_writable)
    g_ptr_array_add (warnings, g_strdup_printf ("The workspace %s is writable for everyone on the host: "
                                                "user “%s” could not be given it by id", plan.tree, plan.user));
  g_ptr_array_add (warnings, NULL);

  g_variant_builder_init (&data, G_VARIANT_TYPE_VARDICT);
  docker_cli_add_to_data (plan.cli, &data);
  g_variant_builder_add (&data, "{sv}", "container-name", g_variant_new_string (plan.name));
  g_variant_builder_add (&data, "{sv}", "image", g_variant_new_string (plan.image));
  g_variant_builder_add (&data, "{sv}", "user", g_variant_new_string (plan.user));
  g_variant_builder_add (&data, "{sv}", "network", g_variant_new_string (plan.network));
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
  g_debug ("Container %s (%s) of %s ready, workspace %s", plan.name, container_id, plan.parent, plan.tree);

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

failed:
  undo_prepare (&plan, started, worktree);
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
  g_autoptr(DockerCli) cli = NULL;
  g_autofree char *binary = NULL;
  g_autofree char *host = NULL;

  g_mutex_lock (&self->lock);
  binary = g_strdup (self->binary);
  host = g_strdup (self->host);
  g_mutex_unlock (&self->lock);

  cli = docker_cli_new (binary, host, NULL, error);
  return cli != NULL && docker_cli_check_server (cli, NULL, error);
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

  g_free (self->binary);
  g_free (self->host);
  g_hash_table_unref (self->images);
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
   * The engine command line used when a request has no `binary` option,
   * and by is_available(): `docker` when %NULL.
   */
  properties[PROP_BINARY] = g_param_spec_string ("binary", NULL, NULL, NULL,
                                                 G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentDockerIsolation:host:
   *
   * The engine address used when a request has no `host` option; %NULL
   * keeps DOCKER_HOST (or the engine's default).
   */
  properties[PROP_HOST] = g_param_spec_string ("host", NULL, NULL, NULL,
                                               G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
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
}

void
subagent_docker_isolation_register (GTypeModule *module)
{
  subagent_docker_isolation_register_type (module);
}
