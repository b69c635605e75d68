/* subagent-plugin-registry-backends.c: what the installed descriptors say
 * about backends, read without opening a module: which isolation modes
 * exist, what `auto` and a deprecated alias stand for, which plugin
 * reclaims which leftovers, and whether a plugin's config.yaml section
 * fits the options it declares. Also the one way to make and configure a
 * plugin object for a workspace.
 *
 * Split from subagent-plugin-registry.c, which finds and loads plugins.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "subagent.h"
#include "subagent-isolation-name-private.h"

/**
 * subagent_plugin_registry_new_for_config:
 * @config: a workspace's configuration
 *
 * Gets the registry a workspace uses: the default one, or, when @config
 * names plugin directories (`plugins.path`), a new one searching
 * `SUBAGENT_PLUGIN_PATH`, then those, then the installed directory.
 *
 * Returns: (transfer full): the registry
 *
 * Since: 0.2
 */
SubagentPluginRegistry *
subagent_plugin_registry_new_for_config (SubagentConfig *config)
{
  const char * const *extra;
  const char *env = g_getenv ("SUBAGENT_PLUGIN_PATH");
  g_autoptr(GStrvBuilder) path = NULL;
  g_auto(GStrv) dirs = NULL;

  g_return_val_if_fail (SUBAGENT_IS_CONFIG (config), NULL);

  extra = subagent_config_get_plugin_path (config);
  if (extra == NULL || extra[0] == NULL)
    return g_object_ref (subagent_plugin_registry_get_default ());

  path = g_strv_builder_new ();
  if (env != NULL && *env != '\0')
    {
      g_auto(GStrv) env_dirs = g_strsplit (env, ":", -1);
      for (guint i = 0; env_dirs[i] != NULL; i++)
        if (*env_dirs[i] != '\0')
          g_strv_builder_add (path, env_dirs[i]);
    }
  g_strv_builder_addv (path, (const char **) extra);
  g_strv_builder_add (path, SUBAGENT_PLUGIN_DIR);
  dirs = g_strv_builder_end (path);
  return subagent_plugin_registry_new ((const char * const *) dirs);
}

static gboolean
is_isolation_plugin (SubagentPluginInfo *info)
{
  return g_str_equal (subagent_plugin_info_get_interface_name (info), g_type_name (SUBAGENT_TYPE_ISOLATION_PROVIDER));
}

static gboolean
strv_has_nocase (const char * const *strv,
                 const char          *name)
{
  for (guint i = 0; strv != NULL && strv[i] != NULL; i++)
    if (g_ascii_strcasecmp (strv[i], name) == 0)
      return TRUE;
  return FALSE;
}

/**
 * subagent_plugin_registry_list_isolation_modes:
 * @self: a #SubagentPluginRegistry
 *
 * Lists the isolation modes this host has: the built-in `shared` and
 * `auto`, then every backend an isolation plugin's descriptor lists in
 * `Provides=`, in search-path order, each once. Deprecated aliases are not
 * listed. No module is opened.
 *
 * Returns: (transfer full): the mode names
 *
 * Since: 0.2
 */
GStrv
subagent_plugin_registry_list_isolation_modes (SubagentPluginRegistry *self)
{
  g_autoptr(GPtrArray) plugins = NULL;
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);

  g_strv_builder_add (builder, SUBAGENT_ISOLATION_SHARED);
  g_strv_builder_add (builder, SUBAGENT_ISOLATION_AUTO);
  g_hash_table_add (seen, (gpointer) SUBAGENT_ISOLATION_SHARED);
  g_hash_table_add (seen, (gpointer) SUBAGENT_ISOLATION_AUTO);
  plugins = subagent_plugin_registry_list_plugins (self);
  for (guint i = 0; i < plugins->len; i++)
    {
      SubagentPluginInfo *info = g_ptr_array_index (plugins, i);
      const char * const *provides = subagent_plugin_info_get_provides (info);

      if (!is_isolation_plugin (info))
        continue;
      for (guint j = 0; provides[j] != NULL; j++)
        if (g_hash_table_add (seen, (gpointer) provides[j]))
          g_strv_builder_add (builder, provides[j]);
    }
  return g_strv_builder_end (builder);
}

