/* subagentctl-worktrees.c: `subagentctl worktrees list|prune`, the git
 * worktrees that worktree isolation made under ROOT/.subagent/worktrees.
 *
 * "Ours" means: listed by git (`git worktree list`), directly inside
 * ROOT/.subagent/worktrees, named by a session key, and on a `subagent/`
 * branch. Prune removes only such a worktree, through the reclaim of the
 * plugin whose descriptor lists owner-record kind `worktree` in Leftovers=
 * (subagent_isolation_provider_reclaim(), the same call `subagentctl prune`
 * makes), so the removal logic lives in the plugin. A directory git does not
 * list (a crash during provisioning) is never touched: it must go by hand.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "subagentctl.h"

#define BRANCH_REF_PREFIX "ref: refs/heads/"
/* The owner-record kind of the worktrees this command lists. */
#define WORKTREE_OWNER_KIND "worktree"
#define OUR_BRANCH_PREFIX "subagent/"

typedef struct {
  char *key;
  char *admin_name;
  char *path;
  char *branch;
  gboolean pooled;
  JsonObject *owner; /* nullable */
} WorktreeEntry;

static void
worktree_entry_free (WorktreeEntry *entry)
{
  g_free (entry->key);
  g_free (entry->admin_name);
  g_free (entry->path);
  g_free (entry->branch);
  g_clear_pointer (&entry->owner, json_object_unref);
  g_free (entry);
}

