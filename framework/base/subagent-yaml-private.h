/* subagent-yaml-private.h: YAML text to json-glib nodes, for every loader
 * (definitions, configuration, teams). Not installed, not introspected.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_COMPILATION)
#error "subagent-yaml-private.h is internal to libsubagent."
#endif

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* A position in the parsed text; 1-based, 0 when unknown. */
typedef struct {
  guint line;
  guint column;
} SubagentYamlMark;

/* In/out details of one parse. Zero-initialise, set the "in" fields, and
 * clear with subagent_yaml_parse_info_clear() (or g_auto()). */
typedef struct {
  /* in: the line number of the text's first line (0 means 1); lets a caller
   * that parses a slice, such as front matter, report file positions */
  guint first_line;
  /* in: record where every mapping key and sequence item starts */
  gboolean want_marks;

  /* out, on error: where it failed, and why (without the "file:l:c: " prefix) */
  SubagentYamlMark error_mark;
  char *problem;
  /* out, with want_marks: JSON pointer (RFC 6901, "" = root, "/tools/0") →
   * SubagentYamlMark*; a member maps to its key, an item to its value */
  GHashTable *marks;
} SubagentYamlParseInfo;

void      subagent_yaml_parse_info_clear    (SubagentYamlParseInfo       *info);
gboolean  subagent_yaml_parse_info_get_mark (const SubagentYamlParseInfo *info,
                                             const char                  *pointer,
                                             SubagentYamlMark            *mark);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SubagentYamlParseInfo, subagent_yaml_parse_info_clear)

/* Parses one YAML document: mappings become objects, sequences arrays, plain
 * scalars are typed (null, bool, int, float; everything else a string),
 * quoted and block scalars stay strings. An empty text gives a null node.
 * Errors are SUBAGENT_DEF_ERROR_PARSE with "file:line:column: problem";
 * @filename may be NULL ("<data>"). */
JsonNode *subagent_yaml_parse       (const char             *text,
                                     gssize                  len,
                                     const char             *filename,
                                     GError                **error);
JsonNode *subagent_yaml_parse_full  (const char             *text,
                                     gssize                  len,
                                     const char             *filename,
                                     SubagentYamlParseInfo  *info,
                                     GError                **error);
/* Reads and parses @path; @info may be NULL. Read errors keep G_FILE_ERROR. */
JsonNode *subagent_yaml_parse_file  (const char             *path,
                                     SubagentYamlParseInfo  *info,
                                     GError                **error);

/* Splits "---\n<yaml>\n---\n<body>" (an optional UTF-8 BOM, CRLF and a
 * closing "..." are accepted). Returns FALSE, with *front = NULL, *body = a
 * copy of @text and *body_line = 1, when @text has no complete front matter.
 * *body_line is the 1-based line of the body's first line; the front matter
 * itself always starts on line 2. Every out argument may be NULL. */
gboolean  subagent_yaml_split_front_matter (const char  *text,
                                            char       **front,
                                            char       **body,
                                            guint       *body_line);
/* TRUE if @text opens front matter ("---" alone on its first line). */
gboolean  subagent_yaml_has_front_matter_opening (const char *text);

/* Escapes one JSON-pointer reference token (~ → ~0, / → ~1). */
char     *subagent_yaml_pointer_escape (const char *token);

G_END_DECLS
