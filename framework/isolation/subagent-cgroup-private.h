/* subagent-cgroup-private.h: a cgroup v2 per host child, where the host may
 * make one (a delegated subtree). Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Makes an empty cgroup below the process's own (cgroup v2), for one child,
 * or takes one that _subagent_cgroup_release_child() kept; NULL with @error
 * set where that is not possible (no cgroup2 mount, no delegation, no
 * cgroup.kill, SUBAGENT_CHILD_CGROUP=0). */
G_GNUC_INTERNAL char     *_subagent_cgroup_new_child   (GError    **error);
/* Whether _subagent_cgroup_new_child() can be expected to work: cgroup v2
 * found and not turned off (the host's cgroup is looked up once). */
G_GNUC_INTERNAL gboolean  _subagent_cgroup_available   (void);
/* Whether anything runs in @cgroup or below it (cgroup.events); TRUE when
 * that cannot be read. */
G_GNUC_INTERNAL gboolean  _subagent_cgroup_is_populated (const char *cgroup);
/* Sends @signum to every process in @cgroup and below but @except (0: none);
 * returns how many. */
G_GNUC_INTERNAL guint     _subagent_cgroup_signal      (const char *cgroup,
                                                        int         signum,
                                                        GPid        except);
/* Opens @cgroup's cgroup.procs for writing (close-on-exec), or -1. A child
 * that writes "0" to it between fork and exec moves itself in. */
G_GNUC_INTERNAL int       _subagent_cgroup_open_procs  (const char *cgroup);
/* Whether @pid is a member of @cgroup (from /proc/<pid>/cgroup). */
G_GNUC_INTERNAL gboolean  _subagent_cgroup_contains    (const char *cgroup,
                                                        GPid        pid);
/* SIGKILLs every process in @cgroup and below (cgroup.kill), escaped ones
 * included, when it is populated; returns how many it held (at least 1 when
 * it killed). */
G_GNUC_INTERNAL guint     _subagent_cgroup_kill        (const char *cgroup);
/* Removes @cgroup once it is empty, waiting up to @timeout_ms for killed
 * processes to go. */
G_GNUC_INTERNAL gboolean  _subagent_cgroup_remove      (const char *cgroup,
                                                        guint       timeout_ms);
/* Frees @cgroup (a path from _subagent_cgroup_new_child()): kept for a
 * later child when @reusable (nothing but the caller ever named it, e.g. in
 * an owner record) and empty, else removed (killing what is left). */
G_GNUC_INTERNAL void      _subagent_cgroup_release_child (char    *cgroup,
                                                          gboolean reusable);
/* Whether @path, read from an owner record, names a cgroup this library
 * made: absolute, on a cgroup2 filesystem, named subagent-*. Keeps a
 * planted record from killing an arbitrary cgroup. */
G_GNUC_INTERNAL gboolean  _subagent_cgroup_is_ours     (const char *path);

G_END_DECLS
