/* docker-reclaim.c: reclaiming the container (and its workspace) a dead
 * run left behind, from its owner record (what `subagentctl prune` calls).
 *
 * Records of this version (extra.api = true) are reclaimed through the
 * Engine API at extra.host: the container is inspected, and removed (with
 * its volume) only if it carries the label io.subagent.session=KEY. Older
 * records, of the CLI-driven plugin, go through the CLI as they did: only a
 * container that carries that label (checked with `container inspect`) is
 * removed, with `rm -f`, through the record's engine: extra.binary (docker or podman, nothing else), extra.global_args
 * (engine-selecting flags only) and extra.host (its DOCKER_HOST; null: the
 * default socket); then its workspace on the host (extra.workspace), if it
 * holds a `.subagent-docker` marker with the record's session key. The
 * record is a file anyone with access to the root could edit, hence the
 * checks. A warm container taken from the pool (docker-pool.c) keeps the
 * slot key it was made under as its label: its record names that key in
 * extra.pool_slot, and the label, like the workspace marker (rewritten
 * for the session when it was taken, but maybe not yet), may carry either.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "docker-private.h"

static const char *
extra_string (JsonObject *record,
              const char *name)
{
  JsonNode *extra = json_object_get_member (record, "extra");

  if (extra == NULL || !JSON_NODE_HOLDS_OBJECT (extra))
    return NULL;
  return json_object_get_string_member_with_default (json_node_get_object (extra), name, NULL);
}


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
static SubagentReclaimOutcome
reclaim_container_workspace (gboolean     dry_run,
                             JsonObject  *record,
                             char       **reason)
{
  const char *key = json_object_get_string_member (record, "session_key");
  const char *workspace = extra_string (record, "workspace");
  const char *pool_slot = extra_string (record, "pool_slot");
  g_autoptr(GError) error = NULL;
  struct stat st;

  if (workspace == NULL)
    return SUBAGENT_RECLAIM_REMOVED;
  if (!g_path_is_absolute (workspace))
    {
      /* A dry run removed nothing: it says what it would do (issue 18). */
      *reason = g_strdup_printf ("%s; its workspace is not an absolute path, left alone",
                                 dry_run ? "container would be removed" : "container removed");
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  if (lstat (workspace, &st) != 0 && errno == ENOENT)
    return SUBAGENT_RECLAIM_REMOVED;
  if (!S_ISDIR (st.st_mode) ||
      (!subagent_owner_marker_matches (workspace, DOCKER_MARKER, key) &&
       (pool_slot == NULL || !subagent_owner_marker_matches (workspace, DOCKER_MARKER, pool_slot))))
    {
      *reason = g_strdup_printf ("%s; %s has no workspace marker for this session, left alone",
                                 dry_run ? "container would be removed" : "container removed", workspace);
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  if (dry_run)
    return SUBAGENT_RECLAIM_REMOVED;
  if (!subagent_tree_remove (workspace, NULL, &error))
    {
      *reason = g_strdup_printf ("container removed; %s", error->message);
      return SUBAGENT_RECLAIM_FAILED;
    }
  return SUBAGENT_RECLAIM_REMOVED;
}

