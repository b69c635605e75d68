/* subagent-delegation-tools.c: the delegation tools a host hands its model
 * (reference 001's tool registration).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-supervisor-private.h"

typedef enum {
  TOOL_GENERIC,
  TOOL_NAMED,
  TOOL_BATCH,
  TOOL_TEAM,
} ToolKind;

typedef struct {
  GWeakRef supervisor;  /* SubagentSupervisor */
  ToolKind kind;
  char *def_name;
} ToolData;

static void
tool_data_free (gpointer data)
{
  ToolData *tool = data;

  g_weak_ref_clear (&tool->supervisor);
  g_free (tool->def_name);
  g_free (tool);
}

/* ---- schemas (reference 001) ---- */

static JsonObject *
typed (const char *type,
       const char *description)
{
  JsonObject *object = json_object_new ();

  json_object_set_string_member (object, "type", type);
  json_object_set_string_member (object, "description", description);
  return object;
}

static JsonObject *
limit_schema (const char *description)
{
  JsonObject *object = typed ("integer", description);

  json_object_set_int_member (object, "minimum", 1);
  return object;
}

/* The modes this host has, from the installed descriptors (the list is
 * what the model may choose from; a plugin installed later shows up in the
 * tools made after it). */
static JsonObject *
isolation_schema (const char * const *modes)
{
  g_autofree char *list = g_strjoinv (", ", (char **) modes);
  g_autofree char *description =
    g_strdup_printf ("Where the subagent works: shared (the project itself), auto (the backend configured "
                     "for this project), or another isolation backend installed here (%s)", list);
  JsonObject *object = typed ("string", description);
  JsonArray *names = json_array_new ();

  for (guint i = 0; modes[i] != NULL; i++)
    json_array_add_string_element (names, modes[i]);
  json_object_set_array_member (object, "enum", names);
  return object;
}

/* max_iterations, max_tool_calls, isolation: every delegation tool takes them. */
static void
add_shared_properties (JsonObject         *properties,
                       const char * const *modes)
{
  json_object_set_object_member (properties, "max_iterations",
                                 limit_schema ("Most iterations (turns) the subagent may use"));
  json_object_set_object_member (properties, "max_tool_calls",
                                 limit_schema ("Most tool calls the subagent may make"));
  json_object_set_object_member (properties, "isolation", isolation_schema (modes));
}

static JsonObject *
task_schema (const char *description)
{
  JsonObject *object = typed ("string", description);

  json_object_set_int_member (object, "minLength", 1);
  return object;
}

static JsonObject *
object_schema (JsonObject         *properties,
               const char * const *required)
{
  JsonObject *schema = json_object_new ();
  JsonArray *names = json_array_new ();

  json_object_set_string_member (schema, "type", "object");
  json_object_set_object_member (schema, "properties", properties);
  for (guint i = 0; required[i] != NULL; i++)
    json_array_add_string_element (names, required[i]);
  json_object_set_array_member (schema, "required", names);
  json_object_set_boolean_member (schema, "additionalProperties", FALSE);
  return schema;
}

static JsonObject *
single_schema (const char * const *modes)
{
  JsonObject *properties = json_object_new ();

  json_object_set_object_member (properties, "task", task_schema ("What the subagent should do, with the context it needs"));
  add_shared_properties (properties, modes);
  return object_schema (properties, (const char * const []) { "task", NULL });
}

static JsonObject *
batch_schema (const char * const *modes)
{
  JsonObject *properties = json_object_new ();
  JsonObject *item_properties = json_object_new ();
  JsonObject *tasks = typed ("array", "The tasks, run in parallel; results come back in this order");
  JsonObject *def_name = typed ("string", "The definition to run the task with (default: the default subagent)");

  json_object_set_object_member (item_properties, "task", task_schema ("What this subagent should do"));
  json_object_set_string_member (def_name, "pattern", "^[A-Za-z0-9_-]+$");
  json_object_set_object_member (item_properties, "def_name", def_name);
  add_shared_properties (item_properties, modes);
  json_object_set_int_member (tasks, "minItems", 1);
  json_object_set_object_member (tasks, "items", object_schema (item_properties, (const char * const []) { "task", NULL }));
  json_object_set_object_member (properties, "tasks", tasks);
  add_shared_properties (properties, modes);
  return object_schema (properties, (const char * const []) { "tasks", NULL });
}

