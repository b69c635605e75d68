/* subagent-docker-isolation.c: the `docker` isolation backend.
 *
 * Not implemented yet (issue 4): the module is real and loads, but it
 * refuses honestly instead of pretending to isolate anything.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Subagent-Docker"

#include <subagent.h>

#define NOT_IMPLEMENTED_MESSAGE "docker isolation is not implemented yet (issue 4); use worktree or directory-snapshot isolation"

/* Declared by hand: G_DECLARE_FINAL_TYPE's exported get_type() clashes with
 * the static one G_DEFINE_DYNAMIC_TYPE defines. */
typedef struct
{
  GObject parent_instance;
} SubagentDockerIsolation;

typedef struct
{
  GObjectClass parent_class;
} SubagentDockerIsolationClass;

static void subagent_docker_isolation_provider_init (SubagentIsolationProviderInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SubagentDockerIsolation, subagent_docker_isolation, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_ISOLATION_PROVIDER,
                                                               subagent_docker_isolation_provider_init))

static gboolean
subagent_docker_isolation_is_available (SubagentIsolationProvider  *provider,
                                        GError                    **error)
{
  g_set_error_literal (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_NOT_IMPLEMENTED,
                       NOT_IMPLEMENTED_MESSAGE);
  return FALSE;
}

static SubagentIsolationContext *
subagent_docker_isolation_prepare (SubagentIsolationProvider  *provider,
                                   SubagentIsolationRequest   *request,
                                   GCancellable               *cancellable,
                                   GError                    **error)
{
  g_set_error_literal (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_NOT_IMPLEMENTED,
                       NOT_IMPLEMENTED_MESSAGE);
  return NULL;
}

static void
subagent_docker_isolation_provider_init (SubagentIsolationProviderInterface *iface)
{
  iface->is_available = subagent_docker_isolation_is_available;
  iface->prepare = subagent_docker_isolation_prepare;
}

static void
subagent_docker_isolation_class_init (SubagentDockerIsolationClass *klass)
{
}

static void
subagent_docker_isolation_class_finalize (SubagentDockerIsolationClass *klass)
{
}

static void
subagent_docker_isolation_init (SubagentDockerIsolation *self)
{
}

static gboolean
register_types (SubagentPluginModule  *module,
                GError               **error)
{
  subagent_docker_isolation_register_type (G_TYPE_MODULE (module));
  subagent_plugin_module_provide (module, SUBAGENT_ISOLATION_DOCKER, subagent_docker_isolation_get_type ());
  return TRUE;
}

SUBAGENT_PLUGIN_DEFINE ("isolation-docker", "0.1.0", "LGPL-2.1-or-later",
                        "Containers through the docker (or podman) CLI; not implemented yet (issue 4)",
                        register_types)
