/* subagent-postgres-approval-sink.c: a SubagentApprovalSink on PostgreSQL.
 *
 * One row per request in <schema>.approval_requests of a database that every
 * host of a deployment reaches (approval-pg-store.c); "changed" comes from
 * LISTEN/NOTIFY (approval-pg-watch.c). This file is the GObject: its
 * configuration, and the interface.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <libpq-fe.h>

#include "approval-pg-sign.h"
#include "approval-pg-store.h"
#include "approval-pg-watch.h"
#include "subagent-postgres-approval-sink.h"

#define HMAC_KEY_ENV "SUBAGENT_APPROVAL_HMAC_KEY"
#define DEFAULT_SCHEMA "subagent"
#define DEFAULT_MAX_CONNECTIONS 4

struct _SubagentPostgresApprovalSink
{
  GObject parent_instance;

  GMutex mutex;
  /* Configuration: settable until the first operation freezes it. */
  char *conninfo;
  char *schema;
  GBytes *hmac_key;
  char *key_file;
  guint max_connections;
  /* Made at the first operation from the configuration, then never changed
   * (so used without the mutex). */
  ApgStore *store;
  ApgWatchSet *watches;
};

enum {
  PROP_0,
  PROP_CONNINFO,
  PROP_SCHEMA,
  PROP_HMAC_KEY,
  PROP_KEY_FILE,
  PROP_MAX_CONNECTIONS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void subagent_postgres_approval_sink_iface_init (SubagentApprovalSinkInterface *iface);
static void configurable_iface_init (SubagentConfigurableInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SubagentPostgresApprovalSink, subagent_postgres_approval_sink, G_TYPE_OBJECT,
                                G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_APPROVAL_SINK,
                                                               subagent_postgres_approval_sink_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_CONFIGURABLE,
                                                               configurable_iface_init))

static void
report_integrity (const char   *run_id,
                  const GError *error,
                  gpointer      user_data)
{
  g_warning ("Ignoring the approval queue of run %s: %s", run_id, error->message);
  subagent_approval_sink_emit_integrity_failed (SUBAGENT_APPROVAL_SINK (user_data), run_id, error->message);
}

/* The key: the "hmac-key" property, else the "key-file" one, else the
 * environment; NULL (no signing) when none is set. */
static gboolean
resolve_key (SubagentPostgresApprovalSink  *self,
             GBytes                       **key,
             GError                       **error)
{
  const char *env = g_getenv (HMAC_KEY_ENV);

  *key = NULL;
  if (self->hmac_key != NULL)
    {
      if (g_bytes_get_size (self->hmac_key) == 0)
        {
          g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                               "The approval-postgres “hmac-key” is empty; give a secret or NULL for none");
          return FALSE;
        }
      *key = g_bytes_ref (self->hmac_key);
    }
  else if (self->key_file != NULL)
    {
      /* A key file that cannot be used fails every operation: never fall
       * back to writing unsigned rows. */
      *key = subagent_approval_key_from_file (self->key_file, error);
      return *key != NULL;
    }
  else if (env != NULL && env[0] != '\0')
    *key = g_bytes_new (env, strlen (env));
  return TRUE;
}

/* The connection string must parse, and must not carry a password: that
 * belongs in ~/.pgpass (or PGPASSFILE, PGPASSWORD), where libpq finds it,
 * never in configuration files, audit logs or error messages. */
static gboolean
check_conninfo (const char  *conninfo,
                GError     **error)
{
  char *parse_error = NULL;
  PQconninfoOption *options = PQconninfoParse (conninfo, &parse_error);
  gboolean has_password = FALSE;

  if (options == NULL)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                   "The approval-postgres “conninfo” does not parse: %s",
                   parse_error ? g_strchomp (parse_error) : "out of memory");
      PQfreemem (parse_error);
      return FALSE;
    }
  for (PQconninfoOption *o = options; o->keyword != NULL; o++)
    if (g_str_equal (o->keyword, "password") && o->val != NULL && o->val[0] != '\0')
      has_password = TRUE;
  PQconninfoFree (options);
  if (has_password)
    {
      g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                           "The approval-postgres “conninfo” holds a password: remove it and put it in "
                           "~/.pgpass (or the file PGPASSFILE names), or use a certificate (sslcert)");
      return FALSE;
    }
  return TRUE;
}

