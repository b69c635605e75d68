/* subagent-yaml.c: YAML text to json-glib nodes through libyaml's event API.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "subagent.h"
#include "subagent-yaml-private.h"

/* Bounds for untrusted text: deep nesting and alias expansion ("billion
 * laughs") would otherwise cost unbounded stack or memory. */
#define YAML_MAX_DEPTH 256
#define YAML_MAX_NODES 250000

typedef struct {
  JsonNode *node;               /* borrowed: owned by its parent or by Builder.root */
  char *pointer;
  char *pending_key;            /* objects: the key that waits for its value */
  SubagentYamlMark key_mark;
  guint index;                  /* arrays: the next item's index */
  char *anchor;                 /* registered when the container ends */
  guint nodes_at_start;
} Frame;

typedef struct {
  JsonNode *node;
  guint size;
} Anchor;

typedef struct {
  const char *text;
  gsize len;
  const char *filename;
  SubagentYamlParseInfo *info;
  guint first_line;
  GArray *stack;                /* Frame */
  JsonNode *root;
  GHashTable *anchors;          /* char* → Anchor* */
  guint n_nodes;
  guint n_documents;
  GError *error;
} Builder;

static void
frame_clear (gpointer data)
{
  Frame *frame = data;

  g_free (frame->pointer);
  g_free (frame->pending_key);
  g_free (frame->anchor);
}

static void
anchor_free (gpointer data)
{
  Anchor *anchor = data;

  json_node_unref (anchor->node);
  g_free (anchor);
}

void
subagent_yaml_parse_info_clear (SubagentYamlParseInfo *info)
{
  g_clear_pointer (&info->problem, g_free);
  g_clear_pointer (&info->marks, g_hash_table_unref);
}

gboolean
subagent_yaml_parse_info_get_mark (const SubagentYamlParseInfo *info,
                                   const char                  *pointer,
                                   SubagentYamlMark            *mark)
{
  const SubagentYamlMark *found;

  if (info == NULL || info->marks == NULL)
    return FALSE;
  found = g_hash_table_lookup (info->marks, pointer);
  if (found == NULL)
    return FALSE;
  if (mark != NULL)
    *mark = *found;
  return TRUE;
}

