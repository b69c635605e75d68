/* subagent-configurable.c: configuring plugin objects.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"

/**
 * SubagentConfigurable:
 *
 * Implemented by a plugin's type, whatever interface it serves
 * (#SubagentIsolationProvider, #SubagentApprovalSink, ...), to receive the
 * workspace root and its options — its section of `config.yaml`, passed
 * through as written — in one call, subagent_plugin_configure(), and to list
 * the options it understands.
 *
 * A type that does not implement it is configured by doing nothing: it
 * needs neither a root nor options.
 */

G_DEFINE_INTERFACE (SubagentConfigurable, subagent_configurable, G_TYPE_OBJECT)

static void
subagent_configurable_default_init (SubagentConfigurableInterface *iface)
{
}

/**
 * subagent_configurable_list_options:
 * @self: a #SubagentConfigurable
 *
 * Lists the options @self understands, as its `.plugin` descriptor should
 * declare them too.
 *
 * Returns: (transfer full) (element-type SubagentPluginOption): the options
 *   (maybe empty)
 *
 * Since: 0.2
 */
GPtrArray *
subagent_configurable_list_options (SubagentConfigurable *self)
{
  SubagentConfigurableInterface *iface;
  GPtrArray *options = NULL;

  g_return_val_if_fail (SUBAGENT_IS_CONFIGURABLE (self), NULL);

  iface = SUBAGENT_CONFIGURABLE_GET_IFACE (self);
  if (iface->list_options != NULL)
    options = iface->list_options (self);
  return options != NULL ? options
                         : g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_plugin_option_unref);
}

/**
 * subagent_configurable_configure:
 * @self: a #SubagentConfigurable
 * @root: (nullable): the workspace root (the parent's), or %NULL when there is none
 * @options: (nullable): the plugin's options, or %NULL for the defaults
 * @error: return location for a #GError
 *
 * Calls the implementation's configure (see subagent_plugin_configure()).
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
subagent_configurable_configure (SubagentConfigurable  *self,
                                 const char            *root,
                                 JsonObject            *options,
                                 GError               **error)
{
  SubagentConfigurableInterface *iface;
  g_autoptr(JsonObject) empty = NULL;

  g_return_val_if_fail (SUBAGENT_IS_CONFIGURABLE (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  iface = SUBAGENT_CONFIGURABLE_GET_IFACE (self);
  if (iface->configure == NULL)
    return TRUE;
  if (options == NULL)
    options = empty = json_object_new ();
  return iface->configure (self, root, options, error);
}

/**
 * subagent_plugin_configure:
 * @plugin_object: an object a plugin made (a provider, a sink, ...)
 * @root: (nullable): the workspace root, or %NULL when there is none
 * @options: (nullable): the plugin's options: its `config.yaml` section, as
 *   written (subagent_config_get_section()); %NULL for the defaults
 * @error: return location for a #GError
 *
 * The one call that configures any plugin object: the host (the manager,
 * `subagentctl`) makes the object, then calls this once before using it.
 * Objects implementing #SubagentConfigurable get @root and @options; others
 * need neither, and a non-empty @options for them is reported at debug level.
 *
 * Returns: %TRUE on success, else %FALSE with @error set by the plugin
 *   (typically %SUBAGENT_CONFIG_ERROR_INVALID_VALUE)
 *
 * Since: 0.2
 */
gboolean
subagent_plugin_configure (GObject     *plugin_object,
                           const char  *root,
                           JsonObject  *options,
                           GError     **error)
{
  g_return_val_if_fail (G_IS_OBJECT (plugin_object), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (SUBAGENT_IS_CONFIGURABLE (plugin_object))
    return subagent_configurable_configure (SUBAGENT_CONFIGURABLE (plugin_object), root, options, error);
  if (options != NULL && json_object_get_size (options) > 0)
    g_debug ("%s takes no options; ignoring the %u given", G_OBJECT_TYPE_NAME (plugin_object),
             json_object_get_size (options));
  return TRUE;
}
