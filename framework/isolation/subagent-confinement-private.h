/* subagent-confinement-private.h: the confinement of one host child.
 *
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "subagent-run-context.h"
#include "subagent-confinement-cache-private.h"

G_BEGIN_DECLS

typedef struct {
  int ruleset_fd;        /* -1: unconfined */
  char *tmpdir;          /* the child's private TMPDIR, or NULL */
  const char *applied;   /* SUBAGENT_CONFINEMENT_APPLIED_* */
  SubagentConfinementLease *lease;  /* the ruleset and TMPDIR are a cache's */
} SubagentChildConfinement;

#define SUBAGENT_CHILD_CONFINEMENT_INIT { -1, NULL, SUBAGENT_CONFINEMENT_APPLIED_NONE, NULL }

/* Decides and prepares the confinement of the child of @context that starts
 * on the host: the ruleset (built here, or reused from @context's
 * confinement cache), its private temp dir. Fails only when confinement is
 * required and impossible. */
gboolean _subagent_child_confinement_prepare (SubagentRunContext        *context,
                                              SubagentChildConfinement  *out,
                                              GError                   **error);
/* Closes the ruleset; with @remove_tmpdir, deletes the temp dir and what
 * the child left in it. */
void     _subagent_child_confinement_clear   (SubagentChildConfinement  *self,
                                              gboolean                   remove_tmpdir);
/* Deletes @path and everything beneath it without following symlinks. */
void     _subagent_remove_tree               (const char                *path);

G_END_DECLS
