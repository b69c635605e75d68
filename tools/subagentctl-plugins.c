/* subagentctl-plugins.c: `subagentctl plugins` lists plugins from their
 * descriptors without loading any; `subagentctl plugins inspect NAME` loads
 * one, in a child process so a crashing plugin cannot take the CLI down.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <string.h>

#include "subagentctl.h"

/* The hidden option the child process of `inspect` runs with. */
#define INSPECT_OPTION "inspect-in-process"
#define INSPECT_IN_PROCESS "--" INSPECT_OPTION

static void
print_diagnostics (GPtrArray *diagnostics)
{
  for (guint i = 0; i < diagnostics->len; i++)
    fprintf (stderr, "subagentctl: skipped: %s\n", ((GError *) g_ptr_array_index (diagnostics, i))->message);
}

static void
print_option_names (SubagentPluginInfo *info)
{
  g_autoptr(GPtrArray) options = subagent_plugin_info_get_options (info);
  GString *names = g_string_new (NULL);

  for (guint i = 0; i < options->len; i++)
    g_string_append_printf (names, "%s%s", i ? ", " : "",
                            subagent_plugin_option_get_name (g_ptr_array_index (options, i)));
  if (names->len > 0)
    printf ("  options:     %s (config.yaml section “%s”)\n", names->str, subagent_plugin_info_get_section (info));
  g_string_free (names, TRUE);
}

/* `Options:` of inspect: what the descriptor declares, one per line. */
static void
print_options (SubagentPluginInfo *info)
{
  g_autoptr(GPtrArray) options = subagent_plugin_info_get_options (info);
  const char * const *aliases = subagent_plugin_info_get_aliases (info);
  const char * const *leftovers = subagent_plugin_info_get_leftovers (info);

  if (aliases[0] != NULL)
    {
      g_autofree char *list = g_strjoinv (", ", (char **) aliases);
      printf ("Aliases:     %s (deprecated)\n", list);
    }
  if (subagent_plugin_info_get_auto (info) != NULL)
    printf ("Auto:        chosen by `auto` %s\n",
            g_str_equal (subagent_plugin_info_get_auto (info), "git") ? "inside a git work tree" : "outside git");
  if (leftovers[0] != NULL)
    {
      g_autofree char *list = g_strjoinv (", ", (char **) leftovers);
      printf ("Leftovers:   %s (reclaimed by `subagentctl prune`)\n", list);
    }
  printf ("Options:     config.yaml section “%s”%s\n", subagent_plugin_info_get_section (info),
          options->len == 0 ? ": none" : "");
  for (guint i = 0; i < options->len; i++)
    {
      SubagentPluginOption *option = g_ptr_array_index (options, i);
      const char *value = subagent_plugin_option_get_default (option);
      const char *doc = subagent_plugin_option_get_description (option);

      printf ("  %s (%s, default %s)%s%s\n", subagent_plugin_option_get_name (option),
              subagent_plugin_option_get_value_type (option), value ? value : "none",
              doc ? ": " : "", doc ? doc : "");
    }
}

/* The loaded type's own list must agree with the descriptor's, which is
 * what validation without loading relies on. */
static char *
check_type_options (SubagentPluginInfo *info,
                    GType               type)
{
  g_autoptr(GObject) object = NULL;
  g_autoptr(GPtrArray) declared = NULL;
  g_autoptr(GPtrArray) listed = NULL;

  if (!g_type_is_a (type, SUBAGENT_TYPE_CONFIGURABLE))
    return NULL;
  object = g_object_new (type, NULL);
  declared = subagent_plugin_info_get_options (info);
  listed = subagent_configurable_list_options (SUBAGENT_CONFIGURABLE (object));
  for (guint i = 0; i < listed->len; i++)
    {
      SubagentPluginOption *mine = g_ptr_array_index (listed, i);
      SubagentPluginOption *theirs = subagent_plugin_options_find (declared, subagent_plugin_option_get_name (mine));

      if (theirs == NULL)
        return g_strdup_printf ("%s lists option “%s”, which %s does not declare", g_type_name (type),
                                subagent_plugin_option_get_name (mine), subagent_plugin_info_get_descriptor_path (info));
      if (!g_str_equal (subagent_plugin_option_get_value_type (mine), subagent_plugin_option_get_value_type (theirs)))
        return g_strdup_printf ("%s says option “%s” is %s, %s says %s", g_type_name (type),
                                subagent_plugin_option_get_name (mine), subagent_plugin_option_get_value_type (mine),
                                subagent_plugin_info_get_descriptor_path (info),
                                subagent_plugin_option_get_value_type (theirs));
    }
  return NULL;
}

