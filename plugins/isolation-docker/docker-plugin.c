/* docker-plugin.c: the module entry of the isolation-docker plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "docker-private.h"

static gboolean
docker_plugin_register (SubagentPluginModule  *module,
                        GError               **error)
{
  subagent_docker_isolation_register (G_TYPE_MODULE (module));
  subagent_plugin_module_provide (module, DOCKER_BACKEND, SUBAGENT_TYPE_DOCKER_ISOLATION);
  return TRUE;
}

SUBAGENT_PLUGIN_DEFINE ("isolation-docker", PLUGIN_VERSION, "LGPL-2.1-or-later",
                        "Containers through the Docker Engine API (docker, or podman's service): a snapshot "
                        "workspace bound or copied into a locked-down container",
                        docker_plugin_register)
