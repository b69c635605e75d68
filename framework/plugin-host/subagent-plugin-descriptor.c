/* subagent-plugin-descriptor.c: reading and validating a `.plugin`
 * descriptor into a SubagentPluginInfo (the module is not opened).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "subagent.h"
#include "subagent-plugin-private.h"
#include "subagent-plugin-info-struct-private.h"

#define PLUGIN_GROUP "Plugin"
#define MAX_DESCRIPTOR_SIZE (64u * 1024u)

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
