/* approval-pg-schema.c: the tables of approval-postgres, created or
 * migrated on first use.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>

#include "approval-pg-conn.h"
#include "approval-pg-schema.h"
#include "approval-pg-store.h"

char *
apg_with_schema (const char *schema,
                 const char *sql)
{
  g_autoptr(GString) out = g_string_new (sql);
  g_autofree char *quoted = g_strdup_printf ("\"%s\"", schema);

  g_string_replace (out, "@S@", quoted, 0);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Each entry takes the tables from the version of its index to the next. */
static const char * const migrations[] = {
  /* 0 → 1 */
  "CREATE SCHEMA IF NOT EXISTS @S@;"
  "CREATE TABLE @S@.approval_requests ("
  " id bigserial PRIMARY KEY,"
  " run_id text NOT NULL,"
  " request_id text NOT NULL,"
  " status text NOT NULL,"
  " document jsonb NOT NULL,"
  " signature text,"
  " verdict_token text,"
  " version bigint NOT NULL DEFAULT 1,"
  " created_at timestamptz NOT NULL DEFAULT now(),"
  " updated_at timestamptz NOT NULL DEFAULT now(),"
  " UNIQUE (run_id, request_id));"
  "CREATE INDEX ON @S@.approval_requests (run_id) WHERE status = 'pending';",
  /* 1 → 2: each row names the transaction that wrote it last, so a reader
   * fetches only what was written since its previous read (see
   * approval-pg-store.c). A trigger keeps it true for any writer, a hand
   * edit included: a tampered row is read again, and fails verification. */
  "ALTER TABLE @S@.approval_requests ADD COLUMN writer xid8 NOT NULL DEFAULT pg_current_xact_id();"
  "CREATE FUNCTION @S@.approval_requests_note_writer() RETURNS trigger LANGUAGE plpgsql AS"
  " $$BEGIN NEW.writer := pg_current_xact_id(); RETURN NEW; END$$;"
  "CREATE TRIGGER approval_requests_note_writer BEFORE INSERT OR UPDATE ON @S@.approval_requests"
  " FOR EACH ROW EXECUTE FUNCTION @S@.approval_requests_note_writer();"
  "CREATE INDEX ON @S@.approval_requests (run_id, writer);",
};

G_STATIC_ASSERT (G_N_ELEMENTS (migrations) == APG_SCHEMA_VERSION);

/* Runs @sql (with @params); on failure sets @error and *lost. */
static gboolean
run (PGconn             *conn,
     const char         *sql,
     int                 n_params,
     const char * const *params,
     const char         *what,
     int                *value,
     gboolean           *lost,
     GError            **error)
{
  PGresult *result = n_params > 0 ? PQexecParams (conn, sql, n_params, NULL, params, NULL, NULL, 0)
                                  : PQexec (conn, sql);
  ExecStatusType status = PQresultStatus (result);

  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
    {
      *lost = apg_connection_lost (conn, result);
      apg_set_error (error, conn, result, what);
      PQclear (result);
      return FALSE;
    }
  if (value != NULL)
    *value = atoi (PQgetvalue (result, 0, 0));
  PQclear (result);
  return TRUE;
}

gboolean
apg_schema_migrate (PGconn      *conn,
                    const char  *schema,
                    gboolean    *lost,
                    GError     **error)
{
  g_autofree char *lock_key = g_strconcat ("subagent-approvals:", schema, NULL);
  g_autofree char *prepare = apg_with_schema (schema,
    "CREATE SCHEMA IF NOT EXISTS @S@;"
    "CREATE TABLE IF NOT EXISTS @S@.schema_version (version integer NOT NULL);");
  g_autofree char *read_version = apg_with_schema (schema,
    "SELECT coalesce(max(version), 0) FROM @S@.schema_version");
  const char *params[] = { lock_key };
  int version = 0;

  *lost = FALSE;
  /* On failure the connection is given back mid-transaction, and so closed
   * (apg_pool_release()): nothing of a half migration stays. */
  if (!run (conn, "BEGIN", 0, NULL, "Starting the schema migration", NULL, lost, error)
      || !run (conn, "SELECT pg_advisory_xact_lock(hashtext($1))", 1, params, "Locking the schema", NULL, lost, error)
      || !run (conn, prepare, 0, NULL, "Creating the approvals schema", NULL, lost, error)
      || !run (conn, read_version, 0, NULL, "Reading the schema version", &version, lost, error))
    return FALSE;
  if (version > APG_SCHEMA_VERSION)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                   "The approvals schema “%s” has version %d, newer than this plugin's %d: "
                   "update the approval-postgres plugin", schema, version, APG_SCHEMA_VERSION);
      return FALSE;
    }
  for (; version < APG_SCHEMA_VERSION; version++)
    {
      g_autofree char *sql = apg_with_schema (schema, migrations[version]);
      g_autofree char *record = apg_with_schema (schema, "DELETE FROM @S@.schema_version;"
                                                         "INSERT INTO @S@.schema_version VALUES (");
      g_autofree char *full = g_strdup_printf ("%s%s%d)", sql, record, version + 1);

      if (!run (conn, full, 0, NULL, "Migrating the approvals schema", NULL, lost, error))
        return FALSE;
    }
  return run (conn, "COMMIT", 0, NULL, "Committing the schema migration", NULL, lost, error);
}
