/* snapshot-plugin.c: the module entry of the isolation-snapshot plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "snapshot-private.h"

static gboolean
snapshot_plugin_register (SubagentPluginModule  *module,
                          GError               **error)
{
  subagent_snapshot_isolation_register (G_TYPE_MODULE (module));
  subagent_plugin_module_provide (module, SNAPSHOT_BACKEND,
                                  SUBAGENT_TYPE_SNAPSHOT_ISOLATION);
  return TRUE;
}

SUBAGENT_PLUGIN_DEFINE ("isolation-snapshot", PLUGIN_VERSION, "LGPL-2.1-or-later",
                        "Directory snapshots: overlayfs, reflink or copy_file_range",
                        snapshot_plugin_register)
