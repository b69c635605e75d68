/* openai-tools.c: the built-in workspace tools a model-backed child gets,
 * named as Claude Code names them so its agent files run as written.
 *
 * Every path resolves beneath the child root with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS): no `..`, absolute path or symlink leads out.
 * Writes also honour the definition's write_scope (then without following
 * any symlink), and never touch `.subagent/` or `.git/`. Bash runs through
 * the isolation's spawn, with a timeout and an output cap.
 *
 * Here: the tools' arguments, Read, Write, Edit, Bash and the registry.
 * Paths, reads and writes are in openai-tools-fs.c, Glob, Grep and LS in
 * openai-tools-walk.c; openai-tools-private.h holds what they share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "openai-tools-private.h"

#define READ_DEFAULT_LINES 2000
#define READ_LINE_CAP 2000

/* ---- arguments ------------------------------------------------------------ */

gboolean
openai_tools_arg_string (JsonObject  *args,
                         const char  *key,
                         gboolean     required,
                         const char **out,
                         GError     **error)
{
  JsonNode *node = json_object_get_member (args, key);

  *out = NULL;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      if (required)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "the argument “%s” is required", key);
      return !required;
    }
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "the argument “%s” must be a string", key);
      return FALSE;
    }
  *out = json_node_get_string (node);
  return TRUE;
}

gboolean
openai_tools_arg_int (JsonObject  *args,
                      const char  *key,
                      gint64       min,
                      gint64       max,
                      gint64      *out,
                      GError     **error)
{
  JsonNode *node = json_object_get_member (args, key);

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) ||
      (json_node_get_value_type (node) != G_TYPE_INT64 && json_node_get_value_type (node) != G_TYPE_DOUBLE) ||
      json_node_get_int (node) < min || json_node_get_int (node) > max)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "the argument “%s” must be a whole number from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT, key, min, max);
      return FALSE;
    }
  *out = json_node_get_int (node);
  return TRUE;
}

gboolean
openai_tools_arg_bool (JsonObject *args,
                       const char *key)
{
  JsonNode *node = json_object_get_member (args, key);

  return node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_BOOLEAN &&
         json_node_get_boolean (node);
}

JsonNode *
openai_tools_text_result (char *text)
{
  JsonNode *node = json_node_new (JSON_NODE_VALUE);

  json_node_set_string (node, text);
  g_free (text);
  return node;
}

/* ---- Read, Write, Edit --------------------------------------------------- */

static JsonNode *
tool_read (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data, GError **error)
{
  OpenaiToolEnv *env = user_data;
  const char *path;
  gint64 offset = 1, limit = READ_DEFAULT_LINES;
  g_autofree char *rel = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GString) out = NULL;
  const char *data, *line, *end;
  gsize size;
  gint64 number = 0, shown = 0;

  if (!openai_tools_arg_string (args, "file_path", TRUE, &path, error) ||
      !openai_tools_arg_int (args, "offset", 1, G_MAXINT32, &offset, error) ||
      !openai_tools_arg_int (args, "limit", 1, G_MAXINT32, &limit, error) ||
      (rel = openai_tools_workspace_path (env, path, error)) == NULL ||
      (bytes = openai_tools_read_file (env, rel, error)) == NULL)
    return NULL;
  data = g_bytes_get_data (bytes, &size);
  if (size == 0)
    return openai_tools_text_result (g_strdup_printf ("(%s is empty)", rel));
  if (memchr (data, '\0', MIN (size, 8192)) != NULL || !g_utf8_validate (data, size, NULL))
    return openai_tools_text_result (g_strdup_printf ("(%s is a binary file of %" G_GSIZE_FORMAT " bytes)",
                                                      rel, size));
  out = g_string_new (NULL);
  for (line = data; line < data + size && shown < limit; line = end + 1)
    {
      gsize length;

      end = memchr (line, '\n', data + size - line);
      if (end == NULL)
        end = data + size;
      number++;
      if (number < offset)
        continue;
      length = end - line;
      if (length > 0 && line[length - 1] == '\r')
        length--;
      g_string_append_printf (out, "%6" G_GINT64_FORMAT "\t", number);
      if (length > READ_LINE_CAP)
        {
          const char *cut = line + READ_LINE_CAP;

          while (cut > line && ((guchar) *cut & 0xC0) == 0x80)
            cut--;
          g_string_append_len (out, line, cut - line);
          g_string_append (out, "… [line cut]");
        }
      else
        g_string_append_len (out, line, length);
      g_string_append_c (out, '\n');
      shown++;
    }
  if (shown == 0)
    return openai_tools_text_result (g_strdup_printf ("(%s has %" G_GINT64_FORMAT " lines; none from line %"
                                                      G_GINT64_FORMAT ")", rel, number, offset));
  if (line < data + size)
    g_string_append_printf (out, "[more lines follow: read on with offset %" G_GINT64_FORMAT "]\n", number + 1);
  return openai_tools_text_result (g_string_free (g_steal_pointer (&out), FALSE));
}

