/* approval-test-support.c: fixtures of the approval store test programs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <string.h>
#include <unistd.h>
#include <libpq-fe.h>

#include "approval-test-support.h"

static void
on_integrity_failed (SubagentApprovalSink *sink,
                     const char           *run_id,
                     const char           *message,
                     Fixture              *f)
{
  g_assert_nonnull (run_id);
  g_assert_nonnull (message);
  f->integrity_failures++;
}

void
ats_fixture_set_up (Fixture       *f,
                    gconstpointer  key)
{
  f->root = sat_make_temp_dir ("approval-file");
  f->dir = g_build_filename (f->root, ".subagent", "approvals", NULL);
  f->sink = ats_new_sink (f->root, key);
  f->integrity_failures = 0;
  g_signal_connect (f->sink, "integrity-failed", G_CALLBACK (on_integrity_failed), f);
}

void
ats_fixture_tear_down (Fixture       *f,
                       gconstpointer  key)
{
  g_clear_object (&f->sink);
  sat_rm_rf (f->root);
  g_free (f->root);
  g_free (f->dir);
}

SubagentApprovalSink *
ats_new_sink (const char *root,
              const char *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) key_bytes = key ? g_bytes_new (key, strlen (key)) : NULL;
  GObject *sink = subagent_plugin_registry_create (subagent_plugin_registry_get_default (),
                                                   SUBAGENT_TYPE_APPROVAL_SINK, "file", &error);

  g_assert_no_error (error);
  g_object_set (sink, "root", root, "hmac-key", key_bytes, NULL);
  return SUBAGENT_APPROVAL_SINK (sink);
}

SubagentApprovalRequest *
ats_make_request (const char *run,
                  const char *tool,
                  const char *path)
{
  g_autoptr(JsonObject) args = json_object_new ();

  json_object_set_string_member (args, "path", path);
  return subagent_approval_request_new ("child-1", run, "writer", tool, args, "prompt", "shared",
                                        SUBAGENT_NO_BATCH_INDEX, NULL, 0);
}

void
ats_save_one (SubagentApprovalSink    *sink,
              const char              *run,
              SubagentApprovalRequest *request)
{
  g_autoptr(GPtrArray) batch = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;

  g_ptr_array_add (batch, request);
  g_assert_true (subagent_approval_sink_save (sink, run, batch, &error));
  g_assert_no_error (error);
}

GPtrArray *
ats_load (SubagentApprovalSink *sink,
          const char           *run)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *requests = subagent_approval_sink_load (sink, run, &error);

  g_assert_no_error (error);
  g_assert_nonnull (requests);
  return requests;
}

SubagentApprovalRequest *
ats_find (GPtrArray  *requests,
          const char *request_id)
{
  for (guint i = 0; i < requests->len; i++)
    if (g_str_equal (subagent_approval_request_get_request_id (requests->pdata[i]), request_id))
      return requests->pdata[i];
  return NULL;
}

SubagentApprovalStatus
ats_stored_status (SubagentApprovalSink    *sink,
                   const char              *run,
                   SubagentApprovalRequest *request)
{
  g_autoptr(GPtrArray) requests = ats_load (sink, run);
  SubagentApprovalRequest *stored = ats_find (requests, subagent_approval_request_get_request_id (request));

  g_assert_nonnull (stored);
  return subagent_approval_request_get_status (stored);
}

static int
compare_strings (const void *a,
                 const void *b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}
/* A live file store keeps the version its last write replaced, under a
 * temp name and flock'd, for its next write: not a leftover. */
static gboolean
is_held_temp_file (const char *dir,
                   const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  gboolean held;
  int fd;

  if (name[0] != '.')
    return FALSE;
  fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0)
    return FALSE;
  held = flock (fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
  close (fd);
  return held;
}


char **
ats_dir_entries (const char *dir)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  char **names;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if (!is_held_temp_file (dir, name))
      g_strv_builder_add (builder, name);
  names = g_strv_builder_end (builder);
  qsort (names, g_strv_length (names), sizeof (char *), compare_strings);
  return names;
}

