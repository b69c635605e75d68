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
  const char *summary;
} SactlCommand;

/* One line per command. */
static const SactlCommand commands[] = {
  { "run", sactl_cmd_run, "run a program as a child agent in an isolated workspace" },
  { "defs", sactl_cmd_defs, "list subagent definitions (--check shows files that were skipped)" },
  { "plugins", sactl_cmd_plugins, "list plugins without loading them; `plugins inspect NAME` loads one" },
  { "prune", sactl_cmd_prune, "remove what dead runs left behind (each backend reclaims its own, from owner records)" },
  { "worktrees", sactl_cmd_worktrees, "list the git worktrees of subagent runs; `worktrees prune KEY` removes one" },
  { "approvals", sactl_cmd_approvals, "list, approve, deny and watch the approval requests of subagents; prune old queues" },
  { "batch", sactl_cmd_batch, "run a JSON array of tasks as parallel children; live progress on stderr" },
  { "team", sactl_cmd_team, "run a team of .subagent/teams/ on a task (members, then the aggregator)" },
  { "sessions", sactl_cmd_sessions, "list the kept session records of child runs" },
  { "follow-up", sactl_cmd_follow_up, "resume a finished child's session with a new task" },
  { "mcp", sactl_cmd_mcp, "serve the delegation tools to MCP clients over stdio (docs/mcp.md)" },
  { "--events", sactl_cmd_events, "print .subagent/events.jsonl; `--events batch|team|follow-up ...` streams them" },
};

static int
usage (FILE *out)
{
  fprintf (out, "Usage: subagentctl COMMAND [OPTIONS...]\n\nCommands:\n");
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fprintf (out, "\nRun `subagentctl COMMAND --help` for a command's options.\n");
  return out == stderr ? 2 : 0;
}

int
main (int   argc,
      char *argv[])
{
  setlocale (LC_ALL, "");

  if (argc < 2)
    return usage (stderr);
  if (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h") || g_str_equal (argv[1], "help"))
    return usage (stdout);

  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (argv[1], commands[i].name))
      return commands[i].func (argc - 1, argv + 1);

  fprintf (stderr, "subagentctl: unknown command “%s”\n", argv[1]);
  return usage (stderr);
}
