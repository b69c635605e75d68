/* snapshot-isolation.c: the `directory-snapshot` isolation backend.
 *
 * prepare() gives the child a private copy of the parent's working tree in
 * a directory outside it: `<snapshot_dir>/<session_key>/tree`, where
 * snapshot_dir defaults to `$XDG_CACHE_HOME/subagent/snapshots`. The copy
 * leaves out `.subagent/` (the parent's state) and `.git` (so the child
 * can never touch the parent's repository: a snapshot is a plain copy of
 * the working tree; use worktree isolation for a child that needs git).
 *
 * Request options:
 *  - `strategy`: `auto` (default), `overlay`, `reflink` or `copy`. `auto`
 *    mounts an overlay where the process may (root), else clones files with
 *    FICLONE where the filesystem can, else copies them. An explicit
 *    `overlay` that cannot mount fails with UNAVAILABLE; an explicit
 *    `reflink` on a filesystem without it copies and says so in a warning.
 *  - `snapshot_dir`: an absolute directory for snapshots; it must not lie
 *    inside the parent.
 *  - `pool_size`: how many cleaned copied snapshots of each parent to keep
 *    ready (default 0). Cleanup syncs a copied tree with the parent and
 *    parks it instead of removing it; prepare takes one and checks that the
 *    parent did not change since (or syncs it again) (snapshot-pool.c).
 *    Overlays are never pooled: they cost nothing to make.
 *
 * prepare() marks snapshot_dir as the top of directory hierarchies (the
 * ext2/3/4 `T` attribute, `chattr +T`; other filesystems refuse it and
 * nothing changes): each snapshot then lands in a block group of its own
 * instead of next to the last one. See spread_snapshots().
 *
 * Layout of a snapshot's base directory: `.subagent-snapshot` (a marker:
 * only directories holding one with their own session key are ever
 * removed, by cleanup or by `subagentctl prune`), `tree/` (the child root),
 * and for an overlay `upper/` and `work/`. An owner record
 * (kind `snapshot`, resource = the base directory) is written right after
 * the base directory is made and removed by cleanup.
 *
 * Backend data (a{sv}) of a context: `snapshot-base` (s), `strategy` (s:
 * `overlay`, `reflink` or `copy`, what was used), `recycled` (b: the tree
 * came from the pool) and, when it did, `pool-full-sync` (b: the parent
 * had changed since the tree was parked, so both trees were compared).
 * Cleanup needs only `snapshot-base` (or else the child root), the parent
 * root and the session key, so a context rebuilt from an owner record
 * cleans up too.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot-private.h"

struct _SubagentSnapshotIsolation
{
  GObject parent_instance;
};

static void provider_iface_init (SubagentIsolationProviderInterface *iface);
static void configurable_iface_init (SubagentConfigurableInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SubagentSnapshotIsolation, subagent_snapshot_isolation, G_TYPE_OBJECT,
                                G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_ISOLATION_PROVIDER, provider_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SUBAGENT_TYPE_CONFIGURABLE, configurable_iface_init))

static const char * const excluded_names[] = { ".subagent", ".git", NULL };

typedef enum {
  STRATEGY_AUTO,
  STRATEGY_OVERLAY,
  STRATEGY_REFLINK,
  STRATEGY_COPY,
} Strategy;

static gboolean
parse_strategy (const char *text,
                Strategy   *out)
{
  static const char * const names[] = { "auto", "overlay", "reflink", "copy" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_ascii_strcasecmp (text, names[i]) == 0)
      {
        *out = i;
        return TRUE;
      }
  return FALSE;
}

static char *
resolve_dir (const char *path)
{
  char *real = realpath (path, NULL);
  char *result;

  if (real == NULL)
    return NULL;
  if (!g_file_test (real, G_FILE_TEST_IS_DIR))
    {
      free (real);
      return NULL;
    }
  result = g_strdup (real);
  free (real);
  return result;
}

static gboolean
path_is_within (const char *path,
                const char *dir)
{
  gsize len = strlen (dir);

  return g_str_equal (path, dir) || g_str_equal (dir, "/") ||
         (strncmp (path, dir, len) == 0 && path[len] == '/');
}

/* The real path dir would have: its deepest existing ancestor resolved
 * (symbolic links included), the rest appended. */
