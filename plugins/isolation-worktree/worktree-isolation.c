/* worktree-isolation.c: the `worktree` isolation backend.
 *
 * prepare() makes branch `subagent/<key>` at the parent's HEAD and a linked
 * worktree `<root>/.subagent/worktrees/<key>` on it, in process with
 * libgit2, from the worker thread of the interface's default prepare_async.
 * It is thread-safe: each call opens its own git_repository, and steps that
 * change state shared by the repository's worktrees (refs, admin dirs,
 * info/exclude) run under the per-repository lock of worktree-git.c. The
 * checkout itself only writes the new worktree and its own index, so it runs
 * outside the lock and concurrent prepares overlap.
 *
 * Request options: `include_dirty` (bool: carry the parent's uncommitted and
 * untracked files over instead of warning), `keep_branch` (bool: cleanup
 * keeps `subagent/<key>`), `pool_size` (int, 0 = off: cleanup recycles the
 * worktree into a pool of that many per repository, prepare takes from it).
 *
 * Cleanup needs only the context's generic properties. So a context
 * rebuilt from an owner record cleans up like the original:
 *
 *   g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
 *                 "provider", provider, "isolation", "worktree",
 *                 "parent-root", root, "session-key", key,
 *                 "worktree-path", record.resource, "child-root", record.resource,
 *                 "branch", record.extra.branch, NULL);
 *   subagent_isolation_context_cleanup (context);
 *
 * removes the worktree directory, prunes its admin dir, deletes the branch
 * and removes the owner record. Its backend-data (a{sv}) may add
 * `keep-branch` (b) and `pool-size` (u); `admin-name` (s) defaults to the
 * session key. Cleanup only ever removes `<root>/.subagent/worktrees/<key>`
 * and branches named `subagent/...`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "worktree-private.h"

#define MAX_POOL_SIZE 64

struct _SubagentWorktreeIsolation
{
  GObject parent_instance;

  /* From subagent_plugin_configure(): only reclaim reads it; prepare and
   * cleanup read the request's options, which carry the same section. */
  gboolean keep_branch;
};

static void provider_iface_init (SubagentIsolationProviderInterface *iface);
static void configurable_iface_init (SubagentConfigurableInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SubagentWorktreeIsolation, subagent_worktree_isolation, G_TYPE_OBJECT,
                                G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_ISOLATION_PROVIDER, provider_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_CONFIGURABLE, configurable_iface_init))

/* What one workspace is made of; filled from a request or a context. */
typedef struct {
  char *root;          /* real path of the parent root */
  char *key;           /* session key */
  char *admin_name;    /* name of its admin dir in `worktrees/` */
  char *parent_run_id;
  char *worktrees_dir; /* <root>/.subagent/worktrees */
  char *path;          /* <worktrees_dir>/<key> */
  char *branch;        /* subagent/<key> */
  gboolean include_dirty;
  gboolean keep_branch;
  guint pool_size;
} Plan;

static void
plan_free (Plan *plan)
{
  g_free (plan->root);
  g_free (plan->key);
  g_free (plan->admin_name);
  g_free (plan->parent_run_id);
  g_free (plan->worktrees_dir);
  g_free (plan->path);
  g_free (plan->branch);
  g_free (plan);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Plan, plan_free)

static char *
real_dir (const char *path)
{
  char *real = path != NULL ? realpath (path, NULL) : NULL;
  char *copy = NULL;

  if (real != NULL && g_file_test (real, G_FILE_TEST_IS_DIR))
    copy = g_strdup (real);
  free (real);
  return copy;
}

static void
plan_set_paths (Plan *plan)
{
  plan->worktrees_dir = g_build_filename (plan->root, WT_WORKTREES_DIR, NULL);
  plan->path = g_build_filename (plan->worktrees_dir, plan->key, NULL);
}

