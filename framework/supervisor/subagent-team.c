/* subagent-team.c: teams of definitions from `<root>/.subagent/teams/`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "subagent.h"
#include "subagent-supervisor-private.h"
#include "subagent-yaml-private.h"

#define TEAM_FILE_MAX_BYTES (1024 * 1024)

/**
 * SubagentTeam:
 *
 * A team (reference 001's `team` tool): a name, the definitions of its
 * members, and optionally an aggregator definition that receives the
 * members' answers and gives the team's. Loaded from
 * the `.yaml` (or `.yml`) files of `<root>/.subagent/teams/`:
 *
 * ```yaml
 * name: reviewers
 * members:
 *   - security
 *   - style
 *   - def: tests
 *     isolation: worktree
 *     max_iterations: 4
 * aggregator: summarizer
 * ```
 *
 * A member is a definition name, or an object with `def` and the optional
 * `isolation`, `max_iterations` and `max_tool_calls`. A `description` may
 * say what the team is for. Immutable.
 */
struct _SubagentTeam
{
  GObject parent_instance;

  char *name;
  char *description;
  GStrv members;
  GPtrArray *member_options;  /* SubagentRunOptions, one per member */
  char *aggregator;
  char *source_path;
};

G_DEFINE_FINAL_TYPE (SubagentTeam, subagent_team, G_TYPE_OBJECT)

static void
subagent_team_finalize (GObject *object)
{
  SubagentTeam *self = SUBAGENT_TEAM (object);

  g_free (self->name);
  g_free (self->description);
  g_strfreev (self->members);
  g_clear_pointer (&self->member_options, g_ptr_array_unref);
  g_free (self->aggregator);
  g_free (self->source_path);
  G_OBJECT_CLASS (subagent_team_parent_class)->finalize (object);
}

static void
subagent_team_class_init (SubagentTeamClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_team_finalize;
}

static void
subagent_team_init (SubagentTeam *self)
{
}

static gboolean
invalid (GError    **error,
         const char *source,
         const char *format,
         ...) G_GNUC_PRINTF (3, 4);

static gboolean
invalid (GError    **error,
         const char *source,
         const char *format,
         ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, SUBAGENT_DEF_ERROR, SUBAGENT_DEF_ERROR_INVALID_VALUE, "%s: %s",
               source ? source : "<team>", message);
  return FALSE;
}

