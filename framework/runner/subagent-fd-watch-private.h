/* subagent-fd-watch-private.h: descriptors of many runs watched by one
 * epoll source per main context.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SubagentFdWatch SubagentFdWatch;

/* Called in the watch's context while @fd is ready (level-triggered: again
 * at the next iteration while it stays ready). It may remove this watch or
 * any other. */
typedef void (*SubagentFdWatchFunc) (int          fd,
                                     GIOCondition condition,
                                     gpointer     user_data);

SubagentFdWatch *_subagent_fd_watch_add    (GMainContext        *context,
                                            int                  fd,
                                            GIOCondition         events,
                                            SubagentFdWatchFunc  func,
                                            gpointer             user_data);
void             _subagent_fd_watch_remove (SubagentFdWatch     *watch);

G_END_DECLS
