/* test-batch-team.c: batches (results in input order, batch indices, the
 * centralized approval queue), teams, and `subagentctl batch`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <unistd.h>
#include <glib/gstdio.h>

#include "supervisor-test-support.h"

typedef struct {
  char *root;
  GateRunner *gate;
  SubagentManager *manager;
  SubagentSupervisor *supervisor;
  SstRecorder recorder;
} Fixture;

static void
fixture_open (Fixture    *f,
              guint       max_parallel,
              gint        max_agents,
              const char *config)
{
  f->root = sst_make_root (FALSE,
                           "helper", "name: helper\n",
                           "alpha", "name: alpha\n",
                           "beta", "name: beta\n",
                           "summarizer", "name: summarizer\n",
                           NULL);
  if (config != NULL)
    sat_write_file (f->root, ".subagent/config.yaml", config);
  f->gate = gate_runner_new ();
  f->manager = sst_manager_new (f->root, f->gate);
  f->supervisor = sst_supervisor_new (f->manager, max_parallel, max_agents, -1);
  sst_recorder_start (&f->recorder, f->supervisor);
}

static void
fixture_close (Fixture *f)
{
  g_autoptr(SubagentShutdownReport) report = NULL;

  gate_runner_release_all (f->gate);
  report = subagent_supervisor_shutdown (f->supervisor, 5000, NULL);
  g_assert_true (subagent_shutdown_report_get_clean (report));
  sst_flush_main ();
  sst_recorder_stop (&f->recorder);
  g_clear_object (&f->supervisor);
  g_clear_object (&f->manager);
  g_clear_object (&f->gate);
  sat_rm_rf (f->root);
  g_free (f->root);
}

typedef struct {
  gboolean done;
  GPtrArray *results;
  GError *error;
} BatchWait;

static void
batch_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  BatchWait *wait = user_data;

  wait->results = subagent_supervisor_run_batch_finish (SUBAGENT_SUPERVISOR (source), res, &wait->error);
  wait->done = TRUE;
}

static GPtrArray *
make_items (guint       n,
            const char *def_name)
{
  GPtrArray *items = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();

  subagent_run_options_set_def_name (options, def_name);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *task = g_strdup_printf ("item-%u", i);
      g_ptr_array_add (items, subagent_batch_item_new (task, options));
    }
  return items;
}

static void
test_results_in_input_order (void)
{
  Fixture f = { 0, };
  g_autoptr(GPtrArray) items = make_items (3, "helper");
  BatchWait wait = { FALSE, NULL, NULL };

  fixture_open (&f, 3, -1, NULL);
  subagent_supervisor_run_batch_async (f.supervisor, items, NULL, batch_done, &wait);
  sst_wait_started (f.gate, 3);
  /* They finish last to first. */
  gate_runner_release (f.gate, "item-2", sst_complete ("answer 2", 0));
  gate_runner_release (f.gate, "item-1", sst_complete ("answer 1", 0));
  gate_runner_release (f.gate, "item-0", sst_complete ("answer 0", 0));
  sst_wait_flag (&wait.done);
  g_assert_no_error (wait.error);
  g_assert_cmpuint (wait.results->len, ==, 3);

  for (guint i = 0; i < 3; i++)
    {
      SubagentRunResult *result = wait.results->pdata[i];
      g_autofree char *answer = g_strdup_printf ("answer %u", i);
      const char *run_id = subagent_run_result_get_run_id (result);

      g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, answer);
      g_assert_cmpint (subagent_lineage_get_batch_index (subagent_run_result_get_lineage (result)), ==, (gint) i);
      {
        g_autofree char *task = g_strdup_printf ("item-%u", i);

        g_assert_cmpint (subagent_run_context_get_batch_index (gate_runner_get_context (f.gate, task)), ==, (gint) i);
      }
      /* Every event of the child carries its batch index. */
      for (guint e = 0; e < f.recorder.events->len; e++)
        if (g_str_equal (subagent_event_get_run_id (f.recorder.events->pdata[e]), run_id))
          g_assert_cmpint (subagent_event_get_batch_index (f.recorder.events->pdata[e]), ==, (gint) i);
      g_assert_nonnull (sst_recorder_find (&f.recorder, run_id, SUBAGENT_EVENT_COMPLETED));
    }
  g_ptr_array_unref (wait.results);
  fixture_close (&f);
}

