/* docker-worktree.c: `workspace: worktree`, a container working in a git
 * worktree of the parent.
 *
 * The worktree is made by the `worktree` backend, found through the plugin
 * registry (this plugin only sees <subagent.h>), for the same parent root
 * under the session key `<key>-docker`: each backend then keeps its own
 * owner record (`.subagent/owners/<key>.json` holds the container's,
 * `<key>-docker.json` the worktree's), so `subagentctl prune` reclaims both
 * after a crash. The worktree's context is not kept: its generic
 * properties and backend data travel inside the docker context's backend
 * data (`worktree-*`), and cleanup rebuilds it, exactly as the worktree
 * backend documents for contexts rebuilt from an owner record.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker-private.h"

/* The worktree options a docker request passes through. */
static const char * const worktree_options[] = { "keep_branch", "include_dirty", "pool_size", NULL };

static SubagentIsolationProvider *
worktree_provider (GError **error)
{
  g_autoptr(GError) local_error = NULL;
  SubagentIsolationProvider *provider =
    subagent_plugin_registry_get_isolation_provider (subagent_plugin_registry_get_default (),
                                                     DOCKER_WORKTREE_BACKEND, &local_error);

  if (provider == NULL)
    g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                 "Docker option workspace: worktree needs the worktree backend: %s", local_error->message);
  return provider;
}

/**
 * docker_worktree_prepare:
 * @request: the docker request
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Prepares, through the worktree backend, a worktree of @request's parent
 * for session `<key>-docker`, with @request's worktree options.
 *
 * Returns: (transfer full): the worktree's context; the caller cleans it up
 */
SubagentIsolationContext *
docker_worktree_prepare (SubagentIsolationRequest  *request,
                         GCancellable              *cancellable,
                         GError                   **error)
{
  g_autoptr(SubagentIsolationProvider) provider = NULL;
  g_autoptr(SubagentIsolationRequest) worktree_request = NULL;
  g_autoptr(JsonObject) options = json_object_new ();
  JsonObject *docker_options = subagent_isolation_request_get_options (request);
  const char *key = subagent_isolation_request_get_session_key (request);
  g_autofree char *worktree_key = g_strconcat (key, DOCKER_WORKTREE_KEY_SUFFIX, NULL);

  if (!subagent_isolation_session_key_is_valid (worktree_key))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Session key “%s” is too long for workspace: worktree: its worktree is named “%s”, "
                   "and keys have at most 128 characters", key, worktree_key);
      return NULL;
    }
  provider = worktree_provider (error);
  if (provider == NULL)
    return NULL;
  for (guint i = 0; docker_options != NULL && worktree_options[i] != NULL; i++)
    {
      JsonNode *node = json_object_get_member (docker_options, worktree_options[i]);

      if (node != NULL)
        json_object_set_member (options, worktree_options[i], json_node_copy (node));
    }
  worktree_request = g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST,
                                   "parent-root", subagent_isolation_request_get_parent_root (request),
                                   "isolation", DOCKER_WORKTREE_BACKEND,
                                   "session-key", worktree_key,
                                   "parent-run-id", subagent_isolation_request_get_parent_run_id (request),
                                   "def-name", subagent_isolation_request_get_def_name (request),
                                   "cpu-quota", subagent_isolation_request_get_cpu_quota (request),
                                   "memory-limit", subagent_isolation_request_get_memory_limit (request),
                                   "options", options,
                                   NULL);
  return subagent_isolation_provider_prepare (provider, worktree_request, cancellable, error);
}

/**
 * docker_worktree_keep_ownership:
 * @tree: a worktree docker_workspace_give_to_user() chowned
 * @error: return location for a #GError
 *
 * Gives the worktree's top directory and its `.git` file back to us:
 * git (and libgit2, which the host's review uses) refuses a worktree
 * owned by another user. The container's user keeps writing the top
 * directory through its group (the chown gave it the container's gid).
 *
 * Returns: %TRUE on success
 */