static Plan *
plan_from_request (SubagentIsolationRequest  *request,
                   GError                   **error)
{
  g_autoptr(Plan) plan = g_new0 (Plan, 1);
  const char *parent_root = subagent_isolation_request_get_parent_root (request);
  const char *key = subagent_isolation_request_get_session_key (request);
  gint64 pool_size;

  if (!subagent_isolation_session_key_is_valid (key) || wt_pool_name_is_valid (key))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Session key “%s” cannot name a worktree: use letters, digits, '-' and '_' "
                   "(and not pool-<number>, which the worktree pool uses)", key ? key : "");
      return NULL;
    }
  pool_size = subagent_isolation_request_get_option_int (request, "pool_size", 0);
  if (pool_size < 0 || pool_size > MAX_POOL_SIZE)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Option pool_size is %" G_GINT64_FORMAT ": it must be between 0 (no pool) and %d",
                   pool_size, MAX_POOL_SIZE);
      return NULL;
    }
  plan->root = real_dir (parent_root);
  if (plan->root == NULL)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                   "Parent root %s is not an existing directory", parent_root ? parent_root : "(null)");
      return NULL;
    }
  plan->key = g_strdup (key);
  plan->admin_name = g_strdup (key);
  plan->parent_run_id = g_strdup (subagent_isolation_request_get_parent_run_id (request));
  plan->branch = g_strconcat (WT_BRANCH_PREFIX, key, NULL);
  plan->include_dirty = subagent_isolation_request_get_option_boolean (request, "include_dirty", FALSE);
  plan->keep_branch = subagent_isolation_request_get_option_boolean (request, "keep_branch", FALSE);
  plan->pool_size = (guint) pool_size;
  plan_set_paths (plan);
  return g_steal_pointer (&plan);
}

/* NULL when the context does not name one of our worktrees. */
static Plan *
plan_from_context (SubagentIsolationContext *context)
{
  g_autoptr(Plan) plan = g_new0 (Plan, 1);
  const char *key = subagent_isolation_context_get_session_key (context);
  const char *path = subagent_isolation_context_get_worktree_path (context);
  const char *branch = subagent_isolation_context_get_branch (context);
  GVariant *data = subagent_isolation_context_get_backend_data (context);
  const char *admin_name = NULL;

  plan->root = real_dir (subagent_isolation_context_get_parent_root (context));
  if (plan->root == NULL || !subagent_isolation_session_key_is_valid (key))
    return NULL;
  plan->key = g_strdup (key);
  plan_set_paths (plan);
  if (path == NULL || !g_str_equal (path, plan->path))
    {
      g_message ("Not removing worktree %s: it is not %s, where session %s would be",
                 path ? path : "(none)", plan->path, key);
      return NULL;
    }
  plan->branch = g_strdup (branch != NULL && *branch != '\0' ? branch : NULL);
  if (plan->branch == NULL)
    plan->branch = g_strconcat (WT_BRANCH_PREFIX, key, NULL);
  if (data != NULL && g_variant_is_of_type (data, G_VARIANT_TYPE_VARDICT))
    {
      g_variant_lookup (data, "admin-name", "&s", &admin_name);
      g_variant_lookup (data, "keep-branch", "b", &plan->keep_branch);
      g_variant_lookup (data, "pool-size", "u", &plan->pool_size);
    }
  plan->admin_name = g_strdup (subagent_isolation_session_key_is_valid (admin_name) ? admin_name : key);
  return g_steal_pointer (&plan);
}

/* Opens the parent repository, refusing what worktrees cannot work with. */
static git_repository *
open_parent (const char  *root,
             GError     **error)
{
  g_autoptr(git_repository) repo = NULL;
  g_autofree char *workdir = NULL;
  int rc;

  rc = git_repository_open_ext (&repo, root, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
  if (rc == GIT_ENOTFOUND)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                   "%s is not a git repository (it has no .git): worktree isolation needs one; "
                   "run `git init` and commit, or use directory-snapshot isolation", root);
      return NULL;
    }
  if (rc < 0)
    {
      wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE, "Could not open the git repository %s", root);
      return NULL;
    }
  if (git_repository_is_bare (repo))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                   "%s is a bare git repository: worktree isolation needs a working tree to branch from; "
                   "use a clone with a working tree", root);
      return NULL;
    }
  workdir = real_dir (git_repository_workdir (repo));
  if (g_strcmp0 (workdir, root) != 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                   "%s is not the top of its git working tree (%s): pass the repository root as parent root",
                   root, workdir ? workdir : "none");
      return NULL;
    }
  return g_steal_pointer (&repo);
}

