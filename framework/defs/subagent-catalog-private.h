/* subagent-catalog-private.h: the file scanning behind SubagentCatalog.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-catalog-private.h is internal to libsubagent."
#endif

#include "subagent-catalog.h"

G_BEGIN_DECLS

/* What one scan of a root found; built off the caller's thread. */
typedef struct {
  char *root;                   /* resolved */
  GPtrArray *defs;              /* SubagentDef, one per name, the winners */
  GPtrArray *diagnostics;       /* SubagentDiagnostic, sorted */
} SubagentCatalogScan;

/* Reads <root>/.claude/agents and <root>/.subagent/agents. Fails only when
 * @root is not a directory, or on cancellation. Thread-safe. */
SubagentCatalogScan *subagent_catalog_scan          (const char           *root,
                                                     GCancellable         *cancellable,
                                                     GError              **error);
void                 subagent_catalog_scan_free     (SubagentCatalogScan  *scan);

/* Lower case, '_' as '-': the key lookups use. */
char                *subagent_catalog_normalize_name      (const char    *name);
/* By file, then line, then column. */
int                  subagent_catalog_compare_diagnostics (gconstpointer  a,
                                                           gconstpointer  b);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SubagentCatalogScan, subagent_catalog_scan_free)

G_END_DECLS
