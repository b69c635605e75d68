/* test-json-line.c: the JSON lines written directly are the generator's
 * bytes, the record times GLib's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>
#include <json-glib/json-glib.h>

#include "subagent-json-line-private.h"
#include "subagent-scratch-private.h"

static void
assert_node_matches (JsonNode *node)
{
  g_autofree char *expected = json_to_string (node, FALSE);
  g_autoptr(GString) line = g_string_new (NULL);

  _subagent_json_line_append_node (line, node);
  g_assert_cmpstr (line->str, ==, expected);
}

static void
test_strings (void)
{
  const char *strings[] = {
    "", "plain", "quote \" back \\ slash /", "new\nline\ttab\rcr\bbs\fff",
    "\x01\x02\x1e\x1f\x20\x7f", "é ✓ 日本 \xf0\x9f\x98\x80", "end\\", "\"", "a\x1f" "b",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (strings); i++)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_VALUE);

      json_node_set_string (node, strings[i]);
      assert_node_matches (node);
    }
  /* Every byte from 1 to 255 once, each in a string of its own. */
  for (guint c = 1; c < 256; c++)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_VALUE);
      char text[4] = { 'x', (char) c, 'y', '\0' };

      json_node_set_string (node, text);
      assert_node_matches (node);
    }
  /* Long strings are scanned eight bytes at a time: every byte at every
   * place of the words and of the tail, in strings of 1 to 33 bytes. */
  for (guint length = 1; length <= 33; length++)
    for (guint at = 0; at < length; at++)
      for (guint c = 1; c < 256; c++)
        {
          g_autoptr(JsonNode) node = json_node_new (JSON_NODE_VALUE);
          char text[34];

          memset (text, 'a' + (char) (at % 26), length);
          text[at] = (char) c;
          text[length] = '\0';
          json_node_set_string (node, text);
          assert_node_matches (node);
        }
}

static void
test_numbers (void)
{
  const double doubles[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, 1.25, 1.0 / 3.0, 2.0 / 3.0, 0.1, 1e15, -1e15, 1e16, 1e20, 1e21, 1e22,
    1e-5, 1e-7, 123456789.123, 4.35, G_MAXDOUBLE, G_MINDOUBLE, 1e300, 5e-324,
  };
  const gint64 ints[] = { 0, 1, -1, 42, G_MAXINT64, G_MININT64, G_MAXINT32, (gint64) G_MAXINT32 + 1 };

  for (gsize i = 0; i < G_N_ELEMENTS (doubles); i++)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_VALUE);

      json_node_set_double (node, doubles[i]);
      assert_node_matches (node);
    }
  /* Whole numbers, written without printf below 1e15. */
  for (guint i = 0; i < 2000; i++)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_VALUE);
      const double edges[] = { 2.0, 999999999999999.0, -999999999999999.0, 1e15 - 1 };
      gint64 whole = (gint64) g_test_rand_int () * g_test_rand_int_range (0, 1 << (i % 20));

      json_node_set_double (node, i < G_N_ELEMENTS (edges) ? edges[i] : (double) whole);
      assert_node_matches (node);
    }
  /* Amounts as records hold them: cents with fractions. */
  for (guint i = 0; i < 2000; i++)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_VALUE);

      json_node_set_double (node, g_test_rand_double_range (-1e6, 1e6) / (1 + i % 7));
      assert_node_matches (node);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (ints); i++)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_VALUE);

      json_node_set_int (node, ints[i]);
      assert_node_matches (node);
    }
}

