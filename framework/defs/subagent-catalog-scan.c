/* subagent-catalog-scan.c: reading the definition files of a workspace into
 * definitions and diagnostics. Runs in worker threads: touches no catalog.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "subagent.h"
#include "subagent-catalog-private.h"
#include "subagent-def-private.h"
#include "subagent-yaml-private.h"

/* Definitions are a few kilobytes; anything this large is a mistake. */
#define MAX_DEFINITION_SIZE (1024 * 1024)

typedef enum {
  FORMAT_NONE,
  FORMAT_YAML,
  FORMAT_JSON,
  FORMAT_MARKDOWN,
} Format;

/* One file being read. */
typedef struct {
  SubagentCatalogScan *scan;
  const char *path;
  const char *text;
  gsize len;
  Format format;
  guint first_line;
  GHashTable *marks;            /* JSON pointer → SubagentYamlMark*, may be NULL */
  gboolean marks_tried;
} FileCtx;

void
subagent_catalog_scan_free (SubagentCatalogScan *scan)
{
  g_free (scan->root);
  g_clear_pointer (&scan->defs, g_ptr_array_unref);
  g_clear_pointer (&scan->diagnostics, g_ptr_array_unref);
  g_free (scan);
}

char *
subagent_catalog_normalize_name (const char *name)
{
  char *key = g_ascii_strdown (name, -1);

  g_strdelimit (key, "_", '-');
  return key;
}

static void
add_diagnostic (SubagentCatalogScan        *scan,
                const char                 *file,
                SubagentYamlMark            mark,
                SubagentDiagnosticSeverity  severity,
                SubagentDefError            code,
                const char                 *format,
                ...) G_GNUC_PRINTF (6, 7);

static void
add_diagnostic (SubagentCatalogScan        *scan,
                const char                 *file,
                SubagentYamlMark            mark,
                SubagentDiagnosticSeverity  severity,
                SubagentDefError            code,
                const char                 *format,
                ...)
{
  g_autofree char *reason = NULL;
  va_list ap;

  va_start (ap, format);
  reason = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_ptr_array_add (scan->diagnostics,
                   subagent_diagnostic_new (file, mark.line, mark.column, severity, code, reason));
}

static const SubagentYamlMark no_mark = { 0, 0 };

static gboolean
path_is_under (const char *path,
               const char *root)
{
  gsize n = strlen (root);

  if (g_str_equal (root, "/"))
    return path[0] == '/';
  return strncmp (path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* @path inside the root, for messages. */
static const char *
relative_path (SubagentCatalogScan *scan,
               const char          *path)
{
  gsize n = strlen (scan->root);

  if (strncmp (path, scan->root, n) == 0 && path[n] == '/')
    return path + n + 1;
  return path;
}

/* Where a JSON pointer (or the nearest enclosing value) starts. */
static SubagentYamlMark
file_mark (FileCtx    *ctx,
           const char *pointer)
{
  g_autofree char *p = g_strdup (pointer ? pointer : "");

  /* JSON has no positions in json-glib; the YAML reader gives them for
   * the same text, as JSON is (nearly always) YAML too. */
  if (!ctx->marks_tried && ctx->format == FORMAT_JSON)
    {
      g_auto(SubagentYamlParseInfo) info = { .want_marks = TRUE };
      g_autoptr(JsonNode) node = subagent_yaml_parse_full (ctx->text, ctx->len, ctx->path, &info, NULL);

      if (node != NULL)
        ctx->marks = g_steal_pointer (&info.marks);
    }
  ctx->marks_tried = TRUE;

  while (ctx->marks != NULL)
    {
      SubagentYamlMark *mark = g_hash_table_lookup (ctx->marks, p);
      char *slash;

      if (mark != NULL)
        return *mark;
      slash = strrchr (p, '/');
      if (slash == NULL)
        break;
      *slash = '\0';
    }
  return no_mark;
}

static void
file_diagnostic (FileCtx                    *ctx,
                 const char                 *pointer,
                 SubagentDiagnosticSeverity  severity,
                 SubagentDefError            code,
                 const char                 *reason)
{
  add_diagnostic (ctx->scan, ctx->path, file_mark (ctx, pointer), severity, code, "%s", reason);
}

/* Positions of json-glib errors are only in the message: "<data>:3:8: Parse error: …". */
static void
json_error_position (const char       *message,
                     SubagentYamlMark *mark,
                     const char      **problem)
{
  int consumed = 0;

  *mark = no_mark;
  *problem = message;
  if (sscanf (message, "<data>:%u:%u: %n", &mark->line, &mark->column, &consumed) >= 2 && consumed > 0)
    {
      *problem = message + consumed;
      if (g_str_has_prefix (*problem, "Parse error: "))
        *problem += strlen ("Parse error: ");
    }
  else
    *mark = no_mark;
}

static const char *
node_kind (JsonNode *node)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_ARRAY: return "a list";
    case JSON_NODE_NULL: return "empty";
    case JSON_NODE_VALUE: return "a single value";
    case JSON_NODE_OBJECT:
    default: return "a mapping";
    }
}

