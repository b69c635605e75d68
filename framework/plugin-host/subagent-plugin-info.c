/* subagent-plugin-info.c: what a `.plugin` descriptor says.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "subagent.h"
#include "subagent-plugin-private.h"

#define PLUGIN_GROUP "Plugin"
#define MAX_DESCRIPTOR_SIZE (64u * 1024u)

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
struct _SubagentPluginInfo
{
  GObject parent_instance;

  char *name;
  char *descriptor_path;
  char *module_path;
  char *interface_name;
  GStrv provides;
  guint abi_major;
  guint abi_minor;
  char *version;
  char *description;
  char *section;
  GStrv aliases;
  char *auto_role;
  GStrv leftovers;
  GPtrArray *options;             /* SubagentPluginOption, in descriptor order */

  GMutex load_lock;               /* held while loading; guards the two below */
  SubagentPluginModule *module;   /* set once loading succeeded */
  GError *load_error;             /* set once loading failed */
};

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

static gboolean
is_valid_id (const char *text)
{
  if (text == NULL || *text == '\0' || strlen (text) > 128)
    return FALSE;
  for (const char *p = text; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
      return FALSE;
  return TRUE;
}

static gboolean
is_valid_type_name (const char *text)
{
  if (text == NULL || !(g_ascii_isalpha (*text) || *text == '_'))
    return FALSE;
  for (const char *p = text; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_' && *p != '+')
      return FALSE;
  return TRUE;
}

static gboolean
parse_abi (const char *text,
           guint      *major,
           guint      *minor)
{
  g_auto(GStrv) parts = g_strsplit (text, ".", -1);
  guint64 a, b;

  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXUINT, &a, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT, &b, NULL))
    return FALSE;
  *major = a;
  *minor = b;
  return TRUE;
}

static char *
require_key (GKeyFile    *keyfile,
             const char  *path,
             const char  *key,
             GError     **error)
{
  char *value = g_key_file_get_string (keyfile, PLUGIN_GROUP, key, NULL);

  if (value == NULL || *g_strstrip (value) == '\0')
    {
      g_free (value);
      g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR,
                   "Plugin descriptor %s lacks the %s= key in [" PLUGIN_GROUP "]; add it or remove the file",
                   path, key);
      return NULL;
    }
  return value;
}

static gboolean
bad_descriptor (GError    **error,
                const char *path,
                const char *format,
                ...) G_GNUC_PRINTF (3, 4);

static gboolean
bad_descriptor (GError    **error,
                const char *path,
                const char *format,
                ...)
{
  g_autofree char *what = NULL;
  va_list ap;

  va_start (ap, format);
  what = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR,
               "Plugin descriptor %s: %s", path, what);
  return FALSE;
}

#define OPTION_GROUP_PREFIX "Option "

/* The optional keys of a descriptor (see the type's documentation). */
typedef struct {
  char *section;
  GStrv aliases;
  char *auto_role;
  GStrv leftovers;
  GPtrArray *options;
} DescriptorExtras;