/* The store, made on first use from the configuration, which is fixed from
 * then on. */
static ApgStore *
get_store (SubagentPostgresApprovalSink  *self,
           GError                       **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  g_autoptr(GBytes) key = NULL;
  const char *conninfo = self->conninfo ? self->conninfo : "";

  if (self->store != NULL)
    return self->store;
  if (!apg_schema_name_is_valid (self->schema))
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                   "The approval-postgres “schema” “%s” is not a plain name: use 1–48 characters of "
                   "[A-Za-z0-9_], not starting with a digit", self->schema);
      return NULL;
    }
  if (!check_conninfo (conninfo, error) || !resolve_key (self, &key, error))
    return NULL;
  self->store = apg_store_new (conninfo, self->schema, key, self->max_connections, report_integrity, self);
  self->watches = apg_watch_set_new (SUBAGENT_APPROVAL_SINK (self), conninfo, apg_store_get_channel (self->store));
  return self->store;
}

static GPtrArray *
sink_load (SubagentApprovalSink  *sink,
           const char            *parent_run_id,
           GError               **error)
{
  ApgStore *store = get_store (SUBAGENT_POSTGRES_APPROVAL_SINK (sink), error);

  return store ? apg_store_load (store, parent_run_id, error) : NULL;
}

static gboolean
sink_save (SubagentApprovalSink  *sink,
           const char            *parent_run_id,
           GPtrArray             *requests,
           GError               **error)
{
  ApgStore *store = get_store (SUBAGENT_POSTGRES_APPROVAL_SINK (sink), error);

  return store != NULL && apg_store_save (store, parent_run_id, requests, error);
}

static gboolean
sink_update_status (SubagentApprovalSink    *sink,
                    const char              *parent_run_id,
                    const char              *request_id,
                    SubagentApprovalStatus   status,
                    const char              *reason,
                    const char              *actor,
                    GError                 **error)
{
  ApgStore *store = get_store (SUBAGENT_POSTGRES_APPROVAL_SINK (sink), error);

  return store != NULL && apg_store_update_status (store, parent_run_id, request_id, status, reason, actor, error);
}

static gboolean
sink_update_status_batch (SubagentApprovalSink    *sink,
                          const char              *parent_run_id,
                          const char * const      *request_ids,
                          guint                    n_requests,
                          SubagentApprovalStatus   status,
                          const char              *reason,
                          const char              *actor,
                          gboolean                *won,
                          GError                 **error)
{
  ApgStore *store = get_store (SUBAGENT_POSTGRES_APPROVAL_SINK (sink), error);

  return store != NULL && apg_store_update_batch (store, parent_run_id, request_ids, n_requests, status, reason,
                                                  actor, won, error);
}

static guint
sink_prune_stale (SubagentApprovalSink  *sink,
                  GTimeSpan              max_age,
                  GError               **error)
{
  ApgStore *store = get_store (SUBAGENT_POSTGRES_APPROVAL_SINK (sink), error);

  return store ? apg_store_prune (store, max_age, error) : 0;
}

static GStrv
sink_list_runs (SubagentApprovalSink  *sink,
                GError               **error)
{
  ApgStore *store = get_store (SUBAGENT_POSTGRES_APPROVAL_SINK (sink), error);

  return store ? apg_store_list_runs (store, error) : NULL;
}

static void
sink_watch (SubagentApprovalSink *sink,
            const char           *parent_run_id)
{
  SubagentPostgresApprovalSink *self = SUBAGENT_POSTGRES_APPROVAL_SINK (sink);
  g_autoptr(GError) error = NULL;

  if (get_store (self, &error) == NULL)
    {
      g_warning ("Cannot watch the approvals of run %s: %s", parent_run_id, error->message);
      return;
    }
  apg_watch_set_add (self->watches, parent_run_id);
}

