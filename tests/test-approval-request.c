/* test-approval-request.c: approval requests, their state machine, digest and JSON form.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "test-support.h"

static JsonObject *
parse_object (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

static SubagentApprovalRequest *
make_request (const char *tool,
              const char *args_json)
{
  g_autoptr(JsonObject) args = parse_object (args_json ? args_json : "{}");

  return subagent_approval_request_new ("child-1", "run-1", "writer", tool, args,
                                        "prompt", "worktree", 2, "/tmp/wt", 0);
}

static char *
object_to_string (JsonObject *object)
{
  g_autoptr(JsonNode) node = json_node_alloc ();

  json_node_init_object (node, object);
  return json_to_string (node, FALSE);
}

static gboolean
is_lower_hex (const char *text,
              gsize       length)
{
  if (strlen (text) != length)
    return FALSE;
  for (const char *p = text; *p; p++)
    if (!g_ascii_isdigit (*p) && !(*p >= 'a' && *p <= 'f'))
      return FALSE;
  return TRUE;
}

static void
test_new_defaults (void)
{
  g_autoptr(SubagentApprovalRequest) request = make_request ("write_file", "{\"path\": \"a.txt\"}");
  g_autoptr(GDateTime) created = NULL;
  g_autoptr(GTimeZone) utc = g_time_zone_new_utc ();

  g_assert_nonnull (request);
  g_assert_true (is_lower_hex (subagent_approval_request_get_request_id (request), 32));
  g_assert_true (is_lower_hex (subagent_approval_request_get_action_digest (request), 64));
  g_assert_cmpint (subagent_approval_request_get_status (request), ==, SUBAGENT_APPROVAL_STATUS_PENDING);
  g_assert_cmpuint (subagent_approval_request_get_timeout_seconds (request), ==, 180);
  g_assert_cmpint (subagent_approval_request_get_batch_index (request), ==, 2);
  g_assert_cmpstr (subagent_approval_request_get_subagent_id (request), ==, "child-1");
  g_assert_cmpstr (subagent_approval_request_get_parent_run_id (request), ==, "run-1");
  g_assert_cmpstr (subagent_approval_request_get_permission_mode (request), ==, "prompt");
  g_assert_cmpstr (subagent_approval_request_get_isolation (request), ==, "worktree");
  g_assert_cmpstr (subagent_approval_request_get_worktree_path (request), ==, "/tmp/wt");
  g_assert_null (subagent_approval_request_get_approved_at (request));
  g_assert_null (subagent_approval_request_get_denied_at (request));
  g_assert_null (subagent_approval_request_get_denial_reason (request));
  g_assert_null (subagent_approval_request_get_approved_by (request));

  /* created_at is ISO-8601 UTC and close to now. */
  created = g_date_time_new_from_iso8601 (subagent_approval_request_get_created_at (request), utc);
  g_assert_nonnull (created);
  g_assert_true (g_str_has_suffix (subagent_approval_request_get_created_at (request), "Z"));
  g_assert_cmpint (ABS (g_date_time_to_unix (created) - g_get_real_time () / G_USEC_PER_SEC), <=, 5);
}

static void
test_request_id_unique (void)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; i < 2000; i++)
    {
      g_autoptr(SubagentApprovalRequest) request = make_request ("rm", NULL);
      const char *id = subagent_approval_request_get_request_id (request);

      g_assert_true (is_lower_hex (id, 32));
      /* UUID version 4: the 13th hex digit is 4. */
      g_assert_cmpint (id[12], ==, '4');
      g_assert_true (g_hash_table_add (seen, g_strdup (id)));
    }
  g_assert_cmpuint (g_hash_table_size (seen), ==, 2000);
}

