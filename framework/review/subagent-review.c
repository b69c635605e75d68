/* subagent-review.c: review artifacts of isolated child runs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subagent-error.h"
#include "subagent.h"
#include "subagent-state-path-private.h"
#include "subagent-review.h"
#include "subagent-review-private.h"

/**
 * SubagentReview:
 *
 * What an isolated child changed, kept after its workspace is gone: a
 * binary-safe patch in git's format (`diff --git`, modes, renames,
 * `GIT binary patch`) that `git apply` accepts on the parent, a status file,
 * and counts. Immutable.
 *
 * subagent_review_capture() compares two trees in memory with libgit2: both
 * sides are hashed into an in-memory object database that is dropped
 * afterwards, so nothing is written to any repository, index or `.git`. The
 * base is either a directory (snapshot and container runs: the parent's
 * tree) or a commit (worktree runs: the commit the child started from, read
 * from the parent's objects, compared with the child's files including
 * untracked ones and excluding ignored ones). On both sides `.subagent` at
 * the top level and every `.git` are left out; empty directories, owners
 * and permission bits other than the executable bit are not represented (as
 * in git). Nested repositories and submodules are left as in the base.
 *
 * The status file has one line per changed path: a kind (`added`,
 * `modified`, `deleted`, `renamed`, `mode-changed` for a change of the
 * executable bit alone), a tab, the path (renames: `old -> new`; paths with
 * control characters, quotes or backslashes are C-quoted), and for some,
 * a tab and notes (`binary`, `mode 100644->100755`, `similarity 90%`,
 * `binary over-limit size N blocks-sha256 HEX` for a file over the content
 * limit, whose content the patch leaves out). What the child left that a
 * tree cannot hold follows as `skipped`, the path and its kind (`fifo`,
 * `socket`, `char-device`, `block-device`). A last line starting with
 * `total:` sums the changes up. The per-kind counts add up
 * to #SubagentReview:files-changed; #SubagentReview:binary counts binary
 * files among them.
 */

struct _SubagentReview
{
  GObject parent_instance;

  char *session_key;
  char *patch_path;
  char *status_path;
  guint counts[SUBAGENT_REVIEW_N_COUNTS];
};

#define N_COUNTS SUBAGENT_REVIEW_N_COUNTS

static const char * const count_names[N_COUNTS] = {
  "files-changed", "insertions", "deletions", "added", "modified",
  "deleted", "renamed", "mode-changed", "binary",
};

static const char * const count_blurbs[N_COUNTS] = {
  "Number of changed paths",
  "Number of inserted lines",
  "Number of deleted lines",
  "Number of added files",
  "Number of files whose content changed",
  "Number of deleted files",
  "Number of renamed files",
  "Number of files whose executable bit alone changed",
  "Number of binary files among the changed ones",
};

enum {
  PROP_0,
  PROP_SESSION_KEY,
  PROP_PATCH_PATH,
  PROP_STATUS_PATH,
  PROP_FIRST_COUNT,
  N_PROPS = PROP_FIRST_COUNT + N_COUNTS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (SubagentReview, subagent_review, G_TYPE_OBJECT)

static void
subagent_review_finalize (GObject *object)
{
  SubagentReview *self = SUBAGENT_REVIEW (object);

  g_free (self->session_key);
  g_free (self->patch_path);
  g_free (self->status_path);
  G_OBJECT_CLASS (subagent_review_parent_class)->finalize (object);
}

static void
subagent_review_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  SubagentReview *self = SUBAGENT_REVIEW (object);

