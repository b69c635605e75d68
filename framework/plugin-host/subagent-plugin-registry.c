/* subagent-plugin-registry.c: plugin descriptors, and loading on demand.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "subagent.h"
#include "subagent-plugin-private.h"


/* The interfaces plugins may implement, one line each. Other names are looked
 * up with g_type_from_name(), which only finds types already registered. */
static const struct {
  const char *name;
  GType (*get_type) (void);
} known_interfaces[] = {
  { "SubagentIsolationProvider", subagent_isolation_provider_get_type },
  { "SubagentApprovalSink", subagent_approval_sink_get_type },
};

/**
 * SubagentPluginRegistry:
 *
 * Finds plugins by their `.plugin` descriptors and loads their modules only
 * when a backend they provide is asked for.
 *
 * A registry reads the descriptors of its search path once, when it is
 * created, in path order; the first plugin of a name wins. Nothing is opened
 * with `dlopen` until subagent_plugin_registry_load_plugin() or
 * subagent_plugin_registry_create() needs a module, so a host that only uses
 * `shared` isolation maps no plugin at all. Each plugin is loaded at most once,
 * even when several threads ask for it together; a plugin that failed to load
 * keeps failing with the same error.
 *
 * The default search path is `SUBAGENT_PLUGIN_PATH` (a colon-separated list,
 * searched first), then `$libdir/subagent-1.0/plugins`.
 */
struct _SubagentPluginRegistry
{
  GObject parent_instance;

  GStrv search_path;
  GPtrArray *plugins;       /* SubagentPluginInfo in path order; fixed after construction */
  GPtrArray *diagnostics;   /* GError, fixed after construction */

  GMutex lock;              /* guards isolation_providers */
  GHashTable *isolation_providers;  /* backend → SubagentIsolationProvider */
};

enum { PROP_0, PROP_SEARCH_PATH, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (SubagentPluginRegistry, subagent_plugin_registry, G_TYPE_OBJECT)

static GStrv
default_search_path (void)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  const char *env = g_getenv ("SUBAGENT_PLUGIN_PATH");

  if (env != NULL)
    {
      g_auto(GStrv) dirs = g_strsplit (env, G_SEARCHPATH_SEPARATOR_S, -1);

      for (guint i = 0; dirs[i] != NULL; i++)
        if (*dirs[i] != '\0')
          g_strv_builder_add (builder, dirs[i]);
    }
  g_strv_builder_add (builder, SUBAGENT_PLUGIN_DIR);
  return g_strv_builder_end (builder);
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

static void
scan_directory (SubagentPluginRegistry *self,
                const char             *dir_path,
                GHashTable             *seen)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, &error);
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  const char *entry;

  if (dir == NULL)
    {
      /* A missing directory is normal (nothing installed there yet). */
      if (!g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT)
          && !g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOTDIR))
        g_ptr_array_add (self->diagnostics,
                         g_error_new (SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR,
                                      "Plugin directory %s cannot be read: %s; fix its permissions or remove it from the search path",
                                      dir_path, error->message));
      return;
    }

  while ((entry = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (entry, ".plugin"))
      g_ptr_array_add (files, g_build_filename (dir_path, entry, NULL));
  g_ptr_array_sort (files, compare_strings);

  for (guint i = 0; i < files->len; i++)
    {
      const char *path = g_ptr_array_index (files, i);
      g_autoptr(GError) parse_error = NULL;
      g_autoptr(SubagentPluginInfo) info = NULL;

      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        continue;
      info = subagent_plugin_info_new_from_file (path, &parse_error);
      if (info == NULL)
        {
          g_ptr_array_add (self->diagnostics, g_steal_pointer (&parse_error));
          continue;
        }
      if (g_hash_table_contains (seen, subagent_plugin_info_get_name (info)))
        {
          g_debug ("Plugin “%s” of %s is shadowed by one earlier in the search path",
                   subagent_plugin_info_get_name (info), path);
          continue;
        }
      g_hash_table_add (seen, g_strdup (subagent_plugin_info_get_name (info)));
      g_ptr_array_add (self->plugins, g_steal_pointer (&info));
    }
}