static char *
resolve_future_dir (const char *dir)
{
  g_autofree char *canonical = g_canonicalize_filename (dir, NULL);
  g_autofree char *existing = g_strdup (canonical);
  g_autofree char *real = NULL;
  const char *rest;

  while ((real = resolve_dir (existing)) == NULL && !g_str_equal (existing, "/"))
    {
      char *up = g_path_get_dirname (existing);
      g_free (existing);
      existing = up;
    }
  if (real == NULL)
    return g_steal_pointer (&canonical);
  rest = canonical + strlen (existing);
  while (*rest == '/')
    rest++;
  return *rest ? g_build_filename (real, rest, NULL) : g_steal_pointer (&real);
}

static gboolean
write_marker (const char  *base,
              const char  *session_key,
              const char  *parent_root,
              GError     **error)
{
  g_autoptr(GError) local_error = NULL;

  if (!subagent_owner_marker_write (base, SNAPSHOT_MARKER, session_key, parent_root, &local_error))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not write the snapshot marker: %s", local_error->message);
      return FALSE;
    }
  return TRUE;
}

/* Unmounts and removes a snapshot base; logs what it cannot remove. The
 * owner record goes only with the snapshot, so prune finds what is left. */
static void
remove_snapshot (const char *base,
                 const char *parent,
                 const char *key)
{
  g_autoptr(GError) error = NULL;

  if (!snapshot_unmount_tree (base, &error))
    {
      /* Never delete through a mount: that would delete the parent. */
      g_message ("Leaving snapshot %s in place: %s", base, error->message);
      return;
    }
  if (!subagent_tree_remove (base, NULL, &error))
    {
      g_message ("Could not remove snapshot %s: %s", base, error->message);
      return;
    }
  if (parent != NULL)
    subagent_owner_record_remove (parent, key);
}

