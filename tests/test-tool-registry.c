/* test-tool-registry.c: tools, the simple registry and the narrowing child view.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "test-support.h"

/* A tool whose function counts its calls and answers with its own name. */
typedef struct {
  int calls; /* atomic */
} CallCounter;

static JsonNode *
echo_tool_func (SubagentTool  *tool,
                JsonObject    *arguments,
                GCancellable  *cancellable,
                gpointer       user_data,
                GError       **error)
{
  CallCounter *counter = user_data;
  JsonNode *node = json_node_new (JSON_NODE_VALUE);

  if (counter != NULL)
    g_atomic_int_inc (&counter->calls);
  json_node_set_string (node, subagent_tool_get_name (tool));
  return node;
}

static SubagentTool *
make_tool (const char  *name,
           CallCounter *counter)
{
  return subagent_tool_new (name, "a test tool", NULL, FALSE, echo_tool_func, counter, NULL);
}

/* A parent registry holding one counting tool per name. */
static SubagentSimpleToolRegistry *
make_parent (CallCounter         *counter,
             const char * const  *names)
{
  SubagentSimpleToolRegistry *registry = subagent_simple_tool_registry_new ();

  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autoptr(SubagentTool) tool = make_tool (names[i], counter);
      subagent_simple_tool_registry_add (registry, tool);
    }
  return registry;
}

static char *
joined_names (SubagentToolRegistry *registry)
{
  g_auto(GStrv) names = subagent_tool_registry_list_names (registry);
  return g_strjoinv (",", names);
}

static const char * const parent_names[] = {
  "bash", "edit", "grep", "read", "subagent", "subagent_batch", "subagent_reviewer", "write", NULL
};

/* ---- SubagentTool ------------------------------------------------------ */

static void
test_tool_name_validation (void)
{
  const char *valid[] = { "read", "Read_File", "fs.read", "x-1", "a", NULL };
  const char *invalid[] = { "", "read file", "a/b", "na\xc3\xafve", "tab\t", "semi;colon", NULL };

  for (guint i = 0; valid[i]; i++)
    g_assert_true (subagent_tool_name_is_valid (valid[i]));
  for (guint i = 0; invalid[i]; i++)
    g_assert_false (subagent_tool_name_is_valid (invalid[i]));
  g_assert_false (subagent_tool_name_is_valid (NULL));

  g_test_expect_message ("Subagent", G_LOG_LEVEL_CRITICAL, "*subagent_tool_name_is_valid*");
  g_assert_null (subagent_tool_new ("a/b", NULL, NULL, FALSE, echo_tool_func, NULL, NULL));
  g_test_assert_expected_messages ();
}

static gboolean destroyed;

static void
mark_destroyed (gpointer data)
{
  destroyed = TRUE;
}

static void
test_tool_call_passes_arguments_and_frees_data (void)
{
  CallCounter counter = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;
  SubagentTool *tool;

  destroyed = FALSE;
  tool = subagent_tool_new ("write", NULL, NULL, TRUE, echo_tool_func, &counter, mark_destroyed);
  g_assert_cmpstr (subagent_tool_get_name (tool), ==, "write");
  g_assert_cmpstr (subagent_tool_get_description (tool), ==, "");
  g_assert_true (subagent_tool_get_destructive (tool));
  g_assert_cmpuint (json_object_get_size (subagent_tool_get_input_schema (tool)), ==, 0);

  result = subagent_tool_call (tool, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_node_get_string (result), ==, "write");
  g_assert_cmpint (counter.calls, ==, 1);

  g_assert_false (destroyed);
  g_object_unref (tool);
  g_assert_true (destroyed);
}

