/* subagent-host-process-private.h: a child process of the command runner.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "subagent-isolation-context.h"

G_BEGIN_DECLS

typedef struct _SubagentHostProcess SubagentHostProcess;

/* Called once, in the main context given to subagent_host_process_wait(),
 * after the process has exited and been reaped. */
typedef void (*SubagentHostProcessExited) (gpointer user_data);

/* Called once with the started process (transfer full), or NULL and why. */
typedef void (*SubagentHostProcessSpawned) (SubagentHostProcess *process,
                                            GError              *error,
                                            gpointer             user_data);

gboolean             subagent_host_process_expects_cgroup (SubagentIsolationContext *isolation);
void                 subagent_host_process_spawn_async  (SubagentIsolationContext   *isolation,
                                                         char                      **argv,
                                                         char                      **envp,
                                                         int                         ruleset_fd,
                                                         GBytes                     *stdin_text,
                                                         gboolean                    keep_stdin_open,
                                                         GMainContext               *context,
                                                         SubagentHostProcessSpawned  callback,
                                                         gpointer                    user_data);
GOutputStream       *subagent_host_process_get_stdin    (SubagentHostProcess       *self);
gboolean             subagent_host_process_get_stdin_written (SubagentHostProcess  *self);
int                  subagent_host_process_steal_stdin_fd (SubagentHostProcess     *self);
int                  subagent_host_process_get_stdout_fd (SubagentHostProcess      *self);
int                  subagent_host_process_get_stderr_fd (SubagentHostProcess      *self);
GPid                 subagent_host_process_get_pid      (SubagentHostProcess       *self);
const char          *subagent_host_process_get_cgroup   (SubagentHostProcess       *self);
void                 subagent_host_process_set_cgroup_reusable (SubagentHostProcess *self,
                                                                gboolean             reusable);
/* SIGKILLs what is in the child's cgroup (cgroup.kill, when it holds
 * anything); a killed cgroup serves no later child. */
void                 subagent_host_process_kill_cgroup  (SubagentHostProcess       *self);
void                 subagent_host_process_send_signal  (SubagentHostProcess       *self,
                                                         int                        signum);
void                 subagent_host_process_wait         (SubagentHostProcess       *self,
                                                         GMainContext              *context,
                                                         SubagentHostProcessExited  callback,
                                                         gpointer                   user_data,
                                                         GDestroyNotify             destroy);
gboolean             subagent_host_process_get_if_exited   (SubagentHostProcess    *self);
int                  subagent_host_process_get_exit_status (SubagentHostProcess    *self);
gboolean             subagent_host_process_get_if_signaled (SubagentHostProcess    *self);
int                  subagent_host_process_get_term_sig    (SubagentHostProcess    *self);
void                 subagent_host_process_free         (SubagentHostProcess       *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SubagentHostProcess, subagent_host_process_free)

/* Defined in subagent-isolation-context.c. */
gboolean _subagent_isolation_context_spawns_on_host (SubagentIsolationContext *self);

G_END_DECLS
