/* subagentctl-prune.c: `subagentctl prune` reclaims the workspaces that
 * runs left behind when their process died.
 *
 * It walks the owner records under ROOT/.subagent/owners and touches only
 * resources whose owner is certainly dead (subagent_owner_is_alive()), and
 * with --older-than only those older than asked as well. What "ours" means
 * and how to remove it is each backend's own business: a record goes to the
 * isolation plugin whose descriptor lists its kind in `Leftovers=`
 * (subagent_isolation_provider_reclaim()), so only plugins that have
 * leftovers are loaded, and nothing here knows a backend. The record goes
 * once its resource is gone; a skipped resource keeps its record, so a
 * person can look at it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>

#include "subagentctl.h"

typedef struct {
  const char *root;
  SubagentConfig *config;
  SubagentPluginRegistry *registry;
  GHashTable *providers;   /* kind → SubagentIsolationProvider */
  GHashTable *failures;    /* kind → why no provider reclaims it */
} Pruner;

/* The provider that reclaims @kind, made and configured once per kind. */
static SubagentIsolationProvider *
provider_for_kind (Pruner      *pruner,
                   const char  *kind,
                   char       **reason)
{
  SubagentIsolationProvider *provider = g_hash_table_lookup (pruner->providers, kind);
  const char *failure = g_hash_table_lookup (pruner->failures, kind);
  g_autoptr(SubagentPluginInfo) info = NULL;
  g_autoptr(GError) error = NULL;
  GObject *made = NULL;

  if (provider != NULL)
    return provider;
  if (failure == NULL)
    {
      info = subagent_plugin_registry_find_for_leftovers (pruner->registry, kind, &error);
      if (info != NULL)
        made = subagent_plugin_registry_create_configured (pruner->registry, pruner->config,
                                                           SUBAGENT_TYPE_ISOLATION_PROVIDER,
                                                           subagent_plugin_info_get_provides (info)[0],
                                                           pruner->root, &error);
      if (made != NULL)
        {
          g_hash_table_insert (pruner->providers, g_strdup (kind), made);
          return SUBAGENT_ISOLATION_PROVIDER (made);
        }
      failure = error->message;
      g_hash_table_insert (pruner->failures, g_strdup (kind), g_strdup (failure));
    }
  *reason = g_strdup (failure);
  return NULL;
}

/* ---- the command ----------------------------------------------------- */

static gboolean
created_before (JsonObject *record,
                GDateTime  *cutoff)
{
  const char *created = json_object_get_string_member_with_default (record, "created_at", NULL);
  g_autoptr(GDateTime) when = created ? g_date_time_new_from_iso8601 (created, NULL) : NULL;

  return when != NULL && g_date_time_compare (when, cutoff) < 0;
}

static void
report (JsonArray  *entries,
        JsonObject *record,
        const char *action,
        const char *reason)
{
  const char *key = json_object_get_string_member (record, "session_key");
  const char *kind = json_object_get_string_member (record, "kind");
  const char *resource = json_object_get_string_member (record, "resource");

  if (entries != NULL)
    {
      JsonObject *entry = json_object_new ();

      json_object_set_string_member (entry, "session_key", key);
      json_object_set_string_member (entry, "kind", kind);
      json_object_set_string_member (entry, "resource", resource);
      json_object_set_string_member (entry, "action", action);
      if (reason != NULL)
        json_object_set_string_member (entry, "reason", reason);
      else
        json_object_set_null_member (entry, "reason");
      json_array_add_object_element (entries, entry);
      return;
    }
  printf ("%-12s %-9s %s %s%s%s%s\n", action, kind, key, resource,
          reason ? " (" : "", reason ? reason : "", reason ? ")" : "");
}

