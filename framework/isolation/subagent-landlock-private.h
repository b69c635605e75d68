/* subagent-landlock-private.h: Landlock rulesets for host children.
 *
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What a confined child may do. Reads and execution stay allowed
 * everywhere but under the hidden paths; writes only under the write
 * paths (whole hierarchies), the device files and nothing else. */
typedef struct _SubagentLandlockPolicy SubagentLandlockPolicy;

SubagentLandlockPolicy *_subagent_landlock_policy_new          (void);
void                    _subagent_landlock_policy_free         (SubagentLandlockPolicy *self);
/* A directory (or file) the child may write beneath. Must exist. */
void                    _subagent_landlock_policy_allow_write  (SubagentLandlockPolicy *self,
                                                                const char             *path);
/* A path the child may neither read nor write (an approval key file). */
void                    _subagent_landlock_policy_hide         (SubagentLandlockPolicy *self,
                                                                const char             *path);
/* Refuses TCP bind and connect (ABI >= 4). */
void                    _subagent_landlock_policy_deny_tcp     (SubagentLandlockPolicy *self);
const char * const     *_subagent_landlock_policy_get_writable (SubagentLandlockPolicy *self);
/* What identifies the policy: its write paths, hidden paths and network
 * rule, NUL-separated. Two policies with the same key build the same
 * ruleset from the same files. */
GBytes                 *_subagent_landlock_policy_get_key      (SubagentLandlockPolicy *self);
/* The directories the last build listed, one rule per entry, to keep a
 * hidden path out (their entries are what the ruleset depends on). */
const char * const     *_subagent_landlock_policy_get_listed   (SubagentLandlockPolicy *self);

/* A ruleset file descriptor (close-on-exec) for landlock_restrict_self(),
 * or -1 with @error set. The rights it handles are all the running kernel
 * knows; signals and abstract unix sockets are scoped from ABI 6. */
int                     _subagent_landlock_policy_build        (SubagentLandlockPolicy *self,
                                                                GError                **error);

/* The kernel's Landlock ABI version, 0 when it has none (or it is disabled).
 * Cached after the first call. */
int                     _subagent_landlock_abi                 (void);

/* For the child between fork and exec: no ambient capabilities, none of
 * those that reach past Landlock (CAP_SYS_ADMIN, CAP_PERFMON,
 * CAP_SYS_PTRACE), PR_SET_NO_NEW_PRIVS, then enter @ruleset_fd's domain.
 * Async-signal-safe; returns 0 or an errno. */
int                     _subagent_landlock_restrict_self       (int                     ruleset_fd);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SubagentLandlockPolicy, _subagent_landlock_policy_free)

G_END_DECLS
