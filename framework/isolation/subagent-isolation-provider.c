/* subagent-isolation-provider.c: the isolation backend interface, the
 * built-in `shared` backend, mode names and session keys.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <git2.h>
#include <stdlib.h>
#include <string.h>

#include "subagent.h"
#include "subagent-isolation-context-private.h"
#include "subagent-isolation-name-private.h"

G_GNUC_INTERNAL GSubprocess *_subagent_isolation_spawn_on_host (SubagentIsolationContext  *context,
                                                                const char * const        *argv,
                                                                const char * const        *envp,
                                                                GSubprocessFlags           flags,
                                                                GError                   **error);

/**
 * SubagentIsolationProvider:
 *
 * The interface isolation backends implement: prepare a workspace for a
 * child run from a [class@IsolationRequest], start processes inside it, and
 * remove it again.
 *
 * Implementations provide at least @prepare; the defaults run it in a
 * #GTask worker thread for prepare_async(), start processes on the host with
 * the child root as working directory, clean up nothing and are always
 * available. `shared` is built in ([class@SharedIsolation]); the others are
 * plugins.
 */

G_DEFINE_INTERFACE (SubagentIsolationProvider, subagent_isolation_provider, G_TYPE_OBJECT)

static gboolean
subagent_isolation_provider_real_is_available (SubagentIsolationProvider  *self,
                                               GError                    **error)
{
  return TRUE;
}

static void
prepare_in_thread (GTask        *task,
                   gpointer      source_object,
                   gpointer      task_data,
                   GCancellable *cancellable)
{
  SubagentIsolationProvider *self = source_object;
  SubagentIsolationRequest *request = task_data;
  g_autoptr(SubagentIsolationContext) context = NULL;
  GError *error = NULL;

  if (g_task_return_error_if_cancelled (task))
    return;

  context = subagent_isolation_provider_prepare (self, request, cancellable, &error);
  if (context == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  /* Cancelled after the workspace was made: nobody will get the context, so
   * remove the workspace here rather than leak it. */
  if (g_cancellable_is_cancelled (cancellable))
    {
      subagent_isolation_context_cleanup (context);
      g_task_return_error_if_cancelled (task);
      return;
    }
  g_task_return_pointer (task, g_steal_pointer (&context), g_object_unref);
}

static void
subagent_isolation_provider_real_prepare_async (SubagentIsolationProvider *self,
                                                SubagentIsolationRequest  *request,
                                                GCancellable              *cancellable,
                                                GAsyncReadyCallback        callback,
                                                gpointer                   user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, subagent_isolation_provider_real_prepare_async);
  g_task_set_name (task, "[libsubagent] isolation prepare");
  g_task_set_task_data (task, g_object_ref (request), g_object_unref);
  /* The worker handles cancellation itself, so that a workspace made just
   * before the cancel is cleaned up and not dropped on the floor. */
  g_task_set_check_cancellable (task, FALSE);
  g_task_run_in_thread (task, prepare_in_thread);
}