/* $ASAN_OPTIONS with the fast malloc unwinder (a later flag wins). */
static char *
helper_asan_options (void)
{
  const char *options = g_getenv ("ASAN_OPTIONS");

  if (options == NULL || options[0] == '\0')
    return g_strdup ("fast_unwind_on_malloc=1");
  return g_strconcat (options, ":fast_unwind_on_malloc=1", NULL);
}

GSubprocess *
ats_spawn_helper (GSubprocessFlags   flags,
                  GError           **error,
                  const char        *first_arg,
                  ...)
{
  g_autofree char *helper = g_test_build_filename (G_TEST_BUILT, "approval-stress-helper", NULL);
  g_autofree char *asan_options = helper_asan_options ();
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (flags);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  va_list ap;

  g_ptr_array_add (argv, helper);
  va_start (ap, first_arg);
  for (const char *a = first_arg; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_setenv (launcher, "ASAN_OPTIONS", asan_options, TRUE);
  return g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, error);
}

typedef struct {
  char **outputs;
  GError **errors;
  guint pending;
} CommunicateAll;

typedef struct {
  CommunicateAll *all;
  guint index;
} CommunicateOne;

static void
on_communicated (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  CommunicateOne *one = user_data;

  g_subprocess_communicate_utf8_finish (G_SUBPROCESS (source), result, &one->all->outputs[one->index], NULL,
                                        &one->all->errors[one->index]);
  one->all->pending--;
  g_free (one);
}