static void
test_tool_call_checks_schema_top_level (void)
{
  CallCounter counter = { 0 };
  g_autoptr(JsonNode) schema_node = json_from_string (
    "{\"type\":\"object\",\"required\":[\"path\"],"
    "\"properties\":{\"path\":{\"type\":\"string\"},\"count\":{\"type\":\"integer\"}}}", NULL);
  g_autoptr(SubagentTool) tool =
    subagent_tool_new ("read", "reads", json_node_get_object (schema_node), FALSE, echo_tool_func, &counter, NULL);
  g_autoptr(JsonObject) args = json_object_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;

  result = subagent_tool_call (tool, args, NULL, &error);
  g_assert_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_INVALID_ARGUMENTS);
  g_assert_nonnull (strstr (error->message, "path"));
  g_assert_null (result);
  g_clear_error (&error);

  json_object_set_int_member (args, "path", 3);
  result = subagent_tool_call (tool, args, NULL, &error);
  g_assert_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_INVALID_ARGUMENTS);
  g_clear_error (&error);
  g_assert_cmpint (counter.calls, ==, 0);

  json_object_set_string_member (args, "path", "README");
  json_object_set_int_member (args, "count", 2);
  result = subagent_tool_call (tool, args, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  g_assert_cmpint (counter.calls, ==, 1);
}

static void
test_tool_schema_is_sealed_copy (void)
{
  g_autoptr(JsonObject) schema = json_object_new ();
  g_autoptr(SubagentTool) tool = NULL;
  JsonObject *kept;

  json_object_set_string_member (schema, "type", "object");
  tool = subagent_tool_new ("read", NULL, schema, FALSE, echo_tool_func, NULL, NULL);
  json_object_set_string_member (schema, "type", "changed-later");

  kept = subagent_tool_get_input_schema (tool);
  g_assert_true (kept != schema);
  g_assert_cmpstr (json_object_get_string_member (kept, "type"), ==, "object");
  g_assert_true (json_object_is_immutable (kept));
}

static void
test_tool_without_function_fails (void)
{
  g_autoptr(SubagentTool) tool = g_object_new (SUBAGENT_TYPE_TOOL, "name", "noop", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = subagent_tool_call (tool, NULL, NULL, &error);

  g_assert_null (result);
  g_assert_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_FAILED);
}

static void
test_tool_call_cancelled_does_not_run (void)
{
  CallCounter counter = { 0 };
  g_autoptr(SubagentTool) tool = make_tool ("read", &counter);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;

  g_cancellable_cancel (cancellable);
  result = subagent_tool_call (tool, NULL, cancellable, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (result);
  g_assert_cmpint (counter.calls, ==, 0);
}

/* ---- SubagentSimpleToolRegistry ---------------------------------------- */

static void
test_simple_registry_lists_sorted_and_looks_up (void)
{
  const char * const names[] = { "write", "bash", "read", NULL };
  g_autoptr(SubagentSimpleToolRegistry) registry = make_parent (NULL, names);
  SubagentToolRegistry *r = SUBAGENT_TOOL_REGISTRY (registry);
  g_autoptr(GPtrArray) tools = subagent_tool_registry_list_tools (r);
  g_autofree char *joined = joined_names (r);
  g_autoptr(SubagentTool) read = subagent_tool_registry_lookup (r, "read");

  g_assert_cmpuint (tools->len, ==, 3);
  g_assert_cmpstr (subagent_tool_get_name (tools->pdata[0]), ==, "bash");
  g_assert_cmpstr (joined, ==, "bash,read,write");
  g_assert_nonnull (read);
  g_assert_cmpstr (subagent_tool_get_name (read), ==, "read");
  g_assert_true (subagent_tool_registry_has_tool (r, "bash"));
  g_assert_false (subagent_tool_registry_has_tool (r, "Bash"));
  g_assert_null (subagent_tool_registry_lookup (r, "missing"));
}

static void
test_simple_registry_add_replaces_and_remove (void)
{
  CallCounter first = { 0 }, second = { 0 };
  g_autoptr(SubagentSimpleToolRegistry) registry = subagent_simple_tool_registry_new ();
  SubagentToolRegistry *r = SUBAGENT_TOOL_REGISTRY (registry);
  g_autoptr(SubagentTool) a = make_tool ("read", &first);
  g_autoptr(SubagentTool) b = make_tool ("read", &second);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;
  g_autofree char *joined = NULL;

  subagent_simple_tool_registry_add (registry, a);
  subagent_simple_tool_registry_add (registry, b);
  subagent_simple_tool_registry_add (registry, b);
  joined = joined_names (r);
  g_assert_cmpstr (joined, ==, "read");

  result = subagent_tool_registry_invoke (r, "read", NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (first.calls, ==, 0);
  g_assert_cmpint (second.calls, ==, 1);

  g_assert_true (subagent_simple_tool_registry_remove (registry, "read"));
  g_assert_false (subagent_simple_tool_registry_remove (registry, "read"));
  g_assert_false (subagent_tool_registry_has_tool (r, "read"));
}

static void
test_registry_default_invoke_not_found (void)
{
  g_autoptr(SubagentSimpleToolRegistry) registry = subagent_simple_tool_registry_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result =
    subagent_tool_registry_invoke (SUBAGENT_TOOL_REGISTRY (registry), "nope", NULL, NULL, &error);

  g_assert_null (result);
  g_assert_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "nope"));
}

