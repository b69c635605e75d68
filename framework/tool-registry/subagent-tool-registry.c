/* subagent-tool-registry.c: the tool registry interface, the simple table and
 * the narrowing child view.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"

/**
 * SubagentToolRegistry:
 *
 * The interface hosts adapt their tool system to: list the tools, look one
 * up by name, invoke one by name.
 *
 * Built in are [class@SimpleToolRegistry], a plain table, and
 * [class@ChildToolRegistry], the narrowing view a child run gets of its
 * parent's registry.
 *
 * Implementations must be safe to call from several threads: children of one
 * parent run in parallel and share the parent's registry.
 */

G_DEFINE_INTERFACE (SubagentToolRegistry, subagent_tool_registry, G_TYPE_OBJECT)

static JsonNode *
subagent_tool_registry_real_invoke (SubagentToolRegistry  *self,
                                    const char            *name,
                                    JsonObject            *arguments,
                                    GCancellable          *cancellable,
                                    GError               **error)
{
  g_autoptr(SubagentTool) tool = subagent_tool_registry_lookup (self, name);

  if (tool == NULL)
    {
      g_set_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_NOT_FOUND,
                   "No tool named “%s” in registry %s; list the registry's tools for the names it has",
                   name, G_OBJECT_TYPE_NAME (self));
      return NULL;
    }
  return subagent_tool_call (tool, arguments, cancellable, error);
}

static void
subagent_tool_registry_default_init (SubagentToolRegistryInterface *iface)
{
  iface->invoke = subagent_tool_registry_real_invoke;
}

static int
compare_tools_by_name (gconstpointer a,
                       gconstpointer b)
{
  SubagentTool *ta = *(SubagentTool * const *) a;
  SubagentTool *tb = *(SubagentTool * const *) b;

  return strcmp (subagent_tool_get_name (ta), subagent_tool_get_name (tb));
}

/**
 * subagent_tool_registry_list_tools:
 * @self: a #SubagentToolRegistry
 *
 * Lists the tools of the registry, sorted by name.
 *
 * Returns: (transfer full) (element-type SubagentTool): the tools
 */
GPtrArray *
subagent_tool_registry_list_tools (SubagentToolRegistry *self)
{
  SubagentToolRegistryInterface *iface;
  GPtrArray *tools = NULL;

  g_return_val_if_fail (SUBAGENT_IS_TOOL_REGISTRY (self), NULL);

  iface = SUBAGENT_TOOL_REGISTRY_GET_IFACE (self);
  if (iface->list_tools != NULL)
    tools = iface->list_tools (self);
  if (tools == NULL)
    tools = g_ptr_array_new_with_free_func (g_object_unref);
  /* Sorted here as well, so every implementation keeps the documented order. */
  g_ptr_array_sort (tools, compare_tools_by_name);
  return tools;
}

/**
 * subagent_tool_registry_lookup:
 * @self: a #SubagentToolRegistry
 * @name: a tool name
 *
 * Looks a tool up by its exact name.
 *
 * Returns: (transfer full) (nullable): the tool, or %NULL if the registry has none of that name
 */
