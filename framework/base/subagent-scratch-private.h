/* subagent-scratch-private.h: per-thread buffers for the lines a child's
 * records are built in. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-scratch-private.h is internal to libsubagent."
#endif

#include <glib.h>

G_BEGIN_DECLS

/* One buffer per use and thread. A record's line is 0.5–2 KiB: as a new
 * GString each, it was a large-bin malloc() per line, each of which made
 * glibc consolidate its fast bins, several times per child. */
typedef enum {
  SUBAGENT_SCRATCH_SESSION_LINE,
  SUBAGENT_SCRATCH_AUDIT_MEMBERS,
  SUBAGENT_SCRATCH_AUDIT_LINE,
  SUBAGENT_SCRATCH_CHILD_ENV,
  SUBAGENT_SCRATCH_N
} SubagentScratch;

/* An empty buffer, this thread's for @which unless it is taken already
 * (then a new one). Give it back with _subagent_scratch_give(). */
G_GNUC_INTERNAL GString *_subagent_scratch_take (SubagentScratch which);
/* Takes @buffer back for the next line (a very large one is freed). */
G_GNUC_INTERNAL void     _subagent_scratch_give (SubagentScratch  which,
                                                 GString         *buffer);

G_END_DECLS
