/* subagent-config-models.c: the `models:` part of config.yaml.
 *
 * Kept apart from subagent-config.c: it only checks and normalizes the
 * model entries; what talks to a model lives in a runner plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-config-private.h"

/* Keys of one entry of `models:`. */
static const char * const model_keys[] = {
  "base_url", "model", "api_key_env", "input_cents_per_mtok", "output_cents_per_mtok",
  "max_tokens", "temperature", "headers", "connect_timeout_seconds", "read_timeout_seconds",
  "max_retries", NULL
};

static gboolean
bad (GError    **error,
     const char *source,
     const char *name,
     const char *key,
     const char *expected)
{
  g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
               "%s: “models.%s%s%s” must be %s", source, name, key ? "." : "", key ? key : "", expected);
  return FALSE;
}

static gboolean
is_string (JsonNode *node)
{
  return JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING;
}

static gboolean
is_number (JsonNode *node)
{
  return JSON_NODE_HOLDS_VALUE (node) &&
         (json_node_get_value_type (node) == G_TYPE_INT64 || json_node_get_value_type (node) == G_TYPE_DOUBLE);
}

static gboolean
is_env_name (const char *s)
{
  if (s == NULL || !(g_ascii_isalpha (*s) || *s == '_'))
    return FALSE;
  for (; *s; s++)
    if (!(g_ascii_isalnum (*s) || *s == '_'))
      return FALSE;
  return TRUE;
}

gboolean
_subagent_config_model_name_is_valid (const char *name)
{
  if (name == NULL || *name == '\0' || strlen (name) > 128)
    return FALSE;
  for (const char *p = name; *p; p++)
    if (!(g_ascii_isalnum (*p) || *p == '_' || *p == '-' || *p == '.'))
      return FALSE;
  return TRUE;
}

/* One entry, checked, as a new object with defaults filled in. */
static JsonObject *
normalize_model (const char  *name,
                 JsonNode    *node,
                 const char  *source,
                 GError     **error)
{
  g_autoptr(JsonObject) out = json_object_new ();
  JsonObject *in;
  g_autoptr(GList) members = NULL;
  JsonNode *value;
  const char *url;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return bad (error, source, name, NULL, "a mapping with base_url and model"), NULL;
  in = json_node_get_object (node);
  members = json_object_get_members (in);
  for (GList *l = members; l != NULL; l = l->next)
    if (!g_strv_contains (model_keys, l->data))
      {
        g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                     "%s: unknown key “models.%s.%s”; a model takes %s", source, name,
                     (const char *) l->data, "base_url, model, api_key_env, input_cents_per_mtok, "
                     "output_cents_per_mtok, max_tokens, temperature, headers, connect_timeout_seconds, "
                     "read_timeout_seconds, max_retries");
        return NULL;
      }

  json_object_set_string_member (out, "name", name);

  value = json_object_get_member (in, "base_url");
  if (value == NULL || !is_string (value))
    return bad (error, source, name, "base_url", "the server's URL, such as http://127.0.0.1:8080/v1"), NULL;
  url = json_node_get_string (value);
  if (!g_str_has_prefix (url, "http://") && !g_str_has_prefix (url, "https://"))
    return bad (error, source, name, "base_url", "an http:// or https:// URL"), NULL;
  json_object_set_string_member (out, "base_url", url);

  value = json_object_get_member (in, "model");
  if (value == NULL || !is_string (value) || *json_node_get_string (value) == '\0')
    return bad (error, source, name, "model", "the server's name for the model (text)"), NULL;
  json_object_set_string_member (out, "model", json_node_get_string (value));

  value = json_object_get_member (in, "api_key_env");
  if (value != NULL && !JSON_NODE_HOLDS_NULL (value))
    {
      /* The key itself never belongs in a file that may be committed. */
      if (!is_string (value) || !is_env_name (json_node_get_string (value)))
        return bad (error, source, name, "api_key_env",
                    "the name of the environment variable that holds the key (not the key)"), NULL;
      json_object_set_string_member (out, "api_key_env", json_node_get_string (value));
    }

  for (guint i = 0; i < 2; i++)
    {
      const char *key = i == 0 ? "input_cents_per_mtok" : "output_cents_per_mtok";

      value = json_object_get_member (in, key);
      if (value == NULL || JSON_NODE_HOLDS_NULL (value))
        json_object_set_double_member (out, key, 0);
      else if (!is_number (value) || json_node_get_double (value) < 0)
        return bad (error, source, name, key, "a non-negative number of cents per million tokens"), NULL;
      else
        json_object_set_double_member (out, key, json_node_get_double (value));
    }

  {
    static const struct { const char *key; gint64 min, max, def; } counts[] = {
      { "max_tokens", 1, G_MAXINT32, 0 },
      { "connect_timeout_seconds", 1, 3600, 10 },
      { "read_timeout_seconds", 1, 24 * 3600, 120 },
      { "max_retries", 0, 10, 2 },
    };

    for (guint i = 0; i < G_N_ELEMENTS (counts); i++)
      {
        value = json_object_get_member (in, counts[i].key);
        if (value == NULL || JSON_NODE_HOLDS_NULL (value))
          {
            if (counts[i].def != 0 || g_str_equal (counts[i].key, "max_retries"))
              json_object_set_int_member (out, counts[i].key, counts[i].def);
            continue;
          }
        if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_INT64 ||
            json_node_get_int (value) < counts[i].min || json_node_get_int (value) > counts[i].max)
          {
            g_autofree char *expected = g_strdup_printf ("a whole number from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                                                         counts[i].min, counts[i].max);
            return bad (error, source, name, counts[i].key, expected), NULL;
          }
        json_object_set_int_member (out, counts[i].key, json_node_get_int (value));
      }
  }

  value = json_object_get_member (in, "temperature");
  if (value != NULL && !JSON_NODE_HOLDS_NULL (value))
    {
      if (!is_number (value) || json_node_get_double (value) < 0 || json_node_get_double (value) > 2)
        return bad (error, source, name, "temperature", "a number from 0 to 2"), NULL;
      json_object_set_double_member (out, "temperature", json_node_get_double (value));
    }

  value = json_object_get_member (in, "headers");
  if (value != NULL && !JSON_NODE_HOLDS_NULL (value))
    {
      g_autoptr(JsonObject) headers = json_object_new ();
      JsonObjectIter iter;
      const char *header;
      JsonNode *text;

      if (!JSON_NODE_HOLDS_OBJECT (value))
        return bad (error, source, name, "headers", "a mapping of header name to text"), NULL;
      json_object_iter_init (&iter, json_node_get_object (value));
      while (json_object_iter_next (&iter, &header, &text))
        {
          if (!is_string (text) || strpbrk (json_node_get_string (text), "\r\n") != NULL ||
              *header == '\0' || strpbrk (header, " \t\r\n:") != NULL)
            return bad (error, source, name, "headers", "a mapping of header name to one line of text"), NULL;
          json_object_set_string_member (headers, header, json_node_get_string (text));
        }
      json_object_set_object_member (out, "headers", g_steal_pointer (&headers));
    }

  return g_steal_pointer (&out);
}

