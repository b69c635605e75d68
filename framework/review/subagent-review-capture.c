/* subagent-review-capture.c: capturing a review — what an isolated child
 * changed, written as a patch and a status beside its workspace (the
 * class: subagent-review.c; the diff: subagent-review-diff.c).
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
  guint counts[SUBAGENT_REVIEW_N_COUNTS] = { 0 };
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

  return _subagent_review_new (session_key, patch_path, status_path, counts);
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
