/* subagentctl-mcp-resources.c: the session records and review patches of
 * the workspace as MCP resources:
 *
 *   subagent://sessions/<id>          a session record (JSON)
 *   subagent://reviews/<key>.patch    what a child changed (a git patch)
 *
 * Names in URIs are checked as ids ([A-Za-z0-9_-]) before any file is
 * opened, and patches are opened without following a symbolic link, so a
 * URI never reaches outside `.subagent/`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "subagentctl-mcp.h"

#define SESSIONS_PREFIX "subagent://sessions/"
#define REVIEWS_PREFIX "subagent://reviews/"
#define MAX_PATCH_BYTES (16 * 1024 * 1024)

static char *
dir_path (McpServer  *server,
          const char *name)
{
  return g_build_filename (server->root, ".subagent", name, NULL);
}

static JsonObject *
resource (const char *uri,
          const char *name,
          const char *description,
          const char *mime_type)
{
  JsonObject *object = json_object_new ();

  json_object_set_string_member (object, "uri", uri);
  json_object_set_string_member (object, "name", name);
  if (description != NULL)
    json_object_set_string_member (object, "description", description);
  json_object_set_string_member (object, "mimeType", mime_type);
  return object;
}

static char *
first_line (const char *text,
            guint       most)
{
  const char *end = text ? strchr (text, '\n') : NULL;
  g_autofree char *line = text ? (end ? g_strndup (text, end - text) : g_strdup (text)) : g_strdup ("");

  if (g_utf8_strlen (line, -1) > most)
    {
      g_autofree char *cut = g_utf8_substring (line, 0, most);
      return g_strconcat (cut, "…", NULL);
    }
  return g_steal_pointer (&line);
}

void
mcp_resources_list (McpServer *server,
                    JsonNode  *id)
{
  g_autofree char *sessions_dir = dir_path (server, "sessions");
  g_autofree char *reviews_dir = dir_path (server, "reviews");
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(JsonObject) result = json_object_new ();
  JsonArray *resources = json_array_new ();
  const char *entry;

  sessions = subagent_session_log_read_dir (sessions_dir, NULL, &error);
  if (sessions == NULL)
    g_printerr ("subagentctl mcp: cannot list sessions: %s\n", error->message);
  for (guint i = 0; sessions != NULL && i < sessions->len; i++)
    {
      SubagentSession *session = sessions->pdata[i];
      const char *session_id = subagent_session_get_session_id (session);
      g_autofree char *uri = g_strconcat (SESSIONS_PREFIX, session_id, NULL);
      g_autofree char *task = first_line (subagent_session_get_task (session), 80);
      g_autofree char *description = g_strdup_printf ("%s child “%s” (%s): %s",
                                                      subagent_run_status_to_string (subagent_session_get_status (session)),
                                                      subagent_session_get_def_name (session),
                                                      subagent_session_get_isolation (session), task);
      g_autofree char *name = g_strconcat ("session ", session_id, NULL);

      json_array_add_object_element (resources, resource (uri, name, description, "application/json"));
    }

  if ((dir = g_dir_open (reviews_dir, 0, NULL)) != NULL)
    while ((entry = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *key = g_str_has_suffix (entry, ".patch") ? g_strndup (entry, strlen (entry) - 6) : NULL;
        g_autofree char *uri = NULL;

        if (key == NULL || !subagent_isolation_session_key_is_valid (key))
          continue;
        uri = g_strconcat (REVIEWS_PREFIX, entry, NULL);
        json_array_add_object_element (resources, resource (uri, entry, "What a child changed, as a git patch",
                                                            "text/x-diff"));
      }

  json_object_set_array_member (result, "resources", resources);
  mcp_send_result (server, id, result);
}

void
mcp_resources_templates (McpServer *server,
                         JsonNode  *id)
{
  g_autoptr(JsonObject) result = json_object_new ();
  JsonArray *templates = json_array_new ();
  JsonObject *sessions = json_object_new ();
  JsonObject *reviews = json_object_new ();

  json_object_set_string_member (sessions, "uriTemplate", SESSIONS_PREFIX "{session_id}");
  json_object_set_string_member (sessions, "name", "session");
  json_object_set_string_member (sessions, "description", "The record of a child run: task, status, usage, answer, review");
  json_object_set_string_member (sessions, "mimeType", "application/json");
  json_object_set_string_member (reviews, "uriTemplate", REVIEWS_PREFIX "{key}.patch");
  json_object_set_string_member (reviews, "name", "review patch");
  json_object_set_string_member (reviews, "description", "What a child changed in its workspace, as a git patch");
  json_object_set_string_member (reviews, "mimeType", "text/x-diff");
  json_array_add_object_element (templates, sessions);
  json_array_add_object_element (templates, reviews);
  json_object_set_array_member (result, "resourceTemplates", templates);
  mcp_send_result (server, id, result);
}

static void
send_contents (McpServer  *server,
               JsonNode   *id,
               const char *uri,
               const char *mime_type,
               const char *text)
{
  g_autoptr(JsonObject) result = json_object_new ();
  JsonArray *contents = json_array_new ();
  JsonObject *item = json_object_new ();

  json_object_set_string_member (item, "uri", uri);
  json_object_set_string_member (item, "mimeType", mime_type);
  json_object_set_string_member (item, "text", text);
  json_array_add_object_element (contents, item);
  json_object_set_array_member (result, "contents", contents);
  mcp_send_result (server, id, result);
}

/* Reads <dir>/<name>, refusing a symbolic link or anything but a file. */
static char *
read_patch (const char *dir,
            const char *name,
            GError    **error)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  g_autoptr(GString) text = g_string_new (NULL);
  char buffer[65536];
  ssize_t n;

  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot open %s: %s", path, g_strerror (saved));
      return NULL;
    }
  while ((n = read (fd, buffer, sizeof buffer)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 || text->len + (gsize) n > MAX_PATCH_BYTES)
        {
          int saved = n < 0 ? errno : EFBIG;
          close (fd);
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot read %s: %s", path, g_strerror (saved));
          return NULL;
        }
      g_string_append_len (text, buffer, n);
    }
  close (fd);
  if (!g_utf8_validate_len (text->str, text->len, NULL))
    {
      /* Binary bytes outside git's base85 hunks: show them replaced. */
      g_autofree char *valid = g_utf8_make_valid (text->str, text->len);
      return g_steal_pointer (&valid);
    }
  return g_string_free (g_steal_pointer (&text), FALSE);
}

