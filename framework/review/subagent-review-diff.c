/* subagent-review-diff.c: the in-memory object database of a review
 * capture, the base tree of a commit, and the patch and status text of
 * the difference (see SubagentReview).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/hashsig.h>
#include <git2/sys/repository.h>

#include "subagent-error.h"
#include "subagent-fd-private.h"
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

/* Appends @len bytes of the patch. */
static gboolean
write_patch (int          fd,
             const char  *data,
             gsize        len,
             GError     **error)
{
  int saved = _subagent_write_all (fd, data, len);

  if (saved != 0)
    g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED, "Could not write the review patch: %s",
                 g_strerror (saved));
  return saved == 0;
}

/* Rename detection with libgit2's signatures, except that a stand-in of a
 * file over the limit is similar to nothing (two stand-ins differ only in
 * their numbers). Exact renames are found before the metric is asked. */
typedef struct {
  git_hashsig *sig;   /* NULL: a stand-in */
} Signature;

static gboolean
is_stand_in (const char *buf,
             size_t      len)
{
  static const char magic[] = "\0subagent review: content over the limit\n";

  return len >= sizeof magic - 1 && memcmp (buf, magic, sizeof magic - 1) == 0;
}

/* As libgit2's own metric: a file too small for a signature is similar
 * to nothing, which is not an error. */
static int
finish_signature (Signature  *s,
                  int         r,
                  void      **out)
{
  if (r == GIT_EBUFS)
    {
      git_error_clear ();
      s->sig = NULL;
      r = 0;
    }
  if (r < 0)
    {
      g_free (s);
      return r;
    }
  *out = s;
  return 0;
}

static int
metric_file_signature (void                **out,
                       const git_diff_file  *file,
                       const char           *fullpath,
                       void                 *payload)
{
  Signature *s = g_new0 (Signature, 1);
  int r = git_hashsig_create_fromfile (&s->sig, fullpath, GIT_HASHSIG_SMART_WHITESPACE);

  return finish_signature (s, r, out);
}

static int
metric_buffer_signature (void                **out,
                         const git_diff_file  *file,
                         const char           *buf,
                         size_t                len,
                         void                 *payload)
{
  Signature *s = g_new0 (Signature, 1);

  if (!is_stand_in (buf, len))
    {
      int r = git_hashsig_create (&s->sig, buf, len, GIT_HASHSIG_SMART_WHITESPACE);

      return finish_signature (s, r, out);
    }
  *out = s;
  return 0;
}

static void
metric_free_signature (void *sig,
                       void *payload)
{
  Signature *s = sig;

  if (s->sig != NULL)
    git_hashsig_free (s->sig);
  g_free (s);
}

static int
metric_similarity (int  *score,
                   void *a,
                   void *b,
                   void *payload)
{
  Signature *sa = a, *sb = b;
  int r;

  *score = 0;
  if (sa->sig == NULL || sb->sig == NULL)
    return 0;
  r = git_hashsig_compare (sa->sig, sb->sig);
  if (r < 0)
    return r;
  *score = r;
  return 0;
}

/* Size of one side of a delta: a stand-in's recorded size, else the
 * object's (header only). -1 when there is no such side. */
static goffset
side_size (SubagentReviewWalker *w,
           git_repository       *repo,
           const git_diff_file  *file)
{
  const SubagentReviewOverLimit *info;
  git_odb *odb = NULL;
  size_t size = 0;
  git_object_t type;
  goffset ret = -1;

  if (git_oid_is_zero (&file->id))
    return -1;
  if ((info = _subagent_review_walker_lookup_over_limit (w, &file->id)) != NULL)
    return info->size;
  if (git_repository_odb (&odb, repo) == 0 && git_odb_read_header (&size, &type, odb, &file->id) == 0)
    ret = (goffset) size;
  git_odb_free (odb);
  return ret;
}

/* The patch of a change that involves a file over the limit: git's header
 * and a "Binary files … differ" line, which git apply reads as a binary
 * change it cannot apply; the sizes and digests follow on that line. */