static void
subagent_plugin_registry_constructed (GObject *object)
{
  SubagentPluginRegistry *self = SUBAGENT_PLUGIN_REGISTRY (object);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  G_OBJECT_CLASS (subagent_plugin_registry_parent_class)->constructed (object);

  if (self->search_path == NULL)
    self->search_path = default_search_path ();
  for (guint i = 0; self->search_path[i] != NULL; i++)
    {
      g_autofree char *dir = g_canonicalize_filename (self->search_path[i], NULL);

      g_free (self->search_path[i]);
      self->search_path[i] = g_steal_pointer (&dir);
      scan_directory (self, self->search_path[i], seen);
    }
}

static void
subagent_plugin_registry_finalize (GObject *object)
{
  SubagentPluginRegistry *self = SUBAGENT_PLUGIN_REGISTRY (object);

  g_strfreev (self->search_path);
  g_ptr_array_unref (self->plugins);
  g_ptr_array_unref (self->diagnostics);
  g_hash_table_unref (self->isolation_providers);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (subagent_plugin_registry_parent_class)->finalize (object);
}

static void
subagent_plugin_registry_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SubagentPluginRegistry *self = SUBAGENT_PLUGIN_REGISTRY (object);

  switch (prop_id)
    {
    case PROP_SEARCH_PATH:
      g_value_set_boxed (value, self->search_path);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_plugin_registry_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  SubagentPluginRegistry *self = SUBAGENT_PLUGIN_REGISTRY (object);

  switch (prop_id)
    {
    case PROP_SEARCH_PATH:
      self->search_path = g_value_dup_boxed (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_plugin_registry_class_init (SubagentPluginRegistryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = subagent_plugin_registry_constructed;
  object_class->finalize = subagent_plugin_registry_finalize;
  object_class->get_property = subagent_plugin_registry_get_property;
  object_class->set_property = subagent_plugin_registry_set_property;

  /**
   * SubagentPluginRegistry:search-path:
   *
   * The directories searched for `.plugin` files, in order. %NULL at
   * construction means `SUBAGENT_PLUGIN_PATH`, then the installed plugin
   * directory.
   */
  properties[PROP_SEARCH_PATH] =
    g_param_spec_boxed ("search-path", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_plugin_registry_init (SubagentPluginRegistry *self)
{
  g_mutex_init (&self->lock);
  self->plugins = g_ptr_array_new_with_free_func (g_object_unref);
  self->diagnostics = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  self->isolation_providers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
}

/**
 * subagent_plugin_registry_new:
 * @search_path: (nullable) (array zero-terminated=1): directories to search
 *   for `.plugin` files, in order, or %NULL for `SUBAGENT_PLUGIN_PATH` then
 *   the installed plugin directory
 *
 * Creates a registry and reads the descriptors of @search_path (small files;
 * no module is opened).
 *
 * Returns: (transfer full): a new registry
 */
SubagentPluginRegistry *
subagent_plugin_registry_new (const char * const *search_path)
{
  return g_object_new (SUBAGENT_TYPE_PLUGIN_REGISTRY, "search-path", search_path, NULL);
}

/**
 * subagent_plugin_registry_get_default:
 *
 * Gets the process-wide registry on the default search path, created on
 * first use (thread-safe) and kept for the life of the process.
 *
 * Returns: (transfer none): the default registry
 */
SubagentPluginRegistry *
subagent_plugin_registry_get_default (void)
{
  static SubagentPluginRegistry *default_registry;

  if (g_once_init_enter (&default_registry))
    g_once_init_leave (&default_registry, subagent_plugin_registry_new (NULL));
  return default_registry;
}

/**
 * subagent_plugin_registry_lookup_interface:
 * @interface_name: a GType name such as `SubagentIsolationProvider`
 *
 * Resolves the interface a descriptor's `Interface=` names: the interfaces
 * libsubagent defines are known even before their type is first used; other
 * names are found only if their type is already registered.
 *
 * Returns: the interface type, or %G_TYPE_INVALID if @interface_name names no
 *   interface
 */
GType
subagent_plugin_registry_lookup_interface (const char *interface_name)
{
  GType type = G_TYPE_INVALID;

  g_return_val_if_fail (interface_name != NULL, G_TYPE_INVALID);

  for (guint i = 0; i < G_N_ELEMENTS (known_interfaces) && type == G_TYPE_INVALID; i++)
    if (g_str_equal (known_interfaces[i].name, interface_name))
      type = known_interfaces[i].get_type ();
  if (type == G_TYPE_INVALID)
    type = g_type_from_name (interface_name);
  return G_TYPE_IS_INTERFACE (type) ? type : G_TYPE_INVALID;
}

/**
 * subagent_plugin_registry_get_search_path:
 * @self: a #SubagentPluginRegistry
 *
 * Returns: (transfer none) (array zero-terminated=1): the directories searched, in order
 */
const char * const *
subagent_plugin_registry_get_search_path (SubagentPluginRegistry *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);
  return (const char * const *) self->search_path;
}

/**
 * subagent_plugin_registry_list_plugins:
 * @self: a #SubagentPluginRegistry
 *
 * Lists the plugins found, in search-path order, without loading any.
 *
 * Returns: (transfer full) (element-type SubagentPluginInfo): the plugins
 */
GPtrArray *
subagent_plugin_registry_list_plugins (SubagentPluginRegistry *self)
{
  GPtrArray *list;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);

  list = g_ptr_array_new_full (self->plugins->len, g_object_unref);
  for (guint i = 0; i < self->plugins->len; i++)
    g_ptr_array_add (list, g_object_ref (g_ptr_array_index (self->plugins, i)));
  return list;
}

/**
 * subagent_plugin_registry_get_diagnostics:
 * @self: a #SubagentPluginRegistry
 *
 * Lists why descriptors (or directories) of the search path were skipped:
 * one %SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR error per file, naming it.
 *
 * Returns: (transfer full) (element-type GError): the problems found while scanning
 */
GPtrArray *
subagent_plugin_registry_get_diagnostics (SubagentPluginRegistry *self)
{
  GPtrArray *list;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);

  list = g_ptr_array_new_full (self->diagnostics->len, (GDestroyNotify) g_error_free);
  for (guint i = 0; i < self->diagnostics->len; i++)
    g_ptr_array_add (list, g_error_copy (g_ptr_array_index (self->diagnostics, i)));
  return list;
}

static void
set_not_found (SubagentPluginRegistry  *self,
               GError                 **error,
               const char              *what)
{
  g_autofree char *path = g_strjoinv (G_SEARCHPATH_SEPARATOR_S, self->search_path);
  g_autofree char *skipped = NULL;

  if (self->diagnostics->len > 0)
    skipped = g_strdup_printf ("; %u descriptor(s) there could not be read (see `subagentctl plugins`)",
                               self->diagnostics->len);
  g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_NOT_FOUND,
               "No plugin provides %s in the plugin search path %s%s; install one there or add its directory to SUBAGENT_PLUGIN_PATH",
               what, path, skipped ? skipped : "");
}

/**
 * subagent_plugin_registry_find_plugin:
 * @self: a #SubagentPluginRegistry
 * @name: a plugin name
 * @error: return location for a #GError
 *
 * Finds a plugin by name, without loading it.
 *
 * Returns: (transfer full): the plugin, or %NULL with
 *   %SUBAGENT_PLUGIN_ERROR_NOT_FOUND
 */
SubagentPluginInfo *
subagent_plugin_registry_find_plugin (SubagentPluginRegistry  *self,
                                      const char              *name,
                                      GError                 **error)
{
  g_autofree char *what = NULL;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  for (guint i = 0; i < self->plugins->len; i++)
    {
      SubagentPluginInfo *info = g_ptr_array_index (self->plugins, i);

      if (g_str_equal (subagent_plugin_info_get_name (info), name))
        return g_object_ref (info);
    }
  what = g_strdup_printf ("the name “%s”", name);
  set_not_found (self, error, what);
  return NULL;
}

/**
 * subagent_plugin_registry_find_for_backend:
 * @self: a #SubagentPluginRegistry
 * @interface_type: the interface the backend implements, or %G_TYPE_INVALID for any
 * @backend: a backend name such as `docker`
 * @error: return location for a #GError
 *
 * Finds the first plugin (in search-path order) whose descriptor implements
 * @interface_type and lists @backend in `Provides=`, without loading it.
 *
 * Returns: (transfer full): the plugin, or %NULL with
 *   %SUBAGENT_PLUGIN_ERROR_NOT_FOUND
 */
SubagentPluginInfo *
subagent_plugin_registry_find_for_backend (SubagentPluginRegistry  *self,
                                           GType                    interface_type,
                                           const char              *backend,
                                           GError                 **error)
{
  const char *interface_name = interface_type ? g_type_name (interface_type) : NULL;
  g_autofree char *what = NULL;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);
  g_return_val_if_fail (interface_type == G_TYPE_INVALID || G_TYPE_IS_INTERFACE (interface_type), NULL);
  g_return_val_if_fail (backend != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  for (guint i = 0; i < self->plugins->len; i++)
    {
      SubagentPluginInfo *info = g_ptr_array_index (self->plugins, i);

      if (subagent_plugin_info_provides (info, backend)
          && (interface_name == NULL || g_str_equal (interface_name, subagent_plugin_info_get_interface_name (info))))
        return g_object_ref (info);
    }
  what = g_strdup_printf ("%s backend “%s”", interface_name ? interface_name : "a", backend);
  set_not_found (self, error, what);
  return NULL;
}

static gboolean
check_instantiable (GType        type,
                    GType        interface_type,
                    const char  *backend,
                    const char  *module_path,
                    const char  *descriptor_path,
                    GError     **error)
{
  if (g_type_is_a (type, interface_type) && g_type_is_a (type, G_TYPE_OBJECT) && !G_TYPE_IS_ABSTRACT (type))
    return TRUE;
  g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_WRONG_INTERFACE,
               "Type %s, which plugin module %s registered for backend “%s”, is not a non-abstract GObject implementing %s as %s declares; fix the plugin's type or its Interface= key",
               g_type_name (type), module_path, backend, g_type_name (interface_type), descriptor_path);
  return FALSE;
}