/* Parses the text of @ctx into the object of fields; NULL after a diagnostic. */
static JsonObject *
read_fields (FileCtx *ctx)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *front = NULL;
  g_autofree char *body = NULL;
  const char *yaml_text = ctx->text;
  gssize yaml_len = ctx->len;
  guint body_line = 1;
  SubagentYamlMark start = { 1, 1 };

  if (ctx->format == FORMAT_JSON)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();

      if (!json_parser_load_from_data (parser, ctx->text, ctx->len, &error))
        {
          SubagentYamlMark mark;
          const char *problem;

          json_error_position (error->message, &mark, &problem);
          add_diagnostic (ctx->scan, ctx->path, mark, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR,
                          SUBAGENT_DEF_ERROR_PARSE, "invalid JSON: %s", problem);
          return NULL;
        }
      root = json_parser_steal_root (parser);
      if (root == NULL)
        root = json_node_new (JSON_NODE_NULL);
    }
  else
    {
      g_auto(SubagentYamlParseInfo) info = { .want_marks = TRUE };

      if (ctx->format == FORMAT_MARKDOWN)
        {
          if (!subagent_yaml_split_front_matter (ctx->text, &front, &body, &body_line))
            {
              gboolean opened = subagent_yaml_has_front_matter_opening (ctx->text);

              add_diagnostic (ctx->scan, ctx->path, start, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR,
                              opened ? SUBAGENT_DEF_ERROR_PARSE : SUBAGENT_DEF_ERROR_MISSING_NAME,
                              opened ? "the front matter opened by “---” on line 1 is never closed by a “---” line"
                                     : "there is no YAML front matter, so no “name”; start the file with a "
                                       "“---” line, the fields, and another “---” line");
              return NULL;
            }
          yaml_text = front;
          yaml_len = -1;
          info.first_line = ctx->first_line = 2;
        }
      root = subagent_yaml_parse_full (yaml_text, yaml_len, ctx->path, &info, &error);
      if (root == NULL)
        {
          add_diagnostic (ctx->scan, ctx->path, info.error_mark, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR,
                          SUBAGENT_DEF_ERROR_PARSE, "invalid YAML: %s", info.problem);
          return NULL;
        }
      ctx->marks = g_steal_pointer (&info.marks);
      ctx->marks_tried = TRUE;
    }

  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      gboolean empty = JSON_NODE_HOLDS_NULL (root);
      SubagentYamlMark top = { ctx->first_line, 1 };

      add_diagnostic (ctx->scan, ctx->path, empty ? top : file_mark (ctx, ""),
                      SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR,
                      empty ? SUBAGENT_DEF_ERROR_MISSING_NAME : SUBAGENT_DEF_ERROR_PARSE,
                      "the %s is %s; a definition is a mapping of fields with at least “name”",
                      ctx->format == FORMAT_MARKDOWN ? "front matter" : "file", node_kind (root));
      return NULL;
    }

  if (ctx->format == FORMAT_MARKDOWN)
    {
      JsonObject *object = json_node_get_object (root);

      g_strstrip (body);
      if (*body != '\0')
        {
          const char *keys[] = { "system_prompt", "prompt" };

          for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
            if (json_object_has_member (object, keys[i]))
              {
                g_autofree char *pointer = g_strconcat ("/", keys[i], NULL);
                g_autofree char *reason = g_strdup_printf ("“%s” in the front matter is ignored: the body "
                                                           "(from line %u) is the system prompt", keys[i], body_line);

                file_diagnostic (ctx, pointer, SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING,
                                 SUBAGENT_DEF_ERROR_INVALID_VALUE, reason);
                json_object_remove_member (object, keys[i]);
              }
          json_object_set_string_member (object, "system_prompt", body);
        }
    }
  return json_object_ref (json_node_get_object (root));
}

