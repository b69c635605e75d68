/* subagent-isolation-request.c: what a provider is asked to prepare.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-json-private.h"

/**
 * SubagentIsolationRequest:
 *
 * What a [iface@IsolationProvider] is asked to prepare: the parent's root,
 * the isolation mode, a session key naming the workspace, the run it is for,
 * resource limits and backend options.
 *
 * A request is immutable. Its constructor checks nothing beyond types: the
 * provider that reads a field validates it.
 */
struct _SubagentIsolationRequest
{
  GObject parent_instance;

  char *parent_root;
  char *isolation;
  char *session_key;
  char *parent_run_id;
  char *def_name;
  double cpu_quota;
  char *memory_limit;
  JsonObject *options;
  GStrv exclude;
  SubagentExcludeSet *exclude_set;   /* compiled on first use */
  GMutex lock;
};

G_DEFINE_FINAL_TYPE (SubagentIsolationRequest, subagent_isolation_request, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PARENT_ROOT,
  PROP_ISOLATION,
  PROP_SESSION_KEY,
  PROP_PARENT_RUN_ID,
  PROP_DEF_NAME,
  PROP_CPU_QUOTA,
  PROP_MEMORY_LIMIT,
  PROP_OPTIONS,
  PROP_EXCLUDE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
subagent_isolation_request_constructed (GObject *object)
{
  SubagentIsolationRequest *self = SUBAGENT_ISOLATION_REQUEST (object);

  G_OBJECT_CLASS (subagent_isolation_request_parent_class)->constructed (object);

  if (self->options == NULL)
    {
      self->options = json_object_new ();
      json_object_seal (self->options);
    }
}

static void
subagent_isolation_request_finalize (GObject *object)
{
  SubagentIsolationRequest *self = SUBAGENT_ISOLATION_REQUEST (object);

  g_clear_pointer (&self->parent_root, g_free);
  g_clear_pointer (&self->isolation, g_free);
  g_clear_pointer (&self->session_key, g_free);
  g_clear_pointer (&self->parent_run_id, g_free);
  g_clear_pointer (&self->def_name, g_free);
  g_clear_pointer (&self->memory_limit, g_free);
  g_clear_pointer (&self->options, json_object_unref);
  g_clear_pointer (&self->exclude, g_strfreev);
  g_clear_pointer (&self->exclude_set, subagent_exclude_set_unref);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (subagent_isolation_request_parent_class)->finalize (object);
}

static void
subagent_isolation_request_get_property (GObject    *object,
                                         guint       prop_id,
                                         GValue     *value,
                                         GParamSpec *pspec)
{
  SubagentIsolationRequest *self = SUBAGENT_ISOLATION_REQUEST (object);

  switch (prop_id)
    {
    case PROP_PARENT_ROOT:
      g_value_set_string (value, self->parent_root);
      break;
    case PROP_ISOLATION:
      g_value_set_string (value, self->isolation);
      break;
    case PROP_SESSION_KEY:
      g_value_set_string (value, self->session_key);
      break;
    case PROP_PARENT_RUN_ID:
      g_value_set_string (value, self->parent_run_id);
      break;
    case PROP_DEF_NAME:
      g_value_set_string (value, self->def_name);
      break;
    case PROP_CPU_QUOTA:
      g_value_set_double (value, self->cpu_quota);
      break;
    case PROP_MEMORY_LIMIT:
      g_value_set_string (value, self->memory_limit);
      break;
    case PROP_OPTIONS:
      g_value_set_boxed (value, self->options);
      break;
    case PROP_EXCLUDE:
      g_value_set_boxed (value, self->exclude);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_isolation_request_set_property (GObject      *object,
                                         guint         prop_id,
                                         const GValue *value,
                                         GParamSpec   *pspec)
{
  SubagentIsolationRequest *self = SUBAGENT_ISOLATION_REQUEST (object);

  switch (prop_id)
    {
    case PROP_PARENT_ROOT:
      self->parent_root = g_value_dup_string (value);
      break;
    case PROP_ISOLATION:
      self->isolation = g_value_dup_string (value);
      break;
    case PROP_SESSION_KEY:
      self->session_key = g_value_dup_string (value);
      break;
    case PROP_PARENT_RUN_ID:
      self->parent_run_id = g_value_dup_string (value);
      break;
    case PROP_DEF_NAME:
      self->def_name = g_value_dup_string (value);
      break;
    case PROP_CPU_QUOTA:
      self->cpu_quota = g_value_get_double (value);
      break;
    case PROP_MEMORY_LIMIT:
      self->memory_limit = g_value_dup_string (value);
      break;
    case PROP_OPTIONS:
      {
        JsonObject *options = g_value_get_boxed (value);
        self->options = options ? subagent_json_object_sealed_copy (options) : NULL;
      }
      break;
    case PROP_EXCLUDE:
      self->exclude = g_value_dup_boxed (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_isolation_request_class_init (SubagentIsolationRequestClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->constructed = subagent_isolation_request_constructed;
  object_class->finalize = subagent_isolation_request_finalize;
  object_class->get_property = subagent_isolation_request_get_property;
  object_class->set_property = subagent_isolation_request_set_property;

  /**
   * SubagentIsolationRequest:parent-root:
   *
   * The parent's workspace root the isolation derives from.
   */
  properties[PROP_PARENT_ROOT] = g_param_spec_string ("parent-root", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationRequest:isolation:
   *
   * The isolation mode asked for, as given (see subagent_isolation_normalize()).
   */
  properties[PROP_ISOLATION] = g_param_spec_string ("isolation", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationRequest:session-key:
   *
   * The key naming the workspace, unique within the parent run (see
   * subagent_isolation_new_session_key()). Providers that build paths or
   * names from it check it with subagent_isolation_session_key_is_valid().
   */
  properties[PROP_SESSION_KEY] = g_param_spec_string ("session-key", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationRequest:parent-run-id:
   *
   * The id of the parent run, for labels and logs.
   */
  properties[PROP_PARENT_RUN_ID] = g_param_spec_string ("parent-run-id", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationRequest:def-name:
   *
   * The name of the child's definition, for labels and logs.
   */
  properties[PROP_DEF_NAME] = g_param_spec_string ("def-name", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationRequest:cpu-quota:
   *
   * The CPU quota in cores; 0 for none.
   */
  properties[PROP_CPU_QUOTA] = g_param_spec_double ("cpu-quota", NULL, NULL, 0.0, G_MAXDOUBLE, 0.0, flags);

  /**
   * SubagentIsolationRequest:memory-limit:
   *
   * The memory limit as the backend spells it (such as `512m`); %NULL for none.
   */
  properties[PROP_MEMORY_LIMIT] = g_param_spec_string ("memory-limit", NULL, NULL, NULL, flags);

  /**
   * SubagentIsolationRequest:options:
   *
   * Backend options. The request keeps a sealed copy of the object it is
   * given; an empty object when none was given.
   */
  properties[PROP_OPTIONS] = g_param_spec_boxed ("options", NULL, NULL, JSON_TYPE_OBJECT, flags);

  /**
   * SubagentIsolationRequest:exclude:
   *
   * The patterns of files a copied workspace leaves out (config
   * `exclude:`, see subagent_secret_path_is_excluded()); %NULL for
   * subagent_secret_exclude_defaults(), an empty array for none.
   *
   * Since: 0.2
   */
  properties[PROP_EXCLUDE] = g_param_spec_boxed ("exclude", NULL, NULL, G_TYPE_STRV, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_isolation_request_init (SubagentIsolationRequest *self)
{
  g_mutex_init (&self->lock);
}

/**
 * subagent_isolation_request_new:
 * @parent_root: the parent's workspace root
 * @isolation: the isolation mode
 * @session_key: (nullable): the key naming the workspace
 *
 * Creates a request with no limits and no options. Use g_object_new() and
 * the construct-only properties to set the others.
 *
 * Returns: (transfer full): a new #SubagentIsolationRequest
 */
SubagentIsolationRequest *
subagent_isolation_request_new (const char *parent_root,
                                const char *isolation,
                                const char *session_key)
{
  return g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST,
                       "parent-root", parent_root,
                       "isolation", isolation,
                       "session-key", session_key,
                       NULL);
}

/**
 * subagent_isolation_request_get_parent_root:
 * @self: a #SubagentIsolationRequest
 *
 * Gets the parent's workspace root.
 *
 * Returns: (nullable): the parent's workspace root
 *
 * Since: 0.2
 */
const char *
subagent_isolation_request_get_parent_root (SubagentIsolationRequest *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), NULL);
  return self->parent_root;
}

/**
 * subagent_isolation_request_get_isolation:
 * @self: a #SubagentIsolationRequest
 *
 * Gets the isolation mode, as given.
 *
 * Returns: (nullable): the isolation mode, as given
 *
 * Since: 0.2
 */
const char *
subagent_isolation_request_get_isolation (SubagentIsolationRequest *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), NULL);
  return self->isolation;
}

/**
 * subagent_isolation_request_get_session_key:
 * @self: a #SubagentIsolationRequest
 *
 * Gets the session key.
 *
 * Returns: (nullable): the session key
 *
 * Since: 0.2
 */
const char *
subagent_isolation_request_get_session_key (SubagentIsolationRequest *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), NULL);
  return self->session_key;
}

/**
 * subagent_isolation_request_get_parent_run_id:
 * @self: a #SubagentIsolationRequest
 *
 * Gets the parent run's id.
 *
 * Returns: (nullable): the parent run's id
 *
 * Since: 0.2
 */
const char *
subagent_isolation_request_get_parent_run_id (SubagentIsolationRequest *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), NULL);
  return self->parent_run_id;
}

/**
 * subagent_isolation_request_get_def_name:
 * @self: a #SubagentIsolationRequest
 *
 * Gets the child definition's name.
 *
 * Returns: (nullable): the child definition's name
 *
 * Since: 0.2
 */
const char *
subagent_isolation_request_get_def_name (SubagentIsolationRequest *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), NULL);
  return self->def_name;
}

/**
 * subagent_isolation_request_get_cpu_quota:
 * @self: a #SubagentIsolationRequest
 *
 * Gets the CPU quota in cores, 0 for none.
 *
 * Returns: the CPU quota in cores, 0 for none
 *
 * Since: 0.2
 */
double
subagent_isolation_request_get_cpu_quota (SubagentIsolationRequest *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), 0.0);
  return self->cpu_quota;
}

