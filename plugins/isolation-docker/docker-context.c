/* docker-context.c: what a prepared docker workspace does: run processes
 * inside its container (through the exec helper, docker-exec-helper.c),
 * and go away again (the container and its volume through the API, then
 * the workspace and the owner record, then a worktree's own cleanup).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dlfcn.h>
#include <string.h>

#include "docker-private.h"

/* ---- spawn -------------------------------------------------------------- */

/* What reaches the child: SUBAGENT_* (the runner's protocol), and what the
 * caller's envp sets differently from our own environment. The host's
 * environment as such stays outside. */
static gboolean
passes_into_container (const char *name,
                       const char *value,
                       gboolean    explicit_envp)
{
  const char *ours;

  if (g_str_equal (name, "SUBAGENT_APPROVAL_HMAC_KEY"))
    return FALSE;   /* signs verdicts: a child holding it could forge them */
  if (g_str_has_prefix (name, "SUBAGENT_"))
    return TRUE;
  if (!explicit_envp)
    return FALSE;
  ours = g_getenv (name);
  return ours == NULL || !g_str_equal (ours, value);
}

/* The exec helper sits next to this module (build tree and install alike). */
static char *
helper_path (void)
{
  Dl_info info;

  if (dladdr ((void *) docker_context_spawnv, &info) != 0 && info.dli_fname != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (info.dli_fname);
      return g_build_filename (dir, DOCKER_EXEC_HELPER, NULL);
    }
  return g_strdup (DOCKER_EXEC_HELPER);
}

GSubprocess *
docker_context_spawnv (SubagentIsolationProvider  *provider,
                       SubagentIsolationContext   *context,
                       const char * const         *argv,
                       const char * const         *envp,
                       GSubprocessFlags            flags,
                       GError                    **error)
{
  GVariant *data = subagent_isolation_context_get_backend_data (context);
  g_autoptr(DockerEngine) engine = docker_engine_new_from_data (data);
  const char *container = subagent_isolation_context_get_container_id (context);
  const char *memory = subagent_isolation_context_get_memory_limit (context);
  const char *transfer = NULL, *workspace = NULL;
  g_autofree const char **exclude = NULL;
  guint64 max_file = DOCKER_DEFAULT_MAX_FILE;
  g_autoptr(GPtrArray) args = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) host_env = NULL;
  g_auto(GStrv) child_env = NULL;
  GSubprocess *proc;

  if (engine == NULL || container == NULL)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                   "Cannot start “%s”: the docker workspace %s has no container",
                   argv[0], subagent_isolation_context_get_session_key (context));
      return NULL;
    }
  g_variant_lookup (data, "transfer", "&s", &transfer);
  g_variant_lookup (data, "workspace", "&s", &workspace);
  g_variant_lookup (data, "transfer-max-file", "t", &max_file);
  g_variant_lookup (data, "exclude", "^a&s", &exclude);

  args = docker_engine_to_argv (engine);
  g_ptr_array_insert (args, 0, helper_path ());
  g_ptr_array_add (args, g_strdup ("--container"));
  g_ptr_array_add (args, g_strdup (container));
  g_ptr_array_add (args, g_strdup ("--workdir"));
  g_ptr_array_add (args, g_strdup (DOCKER_WORKDIR));
  if (memory != NULL && *memory != '\0')
    {
      g_ptr_array_add (args, g_strdup ("--memory"));
      g_ptr_array_add (args, g_strdup (memory));
    }
  /* Copy mode: what the process changed comes back before it counts as ended. */
  if (g_strcmp0 (transfer, "copy") == 0)
    {
      g_ptr_array_add (args, g_strdup ("--sync-back"));
      g_ptr_array_add (args, g_strdup (subagent_isolation_context_get_child_root (context)));
      g_ptr_array_add (args, g_strdup ("--max-file"));
      g_ptr_array_add (args, g_strdup_printf ("%" G_GUINT64_FORMAT, max_file));
      if (g_strcmp0 (workspace, "worktree") == 0)
        {
          g_ptr_array_add (args, g_strdup ("--keep"));
          g_ptr_array_add (args, g_strdup (".git"));
        }
      /* Patterns ride on the command line: they are names, not secrets. */
      if (exclude != NULL)
        for (guint i = 0; exclude[i] != NULL; i++)
          {
            g_ptr_array_add (args, g_strdup ("--exclude"));
            g_ptr_array_add (args, g_strdup (exclude[i]));
          }
    }
  g_ptr_array_add (args, g_strdup ("--"));
  for (guint i = 0; argv[i] != NULL; i++)
    g_ptr_array_add (args, g_strdup (argv[i]));
  g_ptr_array_add (args, NULL);

  /* The helper's environment is the process's: values (tokens...) never
   * show on a command line. */
  child_env = g_new0 (char *, 1);
  if (envp == NULL)
    envp = (const char * const *) (host_env = g_get_environ ());
  for (guint i = 0; envp[i] != NULL; i++)
    {
      const char *eq = strchr (envp[i], '=');
      g_autofree char *name = NULL;
      const char *value;

      if (eq == NULL || eq == envp[i])
        continue;
      name = g_strndup (envp[i], eq - envp[i]);
      value = eq + 1;
      if (g_str_has_prefix (name, "SUBAGENT_DOCKER_EXEC_") || !passes_into_container (name, value, host_env == NULL))
        continue;
      if (g_str_equal (name, "SUBAGENT_CHILD_ROOT"))
        value = DOCKER_WORKDIR;   /* the child's root as the child sees it */
      child_env = g_environ_setenv (child_env, name, value, TRUE);
    }

  launcher = g_subprocess_launcher_new (flags);
  g_subprocess_launcher_set_environ (launcher, child_env);
  g_subprocess_launcher_set_cwd (launcher, subagent_isolation_context_get_child_root (context));
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) args->pdata, &local_error);
  if (proc == NULL)
    g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                 "Cannot start “%s” in container %s: %s", argv[0], container, local_error->message);
  return proc;
}

