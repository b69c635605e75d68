/* subagent-context-source-private.h: one GSource of a kind per main
 * context, made at its first use and gone with the context. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The sources of one kind, by context: a static of the kind's file,
 * zero-initialized. */
typedef struct {
  GMutex lock;
  GHashTable *by_context;        /* GMainContext * → GSource * (not references) */
} SubagentContextSources;

/* Makes @context's source of the kind (not attached), or NULL if it cannot. */
typedef GSource *(*SubagentContextSourceNew) (GMainContext *context);

/* @context's source of the kind in @sources, made by @make and attached to
 * @context (which holds it) at the first call; NULL if @make failed. It is
 * valid while the caller holds @context. */
G_GNUC_INTERNAL GSource *_subagent_context_source_get    (SubagentContextSources   *sources,
                                                          GMainContext             *context,
                                                          SubagentContextSourceNew  make);
/* From the kind's finalize: @source (of @context) is gone. */
G_GNUC_INTERNAL void     _subagent_context_source_forget (SubagentContextSources   *sources,
                                                          GMainContext             *context,
                                                          GSource                  *source);

G_END_DECLS
