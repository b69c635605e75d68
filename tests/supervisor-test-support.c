/* supervisor-test-support.c: a runner the tests hold at the gate, and
 * helpers for the supervisor, batch, team, tool and follow-up tests.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdarg.h>

#include "supervisor-test-support.h"

typedef struct {
  GTask *task;
  GCancellable *cancellable;
  gulong handler;
  char *name;
  GateRunner *runner;
} Pending;

struct _GateRunner
{
  GObject parent_instance;

  GateDecideFunc decide;
  gpointer decide_data;
  gboolean ignore_cancel;
  char *approval_tool;
  GPtrArray *started;    /* char*: tasks in start order */
  GHashTable *contexts;  /* task → SubagentRunContext */
  GHashTable *pending;   /* task → Pending */
};

static void gate_runner_iface_init (SubagentRunnerInterface *iface);
G_DEFINE_FINAL_TYPE_WITH_CODE (GateRunner, gate_runner, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SUBAGENT_TYPE_RUNNER, gate_runner_iface_init))

static void
pending_free (Pending *pending)
{
  if (pending->handler != 0)
    g_cancellable_disconnect (pending->cancellable, pending->handler);
  g_clear_object (&pending->task);
  g_clear_object (&pending->cancellable);
  g_free (pending->name);
  g_free (pending);
}

static void
on_cancelled (GCancellable *cancellable,
              gpointer      user_data)
{
  Pending *pending = user_data;
  GateRunner *self = pending->runner;

  /* No disconnect from inside the handler. */
  pending->handler = 0;
  g_task_return_pointer (pending->task,
                         subagent_run_outcome_new (SUBAGENT_STOP_REASON_CANCELLED, 0, 0, 0, "", "", "cancelled by the test"),
                         g_object_unref);
  g_hash_table_remove (self->pending, pending->name);
}

static void
ask_approval (GTask        *task,
              gpointer      source,
              gpointer      task_data,
              GCancellable *cancellable)
{
  GateRunner *self = source;
  SubagentRunContext *context = task_data;
  GObject *handler = subagent_run_context_get_approval_handler (context);
  g_autoptr(JsonObject) arguments = json_object_new ();
  g_autofree char *reason = NULL;
  SubagentApprovalDecision decision;
  g_autofree char *answer = NULL;

  g_assert_true (SUBAGENT_IS_APPROVAL_HANDLER (handler));
  json_object_set_string_member (arguments, "path", "/etc/important");
  decision = subagent_approval_handler_check (SUBAGENT_APPROVAL_HANDLER (handler), self->approval_tool, arguments,
                                              TRUE, FALSE, cancellable, &reason);
  answer = decision == SUBAGENT_APPROVAL_DECISION_ALLOW ? g_strdup ("approved")
                                                        : g_strdup_printf ("denied: %s", reason ? reason : "");
  g_task_return_pointer (task, subagent_run_outcome_new (SUBAGENT_STOP_REASON_COMPLETE, 1, 1, 0, answer, "", ""),
                         g_object_unref);
}

static void
gate_run_async (SubagentRunner      *runner,
                SubagentRunContext  *context,
                GCancellable        *cancellable,
                GAsyncReadyCallback  callback,
                gpointer             user_data)
{
  GateRunner *self = GATE_RUNNER (runner);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  const char *name = subagent_run_context_get_task (context);
  SubagentRunOutcome *outcome = NULL;
  Pending *pending;

  g_task_set_check_cancellable (task, FALSE);
  g_ptr_array_add (self->started, g_strdup (name));
  g_hash_table_replace (self->contexts, g_strdup (name), g_object_ref (context));

  if (self->approval_tool != NULL)
    {
      g_task_set_task_data (task, g_object_ref (context), g_object_unref);
      g_task_run_in_thread (task, ask_approval);
      return;
    }
  if (self->decide != NULL && (outcome = self->decide (context, self->decide_data)) != NULL)
    {
      g_task_return_pointer (task, outcome, g_object_unref);
      return;
    }

  if (cancellable != NULL && !self->ignore_cancel && g_cancellable_is_cancelled (cancellable))
    {
      g_task_return_pointer (task, subagent_run_outcome_new (SUBAGENT_STOP_REASON_CANCELLED, 0, 0, 0, "", "",
                                                             "cancelled by the test"), g_object_unref);
      return;
    }
  g_assert_false (g_hash_table_contains (self->pending, name));
  pending = g_new0 (Pending, 1);
  pending->task = g_steal_pointer (&task);
  pending->name = g_strdup (name);
  pending->runner = self;
  pending->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  g_hash_table_insert (self->pending, g_strdup (name), pending);
  if (cancellable != NULL && !self->ignore_cancel)
    pending->handler = g_cancellable_connect (cancellable, G_CALLBACK (on_cancelled), pending, NULL);
}