static SubagentIsolationContext *
snapshot_prepare (SubagentIsolationProvider  *provider,
                  SubagentIsolationRequest   *request,
                  GCancellable               *cancellable,
                  GError                    **error)
{
  const char *parent_option = subagent_isolation_request_get_parent_root (request);
  const char *key = subagent_isolation_request_get_session_key (request);
  const char *strategy_text = subagent_isolation_request_get_option_string (request, "strategy", "auto");
  const char *dir_option = subagent_isolation_request_get_option_string (request, "snapshot_dir", NULL);
  g_autofree char *parent = NULL;
  g_autofree char *default_dir = NULL;
  g_autofree char *snapshot_dir = NULL;
  g_autofree char *base = NULL;
  g_autofree char *tree = NULL;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) local_error = NULL;
  SubagentCopyStrategy copy_used = SUBAGENT_COPY_STRATEGY_COPY;
  gint64 pool_size = subagent_isolation_request_get_option_int (request, "pool_size", 0);
  gint64 sync_started = 0;
  SubagentExcludeSet *secrets = subagent_isolation_request_get_exclude_set (request);
  gboolean recycled = FALSE, full_sync = FALSE;
  const char *used = NULL;
  GVariantBuilder data;
  Strategy strategy;

  if (!subagent_isolation_session_key_is_valid (key))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Invalid session key “%s”: use 1 to 128 of [A-Za-z0-9_-]", key ? key : "");
      return NULL;
    }
  if (strategy_text == NULL || !parse_strategy (strategy_text, &strategy))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Unknown snapshot strategy “%s”: use auto, overlay, reflink or copy",
                   strategy_text ? strategy_text : "");
      return NULL;
    }
  if (pool_size < 0 || pool_size > 64)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Option pool_size %" G_GINT64_FORMAT " is out of range: use 0 to 64", pool_size);
      return NULL;
    }
  if (parent_option == NULL || (parent = resolve_dir (parent_option)) == NULL)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Cannot snapshot %s: it is not an existing directory",
                   parent_option ? parent_option : "(no parent root)");
      return NULL;
    }

  if (dir_option == NULL)
    dir_option = default_dir = g_build_filename (g_get_user_cache_dir (), "subagent", "snapshots", NULL);
  if (!g_path_is_absolute (dir_option))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Option snapshot_dir “%s” must be an absolute path", dir_option);
      return NULL;
    }
  /* Checked before anything is created: nothing may appear in the parent. */
  snapshot_dir = resolve_future_dir (dir_option);
  if (path_is_within (snapshot_dir, parent))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Snapshot directory %s is inside the parent %s: a snapshot would copy itself; "
                   "set option snapshot_dir to a directory outside it", snapshot_dir, parent);
      return NULL;
    }
  g_clear_pointer (&snapshot_dir, g_free);
  if (g_mkdir_with_parents (dir_option, 0700) != 0 || (snapshot_dir = resolve_dir (dir_option)) == NULL ||
      path_is_within (snapshot_dir, parent))
    {
      int saved = snapshot_dir ? EXDEV : errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not create the snapshot directory %s outside %s: %s; set option snapshot_dir",
                   dir_option, parent, g_strerror (saved));
      return NULL;
    }

  subagent_tree_spread_subdirectories (snapshot_dir);
  base = g_build_filename (snapshot_dir, key, NULL);
  tree = g_build_filename (base, SNAPSHOT_TREE, NULL);
  if (mkdir (base, 0700) != 0)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not create snapshot %s: %s%s", base, g_strerror (saved),
                   saved == EEXIST ? " (session keys must be unique; prune leftovers with `subagentctl prune`)" : "");
      return NULL;
    }
  if (!write_marker (base, key, parent, error))
    {
      remove_snapshot (base, NULL, key);
      return NULL;
    }
  if (!subagent_owner_record_save (parent, key, SNAPSHOT_OWNER_KIND, base,
                                   subagent_isolation_request_get_parent_run_id (request),
                                   NULL, &local_error))
    {
      remove_snapshot (base, NULL, key);
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Cannot snapshot %s: %s", parent, local_error->message);
      return NULL;
    }

  if (strategy == STRATEGY_AUTO || strategy == STRATEGY_OVERLAY)
    {
      if (snapshot_overlay_mount (parent, base, excluded_names, secrets, &local_error))
        used = "overlay";
      else if (strategy == STRATEGY_OVERLAY)
        goto failed;
      else
        {
          g_debug ("Snapshot %s: no overlay (%s); copying", key, local_error->message);
          g_clear_error (&local_error);
          /* Start the copy from a clean base: only the marker stays. */
          for (guint i = 0; i < 3; i++)
            {
              const char *names[] = { SNAPSHOT_TREE, SNAPSHOT_UPPER, SNAPSHOT_WORK };
              g_autofree char *path = g_build_filename (base, names[i], NULL);

              if (!subagent_tree_remove (path, NULL, &local_error))
                goto failed;
            }
        }
    }

  if (used == NULL && pool_size > 0 && strategy != STRATEGY_REFLINK)
    {
      SnapshotSyncStats stats;

      if (snapshot_pool_take (snapshot_dir, parent, tree, excluded_names,
                              subagent_isolation_request_get_exclude (request), &stats, &local_error))
        {
          used = "copy";
          recycled = TRUE;
          full_sync = stats.synced;
          sync_started = stats.sync_started;
          g_debug ("Snapshot %s from the pool: %s, %u checked, %u copied again, %u removed", key,
                   stats.synced ? "synced again" : "parent unchanged", stats.checked, stats.copied, stats.removed);
        }
      else if (local_error != NULL)
        {
          /* A tree taken but not synced is not the parent's: start over. */
          g_debug ("Snapshot %s: pooled tree not usable (%s); copying", key, local_error->message);
          g_clear_error (&local_error);
          if (!subagent_tree_remove (tree, NULL, &local_error))
            goto failed;
        }
    }

  if (used == NULL)
    {
      sync_started = snapshot_pool_clock_now ();
      if (!subagent_tree_copy_excluding (parent, tree,
                                         strategy == STRATEGY_COPY ? SUBAGENT_COPY_STRATEGY_COPY
                                                                   : SUBAGENT_COPY_STRATEGY_AUTO,
                                         excluded_names, secrets, &copy_used, cancellable, &local_error))
        goto failed;
      used = subagent_copy_strategy_to_string (copy_used);
      if (strategy == STRATEGY_REFLINK && copy_used != SUBAGENT_COPY_STRATEGY_REFLINK)
        g_ptr_array_add (warnings,
                         g_strdup_printf ("The filesystem of %s cannot clone files (reflink); they were copied",
                                          snapshot_dir));
    }
  g_ptr_array_add (warnings, NULL);

  g_variant_builder_init (&data, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&data, "{sv}", "snapshot-base", g_variant_new_string (base));
  g_variant_builder_add (&data, "{sv}", "strategy", g_variant_new_string (used));
  if (pool_size > 0 && !g_str_equal (used, "overlay"))
    {
      /* What the pool needs at cleanup to trust this tree later. */
      g_variant_builder_add (&data, "{sv}", "pool-size", g_variant_new_uint32 (pool_size));
      g_variant_builder_add (&data, "{sv}", "sync-started", g_variant_new_int64 (sync_started));
      g_variant_builder_add (&data, "{sv}", "handed-out", g_variant_new_int64 (snapshot_pool_clock_now ()));
      g_variant_builder_add (&data, "{sv}", "snapshot-dir", g_variant_new_string (snapshot_dir));
    }
  g_variant_builder_add (&data, "{sv}", "recycled", g_variant_new_boolean (recycled));
  if (recycled)
    g_variant_builder_add (&data, "{sv}", "pool-full-sync", g_variant_new_boolean (full_sync));
  /* What was left out: the review skips it on both sides, the pool's
   * park-time sync leaves it out too. */
  g_variant_builder_add (&data, "{sv}", "exclude",
                         g_variant_new_strv (subagent_isolation_request_get_exclude (request), -1));
  g_debug ("Snapshot %s of %s ready at %s (%s)", key, parent, tree, used);

  return g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                       "provider", provider,
                       "parent-root", parent,
                       "child-root", tree,
                       "isolation", SNAPSHOT_BACKEND,
                       "session-key", key,
                       "container-path", tree,
                       "cpu-quota", subagent_isolation_request_get_cpu_quota (request),
                       "memory-limit", subagent_isolation_request_get_memory_limit (request),
                       "warnings", (char **) warnings->pdata,
                       "backend-data", g_variant_builder_end (&data),
                       NULL);

