/* subagent-manager-lookup.c: a manager's definitions and the session records
 * of its children, looked up by name or run id, or listed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-manager-private.h"

/**
 * subagent_manager_get_def:
 * @self: a #SubagentManager
 * @name: a definition name (any case; `-` and `_` alike)
 *
 * Gets the definition.
 *
 * Returns: (transfer none) (nullable): the definition
 *
 * Since: 0.2
 */
SubagentDef *
subagent_manager_get_def (SubagentManager *self,
                          const char      *name)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  return subagent_catalog_lookup (self->catalog, name);
}

/**
 * subagent_manager_list_defs:
 * @self: a #SubagentManager
 *
 * Lists the definitions, sorted by name.
 *
 * Returns: (transfer container) (element-type SubagentDef): the definitions, sorted by name
 *
 * Since: 0.2
 */
GPtrArray *
subagent_manager_list_defs (SubagentManager *self)
{
  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  return subagent_catalog_list (self->catalog);
}

/**
 * subagent_manager_get_session:
 * @self: a #SubagentManager
 * @run_id: a child's run id
 *
 * Gets the child's session record.
 *
 * Returns: (transfer full) (nullable): the child's session record
 *
 * Since: 0.2
 */
SubagentSession *
subagent_manager_get_session (SubagentManager *self,
                              const char      *run_id)
{
  SubagentSession *session;

  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);

  g_mutex_lock (&self->lock);
  session = g_hash_table_lookup (self->sessions, run_id);
  if (session != NULL)
    g_object_ref (session);
  g_mutex_unlock (&self->lock);
  return session;
}

/**
 * subagent_manager_list_sessions:
 * @self: a #SubagentManager
 *
 * Lists the sessions of this manager's children.
 *
 * Returns: (transfer container) (element-type SubagentSession): the sessions of this manager's children
 *
 * Since: 0.2
 */
GPtrArray *
subagent_manager_list_sessions (SubagentManager *self)
{
  GPtrArray *sessions = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;

  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->sessions);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (sessions, g_object_ref (value));
  g_mutex_unlock (&self->lock);
  return sessions;
}
