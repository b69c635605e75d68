/* subagent-host-process-struct-private.h: the fields of a
 * SubagentHostProcess, shared by subagent-host-process.c (the process:
 * its streams, signals, exit and end) and subagent-host-process-spawn.c
 * (starting it). Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-host-process-struct-private.h is internal to libsubagent."
#endif

#include <gio/gio.h>

#include "subagent-host-process-private.h"
#include "subagent-cgroup-private.h"
#include "subagent-fd-watch-private.h"

G_BEGIN_DECLS

struct _SubagentHostProcess
{
  GSubprocess *subprocess;      /* a backend's own spawnv(); else NULL */
  GCancellable *wait_cancellable;

  /* Spawned directly: */
  GPid pid;                     /* 0 once reaped */
  int stdin_fd;                  /* write end, -1 once handed over or closed */
  gboolean stdin_written;        /* the text was put in the pipe before the spawn */
  int stdout_fd;                 /* read ends, -1 once closed */
  int stderr_fd;
  GSource *watch;                /* GLib's child watch (kernels before 5.3) */
  SubagentFdWatch *pidfd_watch;
  int pidfd;                     /* -1 unless the exit is watched through it
                                  * (or clone3() gave one at the spawn) */
  int wait_status;
  gboolean exited;
  gboolean own_group;            /* its pid is its process group's id */
  SubagentChildCgroup *cgroup;   /* its own cgroup v2, where the host may make one */
  gboolean cgroup_reusable;      /* no owner record names it */
  gboolean cgroup_empty;         /* found empty after the child was reaped */

  SubagentHostProcessExited callback;
  gpointer user_data;
  GDestroyNotify destroy;
};

G_END_DECLS
