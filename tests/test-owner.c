/* test-owner.c: owner records, owner liveness, and `subagentctl prune`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-support.h"

static SubagentPluginRegistry *registry;

/* ---- helpers ------------------------------------------------------------ */

/* A process id that certainly ran and is certainly gone. */
static GPid
dead_pid (void)
{
  int status;
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    _exit (0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  return pid;
}

static void
write_record (const char *root,
              JsonObject *record)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *path = subagent_owner_record_path (root, json_object_get_string_member (record, "session_key"));
  g_autofree char *text = NULL;

  json_node_set_object (node, record);
  text = json_to_string (node, TRUE);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

/* Makes the owner of a saved record a process that has exited. */
static void
kill_owner (const char *root,
            const char *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) record = subagent_owner_record_load (root, key, &error);

  g_assert_no_error (error);
  json_object_set_int_member (record, "pid", dead_pid ());
  write_record (root, record);
}

static void
age_record (const char *root,
            const char *key,
            GTimeSpan   age)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) record = subagent_owner_record_load (root, key, &error);
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autoptr(GDateTime) then = g_date_time_add (now, -age);
  g_autofree char *text = g_date_time_format_iso8601 (then);

  g_assert_no_error (error);
  json_object_set_string_member (record, "created_at", text);
  write_record (root, record);
}

static gboolean
exists_at (const char *dir,
           const char *rel)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static gboolean
record_exists (const char *root,
               const char *key)
{
  g_autofree char *path = subagent_owner_record_path (root, key);

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static SubagentIsolationContext *
prepare_snapshot (const char *root,
                  const char *key,
                  const char *strategy,
                  const char *snapshot_dir)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentIsolationProvider) provider =
    subagent_plugin_registry_get_isolation_provider (registry, "directory-snapshot", &error);
  g_autoptr(JsonObject) options = json_object_new ();
  g_autoptr(SubagentIsolationRequest) request = NULL;
  SubagentIsolationContext *context;

  g_assert_no_error (error);
  json_object_set_string_member (options, "strategy", strategy);
  json_object_set_string_member (options, "snapshot_dir", snapshot_dir);
  request = g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST,
                          "parent-root", root, "isolation", "directory-snapshot",
                          "session-key", key, "parent-run-id", "run-prune", "options", options, NULL);
  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  g_assert_no_error (error);
  return context;
}

static char *
snapshot_base (SubagentIsolationContext *context)
{
  return g_path_get_dirname (subagent_isolation_context_get_child_root (context));
}

/* Runs `subagentctl prune --root ROOT --json EXTRA...` and returns the
 * entries by session key. */
static GHashTable *
run_prune (const char  *root,
           const char  *path_prefix,
           int          expected_status,
           const char  *first_extra,
           ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *out = NULL;
  GHashTable *entries = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  JsonArray *array;
  va_list ap;

  g_ptr_array_add (argv, (gpointer) sat_subagentctl ());
  g_ptr_array_add (argv, "prune");
  g_ptr_array_add (argv, "--root");
  g_ptr_array_add (argv, (gpointer) root);
  g_ptr_array_add (argv, "--json");
  va_start (ap, first_extra);
  for (const char *a = first_extra; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);

  if (path_prefix != NULL)
    {
      g_autofree char *path = g_strconcat (path_prefix, ":", g_getenv ("PATH"), NULL);
      g_subprocess_launcher_setenv (launcher, "PATH", path, TRUE);
    }
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("prune: %s", out);
  g_assert_cmpint (g_subprocess_get_exit_status (proc), ==, expected_status);

  node = json_from_string (out, &error);
  g_assert_no_error (error);
  array = json_object_get_array_member (json_node_get_object (node), "entries");
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonObject *entry = json_array_get_object_element (array, i);
      g_hash_table_insert (entries,
                           g_strdup (json_object_get_string_member (entry, "session_key")),
                           g_strdup (json_object_get_string_member (entry, "action")));
    }
  return entries;
}

/* ---- records ------------------------------------------------------------- */