static gboolean
is_pool_name (const char *key)
{
  const char *p;

  if (!g_str_has_prefix (key, "pool-") || key[5] == '\0')
    return FALSE;
  for (p = key + 5; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

static char *
real_path_or_null (const char *path)
{
  char *real = realpath (path, NULL);
  char *copy = g_strdup (real);

  free (real);
  return copy;
}

/* The branch the worktree's admin dir says it has checked out; NULL when
 * HEAD is detached or unreadable. */
static char *
read_branch (const char *common_dir,
             const char *name)
{
  g_autofree char *head_path = g_build_filename (common_dir, "worktrees", name, "HEAD", NULL);
  g_autofree char *contents = NULL;

  if (!g_file_get_contents (head_path, &contents, NULL, NULL))
    return NULL;
  g_strstrip (contents);
  if (!g_str_has_prefix (contents, BRANCH_REF_PREFIX))
    return NULL;
  return g_strdup (contents + strlen (BRANCH_REF_PREFIX));
}

static JsonObject *
find_owner (GPtrArray  *records,
            const char *key)
{
  for (guint i = 0; records != NULL && i < records->len; i++)
    {
      JsonObject *record = records->pdata[i];

      if (g_strcmp0 (json_object_get_string_member_with_default (record, "session_key", NULL), key) == 0 &&
          g_strcmp0 (json_object_get_string_member_with_default (record, "kind", NULL), WORKTREE_OWNER_KIND) == 0)
        return json_object_ref (record);
    }
  return NULL;
}

/* Our worktrees of the repository at @root (element-type WorktreeEntry). */
static GPtrArray *
collect_worktrees (const char  *root,
                   GError     **error)
{
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func ((GDestroyNotify) worktree_entry_free);
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(GError) records_error = NULL;
  g_autofree char *ours = g_build_filename (root, ".subagent", "worktrees", NULL);
  g_autofree char *common_dir = NULL;
  git_repository *repo = NULL;
  git_strarray names = { NULL, 0 };

  if (git_repository_open_ext (&repo, root, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
    {
      const git_error *e = git_error_last ();
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_NOT_FOUND,
                   "%s is not a git repository (%s); pass the repository root with --root",
                   root, e != NULL ? e->message : "no .git");
      return NULL;
    }
  common_dir = real_path_or_null (git_repository_commondir (repo));
  if (common_dir == NULL || git_worktree_list (&names, repo) < 0)
    {
      const git_error *e = git_error_last ();
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                   "Could not list the worktrees of %s: %s", root, e != NULL ? e->message : "unknown error");
      git_repository_free (repo);
      return NULL;
    }
  records = subagent_owner_record_list (root, &records_error);
  if (records == NULL)
    g_printerr ("subagentctl: owner records unreadable, owners not shown: %s\n", records_error->message);

  for (size_t i = 0; i < names.count; i++)
    {
      git_worktree *wt = NULL;
      g_autofree char *dir = NULL;
      g_autofree char *real_dir = NULL;
      g_autofree char *key = NULL;
      g_autofree char *branch = NULL;
      WorktreeEntry *entry;

      if (git_worktree_lookup (&wt, repo, names.strings[i]) < 0)
        continue;
      dir = g_path_get_dirname (git_worktree_path (wt));
      key = g_path_get_basename (git_worktree_path (wt));
      git_worktree_free (wt);
      real_dir = real_path_or_null (dir);
      branch = read_branch (common_dir, names.strings[i]);
      if (g_strcmp0 (real_dir, ours) != 0 || !subagent_isolation_session_key_is_valid (key) ||
          branch == NULL || !g_str_has_prefix (branch, OUR_BRANCH_PREFIX))
        continue;
      entry = g_new0 (WorktreeEntry, 1);
      entry->admin_name = g_strdup (names.strings[i]);
      entry->path = g_build_filename (ours, key, NULL);
      entry->pooled = is_pool_name (key);
      entry->owner = find_owner (records, key);
      entry->key = g_steal_pointer (&key);
      entry->branch = g_steal_pointer (&branch);
      g_ptr_array_add (entries, entry);
    }
  git_strarray_dispose (&names);
  git_repository_free (repo);
  return g_steal_pointer (&entries);
}

static JsonNode *
entries_json (GPtrArray *entries)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_array (builder);
  for (guint i = 0; i < entries->len; i++)
    {
      WorktreeEntry *e = entries->pdata[i];

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "session_key");
      json_builder_add_string_value (builder, e->key);
      json_builder_set_member_name (builder, "branch");
      json_builder_add_string_value (builder, e->branch);
      json_builder_set_member_name (builder, "path");
      json_builder_add_string_value (builder, e->path);
      json_builder_set_member_name (builder, "pooled");
      json_builder_add_boolean_value (builder, e->pooled);
      json_builder_set_member_name (builder, "pid");
      if (e->owner != NULL && json_object_has_member (e->owner, "pid"))
        json_builder_add_int_value (builder, json_object_get_int_member (e->owner, "pid"));
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "alive");
      if (e->owner != NULL)
        json_builder_add_boolean_value (builder, subagent_owner_is_alive (e->owner));
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "created_at");
      if (e->owner != NULL && json_object_get_string_member_with_default (e->owner, "created_at", NULL) != NULL)
        json_builder_add_string_value (builder, json_object_get_string_member (e->owner, "created_at"));
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "parent_run_id");
      if (e->owner != NULL && json_object_get_string_member_with_default (e->owner, "parent_run_id", NULL) != NULL)
        json_builder_add_string_value (builder, json_object_get_string_member (e->owner, "parent_run_id"));
      else
        json_builder_add_null_value (builder);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  return json_builder_get_root (builder);
}

static char *
owner_text (WorktreeEntry *e)
{
  if (e->pooled)
    return g_strdup ("(pool)");
  if (e->owner == NULL)
    return g_strdup ("(no record)");
  return g_strdup_printf ("%" G_GINT64_FORMAT " %s",
                          json_object_get_int_member_with_default (e->owner, "pid", 0),
                          subagent_owner_is_alive (e->owner) ? "alive" : "dead");
}

