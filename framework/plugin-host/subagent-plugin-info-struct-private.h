/* subagent-plugin-info-struct-private.h: the fields of SubagentPluginInfo,
 * shared by subagent-plugin-info.c (the object) and
 * subagent-plugin-descriptor.c (reading a `.plugin` file). Not installed,
 * not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-plugin-info-struct-private.h is internal to libsubagent."
#endif

#include "subagent.h"

G_BEGIN_DECLS

struct _SubagentPluginInfo
{
  GObject parent_instance;

  char *name;
  char *descriptor_path;
  char *module_path;
  char *interface_name;
  GStrv provides;
  guint abi_major;
  guint abi_minor;
  char *version;
  char *description;
  char *section;
  GStrv aliases;
  char *auto_role;
  GStrv leftovers;
  GPtrArray *options;             /* SubagentPluginOption, in descriptor order */

  GMutex load_lock;               /* held while loading; guards the two below */
  SubagentPluginModule *module;   /* set once loading succeeded */
  GError *load_error;             /* set once loading failed */
};

G_END_DECLS