typedef struct {
  SubagentSimpleToolRegistry *registry;
  guint index;
} WorkerData;

static gpointer
registry_worker (gpointer data)
{
  WorkerData *w = data;
  SubagentToolRegistry *r = SUBAGENT_TOOL_REGISTRY (w->registry);

  for (guint i = 0; i < 500; i++)
    {
      g_autofree char *name = g_strdup_printf ("t%u-%u", w->index, i % 7);
      g_autoptr(SubagentTool) tool = make_tool (name, NULL);
      g_autoptr(GPtrArray) tools = NULL;
      g_autoptr(SubagentTool) found = NULL;

      subagent_simple_tool_registry_add (w->registry, tool);
      found = subagent_tool_registry_lookup (r, name);
      g_assert_nonnull (found);
      tools = subagent_tool_registry_list_tools (r);
      g_assert_cmpuint (tools->len, >=, 1);
      if (i % 3 == 0)
        g_assert_true (subagent_simple_tool_registry_remove (w->registry, name));
    }
  return NULL;
}

static void
test_simple_registry_thread_safe (void)
{
  g_autoptr(SubagentSimpleToolRegistry) registry = subagent_simple_tool_registry_new ();
  WorkerData data[4];
  GThread *threads[4];

  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    {
      data[i] = (WorkerData) { registry, i };
      threads[i] = g_thread_new ("registry-worker", registry_worker, &data[i]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);

  /* Each worker ends with names t<i>-0..6 present except those removed last. */
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    for (guint k = 0; k < 7; k++)
      {
        g_autofree char *name = g_strdup_printf ("t%u-%u", i, k);
        /* Name k was last touched at the largest i <= 499 with i % 7 == k,
         * and removed then iff i % 3 == 0. */
        guint last = 499 - ((499 - k) % 7);
        g_assert_cmpint (subagent_tool_registry_has_tool (SUBAGENT_TOOL_REGISTRY (registry), name), ==, last % 3 != 0);
      }
}

/* ---- SubagentChildToolRegistry ------------------------------------------ */

static void
test_child_inherits_all_without_whitelist (void)
{
  /* Reference 000, run contract item 4: all tools are copied when there is
   * no whitelist, except subagent and subagent_*. */
  g_autoptr(SubagentSimpleToolRegistry) parent = make_parent (NULL, parent_names);
  g_autoptr(SubagentChildToolRegistry) child =
    subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (parent), NULL, NULL);
  g_autofree char *joined = joined_names (SUBAGENT_TOOL_REGISTRY (child));

  g_assert_cmpstr (joined, ==, "bash,edit,grep,read,write");
}

