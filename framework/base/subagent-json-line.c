/* subagent-json-line.c: JSON lines written directly, as json-glib's
 * generator writes them; record times.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "subagent-json-line-private.h"
#include "subagent-json-private.h"

/* Bytes json-glib 1.6 escapes: the quote, the backslash, those below
 * 0x1f (0x1f itself goes out raw) and DEL. */
static const guint8 needs_escape[256] = {
  [0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1, [0x07] = 1,
  [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1, [0x0e] = 1, [0x0f] = 1,
  [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1,
  [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1, [0x1e] = 1,
  ['"'] = 1, ['\\'] = 1, [0x7f] = 1,
};

/* Whether none of the eight bytes of @word needs an escape: none below
 * 0x1f (NUL included), none the quote, the backslash or DEL. The usual
 * "some byte is zero / less than n" tests: exact for the word as a whole,
 * and never set by a byte from 0x80 up. */
static inline gboolean
word_is_plain (guint64 word)
{
  const guint64 ones = G_GUINT64_CONSTANT (0x0101010101010101);
  const guint64 highs = G_GUINT64_CONSTANT (0x8080808080808080);
  guint64 quote = word ^ (ones * '"');
  guint64 backslash = word ^ (ones * '\\');
  guint64 del = word ^ (ones * 0x7f);

  return ((((word - ones * 0x1f) & ~word) |
           ((quote - ones) & ~quote) |
           ((backslash - ones) & ~backslash) |
           ((del - ones) & ~del)) & highs) == 0;
}

void
_subagent_json_line_append_string (GString    *out,
                                   const char *text)
{
  const guchar *p, *run, *end;

  if (text == NULL)
    {
      _subagent_line_append_len (out, "null", 4);
      return;
    }
  end = (const guchar *) text + strlen (text);
  g_string_append_c (out, '"');
  /* Runs of bytes that need no escape go in one append, scanned a word at
   * a time, then the bytes short of a word one at a time (about a fifth
   * of a command child's record-writing work went to this loop a byte at
   * a time; most strings are keys and ids, shorter than two words). */
  for (p = run = (const guchar *) text;; p++)
    {
      const char *escape;
      char unicode[8];
      guint64 word;

      while (end - p >= (gssize) sizeof word)
        {
          memcpy (&word, p, sizeof word);
          if (!word_is_plain (word))
            break;
          p += sizeof word;
        }
      while (p < end && !needs_escape[*p])
        p++;
      if (p == end)
        break;
      switch (*p)
        {
        case '"': escape = "\\\""; break;
        case '\\': escape = "\\\\"; break;
        case '\b': escape = "\\b"; break;
        case '\f': escape = "\\f"; break;
        case '\n': escape = "\\n"; break;
        case '\r': escape = "\\r"; break;
        case '\t': escape = "\\t"; break;
        default:
          g_snprintf (unicode, sizeof unicode, "\\u%04x", *p);
          escape = unicode;
        }
      _subagent_line_append_len (out, (const char *) run, p - run);
      _subagent_line_append (out, escape);
      run = p + 1;
    }
  _subagent_line_append_len (out, (const char *) run, end - run);
  g_string_append_c (out, '"');
}

void
_subagent_json_line_append_double (GString *out,
                                   double   value)
{
  char buffer[G_ASCII_DTOSTR_BUF_SIZE];

  /* A whole number (a command child's cost, most counts) is what "%.17g"
   * writes for it, its digits: without printf, a tenth of the cost. */
  if (fabs (value) < 1e15 && value == (double) (gint64) value && !(value == 0 && signbit (value)))
    {
      char digits[SUBAGENT_INT_TEXT_SIZE];

      _subagent_line_append (out, _subagent_format_int ((gint64) value, digits));
      _subagent_line_append_len (out, ".0", 2);
      return;
    }
  g_ascii_dtostr (buffer, sizeof buffer, value);
  _subagent_line_append (out, buffer);
  /* The generator keeps a double a double when read back. */
  if (strchr (buffer, '.') == NULL)
    _subagent_line_append_len (out, ".0", 2);
}

void
_subagent_json_line_append_key (GString    *out,
                                const char *key,
                                gboolean    first)
{
  if (!first)
    g_string_append_c (out, ',');
  _subagent_json_line_append_string (out, key);
  g_string_append_c (out, ':');
}

void
_subagent_json_line_append_string_member (GString    *out,
                                          const char *key,
                                          const char *value)
{
  _subagent_json_line_append_key (out, key, FALSE);
  _subagent_json_line_append_string (out, value);
}

void
_subagent_json_line_append_int_member (GString    *out,
                                       const char *key,
                                       gint64      value)
{
  _subagent_json_line_append_key (out, key, FALSE);
  _subagent_json_line_append_int (out, value);
}

void
_subagent_json_line_append_index_member (GString    *out,
                                         const char *key,
                                         gint64      index)
{
  _subagent_json_line_append_key (out, key, FALSE);
  if (index < 0)
    _subagent_line_append_len (out, "null", 4);
  else
    _subagent_json_line_append_int (out, index);
}

void
_subagent_json_line_append_amount_member (GString    *out,
                                          const char *key,
                                          double      amount)
{
  _subagent_json_line_append_key (out, key, FALSE);
  _subagent_json_line_append_double (out, subagent_json_amount (amount));
}

void
_subagent_json_line_append_object (GString    *out,
                                   JsonObject *object)
{
  JsonObjectIter iter;
  const char *name;
  JsonNode *member;
  gboolean first = TRUE;

  /* The generator writes members in their insertion order. */
  g_string_append_c (out, '{');
  json_object_iter_init_ordered (&iter, object);
  while (json_object_iter_next_ordered (&iter, &name, &member))
    {
      _subagent_json_line_append_key (out, name, first);
      _subagent_json_line_append_node (out, member);
      first = FALSE;
    }
  g_string_append_c (out, '}');
}

void
_subagent_json_line_append_node (GString  *out,
                                 JsonNode *node)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_NULL:
      _subagent_line_append_len (out, "null", 4);
      return;
    case JSON_NODE_OBJECT:
      _subagent_json_line_append_object (out, json_node_get_object (node));
      return;
    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);
        guint n = json_array_get_length (array);

        g_string_append_c (out, '[');
        for (guint i = 0; i < n; i++)
          {
            if (i > 0)
              g_string_append_c (out, ',');
            _subagent_json_line_append_node (out, json_array_get_element (array, i));
          }
        g_string_append_c (out, ']');
        return;
      }
    case JSON_NODE_VALUE:
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_STRING:
          _subagent_json_line_append_string (out, json_node_get_string (node));
          return;
        case G_TYPE_INT64:
          _subagent_json_line_append_int (out, json_node_get_int (node));
          return;
        case G_TYPE_BOOLEAN:
          if (json_node_get_boolean (node))
            _subagent_line_append_len (out, "true", 4);
          else
            _subagent_line_append_len (out, "false", 5);
          return;
        case G_TYPE_DOUBLE:
          _subagent_json_line_append_double (out, json_node_get_double (node));
          return;
        default:
          break;
        }
      break;
    }

  /* Anything else (no such node in our records): the generator itself. */
  {
    g_autofree char *text = json_to_string (node, FALSE);

    _subagent_line_append (out, text);
  }
}