static JsonObject *
team_schema (const char * const *modes)
{
  JsonObject *properties = json_object_new ();
  JsonObject *team_name = typed ("string", "The team, from .subagent/teams/");

  json_object_set_string_member (team_name, "pattern", "^[A-Za-z0-9_-]+$");
  json_object_set_object_member (properties, "task", task_schema ("What the team should do"));
  json_object_set_object_member (properties, "team_name", team_name);
  add_shared_properties (properties, modes);
  return object_schema (properties, (const char * const []) { "task", "team_name", NULL });
}

/* ---- arguments ---- */

static gboolean
invalid_arguments (GError    **error,
                   const char *tool,
                   const char *format,
                   ...) G_GNUC_PRINTF (3, 4);

static gboolean
invalid_arguments (GError    **error,
                   const char *tool,
                   const char *format,
                   ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_INVALID_ARGUMENTS, "%s: %s", tool, message);
  return FALSE;
}

/* Checks the members of @arguments against the tool's keys; reads the
 * shared limits into @options. */
static gboolean
read_shared (SubagentSupervisor  *self,
             JsonObject          *arguments,
             const char          *tool,
             const char * const  *allowed,
             SubagentRunOptions  *options,
             GError             **error)
{
  g_autoptr(GList) members = json_object_get_members (arguments);
  static const char * const limits[] = { "max_iterations", "max_tool_calls" };

  for (GList *l = members; l != NULL; l = l->next)
    if (!g_strv_contains (allowed, l->data))
      return invalid_arguments (error, tool, "unknown argument “%s”", (const char *) l->data);
  for (guint i = 0; i < G_N_ELEMENTS (limits); i++)
    {
      JsonNode *node = json_object_get_member (arguments, limits[i]);
      gint64 value;

      if (node == NULL || JSON_NODE_HOLDS_NULL (node))
        continue;
      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64 ||
          (value = json_node_get_int (node)) < 1 || value > G_MAXINT)
        return invalid_arguments (error, tool, "“%s” must be a whole number ≥ 1", limits[i]);
      if (i == 0)
        subagent_run_options_set_max_iterations (options, (guint) value);
      else
        subagent_run_options_set_max_tool_calls (options, (guint) value);
    }
  if (json_object_has_member (arguments, "isolation") &&
      !JSON_NODE_HOLDS_NULL (json_object_get_member (arguments, "isolation")))
    {
      JsonNode *node = json_object_get_member (arguments, "isolation");
      SubagentPluginRegistry *plugins = subagent_manager_get_plugin_registry (self->manager);
      g_autoptr(GError) mode_error = NULL;

      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
        return invalid_arguments (error, tool, "“isolation” must be a string");
      if (subagent_plugin_registry_resolve_isolation (plugins, json_node_get_string (node), NULL, &mode_error) == NULL)
        return invalid_arguments (error, tool, "%s", mode_error->message);
      subagent_run_options_set_isolation (options, json_node_get_string (node));
    }
  return TRUE;
}

static const char *
required_string (JsonObject  *arguments,
                 const char  *tool,
                 const char  *key,
                 GError     **error)
{
  JsonNode *node = json_object_get_member (arguments, key);
  const char *value;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING ||
      *(value = json_node_get_string (node)) == '\0')
    {
      invalid_arguments (error, tool, "“%s” must be a non-empty string", key);
      return NULL;
    }
  return value;
}

/* Fills what an item left open with the call's shared inputs. */
static SubagentRunOptions *
with_defaults (SubagentRunOptions *item,
               SubagentRunOptions *shared)
{
  SubagentRunOptions *merged = _subagent_run_options_copy (item);

  if (subagent_run_options_get_max_iterations (merged) == 0)
    subagent_run_options_set_max_iterations (merged, subagent_run_options_get_max_iterations (shared));
  if (subagent_run_options_get_max_tool_calls (merged) == 0)
    subagent_run_options_set_max_tool_calls (merged, subagent_run_options_get_max_tool_calls (shared));
  if (subagent_run_options_get_isolation (merged) == NULL)
    subagent_run_options_set_isolation (merged, subagent_run_options_get_isolation (shared));
  return merged;
}