static SubagentIsolationContext *
subagent_isolation_provider_real_prepare_finish (SubagentIsolationProvider  *self,
                                                 GAsyncResult               *result,
                                                 GError                    **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

static GSubprocess *
subagent_isolation_provider_real_spawnv (SubagentIsolationProvider  *self,
                                         SubagentIsolationContext   *context,
                                         const char * const         *argv,
                                         const char * const         *envp,
                                         GSubprocessFlags            flags,
                                         GError                    **error)
{
  return _subagent_isolation_spawn_on_host (context, argv, envp, flags, error);
}

static SubagentReclaimOutcome
subagent_isolation_provider_real_reclaim (SubagentIsolationProvider  *self,
                                          const char                 *root,
                                          JsonObject                 *record,
                                          SubagentReclaimFlags        flags,
                                          char                      **reason)
{
  *reason = g_strdup_printf ("isolation backend %s reclaims no leftovers", G_OBJECT_TYPE_NAME (self));
  return SUBAGENT_RECLAIM_SKIPPED;
}

G_GNUC_INTERNAL gboolean _subagent_isolation_provider_spawns_on_host (SubagentIsolationProvider *provider);

/* TRUE when @provider keeps the default spawnv (a process on the host). */
G_GNUC_INTERNAL gboolean
_subagent_isolation_provider_spawns_on_host (SubagentIsolationProvider *provider)
{
  return SUBAGENT_ISOLATION_PROVIDER_GET_IFACE (provider)->spawnv == subagent_isolation_provider_real_spawnv;
}

static void
subagent_isolation_provider_default_init (SubagentIsolationProviderInterface *iface)
{
  iface->is_available = subagent_isolation_provider_real_is_available;
  iface->prepare_async = subagent_isolation_provider_real_prepare_async;
  iface->prepare_finish = subagent_isolation_provider_real_prepare_finish;
  iface->spawnv = subagent_isolation_provider_real_spawnv;
  iface->reclaim = subagent_isolation_provider_real_reclaim;
}

GSubprocess *
_subagent_isolation_spawn_on_host (SubagentIsolationContext  *context,
                                   const char * const        *argv,
                                   const char * const        *envp,
                                   GSubprocessFlags           flags,
                                   GError                   **error)
{
  const char *child_root = subagent_isolation_context_get_child_root (context);
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GError) local_error = NULL;
  GSubprocess *proc;

  if (child_root == NULL)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                   "Cannot start “%s”: the isolation context has no child root", argv[0]);
      return NULL;
    }

  launcher = g_subprocess_launcher_new (flags);
  g_subprocess_launcher_set_cwd (launcher, child_root);
  if (envp != NULL)
    g_subprocess_launcher_set_environ (launcher, (char **) envp);
  proc = g_subprocess_launcher_spawnv (launcher, argv, &local_error);
  if (proc == NULL)
    g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                 "Cannot start “%s” in %s: %s", argv[0], child_root, local_error->message);
  return proc;
}

/**
 * subagent_isolation_provider_is_available:
 * @self: a #SubagentIsolationProvider
 * @error: return location for a #GError
 *
 * Checks whether the backend can work on this machine (a docker engine
 * runs, git is usable...). It may block briefly; call it from a worker
 * thread when that matters.
 *
 * Returns: %TRUE if the backend is usable, else %FALSE with @error saying why not
 */
gboolean
subagent_isolation_provider_is_available (SubagentIsolationProvider  *self,
                                          GError                    **error)
{
  SubagentIsolationProviderInterface *iface;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_PROVIDER (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  iface = SUBAGENT_ISOLATION_PROVIDER_GET_IFACE (self);
  if (iface->is_available == NULL || iface->is_available (self, &local_error))
    return TRUE;
  if (local_error == NULL)
    g_set_error (&local_error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                 "Isolation backend %s is not available here", G_OBJECT_TYPE_NAME (self));
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

/**
 * subagent_isolation_provider_prepare:
 * @self: a #SubagentIsolationProvider
 * @request: what to prepare
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Creates the workspace @request describes. Blocks: call it from a worker
 * thread, or use subagent_isolation_provider_prepare_async(). On failure
 * nothing is left behind.
 *
 * Returns: (transfer full): the prepared context, or %NULL with @error set
 */
SubagentIsolationContext *
subagent_isolation_provider_prepare (SubagentIsolationProvider  *self,
                                     SubagentIsolationRequest   *request,
                                     GCancellable               *cancellable,
                                     GError                    **error)
{
  SubagentIsolationProviderInterface *iface;
  g_autoptr(GError) local_error = NULL;
  SubagentIsolationContext *context;

  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_PROVIDER (self), NULL);
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (request), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  iface = SUBAGENT_ISOLATION_PROVIDER_GET_IFACE (self);
  if (iface->prepare == NULL)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_NOT_IMPLEMENTED,
                   "Isolation backend %s cannot prepare workspaces (no prepare method)",
                   G_OBJECT_TYPE_NAME (self));
      return NULL;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  context = iface->prepare (self, request, cancellable, &local_error);
  if (context == NULL && local_error == NULL)
    g_set_error (&local_error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                 "Isolation backend %s failed to prepare a workspace for %s without saying why",
                 G_OBJECT_TYPE_NAME (self), subagent_isolation_request_get_parent_root (request));
  if (context != NULL && local_error != NULL)
    {
      g_critical ("Isolation backend %s returned a context and an error (%s); dropping the error",
                  G_OBJECT_TYPE_NAME (self), local_error->message);
      g_clear_error (&local_error);
    }
  if (local_error != NULL)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return context;
}

