/* subagent-plugin-info.c: what a `.plugin` descriptor says: the object,
 * its getters and its JSON, and loading its module once. Reading the
 * descriptor: subagent-plugin-descriptor.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-plugin-private.h"
#include "subagent-plugin-info-struct-private.h"

/**
 * SubagentPluginInfo:
 *
 * What a plugin's `.plugin` descriptor says, read without opening its module.
 *
 * A descriptor is a #GKeyFile:
 *
 * |[
 * [Plugin]
 * Name=isolation-docker
 * Module=libsubagent-isolation-docker.so
 * Interface=SubagentIsolationProvider
 * Provides=docker;
 * ABI=1.0
 * Version=0.1.0
 * Description=Containers through the docker CLI
 * Section=docker
 * Leftovers=container;
 *
 * [Option image]
 * Type=string
 * Default=busybox
 * Description=The image children run in
 * ]|
 *
 * `Module` names a file beside the descriptor. The optional keys:
 *
 * - `Section=`: the `config.yaml` section holding the plugin's options
 *   (default: the plugin's name);
 * - `Aliases=`: deprecated names that also select the plugin's first backend
 *   (a run that uses one logs a warning);
 * - `Auto=`: `git` or `other`: the plugin's first backend is what the `auto`
 *   isolation mode picks inside a git work tree, or anywhere else, unless
 *   `config.yaml` says otherwise;
 * - `Leftovers=`: the owner-record kinds (see subagent_owner_record_save())
 *   whose leftovers the plugin reclaims (#SubagentIsolationProvider's reclaim);
 * - one `[Option KEY]` group per option: `Type=` (see #SubagentPluginOption),
 *   `Default=`, `Description=`.
 *
 * All properties are construct-only except #SubagentPluginInfo:is-loaded.
 */

enum {
  INFO_PROP_0,
  INFO_PROP_NAME,
  INFO_PROP_DESCRIPTOR_PATH,
  INFO_PROP_MODULE_PATH,
  INFO_PROP_INTERFACE_NAME,
  INFO_PROP_PROVIDES,
  INFO_PROP_ABI_MAJOR,
  INFO_PROP_ABI_MINOR,
  INFO_PROP_VERSION,
  INFO_PROP_DESCRIPTION,
  INFO_PROP_IS_LOADED,
  INFO_N_PROPS
};
static GParamSpec *info_properties[INFO_N_PROPS];

G_DEFINE_FINAL_TYPE (SubagentPluginInfo, subagent_plugin_info, G_TYPE_OBJECT)

static void
subagent_plugin_info_finalize (GObject *object)
{
  SubagentPluginInfo *self = SUBAGENT_PLUGIN_INFO (object);

  g_free (self->name);
  g_free (self->descriptor_path);
  g_free (self->module_path);
  g_free (self->interface_name);
  g_strfreev (self->provides);
  g_free (self->version);
  g_free (self->description);
  g_free (self->section);
  g_strfreev (self->aliases);
  g_free (self->auto_role);
  g_strfreev (self->leftovers);
  g_ptr_array_unref (self->options);
  g_clear_object (&self->module);
  g_clear_error (&self->load_error);
  g_mutex_clear (&self->load_lock);
  G_OBJECT_CLASS (subagent_plugin_info_parent_class)->finalize (object);
}