char *
subagent_yaml_pointer_escape (const char *token)
{
  GString *out = g_string_new (NULL);

  for (const char *p = token; *p; p++)
    {
      if (*p == '~')
        g_string_append (out, "~0");
      else if (*p == '/')
        g_string_append (out, "~1");
      else
        g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

static SubagentYamlMark
builder_mark (Builder           *b,
              const yaml_mark_t *mark)
{
  SubagentYamlMark m = { (guint) mark->line + b->first_line, (guint) mark->column + 1 };

  return m;
}

static void
builder_fail (Builder          *b,
              SubagentYamlMark  mark,
              const char       *format,
              ...) G_GNUC_PRINTF (3, 4);

static void
builder_fail (Builder          *b,
              SubagentYamlMark  mark,
              const char       *format,
              ...)
{
  g_autofree char *problem = NULL;
  va_list ap;

  if (b->error != NULL)
    return;
  va_start (ap, format);
  problem = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error (&b->error, SUBAGENT_DEF_ERROR, SUBAGENT_DEF_ERROR_PARSE,
               "%s:%u:%u: %s", b->filename ? b->filename : "<data>",
               mark.line, mark.column, problem);
  if (b->info != NULL)
    {
      b->info->error_mark = mark;
      g_free (b->info->problem);
      b->info->problem = g_steal_pointer (&problem);
    }
}

static void
builder_record_mark (Builder          *b,
                     char             *pointer,
                     SubagentYamlMark  mark)
{
  SubagentYamlMark *copy;

  if (b->info == NULL || !b->info->want_marks)
    {
      g_free (pointer);
      return;
    }
  copy = g_new (SubagentYamlMark, 1);
  *copy = mark;
  g_hash_table_replace (b->info->marks, pointer, copy);
}

static gboolean
is_one_of (const char         *text,
           const char * const *words)
{
  for (guint i = 0; words[i] != NULL; i++)
    if (g_str_equal (text, words[i]))
      return TRUE;
  return FALSE;
}

/* YAML 1.2 core schema for ints and floats, plus the yes/no booleans people
 * still write; .inf and .nan stay strings since JSON cannot hold them. */
static JsonNode *
resolve_plain_scalar (const char *text)
{
  static const char * const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
  static const char * const trues[] = { "true", "True", "TRUE", "yes", "Yes", "YES", NULL };
  static const char * const falses[] = { "false", "False", "FALSE", "no", "No", "NO", NULL };
  JsonNode *node = json_node_alloc ();
  const char *digits = text;
  char *end = NULL;

  if (is_one_of (text, nulls))
    return json_node_init_null (node);
  if (is_one_of (text, trues))
    return json_node_init_boolean (node, TRUE);
  if (is_one_of (text, falses))
    return json_node_init_boolean (node, FALSE);

  if (*digits == '-' || *digits == '+')
    digits++;
  if (g_str_has_prefix (text, "0x") || g_str_has_prefix (text, "0o"))
    {
      guint base = text[1] == 'x' ? 16 : 8;
      guint64 value;

      errno = 0;
      value = g_ascii_strtoull (text + 2, &end, base);
      if (text[2] != '\0' && *end == '\0' && errno == 0 && value <= G_MAXINT64)
        return json_node_init_int (node, (gint64) value);
    }
  else if (g_ascii_isdigit (*digits) || (*digits == '.' && g_ascii_isdigit (digits[1])))
    {
      const char *p = digits;
      gboolean is_float = FALSE;

      while (g_ascii_isdigit (*p))
        p++;
      if (*p == '.')
        {
          is_float = TRUE;
          for (p++; g_ascii_isdigit (*p); p++)
            ;
        }
      if (*p == 'e' || *p == 'E')
        {
          const char *exp = p + 1;

          if (*exp == '-' || *exp == '+')
            exp++;
          if (g_ascii_isdigit (*exp))
            {
              is_float = TRUE;
              for (p = exp; g_ascii_isdigit (*p); p++)
                ;
            }
        }
      if (*p == '\0')
        {
          if (!is_float)
            {
              gint64 value;

              errno = 0;
              value = g_ascii_strtoll (text, &end, 10);
              if (errno == 0 && *end == '\0')
                return json_node_init_int (node, value);
            }
          /* a float, or an int too large for gint64 */
          return json_node_init_double (node, g_ascii_strtod (text, NULL));
        }
    }
  return json_node_init_string (node, text);
}

static JsonNode *
deep_copy (JsonNode *node)
{
  JsonNode *copy;

  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObject *object = json_node_get_object (node);
        g_autoptr(JsonObject) out = json_object_new ();
        g_autoptr(GList) members = json_object_get_members (object);

        for (GList *l = members; l != NULL; l = l->next)
          json_object_set_member (out, l->data, deep_copy (json_object_get_member (object, l->data)));
        copy = json_node_init_object (json_node_alloc (), out);
        break;
      }
    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);
        g_autoptr(JsonArray) out = json_array_sized_new (json_array_get_length (array));

        for (guint i = 0; i < json_array_get_length (array); i++)
          json_array_add_element (out, deep_copy (json_array_get_element (array, i)));
        copy = json_node_init_array (json_node_alloc (), out);
        break;
      }
    case JSON_NODE_VALUE:
    case JSON_NODE_NULL:
    default:
      copy = json_node_copy (node);
      break;
    }
  return copy;
}

static Frame *
builder_top (Builder *b)
{
  return b->stack->len ? &g_array_index (b->stack, Frame, b->stack->len - 1) : NULL;
}

/* Attaches a finished value (or a container about to be filled) where the
 * parse currently is; returns its pointer, or NULL after an error. Takes
 * @node. */