static SubagentRunOutcome *
gate_run_finish (SubagentRunner  *runner,
                 GAsyncResult    *result,
                 GError         **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
gate_runner_iface_init (SubagentRunnerInterface *iface)
{
  iface->run_async = gate_run_async;
  iface->run_finish = gate_run_finish;
}

static void
gate_runner_finalize (GObject *object)
{
  GateRunner *self = GATE_RUNNER (object);

  g_assert_cmpuint (g_hash_table_size (self->pending), ==, 0);
  g_free (self->approval_tool);
  g_ptr_array_unref (self->started);
  g_hash_table_unref (self->contexts);
  g_hash_table_unref (self->pending);
  G_OBJECT_CLASS (gate_runner_parent_class)->finalize (object);
}

static void
gate_runner_class_init (GateRunnerClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = gate_runner_finalize;
}

static void
gate_runner_init (GateRunner *self)
{
  self->started = g_ptr_array_new_with_free_func (g_free);
  self->contexts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->pending = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) pending_free);
}

GateRunner *
gate_runner_new (void)
{
  return g_object_new (GATE_TYPE_RUNNER, NULL);
}

void
gate_runner_set_decide (GateRunner     *self,
                        GateDecideFunc  func,
                        gpointer        user_data)
{
  self->decide = func;
  self->decide_data = user_data;
}

void
gate_runner_set_ignore_cancel (GateRunner *self,
                               gboolean    ignore)
{
  self->ignore_cancel = ignore;
}

void
gate_runner_set_approval_tool (GateRunner *self,
                               const char *tool_name)
{
  g_free (self->approval_tool);
  self->approval_tool = g_strdup (tool_name);
}

guint
gate_runner_get_n_started (GateRunner *self)
{
  return self->started->len;
}

const char *
gate_runner_get_started_task (GateRunner *self,
                              guint       index)
{
  g_assert_cmpuint (index, <, self->started->len);
  return self->started->pdata[index];
}

SubagentRunContext *
gate_runner_get_context (GateRunner *self,
                         const char *task)
{
  return g_hash_table_lookup (self->contexts, task);
}

gboolean
gate_runner_is_waiting (GateRunner *self,
                        const char *task)
{
  return g_hash_table_contains (self->pending, task);
}

void
gate_runner_release (GateRunner         *self,
                     const char         *task,
                     SubagentRunOutcome *outcome)
{
  Pending *pending = g_hash_table_lookup (self->pending, task);
  g_autoptr(GTask) gtask = NULL;

  g_assert_nonnull (pending);
  if (pending->handler != 0)
    g_cancellable_disconnect (pending->cancellable, pending->handler);
  pending->handler = 0;
  gtask = g_steal_pointer (&pending->task);
  g_hash_table_remove (self->pending, task);
  g_task_return_pointer (gtask, outcome, g_object_unref);
}

void
gate_runner_release_all (GateRunner *self)
{
  GList *names = g_hash_table_get_keys (self->pending);
  GList *copies = NULL;

  for (GList *l = names; l != NULL; l = l->next)
    copies = g_list_prepend (copies, g_strdup (l->data));
  g_list_free (names);
  for (GList *l = copies; l != NULL; l = l->next)
    gate_runner_release (self, l->data, sst_complete ("released", 0));
  g_list_free_full (copies, g_free);
}

SubagentRunOutcome *
sst_complete (const char *answer,
              double      cost)
{
  return subagent_run_outcome_new (SUBAGENT_STOP_REASON_COMPLETE, 1, 0, cost, answer, "", "");
}

char *
sst_make_root (gboolean    git,
               const char *first_name,
               ...)
{
  char *root = git ? sat_make_git_repo ("README", "hello\n", "src/main.c", "int main(void){return 0;}\n", NULL)
                   : sat_make_temp_dir ("supervisor");
  va_list args;

  va_start (args, first_name);
  for (const char *name = first_name; name != NULL; name = va_arg (args, const char *))
    {
      const char *yaml = va_arg (args, const char *);
      g_autofree char *path = g_strdup_printf (".subagent/agents/%s.yaml", name);

      sat_write_file (root, path, yaml);
    }
  va_end (args);
  return root;
}