static char *
resolve_path (const char *path)
{
  char *real = realpath (path, NULL);
  char *copy = g_strdup (real);

  free (real);
  return copy;
}

/* Runs once per info (see subagent_plugin_info_load_once()). */
static SubagentPluginModule *
load_and_check (SubagentPluginInfo  *info,
                GError             **error)
{
  const char *descriptor_path = subagent_plugin_info_get_descriptor_path (info);
  const char *module_path = subagent_plugin_info_get_module_path (info);
  const char *name = subagent_plugin_info_get_name (info);
  const char * const *provides = subagent_plugin_info_get_provides (info);
  guint abi_major = subagent_plugin_info_get_abi_major (info);
  guint abi_minor = subagent_plugin_info_get_abi_minor (info);
  g_autoptr(SubagentPluginModule) module = NULL;
  g_autofree char *dir = NULL, *real_dir = NULL, *real_module = NULL;
  const SubagentPluginDescriptor *descriptor;
  GType interface_type;

  /* Refuse what the descriptor already says will not work, without dlopen. */
  if (abi_major != SUBAGENT_PLUGIN_ABI_MAJOR || abi_minor > SUBAGENT_PLUGIN_ABI_MINOR)
    {
      g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_ABI_MISMATCH,
                   "Plugin descriptor %s declares plugin ABI %u.%u, host has %u.%u; install a build of “%s” made for this libsubagent",
                   descriptor_path, abi_major, abi_minor, SUBAGENT_PLUGIN_ABI_MAJOR, SUBAGENT_PLUGIN_ABI_MINOR, name);
      return NULL;
    }
  interface_type = subagent_plugin_registry_lookup_interface (subagent_plugin_info_get_interface_name (info));
  if (interface_type == G_TYPE_INVALID)
    {
      g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR,
                   "Plugin descriptor %s declares Interface=%s, which this host does not know; use one of the interfaces of libsubagent such as SubagentIsolationProvider",
                   descriptor_path, subagent_plugin_info_get_interface_name (info));
      return NULL;
    }

  /* The module must really live beside its descriptor, symlinks included. */
  dir = g_path_get_dirname (descriptor_path);
  real_dir = resolve_path (dir);
  real_module = resolve_path (module_path);
  if (real_dir != NULL && real_module != NULL)
    {
      g_autofree char *prefix = g_strconcat (real_dir, G_DIR_SEPARATOR_S, NULL);

      if (!g_str_has_prefix (real_module, prefix))
        {
          g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_OPEN_FAILED,
                       "Plugin module %s named by %s resolves to %s, outside the descriptor's directory; install the module beside its descriptor",
                       module_path, descriptor_path, real_module);
          return NULL;
        }
    }

  module = subagent_plugin_module_load_file (module_path, error);
  if (module == NULL)
    {
      g_prefix_error (error, "Plugin “%s” (%s): ", name, descriptor_path);
      return NULL;
    }

  descriptor = subagent_plugin_module_get_descriptor (module);
  if (!g_str_equal (descriptor->name, name))
    {
      g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR,
                   "Plugin descriptor %s says Name=%s but its module %s calls itself “%s”; make the two agree",
                   descriptor_path, name, module_path, descriptor->name);
      return NULL;
    }

  for (guint i = 0; provides[i] != NULL; i++)
    {
      GType type = subagent_plugin_module_get_provided (module, provides[i]);

      if (type == G_TYPE_INVALID)
        {
          g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_REGISTER_FAILED,
                       "Plugin module %s registered no type for backend “%s”, which %s lists in Provides=; fix the plugin or its descriptor",
                       module_path, provides[i], descriptor_path);
          return NULL;
        }
      if (!check_instantiable (type, interface_type, provides[i], module_path, descriptor_path, error))
        return NULL;
    }

  return g_steal_pointer (&module);
}

