/* fuzz-config.c: `.subagent/config.yaml`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>

#include <subagent.h>

#include "fuzz-support.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  g_autoptr(SubagentConfig) config = NULL;
  g_autofree char *path = NULL;

  fuzz_write (".subagent/config.yaml", data, size);
  path = g_build_filename (fuzz_init_root (), ".subagent", "config.yaml", NULL);
  config = subagent_config_load_file (path, NULL);
  if (config != NULL)
    {
      /* Every getter on whatever was accepted. */
      (void) subagent_config_get_default_isolation (config);
      (void) subagent_config_get_permission_mode (config);
      (void) subagent_config_get_plugin_path (config);
      (void) subagent_config_get_runner_command (config);
      (void) subagent_config_get_max_cost_cents (config);
      (void) subagent_config_get_section (config, "approval-file");
      (void) subagent_config_get_confinement (config);
      (void) subagent_config_get_exclude (config);
      (void) subagent_config_get_warnings (config);
      (void) subagent_config_get_section (config, "worktree");
    }
  return 0;
}
