/* approval-file-prune.c: listing the runs of the approval-file store and
 * removing the files of runs that are over.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "approval-file-format.h"
#include "approval-file-io.h"
#include "approval-file-store.h"
#include "approval-file-store-private.h"

static int
compare_strings (const void *a,
                 const void *b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

GStrv
afs_store_list_runs (AfsStore  *self,
                     GError   **error)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GDir) dir = g_dir_open (self->dir, 0, error);
  const char *name;
  GStrv runs;

  if (dir == NULL)
    return NULL;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *run = NULL;

      if (afs_parse_run_file_name (name, &run))
        g_strv_builder_add (builder, run);
    }
  runs = g_strv_builder_end (builder);
  qsort (runs, g_strv_length (runs), sizeof (char *), compare_strings);
  return runs;
}

/* Whether a run's file may go: old enough, trusted, nothing pending. */
static gboolean
may_remove (AfsStore          *self,
            const char        *run_id,
            const struct stat *st,
            GTimeSpan          max_age)
{
  GTimeSpan age = g_get_real_time () - ((GTimeSpan) st->st_mtim.tv_sec * G_USEC_PER_SEC
                                        + st->st_mtim.tv_nsec / 1000);
  g_autoptr(GPtrArray) stored = NULL;
  g_autoptr(GError) error = NULL;

  if (age < max_age)
    return FALSE;
  stored = afs_store_read_requests (self, run_id, TRUE, &error);
  if (stored == NULL)
    {
      if (g_error_matches (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY))
        afs_store_report_integrity (self, run_id, error);
      else
        g_warning ("Keeping the approval queue of run %s: %s", run_id, error->message);
      return FALSE;
    }
  for (guint i = 0; i < stored->len; i++)
    if (subagent_approval_request_get_status (stored->pdata[i]) == SUBAGENT_APPROVAL_STATUS_PENDING)
      return FALSE;
  return TRUE;
}

/* Under the run's lock: removes the temp files dead writers left, then the
 * file if may_remove() says so, and the lock file of a run without a file.
 * Returns whether the run's file was removed. */
static gboolean
prune_run (AfsStore    *self,
           const char  *run_id,
           GPtrArray   *temp_names,
           GTimeSpan    max_age,
           GError     **error)
{
  g_autofree char *path = afs_run_file_path (self->dir, run_id);
  g_autofree char *lock_path = g_strconcat (path, ".lock", NULL);
  gboolean removed = FALSE;
  struct stat st;
  int lock_fd;

  lock_fd = afs_lock (self->dir, run_id, error);
  if (lock_fd < 0)
    return FALSE;

  /* With the lock held no writer of this run is between mkstemp and rename:
   * every temp file of the run seen before is a dead writer's, but for the
   * versions writers keep for their next write (of any run), which they
   * hold locked. */
  for (guint i = 0; i < temp_names->len; i++)
    {
      g_autofree char *temp_path = g_build_filename (self->dir, temp_names->pdata[i], NULL);

      afs_remove_stale_temp (temp_path);
    }

  if (lstat (path, &st) == 0)
    {
      removed = may_remove (self, run_id, &st, max_age);
      if (!removed)
        {
          afs_unlock (lock_fd);
          return FALSE;
        }
      g_unlink (path);
      afs_store_cache_forget (self, run_id);
    }
  /* Unlinking the lock while holding it is safe: afs_lock() retries when the
   * inode it won is no longer the one at the path. */
  g_unlink (lock_path);
  afs_unlock (lock_fd);
  return removed;
}

guint
afs_store_prune (AfsStore   *self,
                 GTimeSpan   max_age,
                 GError    **error)
{
  g_autoptr(GHashTable) runs = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GList) run_ids = NULL;
  const char *name;
  guint removed = 0;

  dir = g_dir_open (self->dir, 0, error);
  if (dir == NULL)
    return 0;

  /* run id → temp file names of that run */
  runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_ptr_array_unref);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      char *run = NULL;
      GPtrArray *temps;

      if (g_str_has_suffix (name, ".json.lock"))
        {
          g_autofree char *stem = g_strndup (name, strlen (name) - strlen (".lock"));

          if (!afs_parse_run_file_name (stem, &run))
            continue;
        }
      else if (!afs_parse_run_file_name (name, &run) && !afs_parse_temp_name (name, &run))
        continue;

      temps = g_hash_table_lookup (runs, run);
      if (temps == NULL)
        {
          temps = g_ptr_array_new_with_free_func (g_free);
          g_hash_table_insert (runs, g_strdup (run), temps);
        }
      if (name[0] == '.')
        g_ptr_array_add (temps, g_strdup (name));
      g_free (run);
    }

  run_ids = g_list_sort (g_hash_table_get_keys (runs), (GCompareFunc) g_strcmp0);
  for (GList *l = run_ids; l != NULL; l = l->next)
    {
      g_autoptr(GError) local_error = NULL;

      if (prune_run (self, l->data, g_hash_table_lookup (runs, l->data), max_age, &local_error))
        removed++;
      else if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return 0;
        }
    }
  if (removed > 0 && !afs_store_sync_dir (self, error))
    return 0;
  return removed;
}