static gboolean
on_deadline (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

char **
ats_communicate_all (GPtrArray          *procs,
                     const char * const *names,
                     guint               timeout_seconds)
{
  CommunicateAll all = { g_new0 (char *, procs->len + 1), g_new0 (GError *, procs->len), procs->len };
  gboolean expired = FALSE;
  guint deadline_id = g_timeout_add_seconds (timeout_seconds, on_deadline, &expired);

  for (guint i = 0; i < procs->len; i++)
    {
      CommunicateOne *one = g_new0 (CommunicateOne, 1);

      one->all = &all;
      one->index = i;
      g_subprocess_communicate_utf8_async (procs->pdata[i], NULL, NULL, on_communicated, one);
    }
  while (all.pending > 0 && !expired)
    g_main_context_iteration (NULL, TRUE);

  if (expired)
    {
      g_autoptr(GString) running = g_string_new (NULL);

      for (guint i = 0; i < procs->len; i++)
        if (all.outputs[i] == NULL && all.errors[i] == NULL)
          {
            g_string_append_printf (running, " %s", names[i]);
            g_subprocess_force_exit (procs->pdata[i]);
          }
      /* Let the killed ones' reads finish before their buffers go. */
      while (all.pending > 0)
        g_main_context_iteration (NULL, TRUE);
      g_error ("still running after %u s (killed):%s", timeout_seconds, running->str);
    }
  g_source_remove (deadline_id);

  for (guint i = 0; i < procs->len; i++)
    {
      g_assert_no_error (all.errors[i]);
      if (!g_subprocess_get_successful (procs->pdata[i]))
        g_error ("%s failed (see its stderr above)", names[i]);
    }
  g_free (all.errors);
  return all.outputs;
}

/* The stores of the conformance cases */

AtsStoreKind ats_store_kind = ATS_STORE_FILE;

const char *
ats_store_name (AtsStoreKind kind)
{
  return kind == ATS_STORE_POSTGRES ? "postgres" : "file";
}

void
ats_store_parse_args (int    *argc,
                      char ***argv)
{
  int out = 1;

  for (int i = 1; i < *argc; i++)
    {
      const char *arg = (*argv)[i];

      if (g_str_equal (arg, "--store=file"))
        ats_store_kind = ATS_STORE_FILE;
      else if (g_str_equal (arg, "--store=postgres"))
        ats_store_kind = ATS_STORE_POSTGRES;
      else if (g_str_has_prefix (arg, "--store="))
        g_error ("unknown store in %s: use --store=file or --store=postgres", arg);
      else
        (*argv)[out++] = (*argv)[i];
    }
  (*argv)[out] = NULL;
  *argc = out;
}

const char *
ats_pg_conninfo (char host)
{
  const char *name = host == 'b' ? "SUBAGENT_TEST_PG_SOCKET_CONNINFO" : "SUBAGENT_TEST_PG_CONNINFO";
  const char *conninfo = g_getenv (name);

  /* Never a skip: the postgres suite runs where run-tests started a server. */
  if (conninfo == NULL || conninfo[0] == '\0')
    g_error ("%s is not set: the postgres tests need the server scripts/run-tests starts "
             "(or: source scripts/lib/postgres.sh && start_postgres)", name);
  return conninfo;
}

static void
ignore_notice (void       *arg,
               const char *message)
{
}

static PGconn *
pg_connect_or_die (void)
{
  PGconn *conn = PQconnectdb (ats_pg_conninfo ('a'));

  if (PQstatus (conn) != CONNECTION_OK)
    g_error ("cannot reach the test PostgreSQL server (%s): %s", ats_pg_conninfo ('a'), PQerrorMessage (conn));
  /* "drop cascades to …" is not for the TAP output. */
  PQsetNoticeProcessor (conn, ignore_notice, NULL);
  return conn;
}

static void
pg_exec_or_die (PGconn             *conn,
                const char         *sql,
                int                 n_params,
                const char * const *params)
{
  PGresult *result = PQexecParams (conn, sql, n_params, NULL, params, NULL, NULL, 0);

  if (PQresultStatus (result) != PGRES_COMMAND_OK && PQresultStatus (result) != PGRES_TUPLES_OK)
    g_error ("%s: %s", sql, PQresultErrorMessage (result));
  PQclear (result);
}

void
ats_pg_exec (const char *sql)
{
  PGconn *conn = pg_connect_or_die ();
  /* Several statements may come in one string. */
  PGresult *result = PQexec (conn, sql);

  if (PQresultStatus (result) != PGRES_COMMAND_OK && PQresultStatus (result) != PGRES_TUPLES_OK)
    g_error ("%s: %s", sql, PQresultErrorMessage (result));
  PQclear (result);
  PQfinish (conn);
}

gint64
ats_pg_query_int (const char *sql)
{
  PGconn *conn = pg_connect_or_die ();
  PGresult *result = PQexec (conn, sql);
  gint64 value;

  if (PQresultStatus (result) != PGRES_TUPLES_OK || PQntuples (result) != 1 || PQnfields (result) < 1)
    g_error ("%s: %s", sql, PQresultErrorMessage (result));
  value = g_ascii_strtoll (PQgetvalue (result, 0, 0), NULL, 10);
  PQclear (result);
  PQfinish (conn);
  return value;
}

static SubagentApprovalSink *
new_postgres_sink (const char *schema,
                   char        host,
                   const char *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) key_bytes = key ? g_bytes_new (key, strlen (key)) : NULL;
  GObject *sink = subagent_plugin_registry_create (subagent_plugin_registry_get_default (),
                                                   SUBAGENT_TYPE_APPROVAL_SINK, "postgres", &error);

  g_assert_no_error (error);
  g_object_set (sink, "conninfo", ats_pg_conninfo (host), "schema", schema, "hmac-key", key_bytes, NULL);
  return SUBAGENT_APPROVAL_SINK (sink);
}

SubagentApprovalSink *
ats_store_new_sink (Fixture    *f,
                    const char *key)
{
  if (f->kind == ATS_STORE_POSTGRES)
    return new_postgres_sink (f->schema, 'a', key);
  return ats_new_sink (f->root, key);
}

