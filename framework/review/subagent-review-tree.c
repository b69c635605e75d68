/* subagent-review-tree.c: hashes a directory into a git tree for a review.
 *
 * Hashing is the cost of a review (SHA-1 with collision detection runs at
 * some 150 MB/s here), so files are hashed only when they may have
 * changed:
 *  - directory base: the child is walked first, beside the base; a file
 *    with the same size and executable bit on both sides is compared byte
 *    for byte, and when equal both trees get one placeholder blob for it
 *    (unchanged entries never reach the patch, and rename detection only
 *    looks at added and deleted files). Should the base change between
 *    the two walks so that a placeholder shows up in the difference, the
 *    capture starts over without this shortcut;
 *  - commit base: the child's own index serves as git's stat cache: a file
 *    whose size, times and inode match its entry, and is not racily clean,
 *    takes the entry's id, as `git status` would.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subagent-error.h"
#include "subagent-review-private.h"

/* NUL bytes: no text file of a tree has this content. */
static const char placeholder_content[] = "\0subagent review: unchanged on both sides\0";

gboolean
_subagent_review_git_error (GError    **error,
                            const char *format,
                            ...)
{
  const git_error *e = git_error_last ();
  g_autofree char *what = NULL;
  va_list ap;

  va_start (ap, format);
  what = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED, "%s: %s",
               what, e && e->message ? e->message : "libgit2 failed");
  return FALSE;
}

static gboolean
set_errno_error (GError    **error,
                 int         saved_errno,
                 const char *what,
                 const char *side,
                 const char *rel)
{
  g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED, "Could not %s %s/%s: %s",
               what, side, rel, g_strerror (saved_errno));
  return FALSE;
}

void
_subagent_review_walker_use_index (SubagentReviewWalker *w,
                                   git_index            *index)
{
  struct stat st;

  if (git_index_path (index) == NULL || stat (git_index_path (index), &st) != 0 ||
      git_repository_odb (&w->odb, w->repo) < 0)
    return;
  w->index = index;
  w->index_mtime = st.st_mtim;
}