  switch (prop_id)
    {
    case PROP_SESSION_KEY:
      g_value_set_string (value, self->session_key);
      break;
    case PROP_PATCH_PATH:
      g_value_set_string (value, self->patch_path);
      break;
    case PROP_STATUS_PATH:
      g_value_set_string (value, self->status_path);
      break;
    default:
      if (prop_id >= PROP_FIRST_COUNT && prop_id < N_PROPS)
        g_value_set_uint (value, self->counts[prop_id - PROP_FIRST_COUNT]);
      else
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_review_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  SubagentReview *self = SUBAGENT_REVIEW (object);

  switch (prop_id)
    {
    case PROP_SESSION_KEY:
      self->session_key = g_value_dup_string (value);
      break;
    case PROP_PATCH_PATH:
      self->patch_path = g_value_dup_string (value);
      break;
    case PROP_STATUS_PATH:
      self->status_path = g_value_dup_string (value);
      break;
    default:
      if (prop_id >= PROP_FIRST_COUNT && prop_id < N_PROPS)
        self->counts[prop_id - PROP_FIRST_COUNT] = g_value_get_uint (value);
      else
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_review_class_init (SubagentReviewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = subagent_review_finalize;
  object_class->get_property = subagent_review_get_property;
  object_class->set_property = subagent_review_set_property;

  /**
   * SubagentReview:session-key:
   *
   * The session key of the isolation the review was taken from.
   */
  properties[PROP_SESSION_KEY] =
    g_param_spec_string ("session-key", NULL, NULL, NULL, flags);
  /**
   * SubagentReview:patch-path:
   *
   * The absolute path of the `.patch` file.
   */
  properties[PROP_PATCH_PATH] =
    g_param_spec_string ("patch-path", NULL, NULL, NULL, flags);
  /**
   * SubagentReview:status-path:
   *
   * The absolute path of the `.status` file.
   */
  properties[PROP_STATUS_PATH] =
    g_param_spec_string ("status-path", NULL, NULL, NULL, flags);

  /**
   * SubagentReview:files-changed:
   *
   * Number of changed paths (a rename counts once).
   */
  /**
   * SubagentReview:insertions:
   *
   * Number of inserted lines in text files.
   */
  /**
   * SubagentReview:deletions:
   *
   * Number of deleted lines in text files.
   */
  /**
   * SubagentReview:added:
   *
   * Number of added files.
   */
  /**
   * SubagentReview:modified:
   *
   * Number of files whose content changed (perhaps with their mode).
   */
  /**
   * SubagentReview:deleted:
   *
   * Number of deleted files.
   */
  /**
   * SubagentReview:renamed:
   *
   * Number of renamed files (perhaps also edited).
   */
  /**
   * SubagentReview:mode-changed:
   *
   * Number of files whose executable bit alone changed.
   */
  /**
   * SubagentReview:binary:
   *
   * Number of binary files among the changed ones.
   */
  for (guint i = 0; i < N_COUNTS; i++)
    properties[PROP_FIRST_COUNT + i] =
      g_param_spec_uint (count_names[i], NULL, count_blurbs[i], 0, G_MAXUINT, 0, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_review_init (SubagentReview *self)
{
}

/**
 * subagent_review_get_session_key:
 * @self: a #SubagentReview
 *
 * Gets the session key.
 *
 * Returns: (transfer none): the session key
 *
 * Since: 0.2
 */
const char *
subagent_review_get_session_key (SubagentReview *self)
{
  g_return_val_if_fail (SUBAGENT_IS_REVIEW (self), NULL);
  return self->session_key;
}

/**
 * subagent_review_get_patch_path:
 * @self: a #SubagentReview
 *
 * Gets the path of the `.patch` file.
 *
 * Returns: (transfer none): the path of the `.patch` file
 *
 * Since: 0.2
 */
const char *
subagent_review_get_patch_path (SubagentReview *self)
{
  g_return_val_if_fail (SUBAGENT_IS_REVIEW (self), NULL);
  return self->patch_path;
}

/**
 * subagent_review_get_status_path:
 * @self: a #SubagentReview
 *
 * Gets the path of the `.status` file.
 *
 * Returns: (transfer none): the path of the `.status` file
 *
 * Since: 0.2
 */
const char *
subagent_review_get_status_path (SubagentReview *self)
{
  g_return_val_if_fail (SUBAGENT_IS_REVIEW (self), NULL);
  return self->status_path;
}

#define COUNT_GETTER(fn, idx)                                   \
  guint                                                         \
  subagent_review_get_##fn (SubagentReview *self)               \
  {                                                             \
    g_return_val_if_fail (SUBAGENT_IS_REVIEW (self), 0);        \
    return self->counts[idx];                                   \
  }

/**
 * subagent_review_get_files_changed:
 * @self: a #SubagentReview
 *
 * Gets the number of changed paths.
 *
 * Returns: the number of changed paths
 *
 * Since: 0.2
 */
COUNT_GETTER (files_changed, SUBAGENT_REVIEW_COUNT_FILES_CHANGED)
/**
 * subagent_review_get_insertions:
 * @self: a #SubagentReview
 *
 * Gets the number of inserted lines.
 *
 * Returns: the number of inserted lines
 *
 * Since: 0.2
 */
COUNT_GETTER (insertions, SUBAGENT_REVIEW_COUNT_INSERTIONS)
/**
 * subagent_review_get_deletions:
 * @self: a #SubagentReview
 *
 * Gets the number of deleted lines.
 *
 * Returns: the number of deleted lines
 *
 * Since: 0.2
 */
COUNT_GETTER (deletions, SUBAGENT_REVIEW_COUNT_DELETIONS)
/**
 * subagent_review_get_added:
 * @self: a #SubagentReview
 *
 * Gets the number of added files.
 *
 * Returns: the number of added files
 *
 * Since: 0.2
 */
COUNT_GETTER (added, SUBAGENT_REVIEW_COUNT_ADDED)
/**
 * subagent_review_get_modified:
 * @self: a #SubagentReview
 *
 * Gets the number of modified files.
 *
 * Returns: the number of modified files
 *
 * Since: 0.2
 */
COUNT_GETTER (modified, SUBAGENT_REVIEW_COUNT_MODIFIED)
/**
 * subagent_review_get_deleted:
 * @self: a #SubagentReview
 *
 * Gets the number of deleted files.
 *
 * Returns: the number of deleted files
 *
 * Since: 0.2
 */
COUNT_GETTER (deleted, SUBAGENT_REVIEW_COUNT_DELETED)
/**
 * subagent_review_get_renamed:
 * @self: a #SubagentReview
 *
 * Gets the number of renamed files.
 *
 * Returns: the number of renamed files
 *
 * Since: 0.2
 */
COUNT_GETTER (renamed, SUBAGENT_REVIEW_COUNT_RENAMED)
/**
 * subagent_review_get_mode_changed:
 * @self: a #SubagentReview
 *
 * Gets the number of files whose executable bit alone changed.
 *
 * Returns: the number of files whose executable bit alone changed
 *
 * Since: 0.2
 */
COUNT_GETTER (mode_changed, SUBAGENT_REVIEW_COUNT_MODE_CHANGED)
/**
 * subagent_review_get_binary:
 * @self: a #SubagentReview
 *
 * Gets the number of binary files among the changed ones.
 *
 * Returns: the number of binary files among the changed ones
 *
 * Since: 0.2
 */
COUNT_GETTER (binary, SUBAGENT_REVIEW_COUNT_BINARY)

/**
 * subagent_review_is_empty:
 * @self: a #SubagentReview
 *
 * Checks whether the child changed nothing.
 *
 * Returns: %TRUE if the child changed nothing
 *
 * Since: 0.2
 */
gboolean
subagent_review_is_empty (SubagentReview *self)
{
  g_return_val_if_fail (SUBAGENT_IS_REVIEW (self), TRUE);
  return self->counts[SUBAGENT_REVIEW_COUNT_FILES_CHANGED] == 0;
}

/* JSON member names use underscores, like the rest of the records. */
static char *
json_name (const char *prop_name)
{
  char *name = g_strdup (prop_name);

  g_strdelimit (name, "-", '_');
  return name;
}

/**
 * subagent_review_to_json:
 * @self: a #SubagentReview
 *
 * Serializes @self to a JSON object: `{session_key, patch_path, status_path,
 * files_changed, insertions, deletions, added, modified, deleted, renamed,
 * mode_changed, binary}`.
 *
 * Returns: (transfer full): `{session_key, patch_path, status_path,
 *   files_changed, insertions, deletions, added, modified, deleted, renamed,
 *   mode_changed, binary}`
 *
 * Since: 0.2
 */
JsonObject *
subagent_review_to_json (SubagentReview *self)
{
  JsonObject *object;

  g_return_val_if_fail (SUBAGENT_IS_REVIEW (self), NULL);

  object = json_object_new ();
  json_object_set_string_member (object, "session_key", self->session_key);
  json_object_set_string_member (object, "patch_path", self->patch_path);
  json_object_set_string_member (object, "status_path", self->status_path);
  for (guint i = 0; i < N_COUNTS; i++)
    {
      g_autofree char *name = json_name (count_names[i]);
      json_object_set_int_member (object, name, self->counts[i]);
    }
  return object;
}

/**
 * subagent_review_new_from_json:
 * @object: an object made by subagent_review_to_json()
 * @error: return location for a #GError
 *
 * Creates a new #SubagentReview.
 *
 * Returns: (transfer full) (nullable): the review, or %NULL if @object lacks
 *   the paths or has a count that is not a non-negative integer
 *
 * Since: 0.2
 */
SubagentReview *
subagent_review_new_from_json (JsonObject  *object,
                               GError     **error)
{
  const char *string_members[] = { "session_key", "patch_path", "status_path" };
  g_autoptr(SubagentReview) self = NULL;

  g_return_val_if_fail (object != NULL, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (string_members); i++)
    {
      JsonNode *node = json_object_get_member (object, string_members[i]);
      if (node == NULL || json_node_get_value_type (node) != G_TYPE_STRING)
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                       "Review record has no string member “%s”", string_members[i]);
          return NULL;
        }
    }
  self = g_object_new (SUBAGENT_TYPE_REVIEW,
                       "session-key", json_object_get_string_member (object, "session_key"),
                       "patch-path", json_object_get_string_member (object, "patch_path"),
                       "status-path", json_object_get_string_member (object, "status_path"),
                       NULL);
  for (guint i = 0; i < N_COUNTS; i++)
    {
      g_autofree char *name = json_name (count_names[i]);
      JsonNode *node = json_object_get_member (object, name);
      gint64 v;

      if (node == NULL)
        continue;
      if (json_node_get_value_type (node) != G_TYPE_INT64 ||
          (v = json_node_get_int (node)) < 0 || v > G_MAXUINT)
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                       "Review record member “%s” is not a count", name);
          return NULL;
        }
      self->counts[i] = (guint) v;
    }
  return g_steal_pointer (&self);
}

/* ---------------------------------------------------------------------- */
/* Capture                                                                 */

static char *
real_dir (const char  *path,
          const char  *what,
          GError     **error)
{
  char *real = realpath (path, NULL);
  struct stat st;
  char *result;

  if (real == NULL || stat (real, &st) != 0 || !S_ISDIR (st.st_mode))
    {
      int saved = real ? ENOTDIR : errno;
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "The %s %s is not a directory: %s", what, path, g_strerror (saved));
      free (real);
      return NULL;
    }
  result = g_strdup (real);
  free (real);
  return result;
}