static void
test_record_save_list_remove (void)
{
  g_autofree char *root = sat_make_temp_dir ("owner-root");
  g_autoptr(JsonObject) extra = json_object_new ();
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDateTime) created = NULL;
  g_autofree char *boot_id = NULL;
  guint64 start_time;
  JsonObject *first;

  json_object_set_string_member (extra, "branch", "subagent/zeta-1");
  g_assert_true (subagent_owner_record_save (root, "zeta-1", "worktree", "/wt/zeta", "run-9", extra, &error));
  g_assert_no_error (error);
  g_assert_true (subagent_owner_record_save (root, "alpha-1", "snapshot", "/snap/alpha", NULL, NULL, &error));
  g_assert_no_error (error);

  records = subagent_owner_record_list (root, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (records->len, ==, 2);
  first = g_ptr_array_index (records, 0);
  g_assert_cmpstr (json_object_get_string_member (first, "session_key"), ==, "alpha-1");
  g_assert_cmpstr (json_object_get_string_member (g_ptr_array_index (records, 1), "session_key"), ==, "zeta-1");
  g_assert_cmpstr (json_object_get_string_member (first, "kind"), ==, "snapshot");
  g_assert_cmpstr (json_object_get_string_member (first, "resource"), ==, "/snap/alpha");
  g_assert_cmpint (json_object_get_int_member (first, "pid"), ==, getpid ());
  g_assert_true (subagent_owner_get_process_start_time (getpid (), &start_time, &error));
  g_assert_cmpint (json_object_get_int_member (first, "pid_start_time"), ==, (gint64) start_time);
  g_assert_cmpstr (json_object_get_string_member (first, "host"), ==, g_get_host_name ());
  g_assert_true (g_file_get_contents ("/proc/sys/kernel/random/boot_id", &boot_id, NULL, NULL));
  g_assert_cmpstr (json_object_get_string_member (first, "boot_id"), ==, g_strstrip (boot_id));
  g_assert_true (json_object_get_null_member (first, "parent_run_id"));
  created = g_date_time_new_from_iso8601 (json_object_get_string_member (first, "created_at"), NULL);
  g_assert_nonnull (created);
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (g_ptr_array_index (records, 1), "extra"),
                                                  "branch"), ==, "subagent/zeta-1");

  subagent_owner_record_remove (root, "alpha-1");
  subagent_owner_record_remove (root, "alpha-1");
  g_clear_pointer (&records, g_ptr_array_unref);
  records = subagent_owner_record_list (root, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (records->len, ==, 1);
  sat_rm_rf (root);
}

