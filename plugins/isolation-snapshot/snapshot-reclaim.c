/* snapshot-reclaim.c: reclaiming the snapshot a dead run left behind, from
 * its owner record (what `subagentctl prune` calls).
 *
 * Only a directory holding a `.subagent-snapshot` marker with the record's
 * session key is removed; an overlay still mounted on its `tree/` is
 * unmounted first, so nothing is ever deleted through a mount.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "snapshot-private.h"

static gboolean
unmount_tree (const char  *base,
              char       **reason)
{
  g_autofree char *tree = g_build_filename (base, SNAPSHOT_TREE, NULL);
  struct stat base_st, tree_st;

  /* Stacked mounts come off one at a time. */
  for (int attempt = 0; attempt < 8; attempt++)
    {
      if (lstat (base, &base_st) != 0 || lstat (tree, &tree_st) != 0 ||
          !S_ISDIR (tree_st.st_mode) || tree_st.st_dev == base_st.st_dev)
        return TRUE;
      if (umount2 (tree, UMOUNT_NOFOLLOW) != 0 &&
          (errno != EBUSY || umount2 (tree, MNT_DETACH | UMOUNT_NOFOLLOW) != 0))
        {
          *reason = g_strdup_printf ("could not unmount the overlay on %s: %s", tree, g_strerror (errno));
          return FALSE;
        }
    }
  *reason = g_strdup_printf ("something stays mounted on %s", tree);
  return FALSE;
}

SubagentReclaimOutcome
snapshot_reclaim (SubagentIsolationProvider  *provider,
                  const char                 *root,
                  JsonObject                 *record,
                  SubagentReclaimFlags        flags,
                  char                      **reason)
{
  const char *key = json_object_get_string_member_with_default (record, "session_key", NULL);
  const char *resource = json_object_get_string_member_with_default (record, "resource", NULL);
  g_autofree char *base = NULL;
  g_autoptr(GError) error = NULL;
  struct stat st;

  if (resource == NULL || !g_path_is_absolute (resource))
    {
      *reason = g_strdup ("the resource is not an absolute path");
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  base = g_canonicalize_filename (resource, NULL);
  if (lstat (base, &st) != 0 && errno == ENOENT)
    {
      *reason = g_strdup ("already gone");
      return SUBAGENT_RECLAIM_REMOVED;
    }
  if (!S_ISDIR (st.st_mode) || !subagent_owner_marker_matches (base, SNAPSHOT_MARKER, key))
    {
      *reason = g_strdup_printf ("%s has no snapshot marker for this session", base);
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  if (flags & SUBAGENT_RECLAIM_FLAGS_DRY_RUN)
    return SUBAGENT_RECLAIM_REMOVED;
  if (!unmount_tree (base, reason))
    return SUBAGENT_RECLAIM_FAILED;
  if (!subagent_tree_remove (base, NULL, &error))
    {
      *reason = g_strdup (error->message);
      return SUBAGENT_RECLAIM_FAILED;
    }
  return SUBAGENT_RECLAIM_REMOVED;
}
