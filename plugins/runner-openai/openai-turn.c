/* openai-turn.c: one model turn assembled from a chat-completions stream.
 *
 * Servers differ in how they cut a turn into chunks: OpenAI and vLLM send
 * a tool call's id and name once and its arguments in fragments keyed by
 * `index`; llama.cpp does the same and adds `timings`; Ollama sends each
 * call whole in one chunk, often with `finish_reason: stop`. So calls are
 * matched by index, else by id, else continue the last one, and a turn has
 * tool calls when calls arrived, whatever `finish_reason` says.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "openai-private.h"

static void
tool_call_free (OpenaiToolCall *call)
{
  g_free (call->id);
  g_free (call->name);
  g_string_free (call->arguments, TRUE);
  g_free (call);
}

OpenaiTurn *
openai_turn_new (void)
{
  OpenaiTurn *self = g_new0 (OpenaiTurn, 1);

  self->content = g_string_new (NULL);
  self->tool_calls = g_ptr_array_new_with_free_func ((GDestroyNotify) tool_call_free);
  self->event = g_string_new (NULL);
  self->pending = g_ptr_array_new_with_free_func (g_free);
  return self;
}

void
openai_turn_free (OpenaiTurn *self)
{
  if (self == NULL)
    return;
  g_string_free (self->content, TRUE);
  g_ptr_array_unref (self->tool_calls);
  g_free (self->finish_reason);
  g_clear_pointer (&self->usage, json_object_unref);
  g_string_free (self->event, TRUE);
  g_ptr_array_unref (self->pending);
  g_free (self);
}

static const char *
string_member (JsonObject *object,
               const char *key)
{
  JsonNode *node = object ? json_object_get_member (object, key) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

static JsonObject *
object_member (JsonObject *object,
               const char *key)
{
  JsonNode *node = object ? json_object_get_member (object, key) : NULL;

  return (node != NULL && JSON_NODE_HOLDS_OBJECT (node)) ? json_node_get_object (node) : NULL;
}

static JsonArray *
array_member (JsonObject *object,
              const char *key)
{
  JsonNode *node = object ? json_object_get_member (object, key) : NULL;

  return (node != NULL && JSON_NODE_HOLDS_ARRAY (node)) ? json_node_get_array (node) : NULL;
}

static OpenaiToolCall *
find_call (OpenaiTurn *self,
           gint64      index,
           const char *id,
           const char *name)
{
  OpenaiToolCall *call;

  if (index >= 0)
    {
      for (guint i = 0; i < self->tool_calls->len; i++)
        {
          call = g_ptr_array_index (self->tool_calls, i);
          if (call->index == index)
            return call;
        }
    }
  else if (id != NULL && *id != '\0')
    {
      for (guint i = 0; i < self->tool_calls->len; i++)
        {
          call = g_ptr_array_index (self->tool_calls, i);
          if (g_strcmp0 (call->id, id) == 0)
            return call;
        }
    }
  else if (self->tool_calls->len > 0 && (name == NULL || *name == '\0'))
    return g_ptr_array_index (self->tool_calls, self->tool_calls->len - 1);

  call = g_new0 (OpenaiToolCall, 1);
  call->index = index;
  call->arguments = g_string_new (NULL);
  g_ptr_array_add (self->tool_calls, call);
  return call;
}

static void
feed_tool_call (OpenaiTurn *self,
                JsonObject *fragment)
{
  JsonObject *function = object_member (fragment, "function");
  JsonNode *index_node = json_object_get_member (fragment, "index");
  gint64 index = -1;
  const char *id = string_member (fragment, "id");
  const char *name = string_member (function, "name");
  JsonNode *arguments = function ? json_object_get_member (function, "arguments") : NULL;
  OpenaiToolCall *call;

  if (index_node != NULL && JSON_NODE_HOLDS_VALUE (index_node) &&
      json_node_get_value_type (index_node) == G_TYPE_INT64)
    index = json_node_get_int (index_node);
  call = find_call (self, index, id, name);
  self->visible = TRUE;

  if (id != NULL && *id != '\0' && call->id == NULL)
    call->id = g_strdup (id);
  /* Some servers repeat the name in every fragment; others might split it. */
  if (name != NULL && *name != '\0')
    {
      if (call->name == NULL)
        call->name = g_strdup (name);
      else if (!g_str_equal (call->name, name))
        {
          char *joined = g_strconcat (call->name, name, NULL);
          g_free (call->name);
          call->name = joined;
        }
    }
  if (arguments != NULL)
    {
      if (JSON_NODE_HOLDS_VALUE (arguments) && json_node_get_value_type (arguments) == G_TYPE_STRING)
        g_string_append (call->arguments, json_node_get_string (arguments));
      else if (JSON_NODE_HOLDS_OBJECT (arguments))
        {
          /* A few servers send the arguments parsed. */
          g_autofree char *text = json_to_string (arguments, FALSE);
          g_string_assign (call->arguments, text);
        }
    }
}