static void
test_id_validation (void)
{
  g_autofree char *longest = g_strnfill (128, 'a');
  g_autofree char *too_long = g_strnfill (129, 'a');

  g_assert_true (subagent_approval_id_is_valid ("run_1-A"));
  g_assert_true (subagent_approval_id_is_valid (longest));
  g_assert_false (subagent_approval_id_is_valid (too_long));
  g_assert_false (subagent_approval_id_is_valid (""));
  g_assert_false (subagent_approval_id_is_valid (NULL));
  g_assert_false (subagent_approval_id_is_valid ("../etc"));
  g_assert_false (subagent_approval_id_is_valid ("a b"));
  g_assert_false (subagent_approval_id_is_valid ("run.json"));
  g_assert_false (subagent_approval_id_is_valid ("ünï"));
}

/* Puts a fresh request in @state through the only mutator. */
static SubagentApprovalRequest *
request_in_state (SubagentApprovalStatus state)
{
  SubagentApprovalRequest *request = make_request ("rm", "{\"path\": \"x\"}");

  if (state != SUBAGENT_APPROVAL_STATUS_PENDING)
    g_assert_true (subagent_approval_request_transition (request, state, "setup", "tester"));
  g_assert_cmpint (subagent_approval_request_get_status (request), ==, state);
  return request;
}

static void
test_state_machine_edges (void)
{
  guint allowed = 0;

  for (int from = SUBAGENT_APPROVAL_STATUS_PENDING; from <= SUBAGENT_APPROVAL_STATUS_CANCELLED; from++)
    for (int to = SUBAGENT_APPROVAL_STATUS_PENDING; to <= SUBAGENT_APPROVAL_STATUS_CANCELLED; to++)
      {
        g_autoptr(SubagentApprovalRequest) request = request_in_state (from);
        g_autoptr(JsonObject) before_json = subagent_approval_request_to_json (request);
        g_autofree char *before = object_to_string (before_json);
        gboolean expected = from == SUBAGENT_APPROVAL_STATUS_PENDING && to != SUBAGENT_APPROVAL_STATUS_PENDING;
        gboolean moved = subagent_approval_request_transition (request, to, "edge", "tester");

        g_test_message ("%s -> %s: %s", subagent_approval_status_to_string (from),
                        subagent_approval_status_to_string (to), moved ? "moved" : "refused");
        g_assert_cmpint (moved, ==, expected);
        if (moved)
          {
            allowed++;
            g_assert_cmpint (subagent_approval_request_get_status (request), ==, to);
          }
        else
          {
            g_autoptr(JsonObject) after_json = subagent_approval_request_to_json (request);
            g_autofree char *after = object_to_string (after_json);

            /* A refused transition changes nothing at all. */
            g_assert_cmpint (subagent_approval_request_get_status (request), ==, from);
            g_assert_cmpstr (after, ==, before);
          }
      }
  /* Exactly the four edges out of PENDING exist. */
  g_assert_cmpuint (allowed, ==, 4);
}

static void
test_transition_stamps (void)
{
  g_autoptr(SubagentApprovalRequest) approved = request_in_state (SUBAGENT_APPROVAL_STATUS_PENDING);
  g_autoptr(SubagentApprovalRequest) denied = request_in_state (SUBAGENT_APPROVAL_STATUS_PENDING);
  g_autoptr(SubagentApprovalRequest) timed_out = request_in_state (SUBAGENT_APPROVAL_STATUS_PENDING);
  g_autoptr(SubagentApprovalRequest) cancelled = request_in_state (SUBAGENT_APPROVAL_STATUS_PENDING);

  g_assert_true (subagent_approval_request_transition (approved, SUBAGENT_APPROVAL_STATUS_APPROVED, "ignored", NULL));
  g_assert_nonnull (subagent_approval_request_get_approved_at (approved));
  g_assert_null (subagent_approval_request_get_denied_at (approved));
  g_assert_null (subagent_approval_request_get_denial_reason (approved));
  g_assert_cmpstr (subagent_approval_request_get_approved_by (approved), ==, "human");

  g_assert_true (subagent_approval_request_transition (denied, SUBAGENT_APPROVAL_STATUS_DENIED, "too risky", "alice"));
  g_assert_null (subagent_approval_request_get_approved_at (denied));
  g_assert_nonnull (subagent_approval_request_get_denied_at (denied));
  g_assert_cmpstr (subagent_approval_request_get_denial_reason (denied), ==, "too risky");
  g_assert_cmpstr (subagent_approval_request_get_approved_by (denied), ==, "alice");

  /* Timeout and cancellation stamp denied_at and always carry a reason. */
  g_assert_true (subagent_approval_request_transition (timed_out, SUBAGENT_APPROVAL_STATUS_TIMEOUT, NULL, NULL));
  g_assert_nonnull (subagent_approval_request_get_denied_at (timed_out));
  g_assert_nonnull (subagent_approval_request_get_denial_reason (timed_out));
  g_assert_null (subagent_approval_request_get_approved_at (timed_out));

  g_assert_true (subagent_approval_request_transition (cancelled, SUBAGENT_APPROVAL_STATUS_CANCELLED, "child ended\x01", "system"));
  g_assert_nonnull (subagent_approval_request_get_denied_at (cancelled));
  /* Control characters from an approver are blanked. */
  g_assert_cmpstr (subagent_approval_request_get_denial_reason (cancelled), ==, "child ended ");
}