/**
 * subagent_isolation_request_get_memory_limit:
 * @self: a #SubagentIsolationRequest
 *
 * Gets the memory limit, %NULL for none.
 *
 * Returns: (nullable): the memory limit, %NULL for none
 *
 * Since: 0.2
 */
const char *
subagent_isolation_request_get_memory_limit (SubagentIsolationRequest *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), NULL);
  return self->memory_limit;
}

/**
 * subagent_isolation_request_get_options:
 * @self: a #SubagentIsolationRequest
 *
 * Gets the sealed backend options object, possibly empty.
 *
 * Returns: (transfer none): the sealed backend options object, possibly empty
 *
 * Since: 0.2
 */
JsonObject *
subagent_isolation_request_get_options (SubagentIsolationRequest *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), NULL);
  return self->options;
}

static JsonNode *
option_value (SubagentIsolationRequest *self,
              const char               *key)
{
  JsonNode *node = json_object_get_member (self->options, key);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return NULL;
  return node;
}

/**
 * subagent_isolation_request_get_option_string:
 * @self: a #SubagentIsolationRequest
 * @key: the option's name
 * @default_value: (nullable): what to return when the option is absent or not a string
 *
 * Gets the option's string value, or @default_value.
 *
 * Returns: (nullable): the option's string value, or @default_value
 *
 * Since: 0.2
 */