static void
subagent_plugin_info_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SubagentPluginInfo *self = SUBAGENT_PLUGIN_INFO (object);

  switch (prop_id)
    {
    case INFO_PROP_NAME: g_value_set_string (value, self->name); break;
    case INFO_PROP_DESCRIPTOR_PATH: g_value_set_string (value, self->descriptor_path); break;
    case INFO_PROP_MODULE_PATH: g_value_set_string (value, self->module_path); break;
    case INFO_PROP_INTERFACE_NAME: g_value_set_string (value, self->interface_name); break;
    case INFO_PROP_PROVIDES: g_value_set_boxed (value, self->provides); break;
    case INFO_PROP_ABI_MAJOR: g_value_set_uint (value, self->abi_major); break;
    case INFO_PROP_ABI_MINOR: g_value_set_uint (value, self->abi_minor); break;
    case INFO_PROP_VERSION: g_value_set_string (value, self->version); break;
    case INFO_PROP_DESCRIPTION: g_value_set_string (value, self->description); break;
    case INFO_PROP_IS_LOADED: g_value_set_boolean (value, subagent_plugin_info_is_loaded (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_plugin_info_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  SubagentPluginInfo *self = SUBAGENT_PLUGIN_INFO (object);

  switch (prop_id)
    {
    case INFO_PROP_NAME: self->name = g_value_dup_string (value); break;
    case INFO_PROP_DESCRIPTOR_PATH: self->descriptor_path = g_value_dup_string (value); break;
    case INFO_PROP_MODULE_PATH: self->module_path = g_value_dup_string (value); break;
    case INFO_PROP_INTERFACE_NAME: self->interface_name = g_value_dup_string (value); break;
    case INFO_PROP_PROVIDES: self->provides = g_value_dup_boxed (value); break;
    case INFO_PROP_ABI_MAJOR: self->abi_major = g_value_get_uint (value); break;
    case INFO_PROP_ABI_MINOR: self->abi_minor = g_value_get_uint (value); break;
    case INFO_PROP_VERSION: self->version = g_value_dup_string (value); break;
    case INFO_PROP_DESCRIPTION: self->description = g_value_dup_string (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_plugin_info_constructed (GObject *object)
{
  SubagentPluginInfo *self = SUBAGENT_PLUGIN_INFO (object);

  G_OBJECT_CLASS (subagent_plugin_info_parent_class)->constructed (object);
  if (self->provides == NULL)
    self->provides = g_new0 (char *, 1);
}

static void
subagent_plugin_info_class_init (SubagentPluginInfoClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = subagent_plugin_info_finalize;
  object_class->constructed = subagent_plugin_info_constructed;
  object_class->get_property = subagent_plugin_info_get_property;
  object_class->set_property = subagent_plugin_info_set_property;

  /**
   * SubagentPluginInfo:name:
   *
   * The plugin's name (`Name=`).
   */
  info_properties[INFO_PROP_NAME] = g_param_spec_string ("name", NULL, NULL, NULL, flags);
  /**
   * SubagentPluginInfo:descriptor-path:
   *
   * The absolute path of the `.plugin` file.
   */
  info_properties[INFO_PROP_DESCRIPTOR_PATH] = g_param_spec_string ("descriptor-path", NULL, NULL, NULL, flags);
  /**
   * SubagentPluginInfo:module-path:
   *
   * The absolute path of the module file `Module=` names.
   */
  info_properties[INFO_PROP_MODULE_PATH] = g_param_spec_string ("module-path", NULL, NULL, NULL, flags);
  /**
   * SubagentPluginInfo:interface-name:
   *
   * The GType name of the interface the plugin's types implement (`Interface=`).
   */
  info_properties[INFO_PROP_INTERFACE_NAME] = g_param_spec_string ("interface-name", NULL, NULL, NULL, flags);
  /**
   * SubagentPluginInfo:provides:
   *
   * The backend names the plugin serves (`Provides=`).
   */
  info_properties[INFO_PROP_PROVIDES] = g_param_spec_boxed ("provides", NULL, NULL, G_TYPE_STRV, flags);
  /**
   * SubagentPluginInfo:abi-major:
   *
   * The plugin ABI major version the descriptor declares (`ABI=`).
   */
  info_properties[INFO_PROP_ABI_MAJOR] = g_param_spec_uint ("abi-major", NULL, NULL, 0, G_MAXUINT, 0, flags);
  /**
   * SubagentPluginInfo:abi-minor:
   *
   * The plugin ABI minor version the descriptor declares (`ABI=`).
   */
  info_properties[INFO_PROP_ABI_MINOR] = g_param_spec_uint ("abi-minor", NULL, NULL, 0, G_MAXUINT, 0, flags);
  /**
   * SubagentPluginInfo:version:
   *
   * The plugin's version (`Version=`), if the descriptor gives one.
   */
  info_properties[INFO_PROP_VERSION] = g_param_spec_string ("version", NULL, NULL, NULL, flags);
  /**
   * SubagentPluginInfo:description:
   *
   * One line about the plugin (`Description=`), if the descriptor gives one.
   */
  info_properties[INFO_PROP_DESCRIPTION] = g_param_spec_string ("description", NULL, NULL, NULL, flags);
  /**
   * SubagentPluginInfo:is-loaded:
   *
   * Whether the plugin's module has been loaded and checked. Not notified:
   * loading may happen on any thread.
   */
  info_properties[INFO_PROP_IS_LOADED] = g_param_spec_boolean ("is-loaded", NULL, NULL, FALSE,
                                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, INFO_N_PROPS, info_properties);
}

static void
subagent_plugin_info_init (SubagentPluginInfo *self)
{
  g_mutex_init (&self->load_lock);
  self->options = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_plugin_option_unref);
  self->aliases = g_new0 (char *, 1);
  self->leftovers = g_new0 (char *, 1);
}

/**
 * subagent_plugin_info_get_name:
 * @self: a #SubagentPluginInfo
 *
 * Gets the plugin's name.
 *
 * Returns: the plugin's name
 *
 * Since: 0.2
 */
const char *
subagent_plugin_info_get_name (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);
  return self->name;
}

/**
 * subagent_plugin_info_get_descriptor_path:
 * @self: a #SubagentPluginInfo
 *
 * Gets the absolute path of the `.plugin` file.
 *
 * Returns: the absolute path of the `.plugin` file
 *
 * Since: 0.2
 */
const char *
subagent_plugin_info_get_descriptor_path (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);
  return self->descriptor_path;
}

/**
 * subagent_plugin_info_get_module_path:
 * @self: a #SubagentPluginInfo
 *
 * Gets the absolute path of the module file.
 *
 * Returns: the absolute path of the module file
 *
 * Since: 0.2
 */
const char *
subagent_plugin_info_get_module_path (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);
  return self->module_path;
}

/**
 * subagent_plugin_info_get_interface_name:
 * @self: a #SubagentPluginInfo
 *
 * Gets the GType name of the interface the plugin implements.
 *
 * Returns: the GType name of the interface the plugin implements
 *
 * Since: 0.2
 */
const char *
subagent_plugin_info_get_interface_name (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);
  return self->interface_name;
}