/* ---- waiting from a tool (tools are called synchronously) ---- */

typedef void (*StartFunc) (SubagentSupervisor *self, gpointer data, GCancellable *cancellable,
                           GAsyncReadyCallback callback, gpointer user_data);

typedef struct {
  gboolean done;
  GAsyncResult *result;
} Call;

static void
call_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Call *call = user_data;

  call->result = g_object_ref (result);
  call->done = TRUE;
}

/* Runs an async supervisor call to its end: on the supervisor's context when
 * this thread can own it (children finish there), else on a private one. */
static GAsyncResult *
call_sync (SubagentSupervisor *self,
           StartFunc           start,
           gpointer            data,
           GCancellable       *cancellable)
{
  Call call = { FALSE, NULL };
  gboolean own = g_main_context_acquire (self->context);
  g_autoptr(GMainContext) private_context = own ? NULL : g_main_context_new ();
  GMainContext *context = own ? self->context : private_context;

  g_main_context_push_thread_default (context);
  start (self, data, cancellable, call_done, &call);
  while (!call.done)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  if (own)
    g_main_context_release (self->context);
  return call.result;
}

static void
start_batch (SubagentSupervisor *self, gpointer data, GCancellable *cancellable,
             GAsyncReadyCallback callback, gpointer user_data)
{
  subagent_supervisor_run_batch_async (self, data, cancellable, callback, user_data);
}

static GPtrArray *
run_batch_sync (SubagentSupervisor  *self,
                GPtrArray           *items,
                GCancellable        *cancellable,
                GError             **error)
{
  g_autoptr(GAsyncResult) result = call_sync (self, start_batch, items, cancellable);

  return subagent_supervisor_run_batch_finish (self, result, error);
}

/* A failed child as a batch or team entry: its reason names its session. */
static JsonObject *
project_entry (SubagentSupervisor *self,
               SubagentRunResult  *result)
{
  JsonObject *object = subagent_supervisor_project_result (self, result);
  g_autoptr(GError) failure = NULL;

  if (!subagent_run_result_check (result, &failure))
    json_object_set_string_member (object, "reason", failure->message);
  return object;
}

/* ---- the tools ---- */

/* A node that owns @object (json_node_init_object() would add a ref). */
static JsonNode *
node_taking (JsonObject *object)
{
  JsonNode *node = json_node_init (json_node_alloc (), JSON_NODE_OBJECT);

  json_node_take_object (node, object);
  return node;
}

static JsonNode *
run_single (SubagentSupervisor *self,
           ToolData      *tool,
            const char    *tool_name,
            JsonObject    *arguments,
            GCancellable  *cancellable,
            GError       **error)
{
  static const char * const allowed[] = { "task", "max_iterations", "max_tool_calls", "isolation", NULL };
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *run_id = NULL;
  g_autoptr(GError) failure = NULL;
  const char *task;

  if (!read_shared (self, arguments, tool_name, allowed, options, error) ||
      (task = required_string (arguments, tool_name, "task", error)) == NULL)
    return NULL;
  subagent_run_options_set_def_name (options, tool->def_name);

  /* Refusals (caps, budget, shutdown) go to the caller as they are. */
  if ((run_id = subagent_supervisor_spawn (self, task, options, error)) == NULL)
    return NULL;
  if ((result = _subagent_supervisor_wait_sync (self, run_id, cancellable, error)) == NULL)
    return NULL;
  if (!subagent_run_result_check (result, &failure))
    {
      g_set_error_literal (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_FAILED, failure->message);
      return NULL;
    }
  return node_taking (subagent_supervisor_project_result (self, result));
}

