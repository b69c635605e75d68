/* approval-pg-prune.c: listing the runs of the approval-postgres store and
 * deleting the rows of runs that are over.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>

#include "approval-pg-store.h"
#include "approval-pg-store-private.h"

/* list_runs */

typedef struct {
  Sql sql;
  const char *param;
  GStrv runs;
} ListOp;

static Step
list_op (ApgStore  *self,
         ApgConn   *conn,
         gpointer   data,
         GError   **error)
{
  ListOp *op = data;
  const char *params[] = { op->param };
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  Step step = STEP_FAILED;
  PGresult *result = apg_store_exec (self, conn, op->sql, params, "Listing approval queues", &step, error);

  if (result == NULL)
    return step;
  for (int i = 0; i < PQntuples (result); i++)
    g_strv_builder_add (builder, PQgetvalue (result, i, 0));
  PQclear (result);
  g_strfreev (op->runs);
  op->runs = g_strv_builder_end (builder);
  return STEP_DONE;
}

GStrv
apg_store_list_runs (ApgStore  *self,
                     GError   **error)
{
  ListOp op = { SQL_LIST, NULL, NULL };

  if (!apg_store_run_op (self, list_op, &op, error))
    return NULL;
  return op.runs;
}

/* prune_stale */

typedef struct {
  const char *run_id;
  const char *age;
  gboolean removed;
} PruneOp;

static Step
prune_op (ApgStore  *self,
          ApgConn   *conn,
          gpointer   data,
          GError   **error)
{
  PruneOp *op = data;
  const char *params[] = { op->run_id, op->age, self->channel };
  Step step = STEP_FAILED;
  PGresult *result = apg_store_exec (self, conn, SQL_PRUNE, params, "Pruning an approval queue", &step, error);

  if (result == NULL)
    return step;
  op->removed = atoi (PQgetvalue (result, 0, 0)) > 0;
  PQclear (result);
  return STEP_DONE;
}

guint
apg_store_prune (ApgStore   *self,
                 GTimeSpan   max_age,
                 GError    **error)
{
  g_autofree char *age = g_strdup_printf ("%" G_GINT64_FORMAT, (gint64) max_age);
  ListOp candidates = { SQL_PRUNABLE, age, NULL };
  guint removed = 0;

  if (!apg_store_run_op (self, list_op, &candidates, error))
    return 0;
  for (guint i = 0; candidates.runs[i] != NULL; i++)
    {
      const char *run_id = candidates.runs[i];
      g_autoptr(GPtrArray) requests = NULL;
      g_autoptr(GError) local_error = NULL;
      PruneOp op = { run_id, age, FALSE };

      /* A run that does not verify is kept, for a person to look at. */
      requests = apg_store_read_run (self, run_id, &local_error);
      if (requests == NULL)
        {
          if (g_error_matches (local_error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY))
            {
              apg_store_report_integrity (self, run_id, local_error);
              continue;
            }
          g_propagate_error (error, g_steal_pointer (&local_error));
          g_strfreev (candidates.runs);
          return 0;
        }
      if (!apg_store_run_op (self, prune_op, &op, error))
        {
          g_strfreev (candidates.runs);
          return 0;
        }
      if (op.removed)
        {
          apg_store_cache_forget_run (self, run_id);
          removed++;
        }
    }
  g_strfreev (candidates.runs);
  return removed;
}
