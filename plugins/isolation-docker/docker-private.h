/* docker-private.h: internals of the isolation-docker plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

#define SUBAGENT_TYPE_DOCKER_ISOLATION (subagent_docker_isolation_get_type ())
G_DECLARE_FINAL_TYPE (SubagentDockerIsolation, subagent_docker_isolation, SUBAGENT, DOCKER_ISOLATION, GObject)

void subagent_docker_isolation_register (GTypeModule *module);

/* Layout of one workspace, <workspace_dir>/<session_key>/: */
/* The backend this plugin provides and the owner-record kind it reclaims
 * (isolation-docker.plugin says the same); worktree workspaces come from
 * the worktree backend. */
#define DOCKER_BACKEND "docker"
#define DOCKER_OWNER_KIND "container"
#define DOCKER_WORKTREE_BACKEND "worktree"
#define DOCKER_MARKER ".subagent-docker"   /* JSON: proves the directory is ours */
#define DOCKER_TREE "tree"                 /* bind-mounted at DOCKER_WORKDIR */
#define DOCKER_WORKDIR "/workspace"

/* Labels every container gets (`subagentctl prune` checks the first). */
#define DOCKER_LABEL_SESSION "io.subagent.session"
#define DOCKER_LABEL_PARENT_RUN "io.subagent.parent-run"
#define DOCKER_LABEL_OWNER_PID "io.subagent.owner-pid"
#define DOCKER_LABEL_OWNER_HOST "io.subagent.owner-host"

/* Timeouts of the engine commands we wait for (never of the child). */
#define DOCKER_QUICK_TIMEOUT_MS (30 * 1000)
#define DOCKER_RUN_TIMEOUT_MS (180 * 1000)

/* docker-cli.c: the engine's command line, run without a shell. */
typedef struct _DockerCli DockerCli;

DockerCli   *docker_cli_new          (const char   *binary,
                                      const char   *host,
                                      const char   *context,
                                      GError      **error);
DockerCli   *docker_cli_new_from_data (GVariant    *backend_data);
void         docker_cli_free         (DockerCli    *cli);
gboolean     docker_cli_is_podman    (DockerCli    *cli);
const char  *docker_cli_get_host     (DockerCli    *cli);
const char * const *docker_cli_get_argv (DockerCli *cli);
char        *docker_cli_describe     (DockerCli    *cli);
void         docker_cli_add_to_data  (DockerCli       *cli,
                                      GVariantBuilder *builder);
JsonObject  *docker_cli_to_owner_extra (DockerCli  *cli);
char       **docker_cli_environ      (DockerCli    *cli);
gboolean     docker_cli_run          (DockerCli           *cli,
                                      const char * const  *args,
                                      guint                timeout_ms,
                                      GCancellable        *cancellable,
                                      int                 *out_exit_status,
                                      char               **out_stdout,
                                      char               **out_stderr,
                                      GError             **error);
gboolean     docker_cli_check_server (DockerCli    *cli,
                                      GCancellable *cancellable,
                                      GError      **error);
gboolean     docker_cli_remove_container (DockerCli   *cli,
                                          const char  *container,
                                          GError     **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (DockerCli, docker_cli_free)

/* docker-context.c: the provider's spawnv and cleanup. */
GSubprocess *docker_context_spawnv  (SubagentIsolationProvider  *provider,
                                     SubagentIsolationContext   *context,
                                     const char * const         *argv,
                                     const char * const         *envp,
                                     GSubprocessFlags            flags,
                                     GError                    **error);
void         docker_context_cleanup (SubagentIsolationProvider  *provider,
                                     SubagentIsolationContext   *context);

/* docker-workspace.c: the host directory the container works in. */
gboolean docker_workspace_create        (const char  *base,
                                         const char  *session_key,
                                         const char  *parent_root,
                                         GError     **error);
gboolean docker_workspace_give_to_user  (const char  *tree,
                                         const char  *user,
                                         gboolean    *out_world_writable,
                                         GError     **error);
gboolean docker_workspace_remove        (const char  *base,
                                         const char  *session_key,
                                         GError     **error);
gboolean docker_workspace_take_back     (const char  *tree,
                                         GError     **error);

/* docker-worktree.c: `workspace: worktree`, a worktree of the worktree
 * backend (through the plugin registry) bind-mounted at DOCKER_WORKDIR. */
#define DOCKER_WORKTREE_KEY_SUFFIX "-docker"

SubagentIsolationContext *docker_worktree_prepare     (SubagentIsolationRequest  *request,
                                                       GCancellable              *cancellable,
                                                       GError                   **error);
gboolean                  docker_worktree_keep_ownership (const char *tree,
                                                          GError    **error);
void                      docker_worktree_add_to_data (SubagentIsolationContext  *worktree,
                                                       GVariantBuilder           *builder);
gboolean                  docker_worktree_cleanup     (const char                *parent_root,
                                                       GVariant                  *backend_data,
                                                       GError                   **error);

/* docker-reclaim.c: a dead run's container and workspace, from its owner record. */
SubagentReclaimOutcome docker_reclaim_container (gboolean     dry_run,
                                                 JsonObject  *record,
                                                 char       **reason);

G_END_DECLS
