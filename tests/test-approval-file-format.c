/* test-approval-file-format.c: the approval-file document parser reusing
 * the requests of the previous version. Linked with the plugin's format
 * source, so it sees the parser itself: unchanged requests must come back
 * as the very objects of the previous version, and every document must
 * give what a full parse gives (the same requests, or an integrity
 * error), tampered ones above all.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <subagent.h>

#include "approval-file-format.h"

#define RUN "run-1"
#define N_REQUESTS 6

static GBytes *
test_key (void)
{
  return g_bytes_new_static ("format test key", 15);
}

static GPtrArray *
make_requests (void)
{
  GPtrArray *requests = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < N_REQUESTS; i++)
    {
      g_autoptr(JsonObject) args = json_object_new ();
      g_autofree char *path = g_strdup_printf ("/file/%u", i);

      json_object_set_string_member (args, "path", path);
      g_ptr_array_add (requests, subagent_approval_request_new ("child-1", RUN, "writer", "delete_file", args,
                                                                "prompt", "shared", SUBAGENT_NO_BATCH_INDEX,
                                                                NULL, 0));
    }
  return requests;
}

/* Parses @text with @previous and without, and checks both agree. */
static GPtrArray *
parse_both (GBytes     *text,
            GBytes     *key,
            GPtrArray  *previous,
            GError    **error)
{
  gsize length = 0;
  const char *data = g_bytes_get_data (text, &length);
  g_autoptr(GError) full_error = NULL;
  g_autoptr(GPtrArray) full = afs_document_parse (RUN, data, length, key, NULL, &full_error);
  GPtrArray *reused = afs_document_parse (RUN, data, length, key, previous, error);

  g_assert_true ((full == NULL) == (reused == NULL));
  if (full != NULL)
    {
      g_assert_cmpuint (full->len, ==, reused->len);
      for (guint i = 0; i < full->len; i++)
        g_assert_cmpstr (afs_request_text (full->pdata[i], TRUE), ==, afs_request_text (reused->pdata[i], TRUE));
    }
  else
    g_assert_cmpstr (full_error->message, ==, (*error)->message);
  return reused;
}

static GBytes *
replace_once (GBytes     *text,
              const char *from,
              const char *to)
{
  g_autofree char *copy = g_strndup (g_bytes_get_data (text, NULL), g_bytes_get_size (text));
  char *at = strstr (copy, from);
  GString *out;

  g_assert_nonnull (at);
  out = g_string_new_len (copy, at - copy);
  g_string_append (out, to);
  g_string_append (out, at + strlen (from));
  return g_string_free_to_bytes (out);
}