/* ---- cleanup ------------------------------------------------------------ */

typedef struct {
  DockerEngine *engine;
  const char *container;
  gboolean removed;
  GError *error;
} RemoveJob;

static gpointer
remove_in_thread (gpointer data)
{
  RemoveJob *job = data;

  job->removed = docker_container_remove (job->engine, job->container, &job->error);
  return NULL;
}

void
docker_context_cleanup (SubagentIsolationProvider *provider,
                        SubagentIsolationContext  *context)
{
  GVariant *data = subagent_isolation_context_get_backend_data (context);
  g_autoptr(DockerEngine) engine = docker_engine_new_from_data (data);
  const char *key = subagent_isolation_context_get_session_key (context);
  const char *parent = subagent_isolation_context_get_parent_root (context);
  const char *container = subagent_isolation_context_get_container_id (context);
  const char *base = NULL;
  g_autoptr(GError) error = NULL;
  gboolean complete = TRUE;
  RemoveJob job = { 0 };
  GThread *thread = NULL;

  if (data != NULL)
    g_variant_lookup (data, "workspace-base", "&s", &base);
  if (container == NULL && data != NULL)
    g_variant_lookup (data, "container-name", "&s", &container);

  /* The engine removes the container while the workspace's tree is removed
   * here; whatever a process still alive in the container wrote meanwhile
   * goes with the rest of the workspace once the container is gone. Both
   * are done before cleanup returns. */
  job.engine = engine;
  job.container = container;
  if (engine != NULL && container != NULL)
    thread = g_thread_try_new ("subagent-docker-remove", remove_in_thread, &job, NULL);
  if (thread != NULL && base != NULL && key != NULL &&
      subagent_owner_marker_matches (base, DOCKER_MARKER, key))
    {
      /* The bulk (the tree); the marker and the rest go after, as ever. */
      g_autofree char *tree = g_build_filename (base, DOCKER_TREE, NULL);
      (void) subagent_tree_remove (tree, NULL, NULL);
    }
  if (thread != NULL)
    g_thread_join (thread);
  else if (engine != NULL && container != NULL)
    remove_in_thread (&job);
  if (engine != NULL && container != NULL && !job.removed)
    {
      g_message ("Could not remove container %s (session %s): %s; `subagentctl prune` will retry",
                 container, key, job.error->message);
      g_clear_error (&job.error);
      complete = FALSE;
    }
  if (base != NULL && key != NULL && !docker_workspace_remove (base, key, &error))
    {
      g_message ("Could not remove container workspace %s: %s", base, error->message);
      complete = FALSE;
    }
  if (complete && parent != NULL && key != NULL)
    subagent_owner_record_remove (parent, key);
  /* A worktree goes only once no container has it mounted; otherwise it
   * keeps its own owner record, and prune reclaims both. */
  g_clear_error (&error);
  if (complete && parent != NULL && !docker_worktree_cleanup (parent, data, &error))
    g_message ("Could not clean up the worktree of container workspace %s: %s", key, error->message);
}