static void
set_unknown_mode (SubagentPluginRegistry  *self,
                  GError                 **error,
                  const char              *value)
{
  g_auto(GStrv) modes = subagent_plugin_registry_list_isolation_modes (self);
  g_autofree char *list = g_strjoinv (", ", modes);

  g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNKNOWN_MODE,
               "Unknown isolation mode “%s”: this host has %s (`subagentctl plugins` lists the plugins; "
               "install one that provides “%s” or add its directory to SUBAGENT_PLUGIN_PATH)",
               value, list, value);
}

/**
 * subagent_plugin_registry_resolve_isolation:
 * @self: a #SubagentPluginRegistry
 * @value: (nullable): an isolation mode as a user wrote it (%NULL or blank: `shared`)
 * @is_deprecated_alias: (out) (optional): set when @value is a deprecated
 *   alias (the caller warns, see subagent_isolation_warn_deprecated_alias())
 * @error: return location for a #GError
 *
 * Resolves an isolation mode against what is installed, without opening a
 * module: `shared` and `auto` are built in (`auto` is returned as is; see
 * subagent_plugin_registry_resolve_auto()); another name must be listed in
 * the `Provides=` of an isolation plugin's descriptor, or in its `Aliases=`
 * (then its first backend is returned).
 *
 * Returns: (nullable): the interned backend name, or %NULL with
 *   %SUBAGENT_ISOLATION_ERROR_UNKNOWN_MODE listing the modes this host has
 *
 * Since: 0.2
 */
const char *
subagent_plugin_registry_resolve_isolation (SubagentPluginRegistry  *self,
                                            const char              *value,
                                            gboolean                *is_deprecated_alias,
                                            GError                 **error)
{
  g_autoptr(GPtrArray) plugins = NULL;
  char name[SUBAGENT_ISOLATION_NAME_MAX + 1];

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (is_deprecated_alias != NULL)
    *is_deprecated_alias = FALSE;
  /* Only installed backends' names are interned: @value may come from anyone. */
  if (!_subagent_isolation_normalize_to (value, name, NULL))
    {
      set_unknown_mode (self, error, value);
      return NULL;
    }
  if (g_str_equal (name, SUBAGENT_ISOLATION_SHARED))
    return g_intern_static_string (SUBAGENT_ISOLATION_SHARED);
  if (g_str_equal (name, SUBAGENT_ISOLATION_AUTO))
    return g_intern_static_string (SUBAGENT_ISOLATION_AUTO);

  plugins = subagent_plugin_registry_list_plugins (self);
  for (guint i = 0; i < plugins->len; i++)
    {
      SubagentPluginInfo *info = g_ptr_array_index (plugins, i);
      const char * const *provides = subagent_plugin_info_get_provides (info);

      if (!is_isolation_plugin (info))
        continue;
      for (guint j = 0; provides[j] != NULL; j++)
        if (g_ascii_strcasecmp (provides[j], name) == 0)
          return g_intern_string (provides[j]);
    }
  for (guint i = 0; i < plugins->len; i++)
    {
      SubagentPluginInfo *info = g_ptr_array_index (plugins, i);

      if (is_isolation_plugin (info) && strv_has_nocase (subagent_plugin_info_get_aliases (info), name))
        {
          if (is_deprecated_alias != NULL)
            *is_deprecated_alias = TRUE;
          return g_intern_string (subagent_plugin_info_get_provides (info)[0]);
        }
    }
  set_unknown_mode (self, error, value);
  return NULL;
}

