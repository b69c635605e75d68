/* subagent-json-private.h: typed, validating reads of untrusted JSON records.
 *
 * Shared by the value objects (lineage, session, run result) that are read
 * back from disk. Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <math.h>

#include <json-glib/json-glib.h>

#include "subagent-error.h"

G_BEGIN_DECLS

/* json_node_copy() shares objects and arrays; this copies all the way down,
 * keeping the members' order. */
/* The largest amount (cents, CPUs) read or written: far below 1e17. */
#define SUBAGENT_JSON_MAX_AMOUNT 1e15

static inline JsonNode *
subagent_json_node_deep_copy (JsonNode *node)
{
  JsonNode *copy;

  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObject *src = json_node_get_object (node);
        g_autoptr(JsonObject) dst = json_object_new ();
        JsonObjectIter iter;
        const char *name;
        JsonNode *member;

        json_object_iter_init_ordered (&iter, src);
        while (json_object_iter_next_ordered (&iter, &name, &member))
          json_object_set_member (dst, name, subagent_json_node_deep_copy (member));
        copy = json_node_init_object (json_node_alloc (), dst);
        break;
      }
    case JSON_NODE_ARRAY:
      {
        JsonArray *src = json_node_get_array (node);
        g_autoptr(JsonArray) dst = json_array_sized_new (json_array_get_length (src));

        for (guint i = 0; i < json_array_get_length (src); i++)
          json_array_add_element (dst, subagent_json_node_deep_copy (json_array_get_element (src, i)));
        copy = json_node_init_array (json_node_alloc (), dst);
        break;
      }
    case JSON_NODE_VALUE:
      /* Fresh leaves: json_node_copy() would keep a sealed node's seal. */
      copy = json_node_new (JSON_NODE_VALUE);
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_INT64:
          json_node_set_int (copy, json_node_get_int (node));
          break;
        case G_TYPE_DOUBLE:
          json_node_set_double (copy, json_node_get_double (node));
          break;
        case G_TYPE_BOOLEAN:
          json_node_set_boolean (copy, json_node_get_boolean (node));
          break;
        default:
          json_node_set_string (copy, json_node_get_string (node));
          break;
        }
      break;
    case JSON_NODE_NULL:
    default:
      copy = json_node_new (JSON_NODE_NULL);
      break;
    }
  return copy;
}

/* A deep copy that nobody can change afterwards: value objects hand out
 * (transfer none) pointers to it and must stay immutable. Always a copy,
 * even of a sealed object: json-glib's reference counts are not atomic, and
 * value objects (approval requests above all) cross threads, so sharing one
 * JsonObject between two of them races on its count. */
static inline JsonObject *
subagent_json_object_sealed_copy (JsonObject *object)
{
  g_autoptr(JsonNode) copy = NULL;

  g_autoptr(JsonObject) dst = NULL;
  JsonObjectIter iter;
  const char *name;
  JsonNode *member;

  if (object == NULL)
    return NULL;
  /* Read @object without taking a reference to it: another thread may be
   * copying the same object at this moment. */
  dst = json_object_new ();
  json_object_iter_init_ordered (&iter, object);
  while (json_object_iter_next_ordered (&iter, &name, &member))
    json_object_set_member (dst, name, subagent_json_node_deep_copy (member));
  copy = json_node_init_object (json_node_alloc (), dst);
  json_node_seal (copy);
  return json_object_ref (json_node_get_object (copy));
}

static inline void
subagent_json_set_nullable_string (JsonObject *object,
                                   const char *key,
                                   const char *value)
{
  if (value != NULL)
    json_object_set_string_member (object, key, value);
  else
    json_object_set_null_member (object, key);
}

static inline gboolean
subagent_json_bad_type (const char  *what,
                        const char  *key,
                        const char  *expected,
                        GError     **error)
{
  g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
               "%s: member “%s” must be %s; fix or remove it", what, key, expected);
  return FALSE;
}

