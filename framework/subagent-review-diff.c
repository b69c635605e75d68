/* subagent-review-diff.c: hashes two trees into an in-memory object
 * database and formats their difference (see SubagentReview).
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

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

#include "subagent-error.h"
#include "subagent-review-private.h"

#define COUNT_FILES_CHANGED SUBAGENT_REVIEW_COUNT_FILES_CHANGED
#define COUNT_INSERTIONS SUBAGENT_REVIEW_COUNT_INSERTIONS
#define COUNT_DELETIONS SUBAGENT_REVIEW_COUNT_DELETIONS
#define COUNT_ADDED SUBAGENT_REVIEW_COUNT_ADDED
#define COUNT_MODIFIED SUBAGENT_REVIEW_COUNT_MODIFIED
#define COUNT_DELETED SUBAGENT_REVIEW_COUNT_DELETED
#define COUNT_RENAMED SUBAGENT_REVIEW_COUNT_RENAMED
#define COUNT_MODE_CHANGED SUBAGENT_REVIEW_COUNT_MODE_CHANGED
#define COUNT_BINARY SUBAGENT_REVIEW_COUNT_BINARY

typedef struct {
  git_repository *repo;
  git_repository *ignore_repo;   /* worktree mode: the child's, for .gitignore */
  git_tree *base_tree;           /* worktree mode: tracked paths are never ignored */
  gboolean commit_mode;
  const char *side;              /* the directory being hashed, for messages */
  GCancellable *cancellable;
} Walker;

static gboolean
set_git_error (GError    **error,
               const char *format,
               ...) G_GNUC_PRINTF (2, 3);

static gboolean
set_git_error (GError    **error,
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

static gboolean
hash_file (Walker     *w,
           int         dir_fd,
           const char *name,
           const char *rel,
           git_oid    *out,
           GError    **error)
{
  g_autofree char *data = NULL;
  struct stat st;
  gsize done = 0;
  int fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);

  if (fd < 0)
    return set_errno_error (error, errno, "read", w->side, rel);
  if (fstat (fd, &st) != 0)
    {
      int saved = errno;
      close (fd);
      return set_errno_error (error, saved, "stat", w->side, rel);
    }
  /* read(), not mmap(): a file truncated meanwhile must not SIGBUS us. */
  data = g_malloc (st.st_size > 0 ? st.st_size : 1);
  while (done < (gsize) st.st_size)
    {
      ssize_t n = read (fd, data + done, st.st_size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          close (fd);
          return set_errno_error (error, saved, "read", w->side, rel);
        }
      if (n == 0)
        break;
      done += n;
    }
  close (fd);
  if (git_blob_create_from_buffer (out, w->repo, data, done) < 0)
    return set_git_error (error, "Could not hash %s/%s", w->side, rel);
  return TRUE;
}

