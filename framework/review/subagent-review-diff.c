/* subagent-review-diff.c: the in-memory object database of a review
 * capture, the base tree of a commit, and the patch and status text of
 * the difference (see SubagentReview).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

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
    return _subagent_review_git_error (error, "Could not read the packs of %s", dir);
  pack->freshen = NULL;
  pack->writepack = NULL;
  if (git_odb_add_alternate (odb, pack, 2 - (int) depth) < 0)
    {
      pack->free (pack);
      return _subagent_review_git_error (error, "Could not read the packs of %s", dir);
    }
  if (git_odb_backend_loose (&loose, dir, -1, 0, 0, 0) < 0)
    return _subagent_review_git_error (error, "Could not read the objects of %s", dir);
  loose->freshen = NULL;
  loose->write = NULL;
  loose->writestream = NULL;
  if (git_odb_add_alternate (odb, loose, 1 - (int) depth) < 0)
    {
      loose->free (loose);
      return _subagent_review_git_error (error, "Could not read the objects of %s", dir);
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
      _subagent_review_git_error (error, "Could not create an in-memory object database");
      goto out;
    }
  /* The only writable backend: everything hashed stays in memory. */
  if (git_odb_add_backend (odb, mempack, 1000) < 0)
    {
      _subagent_review_git_error (error, "Could not create an in-memory object database");
      mempack->free (mempack);
      goto out;
    }
  if (alternate_objects != NULL && !add_readonly_objects (odb, alternate_objects, 0, error))
    goto out;
  if (git_repository_set_odb (repo, odb) < 0 || git_config_new (&config) < 0 ||
      git_repository_set_config (repo, config) < 0)
    {
      _subagent_review_git_error (error, "Could not set up an in-memory repository");
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
          _subagent_review_git_error (error, "Base commit %s is not in the parent's repository", base_commit);
          goto out;
        }
    }
  else
    {
      git_object *resolved = NULL;

      if (refs_repo == NULL || git_revparse_single (&resolved, refs_repo, base_commit) < 0)
        {
          _subagent_review_git_error (error, "Could not resolve base commit “%s”; pass a commit id", base_commit);
          goto out;
        }
      git_oid_cpy (&oid, git_object_id (resolved));
      git_object_free (resolved);
      if (git_object_lookup (&object, repo, &oid, GIT_OBJECT_ANY) < 0)
        {
          _subagent_review_git_error (error, "Could not read base commit %s", base_commit);
          goto out;
        }
    }
  if (git_object_peel (&tree_object, object, GIT_OBJECT_TREE) < 0)
    {
      _subagent_review_git_error (error, "Base %s is not a commit or tree", base_commit);
      goto out;
    }
  if (git_treebuilder_new (&builder, repo, (git_tree *) tree_object) < 0)
    {
      _subagent_review_git_error (error, "Could not read the tree of %s", base_commit);
      goto out;
    }
  if (git_treebuilder_get (builder, ".subagent") != NULL)
    git_treebuilder_remove (builder, ".subagent");
  if (git_treebuilder_write (&oid, builder) < 0 || git_tree_lookup (out, repo, &oid) < 0)
    {
      _subagent_review_git_error (error, "Could not write the base tree of %s", base_commit);
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

/* Whether a delta shows the placeholder of unchanged files: the base
 * changed between the two walks. */
static gboolean
diff_shows (git_diff      *diff,
            const git_oid *placeholder)
{
  for (size_t i = 0; i < git_diff_num_deltas (diff); i++)
    {
      const git_diff_delta *delta = git_diff_get_delta (diff, i);

      if (git_oid_equal (&delta->old_file.id, placeholder) || git_oid_equal (&delta->new_file.id, placeholder))
        return TRUE;
    }
  return FALSE;
}

static gboolean
diff_trees (git_repository *repo,
            git_tree       *base,
            git_tree       *child,
            const git_oid  *placeholder,
            gboolean       *out_retry,
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
      _subagent_review_git_error (error, "Could not compare the trees");
      goto out;
    }
  if (placeholder != NULL && diff_shows (diff, placeholder))
    {
      *out_retry = TRUE;
      ok = TRUE;
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
          _subagent_review_git_error (error, "Could not format the change of %s",
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
                       gboolean      untrusted_child,
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
  git_index *index = NULL;
  SubagentReviewWalker walker = { .twin_fd = -1 };
  const git_oid *placeholder = NULL;
  gboolean retry = FALSE;
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
      walker.ignore_repo = untrusted_child ? NULL : child_repo;
      walker.keep_nested_repos = untrusted_child;
      walker.base_tree = base_tree;
      /* The child's own index is git's stat cache: files it says are
       * unchanged since checkout are not read again. Only read. */
      if (child_repo != NULL && git_repository_index (&index, child_repo) == 0)
        _subagent_review_walker_use_index (&walker, index);
      ok = _subagent_review_tree_from_dir (&walker, child_root, &child_tree, error);
    }
  else
    {
      /* Child first: it finds the files equal on both sides (compared
       * byte for byte), which then need no hashing on either side. */
      ok = _subagent_review_walker_set_twin (&walker, base_dir, error) &&
           _subagent_review_tree_from_dir (&walker, child_root, &child_tree, error) &&
           _subagent_review_walker_set_twin (&walker, NULL, error) &&
           _subagent_review_tree_from_dir (&walker, base_dir, &base_tree, error);
      placeholder = &walker.placeholder;
    }

  ok = ok && diff_trees (repo, base_tree, child_tree, placeholder, &retry,
                         patch_text, status_text, counts, cancellable, error);
  if (ok && retry)
    {
      g_debug ("%s changed while its review was taken; hashing every file", base_dir);
      _subagent_review_walker_clear (&walker);
      g_clear_pointer (&base_tree, git_tree_free);
      g_clear_pointer (&child_tree, git_tree_free);
      retry = FALSE;
      ok = _subagent_review_tree_from_dir (&walker, child_root, &child_tree, error) &&
           _subagent_review_tree_from_dir (&walker, base_dir, &base_tree, error) &&
           diff_trees (repo, base_tree, child_tree, NULL, &retry,
                       patch_text, status_text, counts, cancellable, error);
    }

out:
  _subagent_review_walker_clear (&walker);
  git_index_free (index);
  git_tree_free (child_tree);
  git_tree_free (base_tree);
  git_repository_free (repo);
  git_repository_free (refs_repo);
  git_repository_free (child_repo);
  git_libgit2_shutdown ();
  return ok;
}
