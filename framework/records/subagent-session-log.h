/* subagent-session-log.h: an append-only, group-committed file of session records.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gio/gio.h>

#include "subagent-session.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_SESSION_LOG (subagent_session_log_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentSessionLog, subagent_session_log, SUBAGENT, SESSION_LOG, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentSessionLog *subagent_session_log_new            (const char           *sessions_dir,
                                                         const char           *log_id,
                                                         GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
const char         *subagent_session_log_get_path       (SubagentSessionLog   *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean            subagent_session_log_append         (SubagentSessionLog   *self,
                                                         SubagentSession      *session,
                                                         GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
void                subagent_session_log_append_async   (SubagentSessionLog   *self,
                                                         SubagentSession      *session,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
SUBAGENT_AVAILABLE_IN_ALL
gboolean            subagent_session_log_append_finish  (SubagentSessionLog   *self,
                                                         GAsyncResult         *result,
                                                         GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
gboolean            subagent_session_log_sync           (SubagentSessionLog   *self,
                                                         GError              **error);

SUBAGENT_AVAILABLE_IN_ALL
GPtrArray          *subagent_session_log_read_dir       (const char           *sessions_dir,
                                                         GStrv                *skipped,
                                                         GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentSession    *subagent_session_log_lookup         (const char           *sessions_dir,
                                                         const char           *session_id,
                                                         GError              **error);

G_END_DECLS
