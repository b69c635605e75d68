/* subagent-manager.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gstdio.h>

#include "subagent.h"
#include "subagent-manager.h"
#include "subagent-manager-private.h"

/**
 * SubagentManager:
 *
 * Runs child agents for one parent run: the run contract of reference 000.
 *
 * For each run the manager
 *
 * 1. refuses a child deeper than its definition's `max_depth` (depth guard);
 * 2. prepares the isolation before anything runs, and returns the error
 *    result without launching the child when that fails;
 * 3. derives the child's tool registry from the parent's (only narrowing);
 * 4. runs the child through its #SubagentRunner;
 * 5. captures the review artifact of a worktree, snapshot or container run;
 * 6. always cleans the isolation up, whether the child completed, failed,
 *    crashed or was cancelled;
 * 7. records the child's cost in the audit log and keeps a session record,
 *    in `<root>/.subagent/sessions/<run_id>.jsonl` and, for the latest
 *    #SubagentManager:sessions-in-memory children, in memory too.
 *
 * Each child gets a #SubagentApprovalHandler on its run context: its route
 * to the parent run's #SubagentApprovalQueue, made on first need from the
 * host's sink (#SubagentManager:approval-sink) or the one `config.yaml`
 * names, or given by the host (#SubagentManager:approval-queue). With no
 * queue (`approvals.sink: none`, or #SubagentManager:unattended) children
 * are unattended: what needs an approval is denied at once. Requests a
 * child leaves pending are cancelled when it ends. `docs/approvals.md`
 * describes the routing.
 *
 * Failures that happen before the child runs are results with status
 * `error` (reference 001's error shape), not #GErrors: a parent's model reads
 * them as the tool's answer. A #GError is only for a caller's mistake, such
 * as an empty task.
 */

enum {
  PROP_0,
  PROP_ROOT,
  PROP_RUN_ID,
  PROP_CONFIG,
  PROP_CATALOG,
  PROP_PLUGIN_REGISTRY,
  PROP_TOOLS,
  PROP_RUNNER,
  PROP_PERMISSION_MODE,
  PROP_APPROVAL_QUEUE,
  PROP_APPROVAL_SINK,
  PROP_UNATTENDED,
  PROP_SESSIONS_IN_MEMORY,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

/* Children whose session records stay in memory unless the host says. */
#define SESSIONS_IN_MEMORY_DEFAULT 256

static void subagent_manager_initable_iface_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SubagentManager, subagent_manager, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, subagent_manager_initable_iface_init))



static void
subagent_manager_finalize (GObject *object)
{
  SubagentManager *self = SUBAGENT_MANAGER (object);

  g_free (self->root);
  g_free (self->run_id);
  g_strfreev (self->secret_files);
  g_clear_object (&self->config);
  g_clear_object (&self->catalog);
  g_clear_object (&self->plugins);
  g_clear_object (&self->audit);
  g_clear_object (&self->tools);
  g_clear_object (&self->runner);
  g_clear_object (&self->command_runner);
  g_clear_pointer (&self->plugin_runners, g_hash_table_unref);
  _subagent_manager_drop_approval_queue (self);
  g_clear_object (&self->approval_sink);
  g_mutex_clear (&self->approval_lock);
  g_hash_table_unref (self->sessions);
  g_queue_clear_full (&self->sessions_logged, (GDestroyNotify) _subagent_logged_session_free);
  g_hash_table_unref (self->sessions_on_disk);
  g_hash_table_unref (self->providers);
  g_clear_object (&self->session_log);
  /* Runs still going keep their rulesets; the rest are closed here. */
  g_clear_pointer (&self->confinement_cache, _subagent_confinement_cache_unref);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (subagent_manager_parent_class)->finalize (object);
}

