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

/* Whether the run's file changed since @announced (the version the last
 * "changed" of this watch was emitted for; NULL for none) only by the
 * sink's own writes, which need no "changed": then TRUE. Otherwise FALSE,
 * and *current gets the version now in the file (NULL for none, or if it
 * cannot be told), which "changed" is emitted for. */
typedef gboolean (*AfsWatchOwnFunc) (SubagentApprovalSink  *sink,
                                     const char            *run_id,
                                     GBytes                *announced,
                                     GBytes               **current);

/* @sink (not referenced) gets "changed", except where @own_only (nullable)
 * says it was only its own writes; free the set in its dispose. */
AfsWatchSet *afs_watch_set_new    (SubagentApprovalSink *sink,
                                   AfsWatchOwnFunc       own_only);
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