static void
test_reuses_unchanged (gconstpointer data)
{
  gboolean keyed = GPOINTER_TO_INT (data);
  g_autoptr(GBytes) key = keyed ? test_key () : NULL;
  g_autoptr(GPtrArray) made = make_requests ();
  g_autoptr(GBytes) first_text = afs_document_serialize (RUN, made, key);
  g_autoptr(GPtrArray) first = NULL;
  g_autoptr(GPtrArray) second = NULL;
  g_autoptr(GPtrArray) edited = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GBytes) second_text = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentApprovalRequest) decided = NULL;

  first = parse_both (first_text, key, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (first->len, ==, N_REQUESTS);

  /* Another writer decides request 2 and adds one. */
  for (guint i = 0; i < N_REQUESTS; i++)
    g_ptr_array_add (edited, subagent_approval_request_copy (first->pdata[i]));
  decided = g_object_ref (edited->pdata[2]);
  g_assert_true (subagent_approval_request_transition (decided, SUBAGENT_APPROVAL_STATUS_APPROVED, NULL, "amy"));
  {
    g_autoptr(JsonObject) args = json_object_new ();

    json_object_set_string_member (args, "path", "/new");
    g_ptr_array_add (edited, subagent_approval_request_new ("child-2", RUN, "writer", "delete_file", args,
                                                            "prompt", "shared", 3, NULL, 0));
  }
  second_text = afs_document_serialize (RUN, edited, key);

  second = parse_both (second_text, key, first, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (second->len, ==, N_REQUESTS + 1);
  for (guint i = 0; i < N_REQUESTS; i++)
    if (i == 2)
      {
        g_assert_true (second->pdata[i] != first->pdata[i]);
        g_assert_cmpint (subagent_approval_request_get_status (second->pdata[i]), ==,
                         SUBAGENT_APPROVAL_STATUS_APPROVED);
      }
    else
      g_assert_true (second->pdata[i] == first->pdata[i]);
  g_assert_cmpstr (subagent_approval_request_get_subagent_id (second->pdata[N_REQUESTS]), ==, "child-2");

  /* Reordered requests are still found by their text. */
  {
    g_autoptr(GPtrArray) swapped = g_ptr_array_new_with_free_func (g_object_unref);
    g_autoptr(GBytes) swapped_text = NULL;
    g_autoptr(GPtrArray) third = NULL;

    for (guint i = N_REQUESTS; i-- > 0;)
      g_ptr_array_add (swapped, g_object_ref (first->pdata[i]));
    swapped_text = afs_document_serialize (RUN, swapped, key);
    third = parse_both (swapped_text, key, first, &error);
    g_assert_no_error (error);
    for (guint i = 0; i < N_REQUESTS; i++)
      g_assert_true (third->pdata[i] == first->pdata[N_REQUESTS - 1 - i]);
  }
}

/* A new request nested so that the document is SUBAGENT_JSON_MAX_DEPTH
 * deep is taken on the reusing path (the others come back as the previous
 * objects); one level deeper is refused there with the full parse's
 * error, although the request's own text is well within the bound. */
static void
test_depth_bound_as_full_parse (void)
{
  /* Root object, "requests" array, the request, its tool_arguments: the
   * arrays under "a" start at depth 5. */
  const guint envelope = 4;

  for (guint extra = 0; extra <= 1; extra++)
    {
      guint arrays = SUBAGENT_JSON_MAX_DEPTH - envelope + extra;
      g_autoptr(GPtrArray) made = make_requests ();
      g_autoptr(GBytes) first_text = afs_document_serialize (RUN, made, NULL);
      g_autoptr(GPtrArray) first = NULL;
      g_autoptr(GPtrArray) second = NULL;
      g_autoptr(GBytes) second_text = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) grown = g_ptr_array_new_with_free_func (g_object_unref);
      g_autoptr(JsonObject) args = NULL;
      g_autoptr(JsonNode) deep = NULL;
      GString *nested = g_string_new (NULL);

      for (guint i = 0; i < arrays; i++)
        g_string_append_c (nested, '[');
      for (guint i = 0; i < arrays; i++)
        g_string_append_c (nested, ']');
      /* json-glib recurses, but 512 levels are fine on a test's stack. */
      deep = json_from_string (nested->str, &error);
      g_string_free (nested, TRUE);
      g_assert_no_error (error);
      args = json_object_new ();
      json_object_set_member (args, "a", g_steal_pointer (&deep));

      first = parse_both (first_text, NULL, NULL, &error);
      g_assert_no_error (error);
      for (guint i = 0; i < first->len; i++)
        g_ptr_array_add (grown, g_object_ref (first->pdata[i]));
      g_ptr_array_add (grown, subagent_approval_request_new ("child-2", RUN, "writer", "delete_file", args,
                                                             "prompt", "shared", SUBAGENT_NO_BATCH_INDEX, NULL, 0));
      second_text = afs_document_serialize (RUN, grown, NULL);
      g_assert_true (subagent_json_check_depth (g_bytes_get_data (second_text, NULL), g_bytes_get_size (second_text),
                                                SUBAGENT_JSON_MAX_DEPTH + extra, NULL));
      g_assert_false (subagent_json_check_depth (g_bytes_get_data (second_text, NULL),
                                                 g_bytes_get_size (second_text),
                                                 SUBAGENT_JSON_MAX_DEPTH + extra - 1, NULL));

      second = parse_both (second_text, NULL, first, &error);
      if (extra == 0)
        {
          g_assert_no_error (error);
          g_assert_cmpuint (second->len, ==, N_REQUESTS + 1);
          for (guint i = 0; i < N_REQUESTS; i++)
            g_assert_true (second->pdata[i] == first->pdata[i]);
        }
      else
        {
          g_assert_null (second);
          g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
        }
    }
}