/**
 * subagent_plugin_registry_resolve_auto:
 * @self: a #SubagentPluginRegistry
 * @config: (nullable): the workspace's configuration (`auto_isolation`)
 * @git_work_tree: whether the parent root is in a git work tree
 *   (subagent_isolation_is_git_work_tree())
 * @error: return location for a #GError
 *
 * Says what `auto` stands for: the backend `auto_isolation.git` (or
 * `.other`) of @config names, else the first isolation plugin whose
 * descriptor says `Auto=git` (or `Auto=other`). With the plugins of this
 * tree that is `worktree` inside a git work tree and `directory-snapshot`
 * anywhere else.
 *
 * Returns: (nullable): the interned backend name, or %NULL with
 *   %SUBAGENT_ISOLATION_ERROR_UNKNOWN_MODE
 *
 * Since: 0.2
 */
const char *
subagent_plugin_registry_resolve_auto (SubagentPluginRegistry  *self,
                                       SubagentConfig          *config,
                                       gboolean                 git_work_tree,
                                       GError                 **error)
{
  const char *role = git_work_tree ? "git" : "other";
  const char *configured = config ? subagent_config_get_auto_isolation (config, git_work_tree) : NULL;
  g_autoptr(GPtrArray) plugins = NULL;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);
  g_return_val_if_fail (config == NULL || SUBAGENT_IS_CONFIG (config), NULL);

  if (configured != NULL)
    {
      g_autoptr(GError) local_error = NULL;
      gboolean alias = FALSE;
      const char *resolved = subagent_plugin_registry_resolve_isolation (self, configured, &alias, &local_error);

      if (resolved == NULL)
        {
          g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNKNOWN_MODE,
                       "%s: auto_isolation.%s: %s", subagent_config_get_source (config), role, local_error->message);
          return NULL;
        }
      if (alias)
        subagent_isolation_warn_deprecated_alias (configured, resolved);
      return resolved;
    }

  plugins = subagent_plugin_registry_list_plugins (self);
  for (guint i = 0; i < plugins->len; i++)
    {
      SubagentPluginInfo *info = g_ptr_array_index (plugins, i);

      if (is_isolation_plugin (info) && g_strcmp0 (subagent_plugin_info_get_auto (info), role) == 0)
        return g_intern_string (subagent_plugin_info_get_provides (info)[0]);
    }
  g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNKNOWN_MODE,
               "Isolation “auto” has no backend for %s: no installed plugin says Auto=%s; "
               "name one in config.yaml (auto_isolation: { %s: BACKEND }) or pick a mode",
               git_work_tree ? "a git work tree" : "a directory outside git", role, role);
  return NULL;
}

/**
 * subagent_plugin_registry_find_for_leftovers:
 * @self: a #SubagentPluginRegistry
 * @kind: an owner-record kind, such as the `kind` of subagent_owner_record_load()
 * @error: return location for a #GError
 *
 * Finds the isolation plugin that reclaims leftovers of @kind (its
 * descriptor's `Leftovers=`), without loading it.
 *
 * Returns: (transfer full): the plugin, or %NULL with %SUBAGENT_PLUGIN_ERROR_NOT_FOUND
 *
 * Since: 0.2
 */
SubagentPluginInfo *
subagent_plugin_registry_find_for_leftovers (SubagentPluginRegistry  *self,
                                             const char              *kind,
                                             GError                 **error)
{
  g_autoptr(GPtrArray) plugins = NULL;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);
  g_return_val_if_fail (kind != NULL, NULL);

  plugins = subagent_plugin_registry_list_plugins (self);
  for (guint i = 0; i < plugins->len; i++)
    {
      SubagentPluginInfo *info = g_ptr_array_index (plugins, i);

      if (is_isolation_plugin (info) && g_strv_contains (subagent_plugin_info_get_leftovers (info), kind))
        return g_object_ref (info);
    }
  g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_NOT_FOUND,
               "No installed plugin reclaims leftovers of kind “%s” (no descriptor lists it in Leftovers=); "
               "install the plugin that made them, or add its directory to SUBAGENT_PLUGIN_PATH", kind);
  return NULL;
}

