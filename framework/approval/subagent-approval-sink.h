/* subagent-approval-sink.h: where approval requests are stored and verdicts read.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <glib-object.h>

#include "subagent-approval-request.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_APPROVAL_SINK (subagent_approval_sink_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (SubagentApprovalSink, subagent_approval_sink, SUBAGENT, APPROVAL_SINK, GObject)

/**
 * SubagentApprovalSinkInterface:
 * @save: merges @requests into the run's stored queue under the sink's lock:
 *   adds requests missing from the store; for a request already stored, a
 *   terminal state in the store wins over the given one, otherwise the given
 *   one is stored
 * @load: a snapshot of the run's stored requests (copies, in an array whose
 *   element free function is g_object_unref()); an empty array when nothing
 *   is stored or the stored data does not verify
 * @update_status: compare-and-set from pending: moves the stored request to
 *   @status only if it is pending; %FALSE without an error when it is
 *   missing or not pending, %FALSE with an error when the store failed
 * @prune_stale: removes stored runs untouched for longer than @max_age,
 *   never one that still has a pending request; returns how many went
 * @list_runs: the parent run ids that have a stored queue
 * @watch: starts emitting #SubagentApprovalSink::changed for @parent_run_id
 *   in the thread-default main context of the caller
 * @unwatch: undoes one @watch call made from the same thread-default main
 *   context (optional; the default does nothing)
 * @update_status_batch: @update_status for each of @n_requests requests
 *   with one verdict, setting @won[i] to whether request i was resolved by
 *   this call; %FALSE with an error when the store failed. Optional: the
 *   default calls @update_status once per request; a sink that can store
 *   them in one write should (Since: 0.2)
 *
 * The virtual methods of #SubagentApprovalSink. Every method may be called
 * from any thread.
 */
struct _SubagentApprovalSinkInterface
{
  GTypeInterface g_iface;

  gboolean   (*save)          (SubagentApprovalSink    *self,
                               const char              *parent_run_id,
                               GPtrArray               *requests,
                               GError                 **error);
  GPtrArray *(*load)          (SubagentApprovalSink    *self,
                               const char              *parent_run_id,
                               GError                 **error);
  gboolean   (*update_status) (SubagentApprovalSink    *self,
                               const char              *parent_run_id,
                               const char              *request_id,
                               SubagentApprovalStatus   status,
                               const char              *reason,
                               const char              *actor,
                               GError                 **error);
  guint      (*prune_stale)   (SubagentApprovalSink    *self,
                               GTimeSpan                max_age,
                               GError                 **error);
  GStrv      (*list_runs)     (SubagentApprovalSink    *self,
                               GError                 **error);
  void       (*watch)         (SubagentApprovalSink    *self,
                               const char              *parent_run_id);
  void       (*unwatch)       (SubagentApprovalSink    *self,
                               const char              *parent_run_id);
  gboolean   (*update_status_batch) (SubagentApprovalSink    *self,
                                     const char              *parent_run_id,
                                     const char * const      *request_ids,
                                     guint                    n_requests,
                                     SubagentApprovalStatus   status,
                                     const char              *reason,
                                     const char              *actor,
                                     gboolean                *won,
                                     GError                 **error);

  /*< private >*/
  gpointer padding[7];
};

SUBAGENT_AVAILABLE_IN_ALL
gboolean   subagent_approval_sink_save          (SubagentApprovalSink    *self,
                                                 const char              *parent_run_id,
                                                 GPtrArray               *requests,
                                                 GError                 **error);
SUBAGENT_AVAILABLE_IN_ALL
GPtrArray *subagent_approval_sink_load          (SubagentApprovalSink    *self,
                                                 const char              *parent_run_id,
                                                 GError                 **error);
SUBAGENT_AVAILABLE_IN_ALL
gboolean   subagent_approval_sink_update_status (SubagentApprovalSink    *self,
                                                 const char              *parent_run_id,
                                                 const char              *request_id,
                                                 SubagentApprovalStatus   status,
                                                 const char              *reason,
                                                 const char              *actor,
                                                 GError                 **error);
SUBAGENT_AVAILABLE_IN_0_2
GArray    *subagent_approval_sink_update_status_batch (SubagentApprovalSink    *self,
                                                       const char              *parent_run_id,
                                                       const char * const      *request_ids,
                                                       SubagentApprovalStatus   status,
                                                       const char              *reason,
                                                       const char              *actor,
                                                       GError                 **error);
SUBAGENT_AVAILABLE_IN_ALL
guint      subagent_approval_sink_prune_stale   (SubagentApprovalSink    *self,
                                                 GTimeSpan                max_age,
                                                 GError                 **error);
SUBAGENT_AVAILABLE_IN_ALL
GStrv      subagent_approval_sink_list_runs     (SubagentApprovalSink    *self,
                                                 GError                 **error);
SUBAGENT_AVAILABLE_IN_ALL
void       subagent_approval_sink_watch         (SubagentApprovalSink    *self,
                                                 const char              *parent_run_id);
SUBAGENT_AVAILABLE_IN_ALL
void       subagent_approval_sink_unwatch       (SubagentApprovalSink    *self,
                                                 const char              *parent_run_id);

SUBAGENT_AVAILABLE_IN_ALL
void       subagent_approval_sink_emit_changed          (SubagentApprovalSink *self,
                                                         const char           *parent_run_id);
SUBAGENT_AVAILABLE_IN_ALL
void       subagent_approval_sink_emit_integrity_failed (SubagentApprovalSink *self,
                                                         const char           *parent_run_id,
                                                         const char           *message);

G_END_DECLS