/* Every alteration of a signed version is refused when the unchanged
 * requests are reused, with the full parse's error. */
static void
test_tampering_still_detected (void)
{
  g_autoptr(GBytes) key = test_key ();
  g_autoptr(GPtrArray) made = make_requests ();
  g_autoptr(GBytes) text = afs_document_serialize (RUN, made, key);
  g_autoptr(GPtrArray) first = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) wrong_key = g_bytes_new_static ("another key", 11);
  const char *text_data = g_bytes_get_data (text, NULL);
  g_autofree char *signature = NULL;
  struct { const char *from, *to; } edits[] = {
    /* A request's arguments (and so its digest) changed. */
    { "\"/file/3\"", "\"/file/9\"" },
    /* A verdict forged on an unchanged-looking request. */
    { "\"status\":\"pending\"", "\"status\":\"approved\"" },
    /* A member no request keeps: dropped if it were re-serialized. */
    { "{\"request_id\"", "{\"extra\":1,\"request_id\"" },
    /* The time of the version. */
    { "\"updated_at\":\"2", "\"updated_at\":\"1" },
  };

  first = parse_both (text, key, NULL, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (edits); i++)
    {
      g_autoptr(GBytes) altered = replace_once (text, edits[i].from, edits[i].to);
      g_autoptr(GPtrArray) parsed = parse_both (altered, key, first, &error);

      g_assert_null (parsed);
      g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
      g_clear_error (&error);
    }

  /* Whitespace is another layout, which the full parse judges: it does
   * not change the signed canonical form, so both accept it. */
  {
    g_autoptr(GBytes) spaced = replace_once (text, "\"requests\":[", "\"requests\": [");
    g_autoptr(GPtrArray) parsed = parse_both (spaced, key, first, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (parsed->len, ==, N_REQUESTS);
  }

  /* A wrong signature, and none at all. */
  signature = g_strndup (strstr (text_data, ",\"signature\":\""), strlen (",\"signature\":\"") + 64 + 1);
  {
    g_autoptr(GBytes) unsigned_text = replace_once (text, signature, "");
    g_autoptr(GBytes) other = NULL;
    g_autoptr(GPtrArray) parsed = parse_both (unsigned_text, key, first, &error);

    g_assert_null (parsed);
    g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
    g_clear_error (&error);
    other = afs_document_serialize (RUN, first, wrong_key);
    parsed = parse_both (other, key, first, &error);
    g_assert_null (parsed);
    g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
    g_clear_error (&error);
  }

  /* Another run's file. */
  {
    g_autoptr(GBytes) other_run = replace_once (text, "\"parent_run_id\":\"" RUN "\"", "\"parent_run_id\":\"run-2\"");
    g_autoptr(GPtrArray) parsed = parse_both (other_run, key, first, &error);

    g_assert_null (parsed);
    g_assert_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/approval-file/format/reparse-reuses-unchanged-requests", GINT_TO_POINTER (FALSE),
                        test_reuses_unchanged);
  g_test_add_data_func ("/approval-file/format/reparse-reuses-unchanged-requests-signed", GINT_TO_POINTER (TRUE),
                        test_reuses_unchanged);
  g_test_add_func ("/approval-file/format/reparse-detects-tampering", test_tampering_still_detected);
  g_test_add_func ("/approval-file/format/reparse-depth-bound-as-full-parse", test_depth_bound_as_full_parse);
  return g_test_run ();
}
