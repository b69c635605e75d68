/* openai-json.c: a small, fast JSON reader for stream chunks.
 *
 * json-glib's parser spends some 400 instructions per byte (GScanner); a
 * turn's stream is a few kilobytes of small chunks, parsed on the loop's
 * critical path. This reader builds the same JsonNode tree for valid JSON
 * at a fraction of that, and gives up (NULL) on anything else, so the
 * caller falls back to json-glib, whose errors say what is wrong.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "openai-private.h"

#define MAX_DEPTH 64

typedef struct {
  const char *p;
  const char *end;
} Reader;

static JsonNode *read_value (Reader *r, guint depth);

static void
skip_space (Reader *r)
{
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
    r->p++;
}

static gint
hex4 (const char *p)
{
  gint value = 0;

  for (guint i = 0; i < 4; i++)
    {
      gint digit = g_ascii_xdigit_value (p[i]);
      if (digit < 0)
        return -1;
      value = value * 16 + digit;
    }
  return value;
}

/* A string at r->p (its opening quote); NULL if malformed. */
static char *
read_string (Reader *r)
{
  const char *start = ++r->p;
  GString *out = NULL;

  /* The common case has no escapes: one copy. */
  while (r->p < r->end && *r->p != '"' && *r->p != '\\')
    {
      if ((guchar) *r->p < 0x20)
        return NULL;
      r->p++;
    }
  if (r->p >= r->end)
    return NULL;
  if (*r->p == '"')
    {
      char *s = g_strndup (start, r->p - start);
      r->p++;
      return s;
    }
  out = g_string_new_len (start, r->p - start);
  while (r->p < r->end && *r->p != '"')
    {
      if ((guchar) *r->p < 0x20)
        goto fail;
      if (*r->p != '\\')
        {
          g_string_append_c (out, *r->p++);
          continue;
        }
      if (r->end - r->p < 2)
        goto fail;
      r->p++;
      switch (*r->p)
        {
        case '"': g_string_append_c (out, '"'); break;
        case '\\': g_string_append_c (out, '\\'); break;
        case '/': g_string_append_c (out, '/'); break;
        case 'b': g_string_append_c (out, '\b'); break;
        case 'f': g_string_append_c (out, '\f'); break;
        case 'n': g_string_append_c (out, '\n'); break;
        case 'r': g_string_append_c (out, '\r'); break;
        case 't': g_string_append_c (out, '\t'); break;
        case 'u':
          {
            gint c;

            if (r->end - r->p < 5 || (c = hex4 (r->p + 1)) < 0)
              goto fail;
            r->p += 4;
            if (c >= 0xD800 && c <= 0xDBFF)
              {
                gint low;

                if (r->end - r->p < 7 || r->p[1] != '\\' || r->p[2] != 'u' ||
                    (low = hex4 (r->p + 3)) < 0xDC00 || low > 0xDFFF)
                  goto fail;
                c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
                r->p += 6;
              }
            else if (c >= 0xDC00 && c <= 0xDFFF)
              goto fail;
            if (c == 0)
              goto fail;  /* json-glib's strings end at NUL; let it decide */
            g_string_append_unichar (out, c);
          }
          break;
        default:
          goto fail;
        }
      r->p++;
    }
  if (r->p >= r->end)
    goto fail;
  r->p++;
  return g_string_free (out, FALSE);

fail:
  g_string_free (out, TRUE);
  return NULL;
}

static JsonNode *
read_number (Reader *r)
{
  const char *start = r->p;
  gboolean integral = TRUE;
  char buffer[64];
  JsonNode *node;

  if (*r->p == '-')
    r->p++;
  if (r->p >= r->end || !g_ascii_isdigit (*r->p))
    return NULL;
  if (*r->p == '0' && r->p + 1 < r->end && g_ascii_isdigit (r->p[1]))
    return NULL;
  while (r->p < r->end && g_ascii_isdigit (*r->p))
    r->p++;
  if (r->p < r->end && *r->p == '.')
    {
      integral = FALSE;
      r->p++;
      if (r->p >= r->end || !g_ascii_isdigit (*r->p))
        return NULL;
      while (r->p < r->end && g_ascii_isdigit (*r->p))
        r->p++;
    }
  if (r->p < r->end && (*r->p == 'e' || *r->p == 'E'))
    {
      integral = FALSE;
      r->p++;
      if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
        r->p++;
      if (r->p >= r->end || !g_ascii_isdigit (*r->p))
        return NULL;
      while (r->p < r->end && g_ascii_isdigit (*r->p))
        r->p++;
    }
  if ((gsize) (r->p - start) >= sizeof buffer)
    return NULL;
  memcpy (buffer, start, r->p - start);
  buffer[r->p - start] = '\0';
  node = json_node_new (JSON_NODE_VALUE);
  if (integral && (r->p - start) < 19)
    json_node_set_int (node, g_ascii_strtoll (buffer, NULL, 10));
  else if (integral)
    {
      json_node_unref (node);
      return NULL;  /* near the edge of gint64: json-glib's rules */
    }
  else
    json_node_set_double (node, g_ascii_strtod (buffer, NULL));
  return node;
}

