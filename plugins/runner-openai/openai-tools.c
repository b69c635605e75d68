/* openai-tools.c: the built-in workspace tools a model-backed child gets,
 * named as Claude Code names them so its agent files run as written.
 *
 * Every path resolves beneath the child root with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS): no `..`, absolute path or symlink leads out.
 * Writes also honour the definition's write_scope (then without following
 * any symlink), and never touch `.subagent/` or `.git/`. Bash runs through
 * the isolation's spawn, with a timeout and an output cap.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "openai-private.h"

#define READ_DEFAULT_LINES 2000
#define READ_LINE_CAP 2000
#define FILE_MAX (10 * 1024 * 1024)
#define GREP_FILE_MAX (5 * 1024 * 1024)
#define LIST_MAX 1000
#define WALK_MAX 100000

struct _OpenaiToolEnv
{
  SubagentIsolationContext *isolation;
  char *root;
  int root_fd;
  GStrv write_scope;   /* normalized relative paths; empty: anywhere */
  GStrv environ;       /* Bash's environment: the host's minus hidden variables */
  OpenaiWatchdog *watchdog;
};

/* ---- paths --------------------------------------------------------------- */

static char *
normalize_relative (const char  *path,
                    GError     **error)
{
  g_auto(GStrv) parts = g_strsplit (path, "/", -1);
  g_autoptr(GPtrArray) kept = g_ptr_array_new ();

  for (guint i = 0; parts[i] != NULL; i++)
    {
      if (*parts[i] == '\0' || g_str_equal (parts[i], "."))
        continue;
      if (g_str_equal (parts[i], ".."))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                       "“%s” uses “..”: give a path inside the workspace", path);
          return NULL;
        }
      g_ptr_array_add (kept, parts[i]);
    }
  if (kept->len == 0)
    return g_strdup (".");
  g_ptr_array_add (kept, NULL);
  return g_strjoinv ("/", (char **) kept->pdata);
}

/* A tool's path argument as a path relative to the child root. */
static char *
workspace_path (OpenaiToolEnv  *env,
                const char     *path,
                GError        **error)
{
  g_autofree char *rel = NULL;

  if (path == NULL || *path == '\0')
    path = ".";
  if (g_path_is_absolute (path))
    {
      gsize n = strlen (env->root);

      if (g_str_equal (path, env->root))
        path = ".";
      else if (strncmp (path, env->root, n) == 0 && path[n] == '/')
        path += n + 1;
      else
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                       "“%s” is outside the workspace %s: use a path inside it (relative paths start there)",
                       path, env->root);
          return NULL;
        }
    }
  rel = normalize_relative (path, error);
  if (rel == NULL)
    return NULL;
  if (g_str_equal (rel, ".subagent") || g_str_has_prefix (rel, ".subagent/"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "“%s” is libsubagent's own state, not part of the workspace", path);
      return NULL;
    }
  return g_steal_pointer (&rel);
}

static gboolean
under (const char *rel,
       const char *prefix)
{
  gsize n = strlen (prefix);

  return g_str_equal (prefix, ".") || g_str_equal (rel, prefix) ||
         (strncmp (rel, prefix, n) == 0 && rel[n] == '/');
}

static gboolean
check_writable (OpenaiToolEnv  *env,
                const char     *rel,
                GError        **error)
{
  if (g_str_equal (rel, ".git") || g_str_has_prefix (rel, ".git/"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "“%s” is inside .git: change files, not the repository's internals", rel);
      return FALSE;
    }
  if (env->write_scope[0] == NULL)
    return TRUE;
  for (guint i = 0; env->write_scope[i] != NULL; i++)
    if (under (rel, env->write_scope[i]))
      return TRUE;
  {
    g_autofree char *scope = g_strjoinv (", ", env->write_scope);

    g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                 "“%s” is outside this agent's write_scope (%s)", rel, scope);
  }
  return FALSE;
}