static JsonNode *
tool_write (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data, GError **error)
{
  OpenaiToolEnv *env = user_data;
  const char *path, *content;
  g_autofree char *rel = NULL;

  if (!openai_tools_arg_string (args, "file_path", TRUE, &path, error) ||
      !openai_tools_arg_string (args, "content", TRUE, &content, error) ||
      (rel = openai_tools_workspace_path (env, path, error)) == NULL ||
      !openai_tools_check_writable (env, rel, error) ||
      !openai_tools_write_file (env, rel, content, strlen (content), error))
    return NULL;
  return openai_tools_text_result (g_strdup_printf ("Wrote %" G_GSIZE_FORMAT " bytes to %s", strlen (content), rel));
}

static guint
count_occurrences (const char *haystack,
                   const char *needle)
{
  guint n = 0;
  gsize len = strlen (needle);

  for (const char *p = strstr (haystack, needle); p != NULL; p = strstr (p + len, needle))
    n++;
  return n;
}

static JsonNode *
tool_edit (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data, GError **error)
{
  OpenaiToolEnv *env = user_data;
  const char *path, *old_text, *new_text;
  gboolean replace_all = openai_tools_arg_bool (args, "replace_all");
  g_autofree char *rel = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GString) edited = NULL;
  guint count;

  if (!openai_tools_arg_string (args, "file_path", TRUE, &path, error) ||
      !openai_tools_arg_string (args, "old_string", TRUE, &old_text, error) ||
      !openai_tools_arg_string (args, "new_string", TRUE, &new_text, error) ||
      (rel = openai_tools_workspace_path (env, path, error)) == NULL ||
      !openai_tools_check_writable (env, rel, error) ||
      (bytes = openai_tools_read_file (env, rel, error)) == NULL)
    return NULL;
  if (*old_text == '\0' || g_str_equal (old_text, new_text))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "old_string must be non-empty and differ from new_string");
      return NULL;
    }
  text = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  count = count_occurrences (text, old_text);
  if (count == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "old_string does not occur in %s (it must match exactly, "
                   "whitespace included; Read the file first)", rel);
      return NULL;
    }
  if (count > 1 && !replace_all)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS, "old_string occurs %u times in %s: include more of the "
                   "surrounding text to make it unique, or set replace_all", count, rel);
      return NULL;
    }
  edited = g_string_new (text);
  g_string_replace (edited, old_text, new_text, replace_all ? 0 : 1);
  if (!openai_tools_write_file (env, rel, edited->str, edited->len, error))
    return NULL;
  return openai_tools_text_result (g_strdup_printf ("Edited %s: replaced %u occurrence%s", rel,
                                                    replace_all ? count : 1,
                                                    (replace_all ? count : 1) == 1 ? "" : "s"));
}

/* ---- Bash ------------------------------------------------------------------ */