static void
print_table (GPtrArray  *entries,
             const char *root)
{
  int key_w = strlen ("SESSION"), branch_w = strlen ("BRANCH"), owner_w = strlen ("OWNER");
  g_autoptr(GPtrArray) owners = g_ptr_array_new_with_free_func (g_free);

  if (entries->len == 0)
    {
      printf ("No worktrees of subagent runs in %s/.subagent/worktrees\n", root);
      return;
    }
  for (guint i = 0; i < entries->len; i++)
    {
      WorktreeEntry *e = entries->pdata[i];
      char *owner = owner_text (e);

      key_w = MAX (key_w, (int) strlen (e->key));
      branch_w = MAX (branch_w, (int) strlen (e->branch));
      owner_w = MAX (owner_w, (int) strlen (owner));
      g_ptr_array_add (owners, owner);
    }
  printf ("%-*s  %-*s  %-*s  %-25s  %s\n", key_w, "SESSION", branch_w, "BRANCH", owner_w, "OWNER", "CREATED", "PATH");
  for (guint i = 0; i < entries->len; i++)
    {
      WorktreeEntry *e = entries->pdata[i];
      const char *created = e->owner != NULL ?
        json_object_get_string_member_with_default (e->owner, "created_at", "-") : "-";

      printf ("%-*s  %-*s  %-*s  %-25s  %s\n", key_w, e->key, branch_w, e->branch,
              owner_w, (const char *) owners->pdata[i], created, e->path);
    }
}

static int
worktrees_list (const char *root,
                gboolean    json)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) entries = collect_worktrees (root, &error);

  if (entries == NULL)
    return sactl_fail (error);
  if (json)
    {
      g_autoptr(JsonNode) node = entries_json (entries);
      sactl_print_json (node);
    }
  else
    print_table (entries, root);
  fflush (stdout);
  return 0;
}

static int
worktrees_prune (const char *root,
                 const char *key,
                 gboolean    force,
                 gboolean    keep_branch)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  g_autoptr(SubagentConfig) config = NULL;
  g_autoptr(SubagentPluginRegistry) registry = NULL;
  g_autoptr(SubagentPluginInfo) info = NULL;
  g_autoptr(GObject) provider = NULL;
  g_autoptr(JsonObject) record = NULL;
  g_autoptr(JsonObject) options = json_object_new ();
  g_autofree char *reason = NULL;
  SubagentReclaimOutcome outcome;
  WorktreeEntry *entry = NULL;

  if (!subagent_isolation_session_key_is_valid (key))
    return sactl_fail_message ("worktrees prune: “%s” is not a session key (letters, digits, '-', '_')", key);
  entries = collect_worktrees (root, &error);
  if (entries == NULL)
    return sactl_fail (error);
  for (guint i = 0; i < entries->len && entry == NULL; i++)
    if (g_str_equal (((WorktreeEntry *) entries->pdata[i])->key, key))
      entry = entries->pdata[i];
  if (entry == NULL)
    return sactl_fail_message ("worktrees prune: no worktree of ours is named “%s”: it must be listed by "
                               "`git worktree list`, lie in %s/.subagent/worktrees and be on a subagent/ branch. "
                               "A directory git does not list must be removed by hand.", key, root);
  if (entry->owner != NULL && subagent_owner_is_alive (entry->owner) && !force)
    return sactl_fail_message ("worktrees prune: worktree “%s” belongs to process %" G_GINT64_FORMAT
                               ", which is still running; stop it, or pass --force to remove the worktree anyway",
                               key, json_object_get_int_member_with_default (entry->owner, "pid", 0));

  config = subagent_config_load_for_root (root, &error);
  if (config == NULL)
    return sactl_fail (error);
  registry = subagent_plugin_registry_new_for_config (config);
  info = subagent_plugin_registry_find_for_leftovers (registry, WORKTREE_OWNER_KIND, &error);
  if (info == NULL)
    return sactl_fail (error);
  provider = subagent_plugin_registry_create (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER,
                                              subagent_plugin_info_get_provides (info)[0], &error);
  if (provider == NULL)
    return sactl_fail (error);
  /* The plugin's own section, with this command's --keep-branch on top. */
  if (subagent_config_get_section (config, subagent_plugin_info_get_section (info)) != NULL)
    {
      JsonObjectIter iter;
      const char *member;
      JsonNode *value;

      json_object_iter_init (&iter, subagent_config_get_section (config, subagent_plugin_info_get_section (info)));
      while (json_object_iter_next (&iter, &member, &value))
        json_object_set_member (options, member, json_node_copy (value));
    }
  if (keep_branch)
    json_object_set_boolean_member (options, "keep_branch", TRUE);
  if (!subagent_plugin_configure (provider, root, options, &error))
    return sactl_fail (error);

  /* A worktree without a record (its run never wrote one) is described
   * the way the plugin wrote it. */
  if (entry->owner != NULL)
    record = json_object_ref (entry->owner);
  else
    {
      JsonObject *extra = json_object_new ();

      record = json_object_new ();
      json_object_set_string_member (record, "kind", WORKTREE_OWNER_KIND);
      json_object_set_string_member (record, "resource", entry->path);
      json_object_set_string_member (record, "session_key", entry->key);
      json_object_set_string_member (extra, "branch", entry->branch);
      json_object_set_object_member (record, "extra", extra);
    }
  outcome = subagent_isolation_provider_reclaim (SUBAGENT_ISOLATION_PROVIDER (provider), root, record,
                                                 SUBAGENT_RECLAIM_FLAGS_NONE, &reason);
  if (outcome != SUBAGENT_RECLAIM_REMOVED)
    return sactl_fail_message ("worktrees prune: %s was not removed: %s", entry->path, reason);
  subagent_owner_record_remove (root, entry->key);

  if (g_file_test (entry->path, G_FILE_TEST_EXISTS))
    return sactl_fail_message ("worktrees prune: %s could not be removed completely; see the messages above",
                               entry->path);
  printf ("Removed worktree %s (%s; branch %s %s)\n", key, entry->path, entry->branch,
          keep_branch ? "kept" : "deleted");
  fflush (stdout);
  return 0;
}

