/* test-openai-json.c: the runner-openai plugin's fast JSON reader for
 * stream chunks gives json-glib's tree for valid JSON and gives up (NULL,
 * so json-glib reports the error) on anything else. Built from the
 * plugin's source, which exports nothing.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "openai-private.h"

static char *
canonical (JsonNode *node)
{
  return json_to_string (node, FALSE);
}

static void
test_same_tree_as_json_glib (void)
{
  static const char * const valid[] = {
    "{}", "[]", "0", "-0", "12", "-7", "3.25", "-1.5e3", "2E-2", "true", "false", "null", "\"\"",
    "\"plain\"", "\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", "\"\\u00e9t\\u00E9 \\u20ac \\ud83d\\ude00\"",
    "\"h\xc3\xa9llo \xe2\x82\xac\"",
    " { \"a\" : [ 1 , 2.5 , { \"b\" : null } ] , \"c\" : \"d\" } ",
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1733200000,\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
    "\"function\":{\"name\":\"Read\",\"arguments\":\"{\\\"file_path\\\": \\\"a.c\\\"}\"}}]},"
    "\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2}}",
    "[[[[[[[[[[1]]]]]]]]]]", "{\"dup\":1,\"dup\":2}",
    "123456789012345678",
  };
  static const char * const invalid[] = {
    "", " ", "{", "}", "[1,]", "{\"a\":}", "{\"a\" 1}", "{a:1}", "01", "1.", ".5", "-", "1e", "tru", "nul",
    "\"unterminated", "\"bad \\x escape\"", "\"lone \\ud800 surrogate\"", "\"\\udc00\"", "\"nul \\u0000\"",
    "\"raw\ncontrol\"", "[1 2]", "{\"a\":1}{", "\"\xff\xfe\"", "12345678901234567890",
  };

  for (guint i = 0; i < G_N_ELEMENTS (valid); i++)
    {
      g_autoptr(JsonNode) fast = openai_json_parse (valid[i], strlen (valid[i]));
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autofree char *a = NULL, *b = NULL;

      g_assert_true (json_parser_load_from_data (parser, valid[i], -1, NULL));
      if (fast == NULL)
        g_error ("the fast reader gave up on valid JSON: %s", valid[i]);
      a = canonical (fast);
      b = canonical (json_parser_get_root (parser));
      g_assert_cmpstr (a, ==, b);
    }
  for (guint i = 0; i < G_N_ELEMENTS (invalid); i++)
    {
      g_autoptr(JsonNode) fast = openai_json_parse (invalid[i], strlen (invalid[i]));

      if (fast != NULL)
        g_error ("the fast reader took what it should leave to json-glib: %s", invalid[i]);
    }
}

static void
test_depth_is_bounded (void)
{
  g_autoptr(GString) deep = g_string_new (NULL);
  g_autoptr(JsonNode) node = NULL;

  for (guint i = 0; i < 10000; i++)
    g_string_append_c (deep, '[');
  for (guint i = 0; i < 10000; i++)
    g_string_append_c (deep, ']');
  node = openai_json_parse (deep->str, deep->len);
  g_assert_null (node);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/openai-json/same-tree-as-json-glib", test_same_tree_as_json_glib);
  g_test_add_func ("/openai-json/depth-is-bounded", test_depth_is_bounded);
  return g_test_run ();
}
