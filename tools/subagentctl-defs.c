/* subagentctl-defs.c: `subagentctl defs`, the definitions of a workspace and
 * the problems of the files that were skipped.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <string.h>

#include "subagentctl.h"

/* The path of @file shown relative to @root when it is inside. */
static const char *
display_path (const char *file,
              const char *root)
{
  gsize n = strlen (root);

  if (file != NULL && strncmp (file, root, n) == 0 && file[n] == '/')
    return file + n + 1;
  return file ? file : "(in code)";
}

/* The first line of a description, cut to @max characters. */
static char *
summary (const char *text,
         guint       max)
{
  g_autofree char *line = g_strndup (text, strcspn (text, "\r\n"));
  glong len = g_utf8_strlen (line, -1);

  if (len <= max)
    return g_steal_pointer (&line);
  {
    g_autofree char *cut = g_utf8_substring (line, 0, max - 1);
    return g_strconcat (cut, "…", NULL);
  }
}

static void
print_table (GPtrArray  *defs,
             const char *root)
{
  int name_w = strlen ("NAME");
  int iso_w = strlen ("ISOLATION");
  int desc_w = strlen ("DESCRIPTION");
  g_autoptr(GPtrArray) descs = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < defs->len; i++)
    {
      SubagentDef *def = defs->pdata[i];
      char *desc = summary (subagent_def_get_description (def), 50);

      name_w = MAX (name_w, (int) strlen (subagent_def_get_name (def)));
      iso_w = MAX (iso_w, (int) strlen (subagent_def_get_isolation (def)));
      desc_w = MAX (desc_w, (int) g_utf8_strlen (desc, -1));
      g_ptr_array_add (descs, desc);
    }

  printf ("%-*s  %-*s  %-*s  %s\n", name_w, "NAME", iso_w, "ISOLATION", desc_w, "DESCRIPTION", "SOURCE");
  for (guint i = 0; i < defs->len; i++)
    {
      SubagentDef *def = defs->pdata[i];
      const char *desc = descs->pdata[i];
      /* printf pads by bytes; pad multibyte descriptions by characters */
      int pad = desc_w - (int) g_utf8_strlen (desc, -1);

      printf ("%-*s  %-*s  %s%*s  %s\n", name_w, subagent_def_get_name (def),
              iso_w, subagent_def_get_isolation (def), desc, pad, "",
              display_path (subagent_def_get_source_path (def), root));
    }
}

static JsonNode *
definitions_json (GPtrArray *defs)
{
  JsonArray *array = json_array_sized_new (defs->len);
  JsonNode *node;

  for (guint i = 0; i < defs->len; i++)
    json_array_add_object_element (array, subagent_def_to_json (defs->pdata[i]));
  node = json_node_init_array (json_node_alloc (), array);
  json_array_unref (array);
  return node;
}

/* Whether each definition's isolation mode exists on this host: the
 * catalog only checks its spelling (it must not depend on the installed
 * plugins); the registry of the workspace's configuration knows. */
static GPtrArray *
check_isolation (const char  *root,
                 GPtrArray   *defs,
                 GError     **error)
{
  g_autoptr(SubagentConfig) config = subagent_config_load_for_root (root, error);
  g_autoptr(SubagentPluginRegistry) registry = NULL;
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_diagnostic_unref);

  if (config == NULL)
    return NULL;
  registry = subagent_plugin_registry_new_for_config (config);
  for (guint i = 0; i < defs->len; i++)
    {
      const char *isolation = subagent_def_get_isolation (defs->pdata[i]);
      const char *file = subagent_def_get_source_path (defs->pdata[i]);
      g_autoptr(GError) mode_error = NULL;

      if (g_str_equal (isolation, SUBAGENT_DEF_DEFAULT_ISOLATION) ||
          subagent_plugin_registry_resolve_isolation (registry, isolation, NULL, &mode_error) != NULL)
        continue;
      g_ptr_array_add (problems, subagent_diagnostic_new (file ? file : subagent_def_get_name (defs->pdata[i]), 0, 0,
                                                          SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR,
                                                          SUBAGENT_DEF_ERROR_INVALID_VALUE, mode_error->message));
    }
  return g_steal_pointer (&problems);
}