static void
format_over_limit (GString              *out,
                   SubagentReviewWalker *w,
                   const git_diff_delta *delta,
                   goffset               old_size,
                   goffset               new_size)
{
  const SubagentReviewOverLimit *old_info = _subagent_review_walker_lookup_over_limit (w, &delta->old_file.id);
  const SubagentReviewOverLimit *new_info = _subagent_review_walker_lookup_over_limit (w, &delta->new_file.id);
  const char *old_path = delta->old_file.path;
  const char *new_path = delta->new_file.path;

  g_string_append_printf (out, "diff --git a/%s b/%s\n", old_path, new_path);
  switch (delta->status)
    {
    case GIT_DELTA_ADDED:
      g_string_append_printf (out, "new file mode %06o\n", delta->new_file.mode);
      break;
    case GIT_DELTA_DELETED:
      g_string_append_printf (out, "deleted file mode %06o\n", delta->old_file.mode);
      break;
    default:
      if (delta->old_file.mode != delta->new_file.mode)
        g_string_append_printf (out, "old mode %06o\nnew mode %06o\n", delta->old_file.mode, delta->new_file.mode);
      if (delta->status == GIT_DELTA_RENAMED)
        g_string_append_printf (out, "similarity index %u%%\nrename from %s\nrename to %s\n",
                                delta->similarity, old_path, new_path);
      break;
    }
  if (git_oid_equal (&delta->old_file.id, &delta->new_file.id))
    return;  /* mode or name only */
  g_string_append_printf (out, "Binary files %s%s and %s%s differ (content over the review limit of %"
                          G_GUINT64_FORMAT " bytes not included;",
                          delta->status == GIT_DELTA_ADDED ? "" : "a/",
                          delta->status == GIT_DELTA_ADDED ? "/dev/null" : old_path,
                          delta->status == GIT_DELTA_DELETED ? "" : "b/",
                          delta->status == GIT_DELTA_DELETED ? "/dev/null" : new_path,
                          w->max_file_size);
  if (old_size >= 0)
    g_string_append_printf (out, " old size %" G_GINT64_FORMAT, (gint64) old_size);
  if (old_info != NULL)
    g_string_append_printf (out, " blocks-sha256 %s", old_info->digest);
  if (new_size >= 0)
    g_string_append_printf (out, " new size %" G_GINT64_FORMAT, (gint64) new_size);
  if (new_info != NULL)
    g_string_append_printf (out, " blocks-sha256 %s", new_info->digest);
  g_string_append (out, ")\n");
}