static gboolean
id_is_valid (const char *text)
{
  if (text == NULL || *text == '\0' || strlen (text) > 128)
    return FALSE;
  for (const char *p = text; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
      return FALSE;
  return TRUE;
}

static const char *
string_member (JsonObject *object,
               const char *key)
{
  JsonNode *node = json_object_get_member (object, key);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

/* A member: "name", or {def, isolation?, max_iterations?, max_tool_calls?}. */
static SubagentRunOptions *
read_member (JsonNode    *node,
             guint        index,
             const char  *source,
             GError     **error)
{
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(JsonObject) as_item = NULL;
  g_autoptr(SubagentBatchItem) item = NULL;
  g_autoptr(GError) local = NULL;
  JsonObject *object;
  JsonObjectIter iter;
  const char *key;
  JsonNode *value;

  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      if (!subagent_def_name_is_valid (json_node_get_string (node)))
        {
          invalid (error, source, "member %u, “%s”, cannot name a definition", index, json_node_get_string (node));
          return NULL;
        }
      subagent_run_options_set_def_name (options, json_node_get_string (node));
      return g_steal_pointer (&options);
    }
  if (!JSON_NODE_HOLDS_OBJECT (node) || string_member (json_node_get_object (node), "def") == NULL)
    {
      invalid (error, source, "member %u must be a definition name or an object with “def”", index);
      return NULL;
    }

  /* The object's limits are those of a batch item, with `def` for `def_name`. */
  object = json_node_get_object (node);
  as_item = json_object_new ();
  json_object_iter_init (&iter, object);
  while (json_object_iter_next (&iter, &key, &value))
    json_object_set_member (as_item, g_str_equal (key, "def") ? "def_name" : key, json_node_copy (value));
  json_object_set_string_member (as_item, "task", "-");
  if ((item = subagent_batch_item_new_from_json (as_item, &local)) == NULL)
    {
      invalid (error, source, "member %u: %s", index, local->message);
      return NULL;
    }
  return _subagent_run_options_copy (subagent_batch_item_get_options (item));
}

/**
 * subagent_team_new_from_json:
 * @object: the team's fields
 * @source_path: (nullable): where they come from, for messages
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the team, or %NULL with a
 *   %SUBAGENT_DEF_ERROR set: `name` missing or not `[A-Za-z0-9_-]`,
 *   `members` missing or empty, a member or `aggregator` that cannot
 *   name a definition, or an unknown key
 */
SubagentTeam *
subagent_team_new_from_json (JsonObject  *object,
                             const char  *source_path,
                             GError     **error)
{
  static const char * const known[] = { "name", "description", "members", "aggregator", NULL };
  g_autoptr(SubagentTeam) self = NULL;
  g_autoptr(GList) keys = NULL;
  g_autoptr(GStrvBuilder) names = g_strv_builder_new ();
  const char *name, *aggregator;
  JsonNode *members;

  g_return_val_if_fail (object != NULL, NULL);

  keys = json_object_get_members (object);
  for (GList *l = keys; l != NULL; l = l->next)
    if (!g_strv_contains (known, l->data))
      {
        invalid (error, source_path, "unknown key “%s” (a team has name, description, members, aggregator)",
                 (const char *) l->data);
        return NULL;
      }
  name = string_member (object, "name");
  if (name == NULL || *name == '\0')
    {
      g_set_error (error, SUBAGENT_DEF_ERROR, SUBAGENT_DEF_ERROR_MISSING_NAME, "%s: a team needs a “name”",
                   source_path ? source_path : "<team>");
      return NULL;
    }
  if (!id_is_valid (name))
    {
      invalid (error, source_path, "team name “%s” must be 1–128 characters of [A-Za-z0-9_-]", name);
      return NULL;
    }
  members = json_object_get_member (object, "members");
  if (members == NULL || !JSON_NODE_HOLDS_ARRAY (members) || json_array_get_length (json_node_get_array (members)) == 0)
    {
      invalid (error, source_path, "team “%s” needs “members”, a non-empty list of definitions", name);
      return NULL;
    }
  aggregator = string_member (object, "aggregator");
  if (json_object_has_member (object, "aggregator") && !JSON_NODE_HOLDS_NULL (json_object_get_member (object, "aggregator")) &&
      (aggregator == NULL || !subagent_def_name_is_valid (aggregator)))
    {
      invalid (error, source_path, "the aggregator of team “%s” must be a definition name", name);
      return NULL;
    }

  self = g_object_new (SUBAGENT_TYPE_TEAM, NULL);
  self->name = g_strdup (name);
  self->description = g_strdup (string_member (object, "description") ? string_member (object, "description") : "");
  self->aggregator = g_strdup (aggregator);
  self->source_path = g_strdup (source_path);
  self->member_options = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < json_array_get_length (json_node_get_array (members)); i++)
    {
      SubagentRunOptions *options = read_member (json_array_get_element (json_node_get_array (members), i), i,
                                                 source_path, error);
      if (options == NULL)
        return NULL;
      g_strv_builder_add (names, subagent_run_options_get_def_name (options));
      g_ptr_array_add (self->member_options, options);
    }
  self->members = g_strv_builder_end (names);
  return g_steal_pointer (&self);
}

/**
 * subagent_team_load_file:
 * @path: a team file (YAML)
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the team, or %NULL with @error set
 */
SubagentTeam *
subagent_team_load_file (const char  *path,
                         GError     **error)
{
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *text = NULL;
  gsize length;

  g_return_val_if_fail (path != NULL, NULL);

  if (!g_file_get_contents (path, &text, &length, error))
    return NULL;
  if (length > TEAM_FILE_MAX_BYTES)
    {
      g_set_error (error, SUBAGENT_DEF_ERROR, SUBAGENT_DEF_ERROR_UNREADABLE,
                   "%s: %" G_GSIZE_FORMAT " bytes is too large for a team file", path, length);
      return NULL;
    }
  if ((node = subagent_yaml_parse (text, length, path, error)) == NULL)
    return NULL;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, SUBAGENT_DEF_ERROR, SUBAGENT_DEF_ERROR_PARSE, "%s: a team file must be a mapping", path);
      return NULL;
    }
  return subagent_team_new_from_json (json_node_get_object (node), path, error);
}