const char *
subagent_isolation_request_get_option_string (SubagentIsolationRequest *self,
                                              const char               *key,
                                              const char               *default_value)
{
  JsonNode *node;

  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), default_value);
  g_return_val_if_fail (key != NULL, default_value);

  node = option_value (self, key);
  if (node == NULL || json_node_get_value_type (node) != G_TYPE_STRING)
    return default_value;
  return json_node_get_string (node);
}

/**
 * subagent_isolation_request_get_option_boolean:
 * @self: a #SubagentIsolationRequest
 * @key: the option's name
 * @default_value: what to return when the option is absent or not a boolean
 *
 * Gets the option's boolean value, or @default_value.
 *
 * Returns: the option's boolean value, or @default_value
 *
 * Since: 0.2
 */
gboolean
subagent_isolation_request_get_option_boolean (SubagentIsolationRequest *self,
                                               const char               *key,
                                               gboolean                  default_value)
{
  JsonNode *node;

  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), default_value);
  g_return_val_if_fail (key != NULL, default_value);

  node = option_value (self, key);
  if (node == NULL || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return default_value;
  return json_node_get_boolean (node);
}

/**
 * subagent_isolation_request_get_option_int:
 * @self: a #SubagentIsolationRequest
 * @key: the option's name
 * @default_value: what to return when the option is absent or not an integer
 *
 * A double with no fractional part (as JSON writers sometimes produce)
 * counts as an integer.
 *
 * Returns: the option's integer value, or @default_value
 */