static JsonNode *
run_batch (SubagentSupervisor *self,
          ToolData      *tool,
           JsonObject    *arguments,
           GCancellable  *cancellable,
           GError       **error)
{
  static const char * const allowed[] = { "tasks", "max_iterations", "max_tool_calls", "isolation", NULL };
  g_autoptr(SubagentRunOptions) shared = subagent_run_options_new ();
  g_autoptr(GPtrArray) parsed = NULL;
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) results = NULL;
  g_autoptr(GError) local = NULL;
  JsonArray *entries;
  JsonNode *tasks;

  if (!read_shared (self, arguments, SUBAGENT_TOOL_SUBAGENT_BATCH, allowed, shared, error))
    return NULL;
  tasks = json_object_get_member (arguments, "tasks");
  if (tasks == NULL || !JSON_NODE_HOLDS_ARRAY (tasks) || json_array_get_length (json_node_get_array (tasks)) == 0)
    {
      invalid_arguments (error, SUBAGENT_TOOL_SUBAGENT_BATCH, "“tasks” must be a non-empty array of {task, ...}");
      return NULL;
    }
  if ((parsed = subagent_batch_items_from_json (json_node_get_array (tasks), &local)) == NULL)
    {
      invalid_arguments (error, SUBAGENT_TOOL_SUBAGENT_BATCH, "%s", local->message);
      return NULL;
    }
  for (guint i = 0; i < parsed->len; i++)
    {
      g_autoptr(SubagentRunOptions) merged = with_defaults (subagent_batch_item_get_options (parsed->pdata[i]), shared);

      g_ptr_array_add (items, subagent_batch_item_new (subagent_batch_item_get_task (parsed->pdata[i]), merged));
    }

  if ((results = run_batch_sync (self, items, cancellable, error)) == NULL)
    return NULL;
  entries = json_array_new ();
  for (guint i = 0; i < results->len; i++)
    {
      JsonObject *entry = project_entry (self, results->pdata[i]);

      json_object_set_int_member (entry, "batch_index", i);
      json_array_add_object_element (entries, entry);
    }
  {
    JsonObject *object = json_object_new ();

    json_object_set_array_member (object, "results", entries);
    return node_taking (object);
  }
}

static JsonNode *
run_team (SubagentSupervisor *self,
         ToolData      *tool,
          JsonObject    *arguments,
          GCancellable  *cancellable,
          GError       **error)
{
  static const char * const allowed[] = { "task", "team_name", "max_iterations", "max_tool_calls", "isolation", NULL };
  g_autoptr(SubagentRunOptions) shared = subagent_run_options_new ();
  g_autoptr(SubagentTeam) team = NULL;
  g_autoptr(GPtrArray) member_items = NULL;
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) results = NULL;
  g_autoptr(GError) local = NULL;
  JsonObject *object;
  JsonArray *members;
  const char *task, *team_name;
  const char * const *names;

  if (!read_shared (self, arguments, SUBAGENT_TOOL_TEAM, allowed, shared, error) ||
      (task = required_string (arguments, SUBAGENT_TOOL_TEAM, "task", error)) == NULL ||
      (team_name = required_string (arguments, SUBAGENT_TOOL_TEAM, "team_name", error)) == NULL)
    return NULL;
  if ((team = subagent_team_lookup (subagent_manager_get_root (self->manager), team_name, &local)) == NULL)
    {
      g_set_error_literal (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_INVALID_ARGUMENTS, local->message);
      return NULL;
    }
  member_items = subagent_team_make_items (team, task);
  for (guint i = 0; i < member_items->len; i++)
    {
      g_autoptr(SubagentRunOptions) merged = with_defaults (subagent_batch_item_get_options (member_items->pdata[i]), shared);

      g_ptr_array_add (items, subagent_batch_item_new (task, merged));
    }
  if ((results = run_batch_sync (self, items, cancellable, error)) == NULL)
    return NULL;

  object = json_object_new ();
  members = json_array_new ();
  names = subagent_team_get_members (team);
  json_object_set_string_member (object, "team", subagent_team_get_name (team));
  for (guint i = 0; i < results->len; i++)
    {
      JsonObject *entry = project_entry (self, results->pdata[i]);

      json_object_set_string_member (entry, "member", names[i]);
      json_array_add_object_element (members, entry);
    }
  json_object_set_array_member (object, "members", members);

  if (subagent_team_get_aggregator (team) != NULL)
    {
      g_autoptr(SubagentRunOptions) options = _subagent_run_options_copy (shared);
      g_autofree char *aggregator_task = subagent_team_aggregator_task (team, task, results);
      g_autofree char *run_id = NULL;
      g_autoptr(SubagentRunResult) aggregate = NULL;
      g_autoptr(GError) failure = NULL;

      subagent_run_options_set_def_name (options, subagent_team_get_aggregator (team));
      if ((run_id = subagent_supervisor_spawn (self, aggregator_task, options, error)) == NULL ||
          (aggregate = _subagent_supervisor_wait_sync (self, run_id, cancellable, error)) == NULL)
        {
          json_object_unref (object);
          return NULL;
        }
      if (!subagent_run_result_check (aggregate, &failure))
        {
          g_set_error_literal (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_FAILED, failure->message);
          json_object_unref (object);
          return NULL;
        }
      json_object_set_string_member (object, "output", subagent_run_result_get_final_answer (aggregate));
    }
  else
    {
      GString *output = g_string_new (NULL);

      for (guint i = 0; i < results->len; i++)
        g_string_append_printf (output, "%s## %s\n%s\n", i ? "\n" : "", names[i],
                                subagent_run_result_get_final_answer (results->pdata[i]));
      json_object_set_string_member (object, "output", output->str);
      g_string_free (output, TRUE);
    }
  return node_taking (object);
}

