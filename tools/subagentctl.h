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

/* Routes the approval requests of @manager's children to its queue, with a
 * hint on stderr per request and an inline prompt when stdin is a terminal
 * (subagentctl-approval-route.c). NULL without an error: unattended. */
typedef struct _SactlApprovalRoute SactlApprovalRoute;
SactlApprovalRoute *sactl_approval_route_new  (SubagentManager     *manager,
                                               const char          *root,
                                               GError             **error);
void                sactl_approval_route_free (SactlApprovalRoute  *route);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SactlApprovalRoute, sactl_approval_route_free)

int sactl_cmd_run     (int argc, char **argv);
int sactl_cmd_defs    (int argc, char **argv);
int sactl_cmd_plugins (int argc, char **argv);
int sactl_cmd_prune   (int argc, char **argv);
int sactl_cmd_worktrees (int argc, char **argv);
int sactl_cmd_approvals (int argc, char **argv);
int sactl_cmd_batch     (int argc, char **argv);
int sactl_cmd_team      (int argc, char **argv);
int sactl_cmd_sessions  (int argc, char **argv);
int sactl_cmd_follow_up (int argc, char **argv);
int sactl_cmd_events    (int argc, char **argv);
int sactl_cmd_mcp       (int argc, char **argv);

G_END_DECLS