gboolean
_subagent_review_walker_set_twin (SubagentReviewWalker  *w,
                                  const char            *twin_dir,
                                  GError               **error)
{
  if (w->twin_fd >= 0)
    close (w->twin_fd);
  w->twin_fd = -1;
  if (twin_dir == NULL)
    return TRUE;

  w->twin_fd = open (twin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (w->twin_fd < 0)
    return set_errno_error (error, errno, "open", twin_dir, "");
  if (w->unchanged == NULL)
    w->unchanged = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (git_blob_create_from_buffer (&w->placeholder, w->repo, placeholder_content, sizeof placeholder_content) < 0)
    return _subagent_review_git_error (error, "Could not start comparing %s", twin_dir);
  return TRUE;
}

void
_subagent_review_walker_clear (SubagentReviewWalker *w)
{
  if (w->twin_fd >= 0)
    close (w->twin_fd);
  w->twin_fd = -1;
  g_clear_pointer (&w->unchanged, g_hash_table_unref);
  g_clear_pointer (&w->odb, git_odb_free);
  g_clear_pointer (&w->over_limit, g_hash_table_unref);
  g_clear_pointer (&w->skipped, g_ptr_array_unref);
}

static const char *
kind_of_special (mode_t mode)
{
  if (S_ISFIFO (mode))
    return "fifo";
  if (S_ISSOCK (mode))
    return "socket";
  if (S_ISCHR (mode))
    return "char-device";
  if (S_ISBLK (mode))
    return "block-device";
  return "special";
}

/* The child's side only: what it left that a tree cannot hold is listed
 * in the .status, not silently dropped. */
static void
record_skipped (SubagentReviewWalker *w,
                const char           *kind,
                const char           *rel)
{
  if (!w->record_skipped)
    return;
  if (w->skipped == NULL)
    w->skipped = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (w->skipped, g_strdup_printf ("%s\t%s", kind, rel));
}

static gboolean
read_fully (int    fd,
            char  *buf,
            gsize  len,
            gsize *out_len)
{
  gsize done = 0;

  while (done < len)
    {
      ssize_t n = read (fd, buf + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return FALSE;
      if (n == 0)
        break;
      done += n;
    }
  *out_len = done;
  return TRUE;
}

/* Whether name in dir_fd and in twin_fd are regular files with the same
 * bytes and executable bit. Any doubt (errors included) says no: the file
 * is then hashed. */
static gboolean
same_as_twin (int         dir_fd,
              int         twin_fd,
              const char *name,
              guint64     limit)
{
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  struct stat sa, sb;
  gboolean same = FALSE;
  int fa, fb;

  if (twin_fd < 0)
    return FALSE;
  fa = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  fb = openat (twin_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  /* Files over the limit are compared by their digests instead, which
   * skip holes; reading both sides here would not. */
  if (fa < 0 || fb < 0 || fstat (fa, &sa) != 0 || fstat (fb, &sb) != 0 ||
      !S_ISREG (sa.st_mode) || !S_ISREG (sb.st_mode) || sa.st_size != sb.st_size ||
      (guint64) sa.st_size > limit ||
      (sa.st_mode & S_IXUSR) != (sb.st_mode & S_IXUSR))
    goto out;

  a = g_malloc (64 * 1024);
  b = g_malloc (64 * 1024);
  for (;;)
    {
      gsize la, lb;

      if (!read_fully (fa, a, 64 * 1024, &la) || !read_fully (fb, b, 64 * 1024, &lb) ||
          la != lb || memcmp (a, b, la) != 0)
        goto out;
      if (la == 0)
        break;
    }
  same = TRUE;

out:
  if (fa >= 0)
    close (fa);
  if (fb >= 0)
    close (fb);
  return same;
}

/* git's stat check (see the section comment), on the entry of rel. */
static gboolean
index_says_unchanged (SubagentReviewWalker *w,
                      const char           *rel,
                      const struct stat    *st,
                      git_oid              *out)
{
  const git_index_entry *e;
  gboolean exec;

  if (w->index == NULL || (e = git_index_get_bypath (w->index, rel, 0)) == NULL)
    return FALSE;
  if ((e->mode & 0170000) != 0100000 ||
      (e->flags_extended & (GIT_INDEX_ENTRY_INTENT_TO_ADD | GIT_INDEX_ENTRY_SKIP_WORKTREE)) != 0)
    return FALSE;
  exec = (e->mode & 0100) != 0;
  if (exec != ((st->st_mode & S_IXUSR) != 0) ||
      e->file_size != (guint32) st->st_size ||
      e->ino != (guint32) st->st_ino ||
      e->mtime.seconds != (gint32) st->st_mtim.tv_sec ||
      e->mtime.nanoseconds != (guint32) st->st_mtim.tv_nsec ||
      e->ctime.seconds != (gint32) st->st_ctim.tv_sec ||
      e->ctime.nanoseconds != (guint32) st->st_ctim.tv_nsec)
    return FALSE;
  /* Racily clean: written in the same instant the index was. */
  if (st->st_mtim.tv_sec > w->index_mtime.tv_sec ||
      (st->st_mtim.tv_sec == w->index_mtime.tv_sec && st->st_mtim.tv_nsec >= w->index_mtime.tv_nsec))
    return FALSE;
  /* Never name an object the tree could not be written with. */
  if (w->odb == NULL || !git_odb_exists (w->odb, &e->id))
    return FALSE;
  git_oid_cpy (out, &e->id);
  return TRUE;
}

static gboolean
path_is_ignored (SubagentReviewWalker *w,
                 const char *rel,
                 gboolean    is_dir)
{
  g_autofree char *query = NULL;
  int ignored = 0;

  if (w->ignore_repo == NULL)
    return FALSE;
  query = is_dir ? g_strconcat (rel, "/", NULL) : g_strdup (rel);
  if (git_ignore_path_is_ignored (&ignored, w->ignore_repo, query) < 0)
    return FALSE;
  return ignored != 0;
}

static git_tree_entry *
base_entry (SubagentReviewWalker *w,
            const char *rel)
{
  git_tree_entry *entry = NULL;

  if (w->base_tree == NULL || git_tree_entry_bypath (&entry, w->base_tree, rel) < 0)
    return NULL;
  return entry;
}

/* Hashes the directory open at dir_fd into a tree; *out_empty when it holds
 * nothing git would keep. twin_fd is the same directory on the base side
 * while the child of a directory base is walked, else -1. */
static gboolean
write_dir_tree (SubagentReviewWalker *w,
                int                   dir_fd,
                int                   twin_fd,
                const char           *rel,
                git_oid              *out,
                gboolean             *out_empty,
                GError              **error)
{
  git_treebuilder *builder = NULL;
  struct dirent *de;
  DIR *dir = NULL;
  gboolean ok = FALSE;
  int dup_fd;

  if (git_treebuilder_new (&builder, w->repo, NULL) < 0)
    return _subagent_review_git_error (error, "Could not start a tree for %s/%s", w->side, rel);

  dup_fd = fcntl (dir_fd, F_DUPFD_CLOEXEC, 3);
  if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
    {
      set_errno_error (error, errno, "read directory", w->side, rel);
      if (dup_fd >= 0)
        close (dup_fd);
      goto out;
    }

  while ((de = readdir (dir)) != NULL)
    {
      g_autofree char *child_rel = NULL;
      git_tree_entry *tracked = NULL;
      struct stat st;
      git_oid oid;
      git_filemode_t mode;

      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, "..") ||
          g_str_equal (de->d_name, ".git"))
        continue;
      if (*rel == '\0' && g_str_equal (de->d_name, ".subagent"))
        continue;
      if (g_cancellable_set_error_if_cancelled (w->cancellable, error))
        goto out;

      child_rel = *rel ? g_strconcat (rel, "/", de->d_name, NULL) : g_strdup (de->d_name);
      if (fstatat (dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        {
          if (errno == ENOENT)
            continue;
          set_errno_error (error, errno, "stat", w->side, child_rel);
          goto out;
        }
      if (!w->commit_mode && subagent_exclude_set_match_name (w->exclude, de->d_name, S_ISDIR (st.st_mode)))
        continue;
      tracked = base_entry (w, child_rel);
      if (tracked == NULL && path_is_ignored (w, child_rel, S_ISDIR (st.st_mode)))
        continue;
      if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode) && !S_ISLNK (st.st_mode))
        {
          git_tree_entry_free (tracked);
          record_skipped (w, kind_of_special (st.st_mode), child_rel);
          continue;
        }

      if (S_ISDIR (st.st_mode))
        {
          gboolean empty = TRUE;
          int sub_fd, sub_twin = -1;

          /* Submodules stay as the base has them. */
          if (tracked != NULL && git_tree_entry_filemode (tracked) == GIT_FILEMODE_COMMIT)
            {
              int r = git_treebuilder_insert (NULL, builder, de->d_name,
                                              git_tree_entry_id (tracked), GIT_FILEMODE_COMMIT);
              git_tree_entry_free (tracked);
              if (r < 0)
                {
                  _subagent_review_git_error (error, "Could not add %s to a tree", child_rel);
                  goto out;
                }
              continue;
            }
          git_tree_entry_free (tracked);
          sub_fd = openat (dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub_fd < 0)
            {
              set_errno_error (error, errno, "open directory", w->side, child_rel);
              goto out;
            }
          /* An untracked nested repository is not part of the change. */
          if (w->commit_mode && !w->keep_nested_repos && faccessat (sub_fd, ".git", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
            {
              close (sub_fd);
              continue;
            }
          /* O_NOFOLLOW at every level: a twin path never leaves the base. */
          if (twin_fd >= 0)
            sub_twin = openat (twin_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          ok = write_dir_tree (w, sub_fd, sub_twin, child_rel, &oid, &empty, error);
          close (sub_fd);
          if (sub_twin >= 0)
            close (sub_twin);
          if (!ok)
            goto out;
          ok = FALSE;
          if (empty)
            continue;
          mode = GIT_FILEMODE_TREE;
        }
      else if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_malloc (st.st_size + 2);
          ssize_t len = readlinkat (dir_fd, de->d_name, target, st.st_size + 1);

          git_tree_entry_free (tracked);
          if (len < 0)
            {
              set_errno_error (error, errno, "read link", w->side, child_rel);
              goto out;
            }
          if (git_blob_create_from_buffer (&oid, w->repo, target, (size_t) len) < 0)
            {
              _subagent_review_git_error (error, "Could not hash %s/%s", w->side, child_rel);
              goto out;
            }
          mode = GIT_FILEMODE_LINK;
        }
      else
        {
          git_tree_entry_free (tracked);
          if (w->unchanged != NULL && w->twin_fd < 0 && g_hash_table_contains (w->unchanged, child_rel))
            git_oid_cpy (&oid, &w->placeholder);
          else if (w->twin_fd >= 0 && same_as_twin (dir_fd, twin_fd, de->d_name, w->max_file_size))
            {
              git_oid_cpy (&oid, &w->placeholder);
              g_hash_table_add (w->unchanged, g_strdup (child_rel));
            }
          else if (!index_says_unchanged (w, child_rel, &st, &oid))
            {
              switch (_subagent_review_hash_file (w, dir_fd, de->d_name, child_rel, &oid, error))
                {
                case SUBAGENT_REVIEW_HASH_FAILED:
                  goto out;
                case SUBAGENT_REVIEW_HASH_SKIPPED:
                  /* Replaced by something else since the stat. */
                  record_skipped (w, "changed-while-read", child_rel);
                  continue;
                default:
                  break;
                }
            }
          mode = (st.st_mode & S_IXUSR) ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
        }

      if (git_treebuilder_insert (NULL, builder, de->d_name, &oid, mode) < 0)
        {
          _subagent_review_git_error (error, "Could not add %s to a tree", de->d_name);
          goto out;
        }
    }

  *out_empty = git_treebuilder_entrycount (builder) == 0;
  if (git_treebuilder_write (out, builder) < 0)
    {
      _subagent_review_git_error (error, "Could not write the tree of %s/%s", w->side, rel);
      goto out;
    }
  ok = TRUE;

out:
  if (dir != NULL)
    closedir (dir);
  git_treebuilder_free (builder);
  return ok;
}

gboolean
_subagent_review_tree_from_dir (SubagentReviewWalker  *w,
                                const char            *path,
                                git_tree             **out,
                                GError               **error)
{
  gboolean empty;
  git_oid oid;
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  gboolean ok;

  if (fd < 0)
    return set_errno_error (error, errno, "open", path, "");
  w->side = path;
  ok = write_dir_tree (w, fd, w->twin_fd, "", &oid, &empty, error);
  close (fd);
  if (ok && git_tree_lookup (out, w->repo, &oid) < 0)
    return _subagent_review_git_error (error, "Could not read back the tree of %s", path);
  return ok;
}
