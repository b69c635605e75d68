/* subagent-approval-json-scan.c: checking untrusted JSON text before
 * json-glib parses it (nesting depth, strict RFC 8259 syntax).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"

/* Sets @error as json-glib words a parse error ("<data>:LINE:COLUMN: …"),
 * which readers turn into diagnostics with a position. */
static gboolean
json_refuse (GError     **error,
             const char  *data,
             gsize        at,
             const char  *what)
{
  guint line = 1;
  gsize line_start = 0;

  for (gsize i = 0; i < at; i++)
    if (data[i] == '\n')
      {
        line++;
        line_start = i + 1;
      }
  g_set_error (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_INVALID_DATA,
               "<data>:%u:%" G_GSIZE_FORMAT ": Parse error: %s", line, at - line_start, what);
  return FALSE;
}

static gboolean
json_refuse_depth (GError **error,
                   guint    max_depth,
                   gsize    at)
{
  g_set_error (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_INVALID_DATA,
               "JSON nested deeper than %u levels (at byte %" G_GSIZE_FORMAT "); refusing it", max_depth, at);
  return FALSE;
}

/* The depth scan of subagent_json_check_depth(): brackets outside strings. */
static gboolean
scan_depth (const char  *data,
            gsize        len,
            guint        max_depth,
            GError     **error)
{
  guint depth = 0;
  gboolean in_string = FALSE;

  for (gsize i = 0; i < len; i++)
    {
      char c = data[i];

      if (in_string)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_string = FALSE;
        }
      else if (c == '"')
        in_string = TRUE;
      else if ((c == '[' || c == '{') && ++depth > max_depth)
        return json_refuse_depth (error, max_depth, i);
      else if ((c == ']' || c == '}') && depth > 0)
        depth--;
    }
  return TRUE;
}

static guint
hex4 (const char *p)
{
  guint value = 0;

  for (guint i = 0; i < 4; i++)
    {
      int digit = g_ascii_xdigit_value (p[i]);

      if (digit < 0)
        return G_MAXUINT;
      value = value * 16 + (guint) digit;
    }
  return value;
}

/* Past the string that starts at @p (its opening quote), or NULL. Escaped
 * surrogates must pair and NUL is refused, as json-glib would fail on them
 * mid-document. */
static const char *
skip_string (const char *p,
             const char *end)
{
  for (p++; p < end; p++)
    {
      guint unit;

      if (*p == '"')
        return p + 1;
      if ((guchar) *p < 0x20)
        return NULL;
      if (*p != '\\')
        continue;
      if (++p == end)
        return NULL;
      if (*p != '\0' && strchr ("\"\\/bfnrt", *p) != NULL)
        continue;
      if (*p != 'u' || end - p < 5 || (unit = hex4 (p + 1)) == G_MAXUINT || unit == 0
          || (unit >= 0xDC00 && unit <= 0xDFFF))
        return NULL;
      p += 4;
      if (unit >= 0xD800 && unit <= 0xDBFF)
        {
          guint low;

          if (end - p < 7 || p[1] != '\\' || p[2] != 'u' || (low = hex4 (p + 3)) < 0xDC00 || low > 0xDFFF)
            return NULL;
          p += 6;
        }
    }
  return NULL;
}

/* Past the number at @p (RFC 8259's grammar), or NULL. */
static const char *
skip_number (const char *p,
             const char *end)
{
  if (p < end && *p == '-')
    p++;
  if (p < end && *p == '0')
    p++;
  else if (p < end && *p >= '1' && *p <= '9')
    while (p < end && g_ascii_isdigit (*p))
      p++;
  else
    return NULL;
  if (p < end && *p == '.')
    {
      if (++p == end || !g_ascii_isdigit (*p))
        return NULL;
      while (p < end && g_ascii_isdigit (*p))
        p++;
    }
  if (p < end && (*p == 'e' || *p == 'E'))
    {
      if (++p < end && (*p == '+' || *p == '-'))
        p++;
      if (p == end || !g_ascii_isdigit (*p))
        return NULL;
      while (p < end && g_ascii_isdigit (*p))
        p++;
    }
  return p;
}

/* A strict check (RFC 8259, UTF-8) that @data is one array or object and
 * nothing else, nested no deeper than @max_depth. json-glib 1.6 leaks the
 * nodes it built whenever it stops at an error inside a document, and
 * recurses once per level with no limit: text it would refuse never
 * reaches it. Iterative, so any input is checked in constant stack. */
