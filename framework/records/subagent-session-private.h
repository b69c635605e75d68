/* subagent-session-private.h: what the session log shares with the
 * session's serializer. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "subagent.h"

G_BEGIN_DECLS

/* Appends json_to_string() of subagent_session_to_json (@self), written
 * directly (no object, copies or generator: one per child). */
void _subagent_session_append_line (SubagentSession *self,
                                    GString         *out) G_GNUC_INTERNAL;

G_END_DECLS