/**
 * subagent_isolation_provider_prepare_async:
 * @self: a #SubagentIsolationProvider
 * @request: what to prepare
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the workspace is ready or preparing failed
 * @user_data: data for @callback
 *
 * Starts preparing the workspace @request describes without blocking the
 * caller's main context. @callback runs in the thread-default main context of
 * the caller. If @cancellable is cancelled after the workspace was made, the
 * workspace is cleaned up and the call fails with %G_IO_ERROR_CANCELLED.
 */
void
subagent_isolation_provider_prepare_async (SubagentIsolationProvider *self,
                                           SubagentIsolationRequest  *request,
                                           GCancellable              *cancellable,
                                           GAsyncReadyCallback        callback,
                                           gpointer                   user_data)
{
  g_return_if_fail (SUBAGENT_IS_ISOLATION_PROVIDER (self));
  g_return_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (request));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  SUBAGENT_ISOLATION_PROVIDER_GET_IFACE (self)->prepare_async (self, request, cancellable, callback, user_data);
}

/**
 * subagent_isolation_provider_prepare_finish:
 * @self: a #SubagentIsolationProvider
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes subagent_isolation_provider_prepare_async().
 *
 * Returns: (transfer full): the prepared context, or %NULL with @error set
 */
SubagentIsolationContext *
subagent_isolation_provider_prepare_finish (SubagentIsolationProvider  *self,
                                            GAsyncResult               *result,
                                            GError                    **error)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_PROVIDER (self), NULL);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return SUBAGENT_ISOLATION_PROVIDER_GET_IFACE (self)->prepare_finish (self, result, error);
}

/**
 * subagent_isolation_provider_reclaim:
 * @self: a #SubagentIsolationProvider
 * @root: the workspace root the owner record lies under
 * @record: an owner record (subagent_owner_record_load()) of a kind the
 *   backend's descriptor lists in `Leftovers=`, whose owner is dead
 * @flags: #SubagentReclaimFlags
 * @reason: (out) (optional) (nullable) (transfer full): why it was skipped or
 *   failed, or a note such as "already gone"
 *
 * Removes what a dead run left behind: the workspace @record names, but only
 * once the backend has verified it is that record's (a marker with its
 * session key, a branch of ours, a label). It does not check that the owner
 * is dead (subagent_owner_is_alive() is the caller's) and does not remove
 * the record: the caller does, after %SUBAGENT_RECLAIM_REMOVED. Blocks.
 *
 * Returns: what became of the leftover
 *
 * Since: 0.2
 */
SubagentReclaimOutcome
subagent_isolation_provider_reclaim (SubagentIsolationProvider  *self,
                                     const char                 *root,
                                     JsonObject                 *record,
                                     SubagentReclaimFlags        flags,
                                     char                      **reason)
{
  SubagentIsolationProviderInterface *iface;
  g_autofree char *local_reason = NULL;
  SubagentReclaimOutcome outcome;

  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_PROVIDER (self), SUBAGENT_RECLAIM_FAILED);
  g_return_val_if_fail (root != NULL, SUBAGENT_RECLAIM_FAILED);
  g_return_val_if_fail (record != NULL, SUBAGENT_RECLAIM_FAILED);

  iface = SUBAGENT_ISOLATION_PROVIDER_GET_IFACE (self);
  outcome = (iface->reclaim ? iface->reclaim : subagent_isolation_provider_real_reclaim)
              (self, root, record, flags, &local_reason);
  if (outcome != SUBAGENT_RECLAIM_REMOVED && local_reason == NULL)
    local_reason = g_strdup_printf ("isolation backend %s gave no reason", G_OBJECT_TYPE_NAME (self));
  if (reason != NULL)
    *reason = g_steal_pointer (&local_reason);
  return outcome;
}

