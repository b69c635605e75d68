/* subagent-tree-copy-job-private.h: what the walk (subagent-tree-copy-job.c)
 * and the copying of files (subagent-tree-copy-file.c) of
 * subagent_tree_copy() share: the job, its directories and queued files.
 * Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sys/stat.h>

#include <gio/gio.h>

#include "subagent-secrets.h"

G_BEGIN_DECLS

/* A directory whose files are being copied: both sides stay open while
 * files of it are queued, so each file is opened by its name alone (no
 * path walk). Reference-counted under CopyJob.lock: the walker holds one
 * while it reads the directory, each queued file one. */
typedef struct {
  guint ref;
  int src_fd;
  int dst_fd;
  const char *rel;         /* "" for the root; owned by the DirInfo */
} Dir;

/* Mode and times of a directory, set once everything under it is done. */
typedef struct {
  char *rel;
  mode_t mode;
  struct timespec times[2];
} DirInfo;

typedef struct {
  Dir *dir;                /* a reference, dropped once the file is done */
  char name[];
} Entry;

enum { REFLINK_UNTRIED, REFLINK_WORKS, REFLINK_REFUSED };

/* How many queued files a worker takes at once. */
#define COPY_CLAIM 32

typedef struct {
  const char *source;
  const char *dest;
  const char * const *exclude_top_level;
  const SubagentExcludeSet *exclude;   /* at any depth; NULL for none */
  int src_root;
  int dst_root;
  gboolean allow_reflink;
  mode_t umask;            /* the bits creation removes; all if unknown */
  GPtrArray *dirs;         /* DirInfo, pre-order */
  gint reflink_state;      /* atomic */
  gint failed;             /* atomic */
  GCancellable *cancellable;

  GMutex lock;
  GCond cond;              /* files queued, walk done, a directory closed */
  GPtrArray *files;        /* Entry, under lock */
  guint next_file;         /* under lock */
  guint open_dirs;         /* Dir objects alive, under lock */
  guint walk_depth;        /* of them, held by the walker, under lock */
  gboolean walk_done;      /* under lock */
  GError *error;           /* the first error, under lock */
} CopyJob;

/* subagent-tree-copy-job.c */
G_GNUC_INTERNAL void     _subagent_tree_copy_dir_unref_locked (CopyJob    *job,
                                                               Dir        *d);
G_GNUC_INTERNAL void     _subagent_tree_copy_job_fail         (CopyJob    *job,
                                                               int         saved_errno,
                                                               const char *format,
                                                               ...) G_GNUC_PRINTF (3, 4);
G_GNUC_INTERNAL gboolean _subagent_tree_copy_job_should_stop  (CopyJob    *job);

/* subagent-tree-copy-file.c */
G_GNUC_INTERNAL gboolean _subagent_tree_copy_claim_locked     (CopyJob    *job,
                                                               guint      *first,
                                                               guint      *end);
G_GNUC_INTERNAL void     _subagent_tree_copy_run_locked       (CopyJob    *job,
                                                               guint       first,
                                                               guint       end);
G_GNUC_INTERNAL gpointer _subagent_tree_copy_worker           (gpointer    data);

G_END_DECLS
