/* subagent-plugin.c: the GTypeModule a plugin's types are registered on.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "subagent.h"

/**
 * SubagentPluginModule:
 *
 * A #GTypeModule for one plugin module file (`libsubagent-NAME.so`).
 *
 * Loading opens the file with g_module_open(), looks up the module's
 * #SubagentPluginDescriptor (exported with SUBAGENT_PLUGIN_DEFINE()), checks
 * its plugin ABI and calls its register function, which registers the
 * plugin's types on the module and names the backend each one serves with
 * subagent_plugin_module_provide().
 *
 * GType never forgets a dynamic type, and code of a type may run as long as
 * the process does, so a module that was opened and registered anything is
 * never unloaded: it is made resident and kept in use. The same reasoning
 * makes modules process-wide: subagent_plugin_module_load_file() keeps one
 * module per resolved file path (a documented registry guarded by a lock), so
 * two #SubagentPluginRegistry objects naming the same file share its types,
 * and a file is opened at most once per process, whether that worked or not.
 */
struct _SubagentPluginModule
{
  GTypeModule parent_instance;

  char *path;
  GModule *gmodule;
  const SubagentPluginDescriptor *descriptor;

  GMutex lock;            /* guards provided and load_error */
  GHashTable *provided;   /* backend name → GType */
  GError *load_error;     /* why loading failed, once it did */
};

