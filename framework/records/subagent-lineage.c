/* subagent-lineage.c: the parent → child relationship of a run.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-json-private.h"
#include "subagent-json-line-private.h"
#include "subagent-records-private.h"

/**
 * SubagentLineage:
 *
 * Where a child run sits in the delegation tree: who started it, from which
 * definition, how deep, in which workspace and at which position of a batch.
 *
 * A lineage is immutable. Its JSON form (subagent_lineage_to_json()) has the
 * keys `parent_run_id`, `def_name`, `depth`, `isolation`, `batch_index`,
 * `worktree_path` and `container_path`; the last three are `null` when unset.
 * `container_path` is the legacy name of the directory-snapshot path.
 */
struct _SubagentLineage
{
  GObject parent_instance;

  char *parent_run_id;
  char *def_name;
  guint depth;
  char *isolation;
  gint batch_index;
  char *worktree_path;
  char *container_path;
  char *routing;
};

G_DEFINE_FINAL_TYPE (SubagentLineage, subagent_lineage, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PARENT_RUN_ID,
  PROP_DEF_NAME,
  PROP_DEPTH,
  PROP_ISOLATION,
  PROP_BATCH_INDEX,
  PROP_WORKTREE_PATH,
  PROP_CONTAINER_PATH,
  PROP_ROUTING,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
subagent_lineage_finalize (GObject *object)
{
  SubagentLineage *self = SUBAGENT_LINEAGE (object);

  g_free (self->parent_run_id);
  g_free (self->def_name);
  g_free (self->isolation);
  g_free (self->worktree_path);
  g_free (self->container_path);

  g_free (self->routing);
  G_OBJECT_CLASS (subagent_lineage_parent_class)->finalize (object);
}

static void
subagent_lineage_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  SubagentLineage *self = SUBAGENT_LINEAGE (object);

  switch (prop_id)
    {
    case PROP_PARENT_RUN_ID:
      g_value_set_string (value, self->parent_run_id);
      break;
    case PROP_DEF_NAME:
      g_value_set_string (value, self->def_name);
      break;
    case PROP_DEPTH:
      g_value_set_uint (value, self->depth);
      break;
    case PROP_ISOLATION:
      g_value_set_string (value, self->isolation);
      break;
    case PROP_BATCH_INDEX:
      g_value_set_int (value, self->batch_index);
      break;
    case PROP_WORKTREE_PATH:
      g_value_set_string (value, self->worktree_path);
      break;
    case PROP_CONTAINER_PATH:
      g_value_set_string (value, self->container_path);
      break;
    case PROP_ROUTING:
      g_value_set_string (value, self->routing);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* Empty paths mean "unset": keeps JSON `null` the only spelling of absence. */
static char *
dup_nonempty (const GValue *value)
{
  const char *s = g_value_get_string (value);

  return (s != NULL && *s != '\0') ? g_strdup (s) : NULL;
}

static void
subagent_lineage_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  SubagentLineage *self = SUBAGENT_LINEAGE (object);
  const char *s;

  switch (prop_id)
    {
    case PROP_PARENT_RUN_ID:
      s = g_value_get_string (value);
      self->parent_run_id = g_strdup (s ? s : "");
      break;
    case PROP_DEF_NAME:
      s = g_value_get_string (value);
      self->def_name = g_strdup (s ? s : "");
      break;
    case PROP_DEPTH:
      self->depth = g_value_get_uint (value);
      break;
    case PROP_ISOLATION:
      s = g_value_get_string (value);
      self->isolation = g_strdup ((s != NULL && *s != '\0') ? s : "shared");
      break;
    case PROP_BATCH_INDEX:
      self->batch_index = g_value_get_int (value);
      break;
    case PROP_WORKTREE_PATH:
      self->worktree_path = dup_nonempty (value);
      break;
    case PROP_CONTAINER_PATH:
      self->container_path = dup_nonempty (value);
      break;
    case PROP_ROUTING:
      self->routing = dup_nonempty (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_lineage_class_init (SubagentLineageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = subagent_lineage_finalize;
  object_class->get_property = subagent_lineage_get_property;
  object_class->set_property = subagent_lineage_set_property;

  /**
   * SubagentLineage:parent-run-id:
   *
   * The run id of the parent that started the child (`""` when unknown).
   */
  properties[PROP_PARENT_RUN_ID] =
    g_param_spec_string ("parent-run-id", NULL, NULL, "", flags);

  /**
   * SubagentLineage:def-name:
   *
   * The name of the definition the child runs.
   */
  properties[PROP_DEF_NAME] =
    g_param_spec_string ("def-name", NULL, NULL, "", flags);

  /**
   * SubagentLineage:depth:
   *
   * The child's depth: 1 for a child of the top-level agent.
   */
  properties[PROP_DEPTH] =
    g_param_spec_uint ("depth", NULL, NULL, 0, G_MAXINT, 0, flags);

  /**
   * SubagentLineage:isolation:
   *
   * The isolation mode the child ran in, such as `shared` or `worktree`.
   */
  properties[PROP_ISOLATION] =
    g_param_spec_string ("isolation", NULL, NULL, "shared", flags);

  /**
   * SubagentLineage:batch-index:
   *
   * The child's position in a batch, or %SUBAGENT_NO_BATCH_INDEX.
   */
  properties[PROP_BATCH_INDEX] =
    g_param_spec_int ("batch-index", NULL, NULL, SUBAGENT_NO_BATCH_INDEX, G_MAXINT,
                      SUBAGENT_NO_BATCH_INDEX, flags);

  /**
   * SubagentLineage:worktree-path:
   *
   * The git worktree the child worked in, if any.
   */
  properties[PROP_WORKTREE_PATH] =
    g_param_spec_string ("worktree-path", NULL, NULL, NULL, flags);

  /**
   * SubagentLineage:container-path:
   *
   * The directory snapshot the child worked in, if any (legacy name).
   */
  properties[PROP_CONTAINER_PATH] =
    g_param_spec_string ("container-path", NULL, NULL, NULL, flags);

  /**
   * SubagentLineage:routing:
   *
   * How `isolation: auto` chose the backend for a run with a skill or a
   * risk level, such as "medium risk: docker unavailable (…), used
   * directory-snapshot"; %NULL otherwise. In JSON only when set.
   *
   * Since: 0.2
   */
  properties[PROP_ROUTING] =
    g_param_spec_string ("routing", NULL, NULL, NULL, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_lineage_init (SubagentLineage *self)
{
  self->batch_index = SUBAGENT_NO_BATCH_INDEX;
}

/**
 * subagent_lineage_new:
 * @parent_run_id: (nullable): the parent's run id
 * @def_name: the definition's name
 * @depth: the child's depth
 * @isolation: (nullable): the isolation mode; %NULL means `shared`
 * @batch_index: the position in a batch, or %SUBAGENT_NO_BATCH_INDEX
 * @worktree_path: (nullable): the worktree path, if any
 * @container_path: (nullable): the directory-snapshot path, if any
 *
 * Creates a lineage.
 *
 * Returns: (transfer full): a new #SubagentLineage
 */
SubagentLineage *
subagent_lineage_new (const char *parent_run_id,
                      const char *def_name,
                      guint       depth,
                      const char *isolation,
                      gint        batch_index,
                      const char *worktree_path,
                      const char *container_path)
{
  g_return_val_if_fail (batch_index >= SUBAGENT_NO_BATCH_INDEX, NULL);

  return g_object_new (SUBAGENT_TYPE_LINEAGE,
                       "parent-run-id", parent_run_id,
                       "def-name", def_name,
                       "depth", depth,
                       "isolation", isolation,
                       "batch-index", batch_index,
                       "worktree-path", worktree_path,
                       "container-path", container_path,
                       NULL);
}

/**
 * subagent_lineage_new_from_json:
 * @object: a JSON object as written by subagent_lineage_to_json()
 * @error: return location for a #GError
 *
 * Reads a lineage back, checking every member's type. `parent_run_id` and
 * `def_name` are required; the others take their defaults when absent.
 *
 * Returns: (transfer full) (nullable): the lineage, or %NULL with @error set
 *   (%SUBAGENT_ERROR_INVALID_ARGUMENT) when a member is missing or mistyped
 */
SubagentLineage *
subagent_lineage_new_from_json (JsonObject  *object,
                                GError     **error)
{
  const char *what = "lineage";
  const char *parent_run_id, *def_name, *isolation, *worktree_path, *container_path, *routing;
  gint64 depth = 0;
  gint64 batch_index = SUBAGENT_NO_BATCH_INDEX;

  g_return_val_if_fail (object != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!subagent_json_read_string (object, what, "parent_run_id", TRUE, &parent_run_id, error) ||
      !subagent_json_read_string (object, what, "def_name", TRUE, &def_name, error) ||
      !subagent_json_read_int (object, what, "depth", 0, G_MAXINT, &depth, error) ||
      !subagent_json_read_string (object, what, "isolation", FALSE, &isolation, error) ||
      !subagent_json_read_int (object, what, "batch_index", 0, G_MAXINT, &batch_index, error) ||
      !subagent_json_read_string (object, what, "worktree_path", FALSE, &worktree_path, error) ||
      !subagent_json_read_string (object, what, "container_path", FALSE, &container_path, error) ||
      !subagent_json_read_string (object, what, "routing", FALSE, &routing, error))
    return NULL;

  return g_object_new (SUBAGENT_TYPE_LINEAGE,
                       "parent-run-id", parent_run_id,
                       "def-name", def_name,
                       "depth", (guint) depth,
                       "isolation", isolation,
                       "batch-index", (gint) batch_index,
                       "worktree-path", worktree_path,
                       "container-path", container_path,
                       "routing", routing,
                       NULL);
}

/**
 * subagent_lineage_get_parent_run_id:
 * @self: a #SubagentLineage
 *
 * Gets the parent's run id, `""` when unknown.
 *
 * Returns: (transfer none): the parent's run id, `""` when unknown
 *
 * Since: 0.2
 */
const char *
subagent_lineage_get_parent_run_id (SubagentLineage *self)
{
  g_return_val_if_fail (SUBAGENT_IS_LINEAGE (self), NULL);
  return self->parent_run_id;
}

/**
 * subagent_lineage_get_def_name:
 * @self: a #SubagentLineage
 *
 * Gets the definition's name.
 *
 * Returns: (transfer none): the definition's name
 *
 * Since: 0.2
 */
const char *
subagent_lineage_get_def_name (SubagentLineage *self)
{
  g_return_val_if_fail (SUBAGENT_IS_LINEAGE (self), NULL);
  return self->def_name;
}

/**
 * subagent_lineage_get_depth:
 * @self: a #SubagentLineage
 *
 * Gets the child's depth.
 *
 * Returns: the child's depth
 *
 * Since: 0.2
 */
guint
subagent_lineage_get_depth (SubagentLineage *self)
{
  g_return_val_if_fail (SUBAGENT_IS_LINEAGE (self), 0);
  return self->depth;
}

/**
 * subagent_lineage_get_isolation:
 * @self: a #SubagentLineage
 *
 * Gets the isolation mode.
 *
 * Returns: (transfer none): the isolation mode
 *
 * Since: 0.2
 */
const char *
subagent_lineage_get_isolation (SubagentLineage *self)
{
  g_return_val_if_fail (SUBAGENT_IS_LINEAGE (self), NULL);
  return self->isolation;
}

/**
 * subagent_lineage_get_batch_index:
 * @self: a #SubagentLineage
 *
 * Gets the position in a batch, or %SUBAGENT_NO_BATCH_INDEX.
 *
 * Returns: the position in a batch, or %SUBAGENT_NO_BATCH_INDEX
 *
 * Since: 0.2
 */
gint
subagent_lineage_get_batch_index (SubagentLineage *self)
{
  g_return_val_if_fail (SUBAGENT_IS_LINEAGE (self), SUBAGENT_NO_BATCH_INDEX);
  return self->batch_index;
}

/**
 * subagent_lineage_get_worktree_path:
 * @self: a #SubagentLineage
 *
 * Gets the worktree path.
 *
 * Returns: (transfer none) (nullable): the worktree path
 *
 * Since: 0.2
 */
const char *
subagent_lineage_get_worktree_path (SubagentLineage *self)
{
  g_return_val_if_fail (SUBAGENT_IS_LINEAGE (self), NULL);
  return self->worktree_path;
}

/**
 * subagent_lineage_get_container_path:
 * @self: a #SubagentLineage
 *
 * Gets the directory-snapshot path.
 *
 * Returns: (transfer none) (nullable): the directory-snapshot path
 *
 * Since: 0.2
 */
const char *
subagent_lineage_get_container_path (SubagentLineage *self)
{
  g_return_val_if_fail (SUBAGENT_IS_LINEAGE (self), NULL);
  return self->container_path;
}

/**
 * subagent_lineage_to_json:
 * @self: a #SubagentLineage
 *
 * Serializes the lineage with reference 001's `to_dict()` keys.
 *
 * Returns: (transfer full): a new JSON object
 */
JsonObject *
subagent_lineage_to_json (SubagentLineage *self)
{
  JsonObject *object;

  g_return_val_if_fail (SUBAGENT_IS_LINEAGE (self), NULL);

  object = json_object_new ();
  json_object_set_string_member (object, "parent_run_id", self->parent_run_id);
  json_object_set_string_member (object, "def_name", self->def_name);
  json_object_set_int_member (object, "depth", self->depth);
  json_object_set_string_member (object, "isolation", self->isolation);
  if (self->batch_index == SUBAGENT_NO_BATCH_INDEX)
    json_object_set_null_member (object, "batch_index");
  else
    json_object_set_int_member (object, "batch_index", self->batch_index);
  subagent_json_set_nullable_string (object, "worktree_path", self->worktree_path);
  subagent_json_set_nullable_string (object, "container_path", self->container_path);
  if (self->routing != NULL)
    json_object_set_string_member (object, "routing", self->routing);
  return object;
}

void
_subagent_lineage_append_json (SubagentLineage *self,
                               GString         *out)
{
  _subagent_line_append_len (out, "{\"parent_run_id\":", 17);
  _subagent_json_line_append_string (out, self->parent_run_id);
  _subagent_json_line_append_string_member (out, "def_name", self->def_name);
  _subagent_json_line_append_int_member (out, "depth", self->depth);
  _subagent_json_line_append_string_member (out, "isolation", self->isolation);
  _subagent_json_line_append_index_member (out, "batch_index", self->batch_index);
  _subagent_json_line_append_string_member (out, "worktree_path", self->worktree_path);
  _subagent_json_line_append_string_member (out, "container_path", self->container_path);
  if (self->routing != NULL)
    _subagent_json_line_append_string_member (out, "routing", self->routing);
  g_string_append_c (out, '}');
}

/**
 * subagent_lineage_get_routing:
 * @self: a #SubagentLineage
 *
 * Gets how the risk policy chose the backend, if it did.
 *
 * Returns: (transfer none) (nullable): how the risk policy chose the
 *   backend, if it did
 *
 * Since: 0.2
 */
const char *
subagent_lineage_get_routing (SubagentLineage *self)
{
  g_return_val_if_fail (SUBAGENT_IS_LINEAGE (self), NULL);
  return self->routing;
}
