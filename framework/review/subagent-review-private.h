/* subagent-review-private.h: the libgit2 side of review capture.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <time.h>
#include <git2.h>

#include "subagent-review.h"
#include "subagent-secrets.h"

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

/* A review of the artifacts at @patch_path and @status_path, with these
 * counts (subagent-review-capture.c makes them; the class is in
 * subagent-review.c). */
G_GNUC_INTERNAL SubagentReview *_subagent_review_new (const char  *session_key,
                                                      const char  *patch_path,
                                                      const char  *status_path,
                                                      const guint  counts[SUBAGENT_REVIEW_N_COUNTS]);

/* Compares base (a resolved directory, or a commit of the repository at
 * base_git_dir or of child_root's) with child_root (resolved); appends the
 * patch and the status lines, fills counts. Writes nothing to disk. With a
 * commit and untrusted_child, the child's .gitignore files and nested
 * repositories hide nothing (as a directory base: what a child that could
 * edit them made is all in the review). */
G_GNUC_INTERNAL gboolean _subagent_review_diff (const char   *base_dir,
                                const char   *base_commit,
                                const char   *base_git_dir,
                                const char   *child_root,
                                guint64       max_file_size,
                                gboolean      untrusted_child,
                                const SubagentExcludeSet *exclude,
                                int           patch_fd,
                                GString      *status_text,
                                guint        *counts,
                                GCancellable *cancellable,
                                GError      **error);

/* A file over the content limit: what its stand-in blob stands for. */
typedef struct {
  goffset size;
  char *digest;   /* blocks-sha256, hex */
} SubagentReviewOverLimit;

/* subagent_review_capture_full() with untrusted_child (see _subagent_review_diff). */
G_GNUC_INTERNAL SubagentReview *_subagent_review_capture_full (const char    *root,
                                               const char    *session_key,
                                               const char    *base_dir,
                                               const char    *base_commit,
                                               const char    *base_git_dir,
                                               const char    *child_root,
                                               guint64        max_file_size,
                                               gboolean       untrusted_child,
                                               const char * const *exclude,
                                               GCancellable  *cancellable,
                                               GError       **error);

/* subagent-review-tree.c: hashing a directory into a tree. */
typedef struct {
  git_repository *repo;
  git_repository *ignore_repo;   /* commit mode: the child's, for .gitignore */
  git_tree *base_tree;           /* commit mode: tracked paths are never ignored */
  gboolean commit_mode;
  gboolean keep_nested_repos;    /* commit mode: walk into a nested repository */
  git_index *index;              /* commit mode: the child's index, as a stat cache */
  git_odb *odb;                  /* with index: where its ids must exist */
  struct timespec index_mtime;
  int twin_fd;                   /* dir mode, child walk: the base root */
  GHashTable *unchanged;         /* dir mode: paths equal on both sides */
  git_oid placeholder;           /* stands for every unchanged file */
  const char *side;              /* the directory being hashed, for messages */
  GCancellable *cancellable;
  guint64 max_file_size;         /* content limit: larger files get a stand-in */
  GHashTable *over_limit;        /* git_oid of a stand-in -> SubagentReviewOverLimit */
  GPtrArray *skipped;            /* child side: "kind\tpath" of what a tree cannot hold */
  const SubagentExcludeSet *exclude;  /* dir mode: secrets left out of the workspace, skipped on both sides */
  gboolean record_skipped;
} SubagentReviewWalker;

typedef enum {
  SUBAGENT_REVIEW_HASH_FAILED,
  SUBAGENT_REVIEW_HASH_CONTENT,     /* out is the file's blob */
  SUBAGENT_REVIEW_HASH_OVER_LIMIT,  /* out is a stand-in blob */
  SUBAGENT_REVIEW_HASH_SKIPPED,     /* gone, or no longer a regular file */
} SubagentReviewHashResult;

G_GNUC_INTERNAL gboolean _subagent_review_git_error       (GError              **error,
                                           const char           *format,
                                           ...) G_GNUC_PRINTF (2, 3);
G_GNUC_INTERNAL void     _subagent_review_walker_use_index (SubagentReviewWalker *walker,
                                            git_index            *index);
G_GNUC_INTERNAL gboolean _subagent_review_walker_set_twin (SubagentReviewWalker  *walker,
                                           const char            *twin_dir,
                                           GError               **error);
G_GNUC_INTERNAL void     _subagent_review_walker_clear    (SubagentReviewWalker  *walker);
G_GNUC_INTERNAL SubagentReviewHashResult
                         _subagent_review_hash_file       (SubagentReviewWalker  *walker,
                                           int                    dir_fd,
                                           const char            *name,
                                           const char            *rel,
                                           git_oid               *out,
                                           GError               **error);
G_GNUC_INTERNAL const SubagentReviewOverLimit *
                         _subagent_review_walker_lookup_over_limit (SubagentReviewWalker *walker,
                                                    const git_oid        *oid);
G_GNUC_INTERNAL gboolean _subagent_review_tree_from_dir   (SubagentReviewWalker  *walker,
                                           const char            *path,
                                           git_tree             **out,
                                           GError               **error);

G_END_DECLS
