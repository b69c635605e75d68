/* subagent-review.h: what a child changed, as a patch and a status file.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define SUBAGENT_TYPE_REVIEW (subagent_review_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentReview, subagent_review, SUBAGENT, REVIEW, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentReview *subagent_review_capture        (const char           *root,
                                                const char           *session_key,
                                                const char           *base_dir,
                                                const char           *base_commit,
                                                const char           *base_git_dir,
                                                const char           *child_root,
                                                GCancellable         *cancellable,
                                                GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
void            subagent_review_capture_async  (const char           *root,
                                                const char           *session_key,
                                                const char           *base_dir,
                                                const char           *base_commit,
                                                const char           *base_git_dir,
                                                const char           *child_root,
                                                GCancellable         *cancellable,
                                                GAsyncReadyCallback   callback,
                                                gpointer              user_data);
SUBAGENT_AVAILABLE_IN_ALL
SubagentReview *subagent_review_capture_finish (GAsyncResult         *result,
                                                GError              **error);

SUBAGENT_AVAILABLE_IN_ALL
SubagentReview *subagent_review_new_from_json  (JsonObject           *object,
                                                GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject     *subagent_review_to_json        (SubagentReview       *self);

SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_review_get_session_key   (SubagentReview *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_review_get_patch_path    (SubagentReview *self);
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_review_get_status_path   (SubagentReview *self);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_review_get_files_changed (SubagentReview *self);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_review_get_insertions    (SubagentReview *self);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_review_get_deletions     (SubagentReview *self);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_review_get_added         (SubagentReview *self);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_review_get_modified      (SubagentReview *self);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_review_get_deleted       (SubagentReview *self);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_review_get_renamed       (SubagentReview *self);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_review_get_mode_changed  (SubagentReview *self);
SUBAGENT_AVAILABLE_IN_ALL
guint       subagent_review_get_binary        (SubagentReview *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean    subagent_review_is_empty          (SubagentReview *self);

G_END_DECLS
