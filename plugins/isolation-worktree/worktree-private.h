/* worktree-private.h: internals of the isolation-worktree plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>
#include <git2.h>

G_BEGIN_DECLS

#define SUBAGENT_TYPE_WORKTREE_ISOLATION (subagent_worktree_isolation_get_type ())
G_DECLARE_FINAL_TYPE (SubagentWorktreeIsolation, subagent_worktree_isolation, SUBAGENT, WORKTREE_ISOLATION, GObject)

void subagent_worktree_isolation_register (GTypeModule *module);

/* Names the plugin uses under the parent root. */
#define WT_STATE_DIR ".subagent"
#define WT_WORKTREES_DIR ".subagent/worktrees"
#define WT_BRANCH_PREFIX "subagent/"
#define WT_POOL_PREFIX "pool-"
/* The backend this plugin provides, and the owner-record kind it reclaims
 * (isolation-worktree.plugin says the same). */
#define WT_BACKEND "worktree"
#define WT_OWNER_KIND "worktree"

G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_repository, git_repository_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_reference, git_reference_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_commit, git_commit_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_tree, git_tree_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_index, git_index_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_worktree, git_worktree_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (git_status_list, git_status_list_free)

/* worktree-git.c: libgit2 and file-system helpers. */
void       wt_set_git_error       (GError    **error,
                                   int         code,
                                   const char *format,
                                   ...) G_GNUC_PRINTF (3, 4);

typedef struct _WtRepoLock WtRepoLock;
WtRepoLock *wt_repo_lock_acquire  (const char *common_dir,
                                   GError    **error);
void        wt_repo_lock_release  (WtRepoLock *lock);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WtRepoLock, wt_repo_lock_release)

char      *wt_common_dir          (git_repository *repo);
gboolean   wt_rm_rf               (const char  *path,
                                   GError     **error);
int        wt_rm_rf_at            (int          dirfd,
                                   const char  *name);
gboolean   wt_ensure_dir          (const char  *path,
                                   GError     **error);
gboolean   wt_ensure_excluded     (const char  *common_dir,
                                   GError     **error);
GPtrArray *wt_dirty_paths         (git_repository *repo,
                                   gboolean        recurse,
                                   GError        **error);
gboolean   wt_carry_dirty         (const char  *parent_root,
                                   const char  *worktree_path,
                                   GPtrArray   *paths,
                                   GError     **error);
gboolean   wt_checkout_filters_are_noop (git_repository *repo,
                                         const git_oid  *commit_id);
gboolean   wt_clean_to_commit     (git_repository *worktree_repo,
                                   const git_oid  *commit_id,
                                   GError        **error);
gboolean   wt_relocate            (const char  *common_dir,
                                   const char  *old_name,
                                   const char  *old_path,
                                   const char  *new_name,
                                   const char  *new_path,
                                   GError     **error);
void       wt_strip_admin_dir     (const char  *common_dir,
                                   const char  *name);
gboolean   wt_point_worktree_at   (git_repository *worktree_repo,
                                   const char     *worktree_path,
                                   const char     *branch,
                                   const git_oid  *commit_id,
                                   gboolean        force,
                                   GError        **error);
void       wt_delete_branch       (git_repository *repo,
                                   const char     *branch);
void       wt_remove_admin_dir    (git_repository *repo,
                                   const char     *common_dir,
                                   const char     *name);
gboolean   wt_process_is_alive    (gint64  pid,
                                   guint64 start_time);

/* worktree-parallel.c: checkout and removal on two threads. */
gboolean   wt_split_tree          (git_tree   *tree,
                                   GPtrArray **first,
                                   GPtrArray **second);
gboolean   wt_checkout_fresh      (const char     *worktree_path,
                                   const git_oid  *commit_id,
                                   GError        **error);
gboolean   wt_remove_worktree_dir (const char  *worktree_path,
                                   GError     **error);

/* worktree-pool.c: the recycling pool's on-disk state. */
typedef struct {
  char *name;      /* pool-<n> */
  char *commit;    /* the commit it was reset to (ready entries) */
} WtPoolSlot;

void        wt_pool_slot_free     (WtPoolSlot *slot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WtPoolSlot, wt_pool_slot_free)

WtPoolSlot *wt_pool_take_ready    (const char *worktrees_dir,
                                   GPtrArray  *stale);
char       *wt_pool_reserve       (const char *worktrees_dir,
                                   const char *common_dir,
                                   guint       pool_size,
                                   GPtrArray  *stale);
void        wt_pool_mark_ready    (const char *worktrees_dir,
                                   const char *name,
                                   const char *commit);
void        wt_pool_forget        (const char *worktrees_dir,
                                   const char *name);
gboolean    wt_pool_name_is_valid (const char *name);

/* worktree-reclaim.c: a dead run's worktree, from its owner record. */
SubagentReclaimOutcome wt_reclaim (const char            *root,
                                   JsonObject            *record,
                                   SubagentReclaimFlags   flags,
                                   gboolean               keep_branch,
                                   char                 **reason);

G_END_DECLS