static void
test_record_refuses_bad_input (void)
{
  g_autofree char *root = sat_make_temp_dir ("owner-root");
  g_autofree char *missing = g_build_filename (root, "missing", NULL);
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_false (subagent_owner_record_save (root, "../escape", "snapshot", "/x", NULL, NULL, &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (subagent_owner_record_save (root, "k-1", "Not a kind", "/x", NULL, NULL, &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (subagent_owner_record_save (missing, "k-1", "snapshot", "/x", NULL, NULL, &error));
  g_assert_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* Malformed files are skipped, not fatal; a missing directory is empty. */
  records = subagent_owner_record_list (missing, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (records->len, ==, 0);
  g_clear_pointer (&records, g_ptr_array_unref);
  sat_write_file (root, ".subagent/owners/garbage.json", "{ not json");
  sat_write_file (root, ".subagent/owners/other-name.json",
                  "{\"kind\":\"snapshot\",\"resource\":\"/x\",\"session_key\":\"mismatch\"}");
  sat_write_file (root, ".subagent/owners/no-kind.json", "{\"resource\":\"/x\",\"session_key\":\"no-kind\"}");
  g_assert_true (subagent_owner_record_save (root, "good-1", "container", "abc123", "run", NULL, &error));
  records = subagent_owner_record_list (root, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (records->len, ==, 1);
  g_assert_cmpstr (json_object_get_string_member (g_ptr_array_index (records, 0), "session_key"), ==, "good-1");
  sat_rm_rf (root);
}

/* ---- liveness ------------------------------------------------------------ */

static JsonObject *
saved_record (const char *root,
              const char *key)
{
  g_autoptr(GError) error = NULL;
  JsonObject *record;

  g_assert_true (subagent_owner_record_save (root, key, "snapshot", "/snap", "run", NULL, &error));
  record = subagent_owner_record_load (root, key, &error);
  g_assert_no_error (error);
  return record;
}

static void
test_liveness (void)
{
  g_autofree char *root = sat_make_temp_dir ("owner-root");
  g_autoptr(JsonObject) own = saved_record (root, "own-1");
  g_autoptr(JsonObject) dead = saved_record (root, "dead-1");
  g_autoptr(JsonObject) reused = saved_record (root, "reused-1");
  g_autoptr(JsonObject) foreign = saved_record (root, "foreign-1");
  g_autoptr(JsonObject) rebooted = saved_record (root, "rebooted-1");

  /* Our own process. */
  g_assert_true (subagent_owner_is_alive (own));

  /* A process that exited. */
  json_object_set_int_member (dead, "pid", dead_pid ());
  g_assert_false (subagent_owner_is_alive (dead));

  /* Our pid, but the record's process started at another time: the id was reused. */
  json_object_set_int_member (reused, "pid_start_time", json_object_get_int_member (reused, "pid_start_time") + 1);
  g_assert_false (subagent_owner_is_alive (reused));

  /* Another host cannot be checked: alive, even with a dead-looking pid. */
  json_object_set_string_member (foreign, "host", "elsewhere.invalid");
  json_object_set_int_member (foreign, "pid", dead_pid ());
  g_assert_true (subagent_owner_is_alive (foreign));

  /* Same host, earlier boot: every process of that boot is gone. */
  json_object_set_string_member (rebooted, "boot_id", "00000000-0000-0000-0000-000000000000");
  g_assert_false (subagent_owner_is_alive (rebooted));
  sat_rm_rf (root);
}

/* ---- prune --------------------------------------------------------------- */

typedef struct {
  char *root;
  char *snapdir;
  SubagentIsolationContext *dead_snapshot;
  SubagentIsolationContext *dead_overlay;
  SubagentIsolationContext *live_snapshot;
  char *ours_wt;
  char *foreign_wt;
} PruneFixture;

static void
prune_fixture_set_up (PruneFixture  *f,
                      gconstpointer  data)
{
  g_autoptr(JsonObject) extra = json_object_new ();
  g_autoptr(GError) error = NULL;

  f->root = sat_make_git_repo ("README", "hello\n", NULL);
  f->snapdir = sat_make_temp_dir ("prune-snaps");
  f->dead_snapshot = prepare_snapshot (f->root, "snap-dead", "copy", f->snapdir);
  f->dead_overlay = prepare_snapshot (f->root, "snap-overlay", "overlay", f->snapdir);
  f->live_snapshot = prepare_snapshot (f->root, "snap-live", "copy", f->snapdir);
  kill_owner (f->root, "snap-dead");
  kill_owner (f->root, "snap-overlay");

  /* A worktree of a crashed run, and one on a branch a person made. */
  f->ours_wt = g_build_filename (f->root, ".subagent", "worktrees", "wt-dead", NULL);
  g_free (sat_run (f->root, FALSE, NULL, "git", "worktree", "add", "-q", "-b", "subagent/wt-dead", f->ours_wt, NULL));
  json_object_set_string_member (extra, "branch", "subagent/wt-dead");
  g_assert_true (subagent_owner_record_save (f->root, "wt-dead", "worktree", f->ours_wt, "run", extra, &error));
  kill_owner (f->root, "wt-dead");
  f->foreign_wt = g_strconcat (f->root, "-feature", NULL);
  g_free (sat_run (f->root, FALSE, NULL, "git", "worktree", "add", "-q", "-b", "feature", f->foreign_wt, NULL));
  g_assert_true (subagent_owner_record_save (f->root, "wt-foreign", "worktree", f->foreign_wt, "run", NULL, &error));
  kill_owner (f->root, "wt-foreign");
}

static void
prune_fixture_tear_down (PruneFixture  *f,
                         gconstpointer  data)
{
  subagent_isolation_context_cleanup (f->dead_snapshot);
  subagent_isolation_context_cleanup (f->dead_overlay);
  subagent_isolation_context_cleanup (f->live_snapshot);
  g_clear_object (&f->dead_snapshot);
  g_clear_object (&f->dead_overlay);
  g_clear_object (&f->live_snapshot);
  sat_rm_rf (f->foreign_wt);
  sat_rm_rf (f->root);
  sat_rm_rf (f->snapdir);
  g_free (f->foreign_wt);
  g_free (f->ours_wt);
  g_free (f->root);
  g_free (f->snapdir);
}

static void
test_prune_reclaims_only_dead_and_ours (PruneFixture  *f,
                                        gconstpointer  data)
{
  g_autoptr(GHashTable) entries = run_prune (f->root, NULL, 0, NULL);
  g_autofree char *dead_base = snapshot_base (f->dead_snapshot);
  g_autofree char *overlay_base = snapshot_base (f->dead_overlay);
  g_autofree char *branches = NULL;
  g_autofree char *worktrees = NULL;

  g_assert_cmpstr (g_hash_table_lookup (entries, "snap-dead"), ==, "removed");
  g_assert_cmpstr (g_hash_table_lookup (entries, "snap-overlay"), ==, "removed");
  g_assert_cmpstr (g_hash_table_lookup (entries, "wt-dead"), ==, "removed");
  g_assert_cmpstr (g_hash_table_lookup (entries, "snap-live"), ==, "kept");
  g_assert_cmpstr (g_hash_table_lookup (entries, "wt-foreign"), ==, "skipped");

  g_assert_false (g_file_test (dead_base, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (overlay_base, G_FILE_TEST_EXISTS));
  g_assert_false (record_exists (f->root, "snap-dead"));
  g_assert_false (record_exists (f->root, "snap-overlay"));
  g_assert_false (g_file_test (f->ours_wt, G_FILE_TEST_EXISTS));
  g_assert_false (record_exists (f->root, "wt-dead"));

  /* Live and foreign resources are untouched. */
  g_assert_true (exists_at (subagent_isolation_context_get_child_root (f->live_snapshot), "README"));
  g_assert_true (record_exists (f->root, "snap-live"));
  g_assert_true (exists_at (f->foreign_wt, "README"));
  g_assert_true (record_exists (f->root, "wt-foreign"));

  branches = sat_run (f->root, FALSE, NULL, "git", "branch", "--format=%(refname:short)", NULL);
  g_assert_null (strstr (branches, "subagent/wt-dead"));
  g_assert_nonnull (strstr (branches, "feature"));
  worktrees = sat_run (f->root, FALSE, NULL, "git", "worktree", "list", "--porcelain", NULL);
  g_assert_null (strstr (worktrees, "wt-dead"));
  g_assert_nonnull (strstr (worktrees, f->foreign_wt));
}

static void
test_prune_dry_run_removes_nothing (PruneFixture  *f,
                                    gconstpointer  data)
{
  g_autoptr(GHashTable) entries = run_prune (f->root, NULL, 0, "--dry-run", NULL);
  g_autofree char *dead_base = snapshot_base (f->dead_snapshot);

  g_assert_cmpstr (g_hash_table_lookup (entries, "snap-dead"), ==, "would-remove");
  g_assert_cmpstr (g_hash_table_lookup (entries, "wt-dead"), ==, "would-remove");
  g_assert_cmpstr (g_hash_table_lookup (entries, "snap-live"), ==, "kept");
  g_assert_true (exists_at (dead_base, "tree/README"));
  g_assert_true (record_exists (f->root, "snap-dead"));
  g_assert_true (exists_at (f->ours_wt, "README"));
  g_assert_true (record_exists (f->root, "wt-dead"));
  g_assert_true (exists_at (subagent_isolation_context_get_child_root (f->dead_overlay), "README"));
}

static void
test_prune_older_than (PruneFixture  *f,
                       gconstpointer  data)
{
  g_autoptr(GHashTable) entries = NULL;
  g_autofree char *dead_base = snapshot_base (f->dead_snapshot);
  g_autofree char *overlay_base = snapshot_base (f->dead_overlay);

  age_record (f->root, "snap-dead", 3 * G_TIME_SPAN_DAY);
  /* Old, but alive: never reclaimed. */
  age_record (f->root, "snap-live", 3 * G_TIME_SPAN_DAY);
  entries = run_prune (f->root, NULL, 0, "--older-than", "1d", NULL);

  g_assert_cmpstr (g_hash_table_lookup (entries, "snap-dead"), ==, "removed");
  g_assert_cmpstr (g_hash_table_lookup (entries, "snap-overlay"), ==, "kept");
  g_assert_cmpstr (g_hash_table_lookup (entries, "wt-dead"), ==, "kept");
  g_assert_cmpstr (g_hash_table_lookup (entries, "snap-live"), ==, "kept");
  g_assert_false (g_file_test (dead_base, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (overlay_base, G_FILE_TEST_EXISTS));
  g_assert_true (exists_at (f->ours_wt, "README"));
}

static void
test_prune_snapshot_needs_marker (void)
{
  g_autofree char *root = sat_make_temp_dir ("prune-root");
  g_autofree char *victim = sat_make_temp_dir ("prune-victim");
  g_autoptr(GHashTable) entries = NULL;
  g_autoptr(GError) error = NULL;

  /* A record pointing at a directory we did not make: never deleted. */
  sat_write_file (victim, "tree/precious.txt", "keep\n");
  g_assert_true (subagent_owner_record_save (root, "forged-1", "snapshot", victim, "run", NULL, &error));
  kill_owner (root, "forged-1");
  entries = run_prune (root, NULL, 0, NULL);
  g_assert_cmpstr (g_hash_table_lookup (entries, "forged-1"), ==, "skipped");
  g_assert_true (exists_at (victim, "tree/precious.txt"));
  g_assert_true (record_exists (root, "forged-1"));
  sat_rm_rf (victim);
  sat_rm_rf (root);
}

static void
test_prune_container (void)
{
  g_autofree char *root = sat_make_temp_dir ("prune-root");
  g_autofree char *bin = sat_make_temp_dir ("prune-bin");
  g_autofree char *log = g_build_filename (bin, "calls.log", NULL);
  /* A stand-in engine that logs its arguments; `container inspect` answers
   * with the session label: c0ffee42 is ctr-dead's, 5ca1ab1e is not. */
  g_autofree char *script = g_strdup_printf ("#!/bin/sh\n"
                                             "echo \"$*\" >> %s\n"
                                             "if [ \"$1\" = container ]; then\n"
                                             "  case \"$6\" in c0ffee42) echo ctr-dead ;; *) echo someone-else ;; esac\n"
                                             "fi\n", log);
  g_autofree char *docker = g_build_filename (bin, "docker", NULL);
  g_autofree char *calls = NULL;
  g_autoptr(JsonObject) extra = json_object_new ();
  g_autoptr(GHashTable) entries = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (docker, script, -1, NULL));
  g_assert_cmpint (g_chmod (docker, 0755), ==, 0);
  g_assert_true (subagent_owner_record_save (root, "ctr-dead", "container", "c0ffee42", "run", NULL, &error));
  kill_owner (root, "ctr-dead");
  g_assert_true (subagent_owner_record_save (root, "ctr-live", "container", "beef0001", "run", NULL, &error));
  /* A dead record naming a container that is not this session's. */
  g_assert_true (subagent_owner_record_save (root, "ctr-stray", "container", "5ca1ab1e", "run", NULL, &error));
  kill_owner (root, "ctr-stray");
  /* A record naming another program is refused, and nothing runs. */
  json_object_set_string_member (extra, "binary", "rm");
  g_assert_true (subagent_owner_record_save (root, "ctr-evil", "container", "x1", "run", extra, &error));
  kill_owner (root, "ctr-evil");

  entries = run_prune (root, bin, 0, NULL);
  g_assert_cmpstr (g_hash_table_lookup (entries, "ctr-dead"), ==, "removed");
  g_assert_cmpstr (g_hash_table_lookup (entries, "ctr-live"), ==, "kept");
  g_assert_cmpstr (g_hash_table_lookup (entries, "ctr-stray"), ==, "skipped");
  g_assert_cmpstr (g_hash_table_lookup (entries, "ctr-evil"), ==, "skipped");
  g_assert_true (g_file_get_contents (log, &calls, NULL, NULL));
  g_test_message ("engine calls:\n%s", calls);
  g_assert_nonnull (strstr (calls, "rm -f -- c0ffee42\n"));
  g_assert_null (strstr (calls, "rm -f -- 5ca1ab1e"));
  g_assert_null (strstr (calls, "beef0001"));
  g_assert_null (strstr (calls, "x1"));
  g_assert_false (record_exists (root, "ctr-dead"));
  g_assert_true (record_exists (root, "ctr-live"));
  g_assert_true (record_exists (root, "ctr-stray"));
  g_assert_true (record_exists (root, "ctr-evil"));
  sat_rm_rf (bin);
  sat_rm_rf (root);
}

int
main (int argc, char *argv[])
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  registry = subagent_plugin_registry_new (NULL);

  g_test_add_func ("/owner/record/save-list-remove", test_record_save_list_remove);
  g_test_add_func ("/owner/record/refuses-bad-input-skips-malformed", test_record_refuses_bad_input);
  g_test_add_func ("/owner/liveness/own-dead-reused-foreign-rebooted", test_liveness);
  g_test_add ("/prune/reclaims-only-dead-and-ours", PruneFixture, NULL,
              prune_fixture_set_up, test_prune_reclaims_only_dead_and_ours, prune_fixture_tear_down);
  g_test_add ("/prune/dry-run-removes-nothing", PruneFixture, NULL,
              prune_fixture_set_up, test_prune_dry_run_removes_nothing, prune_fixture_tear_down);
  g_test_add ("/prune/older-than", PruneFixture, NULL,
              prune_fixture_set_up, test_prune_older_than, prune_fixture_tear_down);
  g_test_add_func ("/prune/snapshot-needs-marker", test_prune_snapshot_needs_marker);
  g_test_add_func ("/prune/container-rm-f", test_prune_container);

  rc = g_test_run ();
  g_clear_object (&registry);
  return rc;
}