static void
feed_message (OpenaiTurn *self,
              JsonObject *message)
{
  const char *content = string_member (message, "content");
  JsonArray *calls = array_member (message, "tool_calls");

  if (content != NULL && *content != '\0')
    {
      g_string_append (self->content, content);
      self->visible = TRUE;
    }
  for (guint i = 0; calls != NULL && i < json_array_get_length (calls); i++)
    {
      JsonNode *node = json_array_get_element (calls, i);

      if (JSON_NODE_HOLDS_OBJECT (node))
        feed_tool_call (self, json_node_get_object (node));
    }
}

gboolean
openai_turn_feed_chunk (OpenaiTurn  *self,
                        JsonObject  *chunk,
                        GError     **error)
{
  JsonArray *choices = array_member (chunk, "choices");
  JsonObject *usage = object_member (chunk, "usage");
  JsonNode *error_node = json_object_get_member (chunk, "error");

  /* Servers report a failure mid-stream as an event with `error`. */
  if (error_node != NULL && !JSON_NODE_HOLDS_NULL (error_node))
    {
      const char *message = JSON_NODE_HOLDS_OBJECT (error_node)
                            ? string_member (json_node_get_object (error_node), "message")
                            : (JSON_NODE_HOLDS_VALUE (error_node) ? json_node_get_string (error_node) : NULL);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the model server reported an error in its stream: %s",
                   message ? message : "no message");
      return FALSE;
    }
  if (usage != NULL)
    {
      g_clear_pointer (&self->usage, json_object_unref);
      self->usage = json_object_ref (usage);
    }
  for (guint i = 0; choices != NULL && i < json_array_get_length (choices); i++)
    {
      JsonNode *node = json_array_get_element (choices, i);
      JsonObject *choice;
      JsonObject *delta;
      const char *finish;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        continue;
      choice = json_node_get_object (node);
      /* One conversation, one choice: n is never asked for. */
      if (json_object_has_member (choice, "index") && json_object_get_int_member (choice, "index") != 0)
        continue;
      delta = object_member (choice, "delta");
      if (delta == NULL)
        delta = object_member (choice, "message");
      if (delta != NULL)
        feed_message (self, delta);
      finish = string_member (choice, "finish_reason");
      if (finish != NULL)
        {
          g_free (self->finish_reason);
          self->finish_reason = g_strdup (finish);
        }
    }
  return TRUE;
}

static gboolean
parse_one (OpenaiTurn  *self,
           const char  *text,
           GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  g_autoptr(GError) local_error = NULL;
  JsonNode *root;

  if (!json_parser_load_from_data (parser, text, -1, &local_error))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "the model server sent a stream event that is not JSON (%s)", local_error->message);
      return FALSE;
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return TRUE;
  return openai_turn_feed_chunk (self, json_node_get_object (root), error);
}

/* Events are kept as text and parsed together at the end of the stream:
 * one JSON parse per turn instead of one per chunk (json-glib sets up a
 * scanner per parse, which costs more than a small chunk's content). */
static void
dispatch_event (OpenaiTurn *self)
{
  if (self->event->len == 0)
    return;
  if (g_str_equal (self->event->str, "[DONE]"))
    self->done = TRUE;
  else
    {
      g_ptr_array_add (self->pending, g_strndup (self->event->str, self->event->len));
      self->visible = TRUE;
    }
  g_string_truncate (self->event, 0);
}