static gboolean
diff_trees (git_repository *repo,
            SubagentReviewWalker *w,
            git_tree       *base,
            git_tree       *child,
            const git_oid  *placeholder,
            gboolean       *out_retry,
            int             patch_fd,
            GString        *status_text,
            guint          *counts,
            GCancellable   *cancellable,
            GError        **error)
{
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
  git_diff_similarity_metric metric = {
    metric_file_signature, metric_buffer_signature, metric_free_signature, metric_similarity, NULL
  };
  git_diff *diff = NULL;
  gboolean ok = FALSE;
  size_t n;

  opts.flags = GIT_DIFF_SHOW_BINARY;
  /* git apply needs full ids to check binary pre-images. */
  opts.id_abbrev = GIT_OID_HEXSZ;
  find.flags = GIT_DIFF_FIND_RENAMES;
  find.metric = &metric;
  /* Never load a blob over the limit to make a binary patch of it. */
  opts.max_size = (git_off_t) MIN (w->max_file_size, (guint64) G_MAXINT64);

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

      goffset old_size, new_size;
      gboolean over_limit;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        goto out;
      delta = git_diff_get_delta (diff, i);
      old_size = side_size (w, repo, &delta->old_file);
      new_size = side_size (w, repo, &delta->new_file);
      over_limit = (guint64) MAX (old_size, new_size) > w->max_file_size && MAX (old_size, new_size) >= 0;
      if (over_limit)
        {
          g_autoptr(GString) text = g_string_new (NULL);

          format_over_limit (text, w, delta, old_size, new_size);
          if (!write_patch (patch_fd, text->str, text->len, error))
            goto out;
        }
      else
        {
          if (git_patch_from_diff (&patch, diff, i) < 0 || patch == NULL ||
              git_patch_to_buf (&buf, patch) < 0 ||
              git_patch_line_stats (NULL, &adds, &dels, patch) < 0)
            {
              _subagent_review_git_error (error, "Could not format the change of %s", delta->new_file.path);
              git_buf_dispose (&buf);
              git_patch_free (patch);
              goto out;
            }
          if (!write_patch (patch_fd, buf.ptr, buf.size, error))
            {
              git_buf_dispose (&buf);
              git_patch_free (patch);
              goto out;
            }
          git_buf_dispose (&buf);
          delta = git_patch_get_delta (patch);
        }

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

        if (over_limit)
          {
            const SubagentReviewOverLimit *info =
              _subagent_review_walker_lookup_over_limit (w, delta->status == GIT_DELTA_DELETED
                                                         ? &delta->old_file.id : &delta->new_file.id);

            counts[COUNT_BINARY]++;
            g_string_append_printf (notes, " binary over-limit size %" G_GINT64_FORMAT,
                                    (gint64) (delta->status == GIT_DELTA_DELETED ? old_size : new_size));
            if (info != NULL)
              g_string_append_printf (notes, " blocks-sha256 %s", info->digest);
          }
        else if (delta->flags & GIT_DIFF_FLAG_BINARY)
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


  for (guint i = 0; w->skipped != NULL && i < w->skipped->len; i++)
    {
      const char *line = w->skipped->pdata[i];
      const char *tab = strchr (line, '\t');

      g_string_append (status_text, "skipped\t");
      append_path (status_text, tab + 1);
      g_string_append_printf (status_text, "\t%.*s\n", (int) (tab - line), line);
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
                       guint64       max_file_size,
                       gboolean      untrusted_child,
                       const SubagentExcludeSet *exclude,
                       int           patch_fd,
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
  walker.max_file_size = max_file_size;
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
      walker.record_skipped = TRUE;
      ok = _subagent_review_tree_from_dir (&walker, child_root, &child_tree, error);
      walker.record_skipped = FALSE;
    }
  else
    {
      /* Child first: it finds the files equal on both sides (compared
       * byte for byte), which then need no hashing on either side. What
       * the workspace left out (secrets) is skipped on both sides: never
       * shown as deleted, and a child's own copy never reaches the patch. */
      walker.exclude = exclude;
      walker.record_skipped = TRUE;
      ok = _subagent_review_walker_set_twin (&walker, base_dir, error) &&
           _subagent_review_tree_from_dir (&walker, child_root, &child_tree, error);
      walker.record_skipped = FALSE;
      ok = ok && _subagent_review_walker_set_twin (&walker, NULL, error) &&
           _subagent_review_tree_from_dir (&walker, base_dir, &base_tree, error);
      placeholder = &walker.placeholder;
    }

  ok = ok && diff_trees (repo, &walker, base_tree, child_tree, placeholder, &retry,
                         patch_fd, status_text, counts, cancellable, error);
  if (ok && retry)
    {
      g_debug ("%s changed while its review was taken; hashing every file", base_dir);
      _subagent_review_walker_clear (&walker);
      g_clear_pointer (&base_tree, git_tree_free);
      g_clear_pointer (&child_tree, git_tree_free);
      retry = FALSE;
      walker.repo = repo;
      walker.cancellable = cancellable;
      walker.max_file_size = max_file_size;
      walker.exclude = exclude;
      walker.record_skipped = TRUE;
      ok = _subagent_review_tree_from_dir (&walker, child_root, &child_tree, error);
      walker.record_skipped = FALSE;
      ok = ok && _subagent_review_tree_from_dir (&walker, base_dir, &base_tree, error) &&
           diff_trees (repo, &walker, base_tree, child_tree, NULL, &retry,
                       patch_fd, status_text, counts, cancellable, error);
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
