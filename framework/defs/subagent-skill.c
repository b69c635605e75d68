/* subagent-skill.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "subagent.h"
#include "subagent-yaml-private.h"

/**
 * SubagentSkill:
 *
 * A skill a child runs: a Claude-style skill folder holding `SKILL.md`, or
 * such a file itself, inside the workspace root. Its front matter gives a
 * `name`, a `description`, optionally a `risk` (`low`, `medium`, `high`,
 * `critical`: reference 001's `skill_risk_level`) and optionally
 * `allowed-tools` (a list, or one string of names separated by commas or
 * spaces); the rest of the file is the skill's body, which the child gets
 * after its definition's system prompt. Immutable.
 *
 * Since: 0.2
 */
struct _SubagentSkill
{
  GObject parent_instance;

  char *path;            /* resolved SKILL.md */
  char *relative_path;   /* the same, from the root */
  char *name;
  char *description;
  SubagentRiskLevel risk_level;
  GStrv allowed_tools;   /* NULL: the skill does not narrow */
  char *body;
};

G_DEFINE_FINAL_TYPE (SubagentSkill, subagent_skill, G_TYPE_OBJECT)

/* A SKILL.md larger than this is not a skill but a mistake (or an attack). */
#define MAX_SKILL_SIZE (1024 * 1024)

static void
subagent_skill_finalize (GObject *object)
{
  SubagentSkill *self = SUBAGENT_SKILL (object);

  g_free (self->path);
  g_free (self->relative_path);
  g_free (self->name);
  g_free (self->description);
  g_strfreev (self->allowed_tools);
  g_free (self->body);
  G_OBJECT_CLASS (subagent_skill_parent_class)->finalize (object);
}

static void
subagent_skill_class_init (SubagentSkillClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_skill_finalize;
}

static void
subagent_skill_init (SubagentSkill *self)
{
}

static gboolean
skill_error (GError    **error,
             const char *path,
             const char *format,
             ...) G_GNUC_PRINTF (3, 4);

static gboolean
skill_error (GError    **error,
             const char *path,
             const char *format,
             ...)
{
  g_autofree char *what = NULL;
  va_list ap;

  va_start (ap, format);
  what = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT, "Skill %s: %s", path, what);
  return FALSE;
}

static const char *
string_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

/* `allowed-tools`: a list, or "Read, Grep Glob". */
static gboolean
read_allowed_tools (JsonObject  *front,
                    GStrv       *out,
                    const char  *path,
                    GError     **error)
{
  static const char * const keys[] = { "allowed-tools", "allowed_tools", NULL };
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  JsonNode *node = NULL;

  for (guint i = 0; keys[i] != NULL && node == NULL; i++)
    node = json_object_get_member (front, keys[i]);
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      g_auto(GStrv) words = g_regex_split_simple ("[\\s,]+", json_node_get_string (node), 0, 0);

      for (guint i = 0; words[i] != NULL; i++)
        if (*words[i] != '\0')
          g_strv_builder_add (builder, words[i]);
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *item = json_array_get_element (array, i);

          if (!JSON_NODE_HOLDS_VALUE (item) || json_node_get_value_type (item) != G_TYPE_STRING)
            return skill_error (error, path, "“allowed-tools” must list tool names");
          g_strv_builder_add (builder, json_node_get_string (item));
        }
    }
  else
    return skill_error (error, path, "“allowed-tools” must be a list of tool names or one string of them");
  *out = g_strv_builder_end (builder);
  return TRUE;
}

/**
 * subagent_skill_load:
 * @root: the workspace root; the skill must be inside it
 * @path: the skill: a folder holding `SKILL.md`, or a Markdown file;
 *   relative to @root, or absolute
 * @error: return location for a #GError
 *
 * Reads a skill. A path that resolves (symbolic links included) outside
 * @root, that does not exist or cannot be read, or whose front matter does
 * not parse or names an unknown risk level, is a
 * %SUBAGENT_ERROR_INVALID_ARGUMENT error naming the path. Blocks on the
 * file system (one small file).
 *
 * Returns: (transfer full): the skill, or %NULL with @error set
 *
 * Since: 0.2
 */
