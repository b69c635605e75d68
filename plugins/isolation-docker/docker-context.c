/* docker-context.c: what a prepared docker workspace does: run processes
 * inside its container (`exec -i`), and go away again (`rm -f`, then the
 * workspace and the owner record, then a worktree's own cleanup).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "docker-private.h"

/* ---- spawn -------------------------------------------------------------- */

/* Variables the engine's CLI reads itself: never set them in its
 * environment, pass them by value instead. */
static gboolean
is_engine_variable (const char *name)
{
  return g_str_has_prefix (name, "DOCKER_") || g_str_has_prefix (name, "CONTAINER_") ||
         g_str_has_prefix (name, "CONTAINERS_") || g_str_has_prefix (name, "PODMAN_") ||
         g_str_equal (name, "PATH") || g_str_equal (name, "HOME");
}

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

GSubprocess *
docker_context_spawnv (SubagentIsolationProvider  *provider,
                       SubagentIsolationContext   *context,
                       const char * const         *argv,
                       const char * const         *envp,
                       GSubprocessFlags            flags,
                       GError                    **error)
{
  g_autoptr(DockerCli) cli = docker_cli_new_from_data (subagent_isolation_context_get_backend_data (context));
  const char *container = subagent_isolation_context_get_container_id (context);
  g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) host_env = NULL;
  g_auto(GStrv) cli_env = NULL;
  GSubprocess *proc;

  if (cli == NULL || container == NULL)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                   "Cannot start “%s”: the docker workspace %s has no container",
                   argv[0], subagent_isolation_context_get_session_key (context));
      return NULL;
    }

  cli_env = docker_cli_environ (cli);
  for (guint i = 0; docker_cli_get_argv (cli)[i] != NULL; i++)
    g_ptr_array_add (args, g_strdup (docker_cli_get_argv (cli)[i]));
  g_ptr_array_add (args, g_strdup ("exec"));
  g_ptr_array_add (args, g_strdup ("--interactive"));
  g_ptr_array_add (args, g_strdup ("--workdir"));
  g_ptr_array_add (args, g_strdup (DOCKER_WORKDIR));

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
      if (!passes_into_container (name, value, host_env == NULL))
        continue;
      if (g_str_equal (name, "SUBAGENT_CHILD_ROOT"))
        value = DOCKER_WORKDIR;   /* the child's root as the child sees it */
      g_ptr_array_add (args, g_strdup ("--env"));
      if (is_engine_variable (name))
        g_ptr_array_add (args, g_strdup_printf ("%s=%s", name, value));
      else
        {
          /* `--env NAME` takes the value from the CLI's environment, so
           * values (tokens...) never show on a command line. */
          g_ptr_array_add (args, g_strdup (name));
          cli_env = g_environ_setenv (cli_env, name, value, TRUE);
        }
    }
  g_ptr_array_add (args, g_strdup (container));
  for (guint i = 0; argv[i] != NULL; i++)
    g_ptr_array_add (args, g_strdup (argv[i]));
  g_ptr_array_add (args, NULL);

  launcher = g_subprocess_launcher_new (flags);
  g_subprocess_launcher_set_environ (launcher, cli_env);
  g_subprocess_launcher_set_cwd (launcher, subagent_isolation_context_get_child_root (context));
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) args->pdata, &local_error);
  if (proc == NULL)
    g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                 "Cannot start “%s” in container %s: %s", argv[0], container, local_error->message);
  return proc;
}

/* ---- cleanup ------------------------------------------------------------ */

void
docker_context_cleanup (SubagentIsolationProvider *provider,
                        SubagentIsolationContext  *context)
{
  GVariant *data = subagent_isolation_context_get_backend_data (context);
  g_autoptr(DockerCli) cli = docker_cli_new_from_data (data);
  const char *key = subagent_isolation_context_get_session_key (context);
  const char *parent = subagent_isolation_context_get_parent_root (context);
  const char *container = subagent_isolation_context_get_container_id (context);
  const char *base = NULL;
  g_autoptr(GError) error = NULL;
  gboolean complete = TRUE;

  if (data != NULL)
    g_variant_lookup (data, "workspace-base", "&s", &base);
  if (container == NULL && data != NULL)
    g_variant_lookup (data, "container-name", "&s", &container);

  if (cli != NULL && container != NULL && !docker_cli_remove_container (cli, container, &error))
    {
      g_message ("Could not remove container %s (session %s): %s; `subagentctl prune` will retry",
                 container, key, error->message);
      g_clear_error (&error);
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