int
sactl_cmd_defs (int    argc,
                char **argv)
{
  g_autofree char *root_option = NULL;
  gboolean check = FALSE;
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &root_option, "Workspace directory (default: the current one)", "DIR" },
    { "check", 'c', 0, G_OPTION_ARG_NONE, &check, "Print the problems of every file; exit 1 if a file was skipped", NULL },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- list subagent definitions");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentCatalog) catalog = NULL;
  g_autoptr(GPtrArray) defs = NULL;
  g_autofree char *root = NULL;
  GPtrArray *diagnostics;
  g_autoptr(GPtrArray) isolation_problems = NULL;
  gboolean has_errors;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_description (context,
    "Definitions are read from DIR/.subagent/agents/*.{yaml,yml,json,md} and\n"
    "DIR/.claude/agents/*.md. With --check, each problem is printed as\n"
    "FILE:LINE:COLUMN: error|warning: reason (0 when the position is unknown).");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      sactl_fail (error);
      return 2;
    }
  if (argc > 1)
    {
      sactl_fail_message ("defs: unexpected argument “%s”; see subagentctl defs --help", argv[1]);
      return 2;
    }

  root = sactl_resolve_root (root_option, &error);
  if (root == NULL)
    return sactl_fail (error);
  catalog = subagent_catalog_new_for_root (root, &error);
  if (catalog == NULL)
    return sactl_fail (error);

  defs = subagent_catalog_list (catalog);
  diagnostics = subagent_catalog_get_diagnostics (catalog);
  has_errors = subagent_catalog_has_errors (catalog);
  if (check)
    {
      isolation_problems = check_isolation (root, defs, &error);
      if (isolation_problems == NULL)
        return sactl_fail (error);
      has_errors = has_errors || isolation_problems->len > 0;
    }

  if (json)
    {
      g_autoptr(JsonNode) node = definitions_json (defs);

      if (check)
        {
          g_autoptr(JsonObject) object = json_object_new ();
          g_autoptr(JsonNode) wrapper = NULL;

          json_object_set_member (object, "definitions", g_steal_pointer (&node));
          json_object_set_member (object, "diagnostics", subagent_catalog_diagnostics_to_json (catalog));
          for (guint i = 0; i < isolation_problems->len; i++)
            json_array_add_object_element (json_object_get_array_member (object, "diagnostics"),
                                           subagent_diagnostic_to_json (isolation_problems->pdata[i]));
          wrapper = json_node_init_object (json_node_alloc (), object);
          sactl_print_json (wrapper);
        }
      else
        sactl_print_json (node);
      return (check && has_errors) ? 1 : 0;
    }

  if (check)
    {
      guint n_errors = 0;

      for (guint i = 0; i < diagnostics->len; i++)
        {
          g_autofree char *line = subagent_diagnostic_to_string (diagnostics->pdata[i], root);

          printf ("%s\n", line);
          if (subagent_diagnostic_get_severity (diagnostics->pdata[i]) == SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR)
            n_errors++;
        }
      for (guint i = 0; i < isolation_problems->len; i++)
        {
          g_autofree char *line = subagent_diagnostic_to_string (isolation_problems->pdata[i], root);

          printf ("%s\n", line);
        }
      fflush (stdout);
      fprintf (stderr, "%u definition%s, %u error%s, %u warning%s\n",
               defs->len, defs->len == 1 ? "" : "s",
               n_errors + isolation_problems->len, n_errors + isolation_problems->len == 1 ? "" : "s",
               diagnostics->len - n_errors, diagnostics->len - n_errors == 1 ? "" : "s");
      return has_errors ? 1 : 0;
    }

  if (defs->len == 0)
    printf ("No definitions in %s/.subagent/agents or %s/.claude/agents\n", root, root);
  else
    print_table (defs, root);
  fflush (stdout);
  if (has_errors)
    fprintf (stderr, "subagentctl: some definition files were skipped; run `subagentctl defs --check`\n");
  return 0;
}