static gint
compare_teams (gconstpointer a,
               gconstpointer b)
{
  return g_strcmp0 (subagent_team_get_name (*(SubagentTeam **) a), subagent_team_get_name (*(SubagentTeam **) b));
}

/* Team files of @root: *.yaml / *.yml that resolve inside the teams
 * directory (symlinks included). @problems gets a message per bad file. */
static GPtrArray *
list_teams (const char  *root,
            GPtrArray   *problems,
            GError     **error)
{
  g_autofree char *dir_path = g_build_filename (root, ".subagent", "teams", NULL);
  g_autofree char *real_dir = NULL;
  g_autoptr(GPtrArray) teams = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) local = NULL;
  const char *entry;

  if (!g_file_test (dir_path, G_FILE_TEST_IS_DIR))
    return g_steal_pointer (&teams);
  if ((real_dir = realpath (dir_path, NULL)) == NULL || (dir = g_dir_open (real_dir, 0, &local)) == NULL)
    {
      g_set_error (error, SUBAGENT_DEF_ERROR, SUBAGENT_DEF_ERROR_UNREADABLE, "Cannot read the teams directory %s: %s",
                   dir_path, local ? local->message : g_strerror (errno));
      return NULL;
    }
  while ((entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *real = NULL;
      g_autoptr(GError) problem = NULL;
      SubagentTeam *team;

      if (!g_str_has_suffix (entry, ".yaml") && !g_str_has_suffix (entry, ".yml"))
        continue;
      path = g_build_filename (real_dir, entry, NULL);
      real = realpath (path, NULL);
      if (real == NULL || !g_str_has_prefix (real, real_dir) || real[strlen (real_dir)] != '/')
        {
          if (problems != NULL)
            g_ptr_array_add (problems, g_strdup_printf ("%s resolves outside %s", path, real_dir));
          continue;
        }
      if ((team = subagent_team_load_file (real, &problem)) == NULL)
        {
          if (problems != NULL)
            g_ptr_array_add (problems, g_strdup (problem->message));
          continue;
        }
      g_ptr_array_add (teams, team);
    }
  g_ptr_array_sort (teams, compare_teams);
  return g_steal_pointer (&teams);
}

/**
 * subagent_team_list:
 * @root: a workspace root
 * @error: return location for a #GError
 *
 * Loads the teams of `<root>/.subagent/teams/`. Files that do not load, or
 * that resolve outside that directory, are skipped.
 *
 * Returns: (transfer container) (element-type SubagentTeam) (nullable): the
 *   teams, sorted by name; %NULL with @error set when the directory cannot
 *   be read
 */
GPtrArray *
subagent_team_list (const char  *root,
                    GError     **error)
{
  g_return_val_if_fail (root != NULL, NULL);
  return list_teams (root, NULL, error);
}

static char *
fold_name (const char *name)
{
  char *folded = g_ascii_strdown (name, -1);

  g_strdelimit (folded, "-", '_');
  return folded;
}

/**
 * subagent_team_lookup:
 * @root: a workspace root
 * @name: a team name (any case; `-` and `_` alike)
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the team, or %NULL with
 *   %SUBAGENT_ERROR_NOT_FOUND (naming the files that did not load, if any)
 */
SubagentTeam *
subagent_team_lookup (const char  *root,
                      const char  *name,
                      GError     **error)
{
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) teams = NULL;
  g_autofree char *wanted = NULL;

  g_return_val_if_fail (root != NULL, NULL);

  if (!id_is_valid (name))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "“%s” is not a team name (1–128 characters of [A-Za-z0-9_-])", name ? name : "(null)");
      return NULL;
    }
  if ((teams = list_teams (root, problems, error)) == NULL)
    return NULL;
  wanted = fold_name (name);
  for (guint i = 0; i < teams->len; i++)
    {
      g_autofree char *candidate = fold_name (subagent_team_get_name (teams->pdata[i]));

      if (g_str_equal (candidate, wanted))
        return g_object_ref (teams->pdata[i]);
    }
  g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_NOT_FOUND,
               "No team “%s” in %s/.subagent/teams/%s%s", name, root,
               problems->len ? "; a team file did not load: " : "",
               problems->len ? (const char *) problems->pdata[0] : "");
  return NULL;
}