static void
sink_unwatch (SubagentApprovalSink *sink,
              const char           *parent_run_id)
{
  SubagentPostgresApprovalSink *self = SUBAGENT_POSTGRES_APPROVAL_SINK (sink);

  if (self->watches != NULL)
    apg_watch_set_remove (self->watches, parent_run_id);
}

static void
subagent_postgres_approval_sink_iface_init (SubagentApprovalSinkInterface *iface)
{
  iface->save = sink_save;
  iface->load = sink_load;
  iface->update_status = sink_update_status;
  iface->update_status_batch = sink_update_status_batch;
  iface->prune_stale = sink_prune_stale;
  iface->list_runs = sink_list_runs;
  iface->watch = sink_watch;
  iface->unwatch = sink_unwatch;
}

/* SubagentConfigurable: the `postgres` section of config.yaml (the same
 * options approval-postgres.plugin declares). The root only resolves a
 * relative key file: the queues are on the server. */

static GPtrArray *
sink_list_options (SubagentConfigurable *configurable)
{
  GPtrArray *options = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_plugin_option_unref);

  g_ptr_array_add (options, subagent_plugin_option_new ("conninfo", "string", NULL,
                                                        "A libpq connection string or URI of the server (no password: "
                                                        "~/.pgpass); default: libpq's PG* variables", NULL));
  g_ptr_array_add (options, subagent_plugin_option_new ("schema", "string", DEFAULT_SCHEMA,
                                                        "The schema of the tables, created on first use: one per group "
                                                        "of hosts that share approvals", NULL));
  g_ptr_array_add (options, subagent_plugin_option_new ("key_file", "string", NULL,
                                                        "A file (mode 0600) whose secret signs every row (relative to "
                                                        "the root); default: $" HMAC_KEY_ENV ", else unsigned", NULL));
  g_ptr_array_add (options, subagent_plugin_option_new ("max_connections", "integer", G_STRINGIFY (DEFAULT_MAX_CONNECTIONS),
                                                        "Connections a process's operations share (each watching "
                                                        "thread has one more, for LISTEN)", NULL));
  return options;
}

/* A string option, NULL when absent; FALSE with an error for another type. */
static gboolean
string_option (JsonObject  *options,
               const char  *name,
               const char **value,
               GError     **error)
{
  JsonNode *node = json_object_get_member (options, name);

  *value = NULL;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                   "approval-postgres: option “%s” must be a string", name);
      return FALSE;
    }
  *value = json_node_get_string (node);
  return TRUE;
}

static gboolean
sink_configure (SubagentConfigurable  *configurable,
                const char            *root,
                JsonObject            *options,
                GError               **error)
{
  const char *conninfo, *schema, *key_file;
  JsonNode *node = json_object_get_member (options, "max_connections");
  gint64 max_connections = DEFAULT_MAX_CONNECTIONS;

  if (!string_option (options, "conninfo", &conninfo, error)
      || !string_option (options, "schema", &schema, error)
      || !string_option (options, "key_file", &key_file, error))
    return FALSE;
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64
          || json_node_get_int (node) < 1 || json_node_get_int (node) > 64)
        {
          g_set_error_literal (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                               "approval-postgres: option “max_connections” must be an integer from 1 to 64");
          return FALSE;
        }
      max_connections = json_node_get_int (node);
    }
  /* Checked here too, so that a bad value is a configuration error at once. */
  if (schema != NULL && !apg_schema_name_is_valid (schema))
    {
      g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                   "approval-postgres: option “schema” “%s” is not a plain name: use 1–48 characters of "
                   "[A-Za-z0-9_], not starting with a digit", schema);
      return FALSE;
    }
  if (conninfo != NULL)
    g_object_set (configurable, "conninfo", conninfo, NULL);
  if (schema != NULL)
    g_object_set (configurable, "schema", schema, NULL);
  if (key_file != NULL)
    {
      g_autofree char *path = g_path_is_absolute (key_file) || root == NULL
                              ? g_strdup (key_file) : g_build_filename (root, key_file, NULL);

      g_object_set (configurable, "key-file", path, NULL);
    }
  g_object_set (configurable, "max-connections", (guint) max_connections, NULL);
  return TRUE;
}

