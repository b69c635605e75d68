/* approval-file-io.h: locking and atomic replacement of approval files.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

/* Files larger than this are refused rather than read into memory. */
#define AFS_MAX_FILE_SIZE (64 * 1024 * 1024)

char     *afs_run_file_path (const char  *dir,
                             const char  *run_id);

/* Takes the exclusive flock of <dir>/<run_id>.json.lock; returns the fd that
 * holds it (close it with afs_unlock()) or -1 with an error. Safe against a
 * concurrent prune unlinking the lock file. */
int       afs_lock          (const char  *dir,
                             const char  *run_id,
                             GError     **error);
void      afs_unlock        (int          fd);

/* Reads @path whole: with @run_locked (the caller holds the run's lock) as
 * it is, otherwise holding a shared flock on the version read (see
 * approval-file-io.c). A missing file is success with *contents = NULL. */
gboolean  afs_read          (const char  *path,
                             gboolean     run_locked,
                             GBytes     **contents,
                             GError     **error);

/* A nameless inode in the directory of @dir_fd for a later afs_commit() to
 * fill, made while nobody waits for it; -1 (errno set) where the
 * filesystem has no O_TMPFILE. */
int       afs_spare_new     (int          dir_fd);
/* A temp inode for afs_commit() to write the next version into: nameless
 * (afs_spare_new()), or a version afs_commit() replaced, still under its
 * temp name. */
typedef struct {
  int fd;            /* -1: none */
  char *path;        /* NULL: nameless */
  gboolean held;     /* an exclusive flock on it: no reader has it */
} AfsSpare;

#define AFS_SPARE_INIT { -1, NULL, FALSE }

/* Drops @spare: unlinks its name (if it is still this inode) and closes it. */
void      afs_spare_clear   (AfsSpare    *spare);

/* Writes @contents to a temp file beside the run's file, fsyncs it and puts
 * it in the run file's place. The temp file is @spare (consumed): a
 * replaced version, written over in place; a nameless inode, given a temp
 * name (if it cannot be linked, *spare_refused is set: no /proc, say); or,
 * without one, a file made here. Call with the run's lock held; follow with
 * afs_sync_dir() (after unlocking is fine) to make the rename durable.
 * *replaced gets the replaced version (fd -1: none): with held set and the
 * directory fsync'd, it may be the next write's spare; otherwise
 * afs_spare_clear() it once the rename's readers matter less than the
 * caller's time (it frees the old inode). */
gboolean  afs_commit        (const char  *dir,
                             const char  *run_id,
                             GBytes      *contents,
                             AfsSpare    *spare,
                             gboolean    *spare_refused,
                             AfsSpare    *replaced,
                             GError     **error);
/* Removes the temp file @path unless someone holds a flock on it (a writer
 * keeping it for its next write, or a reader of the version it was). Call
 * with the run's lock held. */
void      afs_remove_stale_temp (const char *path);
gboolean  afs_sync_dir      (const char  *dir,
                             GError     **error);
gboolean  afs_sync_dir_fd   (int          fd,
                             const char  *dir,
                             GError     **error);

/* Whether @name is a run's file ("<run>.json" with a valid run id); then
 * *run_id gets the run. */
gboolean  afs_parse_run_file_name (const char  *name,
                                   char       **run_id);

/* Whether @name is a temp file of afs_commit() (".<run>.json.XXXXXX"); then
 * *run_id gets the run. */
gboolean  afs_parse_temp_name (const char *name,
                               char      **run_id);

G_END_DECLS