static char *
builder_attach (Builder          *b,
                JsonNode         *node,
                SubagentYamlMark  mark)
{
  Frame *top = builder_top (b);
  char *pointer = NULL;

  if (top == NULL)
    {
      g_assert (b->root == NULL);
      b->root = node;
      builder_record_mark (b, g_strdup (""), mark);
      return g_strdup ("");
    }

  if (JSON_NODE_HOLDS_OBJECT (top->node))
    {
      g_autofree char *escaped = subagent_yaml_pointer_escape (top->pending_key);

      pointer = g_strconcat (top->pointer, "/", escaped, NULL);
      json_object_set_member (json_node_get_object (top->node), top->pending_key, node);
      builder_record_mark (b, g_strdup (pointer), top->key_mark);
      g_clear_pointer (&top->pending_key, g_free);
    }
  else
    {
      pointer = g_strdup_printf ("%s/%u", top->pointer, top->index++);
      json_array_add_element (json_node_get_array (top->node), node);
      builder_record_mark (b, g_strdup (pointer), mark);
    }
  return pointer;
}

static gboolean
builder_expects_key (Builder *b)
{
  Frame *top = builder_top (b);

  return top != NULL && JSON_NODE_HOLDS_OBJECT (top->node) && top->pending_key == NULL;
}

static gboolean
builder_count_nodes (Builder          *b,
                     guint             n,
                     SubagentYamlMark  mark)
{
  if (n > YAML_MAX_NODES - b->n_nodes)
    {
      builder_fail (b, mark, "the document expands to more than %u values (through aliases?); refusing it",
                    YAML_MAX_NODES);
      return FALSE;
    }
  b->n_nodes += n;
  return TRUE;
}

static void
builder_register_anchor (Builder    *b,
                         const char *name,
                         JsonNode   *node,
                         guint       size)
{
  Anchor *anchor = g_new (Anchor, 1);

  anchor->node = json_node_ref (node);
  anchor->size = size;
  g_hash_table_replace (b->anchors, g_strdup (name), anchor);
}

static void
builder_scalar (Builder      *b,
                yaml_event_t *event)
{
  SubagentYamlMark mark = builder_mark (b, &event->start_mark);
  const char *value = (const char *) event->data.scalar.value;
  const char *tag = (const char *) event->data.scalar.tag;
  gboolean as_string;
  JsonNode *node;

  if (builder_expects_key (b))
    {
      Frame *top = builder_top (b);

      if (json_object_has_member (json_node_get_object (top->node), value))
        {
          builder_fail (b, mark, "duplicate key “%s”; each key may appear once", value);
          return;
        }
      top->pending_key = g_strdup (value);
      top->key_mark = mark;
      return;
    }

  if (!builder_count_nodes (b, 1, mark))
    return;
  as_string = event->data.scalar.style != YAML_PLAIN_SCALAR_STYLE
              || (tag != NULL && (g_str_equal (tag, "!") || g_str_equal (tag, YAML_STR_TAG)));
  if (as_string)
    node = json_node_init_string (json_node_alloc (), value);
  else
    node = resolve_plain_scalar (value);
  if (event->data.scalar.anchor != NULL)
    builder_register_anchor (b, (const char *) event->data.scalar.anchor, node, 1);
  g_free (builder_attach (b, node, mark));
}

static void
builder_start_container (Builder      *b,
                         yaml_event_t *event,
                         gboolean      mapping)
{
  SubagentYamlMark mark = builder_mark (b, &event->start_mark);
  const yaml_char_t *anchor = mapping ? event->data.mapping_start.anchor : event->data.sequence_start.anchor;
  JsonNode *node;
  Frame frame = { 0 };

  if (builder_expects_key (b))
    {
      builder_fail (b, mark, "a mapping key must be a plain value, not a %s", mapping ? "mapping" : "sequence");
      return;
    }
  if (b->stack->len >= YAML_MAX_DEPTH)
    {
      builder_fail (b, mark, "nesting deeper than %u levels; refusing it", YAML_MAX_DEPTH);
      return;
    }
  if (!builder_count_nodes (b, 1, mark))
    return;

  if (mapping)
    {
      g_autoptr(JsonObject) object = json_object_new ();
      node = json_node_init_object (json_node_alloc (), object);
    }
  else
    {
      g_autoptr(JsonArray) array = json_array_new ();
      node = json_node_init_array (json_node_alloc (), array);
    }
  frame.node = node;
  frame.anchor = g_strdup ((const char *) anchor);
  frame.nodes_at_start = b->n_nodes;
  frame.pointer = builder_attach (b, node, mark);
  g_array_append_val (b->stack, frame);
}