static void
test_child_never_gets_delegation_tools (void)
{
  const char * const names[] = { "read", "subagent", "subagent_batch", "subagent_reviewer",
                                 "Subagent", "SUBAGENT_batch", "subagent-batch", "subagent.x",
                                 "subagents_notes", "my_subagent", NULL };
  g_autoptr(SubagentSimpleToolRegistry) parent = make_parent (NULL, names);
  /* Even a whitelist naming them does not bring them in. */
  g_autoptr(SubagentChildToolRegistry) child =
    subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (parent), names, NULL);
  SubagentToolRegistry *c = SUBAGENT_TOOL_REGISTRY (child);
  g_autofree char *joined = joined_names (c);

  g_assert_cmpstr (joined, ==, "my_subagent,read,subagents_notes");
  for (guint i = 1; i <= 7; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) result = subagent_tool_registry_invoke (c, names[i], NULL, NULL, &error);

      g_assert_true (subagent_tool_name_is_delegation (names[i]));
      g_assert_null (result);
      g_assert_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_NOT_ALLOWED);
      g_assert_false (subagent_tool_registry_has_tool (c, names[i]));
    }
  g_assert_false (subagent_tool_name_is_delegation ("subagents_notes"));
  g_assert_false (subagent_tool_name_is_delegation ("my_subagent"));
  /* The team tool delegates too: a child must not reach it. */
  g_assert_true (subagent_tool_name_is_delegation ("team"));
  g_assert_true (subagent_tool_name_is_delegation ("Team"));
  g_assert_false (subagent_tool_name_is_delegation ("teams"));
}

static void
test_child_whitelist_restricts (void)
{
  const char * const whitelist[] = { "read", "grep", NULL };
  g_autoptr(SubagentSimpleToolRegistry) parent = make_parent (NULL, parent_names);
  g_autoptr(SubagentChildToolRegistry) child =
    subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (parent), whitelist, NULL);
  g_autofree char *joined = joined_names (SUBAGENT_TOOL_REGISTRY (child));

  g_assert_cmpstr (joined, ==, "grep,read");
}

static void
test_child_whitelist_matches_exactly (void)
{
  const char * const names[] = { "read", "Read", "read_file", "rea", NULL };
  const char * const whitelist[] = { "read", NULL };
  g_autoptr(SubagentSimpleToolRegistry) parent = make_parent (NULL, names);
  g_autoptr(SubagentChildToolRegistry) child =
    subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (parent), whitelist, NULL);
  g_autofree char *joined = joined_names (SUBAGENT_TOOL_REGISTRY (child));

  g_assert_cmpstr (joined, ==, "read");
}

static void
test_child_disallowed_list (void)
{
  const char * const disallowed[] = { "bash", "write", NULL };
  const char * const whitelist[] = { "read", "bash", NULL };
  g_autoptr(SubagentSimpleToolRegistry) parent = make_parent (NULL, parent_names);
  g_autoptr(SubagentChildToolRegistry) all_but =
    subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (parent), NULL, disallowed);
  g_autoptr(SubagentChildToolRegistry) both =
    subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (parent), whitelist, disallowed);
  g_autofree char *joined_all_but = joined_names (SUBAGENT_TOOL_REGISTRY (all_but));
  g_autofree char *joined_both = joined_names (SUBAGENT_TOOL_REGISTRY (both));

  g_assert_cmpstr (joined_all_but, ==, "edit,grep,read");
  /* Disallowed wins over whitelisted. */
  g_assert_cmpstr (joined_both, ==, "read");
}

static void
test_child_no_escalation (void)
{
  /* Reference 002: a child can only narrow. A whitelist naming a tool the
   * parent lacks does not conjure it. */
  CallCounter counter = { 0 };
  const char * const names[] = { "read", NULL };
  const char * const whitelist[] = { "read", "bash", "subagent", NULL };
  g_autoptr(SubagentSimpleToolRegistry) parent = make_parent (&counter, names);
  g_autoptr(SubagentChildToolRegistry) child =
    subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (parent), whitelist, NULL);
  SubagentToolRegistry *c = SUBAGENT_TOOL_REGISTRY (child);
  g_autofree char *joined = joined_names (c);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;

  g_assert_cmpstr (joined, ==, "read");
  g_assert_null (subagent_tool_registry_lookup (c, "bash"));
  result = subagent_tool_registry_invoke (c, "bash", NULL, NULL, &error);
  g_assert_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_NOT_FOUND);
  g_assert_null (result);
  g_assert_cmpint (counter.calls, ==, 0);
}