static void
test_long_reason_still_reads_back (void)
{
  g_autoptr(SubagentApprovalRequest) request = request_in_state (SUBAGENT_APPROVAL_STATUS_PENDING);
  g_autoptr(GString) reason = g_string_new (NULL);
  g_autoptr(JsonObject) object = NULL;
  g_autoptr(SubagentApprovalRequest) back = NULL;
  g_autoptr(GError) error = NULL;
  const char *stored;

  /* 3-byte characters, well past the 4096-byte limit, plus invalid UTF-8. */
  for (guint i = 0; i < 2000; i++)
    g_string_append (reason, "\xe2\x82\xac");
  g_string_append (reason, "\xff");
  g_assert_true (subagent_approval_request_transition (request, SUBAGENT_APPROVAL_STATUS_DENIED, reason->str, "x"));
  stored = subagent_approval_request_get_denial_reason (request);
  g_assert_true (g_utf8_validate (stored, -1, NULL));
  g_assert_cmpuint (strlen (stored), <=, 4096);
  g_assert_cmpuint (strlen (stored), >=, 4094);

  object = subagent_approval_request_to_json (request);
  back = subagent_approval_request_new_from_json (object, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_approval_request_get_denial_reason (back), ==, stored);
}

typedef struct {
  SubagentApprovalRequest *request;
  SubagentApprovalStatus to;
  GMutex *start_lock;
  gint *winners;
} RaceData;

static gpointer
race_thread (gpointer data)
{
  RaceData *race = data;

  /* Every thread waits at the same gate so they really race. */
  g_mutex_lock (race->start_lock);
  g_mutex_unlock (race->start_lock);
  if (subagent_approval_request_transition (race->request, race->to, "race", "racer"))
    g_atomic_int_inc (race->winners);
  return NULL;
}

static void
test_transition_single_winner (void)
{
  for (guint round = 0; round < 50; round++)
    {
      g_autoptr(SubagentApprovalRequest) request = request_in_state (SUBAGENT_APPROVAL_STATUS_PENDING);
      GMutex start_lock;
      gint winners = 0;
      RaceData data[8];
      GThread *threads[8];

      g_mutex_init (&start_lock);
      g_mutex_lock (&start_lock);
      for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
        {
          data[i] = (RaceData) { request, SUBAGENT_APPROVAL_STATUS_APPROVED + (i % 4), &start_lock, &winners };
          threads[i] = g_thread_new ("racer", race_thread, &data[i]);
        }
      g_mutex_unlock (&start_lock);
      for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
        g_thread_join (threads[i]);
      g_mutex_clear (&start_lock);

      g_assert_cmpint (winners, ==, 1);
      g_assert_true (subagent_approval_status_is_terminal (subagent_approval_request_get_status (request)));
    }
}

