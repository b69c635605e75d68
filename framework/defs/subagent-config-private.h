/* subagent-config-private.h: what subagent-config-load.c shares with
 * subagent-config-models.c and the routing policy. Not installed, not
 * introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-config-private.h is internal to libsubagent."
#endif

#include <json-glib/json-glib.h>

#include "subagent-config.h"

G_BEGIN_DECLS

/* Reads `models:`, `model_aliases:` and `default_model:` of @root: each
 * model checked and normalized (defaults filled in, its name in `name`).
 * @aliases maps lower-case alias → model name. */
G_GNUC_INTERNAL
gboolean _subagent_config_load_models (JsonObject   *root,
                                       const char   *source,
                                       JsonObject  **models_out,
                                       char        **default_model_out,
                                       GHashTable   *aliases,
                                       GError      **error);

G_GNUC_INTERNAL
gboolean _subagent_config_model_name_is_valid (const char *name);

/* Sets SUBAGENT_CONFIG_ERROR_INVALID_VALUE: "@source: “@key” must be
 * @expected"; returns FALSE. */
G_GNUC_INTERNAL gboolean _subagent_config_invalid (GError    **error,
                                                   const char *source,
                                                   const char *key,
                                                   const char *expected);

G_GNUC_INTERNAL gboolean _subagent_config_parse_size (JsonNode *node,
                                                      guint64  *out);

/* Whether `models:` names any model: subagent_config_list_models()
 * without the list. */
G_GNUC_INTERNAL gboolean _subagent_config_has_models (SubagentConfig *self);

G_END_DECLS