gboolean
openai_turn_parse_pending (OpenaiTurn  *self,
                           GError     **error)
{
  g_autoptr(GString) all = NULL;
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(JsonNode) fast = NULL;
  JsonNode *root;
  guint n = self->pending->len;

  dispatch_event (self);
  n = self->pending->len;
  if (n == 0)
    return TRUE;
  all = g_string_new ("[");
  for (guint i = 0; i < n; i++)
    {
      if (i > 0)
        g_string_append_c (all, ',');
      g_string_append (all, g_ptr_array_index (self->pending, i));
    }
  g_string_append_c (all, ']');
  fast = openai_json_parse (all->str, all->len);
  if (fast != NULL)
    root = fast;
  else
    {
      parser = json_parser_new_immutable ();
      root = json_parser_load_from_data (parser, all->str, all->len, NULL) ? json_parser_get_root (parser) : NULL;
    }
  if (root != NULL && JSON_NODE_HOLDS_ARRAY (root) && json_array_get_length (json_node_get_array (root)) == n)
    {
      JsonArray *chunks = json_node_get_array (root);

      g_ptr_array_set_size (self->pending, 0);
      for (guint i = 0; i < n; i++)
        {
          JsonNode *chunk = json_array_get_element (chunks, i);

          if (JSON_NODE_HOLDS_OBJECT (chunk) && !openai_turn_feed_chunk (self, json_node_get_object (chunk), error))
            return FALSE;
        }
      return TRUE;
    }
  /* Something is wrong with one of them: find it, one at a time. */
  for (guint i = 0; i < n; i++)
    if (!parse_one (self, g_ptr_array_index (self->pending, i), error))
      {
        g_ptr_array_set_size (self->pending, 0);
        return FALSE;
      }
  g_ptr_array_set_size (self->pending, 0);
  return TRUE;
}

static gboolean
looks_whole (GString *event)
{
  gsize end = event->len;

  while (end > 0 && g_ascii_isspace (event->str[end - 1]))
    end--;
  return event->len > 0 && event->str[0] == '{' && end > 0 && event->str[end - 1] == '}';
}

gboolean
openai_turn_feed_sse_line (OpenaiTurn  *self,
                           const char  *line,
                           GError     **error)
{
  const char *value;

  /* A blank line ends an event (SSE); some servers never send one before
   * the next `data:`, so each data line that already parses is taken too. */
  if (*line == '\0')
    {
      dispatch_event (self);
      return TRUE;
    }
  if (*line == ':')
    return TRUE;  /* comment / keep-alive */
  if (!g_str_has_prefix (line, "data:"))
    return TRUE;  /* event:, id:, retry: carry nothing we use */
  value = line + 5;
  if (*value == ' ')
    value++;
  if (self->event->len > 0)
    {
      /* A data line after a whole event without a blank line between
       * starts the next event; otherwise it continues this one. */
      if (looks_whole (self->event))
        dispatch_event (self);
      else
        g_string_append_c (self->event, '\n');
    }
  g_string_append (self->event, value);
  if (g_str_equal (self->event->str, "[DONE]"))
    dispatch_event (self);
  return TRUE;
}

void
openai_turn_finish (OpenaiTurn *self,
                    const char *id_prefix)
{
  /* An event left without its blank line still counts. */
  openai_turn_parse_pending (self, NULL);
  for (guint i = 0; i < self->tool_calls->len; i++)
    {
      OpenaiToolCall *call = g_ptr_array_index (self->tool_calls, i);

      if (call->id == NULL || *call->id == '\0')
        {
          g_free (call->id);
          call->id = g_strdup_printf ("call_%s_%u", id_prefix, i);
        }
    }
}

JsonObject *
openai_turn_to_message (OpenaiTurn *self)
{
  JsonObject *message = json_object_new ();

  json_object_set_string_member (message, "role", "assistant");
  if (self->content->len > 0 || self->tool_calls->len == 0)
    json_object_set_string_member (message, "content", self->content->str);
  else
    json_object_set_null_member (message, "content");
  if (self->tool_calls->len > 0)
    {
      JsonArray *calls = json_array_new ();

      for (guint i = 0; i < self->tool_calls->len; i++)
        {
          OpenaiToolCall *call = g_ptr_array_index (self->tool_calls, i);
          JsonObject *object = json_object_new ();
          JsonObject *function = json_object_new ();

          json_object_set_string_member (object, "id", call->id ? call->id : "");
          json_object_set_string_member (object, "type", "function");
          json_object_set_string_member (function, "name", call->name ? call->name : "");
          json_object_set_string_member (function, "arguments", call->arguments->str);
          json_object_set_object_member (object, "function", function);
          json_array_add_object_element (calls, object);
        }
      json_object_set_array_member (message, "tool_calls", calls);
    }
  return message;
}
