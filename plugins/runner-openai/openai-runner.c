/* openai-runner.c: SubagentOpenaiRunner, the `openai-chat` runner.
 *
 * The agent loop blocks (HTTP reads, tools, approval waits), so each run
 * gets a thread of its own rather than one of GTask's shared pool, which
 * long runs would starve. The result comes back to the caller's context.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "openai-private.h"

struct _SubagentOpenaiRunner
{
  GObject parent_instance;
};

static void runner_iface_init (SubagentRunnerInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SubagentOpenaiRunner, subagent_openai_runner, G_TYPE_OBJECT,
                                G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_RUNNER, runner_iface_init))

static gpointer
run_thread (gpointer data)
{
  g_autoptr(GTask) task = data;
  SubagentRunContext *context = g_task_get_task_data (task);

  g_task_return_pointer (task, openai_loop_run (context, g_task_get_cancellable (task)), g_object_unref);
  return NULL;
}

static void
openai_runner_run_async (SubagentRunner      *runner,
                         SubagentRunContext  *context,
                         GCancellable        *cancellable,
                         GAsyncReadyCallback  callback,
                         gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (runner, cancellable, callback, user_data);
  g_autoptr(GError) error = NULL;
  GThread *thread;

  g_task_set_source_tag (task, openai_runner_run_async);
  /* A cancelled child still has an outcome (stop reason cancelled). */
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, g_object_ref (context), g_object_unref);
  thread = g_thread_try_new ("subagent-model-loop", run_thread, g_object_ref (task), &error);
  if (thread == NULL)
    {
      g_object_unref (task);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  g_thread_unref (thread);
}

static SubagentRunOutcome *
openai_runner_run_finish (SubagentRunner  *runner,
                          GAsyncResult    *result,
                          GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, runner), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
runner_iface_init (SubagentRunnerInterface *iface)
{
  iface->run_async = openai_runner_run_async;
  iface->run_finish = openai_runner_run_finish;
}

static void
subagent_openai_runner_class_init (SubagentOpenaiRunnerClass *klass)
{
}

static void
subagent_openai_runner_class_finalize (SubagentOpenaiRunnerClass *klass)
{
}

static void
subagent_openai_runner_init (SubagentOpenaiRunner *self)
{
}

void
subagent_openai_runner_register (GTypeModule *module)
{
  subagent_openai_runner_register_type (module);
}

static gboolean
openai_plugin_register (SubagentPluginModule  *module,
                        GError               **error)
{
  subagent_openai_runner_register (G_TYPE_MODULE (module));
  subagent_plugin_module_provide (module, "openai-chat", SUBAGENT_TYPE_OPENAI_RUNNER);
  return TRUE;
}

SUBAGENT_PLUGIN_DEFINE ("runner-openai", PLUGIN_VERSION, "LGPL-2.1-or-later",
                        "Model-backed children: an OpenAI-compatible chat-completions agent loop",
                        openai_plugin_register)
