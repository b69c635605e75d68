/* docker-test-support.h: fixtures of the docker suite (tests/test-docker.c):
 * the engine driven directly, parent trees and roots, requests, and checks
 * that nothing was left behind.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "test-support.h"

G_BEGIN_DECLS

typedef struct {
  const char *name;      /* docker | podman | remote: the test path component */
  const char *host_env;  /* the variable holding its address (option `host`) */
  const char *transfer;  /* what transfer: auto must choose on it (bind | copy) */
  char *host;            /* its address; set by the suite */
  char **argv;           /* the docker CLI for the tests' own checks; set by the suite */
} DtsEngine;

#define DTS_DEAD_SOCKET "unix:///nonexistent/subagent-test/dead.sock"
#define DTS_WAIT_DEADLINE_USEC (120 * G_USEC_PER_SEC)

/* Sets e->host and e->argv from the environment; FALSE if it names none. */
gboolean  dts_engine_setup         (DtsEngine  *e);

/* Call first in main(): a private XDG_CACHE_HOME (where workspaces land),
 * the image ($SUBAGENT_TEST_IMAGE), a plugin registry. */
void        dts_init               (void);
void        dts_shutdown           (void);
const char *dts_image              (void);
/* The parent run id of dts_make_request()'s requests, this program's own,
 * and the container label that names it. */
const char *dts_parent_run_id      (void);
const char *dts_parent_run_label   (void);
const char *dts_cache_home         (void);
SubagentIsolationProvider *dts_provider (void);
SubagentIsolationProvider *dts_configured_provider (const char  *docker_section_json,
                                                    const char  *root,
                                                    GError     **error);

/* The engine itself: asserts success unless status is wanted. */
char     *dts_engine_run           (DtsEngine  *e,
                                    int        *status,
                                    const char *first,
                                    ...) G_GNUC_NULL_TERMINATED;
char     *dts_containers_labelled  (DtsEngine  *e,
                                    const char *label);
void      dts_remove_container     (DtsEngine  *e,
                                    const char *name);

/* Fixtures. */
char     *dts_workspace_dir        (void);
guint     dts_count_entries        (const char *dir);
gboolean  dts_file_exists          (const char *dir,
                                    const char *rel);
/* @rel exists in some workspace: on the host, or inside a running
 * container of a copy-mode engine. */
gboolean  dts_workspace_file_seen  (const char *rel);
char     *dts_make_parent          (void);
/* .subagent/config.yaml for @e (plus @extra_options inside `docker: {}`)
 * and a definition @def_name running `sh -c SCRIPT` in docker isolation. */
void      dts_write_docker_def     (DtsEngine  *e,
                                    const char *root,
                                    const char *def_name,
                                    const char *script,
                                    const char *extra_options);
char     *dts_make_root            (DtsEngine  *e,
                                    const char *def_name,
                                    const char *script);
void      dts_assert_nothing_left  (DtsEngine  *e,
                                    const char *label,
                                    const char *root);
char     *dts_prune_json           (const char *root);
void      dts_forge_dead_record    (DtsEngine  *e,
                                    const char *root,
                                    const char *key,
                                    const char *container);

/* The provider and its contexts. Options: KEY, VALUE pairs, NULL-ended
 * (a NULL value removes the option). */
SubagentIsolationRequest *dts_make_request (DtsEngine  *e,
                                            const char *parent,
                                            const char *key,
                                            double      cpus,
                                            const char *memory,
                                            ...) G_GNUC_NULL_TERMINATED;
SubagentIsolationContext *dts_prepare      (SubagentIsolationRequest  *request,
                                            GError                   **error);
char     *dts_run_in               (SubagentIsolationContext *context,
                                    const char * const       *envp,
                                    const char               *stdin_text,
                                    int                      *status,
                                    const char               *script);
SubagentRunResult *dts_run_def     (SubagentManager *manager,
                                    const char      *def_name,
                                    GCancellable    *cancellable,
                                    const char      *wait_for_file);

G_END_DECLS
