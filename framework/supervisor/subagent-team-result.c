/* subagent-team-result.c: running a team, and what it gives.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-supervisor-private.h"

static gboolean
is_blank (const char *text)
{
  for (; text != NULL && *text != '\0'; text++)
    if (!g_ascii_isspace (*text))
      return FALSE;
  return TRUE;
}

/**
 * SubagentTeamResult:
 *
 * What subagent_supervisor_run_team() gives: the team, its members'
 * results in member order, and the aggregator's result when the team has
 * one. The final answer is the aggregator's, else the members' answers one
 * after the other. Immutable.
 */
struct _SubagentTeamResult
{
  GObject parent_instance;

  SubagentTeam *team;
  GPtrArray *member_results;
  SubagentRunResult *aggregate;
  char *final_answer;
};

G_DEFINE_FINAL_TYPE (SubagentTeamResult, subagent_team_result, G_TYPE_OBJECT)

static void
subagent_team_result_finalize (GObject *object)
{
  SubagentTeamResult *self = SUBAGENT_TEAM_RESULT (object);

  g_clear_object (&self->team);
  g_clear_pointer (&self->member_results, g_ptr_array_unref);
  g_clear_object (&self->aggregate);
  g_free (self->final_answer);
  G_OBJECT_CLASS (subagent_team_result_parent_class)->finalize (object);
}

static void
subagent_team_result_class_init (SubagentTeamResultClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = subagent_team_result_finalize;
}

static void
subagent_team_result_init (SubagentTeamResult *self)
{
}

static SubagentTeamResult *
team_result_new (SubagentTeam      *team,
                 GPtrArray         *member_results,
                 SubagentRunResult *aggregate)
{
  SubagentTeamResult *self = g_object_new (SUBAGENT_TYPE_TEAM_RESULT, NULL);

  self->team = g_object_ref (team);
  self->member_results = g_ptr_array_ref (member_results);
  self->aggregate = aggregate ? g_object_ref (aggregate) : NULL;
  if (aggregate != NULL)
    self->final_answer = g_strdup (subagent_run_result_get_final_answer (aggregate));
  else
    {
      GString *answer = g_string_new (NULL);

      for (guint i = 0; i < member_results->len; i++)
        g_string_append_printf (answer, "%s## %s\n%s\n", i ? "\n" : "", subagent_team_get_members (team)[i],
                                subagent_run_result_get_final_answer (member_results->pdata[i]));
      self->final_answer = g_string_free (answer, FALSE);
    }
  return self;
}

/**
 * subagent_team_result_get_team:
 * @self: a #SubagentTeamResult
 *
 * Returns: (transfer none): the team
 */
SubagentTeam *
subagent_team_result_get_team (SubagentTeamResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TEAM_RESULT (self), NULL);
  return self->team;
}

/**
 * subagent_team_result_get_member_results:
 * @self: a #SubagentTeamResult
 *
 * Returns: (transfer none) (element-type SubagentRunResult): the members' results, in member order
 */
GPtrArray *
subagent_team_result_get_member_results (SubagentTeamResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TEAM_RESULT (self), NULL);
  return self->member_results;
}

/**
 * subagent_team_result_get_aggregate:
 * @self: a #SubagentTeamResult
 *
 * Returns: (transfer none) (nullable): the aggregator's result
 */
SubagentRunResult *
subagent_team_result_get_aggregate (SubagentTeamResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TEAM_RESULT (self), NULL);
  return self->aggregate;
}

/**
 * subagent_team_result_get_final_answer:
 * @self: a #SubagentTeamResult
 *
 * Returns: (transfer none): the team's answer
 */
const char *
subagent_team_result_get_final_answer (SubagentTeamResult *self)
{
  g_return_val_if_fail (SUBAGENT_IS_TEAM_RESULT (self), NULL);
  return self->final_answer;
}

/**
 * subagent_team_result_to_json:
 * @self: a #SubagentTeamResult
 *
 * Returns: (transfer full): `{"team", "final_answer", "members": [results],
 *   "aggregate": result or null}`, results as subagent_run_result_to_json()
 */
JsonObject *
subagent_team_result_to_json (SubagentTeamResult *self)
{
  JsonObject *object;
  JsonArray *members;

  g_return_val_if_fail (SUBAGENT_IS_TEAM_RESULT (self), NULL);

  object = json_object_new ();
  members = json_array_new ();
  json_object_set_string_member (object, "team", subagent_team_get_name (self->team));
  json_object_set_string_member (object, "final_answer", self->final_answer);
  for (guint i = 0; i < self->member_results->len; i++)
    json_array_add_object_element (members, subagent_run_result_to_json (self->member_results->pdata[i]));
  json_object_set_array_member (object, "members", members);
  if (self->aggregate != NULL)
    json_object_set_object_member (object, "aggregate", subagent_run_result_to_json (self->aggregate));
  else
    json_object_set_null_member (object, "aggregate");
  return object;
}

