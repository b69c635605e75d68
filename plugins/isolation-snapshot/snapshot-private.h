/* snapshot-private.h: internals of the isolation-snapshot plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sys/stat.h>

#include <subagent.h>

G_BEGIN_DECLS

#define SUBAGENT_TYPE_SNAPSHOT_ISOLATION (subagent_snapshot_isolation_get_type ())
G_DECLARE_FINAL_TYPE (SubagentSnapshotIsolation, subagent_snapshot_isolation, SUBAGENT, SNAPSHOT_ISOLATION, GObject)

void subagent_snapshot_isolation_register (GTypeModule *module);

/* Layout of one snapshot, <snapshot_dir>/<session_key>/: */
/* The backend this plugin provides and the owner-record kind it reclaims
 * (isolation-snapshot.plugin says the same). */
#define SNAPSHOT_BACKEND "directory-snapshot"
#define SNAPSHOT_OWNER_KIND "snapshot"
#define SNAPSHOT_MARKER ".subagent-snapshot"   /* JSON: proves the directory is ours */
#define SNAPSHOT_TREE "tree"                   /* the child root (an overlay's merged dir) */
#define SNAPSHOT_UPPER "upper"                 /* overlay only */
#define SNAPSHOT_WORK "work"                   /* overlay only */

/* snapshot-overlay.c */
gboolean snapshot_overlay_mount   (const char         *lower,
                                   const char         *base,
                                   const char * const *hidden_names,
                                   const SubagentExcludeSet *exclude,
                                   GError            **error);
gboolean snapshot_unmount_tree    (const char         *base,
                                   GError            **error);

/* snapshot-reclaim.c: a dead run's snapshot, from its owner record. */
SubagentReclaimOutcome snapshot_reclaim (SubagentIsolationProvider  *provider,
                                         const char                 *root,
                                         JsonObject                 *record,
                                         SubagentReclaimFlags        flags,
                                         char                      **reason);

/* snapshot-manifest.c */
typedef struct _SnapshotManifest SnapshotManifest;
typedef struct _SnapshotManifestDir SnapshotManifestDir;

SnapshotManifestDir *snapshot_manifest_dir_new      (const char          *rel,
                                                     const struct stat   *st);
void                 snapshot_manifest_dir_add      (SnapshotManifestDir *dir,
                                                     const char          *name,
                                                     const struct stat   *st);
void                 snapshot_manifest_dir_free     (SnapshotManifestDir *dir);
SnapshotManifest    *snapshot_manifest_new          (void);
void                 snapshot_manifest_take_dir     (SnapshotManifest    *manifest,
                                                     SnapshotManifestDir *dir);
guint                snapshot_manifest_get_n_entries (SnapshotManifest   *manifest);
void                 snapshot_manifest_free         (SnapshotManifest    *manifest);
gboolean             snapshot_manifest_save         (SnapshotManifest    *manifest,
                                                     const char          *path,
                                                     GError             **error);
SnapshotManifest    *snapshot_manifest_load         (const char          *path,
                                                     GError             **error);
gboolean             snapshot_manifest_matches      (SnapshotManifest    *manifest,
                                                     const char          *parent,
                                                     gint64               since);
void                 snapshot_manifest_index        (SnapshotManifest    *manifest);
SnapshotManifestDir *snapshot_manifest_find_dir     (SnapshotManifest    *manifest,
                                                     const char          *rel);
gboolean             snapshot_manifest_dir_unchanged (SnapshotManifestDir *dir,
                                                     const struct stat   *st,
                                                     gint64               since);
gboolean             snapshot_manifest_dir_entry_unchanged (SnapshotManifestDir *dir,
                                                           const char          *name,
                                                           const struct stat   *st,
                                                           gint64               since);
GPtrArray           *snapshot_manifest_dir_names    (SnapshotManifestDir *dir);
gboolean             snapshot_manifest_dir_verified (SnapshotManifestDir *dir);
gboolean             snapshot_manifest_dir_entry_is_dir (SnapshotManifestDir *dir,
                                                        guint                index);

/* snapshot-holders.c */
gboolean snapshot_tree_has_holders (const char *tree,
                                    int        *pid_out);

/* snapshot-sync.c (syncing a tree with its parent) and snapshot-pool.c */
typedef struct {
  guint copied;         /* files and links copied again */
  guint removed;        /* entries removed from the tree */
  guint checked;        /* parent entries checked against the manifest */
  guint listed;         /* directories whose names were compared */
  gboolean synced;      /* the parent had changed since the park: a sync ran */
  gint64 sync_started;  /* coarse real time (ns) when the sync began */
} SnapshotSyncStats;

/* snapshot-sync.c */
gboolean snapshot_tree_sync      (const char         *source,
                                  const char         *dest,
                                  const char * const *exclude_top_level,
                                  const SubagentExcludeSet *exclude,
                                  gint64              parent_since,
                                  gint64              child_since,
                                  SnapshotManifest   *record,
                                  SnapshotManifest   *trusted,
                                  SnapshotSyncStats  *stats,
                                  GError            **error);
/* snapshot-pool.c */
gint64   snapshot_pool_clock_now (void);
gboolean snapshot_pool_take      (const char         *snapshot_dir,
                                  const char         *parent,
                                  const char         *tree,
                                  const char * const *exclude_top_level,
                                  const char * const *secret_patterns,
                                  SnapshotSyncStats  *stats,
                                  GError            **error);
gboolean snapshot_pool_park      (const char         *snapshot_dir,
                                  const char         *parent,
                                  const char         *tree,
                                  const char * const *exclude_top_level,
                                  const char * const *secret_patterns,
                                  guint               pool_size,
                                  gint64              sync_started,
                                  gint64              handed_out);

G_END_DECLS