static void
test_digest_covers_tool_and_arguments (void)
{
  g_autoptr(SubagentApprovalRequest) base = make_request ("write_file", "{\"path\": \"a\", \"opts\": {\"x\": 1, \"y\": [1, 2.5, null, true]}}");
  g_autoptr(SubagentApprovalRequest) reordered = make_request ("write_file", "{\"opts\": {\"y\": [1, 2.5, null, true], \"x\": 1}, \"path\": \"a\"}");
  g_autoptr(SubagentApprovalRequest) other_tool = make_request ("delete_file", "{\"path\": \"a\", \"opts\": {\"x\": 1, \"y\": [1, 2.5, null, true]}}");
  g_autoptr(SubagentApprovalRequest) other_value = make_request ("write_file", "{\"path\": \"b\", \"opts\": {\"x\": 1, \"y\": [1, 2.5, null, true]}}");
  g_autoptr(SubagentApprovalRequest) other_nested = make_request ("write_file", "{\"path\": \"a\", \"opts\": {\"x\": 2, \"y\": [1, 2.5, null, true]}}");
  g_autoptr(SubagentApprovalRequest) other_order = make_request ("write_file", "{\"path\": \"a\", \"opts\": {\"x\": 1, \"y\": [2.5, 1, null, true]}}");
  const char *digest = subagent_approval_request_get_action_digest (base);

  /* Key order does not matter, at any depth. */
  g_assert_cmpstr (digest, ==, subagent_approval_request_get_action_digest (reordered));
  /* The tool, a value, a nested value and array order all do. */
  g_assert_cmpstr (digest, !=, subagent_approval_request_get_action_digest (other_tool));
  g_assert_cmpstr (digest, !=, subagent_approval_request_get_action_digest (other_value));
  g_assert_cmpstr (digest, !=, subagent_approval_request_get_action_digest (other_nested));
  g_assert_cmpstr (digest, !=, subagent_approval_request_get_action_digest (other_order));
}

static void
test_digest_definition (void)
{
  g_autoptr(JsonObject) args = parse_object ("{\"b\": \"q\\\"\\n\", \"a\": {\"d\": 1.0, \"c\": -3}}");
  g_autoptr(JsonNode) node = json_node_alloc ();
  g_autofree char *canonical = NULL;
  g_autofree char *digest = NULL;
  g_autofree char *expected = NULL;
  const char *expected_canonical = "{\"a\":{\"c\":-3,\"d\":1},\"b\":\"q\\\"\\u000a\"}";

  json_node_init_object (node, args);
  canonical = subagent_json_to_canonical_string (node);
  g_assert_cmpstr (canonical, ==, expected_canonical);

  /* SHA-256 over "tool\n" + canonical JSON, lowercase hex. */
  expected = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "edit\n{\"a\":{\"c\":-3,\"d\":1},\"b\":\"q\\\"\\u000a\"}", -1);
  digest = subagent_approval_compute_action_digest ("edit", args);
  g_assert_cmpstr (digest, ==, expected);
}

static void
test_arguments_sealed_copy (void)
{
  g_autoptr(JsonObject) args = parse_object ("{\"path\": \"a\"}");
  g_autoptr(SubagentApprovalRequest) request =
    subagent_approval_request_new ("child-1", "run-1", "writer", "write_file", args, NULL, NULL,
                                   SUBAGENT_NO_BATCH_INDEX, NULL, 30);
  g_autofree char *digest = g_strdup (subagent_approval_request_get_action_digest (request));

  json_object_set_string_member (args, "path", "changed");
  g_assert_cmpstr (json_object_get_string_member (subagent_approval_request_get_tool_arguments (request), "path"), ==, "a");
  g_assert_true (json_object_is_immutable (subagent_approval_request_get_tool_arguments (request)));
  g_assert_cmpstr (subagent_approval_request_get_action_digest (request), ==, digest);
  /* Defaults for the nullable context. */
  g_assert_cmpstr (subagent_approval_request_get_permission_mode (request), ==, "prompt");
  g_assert_cmpstr (subagent_approval_request_get_isolation (request), ==, "shared");
  g_assert_cmpint (subagent_approval_request_get_batch_index (request), ==, SUBAGENT_NO_BATCH_INDEX);
  g_assert_cmpuint (subagent_approval_request_get_timeout_seconds (request), ==, 30);
}

