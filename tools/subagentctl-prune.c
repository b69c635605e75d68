/* subagentctl-prune.c: `subagentctl prune` reclaims the worktrees,
 * snapshots and containers that runs left behind when their process died.
 *
 * It walks the owner records under ROOT/.subagent/owners and touches only
 * resources whose owner is certainly dead (subagent_owner_is_alive()), and
 * with --older-than only those older than asked as well. It removes only
 * what is verifiably ours:
 *  - snapshot: a directory holding a `.subagent-snapshot` marker with the
 *    record's session key (an overlay mounted on its `tree/` is unmounted
 *    first, and nothing is ever deleted through a mount);
 *  - worktree: one that `git worktree list` shows on a `subagent/` branch
 *    (removed with `git worktree remove --force`, then `git branch -D`);
 *    a worktree on any other branch is skipped;
 *  - container: one that carries the label `io.subagent.session=KEY`
 *    (checked with `container inspect`), removed with `rm -f` through the
 *    record's engine: extra.binary (docker or podman, nothing else),
 *    extra.global_args (engine-selecting flags only) and extra.host (its
 *    DOCKER_HOST; null: the default socket); then its workspace on the
 *    host (extra.workspace), if it holds a `.subagent-docker` marker with
 *    the record's session key.
 * The record goes once its resource is gone. A skipped resource keeps its
 * record, so a person can look at it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "subagentctl.h"

#define SNAPSHOT_MARKER ".subagent-snapshot"
#define SNAPSHOT_TREE "tree"
#define OUR_BRANCH_REF "refs/heads/subagent/"

typedef enum {
  OUTCOME_REMOVED,   /* the resource is gone (or already was) */
  OUTCOME_SKIPPED,   /* not verifiably ours: left alone */
  OUTCOME_FAILED,
} Outcome;

typedef struct {
  const char *root;
  gboolean dry_run;
} Pruner;

/* Runs argv in cwd; returns whether it exited 0, with its output. */
static gboolean
run_command (const char  *cwd,
             char       **out_stdout,
             char       **out_stderr,
             const char  *first,
             ...) G_GNUC_NULL_TERMINATED;

static gboolean
run_command (const char  *cwd,
             char       **out_stdout,
             char       **out_stderr,
             const char  *first,
             ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  va_list ap;

  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE |
                                        G_SUBPROCESS_FLAGS_STDIN_INHERIT);
  g_subprocess_launcher_setenv (launcher, "GIT_TERMINAL_PROMPT", "0", TRUE);
  if (cwd != NULL)
    g_subprocess_launcher_set_cwd (launcher, cwd);
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  if (proc == NULL || !g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, &err, &error))
    {
      if (out_stderr != NULL)
        *out_stderr = g_strdup (error->message);
      return FALSE;
    }
  if (out_stdout != NULL)
    *out_stdout = g_steal_pointer (&out);
  if (out_stderr != NULL)
    *out_stderr = g_strstrip (g_steal_pointer (&err));
  return g_subprocess_get_successful (proc);
}

static const char *
extra_string (JsonObject *record,
              const char *name)
{
  JsonNode *extra = json_object_get_member (record, "extra");

  if (extra == NULL || !JSON_NODE_HOLDS_OBJECT (extra))
    return NULL;
  return json_object_get_string_member_with_default (json_node_get_object (extra), name, NULL);
}

/* ---- snapshots ------------------------------------------------------- */

static gboolean
unmount_snapshot_tree (const char  *base,
                       char       **reason)
{
  g_autofree char *tree = g_build_filename (base, SNAPSHOT_TREE, NULL);
  struct stat base_st, tree_st;

  for (int attempt = 0; attempt < 8; attempt++)
    {
      if (lstat (base, &base_st) != 0 || lstat (tree, &tree_st) != 0 ||
          !S_ISDIR (tree_st.st_mode) || tree_st.st_dev == base_st.st_dev)
        return TRUE;
      if (umount2 (tree, UMOUNT_NOFOLLOW) != 0 &&
          (errno != EBUSY || umount2 (tree, MNT_DETACH | UMOUNT_NOFOLLOW) != 0))
        {
          *reason = g_strdup_printf ("could not unmount the overlay on %s: %s", tree, g_strerror (errno));
          return FALSE;
        }
    }
  *reason = g_strdup_printf ("something stays mounted on %s", tree);
  return FALSE;
}