static void
configurable_iface_init (SubagentConfigurableInterface *iface)
{
  iface->list_options = sink_list_options;
  iface->configure = sink_configure;
}

/* GObject */

static void
set_config (SubagentPostgresApprovalSink *self,
            guint                         prop_id,
            const GValue                 *value)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);

  if (self->store != NULL)
    {
      g_critical ("SubagentPostgresApprovalSink: “%s” can only be set before the sink is first used",
                  properties[prop_id]->name);
      return;
    }
  switch (prop_id)
    {
    case PROP_CONNINFO:
      if (self->conninfo != NULL)
        memset (self->conninfo, 0, strlen (self->conninfo));
      g_free (self->conninfo);
      self->conninfo = g_value_dup_string (value);
      break;
    case PROP_SCHEMA:
      g_free (self->schema);
      self->schema = g_strdup (g_value_get_string (value) ? g_value_get_string (value) : DEFAULT_SCHEMA);
      break;
    case PROP_HMAC_KEY:
      g_clear_pointer (&self->hmac_key, g_bytes_unref);
      self->hmac_key = g_value_dup_boxed (value);
      break;
    case PROP_KEY_FILE:
      g_free (self->key_file);
      self->key_file = g_value_dup_string (value);
      break;
    case PROP_MAX_CONNECTIONS:
      self->max_connections = g_value_get_uint (value);
      break;
    default:
      g_assert_not_reached ();
    }
}

