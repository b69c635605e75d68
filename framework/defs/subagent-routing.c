/* subagent-routing.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-config-private.h"

/**
 * SubagentRoutingPolicy:
 *
 * Which backend `isolation: auto` picks for a run with a skill or a risk
 * level, and with which limits: for each #SubagentRiskLevel an ordered list
 * of backend names (as installed plugins provide them, so any future
 * backend can be listed) tried in turn, plus a cpu quota, a memory limit, a
 * process limit, a network mode, a confinement and a permission-mode
 * ceiling. `config.yaml`'s `routing:` section:
 *
 * ```yaml
 * routing:
 *   strict: false          # true: an unavailable first choice is an error
 *   low:      { backends: [directory-snapshot] }
 *   medium:   { backends: [docker, directory-snapshot] }
 *   high:     { backends: [docker], cpu: 1, memory: 512MiB, network: none }
 *   critical: { backends: [docker], cpu: 0.5, memory: 256MiB, network: none,
 *               permission_ceiling: read-only }
 * ```
 *
 * That is also the default (reference 001's routing). A level given in the
 * file replaces that level's default as a whole; `pids` and `confinement`
 * are further keys of a level. The limits are ceilings: a run that asks for
 * less keeps its own. Immutable.
 *
 * Since: 0.2
 */

#define N_LEVELS (SUBAGENT_RISK_LEVEL_CRITICAL + 1)

typedef struct {
  GStrv backends;
  double cpu_quota;
  char *memory_limit;
  guint pids_limit;
  char *network;
  char *confinement;
  SubagentPermissionMode permission_ceiling;
} Rule;

struct _SubagentRoutingPolicy
{
  GObject parent_instance;

  gboolean strict;
  Rule rules[N_LEVELS];
};

G_DEFINE_FINAL_TYPE (SubagentRoutingPolicy, subagent_routing_policy, G_TYPE_OBJECT)

static void
rule_clear (Rule *rule)
{
  g_clear_pointer (&rule->backends, g_strfreev);
  g_clear_pointer (&rule->memory_limit, g_free);
  g_clear_pointer (&rule->network, g_free);
  g_clear_pointer (&rule->confinement, g_free);
  memset (rule, 0, sizeof *rule);
}

static void
subagent_routing_policy_finalize (GObject *object)
{
  SubagentRoutingPolicy *self = SUBAGENT_ROUTING_POLICY (object);

  for (guint i = 0; i < N_LEVELS; i++)
    rule_clear (&self->rules[i]);
  G_OBJECT_CLASS (subagent_routing_policy_parent_class)->finalize (object);
}

static void
subagent_routing_policy_class_init (SubagentRoutingPolicyClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_routing_policy_finalize;
}

static void
set_rule (Rule       *rule,
          const char *backends,
          double      cpu,
          const char *memory,
          const char *network,
          SubagentPermissionMode ceiling)
{
  rule_clear (rule);
  rule->backends = g_strsplit (backends, " ", -1);
  rule->cpu_quota = cpu;
  rule->memory_limit = g_strdup (memory);
  rule->network = g_strdup (network);
  rule->permission_ceiling = ceiling;
}

static void
subagent_routing_policy_init (SubagentRoutingPolicy *self)
{
  /* Reference 001: low → the fast copy; medium → a container, else the
   * copy; high and critical → a container with tighter limits. */
  set_rule (&self->rules[SUBAGENT_RISK_LEVEL_LOW], "directory-snapshot", 0, NULL, NULL,
            SUBAGENT_PERMISSION_MODE_INHERIT);
  set_rule (&self->rules[SUBAGENT_RISK_LEVEL_MEDIUM], "docker directory-snapshot", 0, NULL, NULL,
            SUBAGENT_PERMISSION_MODE_INHERIT);
  set_rule (&self->rules[SUBAGENT_RISK_LEVEL_HIGH], "docker", 1.0, "512m", "none",
            SUBAGENT_PERMISSION_MODE_INHERIT);
  set_rule (&self->rules[SUBAGENT_RISK_LEVEL_CRITICAL], "docker", 0.5, "256m", "none",
            SUBAGENT_PERMISSION_MODE_READ_ONLY);
  /* No level: the policy is not asked; kept empty. */
  self->rules[SUBAGENT_RISK_LEVEL_NONE].backends = g_new0 (char *, 1);
}

