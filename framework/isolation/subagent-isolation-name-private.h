/* subagent-isolation-name-private.h: isolation mode names as users write
 * them, checked without interning. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The longest mode name subagent_isolation_normalize() accepts. */
#define SUBAGENT_ISOLATION_NAME_MAX 128

/* subagent_isolation_normalize() into @out, without interning: names come
 * from configuration, definitions, batches and MCP clients, and interning
 * each one a long-lived host is sent would grow GLib's quark table for
 * ever. FALSE if @value cannot name a mode. */
G_GNUC_INTERNAL gboolean _subagent_isolation_normalize_to (const char *value,
                                                           char        out[SUBAGENT_ISOLATION_NAME_MAX + 1],
                                                           gboolean   *is_deprecated_alias);

G_END_DECLS
