/* subagentctl.h: what the command files of subagentctl share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

/* Every command: int sactl_cmd_NAME (int argc, char **argv), argv[0] = the
 * command name; returns the process exit status. Errors go to stderr. */
typedef int (*SactlCommandFunc) (int argc, char **argv);

/* Resolves --root (or the current directory) to an absolute, existing path. */
char     *sactl_resolve_root   (const char *root_option,
                                GError    **error);
/* Prints a JSON node, pretty, to stdout with a trailing newline. */
void      sactl_print_json     (JsonNode *node);
/* Prints "subagentctl: <message>" to stderr and returns 1. */
int       sactl_fail           (const GError *error);
int       sactl_fail_message   (const char *format,
                                ...) G_GNUC_PRINTF (1, 2);
/* Parses "90s", "15m", "2h", "7d" or plain seconds. */
gboolean  sactl_parse_duration (const char *text,
                                GTimeSpan  *out,
                                GError    **error);

int sactl_cmd_run     (int argc, char **argv);
int sactl_cmd_defs    (int argc, char **argv);
int sactl_cmd_plugins (int argc, char **argv);
int sactl_cmd_prune   (int argc, char **argv);
int sactl_cmd_worktrees (int argc, char **argv);
int sactl_cmd_approvals (int argc, char **argv);

G_END_DECLS