static int
list_plugins (gboolean json)
{
  g_autoptr(SubagentPluginRegistry) registry = subagent_plugin_registry_new (NULL);
  g_autoptr(GPtrArray) plugins = subagent_plugin_registry_list_plugins (registry);
  g_autoptr(GPtrArray) diagnostics = subagent_plugin_registry_get_diagnostics (registry);
  const char * const *search_path = subagent_plugin_registry_get_search_path (registry);

  if (json)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
      JsonObject *root = json_object_new ();
      JsonArray *list = json_array_new ();
      JsonArray *problems = json_array_new ();
      JsonArray *dirs = json_array_new ();

      for (guint i = 0; search_path[i] != NULL; i++)
        json_array_add_string_element (dirs, search_path[i]);
      for (guint i = 0; i < plugins->len; i++)
        json_array_add_object_element (list, subagent_plugin_info_to_json (g_ptr_array_index (plugins, i)));
      for (guint i = 0; i < diagnostics->len; i++)
        json_array_add_string_element (problems, ((GError *) g_ptr_array_index (diagnostics, i))->message);
      json_object_set_array_member (root, "search_path", dirs);
      json_object_set_array_member (root, "plugins", list);
      json_object_set_array_member (root, "diagnostics", problems);
      json_node_take_object (node, root);
      sactl_print_json (node);
      return 0;
    }

  if (plugins->len == 0)
    {
      g_autofree char *path = g_strjoinv (G_SEARCHPATH_SEPARATOR_S, (char **) search_path);

      printf ("No plugins found in %s\n", path);
    }
  for (guint i = 0; i < plugins->len; i++)
    {
      SubagentPluginInfo *info = g_ptr_array_index (plugins, i);
      g_autofree char *backends = g_strjoinv (", ", (char **) subagent_plugin_info_get_provides (info));
      const char *version = subagent_plugin_info_get_version (info);
      const char *description = subagent_plugin_info_get_description (info);

      printf ("%s%s%s%s\n", i > 0 ? "\n" : "", subagent_plugin_info_get_name (info),
              version ? " " : "", version ? version : "");
      printf ("  interface:   %s\n", subagent_plugin_info_get_interface_name (info));
      printf ("  backends:    %s\n", backends);
      printf ("  module:      %s\n", subagent_plugin_info_get_module_path (info));
      if (description != NULL)
        printf ("  description: %s\n", description);
      print_option_names (info);
    }
  fflush (stdout);
  print_diagnostics (diagnostics);
  return 0;
}

typedef struct {
  const char *backend;
  GType type;
  char **interfaces;
  gboolean is_provider;
  gboolean available;
  GError *unavailable;
  char *options_mismatch;
} BackendReport;

static void
backend_report_clear (BackendReport *report)
{
  g_strfreev (report->interfaces);
  g_clear_error (&report->unavailable);
  g_free (report->options_mismatch);
}

static void
describe_backend (SubagentPluginInfo   *info,
                  SubagentPluginModule *module,
                  const char           *backend,
                  BackendReport        *report)
{
  g_autofree GType *interfaces = NULL;
  guint n_interfaces = 0;

  report->backend = backend;
  report->type = subagent_plugin_module_get_provided (module, backend);
  interfaces = g_type_interfaces (report->type, &n_interfaces);
  report->interfaces = g_new0 (char *, n_interfaces + 1);
  for (guint i = 0; i < n_interfaces; i++)
    report->interfaces[i] = g_strdup (g_type_name (interfaces[i]));

  report->options_mismatch = check_type_options (info, report->type);
  report->is_provider = g_type_is_a (report->type, SUBAGENT_TYPE_ISOLATION_PROVIDER);
  if (report->is_provider)
    {
      g_autoptr(GObject) provider = g_object_new (report->type, NULL);

      report->available = subagent_isolation_provider_is_available (SUBAGENT_ISOLATION_PROVIDER (provider),
                                                                    &report->unavailable);
      if (!report->available && report->unavailable == NULL)
        report->unavailable = g_error_new_literal (SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                                                   "is_available() returned FALSE without saying why");
    }
}