typedef struct {
  char *name;
  char *task;
  SubagentTeam *team;
  GPtrArray *member_results;
} TeamRun;

static void
team_run_free (TeamRun *run)
{
  g_free (run->name);
  g_free (run->task);
  g_clear_object (&run->team);
  g_clear_pointer (&run->member_results, g_ptr_array_unref);
  g_free (run);
}

static void
team_lookup_in_thread (GTask        *task,
                       gpointer      source,
                       gpointer      task_data,
                       GCancellable *cancellable)
{
  SubagentSupervisor *self = source;
  TeamRun *run = task_data;
  GError *error = NULL;

  run->team = subagent_team_lookup (subagent_manager_get_root (self->manager), run->name, &error);
  if (run->team == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
team_aggregated (GObject      *source,
                 GAsyncResult *res,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TeamRun *run = g_task_get_task_data (task);
  GError *error = NULL;
  g_autoptr(SubagentRunResult) aggregate = subagent_supervisor_run_finish (SUBAGENT_SUPERVISOR (source), res, &error);

  if (aggregate == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, team_result_new (run->team, run->member_results, aggregate), g_object_unref);
}

static void
team_members_done (GObject      *source,
                   GAsyncResult *res,
                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SubagentSupervisor *self = SUBAGENT_SUPERVISOR (source);
  TeamRun *run = g_task_get_task_data (task);
  g_autoptr(SubagentRunOptions) options = NULL;
  g_autofree char *aggregator_task = NULL;
  GError *error = NULL;

  run->member_results = subagent_supervisor_run_batch_finish (self, res, &error);
  if (run->member_results == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (subagent_team_get_aggregator (run->team) == NULL)
    {
      g_task_return_pointer (task, team_result_new (run->team, run->member_results, NULL), g_object_unref);
      return;
    }
  options = subagent_run_options_new ();
  subagent_run_options_set_def_name (options, subagent_team_get_aggregator (run->team));
  aggregator_task = subagent_team_aggregator_task (run->team, run->task, run->member_results);
  subagent_supervisor_run_async (self, aggregator_task, options, g_task_get_cancellable (task),
                                 team_aggregated, g_object_ref (task));
}

static void
team_found (GObject      *source,
            GAsyncResult *res,
            gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TeamRun *run = g_task_get_task_data (task);
  g_autoptr(GPtrArray) items = NULL;
  GError *error = NULL;

  if (!g_task_propagate_boolean (G_TASK (res), &error))
    {
      g_task_return_error (task, error);
      return;
    }
  items = subagent_team_make_items (run->team, run->task);
  subagent_supervisor_run_batch_async (SUBAGENT_SUPERVISOR (source), items, g_task_get_cancellable (task),
                                       team_members_done, g_object_ref (task));
}

/**
 * subagent_supervisor_run_team_async:
 * @self: a #SubagentSupervisor
 * @team_name: a team of `<root>/.subagent/teams/`
 * @task: the team's task
 * @cancellable: (nullable): ends the wait — never the children
 * @callback: (scope async): called with the team's result
 * @user_data: (closure): data for @callback
 *
 * Runs a team: every member gets @task, as one batch (batch indices in
 * member order, the centralized approval queue in use); then, when the
 * team has an aggregator, it runs with the task and the members' answers
 * (subagent_team_aggregator_task()). The team file is read in a thread.
 */
void
subagent_supervisor_run_team_async (SubagentSupervisor  *self,
                                    const char          *team_name,
                                    const char          *task_text,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GTask) lookup = NULL;
  TeamRun *run;

  g_return_if_fail (SUBAGENT_IS_SUPERVISOR (self));
  g_return_if_fail (team_name != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, subagent_supervisor_run_team_async);
  if (is_blank (task_text))
    {
      g_task_return_new_error (task, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT, "A team needs a non-empty task");
      return;
    }
  run = g_new0 (TeamRun, 1);
  run->name = g_strdup (team_name);
  run->task = g_strdup (task_text);
  g_task_set_task_data (task, run, (GDestroyNotify) team_run_free);

  lookup = g_task_new (self, cancellable, team_found, g_steal_pointer (&task));
  g_task_set_task_data (lookup, run, NULL);
  g_task_run_in_thread (lookup, team_lookup_in_thread);
}

/**
 * subagent_supervisor_run_team_finish:
 * @self: a #SubagentSupervisor
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the team's result (members that
 *   failed are in it as failed results), or %NULL with @error set: an
 *   unknown team, an agent cap, a refused aggregator, a cancelled wait
 */
SubagentTeamResult *
subagent_supervisor_run_team_finish (SubagentSupervisor  *self,
                                     GAsyncResult        *result,
                                     GError             **error)
{
  g_return_val_if_fail (SUBAGENT_IS_SUPERVISOR (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