SubagentSkill *
subagent_skill_load (const char  *root,
                     const char  *path,
                     GError     **error)
{
  g_autoptr(SubagentSkill) self = NULL;
  g_autofree char *joined = NULL;
  g_autofree char *real_root = NULL;
  g_autofree char *real = NULL;
  g_autofree char *text = NULL;
  g_autofree char *front_text = NULL;
  g_autofree char *body = NULL;
  g_autoptr(JsonNode) front = NULL;
  g_autoptr(GError) local_error = NULL;
  struct stat st;
  gsize len = 0;
  char *resolved;

  g_return_val_if_fail (root != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (path == NULL || *path == '\0')
    return skill_error (error, "“”", "give the path of a skill folder or SKILL.md"), NULL;
  if ((resolved = realpath (root, NULL)) == NULL)
    return skill_error (error, path, "the workspace root %s cannot be resolved: %s", root, g_strerror (errno)), NULL;
  real_root = g_strdup (resolved);
  free (resolved);

  joined = g_path_is_absolute (path) ? g_strdup (path) : g_build_filename (real_root, path, NULL);
  if ((resolved = realpath (joined, NULL)) == NULL)
    return skill_error (error, path, "cannot be read: %s", g_strerror (errno)), NULL;
  real = g_strdup (resolved);
  free (resolved);
  if (stat (real, &st) == 0 && S_ISDIR (st.st_mode))
    {
      g_autofree char *inner = g_build_filename (real, "SKILL.md", NULL);

      if ((resolved = realpath (inner, NULL)) == NULL)
        return skill_error (error, path, "the folder has no readable SKILL.md: %s", g_strerror (errno)), NULL;
      g_free (real);
      real = g_strdup (resolved);
      free (resolved);
    }
  if (!g_str_has_prefix (real, real_root) || (real[strlen (real_root)] != '/' && !g_str_equal (real_root, "/")))
    return skill_error (error, path, "resolves to %s, outside the workspace root %s; skills must be inside it",
                        real, real_root), NULL;
  if (stat (real, &st) != 0 || !S_ISREG (st.st_mode))
    return skill_error (error, path, "%s is not a regular file", real), NULL;
  if (st.st_size > MAX_SKILL_SIZE)
    return skill_error (error, path, "%s is larger than %d bytes", real, MAX_SKILL_SIZE), NULL;
  if (!g_file_get_contents (real, &text, &len, &local_error))
    return skill_error (error, path, "cannot be read: %s", local_error->message), NULL;
  if (!g_utf8_validate (text, len, NULL))
    return skill_error (error, path, "%s is not UTF-8 text", real), NULL;

  self = g_object_new (SUBAGENT_TYPE_SKILL, NULL);
  self->path = g_strdup (real);
  self->relative_path = g_strdup (real + strlen (real_root) + (g_str_equal (real_root, "/") ? 0 : 1));

  if (subagent_yaml_split_front_matter (text, &front_text, &body, NULL) && front_text != NULL)
    {
      JsonObject *object;
      const char *risk;

      front = subagent_yaml_parse (front_text, -1, real, &local_error);
      if (front == NULL)
        return skill_error (error, path, "its front matter does not parse: %s", local_error->message), NULL;
      if (!JSON_NODE_HOLDS_OBJECT (front))
        return skill_error (error, path, "its front matter must be a mapping (name, description, risk, allowed-tools)"), NULL;
      object = json_node_get_object (front);
      self->name = g_strdup (string_member (object, "name"));
      self->description = g_strdup (string_member (object, "description"));
      risk = string_member (object, "risk");
      if (risk == NULL)
        risk = string_member (object, "risk_level");
      if (!subagent_risk_level_from_string (risk, &self->risk_level))
        return skill_error (error, path, "unknown risk “%s”: use low, medium, high or critical", risk), NULL;
      if (!read_allowed_tools (object, &self->allowed_tools, path, error))
        return NULL;
    }
  self->body = g_strdup (g_strstrip (body ? body : text));
  if (self->name == NULL)
    {
      /* The folder's name, as Claude names a skill without one. */
      g_autofree char *dir = g_path_get_dirname (real);

      self->name = g_path_get_basename (dir);
    }
  if (self->description == NULL)
    self->description = g_strdup ("");
  return g_steal_pointer (&self);
}

/**
 * subagent_skill_get_path:
 * @self: a #SubagentSkill
 *
 * Gets the resolved path of its `SKILL.md`.
 *
 * Returns: (transfer none): the resolved path of its `SKILL.md`
 *
 * Since: 0.2
 */
const char *
subagent_skill_get_path (SubagentSkill *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SKILL (self), NULL);
  return self->path;
}

/**
 * subagent_skill_get_relative_path:
 * @self: a #SubagentSkill
 *
 * Gets the path of its `SKILL.md` from the workspace root.
 *
 * Returns: (transfer none): the path of its `SKILL.md` from the workspace
 *   root (where a copy of the workspace has it too)
 *
 * Since: 0.2
 */
const char *
subagent_skill_get_relative_path (SubagentSkill *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SKILL (self), NULL);
  return self->relative_path;
}

/**
 * subagent_skill_get_name:
 * @self: a #SubagentSkill
 *
 * Gets its name.
 *
 * Returns: (transfer none): its name (front matter, else its folder's name)
 *
 * Since: 0.2
 */
const char *
subagent_skill_get_name (SubagentSkill *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SKILL (self), NULL);
  return self->name;
}

/**
 * subagent_skill_get_description:
 * @self: a #SubagentSkill
 *
 * Gets its description.
 *
 * Returns: (transfer none): its description (may be empty)
 *
 * Since: 0.2
 */
const char *
subagent_skill_get_description (SubagentSkill *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SKILL (self), NULL);
  return self->description;
}

/**
 * subagent_skill_get_risk_level:
 * @self: a #SubagentSkill
 *
 * Gets the risk its front matter declares.
 *
 * Returns: the risk its front matter declares, or %SUBAGENT_RISK_LEVEL_NONE
 *
 * Since: 0.2
 */
SubagentRiskLevel
subagent_skill_get_risk_level (SubagentSkill *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SKILL (self), SUBAGENT_RISK_LEVEL_NONE);
  return self->risk_level;
}

/**
 * subagent_skill_get_allowed_tools:
 * @self: a #SubagentSkill
 *
 * Gets the tools the skill allows.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the tools
 *   the skill allows, or %NULL when it does not narrow the child's tools
 *
 * Since: 0.2
 */
const char * const *
subagent_skill_get_allowed_tools (SubagentSkill *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SKILL (self), NULL);
  return (const char * const *) self->allowed_tools;
}

/**
 * subagent_skill_get_body:
 * @self: a #SubagentSkill
 *
 * Gets the skill's instructions.
 *
 * Returns: (transfer none): the skill's instructions (the file after its
 *   front matter)
 *
 * Since: 0.2
 */
const char *
subagent_skill_get_body (SubagentSkill *self)
{
  g_return_val_if_fail (SUBAGENT_IS_SKILL (self), NULL);
  return self->body;
}