/**
 * subagent_routing_policy_new_default:
 *
 * Makes the default policy.
 *
 * Returns: (transfer full): the reference policy (see #SubagentRoutingPolicy)
 *
 * Since: 0.2
 */
SubagentRoutingPolicy *
subagent_routing_policy_new_default (void)
{
  return g_object_new (SUBAGENT_TYPE_ROUTING_POLICY, NULL);
}

/* Docker's notation, which every backend that takes a memory limit reads. */
static char *
memory_text (guint64 bytes)
{
  if (bytes % (1024 * 1024) == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT "m", bytes / (1024 * 1024));
  return g_strdup_printf ("%" G_GUINT64_FORMAT "b", bytes);
}

static gboolean
read_rule (JsonObject  *object,
           const char  *level_name,
           const char  *source,
           Rule        *rule,
           GError     **error)
{
  static const char * const known[] = {
    "backends", "cpu", "memory", "pids", "network", "confinement", "permission_ceiling", NULL
  };
  g_autoptr(GList) members = json_object_get_members (object);
  g_autofree char *key = NULL;
  g_autoptr(GStrvBuilder) backends = g_strv_builder_new ();
  JsonNode *node;

  rule_clear (rule);
  for (GList *l = members; l != NULL; l = l->next)
    if (!g_strv_contains (known, l->data))
      {
        key = g_strdup_printf ("routing.%s.%s", level_name, (const char *) l->data);
        return _subagent_config_invalid (error, source, key,
                        "absent: a level takes backends, cpu, memory, pids, network, confinement, permission_ceiling");
      }

  g_free (key);
  key = g_strdup_printf ("routing.%s.backends", level_name);
  node = json_object_get_member (object, "backends");
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node) || json_array_get_length (json_node_get_array (node)) == 0)
    return _subagent_config_invalid (error, source, key, "a non-empty list of backend names, tried in order");
  for (guint i = 0; i < json_array_get_length (json_node_get_array (node)); i++)
    {
      JsonNode *item = json_array_get_element (json_node_get_array (node), i);

      if (!JSON_NODE_HOLDS_VALUE (item) || json_node_get_value_type (item) != G_TYPE_STRING ||
          *json_node_get_string (item) == '\0' || g_str_equal (json_node_get_string (item), "auto"))
        return _subagent_config_invalid (error, source, key, "a list of backend names (not auto)");
      g_strv_builder_add (backends, json_node_get_string (item));
    }
  rule->backends = g_strv_builder_end (backends);

  if ((node = json_object_get_member (object, "cpu")) != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      g_free (key);
      key = g_strdup_printf ("routing.%s.cpu", level_name);
      if (!JSON_NODE_HOLDS_VALUE (node) ||
          (json_node_get_value_type (node) != G_TYPE_INT64 && json_node_get_value_type (node) != G_TYPE_DOUBLE) ||
          json_node_get_double (node) <= 0)
        return _subagent_config_invalid (error, source, key, "a number of CPUs above 0, such as 0.5");
      rule->cpu_quota = json_node_get_double (node);
    }
  if ((node = json_object_get_member (object, "memory")) != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      guint64 bytes = 0;

      g_free (key);
      key = g_strdup_printf ("routing.%s.memory", level_name);
      if (!_subagent_config_parse_size (node, &bytes) || bytes == 0)
        return _subagent_config_invalid (error, source, key, "a size such as 512MiB or 268435456");
      rule->memory_limit = memory_text (bytes);
    }
  if ((node = json_object_get_member (object, "pids")) != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      g_free (key);
      key = g_strdup_printf ("routing.%s.pids", level_name);
      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64 ||
          json_node_get_int (node) < 0 || json_node_get_int (node) > G_MAXUINT)
        return _subagent_config_invalid (error, source, key, "a number of processes (0: no limit)");
      rule->pids_limit = (guint) json_node_get_int (node);
    }
  for (guint i = 0; i < 2; i++)
    {
      const char *name = i == 0 ? "network" : "confinement";
      char **out = i == 0 ? &rule->network : &rule->confinement;

      if ((node = json_object_get_member (object, name)) == NULL || JSON_NODE_HOLDS_NULL (node))
        continue;
      g_free (key);
      key = g_strdup_printf ("routing.%s.%s", level_name, name);
      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
        return _subagent_config_invalid (error, source, key, "a string");
      *out = g_strdup (json_node_get_string (node));
    }
  if ((node = json_object_get_member (object, "permission_ceiling")) != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      g_free (key);
      key = g_strdup_printf ("routing.%s.permission_ceiling", level_name);
      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING ||
          !subagent_permission_mode_from_string (json_node_get_string (node), &rule->permission_ceiling))
        return _subagent_config_invalid (error, source, key,
                                         "a permission mode: read-only, prompt, workspace-write, allow");
    }
  return TRUE;
}

