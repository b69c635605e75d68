/* worktree-plugin.c: the module entry of the isolation-worktree plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "worktree-private.h"

static gboolean
worktree_plugin_register (SubagentPluginModule  *module,
                          GError               **error)
{
  static gsize git_initialized = 0;

  /* libgit2's global state is reference-counted and lives as long as the
   * process: a loaded plugin stays resident. Hash verification of every
   * object read costs more than the checkout's own work (PERF-NOTES: 2.66×
   * git's instructions with it, 1.13× without); git itself does not verify
   * on checkout either. */
  if (g_once_init_enter (&git_initialized))
    {
      git_libgit2_init ();
      git_libgit2_opts (GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
      g_once_init_leave (&git_initialized, 1);
    }
  subagent_worktree_isolation_register (G_TYPE_MODULE (module));
  subagent_plugin_module_provide (module, WT_BACKEND, SUBAGENT_TYPE_WORKTREE_ISOLATION);
  return TRUE;
}

SUBAGENT_PLUGIN_DEFINE ("isolation-worktree", PLUGIN_VERSION, "LGPL-2.1-or-later",
                        "Git worktrees on branch subagent/<session> made in process with libgit2, with a recycling pool",
                        worktree_plugin_register)