static SubagentRunOutcome *
decide_echo (SubagentRunContext *context,
             gpointer            user_data)
{
  g_autofree char *answer = g_strdup_printf ("%s says: %s", subagent_def_get_name (subagent_run_context_get_definition (context)),
                                             subagent_run_context_get_task (context));
  return sst_complete (answer, 0.5);
}

static void
test_batch_feeds_past_outstanding_cap (void)
{
  Fixture f = { 0, };
  g_autoptr(GPtrArray) items = make_items (5, "helper");
  BatchWait wait = { FALSE, NULL, NULL };

  /* max-parallel 1: at most two outstanding, five items. */
  fixture_open (&f, 1, -1, NULL);
  gate_runner_set_decide (f.gate, decide_echo, NULL);
  subagent_supervisor_run_batch_async (f.supervisor, items, NULL, batch_done, &wait);
  sst_wait_flag (&wait.done);
  g_assert_no_error (wait.error);
  g_assert_cmpuint (wait.results->len, ==, 5);
  for (guint i = 0; i < 5; i++)
    {
      g_autofree char *answer = g_strdup_printf ("helper says: item-%u", i);
      g_autofree char *task = g_strdup_printf ("item-%u", i);

      g_assert_cmpstr (subagent_run_result_get_final_answer (wait.results->pdata[i]), ==, answer);
      g_assert_cmpstr (gate_runner_get_started_task (f.gate, i), ==, task);
    }
  g_assert_cmpfloat (subagent_supervisor_get_spent_cents (f.supervisor, NULL), ==, 2.5);
  g_ptr_array_unref (wait.results);
  fixture_close (&f);
}

/* The outstanding cap counts every child of the supervisor: a batch all of
 * whose spawns were refused starts when a child that is not its own ends. */
static void
test_batch_fed_by_another_childs_end (void)
{
  Fixture f = { 0, };
  g_autoptr(GPtrArray) items = make_items (2, "helper");
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  BatchWait wait = { FALSE, NULL, NULL };
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autoptr(GError) error = NULL;

  /* max-parallel 1: two outstanding, both taken by children of no batch. */
  fixture_open (&f, 1, -1, NULL);
  subagent_run_options_set_def_name (options, "helper");
  first = subagent_supervisor_spawn (f.supervisor, "plain-0", options, &error);
  g_assert_no_error (error);
  second = subagent_supervisor_spawn (f.supervisor, "plain-1", options, &error);
  g_assert_no_error (error);
  sst_wait_started (f.gate, 1);

  subagent_supervisor_run_batch_async (f.supervisor, items, NULL, batch_done, &wait);
  sst_flush_main ();
  g_assert_false (wait.done);
  g_assert_cmpuint (gate_runner_get_n_started (f.gate), ==, 1);

  /* plain-0 ends: plain-1 runs, and item-0 takes the freed place in line. */
  gate_runner_release (f.gate, "plain-0", sst_complete ("plain 0", 0));
  sst_wait_started (f.gate, 2);
  gate_runner_release (f.gate, "plain-1", sst_complete ("plain 1", 0));
  sst_wait_started (f.gate, 3);
  g_assert_cmpstr (gate_runner_get_started_task (f.gate, 2), ==, "item-0");
  gate_runner_release (f.gate, "item-0", sst_complete ("answer 0", 0));
  sst_wait_started (f.gate, 4);
  gate_runner_release (f.gate, "item-1", sst_complete ("answer 1", 0));
  sst_wait_flag (&wait.done);
  g_assert_no_error (wait.error);
  g_assert_cmpstr (subagent_run_result_get_final_answer (wait.results->pdata[0]), ==, "answer 0");
  g_assert_cmpstr (subagent_run_result_get_final_answer (wait.results->pdata[1]), ==, "answer 1");
  g_ptr_array_unref (wait.results);
  fixture_close (&f);
}