static Outcome
reclaim_snapshot (Pruner      *pruner,
                  JsonObject  *record,
                  char       **reason)
{
  const char *key = json_object_get_string_member (record, "session_key");
  const char *resource = json_object_get_string_member (record, "resource");
  g_autofree char *base = NULL;
  g_autoptr(GError) error = NULL;
  struct stat st;

  if (!g_path_is_absolute (resource))
    {
      *reason = g_strdup ("the resource is not an absolute path");
      return OUTCOME_SKIPPED;
    }
  base = g_canonicalize_filename (resource, NULL);
  if (lstat (base, &st) != 0 && errno == ENOENT)
    {
      *reason = g_strdup ("already gone");
      return OUTCOME_REMOVED;
    }
  if (!S_ISDIR (st.st_mode) || !subagent_owner_marker_matches (base, SNAPSHOT_MARKER, key))
    {
      *reason = g_strdup_printf ("%s has no snapshot marker for this session", base);
      return OUTCOME_SKIPPED;
    }
  if (pruner->dry_run)
    return OUTCOME_REMOVED;
  if (!unmount_snapshot_tree (base, reason))
    return OUTCOME_FAILED;
  if (!subagent_tree_remove (base, NULL, &error))
    {
      *reason = g_strdup (error->message);
      return OUTCOME_FAILED;
    }
  return OUTCOME_REMOVED;
}

/* ---- worktrees ------------------------------------------------------- */

typedef struct {
  char *path;
  char *branch_ref;   /* nullable: detached */
} ListedWorktree;

static void
listed_worktree_free (gpointer data)
{
  ListedWorktree *w = data;

  g_free (w->path);
  g_free (w->branch_ref);
  g_free (w);
}

/* `git worktree list --porcelain`, the main worktree first. */
static GPtrArray *
list_worktrees (const char  *root,
                char       **reason)
{
  g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func (listed_worktree_free);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_auto(GStrv) lines = NULL;
  ListedWorktree *current = NULL;

  if (!run_command (root, &out, &err, "git", "worktree", "list", "--porcelain", NULL))
    {
      *reason = g_strdup_printf ("git cannot list the worktrees of %s: %s", root, err ? err : "");
      return NULL;
    }
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (g_str_has_prefix (lines[i], "worktree "))
        {
          current = g_new0 (ListedWorktree, 1);
          current->path = g_strdup (lines[i] + strlen ("worktree "));
          g_ptr_array_add (list, current);
        }
      else if (current != NULL && g_str_has_prefix (lines[i], "branch "))
        current->branch_ref = g_strdup (lines[i] + strlen ("branch "));
    }
  return g_steal_pointer (&list);
}

static gboolean
same_path (const char *a,
           const char *b)
{
  char *ra = realpath (a, NULL);
  char *rb = realpath (b, NULL);
  gboolean same;

  same = g_strcmp0 (ra ? ra : a, rb ? rb : b) == 0;
  free (ra);
  free (rb);
  return same;
}

static gboolean
branch_checked_out (GPtrArray  *listed,
                    const char *ref)
{
  for (guint i = 0; i < listed->len; i++)
    if (g_strcmp0 (((ListedWorktree *) g_ptr_array_index (listed, i))->branch_ref, ref) == 0)
      return TRUE;
  return FALSE;
}

static void
delete_branch (const char *root,
               const char *ref)
{
  g_autofree char *err = NULL;
  const char *branch = ref + strlen ("refs/heads/");

  if (!run_command (root, NULL, &err, "git", "branch", "-D", "--", branch, NULL))
    g_printerr ("subagentctl: could not delete branch %s: %s\n", branch, err ? err : "");
}