/* ------------------------------------------------------------------------ */

/**
 * SubagentSharedIsolation:
 *
 * The built-in `shared` backend: the child works directly in the parent's
 * root. Nothing is created, so cleanup removes nothing, and no review
 * artifact is produced. It cannot enforce CPU or memory limits; a context
 * that asked for them carries a warning saying so.
 */
struct _SubagentSharedIsolation
{
  GObject parent_instance;
};

static void shared_isolation_iface_init (SubagentIsolationProviderInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SubagentSharedIsolation, subagent_shared_isolation, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SUBAGENT_TYPE_ISOLATION_PROVIDER, shared_isolation_iface_init))

SubagentIsolationContext *
_subagent_shared_isolation_prepare (SubagentIsolationProvider  *provider,
                                    const char                 *parent_root,
                                    const char                 *session_key,
                                    double                      cpu_quota,
                                    const char                 *memory_limit,
                                    GCancellable               *cancellable,
                                    GError                    **error)
{
  /* At most two; a fixed array, not a GStrvBuilder, for each child. */
  const char *warnings[3] = { NULL };
  guint n_warnings = 0;
  g_autofree char *resolved = NULL;
  SubagentIsolationContext *context;

  if (parent_root == NULL || *parent_root == '\0')
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Shared isolation needs the parent root; the request has none");
      return NULL;
    }
  resolved = realpath (parent_root, NULL);
  if (resolved == NULL)
    {
      int saved_errno = errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Parent root “%s” cannot be resolved (%s); pass an existing directory",
                   parent_root, g_strerror (saved_errno));
      return NULL;
    }
  if (!g_file_test (resolved, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Parent root “%s” is not a directory; pass the workspace directory",
                   parent_root);
      return NULL;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  if (cpu_quota > 0.0)
    warnings[n_warnings++] = "shared isolation does not enforce a CPU quota";
  if (memory_limit != NULL && *memory_limit != '\0')
    warnings[n_warnings++] = "shared isolation does not enforce a memory limit";

  context = g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                          "provider", provider,
                          "parent-root", resolved,
                          "child-root", resolved,
                          "isolation", SUBAGENT_ISOLATION_SHARED,
                          "session-key", session_key,
                          "cpu-quota", cpu_quota,
                          "memory-limit", memory_limit,
                          "warnings", n_warnings > 0 ? warnings : NULL,
                          NULL);
  _subagent_isolation_context_set_child_root_resolved (context);
  return context;
}

static SubagentIsolationContext *
shared_isolation_prepare (SubagentIsolationProvider  *provider,
                          SubagentIsolationRequest   *request,
                          GCancellable               *cancellable,
                          GError                    **error)
{
  return _subagent_shared_isolation_prepare (provider, subagent_isolation_request_get_parent_root (request),
                                             subagent_isolation_request_get_session_key (request),
                                             subagent_isolation_request_get_cpu_quota (request),
                                             subagent_isolation_request_get_memory_limit (request),
                                             cancellable, error);
}

/* Nothing to create: resolving the root is two metadata calls on a
 * directory the host already works in, cheaper than a hop to a worker
 * thread and back, which would cost most of a trivial child's run. */
static void
shared_isolation_prepare_async (SubagentIsolationProvider *provider,
                                SubagentIsolationRequest  *request,
                                GCancellable              *cancellable,
                                GAsyncReadyCallback        callback,
                                gpointer                   user_data)
{
  g_autoptr(GTask) task = g_task_new (provider, cancellable, callback, user_data);
  GError *error = NULL;
  SubagentIsolationContext *context;

  g_task_set_source_tag (task, shared_isolation_prepare_async);
  context = subagent_isolation_provider_prepare (provider, request, cancellable, &error);
  if (context == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, context, g_object_unref);
}

static void
shared_isolation_iface_init (SubagentIsolationProviderInterface *iface)
{
  iface->prepare = shared_isolation_prepare;
  iface->prepare_async = shared_isolation_prepare_async;
  /* cleanup stays NULL: the parent's root is never removed. */
}