static void
test_json_key_order (void)
{
  static const char * const keys[] = {
    "request_id", "subagent_id", "parent_run_id", "subagent_name", "tool_name", "tool_arguments",
    "permission_mode", "isolation", "batch_index", "worktree_path", "created_at", "status",
    "approved_at", "denied_at", "denial_reason", "timeout_seconds", "approved_by", "action_digest", "host",
  };
  g_autoptr(SubagentApprovalRequest) request = make_request ("rm", "{\"z\": 1, \"a\": 2}");
  g_autoptr(JsonObject) object = subagent_approval_request_to_json (request);
  g_autoptr(GList) members = json_object_get_members (object);
  g_autofree char *text = object_to_string (object);
  guint i = 0;

  for (GList *l = members; l != NULL; l = l->next, i++)
    g_assert_cmpstr (l->data, ==, keys[i]);
  g_assert_cmpuint (i, ==, G_N_ELEMENTS (keys));
  /* The serialized text starts with the request id, too. */
  g_assert_true (g_str_has_prefix (text, "{\"request_id\":\""));
  g_assert_cmpstr (json_object_get_string_member (object, "status"), ==, "pending");
  g_assert_cmpint (json_object_get_int_member (object, "batch_index"), ==, 2);
  g_assert_true (json_object_get_null_member (object, "approved_at"));
}

static void
test_json_round_trip (void)
{
  for (int state = SUBAGENT_APPROVAL_STATUS_PENDING; state <= SUBAGENT_APPROVAL_STATUS_CANCELLED; state++)
    {
      g_autoptr(SubagentApprovalRequest) request = request_in_state (state);
      g_autoptr(JsonObject) object = subagent_approval_request_to_json (request);
      g_autofree char *text = object_to_string (object);
      g_autoptr(JsonObject) reparsed = parse_object (text);
      g_autoptr(GError) error = NULL;
      g_autoptr(SubagentApprovalRequest) back = subagent_approval_request_new_from_json (reparsed, &error);
      g_autoptr(JsonObject) back_object = NULL;
      g_autofree char *back_text = NULL;
      g_autoptr(SubagentApprovalRequest) copy = subagent_approval_request_copy (request);
      g_autoptr(JsonObject) copy_object = subagent_approval_request_to_json (copy);
      g_autofree char *copy_text = object_to_string (copy_object);

      g_assert_no_error (error);
      back_object = subagent_approval_request_to_json (back);
      back_text = object_to_string (back_object);
      g_assert_cmpstr (back_text, ==, text);
      g_assert_cmpstr (copy_text, ==, text);
    }
}

/* The direct writer gives the generator's bytes: every state, escapes in
 * every free-text field, arguments of every JSON type, no batch index, no
 * worktree, no host (a document from before hosts were recorded). */
static void
assert_string_matches_generator (SubagentApprovalRequest *request)
{
  g_autoptr(JsonObject) object = subagent_approval_request_to_json (request);
  g_autofree char *expected = object_to_string (object);
  g_autofree char *text = subagent_approval_request_to_json_string (request);

  g_assert_cmpstr (text, ==, expected);
}

