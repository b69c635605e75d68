/* subagent-owner.c: owner records of isolation resources.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "subagent-error.h"
#include "subagent.h"
#include "subagent-owner.h"
#include "subagent-state-path-private.h"

/**
 * SECTION:subagent-owner
 * @title: Owner records
 * @short_description: who made a worktree, snapshot or container
 *
 * Every isolation backend that makes something outliving a crash (a git
 * worktree, a snapshot directory, a container) writes an owner record right
 * after making it, at `<root>/.subagent/owners/<session_key>.json`, and
 * removes the record after cleaning up. A record that outlives its process
 * marks a leftover: `subagentctl prune` reclaims it through the provider of
 * the plugin whose descriptor lists the record's `kind` in `Leftovers=`
 * (subagent_isolation_provider_reclaim()).
 *
 * A record holds `kind`, `resource`, `session_key`, `pid`, `pid_start_time`
 * (field 22 of `/proc/<pid>/stat`, so a reused process id is told apart),
 * `host`, `boot_id`, `parent_run_id`, `created_at` (ISO-8601, UTC), and,
 * when the caller gave one, `extra`: a backend's own object (a worktree's
 * `branch`, a container's `binary`).
 *
 * subagent_owner_is_alive() errs on the side of life: a record of another
 * host, or one it cannot verify, counts as alive, so nothing is reclaimed
 * that might still be in use.
 */

#define OWNERS_DIR ".subagent/owners"
#define MAX_RECORD_SIZE (1024 * 1024)

static const char * const required_keys[] = { "kind", "resource", "session_key" };

/* A kind is a backend's word for what it made (the plugin whose descriptor
 * lists it in Leftovers= reclaims it): the framework knows none of them. */
static gboolean
kind_is_valid (const char *kind)
{
  gsize len = 0;

  if (kind == NULL || !g_ascii_isalpha (*kind))
    return FALSE;
  for (const char *p = kind; *p; p++, len++)
    if ((!g_ascii_islower (*p) && !g_ascii_isdigit (*p) && *p != '-' && *p != '_') || len >= 64)
      return FALSE;
  return TRUE;
}

static char *
read_boot_id (void)
{
  char *contents = NULL;

  if (!g_file_get_contents ("/proc/sys/kernel/random/boot_id", &contents, NULL, NULL))
    return NULL;
  return g_strstrip (contents);
}

/* Parses field 22 (starttime) of a /proc/<pid>/stat line. Field 2 is the
 * command in parentheses and may itself hold spaces and parentheses, so the
 * count starts after the last ')'. */
static gboolean
parse_start_time (const char *stat_line,
                  guint64    *out)
{
  const char *p = strrchr (stat_line, ')');
  int field = 2;

  if (p == NULL)
    return FALSE;
  p++;
  while (*p)
    {
      while (*p == ' ')
        p++;
      if (*p == '\0')
        break;
      field++;
      if (field == 22)
        {
          char *end = NULL;
          guint64 v = g_ascii_strtoull (p, &end, 10);
          if (end == p)
            return FALSE;
          *out = v;
          return TRUE;
        }
      while (*p && *p != ' ')
        p++;
    }
  return FALSE;
}

/**
 * subagent_owner_get_process_start_time:
 * @pid: a process id
 * @out_start_time: (out): its start time, in clock ticks after boot
 * @error: return location for a #GError (%G_IO_ERROR_NOT_FOUND if there is no such process)
 *
 * Reads field 22 of `/proc/<pid>/stat`: with the process id, it names one
 * process for the lifetime of a boot.
 *
 * Returns: %TRUE on success
 */
gboolean
subagent_owner_get_process_start_time (GPid      pid,
                                       guint64  *out_start_time,
                                       GError  **error)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *contents = NULL;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (out_start_time != NULL, FALSE);

  if (pid <= 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "Invalid process id %d", (int) pid);
      return FALSE;
    }
  if (!g_file_get_contents (path, &contents, NULL, &local_error))
    {
      g_set_error (error, G_IO_ERROR,
                   g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT)
                   ? G_IO_ERROR_NOT_FOUND : G_IO_ERROR_FAILED,
                   "Could not read the start time of process %d: %s", (int) pid, local_error->message);
      return FALSE;
    }
  if (!parse_start_time (contents, out_start_time))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "Could not parse %s", path);
      return FALSE;
    }
  return TRUE;
}

/**
 * subagent_owner_record_path:
 * @root: the workspace root
 * @session_key: a session key (`[A-Za-z0-9_-]`)
 *
 * Gets the path of the owner record of @session_key in @root.
 *
 * Returns: (transfer full) (nullable): `<root>/.subagent/owners/<session_key>.json`,
 *   or %NULL if @session_key is not a valid key
 *
 * Since: 0.2
 */
