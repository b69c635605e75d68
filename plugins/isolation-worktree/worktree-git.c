/* worktree-git.c: libgit2 and file-system helpers of the worktree plugin.
 *
 * Everything here is called from the worker thread that prepares a workspace
 * or from cleanup(); nothing touches a main context. Functions that change
 * state shared by every worktree of a repository (refs, `.git/worktrees/`,
 * `info/exclude`) must run under wt_repo_lock_acquire().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worktree-private.h"

void
wt_set_git_error (GError    **error,
                  int         code,
                  const char *format,
                  ...)
{
  const git_error *git_err = git_error_last ();
  g_autofree char *message = NULL;
  va_list ap;

  va_start (ap, format);
  message = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error (error, SUBAGENT_ISOLATION_ERROR, code, "%s: %s", message,
               git_err != NULL && git_err->message != NULL ? git_err->message : "unknown libgit2 error");
}

/* Per-repository lock. The in-process half is a registry of mutexes keyed
 * by the real path of the common git dir (entries live as long as the
 * process: there is one per repository ever used, and a mutex cannot be
 * freed while another thread may be about to take it). The cross-process
 * half is an flock on a file in the common dir, taken on a fresh descriptor
 * so it also excludes other threads of this process that bypass the mutex. */
static GMutex repo_locks_mutex;
static GHashTable *repo_locks; /* char* common dir → GMutex* */

struct _WtRepoLock {
  GMutex *mutex;
  int fd;
};

WtRepoLock *
wt_repo_lock_acquire (const char *common_dir,
                      GError    **error)
{
  g_autofree char *lock_path = g_build_filename (common_dir, "subagent-worktree.lock", NULL);
  WtRepoLock *lock;
  GMutex *mutex;
  int fd;

  g_mutex_lock (&repo_locks_mutex);
  if (repo_locks == NULL)
    repo_locks = g_hash_table_new (g_str_hash, g_str_equal);
  mutex = g_hash_table_lookup (repo_locks, common_dir);
  if (mutex == NULL)
    {
      mutex = g_new0 (GMutex, 1);
      g_mutex_init (mutex);
      g_hash_table_insert (repo_locks, g_strdup (common_dir), mutex);
    }
  g_mutex_unlock (&repo_locks_mutex);

  g_mutex_lock (mutex);
  fd = open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    {
      int saved = errno;
      g_mutex_unlock (mutex);
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not open the repository lock %s: %s; check that the git directory is writable",
                   lock_path, g_strerror (saved));
      return NULL;
    }
  while (flock (fd, LOCK_EX) < 0)
    {
      if (errno == EINTR)
        continue;
      int saved = errno;
      close (fd);
      g_mutex_unlock (mutex);
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not lock %s: %s", lock_path, g_strerror (saved));
      return NULL;
    }
  lock = g_new0 (WtRepoLock, 1);
  lock->mutex = mutex;
  lock->fd = fd;
  return lock;
}

void
wt_repo_lock_release (WtRepoLock *lock)
{
  if (lock == NULL)
    return;
  close (lock->fd); /* drops the flock */
  g_mutex_unlock (lock->mutex);
  g_free (lock);
}

/* The real path of the repository's common git dir, without a trailing slash. */
char *
wt_common_dir (git_repository *repo)
{
  const char *common = git_repository_commondir (repo);
  char *real = realpath (common, NULL);
  char *copy;

  if (real == NULL)
    {
      copy = g_strdup (common);
      if (g_str_has_suffix (copy, "/") && strlen (copy) > 1)
        copy[strlen (copy) - 1] = '\0';
      return copy;
    }
  copy = g_strdup (real);
  free (real);
  return copy;
}

/* Removes @name under @dirfd without following symlinks. Returns 0 or the
 * first errno met; keeps going after errors so as much as possible goes. */