/**
 * subagent_routing_policy_new_from_json:
 * @object: the `routing` section of a configuration
 * @source: (nullable): where it came from, for messages
 * @error: return location for a #GError
 *
 * Reads a policy: the default, with each level @object gives replaced.
 * Unknown keys and bad values are %SUBAGENT_CONFIG_ERROR_INVALID_VALUE
 * errors naming the key. Backend names are not checked here: a name no
 * plugin provides is skipped (with its reason) when a run is routed.
 *
 * Returns: (transfer full) (nullable): the policy, or %NULL with @error set
 *
 * Since: 0.2
 */
SubagentRoutingPolicy *
subagent_routing_policy_new_from_json (JsonObject  *object,
                                       const char  *source,
                                       GError     **error)
{
  g_autoptr(SubagentRoutingPolicy) self = subagent_routing_policy_new_default ();
  g_autoptr(GList) members = NULL;

  g_return_val_if_fail (object != NULL, NULL);

  source = source ? source : "configuration";
  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    {
      const char *name = l->data;
      JsonNode *node = json_object_get_member (object, name);
      SubagentRiskLevel level;

      if (g_str_equal (name, "strict"))
        {
          if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
            return _subagent_config_invalid (error, source, "routing.strict", "true or false"), NULL;
          self->strict = json_node_get_boolean (node);
          continue;
        }
      if (!subagent_risk_level_from_string (name, &level) || level == SUBAGENT_RISK_LEVEL_NONE)
        {
          g_autofree char *key = g_strdup_printf ("routing.%s", name);

          return _subagent_config_invalid (error, source, key,
                                           "absent: routing takes strict, low, medium, high and critical"), NULL;
        }
      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          g_autofree char *key = g_strdup_printf ("routing.%s", name);

          return _subagent_config_invalid (error, source, key, "a mapping with backends and limits"), NULL;
        }
      if (!read_rule (json_node_get_object (node), subagent_risk_level_to_string (level), source,
                      &self->rules[level], error))
        return NULL;
    }
  return g_steal_pointer (&self);
}

static const Rule *
rule_of (SubagentRoutingPolicy *self,
         SubagentRiskLevel      level)
{
  return &self->rules[MIN ((guint) level, N_LEVELS - 1)];
}

/**
 * subagent_routing_policy_get_strict:
 * @self: a #SubagentRoutingPolicy
 *
 * Tells whether an unavailable first choice is an error rather than a fallback to the next backend.
 *
 * Returns: whether an unavailable first choice is an error rather than a
 *   fallback to the next backend
 *
 * Since: 0.2
 */
gboolean
subagent_routing_policy_get_strict (SubagentRoutingPolicy *self)
{
  g_return_val_if_fail (SUBAGENT_IS_ROUTING_POLICY (self), FALSE);
  return self->strict;
}

/**
 * subagent_routing_policy_get_backends:
 * @self: a #SubagentRoutingPolicy
 * @level: a risk level
 *
 * Gets the backends to try for @level, in order.
 *
 * Returns: (transfer none) (array zero-terminated=1): the backends to try
 *   for @level, in order (empty for %SUBAGENT_RISK_LEVEL_NONE)
 *
 * Since: 0.2
 */