int
sactl_cmd_worktrees (int    argc,
                     char **argv)
{
  g_autofree char *root_option = NULL;
  gboolean json = FALSE, force = FALSE, keep_branch = FALSE;
  const GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &root_option, "Repository root (default: the current directory)", "DIR" },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "list: print JSON", NULL },
    { "force", 'f', 0, G_OPTION_ARG_NONE, &force, "prune: remove even when the owning process is alive", NULL },
    { "keep-branch", 0, 0, G_OPTION_ARG_NONE, &keep_branch, "prune: keep the worktree's branch", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("list | prune SESSION_KEY - the worktrees of subagent runs");
  g_autoptr(GError) error = NULL;
  g_autofree char *root = NULL;
  int rc;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_description (context,
    "list   the worktrees in DIR/.subagent/worktrees that git lists on subagent/ branches,\n"
    "       with their owner process (alive or dead) and creation time\n"
    "prune  removes one of them (directory, git metadata, branch); refuses while its owner\n"
    "       runs unless --force, and never touches a worktree that is not ours");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      sactl_fail (error);
      return 2;
    }
  if (argc < 2 || (!g_str_equal (argv[1], "list") && !g_str_equal (argv[1], "prune")) ||
      (g_str_equal (argv[1], "list") && argc != 2) || (g_str_equal (argv[1], "prune") && argc != 3))
    {
      sactl_fail_message ("worktrees: use `worktrees list` or `worktrees prune SESSION_KEY`; see --help");
      return 2;
    }
  root = sactl_resolve_root (root_option, &error);
  if (root == NULL)
    return sactl_fail (error);

  git_libgit2_init ();
  if (g_str_equal (argv[1], "list"))
    rc = worktrees_list (root, json);
  else
    rc = worktrees_prune (root, argv[2], force, keep_branch);
  git_libgit2_shutdown ();
  return rc;
}
