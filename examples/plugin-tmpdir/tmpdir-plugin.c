/* tmpdir-plugin.c: an example isolation plugin, complete: the backend
 * `tmpdir` gives each child a new, empty temporary directory.
 *
 * What a backend does, all of it here:
 *  - prepare: make the workspace, mark it as ours, write an owner record
 *    (so a crash leaves something `subagentctl prune` can find);
 *  - cleanup: remove it again, then the record;
 *  - reclaim: remove what a dead run left, from its owner record, but only
 *    a directory that verifiably is that run's (its marker);
 *  - configure: take the workspace root and the plugin's options (the
 *    `tmpdir:` section of config.yaml): here one, `base_dir`.
 *
 * It includes only <subagent.h>, links only against libsubagent, and is
 * built out of tree (see meson.build and docs/plugin-guide.md).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>
#include <subagent.h>

#define BACKEND "tmpdir"
#define OWNER_KIND "tmpdir"            /* tmpdir.plugin: Leftovers=tmpdir; */
#define MARKER ".subagent-tmpdir"      /* proves a directory is a session's */

typedef struct {
  GObject parent_instance;
  char *base_dir;                      /* option base_dir; NULL: g_get_tmp_dir() */
} TmpdirIsolation;

typedef struct {
  GObjectClass parent_class;
} TmpdirIsolationClass;

static void provider_iface_init (SubagentIsolationProviderInterface *iface);
static void configurable_iface_init (SubagentConfigurableInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TmpdirIsolation, tmpdir_isolation, G_TYPE_OBJECT, 0,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_ISOLATION_PROVIDER, provider_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_CONFIGURABLE, configurable_iface_init))

/* ---- configure: the options this plugin declares ---------------------- */

static GPtrArray *
tmpdir_list_options (SubagentConfigurable *configurable)
{
  GPtrArray *options = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_plugin_option_unref);

  /* The same as tmpdir.plugin's [Option base_dir]. */
  g_ptr_array_add (options, subagent_plugin_option_new ("base_dir", "string", "$TMPDIR, else /tmp",
                                                        "Where the temporary directories are made "
                                                        "(an existing absolute directory)", NULL));
  return options;
}

static gboolean
tmpdir_configure (SubagentConfigurable  *configurable,
                  const char            *root,
                  JsonObject            *options,
                  GError               **error)
{
  TmpdirIsolation *self = (TmpdirIsolation *) configurable;
  JsonNode *node = json_object_get_member (options, "base_dir");
  const char *dir;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  dir = JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING
        ? json_node_get_string (node) : NULL;
  if (dir == NULL || !g_path_is_absolute (dir) || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                   "tmpdir: option base_dir must be an existing absolute directory");
      return FALSE;
    }
  g_free (self->base_dir);
  self->base_dir = g_strdup (dir);
  return TRUE;
}

static void
configurable_iface_init (SubagentConfigurableInterface *iface)
{
  iface->list_options = tmpdir_list_options;
  iface->configure = tmpdir_configure;
}

/* ---- prepare and cleanup ---------------------------------------------- */

static SubagentIsolationContext *
tmpdir_prepare (SubagentIsolationProvider  *provider,
                SubagentIsolationRequest   *request,
                GCancellable               *cancellable,
                GError                    **error)
{
  TmpdirIsolation *self = (TmpdirIsolation *) provider;
  const char *root = subagent_isolation_request_get_parent_root (request);
  const char *key = subagent_isolation_request_get_session_key (request);
  g_autofree char *template = NULL;
  g_autoptr(GError) local_error = NULL;
  char *dir;

  if (!subagent_isolation_session_key_is_valid (key))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "tmpdir: invalid session key “%s”", key ? key : "");
      return NULL;
    }
  template = g_strdup_printf ("%s/subagent-tmpdir-%s-XXXXXX", self->base_dir ? self->base_dir : g_get_tmp_dir (), key);
  dir = g_mkdtemp (template);
  if (dir == NULL)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "tmpdir: cannot make a directory like %s: %s", template, g_strerror (saved));
      return NULL;
    }
  /* The marker first, then the record: a record always names a directory
   * that reclaim can verify. */
  if (!subagent_owner_marker_write (dir, MARKER, key, root, &local_error) ||
      !subagent_owner_record_save (root, key, OWNER_KIND, dir,
                                   subagent_isolation_request_get_parent_run_id (request), NULL, &local_error))
    {
      subagent_tree_remove (dir, NULL, NULL);
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "tmpdir: %s", local_error->message);
      return NULL;
    }
  return g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                       "provider", provider,
                       "parent-root", root,
                       "child-root", dir,
                       "isolation", BACKEND,
                       "session-key", key,
                       NULL);
}

