/* subagent-isolation-context.c: a prepared, immutable workspace.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-isolation-context-private.h"

/* Defined in subagent-isolation-provider.c: the default spawnv, which runs the
 * process on the host with cwd = child root. */
G_GNUC_INTERNAL GSubprocess *_subagent_isolation_spawn_on_host (SubagentIsolationContext  *context,
                                                                const char * const        *argv,
                                                                const char * const        *envp,
                                                                GSubprocessFlags           flags,
                                                                GError                   **error);
G_GNUC_INTERNAL gboolean _subagent_isolation_provider_spawns_on_host (SubagentIsolationProvider *provider);

/**
 * SubagentIsolationContext:
 *
 * A workspace a [iface@IsolationProvider] prepared for one child run.
 *
 * The context is immutable: providers build it with g_object_new() and its
 * construct-only properties. Only its cleanup state changes:
 * subagent_isolation_context_cleanup() runs the provider's cleanup exactly
 * once, however many times and from however many threads it is called.
 *
 * Finalizing a context does not clean it up: whoever prepared it (normally
 * the manager, in its run contract) calls cleanup explicitly, so dropping the
 * last reference early can never remove a workspace still in use.
 */
struct _SubagentIsolationContext
{
  GObject parent_instance;

  SubagentIsolationProvider *provider;
  char *parent_root;
  char *child_root;
  char *isolation;
  char *session_key;
  char *worktree_path;
  char *container_path;
  char *container_id;
  char *branch;
  double cpu_quota;
  char *memory_limit;
  char **warnings;
  GVariant *backend_data;
  gboolean child_root_resolved;  /* a realpath() already: see the private header */

  /* Held while the provider's cleanup runs, so a second caller returns only
   * once the workspace is gone; recursive so a cleanup vfunc that calls
   * back into the context cannot deadlock. */
  GRecMutex cleanup_lock;
  gboolean cleanup_started; /* under cleanup_lock */
  int cleaned_up;           /* atomic */
};

