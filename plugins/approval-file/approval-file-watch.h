/* approval-file-watch.h: "changed" for approval files, from inotify.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

/* The watches of one sink: one inotify instance per main context that
 * watches, counting watch() calls per run. */
typedef struct _AfsWatchSet AfsWatchSet;

/* @sink (not referenced) gets "changed"; free the set in its dispose. */
AfsWatchSet *afs_watch_set_new    (SubagentApprovalSink *sink);
void         afs_watch_set_free   (AfsWatchSet          *self);
/* Adds one watch of @run_id in the thread-default main context. */
gboolean     afs_watch_set_add    (AfsWatchSet          *self,
                                   const char           *dir,
                                   const char           *run_id,
                                   GError              **error);
/* Undoes one afs_watch_set_add() of the same thread-default main context. */
void         afs_watch_set_remove (AfsWatchSet          *self,
                                   const char           *run_id);

G_END_DECLS
