/* subagent-tool.c: one tool a registry offers.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-json-private.h"

/**
 * SubagentTool:
 *
 * One tool a [iface@ToolRegistry] offers: a name, a description, a JSON
 * schema of its input, whether it is destructive (and so subject to approval),
 * and the function that runs it.
 *
 * Tools are immutable: the input schema is copied and sealed when the tool is
 * built, so a registry can hand the same tool to a parent and to its children.
 */
struct _SubagentTool
{
  GObject parent_instance;

  char *name;
  char *description;
  JsonObject *input_schema;
  gboolean destructive;

  SubagentToolFunc func;
  gpointer user_data;
  GDestroyNotify destroy;
};

G_DEFINE_FINAL_TYPE (SubagentTool, subagent_tool, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_NAME,
  PROP_DESCRIPTION,
  PROP_INPUT_SCHEMA,
  PROP_DESTRUCTIVE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/**
 * subagent_tool_name_is_valid:
 * @name: (nullable): a candidate tool name
 *
 * Checks that @name can name a tool: non-empty and made of ASCII letters,
 * digits, `_`, `.` and `-` only.
 *
 * Returns: %TRUE if @name is a valid tool name
 */
gboolean
subagent_tool_name_is_valid (const char *name)
{
  if (name == NULL || *name == '\0')
    return FALSE;
  for (const char *p = name; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '.' && *p != '-')
      return FALSE;
  return TRUE;
}

static void
subagent_tool_constructed (GObject *object)
{
  SubagentTool *self = SUBAGENT_TOOL (object);

  G_OBJECT_CLASS (subagent_tool_parent_class)->constructed (object);

  if (!subagent_tool_name_is_valid (self->name))
    g_critical ("SubagentTool: “%s” is not a valid tool name; use ASCII letters, digits, “_”, “.” and “-”",
                self->name ? self->name : "(null)");
  if (self->description == NULL)
    self->description = g_strdup ("");
  if (self->input_schema == NULL)
    {
      self->input_schema = json_object_new ();
      json_object_seal (self->input_schema);
    }
}

static void
subagent_tool_finalize (GObject *object)
{
  SubagentTool *self = SUBAGENT_TOOL (object);

  if (self->destroy != NULL)
    self->destroy (self->user_data);
  g_clear_pointer (&self->name, g_free);
  g_clear_pointer (&self->description, g_free);
  g_clear_pointer (&self->input_schema, json_object_unref);

  G_OBJECT_CLASS (subagent_tool_parent_class)->finalize (object);
}

static void
subagent_tool_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  SubagentTool *self = SUBAGENT_TOOL (object);

  switch (prop_id)
    {
    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;
    case PROP_DESCRIPTION:
      g_value_set_string (value, self->description);
      break;
    case PROP_INPUT_SCHEMA:
      g_value_set_boxed (value, self->input_schema);
      break;
    case PROP_DESTRUCTIVE:
      g_value_set_boolean (value, self->destructive);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_tool_set_property (GObject      *object,
                            guint         prop_id,
                            const GValue *value,
                            GParamSpec   *pspec)
{
  SubagentTool *self = SUBAGENT_TOOL (object);

  switch (prop_id)
    {
    case PROP_NAME:
      self->name = g_value_dup_string (value);
      break;
    case PROP_DESCRIPTION:
      self->description = g_value_dup_string (value);
      break;
    case PROP_INPUT_SCHEMA:
      {
        JsonObject *schema = g_value_get_boxed (value);
        self->input_schema = schema ? subagent_json_object_sealed_copy (schema) : NULL;
      }
      break;
    case PROP_DESTRUCTIVE:
      self->destructive = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_tool_class_init (SubagentToolClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = subagent_tool_constructed;
  object_class->finalize = subagent_tool_finalize;
  object_class->get_property = subagent_tool_get_property;
  object_class->set_property = subagent_tool_set_property;

  /**
   * SubagentTool:name:
   *
   * The tool's name, unique within a registry: ASCII letters, digits, `_`,
   * `.` and `-`.
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentTool:description:
   *
   * What the tool does, for the model choosing it. Never %NULL once built.
   */
  properties[PROP_DESCRIPTION] =
    g_param_spec_string ("description", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentTool:input-schema:
   *
   * The JSON schema of the tool's arguments. The tool keeps a sealed copy of
   * the object it is given; an empty object when none was given.
   */
  properties[PROP_INPUT_SCHEMA] =
    g_param_spec_boxed ("input-schema", NULL, NULL, JSON_TYPE_OBJECT,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentTool:destructive:
   *
   * Whether the tool changes state outside the agent (writes files, runs
   * commands...); destructive calls of children go through approval.
   */
  properties[PROP_DESTRUCTIVE] =
    g_param_spec_boolean ("destructive", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_tool_init (SubagentTool *self)
{
}

/**
 * subagent_tool_new:
 * @name: the tool's name (see subagent_tool_name_is_valid())
 * @description: (nullable): what the tool does
 * @input_schema: (nullable): the JSON schema of its arguments; copied
 * @destructive: whether the tool changes state outside the agent
 * @func: (scope notified) (closure user_data) (destroy destroy) (nullable): the function that runs the tool
 * @user_data: data passed to @func
 * @destroy: (nullable): frees @user_data when the tool is finalized
 *
 * Creates a tool. A tool without @func fails every call with
 * %SUBAGENT_TOOL_ERROR_FAILED.
 *
 * Returns: (transfer full): a new #SubagentTool (%NULL, with a critical, if @name is not a valid tool name)
 */
SubagentTool *
subagent_tool_new (const char       *name,
                   const char       *description,
                   JsonObject       *input_schema,
                   gboolean          destructive,
                   SubagentToolFunc  func,
                   gpointer          user_data,
                   GDestroyNotify    destroy)
{
  SubagentTool *self;

  g_return_val_if_fail (subagent_tool_name_is_valid (name), NULL);

  self = g_object_new (SUBAGENT_TYPE_TOOL,
                       "name", name,
                       "description", description,
                       "input-schema", input_schema,
                       "destructive", destructive,
                       NULL);
  self->func = func;
  self->user_data = user_data;
  self->destroy = destroy;
  return self;
}

/**
 * subagent_tool_get_name:
 * @self: a #SubagentTool
 *
 * Returns: the tool's name
 */
const char *
subagent_tool_get_name (SubagentTool *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TOOL (self), NULL);
  return self->name;
}

/**
 * subagent_tool_get_description:
 * @self: a #SubagentTool
 *
 * Returns: the tool's description, possibly empty
 */
const char *
subagent_tool_get_description (SubagentTool *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TOOL (self), NULL);
  return self->description;
}

/**
 * subagent_tool_get_input_schema:
 * @self: a #SubagentTool
 *
 * Returns: (transfer none): the sealed JSON schema of the tool's arguments
 */
JsonObject *
subagent_tool_get_input_schema (SubagentTool *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TOOL (self), NULL);
  return self->input_schema;
}

/**
 * subagent_tool_get_destructive:
 * @self: a #SubagentTool
 *
 * Returns: whether the tool is destructive
 */
gboolean
subagent_tool_get_destructive (SubagentTool *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TOOL (self), FALSE);
  return self->destructive;
}

static gboolean
node_has_json_type (JsonNode   *node,
                    const char *type)
{
  GType vt;

  if (g_str_equal (type, "null"))
    return JSON_NODE_HOLDS_NULL (node);
  if (g_str_equal (type, "object"))
    return JSON_NODE_HOLDS_OBJECT (node);
  if (g_str_equal (type, "array"))
    return JSON_NODE_HOLDS_ARRAY (node);
  if (!JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  vt = json_node_get_value_type (node);
  if (g_str_equal (type, "string"))
    return vt == G_TYPE_STRING;
  if (g_str_equal (type, "boolean"))
    return vt == G_TYPE_BOOLEAN;
  if (g_str_equal (type, "integer"))
    return vt == G_TYPE_INT64;
  if (g_str_equal (type, "number"))
    return vt == G_TYPE_INT64 || vt == G_TYPE_DOUBLE;
  return TRUE; /* a type this light check does not know: leave it to the tool */
}

static const char *
member_string (JsonObject *object,
               const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

/* A light check of the schema's top level: `required` members are present and
 * members with a simple `type` have it. Full JSON-schema validation is the
 * tool's business. */
static gboolean
check_arguments (SubagentTool  *self,
                 JsonObject    *arguments,
                 GError       **error)
{
  JsonNode *required = json_object_get_member (self->input_schema, "required");
  JsonNode *properties_node = json_object_get_member (self->input_schema, "properties");
  JsonObject *props;
  g_autoptr(GList) members = NULL;

  if (required != NULL && JSON_NODE_HOLDS_ARRAY (required))
    {
      JsonArray *array = json_node_get_array (required);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *element = json_array_get_element (array, i);
          const char *member;

          if (!JSON_NODE_HOLDS_VALUE (element) || json_node_get_value_type (element) != G_TYPE_STRING)
            continue;
          member = json_node_get_string (element);
          if (!json_object_has_member (arguments, member))
            {
              g_set_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_INVALID_ARGUMENTS,
                           "Tool “%s” needs the argument “%s”; add it to the call",
                           self->name, member);
              return FALSE;
            }
        }
    }

  if (properties_node == NULL || !JSON_NODE_HOLDS_OBJECT (properties_node))
    return TRUE;
  props = json_node_get_object (properties_node);
  members = json_object_get_members (props);
  for (GList *l = members; l != NULL; l = l->next)
    {
      const char *member = l->data;
      JsonNode *spec = json_object_get_member (props, member);
      const char *type;

      if (!JSON_NODE_HOLDS_OBJECT (spec) || !json_object_has_member (arguments, member))
        continue;
      type = member_string (json_node_get_object (spec), "type");
      if (type != NULL && !node_has_json_type (json_object_get_member (arguments, member), type))
        {
          g_set_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_INVALID_ARGUMENTS,
                       "Argument “%s” of tool “%s” must be of type %s",
                       member, self->name, type);
          return FALSE;
        }
    }
  return TRUE;
}

/**
 * subagent_tool_call:
 * @self: a #SubagentTool
 * @arguments: (nullable): the call's arguments; %NULL means no arguments
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs the tool in the calling thread. The arguments are first checked
 * against the top level of the input schema (`required` members and simple
 * `type`s); a mismatch is %SUBAGENT_TOOL_ERROR_INVALID_ARGUMENTS.
 *
 * Returns: (transfer full): the tool's result, or %NULL with @error set
 */
JsonNode *
subagent_tool_call (SubagentTool  *self,
                    JsonObject    *arguments,
                    GCancellable  *cancellable,
                    GError       **error)
{
  g_autoptr(JsonObject) empty = NULL;
  g_autoptr(GError) local_error = NULL;
  JsonNode *result;

  g_return_val_if_fail (SUBAGENT_IS_TOOL (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (arguments == NULL)
    arguments = empty = json_object_new ();

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  if (self->func == NULL)
    {
      g_set_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_FAILED,
                   "Tool “%s” has no implementation; build it with subagent_tool_new() and a function",
                   self->name);
      return NULL;
    }
  if (!check_arguments (self, arguments, error))
    return NULL;

  result = self->func (self, arguments, cancellable, self->user_data, &local_error);
  if (result == NULL && local_error == NULL)
    g_set_error (&local_error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_FAILED,
                 "Tool “%s” failed without saying why", self->name);
  if (result != NULL && local_error != NULL)
    {
      g_critical ("Tool “%s” returned a result and set an error (%s); dropping the error",
                  self->name, local_error->message);
      g_clear_error (&local_error);
    }
  if (local_error != NULL)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return result;
}