static Outcome
reclaim_worktree (Pruner      *pruner,
                  JsonObject  *record,
                  char       **reason)
{
  const char *resource = json_object_get_string_member (record, "resource");
  const char *recorded_branch = extra_string (record, "branch");
  g_autoptr(GPtrArray) listed = list_worktrees (pruner->root, reason);
  g_autofree char *err = NULL;
  g_autofree char *recorded_ref = NULL;
  ListedWorktree *match = NULL;

  if (listed == NULL)
    return OUTCOME_SKIPPED;
  /* The first entry is the main worktree: never ours. */
  for (guint i = 1; i < listed->len && match == NULL; i++)
    if (same_path (((ListedWorktree *) g_ptr_array_index (listed, i))->path, resource))
      match = g_ptr_array_index (listed, i);

  if (match == NULL)
    {
      if (g_file_test (resource, G_FILE_TEST_EXISTS))
        {
          *reason = g_strdup_printf ("%s is not a worktree git knows; remove it by hand", resource);
          return OUTCOME_SKIPPED;
        }
      /* Gone already: drop git's stale entry and the branch it left. */
      if (recorded_branch != NULL && g_str_has_prefix (recorded_branch, "subagent/"))
        recorded_ref = g_strconcat ("refs/heads/", recorded_branch, NULL);
      *reason = g_strdup ("already gone");
      if (!pruner->dry_run)
        {
          run_command (pruner->root, NULL, NULL, "git", "worktree", "prune", NULL);
          if (recorded_ref != NULL && !branch_checked_out (listed, recorded_ref) &&
              run_command (pruner->root, NULL, NULL, "git", "show-ref", "--verify", "--quiet", recorded_ref, NULL))
            delete_branch (pruner->root, recorded_ref);
        }
      return OUTCOME_REMOVED;
    }

  if (match->branch_ref == NULL || !g_str_has_prefix (match->branch_ref, OUR_BRANCH_REF))
    {
      *reason = g_strdup_printf ("worktree %s is on %s, not a subagent/ branch", match->path,
                                 match->branch_ref ? match->branch_ref + strlen ("refs/heads/") : "a detached HEAD");
      return OUTCOME_SKIPPED;
    }
  if (pruner->dry_run)
    return OUTCOME_REMOVED;

  if (!run_command (pruner->root, NULL, &err, "git", "worktree", "remove", "--force", match->path, NULL))
    {
      /* A missing directory cannot be "removed", only pruned. */
      run_command (pruner->root, NULL, NULL, "git", "worktree", "prune", NULL);
      if (g_file_test (match->path, G_FILE_TEST_EXISTS))
        {
          *reason = g_strdup_printf ("git worktree remove %s failed: %s", match->path, err ? err : "");
          return OUTCOME_FAILED;
        }
    }
  delete_branch (pruner->root, match->branch_ref);
  return OUTCOME_REMOVED;
}

/* ---- containers ------------------------------------------------------ */

#define CONTAINER_SESSION_LABEL "io.subagent.session"
#define CONTAINER_WORKSPACE_MARKER ".subagent-docker"

static gboolean
container_id_is_valid (const char *id)
{
  gsize len = strlen (id);

  if (len == 0 || len > 128 || !g_ascii_isalnum (id[0]))
    return FALSE;
  for (const char *p = id; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '.' && *p != '-')
      return FALSE;
  return TRUE;
}

/* Global arguments a record may carry: they only choose the engine and its
 * storage. The record is a file anyone with access to ROOT could edit, so
 * nothing else passes, and --runtime (a program the engine runs) must be
 * a plain name such as runc or crun. */
static const char * const engine_flags[] = {
  "--context", "--connection", "--url", "--host", "-H", "--storage-driver", "--runtime",
  "--root", "--runroot", "--cgroup-manager", "--log-level", NULL
};

static gboolean
engine_args_are_safe (JsonObject  *record,
                      GPtrArray   *argv,
                      char       **reason)
{
  JsonNode *extra = json_object_get_member (record, "extra");
  JsonNode *node;
  JsonArray *args;

  if (extra == NULL || !JSON_NODE_HOLDS_OBJECT (extra) ||
      (node = json_object_get_member (json_node_get_object (extra), "global_args")) == NULL ||
      JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    {
      *reason = g_strdup ("extra.global_args is not a list");
      return FALSE;
    }
  args = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (args); i++)
    {
      JsonNode *element = json_array_get_element (args, i);
      const char *flag, *value, *eq;
      g_autofree char *name = NULL;

      if (!JSON_NODE_HOLDS_VALUE (element) || json_node_get_value_type (element) != G_TYPE_STRING)
        {
          *reason = g_strdup ("extra.global_args holds a non-string");
          return FALSE;
        }
      flag = json_node_get_string (element);
      eq = strchr (flag, '=');
      name = eq ? g_strndup (flag, eq - flag) : g_strdup (flag);
      if (eq != NULL)
        value = eq + 1;
      else if (i + 1 < json_array_get_length (args) &&
               json_node_get_value_type (json_array_get_element (args, i + 1)) == G_TYPE_STRING)
        value = json_array_get_string_element (args, ++i);
      else
        value = NULL;
      if (!g_strv_contains (engine_flags, name) || value == NULL || *value == '\0' || *value == '-' ||
          (g_str_equal (name, "--runtime") && strchr (value, '/') != NULL))
        {
          *reason = g_strdup_printf ("engine argument “%s” is not one prune passes on", flag);
          return FALSE;
        }
      g_ptr_array_add (argv, g_strdup (name));
      g_ptr_array_add (argv, g_strdup (value));
    }
  return TRUE;
}