static git_commit *
head_commit (git_repository  *repo,
             const char      *root,
             GError         **error)
{
  g_autoptr(git_reference) head = NULL;
  git_commit *commit = NULL;
  int rc = git_repository_head (&head, repo);

  if (rc == GIT_EUNBORNBRANCH || rc == GIT_ENOTFOUND)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE,
                   "The git repository %s has no commit yet: a worktree branches from HEAD; "
                   "commit something first", root);
      return NULL;
    }
  if (rc < 0 || git_reference_peel ((git_object **) &commit, head, GIT_OBJECT_COMMIT) < 0)
    {
      wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE, "Could not resolve HEAD of %s", root);
      return NULL;
    }
  return commit;
}

/* What prepare made so far, for the rollback of a failure half-way. */
typedef struct {
  gboolean dir;
  gboolean admin;
  gboolean branch;
  gboolean owner;
} Made;

static void
rollback (Plan           *plan,
          git_repository *repo,
          const char     *common_dir,
          const Made     *made)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(WtRepoLock) lock = NULL;

  if (made->dir && !wt_rm_rf (plan->path, &local_error))
    g_message ("Could not remove the half-made worktree: %s", local_error->message);
  g_clear_error (&local_error);
  if (made->admin || made->branch)
    {
      lock = wt_repo_lock_acquire (common_dir, &local_error);
      if (lock == NULL)
        g_message ("Removing the half-made worktree without the repository lock: %s", local_error->message);
      if (made->admin)
        wt_remove_admin_dir (repo, common_dir, plan->admin_name);
      if (made->branch)
        wt_delete_branch (repo, plan->branch);
    }
  if (made->owner)
    subagent_owner_record_remove (plan->root, plan->key);
}

/* Removes a pooled worktree entirely and forgets it. Never fails. */
static void
discard_pooled (git_repository *repo,
                const char     *common_dir,
                const char     *worktrees_dir,
                const char     *name)
{
  g_autofree char *path = g_build_filename (worktrees_dir, name, NULL);
  g_autofree char *branch = g_strconcat (WT_BRANCH_PREFIX, name, NULL);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(WtRepoLock) lock = NULL;

  if (!wt_rm_rf (path, &local_error))
    g_message ("Could not remove pooled worktree: %s", local_error->message);
  g_clear_error (&local_error);
  lock = wt_repo_lock_acquire (common_dir, &local_error);
  wt_remove_admin_dir (repo, common_dir, name);
  wt_delete_branch (repo, branch);
  g_clear_pointer (&lock, wt_repo_lock_release);
  wt_pool_forget (worktrees_dir, name);
}

static void
discard_stale (git_repository *repo,
               const char     *common_dir,
               const char     *worktrees_dir,
               GPtrArray      *stale)
{
  for (guint i = 0; i < stale->len; i++)
    {
      g_debug ("Removing pooled worktree %s left by a dead process", (const char *) g_ptr_array_index (stale, i));
      discard_pooled (repo, common_dir, worktrees_dir, g_ptr_array_index (stale, i));
    }
}

static gboolean
create_fresh (Plan            *plan,
              git_repository  *repo,
              const char      *common_dir,
              git_commit      *head,
              Made            *made,
              GError         **error)
{
  git_worktree_add_options opts = GIT_WORKTREE_ADD_OPTIONS_INIT;
  g_autofree char *admin = g_build_filename (common_dir, "worktrees", plan->admin_name, NULL);
  g_autoptr(git_reference) ref = NULL;
  g_autoptr(git_worktree) wt = NULL;
  g_autoptr(WtRepoLock) lock = NULL;
  struct stat st;

  lock = wt_repo_lock_acquire (common_dir, error);
  if (lock == NULL)
    return FALSE;
  if (lstat (admin, &st) == 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Worktree metadata %s already exists (left by a crash?); "
                   "run `subagentctl worktrees prune %s` or `git worktree prune`", admin, plan->key);
      return FALSE;
    }
  if (git_branch_create (&ref, repo, plan->branch, head, FALSE) < 0)
    {
      wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                        "Could not create branch %s in %s", plan->branch, plan->root);
      return FALSE;
    }
  made->branch = TRUE;
  made->admin = TRUE;
  made->dir = lstat (plan->path, &st) < 0 && errno == ENOENT;
  /* Only the admin files here, under the lock; the checkout comes after. */
  opts.ref = ref;
  opts.checkout_options.checkout_strategy = GIT_CHECKOUT_NONE;
  if (git_worktree_add (&wt, repo, plan->admin_name, plan->path, &opts) < 0)
    {
      wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                        made->dir ? "Could not create the worktree %s" :
                        "Could not create the worktree %s (something is in the way: a leftover? remove it)",
                        plan->path);
      return FALSE;
    }
  g_clear_pointer (&lock, wt_repo_lock_release);

  return wt_checkout_fresh (plan->path, git_commit_id (head), error);
}