const char * const *
subagent_routing_policy_get_backends (SubagentRoutingPolicy *self,
                                      SubagentRiskLevel      level)
{
  g_return_val_if_fail (SUBAGENT_IS_ROUTING_POLICY (self), NULL);
  return (const char * const *) rule_of (self, level)->backends;
}

/**
 * subagent_routing_policy_get_cpu_quota:
 * @self: a #SubagentRoutingPolicy
 * @level: a risk level
 *
 * Gets the most CPUs a run of @level gets.
 *
 * Returns: the most CPUs a run of @level gets, or 0 for no limit
 *
 * Since: 0.2
 */
double
subagent_routing_policy_get_cpu_quota (SubagentRoutingPolicy *self,
                                       SubagentRiskLevel      level)
{
  g_return_val_if_fail (SUBAGENT_IS_ROUTING_POLICY (self), 0);
  return rule_of (self, level)->cpu_quota;
}

/**
 * subagent_routing_policy_get_memory_limit:
 * @self: a #SubagentRoutingPolicy
 * @level: a risk level
 *
 * Gets the memory limit of @level in docker's notation.
 *
 * Returns: (transfer none) (nullable): the memory limit of @level in
 *   docker's notation (`512m`), or %NULL
 *
 * Since: 0.2
 */
const char *
subagent_routing_policy_get_memory_limit (SubagentRoutingPolicy *self,
                                          SubagentRiskLevel      level)
{
  g_return_val_if_fail (SUBAGENT_IS_ROUTING_POLICY (self), NULL);
  return rule_of (self, level)->memory_limit;
}

/**
 * subagent_routing_policy_get_pids_limit:
 * @self: a #SubagentRoutingPolicy
 * @level: a risk level
 *
 * Gets the process limit of @level.
 *
 * Returns: the process limit of @level (the backend option `pids_limit`),
 *   or 0 to leave the backend's own
 *
 * Since: 0.2
 */
guint
subagent_routing_policy_get_pids_limit (SubagentRoutingPolicy *self,
                                        SubagentRiskLevel      level)
{
  g_return_val_if_fail (SUBAGENT_IS_ROUTING_POLICY (self), 0);
  return rule_of (self, level)->pids_limit;
}

/**
 * subagent_routing_policy_get_network:
 * @self: a #SubagentRoutingPolicy
 * @level: a risk level
 *
 * Gets the network mode of @level.
 *
 * Returns: (transfer none) (nullable): the network mode of @level (the
 *   backend option `network`, such as `none`), or %NULL
 *
 * Since: 0.2
 */
const char *
subagent_routing_policy_get_network (SubagentRoutingPolicy *self,
                                     SubagentRiskLevel      level)
{
  g_return_val_if_fail (SUBAGENT_IS_ROUTING_POLICY (self), NULL);
  return rule_of (self, level)->network;
}

/**
 * subagent_routing_policy_get_confinement:
 * @self: a #SubagentRoutingPolicy
 * @level: a risk level
 *
 * Gets the confinement of @level.
 *
 * Returns: (transfer none) (nullable): the confinement of @level (the
 *   backend option `confinement`), or %NULL
 *
 * Since: 0.2
 */
const char *
subagent_routing_policy_get_confinement (SubagentRoutingPolicy *self,
                                         SubagentRiskLevel      level)
{
  g_return_val_if_fail (SUBAGENT_IS_ROUTING_POLICY (self), NULL);
  return rule_of (self, level)->confinement;
}

/**
 * subagent_routing_policy_get_permission_ceiling:
 * @self: a #SubagentRoutingPolicy
 * @level: a risk level
 *
 * Gets the loosest permission mode a child of @level may have.
 *
 * Returns: the loosest permission mode a child of @level may have, or
 *   %SUBAGENT_PERMISSION_MODE_INHERIT for no ceiling
 *
 * Since: 0.2
 */
SubagentPermissionMode
subagent_routing_policy_get_permission_ceiling (SubagentRoutingPolicy *self,
                                                SubagentRiskLevel      level)
{
  g_return_val_if_fail (SUBAGENT_IS_ROUTING_POLICY (self), SUBAGENT_PERMISSION_MODE_INHERIT);
  return rule_of (self, level)->permission_ceiling;
}
