/* subagent-file-approval-sink.c: a SubagentApprovalSink on JSON files.
 *
 * One file per parent run, <root>/.subagent/approvals/<run>.json, shared by
 * every process of the workspace (approval-file-store.c); "changed" comes
 * from inotify (approval-file-watch.c). This file is the GObject: its
 * configuration, and the interface.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "approval-file-io.h"
#include "approval-file-store.h"
#include "approval-file-watch.h"
#include "subagent-file-approval-sink.h"

#define HMAC_KEY_ENV "SUBAGENT_APPROVAL_HMAC_KEY"

struct _SubagentFileApprovalSink
{
  GObject parent_instance;

  GMutex mutex;
  /* Configuration: settable until the first operation freezes it. */
  char *root;
  GBytes *hmac_key;
  char *key_file;
  /* Made at the first operation from the configuration, then never changed
   * (so used without the mutex). */
  AfsStore *store;
  AfsWatchSet *watches;
};

enum {
  PROP_0,
  PROP_ROOT,
  PROP_HMAC_KEY,
  PROP_KEY_FILE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void subagent_file_approval_sink_iface_init (SubagentApprovalSinkInterface *iface);
static void configurable_iface_init (SubagentConfigurableInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SubagentFileApprovalSink, subagent_file_approval_sink, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_APPROVAL_SINK,
                                                               subagent_file_approval_sink_iface_init)
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
resolve_key (SubagentFileApprovalSink  *self,
             GBytes                   **key,
             GError                   **error)
{
  *key = NULL;
  if (self->hmac_key != NULL)
    {
      if (g_bytes_get_size (self->hmac_key) == 0)
        {
          g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                               "The approval-file “hmac-key” is empty; give a secret or NULL for none");
          return FALSE;
        }
      *key = g_bytes_ref (self->hmac_key);
    }
  else if (self->key_file != NULL)
    {
      /* A key file that cannot be used fails every operation: never fall
       * back to writing unsigned files. */
      *key = subagent_approval_key_from_file (self->key_file, error);
      if (*key != NULL)
        subagent_secrets_protect_process ();
      return *key != NULL;
    }
  else
    /* Read once, then erased from the environment /proc shows. */
    *key = subagent_approval_key_from_environment ();
  return TRUE;
}

/* The store, made on first use from the configuration, which is fixed from
 * then on. */
static AfsStore *
get_store (SubagentFileApprovalSink  *self,
           gboolean                   create_dir,
           gboolean                  *exists,
           GError                   **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);
  g_autoptr(GBytes) key = NULL;
  g_autofree char *dir = NULL;
  char *real_root;

  if (self->store == NULL)
    {
      if (self->root == NULL)
        {
          g_set_error_literal (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                               "The approval-file sink has no root; set its “root” property to the workspace root");
          return NULL;
        }
      real_root = realpath (self->root, NULL);
      if (real_root == NULL || !g_file_test (real_root, G_FILE_TEST_IS_DIR))
        {
          g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_STORE,
                       "The approval-file root %s is not an existing directory", self->root);
          free (real_root);
          return NULL;
        }
      dir = g_build_filename (real_root, ".subagent", "approvals", NULL);
      free (real_root);
      if (!resolve_key (self, &key, error))
        return NULL;
      self->store = afs_store_new (dir, key, report_integrity, self);
    }
  g_clear_pointer (&locker, g_mutex_locker_free);

  if (!afs_store_check_dir (self->store, create_dir, exists, error))
    return NULL;
  return self->store;
}

static GPtrArray *
sink_load (SubagentApprovalSink  *sink,
           const char            *parent_run_id,
           GError               **error)
{
  gboolean exists;
  AfsStore *store = get_store (SUBAGENT_FILE_APPROVAL_SINK (sink), FALSE, &exists, error);

  if (store == NULL)
    return NULL;
  if (!exists)
    return g_ptr_array_new_with_free_func (g_object_unref);
  return afs_store_load (store, parent_run_id, error);
}

static gboolean
sink_save (SubagentApprovalSink  *sink,
           const char            *parent_run_id,
           GPtrArray             *requests,
           GError               **error)
{
  gboolean exists;
  AfsStore *store = get_store (SUBAGENT_FILE_APPROVAL_SINK (sink), TRUE, &exists, error);

  return store != NULL && afs_store_save (store, parent_run_id, requests, error);
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
  gboolean exists;
  AfsStore *store = get_store (SUBAGENT_FILE_APPROVAL_SINK (sink), FALSE, &exists, error);

  /* No directory, no request: create nothing for a mistyped run. */
  return store != NULL && exists
         && afs_store_update_status (store, parent_run_id, request_id, status, reason, actor, error);
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
  gboolean exists;
  AfsStore *store = get_store (SUBAGENT_FILE_APPROVAL_SINK (sink), FALSE, &exists, error);

  if (store == NULL)
    return FALSE;
  if (!exists)
    {
      memset (won, 0, n_requests * sizeof (gboolean));
      return TRUE;
    }
  return afs_store_update_batch (store, parent_run_id, request_ids, n_requests, status, reason, actor, won, error);
}