static JsonNode *
tool_bash (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data, GError **error)
{
  OpenaiToolEnv *env = user_data;
  const char *command;
  gint64 timeout_ms = OPENAI_BASH_DEFAULT_TIMEOUT_MS;
  const char *argv[] = { "/bin/sh", "-c", NULL, NULL };
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GCancellable) io = g_cancellable_new ();
  g_autoptr(GString) out = g_string_new (NULL);
  GInputStream *stdout_pipe;
  gsize dropped = 0;
  gulong handler = 0;
  gboolean timed_out = FALSE;
  char buffer[8192];

  if (!openai_tools_arg_string (args, "command", TRUE, &command, error) ||
      !openai_tools_arg_int (args, "timeout", 1, OPENAI_BASH_MAX_TIMEOUT_MS, &timeout_ms, error))
    return NULL;
  argv[2] = command;
  process = subagent_isolation_context_spawnv (env->isolation, argv, (const char * const *) env->environ,
                                               G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                               G_SUBPROCESS_FLAGS_STDERR_MERGE, error);
  if (process == NULL)
    return NULL;
  g_output_stream_close (g_subprocess_get_stdin_pipe (process), NULL, NULL);
  stdout_pipe = g_subprocess_get_stdout_pipe (process);
  if (cancellable != NULL)
    handler = g_cancellable_connect (cancellable, G_CALLBACK (openai_cancel_other), io, NULL);
  openai_watchdog_arm (env->watchdog, io, g_get_monotonic_time () + timeout_ms * 1000);
  for (;;)
    {
      gssize n = g_input_stream_read (stdout_pipe, buffer, sizeof buffer, io, NULL);

      if (n <= 0)
        break;
      /* Past the cap, keep draining so the command is not stuck on a full pipe. */
      if (out->len < OPENAI_TOOL_OUTPUT_CAP)
        {
          gsize take = MIN ((gsize) n, OPENAI_TOOL_OUTPUT_CAP - out->len);
          g_string_append_len (out, buffer, take);
          dropped += n - take;
        }
      else
        dropped += n;
    }
  timed_out = openai_watchdog_disarm (env->watchdog);
  if (handler != 0)
    g_cancellable_disconnect (cancellable, handler);
  if (g_cancellable_is_cancelled (io))
    g_subprocess_force_exit (process);
  g_subprocess_wait (process, NULL, NULL);

  if (out->len > 0 && !g_utf8_validate (out->str, out->len, NULL))
    {
      g_autofree char *valid = g_utf8_make_valid (out->str, out->len);
      g_string_assign (out, valid);
    }
  if (dropped > 0)
    g_string_append_printf (out, "\n[output cut: %" G_GSIZE_FORMAT " more bytes]", dropped);
  if (timed_out)
    g_string_append_printf (out, "\n[killed: the command ran longer than %" G_GINT64_FORMAT " ms]", timeout_ms);
  else if (g_cancellable_is_cancelled (io))
    g_string_append (out, "\n[killed: the run was stopped]");
  else if (g_subprocess_get_if_exited (process) && g_subprocess_get_exit_status (process) != 0)
    g_string_append_printf (out, "\n[exit status %d]", g_subprocess_get_exit_status (process));
  else if (g_subprocess_get_if_signaled (process))
    g_string_append_printf (out, "\n[killed by signal %d]", g_subprocess_get_term_sig (process));
  if (out->len == 0)
    g_string_append (out, "(no output)");
  return openai_tools_text_result (g_string_free (g_steal_pointer (&out), FALSE));
}

/* ---- the registry ---------------------------------------------------------- */

