/* subagent-events.h: what the supervisor reports about its children.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/**
 * SubagentEventKind:
 * @SUBAGENT_EVENT_ACCEPTED: the supervisor took the child on
 * @SUBAGENT_EVENT_QUEUED: the child waits for a running slot (only when it has to)
 * @SUBAGENT_EVENT_STARTED: the child got a slot (also emitted, just before
 *   `cancelled`, for a child cancelled while it was queued)
 * @SUBAGENT_EVENT_COMPLETED: the child ended complete or partial
 * @SUBAGENT_EVENT_FAILED: the child failed, or could not start
 * @SUBAGENT_EVENT_CANCELLED: the child was cancelled (stop reason `cancelled`)
 * @SUBAGENT_EVENT_WORKSPACE_DISPOSED: the child's workspace was cleaned up
 * @SUBAGENT_EVENT_APPROVAL_REQUESTED: the child asked for an approval
 * @SUBAGENT_EVENT_APPROVAL_RESOLVED: an approval of the child got its verdict
 * @SUBAGENT_EVENT_USAGE: the running child reported its totals so far
 *   (iterations, tool calls, cost); since 0.2
 *
 * The kinds of #SubagentEvent, in the order a child goes through them.
 */
typedef enum {
  SUBAGENT_EVENT_ACCEPTED,
  SUBAGENT_EVENT_QUEUED,
  SUBAGENT_EVENT_STARTED,
  SUBAGENT_EVENT_COMPLETED,
  SUBAGENT_EVENT_FAILED,
  SUBAGENT_EVENT_CANCELLED,
  SUBAGENT_EVENT_WORKSPACE_DISPOSED,
  SUBAGENT_EVENT_APPROVAL_REQUESTED,
  SUBAGENT_EVENT_APPROVAL_RESOLVED,
  SUBAGENT_EVENT_USAGE,
} SubagentEventKind;

#define SUBAGENT_TYPE_EVENT_KIND (subagent_event_kind_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
GType       subagent_event_kind_get_type  (void) G_GNUC_CONST;
SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_event_kind_to_string (SubagentEventKind kind);

#define SUBAGENT_TYPE_EVENT (subagent_event_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentEvent, subagent_event, SUBAGENT, EVENT, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentEvent *subagent_event_new (SubagentEventKind  kind,
                                   const char        *run_id,
                                   const char        *parent_run_id,
                                   const char        *def_name,
                                   guint              depth,
                                   gint               batch_index,
                                   GDateTime         *time,
                                   JsonObject        *details);

SUBAGENT_AVAILABLE_IN_ALL
SubagentEventKind  subagent_event_get_kind          (SubagentEvent *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_event_get_run_id        (SubagentEvent *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_event_get_parent_run_id (SubagentEvent *self);
SUBAGENT_AVAILABLE_IN_ALL
const char        *subagent_event_get_def_name      (SubagentEvent *self);
SUBAGENT_AVAILABLE_IN_ALL
guint              subagent_event_get_depth         (SubagentEvent *self);
SUBAGENT_AVAILABLE_IN_ALL
gint               subagent_event_get_batch_index   (SubagentEvent *self);
SUBAGENT_AVAILABLE_IN_ALL
GDateTime         *subagent_event_get_time          (SubagentEvent *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject        *subagent_event_get_details       (SubagentEvent *self);
SUBAGENT_AVAILABLE_IN_ALL
JsonObject        *subagent_event_to_json           (SubagentEvent *self);
SUBAGENT_AVAILABLE_IN_ALL
char              *subagent_event_to_line           (SubagentEvent *self);

/* SubagentEventsWriter: appends events to a JSON-lines file, one write() per line or burst. */
#define SUBAGENT_TYPE_EVENTS_WRITER (subagent_events_writer_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentEventsWriter, subagent_events_writer, SUBAGENT, EVENTS_WRITER, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentEventsWriter *subagent_events_writer_new      (const char           *path);
SUBAGENT_AVAILABLE_IN_ALL
const char           *subagent_events_writer_get_path (SubagentEventsWriter *self);
SUBAGENT_AVAILABLE_IN_ALL
void                  subagent_events_writer_write    (SubagentEventsWriter *self,
                                                       SubagentEvent        *event);
SUBAGENT_AVAILABLE_IN_ALL
gboolean              subagent_events_writer_flush    (SubagentEventsWriter  *self,
                                                       GError               **error);

G_END_DECLS