failed:
  remove_snapshot (base, parent, key);
  if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
      local_error->domain == SUBAGENT_ISOLATION_ERROR)
    g_propagate_error (error, g_steal_pointer (&local_error));
  else
    g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                 "Could not snapshot %s: %s; the partial snapshot was removed",
                 parent, local_error->message);
  return NULL;
}

static char *
base_of_context (SubagentIsolationContext *context)
{
  GVariant *data = subagent_isolation_context_get_backend_data (context);
  const char *child_root;
  const char *base = NULL;

  if (data != NULL && g_variant_lookup (data, "snapshot-base", "&s", &base))
    return g_strdup (base);
  child_root = subagent_isolation_context_get_child_root (context);
  if (child_root == NULL)
    return NULL;
  return g_path_get_dirname (child_root);
}

/* Moves a copied tree into the pool, when the context asked for one and it
 * has room; the rest of the snapshot is removed as usual. */
static void
park_tree (SubagentIsolationContext *context,
           const char               *base)
{
  GVariant *data = subagent_isolation_context_get_backend_data (context);
  const char *parent = subagent_isolation_context_get_parent_root (context);
  const char *snapshot_dir = NULL;
  g_autofree char *tree = NULL;
  guint32 pool_size = 0;
  gint64 sync_started = 0, handed_out = 0;
  g_autofree const char **secret_patterns = NULL;

  if (data == NULL || parent == NULL ||
      !g_variant_lookup (data, "pool-size", "u", &pool_size) ||
      !g_variant_lookup (data, "sync-started", "x", &sync_started) ||
      !g_variant_lookup (data, "handed-out", "x", &handed_out) ||
      !g_variant_lookup (data, "snapshot-dir", "&s", &snapshot_dir))
    return;
  tree = g_build_filename (base, SNAPSHOT_TREE, NULL);
  /* The patterns the snapshot was made with; a context without them (made
   * before they were recorded) had the defaults. */
  if (!g_variant_lookup (data, "exclude", "^a&s", &secret_patterns))
    secret_patterns = NULL;
  if (snapshot_pool_park (snapshot_dir, parent, tree, excluded_names, (const char * const *) secret_patterns,
                          pool_size, sync_started, handed_out))
    g_debug ("Snapshot %s parked in the pool", base);
}

