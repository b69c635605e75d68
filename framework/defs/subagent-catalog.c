/* subagent-catalog.c: the subagent definitions of a workspace.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-catalog-private.h"

/**
 * SubagentCatalog:
 *
 * The subagent definitions of a workspace.
 *
 * [method@Catalog.load] reads the `.yaml`, `.yml`, `.json` and `.md` files of `<root>/.subagent/agents/`
 * and Claude Code agent files, the `.md` files of `<root>/.claude/agents/`. A `.md` file
 * is YAML front matter (between two `---` lines) whose body becomes the
 * system prompt. A definition in `.subagent/agents` wins over a
 * `.claude/agents` one of the same name. Missing directories are not an
 * error.
 *
 * Files that cannot be used are skipped, and each one leaves a
 * [struct@Diagnostic] (file, line, column, reason); so do keys that were
 * ignored. `subagentctl defs --check` prints them.
 *
 * Lookups ignore case and treat `-` and `_` alike. A catalog is not
 * thread-safe; use it from one thread (loading itself runs in a worker
 * thread with [method@Catalog.load_async]).
 */
struct _SubagentCatalog
{
  GObject parent_instance;

  GHashTable *defs;             /* normalised name → SubagentDef */
  GPtrArray *diagnostics;       /* SubagentDiagnostic, sorted */
};

G_DEFINE_FINAL_TYPE (SubagentCatalog, subagent_catalog, G_TYPE_OBJECT)

static void
subagent_catalog_finalize (GObject *object)
{
  SubagentCatalog *self = SUBAGENT_CATALOG (object);

  g_hash_table_unref (self->defs);
  g_ptr_array_unref (self->diagnostics);

  G_OBJECT_CLASS (subagent_catalog_parent_class)->finalize (object);
}

static void
subagent_catalog_class_init (SubagentCatalogClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_catalog_finalize;
}

static void
subagent_catalog_init (SubagentCatalog *self)
{
  self->defs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->diagnostics = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_diagnostic_unref);
}

/**
 * subagent_catalog_new:
 *
 * Creates an empty catalog; fill it with [method@Catalog.load] or
 * [method@Catalog.add].
 *
 * Returns: (transfer full): a new catalog
 */
SubagentCatalog *
subagent_catalog_new (void)
{
  return g_object_new (SUBAGENT_TYPE_CATALOG, NULL);
}

/**
 * subagent_catalog_new_for_root:
 * @root: a workspace directory
 * @error: return location for a #GError
 *
 * Creates a catalog and loads the definitions of @root into it. This does
 * blocking I/O; see [method@Catalog.load_async].
 *
 * Returns: (transfer full): a new catalog, or %NULL if @root is not a
 *   readable directory
 */
SubagentCatalog *
subagent_catalog_new_for_root (const char  *root,
                               GError     **error)
{
  g_autoptr(SubagentCatalog) self = subagent_catalog_new ();

  if (!subagent_catalog_load (self, root, error))
    return NULL;
  return g_steal_pointer (&self);
}

static void
catalog_merge (SubagentCatalog *self,
               SubagentCatalogScan *scan)
{
  for (guint i = 0; i < scan->defs->len; i++)
    subagent_catalog_add (self, scan->defs->pdata[i]);
  g_ptr_array_extend_and_steal (self->diagnostics, g_steal_pointer (&scan->diagnostics));
  g_ptr_array_sort (self->diagnostics, subagent_catalog_compare_diagnostics);
}

/* ---- public API --------------------------------------------------------- */

/**
 * subagent_catalog_load:
 * @self: a catalog
 * @root: a workspace directory
 * @error: return location for a #GError
 *
 * Adds the definitions of @root (see [class@Catalog] for where they are
 * read from) and the diagnostics of the files that were skipped. A
 * definition replaces an earlier one of the same name; to reload, make a
 * new catalog. This does blocking I/O; see [method@Catalog.load_async].
 *
 * Returns: %TRUE, or %FALSE with @error set if @root is not an existing
 *   directory; problems with single files are diagnostics, not errors
 */
gboolean
subagent_catalog_load (SubagentCatalog  *self,
                       const char       *root,
                       GError          **error)
{
  g_autoptr(SubagentCatalogScan) scan = NULL;

  g_return_val_if_fail (SUBAGENT_IS_CATALOG (self), FALSE);
  g_return_val_if_fail (root != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  scan = subagent_catalog_scan (root, NULL, error);
  if (scan == NULL)
    return FALSE;
  catalog_merge (self, scan);
  return TRUE;
}

static void
load_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  GError *error = NULL;
  SubagentCatalogScan *scan = subagent_catalog_scan (task_data, cancellable, &error);

  if (scan == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, scan, (GDestroyNotify) subagent_catalog_scan_free);
}

/* Back on the caller's context: only here does the catalog change. */
static void
load_thread_done (GObject      *source_object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(GTask) outer = user_data;
  g_autoptr(SubagentCatalogScan) scan = NULL;
  GError *error = NULL;

  scan = g_task_propagate_pointer (G_TASK (result), &error);
  if (scan == NULL)
    {
      g_task_return_error (outer, error);
      return;
    }
  catalog_merge (SUBAGENT_CATALOG (source_object), scan);
  g_task_return_boolean (outer, TRUE);
}

/**
 * subagent_catalog_load_async:
 * @self: a catalog
 * @root: a workspace directory
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the definitions are loaded
 * @user_data: (closure): data for @callback
 *
 * Like [method@Catalog.load], but reads the files in a worker thread. The
 * catalog changes on the thread-default main context of the call, just
 * before @callback runs.
 */