/* The patch is written as the diff goes, to a temporary file renamed over
 * the old one at the end: a patch never has to fit in memory. */
static int
open_patch_temp (const char  *patch_path,
                 char       **out_temp,
                 GError     **error)
{
  char *temp = g_strconcat (patch_path, ".XXXXXX", NULL);
  int fd = g_mkstemp_full (temp, O_RDWR | O_CLOEXEC, 0644);

  if (fd < 0)
    {
      int saved = errno;

      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                   "Could not create a review file beside %s: %s", patch_path, g_strerror (saved));
      g_free (temp);
      return -1;
    }
  *out_temp = temp;
  return fd;
}

static gboolean
write_atomically (const char  *path,
                  const char  *contents,
                  gsize        length,
                  GError     **error)
{
  g_autoptr(GError) local_error = NULL;

  if (!g_file_set_contents_full (path, contents, length, G_FILE_SET_CONTENTS_CONSISTENT, 0644, &local_error))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                   "Could not write review file: %s", local_error->message);
      return FALSE;
    }
  return TRUE;
}

/**
 * subagent_review_capture:
 * @root: the parent's root: the files go to `<root>/.subagent/reviews/`
 * @session_key: names the files (`[A-Za-z0-9_-]`)
 * @base_dir: (nullable): the directory the child's workspace was copied from
 *   (snapshot and container runs); exclusive with @base_commit
 * @base_commit: (nullable): the commit (an id, or a revision of the
 *   parent's repository) the child's worktree started from
 * @base_git_dir: (nullable): with @base_commit, the parent's git directory;
 *   %NULL finds it from @child_root
 * @child_root: the child's workspace
 * @cancellable: (nullable): checked between files
 * @error: return location for a #GError
 *
 * Compares the base with @child_root and writes, each atomically,
 * `<root>/.subagent/reviews/<session_key>.patch` and `.status` (see
 * #SubagentReview). Only reads the parent's repository. Blocks: call it
 * from a worker thread or use subagent_review_capture_async(). Shared
 * isolation has no review: @base_dir equal to @child_root is an error.
 * Files over %SUBAGENT_REVIEW_DEFAULT_MAX_FILE_SIZE are recorded without
 * their content (see subagent_review_capture_full()).
 *
 * Returns: (transfer full): the review
 */