SubagentManager *
sst_manager_new (const char *root,
                 GateRunner *runner)
{
  g_autoptr(GError) error = NULL;
  SubagentManager *manager = subagent_manager_new (root, &error);

  g_assert_no_error (error);
  if (runner != NULL)
    subagent_manager_set_runner (manager, SUBAGENT_RUNNER (runner));
  return manager;
}

SubagentSupervisor *
sst_supervisor_new (SubagentManager *manager,
                    guint            max_parallel,
                    gint             max_agents,
                    double           max_cost_cents)
{
  return g_object_new (SUBAGENT_TYPE_SUPERVISOR, "manager", manager, "max-parallel", max_parallel,
                       "max-agents", max_agents, "max-cost-cents", max_cost_cents, NULL);
}

void
sst_wait_flag (gboolean *flag)
{
  while (!*flag)
    g_main_context_iteration (NULL, TRUE);
}

typedef struct {
  gboolean done;
  SubagentRunResult *result;
  GError *error;
} Wait;

static void
waited (GObject      *source,
        GAsyncResult *res,
        gpointer      user_data)
{
  Wait *wait = user_data;

  wait->result = subagent_supervisor_wait_finish (SUBAGENT_SUPERVISOR (source), res, &wait->error);
  wait->done = TRUE;
}

char *
sst_result_text (SubagentRunResult *result)
{
  g_autoptr(JsonObject) object = subagent_run_result_to_json (result);
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), object);
  g_autofree char *json = json_to_string (node, FALSE);

  return g_strdup_printf ("%s session=%s stop=%s confinement=%s", json, subagent_run_result_get_session_id (result),
                          subagent_run_result_get_stop_reason (result), subagent_run_result_get_confinement (result));
}

SubagentRunResult *
sst_wait_result (SubagentSupervisor  *supervisor,
                 const char          *run_id,
                 GError             **error)
{
  Wait wait = { FALSE, NULL, NULL };

  subagent_supervisor_wait_async (supervisor, run_id, NULL, waited, &wait);
  sst_wait_flag (&wait.done);
  if (wait.error != NULL)
    g_propagate_error (error, wait.error);
  return wait.result;
}

void
sst_wait_started (GateRunner *runner,
                  guint       n)
{
  while (gate_runner_get_n_started (runner) < n)
    g_main_context_iteration (NULL, TRUE);
}

void
sst_flush_main (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
record (SubagentSupervisor *supervisor,
        SubagentEvent      *event,
        gpointer            user_data)
{
  SstRecorder *recorder = user_data;

  g_ptr_array_add (recorder->events, g_object_ref (event));
}

void
sst_recorder_start (SstRecorder        *recorder,
                    SubagentSupervisor *supervisor)
{
  recorder->events = g_ptr_array_new_with_free_func (g_object_unref);
  recorder->supervisor = supervisor;
  recorder->handler = g_signal_connect (supervisor, "event", G_CALLBACK (record), recorder);
}

void
sst_recorder_stop (SstRecorder *recorder)
{
  if (recorder->handler != 0)
    g_signal_handler_disconnect (recorder->supervisor, recorder->handler);
  recorder->handler = 0;
  g_clear_pointer (&recorder->events, g_ptr_array_unref);
}

char *
sst_recorder_kinds (SstRecorder *recorder,
                    const char  *run_id)
{
  GString *kinds = g_string_new (NULL);

  for (guint i = 0; i < recorder->events->len; i++)
    {
      SubagentEvent *event = recorder->events->pdata[i];

      if (!g_str_equal (subagent_event_get_run_id (event), run_id))
        continue;
      if (kinds->len > 0)
        g_string_append_c (kinds, ',');
      g_string_append (kinds, subagent_event_kind_to_string (subagent_event_get_kind (event)));
    }
  return g_string_free (kinds, FALSE);
}

SubagentEvent *
sst_recorder_find (SstRecorder       *recorder,
                   const char        *run_id,
                   SubagentEventKind  kind)
{
  for (guint i = 0; i < recorder->events->len; i++)
    {
      SubagentEvent *event = recorder->events->pdata[i];

      if (g_str_equal (subagent_event_get_run_id (event), run_id) && subagent_event_get_kind (event) == kind)
        return event;
    }
  return NULL;
}