static void
descriptor_extras_clear (DescriptorExtras *extras)
{
  g_free (extras->section);
  g_strfreev (extras->aliases);
  g_free (extras->auto_role);
  g_strfreev (extras->leftovers);
  g_clear_pointer (&extras->options, g_ptr_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (DescriptorExtras, descriptor_extras_clear)

static gboolean
read_id_list (GKeyFile    *keyfile,
              const char  *path,
              const char  *key,
              GStrv       *out,
              GError     **error)
{
  g_auto(GStrv) list = g_key_file_get_string_list (keyfile, PLUGIN_GROUP, key, NULL, NULL);

  if (list == NULL)
    return TRUE;
  for (guint i = 0; list[i] != NULL; i++)
    if (!is_valid_id (g_strstrip (list[i])))
      return bad_descriptor (error, path, "%s= has “%s”; names may only use letters, digits, ‘-’ and ‘_’",
                             key, list[i]);
  *out = g_steal_pointer (&list);
  return TRUE;
}

static gboolean
read_optional_keys (GKeyFile          *keyfile,
                    const char        *path,
                    DescriptorExtras  *extras,
                    GError           **error)
{
  g_auto(GStrv) groups = g_key_file_get_groups (keyfile, NULL);

  extras->section = g_key_file_get_string (keyfile, PLUGIN_GROUP, "Section", NULL);
  if (extras->section != NULL && !is_valid_id (g_strstrip (extras->section)))
    return bad_descriptor (error, path, "Section=%s may only use letters, digits, ‘-’ and ‘_’", extras->section);
  extras->auto_role = g_key_file_get_string (keyfile, PLUGIN_GROUP, "Auto", NULL);
  if (extras->auto_role != NULL && !g_str_equal (g_strstrip (extras->auto_role), "git")
      && !g_str_equal (extras->auto_role, "other"))
    return bad_descriptor (error, path, "Auto=%s must be git (inside a git work tree) or other (anywhere else)",
                           extras->auto_role);
  if (!read_id_list (keyfile, path, "Aliases", &extras->aliases, error)
      || !read_id_list (keyfile, path, "Leftovers", &extras->leftovers, error))
    return FALSE;

  extras->options = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_plugin_option_unref);
  for (guint i = 0; groups[i] != NULL; i++)
    {
      g_autofree char *type = NULL, *default_value = NULL, *description = NULL;
      g_autoptr(GError) option_error = NULL;
      SubagentPluginOption *option;
      const char *key;

      if (!g_str_has_prefix (groups[i], OPTION_GROUP_PREFIX))
        continue;
      key = groups[i] + strlen (OPTION_GROUP_PREFIX);
      type = g_key_file_get_string (keyfile, groups[i], "Type", NULL);
      default_value = g_key_file_get_string (keyfile, groups[i], "Default", NULL);
      description = g_key_file_get_string (keyfile, groups[i], "Description", NULL);
      if (subagent_plugin_options_find (extras->options, key) != NULL)
        return bad_descriptor (error, path, "declares option “%s” twice", key);
      option = subagent_plugin_option_new (key, type ? g_strstrip (type) : NULL, default_value, description,
                                           &option_error);
      if (option == NULL)
        return bad_descriptor (error, path, "[%s]: %s", groups[i], option_error->message);
      g_ptr_array_add (extras->options, option);
    }
  return TRUE;
}

/**
 * subagent_plugin_info_new_from_file:
 * @path: a `.plugin` descriptor
 * @error: return location for a #GError
 *
 * Reads and validates a plugin descriptor. The module is not opened.
 *
 * Returns: (transfer full): the descriptor's contents, or %NULL with @error
 *   set to %SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR
 */
SubagentPluginInfo *
subagent_plugin_info_new_from_file (const char  *path,
                                    GError     **error)
{
  g_autoptr(GKeyFile) keyfile = g_key_file_new ();
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_autofree char *abs_path = NULL, *dir = NULL, *module_path = NULL;
  g_autofree char *name = NULL, *module = NULL, *interface_name = NULL, *abi = NULL;
  g_autofree char *version = NULL, *description = NULL;
  g_auto(GStrv) provides = NULL;
  g_auto(GStrv) module_parts = NULL;
  guint abi_major = 0, abi_minor = 0;
  g_auto(DescriptorExtras) extras = { NULL };
  SubagentPluginInfo *info;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  abs_path = g_canonicalize_filename (path, NULL);
  if (!g_file_get_contents (abs_path, &contents, &length, &local_error))
    {
      bad_descriptor (error, abs_path, "cannot be read (%s); fix its permissions or remove it", local_error->message);
      return NULL;
    }
  /* A descriptor is a few lines; refuse to parse anything that is not. */
  if (length > MAX_DESCRIPTOR_SIZE)
    {
      bad_descriptor (error, abs_path, "is %" G_GSIZE_FORMAT " bytes, more than a descriptor can be (%u); remove it",
                      length, MAX_DESCRIPTOR_SIZE);
      return NULL;
    }
  if (!g_key_file_load_from_data (keyfile, contents, length, G_KEY_FILE_NONE, &local_error))
    {
      bad_descriptor (error, abs_path, "cannot be read as a key file (%s); fix or remove it", local_error->message);
      return NULL;
    }
  if (!g_key_file_has_group (keyfile, PLUGIN_GROUP))
    {
      bad_descriptor (error, abs_path, "has no [" PLUGIN_GROUP "] group; fix or remove it");
      return NULL;
    }

  if ((name = require_key (keyfile, abs_path, "Name", error)) == NULL
      || (module = require_key (keyfile, abs_path, "Module", error)) == NULL
      || (interface_name = require_key (keyfile, abs_path, "Interface", error)) == NULL
      || (abi = require_key (keyfile, abs_path, "ABI", error)) == NULL)
    return NULL;

  if (!is_valid_id (name))
    {
      bad_descriptor (error, abs_path, "Name=%s may only use letters, digits, ‘-’ and ‘_’", name);
      return NULL;
    }
  /* The module lives beside its descriptor: no absolute path, no "..". */
  module_parts = g_strsplit (module, "/", -1);
  if (g_path_is_absolute (module) || g_strv_contains ((const char * const *) module_parts, ".."))
    {
      bad_descriptor (error, abs_path, "Module=%s must name a file beside the descriptor; install the module there", module);
      return NULL;
    }
  if (!is_valid_type_name (interface_name))
    {
      bad_descriptor (error, abs_path, "Interface=%s is not a GType name such as SubagentIsolationProvider", interface_name);
      return NULL;
    }
  if (!parse_abi (abi, &abi_major, &abi_minor))
    {
      bad_descriptor (error, abs_path, "ABI=%s is not MAJOR.MINOR (this host has %u.%u)",
                      abi, SUBAGENT_PLUGIN_ABI_MAJOR, SUBAGENT_PLUGIN_ABI_MINOR);
      return NULL;
    }

  provides = g_key_file_get_string_list (keyfile, PLUGIN_GROUP, "Provides", NULL, NULL);
  if (provides == NULL || provides[0] == NULL)
    {
      bad_descriptor (error, abs_path, "lacks the Provides= key (the backend names it serves, such as “docker;”); add it");
      return NULL;
    }
  for (guint i = 0; provides[i] != NULL; i++)
    if (!is_valid_id (g_strstrip (provides[i])))
      {
        bad_descriptor (error, abs_path, "Provides= has “%s”; backend names may only use letters, digits, ‘-’ and ‘_’",
                        provides[i]);
        return NULL;
      }

  if (!read_optional_keys (keyfile, abs_path, &extras, error))
    return NULL;

  version = g_key_file_get_string (keyfile, PLUGIN_GROUP, "Version", NULL);
  description = g_key_file_get_string (keyfile, PLUGIN_GROUP, "Description", NULL);
  dir = g_path_get_dirname (abs_path);
  module_path = g_build_filename (dir, module, NULL);

  info = g_object_new (SUBAGENT_TYPE_PLUGIN_INFO,
                       "name", name,
                       "descriptor-path", abs_path,
                       "module-path", module_path,
                       "interface-name", interface_name,
                       "provides", provides,
                       "abi-major", abi_major,
                       "abi-minor", abi_minor,
                       "version", version,
                       "description", description,
                       NULL);
  info->section = extras.section ? g_steal_pointer (&extras.section) : g_strdup (name);
  if (extras.aliases != NULL)
    {
      g_strfreev (info->aliases);
      info->aliases = g_steal_pointer (&extras.aliases);
    }
  info->auto_role = g_steal_pointer (&extras.auto_role);
  if (extras.leftovers != NULL)
    {
      g_strfreev (info->leftovers);
      info->leftovers = g_steal_pointer (&extras.leftovers);
    }
  g_ptr_array_extend_and_steal (info->options, g_steal_pointer (&extras.options));
  return info;
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