SubagentReview *
subagent_review_capture (const char    *root,
                         const char    *session_key,
                         const char    *base_dir,
                         const char    *base_commit,
                         const char    *base_git_dir,
                         const char    *child_root,
                         GCancellable  *cancellable,
                         GError       **error)
{
  return subagent_review_capture_full (root, session_key, base_dir, base_commit, base_git_dir, child_root,
                                       SUBAGENT_REVIEW_DEFAULT_MAX_FILE_SIZE, cancellable, error);
}

/**
 * subagent_review_capture_full:
 * @root: the parent's root: the files go to `<root>/.subagent/reviews/`
 * @session_key: names the files (`[A-Za-z0-9_-]`)
 * @base_dir: (nullable): the directory the child's workspace was copied from;
 *   exclusive with @base_commit
 * @base_commit: (nullable): the commit the child's worktree started from
 * @base_git_dir: (nullable): with @base_commit, the parent's git directory
 * @child_root: the child's workspace
 * @max_file_size: the content limit in bytes: a changed file larger than
 *   this is in the patch as `Binary files … differ` with its size and
 *   blocks-sha256 digest and no content, and its `.status` line says
 *   `binary over-limit size N blocks-sha256 HEX`
 * @cancellable: (nullable): checked between files and blocks
 * @error: return location for a #GError
 *
 * subagent_review_capture() with a content limit. Memory stays bounded
 * whatever the child left: files are read in fixed-size steps, files over
 * the limit one block at a time, the holes of sparse files are not read,
 * and the patch is written as it is made. FIFOs, sockets and devices are
 * listed in the `.status` as `skipped`.
 *
 * Returns: (transfer full): the review
 *
 * Since: 0.2
 */
