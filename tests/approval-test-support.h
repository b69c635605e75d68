/* approval-test-support.h: fixtures of the approval-file test programs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "test-support.h"

G_BEGIN_DECLS

#define ATS_LOG_DOMAIN "Subagent-Approvals"
#define ATS_INTEGRITY_WARNING "Ignoring the approval queue of run*"

/* The stores the conformance cases run against (one test source, run once
 * per store: test-approval-conformance --store=NAME). */
typedef enum {
  ATS_STORE_FILE,
  ATS_STORE_POSTGRES,
} AtsStoreKind;

/* A temp workspace root and an approval-file sink on it; the key (a string,
 * or NULL) is the test's data. integrity_failures counts "integrity-failed".
 * With ats_store_fixture_set_up(), the sink is of ats_store_kind: for
 * postgres, in a fresh schema of the server SUBAGENT_TEST_PG_CONNINFO names. */
typedef struct {
  char *root;
  char *dir;               /* root/.subagent/approvals */
  SubagentApprovalSink *sink;
  guint integrity_failures;
  AtsStoreKind kind;
  char *schema;            /* postgres only */
} Fixture;

extern AtsStoreKind ats_store_kind;

/* Parses and removes a --store=file|postgres argument (default file). */
void                     ats_store_parse_args      (int    *argc,
                                                    char ***argv);
const char              *ats_store_name            (AtsStoreKind kind);
void                     ats_store_fixture_set_up  (Fixture       *f,
                                                    gconstpointer  key);
void                     ats_store_fixture_tear_down (Fixture       *f,
                                                      gconstpointer  key);
/* Another sink (as another process would have) on the fixture's store. */
SubagentApprovalSink    *ats_store_new_sink        (Fixture    *f,
                                                    const char *key);
/* The store as approval-stress-helper and bench/approvals take it: the
 * root for file, "postgres:SCHEMA:HOST" for postgres, where HOST a reaches
 * the server over TCP and b over its unix socket (two "hosts"). */
char                    *ats_store_spec            (Fixture *f,
                                                    char     host);
/* The connection string of the test server, through @host (a: TCP, b: unix
 * socket). Fails the test when run-tests did not provide a server. */
const char              *ats_pg_conninfo           (char host);

/* Runs @sql on the test server (through host a), failing the test on error. */
void                     ats_pg_exec               (const char *sql);

/* Runs @sql (one row, an integer first) on the test server. */
gint64                   ats_pg_query_int          (const char *sql);

/* Ways to alter what a store holds, as someone with write access to it
 * (and, with a resign key, the key) would. The first two requests of the
 * run are used. */
typedef enum {
  ATS_TAMPER_SWAP_ACTIONS,              /* tool name and arguments swapped */
  ATS_TAMPER_SWAP_ACTIONS_AND_DIGESTS,  /* ... with their action digests */
  ATS_TAMPER_FORGE_VERDICT,             /* the first request marked approved */
  ATS_TAMPER_RENAME_SUBAGENT,           /* a member no digest covers edited */
} AtsTamper;

void                     ats_store_tamper          (Fixture    *f,
                                                    const char *run,
                                                    AtsTamper   tamper,
                                                    const char *resign_key);

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
/* The names in @dir, sorted, but for the temp files a live file store
 * holds for its next write. */
char                   **ats_dir_entries       (const char *dir);
/* An inotify fd on @dir for ats_count_run_writes(). */
int                      ats_watch_run_writes  (const char *dir);
/* The atomic writes of @run's file since @fd started watching or was last
 * counted: its renames and exchanges onto "<run>.json". inotify merges an
 * unread event into an identical one just before it; each move comes as a
 * pair (IN_MOVED_FROM, IN_MOVED_TO), so two moves onto one name never meet. */
guint                    ats_count_run_writes  (int         fd,
                                                const char *run);
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