static gboolean
scan_document (const char  *data,
               gsize        len,
               guint        max_depth,
               GError     **error)
{
  enum { VALUE, VALUE_OR_CLOSE, KEY, KEY_OR_CLOSE, COLON, AFTER } state = VALUE;
  g_autofree char *open = g_malloc (max_depth + 1);
  const char *p = data, *end = data + len;
  const char *invalid;
  guint depth = 0;

  if (!g_utf8_validate_len (data, len, &invalid))
    return json_refuse (error, data, invalid - data, "not UTF-8");
  while (p < end && g_ascii_isspace (*p))
    p++;
  /* Every document libsubagent reads is an array or an object. */
  if (p == end || (*p != '{' && *p != '['))
    {
      g_set_error_literal (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_INVALID_DATA,
                           "JSON text is not an array or an object");
      return FALSE;
    }
  for (;;)
    {
      while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
      if (p == end)
        break;
      switch (state)
        {
        case VALUE_OR_CLOSE:
        case VALUE:
          if (state == VALUE_OR_CLOSE && *p == ']')
            {
              depth--;
              p++;
              state = AFTER;
            }
          else if (*p == '{' || *p == '[')
            {
              if (depth == max_depth)
                return json_refuse_depth (error, max_depth, p - data);
              open[depth++] = *p;
              state = *p == '{' ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
              p++;
            }
          else if (*p == '"')
            {
              const char *after = skip_string (p, end);

              if (after == NULL)
                return json_refuse (error, data, p - data, "a malformed string");
              p = after;
              state = AFTER;
            }
          else if (*p == '-' || g_ascii_isdigit (*p))
            {
              const char *after = skip_number (p, end);

              if (after == NULL)
                return json_refuse (error, data, p - data, "a malformed number");
              p = after;
              state = AFTER;
            }
          else if (end - p >= 4 && (memcmp (p, "true", 4) == 0 || memcmp (p, "null", 4) == 0))
            p += 4, state = AFTER;
          else if (end - p >= 5 && memcmp (p, "false", 5) == 0)
            p += 5, state = AFTER;
          else
            return json_refuse (error, data, p - data, "not a value");
          break;

        case KEY_OR_CLOSE:
        case KEY:
          if (state == KEY_OR_CLOSE && *p == '}')
            {
              depth--;
              p++;
              state = AFTER;
            }
          else if (*p == '"')
            {
              const char *after = skip_string (p, end);

              if (after == NULL)
                return json_refuse (error, data, p - data, "a malformed member name");
              p = after;
              state = COLON;
            }
          else
            return json_refuse (error, data, p - data, "not a member name");
          break;

        case COLON:
          if (*p != ':')
            return json_refuse (error, data, p - data, "no colon after a member name");
          p++;
          state = VALUE;
          break;

        case AFTER:
          if (depth == 0)
            return json_refuse (error, data, p - data, "text continues after its value");
          if (*p == ',')
            state = open[depth - 1] == '{' ? KEY : VALUE;
          else if (*p == (open[depth - 1] == '{' ? '}' : ']'))
            depth--;
          else
            return json_refuse (error, data, p - data, "no comma or closing bracket after a value");
          p++;
          break;
        }
    }
  if (state != AFTER || depth != 0)
    return json_refuse (error, data, len, "the text ends inside its value");
  return TRUE;
}

/**
 * subagent_json_check_depth:
 * @data: (array length=length) (element-type guint8): JSON text
 * @length: its length in bytes, or -1 if it is NUL-terminated
 * @max_depth: how deep arrays and objects may nest
 * @error: return location for a #GError
 *
 * Checks, without parsing, that @data nests arrays and objects no deeper
 * than @max_depth (brackets inside strings do not count). json-glib's
 * parser recurses once per level with no limit: 100,000 nested `[` crash
 * the process. Call this before handing untrusted text to it, or use
 * subagent_json_parser_load_bounded().
 *
 * Returns: %TRUE if the nesting is within bounds; else %FALSE with @error
 *   set (%JSON_PARSER_ERROR_INVALID_DATA)
 *
 * Since: 0.2
 */
gboolean
subagent_json_check_depth (const char  *data,
                           gssize       length,
                           guint        max_depth,
                           GError     **error)
{
  g_return_val_if_fail (data != NULL || length == 0, FALSE);

  return scan_depth (data, length < 0 ? strlen (data) : (gsize) length, max_depth, error);
}

/**
 * subagent_json_parser_load_bounded:
 * @parser: a #JsonParser
 * @data: (array length=length) (element-type guint8): JSON text
 * @length: its length in bytes, or -1 if it is NUL-terminated
 * @error: return location for a #GError
 *
 * json_parser_load_from_data() for untrusted text: the text must be one
 * array or object, nested no deeper than %SUBAGENT_JSON_MAX_DEPTH, and
 * valid JSON (RFC 8259, UTF-8), which is checked first without recursion
 * (json-glib 1.6 leaks what it parsed before any error, and recurses once
 * per level with no limit).
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
subagent_json_parser_load_bounded (JsonParser  *parser,
                                   const char  *data,
                                   gssize       length,
                                   GError     **error)
{
  g_return_val_if_fail (JSON_IS_PARSER (parser), FALSE);

  g_return_val_if_fail (data != NULL || length == 0, FALSE);

  if (!scan_document (data, length < 0 ? strlen (data) : (gsize) length, SUBAGENT_JSON_MAX_DEPTH, error))
    return FALSE;
  return json_parser_load_from_data (parser, data, length, error);
}
