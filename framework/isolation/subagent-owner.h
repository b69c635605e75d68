/* subagent-owner.h: who made an isolation resource, so leftovers of dead
 * processes can be reclaimed and live ones never are.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <json-glib/json-glib.h>

G_BEGIN_DECLS


SUBAGENT_AVAILABLE_IN_ALL
gboolean    subagent_owner_record_save   (const char  *root,
                                          const char  *session_key,
                                          const char  *kind,
                                          const char  *resource,
                                          const char  *parent_run_id,
                                          JsonObject  *extra,
                                          GError     **error);
SUBAGENT_AVAILABLE_IN_ALL
void        subagent_owner_record_remove (const char  *root,
                                          const char  *session_key);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject *subagent_owner_record_load   (const char  *root,
                                          const char  *session_key,
                                          GError     **error);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray  *subagent_owner_record_list   (const char  *root,
                                          GError     **error);
SUBAGENT_AVAILABLE_IN_ALL
char       *subagent_owner_record_path   (const char  *root,
                                          const char  *session_key);
SUBAGENT_AVAILABLE_IN_ALL
gboolean    subagent_owner_is_alive      (JsonObject  *record);
SUBAGENT_AVAILABLE_IN_ALL
gboolean    subagent_owner_get_process_start_time (GPid     pid,
                                                   guint64 *out_start_time,
                                                   GError **error);
SUBAGENT_AVAILABLE_IN_ALL
gboolean    subagent_owner_marker_write   (const char  *dir,
                                           const char  *marker_name,
                                           const char  *session_key,
                                           const char  *parent_root,
                                           GError     **error);
SUBAGENT_AVAILABLE_IN_ALL
gboolean    subagent_owner_marker_matches (const char  *dir,
                                           const char  *marker_name,
                                           const char  *session_key);

SUBAGENT_AVAILABLE_IN_0_2
gboolean    subagent_owner_record_add_process    (const char  *root,
                                                  const char  *session_key,
                                                  GPid         pid,
                                                  const char  *run_token,
                                                  GError     **error);
SUBAGENT_AVAILABLE_IN_0_2
gboolean    subagent_owner_record_add_process_full (const char  *root,
                                                    const char  *session_key,
                                                    GPid         pid,
                                                    const char  *run_token,
                                                    const char  *cgroup,
                                                    GError     **error);
SUBAGENT_AVAILABLE_IN_0_2
guint       subagent_owner_record_stop_processes (JsonObject  *record);

G_END_DECLS