static void
builder_end_container (Builder *b)
{
  Frame *top = builder_top (b);

  g_assert (top != NULL);
  if (top->anchor != NULL)
    builder_register_anchor (b, top->anchor, top->node, b->n_nodes - top->nodes_at_start + 1);
  g_array_set_size (b->stack, b->stack->len - 1);
}

static void
builder_alias (Builder      *b,
               yaml_event_t *event)
{
  SubagentYamlMark mark = builder_mark (b, &event->start_mark);
  const char *name = (const char *) event->data.alias.anchor;
  Anchor *anchor = g_hash_table_lookup (b->anchors, name);

  if (builder_expects_key (b))
    {
      builder_fail (b, mark, "a mapping key must be a plain value, not an alias");
      return;
    }
  if (anchor == NULL)
    {
      builder_fail (b, mark, "alias “*%s” refers to no earlier, complete anchor “&%s”", name, name);
      return;
    }
  if (!builder_count_nodes (b, anchor->size, mark))
    return;
  g_free (builder_attach (b, deep_copy (anchor->node), mark));
}

static void
builder_fail_from_parser (Builder       *b,
                          yaml_parser_t *parser)
{
  SubagentYamlMark mark;
  g_autofree char *context = NULL;

  if (parser->error == YAML_READER_ERROR)
    {
      /* Reader errors (bad encoding) carry a byte offset, not a mark. */
      gsize offset = MIN (parser->problem_offset, b->len);

      mark.line = b->first_line;
      mark.column = 1;
      for (gsize i = 0; i < offset; i++)
        {
          if (b->text[i] == '\n')
            {
              mark.line++;
              mark.column = 1;
            }
          else
            mark.column++;
        }
      builder_fail (b, mark, "%s; the file must be UTF-8 text", parser->problem ? parser->problem : "cannot read the text");
      return;
    }
  if (parser->error == YAML_MEMORY_ERROR)
    {
      mark.line = mark.column = 0;
      builder_fail (b, mark, "out of memory while parsing");
      return;
    }

  mark = builder_mark (b, &parser->problem_mark);
  if (parser->context != NULL)
    context = g_strdup_printf (" (%s at line %u, column %u)", parser->context,
                               (guint) parser->context_mark.line + b->first_line,
                               (guint) parser->context_mark.column + 1);
  builder_fail (b, mark, "%s%s", parser->problem ? parser->problem : "invalid YAML",
                context ? context : "");
}

JsonNode *
subagent_yaml_parse_full (const char             *text,
                          gssize                  len,
                          const char             *filename,
                          SubagentYamlParseInfo  *info,
                          GError                **error)
{
  yaml_parser_t parser;
  Builder b = { 0 };
  gboolean done = FALSE;

  g_return_val_if_fail (text != NULL || len == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  b.text = text ? text : "";
  b.len = len < 0 ? strlen (text) : (gsize) len;
  b.filename = filename;
  b.info = info;
  b.first_line = (info != NULL && info->first_line > 0) ? info->first_line : 1;
  b.stack = g_array_new (FALSE, TRUE, sizeof (Frame));
  g_array_set_clear_func (b.stack, frame_clear);
  b.anchors = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, anchor_free);
  if (info != NULL)
    {
      g_clear_pointer (&info->problem, g_free);
      info->error_mark.line = info->error_mark.column = 0;
      g_clear_pointer (&info->marks, g_hash_table_unref);
      if (info->want_marks)
        info->marks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
    }

  yaml_parser_initialize (&parser);
  yaml_parser_set_input_string (&parser, (const unsigned char *) b.text, b.len);
  yaml_parser_set_encoding (&parser, YAML_UTF8_ENCODING);

  while (!done && b.error == NULL)
    {
      yaml_event_t event;

      if (!yaml_parser_parse (&parser, &event))
        {
          builder_fail_from_parser (&b, &parser);
          break;
        }
      switch (event.type)
        {
        case YAML_STREAM_END_EVENT:
          done = TRUE;
          break;
        case YAML_DOCUMENT_START_EVENT:
          if (b.n_documents++ > 0)
            builder_fail (&b, builder_mark (&b, &event.start_mark),
                          "a second YAML document starts here; a file holds one document");
          break;
        case YAML_SCALAR_EVENT:
          builder_scalar (&b, &event);
          break;
        case YAML_MAPPING_START_EVENT:
          builder_start_container (&b, &event, TRUE);
          break;
        case YAML_SEQUENCE_START_EVENT:
          builder_start_container (&b, &event, FALSE);
          break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
          builder_end_container (&b);
          break;
        case YAML_ALIAS_EVENT:
          builder_alias (&b, &event);
          break;
        case YAML_NO_EVENT:
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
        default:
          break;
        }
      yaml_event_delete (&event);
    }
  yaml_parser_delete (&parser);

  g_array_unref (b.stack);
  g_hash_table_unref (b.anchors);
  if (b.error != NULL)
    {
      g_clear_pointer (&b.root, json_node_unref);
      if (info != NULL)
        g_clear_pointer (&info->marks, g_hash_table_unref);
      g_propagate_error (error, b.error);
      return NULL;
    }
  if (b.root == NULL)
    b.root = json_node_new (JSON_NODE_NULL);
  return b.root;
}