/**
 * subagent_plugin_registry_find_for_section:
 * @self: a #SubagentPluginRegistry
 * @section: a `config.yaml` section name
 *
 * Finds the plugin whose options live in the configuration section @section,
 * from the descriptors alone.
 *
 * Returns: (transfer full) (nullable): the first plugin whose options live
 *   in @section (its `Section=`, by default its name), or %NULL
 *
 * Since: 0.2
 */
SubagentPluginInfo *
subagent_plugin_registry_find_for_section (SubagentPluginRegistry *self,
                                           const char             *section)
{
  g_autoptr(GPtrArray) plugins = NULL;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);
  g_return_val_if_fail (section != NULL, NULL);

  plugins = subagent_plugin_registry_list_plugins (self);
  for (guint i = 0; i < plugins->len; i++)
    {
      SubagentPluginInfo *info = g_ptr_array_index (plugins, i);

      if (g_str_equal (subagent_plugin_info_get_section (info), section))
        return g_object_ref (info);
    }
  return NULL;
}

static char *
where (SubagentConfig *config,
       const char     *section,
       const char     *key)
{
  guint line = subagent_config_get_line (config, section, key);

  if (line > 0)
    return g_strdup_printf ("%s:%u", subagent_config_get_source (config), line);
  return g_strdup (subagent_config_get_source (config));
}

static char *
option_names (GPtrArray *options)
{
  GString *names = g_string_new (NULL);

  for (guint i = 0; i < options->len; i++)
    g_string_append_printf (names, "%s%s", i ? ", " : "",
                            subagent_plugin_option_get_name (g_ptr_array_index (options, i)));
  if (names->len == 0)
    g_string_append (names, "no options");
  return g_string_free (names, FALSE);
}

static void
add_warning (GPtrArray  *warnings,
             const char *format,
             ...) G_GNUC_PRINTF (2, 3);

static void
add_warning (GPtrArray  *warnings,
             const char *format,
             ...)
{
  va_list ap;

  va_start (ap, format);
  g_ptr_array_add (warnings, g_strdup_vprintf (format, ap));
  va_end (ap);
}

/**
 * subagent_plugin_registry_validate_config:
 * @self: a #SubagentPluginRegistry
 * @config: a workspace's configuration
 * @warnings: (out) (optional) (transfer full): what was found but is not an
 *   error; when %NULL, each is logged with g_warning() instead
 * @error: return location for a #GError
 *
 * Checks every plugin section of @config against the options its plugin's
 * descriptor declares, without opening a module: an unknown key, or a
 * section no installed plugin claims, is a warning naming the file and the
 * line; a value of the wrong type is an error naming them.
 *
 * Returns: %TRUE when no value has the wrong type, else %FALSE with
 *   %SUBAGENT_CONFIG_ERROR_INVALID_VALUE
 *
 * Since: 0.2
 */
