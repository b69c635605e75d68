/* approval-pg-watch.h: "changed" for approval-postgres, from LISTEN/NOTIFY.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

typedef struct _ApgWatchSet ApgWatchSet;

/* The watches of @sink; @conninfo and @channel are copied. */
ApgWatchSet *apg_watch_set_new    (SubagentApprovalSink *sink,
                                   const char           *conninfo,
                                   const char           *channel);
void         apg_watch_set_free   (ApgWatchSet          *self);
/* Watches @run_id in the thread-default main context: the first watch of a
 * context connects and LISTENs before it returns (a server that cannot be
 * reached is retried in the background, and "changed" is emitted for every
 * run of the context once it answers). */
void         apg_watch_set_add    (ApgWatchSet          *self,
                                   const char           *run_id);
void         apg_watch_set_remove (ApgWatchSet          *self,
                                   const char           *run_id);

G_END_DECLS