static int
rm_rf_at (int         dirfd,
          const char *name,
          gboolean    is_dir_hint)
{
  int first_error = 0;
  DIR *dir;
  struct dirent *entry;
  int fd;

  if (!is_dir_hint)
    {
      if (unlinkat (dirfd, name, 0) == 0 || errno == ENOENT)
        return 0;
      if (errno != EISDIR && errno != EPERM)
        return errno;
    }

  fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return 0;
      if (errno == ENOTDIR || errno == ELOOP)
        return unlinkat (dirfd, name, 0) == 0 || errno == ENOENT ? 0 : errno;
      if (errno == EACCES && fchmodat (dirfd, name, 0700, 0) == 0)
        fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return errno;
    }
  dir = fdopendir (fd);
  if (dir == NULL)
    {
      int saved = errno;
      close (fd);
      return saved;
    }
  while ((entry = readdir (dir)) != NULL)
    {
      int err;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      err = rm_rf_at (fd, entry->d_name, entry->d_type == DT_DIR);
      if (err == EACCES && fchmod (fd, 0700) == 0)
        err = rm_rf_at (fd, entry->d_name, entry->d_type == DT_DIR);
      if (err != 0 && first_error == 0)
        first_error = err;
    }
  closedir (dir);
  if (unlinkat (dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && first_error == 0)
    first_error = errno;
  return first_error;
}

/* Removes @name under @dirfd, never following a symlink; 0 or an errno. */
int
wt_rm_rf_at (int         dirfd,
             const char *name)
{
  return rm_rf_at (dirfd, name, FALSE);
}

gboolean
wt_rm_rf (const char *path,
          GError    **error)
{
  g_autofree char *parent = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  int dirfd, err;

  dirfd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    {
      if (errno == ENOENT)
        return TRUE;
      err = errno;
    }
  else
    {
      err = rm_rf_at (dirfd, base, FALSE);
      close (dirfd);
    }
  if (err != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (err),
                   "Could not remove %s: %s", path, g_strerror (err));
      return FALSE;
    }
  return TRUE;
}

/* Creates @path as a real directory; refuses a symlink in its place so the
 * plugin never writes outside the parent root. */
gboolean
wt_ensure_dir (const char *path,
               GError    **error)
{
  struct stat st;

  if (mkdir (path, 0755) < 0 && errno != EEXIST)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not create %s: %s", path, g_strerror (saved));
      return FALSE;
    }
  if (lstat (path, &st) < 0 || !S_ISDIR (st.st_mode))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "%s is not a directory (a symlink or file is in the way); remove it and retry", path);
      return FALSE;
    }
  return TRUE;
}

/* What `.subagent/.gitignore` says: runtime state stays out of git, the
 * user's definitions, teams and configuration can be committed. The file
 * ignores itself, so a run leaves `git status` as it was (`git add -f` it
 * to share it). Written when missing; an existing file is the user's. */
#define STATE_GITIGNORE \
  "# Written by libsubagent: runtime state (approvals, sessions, worktrees,\n" \
  "# reviews, audit and event logs, owner records) stays out of git;\n" \
  "# agents/, teams/ and config.yaml can be committed.\n" \
  "/*\n" \
  "!/agents/\n" \
  "!/teams/\n" \
  "!/config.yaml\n"

/* Makes `<state_dir>/.gitignore` so the parent's `git status` never shows
 * our state, without touching `.git/info/exclude` (users must be able to
 * commit their definitions). Atomic: git may read it meanwhile. */
gboolean
wt_ensure_state_ignored (const char *state_dir,
                         GError    **error)
{
  g_autofree char *path = g_build_filename (state_dir, ".gitignore", NULL);
  g_autoptr(GError) local_error = NULL;
  struct stat st;

  if (lstat (path, &st) == 0)
    return TRUE;
  if (!g_file_set_contents_full (path, STATE_GITIGNORE, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, &local_error))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not write %s: %s", path, local_error->message);
      return FALSE;
    }
  return TRUE;
}

/* What a tree holds at a path, for the clean walk. */
enum { KIND_FILE = 1, KIND_EXEC, KIND_LINK, KIND_DIR, KIND_GITLINK };

typedef struct {
  GHashTable *kinds; /* relative path → kind */
  mode_t umask;
} CleanWalk;

static int
collect_tree_path (const char           *root,
                   const git_tree_entry *entry,
                   void                 *payload)
{
  GHashTable *kinds = payload;
  int kind;

  switch (git_tree_entry_filemode (entry))
    {
    case GIT_FILEMODE_TREE: kind = KIND_DIR; break;
    case GIT_FILEMODE_LINK: kind = KIND_LINK; break;
    case GIT_FILEMODE_COMMIT: kind = KIND_GITLINK; break;
    case GIT_FILEMODE_BLOB_EXECUTABLE: kind = KIND_EXEC; break;
    default: kind = KIND_FILE; break;
    }
  g_hash_table_insert (kinds, g_strconcat (root, git_tree_entry_name (entry), NULL), GINT_TO_POINTER (kind));
  return 0;
}