/* Takes a ready worktree from the pool when there is one (*taken). A pooled
 * worktree that cannot be reused is discarded and prepare falls back to a
 * fresh one; only errors a fresh worktree would meet too are returned. */
static gboolean
take_from_pool (Plan            *plan,
                git_repository  *repo,
                const char      *common_dir,
                git_commit      *head,
                Made            *made,
                gboolean        *taken,
                GError         **error)
{
  g_autoptr(GPtrArray) stale = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(WtPoolSlot) slot = NULL;
  g_autoptr(git_repository) wt_repo = NULL;
  g_autoptr(WtRepoLock) lock = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *pool_path = NULL;
  g_autofree char *pool_branch = NULL;

  *taken = FALSE;
  slot = wt_pool_take_ready (plan->worktrees_dir, stale);
  discard_stale (repo, common_dir, plan->worktrees_dir, stale);
  if (slot == NULL)
    return TRUE;
  g_debug ("Taking pooled worktree %s (clean at %.8s) for %s", slot->name, slot->commit, plan->key);
  pool_path = g_build_filename (plan->worktrees_dir, slot->name, NULL);
  pool_branch = g_strconcat (WT_BRANCH_PREFIX, slot->name, NULL);

  lock = wt_repo_lock_acquire (common_dir, error);
  if (lock == NULL)
    return FALSE;
  if (!wt_relocate (common_dir, slot->name, pool_path, plan->admin_name, plan->path, &local_error))
    {
      g_message ("Discarding pooled worktree %s: %s", slot->name, local_error->message);
      g_clear_pointer (&lock, wt_repo_lock_release);
      discard_pooled (repo, common_dir, plan->worktrees_dir, slot->name);
      return TRUE;
    }
  if (git_repository_open (&wt_repo, plan->path) < 0)
    wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                      "Could not open the recycled worktree %s", plan->path);
  else if (wt_point_worktree_at (wt_repo, plan->path, plan->branch, git_commit_id (head), FALSE, error))
    made->branch = TRUE;
  if (!made->branch)
    {
      /* Its HEAD still names the pool branch: worktree first, then branch. */
      wt_rm_rf (plan->path, NULL);
      wt_remove_admin_dir (repo, common_dir, plan->admin_name);
      wt_delete_branch (repo, pool_branch);
      g_clear_pointer (&lock, wt_repo_lock_release);
      wt_pool_forget (plan->worktrees_dir, slot->name);
      return FALSE;
    }
  made->dir = made->admin = TRUE;
  wt_delete_branch (repo, pool_branch);
  g_clear_pointer (&lock, wt_repo_lock_release);
  wt_pool_forget (plan->worktrees_dir, slot->name);

  if (!wt_clean_to_commit (wt_repo, git_commit_id (head), error))
    return FALSE;
  wt_strip_admin_dir (common_dir, plan->admin_name);
  *taken = TRUE;
  return TRUE;
}

static char *
dirty_warning (GPtrArray  *dirty,
               git_commit *head)
{
  g_autoptr(GString) text = g_string_new (NULL);
  char oid[GIT_OID_HEXSZ + 1];

  git_oid_tostr (oid, 9, git_commit_id (head));
  g_string_append_printf (text, "The parent has %u uncommitted or untracked change%s (",
                          dirty->len, dirty->len == 1 ? "" : "s");
  for (guint i = 0; i < dirty->len && i < 3; i++)
    g_string_append_printf (text, "%s%s", i > 0 ? ", " : "", (const char *) g_ptr_array_index (dirty, i));
  g_string_append_printf (text, "%s); the child starts from HEAD %s without them. "
                          "Commit them, or set the option include_dirty to carry them over.",
                          dirty->len > 3 ? ", ..." : "", oid);
  return g_string_free (g_steal_pointer (&text), FALSE);
}