char *
subagent_owner_record_path (const char *root,
                            const char *session_key)
{
  g_autofree char *file = NULL;

  g_return_val_if_fail (root != NULL, NULL);

  if (!subagent_isolation_session_key_is_valid (session_key))
    return NULL;
  file = g_strconcat (session_key, ".json", NULL);
  return g_build_filename (root, OWNERS_DIR, file, NULL);
}

/**
 * subagent_owner_record_save:
 * @root: the workspace root (the parent's root); must exist
 * @session_key: the session key of the isolation (`[A-Za-z0-9_-]`)
 * @kind: what the backend made, in its own words (`worktree`, `snapshot`,
 *   `container`...: 1 to 64 of `[a-z0-9_-]`, starting with a letter); the
 *   plugin whose descriptor lists @kind in `Leftovers=` reclaims it
 * @resource: the worktree or snapshot path, or the container id
 * @parent_run_id: (nullable): the parent run that asked for it
 * @extra: (nullable): a backend's own data, kept as the record's `extra` member
 * @error: return location for a #GError
 *
 * Writes the owner record of a resource this process has just made, with
 * this process's id, start time, host and boot id. The file is replaced
 * atomically.
 *
 * Returns: %TRUE on success
 */
gboolean
subagent_owner_record_save (const char  *root,
                            const char  *session_key,
                            const char  *kind,
                            const char  *resource,
                            const char  *parent_run_id,
                            JsonObject  *extra,
                            GError     **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autoptr(GError) local_error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *boot_id = read_boot_id ();
  g_autofree char *created_at = g_date_time_format_iso8601 (now);
  g_autofree char *text = NULL;
  guint64 start_time = 0;
  gboolean have_start;

  g_return_val_if_fail (root != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!subagent_isolation_session_key_is_valid (session_key))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Invalid session key “%s” for an owner record: use 1 to 128 of [A-Za-z0-9_-]",
                   session_key ? session_key : "");
      return FALSE;
    }
  if (!kind_is_valid (kind))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Invalid owner record kind “%s”: use 1 to 64 of [a-z0-9_-], starting with a letter",
                   kind ? kind : "");
      return FALSE;
    }
  if (resource == NULL || *resource == '\0')
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Owner record %s has no resource", session_key);
      return FALSE;
    }
  if (!g_file_test (root, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Cannot write owner record %s: root %s is not a directory", session_key, root);
      return FALSE;
    }

  have_start = subagent_owner_get_process_start_time (getpid (), &start_time, NULL);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, kind);
  json_builder_set_member_name (builder, "resource");
  json_builder_add_string_value (builder, resource);
  json_builder_set_member_name (builder, "session_key");
  json_builder_add_string_value (builder, session_key);
  json_builder_set_member_name (builder, "pid");
  json_builder_add_int_value (builder, getpid ());
  json_builder_set_member_name (builder, "pid_start_time");
  if (have_start)
    json_builder_add_int_value (builder, (gint64) start_time);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "host");
  json_builder_add_string_value (builder, g_get_host_name ());
  json_builder_set_member_name (builder, "boot_id");
  if (boot_id != NULL)
    json_builder_add_string_value (builder, boot_id);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "parent_run_id");
  if (parent_run_id != NULL)
    json_builder_add_string_value (builder, parent_run_id);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "created_at");
  json_builder_add_string_value (builder, created_at);
  if (extra != NULL)
    {
      JsonNode *extra_node = json_node_new (JSON_NODE_OBJECT);

      json_node_set_object (extra_node, extra);
      json_builder_set_member_name (builder, "extra");
      json_builder_add_value (builder, extra_node);
    }
  json_builder_end_object (builder);

  node = json_builder_get_root (builder);
  json_generator_set_root (generator, node);
  json_generator_set_pretty (generator, TRUE);
  text = json_generator_to_data (generator, NULL);

  path = subagent_owner_record_path (root, session_key);
  dir = g_path_get_dirname (path);
  /* Never through a symbolic link planted as .subagent or owners/. */
  if (!_subagent_state_dir_ensure (dir, 0755, &local_error))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                   "Could not write owner record %s: %s", session_key, local_error->message);
      return FALSE;
    }
  if (!g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, &local_error))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                   "Could not write owner record: %s", local_error->message);
      return FALSE;
    }
  return TRUE;
}

/**
 * subagent_owner_record_remove:
 * @root: the workspace root
 * @session_key: the session key
 *
 * Removes the owner record, if there is one. Never fails: a record that
 * cannot be removed is logged (and prune will find it dead later).
 */