static void
subagent_manager_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SubagentManager *self = SUBAGENT_MANAGER (object);

  switch (prop_id)
    {
    case PROP_ROOT: g_value_set_string (value, self->root); break;
    case PROP_RUN_ID: g_value_set_string (value, self->run_id); break;
    case PROP_CONFIG: g_value_set_object (value, self->config); break;
    case PROP_CATALOG: g_value_set_object (value, self->catalog); break;
    case PROP_PLUGIN_REGISTRY: g_value_set_object (value, self->plugins); break;
    case PROP_TOOLS: g_value_set_object (value, self->tools); break;
    case PROP_RUNNER: g_value_set_object (value, self->runner); break;
    case PROP_PERMISSION_MODE: g_value_set_enum (value, self->permission_mode); break;
    case PROP_APPROVAL_QUEUE:
      g_mutex_lock (&self->approval_lock);
      g_value_set_object (value, self->approval_queue);
      g_mutex_unlock (&self->approval_lock);
      break;
    case PROP_APPROVAL_SINK:
      g_mutex_lock (&self->approval_lock);
      g_value_set_object (value, self->approval_sink);
      g_mutex_unlock (&self->approval_lock);
      break;
    case PROP_UNATTENDED: g_value_set_boolean (value, subagent_manager_get_unattended (self)); break;
    case PROP_SESSIONS_IN_MEMORY: g_value_set_uint (value, subagent_manager_get_sessions_in_memory (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_manager_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  SubagentManager *self = SUBAGENT_MANAGER (object);

  switch (prop_id)
    {
    case PROP_ROOT: self->root = g_value_dup_string (value); break;
    case PROP_RUN_ID: self->run_id = g_value_dup_string (value); break;
    case PROP_CONFIG: self->config = g_value_dup_object (value); break;
    case PROP_CATALOG: self->catalog = g_value_dup_object (value); break;
    case PROP_PLUGIN_REGISTRY: self->plugins = g_value_dup_object (value); break;
    case PROP_TOOLS: subagent_manager_set_tools (self, g_value_get_object (value)); break;
    case PROP_RUNNER: subagent_manager_set_runner (self, g_value_get_object (value)); break;
    case PROP_PERMISSION_MODE: subagent_manager_set_permission_mode (self, g_value_get_enum (value)); break;
    case PROP_APPROVAL_QUEUE: subagent_manager_set_approval_queue (self, g_value_get_object (value)); break;
    case PROP_APPROVAL_SINK: subagent_manager_set_approval_sink (self, g_value_get_object (value)); break;
    case PROP_UNATTENDED: subagent_manager_set_unattended (self, g_value_get_boolean (value)); break;
    case PROP_SESSIONS_IN_MEMORY: subagent_manager_set_sessions_in_memory (self, g_value_get_uint (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static gboolean
subagent_manager_initable_init (GInitable     *initable,
                                GCancellable  *cancellable,
                                GError       **error)
{
  SubagentManager *self = SUBAGENT_MANAGER (initable);
  g_autofree char *real = NULL;
  g_autofree char *audit_path = NULL;

  if (self->root == NULL || (real = realpath (self->root, NULL)) == NULL ||
      !g_file_test (real, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "The workspace root %s is not an existing directory", self->root ? self->root : "(null)");
      return FALSE;
    }
  g_free (self->root);
  self->root = g_strdup (real);

  if (self->run_id == NULL)
    self->run_id = _subagent_manager_new_run_id ();
  else if (!subagent_isolation_session_key_is_valid (self->run_id))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Run id “%s” is invalid: use 1–128 characters of [A-Za-z0-9_-]", self->run_id);
      return FALSE;
    }

  if (self->config == NULL && (self->config = subagent_config_load_for_root (self->root, error)) == NULL)
    return FALSE;
  if (self->catalog == NULL && (self->catalog = subagent_catalog_new_for_root (self->root, error)) == NULL)
    return FALSE;
  if (self->plugins == NULL)
    self->plugins = subagent_plugin_registry_new_for_config (self->config);
  /* Each plugin's section against the options its descriptor declares: an
   * unknown key warns, a wrong type stops here rather than mid-run. */
  if (!subagent_plugin_registry_validate_config (self->plugins, self->config, NULL, error))
    return FALSE;
  self->secret_files = _subagent_manager_secret_files (self);
  if (self->tools == NULL)
    self->tools = SUBAGENT_TOOL_REGISTRY (subagent_simple_tool_registry_new ());
  {
    g_autoptr(SubagentCommandRunner) runner = subagent_command_runner_new ();
    const char * const *command = subagent_config_get_runner_command (self->config);

    if (command != NULL && command[0] != NULL)
      g_object_set (runner, "default-command", command, NULL);
    self->command_runner = SUBAGENT_RUNNER (g_steal_pointer (&runner));
  }
  if (self->runner == NULL)
    {
      self->runner = g_object_ref (self->command_runner);
      self->runner_is_default = TRUE;
    }
  self->plugin_runners = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  if (self->permission_mode == SUBAGENT_PERMISSION_MODE_INHERIT)
    self->permission_mode = subagent_config_get_permission_mode (self->config);

  audit_path = g_build_filename (self->root, ".subagent", "audit.jsonl", NULL);
  self->audit = subagent_audit_log_new (audit_path);
  return TRUE;
}

static void
subagent_manager_initable_iface_init (GInitableIface *iface)
{
  iface->init = subagent_manager_initable_init;
}

static void
subagent_manager_class_init (SubagentManagerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = subagent_manager_finalize;
  object_class->get_property = subagent_manager_get_property;
  object_class->set_property = subagent_manager_set_property;

  /**
   * SubagentManager:root:
   *
   * The parent's workspace root; `.subagent/` lives here.
   */
  properties[PROP_ROOT] =
    g_param_spec_string ("root", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentManager:run-id:
   *
   * The parent's run id: children name it as their parent, and approval
   * queues are kept per parent run. A new one is made when unset.
   */
  properties[PROP_RUN_ID] =
    g_param_spec_string ("run-id", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentManager:config:
   *
   * The configuration; loaded from the root when unset.
   */
  properties[PROP_CONFIG] =
    g_param_spec_object ("config", NULL, NULL, SUBAGENT_TYPE_CONFIG,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentManager:catalog:
   *
   * The definitions; loaded from the root when unset.
   */
  properties[PROP_CATALOG] =
    g_param_spec_object ("catalog", NULL, NULL, SUBAGENT_TYPE_CATALOG,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentManager:plugin-registry:
   *
   * Where isolation backends come from; the default registry when unset.
   */
  properties[PROP_PLUGIN_REGISTRY] =
    g_param_spec_object ("plugin-registry", NULL, NULL, SUBAGENT_TYPE_PLUGIN_REGISTRY,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentManager:tools:
   *
   * The parent's tools; children get a narrowing view of them.
   */
  properties[PROP_TOOLS] =
    g_param_spec_object ("tools", NULL, NULL, SUBAGENT_TYPE_TOOL_REGISTRY,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentManager:runner:
   *
   * What runs a child. When unset, each definition picks: its `runner:`,
   * else the built-in #SubagentCommandRunner for one with a `command`, else
   * the configured model runner (`runner.model_runner`, a runner plugin)
   * for one with a `model`. A runner set here runs every child whose
   * definition names no `runner:`.
   */
  properties[PROP_RUNNER] =
    g_param_spec_object ("runner", NULL, NULL, SUBAGENT_TYPE_RUNNER,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentManager:permission-mode:
   *
   * The parent's permission mode; a child's is never looser.
   */
  properties[PROP_PERMISSION_MODE] =
    g_param_spec_enum ("permission-mode", NULL, NULL, SUBAGENT_TYPE_PERMISSION_MODE,
                       SUBAGENT_PERMISSION_MODE_INHERIT,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentManager:approval-queue:
   *
   * The queue children's approval requests go to: the host's, or the one
   * the manager made for its run on first need (%NULL until then). Setting
   * %NULL goes back to the configured sink.
   */
  properties[PROP_APPROVAL_QUEUE] =
    g_param_spec_object ("approval-queue", NULL, NULL, SUBAGENT_TYPE_APPROVAL_QUEUE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentManager:approval-sink:
   *
   * The store the manager makes its run's queue with; %NULL (the default)
   * uses `approvals.sink` of `config.yaml`.
   */
  properties[PROP_APPROVAL_SINK] =
    g_param_spec_object ("approval-sink", NULL, NULL, SUBAGENT_TYPE_APPROVAL_SINK,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentManager:unattended:
   *
   * Whether nobody can answer children's approval requests: then what
   * needs an approval is denied at once, with the reason
   * %SUBAGENT_APPROVAL_UNATTENDED_REASON.
   */
  properties[PROP_UNATTENDED] =
    g_param_spec_boolean ("unattended", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * SubagentManager:sessions-in-memory:
   *
   * How many of its children's session records the manager keeps in
   * memory, the latest ones; subagent_manager_get_session() and
   * subagent_manager_list_sessions() read the older ones back from the
   * manager's session log. A record that could not be written there stays
   * in memory however many there are. Bounds what a long-lived host (a
   * server that delegates for hours) holds for children long finished,
   * transcripts included.
   *
   * Since: 0.2
   */
  properties[PROP_SESSIONS_IN_MEMORY] =
    g_param_spec_uint ("sessions-in-memory", NULL, NULL, 1, G_MAXUINT, SESSIONS_IN_MEMORY_DEFAULT,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_manager_init (SubagentManager *self)
{
  g_mutex_init (&self->lock);
  g_mutex_init (&self->approval_lock);
  self->confinement_cache = _subagent_confinement_cache_new ();
  self->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                          (GDestroyNotify) _subagent_kept_session_free);
  g_queue_init (&self->sessions_logged);
  self->sessions_on_disk = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                                  (GDestroyNotify) _subagent_logged_session_free);
  self->sessions_in_memory = SESSIONS_IN_MEMORY_DEFAULT;
  self->providers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
}

/**
 * subagent_manager_new:
 * @root: the parent's workspace root
 * @error: return location for a #GError
 *
 * Loads the configuration and definitions of @root.
 *
 * Returns: (transfer full) (nullable): a manager, or %NULL when @root, its
 *   configuration or its definitions directory cannot be read
 */
SubagentManager *
subagent_manager_new (const char  *root,
                      GError     **error)
{
  g_return_val_if_fail (root != NULL, NULL);

  return g_initable_new (SUBAGENT_TYPE_MANAGER, NULL, error, "root", root, NULL);
}

/**
 * subagent_manager_get_root:
 * @self: a #SubagentManager
 *
 * Gets the workspace root (resolved).
 *
 * Returns: (transfer none): the workspace root (resolved)
 *
 * Since: 0.2
 */
const char *
subagent_manager_get_root (SubagentManager *self)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  return self->root;
}

/**
 * subagent_manager_get_run_id:
 * @self: a #SubagentManager
 *
 * Gets the parent's run id.
 *
 * Returns: (transfer none): the parent's run id
 *
 * Since: 0.2
 */
const char *
subagent_manager_get_run_id (SubagentManager *self)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  return self->run_id;
}

/**
 * subagent_manager_get_config:
 * @self: a #SubagentManager
 *
 * Gets the configuration.
 *
 * Returns: (transfer none): the configuration
 *
 * Since: 0.2
 */
SubagentConfig *
subagent_manager_get_config (SubagentManager *self)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  return self->config;
}

/**
 * subagent_manager_get_catalog:
 * @self: a #SubagentManager
 *
 * Gets the definitions.
 *
 * Returns: (transfer none): the definitions
 *
 * Since: 0.2
 */
SubagentCatalog *
subagent_manager_get_catalog (SubagentManager *self)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  return self->catalog;
}

/**
 * subagent_manager_get_plugin_registry:
 * @self: a #SubagentManager
 *
 * Gets the plugin registry.
 *
 * Returns: (transfer none): the plugin registry
 *
 * Since: 0.2
 */
SubagentPluginRegistry *
subagent_manager_get_plugin_registry (SubagentManager *self)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  return self->plugins;
}

/**
 * subagent_manager_get_audit_log:
 * @self: a #SubagentManager
 *
 * Gets the parent's audit log.
 *
 * Returns: (transfer none): the parent's audit log
 *
 * Since: 0.2
 */
SubagentAuditLog *
subagent_manager_get_audit_log (SubagentManager *self)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  return self->audit;
}

/**
 * subagent_manager_get_tools:
 * @self: a #SubagentManager
 *
 * Gets the parent's tools.
 *
 * Returns: (transfer none): the parent's tools
 *
 * Since: 0.2
 */
SubagentToolRegistry *
subagent_manager_get_tools (SubagentManager *self)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  return self->tools;
}

/**
 * subagent_manager_set_tools:
 * @self: a #SubagentManager
 * @tools: the parent's tools
 *
 * Children started after this call see a narrowing view of @tools.
 */
void
subagent_manager_set_tools (SubagentManager      *self,
                            SubagentToolRegistry *tools)
{
  g_return_if_fail (SUBAGENT_IS_MANAGER (self));
  g_return_if_fail (tools == NULL || SUBAGENT_IS_TOOL_REGISTRY (tools));

  g_mutex_lock (&self->lock);
  g_set_object (&self->tools, tools);
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TOOLS]);
}

/**
 * subagent_manager_get_runner:
 * @self: a #SubagentManager
 *
 * Gets what runs the children.
 *
 * Returns: (transfer none): what runs the children
 *
 * Since: 0.2
 */
SubagentRunner *
subagent_manager_get_runner (SubagentManager *self)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  return self->runner;
}

/**
 * subagent_manager_set_runner:
 * @self: a #SubagentManager
 * @runner: the host's agent loop
 *
 * Sets what runs the children started after this call.
 */
void
subagent_manager_set_runner (SubagentManager *self,
                             SubagentRunner  *runner)
{
  g_return_if_fail (SUBAGENT_IS_MANAGER (self));
  g_return_if_fail (runner == NULL || SUBAGENT_IS_RUNNER (runner));

  g_mutex_lock (&self->lock);
  /* NULL goes back to the built-in choice (command or model runner). */
  if (runner == NULL)
    runner = self->command_runner;
  g_set_object (&self->runner, runner);
  self->runner_is_default = runner == self->command_runner;
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNER]);
}

/**
 * subagent_manager_get_permission_mode:
 * @self: a #SubagentManager
 *
 * Gets the parent's permission mode.
 *
 * Returns: the parent's permission mode
 *
 * Since: 0.2
 */
SubagentPermissionMode
subagent_manager_get_permission_mode (SubagentManager *self)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), SUBAGENT_PERMISSION_MODE_READ_ONLY);
  return self->permission_mode;
}

/**
 * subagent_manager_set_permission_mode:
 * @self: a #SubagentManager
 * @mode: the parent's mode
 *
 * Sets the parent's permission mode; children are clamped to it.
 */
void
subagent_manager_set_permission_mode (SubagentManager        *self,
                                      SubagentPermissionMode  mode)
{
  g_return_if_fail (SUBAGENT_IS_MANAGER (self));

  self->permission_mode = mode;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PERMISSION_MODE]);
}