/* Runs the engine with the record's DOCKER_HOST (unset when the record
 * says the default socket was used). */
static gboolean
run_engine (JsonObject  *record,
            GPtrArray   *prefix,
            int         *out_status,
            char       **out_stdout,
            char       **out_stderr,
            const char  *first,
            ...) G_GNUC_NULL_TERMINATED;

static gboolean
run_engine (JsonObject  *record,
            GPtrArray   *prefix,
            int         *out_status,
            char       **out_stdout,
            char       **out_stderr,
            const char  *first,
            ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  JsonNode *extra = json_object_get_member (record, "extra");
  JsonObject *extra_object = extra && JSON_NODE_HOLDS_OBJECT (extra) ? json_node_get_object (extra) : NULL;
  va_list ap;

  for (guint i = 0; i < prefix->len; i++)
    g_ptr_array_add (argv, g_ptr_array_index (prefix, i));
  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  if (extra_object != NULL && json_object_has_member (extra_object, "host"))
    {
      const char *host = json_object_get_string_member_with_default (extra_object, "host", NULL);

      if (host != NULL && *host != '\0' && *host != '-')
        g_subprocess_launcher_setenv (launcher, "DOCKER_HOST", host, TRUE);
      else
        g_subprocess_launcher_unsetenv (launcher, "DOCKER_HOST");
    }
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  if (proc == NULL || !g_subprocess_communicate_utf8 (proc, NULL, NULL, out_stdout, out_stderr, &error))
    {
      g_free (*out_stderr);
      *out_stderr = g_strdup (error->message);
      return FALSE;
    }
  g_strstrip (*out_stderr);
  *out_status = g_subprocess_get_if_exited (proc) ? g_subprocess_get_exit_status (proc) : 255;
  return TRUE;
}

static gboolean
says_gone (const char *text)
{
  g_autofree char *lower = g_ascii_strdown (text ? text : "", -1);

  return strstr (lower, "no such container") != NULL || strstr (lower, "no such object") != NULL ||
         strstr (lower, "no container with") != NULL;
}

/* The container's workspace on the host: removed only with its marker. */
static Outcome
reclaim_container_workspace (Pruner      *pruner,
                             JsonObject  *record,
                             char       **reason)
{
  const char *key = json_object_get_string_member (record, "session_key");
  const char *workspace = extra_string (record, "workspace");
  g_autoptr(GError) error = NULL;
  struct stat st;

  if (workspace == NULL)
    return OUTCOME_REMOVED;
  if (!g_path_is_absolute (workspace))
    {
      *reason = g_strdup ("container removed; its workspace is not an absolute path, left alone");
      return OUTCOME_SKIPPED;
    }
  if (lstat (workspace, &st) != 0 && errno == ENOENT)
    return OUTCOME_REMOVED;
  if (!S_ISDIR (st.st_mode) || !subagent_owner_marker_matches (workspace, CONTAINER_WORKSPACE_MARKER, key))
    {
      *reason = g_strdup_printf ("container removed; %s has no workspace marker for this session, left alone",
                                 workspace);
      return OUTCOME_SKIPPED;
    }
  if (pruner->dry_run)
    return OUTCOME_REMOVED;
  if (!subagent_tree_remove (workspace, NULL, &error))
    {
      *reason = g_strdup_printf ("container removed; %s", error->message);
      return OUTCOME_FAILED;
    }
  return OUTCOME_REMOVED;
}

