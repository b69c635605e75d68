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

void
_subagent_kept_session_free (SubagentKeptSession *kept)
{
  g_clear_pointer (&kept->line, g_bytes_unref);
  g_clear_object (&kept->session);
  g_free (kept);
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
                                       GBytes                    *line,
                                       const SubagentSessionSpan *logged)
{
  SubagentKeptSession *kept = g_new0 (SubagentKeptSession, 1);

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
  kept->line = line;
  g_hash_table_replace (self->sessions, g_strdup (run_id), kept);
  if (logged != NULL)
    {
      SubagentLoggedSession *entry = g_new (SubagentLoggedSession, 1);

      entry->run_id = g_strdup (run_id);
      entry->span = *logged;
      g_queue_push_tail (&self->sessions_logged, entry);
    }
  trim_sessions_locked (self);
}

/* The session kept in memory as @run_id's record (transfer full), made
 * from its line the first time it is asked for, outside the lock (a
 * transcript can be long). *in_memory says whether there is one. Its line
 * was written by this manager, so it reads back; one that would not is
 * reported. */
static SubagentSession *
session_in_memory (SubagentManager *self,
                   const char      *run_id,
                   gboolean        *in_memory)
{
  g_autoptr(GBytes) line = NULL;
  g_autoptr(GError) error = NULL;
  SubagentKeptSession *kept;
  SubagentSession *session = NULL;
  gsize length;
  const char *text;

  g_mutex_lock (&self->lock);
  kept = g_hash_table_lookup (self->sessions, run_id);
  if (kept != NULL)
    {
      session = kept->session ? g_object_ref (kept->session) : NULL;
      line = session ? NULL : g_bytes_ref (kept->line);
    }
  g_mutex_unlock (&self->lock);
  *in_memory = kept != NULL;
  if (line == NULL)
    return session;

  text = g_bytes_get_data (line, &length);
  session = _subagent_session_new_from_line (text, length, &error);
  if (session == NULL)
    {
      g_warning ("The session record of run %s kept in memory does not read back: %s", run_id,
                 error ? error->message : "not a JSON object");
      return NULL;
    }
  /* Kept for the next caller, in place of its line (a transcript is not
   * held twice), unless the record changed meanwhile. */
  g_mutex_lock (&self->lock);
  kept = g_hash_table_lookup (self->sessions, run_id);
  if (kept != NULL && kept->line == line)
    {
      kept->session = g_object_ref (session);
      g_clear_pointer (&kept->line, g_bytes_unref);
    }
  g_mutex_unlock (&self->lock);
  return session;
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
 * (#SubagentManager:sessions-in-memory; the record is kept as its line,
 * and the object made of it the first time it is asked for, then the
 * same object each time), else read back from its line of the manager's
 * session log (a blocking read, a new object each time).
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
  gboolean in_memory;

  g_return_val_if_fail (SUBAGENT_IS_MANAGER (self), NULL);
  g_return_val_if_fail (run_id != NULL, NULL);

  session = session_in_memory (self, run_id, &in_memory);
  if (in_memory)
    return session;
  g_mutex_lock (&self->lock);
  if ((on_disk = g_hash_table_lookup (self->sessions_on_disk, run_id)) != NULL)
    {
      span = on_disk->span;
      log = g_object_ref (self->session_log);
    }
  g_mutex_unlock (&self->lock);
  /* A run id this manager never logged: no file to read. */
  if (log == NULL)
    return NULL;

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
  g_autoptr(GPtrArray) in_memory = NULL;
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
  in_memory = g_ptr_array_new_full (g_hash_table_size (self->sessions), g_free);
  g_hash_table_iter_init (&iter, self->sessions);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (in_memory, g_strdup (key));
  g_mutex_unlock (&self->lock);
  for (guint i = 0; i < in_memory->len; i++)
    {
      gboolean kept;
      SubagentSession *session = session_in_memory (self, in_memory->pdata[i], &kept);

      if (session != NULL)
        g_hash_table_replace (all, g_strdup (in_memory->pdata[i]), session);
    }

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
