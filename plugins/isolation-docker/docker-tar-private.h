/* docker-tar-private.h: what the tar files share (the stream through the
 * engine and the errors in docker-tar.c, the writer in docker-tar-write.c,
 * the reader in docker-tar-apply.c, what it does on disk in
 * docker-tar-apply-files.c, its file creators in docker-tar-creators.c).
 * Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sys/types.h>

#include "docker-engine.h"

#ifdef SUBAGENT_COMPILATION
#include "subagent-secrets.h"   /* the exec helper */
#else
#include <subagent.h>
#endif

G_BEGIN_DECLS

#define BLOCK 512
#define BUFFER_SIZE (256 * 1024)
/* The largest new file of a fresh directory left to the creators. */
#define CREATE_MAX_FILE (64 * 1024)

/* A directory fd shared by the applier and the file creators working in it. */
typedef struct {
  int fd;
  gatomicrefcount refs;
} DirRef;

typedef struct {
  DockerTarRead read;
  gpointer source;
  GCancellable *cancellable;
  int root_fd;
  const char * const *keep;
  const SubagentExcludeSet *secrets;  /* neither applied nor removed */
  guint64 max_file_size;
  GHashTable *seen;      /* rel paths the archive holds, outside fresh directories */
  GHashTable *fresh;     /* rel dirs this apply made ("" when the root was empty):
                          * what is in them came from the archive, so entries
                          * there need no look for an old file, and no removal pass */
  char *buffer;
  char *compare;         /* comparing an old file's blocks, or the creators' arena */
  /* the directory of the previous entry, kept open */
  char *cached_rel;
  DirRef *cached;
  DirRef *root;
  /* Creators: new files in fresh directories are made by a few threads
   * (a create costs far more than its bytes on a busy disk), their data
   * queued in the arena until it is full; drained before anything else
   * touches names (links, comparisons) and before the end. */
  GThreadPool *creators;
  GMutex lock;
  GCond idle;
  guint pending;         /* under lock */
  GError *create_error;  /* under lock: the first creator's failure */
  gsize arena_used;      /* only the applier's thread */
} Applier;

/* docker-tar.c */
G_GNUC_INTERNAL
gboolean docker_tar_errno_error           (GError     **error,
                                           int          saved,
                                           const char  *what,
                                           const char  *path);
G_GNUC_INTERNAL
GPtrArray *docker_tar_list_dir            (int                  dir_fd,
                                           const char          *rel,
                                           const char * const  *leave_out,
                                           GError             **error);

/* docker-tar-apply.c: reading the archive */
G_GNUC_INTERNAL
gboolean docker_tar_read_exact            (Applier     *a,
                                           void        *buffer,
                                           gsize        size,
                                           gboolean     eof_ok,
                                           gboolean    *out_eof,
                                           GError     **error);
G_GNUC_INTERNAL
gboolean docker_tar_skip_bytes            (Applier     *a,
                                           guint64      size,
                                           GError     **error);
G_GNUC_INTERNAL
char    *docker_tar_relative_name         (const char  *name,
                                           gboolean    *out_top,
                                           gboolean    *out_bad);

/* docker-tar-apply-files.c: on disk */
G_GNUC_INTERNAL
DirRef  *docker_tar_dir_ref_new           (int          fd);
G_GNUC_INTERNAL
DirRef  *docker_tar_dir_ref_ref           (DirRef      *ref);
G_GNUC_INTERNAL
void     docker_tar_dir_ref_unref         (DirRef      *ref);
G_GNUC_INTERNAL
void     docker_tar_spread_subdirectories (int          dir_fd);
G_GNUC_INTERNAL
gboolean docker_tar_all_zero              (const char  *data,
                                           gsize        size);
G_GNUC_INTERNAL
gboolean docker_tar_apply_entry           (Applier     *a,
                                           const char  *rel,
                                           char         type,
                                           guint64      size,
                                           mode_t       mode,
                                           const char  *link,
                                           GError     **error);
G_GNUC_INTERNAL
gboolean docker_tar_remove_unseen         (Applier     *a,
                                           int          dir_fd,
                                           const char  *rel,
                                           GError     **error);
G_GNUC_INTERNAL
gboolean docker_tar_dir_is_empty          (int          dir_fd);

/* docker-tar-creators.c: small new files, made by a few threads */
G_GNUC_INTERNAL
gboolean docker_tar_creators_drain        (Applier     *a,
                                           GError     **error);
G_GNUC_INTERNAL
gboolean docker_tar_queue_create          (Applier     *a,
                                           DirRef      *dir,
                                           const char  *name,
                                           const char  *rel,
                                           guint64      size,
                                           mode_t       mode,
                                           GError     **error);

G_END_DECLS
