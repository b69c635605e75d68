/* subagent-catalog.h: the subagent definitions of a workspace, and what was
 * wrong with the files that were skipped.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "subagent-def.h"
#include "subagent-diagnostic.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_CATALOG (subagent_catalog_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentCatalog, subagent_catalog, SUBAGENT, CATALOG, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentCatalog *subagent_catalog_new                 (void);
SUBAGENT_AVAILABLE_IN_ALL
SubagentCatalog *subagent_catalog_new_for_root        (const char           *root,
                                                       GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
gboolean         subagent_catalog_load                (SubagentCatalog      *self,
                                                       const char           *root,
                                                       GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
void             subagent_catalog_load_async          (SubagentCatalog      *self,
                                                       const char           *root,
                                                       GCancellable         *cancellable,
                                                       GAsyncReadyCallback   callback,
                                                       gpointer              user_data);
SUBAGENT_AVAILABLE_IN_ALL
gboolean         subagent_catalog_load_finish         (SubagentCatalog      *self,
                                                       GAsyncResult         *result,
                                                       GError              **error);
SUBAGENT_AVAILABLE_IN_ALL
void             subagent_catalog_add                 (SubagentCatalog      *self,
                                                       SubagentDef          *def);
SUBAGENT_AVAILABLE_IN_ALL
SubagentDef     *subagent_catalog_lookup              (SubagentCatalog      *self,
                                                       const char           *name);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray       *subagent_catalog_list                (SubagentCatalog      *self);
SUBAGENT_AVAILABLE_IN_ALL
guint            subagent_catalog_get_n_definitions   (SubagentCatalog      *self);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray       *subagent_catalog_get_diagnostics     (SubagentCatalog      *self);
SUBAGENT_AVAILABLE_IN_ALL
gboolean         subagent_catalog_has_errors          (SubagentCatalog      *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonNode        *subagent_catalog_diagnostics_to_json (SubagentCatalog      *self);

G_END_DECLS
