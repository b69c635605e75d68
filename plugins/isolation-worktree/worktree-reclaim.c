/* worktree-reclaim.c: reclaiming the worktree a dead run left behind, from
 * its owner record (what `subagentctl prune` and `worktrees prune` call).
 *
 * Only a worktree git lists at the record's path, on a `subagent/` branch,
 * is removed: its directory, its admin dir and (unless keep_branch) its
 * branch. A directory git does not list is never touched. In process with
 * libgit2, like the rest of the plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "worktree-private.h"

#define HEADS_PREFIX "refs/heads/"
#define HEAD_REF_PREFIX "ref: " HEADS_PREFIX

static gboolean
same_path (const char *a,
           const char *b)
{
  char *ra = realpath (a, NULL);
  char *rb = realpath (b, NULL);
  gboolean same = g_strcmp0 (ra ? ra : a, rb ? rb : b) == 0;

  free (ra);
  free (rb);
  return same;
}

/* The branch (without refs/heads/) a worktree's admin dir has checked out;
 * NULL when detached or unreadable. */
static char *
admin_branch (const char *common_dir,
              const char *name)
{
  g_autofree char *head = g_build_filename (common_dir, "worktrees", name, "HEAD", NULL);
  g_autofree char *contents = NULL;

  if (!g_file_get_contents (head, &contents, NULL, NULL))
    return NULL;
  g_strstrip (contents);
  if (!g_str_has_prefix (contents, HEAD_REF_PREFIX))
    return NULL;
  return g_strdup (contents + strlen (HEAD_REF_PREFIX));
}

/* The admin name of the worktree git lists at @path, or NULL. */
static char *
find_listed (git_repository *repo,
             const char     *path)
{
  git_strarray names = { 0 };
  char *found = NULL;

  if (git_worktree_list (&names, repo) < 0)
    return NULL;
  for (size_t i = 0; i < names.count && found == NULL; i++)
    {
      g_autoptr(git_worktree) wt = NULL;

      if (git_worktree_lookup (&wt, repo, names.strings[i]) == 0 && same_path (git_worktree_path (wt), path))
        found = g_strdup (names.strings[i]);
    }
  git_strarray_dispose (&names);
  return found;
}

static const char *
extra_string (JsonObject *record,
              const char *name)
{
  JsonNode *extra = json_object_get_member (record, "extra");

  if (extra == NULL || !JSON_NODE_HOLDS_OBJECT (extra))
    return NULL;
  return json_object_get_string_member_with_default (json_node_get_object (extra), name, NULL);
}

SubagentReclaimOutcome
wt_reclaim (const char            *root,
            JsonObject            *record,
            SubagentReclaimFlags   flags,
            gboolean               keep_branch,
            char                 **reason)
{
  const char *resource = json_object_get_string_member_with_default (record, "resource", NULL);
  const char *recorded_branch = extra_string (record, "branch");
  gboolean dry_run = (flags & SUBAGENT_RECLAIM_FLAGS_DRY_RUN) != 0;
  g_autoptr(git_repository) repo = NULL;
  g_autoptr(WtRepoLock) lock = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *common_dir = NULL, *name = NULL, *branch = NULL, *worktrees_dir = NULL;

  if (resource == NULL || !g_path_is_absolute (resource))
    {
      *reason = g_strdup ("the resource is not an absolute path");
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  if (git_repository_open_ext (&repo, root, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
    {
      const git_error *e = git_error_last ();
      *reason = g_strdup_printf ("cannot open the repository %s: %s", root, e ? e->message : "unknown error");
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  common_dir = wt_common_dir (repo);
  name = find_listed (repo, resource);

  if (name == NULL)
    {
      if (g_file_test (resource, G_FILE_TEST_EXISTS))
        {
          *reason = g_strdup_printf ("%s is not a worktree git knows; remove it by hand", resource);
          return SUBAGENT_RECLAIM_SKIPPED;
        }
      /* Gone already: only the branch it was on may be left. */
      *reason = g_strdup ("already gone");
      if (!dry_run && !keep_branch && recorded_branch != NULL)
        wt_delete_branch (repo, recorded_branch);
      return SUBAGENT_RECLAIM_REMOVED;
    }

  branch = admin_branch (common_dir, name);
  if (branch == NULL || !g_str_has_prefix (branch, WT_BRANCH_PREFIX))
    {
      *reason = g_strdup_printf ("worktree %s is on %s, not a " WT_BRANCH_PREFIX " branch", resource,
                                 branch ? branch : "a detached HEAD");
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  if (dry_run)
    return SUBAGENT_RECLAIM_REMOVED;

  /* The slow part, deleting the files, runs outside the repository lock. */
  if (g_file_test (resource, G_FILE_TEST_EXISTS) && !wt_remove_worktree_dir (resource, &error))
    {
      *reason = g_strdup_printf ("could not remove %s: %s", resource, error->message);
      return SUBAGENT_RECLAIM_FAILED;
    }
  lock = wt_repo_lock_acquire (common_dir, NULL);
  wt_remove_admin_dir (repo, common_dir, name);
  if (!keep_branch)
    wt_delete_branch (repo, branch);
  worktrees_dir = g_build_filename (root, WT_WORKTREES_DIR, NULL);
  if (wt_pool_name_is_valid (name))
    wt_pool_forget (worktrees_dir, name);
  return SUBAGENT_RECLAIM_REMOVED;
}