void
subagent_owner_record_remove (const char *root,
                              const char *session_key)
{
  g_autofree char *path = NULL;

  g_return_if_fail (root != NULL);

  path = subagent_owner_record_path (root, session_key);
  if (path == NULL)
    return;
  if (g_unlink (path) != 0 && errno != ENOENT)
    g_warning ("Could not remove owner record %s: %s", path, g_strerror (errno));
}

static JsonObject *
load_record_file (const char  *path,
                  const char  *expected_key,
                  GError     **error)
{
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;
  gsize length = 0;
  JsonNode *root;
  JsonObject *object;
  GStatBuf st;

  /* No parser (a GObject) for a record that is not there: the common case
   * for a child of `shared` isolation, which makes no record. */
  if (g_stat (path, &st) != 0)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ERROR, saved == ENOENT ? SUBAGENT_ERROR_NOT_FOUND : SUBAGENT_ERROR_FAILED,
                   "Could not read owner record %s: %s", path, g_strerror (saved));
      return NULL;
    }
  if (st.st_size > MAX_RECORD_SIZE)
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                   "Owner record %s is larger than %d bytes; it is not one of ours", path, MAX_RECORD_SIZE);
      return NULL;
    }
  parser = json_parser_new ();
  if (!g_file_get_contents (path, &contents, &length, &local_error) ||
      !subagent_json_parser_load_bounded (parser, contents, length, &local_error))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                   "Could not read owner record %s: %s", path, local_error->message);
      return NULL;
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    goto bad;
  object = json_node_get_object (root);
  for (guint i = 0; i < G_N_ELEMENTS (required_keys); i++)
    {
      JsonNode *member = json_object_get_member (object, required_keys[i]);
      if (member == NULL || json_node_get_value_type (member) != G_TYPE_STRING)
        goto bad;
    }
  if (!kind_is_valid (json_object_get_string_member (object, "kind")) ||
      g_strcmp0 (json_object_get_string_member (object, "session_key"), expected_key) != 0)
    goto bad;
  return json_object_ref (object);

bad:
  g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
               "Owner record %s is malformed: it needs string members kind, resource and "
               "session_key (matching the file name)", path);
  return NULL;
}

/**
 * subagent_owner_record_load:
 * @root: the workspace root
 * @session_key: the session key
 * @error: return location for a #GError (%SUBAGENT_ERROR_NOT_FOUND if there is none)
 *
 * Loads the owner record of @session_key in @root: the process that owns the
 * workspace, and what to remove once it is gone.
 *
 * Returns: (transfer full) (nullable): the record
 *
 * Since: 0.2
 */
JsonObject *
subagent_owner_record_load (const char  *root,
                            const char  *session_key,
                            GError     **error)
{
  g_autofree char *path = NULL;

  g_return_val_if_fail (root != NULL, NULL);

  path = subagent_owner_record_path (root, session_key);
  if (path == NULL)
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Invalid session key “%s”", session_key ? session_key : "");
      return NULL;
    }
  return load_record_file (path, session_key, error);
}

static gint
compare_records (gconstpointer a,
                 gconstpointer b)
{
  JsonObject *ra = *(JsonObject **) a;
  JsonObject *rb = *(JsonObject **) b;

  return strcmp (json_object_get_string_member (ra, "session_key"),
                 json_object_get_string_member (rb, "session_key"));
}

/**
 * subagent_owner_record_list:
 * @root: the workspace root
 * @error: return location for a #GError
 *
 * Reads every owner record under @root. Files that are not valid records
 * are skipped (and logged at debug level); a missing directory is an empty
 * list.
 *
 * Returns: (transfer container) (element-type JsonObject): the records,
 *   sorted by session key
 */
GPtrArray *
subagent_owner_record_list (const char  *root,
                            GError     **error)
{
  g_autoptr(GPtrArray) records = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  g_autofree char *dir_path = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *name;

  g_return_val_if_fail (root != NULL, NULL);

  dir_path = g_build_filename (root, OWNERS_DIR, NULL);
  dir = g_dir_open (dir_path, 0, &local_error);
  if (dir == NULL)
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return g_steal_pointer (&records);
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED,
                   "Could not list owner records: %s", local_error->message);
      return NULL;
    }
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *key = NULL;
      g_autofree char *path = NULL;
      g_autoptr(GError) record_error = NULL;
      JsonObject *record;

      if (!g_str_has_suffix (name, ".json"))
        continue;
      key = g_strndup (name, strlen (name) - strlen (".json"));
      if (!subagent_isolation_session_key_is_valid (key))
        continue;
      path = g_build_filename (dir_path, name, NULL);
      record = load_record_file (path, key, &record_error);
      if (record == NULL)
        {
          g_debug ("Skipping owner record: %s", record_error->message);
          continue;
        }
      g_ptr_array_add (records, record);
    }
  g_ptr_array_sort (records, compare_records);
  return g_steal_pointer (&records);
}