static gboolean
literal (Reader     *r,
         const char *word)
{
  gsize n = strlen (word);

  if ((gsize) (r->end - r->p) < n || memcmp (r->p, word, n) != 0)
    return FALSE;
  r->p += n;
  return TRUE;
}

static JsonNode *
read_object (Reader *r,
             guint   depth)
{
  JsonObject *object = json_object_new ();
  JsonNode *node;

  r->p++;
  skip_space (r);
  if (r->p < r->end && *r->p == '}')
    {
      r->p++;
      goto done;
    }
  for (;;)
    {
      char *key;
      JsonNode *value;

      skip_space (r);
      if (r->p >= r->end || *r->p != '"' || (key = read_string (r)) == NULL)
        goto fail;
      skip_space (r);
      if (r->p >= r->end || *r->p != ':')
        {
          g_free (key);
          goto fail;
        }
      r->p++;
      value = read_value (r, depth + 1);
      if (value == NULL)
        {
          g_free (key);
          goto fail;
        }
      json_object_set_member (object, key, value);
      g_free (key);
      skip_space (r);
      if (r->p < r->end && *r->p == ',')
        {
          r->p++;
          continue;
        }
      if (r->p < r->end && *r->p == '}')
        {
          r->p++;
          break;
        }
      goto fail;
    }
done:
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (node, object);
  return node;
fail:
  json_object_unref (object);
  return NULL;
}

static JsonNode *
read_array (Reader *r,
            guint   depth)
{
  JsonArray *array = json_array_new ();
  JsonNode *node;

  r->p++;
  skip_space (r);
  if (r->p < r->end && *r->p == ']')
    {
      r->p++;
      goto done;
    }
  for (;;)
    {
      JsonNode *value = read_value (r, depth + 1);

      if (value == NULL)
        goto fail;
      json_array_add_element (array, value);
      skip_space (r);
      if (r->p < r->end && *r->p == ',')
        {
          r->p++;
          continue;
        }
      if (r->p < r->end && *r->p == ']')
        {
          r->p++;
          break;
        }
      goto fail;
    }
done:
  node = json_node_new (JSON_NODE_ARRAY);
  json_node_take_array (node, array);
  return node;
fail:
  json_array_unref (array);
  return NULL;
}

static JsonNode *
read_value (Reader *r,
            guint   depth)
{
  skip_space (r);
  if (r->p >= r->end || depth > MAX_DEPTH)
    return NULL;
  switch (*r->p)
    {
    case '{':
      return read_object (r, depth);
    case '[':
      return read_array (r, depth);
    case '"':
      {
        char *s = read_string (r);
        JsonNode *node;

        if (s == NULL)
          return NULL;
        node = json_node_new (JSON_NODE_VALUE);
        json_node_set_string (node, s);
        g_free (s);
        return node;
      }
    case 't':
      if (!literal (r, "true"))
        return NULL;
      return json_node_init_boolean (json_node_alloc (), TRUE);
    case 'f':
      if (!literal (r, "false"))
        return NULL;
      return json_node_init_boolean (json_node_alloc (), FALSE);
    case 'n':
      if (!literal (r, "null"))
        return NULL;
      return json_node_new (JSON_NODE_NULL);
    default:
      return read_number (r);
    }
}

JsonNode *
openai_json_parse (const char *text,
                   gsize       length)
{
  Reader r = { text, text + length };
  JsonNode *node;

  if (!g_utf8_validate (text, length, NULL))
    return NULL;
  node = read_value (&r, 0);
  if (node == NULL)
    return NULL;
  skip_space (&r);
  if (r.p != r.end)
    {
      json_node_unref (node);
      return NULL;
    }
  return node;
}