int
sactl_cmd_prune (int    argc,
                 char **argv)
{
  g_autofree char *root_option = NULL;
  g_autofree char *older_than = NULL;
  gboolean dry_run = FALSE;
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &root_option, "Workspace root (default: the current directory)", "DIR" },
    { "dry-run", 'n', 0, G_OPTION_ARG_NONE, &dry_run, "Only print what would be removed", NULL },
    { "older-than", 0, 0, G_OPTION_ARG_STRING, &older_than, "Only what was made longer ago than this (90s, 15m, 2h, 7d)", "DURATION" },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- remove what dead subagent runs left behind");
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(GDateTime) cutoff = NULL;
  g_autoptr(JsonArray) entries_json = NULL;
  g_autofree char *root = NULL;
  g_autoptr(SubagentConfig) config = NULL;
  g_autoptr(SubagentPluginRegistry) registry = NULL;
  g_autoptr(GHashTable) providers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  g_autoptr(GHashTable) failures = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  guint removed = 0, kept = 0, skipped = 0, failed = 0;
  Pruner pruner = { 0 };

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_description (context,
    "Walks ROOT/.subagent/owners and has each record's backend (the plugin whose\n"
    "descriptor lists the record's kind in Leftovers=) remove what a run whose process\n"
    "is gone left behind, once it has verified the resource is that run's. Resources\n"
    "of a live owner, or of another host, are never touched.");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return sactl_fail (error);
  if (argc > 1)
    return sactl_fail_message ("prune: unexpected argument “%s”", argv[1]);
  if (older_than != NULL)
    {
      GTimeSpan span;
      g_autoptr(GDateTime) now = g_date_time_new_now_utc ();

      if (!sactl_parse_duration (older_than, &span, &error))
        return sactl_fail (error);
      cutoff = g_date_time_add (now, -span);
    }
  root = sactl_resolve_root (root_option, &error);
  if (root == NULL)
    return sactl_fail (error);
  records = subagent_owner_record_list (root, &error);
  if (records == NULL)
    return sactl_fail (error);

  config = subagent_config_load_for_root (root, &error);
  if (config == NULL)
    return sactl_fail (error);
  registry = subagent_plugin_registry_new_for_config (config);
  pruner.root = root;
  pruner.config = config;
  pruner.registry = registry;
  pruner.providers = providers;
  pruner.failures = failures;
  if (json)
    entries_json = json_array_new ();

  for (guint i = 0; i < records->len; i++)
    {
      JsonObject *record = g_ptr_array_index (records, i);
      const char *kind = json_object_get_string_member (record, "kind");
      const char *key = json_object_get_string_member (record, "session_key");
      g_autofree char *reason = NULL;
      SubagentIsolationProvider *provider;
      SubagentReclaimOutcome outcome;

      if (subagent_owner_is_alive (record))
        {
          report (entries_json, record, "kept", "owner alive");
          kept++;
          continue;
        }
      if (cutoff != NULL && !created_before (record, cutoff))
        {
          report (entries_json, record, "kept", "younger than --older-than");
          kept++;
          continue;
        }

      provider = provider_for_kind (&pruner, kind, &reason);
      outcome = provider == NULL ? SUBAGENT_RECLAIM_SKIPPED
                : subagent_isolation_provider_reclaim (provider, root, record,
                                                       dry_run ? SUBAGENT_RECLAIM_FLAGS_DRY_RUN
                                                               : SUBAGENT_RECLAIM_FLAGS_NONE,
                                                       &reason);

      switch (outcome)
        {
        case SUBAGENT_RECLAIM_REMOVED:
          if (!dry_run)
            subagent_owner_record_remove (root, key);
          report (entries_json, record, dry_run ? "would-remove" : "removed", reason);
          removed++;
          break;
        case SUBAGENT_RECLAIM_SKIPPED:
          report (entries_json, record, "skipped", reason);
          skipped++;
          break;
        case SUBAGENT_RECLAIM_FAILED:
          report (entries_json, record, "failed", reason);
          failed++;
          break;
        }
    }

  if (json)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
      JsonObject *object = json_object_new ();

      json_object_set_string_member (object, "root", root);
      json_object_set_boolean_member (object, "dry_run", dry_run);
      json_object_set_array_member (object, "entries", g_steal_pointer (&entries_json));
      json_node_take_object (node, object);
      sactl_print_json (node);
    }
  else
    printf ("%s %u, kept %u, skipped %u, failed %u\n",
            dry_run ? "would remove" : "removed", removed, kept, skipped, failed);
  return failed > 0 ? 1 : 0;
}
