/* subagent-cgroup-private.h: a cgroup v2 per host child, where the host may
 * make one (a delegated subtree). Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A cgroup v2 of one host child, below the process's own, with itself
 * (a child is born in it: clone3()'s CLONE_INTO_CGROUP), its cgroup.procs
 * (for writing, where clone3() cannot be used: the child moves itself in
 * between fork and exec by writing "0") and cgroup.events open. */
typedef struct {
  char *path;
  int dir_fd;
  int procs_fd;
  int events_fd;
  gboolean killed;  /* cgroup.kill written: never reused (see _subagent_child_cgroup_release()) */
} SubagentChildCgroup;

/* Makes an empty cgroup for one child, or takes one that
 * _subagent_child_cgroup_release() kept; NULL with @error set where that
 * is not possible (no cgroup2 mount, no delegation, no cgroup.kill,
 * SUBAGENT_CHILD_CGROUP=0). */
G_GNUC_INTERNAL SubagentChildCgroup *_subagent_child_cgroup_new (GError **error);
/* Whether anything runs in it or below (cgroup.events); TRUE when that
 * cannot be read. */
G_GNUC_INTERNAL gboolean _subagent_child_cgroup_is_populated (SubagentChildCgroup *self);
/* cgroup.kill when it is populated; returns how many it held. */
G_GNUC_INTERNAL guint    _subagent_child_cgroup_kill        (SubagentChildCgroup *self);
/* Frees @self: kept for a later child when @reusable (nothing but the
 * caller ever named it, e.g. in an owner record), empty (@known_empty
 * saves reading that again) and never killed, else removed, killing what
 * is left. */
G_GNUC_INTERNAL void     _subagent_child_cgroup_release     (SubagentChildCgroup *self,
                                                             gboolean             reusable,
                                                             gboolean             known_empty);
/* Whether _subagent_child_cgroup_new() can be expected to work: cgroup v2
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
/* SIGKILLs every process in @cgroup and below (cgroup.kill), escaped ones
 * included, when it is populated; returns how many it held (at least 1 when
 * it killed). */
G_GNUC_INTERNAL guint     _subagent_cgroup_kill        (const char *cgroup);
/* Removes @cgroup once it is empty, waiting up to @timeout_ms for killed
 * processes to go. */
G_GNUC_INTERNAL gboolean  _subagent_cgroup_remove      (const char *cgroup,
                                                        guint       timeout_ms);
/* Whether @path, read from an owner record, names a cgroup this library
 * made: absolute, on a cgroup2 filesystem, named subagent-*. Keeps a
 * planted record from killing an arbitrary cgroup. */
G_GNUC_INTERNAL gboolean  _subagent_cgroup_is_ours     (const char *path);

G_END_DECLS
