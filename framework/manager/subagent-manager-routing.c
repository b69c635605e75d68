/* subagent-manager-routing.c: `isolation: auto` through the risk policy.
 *
 * The policy lists backends by the names installed plugins provide; each
 * is tried in turn: not installed (no plugin provides it, or it fails to
 * load) and not available (is_available() says why, such as no engine)
 * both fall back to the next one, unless routing.strict makes the first
 * choice's failure an error. The note of the choice goes to the result's
 * message, the lineage and the audit record.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-manager-private.h"

char *
_subagent_manager_route (SubagentManager    *self,
                         SubagentRiskLevel   level,
                         char              **out_note,
                         GError            **error)
{
  SubagentRoutingPolicy *policy = subagent_config_get_routing_policy (self->config);
  const char * const *backends = subagent_routing_policy_get_backends (policy, level);
  const char *level_name = subagent_risk_level_to_string (level);
  g_autoptr(GString) skipped = g_string_new (NULL);
  /* The registry's live list (descriptors only, no module opened). */
  g_auto(GStrv) installed = subagent_plugin_registry_list_isolation_modes (self->plugins);

  for (guint i = 0; backends != NULL && backends[i] != NULL; i++)
    {
      g_autoptr(SubagentIsolationProvider) provider = NULL;
      g_autoptr(GError) local_error = NULL;
      g_autofree char *why = NULL;

      if (!g_strv_contains ((const char * const *) installed, backends[i]) ||
          g_str_equal (backends[i], SUBAGENT_ISOLATION_AUTO))
        why = g_strdup_printf ("%s not installed (no plugin in the search path provides it)", backends[i]);
      else if ((provider = _subagent_manager_isolation_provider_for (self, backends[i], &local_error)) == NULL)
        why = g_strdup_printf ("%s not installed (%s)", backends[i], local_error->message);
      else if (!subagent_isolation_provider_is_available (provider, &local_error))
        why = g_strdup_printf ("%s unavailable (%s)", backends[i],
                               local_error ? local_error->message : "its provider says so");
      if (why == NULL)
        {
          if (skipped->len == 0)
            *out_note = g_strdup_printf ("%s risk: %s", level_name, backends[i]);
          else
            *out_note = g_strdup_printf ("%s risk: %s, used %s", level_name, skipped->str, backends[i]);
          return g_strdup (backends[i]);
        }
      if (subagent_routing_policy_get_strict (policy))
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                       "%s risk: %s; routing.strict is set, so no other backend is tried", level_name, why);
          return NULL;
        }
      g_string_append_printf (skipped, "%s%s", skipped->len ? "; " : "", why);
    }
  g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
               "%s risk: no backend of routing.%s can run the child: %s", level_name, level_name,
               skipped->len ? skipped->str : "the list is empty");
  return NULL;
}

gboolean
_subagent_manager_resolve_skill (SubagentManager     *self,
                                 SubagentRunOptions  *options,
                                 SubagentSkill      **out_skill,
                                 SubagentRiskLevel   *out_risk,
                                 GError             **error)
{
  const char *path = options ? subagent_run_options_get_skill_path (options) : NULL;
  g_autoptr(SubagentSkill) skill = NULL;
  SubagentRiskLevel risk = options ? subagent_run_options_get_risk_level (options) : SUBAGENT_RISK_LEVEL_NONE;

  /* One small file under the root (refused outside it). */
  if (path != NULL && (skill = subagent_skill_load (self->root, path, error)) == NULL)
    return FALSE;
  /* The caller's risk wins over the skill's; a skill that names none is
   * taken as medium (see docs/architecture.md, "Routing"). */
  if (risk == SUBAGENT_RISK_LEVEL_NONE && skill != NULL)
    risk = subagent_skill_get_risk_level (skill);
  if (risk == SUBAGENT_RISK_LEVEL_NONE && skill != NULL)
    risk = SUBAGENT_RISK_LEVEL_MEDIUM;
  *out_skill = g_steal_pointer (&skill);
  *out_risk = risk;
  return TRUE;
}

typedef struct {
  char *backend;
  char *note;
} Route;

static void
route_free (Route *route)
{
  g_free (route->backend);
  g_free (route->note);
  g_free (route);
}

static void
route_thread (GTask        *task,
              gpointer      source,
              gpointer      task_data,
              GCancellable *cancellable)
{
  Route *route = g_new0 (Route, 1);
  GError *error = NULL;

  route->backend = _subagent_manager_route (source, GPOINTER_TO_INT (task_data), &route->note, &error);
  if (route->backend == NULL)
    {
      route_free (route);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, route, (GDestroyNotify) route_free);
}