/* The process umask, read without changing it (umask(2) would race with
 * other threads creating files). */
static mode_t
current_umask (void)
{
  g_autofree char *status = NULL;
  const char *line;

  if (g_file_get_contents ("/proc/self/status", &status, NULL, NULL) &&
      (line = strstr (status, "\nUmask:")) != NULL)
    return (mode_t) g_ascii_strtoull (line + strlen ("\nUmask:"), NULL, 8) & 0777;
  return 022;
}

/* Removes from the directory @dirfd (at @prefix) everything the tree does
 * not have at that path or has with another kind: untracked and ignored
 * files, new (nested) directories, nested repositories, type changes; and
 * files whose permissions a checkout would not give (checkout rewrites
 * them), so a recycled worktree matches a fresh one bit for bit. */
static int
prune_untracked (int         dirfd,
                 GString    *prefix,
                 CleanWalk  *walk,
                 gboolean    empty_it)
{
  int first_error = 0;
  DIR *dir = fdopendir (dirfd);
  struct dirent *entry;
  gsize len = prefix->len;

  if (dir == NULL)
    {
      int saved = errno;
      close (dirfd);
      return saved;
    }
  while ((entry = readdir (dir)) != NULL)
    {
      struct stat st;
      int want, err = 0;
      gboolean keep = FALSE;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      if (len == 0 && g_str_equal (entry->d_name, ".git"))
        continue; /* the worktree's link to its admin dir */
      g_string_append (prefix, entry->d_name);
      want = empty_it ? 0 : GPOINTER_TO_INT (g_hash_table_lookup (walk->kinds, prefix->str));
      if (want != 0 && fstatat (dirfd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        {
          mode_t perm = st.st_mode & 07777;

          switch (want)
            {
            case KIND_FILE:
              keep = S_ISREG (st.st_mode) && perm == (0644 & ~walk->umask);
              break;
            case KIND_EXEC:
              keep = S_ISREG (st.st_mode) && perm == (0755 & ~walk->umask);
              break;
            case KIND_LINK:
              keep = S_ISLNK (st.st_mode);
              break;
            case KIND_DIR:
            case KIND_GITLINK:
              if ((keep = S_ISDIR (st.st_mode)))
                {
                  int fd = openat (dirfd, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                  if (perm != (0755 & ~walk->umask))
                    fchmodat (dirfd, entry->d_name, 0755 & ~walk->umask, 0);
                  if (want == KIND_DIR)
                    g_string_append_c (prefix, '/');
                  /* A fresh checkout leaves a submodule's directory empty. */
                  err = fd < 0 ? errno : prune_untracked (fd, prefix, walk, want == KIND_GITLINK);
                }
              break;
            default:
              break;
            }
        }
      if (!keep)
        err = rm_rf_at (dirfd, entry->d_name, entry->d_type == DT_DIR);
      if (err != 0 && first_error == 0)
        first_error = err;
      g_string_truncate (prefix, len);
    }
  closedir (dir);
  return first_error;
}

static int
find_attributes_file (const char           *root,
                      const git_tree_entry *entry,
                      void                 *payload)
{
  if (!g_str_equal (git_tree_entry_name (entry), ".gitattributes"))
    return 0;
  *(gboolean *) payload = TRUE;
  return -1; /* stops the walk */
}

static gboolean
nonempty_file (const char *path)
{
  struct stat st;

  return path != NULL && stat (path, &st) == 0 && st.st_size > 0;
}

/* Whether checking out @commit_id through libgit2's filters (CRLF, ident,
 * filter drivers) would write exactly the blobs. Only attributes and
 * core.autocrlf turn filters on; when none applies, checkout can skip the
 * per-file attribute lookups, which cost two realpath() calls per file. */
gboolean
wt_checkout_filters_are_noop (git_repository *repo,
                              const git_oid  *commit_id)
{
  g_autoptr(git_commit) commit = NULL;
  g_autoptr(git_tree) tree = NULL;
  g_autofree char *common_dir = wt_common_dir (repo);
  g_autofree char *info_attributes = g_build_filename (common_dir, "info", "attributes", NULL);
  g_autofree char *global_attributes = g_build_filename (g_get_user_config_dir (), "git", "attributes", NULL);
  git_buf system_dirs = GIT_BUF_INIT;
  git_config *config = NULL;
  git_config_entry *entry = NULL;
  gboolean found = FALSE;

  if (nonempty_file (info_attributes) || nonempty_file (global_attributes) ||
      nonempty_file ("/etc/gitattributes"))
    return FALSE;
  if (git_libgit2_opts (GIT_OPT_GET_SEARCH_PATH, GIT_CONFIG_LEVEL_SYSTEM, &system_dirs) == 0 &&
      system_dirs.ptr != NULL)
    {
      g_auto(GStrv) dirs = g_strsplit (system_dirs.ptr, G_SEARCHPATH_SEPARATOR_S, -1);
      for (guint i = 0; dirs[i] != NULL && !found; i++)
        {
          g_autofree char *path = g_build_filename (dirs[i], "gitattributes", NULL);
          found = *dirs[i] != '\0' && nonempty_file (path);
        }
    }
  git_buf_dispose (&system_dirs);
  if (found)
    return FALSE;

  if (git_repository_config_snapshot (&config, repo) < 0)
    return FALSE;
  if (git_config_get_entry (&entry, config, "core.attributesfile") == 0)
    found = TRUE;
  git_config_entry_free (entry);
  entry = NULL;
  if (!found && git_config_get_entry (&entry, config, "core.autocrlf") == 0 &&
      g_ascii_strcasecmp (entry->value, "false") != 0 && g_ascii_strcasecmp (entry->value, "input") != 0 &&
      g_ascii_strcasecmp (entry->value, "no") != 0 && g_ascii_strcasecmp (entry->value, "off") != 0 &&
      !g_str_equal (entry->value, "0"))
    found = TRUE;
  git_config_entry_free (entry);
  git_config_free (config);
  if (found)
    return FALSE;

  if (git_commit_lookup (&commit, repo, commit_id) < 0 || git_commit_tree (&tree, commit) < 0)
    return FALSE;
  if (git_tree_walk (tree, GIT_TREEWALK_PRE, find_attributes_file, &found) < 0 && !found)
    return FALSE;
  return !found;
}

/* Makes the worktree of @worktree_repo exactly @commit's tree, as a fresh
 * checkout would: index read from the tree, everything the tree lacks
 * removed (untracked, ignored, new directories), tracked files restored.
 * Touches only the worktree's own files and index, so it runs outside the
 * repository lock. */
gboolean
wt_clean_to_commit (git_repository *worktree_repo,
                    const git_oid  *commit_id,
                    GError        **error)
{
  git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
  g_autoptr(git_commit) commit = NULL;
  g_autoptr(git_tree) tree = NULL;
  g_autoptr(git_index) index = NULL;
  g_autoptr(GHashTable) kinds = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GString) prefix = g_string_new ("");
  CleanWalk walk = { kinds, current_umask () };
  const char *workdir = git_repository_workdir (worktree_repo);
  int fd, err;

  if (git_commit_lookup (&commit, worktree_repo, commit_id) < 0 ||
      git_commit_tree (&tree, commit) < 0 ||
      git_repository_index (&index, worktree_repo) < 0 ||
      git_index_read (index, TRUE) < 0 ||
      git_index_read_tree (index, tree) < 0 ||
      git_index_write (index) < 0)
    {
      wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                        "Could not reset the index of the worktree %s", workdir);
      return FALSE;
    }
  if (git_tree_walk (tree, GIT_TREEWALK_PRE, collect_tree_path, kinds) < 0)
    {
      wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                        "Could not read the tree of %s", workdir);
      return FALSE;
    }
  fd = open (workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  err = fd < 0 ? errno : prune_untracked (fd, prefix, &walk, FALSE);
  if (err != 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not remove untracked files from the worktree %s: %s", workdir, g_strerror (err));
      return FALSE;
    }
  co.checkout_strategy = GIT_CHECKOUT_FORCE;
  co.disable_filters = wt_checkout_filters_are_noop (worktree_repo, commit_id);
  if (git_checkout_tree (worktree_repo, (git_object *) tree, &co) < 0)
    {
      wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                        "Could not restore the tracked files of the worktree %s", workdir);
      return FALSE;
    }
  return TRUE;
}

