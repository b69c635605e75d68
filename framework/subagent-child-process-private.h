/* subagent-child-process-private.h: plumbing of the command runner.
 *
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

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
void                subagent_pipe_writer_write     (SubagentPipeWriter *self,
                                                    GBytes             *bytes);
/* Closes once everything queued is written (or now, dropping it, if @discard). */
void                subagent_pipe_writer_close     (SubagentPipeWriter *self,
                                                    gboolean            discard);
gboolean            subagent_pipe_writer_is_closed (SubagentPipeWriter *self);
void                subagent_pipe_writer_free      (SubagentPipeWriter *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SubagentPipeWriter, subagent_pipe_writer_free)

/* Sends @signum to the descendants of @root (a live, unreaped child; 0 for
 * none) and to every process of ours whose environment holds
 * SUBAGENT_RUN_TOKEN=@token (NULL for none). @root itself is not signalled.
 * Linux /proc only; elsewhere it signals nothing. Returns how many were signalled. */
guint subagent_signal_run_processes (GPid        root,
                                     const char *token,
                                     int         signum);

G_END_DECLS