static void
print_inspect_json (SubagentPluginInfo             *info,
                    const SubagentPluginDescriptor *descriptor,
                    BackendReport                  *reports,
                    guint                           n_reports)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  JsonObject *root = subagent_plugin_info_to_json (info);
  JsonArray *backends = json_array_new ();
  g_autofree char *abi = g_strdup_printf ("%u.%u", descriptor->abi_major, descriptor->abi_minor);
  g_autofree char *host_abi = g_strdup_printf ("%u.%u", SUBAGENT_PLUGIN_ABI_MAJOR, SUBAGENT_PLUGIN_ABI_MINOR);

  /* The module's own answers replace what the descriptor claimed. */
  json_object_set_string_member (root, "version", descriptor->version ? descriptor->version : "");
  json_object_set_string_member (root, "license", descriptor->license ? descriptor->license : "");
  json_object_set_string_member (root, "abi", abi);
  json_object_set_string_member (root, "host_abi", host_abi);
  for (guint i = 0; i < n_reports; i++)
    {
      JsonObject *entry = json_object_new ();
      JsonArray *interfaces = json_array_new ();

      for (guint j = 0; reports[i].interfaces[j] != NULL; j++)
        json_array_add_string_element (interfaces, reports[i].interfaces[j]);
      json_object_set_string_member (entry, "backend", reports[i].backend);
      json_object_set_string_member (entry, "type", g_type_name (reports[i].type));
      json_object_set_array_member (entry, "interfaces", interfaces);
      if (reports[i].is_provider)
        json_object_set_boolean_member (entry, "available", reports[i].available);
      else
        json_object_set_null_member (entry, "available");
      if (reports[i].unavailable != NULL)
        json_object_set_string_member (entry, "unavailable_reason", reports[i].unavailable->message);
      if (reports[i].options_mismatch != NULL)
        json_object_set_string_member (entry, "options_mismatch", reports[i].options_mismatch);
      json_array_add_object_element (backends, entry);
    }
  json_object_set_array_member (root, "backends", backends);
  json_node_take_object (node, root);
  sactl_print_json (node);
}

static void
print_inspect_text (SubagentPluginInfo             *info,
                    const SubagentPluginDescriptor *descriptor,
                    BackendReport                  *reports,
                    guint                           n_reports)
{
  printf ("Name:        %s\n", descriptor->name);
  printf ("Version:     %s\n", descriptor->version ? descriptor->version : "(none)");
  printf ("License:     %s\n", descriptor->license ? descriptor->license : "(none)");
  printf ("ABI:         %u.%u (host %u.%u)\n", descriptor->abi_major, descriptor->abi_minor,
          SUBAGENT_PLUGIN_ABI_MAJOR, SUBAGENT_PLUGIN_ABI_MINOR);
  if (descriptor->description != NULL)
    printf ("Description: %s\n", descriptor->description);
  printf ("Descriptor:  %s\n", subagent_plugin_info_get_descriptor_path (info));
  printf ("Module:      %s\n", subagent_plugin_info_get_module_path (info));
  printf ("Interface:   %s\n", subagent_plugin_info_get_interface_name (info));
  printf ("Backends:\n");
  for (guint i = 0; i < n_reports; i++)
    {
      g_autofree char *interfaces = g_strjoinv (", ", reports[i].interfaces);

      printf ("  %s → %s\n", reports[i].backend, g_type_name (reports[i].type));
      printf ("    implements: %s\n", *interfaces ? interfaces : "(no interface)");
      if (reports[i].is_provider && reports[i].available)
        printf ("    available:  yes\n");
      else if (reports[i].is_provider)
        printf ("    available:  no (%s)\n", reports[i].unavailable->message);
      if (reports[i].options_mismatch != NULL)
        printf ("    options:    MISMATCH: %s\n", reports[i].options_mismatch);
    }
  print_options (info);
  fflush (stdout);
}