static guint
sink_prune_stale (SubagentApprovalSink  *sink,
                  GTimeSpan              max_age,
                  GError               **error)
{
  gboolean exists;
  AfsStore *store = get_store (SUBAGENT_FILE_APPROVAL_SINK (sink), FALSE, &exists, error);

  return store != NULL && exists ? afs_store_prune (store, max_age, error) : 0;
}

static GStrv
sink_list_runs (SubagentApprovalSink  *sink,
                GError               **error)
{
  gboolean exists;
  AfsStore *store = get_store (SUBAGENT_FILE_APPROVAL_SINK (sink), FALSE, &exists, error);

  if (store == NULL)
    return NULL;
  if (!exists)
    return g_new0 (char *, 1);
  return afs_store_list_runs (store, error);
}

static void
sink_watch (SubagentApprovalSink *sink,
            const char           *parent_run_id)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (sink);
  g_autoptr(GError) error = NULL;
  gboolean exists;
  AfsStore *store = get_store (self, TRUE, &exists, &error);

  if (store == NULL || !afs_watch_set_add (self->watches, afs_store_get_dir (store), parent_run_id, &error))
    g_warning ("Cannot watch the approvals of run %s: %s", parent_run_id, error->message);
}

static void
sink_unwatch (SubagentApprovalSink *sink,
              const char           *parent_run_id)
{
  afs_watch_set_remove (SUBAGENT_FILE_APPROVAL_SINK (sink)->watches, parent_run_id);
}

static void
subagent_file_approval_sink_iface_init (SubagentApprovalSinkInterface *iface)
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

/* SubagentConfigurable: the workspace root, and the `approval-file`
 * section of config.yaml (the same options approval-file.plugin declares). */

static GPtrArray *
sink_list_options (SubagentConfigurable *configurable)
{
  GPtrArray *options = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_plugin_option_unref);

  g_ptr_array_add (options, subagent_plugin_option_new ("key_file", "secret-file", NULL,
                                                        "A file (mode 0600) whose secret signs the approval files "
                                                        "(relative to the root); default: $" HMAC_KEY_ENV ", else unsigned",
                                                        NULL));
  return options;
}

static gboolean
sink_configure (SubagentConfigurable  *configurable,
                const char            *root,
                JsonObject            *options,
                GError               **error)
{
  JsonNode *node = json_object_get_member (options, "key_file");
  g_autofree char *key_file = NULL;

  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      if (json_node_get_value_type (node) != G_TYPE_STRING || *json_node_get_string (node) == '\0')
        {
          g_set_error_literal (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                               "approval-file: option “key_file” must be a file name");
          return FALSE;
        }
      key_file = g_path_is_absolute (json_node_get_string (node)) || root == NULL
                 ? g_strdup (json_node_get_string (node))
                 : g_build_filename (root, json_node_get_string (node), NULL);
    }
  if (root != NULL)
    g_object_set (configurable, "root", root, NULL);
  if (key_file != NULL)
    g_object_set (configurable, "key-file", key_file, NULL);
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
set_config (SubagentFileApprovalSink *self,
            guint                     prop_id,
            const GValue             *value)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);

  if (self->store != NULL)
    {
      g_critical ("SubagentFileApprovalSink: “%s” can only be set before the sink is first used",
                  properties[prop_id]->name);
      return;
    }
  switch (prop_id)
    {
    case PROP_ROOT:
      g_free (self->root);
      self->root = g_value_dup_string (value);
      break;
    case PROP_HMAC_KEY:
      g_clear_pointer (&self->hmac_key, g_bytes_unref);
      self->hmac_key = g_value_dup_boxed (value);
      break;
    case PROP_KEY_FILE:
      g_free (self->key_file);
      self->key_file = g_value_dup_string (value);
      break;
    default:
      g_assert_not_reached ();
    }
}