static SubagentIsolationContext *
worktree_prepare (SubagentIsolationProvider  *provider,
                  SubagentIsolationRequest   *request,
                  GCancellable               *cancellable,
                  GError                    **error)
{
  g_autoptr(Plan) plan = NULL;
  g_autoptr(git_repository) repo = NULL;
  g_autoptr(git_commit) head = NULL;
  g_autoptr(GPtrArray) dirty = NULL;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(JsonObject) extra = NULL;
  g_autoptr(WtRepoLock) lock = NULL;
  g_autofree char *common_dir = NULL;
  g_autofree char *state_dir = NULL;
  GVariantBuilder data;
  char oid[GIT_OID_HEXSZ + 1];
  Made made = { FALSE, };
  gboolean recycled = FALSE;
  gint64 started = g_get_monotonic_time (), made_at, checked_at;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  plan = plan_from_request (request, error);
  if (plan == NULL)
    return NULL;
  /* Everything that can refuse the parent runs before anything is made. */
  repo = open_parent (plan->root, error);
  if (repo == NULL)
    return NULL;
  head = head_commit (repo, plan->root, error);
  if (head == NULL)
    return NULL;
  common_dir = wt_common_dir (repo);

  state_dir = g_build_filename (plan->root, WT_STATE_DIR, NULL);
  if (!wt_ensure_dir (state_dir, error) || !wt_ensure_dir (plan->worktrees_dir, error))
    return NULL;
  /* A checkout right after a cleanup would otherwise land among the inodes
   * that cleanup just freed, and pay for each of them (docs/performance.md). */
  subagent_tree_spread_subdirectories (plan->worktrees_dir);
  lock = wt_repo_lock_acquire (common_dir, error);
  if (lock == NULL || !wt_ensure_excluded (common_dir, error))
    return NULL;
  g_clear_pointer (&lock, wt_repo_lock_release);

  checked_at = g_get_monotonic_time ();
  dirty = wt_dirty_paths (repo, plan->include_dirty, error);
  if (dirty == NULL)
    return NULL;
  if (dirty->len > 0 && !plan->include_dirty)
    g_ptr_array_add (warnings, dirty_warning (dirty, head));
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  made_at = g_get_monotonic_time ();
  if (plan->pool_size > 0 && !take_from_pool (plan, repo, common_dir, head, &made, &recycled, error))
    goto failed;
  if (!recycled && !create_fresh (plan, repo, common_dir, head, &made, error))
    goto failed;

  extra = json_object_new ();
  json_object_set_string_member (extra, "branch", plan->branch);
  if (!subagent_owner_record_save (plan->root, plan->key, WT_OWNER_KIND, plan->path,
                                   plan->parent_run_id, extra, error))
    goto failed;
  made.owner = TRUE;

  if (plan->include_dirty && dirty->len > 0 &&
      !wt_carry_dirty (plan->root, plan->path, dirty, error))
    goto failed;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    goto failed;

  git_oid_tostr (oid, sizeof oid, git_commit_id (head));
  g_variant_builder_init (&data, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&data, "{sv}", "admin-name", g_variant_new_string (plan->admin_name));
  g_variant_builder_add (&data, "{sv}", "common-dir", g_variant_new_string (common_dir));
  g_variant_builder_add (&data, "{sv}", "base-commit", g_variant_new_string (oid));
  g_variant_builder_add (&data, "{sv}", "keep-branch", g_variant_new_boolean (plan->keep_branch));
  g_variant_builder_add (&data, "{sv}", "pool-size", g_variant_new_uint32 (plan->pool_size));
  g_variant_builder_add (&data, "{sv}", "recycled", g_variant_new_boolean (recycled));
  g_ptr_array_add (warnings, NULL);
  g_debug ("Prepared worktree %s on %s (%s) in %.1f ms: checks %.1f, parent status %.1f, worktree %.1f",
           plan->path, plan->branch, recycled ? "from the pool" : "fresh",
           (g_get_monotonic_time () - started) / 1000.0, (checked_at - started) / 1000.0,
           (made_at - checked_at) / 1000.0, (g_get_monotonic_time () - made_at) / 1000.0);

  return g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                       "provider", provider,
                       "isolation", WT_BACKEND,
                       "parent-root", plan->root,
                       "child-root", plan->path,
                       "session-key", plan->key,
                       "worktree-path", plan->path,
                       "branch", plan->branch,
                       "cpu-quota", subagent_isolation_request_get_cpu_quota (request),
                       "memory-limit", subagent_isolation_request_get_memory_limit (request),
                       "warnings", (const char * const *) warnings->pdata,
                       "backend-data", g_variant_builder_end (&data),
                       NULL);

