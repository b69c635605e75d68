/* subagent-catalog.h: the subagent definitions of a workspace, and what was
 * wrong with the files that were skipped.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "subagent-def.h"
#include "subagent-diagnostic.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_CATALOG (subagent_catalog_get_type ())
G_DECLARE_FINAL_TYPE (SubagentCatalog, subagent_catalog, SUBAGENT, CATALOG, GObject)

SubagentCatalog *subagent_catalog_new                 (void);
SubagentCatalog *subagent_catalog_new_for_root        (const char           *root,
                                                       GError              **error);
gboolean         subagent_catalog_load                (SubagentCatalog      *self,
                                                       const char           *root,
                                                       GError              **error);
void             subagent_catalog_load_async          (SubagentCatalog      *self,
                                                       const char           *root,
                                                       GCancellable         *cancellable,
                                                       GAsyncReadyCallback   callback,
                                                       gpointer              user_data);
gboolean         subagent_catalog_load_finish         (SubagentCatalog      *self,
                                                       GAsyncResult         *result,
                                                       GError              **error);
void             subagent_catalog_add                 (SubagentCatalog      *self,
                                                       SubagentDef          *def);
SubagentDef     *subagent_catalog_lookup              (SubagentCatalog      *self,
                                                       const char           *name);
GPtrArray       *subagent_catalog_list                (SubagentCatalog      *self);
guint            subagent_catalog_get_n_definitions   (SubagentCatalog      *self);
GPtrArray       *subagent_catalog_get_diagnostics     (SubagentCatalog      *self);
gboolean         subagent_catalog_has_errors          (SubagentCatalog      *self);
JsonNode        *subagent_catalog_diagnostics_to_json (SubagentCatalog      *self);

G_END_DECLS
