/* approval-file-store.h: the approval queues of one workspace on disk.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

/* Called (in the caller's thread) when a run's file does not parse or
 * verify; the store then treats it as holding nothing. */
typedef void (*AfsIntegrityFunc) (const char   *run_id,
                                  const GError *error,
                                  gpointer      user_data);

/* The store of @dir (<root>/.subagent/approvals, resolved), signing with
 * @key if non-NULL. Every function may be called from any thread. */
typedef struct _AfsStore AfsStore;

AfsStore   *afs_store_new           (const char       *dir,
                                     GBytes           *key,
                                     AfsIntegrityFunc  report,
                                     gpointer          report_data);
void        afs_store_free          (AfsStore         *self);
const char *afs_store_get_dir       (AfsStore         *self);
/* Checks (and with @create makes) the directory: it must resolve to itself,
 * not through a symlink. *exists says whether it is there. */
gboolean    afs_store_check_dir     (AfsStore         *self,
                                     gboolean          create,
                                     gboolean         *exists,
                                     GError          **error);

/* The SubagentApprovalSink methods, with the semantics documented there. */
GPtrArray  *afs_store_load          (AfsStore                *self,
                                     const char              *parent_run_id,
                                     GError                 **error);
gboolean    afs_store_save          (AfsStore                *self,
                                     const char              *parent_run_id,
                                     GPtrArray               *requests,
                                     GError                 **error);
gboolean    afs_store_update_status (AfsStore                *self,
                                     const char              *parent_run_id,
                                     const char              *request_id,
                                     SubagentApprovalStatus   status,
                                     const char              *reason,
                                     const char              *actor,
                                     GError                 **error);
/* update_status for each request, in one write: won[i] tells whether
 * request_ids[i] was resolved by this call. All or nothing on error. */
gboolean    afs_store_update_batch  (AfsStore                *self,
                                     const char              *parent_run_id,
                                     const char * const      *request_ids,
                                     guint                    n_requests,
                                     SubagentApprovalStatus   status,
                                     const char              *reason,
                                     const char              *actor,
                                     gboolean                *won,
                                     GError                 **error);
guint       afs_store_prune         (AfsStore                *self,
                                     GTimeSpan                max_age,
                                     GError                 **error);
GStrv       afs_store_list_runs     (AfsStore                *self,
                                     GError                 **error);
/* Reads the run's file into *current (NULL: none) and says whether every
 * version since @announced (NULL: nothing announced yet, so FALSE) was
 * this store's own write; then *current is cleared. */
gboolean    afs_store_own_change_only (AfsStore              *self,
                                       const char            *run_id,
                                       GBytes                *announced,
                                       GBytes               **current);

G_END_DECLS