/**
 * subagent_plugin_registry_load_plugin:
 * @self: a #SubagentPluginRegistry
 * @info: a plugin of @self
 * @error: return location for a #GError
 *
 * Loads @info's module if that has not happened yet: opens it (the only
 * place a plugin is opened), checks its ABI, runs its register function and
 * checks that it registered, for every backend of `Provides=`, a type
 * implementing the declared interface.
 *
 * Loading happens once per plugin even when several threads call this at
 * the same time; a failure is kept and returned again.
 *
 * Returns: %TRUE if the plugin is loaded, %FALSE with @error set in the
 *   %SUBAGENT_PLUGIN_ERROR domain (the message names the file)
 */
gboolean
subagent_plugin_registry_load_plugin (SubagentPluginRegistry  *self,
                                      SubagentPluginInfo      *info,
                                      GError                 **error)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), FALSE);
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_INFO (info), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return subagent_plugin_info_load_once (info, load_and_check, error);
}

static GObject *
create_from_info (SubagentPluginRegistry  *self,
                  SubagentPluginInfo      *info,
                  GType                    interface_type,
                  const char              *backend,
                  GError                 **error)
{
  GType type;

  if (!subagent_plugin_registry_load_plugin (self, info, error))
    return NULL;
  type = subagent_plugin_module_get_provided (subagent_plugin_info_get_module (info), backend);
  if (!check_instantiable (type, interface_type, backend,
                           subagent_plugin_info_get_module_path (info),
                           subagent_plugin_info_get_descriptor_path (info), error))
    return NULL;
  return g_object_new (type, NULL);
}

