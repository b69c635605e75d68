/* approval-test-support.h: fixtures of the approval-file test programs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "test-support.h"

G_BEGIN_DECLS

#define ATS_LOG_DOMAIN "Subagent-Approvals"
#define ATS_INTEGRITY_WARNING "Ignoring the approval queue of run*"

/* A temp workspace root and an approval-file sink on it; the key (a string,
 * or NULL) is the test's data. integrity_failures counts "integrity-failed". */
typedef struct {
  char *root;
  char *dir;               /* root/.subagent/approvals */
  SubagentApprovalSink *sink;
  guint integrity_failures;
} Fixture;

void                     ats_fixture_set_up    (Fixture       *f,
                                                gconstpointer  key);
void                     ats_fixture_tear_down (Fixture       *f,
                                                gconstpointer  key);
/* The "file" sink from the plugin registry, rooted at @root, signing with @key. */
SubagentApprovalSink    *ats_new_sink          (const char    *root,
                                                const char    *key);
/* A pending request of @run: @tool on {"path": @path}. */
SubagentApprovalRequest *ats_make_request      (const char    *run,
                                                const char    *tool,
                                                const char    *path);
void                     ats_save_one          (SubagentApprovalSink    *sink,
                                                const char              *run,
                                                SubagentApprovalRequest *request);
/* Loads @run, asserting success. */
GPtrArray               *ats_load              (SubagentApprovalSink *sink,
                                                const char           *run);
SubagentApprovalRequest *ats_find              (GPtrArray  *requests,
                                                const char *request_id);
SubagentApprovalStatus   ats_stored_status     (SubagentApprovalSink    *sink,
                                                const char              *run,
                                                SubagentApprovalRequest *request);
/* The names in @dir, sorted. */
char                   **ats_dir_entries       (const char *dir);
/* Starts approval-stress-helper (from the test build dir) with the arguments.
 * Under ASan its mallocs record stacks with the fast unwinder whatever
 * $ASAN_OPTIONS says: the helpers are load, and the slow unwinder made each
 * of their many parses ~10× slower, enough to run the stress test past
 * its timeout. Every ASan and UBSan check still applies. */
GSubprocess             *ats_spawn_helper      (GSubprocessFlags   flags,
                                                GError           **error,
                                                const char        *first_arg,
                                                ...) G_GNUC_NULL_TERMINATED;

/* Reads the stdout of every process of @procs (GSubprocess, started with
 * G_SUBPROCESS_FLAGS_STDOUT_PIPE) at once, so that none blocks on a full
 * pipe while another is read, and waits for all to exit. Fails the test
 * if one fails, or if any is still running after @timeout_seconds (it is
 * then killed). @names names each process in messages. Returns their
 * outputs in the order of @procs. */
char                   **ats_communicate_all   (GPtrArray          *procs,
                                                const char * const *names,
                                                guint               timeout_seconds);

G_END_DECLS