static void
test_nesting (void)
{
  g_autoptr(JsonObject) object = json_object_new ();
  g_autoptr(JsonObject) inner = json_object_new ();
  g_autoptr(JsonObject) empty = json_object_new ();
  g_autoptr(JsonArray) array = json_array_new ();
  g_autoptr(JsonArray) empty_array = json_array_new ();
  g_autoptr(JsonNode) node = NULL;

  /* Insertion order that a hash table would not keep. */
  for (guint i = 0; i < 40; i++)
    {
      g_autofree char *key = g_strdup_printf ("k%u \"%c\"", (i * 7919) % 101, 'a' + i % 26);

      json_object_set_int_member (inner, key, i);
    }
  json_object_set_string_member (object, "zeta", "last first");
  json_object_set_null_member (object, "nothing");
  json_object_set_boolean_member (object, "yes", TRUE);
  json_object_set_boolean_member (object, "no", FALSE);
  json_object_set_double_member (object, "cost", 0.0);
  json_array_add_int_element (array, 1);
  json_array_add_string_element (array, "two\n");
  json_array_add_null_element (array);
  json_array_add_double_element (array, 2.5);
  json_array_add_object_element (array, json_object_ref (empty));
  json_array_add_array_element (array, json_array_ref (empty_array));
  json_object_set_array_member (inner, "list", json_array_ref (array));
  json_object_set_object_member (object, "inner", json_object_ref (inner));
  json_object_set_object_member (object, "empty", json_object_ref (empty));
  json_object_set_array_member (object, "empty_list", json_array_ref (empty_array));
  /* Replacing a member keeps its place. */
  json_object_set_string_member (object, "zeta", "replaced");
  node = json_node_init_object (json_node_alloc (), object);
  assert_node_matches (node);
  json_node_seal (node);
  assert_node_matches (node);
}

static void
test_times (void)
{
  g_autoptr(GTimeZone) plus = g_time_zone_new_identifier ("+05:30");
  g_autoptr(GTimeZone) minus = g_time_zone_new_identifier ("-08:00");
  const int years[] = { 1, 9, 99, 999, 1000, 1970, 2026, 9999 };

  for (gsize i = 0; i < G_N_ELEMENTS (years); i++)
    for (guint usec = 0; usec < 3; usec++)
      {
        double seconds = 7 + (usec == 0 ? 0 : usec == 1 ? 0.000001 : 0.999999);
        g_autoptr(GDateTime) utc = g_date_time_new_utc (years[i], 12, 31, 23, 59, seconds);
        g_autoptr(GDateTime) east = g_date_time_new (plus, years[i], 1, 2, 3, 4, seconds);
        g_autoptr(GDateTime) west = g_date_time_new (minus, years[i], 6, 15, 12, 0, seconds);
        GDateTime *times[] = { utc, east, west };

        for (gsize t = 0; t < G_N_ELEMENTS (times); t++)
          {
            g_autofree char *micro = NULL, *iso = NULL;
            char text[SUBAGENT_TIME_TEXT_SIZE];

            if (times[t] == NULL)
              continue;
            micro = g_date_time_format (times[t], "%Y-%m-%dT%H:%M:%S.%fZ");
            iso = g_date_time_format_iso8601 (times[t]);
            g_assert_cmpstr (_subagent_time_format_micro (times[t], text), ==, micro);
            g_assert_cmpstr (_subagent_time_format_iso8601 (times[t], text), ==, iso);
          }
      }
  for (guint i = 0; i < 1000; i++)
    {
      g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
      g_autoptr(GDateTime) later = g_date_time_add (now, g_test_rand_int_range (0, G_MAXINT32) * (gint64) 1000);
      g_autofree char *micro = g_date_time_format (later, "%Y-%m-%dT%H:%M:%S.%fZ");
      g_autofree char *iso = g_date_time_format_iso8601 (later);
      char text[SUBAGENT_TIME_TEXT_SIZE];

      g_assert_cmpstr (_subagent_time_format_micro (later, text), ==, micro);
      g_assert_cmpstr (_subagent_time_format_iso8601 (later, text), ==, iso);
    }
}

/* Integers written without printf: the same digits as printf's. */
static void
test_ints (void)
{
  const gint64 edges[] = { 0, 1, -1, 9, 10, -10, 99, 100, G_MAXINT32, G_MININT32, G_MAXINT64, G_MININT64,
                           G_MAXINT64 - 1, G_MININT64 + 1, 1000000007, -999999999999 };

  for (gsize i = 0; i < G_N_ELEMENTS (edges) + 5000; i++)
    {
      gint64 value = i < G_N_ELEMENTS (edges) ? edges[i]
                                              : (gint64) (((guint64) g_test_rand_int () << 32) | (guint32) g_test_rand_int ())
                                                >> g_test_rand_int_range (0, 63);
      g_autofree char *expected = g_strdup_printf ("%" G_GINT64_FORMAT, value);
      g_autoptr(GString) line = g_string_new ("x");

      _subagent_json_line_append_int (line, value);
      g_assert_cmpstr (line->str + 1, ==, expected);
    }
}

