/* subagent-confinement.h: kernel-enforced limits of host children.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <glib-object.h>

G_BEGIN_DECLS

/**
 * SubagentConfinement:
 * @SUBAGENT_CONFINEMENT_DEFAULT: not set: Landlock where the kernel has it,
 *   else unconfined with a warning (once per process)
 * @SUBAGENT_CONFINEMENT_NONE: no confinement beyond the isolation
 * @SUBAGENT_CONFINEMENT_LANDLOCK: a Landlock domain where the kernel has it,
 *   else unconfined with a warning (once per process)
 * @SUBAGENT_CONFINEMENT_REQUIRED: a Landlock domain; a child is not started
 *   on a kernel without Landlock
 *
 * How a child started on the host (shared, worktree and snapshot
 * isolation) is confined. A confined child writes only under its child
 * root (or its definition's `write_scope`), a private `TMPDIR` and
 * `/dev/null`-like devices; it cannot read the approval key file, trace or
 * signal processes outside its domain, reach abstract unix sockets of the
 * host, or (with `network: none`) bind or connect TCP sockets.
 */
typedef enum {
  SUBAGENT_CONFINEMENT_DEFAULT,
  SUBAGENT_CONFINEMENT_NONE,
  SUBAGENT_CONFINEMENT_LANDLOCK,
  SUBAGENT_CONFINEMENT_REQUIRED,
} SubagentConfinement;

#define SUBAGENT_TYPE_CONFINEMENT (subagent_confinement_get_type ())
SUBAGENT_AVAILABLE_IN_0_2
GType subagent_confinement_get_type (void) G_GNUC_CONST;

/**
 * SUBAGENT_CONFINEMENT_APPLIED_LANDLOCK:
 *
 * The confinement a run reports when its child ran in a Landlock domain.
 */
#define SUBAGENT_CONFINEMENT_APPLIED_LANDLOCK "landlock"
/**
 * SUBAGENT_CONFINEMENT_APPLIED_NONE:
 *
 * The confinement a run reports when its child ran unconfined on the host.
 */
#define SUBAGENT_CONFINEMENT_APPLIED_NONE "none"
/**
 * SUBAGENT_CONFINEMENT_APPLIED_CONTAINER:
 *
 * The confinement a run reports when a backend ran its child elsewhere (a
 * container) with its own limits.
 */
#define SUBAGENT_CONFINEMENT_APPLIED_CONTAINER "container"

SUBAGENT_AVAILABLE_IN_0_2
const char *subagent_confinement_to_string   (SubagentConfinement  confinement);
SUBAGENT_AVAILABLE_IN_0_2
gboolean    subagent_confinement_from_string (const char          *text,
                                              SubagentConfinement *out);
SUBAGENT_AVAILABLE_IN_0_2
SubagentConfinement subagent_confinement_merge (SubagentConfinement configured,
                                                SubagentConfinement requested);
SUBAGENT_AVAILABLE_IN_0_2
int         subagent_confinement_get_landlock_abi (void);

G_END_DECLS
