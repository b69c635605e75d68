/* subagent-command-runner.c: a runner that runs a program as the child agent.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-command-run-private.h"

/**
 * SubagentCommandRunner:
 *
 * A #SubagentRunner that runs a program as the child agent, inside the
 * run's isolation (subagent_isolation_context_spawnv()), and talks to it
 * over stdio. The program is the definition's `command`, or
 * #SubagentCommandRunner:default-command when the definition has none.
 *
 * The child gets the task on stdin (the definition's system prompt, a blank
 * line, then the task), `SUBAGENT_*` environment variables describing the
 * run, and reports on stdout: JSON lines `{"type":"usage",...}` and
 * `{"type":"final","answer":...}`, any other line being plain output. The
 * runner enforces the run's wall-clock timeout, iteration, tool-call and
 * cost limits, and cancellation, by stopping the child (SIGTERM, then
 * SIGKILL after #SubagentCommandRunner:kill-grace-ms) together with every
 * process it started. `docs/child-protocol.md` describes the protocol.
 *
 * One runner serves any number of concurrent runs.
 */
struct _SubagentCommandRunner
{
  GObject parent_instance;

  GMutex lock;
  char **default_command;
  gboolean interactive_stdin;
  guint kill_grace_ms;
};

static void subagent_command_runner_iface_init (SubagentRunnerInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SubagentCommandRunner, subagent_command_runner, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SUBAGENT_TYPE_RUNNER, subagent_command_runner_iface_init))

enum {
  PROP_0,
  PROP_DEFAULT_COMMAND,
  PROP_INTERACTIVE_STDIN,
  PROP_KILL_GRACE_MS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static char **
choose_command (SubagentCommandRunner *self,
                SubagentDef           *def)
{
  const char * const *command = subagent_def_get_command (def);
  char **argv;

  if (command != NULL && command[0] != NULL && *command[0] != '\0')
    return g_strdupv ((char **) command);
  g_mutex_lock (&self->lock);
  argv = (self->default_command && self->default_command[0]) ? g_strdupv (self->default_command) : NULL;
  g_mutex_unlock (&self->lock);
  return argv;
}

static void
subagent_command_runner_run_async (SubagentRunner      *runner,
                                   SubagentRunContext  *context,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  SubagentCommandRunner *self = SUBAGENT_COMMAND_RUNNER (runner);
  g_autoptr(GTask) task = NULL;
  char **argv;
  SubagentDef *def = subagent_run_context_get_definition (context);
  SubagentIsolationContext *isolation = subagent_run_context_get_isolation (context);
  gboolean interactive_stdin;
  guint kill_grace_ms;

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, subagent_command_runner_run_async);
  /* A cancelled run still has an outcome to report. */
  g_task_set_check_cancellable (task, FALSE);

  if (def == NULL || isolation == NULL)
    {
      g_task_return_new_error (task, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                               "The run context of run %s has no %s; a command runner needs both a definition and a prepared isolation",
                               subagent_run_context_get_run_id (context), def == NULL ? "definition" : "isolation");
      return;
    }
  argv = choose_command (self, def);
  if (argv == NULL)
    {
      g_task_return_new_error (task, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                               "Definition “%s” has no command to run: set `command` in %s, or a default-command on the runner",
                               subagent_def_get_name (def),
                               subagent_def_get_source_path (def) ? subagent_def_get_source_path (def) : "the definition");
      return;
    }

  g_mutex_lock (&self->lock);
  interactive_stdin = self->interactive_stdin;
  kill_grace_ms = self->kill_grace_ms;
  g_mutex_unlock (&self->lock);
  subagent_command_run_start (task, context, argv, interactive_stdin, kill_grace_ms, cancellable);
}

static SubagentRunOutcome *
subagent_command_runner_run_finish (SubagentRunner  *runner,
                                    GAsyncResult    *result,
                                    GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, runner), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