failed:
  rollback (plan, repo, common_dir, &made);
  return NULL;
}

/* Moves a finished worktree into the pool (TRUE), or does nothing (FALSE)
 * when the pool is full or the worktree cannot be moved; the caller then
 * removes it. Once moved, every failure discards the pooled copy, so TRUE
 * always means the session's worktree is gone. */
static gboolean
recycle (Plan           *plan,
         git_repository *repo,
         const char     *common_dir)
{
  g_autoptr(GPtrArray) stale = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(git_commit) head = NULL;
  g_autoptr(git_repository) wt_repo = NULL;
  g_autoptr(WtRepoLock) lock = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *name = NULL;
  g_autofree char *pool_path = NULL;
  g_autofree char *pool_branch = NULL;
  g_autofree char *admin = g_build_filename (common_dir, "worktrees", plan->admin_name, NULL);
  char oid[GIT_OID_HEXSZ + 1];

  if (!g_file_test (plan->path, G_FILE_TEST_IS_DIR) || !g_file_test (admin, G_FILE_TEST_IS_DIR))
    return FALSE;
  head = head_commit (repo, plan->root, &local_error);
  if (head == NULL)
    return FALSE;
  name = wt_pool_reserve (plan->worktrees_dir, common_dir, plan->pool_size, stale);
  discard_stale (repo, common_dir, plan->worktrees_dir, stale);
  if (name == NULL)
    return FALSE;
  pool_path = g_build_filename (plan->worktrees_dir, name, NULL);
  pool_branch = g_strconcat (WT_BRANCH_PREFIX, name, NULL);

  lock = wt_repo_lock_acquire (common_dir, &local_error);
  if (lock == NULL ||
      !wt_relocate (common_dir, plan->admin_name, plan->path, name, pool_path, &local_error))
    {
      g_message ("Not recycling worktree %s: %s", plan->path, local_error->message);
      g_clear_pointer (&lock, wt_repo_lock_release);
      wt_pool_forget (plan->worktrees_dir, name);
      return FALSE;
    }
  if (git_repository_open (&wt_repo, pool_path) < 0)
    {
      wt_set_git_error (&local_error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                        "Could not open the worktree %s", pool_path);
      goto discard;
    }
  if (!wt_point_worktree_at (wt_repo, pool_path, pool_branch, git_commit_id (head), TRUE, &local_error))
    goto discard;
  if (!plan->keep_branch)
    wt_delete_branch (repo, plan->branch);
  g_clear_pointer (&lock, wt_repo_lock_release);

  if (!wt_clean_to_commit (wt_repo, git_commit_id (head), &local_error))
    goto discard;
  wt_strip_admin_dir (common_dir, name);
  git_oid_tostr (oid, sizeof oid, git_commit_id (head));
  wt_pool_mark_ready (plan->worktrees_dir, name, oid);
  g_debug ("Recycled worktree %s into %s", plan->path, pool_path);
  return TRUE;

discard:
  g_message ("Could not recycle worktree %s; removing it: %s", plan->path, local_error->message);
  g_clear_pointer (&lock, wt_repo_lock_release);
  /* The worktree may still have the session branch checked out: remove it
   * before the branch. */
  discard_pooled (repo, common_dir, plan->worktrees_dir, name);
  if (!plan->keep_branch)
    {
      lock = wt_repo_lock_acquire (common_dir, NULL);
      wt_delete_branch (repo, plan->branch);
    }
  return TRUE;
}