static const struct {
  const char *name;
  gboolean destructive;
  gboolean inside;      /* effects stay in the workspace */
  SubagentToolFunc func;
  const char *description;
  const char *schema;
} builtin_tools[] = {
  { "Read", FALSE, TRUE, tool_read,
    "Reads a text file of the workspace, with line numbers (cat -n style). Reads 2000 lines unless told "
    "otherwise; use offset and limit for long files.",
    "{\"type\":\"object\",\"properties\":{"
    "\"file_path\":{\"type\":\"string\",\"description\":\"The file, relative to the workspace or absolute inside it\"},"
    "\"offset\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"The first line to read (1-based)\"},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"How many lines to read\"}},"
    "\"required\":[\"file_path\"],\"additionalProperties\":false}" },
  { "Write", TRUE, TRUE, tool_write,
    "Writes a file of the workspace, replacing it if it exists; makes missing directories.",
    "{\"type\":\"object\",\"properties\":{"
    "\"file_path\":{\"type\":\"string\",\"description\":\"The file to write\"},"
    "\"content\":{\"type\":\"string\",\"description\":\"The whole new content\"}},"
    "\"required\":[\"file_path\",\"content\"],\"additionalProperties\":false}" },
  { "Edit", TRUE, TRUE, tool_edit,
    "Replaces exact text in a file of the workspace. old_string must occur exactly once (whitespace "
    "included) unless replace_all is true.",
    "{\"type\":\"object\",\"properties\":{"
    "\"file_path\":{\"type\":\"string\",\"description\":\"The file to edit\"},"
    "\"old_string\":{\"type\":\"string\",\"description\":\"The exact text to replace\"},"
    "\"new_string\":{\"type\":\"string\",\"description\":\"The text to put instead\"},"
    "\"replace_all\":{\"type\":\"boolean\",\"description\":\"Replace every occurrence\"}},"
    "\"required\":[\"file_path\",\"old_string\",\"new_string\"],\"additionalProperties\":false}" },
  { "Glob", FALSE, TRUE, openai_tool_glob,
    "Finds files of the workspace by a glob pattern such as **/*.c or src/**/*.{h,c}; newest first.",
    "{\"type\":\"object\",\"properties\":{"
    "\"pattern\":{\"type\":\"string\",\"description\":\"The glob to match, relative to path\"},"
    "\"path\":{\"type\":\"string\",\"description\":\"The directory to search (default: the workspace)\"}},"
    "\"required\":[\"pattern\"],\"additionalProperties\":false}" },
  { "Grep", FALSE, TRUE, openai_tool_grep,
    "Searches file contents of the workspace with a regular expression (PCRE syntax).",
    "{\"type\":\"object\",\"properties\":{"
    "\"pattern\":{\"type\":\"string\",\"description\":\"The regular expression\"},"
    "\"path\":{\"type\":\"string\",\"description\":\"A file or directory to search (default: the workspace)\"},"
    "\"glob\":{\"type\":\"string\",\"description\":\"Only files matching this glob, such as *.c\"},"
    "\"output_mode\":{\"type\":\"string\",\"enum\":[\"files_with_matches\",\"content\",\"count\"]},"
    "\"-i\":{\"type\":\"boolean\",\"description\":\"Ignore case\"},"
    "\"-n\":{\"type\":\"boolean\",\"description\":\"Line numbers in content mode (default true)\"},"
    "\"head_limit\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"At most this many lines\"}},"
    "\"required\":[\"pattern\"],\"additionalProperties\":false}" },
  { "LS", FALSE, TRUE, openai_tool_ls,
    "Lists a directory of the workspace; directories end in /.",
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\",\"description\":\"The directory (default: the workspace)\"},"
    "\"ignore\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"Globs of names to leave out\"}},"
    "\"additionalProperties\":false}" },
  { "Bash", TRUE, FALSE, tool_bash,
    "Runs a shell command in the workspace (the current directory) and returns its output (stdout and "
    "stderr, cut at 30000 characters). Times out after 120000 ms unless timeout says otherwise.",
    "{\"type\":\"object\",\"properties\":{"
    "\"command\":{\"type\":\"string\",\"description\":\"The command, run by /bin/sh -c\"},"
    "\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":600000,\"description\":\"Milliseconds\"},"
    "\"description\":{\"type\":\"string\",\"description\":\"What the command does, in a few words\"}},"
    "\"required\":[\"command\"],\"additionalProperties\":false}" },
};

gboolean
openai_workspace_tool_stays_inside (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (builtin_tools); i++)
    if (g_str_equal (builtin_tools[i].name, name))
      return builtin_tools[i].inside;
  return FALSE;
}

SubagentSimpleToolRegistry *
openai_workspace_tools_new (OpenaiToolEnv *env)
{
  SubagentSimpleToolRegistry *registry = subagent_simple_tool_registry_new ();

  for (guint i = 0; i < G_N_ELEMENTS (builtin_tools); i++)
    {
      g_autoptr(JsonNode) schema = json_from_string (builtin_tools[i].schema, NULL);
      g_autoptr(SubagentTool) tool = NULL;

      g_assert (schema != NULL);
      tool = subagent_tool_new (builtin_tools[i].name, builtin_tools[i].description,
                                json_node_get_object (schema), builtin_tools[i].destructive,
                                builtin_tools[i].func, env, NULL);
      subagent_simple_tool_registry_add (registry, tool);
    }
  return registry;
}