/**
 * subagent_team_get_name:
 * @self: a #SubagentTeam
 *
 * Returns: (transfer none): the name
 */
const char *
subagent_team_get_name (SubagentTeam *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TEAM (self), NULL);
  return self->name;
}

/**
 * subagent_team_get_description:
 * @self: a #SubagentTeam
 *
 * Returns: (transfer none): the description (`""` when none)
 */
const char *
subagent_team_get_description (SubagentTeam *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TEAM (self), NULL);
  return self->description;
}

/**
 * subagent_team_get_members:
 * @self: a #SubagentTeam
 *
 * Returns: (transfer none) (array zero-terminated=1): the members' definition names, in order
 */
const char * const *
subagent_team_get_members (SubagentTeam *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TEAM (self), NULL);
  return (const char * const *) self->members;
}

/**
 * subagent_team_get_aggregator:
 * @self: a #SubagentTeam
 *
 * Returns: (transfer none) (nullable): the aggregator's definition name
 */
const char *
subagent_team_get_aggregator (SubagentTeam *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TEAM (self), NULL);
  return self->aggregator;
}

/**
 * subagent_team_get_source_path:
 * @self: a #SubagentTeam
 *
 * Returns: (transfer none) (nullable): the file the team came from
 */
const char *
subagent_team_get_source_path (SubagentTeam *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TEAM (self), NULL);
  return self->source_path;
}

/**
 * subagent_team_make_items:
 * @self: a #SubagentTeam
 * @task: the team's task
 *
 * Returns: (transfer container) (element-type SubagentBatchItem): one batch
 *   item per member, all with @task
 */
GPtrArray *
subagent_team_make_items (SubagentTeam *self,
                          const char   *task)
{
  GPtrArray *items;

  g_return_val_if_fail (SUBAGENT_IS_TEAM (self), NULL);
  g_return_val_if_fail (task != NULL, NULL);

  items = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < self->member_options->len; i++)
    g_ptr_array_add (items, subagent_batch_item_new (task, self->member_options->pdata[i]));
  return items;
}

/**
 * subagent_team_aggregator_task:
 * @self: a #SubagentTeam
 * @task: the team's task
 * @member_results: (element-type SubagentRunResult): the members' results, in member order
 *
 * The aggregator's task: the team's task, then each member's answer under
 * a heading with its definition and status (and reason when it did not
 * complete), then the request to combine them.
 *
 * Returns: (transfer full): the text
 */
char *
subagent_team_aggregator_task (SubagentTeam *self,
                               const char   *task,
                               GPtrArray    *member_results)
{
  GString *text;

  g_return_val_if_fail (SUBAGENT_IS_TEAM (self), NULL);
  g_return_val_if_fail (task != NULL && member_results != NULL, NULL);

  text = g_string_new (task);
  g_string_append_printf (text, "\n\nThe members of team “%s” answered:\n", self->name);
  for (guint i = 0; i < member_results->len; i++)
    {
      SubagentRunResult *result = member_results->pdata[i];
      const char *answer = subagent_run_result_get_final_answer (result);
      g_autofree char *reason = subagent_run_result_dup_reason (result);
      SubagentRunStatus status = subagent_run_result_get_status (result);

      g_string_append_printf (text, "\n### %u. %s (%s%s%s)\n%s\n", i + 1,
                              i < g_strv_length (self->members) ? self->members[i] : "member",
                              subagent_run_status_to_string (status), reason ? ": " : "", reason ? reason : "",
                              *answer ? answer : "(no answer)");
    }
  g_string_append (text, "\nCombine their answers into the team's answer to the task.\n");
  return g_string_free (text, FALSE);
}
