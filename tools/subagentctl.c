/* subagentctl.c: run any program as an isolated child agent, and manage what
 * runs leave behind. One file per command family; this one dispatches.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "subagentctl.h"

typedef struct {
  const char *name;
  SactlCommandFunc func;
  /* What follows `subagentctl NAME [OPTION…]` in the usage line. */
  const char *params;
  const char *summary;
} SactlCommand;

/* One line per command; the usage lines, `help` and the man pages follow it. */
static const SactlCommand commands[] = {
  { "run", sactl_cmd_run, "[--] TASK…", "run a program as a child agent in an isolated workspace" },
  { "defs", sactl_cmd_defs, "", "list subagent definitions (--check shows files that were skipped)" },
  { "plugins", sactl_cmd_plugins, "[inspect NAME]", "list plugins without loading them; `plugins inspect NAME` loads one" },
  { "prune", sactl_cmd_prune, "", "remove what dead runs left behind (each backend reclaims its own, from owner records)" },
  { "worktrees", sactl_cmd_worktrees, "list | prune SESSION_KEY", "list the git worktrees of subagent runs; `worktrees prune KEY` removes one" },
  { "approvals", sactl_cmd_approvals, "list | approve ID | deny ID | approve-all | deny-all | watch | prune",
    "list, approve, deny and watch the approval requests of subagents; prune old queues" },
  { "batch", sactl_cmd_batch, "FILE|-", "run a JSON array of tasks as parallel children; live progress on stderr" },
  { "team", sactl_cmd_team, "NAME TASK…", "run a team of .subagent/teams/ on a task (members, then the aggregator)" },
  { "sessions", sactl_cmd_sessions, "", "list the kept session records of child runs" },
  { "follow-up", sactl_cmd_follow_up, "SESSION TASK…", "resume a finished child's session with a new task" },
  { "mcp", sactl_cmd_mcp, "", "serve the delegation tools to MCP clients over stdio (docs/mcp.md)" },
  { "--events", sactl_cmd_events, "[batch|team|follow-up ARG…]",
    "print .subagent/events.jsonl; `--events batch|team|follow-up ...` streams them" },
  { "version", NULL, "", "print the version of subagentctl and libsubagent" },
  { "help", NULL, "[COMMAND]", "show this list, or the options of COMMAND" },
};

/* Not listed: what the bash completion asks (subagentctl-complete.c). */
static const SactlCommand complete_command = {
  "__complete", sactl_cmd_complete, "commands | defs | backends | requests", "names for shell completion"
};

void
sactl_print_command_names (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    printf ("%s\n", commands[i].name);
}

static const SactlCommand *
lookup (const char *name)
{
  if (name != NULL && g_str_equal (name, complete_command.name))
    return &complete_command;
  for (guint i = 0; name != NULL && i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (name, commands[i].name))
      return &commands[i];
  return NULL;
}

const char *
sactl_command_params (const char *name)
{
  const SactlCommand *command = lookup (name);

  return command ? command->params : "";
}

const char *
sactl_command_summary (const char *name)
{
  const SactlCommand *command = lookup (name);

  return command ? command->summary : NULL;
}

static int
usage (FILE *out)
{
  fprintf (out, "Usage: subagentctl COMMAND [OPTION…] [ARG…]\n\nCommands:\n");
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fprintf (out,
           "\nRun `subagentctl help COMMAND` for a command's options.\n"
           "Exit status: 0 success, 1 the run or operation failed, 2 usage error.\n");
  return out == stderr ? SACTL_EXIT_USAGE : SACTL_EXIT_OK;
}

static int
version (void)
{
  printf ("subagentctl %s (libsubagent %s)\n", SACTL_VERSION, SUBAGENT_VERSION_S);
  return SACTL_EXIT_OK;
}

static int
dispatch (const SactlCommand *command,
          int                 argc,
          char              **argv)
{
  /* GOption's usage line reads "Usage: PRGNAME [OPTION…] PARAMS". */
  g_autofree char *prgname = g_strdup_printf ("subagentctl %s", command->name);

  g_set_prgname (prgname);
  return command->func (argc, argv);
}

int
main (int   argc,
      char *argv[])
{
  const SactlCommand *command;

  setlocale (LC_ALL, "");

  if (argc < 2)
    return usage (stderr);
  if (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h"))
    return usage (stdout);
  if (g_str_equal (argv[1], "--version") || g_str_equal (argv[1], "version"))
    {
      if (argc > 2)
        {
          fprintf (stderr, "subagentctl version: unexpected argument “%s”\n", argv[2]);
          return SACTL_EXIT_USAGE;
        }
      return version ();
    }
  if (g_str_equal (argv[1], "help"))
    {
      char *help_argv[] = { NULL, (char *) "--help", NULL };

      if (argc == 2)
        return usage (stdout);
      if (argc > 3)
        {
          fprintf (stderr, "subagentctl help: give one command, such as `subagentctl help run`\n");
          return SACTL_EXIT_USAGE;
        }
      if (g_str_equal (argv[2], "help") || g_str_equal (argv[2], "version"))
        return usage (stdout);
      command = lookup (argv[2]);
      if (command == NULL)
        {
          fprintf (stderr, "subagentctl help: unknown command “%s”; `subagentctl help` lists them\n", argv[2]);
          return SACTL_EXIT_USAGE;
        }
      help_argv[0] = argv[2];
      /* GOption prints the help and exits 0. */
      return dispatch (command, 2, help_argv);
    }

  command = lookup (argv[1]);
  if (command == NULL || command->func == NULL)
    {
      fprintf (stderr, "subagentctl: unknown command “%s”; `subagentctl help` lists them\n", argv[1]);
      return SACTL_EXIT_USAGE;
    }
  return dispatch (command, argc - 1, argv + 1);
}
