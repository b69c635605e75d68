/* snapshot-private.h: internals of the isolation-snapshot plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

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

/* snapshot-pool.c */
typedef struct {
  guint copied;         /* files and links copied again */
  guint removed;        /* entries removed from the tree */
  gint64 sync_started;  /* coarse real time (ns) when the sync began */
} SnapshotSyncStats;

gint64   snapshot_pool_clock_now (void);
gboolean snapshot_tree_sync      (const char         *source,
                                  const char         *dest,
                                  const char * const *exclude_top_level,
                                  const SubagentExcludeSet *exclude,
                                  gint64              parent_since,
                                  gint64              child_since,
                                  SnapshotSyncStats  *stats,
                                  GError            **error);
gboolean snapshot_pool_take      (const char         *snapshot_dir,
                                  const char         *parent,
                                  const char         *tree,
                                  const char * const *exclude_top_level,
                                  const SubagentExcludeSet *exclude,
                                  SnapshotSyncStats  *stats,
                                  GError            **error);
gboolean snapshot_pool_park      (const char         *snapshot_dir,
                                  const char         *parent,
                                  const char         *tree,
                                  guint               pool_size,
                                  gint64              sync_started,
                                  gint64              handed_out);

G_END_DECLS