/**
 * subagent_plugin_registry_create:
 * @self: a #SubagentPluginRegistry
 * @interface_type: the interface the object must implement, such as
 *   %SUBAGENT_TYPE_ISOLATION_PROVIDER
 * @backend: a backend name such as `docker`
 * @error: return location for a #GError
 *
 * Creates a new instance of the type that serves @backend, from the first
 * plugin of the search path that provides it, loading that plugin first if
 * needed.
 *
 * Returns: (transfer full): a new object implementing @interface_type, or
 *   %NULL with @error set in the %SUBAGENT_PLUGIN_ERROR domain
 */
GObject *
subagent_plugin_registry_create (SubagentPluginRegistry  *self,
                                 GType                    interface_type,
                                 const char              *backend,
                                 GError                 **error)
{
  g_autoptr(SubagentPluginInfo) info = NULL;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);
  g_return_val_if_fail (G_TYPE_IS_INTERFACE (interface_type), NULL);
  g_return_val_if_fail (backend != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  info = subagent_plugin_registry_find_for_backend (self, interface_type, backend, error);
  if (info == NULL)
    return NULL;
  return create_from_info (self, info, interface_type, backend, error);
}

/**
 * subagent_plugin_registry_create_from_plugin:
 * @self: a #SubagentPluginRegistry
 * @plugin_name: the plugin that must serve @backend (a configuration pin)
 * @interface_type: the interface the object must implement
 * @backend: a backend name such as `docker`
 * @error: return location for a #GError
 *
 * Like subagent_plugin_registry_create(), but from the named plugin even if
 * another one earlier in the search path provides @backend too.
 *
 * Returns: (transfer full): a new object implementing @interface_type, or
 *   %NULL with @error set in the %SUBAGENT_PLUGIN_ERROR domain
 */