static int
open_beneath (OpenaiToolEnv  *env,
              const char     *rel,
              int             flags,
              mode_t          mode,
              gboolean        no_symlinks,
              GError        **error)
{
  struct open_how how = { 0 };
  int fd;

  how.flags = flags | O_CLOEXEC;
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (no_symlinks ? RESOLVE_NO_SYMLINKS : 0);
  do
    fd = (int) syscall (SYS_openat2, env->root_fd, rel, &how, sizeof how);
  while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  if (fd < 0)
    {
      int saved = errno;

      if (saved == EXDEV || saved == ELOOP)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                     "“%s” leads outside the workspace (through a symlink)%s", rel,
                     no_symlinks ? ", or through a symlink where write_scope allows none" : "");
      else
        g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "“%s”: %s", rel, g_strerror (saved));
    }
  return fd;
}

/* Opens @rel's directory, making missing ones beneath the root. */
static int
open_parent (OpenaiToolEnv  *env,
             const char     *rel,
             gboolean        create,
             gboolean        no_symlinks,
             char          **base_out,
             GError        **error)
{
  g_autofree char *dir = g_path_get_dirname (rel);
  g_auto(GStrv) parts = NULL;
  g_autoptr(GString) so_far = g_string_new (NULL);

  *base_out = g_path_get_basename (rel);
  if (create && !g_str_equal (dir, "."))
    {
      parts = g_strsplit (dir, "/", -1);
      for (guint i = 0; parts[i] != NULL; i++)
        {
          int parent_fd;

          parent_fd = open_beneath (env, so_far->len ? so_far->str : ".", O_PATH | O_DIRECTORY, 0, no_symlinks, error);
          if (parent_fd < 0)
            return -1;
          if (mkdirat (parent_fd, parts[i], 0755) < 0 && errno != EEXIST)
            {
              int saved = errno;
              close (parent_fd);
              g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot make directory “%s/%s”: %s",
                           so_far->len ? so_far->str : ".", parts[i], g_strerror (saved));
              return -1;
            }
          close (parent_fd);
          if (so_far->len)
            g_string_append_c (so_far, '/');
          g_string_append (so_far, parts[i]);
        }
    }
  return open_beneath (env, dir, O_PATH | O_DIRECTORY, 0, no_symlinks, error);
}

static GBytes *
read_fd_all (int          fd,
             const char  *rel,
             gsize        max,
             GError     **error)
{
  struct stat st;
  GByteArray *bytes;
  char buffer[65536];
  ssize_t n;

  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE, "“%s” is not a regular file", rel);
      return NULL;
    }
  if ((gsize) st.st_size > max)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE, "“%s” has %" G_GINT64_FORMAT " bytes, more than %" G_GSIZE_FORMAT " this tool reads",
                   rel, (gint64) st.st_size, max);
      return NULL;
    }
  bytes = g_byte_array_sized_new (st.st_size + 1);
  while ((n = read (fd, buffer, sizeof buffer)) != 0)
    {
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "reading “%s”: %s", rel, g_strerror (errno));
          g_byte_array_unref (bytes);
          return NULL;
        }
      g_byte_array_append (bytes, (guint8 *) buffer, n);
      if (bytes->len > max)
        break;
    }
  return g_byte_array_free_to_bytes (bytes);
}

static GBytes *
read_file (OpenaiToolEnv  *env,
           const char     *rel,
           GError        **error)
{
  int fd = open_beneath (env, rel, O_RDONLY, 0, FALSE, error);
  GBytes *bytes;

  if (fd < 0)
    return NULL;
  bytes = read_fd_all (fd, rel, FILE_MAX, error);
  close (fd);
  return bytes;
}

