/* subagent-def-private.h: what the catalog needs from SubagentDef beyond
 * the public API.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-def-private.h is internal to libsubagent."
#endif

#include "subagent-def.h"

G_BEGIN_DECLS

/* Like subagent_def_new_from_json(); on failure also gives the JSON pointer
 * of the offending value ("/tools/2"; "" when the whole object is at fault)
 * and the reason without the file-name prefix. */
SubagentDef *subagent_def_new_from_json_full (JsonObject  *object,
                                              const char  *source_path,
                                              char       **bad_pointer,
                                              char       **reason,
                                              GError     **error);

/* The keys subagent_def_new_from_json_full() reads. */
gboolean     subagent_def_json_is_known_key  (const char *key);
/* Whether @mode is spelled as a mode name (subagent_isolation_normalize()'s
 * form); which modes exist is the plugin registry's to say. */
gboolean     subagent_def_isolation_is_known (const char *mode);

G_END_DECLS