/**
 * subagent_plugin_info_get_provides:
 * @self: a #SubagentPluginInfo
 *
 * Gets the backend names the plugin serves.
 *
 * Returns: (transfer none) (array zero-terminated=1): the backend names the plugin serves
 *
 * Since: 0.2
 */
const char * const *
subagent_plugin_info_get_provides (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);
  return (const char * const *) self->provides;
}

/**
 * subagent_plugin_info_provides:
 * @self: a #SubagentPluginInfo
 * @backend: a backend name
 *
 * Checks whether the plugin provides @backend, from its descriptor alone
 * (nothing is loaded).
 *
 * Returns: whether the descriptor lists @backend in `Provides=`
 *
 * Since: 0.2
 */
gboolean
subagent_plugin_info_provides (SubagentPluginInfo *self,
                               const char         *backend)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), FALSE);
  return backend != NULL && g_strv_contains ((const char * const *) self->provides, backend);
}

/**
 * subagent_plugin_info_get_abi_major:
 * @self: a #SubagentPluginInfo
 *
 * Gets the ABI major version the descriptor declares.
 *
 * Returns: the ABI major version the descriptor declares
 *
 * Since: 0.2
 */
guint
subagent_plugin_info_get_abi_major (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), 0);
  return self->abi_major;
}

