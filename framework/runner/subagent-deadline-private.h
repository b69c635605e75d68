/* subagent-deadline-private.h: wall-clock limits of many runs on one
 * source per main context. Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-deadline-private.h is internal to libsubagent."
#endif

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SubagentDeadline SubagentDeadline;

/* Calls @func (@data) once, in the thread that runs @context, when the
 * monotonic clock reaches @when (microseconds), unless removed first;
 * @destroy (@data) follows either way, and the deadline is gone. Add and
 * remove a deadline in the thread that runs @context; removing it from
 * @func or @destroy does nothing. */
G_GNUC_INTERNAL SubagentDeadline *_subagent_deadline_add    (GMainContext   *context,
                                                             gint64          when,
                                                             GSourceFunc     func,
                                                             gpointer        data,
                                                             GDestroyNotify  destroy);
/* Before it is called: it never will be, and @destroy is called now. NULL
 * is ignored. */
G_GNUC_INTERNAL void              _subagent_deadline_remove (SubagentDeadline *deadline);

G_END_DECLS
