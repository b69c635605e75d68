/* subagent-state-path-private.h: directories of `<root>/.subagent/` that
 * state is written to, never through a symbolic link.
 *
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Makes @dir (mode @mode) if missing and checks that it, and every
 * component of it from its last `.subagent` component on, is a real
 * directory: a child (or anyone) who replaced `.subagent`, `reviews/` or
 * `sessions/` by a symbolic link must not make the host write outside the
 * root. FALSE with @error (G_IO_ERROR_NOT_DIRECTORY or the mkdir error). */
gboolean _subagent_state_dir_ensure (const char  *dir,
                                     int          mode,
                                     GError     **error);

G_END_DECLS