static void
snapshot_cleanup (SubagentIsolationProvider *provider,
                  SubagentIsolationContext  *context)
{
  g_autofree char *base = base_of_context (context);
  const char *key = subagent_isolation_context_get_session_key (context);
  const char *parent = subagent_isolation_context_get_parent_root (context);

  if (base == NULL || key == NULL)
    return;
  if (g_file_test (base, G_FILE_TEST_EXISTS))
    {
      if (!subagent_owner_marker_matches (base, SNAPSHOT_MARKER, key))
        {
          g_message ("Not removing %s: it has no snapshot marker for session %s", base, key);
          return;
        }
      park_tree (context, base);
      remove_snapshot (base, parent, key);
    }
  else if (parent != NULL)
    subagent_owner_record_remove (parent, key);
}

/* The options of isolation-snapshot.plugin, from the loaded type; they
 * reach prepare through the request (the manager merges this plugin's
 * config.yaml section with a run's overrides), so configure keeps nothing. */
static GPtrArray *
snapshot_list_options (SubagentConfigurable *configurable)
{
  GPtrArray *options = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_plugin_option_unref);

  g_ptr_array_add (options, subagent_plugin_option_new ("strategy", "string", "auto",
                                                        "auto, overlay, reflink or copy: how the tree is copied", NULL));
  g_ptr_array_add (options, subagent_plugin_option_new ("snapshot_dir", "string", "$XDG_CACHE_HOME/subagent/snapshots",
                                                        "An absolute directory outside the parent for snapshots", NULL));
  g_ptr_array_add (options, subagent_plugin_option_new ("pool_size", "integer", "0",
                                                        "Copied snapshots of each parent synced with it at cleanup and "
                                                        "kept for the next prepare, which only checks the parent did not "
                                                        "change (0 to 64; never overlays)", NULL));
  return options;
}

static void
configurable_iface_init (SubagentConfigurableInterface *iface)
{
  iface->list_options = snapshot_list_options;
}

static void
provider_iface_init (SubagentIsolationProviderInterface *iface)
{
  iface->prepare = snapshot_prepare;
  iface->cleanup = snapshot_cleanup;
  iface->reclaim = snapshot_reclaim;
}

static void
subagent_snapshot_isolation_class_init (SubagentSnapshotIsolationClass *klass)
{
}

static void
subagent_snapshot_isolation_class_finalize (SubagentSnapshotIsolationClass *klass)
{
}

static void
subagent_snapshot_isolation_init (SubagentSnapshotIsolation *self)
{
}

void
subagent_snapshot_isolation_register (GTypeModule *module)
{
  subagent_snapshot_isolation_register_type (module);
}