static void
worktree_cleanup (SubagentIsolationProvider *provider,
                  SubagentIsolationContext  *context)
{
  g_autoptr(Plan) plan = plan_from_context (context);
  g_autoptr(git_repository) repo = NULL;
  g_autoptr(WtRepoLock) lock = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *common_dir = NULL;

  if (plan == NULL)
    return;
  if (git_repository_open_ext (&repo, plan->root, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0)
    common_dir = wt_common_dir (repo);
  else
    g_message ("Removing worktree %s without pruning it or deleting branch %s: %s",
               plan->path, plan->branch, git_error_last () ? git_error_last ()->message : "cannot open the repository");

  if (repo != NULL && plan->pool_size > 0 && recycle (plan, repo, common_dir))
    {
      subagent_owner_record_remove (plan->root, plan->key);
      return;
    }

  /* The slow part, deleting the files, runs outside the repository lock. */
  if (!wt_remove_worktree_dir (plan->path, &local_error))
    g_message ("Could not remove worktree %s: %s", plan->path, local_error->message);
  g_clear_error (&local_error);
  if (repo != NULL)
    {
      lock = wt_repo_lock_acquire (common_dir, &local_error);
      if (lock == NULL)
        g_message ("Pruning worktree %s without the repository lock: %s", plan->path, local_error->message);
      wt_remove_admin_dir (repo, common_dir, plan->admin_name);
      if (!plan->keep_branch)
        wt_delete_branch (repo, plan->branch);
    }
  subagent_owner_record_remove (plan->root, plan->key);
}

static gboolean
worktree_is_available (SubagentIsolationProvider  *provider,
                       GError                    **error)
{
  /* libgit2 is linked in; whether a given root is a repository is known
   * only at prepare time. */
  return TRUE;
}

static SubagentReclaimOutcome
worktree_reclaim (SubagentIsolationProvider  *provider,
                  const char                 *root,
                  JsonObject                 *record,
                  SubagentReclaimFlags        flags,
                  char                      **reason)
{
  return wt_reclaim (root, record, flags, SUBAGENT_WORKTREE_ISOLATION (provider)->keep_branch, reason);
}

static void
provider_iface_init (SubagentIsolationProviderInterface *iface)
{
  iface->is_available = worktree_is_available;
  iface->prepare = worktree_prepare;
  iface->cleanup = worktree_cleanup;
  iface->reclaim = worktree_reclaim;
}

/* The options of isolation-worktree.plugin, from the loaded type. */
static GPtrArray *
worktree_list_options (SubagentConfigurable *configurable)
{
  static const struct { const char *name, *type, *value, *doc; } declared[] = {
    { "pool_size", "integer", "0", "Worktrees kept after a run, reset to HEAD, for the next prepare to reuse (0 to 64)" },
    { "keep_branch", "boolean", "false", "Keep a worktree's subagent/<session> branch when it is removed" },
    { "include_dirty", "boolean", "false", "Carry the parent's uncommitted changes into the worktree" },
  };
  GPtrArray *options = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_plugin_option_unref);

  for (guint i = 0; i < G_N_ELEMENTS (declared); i++)
    g_ptr_array_add (options, subagent_plugin_option_new (declared[i].name, declared[i].type, declared[i].value,
                                                          declared[i].doc, NULL));
  return options;
}

static gboolean
worktree_configure (SubagentConfigurable  *configurable,
                    const char            *root,
                    JsonObject            *options,
                    GError               **error)
{
  JsonNode *node = json_object_get_member (options, "keep_branch");

  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      if (json_node_get_value_type (node) != G_TYPE_BOOLEAN)
        {
          g_set_error_literal (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                               "worktree: option “keep_branch” must be true or false");
          return FALSE;
        }
      SUBAGENT_WORKTREE_ISOLATION (configurable)->keep_branch = json_node_get_boolean (node);
    }
  return TRUE;
}

static void
configurable_iface_init (SubagentConfigurableInterface *iface)
{
  iface->list_options = worktree_list_options;
  iface->configure = worktree_configure;
}

static void
subagent_worktree_isolation_class_init (SubagentWorktreeIsolationClass *klass)
{
}

static void
subagent_worktree_isolation_class_finalize (SubagentWorktreeIsolationClass *klass)
{
}

static void
subagent_worktree_isolation_init (SubagentWorktreeIsolation *self)
{
}

void
subagent_worktree_isolation_register (GTypeModule *module)
{
  subagent_worktree_isolation_register_type (module);
}