SubagentReview *
subagent_review_capture_full (const char    *root,
                              const char    *session_key,
                              const char    *base_dir,
                              const char    *base_commit,
                              const char    *base_git_dir,
                              const char    *child_root,
                              guint64        max_file_size,
                              GCancellable  *cancellable,
                              GError       **error)
{
  return _subagent_review_capture_full (root, session_key, base_dir, base_commit, base_git_dir, child_root,
                                        max_file_size, FALSE, NULL, cancellable, error);
}

/* subagent_review_capture_full() that may distrust the child's own
 * .gitignore files and nested repositories (see _subagent_review_diff()). */
SubagentReview *
_subagent_review_capture_full (const char    *root,
                               const char    *session_key,
                               const char    *base_dir,
                               const char    *base_commit,
                               const char    *base_git_dir,
                               const char    *child_root,
                               guint64        max_file_size,
                               gboolean       untrusted_child,
                               const char * const *exclude,
                               GCancellable  *cancellable,
                               GError       **error)
{
  g_autoptr(SubagentExcludeSet) exclude_set = exclude != NULL ? subagent_exclude_set_new (exclude) : NULL;
  g_autofree char *real_root = NULL;
  g_autofree char *real_child = NULL;
  g_autofree char *real_base = NULL;
  g_autofree char *reviews_dir = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *patch_path = NULL;
  g_autofree char *patch_temp = NULL;
  g_autofree char *status_path = NULL;
  g_autoptr(GString) status_text = g_string_new (NULL);
  guint counts[N_COUNTS] = { 0 };
  SubagentReview *review;
  gboolean ok;
  int patch_fd;

  g_return_val_if_fail (root != NULL, NULL);
  g_return_val_if_fail (child_root != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!subagent_isolation_session_key_is_valid (session_key))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Invalid session key “%s” for a review: use 1 to 128 of [A-Za-z0-9_-]",
                   session_key ? session_key : "");
      return NULL;
    }
  if ((base_dir == NULL) == (base_commit == NULL))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "A review of %s needs exactly one base: a directory or a commit", session_key);
      return NULL;
    }
  if ((real_root = real_dir (root, "review root", error)) == NULL ||
      (real_child = real_dir (child_root, "child root", error)) == NULL)
    return NULL;
  if (base_dir != NULL)
    {
      if ((real_base = real_dir (base_dir, "base directory", error)) == NULL)
        return NULL;
      if (g_str_equal (real_base, real_child))
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                       "No review for %s: the child worked in the parent's directory (shared isolation)",
                       session_key);
          return NULL;
        }
    }

  reviews_dir = g_build_filename (real_root, ".subagent", "reviews", NULL);
  /* Never through a symbolic link: a child may have planted one. */
  if (!_subagent_state_dir_ensure (reviews_dir, 0755, &local_error))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED, "Could not keep review %s: %s", session_key,
                   local_error->message);
      return NULL;
    }
  patch_path = g_strdup_printf ("%s/%s.patch", reviews_dir, session_key);
  status_path = g_strdup_printf ("%s/%s.status", reviews_dir, session_key);
  if ((patch_fd = open_patch_temp (patch_path, &patch_temp, error)) < 0)
    return NULL;

  ok = _subagent_review_diff (real_base, base_commit, base_git_dir, real_child, max_file_size,
                              untrusted_child, exclude_set, patch_fd, status_text, counts, cancellable, error);
  if (ok && fdatasync (patch_fd) != 0)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                   "Could not write review file %s: %s", patch_temp, g_strerror (saved));
      ok = FALSE;
    }
  close (patch_fd);
  if (ok && rename (patch_temp, patch_path) != 0)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                   "Could not write review file %s: %s", patch_path, g_strerror (saved));
      ok = FALSE;
    }
  if (!ok)
    {
      unlink (patch_temp);
      return NULL;
    }
  if (!write_atomically (status_path, status_text->str, status_text->len, error))
    return NULL;

  review = g_object_new (SUBAGENT_TYPE_REVIEW,
                         "session-key", session_key,
                         "patch-path", patch_path,
                         "status-path", status_path,
                         NULL);
  memcpy (review->counts, counts, sizeof counts);
  return review;
}