static gboolean
path_is_ignored (Walker     *w,
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
base_entry (Walker     *w,
            const char *rel)
{
  git_tree_entry *entry = NULL;

  if (w->base_tree == NULL || git_tree_entry_bypath (&entry, w->base_tree, rel) < 0)
    return NULL;
  return entry;
}

/* Hashes the directory open at dir_fd into a tree; *out_empty when it holds
 * nothing git would keep. */
static gboolean
write_dir_tree (Walker     *w,
                int         dir_fd,
                const char *rel,
                git_oid    *out,
                gboolean   *out_empty,
                GError    **error)
{
  git_treebuilder *builder = NULL;
  struct dirent *de;
  DIR *dir = NULL;
  gboolean ok = FALSE;
  int dup_fd;

  if (git_treebuilder_new (&builder, w->repo, NULL) < 0)
    return set_git_error (error, "Could not start a tree for %s/%s", w->side, rel);

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
      if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode) && !S_ISLNK (st.st_mode))
        continue;

      tracked = base_entry (w, child_rel);
      if (tracked == NULL && path_is_ignored (w, child_rel, S_ISDIR (st.st_mode)))
        continue;

      if (S_ISDIR (st.st_mode))
        {
          gboolean empty = TRUE;
          int sub_fd;

          /* Submodules stay as the base has them. */
          if (tracked != NULL && git_tree_entry_filemode (tracked) == GIT_FILEMODE_COMMIT)
            {
              int r = git_treebuilder_insert (NULL, builder, de->d_name,
                                              git_tree_entry_id (tracked), GIT_FILEMODE_COMMIT);
              git_tree_entry_free (tracked);
              if (r < 0)
                {
                  set_git_error (error, "Could not add %s to a tree", child_rel);
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
          if (w->commit_mode && faccessat (sub_fd, ".git", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
            {
              close (sub_fd);
              continue;
            }
          ok = write_dir_tree (w, sub_fd, child_rel, &oid, &empty, error);
          close (sub_fd);
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
              set_git_error (error, "Could not hash %s/%s", w->side, child_rel);
              goto out;
            }
          mode = GIT_FILEMODE_LINK;
        }
      else
        {
          git_tree_entry_free (tracked);
          if (!hash_file (w, dir_fd, de->d_name, child_rel, &oid, error))
            goto out;
          mode = (st.st_mode & S_IXUSR) ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
        }

      if (git_treebuilder_insert (NULL, builder, de->d_name, &oid, mode) < 0)
        {
          set_git_error (error, "Could not add %s to a tree", child_rel);
          goto out;
        }
    }

  *out_empty = git_treebuilder_entrycount (builder) == 0;
  if (git_treebuilder_write (out, builder) < 0)
    {
      set_git_error (error, "Could not write the tree of %s/%s", w->side, rel);
      goto out;
    }
  ok = TRUE;

out:
  if (dir != NULL)
    closedir (dir);
  git_treebuilder_free (builder);
  return ok;
}

static gboolean
tree_from_dir (Walker     *w,
               const char *path,
               git_tree  **out,
               GError    **error)
{
  gboolean empty;
  git_oid oid;
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  gboolean ok;

  if (fd < 0)
    return set_errno_error (error, errno, "open", path, "");
  w->side = path;
  ok = write_dir_tree (w, fd, "", &oid, &empty, error);
  close (fd);
  if (ok && git_tree_lookup (out, w->repo, &oid) < 0)
    return set_git_error (error, "Could not read back the tree of %s", path);
  return ok;
}

static char *
objects_dir_of (const char *git_dir)
{
  g_autofree char *commondir_file = g_build_filename (git_dir, "commondir", NULL);
  g_autofree char *common = NULL;

  /* A linked worktree's git dir points at the main one's. */
  if (g_file_get_contents (commondir_file, &common, NULL, NULL))
    {
      g_strstrip (common);
      if (!g_path_is_absolute (common))
        {
          char *joined = g_build_filename (git_dir, common, NULL);
          g_free (common);
          common = joined;
        }
      return g_build_filename (common, "objects", NULL);
    }
  return g_build_filename (git_dir, "objects", NULL);
}

/* Adds the objects under dir as read-only alternates: libgit2's backends
 * "freshen" (touch) an existing object instead of writing it, so writing
 * and freshening are cut off; the parent's .git is never modified. */
static gboolean
add_readonly_objects (git_odb    *odb,
                      const char *dir,
                      guint       depth,
                      GError    **error)
{
  g_autofree char *alternates_file = g_build_filename (dir, "info", "alternates", NULL);
  g_autofree char *alternates = NULL;
  git_odb_backend *loose = NULL;
  git_odb_backend *pack = NULL;

  if (git_odb_backend_pack (&pack, dir) < 0)
    return set_git_error (error, "Could not read the packs of %s", dir);
  pack->freshen = NULL;
  pack->writepack = NULL;
  if (git_odb_add_alternate (odb, pack, 2 - (int) depth) < 0)
    {
      pack->free (pack);
      return set_git_error (error, "Could not read the packs of %s", dir);
    }
  if (git_odb_backend_loose (&loose, dir, -1, 0, 0, 0) < 0)
    return set_git_error (error, "Could not read the objects of %s", dir);
  loose->freshen = NULL;
  loose->write = NULL;
  loose->writestream = NULL;
  if (git_odb_add_alternate (odb, loose, 1 - (int) depth) < 0)
    {
      loose->free (loose);
      return set_git_error (error, "Could not read the objects of %s", dir);
    }

  /* The parent's own alternates (clones with --shared or --reference). */
  if (depth < 4 && g_file_get_contents (alternates_file, &alternates, NULL, NULL))
    {
      g_auto(GStrv) lines = g_strsplit (alternates, "\n", -1);

      for (guint i = 0; lines[i] != NULL; i++)
        {
          g_autofree char *path = NULL;
          char *line = g_strstrip (lines[i]);

          if (*line == '\0' || *line == '#')
            continue;
          path = g_path_is_absolute (line) ? g_strdup (line) : g_build_filename (dir, line, NULL);
          if (g_file_test (path, G_FILE_TEST_IS_DIR) && !add_readonly_objects (odb, path, depth + 1, error))
            return FALSE;
        }
    }
  return TRUE;
}

static gboolean
new_memory_repo (const char      *alternate_objects,
                 git_repository **out,
                 GError         **error)
{
  git_repository *repo = NULL;
  git_odb *odb = NULL;
  git_odb_backend *mempack = NULL;
  git_config *config = NULL;
  gboolean ok = FALSE;

  if (git_repository_new (&repo) < 0 || git_odb_new (&odb) < 0 ||
      git_mempack_new (&mempack) < 0)
    {
      set_git_error (error, "Could not create an in-memory object database");
      goto out;
    }
  /* The only writable backend: everything hashed stays in memory. */
  if (git_odb_add_backend (odb, mempack, 1000) < 0)
    {
      set_git_error (error, "Could not create an in-memory object database");
      mempack->free (mempack);
      goto out;
    }
  if (alternate_objects != NULL && !add_readonly_objects (odb, alternate_objects, 0, error))
    goto out;
  if (git_repository_set_odb (repo, odb) < 0 || git_config_new (&config) < 0 ||
      git_repository_set_config (repo, config) < 0)
    {
      set_git_error (error, "Could not set up an in-memory repository");
      goto out;
    }
  *out = g_steal_pointer (&repo);
  ok = TRUE;

out:
  git_config_free (config);
  git_odb_free (odb);
  git_repository_free (repo);
  return ok;
}

static gboolean
oid_text_is_hex (const char *text)
{
  gsize len = strlen (text);

  if (len < 4 || len > GIT_OID_HEXSZ)
    return FALSE;
  for (const char *p = text; *p; p++)
    if (!g_ascii_isxdigit (*p))
      return FALSE;
  return TRUE;
}

/* The tree of base_commit without .subagent, like the child side. */
static gboolean
base_tree_from_commit (git_repository  *repo,
                       git_repository  *refs_repo,
                       const char      *base_commit,
                       git_tree       **out,
                       GError         **error)
{
  git_object *object = NULL;
  git_object *tree_object = NULL;
  git_treebuilder *builder = NULL;
  git_oid oid;
  gboolean ok = FALSE;

  if (oid_text_is_hex (base_commit))
    {
      if (git_oid_fromstrn (&oid, base_commit, strlen (base_commit)) < 0 ||
          git_object_lookup_prefix (&object, repo, &oid, strlen (base_commit), GIT_OBJECT_ANY) < 0)
        {
          set_git_error (error, "Base commit %s is not in the parent's repository", base_commit);
          goto out;
        }
    }
  else
    {
      git_object *resolved = NULL;

      if (refs_repo == NULL || git_revparse_single (&resolved, refs_repo, base_commit) < 0)
        {
          set_git_error (error, "Could not resolve base commit “%s”; pass a commit id", base_commit);
          goto out;
        }
      git_oid_cpy (&oid, git_object_id (resolved));
      git_object_free (resolved);
      if (git_object_lookup (&object, repo, &oid, GIT_OBJECT_ANY) < 0)
        {
          set_git_error (error, "Could not read base commit %s", base_commit);
          goto out;
        }
    }
  if (git_object_peel (&tree_object, object, GIT_OBJECT_TREE) < 0)
    {
      set_git_error (error, "Base %s is not a commit or tree", base_commit);
      goto out;
    }
  if (git_treebuilder_new (&builder, repo, (git_tree *) tree_object) < 0)
    {
      set_git_error (error, "Could not read the tree of %s", base_commit);
      goto out;
    }
  if (git_treebuilder_get (builder, ".subagent") != NULL)
    git_treebuilder_remove (builder, ".subagent");
  if (git_treebuilder_write (&oid, builder) < 0 || git_tree_lookup (out, repo, &oid) < 0)
    {
      set_git_error (error, "Could not write the base tree of %s", base_commit);
      goto out;
    }
  ok = TRUE;

out:
  git_treebuilder_free (builder);
  git_object_free (tree_object);
  git_object_free (object);
  return ok;
}

static const char *
quote_exceptions (void)
{
  static char exceptions[129];

  /* Keeps UTF-8 as is; idempotent, so racing first calls are harmless. */
  if (exceptions[0] == '\0')
    for (int i = 0; i < 128; i++)
      exceptions[i] = (char) (0x80 + i);
  return exceptions;
}

static void
append_path (GString    *s,
             const char *path)
{
  gboolean needs_quotes = strstr (path, " -> ") != NULL;

  for (const guchar *p = (const guchar *) path; *p && !needs_quotes; p++)
    if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
      needs_quotes = TRUE;
  if (!needs_quotes)
    {
      g_string_append (s, path);
      return;
    }
  {
    g_autofree char *escaped = g_strescape (path, quote_exceptions ());
    g_string_append_printf (s, "\"%s\"", escaped);
  }
}

static gboolean
diff_trees (git_repository *repo,
            git_tree       *base,
            git_tree       *child,
            GString        *patch_text,
            GString        *status_text,
            guint          *counts,
            GCancellable   *cancellable,
            GError        **error)
{
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
  git_diff *diff = NULL;
  gboolean ok = FALSE;
  size_t n;

  opts.flags = GIT_DIFF_SHOW_BINARY;
  /* git apply needs full ids to check binary pre-images. */
  opts.id_abbrev = GIT_OID_HEXSZ;
  find.flags = GIT_DIFF_FIND_RENAMES;

  if (git_diff_tree_to_tree (&diff, repo, base, child, &opts) < 0 ||
      git_diff_find_similar (diff, &find) < 0)
    {
      set_git_error (error, "Could not compare the trees");
      goto out;
    }

  n = git_diff_num_deltas (diff);
  for (size_t i = 0; i < n; i++)
    {
      git_patch *patch = NULL;
      git_buf buf = { 0 };
      const git_diff_delta *delta;
      size_t adds = 0, dels = 0;
      const char *kind;
      int kind_index;
      gboolean mode_differs;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        goto out;
      if (git_patch_from_diff (&patch, diff, i) < 0 || patch == NULL ||
          git_patch_to_buf (&buf, patch) < 0 ||
          git_patch_line_stats (NULL, &adds, &dels, patch) < 0)
        {
          set_git_error (error, "Could not format the change of %s",
                         git_diff_get_delta (diff, i)->new_file.path);
          git_buf_dispose (&buf);
          git_patch_free (patch);
          goto out;
        }
      g_string_append_len (patch_text, buf.ptr, buf.size);
      git_buf_dispose (&buf);

      delta = git_patch_get_delta (patch);
      mode_differs = delta->old_file.mode != delta->new_file.mode;
      switch (delta->status)
        {
        case GIT_DELTA_ADDED:
          kind = "added", kind_index = COUNT_ADDED;
          break;
        case GIT_DELTA_DELETED:
          kind = "deleted", kind_index = COUNT_DELETED;
          break;
        case GIT_DELTA_RENAMED:
          kind = "renamed", kind_index = COUNT_RENAMED;
          break;
        default:
          if (mode_differs && git_oid_equal (&delta->old_file.id, &delta->new_file.id))
            kind = "mode-changed", kind_index = COUNT_MODE_CHANGED;
          else
            kind = "modified", kind_index = COUNT_MODIFIED;
          break;
        }
      counts[kind_index]++;
      counts[COUNT_FILES_CHANGED]++;
      counts[COUNT_INSERTIONS] += adds;
      counts[COUNT_DELETIONS] += dels;

      g_string_append_printf (status_text, "%s\t", kind);
      if (delta->status == GIT_DELTA_RENAMED)
        {
          append_path (status_text, delta->old_file.path);
          g_string_append (status_text, " -> ");
        }
      append_path (status_text, delta->status == GIT_DELTA_DELETED
                                ? delta->old_file.path : delta->new_file.path);
      {
        GString *notes = g_string_new (NULL);

        if (delta->flags & GIT_DIFF_FLAG_BINARY)
          {
            counts[COUNT_BINARY]++;
            g_string_append (notes, " binary");
          }
        if (mode_differs && delta->status != GIT_DELTA_ADDED && delta->status != GIT_DELTA_DELETED)
          g_string_append_printf (notes, " mode %06o->%06o", delta->old_file.mode, delta->new_file.mode);
        if (delta->status == GIT_DELTA_RENAMED)
          g_string_append_printf (notes, " similarity %u%%", delta->similarity);
        if (notes->len > 0)
          g_string_append_printf (status_text, "\t%s", notes->str + 1);
        g_string_free (notes, TRUE);
      }
      g_string_append_c (status_text, '\n');
      git_patch_free (patch);
    }

  g_string_append_printf (status_text,
                          "total: %u files changed, %u insertions(+), %u deletions(-); "
                          "%u added, %u modified, %u deleted, %u renamed, %u mode-changed, %u binary\n",
                          counts[COUNT_FILES_CHANGED], counts[COUNT_INSERTIONS], counts[COUNT_DELETIONS],
                          counts[COUNT_ADDED], counts[COUNT_MODIFIED], counts[COUNT_DELETED],
                          counts[COUNT_RENAMED], counts[COUNT_MODE_CHANGED], counts[COUNT_BINARY]);
  ok = TRUE;

out:
  git_diff_free (diff);
  return ok;
}
gboolean
_subagent_review_diff (const char   *base_dir,
                       const char   *base_commit,
                       const char   *base_git_dir,
                       const char   *child_root,
                       GString      *patch_text,
                       GString      *status_text,
                       guint        *counts,
                       GCancellable *cancellable,
                       GError      **error)
{
  g_autofree char *objects = NULL;
  git_repository *repo = NULL;
  git_repository *child_repo = NULL;
  git_repository *refs_repo = NULL;
  git_tree *base_tree = NULL;
  git_tree *child_tree = NULL;
  Walker walker = { 0 };
  gboolean ok = FALSE;

  git_libgit2_init ();

  if (base_commit != NULL)
    {
      /* Opening reads the repository; nothing here writes to it. */
      if (git_repository_open_ext (&child_repo, child_root, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
        child_repo = NULL;
      if (base_git_dir != NULL)
        {
          objects = objects_dir_of (base_git_dir);
          if (git_repository_open_ext (&refs_repo, base_git_dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
            refs_repo = NULL;
        }
      else if (child_repo != NULL)
        objects = g_build_filename (git_repository_commondir (child_repo), "objects", NULL);
      else
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                       "Cannot find the repository of base commit %s: %s is not a git worktree; "
                       "pass the parent's git directory", base_commit, child_root);
          goto out;
        }
      if (!g_file_test (objects, G_FILE_TEST_IS_DIR))
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                       "Cannot read base commit %s: %s is not an object directory", base_commit, objects);
          goto out;
        }
    }

  if (!new_memory_repo (objects, &repo, error))
    goto out;

  walker.repo = repo;
  walker.cancellable = cancellable;
  if (base_commit != NULL)
    {
      if (!base_tree_from_commit (repo, refs_repo ? refs_repo : child_repo, base_commit, &base_tree, error))
        goto out;
      walker.commit_mode = TRUE;
      walker.ignore_repo = child_repo;
      walker.base_tree = base_tree;
    }
  else if (!tree_from_dir (&walker, base_dir, &base_tree, error))
    goto out;

  ok = tree_from_dir (&walker, child_root, &child_tree, error) &&
       diff_trees (repo, base_tree, child_tree, patch_text, status_text, counts, cancellable, error);

out:
  git_tree_free (child_tree);
  git_tree_free (base_tree);
  git_repository_free (repo);
  git_repository_free (refs_repo);
  git_repository_free (child_repo);
  git_libgit2_shutdown ();
  return ok;
}