static JsonNode *
invoke (SubagentTool  *tool,
        JsonObject    *arguments,
        GCancellable  *cancellable,
        gpointer       user_data,
        GError       **error)
{
  ToolData *data = user_data;
  g_autoptr(SubagentSupervisor) supervisor = g_weak_ref_get (&data->supervisor);
  g_autoptr(JsonObject) empty = NULL;

  if (supervisor == NULL)
    {
      g_set_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_FAILED,
                   "Tool %s cannot delegate: its supervisor was shut down and freed",
                   subagent_tool_get_name (tool));
      return NULL;
    }
  if (arguments == NULL)
    arguments = empty = json_object_new ();
  switch (data->kind)
    {
    case TOOL_GENERIC:
    case TOOL_NAMED:
      return run_single (supervisor, data, subagent_tool_get_name (tool), arguments, cancellable, error);
    case TOOL_BATCH:
      return run_batch (supervisor, data, arguments, cancellable, error);
    case TOOL_TEAM:
    default:
      return run_team (supervisor, data, arguments, cancellable, error);
    }
}

static SubagentTool *
make_tool (SubagentSupervisor *supervisor,
           ToolKind            kind,
           const char         *name,
           const char         *description,
           const char         *def_name,
           JsonObject         *schema_in)
{
  g_autoptr(JsonObject) schema = schema_in;
  ToolData *data = g_new0 (ToolData, 1);

  /* Weak: the supervisor's manager usually holds the registry these tools
   * go into, and a strong ref would make a cycle. */
  g_weak_ref_init (&data->supervisor, supervisor);
  data->kind = kind;
  data->def_name = g_strdup (def_name);
  return subagent_tool_new (name, description, schema, FALSE, invoke, data, tool_data_free);
}

/**
 * subagent_delegation_tool_name_for_def:
 * @def_name: a definition name
 *
 * The tool that runs a definition: `subagent_` and the name in lower case
 * with `-` as `_` (`Code-Reviewer` → `subagent_code_reviewer`).
 *
 * Returns: (transfer full) (nullable): the tool name, or %NULL when the
 *   name cannot make one, or would be `subagent_batch`
 */
char *
subagent_delegation_tool_name_for_def (const char *def_name)
{
  g_autofree char *folded = NULL;
  char *name;

  if (def_name == NULL || !subagent_def_name_is_valid (def_name))
    return NULL;
  folded = g_ascii_strdown (def_name, -1);
  g_strdelimit (folded, "-", '_');
  name = g_strconcat ("subagent_", folded, NULL);
  if (g_str_equal (name, SUBAGENT_TOOL_SUBAGENT_BATCH) || !subagent_tool_name_is_valid (name))
    g_clear_pointer (&name, g_free);
  return name;
}

