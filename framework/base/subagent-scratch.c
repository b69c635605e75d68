/* subagent-scratch.c: per-thread buffers for the lines a child's records
 * are built in (see subagent-scratch-private.h).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent-scratch-private.h"

/* Kept up to this size; a longer line (a long transcript) gives its memory back. */
#define KEEP_MAX (64 * 1024)

static void
buffer_free (gpointer buffer)
{
  g_string_free (buffer, TRUE);
}

static GPrivate buffers[SUBAGENT_SCRATCH_N] = {
  G_PRIVATE_INIT (buffer_free), G_PRIVATE_INIT (buffer_free),
  G_PRIVATE_INIT (buffer_free), G_PRIVATE_INIT (buffer_free),
};

GString *
_subagent_scratch_take (SubagentScratch which)
{
  GString *buffer = g_private_get (&buffers[which]);

  if (buffer == NULL)
    return g_string_sized_new (2048);
  /* Taken: a nested use on this thread gets a buffer of its own. */
  g_private_set (&buffers[which], NULL);
  g_string_truncate (buffer, 0);
  return buffer;
}

void
_subagent_scratch_give (SubagentScratch  which,
                        GString         *buffer)
{
  if (buffer->allocated_len > KEEP_MAX || g_private_get (&buffers[which]) != NULL)
    g_string_free (buffer, TRUE);
  else
    g_private_set (&buffers[which], buffer);
}