static SubagentDef *
read_definition (FileCtx *ctx)
{
  g_autoptr(JsonObject) object = read_fields (ctx);
  g_autoptr(GList) members = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *pointer = NULL;
  g_autofree char *reason = NULL;
  SubagentDef *def;

  if (object == NULL)
    return NULL;

  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    if (!subagent_def_is_known_key (l->data))
      {
        g_autofree char *escaped = subagent_yaml_pointer_escape (l->data);
        g_autofree char *key_pointer = g_strconcat ("/", escaped, NULL);
        g_autofree char *why = g_strdup_printf ("“%s” is not a definition field; ignored", (const char *) l->data);

        file_diagnostic (ctx, key_pointer, SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING, SUBAGENT_DEF_ERROR_UNKNOWN_KEY, why);
      }

  def = subagent_def_new_from_json_full (object, ctx->path, &pointer, &reason, &error);
  if (def == NULL)
    {
      file_diagnostic (ctx, pointer, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, error->code, reason);
      return NULL;
    }
  if (g_str_equal (subagent_def_get_isolation (def), SUBAGENT_ISOLATION_CONTAINER_ALIAS))
    file_diagnostic (ctx, "/isolation", SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING, SUBAGENT_DEF_ERROR_DEPRECATED,
                     "isolation “container” is deprecated; write the backend it stands for "
                     "(the plugin whose descriptor lists it in Aliases=, see `subagentctl plugins`)");
  return def;
}

static Format
format_for (const char *name,
            gboolean    claude)
{
  const char *dot = strrchr (name, '.');
  g_autofree char *suffix = dot ? g_ascii_strdown (dot, -1) : NULL;

  if (suffix == NULL)
    return FORMAT_NONE;
  if (g_str_equal (suffix, ".md"))
    return FORMAT_MARKDOWN;
  if (claude)
    return FORMAT_NONE;
  if (g_str_equal (suffix, ".yaml") || g_str_equal (suffix, ".yml"))
    return FORMAT_YAML;
  if (g_str_equal (suffix, ".json"))
    return FORMAT_JSON;
  return FORMAT_NONE;
}

/* Reads one file; returns its definition (and where its name is) or NULL
 * after diagnostics. */
