/* subagent-json-line-private.h: JSON lines written directly, byte for byte
 * what json-glib's generator writes, and record times formatted without
 * GDateTime's format machinery.
 *
 * The records a command child leaves (audit line, session record, events)
 * were a JsonObject, copies of their members and a JsonGenerator each: a
 * large share of the host's CPU per child. These write the same bytes into
 * a GString (tests/test-json-line.c compares them with the generator).
 * Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* g_string_append_len() without the call where the string has room: GLib
 * 2.74 sends every append through g_string_insert_len(), and these
 * writers append a few bytes at a time (a tenth of a command child's host
 * instructions went there). @data must not point into @out. */
static inline void
_subagent_line_append_len (GString    *out,
                           const char *data,
                           gsize       len)
{
  if (G_LIKELY (out->len + len < out->allocated_len))
    {
      memcpy (out->str + out->len, data, len);
      out->len += len;
      out->str[out->len] = '\0';
    }
  else
    g_string_append_len (out, data, (gssize) len);
}

static inline void
_subagent_line_append (GString    *out,
                       const char *text)
{
  _subagent_line_append_len (out, text, strlen (text));
}

/* Room for any time the two formatters below write. */
#define SUBAGENT_TIME_TEXT_SIZE 48

/* A JSON string ("null" for NULL) as json-glib 1.6's generator writes it. */
void _subagent_json_line_append_string (GString    *out,
                                        const char *text) G_GNUC_INTERNAL;
/* @node as json_to_string (@node, FALSE) writes it. */
void _subagent_json_line_append_node   (GString    *out,
                                        JsonNode   *node) G_GNUC_INTERNAL;
/* `,"key":` and a JSON string (null for NULL): a member after the first. */
void _subagent_json_line_append_string_member (GString    *out,
                                               const char *key,
                                               const char *value) G_GNUC_INTERNAL;
/* `,"key":` and an integer: a member after the first. */
void _subagent_json_line_append_int_member (GString    *out,
                                            const char *key,
                                            gint64      value) G_GNUC_INTERNAL;
/* `,"key":` and an index, or null for a negative one (no batch index). */
void _subagent_json_line_append_index_member (GString    *out,
                                              const char *key,
                                              gint64      index) G_GNUC_INTERNAL;
/* `,"key":` and an amount as records store it (subagent_json_amount()). */
void _subagent_json_line_append_amount_member (GString    *out,
                                               const char *key,
                                               double      amount) G_GNUC_INTERNAL;
/* @object as json_to_string() writes it, read in place (no reference
 * taken: safe on a sealed object shared between threads). */
void _subagent_json_line_append_object (GString    *out,
                                        JsonObject *object) G_GNUC_INTERNAL;
/* A double member's value as the generator writes it. */
void _subagent_json_line_append_double (GString    *out,
                                        double      value) G_GNUC_INTERNAL;
/* Room for any integer _subagent_format_int() writes, with its NUL. */
#define SUBAGENT_INT_TEXT_SIZE 24

/* An integer as the generator (and printf's %" G_GINT64_FORMAT ") writes it:
 * appended, or into the end of @text (returns where it starts). */
const char *_subagent_format_int (gint64 value,
                                  char   text[SUBAGENT_INT_TEXT_SIZE]) G_GNUC_INTERNAL;
void _subagent_json_line_append_int    (GString    *out,
                                        gint64      value) G_GNUC_INTERNAL;
/* `,"key":` (no comma with @first). */
void _subagent_json_line_append_key    (GString    *out,
                                        const char *key,
                                        gboolean    first) G_GNUC_INTERNAL;

/* What g_uuid_string_random() returns (a version 4 UUID from the same
 * g_random_int()s), written without printf; with @dashes FALSE, its 32
 * hex digits only. */
char *_subagent_uuid_string_random (gboolean dashes) G_GNUC_INTERNAL;

/* g_date_time_format (@time, "%Y-%m-%dT%H:%M:%S.%fZ") into @text. */
const char *_subagent_time_format_micro   (GDateTime *time,
                                           char       text[SUBAGENT_TIME_TEXT_SIZE]) G_GNUC_INTERNAL;
/* g_date_time_format_iso8601 (@time) into @text. */
const char *_subagent_time_format_iso8601 (GDateTime *time,
                                           char       text[SUBAGENT_TIME_TEXT_SIZE]) G_GNUC_INTERNAL;

G_END_DECLS