gboolean
docker_worktree_keep_ownership (const char  *tree,
                                GError     **error)
{
  g_autofree char *git_file = g_build_filename (tree, ".git", NULL);
  struct stat st;

  if (geteuid () != 0)
    return TRUE;   /* nothing was chowned */
  if (lstat (tree, &st) != 0 || lchown (tree, geteuid (), st.st_gid) != 0 ||
      chmod (tree, (st.st_mode | 0070) & 07777) != 0 ||
      (lstat (git_file, &st) == 0 && lchown (git_file, geteuid (), getegid ()) != 0))
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not keep worktree %s ours for git: %s", tree, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

/**
 * docker_worktree_add_to_data:
 * @worktree: a context from docker_worktree_prepare()
 * @builder: the docker context's backend data (a{sv})
 *
 * Adds what the review needs (`base-commit`, `common-dir`, copied from the
 * worktree's backend data) and what cleanup needs to rebuild @worktree
 * (`worktree-key`, `worktree-path`, `worktree-branch`, `worktree-data`).
 */
void
docker_worktree_add_to_data (SubagentIsolationContext *worktree,
                             GVariantBuilder          *builder)
{
  GVariant *data = subagent_isolation_context_get_backend_data (worktree);
  const char *branch = subagent_isolation_context_get_branch (worktree);
  const char *text = NULL;

  if (data != NULL && g_variant_lookup (data, "base-commit", "&s", &text))
    g_variant_builder_add (builder, "{sv}", "base-commit", g_variant_new_string (text));
  if (data != NULL && g_variant_lookup (data, "common-dir", "&s", &text))
    g_variant_builder_add (builder, "{sv}", "common-dir", g_variant_new_string (text));
  g_variant_builder_add (builder, "{sv}", "worktree-key",
                         g_variant_new_string (subagent_isolation_context_get_session_key (worktree)));
  g_variant_builder_add (builder, "{sv}", "worktree-path",
                         g_variant_new_string (subagent_isolation_context_get_child_root (worktree)));
  if (branch != NULL)
    g_variant_builder_add (builder, "{sv}", "worktree-branch", g_variant_new_string (branch));
  if (data != NULL)
    g_variant_builder_add (builder, "{sv}", "worktree-data", g_variant_new_variant (data));
  /* The child in its container may add .gitignore lines or a nested .git
   * to hide files: the review counts them all, as a snapshot's does. */
  g_variant_builder_add (builder, "{sv}", "review-child-ignores", g_variant_new_boolean (FALSE));
}

/**
 * docker_worktree_cleanup:
 * @parent_root: the parent root of the docker context
 * @backend_data: (nullable): the docker context's backend data
 * @error: return location for a #GError
 *
 * Gives the worktree back to this process's user and has the worktree
 * backend clean it up (remove or recycle it, its branch and its owner
 * record). Does nothing when @backend_data names no worktree; safe to
 * run again.
 *
 * Returns: %FALSE if the worktree backend could not be reached (the
 *   worktree keeps its owner record for `subagentctl prune`)
 */
gboolean
docker_worktree_cleanup (const char  *parent_root,
                         GVariant    *backend_data,
                         GError     **error)
{
  g_autoptr(SubagentIsolationProvider) provider = NULL;
  g_autoptr(SubagentIsolationContext) worktree = NULL;
  g_autoptr(GVariant) worktree_data = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *key = NULL, *path = NULL, *branch = NULL;

  if (backend_data == NULL || !g_variant_lookup (backend_data, "worktree-key", "&s", &key) ||
      !g_variant_lookup (backend_data, "worktree-path", "&s", &path))
    return TRUE;
  g_variant_lookup (backend_data, "worktree-branch", "&s", &branch);
  g_variant_lookup (backend_data, "worktree-data", "v", &worktree_data);

  /* Whatever the container's user made must be ours again before the
   * worktree is removed or recycled into the pool. */
  if (!docker_workspace_take_back (path, &local_error))
    {
      g_message ("Could not take worktree %s back from the container's user: %s", path, local_error->message);
      g_clear_error (&local_error);
    }
  provider = worktree_provider (error);
  if (provider == NULL)
    return FALSE;
  worktree = g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                           "provider", provider,
                           "isolation", DOCKER_WORKTREE_BACKEND,
                           "parent-root", parent_root,
                           "session-key", key,
                           "worktree-path", path,
                           "child-root", path,
                           "branch", branch,
                           "backend-data", worktree_data,
                           NULL);
  subagent_isolation_context_cleanup (worktree);
  return TRUE;
}