static SubagentDef *
scan_file (SubagentCatalogScan *scan,
           const char          *path,
           const char          *name,
           gboolean             claude,
           SubagentYamlMark    *name_mark)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *real = NULL;
  const char *invalid = NULL;
  struct stat st;
  FileCtx ctx = { scan, path, NULL, 0, FORMAT_NONE, 1, NULL, FALSE };
  SubagentDef *def;
  gsize len = 0;

  if (stat (path, &st) != 0)
    {
      add_diagnostic (scan, path, no_mark, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, SUBAGENT_DEF_ERROR_UNREADABLE,
                      "cannot read it: %s", g_strerror (errno));
      return NULL;
    }
  if (S_ISDIR (st.st_mode))
    return NULL;                /* definitions are not searched in subdirectories */
  ctx.format = format_for (name, claude);
  if (ctx.format == FORMAT_NONE)
    {
      add_diagnostic (scan, path, no_mark, SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING, SUBAGENT_DEF_ERROR_BAD_SUFFIX,
                      claude ? "not an agent file (Claude Code agents end in .md); ignored"
                             : "not a definition file (definitions end in .yaml, .yml, .json or .md); ignored");
      return NULL;
    }
  if (!S_ISREG (st.st_mode))
    {
      add_diagnostic (scan, path, no_mark, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, SUBAGENT_DEF_ERROR_UNREADABLE,
                      "not a regular file; skipped");
      return NULL;
    }
  real = realpath (path, NULL);
  if (real == NULL || !path_is_under (real, scan->root))
    {
      add_diagnostic (scan, path, no_mark, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, SUBAGENT_DEF_ERROR_UNREADABLE,
                      "resolves to %s, outside the workspace root %s; refusing to read it",
                      real ? real : "an unresolvable path", scan->root);
      return NULL;
    }
  if (st.st_size > MAX_DEFINITION_SIZE)
    {
      add_diagnostic (scan, path, no_mark, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, SUBAGENT_DEF_ERROR_UNREADABLE,
                      "larger than %d bytes; a definition is a small text file", MAX_DEFINITION_SIZE);
      return NULL;
    }
  if (!g_file_get_contents (real, &text, &len, &error))
    {
      add_diagnostic (scan, path, no_mark, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, SUBAGENT_DEF_ERROR_UNREADABLE,
                      "cannot read it: %s", error->message);
      return NULL;
    }
  if (!g_utf8_validate (text, len, &invalid))
    {
      SubagentYamlMark mark = { 1, 1 };

      for (const char *p = text; p < invalid; p = g_utf8_next_char (p))
        {
          mark.column++;
          if (*p == '\n')
            {
              mark.line++;
              mark.column = 1;
            }
        }
      add_diagnostic (scan, path, mark, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, SUBAGENT_DEF_ERROR_PARSE,
                      "not UTF-8 text (or it holds a NUL byte); save it as UTF-8");
      return NULL;
    }

  ctx.text = text;
  ctx.len = len;
  def = read_definition (&ctx);
  if (def != NULL)
    *name_mark = file_mark (&ctx, "/name");
  g_clear_pointer (&ctx.marks, g_hash_table_unref);
  return def;
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* Scans <root>/<relative>; definitions go to @found (normalised name → def),
 * where their names are to @name_marks (normalised name → SubagentYamlMark*). */
static gboolean
scan_directory (SubagentCatalogScan  *scan,
                const char           *relative,
                gboolean              claude,
                GHashTable           *found,
                GHashTable           *name_marks,
                GCancellable         *cancellable,
                GError              **error)
{
  g_autofree char *dir_path = g_build_filename (scan->root, relative, NULL);
  g_autofree char *real = realpath (dir_path, NULL);
  g_autoptr(GError) local = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (real == NULL)
    {
      if (errno != ENOENT)
        add_diagnostic (scan, dir_path, no_mark, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, SUBAGENT_DEF_ERROR_UNREADABLE,
                        "cannot open the definitions directory: %s", g_strerror (errno));
      return TRUE;              /* a missing directory just holds no definitions */
    }
  if (!path_is_under (real, scan->root))
    {
      add_diagnostic (scan, dir_path, no_mark, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, SUBAGENT_DEF_ERROR_UNREADABLE,
                      "resolves to %s, outside the workspace root %s; refusing to read it", real, scan->root);
      return TRUE;
    }
  dir = g_dir_open (real, 0, &local);
  if (dir == NULL)
    {
      add_diagnostic (scan, dir_path, no_mark, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, SUBAGENT_DEF_ERROR_UNREADABLE,
                      "cannot open the definitions directory: %s", local->message);
      return TRUE;
    }
  while ((name = g_dir_read_name (dir)) != NULL)
    if (name[0] != '.')         /* dot files: editor swap files, .gitkeep */
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);

  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir_path, names->pdata[i], NULL);
      g_autoptr(SubagentDef) def = NULL;
      g_autofree char *key = NULL;
      SubagentYamlMark name_mark = no_mark;
      SubagentDef *first;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      def = scan_file (scan, path, names->pdata[i], claude, &name_mark);
      if (def == NULL)
        continue;
      key = subagent_catalog_normalize_name (subagent_def_get_name (def));
      first = g_hash_table_lookup (found, key);
      if (first != NULL)
        {
          add_diagnostic (scan, path, name_mark, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, SUBAGENT_DEF_ERROR_DUPLICATE_NAME,
                          "name “%s” is already defined by %s (names ignore case, “-” and “_”); this file is skipped",
                          subagent_def_get_name (def), relative_path (scan, subagent_def_get_source_path (first)));
          continue;
        }
      g_hash_table_insert (name_marks, g_strdup (key), g_memdup2 (&name_mark, sizeof name_mark));
      g_hash_table_insert (found, g_steal_pointer (&key), g_steal_pointer (&def));
    }
  return TRUE;
}

