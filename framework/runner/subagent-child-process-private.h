/* subagent-child-process-private.h: plumbing of the command runner.
 *
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The environment entry that tags every process of one run, so the runner
 * can find them after they were reparented away from the child. */
#define SUBAGENT_RUN_TOKEN_ENV "SUBAGENT_RUN_TOKEN"

/* Writes queued buffers to a child's stdin from a main context without
 * blocking it, and without SIGPIPE killing the host when the child has
 * closed its end: the write then just fails and the writer closes. */
typedef struct _SubagentPipeWriter SubagentPipeWriter;

SubagentPipeWriter *subagent_pipe_writer_new       (GOutputStream      *stream,
                                                    GMainContext       *context);
/* Writes to @fd (a pipe's write end, now the writer's) with write(): no
 * stream, no pollability probe. */
SubagentPipeWriter *subagent_pipe_writer_new_fd    (int                 fd,
                                                    GMainContext       *context);
void                subagent_pipe_writer_write     (SubagentPipeWriter *self,
                                                    GBytes             *bytes);
/* Closes once everything queued is written (or now, dropping it, if @discard). */
void                subagent_pipe_writer_close     (SubagentPipeWriter *self,
                                                    gboolean            discard);
gboolean            subagent_pipe_writer_is_closed (SubagentPipeWriter *self);
void                subagent_pipe_writer_free      (SubagentPipeWriter *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SubagentPipeWriter, subagent_pipe_writer_free)

/* The processes of one run: the child's descendants and every process of
 * ours whose environment holds SUBAGENT_RUN_TOKEN=<token>. Create it before
 * spawning the child, give it the child's pid once spawned. Linux /proc
 * only; elsewhere it finds nothing. */
typedef struct _SubagentRunProcesses SubagentRunProcesses;

SubagentRunProcesses *subagent_run_processes_new      (const char           *token);
/* The same, created after the child was spawned: its sweeps read all of /proc. */
SubagentRunProcesses *subagent_run_processes_new_unbounded (const char       *token);
void                  subagent_run_processes_set_root (SubagentRunProcesses *self,
                                                       GPid                  root);
/* Sends @signum to the run's processes, the child itself excepted; with
 * @root_alive (the child is not reaped yet) its descendants are found by
 * parentage too. Returns how many were signalled. */
guint                 subagent_run_processes_signal   (SubagentRunProcesses *self,
                                                       gboolean              root_alive,
                                                       int                   signum);
void                  subagent_run_processes_free     (SubagentRunProcesses *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SubagentRunProcesses, subagent_run_processes_free)

/* One stdout line of a child as a protocol message: a JSON object (nesting
 * bounded) with a string "type", which *type points into. NULL for plain
 * output. */
JsonObject *subagent_child_message_parse (const char  *line,
                                          const char **type);

G_END_DECLS
