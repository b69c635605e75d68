/* subagent-context-source.c: one GSource of a kind per main context (the
 * command runner's descriptors, time limits and spawned children), made at
 * its first use and gone with the context.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent-context-source-private.h"

GSource *
_subagent_context_source_get (SubagentContextSources   *sources,
                              GMainContext             *context,
                              SubagentContextSourceNew  make)
{
  GSource *source;

  g_mutex_lock (&sources->lock);
  if (sources->by_context == NULL)
    sources->by_context = g_hash_table_new (NULL, NULL);
  source = g_hash_table_lookup (sources->by_context, context);
  if (source == NULL && (source = make (context)) != NULL)
    {
      g_hash_table_insert (sources->by_context, context, source);
      g_source_attach (source, context);
      g_source_unref (source);   /* the context holds it */
    }
  g_mutex_unlock (&sources->lock);
  return source;
}

void
_subagent_context_source_forget (SubagentContextSources *sources,
                                 GMainContext           *context,
                                 GSource                *source)
{
  g_mutex_lock (&sources->lock);
  if (sources->by_context != NULL && g_hash_table_lookup (sources->by_context, context) == source)
    g_hash_table_remove (sources->by_context, context);
  g_mutex_unlock (&sources->lock);
}