/**
 * subagent_manager_dup_approval_queue:
 * @self: a #SubagentManager
 * @error: return location for a #GError
 *
 * The queue children's approval requests go to, made now if there is none
 * yet: from #SubagentManager:approval-sink, or from the sink `config.yaml`
 * names (`approvals.sink`: the plugin that provides that backend, made and
 * configured with the workspace root and its own `config.yaml` section by
 * subagent_plugin_registry_create_configured(); `memory` is the built-in
 * sink, `none` means no queue). Its parent run id is the manager's run id.
 *
 * This may load a plugin and read the store: it blocks, so a UI calls it
 * from a worker thread. Runs call it in a worker thread themselves, and
 * only for a child that could ask.
 *
 * Returns: (transfer full) (nullable): the queue; %NULL without an error
 *   when children are unattended (#SubagentManager:unattended, or
 *   `approvals.sink: none`)
 */
SubagentApprovalQueue *
subagent_manager_dup_approval_queue (SubagentManager  *self,
                                     GError          **error)
{
  SubagentApprovalQueue *queue;
  gboolean had;

  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  g_mutex_lock (&self->approval_lock);
  had = self->approval_queue != NULL;
  g_mutex_unlock (&self->approval_lock);
  queue = _subagent_manager_make_approval_queue (self, error);
  if (!had && queue != NULL)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_APPROVAL_QUEUE]);
  return queue;
}