/**
 * subagent_plugin_info_get_abi_minor:
 * @self: a #SubagentPluginInfo
 *
 * Gets the ABI minor version the descriptor declares.
 *
 * Returns: the ABI minor version the descriptor declares
 *
 * Since: 0.2
 */
guint
subagent_plugin_info_get_abi_minor (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), 0);
  return self->abi_minor;
}

/**
 * subagent_plugin_info_get_version:
 * @self: a #SubagentPluginInfo
 *
 * Gets the plugin's version, if the descriptor gives one.
 *
 * Returns: (nullable): the plugin's version, if the descriptor gives one
 *
 * Since: 0.2
 */
const char *
subagent_plugin_info_get_version (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);
  return self->version;
}

/**
 * subagent_plugin_info_get_description:
 * @self: a #SubagentPluginInfo
 *
 * Gets one line about the plugin, if the descriptor gives one.
 *
 * Returns: (nullable): one line about the plugin, if the descriptor gives one
 *
 * Since: 0.2
 */
const char *
subagent_plugin_info_get_description (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);
  return self->description;
}

/**
 * subagent_plugin_info_get_module:
 * @self: a #SubagentPluginInfo
 *
 * Gets the plugin's module once subagent_plugin_registry_load_plugin()
 * succeeded for it.
 *
 * Returns: (transfer none) (nullable): the loaded module, or %NULL
 */
SubagentPluginModule *
subagent_plugin_info_get_module (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);

  /* Set once, under load_lock, and kept as long as @self: an atomic read
   * does not wait for a load running on another thread. */
  return g_atomic_pointer_get (&self->module);
}

/**
 * subagent_plugin_info_is_loaded:
 * @self: a #SubagentPluginInfo
 *
 * Checks whether the plugin's module has been loaded and checked.
 *
 * Returns: whether the plugin's module has been loaded and checked
 *
 * Since: 0.2
 */
gboolean
subagent_plugin_info_is_loaded (SubagentPluginInfo *self)
{
  return subagent_plugin_info_get_module (self) != NULL;
}

/**
 * subagent_plugin_info_get_section:
 * @self: a #SubagentPluginInfo
 *
 * Gets the `config.yaml` section holding the plugin's options (`Section=`,
 * else the plugin's name).
 *
 * Returns: the `config.yaml` section holding the plugin's options
 *   (`Section=`, else the plugin's name)
 *
 * Since: 0.2
 */
const char *
subagent_plugin_info_get_section (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);
  return self->section;
}

/**
 * subagent_plugin_info_get_aliases:
 * @self: a #SubagentPluginInfo
 *
 * Gets deprecated names of the plugin's first backend (`Aliases=`; maybe
 * empty).
 *
 * Returns: (transfer none) (array zero-terminated=1): deprecated names of the
 *   plugin's first backend (`Aliases=`; maybe empty)
 *
 * Since: 0.2
 */
const char * const *
subagent_plugin_info_get_aliases (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);
  return (const char * const *) self->aliases;
}

/**
 * subagent_plugin_info_get_auto:
 * @self: a #SubagentPluginInfo
 *
 * Gets `git` or `other` when the plugin's first backend is a default choice
 * of the `auto` isolation mode (`Auto=`).
 *
 * Returns: (nullable): `git` or `other` when the plugin's first backend is a
 *   default choice of the `auto` isolation mode (`Auto=`)
 *
 * Since: 0.2
 */
const char *
subagent_plugin_info_get_auto (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);
  return self->auto_role;
}

/**
 * subagent_plugin_info_get_leftovers:
 * @self: a #SubagentPluginInfo
 *
 * Gets the owner-record kinds the plugin reclaims (`Leftovers=`; maybe
 * empty).
 *
 * Returns: (transfer none) (array zero-terminated=1): the owner-record kinds
 *   the plugin reclaims (`Leftovers=`; maybe empty)
 *
 * Since: 0.2
 */