int
subagent_catalog_compare_diagnostics (gconstpointer a,
                     gconstpointer b)
{
  const SubagentDiagnostic *da = *(SubagentDiagnostic * const *) a;
  const SubagentDiagnostic *db = *(SubagentDiagnostic * const *) b;
  int c = strcmp (subagent_diagnostic_get_file (da), subagent_diagnostic_get_file (db));

  if (c != 0)
    return c;
  if (subagent_diagnostic_get_line (da) != subagent_diagnostic_get_line (db))
    return subagent_diagnostic_get_line (da) < subagent_diagnostic_get_line (db) ? -1 : 1;
  if (subagent_diagnostic_get_column (da) != subagent_diagnostic_get_column (db))
    return subagent_diagnostic_get_column (da) < subagent_diagnostic_get_column (db) ? -1 : 1;
  return 0;
}

SubagentCatalogScan *
subagent_catalog_scan (const char    *root,
                       GCancellable  *cancellable,
                       GError       **error)
{
  g_autoptr(SubagentCatalogScan) scan = g_new0 (SubagentCatalogScan, 1);
  g_autoptr(GHashTable) claude = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  g_autoptr(GHashTable) own = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  g_autoptr(GHashTable) claude_marks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) own_marks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autofree char *real = realpath (root, NULL);
  GHashTableIter iter;
  gpointer key, value;
  int saved_errno = errno;

  scan->defs = g_ptr_array_new_with_free_func (g_object_unref);
  scan->diagnostics = g_ptr_array_new_with_free_func ((GDestroyNotify) subagent_diagnostic_unref);
  if (real == NULL || !g_file_test (real, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, G_IO_ERROR, real ? G_IO_ERROR_NOT_DIRECTORY : g_io_error_from_errno (saved_errno),
                   "Cannot load subagent definitions from %s: %s; pass a workspace directory",
                   root, real ? "not a directory" : g_strerror (saved_errno));
      return NULL;
    }
  scan->root = g_steal_pointer (&real);

  if (!scan_directory (scan, ".claude/agents", TRUE, claude, claude_marks, cancellable, error)
      || !scan_directory (scan, ".subagent/agents", FALSE, own, own_marks, cancellable, error))
    return NULL;

  g_hash_table_iter_init (&iter, claude);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      SubagentDef *winner = g_hash_table_lookup (own, key);

      if (winner != NULL)
        add_diagnostic (scan, subagent_def_get_source_path (value), *(SubagentYamlMark *) g_hash_table_lookup (claude_marks, key),
                        SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING, SUBAGENT_DEF_ERROR_DUPLICATE_NAME,
                        "“%s” is also defined by %s, which wins; this file is unused",
                        subagent_def_get_name (value), relative_path (scan, subagent_def_get_source_path (winner)));
      else
        g_ptr_array_add (scan->defs, g_object_ref (value));
    }
  g_hash_table_iter_init (&iter, own);
  while (g_hash_table_iter_next (&iter, &key, &value))
    g_ptr_array_add (scan->defs, g_object_ref (value));
  g_ptr_array_sort (scan->diagnostics, subagent_catalog_compare_diagnostics);
  return g_steal_pointer (&scan);
}