static void
subagent_postgres_approval_sink_set_property (GObject      *object,
                                              guint         prop_id,
                                              const GValue *value,
                                              GParamSpec   *pspec)
{
  if (prop_id > PROP_0 && prop_id < N_PROPS)
    set_config (SUBAGENT_POSTGRES_APPROVAL_SINK (object), prop_id, value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
subagent_postgres_approval_sink_get_property (GObject    *object,
                                              guint       prop_id,
                                              GValue     *value,
                                              GParamSpec *pspec)
{
  SubagentPostgresApprovalSink *self = SUBAGENT_POSTGRES_APPROVAL_SINK (object);
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);

  switch (prop_id)
    {
    case PROP_CONNINFO:
      g_value_set_string (value, self->conninfo);
      break;
    case PROP_SCHEMA:
      g_value_set_string (value, self->schema);
      break;
    case PROP_HMAC_KEY:
      g_value_set_boxed (value, self->hmac_key);
      break;
    case PROP_KEY_FILE:
      g_value_set_string (value, self->key_file);
      break;
    case PROP_MAX_CONNECTIONS:
      g_value_set_uint (value, self->max_connections);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_postgres_approval_sink_dispose (GObject *object)
{
  SubagentPostgresApprovalSink *self = SUBAGENT_POSTGRES_APPROVAL_SINK (object);

  g_clear_pointer (&self->watches, apg_watch_set_free);

  G_OBJECT_CLASS (subagent_postgres_approval_sink_parent_class)->dispose (object);
}

static void
subagent_postgres_approval_sink_finalize (GObject *object)
{
  SubagentPostgresApprovalSink *self = SUBAGENT_POSTGRES_APPROVAL_SINK (object);

  g_clear_pointer (&self->store, apg_store_free);
  if (self->conninfo != NULL)
    memset (self->conninfo, 0, strlen (self->conninfo));
  g_free (self->conninfo);
  g_free (self->schema);
  g_clear_pointer (&self->hmac_key, g_bytes_unref);
  g_free (self->key_file);
  g_mutex_clear (&self->mutex);

  G_OBJECT_CLASS (subagent_postgres_approval_sink_parent_class)->finalize (object);
}

static void
subagent_postgres_approval_sink_class_init (SubagentPostgresApprovalSinkClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->set_property = subagent_postgres_approval_sink_set_property;
  object_class->get_property = subagent_postgres_approval_sink_get_property;
  object_class->dispose = subagent_postgres_approval_sink_dispose;
  object_class->finalize = subagent_postgres_approval_sink_finalize;

  /**
   * SubagentPostgresApprovalSink:conninfo: (nullable)
   *
   * A libpq connection string (`host=db.example port=5432 dbname=ops
   * user=agents sslmode=verify-full`) or URI; what it leaves out comes from
   * libpq's `PG*` environment variables, %NULL takes all from there. It must
   * not hold a password (libpq reads `~/.pgpass`): one that does fails
   * every operation with %SUBAGENT_APPROVAL_ERROR_STORE. Like the other
   * properties it can be set until the sink is first used.
   */
  properties[PROP_CONNINFO] =
    g_param_spec_string ("conninfo", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentPostgresApprovalSink:schema:
   *
   * The schema that holds the tables, created on first use: one per group
   * of hosts that share approvals (1–48 characters of `[A-Za-z0-9_]`).
   */
  properties[PROP_SCHEMA] =
    g_param_spec_string ("schema", NULL, NULL, DEFAULT_SCHEMA,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentPostgresApprovalSink:hmac-key: (nullable)
   *
   * The HMAC-SHA256 key that signs and verifies every row. When %NULL,
   * #SubagentPostgresApprovalSink:key-file is read, else the environment
   * variable `SUBAGENT_APPROVAL_HMAC_KEY` (unset or empty: rows are not
   * signed).
   */
  properties[PROP_HMAC_KEY] =
    g_param_spec_boxed ("hmac-key", NULL, NULL, G_TYPE_BYTES,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentPostgresApprovalSink:key-file: (nullable)
   *
   * A file holding the HMAC key (one trailing newline is ignored), of mode
   * 0600 or stricter; otherwise every operation fails with
   * %SUBAGENT_APPROVAL_ERROR_INTEGRITY saying so.
   */
  properties[PROP_KEY_FILE] =
    g_param_spec_string ("key-file", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentPostgresApprovalSink:max-connections:
   *
   * How many connections the sink's operations share (each watching main
   * context has one more, for LISTEN).
   */
  properties[PROP_MAX_CONNECTIONS] =
    g_param_spec_uint ("max-connections", NULL, NULL, 1, 64, DEFAULT_MAX_CONNECTIONS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_postgres_approval_sink_class_finalize (SubagentPostgresApprovalSinkClass *klass)
{
}

static void
subagent_postgres_approval_sink_init (SubagentPostgresApprovalSink *self)
{
  g_mutex_init (&self->mutex);
  self->schema = g_strdup (DEFAULT_SCHEMA);
  self->max_connections = DEFAULT_MAX_CONNECTIONS;
}

/**
 * subagent_postgres_approval_sink_register:
 * @module: the plugin's module
 * @error: return location for a #GError
 *
 * Registers #SubagentPostgresApprovalSink and provides it as the
 * `postgres` backend of #SubagentApprovalSink.
 *
 * Returns: %TRUE
 */
gboolean
subagent_postgres_approval_sink_register (SubagentPluginModule  *module,
                                          GError               **error)
{
  subagent_postgres_approval_sink_register_type (G_TYPE_MODULE (module));
  subagent_plugin_module_provide (module, "postgres", SUBAGENT_TYPE_POSTGRES_APPROVAL_SINK);
  return TRUE;
}

SUBAGENT_PLUGIN_DEFINE ("approval-postgres", "0.1.0", "LGPL-2.1-or-later",
                        "Approval queues in PostgreSQL: row compare-and-set, LISTEN/NOTIFY, HMAC-SHA256",
                        subagent_postgres_approval_sink_register)