/* Replaces @rel with @data through a temporary file and a rename. */
static gboolean
write_file (OpenaiToolEnv  *env,
            const char     *rel,
            const char     *data,
            gsize           len,
            GError        **error)
{
  gboolean scoped = env->write_scope[0] != NULL;
  g_autofree char *base = NULL;
  g_autofree char *tmp = NULL;
  int dir_fd, fd;
  mode_t mode = 0644;
  struct stat st;
  gsize done = 0;

  dir_fd = open_parent (env, rel, TRUE, scoped, &base, error);
  if (dir_fd < 0)
    return FALSE;
  if (fstatat (dir_fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (S_ISDIR (st.st_mode))
        {
          close (dir_fd);
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY, "“%s” is a directory", rel);
          return FALSE;
        }
      if (S_ISREG (st.st_mode))
        mode = st.st_mode & 07777;
    }
  tmp = g_strdup_printf (".%s.subagent-%08x", base, g_random_int ());
  fd = openat (dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0)
    {
      int saved = errno;
      close (dir_fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot write “%s”: %s", rel, g_strerror (saved));
      return FALSE;
    }
  fchmod (fd, mode);
  while (done < len)
    {
      ssize_t n = write (fd, data + done, len - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          close (fd);
          unlinkat (dir_fd, tmp, 0);
          close (dir_fd);
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot write “%s”: %s", rel, g_strerror (saved));
          return FALSE;
        }
      done += n;
    }
  close (fd);
  if (renameat (dir_fd, tmp, dir_fd, base) < 0)
    {
      int saved = errno;
      unlinkat (dir_fd, tmp, 0);
      close (dir_fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot replace “%s”: %s", rel, g_strerror (saved));
      return FALSE;
    }
  close (dir_fd);
  return TRUE;
}

/* ---- arguments ------------------------------------------------------------ */

static gboolean
arg_string (JsonObject  *args,
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

static gboolean
arg_int (JsonObject  *args,
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

static gboolean
arg_bool (JsonObject *args,
          const char *key)
{
  JsonNode *node = json_object_get_member (args, key);

  return node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_BOOLEAN &&
         json_node_get_boolean (node);
}

static JsonNode *
text_result (char *text)
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

  if (!arg_string (args, "file_path", TRUE, &path, error) ||
      !arg_int (args, "offset", 1, G_MAXINT32, &offset, error) ||
      !arg_int (args, "limit", 1, G_MAXINT32, &limit, error) ||
      (rel = workspace_path (env, path, error)) == NULL ||
      (bytes = read_file (env, rel, error)) == NULL)
    return NULL;
  data = g_bytes_get_data (bytes, &size);
  if (size == 0)
    return text_result (g_strdup_printf ("(%s is empty)", rel));
  if (memchr (data, '\0', MIN (size, 8192)) != NULL || !g_utf8_validate (data, size, NULL))
    return text_result (g_strdup_printf ("(%s is a binary file of %" G_GSIZE_FORMAT " bytes)", rel, size));
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
    return text_result (g_strdup_printf ("(%s has %" G_GINT64_FORMAT " lines; none from line %" G_GINT64_FORMAT ")",
                                         rel, number, offset));
  if (line < data + size)
    g_string_append_printf (out, "[more lines follow: read on with offset %" G_GINT64_FORMAT "]\n", number + 1);
  return text_result (g_string_free (g_steal_pointer (&out), FALSE));
}

static JsonNode *
tool_write (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data, GError **error)
{
  OpenaiToolEnv *env = user_data;
  const char *path, *content;
  g_autofree char *rel = NULL;

  if (!arg_string (args, "file_path", TRUE, &path, error) ||
      !arg_string (args, "content", TRUE, &content, error) ||
      (rel = workspace_path (env, path, error)) == NULL ||
      !check_writable (env, rel, error) ||
      !write_file (env, rel, content, strlen (content), error))
    return NULL;
  return text_result (g_strdup_printf ("Wrote %" G_GSIZE_FORMAT " bytes to %s", strlen (content), rel));
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
  gboolean replace_all = arg_bool (args, "replace_all");
  g_autofree char *rel = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GString) edited = NULL;
  guint count;

  if (!arg_string (args, "file_path", TRUE, &path, error) ||
      !arg_string (args, "old_string", TRUE, &old_text, error) ||
      !arg_string (args, "new_string", TRUE, &new_text, error) ||
      (rel = workspace_path (env, path, error)) == NULL ||
      !check_writable (env, rel, error) ||
      (bytes = read_file (env, rel, error)) == NULL)
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
  if (!write_file (env, rel, edited->str, edited->len, error))
    return NULL;
  return text_result (g_strdup_printf ("Edited %s: replaced %u occurrence%s", rel, replace_all ? count : 1,
                                       (replace_all ? count : 1) == 1 ? "" : "s"));
}

/* ---- walking: Glob, Grep, LS -------------------------------------------- */

static gint
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* A glob as an anchored regex: `**` crosses directories, `*` and `?` do not. */
static GRegex *
glob_regex (const char  *glob,
            GError     **error)
{
  g_autoptr(GString) re = g_string_new ("^");
  gint braces = 0;

  for (const char *p = glob; *p; p++)
    {
      if (p[0] == '*' && p[1] == '*')
        {
          p++;
          if (p[1] == '/')
            {
              p++;
              g_string_append (re, "(?:.*/)?");
            }
          else
            g_string_append (re, ".*");
        }
      else if (*p == '*')
        g_string_append (re, "[^/]*");
      else if (*p == '?')
        g_string_append (re, "[^/]");
      else if (*p == '{')
        {
          braces++;
          g_string_append (re, "(?:");
        }
      else if (*p == '}' && braces > 0)
        {
          braces--;
          g_string_append_c (re, ')');
        }
      else if (*p == ',' && braces > 0)
        g_string_append_c (re, '|');
      else if (*p == '[')
        {
          const char *close = strchr (p + 1, ']');
          if (close == NULL)
            g_string_append (re, "\\[");
          else
            {
              g_string_append_len (re, p, close - p + 1);
              p = close;
            }
        }
      else
        {
          char c[2] = { *p, 0 };
          g_autofree char *escaped = g_regex_escape_string (c, 1);
          g_string_append (re, escaped);
        }
    }
  g_string_append_c (re, '$');
  return g_regex_new (re->str, G_REGEX_OPTIMIZE, 0, error);
}

typedef gboolean (*WalkFunc) (const char *rel, int dir_fd, const char *name, const struct stat *st, gpointer data);

typedef struct {
  guint visited;
  gboolean stopped;
  GCancellable *cancellable;
} Walk;

static void
walk_dir (Walk       *walk,
          int         dir_fd,
          const char *rel,
          WalkFunc    func,
          gpointer    data)
{
  int copy = dup (dir_fd);
  DIR *dir;
  struct dirent *entry;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

  if (copy < 0 || (dir = fdopendir (copy)) == NULL)
    {
      if (copy >= 0)
        close (copy);
      return;
    }
  while ((entry = readdir (dir)) != NULL)
    if (!g_str_equal (entry->d_name, ".") && !g_str_equal (entry->d_name, ".."))
      g_ptr_array_add (names, g_strdup (entry->d_name));
  closedir (dir);
  g_ptr_array_sort (names, compare_names);

  for (guint i = 0; i < names->len && !walk->stopped; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *child = g_str_equal (rel, ".") ? g_strdup (name) : g_strconcat (rel, "/", name, NULL);
      struct stat st;

      if (++walk->visited > WALK_MAX || g_cancellable_is_cancelled (walk->cancellable))
        {
          walk->stopped = TRUE;
          return;
        }
      if (g_str_equal (name, ".git") || g_str_equal (child, ".subagent"))
        continue;
      if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (S_ISDIR (st.st_mode))
        {
          int sub = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          if (sub >= 0)
            {
              if (!func (child, dir_fd, name, &st, data))
                walk->stopped = TRUE;
              else
                walk_dir (walk, sub, child, func, data);
              close (sub);
            }
        }
      else if (!func (child, dir_fd, name, &st, data))
        walk->stopped = TRUE;
    }
}

typedef struct {
  GRegex *regex;
  const char *base;     /* the walk's start, relative */
  GPtrArray *hits;      /* Hit */
} GlobData;

typedef struct {
  char *path;
  gint64 mtime;
} Hit;

static void
hit_free (Hit *hit)
{
  g_free (hit->path);
  g_free (hit);
}

static const char *
below_base (const char *rel,
            const char *base)
{
  if (g_str_equal (base, "."))
    return rel;
  return rel + strlen (base) + 1;
}

static gboolean
glob_visit (const char *rel, int dir_fd, const char *name, const struct stat *st, gpointer data)
{
  GlobData *glob = data;

  if (S_ISREG (st->st_mode) && g_regex_match (glob->regex, below_base (rel, glob->base), 0, NULL))
    {
      Hit *hit = g_new0 (Hit, 1);

      hit->path = g_strdup (rel);
      hit->mtime = (gint64) st->st_mtim.tv_sec * G_USEC_PER_SEC + st->st_mtim.tv_nsec / 1000;
      g_ptr_array_add (glob->hits, hit);
    }
  return TRUE;
}

static gint
newest_first (gconstpointer a,
              gconstpointer b)
{
  const Hit *x = *(Hit **) a, *y = *(Hit **) b;

  if (x->mtime != y->mtime)
    return x->mtime > y->mtime ? -1 : 1;
  return g_strcmp0 (x->path, y->path);
}

static int
open_dir (OpenaiToolEnv  *env,
          const char     *rel,
          GError        **error)
{
  return open_beneath (env, rel, O_RDONLY | O_DIRECTORY, 0, FALSE, error);
}

static JsonNode *
tool_glob (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data, GError **error)
{
  OpenaiToolEnv *env = user_data;
  const char *pattern, *path;
  g_autofree char *rel = NULL;
  g_autoptr(GRegex) regex = NULL;
  g_autoptr(GPtrArray) hits = g_ptr_array_new_with_free_func ((GDestroyNotify) hit_free);
  g_autoptr(GString) out = g_string_new (NULL);
  GlobData data;
  Walk walk = { 0, FALSE, cancellable };
  int fd;

  if (!arg_string (args, "pattern", TRUE, &pattern, error) ||
      !arg_string (args, "path", FALSE, &path, error) ||
      (rel = workspace_path (env, path, error)) == NULL ||
      (regex = glob_regex (pattern, error)) == NULL ||
      (fd = open_dir (env, rel, error)) < 0)
    return NULL;
  data = (GlobData) { regex, rel, hits };
  walk_dir (&walk, fd, rel, glob_visit, &data);
  close (fd);
  g_ptr_array_sort (hits, newest_first);
  for (guint i = 0; i < hits->len && i < LIST_MAX; i++)
    g_string_append_printf (out, "%s\n", ((Hit *) g_ptr_array_index (hits, i))->path);
  if (hits->len == 0)
    g_string_append (out, "No files found\n");
  else if (hits->len > LIST_MAX)
    g_string_append_printf (out, "[%u more files: narrow the pattern]\n", hits->len - LIST_MAX);
  return text_result (g_string_free (g_steal_pointer (&out), FALSE));
}

typedef enum { GREP_FILES, GREP_CONTENT, GREP_COUNT } GrepMode;

typedef struct {
  OpenaiToolEnv *env;
  GRegex *regex;
  GRegex *filter;       /* the `glob` argument, or NULL */
  gboolean filter_path; /* the glob has a '/': match the relative path */
  GrepMode mode;
  gboolean numbers;
  gint64 head_limit;
  GString *out;
  gint64 lines;
  guint files;
} GrepData;

static gboolean
grep_file (GrepData   *grep,
           const char *rel,
           int         fd)
{
  g_autoptr(GBytes) bytes = read_fd_all (fd, rel, GREP_FILE_MAX, NULL);
  const char *data, *line, *end;
  gsize size;
  guint count = 0, number = 0;

  if (bytes == NULL)
    return TRUE;
  data = g_bytes_get_data (bytes, &size);
  if (size == 0 || memchr (data, '\0', MIN (size, 8192)) != NULL || !g_utf8_validate (data, size, NULL))
    return TRUE;
  for (line = data; line < data + size; line = end + 1)
    {
      g_autofree char *text = NULL;

      end = memchr (line, '\n', data + size - line);
      if (end == NULL)
        end = data + size;
      number++;
      text = g_strndup (line, end - line);
      if (!g_regex_match (grep->regex, text, 0, NULL))
        continue;
      count++;
      if (grep->mode == GREP_FILES)
        break;
      if (grep->mode == GREP_CONTENT)
        {
          if (grep->head_limit > 0 && grep->lines >= grep->head_limit)
            return FALSE;
          if (grep->numbers)
            g_string_append_printf (grep->out, "%s:%u:%s\n", rel, number, text);
          else
            g_string_append_printf (grep->out, "%s:%s\n", rel, text);
          grep->lines++;
        }
    }
  if (count == 0)
    return TRUE;
  grep->files++;
  if (grep->mode == GREP_CONTENT)
    return TRUE;
  if (grep->head_limit > 0 && grep->lines >= grep->head_limit)
    return FALSE;
  if (grep->mode == GREP_FILES)
    g_string_append_printf (grep->out, "%s\n", rel);
  else
    g_string_append_printf (grep->out, "%s:%u\n", rel, count);
  grep->lines++;
  return TRUE;
}

static gboolean
grep_visit (const char *rel, int dir_fd, const char *name, const struct stat *st, gpointer data)
{
  GrepData *grep = data;
  int fd;
  gboolean go_on;

  if (!S_ISREG (st->st_mode) || st->st_size > GREP_FILE_MAX)
    return TRUE;
  if (grep->filter != NULL && !g_regex_match (grep->filter, grep->filter_path ? rel : name, 0, NULL))
    return TRUE;
  fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return TRUE;
  go_on = grep_file (grep, rel, fd);
  close (fd);
  return go_on;
}

static JsonNode *
tool_grep (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data, GError **error)
{
  OpenaiToolEnv *env = user_data;
  const char *pattern, *path, *glob, *mode;
  g_autofree char *rel = NULL;
  g_autoptr(GRegex) regex = NULL;
  g_autoptr(GRegex) filter = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  GrepData grep = { 0 };
  Walk walk = { 0, FALSE, cancellable };
  gint64 head_limit = 0;
  struct stat st;
  int fd;

  if (!arg_string (args, "pattern", TRUE, &pattern, error) ||
      !arg_string (args, "path", FALSE, &path, error) ||
      !arg_string (args, "glob", FALSE, &glob, error) ||
      !arg_string (args, "output_mode", FALSE, &mode, error) ||
      !arg_int (args, "head_limit", 0, G_MAXINT32, &head_limit, error) ||
      (rel = workspace_path (env, path, error)) == NULL)
    return NULL;
  regex = g_regex_new (pattern, (arg_bool (args, "-i") ? G_REGEX_CASELESS : 0) | G_REGEX_OPTIMIZE, 0, error);
  if (regex == NULL)
    return NULL;
  if (glob != NULL && (filter = glob_regex (glob, error)) == NULL)
    return NULL;
  grep.env = env;
  grep.regex = regex;
  grep.filter = filter;
  grep.filter_path = glob != NULL && strchr (glob, '/') != NULL;
  grep.mode = mode == NULL || g_str_equal (mode, "files_with_matches") ? GREP_FILES
              : g_str_equal (mode, "content") ? GREP_CONTENT
              : g_str_equal (mode, "count") ? GREP_COUNT : (GrepMode) -1;
  if ((int) grep.mode < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "output_mode must be files_with_matches, content or count");
      return NULL;
    }
  grep.numbers = json_object_has_member (args, "-n") ? arg_bool (args, "-n") : TRUE;
  grep.head_limit = head_limit;
  grep.out = out;

  fd = open_beneath (env, rel, O_RDONLY, 0, FALSE, error);
  if (fd < 0)
    return NULL;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
    grep_file (&grep, rel, fd);
  else
    walk_dir (&walk, fd, rel, grep_visit, &grep);
  close (fd);
  if (out->len == 0)
    g_string_append (out, grep.mode == GREP_CONTENT ? "No matches\n" : "No files found\n");
  return text_result (g_string_free (g_steal_pointer (&out), FALSE));
}

static JsonNode *
tool_ls (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data, GError **error)
{
  OpenaiToolEnv *env = user_data;
  const char *path;
  g_autofree char *rel = NULL;
  g_autoptr(GPtrArray) ignore = g_ptr_array_new_with_free_func ((GDestroyNotify) g_regex_unref);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) out = g_string_new (NULL);
  JsonNode *ignore_node = json_object_get_member (args, "ignore");
  struct dirent *entry;
  DIR *dir;
  int fd;

  if (!arg_string (args, "path", FALSE, &path, error) ||
      (rel = workspace_path (env, path, error)) == NULL)
    return NULL;
  if (ignore_node != NULL && JSON_NODE_HOLDS_ARRAY (ignore_node))
    {
      JsonArray *array = json_node_get_array (ignore_node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          const char *glob = json_array_get_string_element (array, i);
          GRegex *regex = glob ? glob_regex (glob, NULL) : NULL;

          if (regex != NULL)
            g_ptr_array_add (ignore, regex);
        }
    }
  if ((fd = open_dir (env, rel, error)) < 0)
    return NULL;
  dir = fdopendir (fd);
  if (dir == NULL)
    {
      close (fd);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot list “%s”", rel);
      return NULL;
    }
  while ((entry = readdir (dir)) != NULL)
    {
      struct stat st;
      gboolean skip = g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, "..") ||
                      (g_str_equal (rel, ".") && g_str_equal (entry->d_name, ".subagent"));

      for (guint i = 0; !skip && i < ignore->len; i++)
        skip = g_regex_match (g_ptr_array_index (ignore, i), entry->d_name, 0, NULL);
      if (skip)
        continue;
      if (fstatat (dirfd (dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode))
        g_ptr_array_add (names, g_strconcat (entry->d_name, "/", NULL));
      else
        g_ptr_array_add (names, g_strdup (entry->d_name));
    }
  closedir (dir);
  g_ptr_array_sort (names, compare_names);
  g_string_append_printf (out, "%s/\n", rel);
  for (guint i = 0; i < names->len && i < LIST_MAX; i++)
    g_string_append_printf (out, "  %s\n", (char *) g_ptr_array_index (names, i));
  if (names->len > LIST_MAX)
    g_string_append_printf (out, "  [%u more entries]\n", names->len - LIST_MAX);
  return text_result (g_string_free (g_steal_pointer (&out), FALSE));
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

  if (!arg_string (args, "command", TRUE, &command, error) ||
      !arg_int (args, "timeout", 1, OPENAI_BASH_MAX_TIMEOUT_MS, &timeout_ms, error))
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
  return text_result (g_string_free (g_steal_pointer (&out), FALSE));
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
  { "Glob", FALSE, TRUE, tool_glob,
    "Finds files of the workspace by a glob pattern such as **/*.c or src/**/*.{h,c}; newest first.",
    "{\"type\":\"object\",\"properties\":{"
    "\"pattern\":{\"type\":\"string\",\"description\":\"The glob to match, relative to path\"},"
    "\"path\":{\"type\":\"string\",\"description\":\"The directory to search (default: the workspace)\"}},"
    "\"required\":[\"pattern\"],\"additionalProperties\":false}" },
  { "Grep", FALSE, TRUE, tool_grep,
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
  { "LS", FALSE, TRUE, tool_ls,
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

OpenaiToolEnv *
openai_tool_env_new (SubagentIsolationContext  *isolation,
                     const char * const        *write_scope,
                     const char * const        *hidden_env,
                     OpenaiWatchdog            *watchdog,
                     GError                   **error)
{
  g_autoptr(OpenaiToolEnv) env = g_new0 (OpenaiToolEnv, 1);
  g_autoptr(GStrvBuilder) scope = g_strv_builder_new ();
  g_auto(GStrv) environ = g_get_environ ();

  env->root_fd = -1;
  env->isolation = g_object_ref (isolation);
  env->root = g_canonicalize_filename (subagent_isolation_context_get_child_root (isolation), NULL);
  env->watchdog = watchdog;
  env->root_fd = open (env->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (env->root_fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot open the workspace %s: %s",
                   env->root, g_strerror (saved));
      return NULL;
    }
  for (guint i = 0; write_scope != NULL && write_scope[i] != NULL; i++)
    {
      g_autofree char *rel = normalize_relative (write_scope[i], NULL);

      if (rel != NULL)
        g_strv_builder_add (scope, rel);
    }
  env->write_scope = g_strv_builder_end (scope);
  /* The model's commands never see the API key or approval secrets. */
  for (guint i = 0; hidden_env != NULL && hidden_env[i] != NULL; i++)
    environ = g_environ_unsetenv (environ, hidden_env[i]);
  env->environ = g_steal_pointer (&environ);
  return g_steal_pointer (&env);
}

void
openai_tool_env_free (OpenaiToolEnv *env)
{
  if (env == NULL)
    return;
  g_clear_object (&env->isolation);
  g_free (env->root);
  if (env->root_fd >= 0)
    close (env->root_fd);
  g_strfreev (env->write_scope);
  g_strfreev (env->environ);
  g_free (env);
}