/**
 * subagent_manager_set_approval_queue:
 * @self: a #SubagentManager
 * @queue: (nullable): the host's queue, or %NULL for the configured one
 *
 * Routes the approval requests of children started after this call to
 * @queue (whatever its parent run id), for a host that keeps its own.
 */
void
subagent_manager_set_approval_queue (SubagentManager       *self,
                                     SubagentApprovalQueue *queue)
{
  g_return_if_fail (SUBAGENT_IS_MANAGER (self));
  g_return_if_fail (queue == NULL || SUBAGENT_IS_APPROVAL_QUEUE (queue));

  _subagent_manager_drop_approval_queue (self);
  g_mutex_lock (&self->approval_lock);
  g_set_object (&self->approval_queue, queue);
  g_mutex_unlock (&self->approval_lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_APPROVAL_QUEUE]);
}

/**
 * subagent_manager_get_approval_sink:
 * @self: a #SubagentManager
 *
 * Gets the host's approval sink, if it gave one.
 *
 * Returns: (transfer none) (nullable): the host's approval sink, if it gave one
 *
 * Since: 0.2
 */
SubagentApprovalSink *
subagent_manager_get_approval_sink (SubagentManager *self)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  return self->approval_sink;
}

/**
 * subagent_manager_set_approval_sink:
 * @self: a #SubagentManager
 * @sink: (nullable): where the run's queue keeps its requests; %NULL for
 *   `approvals.sink` of `config.yaml`
 *
 * Sets the store of the queue the manager makes for its run. A queue the
 * manager made before is forgotten (requests waiting in it still get their
 * verdicts); a queue the host gave stays until it is unset.
 */
