/* subagent-fd-private.h: whole writes to a file descriptor. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Writes all @len bytes of @data to @fd, again after EINTR and after a
 * short write. Returns 0, or the errno of the write that failed (for the
 * caller's own GError). */
int _subagent_write_all (int         fd,
                         const void *data,
                         gsize       len) G_GNUC_INTERNAL;

G_END_DECLS