/* Runs in the child process: this is where the plugin is opened. */
static int
inspect_in_process (const char *name,
                    gboolean    json)
{
  g_autoptr(SubagentPluginRegistry) registry = subagent_plugin_registry_new (NULL);
  g_autoptr(SubagentPluginInfo) info = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) backends = NULL;
  g_autofree BackendReport *reports = NULL;
  SubagentPluginModule *module;
  guint n;

  info = subagent_plugin_registry_find_plugin (registry, name, &error);
  if (info == NULL || !subagent_plugin_registry_load_plugin (registry, info, &error))
    return sactl_fail (error);

  module = subagent_plugin_info_get_module (info);
  backends = subagent_plugin_module_list_backends (module);
  n = g_strv_length (backends);
  reports = g_new0 (BackendReport, n);
  for (guint i = 0; i < n; i++)
    describe_backend (info, module, backends[i], &reports[i]);

  if (json)
    print_inspect_json (info, subagent_plugin_module_get_descriptor (module), reports, n);
  else
    print_inspect_text (info, subagent_plugin_module_get_descriptor (module), reports, n);

  for (guint i = 0; i < n; i++)
    backend_report_clear (&reports[i]);
  return 0;
}

static int
inspect_in_child (const char *name,
                  gboolean    json)
{
  g_autoptr(SubagentPluginRegistry) registry = subagent_plugin_registry_new (NULL);
  g_autoptr(SubagentPluginInfo) info = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) child = NULL;
  g_autofree char *self_exe = NULL;
  const char *argv[] = { NULL, "plugins", INSPECT_IN_PROCESS, name, json ? "--json" : NULL, NULL };

  /* Name lookups need no module: answer them here. */
  info = subagent_plugin_registry_find_plugin (registry, name, &error);
  if (info == NULL)
    return sactl_fail (error);

  self_exe = g_file_read_link ("/proc/self/exe", &error);
  if (self_exe == NULL)
    return sactl_fail_message ("plugins inspect: cannot find this program to run the inspection in a child process: %s",
                               error->message);
  argv[0] = self_exe;
  child = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_NONE, &error);
  if (child == NULL || !g_subprocess_wait (child, NULL, &error))
    return sactl_fail_message ("plugins inspect: cannot run the inspection in a child process: %s", error->message);

  if (g_subprocess_get_if_signaled (child))
    {
      int sig = g_subprocess_get_term_sig (child);

      return sactl_fail_message ("plugin “%s” crashed while loading (signal %d, %s); the plugin described by %s is broken: rebuild, update or remove it",
                                 name, sig, g_strsignal (sig), subagent_plugin_info_get_descriptor_path (info));
    }
  return g_subprocess_get_exit_status (child);
}

int
sactl_cmd_plugins (int    argc,
                   char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *inspect_name = NULL;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    { INSPECT_OPTION, 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &inspect_name, NULL, NULL },
    { NULL }
  };

  if (g_get_prgname () == NULL)
    g_set_prgname ("subagentctl plugins");
  context = g_option_context_new ("[inspect NAME]");
  g_option_context_set_summary (context,
                                "Lists the plugins of the search path (SUBAGENT_PLUGIN_PATH, then the installed\n"
                                "plugin directory) from their descriptors, without loading any. `inspect NAME`\n"
                                "loads one, in a child process, and shows what it provides.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      fprintf (stderr, "subagentctl: plugins: %s\n", error->message);
      return 2;
    }

  if (inspect_name != NULL)
    return inspect_in_process (inspect_name, json);
  if (argc == 1)
    return list_plugins (json);
  if (argc == 3 && g_str_equal (argv[1], "inspect"))
    return inspect_in_child (argv[2], json);

  fprintf (stderr, "subagentctl: plugins: expected no argument or `inspect NAME`\n");
  return 2;
}
