/* subagent-diagnostic.c: one problem found in a definition file.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"

/**
 * SubagentDiagnostic:
 *
 * One problem [class@Catalog] found while loading definitions: the file,
 * the position (1-based; 0 when unknown), whether the file was skipped
 * (%SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR) or only something in it was
 * ignored (%SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING), a [enum@DefError] code
 * and a reason for people.
 *
 * Diagnostics are immutable and reference counted.
 */
struct _SubagentDiagnostic
{
  gatomicrefcount ref_count;
  char *file;
  guint line;
  guint column;
  SubagentDiagnosticSeverity severity;
  SubagentDefError code;
  char *reason;
};

G_DEFINE_BOXED_TYPE (SubagentDiagnostic, subagent_diagnostic, subagent_diagnostic_ref, subagent_diagnostic_unref)

G_DEFINE_ENUM_TYPE (SubagentDiagnosticSeverity, subagent_diagnostic_severity,
  G_DEFINE_ENUM_VALUE (SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR, "error"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING, "warning"))

/**
 * subagent_diagnostic_severity_to_string:
 * @severity: a severity
 *
 * Returns: (transfer none): `error` or `warning`
 */
const char *
subagent_diagnostic_severity_to_string (SubagentDiagnosticSeverity severity)
{
  switch (severity)
    {
    case SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR:
      return "error";
    case SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING:
      return "warning";
    default:
      g_return_val_if_reached (NULL);
    }
}

/**
 * subagent_diagnostic_new:
 * @file: the file the problem is in
 * @line: its 1-based line, or 0 when unknown
 * @column: its 1-based column, or 0 when unknown
 * @severity: whether the file was skipped
 * @code: what kind of problem it is
 * @reason: what is wrong and what to do, without the file name
 *
 * Returns: (transfer full): a new diagnostic
 */
SubagentDiagnostic *
subagent_diagnostic_new (const char                 *file,
                         guint                       line,
                         guint                       column,
                         SubagentDiagnosticSeverity  severity,
                         SubagentDefError            code,
                         const char                 *reason)
{
  SubagentDiagnostic *self;

  g_return_val_if_fail (file != NULL, NULL);
  g_return_val_if_fail (reason != NULL, NULL);

  self = g_new0 (SubagentDiagnostic, 1);
  g_atomic_ref_count_init (&self->ref_count);
  self->file = g_strdup (file);
  self->line = line;
  self->column = column;
  self->severity = severity;
  self->code = code;
  self->reason = g_strdup (reason);
  return self;
}

/**
 * subagent_diagnostic_ref:
 * @self: a diagnostic
 *
 * Returns: (transfer full): @self
 */
SubagentDiagnostic *
subagent_diagnostic_ref (SubagentDiagnostic *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * subagent_diagnostic_unref:
 * @self: (transfer full): a diagnostic
 *
 * Drops a reference; the last one frees @self.
 */
void
subagent_diagnostic_unref (SubagentDiagnostic *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_free (self->file);
  g_free (self->reason);
  g_free (self);
}

/**
 * subagent_diagnostic_get_file:
 * @self: a diagnostic
 *
 * Returns: (transfer none): the file the problem is in
 */
const char *
subagent_diagnostic_get_file (const SubagentDiagnostic *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->file;
}

/**
 * subagent_diagnostic_get_line:
 * @self: a diagnostic
 *
 * Returns: the 1-based line, or 0 when unknown
 */
guint
subagent_diagnostic_get_line (const SubagentDiagnostic *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->line;
}

/**
 * subagent_diagnostic_get_column:
 * @self: a diagnostic
 *
 * Returns: the 1-based column, or 0 when unknown
 */
guint
subagent_diagnostic_get_column (const SubagentDiagnostic *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->column;
}

/**
 * subagent_diagnostic_get_severity:
 * @self: a diagnostic
 *
 * Returns: whether the file was skipped (error) or loaded (warning)
 */
SubagentDiagnosticSeverity
subagent_diagnostic_get_severity (const SubagentDiagnostic *self)
{
  g_return_val_if_fail (self != NULL, SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR);
  return self->severity;
}

/**
 * subagent_diagnostic_get_code:
 * @self: a diagnostic
 *
 * Returns: the kind of problem
 */
SubagentDefError
subagent_diagnostic_get_code (const SubagentDiagnostic *self)
{
  g_return_val_if_fail (self != NULL, SUBAGENT_DEF_ERROR_PARSE);
  return self->code;
}

/**
 * subagent_diagnostic_get_reason:
 * @self: a diagnostic
 *
 * Returns: (transfer none): what is wrong, without the file name
 */
const char *
subagent_diagnostic_get_reason (const SubagentDiagnostic *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->reason;
}

/**
 * subagent_diagnostic_to_string:
 * @self: a diagnostic
 * @relative_to: (nullable): a directory; a file under it is shown relative to it
 *
 * Formats @self the way compilers do: `FILE:LINE:COLUMN: error: reason`
 * (LINE and COLUMN are 0 when unknown).
 *
 * Returns: (transfer full): the line, without a newline
 */
char *
subagent_diagnostic_to_string (const SubagentDiagnostic *self,
                               const char               *relative_to)
{
  const char *file;
  g_autofree char *prefix = NULL;

  g_return_val_if_fail (self != NULL, NULL);

  file = self->file;
  if (relative_to != NULL)
    {
      prefix = g_str_has_suffix (relative_to, G_DIR_SEPARATOR_S)
               ? g_strdup (relative_to) : g_strconcat (relative_to, G_DIR_SEPARATOR_S, NULL);
      if (g_str_has_prefix (file, prefix) && file[strlen (prefix)] != '\0')
        file += strlen (prefix);
    }
  return g_strdup_printf ("%s:%u:%u: %s: %s", file, self->line, self->column,
                          subagent_diagnostic_severity_to_string (self->severity), self->reason);
}

/**
 * subagent_diagnostic_to_json:
 * @self: a diagnostic
 *
 * Returns: (transfer full): `{"file", "line", "column", "severity", "code",
 *   "reason"}`; `code` is the nick of [enum@DefError], such as `parse`
 */
JsonObject *
subagent_diagnostic_to_json (const SubagentDiagnostic *self)
{
  JsonObject *object;
  GEnumClass *codes;
  GEnumValue *code;

  g_return_val_if_fail (self != NULL, NULL);

  codes = g_type_class_ref (SUBAGENT_TYPE_DEF_ERROR);
  code = g_enum_get_value (codes, self->code);
  object = json_object_new ();
  json_object_set_string_member (object, "file", self->file);
  json_object_set_int_member (object, "line", self->line);
  json_object_set_int_member (object, "column", self->column);
  json_object_set_string_member (object, "severity", subagent_diagnostic_severity_to_string (self->severity));
  json_object_set_string_member (object, "code", code ? code->value_nick : "unknown");
  json_object_set_string_member (object, "reason", self->reason);
  g_type_class_unref (codes);
  return object;
}