/* Records of this version (extra.api): the engine's API at extra.host. */
static SubagentReclaimOutcome
reclaim_through_api (gboolean     dry_run,
                     JsonObject  *record,
                     char       **reason)
{
  const char *key = json_object_get_string_member (record, "session_key");
  const char *id = json_object_get_string_member (record, "resource");
  const char *host = extra_string (record, "host");
  const char *pool_slot = extra_string (record, "pool_slot");
  g_autoptr(DockerEngine) engine = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *escaped = NULL;
  g_autofree char *path = NULL;
  JsonObject *config, *labels;
  const char *label = NULL;

  if (!container_id_is_valid (id))
    {
      *reason = g_strdup_printf ("“%s” is not a container id", id);
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  engine = docker_engine_new (host, NULL, &error);
  if (engine == NULL)
    {
      *reason = g_strdup (error->message);
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  if (!docker_engine_negotiate (engine, NULL, &error))
    {
      *reason = g_strdup (error->message);
      return SUBAGENT_RECLAIM_FAILED;
    }
  escaped = g_uri_escape_string (id, NULL, FALSE);
  path = g_strdup_printf ("/containers/%s/json", escaped);
  if (!docker_engine_call (engine, "GET", path, NULL, NULL, &node, NULL, &error))
    {
      if (!g_error_matches (error, DOCKER_ENGINE_ERROR, DOCKER_ENGINE_ERROR_NOT_FOUND))
        {
          *reason = g_strdup (error->message);
          return SUBAGENT_RECLAIM_FAILED;
        }
      *reason = g_strdup ("already gone");
      return reclaim_container_workspace (dry_run, record, reason);
    }
  /* Only a container that carries this session's label is ours. */
  config = node && JSON_NODE_HOLDS_OBJECT (node) ? json_object_get_object_member (json_node_get_object (node), "Config")
                                                 : NULL;
  labels = config && json_object_has_member (config, "Labels") &&
           JSON_NODE_HOLDS_OBJECT (json_object_get_member (config, "Labels"))
           ? json_object_get_object_member (config, "Labels") : NULL;
  if (labels != NULL)
    label = json_object_get_string_member_with_default (labels, DOCKER_LABEL_SESSION, NULL);
  if (g_strcmp0 (label, key) != 0 && (pool_slot == NULL || g_strcmp0 (label, pool_slot) != 0))
    {
      *reason = g_strdup_printf ("container %s does not carry label %s=%s", id, DOCKER_LABEL_SESSION, key);
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  if (!dry_run && !docker_container_remove (engine, id, &error))
    {
      *reason = g_strdup_printf ("could not remove container %s: %s", id, error->message);
      return SUBAGENT_RECLAIM_FAILED;
    }
  return reclaim_container_workspace (dry_run, record, reason);
}

SubagentReclaimOutcome
docker_reclaim_container (gboolean     dry_run,
                          JsonObject  *record,
                          char       **reason)
{
  const char *key = json_object_get_string_member (record, "session_key");
  const char *id = json_object_get_string_member (record, "resource");
  const char *binary = extra_string (record, "binary");
  JsonNode *extra = json_object_get_member (record, "extra");
  g_autoptr(GPtrArray) prefix = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *name = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *label = g_strdup_printf ("{{index .Config.Labels \"%s\"}}", DOCKER_LABEL_SESSION);
  gboolean podman;
  int status = 0;

  if (extra != NULL && JSON_NODE_HOLDS_OBJECT (extra) &&
      json_object_get_boolean_member_with_default (json_node_get_object (extra), "api", FALSE))
    return reclaim_through_api (dry_run, record, reason);
  /* Records of the CLI-driven plugin (before the Engine API). */
  if (binary == NULL || *binary == '\0')
    binary = "docker";
  name = g_path_get_basename (binary);
  /* The record is a file anyone with access to ROOT could edit: run only
   * a container engine, never an arbitrary program. */
  if (!g_str_equal (name, "docker") && !g_str_equal (name, "podman"))
    {
      *reason = g_strdup_printf ("container engine “%s” is neither docker nor podman", binary);
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  podman = g_str_equal (name, "podman");
  if (!container_id_is_valid (id))
    {
      *reason = g_strdup_printf ("“%s” is not a container id", id);
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  g_ptr_array_add (prefix, g_strdup (binary));
  if (!engine_args_are_safe (record, prefix, reason))
    return SUBAGENT_RECLAIM_SKIPPED;

  /* Only a container that carries this session's label is ours. */
  if (!run_engine (record, prefix, &status, &out, &err, "container", "inspect", "--format", label, "--", id, NULL))
    {
      *reason = g_strdup_printf ("cannot run %s: %s", binary, err);
      return SUBAGENT_RECLAIM_FAILED;
    }
  if (status != 0)
    {
      if (!says_gone (err))
        {
          *reason = g_strdup_printf ("%s container inspect %s failed: %s", binary, id, err);
          return SUBAGENT_RECLAIM_FAILED;
        }
      *reason = g_strdup ("already gone");
      return reclaim_container_workspace (dry_run, record, reason);
    }
  if (g_strcmp0 (g_strstrip (out), key) != 0)
    {
      *reason = g_strdup_printf ("container %s does not carry label %s=%s", id, DOCKER_LABEL_SESSION, key);
      return SUBAGENT_RECLAIM_SKIPPED;
    }
  if (dry_run)
    return reclaim_container_workspace (dry_run, record, reason);

  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  /* podman would give a sleeping PID 1 ten seconds to stop. */
  if (!(podman ? run_engine (record, prefix, &status, &out, &err, "rm", "-f", "--time", "0", "--", id, NULL)
               : run_engine (record, prefix, &status, &out, &err, "rm", "-f", "--", id, NULL)) ||
      (status != 0 && !says_gone (err)))
    {
      *reason = g_strdup_printf ("%s rm -f %s failed: %s", binary, id, err ? err : "");
      return SUBAGENT_RECLAIM_FAILED;
    }
  return reclaim_container_workspace (dry_run, record, reason);
}