typedef struct {
  char *root;
  char *session_key;
  char *base_dir;
  char *base_commit;
  char *base_git_dir;
  char *child_root;
} CaptureData;

static void
capture_data_free (gpointer data)
{
  CaptureData *d = data;

  g_free (d->root);
  g_free (d->session_key);
  g_free (d->base_dir);
  g_free (d->base_commit);
  g_free (d->base_git_dir);
  g_free (d->child_root);
  g_free (d);
}

static void
capture_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  CaptureData *d = task_data;
  GError *error = NULL;
  SubagentReview *review;

  review = subagent_review_capture (d->root, d->session_key, d->base_dir, d->base_commit,
                                    d->base_git_dir, d->child_root, cancellable, &error);
  if (review == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, review, g_object_unref);
}

/**
 * subagent_review_capture_async:
 * @root: the parent's root
 * @session_key: names the files
 * @base_dir: (nullable): the base directory; exclusive with @base_commit
 * @base_commit: (nullable): the base commit
 * @base_git_dir: (nullable): the parent's git directory
 * @child_root: the child's workspace
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the review is written
 * @user_data: (closure): data for @callback
 *
 * Runs subagent_review_capture() in a worker thread.
 */
void
subagent_review_capture_async (const char          *root,
                               const char          *session_key,
                               const char          *base_dir,
                               const char          *base_commit,
                               const char          *base_git_dir,
                               const char          *child_root,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  CaptureData *d = g_new0 (CaptureData, 1);

  d->root = g_strdup (root);
  d->session_key = g_strdup (session_key);
  d->base_dir = g_strdup (base_dir);
  d->base_commit = g_strdup (base_commit);
  d->base_git_dir = g_strdup (base_git_dir);
  d->child_root = g_strdup (child_root);
  g_task_set_source_tag (task, subagent_review_capture_async);
  g_task_set_task_data (task, d, capture_data_free);
  g_task_run_in_thread (task, capture_thread);
}

/**
 * subagent_review_capture_finish:
 * @result: the #GAsyncResult passed to the callback
 * @error: return location for a #GError
 *
 * Finishes the operation started with subagent_review_capture_async().
 *
 * Returns: (transfer full): the review
 *
 * Since: 0.2
 */
SubagentReview *
subagent_review_capture_finish (GAsyncResult  *result,
                                GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