static gboolean
write_link_file (const char  *path,
                 const char  *contents,
                 GError     **error)
{
  g_autoptr(GError) local_error = NULL;

  if (!g_file_set_contents_full (path, contents, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, &local_error))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not write %s: %s", path, local_error->message);
      return FALSE;
    }
  return TRUE;
}

/* Moves a linked worktree and renames its admin dir (like `git worktree
 * move`, plus the rename git lacks), rewriting both links. On failure it
 * moves things back. Call under the repository lock. */
gboolean
wt_relocate (const char  *common_dir,
             const char  *old_name,
             const char  *old_path,
             const char  *new_name,
             const char  *new_path,
             GError     **error)
{
  g_autofree char *old_admin = g_build_filename (common_dir, "worktrees", old_name, NULL);
  g_autofree char *new_admin = g_build_filename (common_dir, "worktrees", new_name, NULL);
  g_autofree char *dot_git = g_build_filename (new_path, ".git", NULL);
  g_autofree char *gitdir_file = g_build_filename (new_admin, "gitdir", NULL);
  g_autofree char *dot_git_text = g_strdup_printf ("gitdir: %s\n", new_admin);
  g_autofree char *gitdir_text = g_strdup_printf ("%s\n", dot_git);
  struct stat st;

  if (lstat (new_path, &st) == 0 || lstat (new_admin, &st) == 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Cannot move worktree %s to %s: the target or its metadata %s already exists",
                   old_path, new_path, new_admin);
      return FALSE;
    }
  if (rename (old_path, new_path) < 0)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not move worktree %s to %s: %s", old_path, new_path, g_strerror (saved));
      return FALSE;
    }
  if (rename (old_admin, new_admin) < 0)
    {
      int saved = errno;
      if (rename (new_path, old_path) < 0)
        g_warning ("Could not move %s back to %s: %s", new_path, old_path, g_strerror (errno));
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not rename worktree metadata %s to %s: %s", old_admin, new_admin, g_strerror (saved));
      return FALSE;
    }
  if (!write_link_file (dot_git, dot_git_text, error) ||
      !write_link_file (gitdir_file, gitdir_text, error))
    {
      g_autofree char *old_dot_git = g_build_filename (old_path, ".git", NULL);
      g_autofree char *old_gitdir_file = g_build_filename (old_admin, "gitdir", NULL);
      g_autofree char *old_dot_git_text = g_strdup_printf ("gitdir: %s\n", old_admin);
      g_autofree char *old_gitdir_text = g_strdup_printf ("%s\n", old_dot_git);

      if (rename (new_admin, old_admin) == 0 && rename (new_path, old_path) == 0)
        {
          write_link_file (old_dot_git, old_dot_git_text, NULL);
          write_link_file (old_gitdir_file, old_gitdir_text, NULL);
        }
      return FALSE;
    }
  return TRUE;
}

