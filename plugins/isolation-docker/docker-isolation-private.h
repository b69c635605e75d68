/* docker-isolation-private.h: what the provider's files share (the type,
 * its configuration and availability in docker-isolation.c, a request read
 * into a plan in docker-plan.c, prepare in docker-prepare.c). Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "docker-private.h"

G_BEGIN_DECLS

struct _SubagentDockerIsolation
{
  GObject parent_instance;

  GMutex lock;
  char *binary;         /* under lock; only for old configurations */
  char *host;           /* under lock */
  char *context;        /* under lock: config docker.context */
  char *transfer;       /* under lock: config docker.transfer */
  GHashTable *images;   /* under lock: "address\nimage" → gint64 time it was seen */
  GHashTable *no_bind;  /* under lock: "address\ndir\ndevice" → gint64 time a bind probe failed */
  GHashTable *bind_ok;  /* under lock: the same keys → gint64 time a bind probe passed */
  GHashTable *no_tar;   /* under lock: "address\nimage" → gint64 time its exec copy-in could not run */
  DockerPools *pools;   /* warm containers (option container_pool); locks itself */
};

typedef enum { TRANSFER_AUTO, TRANSFER_BIND, TRANSFER_COPY } Transfer;

typedef struct {
  const char *key;
  const char *parent_run_id;
  const char *image;
  const char *network;
  const char *user;
  const char *memory;
  double cpus;
  gint64 pids_limit, nofile, nproc;
  gint64 max_file;
  gint64 pool_size;     /* option container_pool */
  Transfer transfer;
  gboolean copy_in_exec; /* option copy_in: auto (the image's tar first) or archive */
  gboolean worktree;    /* workspace: worktree (base stays NULL) */
  char *parent;
  char *dir;            /* the resolved workspace_dir (snapshot) */
  char *base;
  char *tree;
  char *name;
  DockerEngine *engine;
} Plan;

G_GNUC_INTERNAL
void      docker_plan_clear     (Plan                      *plan);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Plan, docker_plan_clear)

G_GNUC_INTERNAL
gboolean  docker_plan_read      (SubagentDockerIsolation   *self,
                                 SubagentIsolationRequest  *request,
                                 Plan                      *plan,
                                 GError                   **error);
G_GNUC_INTERNAL
void      docker_plan_fill_spec (Plan                      *plan,
                                 DockerSpec                *spec,
                                 gboolean                   bind);

/* docker-prepare.c */
G_GNUC_INTERNAL
SubagentIsolationContext *docker_prepare (SubagentIsolationProvider  *provider,
                                          SubagentIsolationRequest   *request,
                                          GCancellable               *cancellable,
                                          GError                    **error);

G_END_DECLS