const char * const *
subagent_plugin_info_get_leftovers (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);
  return (const char * const *) self->leftovers;
}

/**
 * subagent_plugin_info_get_options:
 * @self: a #SubagentPluginInfo
 *
 * Lists the options the descriptor declares (`[Option KEY]` groups), in
 * the order written, without loading the module.
 *
 * Returns: (transfer container) (element-type SubagentPluginOption): the options
 *
 * Since: 0.2
 */
GPtrArray *
subagent_plugin_info_get_options (SubagentPluginInfo *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);
  return g_ptr_array_ref (self->options);
}

static JsonArray *
strv_to_array (GStrv strv)
{
  JsonArray *array = json_array_new ();

  for (guint i = 0; strv != NULL && strv[i] != NULL; i++)
    json_array_add_string_element (array, strv[i]);
  return array;
}

static void
set_string_or_null (JsonObject *object,
                    const char *member,
                    const char *value)
{
  if (value != NULL)
    json_object_set_string_member (object, member, value);
  else
    json_object_set_null_member (object, member);
}

/**
 * subagent_plugin_info_to_json:
 * @self: a #SubagentPluginInfo
 *
 * Describes the plugin as JSON: `name`, `version`, `description`,
 * `interface`, `provides` (array), `abi` ("MAJOR.MINOR"), `descriptor`,
 * `module`, `loaded`, `section`, `aliases`, `auto`, `leftovers` and
 * `options` (an array of subagent_plugin_option_to_json() objects). Absent
 * optional values are `null`.
 *
 * Returns: (transfer full): a new JSON object
 */
JsonObject *
subagent_plugin_info_to_json (SubagentPluginInfo *self)
{
  g_autofree char *abi = NULL;
  JsonObject *object;
  JsonArray *provides, *options;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (self), NULL);

  abi = g_strdup_printf ("%u.%u", self->abi_major, self->abi_minor);
  object = json_object_new ();
  provides = json_array_new ();
  for (guint i = 0; self->provides[i] != NULL; i++)
    json_array_add_string_element (provides, self->provides[i]);
  json_object_set_string_member (object, "name", self->name);
  set_string_or_null (object, "version", self->version);
  set_string_or_null (object, "description", self->description);
  json_object_set_string_member (object, "interface", self->interface_name);
  json_object_set_array_member (object, "provides", provides);
  json_object_set_string_member (object, "abi", abi);
  json_object_set_string_member (object, "descriptor", self->descriptor_path);
  json_object_set_string_member (object, "module", self->module_path);
  json_object_set_boolean_member (object, "loaded", subagent_plugin_info_is_loaded (self));
  json_object_set_string_member (object, "section", self->section);
  json_object_set_array_member (object, "aliases", strv_to_array (self->aliases));
  set_string_or_null (object, "auto", self->auto_role);
  json_object_set_array_member (object, "leftovers", strv_to_array (self->leftovers));
  options = json_array_new ();
  for (guint i = 0; i < self->options->len; i++)
    json_array_add_object_element (options, subagent_plugin_option_to_json (g_ptr_array_index (self->options, i)));
  json_object_set_array_member (object, "options", options);
  return object;
}

gboolean
subagent_plugin_info_load_once (SubagentPluginInfo      *self,
                                SubagentPluginLoadFunc   load_func,
                                GError                 **error)
{
  gboolean ok;

  g_mutex_lock (&self->load_lock);
  if (self->module == NULL && self->load_error == NULL)
    g_atomic_pointer_set (&self->module, load_func (self, &self->load_error));
  ok = self->module != NULL;
  if (!ok && error != NULL)
    *error = g_error_copy (self->load_error);
  g_mutex_unlock (&self->load_lock);
  return ok;
}