static void
test_json_string_matches_generator (void)
{
  static const char *arguments[] = {
    "{}",
    "{\"path\": \"a \\\"quoted\\\" \\\\ back\\tslash\\nnew\\u0001\\u001f\\u007f é ✓\"}",
    "{\"n\": -9223372036854775808, \"m\": 9223372036854775807, \"d\": 0.1, \"e\": 1e300, \"f\": -2.5e-310, "
    "\"i\": 3.0, \"t\": true, \"u\": false, \"z\": null}",
    "{\"deep\": {\"a\": [1, [2, [3, {}]], {\"b\": []}], \"c\": {\"d\": {\"e\": \"f\"}}}, \"\\u00e9\\\"k\": 1}",
  };

  for (guint a = 0; a < G_N_ELEMENTS (arguments); a++)
    for (int state = SUBAGENT_APPROVAL_STATUS_PENDING; state <= SUBAGENT_APPROVAL_STATUS_CANCELLED; state++)
      {
        g_autoptr(JsonObject) args = parse_object (arguments[a]);
        g_autoptr(SubagentApprovalRequest) request =
          subagent_approval_request_new ("child-1", "run-1", "wri\"ter \\ ✓\tname", "tool\nname", args,
                                         a % 2 ? "workspace-write" : NULL, a % 2 ? NULL : "docker", a % 2 ? SUBAGENT_NO_BATCH_INDEX : 7,
                                         a % 2 ? NULL : "/tmp/w\"t\\é", a == 3 ? 0 : 600);
        g_autoptr(JsonObject) hostless = NULL;
        g_autoptr(SubagentApprovalRequest) old = NULL;
        g_autoptr(GError) error = NULL;
        g_autofree char *old_text = NULL;

        if (state != SUBAGENT_APPROVAL_STATUS_PENDING)
          g_assert_true (subagent_approval_request_transition (request, state, "why \"not\"\\\n\té ✓",
                                                               a % 2 ? NULL : "bob \"the\" approver"));
        assert_string_matches_generator (request);

        hostless = subagent_approval_request_to_json (request);
        g_assert_true (json_object_has_member (hostless, "host"));
        json_object_remove_member (hostless, "host");
        old = subagent_approval_request_new_from_json (hostless, &error);
        g_assert_no_error (error);
        assert_string_matches_generator (old);
        old_text = subagent_approval_request_to_json_string (old);
        g_assert_null (strstr (old_text, "\"host\""));
      }
}

static void
test_copy_is_independent (void)
{
  g_autoptr(SubagentApprovalRequest) request = request_in_state (SUBAGENT_APPROVAL_STATUS_PENDING);
  g_autoptr(SubagentApprovalRequest) copy = subagent_approval_request_copy (request);

  g_assert_true (subagent_approval_request_transition (copy, SUBAGENT_APPROVAL_STATUS_DENIED, "no", "bob"));
  g_assert_cmpint (subagent_approval_request_get_status (request), ==, SUBAGENT_APPROVAL_STATUS_PENDING);
  g_assert_cmpstr (subagent_approval_request_get_request_id (copy), ==,
                   subagent_approval_request_get_request_id (request));
}

static gpointer
get_arguments_thread (gpointer data)
{
  return subagent_approval_request_get_tool_arguments (data);
}

/* A copy makes its own arguments the first time they are asked for, once,
 * however many threads ask at the same moment; until then (and after) its
 * JSON is the original's. */
static void
test_copy_arguments_made_once (void)
{
  g_autoptr(SubagentApprovalRequest) request = make_request ("rm", "{\"path\": \"x\", \"n\": [1, {\"d\": 2.5}]}");
  g_autoptr(JsonObject) original_json = subagent_approval_request_to_json (request);
  g_autofree char *original = object_to_string (original_json);

  for (guint round = 0; round < 50; round++)
    {
      g_autoptr(SubagentApprovalRequest) copy = subagent_approval_request_copy (request);
      g_autoptr(SubagentApprovalRequest) copy_of_copy = subagent_approval_request_copy (copy);
      g_autofree char *before = subagent_approval_request_to_json_string (copy);
      g_autofree char *after = NULL;
      GThread *threads[8];
      JsonObject *first;

      g_assert_cmpstr (before, ==, original);
      for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
        threads[i] = g_thread_new ("arguments", get_arguments_thread, copy);
      first = g_thread_join (threads[0]);
      g_assert_nonnull (first);
      g_assert_true (first != subagent_approval_request_get_tool_arguments (request));
      for (guint i = 1; i < G_N_ELEMENTS (threads); i++)
        g_assert_true (g_thread_join (threads[i]) == first);
      g_assert_true (json_object_is_immutable (first));
      after = subagent_approval_request_to_json_string (copy);
      g_assert_cmpstr (after, ==, original);
      /* The copy of a copy still reads the same arguments. */
      g_clear_object (&copy);
      g_clear_pointer (&after, g_free);
      after = subagent_approval_request_to_json_string (copy_of_copy);
      g_assert_cmpstr (after, ==, original);
    }
}

