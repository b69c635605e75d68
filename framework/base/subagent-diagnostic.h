/* subagent-diagnostic.h: one problem found in a definition file.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <glib-object.h>
#include <json-glib/json-glib.h>

#include "subagent-error.h"

G_BEGIN_DECLS

/**
 * SubagentDiagnosticSeverity:
 * @SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR: the file (or its definition) was skipped
 * @SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING: the definition was loaded; something in it was ignored
 *
 * How bad a [struct@Diagnostic] is.
 */
typedef enum {
  SUBAGENT_DIAGNOSTIC_SEVERITY_ERROR,
  SUBAGENT_DIAGNOSTIC_SEVERITY_WARNING,
} SubagentDiagnosticSeverity;

#define SUBAGENT_TYPE_DIAGNOSTIC_SEVERITY (subagent_diagnostic_severity_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
GType       subagent_diagnostic_severity_get_type  (void) G_GNUC_CONST;
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_diagnostic_severity_to_string (SubagentDiagnosticSeverity severity);

typedef struct _SubagentDiagnostic SubagentDiagnostic;

#define SUBAGENT_TYPE_DIAGNOSTIC (subagent_diagnostic_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
GType subagent_diagnostic_get_type (void) G_GNUC_CONST;

SUBAGENT_AVAILABLE_IN_ALL
SubagentDiagnostic         *subagent_diagnostic_new          (const char                 *file,
                                                              guint                       line,
                                                              guint                       column,
                                                              SubagentDiagnosticSeverity  severity,
                                                              SubagentDefError            code,
                                                              const char                 *reason);
SUBAGENT_AVAILABLE_IN_ALL
SubagentDiagnostic         *subagent_diagnostic_ref          (SubagentDiagnostic *self);
SUBAGENT_AVAILABLE_IN_ALL
void                        subagent_diagnostic_unref        (SubagentDiagnostic *self);
SUBAGENT_AVAILABLE_IN_ALL
const char                 *subagent_diagnostic_get_file     (const SubagentDiagnostic *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                       subagent_diagnostic_get_line     (const SubagentDiagnostic *self);
SUBAGENT_AVAILABLE_IN_ALL
guint                       subagent_diagnostic_get_column   (const SubagentDiagnostic *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentDiagnosticSeverity  subagent_diagnostic_get_severity (const SubagentDiagnostic *self);
SUBAGENT_AVAILABLE_IN_ALL
SubagentDefError            subagent_diagnostic_get_code     (const SubagentDiagnostic *self);
SUBAGENT_AVAILABLE_IN_ALL
const char                 *subagent_diagnostic_get_reason   (const SubagentDiagnostic *self);
SUBAGENT_AVAILABLE_IN_ALL
char                       *subagent_diagnostic_to_string    (const SubagentDiagnostic *self,
                                                              const char               *relative_to);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject                 *subagent_diagnostic_to_json      (const SubagentDiagnostic *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SubagentDiagnostic, subagent_diagnostic_unref)

G_END_DECLS