subagent_command_runner_iface_init (SubagentRunnerInterface *iface)
{
  iface->run_async = subagent_command_runner_run_async;
  iface->run_finish = subagent_command_runner_run_finish;
}

static void
subagent_command_runner_finalize (GObject *object)
{
  SubagentCommandRunner *self = SUBAGENT_COMMAND_RUNNER (object);

  g_strfreev (self->default_command);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (subagent_command_runner_parent_class)->finalize (object);
}

static void
subagent_command_runner_get_property (GObject    *object,
                                      guint       prop_id,
                                      GValue     *value,
                                      GParamSpec *pspec)
{
  SubagentCommandRunner *self = SUBAGENT_COMMAND_RUNNER (object);

  switch (prop_id)
    {
    case PROP_DEFAULT_COMMAND:
      g_value_take_boxed (value, subagent_command_runner_dup_default_command (self));
      break;
    case PROP_INTERACTIVE_STDIN:
      g_value_set_boolean (value, subagent_command_runner_get_interactive_stdin (self));
      break;
    case PROP_KILL_GRACE_MS:
      g_value_set_uint (value, subagent_command_runner_get_kill_grace_ms (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_command_runner_set_property (GObject      *object,
                                      guint         prop_id,
                                      const GValue *value,
                                      GParamSpec   *pspec)
{
  SubagentCommandRunner *self = SUBAGENT_COMMAND_RUNNER (object);

  switch (prop_id)
    {
    case PROP_DEFAULT_COMMAND:
      subagent_command_runner_set_default_command (self, g_value_get_boxed (value));
      break;
    case PROP_INTERACTIVE_STDIN:
      subagent_command_runner_set_interactive_stdin (self, g_value_get_boolean (value));
      break;
    case PROP_KILL_GRACE_MS:
      subagent_command_runner_set_kill_grace_ms (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_command_runner_class_init (SubagentCommandRunnerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = subagent_command_runner_finalize;
  object_class->get_property = subagent_command_runner_get_property;
  object_class->set_property = subagent_command_runner_set_property;

  /**
   * SubagentCommandRunner:default-command:
   *
   * The program (argument vector) to run for definitions without a `command`.
   */
  properties[PROP_DEFAULT_COMMAND] =
    g_param_spec_boxed ("default-command", NULL, NULL, G_TYPE_STRV, flags);

  /**
   * SubagentCommandRunner:interactive-stdin:
   *
   * Whether the child's stdin stays open after the task, until the child
   * ends or sends its final answer, so the runner can write messages to it.
   * When %FALSE (the default) stdin is closed after the task, which suits
   * programs that read it to the end.
   */
  properties[PROP_INTERACTIVE_STDIN] =
    g_param_spec_boolean ("interactive-stdin", NULL, NULL, FALSE, flags);

  /**
   * SubagentCommandRunner:kill-grace-ms:
   *
   * How long a child has to exit after SIGTERM before it is killed.
   */
  properties[PROP_KILL_GRACE_MS] =
    g_param_spec_uint ("kill-grace-ms", NULL, NULL, 0, G_MAXINT,
                       SUBAGENT_COMMAND_RUNNER_DEFAULT_KILL_GRACE_MS, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_command_runner_init (SubagentCommandRunner *self)
{
  g_mutex_init (&self->lock);
  self->kill_grace_ms = SUBAGENT_COMMAND_RUNNER_DEFAULT_KILL_GRACE_MS;
}

/**
 * subagent_command_runner_new:
 *
 * Creates a command runner.
 *
 * Returns: (transfer full): a new #SubagentCommandRunner
 */
SubagentCommandRunner *
subagent_command_runner_new (void)
{
  return g_object_new (SUBAGENT_TYPE_COMMAND_RUNNER, NULL);
}

/**
 * subagent_command_runner_dup_default_command:
 * @self: a #SubagentCommandRunner
 *
 * Returns: (transfer full) (nullable) (array zero-terminated=1): a copy of the default command
 */
char **
subagent_command_runner_dup_default_command (SubagentCommandRunner *self)
{
  char **argv;

  g_return_val_if_fail (SUBAGENT_IS_COMMAND_RUNNER (self), NULL);

  g_mutex_lock (&self->lock);
  argv = g_strdupv (self->default_command);
  g_mutex_unlock (&self->lock);
  return argv;
}

/**
 * subagent_command_runner_set_default_command:
 * @self: a #SubagentCommandRunner
 * @argv: (nullable) (array zero-terminated=1): the program and its arguments
 *
 * Sets the program run for definitions without a `command`. Runs already
 * started keep the command they started with.
 */
void
subagent_command_runner_set_default_command (SubagentCommandRunner *self,
                                             const char * const    *argv)
{
  gboolean changed;

  g_return_if_fail (SUBAGENT_IS_COMMAND_RUNNER (self));

  g_mutex_lock (&self->lock);
  changed = !(self->default_command == NULL && argv == NULL) &&
            (self->default_command == NULL || argv == NULL ||
             !g_strv_equal ((const char * const *) self->default_command, argv));
  if (changed)
    {
      g_strfreev (self->default_command);
      self->default_command = g_strdupv ((char **) argv);
    }
  g_mutex_unlock (&self->lock);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DEFAULT_COMMAND]);
}

/**
 * subagent_command_runner_get_interactive_stdin:
 * @self: a #SubagentCommandRunner
 *
 * Returns: whether children's stdin stays open after the task
 */
gboolean
subagent_command_runner_get_interactive_stdin (SubagentCommandRunner *self)
{
  gboolean interactive;

  g_return_val_if_fail (SUBAGENT_IS_COMMAND_RUNNER (self), FALSE);

  g_mutex_lock (&self->lock);
  interactive = self->interactive_stdin;
  g_mutex_unlock (&self->lock);
  return interactive;
}

/**
 * subagent_command_runner_set_interactive_stdin:
 * @self: a #SubagentCommandRunner
 * @interactive: whether to keep children's stdin open after the task
 *
 * Sets #SubagentCommandRunner:interactive-stdin for runs started afterwards.
 */
void
subagent_command_runner_set_interactive_stdin (SubagentCommandRunner *self,
                                               gboolean               interactive)
{
  gboolean changed;

  g_return_if_fail (SUBAGENT_IS_COMMAND_RUNNER (self));

  g_mutex_lock (&self->lock);
  changed = self->interactive_stdin != !!interactive;
  self->interactive_stdin = !!interactive;
  g_mutex_unlock (&self->lock);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_INTERACTIVE_STDIN]);
}

/**
 * subagent_command_runner_get_kill_grace_ms:
 * @self: a #SubagentCommandRunner
 *
 * Returns: the time a stopped child has between SIGTERM and SIGKILL, in milliseconds
 */
guint
subagent_command_runner_get_kill_grace_ms (SubagentCommandRunner *self)
{
  guint grace;

  g_return_val_if_fail (SUBAGENT_IS_COMMAND_RUNNER (self), 0);

  g_mutex_lock (&self->lock);
  grace = self->kill_grace_ms;
  g_mutex_unlock (&self->lock);
  return grace;
}

/**
 * subagent_command_runner_set_kill_grace_ms:
 * @self: a #SubagentCommandRunner
 * @grace_ms: milliseconds between SIGTERM and SIGKILL
 *
 * Sets #SubagentCommandRunner:kill-grace-ms for runs started afterwards.
 */
void
subagent_command_runner_set_kill_grace_ms (SubagentCommandRunner *self,
                                           guint                  grace_ms)
{
  gboolean changed;

  g_return_if_fail (SUBAGENT_IS_COMMAND_RUNNER (self));

  g_mutex_lock (&self->lock);
  changed = self->kill_grace_ms != grace_ms;
  self->kill_grace_ms = grace_ms;
  g_mutex_unlock (&self->lock);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_KILL_GRACE_MS]);
}