enum { PROP_0, PROP_PATH, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (SubagentPluginModule, subagent_plugin_module, G_TYPE_TYPE_MODULE)

/* Resolved path → SubagentPluginModule, never freed (see above). */
static GMutex modules_lock;
static GHashTable *modules;

static void
set_load_error (SubagentPluginModule *self,
                GError               *error)
{
  g_mutex_lock (&self->lock);
  if (self->load_error == NULL)
    self->load_error = error;
  else
    g_error_free (error);
  g_mutex_unlock (&self->lock);
}

static gboolean
subagent_plugin_module_load (GTypeModule *type_module)
{
  SubagentPluginModule *self = SUBAGENT_PLUGIN_MODULE (type_module);
  gpointer symbol = NULL;
  const SubagentPluginDescriptor *descriptor;
  g_autoptr(GError) register_error = NULL;
  GModule *gmodule;

  if (self->gmodule != NULL)
    return TRUE;

  gmodule = g_module_open (self->path, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  if (gmodule == NULL)
    {
      set_load_error (self, g_error_new (SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_OPEN_FAILED,
                                         "Plugin module %s could not be opened: %s; rebuild or reinstall the plugin, or remove its descriptor",
                                         self->path, g_module_error ()));
      return FALSE;
    }

  if (!g_module_symbol (gmodule, SUBAGENT_PLUGIN_DESCRIPTOR_SYMBOL, &symbol) || symbol == NULL)
    {
      set_load_error (self, g_error_new (SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_MISSING_SYMBOL,
                                         "Plugin module %s exports no “%s”; build it with SUBAGENT_PLUGIN_DEFINE()",
                                         self->path, SUBAGENT_PLUGIN_DESCRIPTOR_SYMBOL));
      g_module_close (gmodule);
      return FALSE;
    }

  /* abi_major and abi_minor lead the struct in every ABI, so they can be
   * read before we know the rest of the layout matches ours. */
  descriptor = symbol;
  if (descriptor->abi_major != SUBAGENT_PLUGIN_ABI_MAJOR || descriptor->abi_minor > SUBAGENT_PLUGIN_ABI_MINOR)
    {
      set_load_error (self, g_error_new (SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_ABI_MISMATCH,
                                         "Plugin module %s was built for plugin ABI %u.%u, host has %u.%u; rebuild the plugin against this libsubagent",
                                         self->path, descriptor->abi_major, descriptor->abi_minor,
                                         SUBAGENT_PLUGIN_ABI_MAJOR, SUBAGENT_PLUGIN_ABI_MINOR));
      g_module_close (gmodule);
      return FALSE;
    }

  if (descriptor->name == NULL || descriptor->register_types == NULL)
    {
      set_load_error (self, g_error_new (SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_REGISTER_FAILED,
                                         "Plugin module %s has a descriptor without %s; fill in every field of SUBAGENT_PLUGIN_DEFINE()",
                                         self->path, descriptor->name == NULL ? "a name" : "a register function"));
      g_module_close (gmodule);
      return FALSE;
    }

  /* From here on types may be registered that point into the module's code. */
  g_module_make_resident (gmodule);
  self->gmodule = gmodule;
  self->descriptor = descriptor;

  if (!descriptor->register_types (self, &register_error))
    {
      set_load_error (self, g_error_new (SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_REGISTER_FAILED,
                                         "Plugin module %s failed to register its types: %s; fix or remove the plugin",
                                         self->path,
                                         register_error ? register_error->message : "its register function returned FALSE without an error"));
    }
  else if (g_hash_table_size (self->provided) == 0)
    {
      set_load_error (self, g_error_new (SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_REGISTER_FAILED,
                                         "Plugin module %s registered no backend; its register function must call subagent_plugin_module_provide()",
                                         self->path));
    }

  /* Report success to GTypeModule even when registration failed: whatever
   * was registered must stay "in use", or GType would try to reload it.
   * subagent_plugin_module_load_file() reports load_error instead. */
  return TRUE;
}

static void
subagent_plugin_module_unload (GTypeModule *type_module)
{
  /* Never reached: every module stays in use. Keeping the code mapped is
   * the only safe answer anyway. */
  g_debug ("Not unloading plugin module %s: plugin modules stay resident",
           SUBAGENT_PLUGIN_MODULE (type_module)->path);
}

static void
subagent_plugin_module_finalize (GObject *object)
{
  SubagentPluginModule *self = SUBAGENT_PLUGIN_MODULE (object);

  g_free (self->path);
  g_hash_table_unref (self->provided);
  g_clear_error (&self->load_error);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (subagent_plugin_module_parent_class)->finalize (object);
}

static void
subagent_plugin_module_constructed (GObject *object)
{
  SubagentPluginModule *self = SUBAGENT_PLUGIN_MODULE (object);

  G_OBJECT_CLASS (subagent_plugin_module_parent_class)->constructed (object);
  g_type_module_set_name (G_TYPE_MODULE (self), self->path);
}

static void
subagent_plugin_module_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SubagentPluginModule *self = SUBAGENT_PLUGIN_MODULE (object);

  switch (prop_id)
    {
    case PROP_PATH:
      g_value_set_string (value, self->path);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_plugin_module_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  SubagentPluginModule *self = SUBAGENT_PLUGIN_MODULE (object);

  switch (prop_id)
    {
    case PROP_PATH:
      self->path = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_plugin_module_class_init (SubagentPluginModuleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GTypeModuleClass *module_class = G_TYPE_MODULE_CLASS (klass);

  object_class->finalize = subagent_plugin_module_finalize;
  object_class->constructed = subagent_plugin_module_constructed;
  object_class->get_property = subagent_plugin_module_get_property;
  object_class->set_property = subagent_plugin_module_set_property;
  module_class->load = subagent_plugin_module_load;
  module_class->unload = subagent_plugin_module_unload;

  /**
   * SubagentPluginModule:path:
   *
   * The absolute, resolved path of the module file.
   */
  properties[PROP_PATH] =
    g_param_spec_string ("path", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_plugin_module_init (SubagentPluginModule *self)
{
  g_mutex_init (&self->lock);
  self->provided = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

/**
 * subagent_plugin_module_load_file:
 * @path: the module file (`libsubagent-NAME.so`)
 * @error: return location for a #GError
 *
 * Opens and registers the plugin module at @path, once per process.
 *
 * The first call for a file (after resolving symbolic links) opens it, checks
 * its descriptor and ABI and runs its register function; later calls, from
 * any thread or #SubagentPluginRegistry, return the same module, or the same
 * error: a module that failed is not opened again.
 *
 * Most hosts never call this: subagent_plugin_registry_create() loads what
 * a backend needs.
 *
 * Returns: (transfer full): the loaded module, or %NULL with @error set in
 *   the %SUBAGENT_PLUGIN_ERROR domain
 */
SubagentPluginModule *
subagent_plugin_module_load_file (const char  *path,
                                  GError     **error)
{
  g_autofree char *resolved = NULL;
  SubagentPluginModule *module;
  char *real;
  gboolean used;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  real = realpath (path, NULL);
  if (real == NULL)
    {
      int saved_errno = errno;

      g_set_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_OPEN_FAILED,
                   "Plugin module %s could not be opened: %s; build or install the plugin, or remove its descriptor",
                   path, g_strerror (saved_errno));
      return NULL;
    }
  resolved = g_strdup (real);
  free (real);

  g_mutex_lock (&modules_lock);
  if (modules == NULL)
    modules = g_hash_table_new (g_str_hash, g_str_equal);
  module = g_hash_table_lookup (modules, resolved);
  if (module == NULL)
    {
      module = g_object_new (SUBAGENT_TYPE_PLUGIN_MODULE, "path", resolved, NULL);
      g_hash_table_insert (modules, module->path, module);
      /* Holding modules_lock here makes the open-and-register happen once;
       * register functions only call GType and provide(), never back into us. */
      used = g_type_module_use (G_TYPE_MODULE (module));
      g_assert (used || module->load_error != NULL);
    }
  g_mutex_unlock (&modules_lock);

  g_mutex_lock (&module->lock);
  if (module->load_error != NULL)
    {
      if (error != NULL)
        *error = g_error_copy (module->load_error);
      g_mutex_unlock (&module->lock);
      return NULL;
    }
  g_mutex_unlock (&module->lock);

  return g_object_ref (module);
}

/**
 * subagent_plugin_module_provide:
 * @self: a #SubagentPluginModule being loaded
 * @backend: a backend name (such as `docker`), `[A-Za-z0-9_-]`
 * @type: the type that serves @backend, registered on @self
 *
 * Says that @type serves @backend. Call it from the register function, once
 * per backend the `.plugin` descriptor lists in `Provides=`.
 *
 * An invalid @type (a failed registration returns 0) makes loading fail with
 * %SUBAGENT_PLUGIN_ERROR_REGISTER_FAILED instead of crashing later.
 */
void
subagent_plugin_module_provide (SubagentPluginModule *self,
                                const char           *backend,
                                GType                 type)
{
  g_return_if_fail (SUBAGENT_IS_PLUGIN_MODULE (self));
  g_return_if_fail (backend != NULL);

  if (type == G_TYPE_INVALID)
    {
      set_load_error (self, g_error_new (SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_REGISTER_FAILED,
                                         "Plugin module %s provided backend “%s” with an invalid type (did registering it fail?); fix the plugin",
                                         self->path, backend));
      return;
    }

  g_mutex_lock (&self->lock);
  if (g_hash_table_contains (self->provided, backend))
    g_debug ("Plugin module %s provides backend “%s” twice; keeping the first type",
             self->path, backend);
  else
    g_hash_table_insert (self->provided, g_strdup (backend), GSIZE_TO_POINTER (type));
  g_mutex_unlock (&self->lock);
}

/**
 * subagent_plugin_module_get_provided:
 * @self: a #SubagentPluginModule
 * @backend: a backend name
 *
 * Looks up the type the module registered for @backend.
 *
 * Returns: the type, or %G_TYPE_INVALID when the module does not provide @backend
 */
GType
subagent_plugin_module_get_provided (SubagentPluginModule *self,
                                     const char           *backend)
{
  GType type;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_MODULE (self), G_TYPE_INVALID);
  g_return_val_if_fail (backend != NULL, G_TYPE_INVALID);

  g_mutex_lock (&self->lock);
  type = GPOINTER_TO_SIZE (g_hash_table_lookup (self->provided, backend));
  g_mutex_unlock (&self->lock);
  return type;
}

static int
compare_names (const void *a,
               const void *b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/**
 * subagent_plugin_module_list_backends:
 * @self: a #SubagentPluginModule
 *
 * Lists the backends the module provides, sorted by name.
 *
 * Returns: (transfer full) (array zero-terminated=1): backend names
 */
char **
subagent_plugin_module_list_backends (SubagentPluginModule *self)
{
  g_autofree const char **keys = NULL;
  char **names;

  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_MODULE (self), NULL);

  g_mutex_lock (&self->lock);
  keys = (const char **) g_hash_table_get_keys_as_array (self->provided, NULL);
  names = g_strdupv ((char **) keys);
  g_mutex_unlock (&self->lock);
  qsort (names, g_strv_length (names), sizeof (char *), compare_names);
  return names;
}

/**
 * subagent_plugin_module_get_path:
 * @self: a #SubagentPluginModule
 *
 * Gets the module file's resolved path.
 *
 * Returns: the path
 */
const char *
subagent_plugin_module_get_path (SubagentPluginModule *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_MODULE (self), NULL);

  return self->path;
}

/**
 * subagent_plugin_module_get_descriptor:
 * @self: a #SubagentPluginModule
 *
 * Gets the descriptor the module exports (its name, version, license and
 * ABI), once it has been opened.
 *
 * Returns: (transfer none) (nullable): the descriptor, or %NULL if the module
 *   could not be opened
 */
const SubagentPluginDescriptor *
subagent_plugin_module_get_descriptor (SubagentPluginModule *self)
{
  g_return_val_if_fail (SUBAGENT_IS_PLUGIN_MODULE (self), NULL);

  return self->descriptor;
}