GObject *
subagent_plugin_registry_create_from_plugin (SubagentPluginRegistry  *self,
                                             const char              *plugin_name,
                                             GType                    interface_type,
                                             const char              *backend,
                                             GError                 **error)
{
  g_autoptr(SubagentPluginInfo) info = NULL;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);
  g_return_val_if_fail (plugin_name != NULL, NULL);
  g_return_val_if_fail (G_TYPE_IS_INTERFACE (interface_type), NULL);
  g_return_val_if_fail (backend != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  info = subagent_plugin_registry_find_plugin (self, plugin_name, error);
  if (info == NULL)
    return NULL;
  if (!subagent_plugin_info_provides (info, backend)
      || !g_str_equal (subagent_plugin_info_get_interface_name (info), g_type_name (interface_type)))
    {
      g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_NOT_FOUND,
                   "Plugin “%s” (%s) does not provide %s backend “%s”; pin a plugin that lists it in Provides=, or remove the pin",
                   plugin_name, subagent_plugin_info_get_descriptor_path (info), g_type_name (interface_type), backend);
      return NULL;
    }
  return create_from_info (self, info, interface_type, backend, error);
}

/**
 * subagent_plugin_registry_get_isolation_provider:
 * @self: a #SubagentPluginRegistry
 * @backend: a backend name: `shared`, or one a plugin provides
 * @error: return location for a #GError
 *
 * Gets the isolation provider for @backend. `shared` is built in and never
 * touches a plugin; other backends are created from their plugin on first
 * use, and that one instance is returned afterwards. Aliases such as `auto`
 * and `container` are the caller's to resolve first
 * (see subagent_isolation_normalize()).
 *
 * Returns: (transfer full): the provider, or %NULL with @error set in the
 *   %SUBAGENT_PLUGIN_ERROR domain
 */
SubagentIsolationProvider *
subagent_plugin_registry_get_isolation_provider (SubagentPluginRegistry  *self,
                                                 const char              *backend,
                                                 GError                 **error)
{
  SubagentIsolationProvider *provider;
  g_autoptr(GObject) created = NULL;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_REGISTRY (self), NULL);
  g_return_val_if_fail (backend != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (g_str_equal (backend, SUBAGENT_ISOLATION_SHARED))
    return subagent_shared_isolation_new ();

  g_mutex_lock (&self->lock);
  provider = g_hash_table_lookup (self->isolation_providers, backend);
  if (provider != NULL)
    g_object_ref (provider);
  g_mutex_unlock (&self->lock);
  if (provider != NULL)
    return provider;

  /* Created unlocked (loading may take a while); the first one stored wins. */
  created = subagent_plugin_registry_create (self, SUBAGENT_TYPE_ISOLATION_PROVIDER, backend, error);
  if (created == NULL)
    return NULL;
  g_mutex_lock (&self->lock);
  provider = g_hash_table_lookup (self->isolation_providers, backend);
  if (provider == NULL)
    {
      provider = SUBAGENT_ISOLATION_PROVIDER (g_steal_pointer (&created));
      g_hash_table_insert (self->isolation_providers, g_strdup (backend), provider);
    }
  g_object_ref (provider);
  g_mutex_unlock (&self->lock);
  return provider;
}
