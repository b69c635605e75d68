/* subagent-review.c: review artifacts of isolated child runs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent-error.h"
#include "subagent.h"
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

SubagentReview *
_subagent_review_new (const char  *session_key,
                      const char  *patch_path,
                      const char  *status_path,
                      const guint  counts[SUBAGENT_REVIEW_N_COUNTS])
{
  SubagentReview *review = g_object_new (SUBAGENT_TYPE_REVIEW,
                                         "session-key", session_key,
                                         "patch-path", patch_path,
                                         "status-path", status_path,
                                         NULL);

  memcpy (review->counts, counts, sizeof review->counts);
  return review;
}