gboolean
_subagent_config_load_models (JsonObject   *root,
                              const char   *source,
                              JsonObject  **models_out,
                              char        **default_model_out,
                              GHashTable   *aliases,
                              GError      **error)
{
  g_autoptr(JsonObject) models = json_object_new ();
  JsonNode *node = json_object_get_member (root, "models");
  JsonObjectIter iter;
  const char *name;
  JsonNode *entry;

  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                       "%s: “models” must be a mapping of model name to its settings", source);
          return FALSE;
        }
      json_object_iter_init (&iter, json_node_get_object (node));
      while (json_object_iter_next (&iter, &name, &entry))
        {
          JsonObject *model;

          if (!_subagent_config_model_name_is_valid (name))
            return bad (error, source, name, NULL, "named with letters, digits, “-”, “_” or “.”");
          model = normalize_model (name, entry, source, error);
          if (model == NULL)
            return FALSE;
          json_object_set_object_member (models, name, model);
        }
    }

  node = json_object_get_member (root, "model_aliases");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                       "%s: “model_aliases” must be a mapping such as {sonnet: my-model}", source);
          return FALSE;
        }
      json_object_iter_init (&iter, json_node_get_object (node));
      while (json_object_iter_next (&iter, &name, &entry))
        {
          if (!is_string (entry) || !json_object_has_member (models, json_node_get_string (entry)))
            {
              g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                           "%s: “model_aliases.%s” must name a model of “models”", source, name);
              return FALSE;
            }
          g_hash_table_replace (aliases, g_ascii_strdown (name, -1), g_strdup (json_node_get_string (entry)));
        }
    }

  node = json_object_get_member (root, "default_model");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      const char *target;

      if (!is_string (node))
        {
          g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                       "%s: “default_model” must name a model of “models”", source);
          return FALSE;
        }
      target = json_node_get_string (node);
      if (!json_object_has_member (models, target) && g_hash_table_lookup (aliases, target) == NULL)
        {
          g_set_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE,
                       "%s: “default_model” is “%s”, which “models” does not define", source, target);
          return FALSE;
        }
      g_free (*default_model_out);
      *default_model_out = g_strdup (target);
    }

  g_clear_pointer (models_out, json_object_unref);
  *models_out = g_steal_pointer (&models);
  return TRUE;
}