void
subagent_manager_set_approval_sink (SubagentManager      *self,
                                    SubagentApprovalSink *sink)
{
  gboolean had_queue;

  g_return_if_fail (SUBAGENT_IS_MANAGER (self));
  g_return_if_fail (sink == NULL || SUBAGENT_IS_APPROVAL_SINK (sink));

  g_mutex_lock (&self->approval_lock);
  had_queue = self->approval_queue != NULL && self->approval_queue_owned;
  g_mutex_unlock (&self->approval_lock);
  if (had_queue)
    _subagent_manager_drop_approval_queue (self);
  g_mutex_lock (&self->approval_lock);
  g_set_object (&self->approval_sink, sink);
  g_clear_error (&self->approval_error);
  g_mutex_unlock (&self->approval_lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_APPROVAL_SINK]);
  if (had_queue)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_APPROVAL_QUEUE]);
}

/**
 * subagent_manager_get_unattended:
 * @self: a #SubagentManager
 *
 * Gets whether children's approval requests are denied at once.
 *
 * Returns: whether children's approval requests are denied at once
 *
 * Since: 0.2
 */
gboolean
subagent_manager_get_unattended (SubagentManager *self)
{
  gboolean unattended;

  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), TRUE);

  g_mutex_lock (&self->approval_lock);
  unattended = self->approvals_unattended;
  g_mutex_unlock (&self->approval_lock);
  return unattended;
}

/**
 * subagent_manager_set_unattended:
 * @self: a #SubagentManager
 * @unattended: %TRUE when nobody can answer children's approval requests
 *
 * Marks children started after this call unattended (or not): an
 * unattended child's calls that need an approval are denied at once, with
 * the reason %SUBAGENT_APPROVAL_UNATTENDED_REASON, instead of waiting.
 */
void
subagent_manager_set_unattended (SubagentManager *self,
                                 gboolean         unattended)
{
  gboolean changed;

  g_return_if_fail (SUBAGENT_IS_MANAGER (self));

  g_mutex_lock (&self->approval_lock);
  changed = self->approvals_unattended != !!unattended;
  self->approvals_unattended = !!unattended;
  g_mutex_unlock (&self->approval_lock);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_UNATTENDED]);
}