static void
subagent_file_approval_sink_set_property (GObject      *object,
                                          guint         prop_id,
                                          const GValue *value,
                                          GParamSpec   *pspec)
{
  if (prop_id > PROP_0 && prop_id < N_PROPS)
    set_config (SUBAGENT_FILE_APPROVAL_SINK (object), prop_id, value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
subagent_file_approval_sink_get_property (GObject    *object,
                                          guint       prop_id,
                                          GValue     *value,
                                          GParamSpec *pspec)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (object);
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->mutex);

  switch (prop_id)
    {
    case PROP_ROOT:
      g_value_set_string (value, self->root);
      break;
    case PROP_HMAC_KEY:
      g_value_set_boxed (value, self->hmac_key);
      break;
    case PROP_KEY_FILE:
      g_value_set_string (value, self->key_file);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_file_approval_sink_dispose (GObject *object)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (object);

  g_clear_pointer (&self->watches, afs_watch_set_free);

  G_OBJECT_CLASS (subagent_file_approval_sink_parent_class)->dispose (object);
}

static void
subagent_file_approval_sink_finalize (GObject *object)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (object);

  g_clear_pointer (&self->store, afs_store_free);
  g_free (self->root);
  g_clear_pointer (&self->hmac_key, g_bytes_unref);
  g_free (self->key_file);
  g_mutex_clear (&self->mutex);

  G_OBJECT_CLASS (subagent_file_approval_sink_parent_class)->finalize (object);
}

static void
subagent_file_approval_sink_class_init (SubagentFileApprovalSinkClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->set_property = subagent_file_approval_sink_set_property;
  object_class->get_property = subagent_file_approval_sink_get_property;
  object_class->dispose = subagent_file_approval_sink_dispose;
  object_class->finalize = subagent_file_approval_sink_finalize;

  /**
   * SubagentFileApprovalSink:root: (nullable)
   *
   * The workspace root; queues live in `ROOT/.subagent/approvals/`. Hosts
   * that get the sink from a #SubagentPluginRegistry set it right after
   * creating it: like the other properties it can be set until the sink is
   * first used, and is fixed from then on.
   */
  properties[PROP_ROOT] =
    g_param_spec_string ("root", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentFileApprovalSink:hmac-key: (nullable)
   *
   * The HMAC-SHA256 key that signs and verifies every file. When %NULL,
   * #SubagentFileApprovalSink:key-file is read, else the environment
   * variable `SUBAGENT_APPROVAL_HMAC_KEY` (unset or empty: files are not
   * signed).
   */
  properties[PROP_HMAC_KEY] =
    g_param_spec_boxed ("hmac-key", NULL, NULL, G_TYPE_BYTES,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SubagentFileApprovalSink:key-file: (nullable)
   *
   * A file holding the HMAC key (one trailing newline is ignored). It must
   * be a regular file of mode 0600 (or stricter): otherwise every operation
   * fails with %SUBAGENT_APPROVAL_ERROR_INTEGRITY saying so.
   */
  properties[PROP_KEY_FILE] =
    g_param_spec_string ("key-file", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_file_approval_sink_class_finalize (SubagentFileApprovalSinkClass *klass)
{
}

/* For the watches: whether a run's file changed since @announced only by
 * this sink's writes. */
static gboolean
own_change_only (SubagentApprovalSink  *sink,
                 const char            *run_id,
                 GBytes                *announced,
                 GBytes               **current)
{
  SubagentFileApprovalSink *self = SUBAGENT_FILE_APPROVAL_SINK (sink);
  AfsStore *store;

  *current = NULL;
  g_mutex_lock (&self->mutex);
  store = self->store;
  g_mutex_unlock (&self->mutex);
  return store != NULL && afs_store_own_change_only (store, run_id, announced, current);
}

static void
subagent_file_approval_sink_init (SubagentFileApprovalSink *self)
{
  g_mutex_init (&self->mutex);
  self->watches = afs_watch_set_new (SUBAGENT_APPROVAL_SINK (self), own_change_only);
}

/**
 * subagent_file_approval_sink_register:
 * @module: the plugin's module
 * @error: return location for a #GError
 *
 * Registers #SubagentFileApprovalSink and provides it as the `file` backend
 * of #SubagentApprovalSink.
 *
 * Returns: %TRUE
 */
gboolean
subagent_file_approval_sink_register (SubagentPluginModule  *module,
                                      GError               **error)
{
  subagent_file_approval_sink_register_type (G_TYPE_MODULE (module));
  subagent_plugin_module_provide (module, "file", SUBAGENT_TYPE_FILE_APPROVAL_SINK);
  return TRUE;
}

SUBAGENT_PLUGIN_DEFINE ("approval-file", "0.1.0", "LGPL-2.1-or-later",
                        "Approval queues in JSON files: flock, atomic rename, HMAC-SHA256, inotify",
                        subagent_file_approval_sink_register)