static void
subagent_shared_isolation_class_init (SubagentSharedIsolationClass *klass)
{
}

static void
subagent_shared_isolation_init (SubagentSharedIsolation *self)
{
}

/**
 * subagent_shared_isolation_new:
 *
 * Creates a new #SubagentSharedIsolation.
 *
 * Returns: (transfer full): the built-in `shared` isolation provider
 *
 * Since: 0.2
 */
SubagentIsolationProvider *
subagent_shared_isolation_new (void)
{
  return g_object_new (SUBAGENT_TYPE_SHARED_ISOLATION, NULL);
}

/* ------------------------------------------------------------------------ */

/**
 * subagent_isolation_normalize:
 * @value: (nullable): an isolation mode as a user wrote it
 * @is_deprecated_alias: (out) (optional): set to whether @value is the
 *   deprecated alias `container`
 *
 * Normalizes how an isolation mode is written: trims it and ignores ASCII
 * case. %NULL, empty and blank mean `shared`. This checks the spelling only
 * (1 to 128 of `[a-z0-9_-]`): which modes exist depends on the plugins
 * installed, see subagent_plugin_registry_resolve_isolation(). The alias
 * `container` is returned as is, with @is_deprecated_alias set; the registry
 * knows which backend it stands for.
 *
 * The result is interned, so every distinct name stays in memory for the
 * life of the process: a long-lived process that normalizes names from
 * untrusted sources should check them with
 * subagent_plugin_registry_resolve_isolation() instead, which interns only
 * the names of installed backends.
 *
 * Returns: (nullable): the interned, lower-case mode name, or %NULL if
 *   @value cannot name a mode
 */
gboolean
_subagent_isolation_normalize_to (const char *value,
                                  char        out[SUBAGENT_ISOLATION_NAME_MAX + 1],
                                  gboolean   *is_deprecated_alias)
{
  const char *end;
  gsize len;

  if (is_deprecated_alias != NULL)
    *is_deprecated_alias = FALSE;
  if (value == NULL)
    value = "";
  while (g_ascii_isspace (*value))
    value++;
  end = value + strlen (value);
  while (end > value && g_ascii_isspace (end[-1]))
    end--;
  len = end - value;
  if (len == 0)
    {
      strcpy (out, SUBAGENT_ISOLATION_SHARED);
      return TRUE;
    }
  if (len > SUBAGENT_ISOLATION_NAME_MAX)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    {
      char c = g_ascii_tolower (value[i]);

      if (!g_ascii_isalnum (c) && c != '-' && c != '_')
        return FALSE;
      out[i] = c;
    }
  out[len] = '\0';
  if (is_deprecated_alias != NULL)
    *is_deprecated_alias = g_str_equal (out, SUBAGENT_ISOLATION_CONTAINER_ALIAS);
  return TRUE;
}

const char *
subagent_isolation_normalize (const char *value,
                              gboolean   *is_deprecated_alias)
{
  char name[SUBAGENT_ISOLATION_NAME_MAX + 1];

  if (!_subagent_isolation_normalize_to (value, name, is_deprecated_alias))
    return NULL;
  return g_intern_string (name);
}

/**
 * subagent_isolation_warn_deprecated_alias:
 * @value: a deprecated isolation alias as a user wrote it
 * @replacement: the backend it stands for
 *
 * Logs a warning (domain `Subagent`) that @value is deprecated and names
 * @replacement.
 *
 * Since: 0.2
 */
void
subagent_isolation_warn_deprecated_alias (const char *value,
                                          const char *replacement)
{
  g_autofree char *text = NULL;

  g_return_if_fail (value != NULL);
  g_return_if_fail (replacement != NULL);

  text = g_strstrip (g_ascii_strdown (value, -1));
  g_warning ("isolation mode “%s” is deprecated; use “%s”", text, replacement);
}

static gpointer
init_libgit2 (gpointer data)
{
  git_libgit2_init ();
  return NULL;
}

/**
 * subagent_isolation_is_git_work_tree:
 * @parent_root: (nullable): the parent's workspace root
 *
 * Whether @parent_root is inside a git work tree (searching upwards; a bare
 * repository is not a work tree): the question the `auto` isolation mode
 * asks. Opens the repository, so it touches the disk.
 *
 * Returns: %TRUE inside a git work tree
 *
 * Since: 0.2
 */