/* Sets one member of a valid request's JSON and expects new_from_json to refuse it. */
static void
assert_rejected (const char *member,
                 const char *value_json,
                 GQuark      domain,
                 int         code)
{
  g_autoptr(SubagentApprovalRequest) request = request_in_state (SUBAGENT_APPROVAL_STATUS_PENDING);
  g_autoptr(JsonObject) object = subagent_approval_request_to_json (request);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentApprovalRequest) back = NULL;

  if (value_json == NULL)
    json_object_remove_member (object, member);
  else
    {
      g_autoptr(JsonNode) value = json_from_string (value_json, &error);
      g_assert_no_error (error);
      json_object_set_member (object, member, g_steal_pointer (&value));
    }
  back = subagent_approval_request_new_from_json (object, &error);
  g_test_message ("%s = %s: %s", member, value_json ? value_json : "(removed)", error ? error->message : "accepted");
  g_assert_null (back);
  g_assert_error (error, domain, code);
}

static void
test_json_rejects_bad_input (void)
{
  GQuark d = SUBAGENT_APPROVAL_ERROR;

  assert_rejected ("request_id", "\"../../etc/passwd\"", d, SUBAGENT_APPROVAL_ERROR_INVALID_ID);
  assert_rejected ("subagent_id", "\"\"", d, SUBAGENT_APPROVAL_ERROR_INVALID_ID);
  assert_rejected ("parent_run_id", NULL, d, SUBAGENT_APPROVAL_ERROR_INVALID_ID);
  assert_rejected ("tool_arguments", "{\"path\": \"elsewhere\"}", d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  assert_rejected ("tool_name", "\"delete_everything\"", d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  assert_rejected ("action_digest", NULL, d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  assert_rejected ("status", "\"maybe\"", d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  assert_rejected ("status", "\"approved\"", d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  assert_rejected ("approved_at", "\"2024-01-01T00:00:00Z\"", d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  assert_rejected ("created_at", "\"yesterday\"", d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  assert_rejected ("timeout_seconds", "0", d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  assert_rejected ("timeout_seconds", "\"180\"", d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  assert_rejected ("batch_index", "-1", d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  assert_rejected ("permission_mode", "\"root\"", d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  assert_rejected ("isolation", "\"a/b\"", d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
  assert_rejected ("subagent_name", "42", d, SUBAGENT_APPROVAL_ERROR_INTEGRITY);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/approval/request/new/defaults", test_new_defaults);
  g_test_add_func ("/approval/request/id/uuid-hex-unique", test_request_id_unique);
  g_test_add_func ("/approval/request/id/validation", test_id_validation);
  g_test_add_func ("/approval/request/state-machine/only-pending-to-terminal", test_state_machine_edges);
  g_test_add_func ("/approval/request/state-machine/stamps", test_transition_stamps);
  g_test_add_func ("/approval/request/state-machine/single-winner", test_transition_single_winner);
  g_test_add_func ("/approval/request/state-machine/long-reason-reads-back", test_long_reason_still_reads_back);
  g_test_add_func ("/approval/request/digest/covers-tool-and-arguments", test_digest_covers_tool_and_arguments);
  g_test_add_func ("/approval/request/digest/definition", test_digest_definition);
  g_test_add_func ("/approval/request/arguments/sealed-copy", test_arguments_sealed_copy);
  g_test_add_func ("/approval/request/json/key-order", test_json_key_order);
  g_test_add_func ("/approval/request/json/round-trip", test_json_round_trip);
  g_test_add_func ("/approval/request/json/string-matches-generator", test_json_string_matches_generator);
  g_test_add_func ("/approval/request/copy/independent", test_copy_is_independent);
  g_test_add_func ("/approval/request/copy/arguments-made-once", test_copy_arguments_made_once);
  g_test_add_func ("/approval/request/json/rejects-bad-input", test_json_rejects_bad_input);
  return g_test_run ();
}
