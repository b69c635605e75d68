/* approval-file-store-private.h: what the store's files share (the store
 * itself in approval-file-store.c, its writes in approval-file-commit.c,
 * listing and pruning in approval-file-prune.c). Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sys/types.h>

#include "approval-file-store.h"

G_BEGIN_DECLS

struct _AfsStore
{
  char *dir;
  GBytes *key;             /* nullable */
  AfsIntegrityFunc report;
  gpointer report_data;
  GMutex mutex;
  GHashTable *cache;       /* run id → CacheEntry; guarded by mutex */
  GHashTable *own_writes;  /* run id → OwnWrite; guarded by mutex */
  GMutex commit_mutex;
  GCond commit_cond;
  GCond linger_cond;       /* an operation was queued for a lingering writer */
  GHashTable *queues;      /* run id → RunQueue; guarded by commit_mutex */
  /* The directory afs_store_check_dir() last verified, open (its fd
   * pins the inode, so an lstat() showing the same device and inode is
   * still this very directory); guarded by mutex. Fds of directories
   * replaced since stay open until the store goes: a writer may be
   * fsyncing one. */
  gboolean dir_checked;
  dev_t dir_dev;
  ino_t dir_ino;
  int dir_fd;
  GArray *retired_dir_fds;
  /* The next write's temp inode (see AfsSpare), made or kept by this
   * process (a forked child must not write into its parent's); guarded by
   * mutex. */
  AfsSpare spare;
  pid_t spare_pid;
  gboolean spare_unsupported;
};

/* approval-file-store.c */
void        afs_store_report_integrity (AfsStore     *self,
                                        const char   *run_id,
                                        const GError *error);
void        afs_store_cache_forget     (AfsStore     *self,
                                        const char   *run_id);
GPtrArray  *afs_store_cache_last_trusted (AfsStore   *self,
                                          const char *run_id);
GPtrArray  *afs_store_read_requests    (AfsStore     *self,
                                        const char   *run_id,
                                        gboolean      parse,
                                        GError      **error);
gboolean    afs_store_write_requests   (AfsStore     *self,
                                        const char   *run_id,
                                        GPtrArray    *requests,
                                        GBytes       *on_disk,
                                        AfsSpare     *replaced,
                                        GError      **error);
int         afs_store_lock_and_read    (AfsStore     *self,
                                        const char   *run_id,
                                        gboolean      skip_first,
                                        gboolean    (*settle) (GPtrArray *version, gpointer data),
                                        gpointer      settle_data,
                                        GPtrArray   **stored,
                                        GBytes      **raw,
                                        GError      **error);
gboolean    afs_store_sync_dir         (AfsStore     *self,
                                        GError      **error);
void        afs_store_make_spare       (AfsStore     *self);
void        afs_store_keep_spare       (AfsStore     *self,
                                        AfsSpare     *replaced);
char       *afs_store_quarantine       (AfsStore     *self,
                                        const char   *run_id);
GPtrArray  *afs_requests_share         (GPtrArray    *requests);
SubagentApprovalRequest *afs_requests_find (GPtrArray  *requests,
                                            const char *request_id,
                                            guint      *index);

/* approval-file-commit.c */
void        afs_store_commit_init      (AfsStore     *self);
void        afs_store_commit_clear     (AfsStore     *self);

G_END_DECLS
