/* subagentctl-complete.c: `subagentctl __complete WHAT`, the names the bash
 * completion offers, one per line: commands, definition names, backend
 * names (from plugin descriptors, loading nothing) and the ids of pending
 * approval requests. Quiet on errors: a completion never prints a message.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>

#include "subagentctl.h"

static void
print_defs (const char *root)
{
  g_autoptr(SubagentCatalog) catalog = subagent_catalog_new_for_root (root, NULL);
  g_autoptr(GPtrArray) defs = catalog ? subagent_catalog_list (catalog) : NULL;

  for (guint i = 0; defs != NULL && i < defs->len; i++)
    printf ("%s\n", subagent_def_get_name (defs->pdata[i]));
}

static void
print_backends (void)
{
  g_autoptr(GPtrArray) plugins = subagent_plugin_registry_list_plugins (subagent_plugin_registry_get_default ());
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  /* Built in, not from a plugin. */
  static const char * const builtin[] = { "shared", "auto", NULL };

  for (guint i = 0; builtin[i] != NULL; i++)
    if (g_hash_table_add (seen, (gpointer) builtin[i]))
      printf ("%s\n", builtin[i]);
  for (guint i = 0; plugins != NULL && i < plugins->len; i++)
    {
      const char * const *provides = subagent_plugin_info_get_provides (plugins->pdata[i]);

      for (guint j = 0; provides != NULL && provides[j] != NULL; j++)
        if (g_hash_table_add (seen, (gpointer) provides[j]))
          printf ("%s\n", provides[j]);
    }
}

static void
print_plugins (void)
{
  g_autoptr(GPtrArray) plugins = subagent_plugin_registry_list_plugins (subagent_plugin_registry_get_default ());

  for (guint i = 0; plugins != NULL && i < plugins->len; i++)
    printf ("%s\n", subagent_plugin_info_get_name (plugins->pdata[i]));
}

static void
print_pending_requests (const char *root)
{
  g_autoptr(SubagentApprovalSink) sink = sactl_open_approval_sink (root, NULL);
  g_auto(GStrv) runs = sink ? subagent_approval_sink_list_runs (sink, NULL) : NULL;

  for (guint i = 0; runs != NULL && runs[i] != NULL; i++)
    {
      g_autoptr(GPtrArray) requests = subagent_approval_sink_load (sink, runs[i], NULL);

      for (guint j = 0; requests != NULL && j < requests->len; j++)
        if (subagent_approval_request_get_status (requests->pdata[j]) == SUBAGENT_APPROVAL_STATUS_PENDING)
          printf ("%s\n", subagent_approval_request_get_request_id (requests->pdata[j]));
    }
}

static GLogWriterOutput
drop_log (GLogLevelFlags   log_level,
          const GLogField *fields,
          gsize            n_fields,
          gpointer         user_data)
{
  return G_LOG_WRITER_HANDLED;
}

int
sactl_cmd_complete (int    argc,
                    char **argv)
{
  g_autofree char *root_option = NULL;
  const GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &root_option, "Workspace root (default: current directory)", "DIR" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = sactl_option_context_new ("__complete", entries);
  g_autofree char *root = NULL;

  /* Warnings of the library (a broken config) must not reach the prompt. */
  g_log_set_writer_func (drop_log, NULL, NULL);
  if (!g_option_context_parse (context, &argc, &argv, NULL) || argc != 2)
    return SACTL_EXIT_USAGE;
  if (g_str_equal (argv[1], "commands"))
    {
      sactl_print_command_names ();
      return SACTL_EXIT_OK;
    }
  if (g_str_equal (argv[1], "backends"))
    {
      print_backends ();
      return SACTL_EXIT_OK;
    }
  if (g_str_equal (argv[1], "plugins"))
    {
      print_plugins ();
      return SACTL_EXIT_OK;
    }
  if ((root = sactl_resolve_root (root_option, NULL)) == NULL)
    return SACTL_EXIT_FAILURE;
  if (g_str_equal (argv[1], "defs"))
    print_defs (root);
  else if (g_str_equal (argv[1], "requests"))
    print_pending_requests (root);
  else
    return SACTL_EXIT_USAGE;
  return SACTL_EXIT_OK;
}
