/* snapshot-pool.c: copied snapshot trees kept ready for the next child
 * (option `pool_size`).
 *
 * Creating thousands of files is most of what a copied snapshot costs, and
 * removing them most of its cleanup (docs/performance.md). With a pool, the
 * cleanup of a copied (or cloned) snapshot keeps its tree for the next
 * prepare of the same parent instead of removing it:
 *
 * - Park (cleanup): once no process holds anything in the tree any more
 *   (snapshot-holders.c), the tree is brought back to the parent's state
 *   by comparing the two trees (snapshot_tree_sync()): only what the child
 *   changed, or what changed in the parent since, is copied again or
 *   removed. The sync records a manifest of the parent as it walked it
 *   (snapshot-manifest.c); the tree is parked with it.
 * - Take (prepare): a parked tree is the parent's as of its park-time sync,
 *   and nothing has had it since. Prepare only proves the parent did not
 *   change since then: one stat per entry of the parent against the
 *   manifest, none of the tree, no directory listing. Should anything
 *   differ, the manifest guides a sync: a directory whose status did not
 *   change is not listed, an entry whose status did not change is not
 *   compared; the rest is compared as the park does. Without a usable
 *   manifest (missing, torn, or parked under other exclusions), all of it.
 *
 * What counts as changed in a sync: snapshot-sync.c.
 *
 * Layout: `<snapshot_dir>/.pool/<parent-id>/<entry>/` holding `tree/`,
 * `manifest` and `pool.json` (`parent`, `synced_at`: when the park-time
 * sync began, `exclude`: what the tree leaves out, and for the full sync
 * `sync_started`, `handed_out`; times are nanoseconds of the coarse
 * real-time clock, the clock ctime is taken from). `.pool` cannot be a
 * session key (keys have no dot). Taking and parking hold an exclusive
 * flock on `<snapshot_dir>/.pool/<parent-id>.lock`, so concurrent children
 * never share an entry and the pool never grows past its size (the
 * park-time sync runs outside it, on a tree no one else can take yet).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "snapshot-private.h"

#define POOL_DIR ".pool"
#define POOL_STATE "pool.json"
#define POOL_MANIFEST "manifest"

gint64
snapshot_pool_clock_now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_REALTIME_COARSE, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static char *
parent_id (const char *parent)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, parent, -1);

  return g_strndup (digest, 16);
}

/* Opens and locks <snapshot_dir>/.pool/<id>.lock; -1 if it cannot. */
static int
pool_lock (const char *pool_dir,
           const char *id)
{
  g_autofree char *name = g_strconcat (id, ".lock", NULL);
  g_autofree char *path = g_build_filename (pool_dir, name, NULL);
  int fd;

  if (g_mkdir_with_parents (pool_dir, 0700) != 0)
    return -1;
  fd = open (path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  while (flock (fd, LOCK_EX) != 0)
    if (errno != EINTR)
      {
        close (fd);
        return -1;
      }
  return fd;
}

static void
pool_unlock (int fd)
{
  if (fd >= 0)
    close (fd);  /* releases the flock */
}

static JsonObject *
read_state (const char *entry)
{
  g_autofree char *path = g_build_filename (entry, POOL_STATE, NULL);
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  JsonNode *root;

  if (!json_parser_load_from_file (parser, path, NULL))
    return NULL;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  return json_object_ref (json_node_get_object (root));
}

/* What the tree leaves out, as pool.json keeps it: a tree parked under
 * other exclusions is synced in full (names once left out may now be
 * wanted, and the other way round; the manifest knows only what the tree
 * held). Whatever else decides what a sync leaves out belongs in here too. */
static char *
exclude_fingerprint (const char * const *exclude_top_level,
                     const char * const *secret_patterns)
{
  g_autofree char *top = exclude_top_level ? g_strjoinv ("\n", (char **) exclude_top_level) : g_strdup ("");
  g_autofree char *secrets = secret_patterns ? g_strjoinv ("\n", (char **) secret_patterns) : g_strdup ("");

  return g_strconcat (top, "\n--\n", secrets, NULL);
}

/* How many entries <dir> holds; 0 if it cannot be read. */
static guint
count_entries (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;

  while (d != NULL && g_dir_read_name (d) != NULL)
    n++;
  return n;
}

gboolean
snapshot_pool_take (const char         *snapshot_dir,
                    const char         *parent,
                    const char         *tree,
                    const char * const *exclude_top_level,
                    const char * const *secret_patterns,
                    SnapshotSyncStats  *stats,
                    GError            **error)
{
  g_autoptr(SubagentExcludeSet) secrets = subagent_exclude_set_new (secret_patterns);
  g_autofree char *pool_dir = g_build_filename (snapshot_dir, POOL_DIR, NULL);
  g_autofree char *id = parent_id (parent);
  g_autofree char *dir = g_build_filename (pool_dir, id, NULL);
  g_autoptr(GDir) d = NULL;
  g_autofree char *taken = NULL;
  g_autoptr(JsonObject) state = NULL;
  SnapshotManifest *manifest = NULL;
  g_autofree char *exclude = NULL;
  const char *name;
  gint64 sync_started, synced_at;
  gboolean ok;
  int lock;

  memset (stats, 0, sizeof *stats);
  lock = pool_lock (pool_dir, id);
  if (lock < 0)
    return FALSE;
  d = g_dir_open (dir, 0, NULL);
  while (d != NULL && taken == NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *entry = g_build_filename (dir, name, NULL);
      g_autofree char *entry_tree = g_build_filename (entry, SNAPSHOT_TREE, NULL);

      g_clear_pointer (&state, json_object_unref);
      state = read_state (entry);
      if (state == NULL || g_strcmp0 (json_object_get_string_member_with_default (state, "parent", ""), parent) != 0 ||
          rename (entry_tree, tree) != 0)
        {
          /* Unreadable or foreign: not worth keeping. */
          g_debug ("Dropping pooled snapshot %s", entry);
          subagent_tree_remove (entry, NULL, NULL);
          continue;
        }
      taken = g_steal_pointer (&entry);
    }
  pool_unlock (lock);
  if (taken == NULL)
    return FALSE;

  /* From here the tree is this child's: prove the parent did not change
   * since the tree was synced at park time, or sync it again. */
  synced_at = json_object_get_int_member_with_default (state, "synced_at", 0);
  exclude = exclude_fingerprint (exclude_top_level, secret_patterns);
  if (synced_at > 0 && g_strcmp0 (json_object_get_string_member_with_default (state, "exclude", NULL), exclude) == 0)
    {
      g_autofree char *path = g_build_filename (taken, POOL_MANIFEST, NULL);
      g_autoptr(GError) local_error = NULL;

      manifest = snapshot_manifest_load (path, &local_error);
      if (manifest == NULL)
        g_debug ("Pooled snapshot %s: %s", taken, local_error->message);
    }
  subagent_tree_remove (taken, NULL, NULL);

  sync_started = snapshot_pool_clock_now ();
  if (manifest != NULL && snapshot_manifest_matches (manifest, parent, synced_at))
    {
      stats->checked = snapshot_manifest_get_n_entries (manifest);
      ok = TRUE;
    }
  else
    {
      /* Something changed: compare what the manifest cannot vouch for
       * (all of it without a manifest). */
      g_debug ("Pooled snapshot for %s: the parent changed since it was parked; syncing", parent);
      ok = snapshot_tree_sync (parent, tree, exclude_top_level, secrets,
                               json_object_get_int_member_with_default (state, "sync_started", 0),
                               json_object_get_int_member_with_default (state, "handed_out", 0),
                               NULL, manifest, stats, error);
      stats->synced = TRUE;
    }
  snapshot_manifest_free (manifest);
  if (!ok)
    return FALSE;
  stats->sync_started = sync_started;
  return TRUE;
}

static char *
state_to_string (const char         *parent,
                 const char * const *exclude_top_level,
                 const char * const *secret_patterns,
                 gint64              synced_at)
{
  g_autoptr(JsonObject) object = json_object_new ();
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *exclude = exclude_fingerprint (exclude_top_level, secret_patterns);

  json_object_set_string_member (object, "parent", parent);
  json_object_set_int_member (object, "synced_at", synced_at);
  json_object_set_string_member (object, "exclude", exclude);
  /* Should the manifest not do, the full sync at take trusts nothing of
   * either side changed since the park-time sync began. */
  json_object_set_int_member (object, "sync_started", synced_at);
  json_object_set_int_member (object, "handed_out", synced_at);
  json_node_set_object (node, object);
  return json_to_string (node, FALSE);
}

gboolean
snapshot_pool_park (const char         *snapshot_dir,
                    const char         *parent,
                    const char         *tree,
                    const char * const *exclude_top_level,
                    const char * const *secret_patterns,
                    guint               pool_size,
                    gint64              sync_started,
                    gint64              handed_out)
{
  g_autofree char *pool_dir = g_build_filename (snapshot_dir, POOL_DIR, NULL);
  g_autofree char *id = parent_id (parent);
  g_autofree char *dir = g_build_filename (pool_dir, id, NULL);
  g_autofree char *entry = NULL, *entry_tree = NULL, *state_path = NULL, *state = NULL, *manifest_path = NULL;
  g_autoptr(GError) error = NULL;
  SnapshotManifest *manifest = NULL;
  g_autoptr(SubagentExcludeSet) secrets = NULL;
  SnapshotSyncStats stats;
  gboolean parked = FALSE;
  gint64 synced_at;
  char *real_tree;
  int holder = 0;
  guint n;
  int lock;

  if (pool_size == 0 || sync_started <= 0 || handed_out <= 0)
    return FALSE;
  lock = pool_lock (pool_dir, id);
  if (lock < 0)
    return FALSE;
  n = count_entries (dir);
  pool_unlock (lock);
  if (n >= pool_size)
    return FALSE;

  /* Nothing of the child may be left to write into a tree the pool will
   * trust (snapshot-holders.c). */
  real_tree = realpath (tree, NULL);
  if (real_tree == NULL || snapshot_tree_has_holders (real_tree, &holder))
    {
      g_message ("Not keeping snapshot %s in the pool: %s%d still holds files in it", tree,
                 real_tree ? "process " : "cannot resolve it; ", holder);
      free (real_tree);
      return FALSE;
    }
  free (real_tree);

  /* The child is gone: bring its tree back to the parent's state now, off
   * the prepare path, recording what the parent looked like. */
  synced_at = snapshot_pool_clock_now ();
  manifest = snapshot_manifest_new ();
  secrets = subagent_exclude_set_new (secret_patterns);
  if (!snapshot_tree_sync (parent, tree, exclude_top_level, secrets, sync_started, handed_out, manifest, NULL,
                           &stats, &error))
    {
      g_debug ("Not parking snapshot %s: %s", tree, error->message);
      snapshot_manifest_free (manifest);
      return FALSE;
    }
  g_debug ("Snapshot %s synced for the pool: %u copied again, %u removed", tree, stats.copied, stats.removed);

  lock = pool_lock (pool_dir, id);
  if (lock >= 0 && g_mkdir_with_parents (dir, 0700) == 0 && count_entries (dir) < pool_size)
    {
      entry = g_build_filename (dir, "XXXXXX", NULL);
      if (g_mkdtemp_full (entry, 0700) != NULL)
        {
          entry_tree = g_build_filename (entry, SNAPSHOT_TREE, NULL);
          state_path = g_build_filename (entry, POOL_STATE, NULL);
          manifest_path = g_build_filename (entry, POOL_MANIFEST, NULL);
          state = state_to_string (parent, exclude_top_level, secret_patterns, synced_at);
          parked = snapshot_manifest_save (manifest, manifest_path, &error) &&
                   g_file_set_contents (state_path, state, -1, &error) && rename (tree, entry_tree) == 0;
          if (!parked)
            subagent_tree_remove (entry, NULL, NULL);
        }
    }
  pool_unlock (lock);
  snapshot_manifest_free (manifest);
  return parked;
}