/* A batch needs no handler of the supervisor's signals: with none
 * connected, no event is made, and every item still gets its answer. */
/* What the events file holds as the batch returns its results. */
static void
batch_done_reading_events (GObject      *source,
                           GAsyncResult *res,
                           gpointer      user_data)
{
  char **events = g_object_get_data (G_OBJECT (source), "events-at-return");

  g_assert_true (g_file_get_contents (subagent_supervisor_get_events_path (SUBAGENT_SUPERVISOR (source)), events, NULL,
                                      NULL));
  batch_done (source, res, user_data);
}

static guint
count_lines_with (const char *text,
                  const char *needle)
{
  guint n = 0;

  for (const char *p = text; (p = strstr (p, needle)) != NULL; p++)
    n++;
  return n;
}

static void
test_batch_with_no_handler_connected (void)
{
  Fixture f = { 0, };
  g_autoptr(GPtrArray) items = make_items (5, "helper");
  BatchWait wait = { FALSE, NULL, NULL };
  g_autofree char *events = NULL;
  guint event_signal;

  fixture_open (&f, 1, -1, NULL);
  event_signal = g_signal_lookup ("event", SUBAGENT_TYPE_SUPERVISOR);
  sst_recorder_stop (&f.recorder);
  gate_runner_set_decide (f.gate, decide_echo, NULL);
  g_object_set_data (G_OBJECT (f.supervisor), "events-at-return", &events);
  subagent_supervisor_run_batch_async (f.supervisor, items, NULL, batch_done_reading_events, &wait);
  /* The batch follows its children without the supervisor's signals. */
  g_assert_false (g_signal_has_handler_pending (f.supervisor, event_signal, 0, FALSE));
  g_assert_false (g_signal_has_handler_pending (f.supervisor, event_signal,
                                                g_quark_from_static_string ("completed"), FALSE));
  sst_wait_flag (&wait.done);
  g_assert_no_error (wait.error);
  for (guint i = 0; i < 5; i++)
    {
      g_autofree char *answer = g_strdup_printf ("helper says: item-%u", i);

      g_assert_cmpstr (subagent_run_result_get_final_answer (wait.results->pdata[i]), ==, answer);
      g_assert_cmpint (subagent_lineage_get_batch_index (subagent_run_result_get_lineage (wait.results->pdata[i])), ==,
                       (gint) i);
    }
  g_ptr_array_unref (wait.results);
  /* The lines the supervisor held back while its children ended are in
   * the file by the time the batch's results are: each child's end too. */
  g_assert_cmpuint (count_lines_with (events, "\"event\":\"accepted\""), ==, 5);
  g_assert_cmpuint (count_lines_with (events, "\"event\":\"completed\""), ==, 5);
  sst_recorder_start (&f.recorder, f.supervisor);
  fixture_close (&f);
}

/* The approver: approves batch item 0, denies the others. */
static void
on_approval_requested (SubagentSupervisor *supervisor,
                       SubagentEvent      *event,
                       gpointer            user_data)
{
  JsonObject *details = subagent_event_get_details (event);
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_try_get (subagent_event_get_parent_run_id (event));
  const char *request_id = json_object_get_string_member (details, "request_id");

  g_assert_nonnull (queue);
  g_assert_cmpstr (json_object_get_string_member (details, "tool_name"), ==, "delete_file");
  if (subagent_event_get_batch_index (event) == 0)
    g_assert_true (subagent_approval_queue_approve (queue, request_id, "test"));
  else
    g_assert_true (subagent_approval_queue_deny (queue, request_id, "not this one", "test"));
}