void
_subagent_manager_route_async (SubagentManager     *self,
                               SubagentRiskLevel    level,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  /* The routing itself is quick; a cancelled run is refused later. */
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_source_tag (task, _subagent_manager_route_async);
  g_task_set_task_data (task, GINT_TO_POINTER (level), NULL);
  g_task_run_in_thread (task, route_thread);
}

char *
_subagent_manager_route_finish (SubagentManager  *self,
                                GAsyncResult     *result,
                                char            **out_note,
                                GError          **error)
{
  Route *route = g_task_propagate_pointer (G_TASK (result), error);
  char *backend;

  if (route == NULL)
    return NULL;
  backend = g_steal_pointer (&route->backend);
  *out_note = g_steal_pointer (&route->note);
  route_free (route);
  return backend;
}

/* Whether the plugin serving @backend declares option @key: the policy's
 * options go only where they mean something. */
static gboolean
backend_declares (SubagentManager *self,
                  const char      *backend,
                  const char      *key)
{
  const char *pin = subagent_config_get_plugin_for_backend (self->config, backend);
  g_autoptr(SubagentPluginInfo) info = NULL;
  g_autoptr(GPtrArray) options = NULL;

  info = pin ? subagent_plugin_registry_find_plugin (self->plugins, pin, NULL)
             : subagent_plugin_registry_find_for_backend (self->plugins, SUBAGENT_TYPE_ISOLATION_PROVIDER,
                                                          backend, NULL);
  if (info == NULL)
    return FALSE;
  options = subagent_plugin_info_get_options (info);
  for (guint i = 0; i < options->len; i++)
    if (g_str_equal (subagent_plugin_option_get_name (options->pdata[i]), key))
      return TRUE;
  return FALSE;
}

SubagentPermissionMode
_subagent_manager_apply_risk_limits (SubagentManager    *self,
                                     const char         *backend,
                                     SubagentRiskLevel   level,
                                     double             *cpu_quota,
                                     char              **memory_limit,
                                     JsonObject         *isolation_options)
{
  SubagentRoutingPolicy *policy = subagent_config_get_routing_policy (self->config);
  double cpu = subagent_routing_policy_get_cpu_quota (policy, level);
  const char *memory = subagent_routing_policy_get_memory_limit (policy, level);
  guint pids = subagent_routing_policy_get_pids_limit (policy, level);
  const char *network = subagent_routing_policy_get_network (policy, level);
  const char *confinement = subagent_routing_policy_get_confinement (policy, level);

  if (cpu > 0 && (*cpu_quota <= 0 || cpu < *cpu_quota))
    *cpu_quota = cpu;
  if (memory != NULL && (*memory_limit == NULL || _subagent_memory_limit_is_below (memory, *memory_limit)))
    {
      g_free (*memory_limit);
      *memory_limit = g_strdup (memory);
    }
  if (pids > 0 && backend_declares (self, backend, "pids_limit"))
    {
      JsonNode *given = json_object_get_member (isolation_options, "pids_limit");

      if (given == NULL || json_node_get_value_type (given) != G_TYPE_INT64 ||
          json_node_get_int (given) <= 0 || (guint64) json_node_get_int (given) > pids)
        json_object_set_int_member (isolation_options, "pids_limit", pids);
    }
  if (network != NULL && backend_declares (self, backend, "network"))
    json_object_set_string_member (isolation_options, "network", network);
  if (confinement != NULL && backend_declares (self, backend, "confinement"))
    json_object_set_string_member (isolation_options, "confinement", confinement);
  return subagent_routing_policy_get_permission_ceiling (policy, level);
}

static gboolean
memory_bytes (const char *text,
              guint64    *out)
{
  char *end = NULL;
  guint64 value;

  if (text == NULL || !g_ascii_isdigit (*text))
    return FALSE;
  value = g_ascii_strtoull (text, &end, 10);
  switch (g_ascii_tolower (*end))
    {
    case '\0': case 'b': break;
    case 'k': value <<= 10; break;
    case 'm': value <<= 20; break;
    case 'g': value <<= 30; break;
    default: return FALSE;
    }
  *out = value;
  return TRUE;
}

gboolean
_subagent_memory_limit_is_below (const char *a,
                                 const char *b)
{
  guint64 va, vb;

  if (!memory_bytes (a, &va))
    return FALSE;
  if (!memory_bytes (b, &vb))
    return TRUE;
  return va < vb;
}
