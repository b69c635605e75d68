/* approval-pg-schema.h: the tables of approval-postgres.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libpq-fe.h>
#include <subagent.h>

G_BEGIN_DECLS

/* @sql with every "@S@" replaced by the quoted @schema (a valid name). */
char     *apg_with_schema    (const char  *schema,
                              const char  *sql);

/* Creates the tables of @schema, or migrates them to APG_SCHEMA_VERSION,
 * under an advisory lock (several hosts may start at once). On failure
 * *lost says whether the connection went (worth a retry). */
gboolean  apg_schema_migrate (PGconn      *conn,
                              const char  *schema,
                              gboolean    *lost,
                              GError     **error);

G_END_DECLS