static void
test_batch_uses_centralized_approval_queue (void)
{
  Fixture f = { 0, };
  g_autoptr(GPtrArray) items = make_items (2, "helper");
  BatchWait wait = { FALSE, NULL, NULL };

  fixture_open (&f, 2, -1, "permission_mode: prompt\napprovals:\n  sink: memory\n");
  gate_runner_set_approval_tool (f.gate, "delete_file");
  g_signal_connect (f.supervisor, "approval-requested", G_CALLBACK (on_approval_requested), NULL);
  subagent_supervisor_run_batch_async (f.supervisor, items, NULL, batch_done, &wait);
  sst_wait_flag (&wait.done);
  g_assert_no_error (wait.error);

  g_assert_cmpstr (subagent_run_result_get_final_answer (wait.results->pdata[0]), ==, "approved");
  g_assert_true (g_str_has_prefix (subagent_run_result_get_final_answer (wait.results->pdata[1]), "denied: "));
  g_assert_nonnull (strstr (subagent_run_result_get_final_answer (wait.results->pdata[1]), "not this one"));
  sst_flush_main ();
  for (guint i = 0; i < 2; i++)
    {
      const char *run_id = subagent_run_result_get_run_id (wait.results->pdata[i]);
      SubagentEvent *requested = sst_recorder_find (&f.recorder, run_id, SUBAGENT_EVENT_APPROVAL_REQUESTED);
      SubagentEvent *resolved = sst_recorder_find (&f.recorder, run_id, SUBAGENT_EVENT_APPROVAL_RESOLVED);

      g_assert_nonnull (requested);
      g_assert_nonnull (resolved);
      g_assert_cmpint (subagent_event_get_batch_index (requested), ==, (gint) i);
      g_assert_cmpstr (json_object_get_string_member (subagent_event_get_details (resolved), "approval_status"), ==,
                       i == 0 ? "approved" : "denied");
    }
  g_ptr_array_unref (wait.results);
  fixture_close (&f);
}

static void
test_agent_cap_refuses_whole_batch (void)
{
  Fixture f = { 0, };
  g_autoptr(GPtrArray) items = make_items (3, "helper");
  BatchWait wait = { FALSE, NULL, NULL };

  fixture_open (&f, 4, 2, NULL);
  subagent_supervisor_run_batch_async (f.supervisor, items, NULL, batch_done, &wait);
  sst_wait_flag (&wait.done);
  g_assert_error (wait.error, SUBAGENT_SUPERVISOR_ERROR, SUBAGENT_SUPERVISOR_ERROR_AGENT_CAP);
  g_clear_error (&wait.error);
  sst_flush_main ();
  g_assert_cmpuint (f.recorder.events->len, ==, 0);
  g_assert_cmpuint (gate_runner_get_n_started (f.gate), ==, 0);
  fixture_close (&f);
}

static void
test_items_from_json (void)
{
  static const struct {
    const char *json;
    const char *words;
  } bad[] = {
    { "[{\"task\": \"x\", \"command\": \"rm\"}]", "unknown member “command”" },
    { "[{\"task\": \"   \"}]", "non-empty" },
    { "[{\"task\": \"x\"}, {\"task\": \"y\", \"isolation\": \"the moon\"}]", "Batch item 1" },
    { "[{\"task\": \"x\", \"max_iterations\": 0}]", "≥ 1" },
    { "[{\"task\": \"x\", \"def_name\": \"../evil\"}]", "cannot name a definition" },
    { "[42]", "not an object" },
  };
  g_autoptr(JsonNode) good = json_from_string ("[{\"task\": \"a\", \"def_name\": \"helper\", \"isolation\": \"worktree\", "
                                               "\"max_iterations\": 3, \"max_tool_calls\": 4}, {\"task\": \"b\"}]", NULL);
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(GError) error = NULL;
  SubagentRunOptions *options;

  items = subagent_batch_items_from_json (json_node_get_array (good), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (items->len, ==, 2);
  options = subagent_batch_item_get_options (items->pdata[0]);
  g_assert_cmpstr (subagent_batch_item_get_task (items->pdata[0]), ==, "a");
  g_assert_cmpstr (subagent_run_options_get_def_name (options), ==, "helper");
  g_assert_cmpstr (subagent_run_options_get_isolation (options), ==, "worktree");
  g_assert_cmpuint (subagent_run_options_get_max_iterations (options), ==, 3);
  g_assert_cmpuint (subagent_run_options_get_max_tool_calls (options), ==, 4);

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(JsonNode) node = json_from_string (bad[i].json, NULL);
      g_autoptr(GPtrArray) none = NULL;

      g_clear_error (&error);
      none = subagent_batch_items_from_json (json_node_get_array (node), &error);
      g_assert_null (none);
      g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, bad[i].words));
    }
}