gboolean
subagent_plugin_registry_validate_config (SubagentPluginRegistry  *self,
                                          SubagentConfig          *config,
                                          GStrv                   *warnings,
                                          GError                 **error)
{
  g_auto(GStrv) sections = NULL;
  g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func (g_free);
  gboolean ok = TRUE;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), FALSE);
  g_return_val_if_fail (SUBAGENT_IS_CONFIG (config), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  sections = subagent_config_list_sections (config);
  for (guint i = 0; ok && sections[i] != NULL; i++)
    {
      g_autoptr(SubagentPluginInfo) info = subagent_plugin_registry_find_for_section (self, sections[i]);
      JsonObject *section = subagent_config_get_section (config, sections[i]);
      g_autoptr(GPtrArray) options = NULL;
      g_autofree char *names = NULL;
      g_autoptr(GList) members = NULL;

      if (info == NULL)
        {
          g_autofree char *at = where (config, sections[i], NULL);

          add_warning (found, "%s: section “%s” is no installed plugin's; ignored (`subagentctl plugins` lists them)",
                       at, sections[i]);
          continue;
        }
      options = subagent_plugin_info_get_options (info);
      names = option_names (options);
      members = json_object_get_members (section);
      for (GList *l = members; ok && l != NULL; l = l->next)
        {
          SubagentPluginOption *option = subagent_plugin_options_find (options, l->data);
          g_autofree char *at = where (config, sections[i], l->data);
          g_autoptr(GError) local_error = NULL;

          if (option == NULL)
            add_warning (found, "%s: unknown key “%s.%s” ignored: plugin %s has %s", at, sections[i],
                         (const char *) l->data, subagent_plugin_info_get_name (info), names);
          else if (!subagent_plugin_option_check_value (option, json_object_get_member (section, l->data), &local_error))
            {
              g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                           "%s: “%s.%s”: plugin %s's %s", at, sections[i], (const char *) l->data,
                           subagent_plugin_info_get_name (info), local_error->message);
              ok = FALSE;
            }
        }
    }

  if (warnings != NULL)
    {
      g_ptr_array_add (found, NULL);
      *warnings = (GStrv) g_ptr_array_steal (found, NULL);
    }
  else
    for (guint i = 0; i < found->len; i++)
      g_warning ("%s", (const char *) g_ptr_array_index (found, i));
  return ok;
}

/**
 * subagent_plugin_registry_create_configured:
 * @self: a #SubagentPluginRegistry
 * @config: (nullable): the workspace's configuration: its pin
 *   (`plugins.backends`) chooses the plugin, its plugin section gives the options
 * @interface_type: the interface the object must implement
 * @backend: a backend name such as `worktree` or `file`
 * @root: (nullable): the workspace root
 * @error: return location for a #GError
 *
 * Makes the object that serves @backend and configures it with
 * subagent_plugin_configure(): @root, and the section of @config that the
 * serving plugin's descriptor names (`Section=`). This is how the manager
 * and `subagentctl` make every plugin object, whatever its interface.
 * `shared` isolation is built in and made without a plugin.
 *
 * Returns: (transfer full): a new, configured object implementing
 *   @interface_type, or %NULL with @error set
 *
 * Since: 0.2
 */
GObject *
subagent_plugin_registry_create_configured (SubagentPluginRegistry  *self,
                                            SubagentConfig          *config,
                                            GType                    interface_type,
                                            const char              *backend,
                                            const char              *root,
                                            GError                 **error)
{
  const char *pin = config ? subagent_config_get_plugin_for_backend (config, backend) : NULL;
  g_autoptr(SubagentPluginInfo) info = NULL;
  g_autoptr(GObject) object = NULL;
  JsonObject *options = NULL;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);
  g_return_val_if_fail (config == NULL || SUBAGENT_IS_CONFIG (config), NULL);
  g_return_val_if_fail (G_TYPE_IS_INTERFACE (interface_type), NULL);
  g_return_val_if_fail (backend != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (interface_type == SUBAGENT_TYPE_ISOLATION_PROVIDER && g_str_equal (backend, SUBAGENT_ISOLATION_SHARED))
    return G_OBJECT (subagent_shared_isolation_new ());

  if (pin != NULL)
    object = subagent_plugin_registry_create_from_plugin (self, pin, interface_type, backend, error);
  else
    object = subagent_plugin_registry_create (self, interface_type, backend, error);
  if (object == NULL)
    return NULL;
  info = pin ? subagent_plugin_registry_find_plugin (self, pin, NULL)
             : subagent_plugin_registry_find_for_backend (self, interface_type, backend, NULL);
  if (info != NULL && config != NULL)
    options = subagent_config_get_section (config, subagent_plugin_info_get_section (info));
  if (!subagent_plugin_configure (object, root, options, error))
    {
      g_prefix_error (error, "Cannot configure %s backend “%s”%s%s: ", g_type_name (interface_type), backend,
                      info ? " of plugin " : "", info ? subagent_plugin_info_get_name (info) : "");
      return NULL;
    }
  return g_steal_pointer (&object);
}