/* Version 4 UUIDs as g_uuid_string_random() writes them, and without dashes. */
static void
test_uuids (void)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; i < 2000; i++)
    {
      g_autofree char *uuid = _subagent_uuid_string_random (TRUE);
      char *plain = _subagent_uuid_string_random (FALSE);

      g_assert_true (g_uuid_string_is_valid (uuid));
      g_assert_cmpuint (strlen (uuid), ==, 36);
      g_assert_cmpint (uuid[14], ==, '4');
      g_assert_nonnull (strchr ("89ab", uuid[19]));
      g_assert_cmpuint (strspn (uuid, "0123456789abcdef-"), ==, 36);   /* lower case, as GLib's */
      g_assert_cmpuint (strlen (plain), ==, 32);
      g_assert_cmpuint (strspn (plain, "0123456789abcdef"), ==, 32);
      g_assert_cmpint (plain[12], ==, '4');
      g_assert_false (g_hash_table_contains (seen, plain));
      g_hash_table_add (seen, plain);
    }
}

/* A record's line is built in this thread's buffer for its use, empty
 * each time; a nested use gets its own, and a very large one is not kept. */
static void
test_scratch (void)
{
  GString *first = _subagent_scratch_take (SUBAGENT_SCRATCH_SESSION_LINE);
  GString *nested, *again, *other;

  g_string_append (first, "a line");
  nested = _subagent_scratch_take (SUBAGENT_SCRATCH_SESSION_LINE);
  g_assert_true (nested != first);
  g_assert_cmpuint (nested->len, ==, 0);
  _subagent_scratch_give (SUBAGENT_SCRATCH_SESSION_LINE, nested);
  _subagent_scratch_give (SUBAGENT_SCRATCH_SESSION_LINE, first);  /* the slot is full: freed */
  again = _subagent_scratch_take (SUBAGENT_SCRATCH_SESSION_LINE);
  g_assert_true (again == nested);
  g_assert_cmpuint (again->len, ==, 0);
  other = _subagent_scratch_take (SUBAGENT_SCRATCH_AUDIT_LINE);
  g_assert_true (other != again);
  _subagent_scratch_give (SUBAGENT_SCRATCH_AUDIT_LINE, other);
  g_string_set_size (again, 1024 * 1024);
  _subagent_scratch_give (SUBAGENT_SCRATCH_SESSION_LINE, again);
  first = _subagent_scratch_take (SUBAGENT_SCRATCH_SESSION_LINE);
  g_assert_cmpuint (first->allocated_len, <, 1024 * 1024);
  _subagent_scratch_give (SUBAGENT_SCRATCH_SESSION_LINE, first);
}

/* A batch index is null when there is none; an amount is clamped as
 * records store it. */
static void
test_index_and_amount_members (void)
{
  g_autoptr(GString) out = g_string_new ("{\"a\":1");

  _subagent_json_line_append_index_member (out, "batch_index", -1);
  _subagent_json_line_append_index_member (out, "other_index", 3);
  _subagent_json_line_append_amount_member (out, "cost_cents", 2.5);
  _subagent_json_line_append_amount_member (out, "huge", INFINITY);
  g_string_append_c (out, '}');
  g_assert_cmpstr (out->str, ==,
                   "{\"a\":1,\"batch_index\":null,\"other_index\":3,\"cost_cents\":2.5,\"huge\":1000000000000000.0}");
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/json-line/strings", test_strings);
  g_test_add_func ("/json-line/numbers", test_numbers);
  g_test_add_func ("/json-line/nesting-and-order", test_nesting);
  g_test_add_func ("/json-line/times", test_times);
  g_test_add_func ("/json-line/ints-without-printf", test_ints);
  g_test_add_func ("/json-line/uuids", test_uuids);
  g_test_add_func ("/json-line/scratch-buffers", test_scratch);
  g_test_add_func ("/json-line/index-and-amount-members", test_index_and_amount_members);
  return g_test_run ();
}