void
mcp_resources_read (McpServer  *server,
                    JsonNode   *id,
                    JsonObject *params)
{
  const char *uri = json_object_get_string_member_with_default (params, "uri", NULL);
  g_autoptr(GError) error = NULL;

  if (uri == NULL)
    {
      mcp_send_error (server, id, MCP_INVALID_PARAMS, "resources/read: “uri” must be a string");
      return;
    }
  if (g_str_has_prefix (uri, SESSIONS_PREFIX) && subagent_isolation_session_key_is_valid (uri + strlen (SESSIONS_PREFIX)))
    {
      g_autofree char *sessions_dir = dir_path (server, "sessions");
      g_autoptr(SubagentSession) session = subagent_session_log_lookup (sessions_dir, uri + strlen (SESSIONS_PREFIX), &error);
      g_autoptr(JsonObject) object = NULL;
      g_autoptr(JsonNode) node = NULL;
      g_autofree char *text = NULL;

      if (session == NULL)
        {
          g_autofree char *message = g_strdup_printf ("Resource not found: %s (%s)", uri,
                                                      error ? error->message : "no such session");
          mcp_send_error (server, id, -32002, message);
          return;
        }
      object = subagent_session_to_json (session);
      node = json_node_init_object (json_node_alloc (), object);
      text = json_to_string (node, TRUE);
      send_contents (server, id, uri, "application/json", text);
      return;
    }
  if (g_str_has_prefix (uri, REVIEWS_PREFIX) && g_str_has_suffix (uri, ".patch"))
    {
      const char *name = uri + strlen (REVIEWS_PREFIX);
      g_autofree char *key = g_strndup (name, strlen (name) - strlen (".patch"));
      g_autofree char *reviews_dir = dir_path (server, "reviews");
      g_autofree char *text = NULL;

      if (subagent_isolation_session_key_is_valid (key) &&
          (text = read_patch (reviews_dir, name, &error)) != NULL)
        {
          send_contents (server, id, uri, "text/x-diff", text);
          return;
        }
      {
        g_autofree char *message = g_strdup_printf ("Resource not found: %s%s%s", uri, error ? " — " : "",
                                                    error ? error->message : "");
        mcp_send_error (server, id, -32002, message);
      }
      return;
    }
  {
    g_autofree char *message = g_strdup_printf ("Resource not found: %s (subagentctl serves subagent://sessions/ID "
                                                "and subagent://reviews/KEY.patch)", uri);
    mcp_send_error (server, id, -32002, message);
  }
}