static Outcome
reclaim_container (Pruner      *pruner,
                   JsonObject  *record,
                   char       **reason)
{
  const char *key = json_object_get_string_member (record, "session_key");
  const char *id = json_object_get_string_member (record, "resource");
  const char *binary = extra_string (record, "binary");
  g_autoptr(GPtrArray) prefix = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *name = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *label = g_strdup_printf ("{{index .Config.Labels \"%s\"}}", CONTAINER_SESSION_LABEL);
  gboolean podman;
  int status = 0;

  if (binary == NULL || *binary == '\0')
    binary = "docker";
  name = g_path_get_basename (binary);
  /* The record is a file anyone with access to ROOT could edit: run only
   * a container engine, never an arbitrary program. */
  if (!g_str_equal (name, "docker") && !g_str_equal (name, "podman"))
    {
      *reason = g_strdup_printf ("container engine “%s” is neither docker nor podman", binary);
      return OUTCOME_SKIPPED;
    }
  podman = g_str_equal (name, "podman");
  if (!container_id_is_valid (id))
    {
      *reason = g_strdup_printf ("“%s” is not a container id", id);
      return OUTCOME_SKIPPED;
    }
  g_ptr_array_add (prefix, g_strdup (binary));
  if (!engine_args_are_safe (record, prefix, reason))
    return OUTCOME_SKIPPED;

  /* Only a container that carries this session's label is ours. */
  if (!run_engine (record, prefix, &status, &out, &err, "container", "inspect", "--format", label, "--", id, NULL))
    {
      *reason = g_strdup_printf ("cannot run %s: %s", binary, err);
      return OUTCOME_FAILED;
    }
  if (status != 0)
    {
      if (!says_gone (err))
        {
          *reason = g_strdup_printf ("%s container inspect %s failed: %s", binary, id, err);
          return OUTCOME_FAILED;
        }
      *reason = g_strdup ("already gone");
      return reclaim_container_workspace (pruner, record, reason);
    }
  if (g_strcmp0 (g_strstrip (out), key) != 0)
    {
      *reason = g_strdup_printf ("container %s does not carry label %s=%s", id, CONTAINER_SESSION_LABEL, key);
      return OUTCOME_SKIPPED;
    }
  if (pruner->dry_run)
    return reclaim_container_workspace (pruner, record, reason);

  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  /* podman would give a sleeping PID 1 ten seconds to stop. */
  if (!(podman ? run_engine (record, prefix, &status, &out, &err, "rm", "-f", "--time", "0", "--", id, NULL)
               : run_engine (record, prefix, &status, &out, &err, "rm", "-f", "--", id, NULL)) ||
      (status != 0 && !says_gone (err)))
    {
      *reason = g_strdup_printf ("%s rm -f %s failed: %s", binary, id, err ? err : "");
      return OUTCOME_FAILED;
    }
  return reclaim_container_workspace (pruner, record, reason);
}

/* ---- the command ----------------------------------------------------- */

static gboolean
created_before (JsonObject *record,
                GDateTime  *cutoff)
{
  const char *created = json_object_get_string_member_with_default (record, "created_at", NULL);
  g_autoptr(GDateTime) when = created ? g_date_time_new_from_iso8601 (created, NULL) : NULL;

  return when != NULL && g_date_time_compare (when, cutoff) < 0;
}

static void
report (JsonArray  *entries,
        JsonObject *record,
        const char *action,
        const char *reason)
{
  const char *key = json_object_get_string_member (record, "session_key");
  const char *kind = json_object_get_string_member (record, "kind");
  const char *resource = json_object_get_string_member (record, "resource");

  if (entries != NULL)
    {
      JsonObject *entry = json_object_new ();

      json_object_set_string_member (entry, "session_key", key);
      json_object_set_string_member (entry, "kind", kind);
      json_object_set_string_member (entry, "resource", resource);
      json_object_set_string_member (entry, "action", action);
      if (reason != NULL)
        json_object_set_string_member (entry, "reason", reason);
      else
        json_object_set_null_member (entry, "reason");
      json_array_add_object_element (entries, entry);
      return;
    }
  printf ("%-12s %-9s %s %s%s%s%s\n", action, kind, key, resource,
          reason ? " (" : "", reason ? reason : "", reason ? ")" : "");
}