/* @width decimal digits of @value (0 <= @value < 10^@width) at @out;
 * returns the end. snprintf() took a microsecond a time. */
static char *
put_digits (char     *out,
            unsigned  value,
            int       width)
{
  for (int i = width - 1; i >= 0; i--)
    {
      out[i] = (char) ('0' + value % 10);
      value /= 10;
    }
  return out + width;
}

/* "YYYY-MM-DDTHH:MM:SS", the year on @year_width digits (GDateTime years
 * are 1 to 9999); @micro: ".ffffff" after it; then "Z" and the NUL. */
static const char *
format_utc (GDateTime *time,
            int        year_width,
            gboolean   micro,
            char       text[SUBAGENT_TIME_TEXT_SIZE])
{
  int year, month, day;
  char *p = text;

  g_date_time_get_ymd (time, &year, &month, &day);
  p = put_digits (p, (unsigned) year, year_width);
  *p++ = '-';
  p = put_digits (p, (unsigned) month, 2);
  *p++ = '-';
  p = put_digits (p, (unsigned) day, 2);
  *p++ = 'T';
  p = put_digits (p, (unsigned) g_date_time_get_hour (time), 2);
  *p++ = ':';
  p = put_digits (p, (unsigned) g_date_time_get_minute (time), 2);
  *p++ = ':';
  p = put_digits (p, (unsigned) g_date_time_get_second (time), 2);
  if (micro)
    {
      *p++ = '.';
      p = put_digits (p, (unsigned) g_date_time_get_microsecond (time), 6);
    }
  *p++ = 'Z';
  *p = '\0';
  return text;
}