void
ats_store_fixture_set_up (Fixture       *f,
                          gconstpointer  key)
{
  static guint serial;

  f->kind = ats_store_kind;
  if (f->kind == ATS_STORE_FILE)
    {
      ats_fixture_set_up (f, key);
      return;
    }
  f->root = sat_make_temp_dir ("approval-postgres");
  f->dir = g_build_filename (f->root, ".subagent", "approvals", NULL);
  f->schema = g_strdup_printf ("t%d_%u", (int) getpid (), g_atomic_int_add (&serial, 1));
  f->sink = new_postgres_sink (f->schema, 'a', key);
  f->integrity_failures = 0;
  /* For the processes that find the store through the workspace's
   * configuration (subagentctl, a manager). */
  {
    /* The nested form of docs/approvals.md: the sink's section under approvals:. */
    g_autofree char *yaml = g_strdup_printf ("approvals:\n  sink: postgres\n  postgres:\n"
                                             "    conninfo: \"%s\"\n    schema: %s\n",
                                             ats_pg_conninfo ('b'), f->schema);

    sat_write_file (f->root, ".subagent/config.yaml", yaml);
  }
  g_signal_connect (f->sink, "integrity-failed", G_CALLBACK (on_integrity_failed), f);
}

void
ats_store_fixture_tear_down (Fixture       *f,
                             gconstpointer  key)
{
  if (f->kind == ATS_STORE_POSTGRES)
    {
      PGconn *conn = pg_connect_or_die ();
      g_autofree char *sql = g_strdup_printf ("DROP SCHEMA IF EXISTS \"%s\" CASCADE", f->schema);

      g_clear_object (&f->sink);
      pg_exec_or_die (conn, sql, 0, NULL);
      PQfinish (conn);
      g_clear_pointer (&f->schema, g_free);
    }
  ats_fixture_tear_down (f, key);
}

char *
ats_store_spec (Fixture *f,
                char     host)
{
  if (f->kind == ATS_STORE_POSTGRES)
    return g_strdup_printf ("postgres:%s:%c", f->schema, host);
  return g_strdup (f->root);
}

/* Applies @tamper to @requests (request objects, in store order). */
static void
tamper_requests (JsonArray *requests,
                 AtsTamper  tamper)
{
  JsonObject *a = json_array_get_object_element (requests, 0);
  JsonObject *b = json_array_get_length (requests) > 1 ? json_array_get_object_element (requests, 1) : NULL;
  const char *members[] = { "tool_name", "tool_arguments" };

  switch (tamper)
    {
    case ATS_TAMPER_SWAP_ACTIONS:
    case ATS_TAMPER_SWAP_ACTIONS_AND_DIGESTS:
      g_assert_nonnull (b);
      for (guint i = 0; i < G_N_ELEMENTS (members); i++)
        {
          JsonNode *na = json_node_copy (json_object_get_member (a, members[i]));
          JsonNode *nb = json_node_copy (json_object_get_member (b, members[i]));

          json_object_set_member (a, members[i], nb);
          json_object_set_member (b, members[i], na);
        }
      if (tamper == ATS_TAMPER_SWAP_ACTIONS_AND_DIGESTS)
        {
          g_autofree char *da = g_strdup (json_object_get_string_member (a, "action_digest"));

          json_object_set_string_member (a, "action_digest", json_object_get_string_member (b, "action_digest"));
          json_object_set_string_member (b, "action_digest", da);
        }
      break;
    case ATS_TAMPER_FORGE_VERDICT:
      json_object_set_string_member (a, "status", "approved");
      json_object_set_string_member (a, "approved_at", "2026-01-01T00:00:00Z");
      json_object_set_string_member (a, "approved_by", "mallory");
      break;
    case ATS_TAMPER_RENAME_SUBAGENT:
      json_object_set_string_member (a, "subagent_name", "mallory");
      break;
    }
}