JsonNode *
subagent_yaml_parse (const char  *text,
                     gssize       len,
                     const char  *filename,
                     GError     **error)
{
  return subagent_yaml_parse_full (text, len, filename, NULL, error);
}

JsonNode *
subagent_yaml_parse_file (const char             *path,
                          SubagentYamlParseInfo  *info,
                          GError                **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;

  g_return_val_if_fail (path != NULL, NULL);

  if (!g_file_get_contents (path, &text, &len, error))
    return NULL;
  return subagent_yaml_parse_full (text, (gssize) len, path, info, error);
}

/* Length of the line break at @p (0, 1 or 2 bytes). */
static gsize
line_break_len (const char *p)
{
  if (p[0] == '\r' && p[1] == '\n')
    return 2;
  if (p[0] == '\n' || p[0] == '\r')
    return 1;
  return 0;
}

/* If the line at @p is exactly @marker (trailing blanks allowed), returns the
 * start of the next line; else NULL. */
static const char *
match_marker_line (const char *p,
                   const char *marker)
{
  gsize n = strlen (marker);

  if (strncmp (p, marker, n) != 0)
    return NULL;
  p += n;
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p == '\0')
    return p;
  if (line_break_len (p) == 0)
    return NULL;
  return p + line_break_len (p);
}

static const char *
skip_bom (const char *text)
{
  return g_str_has_prefix (text, "\xEF\xBB\xBF") ? text + 3 : text;
}

gboolean
subagent_yaml_has_front_matter_opening (const char *text)
{
  g_return_val_if_fail (text != NULL, FALSE);

  return match_marker_line (skip_bom (text), "---") != NULL;
}

gboolean
subagent_yaml_split_front_matter (const char  *text,
                                  char       **front,
                                  char       **body,
                                  guint       *body_line)
{
  const char *start;
  const char *line;
  guint line_no = 2;

  g_return_val_if_fail (text != NULL, FALSE);

  start = match_marker_line (skip_bom (text), "---");
  for (line = start; line != NULL && *line != '\0'; line_no++)
    {
      const char *after = match_marker_line (line, "---");
      const char *eol;

      if (after == NULL)
        after = match_marker_line (line, "...");
      if (after != NULL)
        {
          if (front != NULL)
            *front = g_strndup (start, line - start);
          if (body != NULL)
            *body = g_strdup (after);
          if (body_line != NULL)
            *body_line = line_no + 1;
          return TRUE;
        }
      eol = line + strcspn (line, "\r\n");
      line = eol + line_break_len (eol);
    }

  if (front != NULL)
    *front = NULL;
  if (body != NULL)
    *body = g_strdup (text);
  if (body_line != NULL)
    *body_line = 1;
  return FALSE;
}
