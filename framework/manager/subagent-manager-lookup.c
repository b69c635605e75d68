/* subagent-manager-lookup.c: a manager's definitions and the session records
 * of its children, looked up by name or run id, or listed; which of the
 * records stay in memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-manager-private.h"
#include "subagent-records-private.h"

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

void
_subagent_logged_session_free (SubagentLoggedSession *logged)
{
  g_free (logged->run_id);
  g_free (logged);
}

/* Drops the oldest logged sessions past the bound; their places in the log
 * stay. Called locked. */
static void
trim_sessions_locked (SubagentManager *self)
{
  while (self->sessions_logged.length > self->sessions_in_memory)
    {
      SubagentLoggedSession *oldest = g_queue_pop_head (&self->sessions_logged);

      g_hash_table_remove (self->sessions, oldest->run_id);
      g_hash_table_replace (self->sessions_on_disk, oldest->run_id, oldest);
    }
}

static gint
logged_session_has_id (gconstpointer logged,
                       gconstpointer run_id)
{
  return g_strcmp0 (((const SubagentLoggedSession *) logged)->run_id, run_id);
}

void
_subagent_manager_keep_session_locked (SubagentManager           *self,
                                       const char                *run_id,
                                       SubagentSession           *session,
                                       const SubagentSessionSpan *logged)
{
  /* A follow-up's record replaces its session's: it is the newest now. */
  if (g_hash_table_contains (self->sessions, run_id))
    {
      GList *link = g_queue_find_custom (&self->sessions_logged, run_id, logged_session_has_id);

      if (link != NULL)
        {
          _subagent_logged_session_free (link->data);
          g_queue_delete_link (&self->sessions_logged, link);
        }
    }
  else
    g_hash_table_remove (self->sessions_on_disk, run_id);
  g_hash_table_replace (self->sessions, g_strdup (run_id), session);
  if (logged != NULL)
    {
      SubagentLoggedSession *entry = g_new (SubagentLoggedSession, 1);

      entry->run_id = g_strdup (run_id);
      entry->span = *logged;
      g_queue_push_tail (&self->sessions_logged, entry);
    }
  trim_sessions_locked (self);
}

/* The manager's session log, when some sessions left memory for it. */
static SubagentSessionLog *
dup_log_of_dropped_locked (SubagentManager *self)
{
  return g_hash_table_size (self->sessions_on_disk) > 0 && self->session_log != NULL
         ? g_object_ref (self->session_log) : NULL;
}

gboolean
_subagent_manager_has_session (SubagentManager *self,
                               const char      *run_id)
{
  gboolean has;

  g_mutex_lock (&self->lock);
  has = g_hash_table_contains (self->sessions, run_id) || g_hash_table_contains (self->sessions_on_disk, run_id);
  g_mutex_unlock (&self->lock);
  return has;
}

/**
 * subagent_manager_get_session:
 * @self: a #SubagentManager
 * @run_id: a child's run id
 *
 * Gets the child's session record: from memory for the latest children
 * (#SubagentManager:sessions-in-memory), else read back from its line of
 * the manager's session log (a blocking read).
 *
 * Returns: (transfer full) (nullable): the child's session record, or
 *   %NULL when this manager ran no such child
 *
 * Since: 0.2
 */
SubagentSession *
subagent_manager_get_session (SubagentManager *self,
                              const char      *run_id)
{
  g_autoptr(SubagentSessionLog) log = NULL;
  g_autoptr(GHashTable) logged = NULL;
  SubagentSessionSpan span = { 0, 0 };
  SubagentLoggedSession *on_disk = NULL;
  SubagentSession *session;

  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  g_return_val_if_fail (run_id != NULL, NULL);

  g_mutex_lock (&self->lock);
  session = g_hash_table_lookup (self->sessions, run_id);
  if (session != NULL)
    g_object_ref (session);
  else if ((on_disk = g_hash_table_lookup (self->sessions_on_disk, run_id)) != NULL)
    {
      span = on_disk->span;
      log = g_object_ref (self->session_log);
    }
  g_mutex_unlock (&self->lock);
  /* A run id this manager never logged: no file to read. */
  if (session != NULL || log == NULL)
    return session;

  /* Its line alone; the whole log when that line moved. */
  session = _subagent_session_log_read_at (log, &span, run_id);
  if (session != NULL)
    return session;
  logged = _subagent_session_log_read_back (log);
  session = g_hash_table_lookup (logged, run_id);
  return session != NULL ? g_object_ref (session) : NULL;
}

/**
 * subagent_manager_list_sessions:
 * @self: a #SubagentManager
 *
 * Lists the sessions of this manager's children, those no longer in
 * memory read back from its session log (a blocking read of that file;
 * see #SubagentManager:sessions-in-memory).
 *
 * Returns: (transfer container) (element-type SubagentSession): the sessions of this manager's children
 *
 * Since: 0.2
 */
GPtrArray *
subagent_manager_list_sessions (SubagentManager *self)
{
  GPtrArray *sessions = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SubagentSessionLog) log = NULL;
  g_autoptr(GHashTable) all = NULL;
  GHashTableIter iter;
  gpointer key, value;

  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);

  g_mutex_lock (&self->lock);
  log = dup_log_of_dropped_locked (self);
  g_mutex_unlock (&self->lock);
  /* Read outside the lock; what is in memory then is as new or newer. */
  all = log != NULL ? _subagent_session_log_read_back (log)
                    : g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->sessions);
  while (g_hash_table_iter_next (&iter, &key, &value))
    g_hash_table_replace (all, g_strdup (key), g_object_ref (value));
  g_mutex_unlock (&self->lock);

  g_hash_table_iter_init (&iter, all);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (sessions, g_object_ref (value));
  return sessions;
}

/**
 * subagent_manager_get_sessions_in_memory:
 * @self: a #SubagentManager
 *
 * Gets #SubagentManager:sessions-in-memory.
 *
 * Returns: how many children's session records stay in memory
 *
 * Since: 0.2
 */
guint
subagent_manager_get_sessions_in_memory (SubagentManager *self)
{
  guint n;

  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), 0);

  g_mutex_lock (&self->lock);
  n = self->sessions_in_memory;
  g_mutex_unlock (&self->lock);
  return n;
}

/**
 * subagent_manager_set_sessions_in_memory:
 * @self: a #SubagentManager
 * @n_sessions: how many children's session records stay in memory, at
 *   least 1
 *
 * Sets #SubagentManager:sessions-in-memory; older records leave memory at
 * once (they stay in the session log).
 *
 * Since: 0.2
 */
void
subagent_manager_set_sessions_in_memory (SubagentManager *self,
                                         guint            n_sessions)
{
  gboolean changed;

  g_return_if_fail (SUBAGENT_IS_MANAGER (self));
  g_return_if_fail (n_sessions >= 1);

  g_mutex_lock (&self->lock);
  changed = self->sessions_in_memory != n_sessions;
  self->sessions_in_memory = n_sessions;
  trim_sessions_locked (self);
  g_mutex_unlock (&self->lock);
  if (changed)
    g_object_notify (G_OBJECT (self), "sessions-in-memory");
}
