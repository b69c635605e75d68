/* openai-tools-walk.c: the built-in tools that walk the workspace: Glob,
 * Grep and LS (never into .git or .subagent, never through a symlink).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "openai-tools-private.h"

#define GREP_FILE_MAX (5 * 1024 * 1024)
#define LIST_MAX 1000
#define WALK_MAX 100000

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
  return openai_tools_open_beneath (env, rel, O_RDONLY | O_DIRECTORY, 0, FALSE, error);
}

JsonNode *
openai_tool_glob (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data, GError **error)
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

  if (!openai_tools_arg_string (args, "pattern", TRUE, &pattern, error) ||
      !openai_tools_arg_string (args, "path", FALSE, &path, error) ||
      (rel = openai_tools_workspace_path (env, path, error)) == NULL ||
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
  return openai_tools_text_result (g_string_free (g_steal_pointer (&out), FALSE));
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
  g_autoptr(GBytes) bytes = openai_tools_read_fd_all (fd, rel, GREP_FILE_MAX, NULL);
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

JsonNode *
openai_tool_grep (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data, GError **error)
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

  if (!openai_tools_arg_string (args, "pattern", TRUE, &pattern, error) ||
      !openai_tools_arg_string (args, "path", FALSE, &path, error) ||
      !openai_tools_arg_string (args, "glob", FALSE, &glob, error) ||
      !openai_tools_arg_string (args, "output_mode", FALSE, &mode, error) ||
      !openai_tools_arg_int (args, "head_limit", 0, G_MAXINT32, &head_limit, error) ||
      (rel = openai_tools_workspace_path (env, path, error)) == NULL)
    return NULL;
  regex = g_regex_new (pattern, (openai_tools_arg_bool (args, "-i") ? G_REGEX_CASELESS : 0) | G_REGEX_OPTIMIZE, 0,
                       error);
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
  grep.numbers = json_object_has_member (args, "-n") ? openai_tools_arg_bool (args, "-n") : TRUE;
  grep.head_limit = head_limit;
  grep.out = out;

  fd = openai_tools_open_beneath (env, rel, O_RDONLY, 0, FALSE, error);
  if (fd < 0)
    return NULL;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
    grep_file (&grep, rel, fd);
  else
    walk_dir (&walk, fd, rel, grep_visit, &grep);
  close (fd);
  if (out->len == 0)
    g_string_append (out, grep.mode == GREP_CONTENT ? "No matches\n" : "No files found\n");
  return openai_tools_text_result (g_string_free (g_steal_pointer (&out), FALSE));
}

JsonNode *
openai_tool_ls (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data, GError **error)
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

  if (!openai_tools_arg_string (args, "path", FALSE, &path, error) ||
      (rel = openai_tools_workspace_path (env, path, error)) == NULL)
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
  return openai_tools_text_result (g_string_free (g_steal_pointer (&out), FALSE));
}

