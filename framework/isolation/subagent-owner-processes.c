/* subagent-owner-processes.c: the processes an owner record's run started,
 * so that `prune` stops what a killed host left running before it removes
 * the workspace they run in.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "subagent.h"
#include "subagent-cgroup-private.h"

#define RUN_TOKEN_ENV "SUBAGENT_RUN_TOKEN"

/* A copy that can be changed (loaded records may be sealed). */
static JsonObject *
copy_object (JsonObject *object)
{
  JsonObject *copy = json_object_new ();
  g_autoptr(GList) members = json_object_get_members (object);

  for (GList *l = members; l != NULL; l = l->next)
    json_object_set_member (copy, l->data, json_node_copy (json_object_get_member (object, l->data)));
  return copy;
}

/**
 * subagent_owner_record_add_process:
 * @root: the workspace root the record is under
 * @session_key: the record's session key
 * @pid: a child process started in the record's resource; it leads its own
 *   process group
 * @run_token: (nullable): the `SUBAGENT_RUN_TOKEN` in the environment of
 *   the child and of everything it starts
 * @error: return location for a #GError
 *
 * Adds @pid, its start time, its process group and @run_token to the
 * record's `processes` list, so that subagent_owner_record_stop_processes()
 * can stop what is left of them once the record's owner is dead.
 *
 * Returns: %TRUE on success; %FALSE with @error set when there is no such
 *   record (shared isolation has none) or it cannot be rewritten
 *
 * Since: 0.2
 */
gboolean
subagent_owner_record_add_process (const char  *root,
                                   const char  *session_key,
                                   GPid         pid,
                                   const char  *run_token,
                                   GError     **error)
{
  return subagent_owner_record_add_process_full (root, session_key, pid, run_token, NULL, error);
}

/**
 * subagent_owner_record_add_process_full:
 * @root: the workspace root the record is under
 * @session_key: the record's session key
 * @pid: a child process started in the record's resource
 * @run_token: (nullable): the child's `SUBAGENT_RUN_TOKEN`
 * @cgroup: (nullable): the child's own cgroup v2 directory, when it has one
 * @error: return location for a #GError
 *
 * subagent_owner_record_add_process() that also records the child's
 * cgroup: subagent_owner_record_stop_processes() then kills all of it
 * (`cgroup.kill`), which reaches what left the process group and cleared
 * its environment too.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
subagent_owner_record_add_process_full (const char  *root,
                                        const char  *session_key,
                                        GPid         pid,
                                        const char  *run_token,
                                        const char  *cgroup,
                                        GError     **error)
{
  g_autoptr(JsonObject) loaded = NULL;
  g_autoptr(JsonObject) record = NULL;
  g_autoptr(JsonGenerator) generator = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  JsonArray *processes;
  JsonObject *entry;
  guint64 start_time = 0;

  g_return_val_if_fail (root != NULL, FALSE);
  g_return_val_if_fail (pid > 0, FALSE);

  loaded = subagent_owner_record_load (root, session_key, error);
  if (loaded == NULL)
    return FALSE;
  generator = json_generator_new ();
  record = copy_object (loaded);
  if (!json_object_has_member (record, "processes") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (record, "processes")))
    json_object_set_array_member (record, "processes", json_array_new ());
  processes = json_object_get_array_member (record, "processes");

  entry = json_object_new ();
  json_object_set_int_member (entry, "pid", pid);
  if (subagent_owner_get_process_start_time (pid, &start_time, NULL))
    json_object_set_int_member (entry, "pid_start_time", (gint64) start_time);
  else
    json_object_set_null_member (entry, "pid_start_time");
  json_object_set_int_member (entry, "pgid", getpgid (pid) > 0 ? getpgid (pid) : pid);
  if (run_token != NULL)
    json_object_set_string_member (entry, "run_token", run_token);
  if (cgroup != NULL)
    json_object_set_string_member (entry, "cgroup", cgroup);
  json_array_add_object_element (processes, entry);

  node = json_node_init_object (json_node_alloc (), record);
  json_generator_set_root (generator, node);
  json_generator_set_pretty (generator, TRUE);
  text = json_generator_to_data (generator, NULL);
  path = subagent_owner_record_path (root, session_key);
  return g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, error);
}

static gboolean
environ_has_token (const char *pid_dir,
                   const char *needle,
                   gsize       needle_len)
{
  g_autofree char *path = g_build_filename (pid_dir, "environ", NULL);
  g_autofree char *contents = NULL;
  gsize length = 0;

  if (!g_file_get_contents (path, &contents, &length, NULL))
    return FALSE;
  for (gsize at = 0; at < length; at += strlen (contents + at) + 1)
    if (strlen (contents + at) == needle_len && memcmp (contents + at, needle, needle_len) == 0)
      return TRUE;
  return FALSE;
}

/* SIGKILLs every process of ours whose environment holds @token. */
static guint
kill_by_token (const char *token)
{
  g_autofree char *needle = g_strconcat (RUN_TOKEN_ENV "=", token, NULL);
  gsize needle_len = strlen (needle);
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint killed = 0;

  if (proc == NULL)
    return 0;
  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *dir = NULL;
      guint64 pid;

      if (!g_ascii_string_to_unsigned (name, 10, 1, G_MAXINT, &pid, NULL) || (pid_t) pid == getpid ())
        continue;
      dir = g_build_filename ("/proc", name, NULL);
      if (environ_has_token (dir, needle, needle_len) && kill ((pid_t) pid, SIGKILL) == 0)
        killed++;
    }
  return killed;
}