/**
 * subagent_delegation_tools_new:
 * @supervisor: the supervisor that runs the children
 *
 * Makes the delegation tools of reference 001, each with its JSON Schema:
 *
 * - `subagent` (`task`): a child of the default definition;
 * - `subagent_<name>` (`task`) for each definition of the manager's catalog
 *   (see subagent_delegation_tool_name_for_def());
 * - `subagent_batch` (`tasks`: items with `task` and the optional
 *   `def_name`, `max_iterations`, `max_tool_calls`, `isolation`): a batch,
 *   results in input order;
 * - `team` (`task`, `team_name`): a team of `.subagent/teams/`.
 *
 * All of them also take the optional `max_iterations`, `max_tool_calls`
 * and `isolation` (for a batch or team, the default of its items). A tool
 * answers with subagent_supervisor_project_result()'s envelope (a batch
 * with `{"results": [...]}` carrying `batch_index`, a team with `members`
 * and `output`). A child that fails makes the call fail with
 * %SUBAGENT_TOOL_ERROR_FAILED naming the child's session; a refused spawn
 * fails with the supervisor's own error (the agent cap is never wrapped).
 * Invoking a tool blocks until the children end: call it from a worker
 * thread, or from the thread of the supervisor's context, which it then
 * iterates. Its cancellable ends the wait, never the children.
 *
 * Returns: (transfer container) (element-type SubagentTool): the tools
 */
GPtrArray *
subagent_delegation_tools_new (SubagentSupervisor *supervisor)
{
  GPtrArray *tools;
  g_autoptr(GPtrArray) defs = NULL;
  g_auto(GStrv) modes = NULL;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (supervisor), NULL);

  modes = subagent_plugin_registry_list_isolation_modes (subagent_manager_get_plugin_registry (supervisor->manager));

  tools = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (tools, make_tool (supervisor, TOOL_GENERIC, SUBAGENT_TOOL_SUBAGENT,
                                     "Delegate a task to a subagent that works in its own workspace and reports back",
                                     NULL, single_schema ((const char * const *) modes)));
  defs = subagent_manager_list_defs (supervisor->manager);
  for (guint i = 0; i < defs->len; i++)
    {
      const char *def_name = subagent_def_get_name (defs->pdata[i]);
      const char *description = subagent_def_get_description (defs->pdata[i]);
      g_autofree char *name = subagent_delegation_tool_name_for_def (def_name);
      g_autofree char *fallback = NULL;

      if (name == NULL)
        continue;
      if (description == NULL || *description == '\0')
        description = fallback = g_strdup_printf ("Delegate a task to the “%s” subagent", def_name);
      g_ptr_array_add (tools, make_tool (supervisor, TOOL_NAMED, name, description, def_name, single_schema ((const char * const *) modes)));
    }
  g_ptr_array_add (tools, make_tool (supervisor, TOOL_BATCH, SUBAGENT_TOOL_SUBAGENT_BATCH,
                                     "Delegate several tasks to subagents that run in parallel; "
                                     "results come back in the order of the tasks",
                                     NULL, batch_schema ((const char * const *) modes)));
  g_ptr_array_add (tools, make_tool (supervisor, TOOL_TEAM, SUBAGENT_TOOL_TEAM,
                                     "Give a task to a team of specialist subagents (from .subagent/teams/) "
                                     "and get their combined answer",
                                     NULL, team_schema ((const char * const *) modes)));
  return tools;
}

/**
 * subagent_delegation_tools_register:
 * @supervisor: the supervisor that runs the children
 * @registry: where to add them
 *
 * Adds subagent_delegation_tools_new() to @registry, replacing tools of the
 * same names. A child's view of @registry never shows them
 * (#SubagentChildToolRegistry hides delegation tools).
 *
 * Returns: how many tools were added
 */
guint
subagent_delegation_tools_register (SubagentSupervisor         *supervisor,
                                    SubagentSimpleToolRegistry *registry)
{
  g_autoptr(GPtrArray) tools = NULL;

  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (supervisor), 0);
  g_return_val_if_fail (SUBAGENT_IS_SIMPLE_TOOL_REGISTRY (registry), 0);

  tools = subagent_delegation_tools_new (supervisor);
  for (guint i = 0; i < tools->len; i++)
    subagent_simple_tool_registry_add (registry, tools->pdata[i]);
  return tools->len;
}