/* Leaves in a worktree's admin dir only what a fresh one has, so a recycled
 * worktree carries no reflog, ORIG_HEAD, lock, per-worktree config or refs
 * of its previous child. */
void
wt_strip_admin_dir (const char *common_dir,
                    const char *name)
{
  static const char * const keep[] = { "HEAD", "commondir", "gitdir", "index", NULL };
  g_autofree char *admin = g_build_filename (common_dir, "worktrees", name, NULL);
  g_autoptr(GDir) dir = g_dir_open (admin, 0, NULL);
  g_autoptr(GPtrArray) doomed = g_ptr_array_new_with_free_func (g_free);
  const char *entry;

  if (dir == NULL)
    return;
  while ((entry = g_dir_read_name (dir)) != NULL)
    if (!g_strv_contains (keep, entry))
      g_ptr_array_add (doomed, g_build_filename (admin, entry, NULL));
  for (guint i = 0; i < doomed->len; i++)
    {
      g_autoptr(GError) local_error = NULL;
      if (!wt_rm_rf (g_ptr_array_index (doomed, i), &local_error))
        g_message ("Could not remove %s: %s", (const char *) g_ptr_array_index (doomed, i), local_error->message);
    }
}

/* Creates (or with @force, moves) @branch at @commit_id and makes it the
 * HEAD of the worktree @worktree_repo. Call under the repository lock. */