static void
test_child_of_child_narrows_further (void)
{
  CallCounter counter = { 0 };
  const char * const wl1[] = { "read", "grep", "edit", NULL };
  const char * const wl2[] = { "read", "bash", "edit", NULL };
  const char * const dis2[] = { "edit", NULL };
  g_autoptr(SubagentSimpleToolRegistry) parent = make_parent (&counter, parent_names);
  g_autoptr(SubagentChildToolRegistry) child =
    subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (parent), wl1, NULL);
  g_autoptr(SubagentChildToolRegistry) grandchild =
    subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (child), wl2, dis2);
  g_autoptr(SubagentChildToolRegistry) all_of_child =
    subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (child), NULL, NULL);
  SubagentToolRegistry *g = SUBAGENT_TOOL_REGISTRY (grandchild);
  g_autofree char *joined = joined_names (g);
  g_autofree char *joined_all = joined_names (SUBAGENT_TOOL_REGISTRY (all_of_child));
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;

  g_assert_cmpstr (joined, ==, "read");
  /* No whitelist below a narrowed child means the child's set, not the root's. */
  g_assert_cmpstr (joined_all, ==, "edit,grep,read");
  g_assert_true (subagent_child_tool_registry_get_parent (grandchild) == SUBAGENT_TOOL_REGISTRY (child));

  /* bash is in the root but the middle view hides it: not found from below. */
  result = subagent_tool_registry_invoke (g, "bash", NULL, NULL, &error);
  g_assert_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_NOT_FOUND);
  g_clear_error (&error);
  /* edit is in the middle view but disallowed here. */
  result = subagent_tool_registry_invoke (g, "edit", NULL, NULL, &error);
  g_assert_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_NOT_ALLOWED);
  g_clear_error (&error);
  g_assert_cmpint (counter.calls, ==, 0);

  result = subagent_tool_registry_invoke (g, "read", NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_node_get_string (result), ==, "read");
  g_assert_cmpint (counter.calls, ==, 1);
}

static void
test_child_refuses_hidden_tool_through_every_path (void)
{
  CallCounter counter = { 0 };
  const char * const whitelist[] = { "read", NULL };
  g_autoptr(SubagentSimpleToolRegistry) parent = make_parent (&counter, parent_names);
  g_autoptr(SubagentChildToolRegistry) child =
    subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (parent), whitelist, NULL);
  SubagentToolRegistry *c = SUBAGENT_TOOL_REGISTRY (child);
  const char *hidden[] = { "bash", "write", "subagent", "subagent_batch", NULL };
  GParamSpec *pspec;

  for (guint i = 0; hidden[i]; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) result = NULL;
      g_autoptr(GPtrArray) tools = subagent_tool_registry_list_tools (c);
      g_auto(GStrv) names = subagent_tool_registry_list_names (c);

      result = subagent_tool_registry_invoke (c, hidden[i], NULL, NULL, &error);
      g_assert_null (result);
      g_assert_error (error, SUBAGENT_TOOL_ERROR, SUBAGENT_TOOL_ERROR_NOT_ALLOWED);
      g_assert_nonnull (strstr (error->message, hidden[i]));
      g_assert_null (subagent_tool_registry_lookup (c, hidden[i]));
      g_assert_false (subagent_tool_registry_has_tool (c, hidden[i]));
      g_assert_false (g_strv_contains ((const char * const *) names, hidden[i]));
      for (guint k = 0; k < tools->len; k++)
        g_assert_cmpstr (subagent_tool_get_name (tools->pdata[k]), !=, hidden[i]);
    }
  g_assert_cmpint (counter.calls, ==, 0);

  /* The view does not hand out its parent through properties either. */
  pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (child), "parent");
  g_assert_nonnull (pspec);
  g_assert_false (pspec->flags & G_PARAM_READABLE);
}

