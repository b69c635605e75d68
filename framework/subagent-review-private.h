/* subagent-review-private.h: the libgit2 side of review capture.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Index into the counts of a review, in property order. */
enum {
  SUBAGENT_REVIEW_COUNT_FILES_CHANGED,
  SUBAGENT_REVIEW_COUNT_INSERTIONS,
  SUBAGENT_REVIEW_COUNT_DELETIONS,
  SUBAGENT_REVIEW_COUNT_ADDED,
  SUBAGENT_REVIEW_COUNT_MODIFIED,
  SUBAGENT_REVIEW_COUNT_DELETED,
  SUBAGENT_REVIEW_COUNT_RENAMED,
  SUBAGENT_REVIEW_COUNT_MODE_CHANGED,
  SUBAGENT_REVIEW_COUNT_BINARY,
  SUBAGENT_REVIEW_N_COUNTS
};

/* Compares base (a resolved directory, or a commit of the repository at
 * base_git_dir or of child_root's) with child_root (resolved); appends the
 * patch and the status lines, fills counts. Writes nothing to disk. */
gboolean _subagent_review_diff (const char   *base_dir,
                                const char   *base_commit,
                                const char   *base_git_dir,
                                const char   *child_root,
                                GString      *patch_text,
                                GString      *status_text,
                                guint        *counts,
                                GCancellable *cancellable,
                                GError      **error);

G_END_DECLS