/**
 * subagent_owner_is_alive:
 * @record: an owner record
 *
 * Whether the process that wrote @record may still be running: %FALSE only
 * when that is certain: same host, and either another boot, or no process
 * with that id, or one with another start time (a reused id). A record of
 * another host, or one without the fields to check, is alive.
 *
 * Returns: %FALSE if the owner is certainly gone
 */
gboolean
subagent_owner_is_alive (JsonObject *record)
{
  g_autofree char *boot_id = NULL;
  const char *host;
  const char *record_boot;
  gint64 pid;
  guint64 start_time;

  g_return_val_if_fail (record != NULL, TRUE);

  host = json_object_get_string_member_with_default (record, "host", NULL);
  if (host == NULL || !g_str_equal (host, g_get_host_name ()))
    return TRUE;

  record_boot = json_object_get_string_member_with_default (record, "boot_id", NULL);
  boot_id = read_boot_id ();
  if (record_boot != NULL && boot_id != NULL && !g_str_equal (record_boot, boot_id))
    return FALSE;

  if (!json_object_has_member (record, "pid") ||
      json_node_get_value_type (json_object_get_member (record, "pid")) != G_TYPE_INT64)
    return TRUE;
  pid = json_object_get_int_member (record, "pid");
  if (pid <= 0 || pid > G_MAXINT)
    return TRUE;

  /* kill(0) tells "no such process" apart from "not ours to see" (hidepid). */
  if (kill ((pid_t) pid, 0) != 0 && errno == ESRCH)
    return FALSE;

  if (json_object_has_member (record, "pid_start_time") &&
      json_node_get_value_type (json_object_get_member (record, "pid_start_time")) == G_TYPE_INT64 &&
      subagent_owner_get_process_start_time ((GPid) pid, &start_time, NULL))
    return (guint64) json_object_get_int_member (record, "pid_start_time") == start_time;

  return TRUE;
}

/**
 * subagent_owner_marker_write:
 * @dir: an existing directory a backend made for a session
 * @marker_name: the marker's file name in @dir, such as `.subagent-snapshot`
 * @session_key: the session @dir belongs to
 * @parent_root: the parent workspace, for people reading the marker
 * @error: return location for a #GError
 *
 * Writes the marker that proves @dir is ours: a JSON object with
 * `session_key`, `parent_root` and `created_at` (ISO-8601, UTC). Only a
 * directory holding the marker of its own session is ever removed; see
 * subagent_owner_marker_matches().
 *
 * Returns: %TRUE on success; %FALSE with a #GFileError when the file could
 *   not be written
 */
gboolean
subagent_owner_marker_write (const char  *dir,
                             const char  *marker_name,
                             const char  *session_key,
                             const char  *parent_root,
                             GError     **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *created_at = g_date_time_format_iso8601 (now);
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;

  g_return_val_if_fail (dir != NULL, FALSE);
  g_return_val_if_fail (marker_name != NULL, FALSE);
  g_return_val_if_fail (session_key != NULL, FALSE);
  g_return_val_if_fail (parent_root != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "session_key");
  json_builder_add_string_value (builder, session_key);
  json_builder_set_member_name (builder, "parent_root");
  json_builder_add_string_value (builder, parent_root);
  json_builder_set_member_name (builder, "created_at");
  json_builder_add_string_value (builder, created_at);
  json_builder_end_object (builder);
  node = json_builder_get_root (builder);
  text = json_to_string (node, TRUE);
  path = g_build_filename (dir, marker_name, NULL);
  return g_file_set_contents (path, text, -1, error);
}

/**
 * subagent_owner_marker_matches:
 * @dir: a directory that may be a backend's
 * @marker_name: the marker's file name in @dir
 * @session_key: the session it should belong to
 *
 * Whether @dir holds a marker written by subagent_owner_marker_write() for
 * @session_key. A missing, unreadable or malformed marker does not match.
 *
 * Returns: %TRUE if @dir is verifiably the directory of @session_key
 */
gboolean
subagent_owner_marker_matches (const char *dir,
                               const char *marker_name,
                               const char *session_key)
{
  g_autofree char *path = NULL;
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;

  g_return_val_if_fail (dir != NULL, FALSE);
  g_return_val_if_fail (marker_name != NULL, FALSE);

  path = g_build_filename (dir, marker_name, NULL);
  if (!g_file_get_contents (path, &contents, &length, NULL) ||
      !subagent_json_parser_load_bounded (parser, contents, (gssize) length, NULL))
    return FALSE;
  root = json_parser_get_root (parser);
  return root != NULL && JSON_NODE_HOLDS_OBJECT (root) &&
         g_strcmp0 (json_object_get_string_member_with_default (json_node_get_object (root),
                                                                "session_key", NULL),
                    session_key) == 0;
}