static void
test_child_is_live_view (void)
{
  const char * const names[] = { "read", NULL };
  const char * const disallowed[] = { "bash", NULL };
  g_autoptr(SubagentSimpleToolRegistry) parent = make_parent (NULL, names);
  g_autoptr(SubagentChildToolRegistry) child =
    subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (parent), NULL, disallowed);
  SubagentToolRegistry *c = SUBAGENT_TOOL_REGISTRY (child);
  g_autoptr(SubagentTool) grep = make_tool ("grep", NULL);
  g_autoptr(SubagentTool) bash = make_tool ("bash", NULL);
  g_autoptr(SubagentTool) batch = make_tool ("subagent_batch", NULL);
  g_autofree char *before = joined_names (c);
  g_autofree char *after_add = NULL;
  g_autofree char *after_remove = NULL;

  g_assert_cmpstr (before, ==, "read");
  subagent_simple_tool_registry_add (parent, grep);
  subagent_simple_tool_registry_add (parent, bash);
  subagent_simple_tool_registry_add (parent, batch);
  after_add = joined_names (c);
  g_assert_cmpstr (after_add, ==, "grep,read");

  subagent_simple_tool_registry_remove (parent, "read");
  after_remove = joined_names (c);
  g_assert_cmpstr (after_remove, ==, "grep");
  g_assert_false (subagent_tool_registry_has_tool (c, "read"));
}

static void
test_child_is_always_subset_of_parent (void)
{
  /* Random whitelists and disallowed lists over a fixed universe: the child
   * never sees a name its parent lacks nor a delegation tool. */
  const char * const universe[] = { "a", "b", "c", "d", "e", "subagent", "subagent_x", "f", NULL };
  const guint n = g_strv_length ((char **) universe);

  for (guint round = 0; round < 300; round++)
    {
      g_autoptr(GPtrArray) present = g_ptr_array_new ();
      g_autoptr(GPtrArray) wl = g_ptr_array_new ();
      g_autoptr(GPtrArray) dis = g_ptr_array_new ();
      g_autoptr(SubagentSimpleToolRegistry) parent = NULL;
      g_autoptr(SubagentChildToolRegistry) child = NULL;
      g_autoptr(SubagentChildToolRegistry) grandchild = NULL;
      g_auto(GStrv) parent_list = NULL;
      g_auto(GStrv) child_list = NULL;
      g_auto(GStrv) grandchild_list = NULL;
      gboolean use_wl = g_test_rand_bit ();

      for (guint i = 0; i < n; i++)
        {
          if (g_test_rand_bit ())
            g_ptr_array_add (present, (gpointer) universe[i]);
          if (g_test_rand_bit ())
            g_ptr_array_add (wl, (gpointer) universe[i]);
          if (g_test_rand_int_range (0, 4) == 0)
            g_ptr_array_add (dis, (gpointer) universe[i]);
        }
      g_ptr_array_add (present, NULL);
      g_ptr_array_add (wl, NULL);
      g_ptr_array_add (dis, NULL);

      parent = make_parent (NULL, (const char * const *) present->pdata);
      child = subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (parent),
                                                use_wl ? (const char * const *) wl->pdata : NULL,
                                                (const char * const *) dis->pdata);
      grandchild = subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (child),
                                                     (const char * const *) present->pdata, NULL);
      parent_list = subagent_tool_registry_list_names (SUBAGENT_TOOL_REGISTRY (parent));
      child_list = subagent_tool_registry_list_names (SUBAGENT_TOOL_REGISTRY (child));
      grandchild_list = subagent_tool_registry_list_names (SUBAGENT_TOOL_REGISTRY (grandchild));

      for (guint i = 0; child_list[i]; i++)
        {
          g_assert_true (g_strv_contains ((const char * const *) parent_list, child_list[i]));
          g_assert_false (subagent_tool_name_is_delegation (child_list[i]));
          g_assert_false (g_strv_contains ((const char * const *) dis->pdata, child_list[i]));
          if (use_wl)
            g_assert_true (g_strv_contains ((const char * const *) wl->pdata, child_list[i]));
        }
      for (guint i = 0; grandchild_list[i]; i++)
        g_assert_true (g_strv_contains ((const char * const *) child_list, grandchild_list[i]));
    }
}