G_DEFINE_FINAL_TYPE (SubagentIsolationContext, subagent_isolation_context, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PROVIDER,
  PROP_PARENT_ROOT,
  PROP_CHILD_ROOT,
  PROP_ISOLATION,
  PROP_SESSION_KEY,
  PROP_WORKTREE_PATH,
  PROP_CONTAINER_PATH,
  PROP_CONTAINER_ID,
  PROP_BRANCH,
  PROP_CPU_QUOTA,
  PROP_MEMORY_LIMIT,
  PROP_WARNINGS,
  PROP_BACKEND_DATA,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
subagent_isolation_context_constructed (GObject *object)
{
  SubagentIsolationContext *self = SUBAGENT_ISOLATION_CONTEXT (object);

  G_OBJECT_CLASS (subagent_isolation_context_parent_class)->constructed (object);

  if (self->warnings == NULL)
    self->warnings = g_new0 (char *, 1);
}

static void
subagent_isolation_context_finalize (GObject *object)
{
  SubagentIsolationContext *self = SUBAGENT_ISOLATION_CONTEXT (object);

  if (!g_atomic_int_get (&self->cleaned_up))
    g_debug ("Isolation context “%s” (%s, child root %s) finalized without cleanup; "
             "whoever prepared it must call subagent_isolation_context_cleanup()",
             self->session_key ? self->session_key : "(no key)",
             self->isolation ? self->isolation : "(no mode)",
             self->child_root ? self->child_root : "(none)");

  g_clear_object (&self->provider);
  g_clear_pointer (&self->parent_root, g_free);
  g_clear_pointer (&self->child_root, g_free);
  g_clear_pointer (&self->isolation, g_free);
  g_clear_pointer (&self->session_key, g_free);
  g_clear_pointer (&self->worktree_path, g_free);
  g_clear_pointer (&self->container_path, g_free);
  g_clear_pointer (&self->container_id, g_free);
  g_clear_pointer (&self->branch, g_free);
  g_clear_pointer (&self->memory_limit, g_free);
  g_clear_pointer (&self->warnings, g_strfreev);
  g_clear_pointer (&self->backend_data, g_variant_unref);
  g_rec_mutex_clear (&self->cleanup_lock);

  G_OBJECT_CLASS (subagent_isolation_context_parent_class)->finalize (object);
}

static void
subagent_isolation_context_get_property (GObject    *object,
                                         guint       prop_id,
                                         GValue     *value,
                                         GParamSpec *pspec)
{
  SubagentIsolationContext *self = SUBAGENT_ISOLATION_CONTEXT (object);

  switch (prop_id)
    {
    case PROP_PROVIDER:
      g_value_set_object (value, self->provider);
      break;
    case PROP_PARENT_ROOT:
      g_value_set_string (value, self->parent_root);
      break;
    case PROP_CHILD_ROOT:
      g_value_set_string (value, self->child_root);
      break;
    case PROP_ISOLATION:
      g_value_set_string (value, self->isolation);
      break;
    case PROP_SESSION_KEY:
      g_value_set_string (value, self->session_key);
      break;
    case PROP_WORKTREE_PATH:
      g_value_set_string (value, self->worktree_path);
      break;
    case PROP_CONTAINER_PATH:
      g_value_set_string (value, self->container_path);
      break;
    case PROP_CONTAINER_ID:
      g_value_set_string (value, self->container_id);
      break;
    case PROP_BRANCH:
      g_value_set_string (value, self->branch);
      break;
    case PROP_CPU_QUOTA:
      g_value_set_double (value, self->cpu_quota);
      break;
    case PROP_MEMORY_LIMIT:
      g_value_set_string (value, self->memory_limit);
      break;
    case PROP_WARNINGS:
      g_value_set_boxed (value, self->warnings);
      break;
    case PROP_BACKEND_DATA:
      g_value_set_variant (value, self->backend_data);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_isolation_context_set_property (GObject      *object,
                                         guint         prop_id,
                                         const GValue *value,
                                         GParamSpec   *pspec)
{
  SubagentIsolationContext *self = SUBAGENT_ISOLATION_CONTEXT (object);

  switch (prop_id)
    {
    case PROP_PROVIDER:
      self->provider = g_value_dup_object (value);
      break;
    case PROP_PARENT_ROOT:
      self->parent_root = g_value_dup_string (value);
      break;
    case PROP_CHILD_ROOT:
      self->child_root = g_value_dup_string (value);
      break;
    case PROP_ISOLATION:
      self->isolation = g_value_dup_string (value);
      break;
    case PROP_SESSION_KEY:
      self->session_key = g_value_dup_string (value);
      break;
    case PROP_WORKTREE_PATH:
      self->worktree_path = g_value_dup_string (value);
      break;
    case PROP_CONTAINER_PATH:
      self->container_path = g_value_dup_string (value);
      break;
    case PROP_CONTAINER_ID:
      self->container_id = g_value_dup_string (value);
      break;
    case PROP_BRANCH:
      self->branch = g_value_dup_string (value);
      break;
    case PROP_CPU_QUOTA:
      self->cpu_quota = g_value_get_double (value);
      break;
    case PROP_MEMORY_LIMIT:
      self->memory_limit = g_value_dup_string (value);
      break;
    case PROP_WARNINGS:
      self->warnings = g_value_dup_boxed (value);
      break;
    case PROP_BACKEND_DATA:
      self->backend_data = g_value_dup_variant (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_isolation_context_class_init (SubagentIsolationContextClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->constructed = subagent_isolation_context_constructed;
  object_class->finalize = subagent_isolation_context_finalize;
  object_class->get_property = subagent_isolation_context_get_property;
  object_class->set_property = subagent_isolation_context_set_property;

  /**
   * SubagentIsolationContext:provider:
   *
   * The provider that prepared the context; its cleanup and spawnv run for
   * it. A context without one cleans up nothing and spawns on the host.
   */
  properties[PROP_PROVIDER] =
    g_param_spec_object ("provider", NULL, NULL, SUBAGENT_TYPE_ISOLATION_PROVIDER, flags);

  /**
   * SubagentIsolationContext:parent-root:
   *
   * The parent's workspace root, resolved.
   */
  properties[PROP_PARENT_ROOT] = g_param_spec_string ("parent-root", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationContext:child-root:
   *
   * Where the child works: the parent root for `shared`, the worktree or
   * snapshot directory, or the path inside the container.
   */
  properties[PROP_CHILD_ROOT] = g_param_spec_string ("child-root", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationContext:isolation:
   *
   * The canonical isolation mode (never `auto` nor an alias).
   */
  properties[PROP_ISOLATION] = g_param_spec_string ("isolation", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationContext:session-key:
   *
   * The session key the workspace was named after.
   */
  properties[PROP_SESSION_KEY] = g_param_spec_string ("session-key", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationContext:worktree-path:
   *
   * The git worktree, for `worktree` isolation.
   */
  properties[PROP_WORKTREE_PATH] = g_param_spec_string ("worktree-path", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationContext:container-path:
   *
   * The snapshot directory, for `directory-snapshot` and `docker` isolation.
   */
  properties[PROP_CONTAINER_PATH] = g_param_spec_string ("container-path", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationContext:container-id:
   *
   * The container, for `docker` isolation.
   */
  properties[PROP_CONTAINER_ID] = g_param_spec_string ("container-id", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationContext:branch:
   *
   * The branch the worktree has checked out, if any.
   */
  properties[PROP_BRANCH] = g_param_spec_string ("branch", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationContext:cpu-quota:
   *
   * The CPU quota in effect, in cores; 0 for none.
   */
  properties[PROP_CPU_QUOTA] = g_param_spec_double ("cpu-quota", NULL, NULL, 0.0, G_MAXDOUBLE, 0.0, flags);

  /**
   * SubagentIsolationContext:memory-limit:
   *
   * The memory limit in effect; %NULL for none.
   */
  properties[PROP_MEMORY_LIMIT] = g_param_spec_string ("memory-limit", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationContext:warnings:
   *
   * What the provider wants the user to know (a limit it could not apply...);
   * an empty list when none.
   */
  properties[PROP_WARNINGS] = g_param_spec_boxed ("warnings", NULL, NULL, G_TYPE_STRV, flags);

  /**
   * SubagentIsolationContext:backend-data:
   *
   * Whatever else the provider needs to clean up, as an `a{sv}` dictionary.
   */
  properties[PROP_BACKEND_DATA] =
    g_param_spec_variant ("backend-data", NULL, NULL, G_VARIANT_TYPE_VARDICT, NULL, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_isolation_context_init (SubagentIsolationContext *self)
{
  g_rec_mutex_init (&self->cleanup_lock);
}

/**
 * subagent_isolation_context_get_provider:
 * @self: a #SubagentIsolationContext
 *
 * Gets the provider that prepared the context.
 *
 * Returns: (transfer none) (nullable): the provider that prepared the context
 *
 * Since: 0.2
 */
SubagentIsolationProvider *
subagent_isolation_context_get_provider (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  return self->provider;
}

/**
 * subagent_isolation_context_get_parent_root:
 * @self: a #SubagentIsolationContext
 *
 * Gets the parent's workspace root.
 *
 * Returns: (nullable): the parent's workspace root
 *
 * Since: 0.2
 */
const char *
subagent_isolation_context_get_parent_root (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  return self->parent_root;
}

/**
 * subagent_isolation_context_get_child_root:
 * @self: a #SubagentIsolationContext
 *
 * Gets where the child works.
 *
 * Returns: (nullable): where the child works
 *
 * Since: 0.2
 */
const char *
subagent_isolation_context_get_child_root (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  return self->child_root;
}

/**
 * subagent_isolation_context_get_isolation:
 * @self: a #SubagentIsolationContext
 *
 * Gets the canonical isolation mode.
 *
 * Returns: (nullable): the canonical isolation mode
 *
 * Since: 0.2
 */
const char *
subagent_isolation_context_get_isolation (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  return self->isolation;
}

/**
 * subagent_isolation_context_get_session_key:
 * @self: a #SubagentIsolationContext
 *
 * Gets the session key.
 *
 * Returns: (nullable): the session key
 *
 * Since: 0.2
 */
const char *
subagent_isolation_context_get_session_key (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  return self->session_key;
}

/**
 * subagent_isolation_context_get_worktree_path:
 * @self: a #SubagentIsolationContext
 *
 * Gets the git worktree, for `worktree` isolation.
 *
 * Returns: (nullable): the git worktree, for `worktree` isolation
 *
 * Since: 0.2
 */
const char *
subagent_isolation_context_get_worktree_path (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  return self->worktree_path;
}

/**
 * subagent_isolation_context_get_container_path:
 * @self: a #SubagentIsolationContext
 *
 * Gets the snapshot directory.
 *
 * Returns: (nullable): the snapshot directory
 *
 * Since: 0.2
 */
const char *
subagent_isolation_context_get_container_path (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  return self->container_path;
}

/**
 * subagent_isolation_context_get_container_id:
 * @self: a #SubagentIsolationContext
 *
 * Gets the container, for `docker` isolation.
 *
 * Returns: (nullable): the container, for `docker` isolation
 *
 * Since: 0.2
 */
const char *
subagent_isolation_context_get_container_id (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  return self->container_id;
}

/**
 * subagent_isolation_context_get_branch:
 * @self: a #SubagentIsolationContext
 *
 * Gets the branch checked out in the worktree.
 *
 * Returns: (nullable): the branch checked out in the worktree
 *
 * Since: 0.2
 */
const char *
subagent_isolation_context_get_branch (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  return self->branch;
}

/**
 * subagent_isolation_context_get_cpu_quota:
 * @self: a #SubagentIsolationContext
 *
 * Gets the CPU quota in cores, 0 for none.
 *
 * Returns: the CPU quota in cores, 0 for none
 *
 * Since: 0.2
 */
double
subagent_isolation_context_get_cpu_quota (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), 0.0);
  return self->cpu_quota;
}

/**
 * subagent_isolation_context_get_memory_limit:
 * @self: a #SubagentIsolationContext
 *
 * Gets the memory limit, %NULL for none.
 *
 * Returns: (nullable): the memory limit, %NULL for none
 *
 * Since: 0.2
 */
const char *
subagent_isolation_context_get_memory_limit (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  return self->memory_limit;
}

/**
 * subagent_isolation_context_get_warnings:
 * @self: a #SubagentIsolationContext
 *
 * Gets the provider's warnings, possibly none.
 *
 * Returns: (transfer none) (array zero-terminated=1): the provider's warnings, possibly none
 *
 * Since: 0.2
 */
const char * const *
subagent_isolation_context_get_warnings (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  return (const char * const *) self->warnings;
}

/**
 * subagent_isolation_context_get_backend_data:
 * @self: a #SubagentIsolationContext
 *
 * Gets the provider's `a{sv}` data.
 *
 * Returns: (transfer none) (nullable): the provider's `a{sv}` data
 *
 * Since: 0.2
 */
GVariant *
subagent_isolation_context_get_backend_data (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  return self->backend_data;
}

/**
 * subagent_isolation_context_is_cleaned_up:
 * @self: a #SubagentIsolationContext
 *
 * Checks whether %TRUE once subagent_isolation_context_cleanup() has
 * finished.
 *
 * Returns: %TRUE once subagent_isolation_context_cleanup() has finished
 *
 * Since: 0.2
 */
gboolean
subagent_isolation_context_is_cleaned_up (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), FALSE);
  return g_atomic_int_get (&self->cleaned_up);
}

/**
 * subagent_isolation_context_cleanup:
 * @self: a #SubagentIsolationContext
 *
 * Removes what the provider prepared (worktree, snapshot, container). Runs
 * the provider's cleanup exactly once: later and concurrent calls return
 * when that one has finished. Never fails; the provider logs what it could
 * not remove.
 */
void
subagent_isolation_context_cleanup (SubagentIsolationContext *self)
{
  g_return_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self));

  if (g_atomic_int_get (&self->cleaned_up))
    return;

  g_rec_mutex_lock (&self->cleanup_lock);
  if (!self->cleanup_started)
    {
      self->cleanup_started = TRUE;
      if (self->provider != NULL)
        {
          SubagentIsolationProviderInterface *iface = SUBAGENT_ISOLATION_PROVIDER_GET_IFACE (self->provider);

          if (iface->cleanup != NULL)
            iface->cleanup (self->provider, self);
        }
      g_atomic_int_set (&self->cleaned_up, TRUE);
    }
  g_rec_mutex_unlock (&self->cleanup_lock);
}

void
_subagent_isolation_context_set_child_root_resolved (SubagentIsolationContext *self)
{
  self->child_root_resolved = TRUE;
}

gboolean
_subagent_isolation_context_get_child_root_resolved (SubagentIsolationContext *self)
{
  return self->child_root_resolved;
}

/* Whether spawnv() would start the process on the host, in the child root,
 * with nothing else around it: the command runner may then start it itself.
 * Also FALSE once the context is cleaned up (spawnv() says why). */
G_GNUC_INTERNAL gboolean
_subagent_isolation_context_spawns_on_host (SubagentIsolationContext *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), FALSE);

  if (g_atomic_int_get (&self->cleaned_up) || self->child_root == NULL)
    return FALSE;
  return self->provider == NULL || _subagent_isolation_provider_spawns_on_host (self->provider);
}

/**
 * subagent_isolation_context_spawnv:
 * @self: a #SubagentIsolationContext
 * @argv: (array zero-terminated=1) (element-type filename): the command line
 * @envp: (nullable) (array zero-terminated=1) (element-type filename): the environment; %NULL to inherit
 * @flags: #GSubprocessFlags for the process
 * @error: return location for a #GError
 *
 * Starts a process inside the isolation: on the host with the child root as
 * working directory, or, for backends such as Docker, inside the container.
 * Fails with %SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED once the context is
 * cleaned up.
 *
 * Returns: (transfer full): the process, or %NULL with @error set
 */
GSubprocess *
subagent_isolation_context_spawnv (SubagentIsolationContext  *self,
                                   const char * const        *argv,
                                   const char * const        *envp,
                                   GSubprocessFlags           flags,
                                   GError                   **error)
{
  g_autoptr(GError) local_error = NULL;
  GSubprocess *proc;

  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_CONTEXT (self), NULL);
  g_return_val_if_fail (argv != NULL && argv[0] != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (g_atomic_int_get (&self->cleaned_up))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                   "Cannot start “%s”: the %s workspace “%s” was already cleaned up; prepare a new one",
                   argv[0], self->isolation ? self->isolation : "isolation",
                   self->session_key ? self->session_key : "(no key)");
      return NULL;
    }

  if (self->provider != NULL)
    proc = SUBAGENT_ISOLATION_PROVIDER_GET_IFACE (self->provider)->spawnv (self->provider, self, argv, envp,
                                                                           flags, &local_error);
  else
    proc = _subagent_isolation_spawn_on_host (self, argv, envp, flags, &local_error);

  if (proc == NULL && local_error == NULL)
    g_set_error (&local_error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                 "Starting “%s” in the %s workspace failed without a reason",
                 argv[0], self->isolation ? self->isolation : "isolation");
  if (local_error != NULL)
    {
      g_clear_object (&proc);
      g_propagate_error (error, g_steal_pointer (&local_error));
    }
  return proc;
}
