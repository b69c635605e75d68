/* subagent-session-io.h: the JSON form and the files of session records.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "subagent-session.h"

G_BEGIN_DECLS

gboolean          subagent_session_id_is_valid   (const char           *session_id);

SubagentSession  *subagent_session_new_from_json (JsonObject           *object,
                                                  GError              **error);
JsonObject       *subagent_session_to_json       (SubagentSession      *self);

gboolean          subagent_session_save          (SubagentSession      *self,
                                                  const char           *sessions_dir,
                                                  GError              **error);
void              subagent_session_save_async    (SubagentSession      *self,
                                                  const char           *sessions_dir,
                                                  GCancellable         *cancellable,
                                                  GAsyncReadyCallback   callback,
                                                  gpointer              user_data);
gboolean          subagent_session_save_finish   (SubagentSession      *self,
                                                  GAsyncResult         *result,
                                                  GError              **error);
SubagentSession  *subagent_session_load          (const char           *path,
                                                  GError              **error);

G_END_DECLS