/* Reads a string member. Absent or null gives NULL unless @required. */
static inline gboolean
subagent_json_read_string (JsonObject  *object,
                           const char  *what,
                           const char  *key,
                           gboolean     required,
                           const char **out,
                           GError     **error)
{
  JsonNode *node = json_object_get_member (object, key);

  *out = NULL;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      if (required)
        {
          g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                       "%s: required member “%s” is missing", what, key);
          return FALSE;
        }
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return subagent_json_bad_type (what, key, "a string", error);
  *out = json_node_get_string (node);
  return TRUE;
}

/* Reads a whole number in [min, max]. Absent or null leaves *out unchanged. */
static inline gboolean
subagent_json_read_int (JsonObject  *object,
                        const char  *what,
                        const char  *key,
                        gint64       min,
                        gint64       max,
                        gint64      *out,
                        GError     **error)
{
  JsonNode *node = json_object_get_member (object, key);
  g_autofree char *expected = NULL;
  gint64 value;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  expected = g_strdup_printf ("a whole number from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT, min, max);
  if (!JSON_NODE_HOLDS_VALUE (node))
    return subagent_json_bad_type (what, key, expected, error);
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    value = json_node_get_int (node);
  else if (json_node_get_value_type (node) == G_TYPE_DOUBLE)
    {
      double d = json_node_get_double (node);

      /* Range first: the cast is undefined outside gint64. */
      if (!isfinite (d) || d < -9.0e18 || d > 9.0e18 || d != (double) (gint64) d)
        return subagent_json_bad_type (what, key, expected, error);
      value = (gint64) d;
    }
  else
    return subagent_json_bad_type (what, key, expected, error);
  if (value < min || value > max)
    return subagent_json_bad_type (what, key, expected, error);
  *out = value;
  return TRUE;
}

/* Reads a finite number >= 0. Absent or null leaves *out unchanged. */
static inline gboolean
subagent_json_read_amount (JsonObject  *object,
                           const char  *what,
                           const char  *key,
                           double      *out,
                           GError     **error)
{
  JsonNode *node = json_object_get_member (object, key);
  GType type;
  double value;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  type = JSON_NODE_HOLDS_VALUE (node) ? json_node_get_value_type (node) : G_TYPE_INVALID;
  if (type != G_TYPE_INT64 && type != G_TYPE_DOUBLE)
    return subagent_json_bad_type (what, key, "a number of at least 0", error);
  value = json_node_get_double (node);
  if (!isfinite (value) || value < 0)
    return subagent_json_bad_type (what, key, "a number of at least 0", error);
  /* Bounded, not refused: a huge cost must still exceed every budget. */
  *out = MIN (value, SUBAGENT_JSON_MAX_AMOUNT);
  return TRUE;
}

/* An amount as records store it: finite, within ±SUBAGENT_JSON_MAX_AMOUNT
 * (json-glib writes a double of 1e17 or more as "1e+17.0", which is not
 * JSON: every amount written is clamped below that). */
static inline double
subagent_json_amount (double value)
{
  if (!isfinite (value))
    value = value > 0 ? SUBAGENT_JSON_MAX_AMOUNT : (value < 0 ? -SUBAGENT_JSON_MAX_AMOUNT : 0);
  return CLAMP (value, -SUBAGENT_JSON_MAX_AMOUNT, SUBAGENT_JSON_MAX_AMOUNT);
}

/* @value as an amount (subagent_json_amount()). */
static inline void
subagent_json_set_amount (JsonObject *object,
                          const char *key,
                          double      value)
{
  json_object_set_double_member (object, key, subagent_json_amount (value));
}

static inline gboolean
subagent_json_read_boolean (JsonObject  *object,
                            const char  *what,
                            const char  *key,
                            gboolean    *out,
                            GError     **error)
{
  JsonNode *node = json_object_get_member (object, key);

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return subagent_json_bad_type (what, key, "true or false", error);
  *out = json_node_get_boolean (node);
  return TRUE;
}

/* Absent or null gives NULL; otherwise an object (transfer none). */
static inline gboolean
subagent_json_read_object (JsonObject  *object,
                           const char  *what,
                           const char  *key,
                           JsonObject **out,
                           GError     **error)
{
  JsonNode *node = json_object_get_member (object, key);

  *out = NULL;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return subagent_json_bad_type (what, key, "an object", error);
  *out = json_node_get_object (node);
  return TRUE;
}

G_END_DECLS
