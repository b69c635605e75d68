/* subagent-supervisor-results.c: the results of finished children, the
 * latest in memory and the older ones read back from the session records.
 *
 * A finished job keeps its result for subagent_supervisor_wait_async(),
 * subagent_supervisor_lookup_result() and subagent_supervisor_cancel().
 * A supervisor that lives for hours (a GNOME app, an agent that delegates
 * all day) would hold every child's result, review included, for its
 * whole life: past #SubagentSupervisor:results-in-memory the oldest
 * finished jobs leave memory, and their results are rebuilt on demand from
 * the session record the manager wrote for the run (its `last_run` member
 * keeps what the session's totals do not). A job stays when nothing could
 * rebuild its result (a child that never ran has no session record) or
 * when its workspace is kept for follow-ups (shutdown reports its
 * disposal).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-records-private.h"
#include "subagent-supervisor-private.h"

/* Drops the oldest finished jobs past the bound. Called locked. */
static void
trim_results_locked (SubagentSupervisor *self)
{
  while (self->finished.length > self->results_in_memory)
    {
      SubagentJob *oldest = g_queue_pop_head (&self->finished);

      /* A follow-up may have taken its place in the table already. */
      if (g_hash_table_lookup (self->jobs, oldest->run_id) == oldest)
        {
          g_hash_table_remove (self->jobs, oldest->run_id);
          self->results_dropped = TRUE;
        }
      _subagent_job_unref (oldest);
    }
}

void
_subagent_supervisor_keep_result_locked (SubagentSupervisor *self,
                                         SubagentJob        *job)
{
  const char *session_id = subagent_run_result_get_session_id (job->result);

  if (session_id == NULL || *session_id == '\0' || g_hash_table_contains (self->kept, job->run_id))
    return;
  g_queue_push_tail (&self->finished, _subagent_job_ref (job));
  trim_results_locked (self);
}

void
_subagent_supervisor_forget_result_locked (SubagentSupervisor *self,
                                           SubagentJob        *job)
{
  if (g_queue_remove (&self->finished, job))
    _subagent_job_unref (job);
}

static gboolean
results_dropped (SubagentSupervisor *self)
{
  gboolean dropped;

  g_mutex_lock (&self->lock);
  dropped = self->results_dropped;
  g_mutex_unlock (&self->lock);
  return dropped;
}

gboolean
_subagent_supervisor_has_dropped_result (SubagentSupervisor *self,
                                         const char         *run_id)
{
  return results_dropped (self) && _subagent_manager_has_session (self->manager, run_id);
}

SubagentRunResult *
_subagent_supervisor_read_back_result (SubagentSupervisor *self,
                                       const char         *run_id)
{
  g_autoptr(SubagentSession) session = NULL;

  if (!results_dropped (self))
    return NULL;
  session = subagent_manager_get_session (self->manager, run_id);
  return session != NULL ? _subagent_run_result_new_from_session (session) : NULL;
}

/**
 * subagent_supervisor_get_results_in_memory:
 * @self: a #SubagentSupervisor
 *
 * Gets #SubagentSupervisor:results-in-memory.
 *
 * Returns: how many finished children's results stay in memory
 *
 * Since: 0.2
 */
guint
subagent_supervisor_get_results_in_memory (SubagentSupervisor *self)
{
  guint n;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), 0);

  g_mutex_lock (&self->lock);
  n = self->results_in_memory;
  g_mutex_unlock (&self->lock);
  return n;
}

/**
 * subagent_supervisor_set_results_in_memory:
 * @self: a #SubagentSupervisor
 * @n_results: how many finished children's results stay in memory, at
 *   least 1
 *
 * Sets #SubagentSupervisor:results-in-memory; older results leave memory
 * at once (their session records keep them).
 *
 * Since: 0.2
 */
void
subagent_supervisor_set_results_in_memory (SubagentSupervisor *self,
                                           guint               n_results)
{
  gboolean changed;

  g_return_if_fail (SUBAGENT_IS_SUPERVISOR (self));
  g_return_if_fail (n_results >= 1);

  g_mutex_lock (&self->lock);
  changed = self->results_in_memory != n_results;
  self->results_in_memory = n_results;
  trim_results_locked (self);
  g_mutex_unlock (&self->lock);
  if (changed)
    g_object_notify (G_OBJECT (self), "results-in-memory");
}