gboolean
subagent_isolation_is_git_work_tree (const char *parent_root)
{
  static GOnce libgit2_once = G_ONCE_INIT;
  git_repository *repo = NULL;
  gboolean work_tree = FALSE;

  if (parent_root == NULL || *parent_root == '\0')
    return FALSE;

  g_once (&libgit2_once, init_libgit2, NULL);
  if (git_repository_open_ext (&repo, parent_root, 0, NULL) == 0)
    {
      work_tree = !git_repository_is_bare (repo);
      git_repository_free (repo);
    }
  else
    {
      const git_error *e = git_error_last ();
      g_debug ("auto isolation: %s is not in a git work tree (%s)",
               parent_root, e != NULL ? e->message : "no repository");
    }
  return work_tree;
}

static gboolean
is_key_char (char c)
{
  return g_ascii_isalnum (c) || c == '-' || c == '_';
}

/* Keeps only [A-Za-z0-9_-] (as the reference does: unsafe characters are
 * dropped, not replaced), at most max_len of them. */
static void
append_safe (GString    *out,
             const char *text,
             gsize       max_len,
             const char *fallback)
{
  gsize start = out->len;

  for (const char *p = text; p != NULL && *p && out->len - start < max_len; p++)
    {
      /* A leading '-' could read as an option where a backend puts the key
       * on a command line. */
      if (out->len == start && *p == '-')
        continue;
      if (is_key_char (*p))
        g_string_append_c (out, *p);
    }
  if (out->len == start)
    g_string_append (out, fallback);
}

/* Bounds the definition part so every key passes
 * subagent_isolation_session_key_is_valid(). */
#define SESSION_KEY_PARENT_MAX 12
#define SESSION_KEY_DEF_NAME_MAX 64

/**
 * subagent_isolation_new_session_key:
 * @parent_run_id: (nullable): the parent run's id
 * @def_name: (nullable): the child definition's name
 *
 * Makes a filesystem-safe, collision-resistant key naming a child's
 * workspace: `{parent[:12]}-{def_name}-{8 hex digits}`, where both parts keep
 * only ASCII letters, digits, `-` and `_` (never a leading `-`), an empty
 * part becomes `run` or `agent`, the definition part is cut at 64
 * characters, and the suffix is 32 random bits.
 *
 * Returns: (transfer full): a new key that passes subagent_isolation_session_key_is_valid()
 */
char *
subagent_isolation_new_session_key (const char *parent_run_id,
                                    const char *def_name)
{
  g_autofree char *parent = g_strstrip (g_strdup (parent_run_id ? parent_run_id : ""));
  /* What the first eight digits of a random UUID are, without formatting
   * the other 24 (a UUID's version bits come later). */
  guint32 suffix = g_random_int ();
  GString *key = g_string_new (NULL);

  append_safe (key, parent, SESSION_KEY_PARENT_MAX, "run");
  g_string_append_c (key, '-');
  append_safe (key, def_name, SESSION_KEY_DEF_NAME_MAX, "agent");
  g_string_append_c (key, '-');
  for (int shift = 28; shift >= 0; shift -= 4)
    g_string_append_c (key, "0123456789abcdef"[(suffix >> shift) & 0xf]);
  return g_string_free (key, FALSE);
}

/**
 * subagent_isolation_session_key_is_valid:
 * @session_key: (nullable): a candidate session key
 *
 * Checks a session key before it becomes part of a path or a name: non-empty,
 * at most 128 characters, only ASCII letters, digits, `-` and `_`.
 *
 * Returns: %TRUE if @session_key is safe to use
 */
gboolean
subagent_isolation_session_key_is_valid (const char *session_key)
{
  gsize len = 0;

  if (session_key == NULL || *session_key == '\0')
    return FALSE;
  for (const char *p = session_key; *p; p++, len++)
    if (!is_key_char (*p) || len >= 128)
      return FALSE;
  return TRUE;
}