static char *
hmac_of_node (JsonNode   *node,
              const char *key)
{
  g_autofree char *canonical = subagent_json_to_canonical_string (node);

  return g_compute_hmac_for_string (G_CHECKSUM_SHA256, (const guchar *) key, strlen (key), canonical, -1);
}

static void
tamper_file (Fixture    *f,
             const char *run,
             AtsTamper   tamper,
             const char *resign_key)
{
  g_autofree char *path = g_strdup_printf ("%s/%s.json", f->dir, run);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  JsonObject *root;

  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  tamper_requests (json_object_get_array_member (root, "requests"), tamper);
  if (resign_key != NULL)
    {
      g_autofree char *signature = NULL;

      json_object_remove_member (root, "signature");
      signature = hmac_of_node (json_parser_get_root (parser), resign_key);
      json_object_set_string_member (root, "signature", signature);
    }
  text = json_to_string (json_parser_get_root (parser), FALSE);
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
}

/* Rewrites the run's rows as someone with write access to the table would:
 * document, status column and (with @resign_key) signature. */
static void
tamper_rows (Fixture    *f,
             const char *run,
             AtsTamper   tamper,
             const char *resign_key)
{
  PGconn *conn = pg_connect_or_die ();
  g_autofree char *select = g_strdup_printf ("SELECT id, document::text FROM \"%s\".approval_requests "
                                             "WHERE run_id = $1 ORDER BY id", f->schema);
  g_autofree char *update = g_strdup_printf ("UPDATE \"%s\".approval_requests SET document = $2::jsonb, "
                                             "status = $3, signature = coalesce($4, signature) WHERE id = $1::bigint",
                                             f->schema);
  const char *params[] = { run };
  PGresult *result = PQexecParams (conn, select, 1, NULL, params, NULL, NULL, 0);
  g_autoptr(JsonArray) requests = json_array_new ();
  g_auto(GStrv) ids = g_new0 (char *, PQntuples (result) + 1);

  g_assert_cmpint (PQresultStatus (result), ==, PGRES_TUPLES_OK);
  for (int i = 0; i < PQntuples (result); i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();

      g_assert_true (json_parser_load_from_data (parser, PQgetvalue (result, i, 1), -1, NULL));
      json_array_add_element (requests, json_node_copy (json_parser_get_root (parser)));
      ids[i] = g_strdup (PQgetvalue (result, i, 0));
    }
  PQclear (result);
  tamper_requests (requests, tamper);
  for (guint i = 0; ids[i] != NULL; i++)
    {
      JsonNode *node = json_array_get_element (requests, i);
      g_autofree char *text = json_to_string (node, FALSE);
      g_autofree char *signature = resign_key ? hmac_of_node (node, resign_key) : NULL;
      const char *row[] = { ids[i], text, json_object_get_string_member (json_node_get_object (node), "status"),
                            signature };

      pg_exec_or_die (conn, update, 4, row);
    }
  PQfinish (conn);
}

void
ats_store_tamper (Fixture    *f,
                  const char *run,
                  AtsTamper   tamper,
                  const char *resign_key)
{
  if (f->kind == ATS_STORE_POSTGRES)
    tamper_rows (f, run, tamper, resign_key);
  else
    tamper_file (f, run, tamper, resign_key);
}

int
ats_watch_run_writes (const char *dir)
{
  int fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (inotify_add_watch (fd, dir, IN_MOVED_FROM | IN_MOVED_TO), >=, 0);
  return fd;
}

guint
ats_count_run_writes (int         fd,
                      const char *run)
{
  g_autofree char *name = g_strconcat (run, ".json", NULL);
  char buf[4096] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  guint writes = 0;
  ssize_t n;

  while ((n = read (fd, buf, sizeof buf)) > 0)
    for (char *p = buf; p < buf + n;)
      {
        struct inotify_event *event = (struct inotify_event *) p;

        if ((event->mask & IN_MOVED_TO) && event->len > 0 && g_str_equal (event->name, name))
          writes++;
        p += sizeof *event + event->len;
      }
  return writes;
}