/**
 * subagent_owner_record_stop_processes:
 * @record: an owner record whose owner is dead (see subagent_owner_is_alive())
 *
 * Stops (SIGKILL) what is left of the processes subagent_owner_record_add_process()
 * recorded: each child's process group while its leader is still the
 * recorded process (same start time), and every process whose environment
 * carries the child's run token (what left the group but kept its
 * environment). A child recorded with its own cgroup has all of that
 * cgroup killed (`cgroup.kill`), a process that cleared its environment
 * and left the group included; without one, such a process is out of
 * reach.
 *
 * Returns: how many signals were sent
 *
 * Since: 0.2
 */
guint
subagent_owner_record_stop_processes (JsonObject *record)
{
  JsonArray *processes;
  guint stopped = 0;

  g_return_val_if_fail (record != NULL, 0);

  if (!json_object_has_member (record, "processes") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (record, "processes")))
    return 0;
  processes = json_object_get_array_member (record, "processes");
  for (guint i = 0; i < json_array_get_length (processes); i++)
    {
      JsonNode *node = json_array_get_element (processes, i);
      JsonObject *entry;
      gint64 pid, pgid, recorded_start;
      guint64 start_time = 0;
      const char *token, *cgroup;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        continue;
      entry = json_node_get_object (node);
      pid = json_object_get_int_member_with_default (entry, "pid", 0);
      pgid = json_object_get_int_member_with_default (entry, "pgid", 0);
      recorded_start = json_object_get_int_member_with_default (entry, "pid_start_time", -1);
      token = json_object_get_string_member_with_default (entry, "run_token", NULL);
      cgroup = json_object_get_string_member_with_default (entry, "cgroup", NULL);
      /* Checked: a record names only a cgroup this library made. */
      if (cgroup != NULL && _subagent_cgroup_is_ours (cgroup))
        {
          guint n = _subagent_cgroup_kill (cgroup);

          g_debug ("prune: cgroup.kill of %s stopped %u process(es)", cgroup, n);
          stopped += n;
          _subagent_cgroup_remove (cgroup, 2000);
        }
      else if (cgroup != NULL)
        g_debug ("prune: ignoring cgroup “%s” of a record: not one this library made", cgroup);
      if (pid <= 1 || pid > G_MAXINT || pid == getpid ())
        continue;
      /* The group id is the leader's pid, which no new process can take
       * while the leader lives: check it is still the recorded one. */
      if (recorded_start >= 0 && pgid == pid &&
          subagent_owner_get_process_start_time ((GPid) pid, &start_time, NULL) &&
          (gint64) start_time == recorded_start && kill (-(pid_t) pgid, SIGKILL) == 0)
        stopped++;
      if (token != NULL && *token != '\0')
        stopped += kill_by_token (token);
    }
  return stopped;
}