gint64
subagent_isolation_request_get_option_int (SubagentIsolationRequest *self,
                                           const char               *key,
                                           gint64                    default_value)
{
  JsonNode *node;
  double d;

  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), default_value);
  g_return_val_if_fail (key != NULL, default_value);

  node = option_value (self, key);
  if (node == NULL)
    return default_value;
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    return json_node_get_int (node);
  if (json_node_get_value_type (node) != G_TYPE_DOUBLE)
    return default_value;
  d = json_node_get_double (node);
  /* Range first: casting an out-of-range double is undefined. */
  if (!(d >= (double) G_MININT64 && d < (double) G_MAXINT64) || d != (double) (gint64) d)
    return default_value;
  return (gint64) d;
}

/**
 * subagent_isolation_request_get_exclude:
 * @self: a #SubagentIsolationRequest
 *
 * The patterns of files a copied workspace (a snapshot, a container's
 * `/workspace`) leaves out: the #SubagentIsolationRequest:exclude property,
 * which the manager fills from the config's `exclude:`, or
 * subagent_secret_exclude_defaults() when it was not set.
 *
 * Returns: (transfer none) (array zero-terminated=1): the patterns
 *
 * Since: 0.2
 */
const char * const *
subagent_isolation_request_get_exclude (SubagentIsolationRequest *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), NULL);
  return self->exclude != NULL ? (const char * const *) self->exclude : subagent_secret_exclude_defaults ();
}

/**
 * subagent_isolation_request_get_exclude_set:
 * @self: a #SubagentIsolationRequest
 *
 * subagent_isolation_request_get_exclude() compiled, once per request.
 *
 * Returns: (transfer none): the compiled patterns
 *
 * Since: 0.2
 */
SubagentExcludeSet *
subagent_isolation_request_get_exclude_set (SubagentIsolationRequest *self)
{
  SubagentExcludeSet *set;

  g_return_val_if_fail (SUBAGENT_IS_ISOLATION_REQUEST (self), NULL);
  g_mutex_lock (&self->lock);
  if (self->exclude_set == NULL)
    self->exclude_set = subagent_exclude_set_new (subagent_isolation_request_get_exclude (self));
  set = self->exclude_set;
  g_mutex_unlock (&self->lock);
  return set;
}