int
sactl_cmd_prune (int    argc,
                 char **argv)
{
  g_autofree char *root_option = NULL;
  g_autofree char *older_than = NULL;
  gboolean dry_run = FALSE;
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &root_option, "Workspace root (default: the current directory)", "DIR" },
    { "dry-run", 'n', 0, G_OPTION_ARG_NONE, &dry_run, "Only print what would be removed", NULL },
    { "older-than", 0, 0, G_OPTION_ARG_STRING, &older_than, "Only what was made longer ago than this (90s, 15m, 2h, 7d)", "DURATION" },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- remove what dead subagent runs left behind");
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(GDateTime) cutoff = NULL;
  g_autoptr(JsonArray) entries_json = NULL;
  g_autofree char *root = NULL;
  guint removed = 0, kept = 0, skipped = 0, failed = 0;
  Pruner pruner = { 0 };

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_description (context,
    "Walks ROOT/.subagent/owners and removes the snapshots, worktrees (on subagent/\n"
    "branches only) and containers whose owning process is gone. Resources of a live\n"
    "owner, or of another host, are never touched.");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return sactl_fail (error);
  if (argc > 1)
    return sactl_fail_message ("prune: unexpected argument “%s”", argv[1]);
  if (older_than != NULL)
    {
      GTimeSpan span;
      g_autoptr(GDateTime) now = g_date_time_new_now_utc ();

      if (!sactl_parse_duration (older_than, &span, &error))
        return sactl_fail (error);
      cutoff = g_date_time_add (now, -span);
    }
  root = sactl_resolve_root (root_option, &error);
  if (root == NULL)
    return sactl_fail (error);
  records = subagent_owner_record_list (root, &error);
  if (records == NULL)
    return sactl_fail (error);

  pruner.root = root;
  pruner.dry_run = dry_run;
  if (json)
    entries_json = json_array_new ();

  for (guint i = 0; i < records->len; i++)
    {
      JsonObject *record = g_ptr_array_index (records, i);
      const char *kind = json_object_get_string_member (record, "kind");
      const char *key = json_object_get_string_member (record, "session_key");
      g_autofree char *reason = NULL;
      Outcome outcome;

      if (subagent_owner_is_alive (record))
        {
          report (entries_json, record, "kept", "owner alive");
          kept++;
          continue;
        }
      if (cutoff != NULL && !created_before (record, cutoff))
        {
          report (entries_json, record, "kept", "younger than --older-than");
          kept++;
          continue;
        }

      /* What the dead run left running goes first: never remove a
       * workspace from under a process. */
      if (!dry_run)
        {
          guint stopped = subagent_owner_record_stop_processes (record);

          if (stopped > 0)
            g_debug ("prune: stopped %u leftover process(es) of %s", stopped, key);
        }

      if (g_str_equal (kind, SUBAGENT_OWNER_KIND_SNAPSHOT))
        outcome = reclaim_snapshot (&pruner, record, &reason);
      else if (g_str_equal (kind, SUBAGENT_OWNER_KIND_WORKTREE))
        outcome = reclaim_worktree (&pruner, record, &reason);
      else
        outcome = reclaim_container (&pruner, record, &reason);

      switch (outcome)
        {
        case OUTCOME_REMOVED:
          if (!dry_run)
            subagent_owner_record_remove (root, key);
          report (entries_json, record, dry_run ? "would-remove" : "removed", reason);
          removed++;
          break;
        case OUTCOME_SKIPPED:
          report (entries_json, record, "skipped", reason);
          skipped++;
          break;
        case OUTCOME_FAILED:
          report (entries_json, record, "failed", reason);
          failed++;
          break;
        }
    }

  if (json)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
      JsonObject *object = json_object_new ();

      json_object_set_string_member (object, "root", root);
      json_object_set_boolean_member (object, "dry_run", dry_run);
      json_object_set_array_member (object, "entries", g_steal_pointer (&entries_json));
      json_node_take_object (node, object);
      sactl_print_json (node);
    }
  else
    printf ("%s %u, kept %u, skipped %u, failed %u\n",
            dry_run ? "would remove" : "removed", removed, kept, skipped, failed);
  return failed > 0 ? 1 : 0;
}