gboolean
wt_point_worktree_at (git_repository *worktree_repo,
                      const char     *worktree_path,
                      const char     *branch,
                      const git_oid  *commit_id,
                      gboolean        force,
                      GError        **error)
{
  g_autoptr(git_reference) ref = NULL;
  g_autoptr(git_commit) commit = NULL;

  if (git_commit_lookup (&commit, worktree_repo, commit_id) < 0 ||
      git_branch_create (&ref, worktree_repo, branch, commit, force) < 0)
    {
      wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                        "Could not create branch %s", branch);
      return FALSE;
    }
  if (git_repository_set_head (worktree_repo, git_reference_name (ref)) < 0)
    {
      wt_set_git_error (error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                        "Could not check out branch %s in %s", branch, worktree_path);
      return FALSE;
    }
  return TRUE;
}

/* Removes the `branch.<name>.*` entries of the repository's own config (a
 * child may have set an upstream). By exact names: git_branch_delete()'s
 * regex-based section rename leaks pcre2 match data in libgit2 1.5. */
static void
delete_branch_config (git_repository *repo,
                      const char     *branch)
{
  g_autofree char *prefix = g_strdup_printf ("branch.%s.", branch);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  git_config *config = NULL, *local = NULL;
  git_config_iterator *it = NULL;
  git_config_entry *entry;

  if (git_repository_config (&config, repo) < 0 ||
      git_config_open_level (&local, config, GIT_CONFIG_LEVEL_LOCAL) < 0 ||
      git_config_iterator_new (&it, local) < 0)
    goto out;
  while (git_config_next (&entry, it) == 0)
    if (g_str_has_prefix (entry->name, prefix))
      g_ptr_array_add (names, g_strdup (entry->name));
  for (guint i = 0; i < names->len; i++)
    git_config_delete_entry (local, names->pdata[i]);
out:
  git_config_iterator_free (it);
  git_config_free (local);
  git_config_free (config);
}

/* Deletes one of our branches; logs, never fails. Refuses, like git, a
 * branch some worktree still has checked out. */
void
wt_delete_branch (git_repository *repo,
                  const char     *branch)
{
  g_autoptr(git_reference) ref = NULL;
  int rc;

  if (branch == NULL || !g_str_has_prefix (branch, WT_BRANCH_PREFIX))
    return;
  rc = git_branch_lookup (&ref, repo, branch, GIT_BRANCH_LOCAL);
  if (rc == GIT_ENOTFOUND)
    return;
  if (rc == 0 && (git_branch_is_head (ref) != 0 || git_branch_is_checked_out (ref) != 0))
    {
      g_message ("Not deleting branch %s: a worktree has it checked out", branch);
      return;
    }
  if (rc < 0 || git_reference_delete (ref) < 0)
    {
      const git_error *e = git_error_last ();
      g_message ("Could not delete branch %s: %s", branch, e != NULL ? e->message : "unknown error");
      return;
    }
  delete_branch_config (repo, branch);
}

/* Prunes the admin dir `worktrees/<name>` of a worktree whose directory is
 * gone; removes it by hand when it is too broken for libgit2 to open (a
 * failed git_worktree_add leaves such a half-made one). Never fails. */
void
wt_remove_admin_dir (git_repository *repo,
                     const char     *common_dir,
                     const char     *name)
{
  g_autofree char *admin = g_build_filename (common_dir, "worktrees", name, NULL);
  g_autoptr(git_worktree) wt = NULL;
  git_worktree_prune_options opts = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
  g_autoptr(GError) local_error = NULL;

  if (!g_file_test (admin, G_FILE_TEST_EXISTS))
    return;
  opts.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED;
  if (repo != NULL && git_worktree_lookup (&wt, repo, name) == 0 && git_worktree_prune (wt, &opts) == 0)
    return;
  if (!wt_rm_rf (admin, &local_error))
    g_message ("Could not remove worktree metadata %s: %s", admin, local_error->message);
}

/* Whether the process that marked a pool entry busy may still run; a
 * reused pid shows another start time. */
gboolean
wt_process_is_alive (gint64  pid,
                     guint64 start_time)
{
  guint64 now = 0;

  if (pid <= 0)
    return FALSE;
  if (kill ((pid_t) pid, 0) < 0 && errno == ESRCH)
    return FALSE;
  if (start_time == 0 || !subagent_owner_get_process_start_time ((GPid) pid, &now, NULL))
    return TRUE;
  return now == start_time;
}