/* `disallowed_tools: [bash]` hides `Bash` (issue 11: case-insensitive
 * disallowed_tools), and a name that matches nothing is reported. */
static void
test_child_disallowed_case_insensitive (void)
{
  CallCounter counter = { 0 };
  const char * const tools[] = { "Bash", "Read", NULL };
  g_autoptr(SubagentSimpleToolRegistry) parent = make_parent (&counter, tools);
  g_autoptr(SubagentChildToolRegistry) child = NULL;
  g_auto(GStrv) names = NULL;
  g_autofree char *joined = NULL;
  const char * const disallowed[] = { "bash", "nosuchtool", NULL };

  g_test_expect_message ("Subagent", G_LOG_LEVEL_MESSAGE, "*nosuchtool*matches no tool*");
  child = subagent_child_tool_registry_new (SUBAGENT_TOOL_REGISTRY (parent), NULL, disallowed);
  g_test_assert_expected_messages ();
  names = subagent_tool_registry_list_names (SUBAGENT_TOOL_REGISTRY (child));
  joined = g_strjoinv (",", names);
  g_assert_cmpstr (joined, ==, "Read");
  g_assert_null (subagent_tool_registry_lookup (SUBAGENT_TOOL_REGISTRY (child), "Bash"));
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tool/name/validation", test_tool_name_validation);
  g_test_add_func ("/tool/call/passes-arguments-and-frees-data", test_tool_call_passes_arguments_and_frees_data);
  g_test_add_func ("/tool/call/checks-schema-top-level", test_tool_call_checks_schema_top_level);
  g_test_add_func ("/tool/call/without-function-fails", test_tool_without_function_fails);
  g_test_add_func ("/tool/call/cancelled-does-not-run", test_tool_call_cancelled_does_not_run);
  g_test_add_func ("/tool/schema/sealed-copy", test_tool_schema_is_sealed_copy);

  g_test_add_func ("/tool-registry/simple/lists-sorted-and-looks-up", test_simple_registry_lists_sorted_and_looks_up);
  g_test_add_func ("/tool-registry/simple/add-replaces-and-remove", test_simple_registry_add_replaces_and_remove);
  g_test_add_func ("/tool-registry/simple/thread-safe", test_simple_registry_thread_safe);
  g_test_add_func ("/tool-registry/default-invoke/not-found", test_registry_default_invoke_not_found);

  g_test_add_func ("/tool-registry/child/run-contract/inherits-all-without-whitelist", test_child_inherits_all_without_whitelist);
  g_test_add_func ("/tool-registry/child/run-contract/subagent-tools-never-copied", test_child_never_gets_delegation_tools);
  g_test_add_func ("/tool-registry/child/run-contract/whitelist-restricts", test_child_whitelist_restricts);
  g_test_add_func ("/tool-registry/child/whitelist-matches-exactly", test_child_whitelist_matches_exactly);
  g_test_add_func ("/tool-registry/child/disallowed-list", test_child_disallowed_list);
  g_test_add_func ("/tool-registry/child/no-escalation", test_child_no_escalation);
  g_test_add_func ("/tool-registry/child/child-of-child-narrows-further", test_child_of_child_narrows_further);
  g_test_add_func ("/tool-registry/child/hidden-tool-refused-through-every-path", test_child_refuses_hidden_tool_through_every_path);
  g_test_add_func ("/tool-registry/child/live-view", test_child_is_live_view);
  g_test_add_func ("/tool-registry/child/always-subset-of-parent", test_child_is_always_subset_of_parent);

  g_test_add_func ("/tool-registry/child/disallowed-case-insensitive", test_child_disallowed_case_insensitive);
  return g_test_run ();
}