typedef struct {
  gboolean done;
  SubagentTeamResult *result;
  GError *error;
} TeamWait;

static void
team_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  TeamWait *wait = user_data;

  wait->result = subagent_supervisor_run_team_finish (SUBAGENT_SUPERVISOR (source), res, &wait->error);
  wait->done = TRUE;
}

static void
test_team_aggregates_members_answers (void)
{
  Fixture f = { 0, };
  TeamWait wait = { FALSE, NULL, NULL };
  GPtrArray *members;
  SubagentRunContext *aggregator;
  const char *aggregator_task;

  fixture_open (&f, 2, -1, NULL);
  sat_write_file (f.root, ".subagent/teams/reviewers.yaml",
                  "name: reviewers\ndescription: two views\nmembers:\n  - alpha\n  - def: beta\n    max_iterations: 2\n"
                  "aggregator: summarizer\n");
  gate_runner_set_decide (f.gate, decide_echo, NULL);
  subagent_supervisor_run_team_async (f.supervisor, "Reviewers", "check the patch", NULL, team_done, &wait);
  sst_wait_flag (&wait.done);
  g_assert_no_error (wait.error);

  members = subagent_team_result_get_member_results (wait.result);
  g_assert_cmpuint (members->len, ==, 2);
  g_assert_cmpstr (subagent_run_result_get_final_answer (members->pdata[0]), ==, "alpha says: check the patch");
  g_assert_cmpstr (subagent_run_result_get_final_answer (members->pdata[1]), ==, "beta says: check the patch");
  {
    g_autoptr(SubagentTeam) team = subagent_team_lookup (f.root, "reviewers", NULL);
    g_autoptr(GPtrArray) items = subagent_team_make_items (team, "t");

    g_assert_cmpuint (subagent_run_options_get_max_iterations (subagent_batch_item_get_options (items->pdata[1])), ==, 2);
    g_assert_cmpstr (subagent_team_get_description (team), ==, "two views");
  }

  /* The aggregator got the task and both answers, and its answer is the team's. */
  g_assert_nonnull (subagent_team_result_get_aggregate (wait.result));
  aggregator = NULL;
  for (guint i = 0; i < gate_runner_get_n_started (f.gate); i++)
    if (g_str_has_prefix (gate_runner_get_started_task (f.gate, i), "check the patch\n\n"))
      aggregator = gate_runner_get_context (f.gate, gate_runner_get_started_task (f.gate, i));
  g_assert_nonnull (aggregator);
  g_assert_cmpstr (subagent_def_get_name (subagent_run_context_get_definition (aggregator)), ==, "summarizer");
  aggregator_task = subagent_run_context_get_task (aggregator);
  g_assert_nonnull (strstr (aggregator_task, "### 1. alpha (complete)\nalpha says: check the patch"));
  g_assert_nonnull (strstr (aggregator_task, "### 2. beta (complete)\nbeta says: check the patch"));
  g_assert_true (g_str_has_prefix (subagent_team_result_get_final_answer (wait.result), "summarizer says: check the patch"));
  {
    g_autoptr(JsonObject) json = subagent_team_result_to_json (wait.result);
    g_assert_cmpstr (json_object_get_string_member (json, "team"), ==, "reviewers");
    g_assert_cmpuint (json_array_get_length (json_object_get_array_member (json, "members")), ==, 2);
    g_assert_false (json_object_get_null_member (json, "aggregate"));
  }
  g_clear_object (&wait.result);
  fixture_close (&f);
}