SubagentTool *
subagent_tool_registry_lookup (SubagentToolRegistry *self,
                               const char           *name)
{
  SubagentToolRegistryInterface *iface;
  SubagentTool *tool;

  g_return_val_if_fail (SUBAGENT_IS_TOOL_REGISTRY (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  iface = SUBAGENT_TOOL_REGISTRY_GET_IFACE (self);
  if (iface->lookup == NULL)
    return NULL;
  tool = iface->lookup (self, name);
  if (tool != NULL && g_strcmp0 (subagent_tool_get_name (tool), name) != 0)
    {
      g_critical ("%s returned tool “%s” for lookup of “%s”; ignoring it",
                  G_OBJECT_TYPE_NAME (self), subagent_tool_get_name (tool), name);
      g_clear_object (&tool);
    }
  return tool;
}

/**
 * subagent_tool_registry_has_tool:
 * @self: a #SubagentToolRegistry
 * @name: a tool name
 *
 * Returns: whether subagent_tool_registry_lookup() finds @name
 */
gboolean
subagent_tool_registry_has_tool (SubagentToolRegistry *self,
                                 const char           *name)
{
  g_autoptr(SubagentTool) tool = NULL;

  g_return_val_if_fail (SUBAGENT_IS_TOOL_REGISTRY (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  tool = subagent_tool_registry_lookup (self, name);
  return tool != NULL;
}

/**
 * subagent_tool_registry_invoke:
 * @self: a #SubagentToolRegistry
 * @name: the tool to run
 * @arguments: (nullable): the call's arguments
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs the tool @name in the calling thread. The default implementation
 * looks the tool up and calls it, and fails with
 * %SUBAGENT_TOOL_ERROR_NOT_FOUND when there is none.
 *
 * Returns: (transfer full): the tool's result, or %NULL with @error set
 */
JsonNode *
subagent_tool_registry_invoke (SubagentToolRegistry  *self,
                               const char            *name,
                               JsonObject            *arguments,
                               GCancellable          *cancellable,
                               GError               **error)
{
  SubagentToolRegistryInterface *iface;
  g_autoptr(GError) local_error = NULL;
  JsonNode *result;

  g_return_val_if_fail (SUBAGENT_IS_TOOL_REGISTRY (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  iface = SUBAGENT_TOOL_REGISTRY_GET_IFACE (self);
  g_assert (iface->invoke != NULL);
  result = iface->invoke (self, name, arguments, cancellable, &local_error);
  if (result == NULL && local_error == NULL)
    g_set_error (&local_error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_FAILED,
                 "Registry %s failed to run tool “%s” without saying why",
                 G_OBJECT_TYPE_NAME (self), name);
  if (local_error != NULL)
    {
      g_clear_pointer (&result, json_node_unref);
      g_propagate_error (error, g_steal_pointer (&local_error));
    }
  return result;
}

/**
 * subagent_tool_registry_list_names:
 * @self: a #SubagentToolRegistry
 *
 * Returns: (transfer full) (array zero-terminated=1): the names of the tools, sorted
 */
char **
subagent_tool_registry_list_names (SubagentToolRegistry *self)
{
  g_autoptr(GPtrArray) tools = NULL;
  GStrvBuilder *builder;
  char **names;

  g_return_val_if_fail (SUBAGENT_IS_TOOL_REGISTRY (self), NULL);

  tools = subagent_tool_registry_list_tools (self);
  builder = g_strv_builder_new ();
  for (guint i = 0; i < tools->len; i++)
    g_strv_builder_add (builder, subagent_tool_get_name (tools->pdata[i]));
  names = g_strv_builder_end (builder);
  g_strv_builder_unref (builder);
  return names;
}

/**
 * subagent_tool_name_is_delegation:
 * @name: a tool name
 *
 * Whether @name is one of the delegation tools (`subagent`, `subagent_NAME`,
 * `subagent_batch`, `team`), which a child registry never offers: a child
 * that could call them would delegate as if it were its parent. The check
 * ignores ASCII case and also takes `-` and `.` as separators, so a host
 * that spelled one `Subagent-Batch` cannot get it past a child view.
 *
 * Returns: %TRUE if @name names a delegation tool
 */
gboolean
subagent_tool_name_is_delegation (const char *name)
{
  static const char prefix[] = "subagent";
  const gsize len = sizeof prefix - 1;

  g_return_val_if_fail (name != NULL, FALSE);

  if (g_ascii_strcasecmp (name, "team") == 0)
    return TRUE;
  if (g_ascii_strncasecmp (name, prefix, len) != 0)
    return FALSE;
  return name[len] == '\0' || name[len] == '_' || name[len] == '-' || name[len] == '.';
}

/* ------------------------------------------------------------------------ */

/**
 * SubagentSimpleToolRegistry:
 *
 * A plain, thread-safe name → tool table.
 */
struct _SubagentSimpleToolRegistry
{
  GObject parent_instance;

  GMutex lock;
  GHashTable *tools; /* name (owned by the tool) → SubagentTool (owned) */
};

static void simple_registry_iface_init (SubagentToolRegistryInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SubagentSimpleToolRegistry, subagent_simple_tool_registry, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SUBAGENT_TYPE_TOOL_REGISTRY, simple_registry_iface_init))

static GPtrArray *
simple_registry_list_tools (SubagentToolRegistry *registry)
{
  SubagentSimpleToolRegistry *self = SUBAGENT_SIMPLE_TOOL_REGISTRY (registry);
  GPtrArray *tools = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->tools);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (tools, g_object_ref (value));
  g_mutex_unlock (&self->lock);

  g_ptr_array_sort (tools, compare_tools_by_name);
  return tools;
}

static SubagentTool *
simple_registry_lookup (SubagentToolRegistry *registry,
                        const char           *name)
{
  SubagentSimpleToolRegistry *self = SUBAGENT_SIMPLE_TOOL_REGISTRY (registry);
  SubagentTool *tool;

  g_mutex_lock (&self->lock);
  tool = g_hash_table_lookup (self->tools, name);
  if (tool != NULL)
    g_object_ref (tool);
  g_mutex_unlock (&self->lock);
  return tool;
}

static void
simple_registry_iface_init (SubagentToolRegistryInterface *iface)
{
  iface->list_tools = simple_registry_list_tools;
  iface->lookup = simple_registry_lookup;
}

static void
subagent_simple_tool_registry_finalize (GObject *object)
{
  SubagentSimpleToolRegistry *self = SUBAGENT_SIMPLE_TOOL_REGISTRY (object);

  g_clear_pointer (&self->tools, g_hash_table_unref);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (subagent_simple_tool_registry_parent_class)->finalize (object);
}

static void
subagent_simple_tool_registry_class_init (SubagentSimpleToolRegistryClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_simple_tool_registry_finalize;
}

static void
subagent_simple_tool_registry_init (SubagentSimpleToolRegistry *self)
{
  g_mutex_init (&self->lock);
  self->tools = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_object_unref);
}

/**
 * subagent_simple_tool_registry_new:
 *
 * Returns: (transfer full): a new, empty #SubagentSimpleToolRegistry
 */
SubagentSimpleToolRegistry *
subagent_simple_tool_registry_new (void)
{
  return g_object_new (SUBAGENT_TYPE_SIMPLE_TOOL_REGISTRY, NULL);
}

/**
 * subagent_simple_tool_registry_add:
 * @self: a #SubagentSimpleToolRegistry
 * @tool: the tool to add
 *
 * Adds @tool, replacing any tool of the same name.
 */
void
subagent_simple_tool_registry_add (SubagentSimpleToolRegistry *self,
                                   SubagentTool               *tool)
{
  g_return_if_fail (SUBAGENT_IS_SIMPLE_TOOL_REGISTRY (self));
  g_return_if_fail (SUBAGENT_IS_TOOL (tool));

  g_object_ref (tool);
  g_mutex_lock (&self->lock);
  /* The key is owned by the tool, so replace the whole entry. */
  g_hash_table_remove (self->tools, subagent_tool_get_name (tool));
  g_hash_table_insert (self->tools, (gpointer) subagent_tool_get_name (tool), tool);
  g_mutex_unlock (&self->lock);
}

/**
 * subagent_simple_tool_registry_remove:
 * @self: a #SubagentSimpleToolRegistry
 * @name: the name of the tool to remove
 *
 * Returns: %TRUE if a tool of that name was removed
 */
gboolean
subagent_simple_tool_registry_remove (SubagentSimpleToolRegistry *self,
                                      const char                 *name)
{
  gboolean removed;

  g_return_val_if_fail (SUBAGENT_IS_SIMPLE_TOOL_REGISTRY (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  g_mutex_lock (&self->lock);
  removed = g_hash_table_remove (self->tools, name);
  g_mutex_unlock (&self->lock);
  return removed;
}

/* ------------------------------------------------------------------------ */

/**
 * SubagentChildToolRegistry:
 *
 * The registry a child run sees: a live view of its parent's registry,
 * narrowed by a whitelist and a disallowed list.
 *
 * A tool is visible when the parent has it, it is not a delegation tool (see
 * subagent_tool_name_is_delegation()), the whitelist is %NULL or names it
 * exactly, and the disallowed list does not name it. A whitelisted name the
 * parent lacks is simply absent: a child can only narrow, never widen. Every
 * call goes through the parent's own lookup and invoke, so a child of a child
 * narrows further and tools the parent gains or loses show at once.
 *
 * Invoking a name that is not visible fails with
 * %SUBAGENT_TOOL_ERROR_NOT_ALLOWED when the parent has it and
 * %SUBAGENT_TOOL_ERROR_NOT_FOUND otherwise, without reaching the parent's tool.
 */
struct _SubagentChildToolRegistry
{
  GObject parent_instance;

  SubagentToolRegistry *parent;
  char **whitelist;  /* NULL: everything the parent has */
  char **disallowed; /* never NULL once constructed */
};

enum {
  CHILD_PROP_0,
  CHILD_PROP_PARENT,
  CHILD_PROP_WHITELIST,
  CHILD_PROP_DISALLOWED,
  CHILD_N_PROPS
};

static GParamSpec *child_properties[CHILD_N_PROPS];

static void child_registry_iface_init (SubagentToolRegistryInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SubagentChildToolRegistry, subagent_child_tool_registry, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SUBAGENT_TYPE_TOOL_REGISTRY, child_registry_iface_init))

static gboolean
child_registry_allows (SubagentChildToolRegistry *self,
                       const char                *name)
{
  if (subagent_tool_name_is_delegation (name))
    return FALSE;
  if (self->whitelist != NULL && !g_strv_contains ((const char * const *) self->whitelist, name))
    return FALSE;
  return !g_strv_contains ((const char * const *) self->disallowed, name);
}

static GPtrArray *
child_registry_list_tools (SubagentToolRegistry *registry)
{
  SubagentChildToolRegistry *self = SUBAGENT_CHILD_TOOL_REGISTRY (registry);
  g_autoptr(GPtrArray) from_parent = subagent_tool_registry_list_tools (self->parent);
  GPtrArray *tools = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < from_parent->len; i++)
    {
      SubagentTool *tool = from_parent->pdata[i];
      if (child_registry_allows (self, subagent_tool_get_name (tool)))
        g_ptr_array_add (tools, g_object_ref (tool));
    }
  return tools;
}

static SubagentTool *
child_registry_lookup (SubagentToolRegistry *registry,
                       const char           *name)
{
  SubagentChildToolRegistry *self = SUBAGENT_CHILD_TOOL_REGISTRY (registry);

  if (!child_registry_allows (self, name))
    return NULL;
  return subagent_tool_registry_lookup (self->parent, name);
}

static JsonNode *
child_registry_invoke (SubagentToolRegistry  *registry,
                       const char            *name,
                       JsonObject            *arguments,
                       GCancellable          *cancellable,
                       GError               **error)
{
  SubagentChildToolRegistry *self = SUBAGENT_CHILD_TOOL_REGISTRY (registry);
  gboolean parent_has = subagent_tool_registry_has_tool (self->parent, name);

  /* Decided from what the parent *shows*, so the error never reveals tools
   * that only an ancestor further up has. */
  if (!parent_has || !child_registry_allows (self, name))
    {
      if (parent_has)
        g_set_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_NOT_ALLOWED,
                     "Tool “%s” is not allowed in this child run; its definition's tool whitelist, "
                     "disallowed list or delegation rules exclude it",
                     name);
      else
        g_set_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_NOT_FOUND,
                     "No tool named “%s” is available to this child run", name);
      return NULL;
    }
  /* Through the parent's invoke, so the parent's own narrowing applies too. */
  return subagent_tool_registry_invoke (self->parent, name, arguments, cancellable, error);
}

static void
child_registry_iface_init (SubagentToolRegistryInterface *iface)
{
  iface->list_tools = child_registry_list_tools;
  iface->lookup = child_registry_lookup;
  iface->invoke = child_registry_invoke;
}

static void
subagent_child_tool_registry_constructed (GObject *object)
{
  SubagentChildToolRegistry *self = SUBAGENT_CHILD_TOOL_REGISTRY (object);

  G_OBJECT_CLASS (subagent_child_tool_registry_parent_class)->constructed (object);

  if (self->parent == NULL)
    g_critical ("SubagentChildToolRegistry needs a parent registry");
  if (self->disallowed == NULL)
    self->disallowed = g_new0 (char *, 1);
}

static void
subagent_child_tool_registry_finalize (GObject *object)
{
  SubagentChildToolRegistry *self = SUBAGENT_CHILD_TOOL_REGISTRY (object);

  g_clear_object (&self->parent);
  g_clear_pointer (&self->whitelist, g_strfreev);
  g_clear_pointer (&self->disallowed, g_strfreev);

  G_OBJECT_CLASS (subagent_child_tool_registry_parent_class)->finalize (object);
}

static void
subagent_child_tool_registry_get_property (GObject    *object,
                                           guint       prop_id,
                                           GValue     *value,
                                           GParamSpec *pspec)
{
  SubagentChildToolRegistry *self = SUBAGENT_CHILD_TOOL_REGISTRY (object);

  switch (prop_id)
    {
    case CHILD_PROP_WHITELIST:
      g_value_set_boxed (value, self->whitelist);
      break;
    case CHILD_PROP_DISALLOWED:
      g_value_set_boxed (value, self->disallowed);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_child_tool_registry_set_property (GObject      *object,
                                           guint         prop_id,
                                           const GValue *value,
                                           GParamSpec   *pspec)
{
  SubagentChildToolRegistry *self = SUBAGENT_CHILD_TOOL_REGISTRY (object);

  switch (prop_id)
    {
    case CHILD_PROP_PARENT:
      self->parent = g_value_dup_object (value);
      break;
    case CHILD_PROP_WHITELIST:
      self->whitelist = g_value_dup_boxed (value);
      break;
    case CHILD_PROP_DISALLOWED:
      self->disallowed = g_value_dup_boxed (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_child_tool_registry_class_init (SubagentChildToolRegistryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = subagent_child_tool_registry_constructed;
  object_class->finalize = subagent_child_tool_registry_finalize;
  object_class->get_property = subagent_child_tool_registry_get_property;
  object_class->set_property = subagent_child_tool_registry_set_property;

  /**
   * SubagentChildToolRegistry:parent:
   *
   * The registry this view narrows. Write-only: the view never hands its
   * parent to whoever holds the view.
   */
  child_properties[CHILD_PROP_PARENT] =
    g_param_spec_object ("parent", NULL, NULL, SUBAGENT_TYPE_TOOL_REGISTRY,
                         G_PARAM_WRITABLE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentChildToolRegistry:whitelist:
   *
   * The only tool names the child may see, matched exactly; %NULL for all
   * of the parent's (minus the delegation tools and the disallowed ones).
   */
  child_properties[CHILD_PROP_WHITELIST] =
    g_param_spec_boxed ("whitelist", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentChildToolRegistry:disallowed:
   *
   * Tool names the child never sees, matched exactly.
   */
  child_properties[CHILD_PROP_DISALLOWED] =
    g_param_spec_boxed ("disallowed", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, CHILD_N_PROPS, child_properties);
}

static void
subagent_child_tool_registry_init (SubagentChildToolRegistry *self)
{
}

/**
 * subagent_child_tool_registry_new:
 * @parent: the registry to narrow
 * @whitelist: (nullable) (array zero-terminated=1): the only names the child may use; %NULL for all of the parent's
 * @disallowed: (nullable) (array zero-terminated=1): names the child may never use
 *
 * Creates a live, narrowing view of @parent for a child run.
 *
 * Returns: (transfer full): a new #SubagentChildToolRegistry
 */
SubagentChildToolRegistry *
subagent_child_tool_registry_new (SubagentToolRegistry *parent,
                                  const char * const   *whitelist,
                                  const char * const   *disallowed)
{
  g_return_val_if_fail (SUBAGENT_IS_TOOL_REGISTRY (parent), NULL);

  return g_object_new (SUBAGENT_TYPE_CHILD_TOOL_REGISTRY,
                       "parent", parent,
                       "whitelist", whitelist,
                       "disallowed", disallowed,
                       NULL);
}

/**
 * subagent_child_tool_registry_get_parent:
 * @self: a #SubagentChildToolRegistry
 *
 * Returns the registry this view narrows. For the host that built the view
 * (to compare or to audit): never give the result to the child run, it is
 * wider than the child's view.
 *
 * Returns: (transfer none): the parent registry
 */
SubagentToolRegistry *
subagent_child_tool_registry_get_parent (SubagentChildToolRegistry *self)
{
  g_return_val_if_fail (SUBAGENT_IS_CHILD_TOOL_REGISTRY (self), NULL);
  return self->parent;
}
