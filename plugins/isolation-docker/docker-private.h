/* docker-private.h: internals of the isolation-docker plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

#include "docker-engine.h"

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
#define DOCKER_TREE "tree"                 /* bind-mounted (or copied) at DOCKER_WORKDIR */
#define DOCKER_PROBE_PREFIX ".subagent-probe-"
#define DOCKER_WORKDIR "/workspace"

/* Labels every container gets (`subagentctl prune` checks the first). */
#define DOCKER_LABEL_SESSION "io.subagent.session"
#define DOCKER_LABEL_PARENT_RUN "io.subagent.parent-run"
#define DOCKER_LABEL_OWNER_PID "io.subagent.owner-pid"
#define DOCKER_LABEL_OWNER_HOST "io.subagent.owner-host"
#define DOCKER_LABEL_POOL "io.subagent.pool"   /* "true" on a warm container (docker-pool.c) */


/* docker-container.c: one child's container through the engine's API. */
typedef struct {
  const char *name;
  const char *key;
  const char *parent_run_id;
  const char *image;
  const char *user;
  const char *network;
  double cpus;
  gint64 memory_bytes;
  gint64 pids_limit;     /* 0: none */
  gint64 nofile;         /* 0: the engine's default */
  gint64 nproc;          /* 0: the engine's default */
  gboolean numeric_user;
  guint uid, gid;
  const char *bind_source;      /* NULL: a copy-mode volume */
  gboolean bind_git_read_only;  /* worktree: <source>/.git read-only */
  gboolean pool;                /* a warm container (label DOCKER_LABEL_POOL) */
} DockerSpec;

void      docker_error_to_isolation    (GError          **error,
                                        int               code);
gboolean  docker_container_check_image (DockerEngine     *engine,
                                        const char       *image,
                                        GCancellable     *cancellable,
                                        GError          **error);
char     *docker_container_create      (DockerEngine     *engine,
                                        const DockerSpec *spec,
                                        GCancellable     *cancellable,
                                        GError          **error);
gboolean  docker_container_start       (DockerEngine     *engine,
                                        const char       *id,
                                        GCancellable     *cancellable,
                                        GError          **error);
gboolean  docker_container_remove      (DockerEngine     *engine,
                                        const char       *container,
                                        GError          **error);
gboolean  docker_container_is_running (DockerEngine     *engine,
                                        const char       *id,
                                        GCancellable     *cancellable,
                                        GError          **error);
gboolean  docker_container_probe       (DockerEngine     *engine,
                                        const char       *container,
                                        const char       *name,
                                        const char       *nonce,
                                        GCancellable     *cancellable,
                                        GError          **error);
JsonObject *docker_owner_extra         (DockerEngine     *engine);

/* The exec helper, next to this module (docker-context.c). */
#define DOCKER_EXEC_HELPER "subagent-docker-exec"
#define DOCKER_DEFAULT_MAX_FILE (G_GUINT64_CONSTANT (1) << 30)

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
/* "1000" or "1000:100" as ids; FALSE for a user or group name. */
gboolean docker_workspace_parse_user    (const char  *user,
                                         guint       *uid,
                                         guint       *gid);

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

/* docker-pool.c: warm containers kept for the next prepare (option
 * `container_pool`). */
#define DOCKER_POOL_PREFIX "pool-"
#define DOCKER_POOL_MAX 16

typedef struct _DockerPools DockerPools;

typedef struct {
  char *slot;             /* its own session key, pool-<hex> (label, marker, record) */
  char *name;             /* subagent-<slot> */
  char *id;
  char *base;             /* <workspace_dir>/<slot> */
  char *tree;             /* <base>/tree: empty, bind-mounted when bind */
  gboolean bind;
  char *ulimit_refusal;   /* the engine would not set the ulimits */
} DockerPoolSlot;

DockerPools    *docker_pools_new       (void);
void            docker_pools_free      (DockerPools      *pools);
char           *docker_pools_signature (DockerEngine     *engine,
                                        const DockerSpec *spec,
                                        const char       *parent,
                                        const char       *dir);
DockerPoolSlot *docker_pools_take      (DockerPools      *pools,
                                        const char       *signature);
void            docker_pools_want      (DockerPools      *pools,
                                        const char       *signature,
                                        guint             size,
                                        DockerEngine     *engine,
                                        const DockerSpec *spec,
                                        const char       *parent,
                                        const char       *dir);
void            docker_pools_discard   (DockerPools      *pools,
                                        DockerEngine     *engine,
                                        const char       *parent,
                                        DockerPoolSlot   *slot);
void            docker_pools_counts    (DockerPools      *pools,
                                        guint            *out_ready,
                                        guint            *out_filling);
void            docker_pool_slot_free  (DockerPoolSlot   *slot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DockerPoolSlot, docker_pool_slot_free)

/* docker-reclaim.c: a dead run's container and workspace, from its owner record. */
SubagentReclaimOutcome docker_reclaim_container (gboolean     dry_run,
                                                 JsonObject  *record,
                                                 char       **reason);

G_END_DECLS