/* Removes @dir only when it holds the marker of @key. */
static gboolean
remove_ours (const char  *dir,
             const char  *key,
             GError     **error)
{
  if (!subagent_owner_marker_matches (dir, MARKER, key))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "%s holds no tmpdir marker of session %s", dir, key);
      return FALSE;
    }
  return subagent_tree_remove (dir, NULL, error);
}

static void
tmpdir_cleanup (SubagentIsolationProvider *provider,
                SubagentIsolationContext  *context)
{
  const char *dir = subagent_isolation_context_get_child_root (context);
  const char *key = subagent_isolation_context_get_session_key (context);
  g_autoptr(GError) error = NULL;

  if (dir == NULL || !g_file_test (dir, G_FILE_TEST_EXISTS))
    ;
  else if (!remove_ours (dir, key, &error))
    {
      /* Cleanup never fails: say what stays, keep the record for prune. */
      g_message ("tmpdir: not removing %s: %s", dir, error->message);
      return;
    }
  subagent_owner_record_remove (subagent_isolation_context_get_parent_root (context), key);
}

/* ---- reclaim: what a dead run left behind ----------------------------- */

static SubagentReclaimOutcome
tmpdir_reclaim (SubagentIsolationProvider  *provider,
                const char                 *root,
                JsonObject                 *record,
                SubagentReclaimFlags        flags,
                char                      **reason)
{
  const char *dir = json_object_get_string_member_with_default (record, "resource", NULL);
  const char *key = json_object_get_string_member_with_default (record, "session_key", NULL);
  g_autoptr(GError) error = NULL;

  if (dir == NULL || !g_path_is_absolute (dir))
    {
      *reason = g_strdup ("the resource is not an absolute path");
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  if (!g_file_test (dir, G_FILE_TEST_EXISTS))
    {
      *reason = g_strdup ("already gone");
      return SUBAGENT_RECLAIM_REMOVED;
    }
  if (!subagent_owner_marker_matches (dir, MARKER, key))
    {
      *reason = g_strdup_printf ("%s holds no tmpdir marker of this session", dir);
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  if (flags & SUBAGENT_RECLAIM_FLAGS_DRY_RUN)
    return SUBAGENT_RECLAIM_REMOVED;
  if (!subagent_tree_remove (dir, NULL, &error))
    {
      *reason = g_strdup (error->message);
      return SUBAGENT_RECLAIM_FAILED;
    }
  return SUBAGENT_RECLAIM_REMOVED;
}

static void
provider_iface_init (SubagentIsolationProviderInterface *iface)
{
  iface->prepare = tmpdir_prepare;   /* prepare_async runs it in a worker thread */
  iface->cleanup = tmpdir_cleanup;
  iface->reclaim = tmpdir_reclaim;
}

/* ---- the type and the module ------------------------------------------ */

static void
tmpdir_isolation_finalize (GObject *object)
{
  g_free (((TmpdirIsolation *) object)->base_dir);
  G_OBJECT_CLASS (tmpdir_isolation_parent_class)->finalize (object);
}

static void
tmpdir_isolation_class_init (TmpdirIsolationClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tmpdir_isolation_finalize;
}

static void tmpdir_isolation_class_finalize (TmpdirIsolationClass *klass) { }
static void tmpdir_isolation_init (TmpdirIsolation *self) { }

static gboolean
register_types (SubagentPluginModule  *module,
                GError               **error)
{
  tmpdir_isolation_register_type (G_TYPE_MODULE (module));
  subagent_plugin_module_provide (module, BACKEND, tmpdir_isolation_get_type ());
  return TRUE;
}

SUBAGENT_PLUGIN_DEFINE ("tmpdir", "0.1.0", "LGPL-2.1-or-later",
                        "Example: each child works in a new, empty temporary directory",
                        register_types)