static void
test_team_without_aggregator (void)
{
  Fixture f = { 0, };
  TeamWait wait = { FALSE, NULL, NULL };

  fixture_open (&f, 2, -1, NULL);
  sat_write_file (f.root, ".subagent/teams/pair.yml", "name: pair\nmembers: [alpha, beta]\n");
  gate_runner_set_decide (f.gate, decide_echo, NULL);
  subagent_supervisor_run_team_async (f.supervisor, "pair", "go", NULL, team_done, &wait);
  sst_wait_flag (&wait.done);
  g_assert_no_error (wait.error);
  g_assert_null (subagent_team_result_get_aggregate (wait.result));
  g_assert_cmpstr (subagent_team_result_get_final_answer (wait.result), ==,
                   "## alpha\nalpha says: go\n\n## beta\nbeta says: go\n");
  g_clear_object (&wait.result);
  fixture_close (&f);
}

static void
test_team_files (void)
{
  g_autofree char *root = sst_make_root (FALSE, NULL, NULL);
  g_autofree char *outside = sat_make_temp_dir ("outside");
  g_autofree char *target = g_build_filename (outside, "sneaky.yaml", NULL);
  g_autofree char *link = NULL;
  g_autoptr(GPtrArray) teams = NULL;
  g_autoptr(SubagentTeam) team = NULL;
  g_autoptr(GError) error = NULL;

  sat_write_file (root, ".subagent/teams/good.yaml", "name: good\nmembers: [alpha]\n");
  sat_write_file (root, ".subagent/teams/broken.yaml", "name: broken\n");
  sat_write_file (root, ".subagent/teams/odd.yaml", "name: odd\nmembers: [alpha]\ncolour: blue\n");
  sat_write_file (outside, "sneaky.yaml", "name: sneaky\nmembers: [alpha]\n");
  link = g_build_filename (root, ".subagent", "teams", "sneaky.yaml", NULL);
  g_assert_cmpint (symlink (target, link), ==, 0);

  teams = subagent_team_list (root, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (teams->len, ==, 1);
  g_assert_cmpstr (subagent_team_get_name (teams->pdata[0]), ==, "good");
  g_assert_cmpstrv (subagent_team_get_members (teams->pdata[0]), ((const char *[]) { "alpha", NULL }));
  g_assert_null (subagent_team_get_aggregator (teams->pdata[0]));

  g_assert_null (subagent_team_lookup (root, "sneaky", &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_null (subagent_team_lookup (root, "nobody", &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "did not load"));
  g_clear_error (&error);

  team = subagent_team_load_file (link, &error);  /* loading one file by path is the caller's choice */
  g_assert_no_error (error);
  g_clear_object (&team);
  {
    g_autofree char *path = g_build_filename (root, ".subagent", "teams", "broken.yaml", NULL);

    g_assert_null (subagent_team_load_file (path, &error));
    g_assert_error (error, SUBAGENT_DEF_ERROR, SUBAGENT_DEF_ERROR_INVALID_VALUE);
    g_assert_nonnull (strstr (error->message, "members"));
  }
  sat_rm_rf (root);
  sat_rm_rf (outside);
}

#define WORKER_YAML \
  "name: worker\nisolation: worktree\n" \
  "command: [/bin/sh, -c, 'read t; echo \"$t\" > RESULT.txt; " \
  "echo \"{\\\"type\\\":\\\"usage\\\",\\\"iterations\\\":1,\\\"cost_cents\\\":0.25}\"; echo \"done $t\"']\n"

static void
test_cli_batch_twenty_worktree_children (void)
{
  g_autofree char *root = sst_make_root (TRUE, "worker", WORKER_YAML, NULL);
  g_autoptr(GString) input = g_string_new ("[");
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *worktrees_out = NULL;
  g_autofree char *branches = NULL;
  g_autofree char *worktrees_dir = g_build_filename (root, ".subagent", "worktrees", NULL);
  g_autoptr(JsonNode) results = NULL;
  JsonArray *array;

  for (guint i = 0; i < 20; i++)
    g_string_append_printf (input, "%s{\"task\": \"job %u\", \"def_name\": \"worker\"}", i ? ", " : "", i);
  g_string_append (input, "]");
  sat_write_file (root, "batch.json", input->str);

  g_assert_cmpint (sat_run_ctl (root, &out, &err, "batch", "--max-parallel", "4", "--json", "batch.json", NULL), ==, 0);
  results = json_from_string (out, NULL);
  g_assert_nonnull (results);
  array = json_node_get_array (results);
  g_assert_cmpuint (json_array_get_length (array), ==, 20);
  for (guint i = 0; i < 20; i++)
    {
      JsonObject *result = json_array_get_object_element (array, i);
      JsonObject *lineage = json_object_get_object_member (result, "lineage");
      g_autofree char *answer = g_strdup_printf ("done job %u", i);

      g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "complete");
      g_assert_cmpstr (json_object_get_string_member (result, "final_answer"), ==, answer);
      g_assert_cmpint (json_object_get_int_member (lineage, "batch_index"), ==, i);
      g_assert_cmpstr (json_object_get_string_member (lineage, "isolation"), ==, "worktree");
      /* What the child wrote is in its review, not in the parent's tree. */
      g_assert_true (json_object_has_member (result, "review"));
    }

  /* The live view: the header and a line per child, with costs. */
  g_assert_nonnull (strstr (err, "batch: 20 items, max-parallel 4"));
  g_assert_nonnull (strstr (err, "[20/20]"));
  g_assert_nonnull (strstr (err, "5.00 cents"));

  /* No workspace left behind. */
  {
    g_autofree char *written = g_build_filename (root, "RESULT.txt", NULL);
    g_assert_false (g_file_test (written, G_FILE_TEST_EXISTS));
  }
  if (g_file_test (worktrees_dir, G_FILE_TEST_IS_DIR))
    {
      g_autoptr(GDir) dir = g_dir_open (worktrees_dir, 0, NULL);
      const char *entry;

      while ((entry = g_dir_read_name (dir)) != NULL)
        g_assert_true (g_str_has_prefix (entry, "."));  /* at most lock or pool bookkeeping */
    }
  {
    g_autofree char *owners = g_build_filename (root, ".subagent", "owners", NULL);
    g_autoptr(GDir) dir = g_dir_open (owners, 0, NULL);

    g_assert_true (dir == NULL || g_dir_read_name (dir) == NULL);  /* no owner record left */
  }
  worktrees_out = sat_run (root, FALSE, NULL, "git", "worktree", "list", "--porcelain", NULL);
  g_assert_null (strstr (worktrees_out, ".subagent"));
  branches = sat_run (root, FALSE, NULL, "git", "branch", "--list", "subagent/*", NULL);
  g_assert_cmpstr (g_strstrip (branches), ==, "");

  /* Each disposal is an event. */
  {
    g_autofree char *events = sat_read_file (root, ".subagent/events.jsonl");
    guint disposed = 0;

    for (const char *p = events; (p = strstr (p, "\"event\":\"workspace-disposed\"")) != NULL; p++)
      disposed++;
    g_assert_cmpuint (disposed, ==, 20);
  }
  sat_rm_rf (root);
}

static void
test_cli_team (void)
{
  g_autofree char *root = sst_make_root (FALSE,
                                         "alpha", "name: alpha\ncommand: [/bin/sh, -c, 'read t; echo \"alpha on $t\"']\n",
                                         "beta", "name: beta\ncommand: [/bin/sh, -c, 'read t; echo \"beta on $t\"']\n",
                                         NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonNode) json = NULL;

  sat_write_file (root, ".subagent/teams/pair.yaml", "name: pair\nmembers: [alpha, beta]\n");
  g_assert_cmpint (sat_run_ctl (root, &out, &err, "team", "pair", "the", "task", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "## alpha\nalpha on the task"));
  g_assert_nonnull (strstr (out, "## beta\nbeta on the task"));
  g_assert_nonnull (strstr (err, "[2/2]"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (sat_run_ctl (root, &out, &err, "team", "--json", "pair", "again", NULL), ==, 0);
  json = json_from_string (out, NULL);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json), "team"), ==, "pair");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (sat_run_ctl (root, &out, &err, "team", "nobody", "x", NULL), ==, 1);
  g_assert_nonnull (strstr (err, "No team “nobody”"));
  sat_rm_rf (root);
}

static void
test_cli_events_stream (void)
{
  g_autofree char *root = sst_make_root (FALSE, "echo",
                                         "name: echo\ncommand: [/bin/sh, -c, 'read t; echo \"echo $t\"']\n", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *file_out = NULL;
  g_auto(GStrv) lines = NULL;
  guint accepted = 0, completed = 0;

  sat_write_file (root, "batch.json", "[{\"task\": \"a\", \"def_name\": \"echo\"}, {\"task\": \"b\", \"def_name\": \"echo\"}]");
  g_assert_cmpint (sat_run_ctl (root, &out, &err, "--events", "batch", "batch.json", NULL), ==, 0);
  lines = g_strsplit (g_strchomp (out), "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonNode) node = json_from_string (lines[i], NULL);
      const char *kind;

      g_assert_nonnull (node);
      kind = json_object_get_string_member (json_node_get_object (node), "event");
      accepted += g_str_equal (kind, "accepted");
      completed += g_str_equal (kind, "completed");
    }
  g_assert_cmpuint (accepted, ==, 2);
  g_assert_cmpuint (completed, ==, 2);

  /* And the file the supervisor kept. */
  g_assert_cmpint (sat_run_ctl (root, &file_out, NULL, "--events", NULL), ==, 0);
  g_assert_cmpstr (g_strchomp (file_out), ==, out);  /* out lost its last newline above */
  sat_rm_rf (root);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/batch/results-in-input-order", test_results_in_input_order);
  g_test_add_func ("/batch/feeds-past-the-outstanding-cap", test_batch_feeds_past_outstanding_cap);
  g_test_add_func ("/batch/fed-by-another-childs-end", test_batch_fed_by_another_childs_end);
  g_test_add_func ("/batch/no-handler-connected", test_batch_with_no_handler_connected);
  g_test_add_func ("/batch/uses-the-centralized-approval-queue", test_batch_uses_centralized_approval_queue);
  g_test_add_func ("/batch/agent-cap-refuses-the-whole-batch", test_agent_cap_refuses_whole_batch);
  g_test_add_func ("/batch/items-from-json", test_items_from_json);
  g_test_add_func ("/team/aggregates-members-answers", test_team_aggregates_members_answers);
  g_test_add_func ("/team/without-aggregator-joins-answers", test_team_without_aggregator);
  g_test_add_func ("/team/files-are-validated-and-kept-under-root", test_team_files);
  g_test_add_func ("/batch/cli/twenty-worktree-children", test_cli_batch_twenty_worktree_children);
  g_test_add_func ("/batch/cli/events-stream", test_cli_events_stream);
  g_test_add_func ("/team/cli/runs-a-team", test_cli_team);
  return g_test_run ();
}