void
subagent_catalog_load_async (SubagentCatalog     *self,
                             const char          *root,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_autoptr(GTask) outer = NULL;
  g_autoptr(GTask) inner = NULL;

  g_return_if_fail (SUBAGENT_IS_CATALOG (self));
  g_return_if_fail (root != NULL);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  outer = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (outer, subagent_catalog_load_async);
  inner = g_task_new (self, cancellable, load_thread_done, g_object_ref (outer));
  g_task_set_task_data (inner, g_strdup (root), g_free);
  g_task_run_in_thread (inner, load_thread);
}

/**
 * subagent_catalog_load_finish:
 * @self: a catalog
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Returns: %TRUE if the definitions were added
 */
gboolean
subagent_catalog_load_finish (SubagentCatalog  *self,
                              GAsyncResult     *result,
                              GError          **error)
{
  g_return_val_if_fail (SUBAGENT_IS_CATALOG (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == subagent_catalog_load_async, FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * subagent_catalog_add:
 * @self: a catalog
 * @def: a definition, such as one a host builds in code
 *
 * Adds @def, replacing a definition of the same name (names ignore case,
 * `-` and `_`).
 */
void
subagent_catalog_add (SubagentCatalog *self,
                      SubagentDef     *def)
{
  g_return_if_fail (SUBAGENT_IS_CATALOG (self));
  g_return_if_fail (SUBAGENT_IS_DEF (def));

  g_hash_table_replace (self->defs, subagent_catalog_normalize_name (subagent_def_get_name (def)), g_object_ref (def));
}

/**
 * subagent_catalog_lookup:
 * @self: a catalog
 * @name: a definition name; case, `-` and `_` do not matter
 *
 * Returns: (transfer none) (nullable): the definition, or %NULL
 */
SubagentDef *
subagent_catalog_lookup (SubagentCatalog *self,
                         const char      *name)
{
  g_autofree char *key = NULL;

  g_return_val_if_fail (SUBAGENT_IS_CATALOG (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  key = subagent_catalog_normalize_name (name);
  return g_hash_table_lookup (self->defs, key);
}

static int
compare_defs (gconstpointer a,
              gconstpointer b)
{
  const char *na = subagent_def_get_name (*(SubagentDef * const *) a);
  const char *nb = subagent_def_get_name (*(SubagentDef * const *) b);
  g_autofree char *ka = subagent_catalog_normalize_name (na);
  g_autofree char *kb = subagent_catalog_normalize_name (nb);
  int c = strcmp (ka, kb);

  return c != 0 ? c : strcmp (na, nb);
}

/**
 * subagent_catalog_list:
 * @self: a catalog
 *
 * The array holds a reference to each definition and drops them when it
 * is freed, so it stays valid after the catalog changes.
 *
 * Returns: (transfer container) (element-type SubagentDef): every
 *   definition, sorted by name
 */
GPtrArray *
subagent_catalog_list (SubagentCatalog *self)
{
  GPtrArray *list;
  GHashTableIter iter;
  gpointer value;

  g_return_val_if_fail (SUBAGENT_IS_CATALOG (self), NULL);

  list = g_ptr_array_new_full (g_hash_table_size (self->defs), g_object_unref);
  g_hash_table_iter_init (&iter, self->defs);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (list, g_object_ref (value));
  g_ptr_array_sort (list, compare_defs);
  return list;
}

/**
 * subagent_catalog_get_n_definitions:
 * @self: a catalog
 *
 * Returns: how many definitions the catalog holds
 */
guint
subagent_catalog_get_n_definitions (SubagentCatalog *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CATALOG (self), 0);

  return g_hash_table_size (self->defs);
}

/**
 * subagent_catalog_get_diagnostics:
 * @self: a catalog
 *
 * The problems found by every load so far, sorted by file, line and column.
 *
 * Returns: (transfer none) (element-type SubagentDiagnostic): the diagnostics
 */
GPtrArray *
subagent_catalog_get_diagnostics (SubagentCatalog *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CATALOG (self), NULL);

  return self->diagnostics;
}

/**
 * subagent_catalog_has_errors:
 * @self: a catalog
 *
 * Returns: %TRUE if a diagnostic has %SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR,
 *   that is, some file was skipped
 */
gboolean
subagent_catalog_has_errors (SubagentCatalog *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CATALOG (self), FALSE);

  for (guint i = 0; i < self->diagnostics->len; i++)
    if (subagent_diagnostic_get_severity (self->diagnostics->pdata[i]) == SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR)
      return TRUE;
  return FALSE;
}

/**
 * subagent_catalog_diagnostics_to_json:
 * @self: a catalog
 *
 * Returns: (transfer full): an array of [method@Diagnostic.to_json] objects
 */
JsonNode *
subagent_catalog_diagnostics_to_json (SubagentCatalog *self)
{
  JsonArray *array;
  JsonNode *node;

  g_return_val_if_fail (SUBAGENT_IS_CATALOG (self), NULL);

  array = json_array_sized_new (self->diagnostics->len);
  for (guint i = 0; i < self->diagnostics->len; i++)
    json_array_add_object_element (array, subagent_diagnostic_to_json (self->diagnostics->pdata[i]));
  node = json_node_init_array (json_node_alloc (), array);
  json_array_unref (array);
  return node;
}