const char *
_subagent_time_format_micro (GDateTime *time,
                             char       text[SUBAGENT_TIME_TEXT_SIZE])
{
  int year = g_date_time_get_year (time);

  /* %Y is not padded: "999-...", "2026-...". */
  return format_utc (time, year >= 1000 ? 4 : year >= 100 ? 3 : year >= 10 ? 2 : 1, TRUE, text);
}

const char *
_subagent_time_format_iso8601 (GDateTime *time,
                               char       text[SUBAGENT_TIME_TEXT_SIZE])
{
  if (g_date_time_get_utc_offset (time) != 0)
    {
      /* Offsets are rare in records: GLib writes them. */
      g_autofree char *glib = g_date_time_format_iso8601 (time);

      g_strlcpy (text, glib, SUBAGENT_TIME_TEXT_SIZE);
      return text;
    }
  /* "%C%y": the year on four digits; microseconds only when not zero. */
  return format_utc (time, 4, g_date_time_get_microsecond (time) != 0, text);
}

/* Digits from the end, no printf: g_string_append_printf() costs about a
 * thousand instructions a number, and a child's records hold about twenty. */
const char *
_subagent_format_int (gint64 value,
                      char   text[SUBAGENT_INT_TEXT_SIZE])
{
  char *p = text + SUBAGENT_INT_TEXT_SIZE;
  /* The magnitude as unsigned: -G_MININT64 does not fit a gint64. */
  guint64 magnitude = value < 0 ? (guint64) 0 - (guint64) value : (guint64) value;

  *--p = '\0';
  do
    {
      *--p = (char) ('0' + magnitude % 10);
      magnitude /= 10;
    }
  while (magnitude != 0);
  if (value < 0)
    *--p = '-';
  return p;
}

void
_subagent_json_line_append_int (GString *out,
                                gint64   value)
{
  char text[SUBAGENT_INT_TEXT_SIZE];

  _subagent_line_append (out, _subagent_format_int (value, text));
}

char *
_subagent_uuid_string_random (gboolean dashes)
{
  static const char hex[] = "0123456789abcdef";
  guint8 bytes[16];
  char *text = g_malloc (37);
  char *p = text;

  /* As GLib 2.74's generate_uuid_v4(): four g_random_int()s, then the
   * version and variant bits (RFC 4122, 4.4). */
  for (guint i = 0; i < 4; i++)
    {
      guint32 r = g_random_int ();

      bytes[4 * i] = r & 0xff;
      bytes[4 * i + 1] = (r >> 8) & 0xff;
      bytes[4 * i + 2] = (r >> 16) & 0xff;
      bytes[4 * i + 3] = (r >> 24) & 0xff;
    }
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  for (guint i = 0; i < 16; i++)
    {
      if (dashes && (i == 4 || i == 6 || i == 8 || i == 10))
        *p++ = '-';
      *p++ = hex[bytes[i] >> 4];
      *p++ = hex[bytes[i] & 0xf];
    }
  *p = '\0';
  return text;
}
