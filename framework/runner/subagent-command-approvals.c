/* subagent-command-approvals.c: the approval requests of one command run.
 *
 * A child asks with a stdout line
 *   {"type":"approval_request","id":"...","tool":"...","arguments":{...}}
 * and gets, on its stdin,
 *   {"type":"approval_response","id":"...","approved":true|false,"reason":"..."}
 *
 * The verdict comes from the run context's SubagentApprovalHandler (the
 * permission table, then the parent run's queue). A call the table decides
 * is answered at once; a call that needs a verdict waits in a thread of its
 * own, since subagent_approval_handler_check() blocks, and the runner's
 * main context must keep reading the child.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "subagent.h"
#include "subagent-command-approvals-private.h"
#include "subagent-json-private.h"

#define TOOL_NAME_MAX_LENGTH 128

struct _SubagentCommandApprovals
{
  SubagentApprovalHandler *handler;  /* the context's, or an unattended one; NULL if none could be made */
  GMainContext *main_context;
  char *label;
  /* Made by the first request that waits (most children never ask). */
  GCancellable *cancellable;         /* cancelled by stop() */
  GHashTable *in_flight;             /* request id → NULL */
  gboolean stopped;

  SubagentCommandApprovalsReplyFunc reply;
  SubagentCommandApprovalsIdleFunc idle;
  GObject *owner;                    /* borrowed; each waiting Ask holds a reference */
  gpointer user_data;
};

/* One request waiting for its verdict in a worker thread. */
typedef struct {
  SubagentCommandApprovals *approvals;  /* alive while @owner is held */
  GObject *owner;
  SubagentApprovalHandler *handler;
  GCancellable *cancellable;
  char *id;
  char *tool;
  JsonObject *arguments;                /* a private copy, for the worker */
  gboolean destructive;
  gboolean inside_workspace;
  SubagentApprovalDecision decision;
  char *reason;
} Ask;

static void
ask_free (Ask *ask)
{
  g_clear_object (&ask->handler);
  g_clear_object (&ask->cancellable);
  g_clear_pointer (&ask->arguments, json_object_unref);
  g_free (ask->id);
  g_free (ask->tool);
  g_free (ask->reason);
  /* Last: it may be the run's last reference, which frees @approvals. */
  g_clear_object (&ask->owner);
  g_free (ask);
}

/* The handler the run context carries; without one, the child is
 * unattended, but the permission table still applies (so `allow` still
 * allows and `read-only` still refuses with its own reason). */
static SubagentApprovalHandler *
handler_for_context (SubagentRunContext *context)
{
  GObject *route = subagent_run_context_get_approval_handler (context);
  SubagentLineage *lineage = subagent_run_context_get_lineage (context);
  SubagentDef *def = subagent_run_context_get_definition (context);
  SubagentIsolationContext *isolation = subagent_run_context_get_isolation (context);
  const char *run_id = subagent_run_context_get_run_id (context);
  const char *isolation_name = isolation ? subagent_isolation_context_get_isolation (isolation) : NULL;

  if (route != NULL && SUBAGENT_IS_APPROVAL_HANDLER (route))
    return g_object_ref (SUBAGENT_APPROVAL_HANDLER (route));
  if (route != NULL)
    g_debug ("Run %s: its approval-handler is a %s, not a SubagentApprovalHandler; the child is unattended",
             run_id, G_OBJECT_TYPE_NAME (route));
  if (!subagent_approval_id_is_valid (run_id) ||
      (isolation_name != NULL && !subagent_approval_id_is_valid (isolation_name)))
    return NULL;
  return subagent_approval_handler_new (NULL, run_id, def ? subagent_def_get_name (def) : NULL,
                                        subagent_run_context_get_batch_index (context), isolation_name,
                                        lineage ? subagent_lineage_get_worktree_path (lineage) : NULL,
                                        subagent_run_context_get_permission_mode (context));
}

SubagentCommandApprovals *
subagent_command_approvals_new (SubagentRunContext                *context,
                                GMainContext                      *main_context,
                                const char                        *label,
                                SubagentCommandApprovalsReplyFunc  reply,
                                SubagentCommandApprovalsIdleFunc   idle,
                                GObject                           *owner,
                                gpointer                           user_data)
{
  SubagentCommandApprovals *self = g_new0 (SubagentCommandApprovals, 1);

  self->handler = handler_for_context (context);
  self->main_context = main_context ? g_main_context_ref (main_context) : g_main_context_ref_thread_default ();
  self->label = g_strdup (label);
  self->reply = reply;
  self->idle = idle;
  self->owner = owner;
  self->user_data = user_data;
  return self;
}

void
subagent_command_approvals_free (SubagentCommandApprovals *self)
{
  if (self == NULL)
    return;
  /* Every Ask holds the owner, which owns this: none is left. */
  g_warn_if_fail (subagent_command_approvals_get_in_flight (self) == 0);
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->handler);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->in_flight, g_hash_table_unref);
  g_main_context_unref (self->main_context);
  g_free (self->label);
  g_free (self);
}

void
subagent_command_approvals_stop (SubagentCommandApprovals *self)
{
  if (self == NULL || self->stopped)
    return;
  self->stopped = TRUE;
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
}

guint
subagent_command_approvals_get_in_flight (SubagentCommandApprovals *self)
{
  return self != NULL && self->in_flight != NULL ? g_hash_table_size (self->in_flight) : 0;
}

static void
send_reply (SubagentCommandApprovals *self,
            const char               *id,
            gboolean                  approved,
            const char               *reason)
{
  g_autoptr(JsonObject) object = json_object_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *text = NULL;
  g_autofree char *line = NULL;

  if (self->stopped)
    return;
  json_object_set_string_member (object, "type", "approval_response");
  json_object_set_string_member (object, "id", id);
  json_object_set_boolean_member (object, "approved", approved);
  json_object_set_string_member (object, "reason", reason ? reason : "");
  node = json_node_init_object (json_node_alloc (), object);
  /* One line: json-glib escapes newlines inside strings. */
  text = json_to_string (node, FALSE);
  line = g_strconcat (text, "\n", NULL);
  self->reply (g_bytes_new_take (g_steal_pointer (&line), strlen (text) + 1), self->user_data);
}

/* Why a call is allowed, in the child's words. */
static char *
approved_reason (SubagentApprovalHandler     *handler,
                 SubagentApprovalRequirement  requirement)
{
  if (requirement == SUBAGENT_APPROVAL_REQUIREMENT_ALLOW)
    return g_strdup_printf ("Permission mode %s allows it without asking",
                            subagent_permission_mode_to_string (subagent_approval_handler_get_permission_mode (handler)));
  return g_strdup ("Approved");
}

static void
answer (SubagentCommandApprovals    *self,
        const char                  *id,
        SubagentApprovalRequirement  requirement,
        SubagentApprovalDecision     decision,
        const char                  *reason)
{
  g_autofree char *allowed = NULL;

  if (decision == SUBAGENT_APPROVAL_DECISION_ALLOW)
    {
      allowed = approved_reason (self->handler, requirement);
      send_reply (self, id, TRUE, allowed);
    }
  else
    send_reply (self, id, FALSE, reason ? reason : "Denied");
}

static gboolean
ask_finish (gpointer data)
{
  Ask *ask = data;
  SubagentCommandApprovals *self = ask->approvals;

  g_hash_table_remove (self->in_flight, ask->id);
  answer (self, ask->id, SUBAGENT_APPROVAL_REQUIREMENT_NEEDS_APPROVAL, ask->decision, ask->reason);
  if (g_hash_table_size (self->in_flight) == 0 && self->idle != NULL)
    self->idle (self->user_data);
  ask_free (ask);
  return G_SOURCE_REMOVE;
}

static gpointer
ask_thread (gpointer data)
{
  Ask *ask = data;
  g_autoptr(GSource) source = NULL;

  ask->decision = subagent_approval_handler_check (ask->handler, ask->tool, ask->arguments, ask->destructive,
                                                   ask->inside_workspace, ask->cancellable, &ask->reason);
  source = g_idle_source_new ();
  g_source_set_static_name (source, "[subagent] approval verdict");
  g_source_set_callback (source, ask_finish, ask, NULL);
  g_source_attach (source, ask->approvals->main_context);
  return NULL;
}

/* The request's fields, checked: FALSE with @error for a bad one. */
static gboolean
read_request (JsonObject   *message,
              const char  **tool,
              JsonObject  **arguments,
              gboolean     *destructive,
              gboolean     *inside_workspace,
              GError      **error)
{
  const char *what = "approval_request";

  if (!subagent_json_read_string (message, what, "tool", TRUE, tool, error) ||
      !subagent_json_read_object (message, what, "arguments", arguments, error) ||
      !subagent_json_read_boolean (message, what, "destructive", destructive, error) ||
      !subagent_json_read_boolean (message, what, "inside_workspace", inside_workspace, error))
    return FALSE;
  if (!subagent_tool_name_is_valid (*tool) || strlen (*tool) > TOOL_NAME_MAX_LENGTH)
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "%s: “tool” must be a tool name of 1–%d ASCII letters, digits, “_”, “.” or “-”",
                   what, TOOL_NAME_MAX_LENGTH);
      return FALSE;
    }
  if (json_object_get_member (message, "arguments") != NULL && *arguments == NULL)
    return subagent_json_bad_type (what, "arguments", "an object", error);
  return TRUE;
}

static JsonObject *
copy_arguments (JsonObject *arguments)
{
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(JsonNode) copy = NULL;

  if (arguments == NULL)
    return json_object_new ();
  node = json_node_init_object (json_node_alloc (), arguments);
  copy = subagent_json_node_deep_copy (node);
  return json_node_dup_object (copy);
}

void
subagent_command_approvals_handle (SubagentCommandApprovals *self,
                                   JsonObject               *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GThread) thread = NULL;
  g_autofree char *denial = NULL;
  const char *id = NULL;
  const char *tool = NULL;
  JsonObject *arguments = NULL;
  gboolean destructive = TRUE;
  gboolean inside_workspace = FALSE;
  SubagentApprovalRequirement requirement;
  SubagentApprovalDecision decision;
  Ask *ask;

  if (self->stopped)
    return;
  /* Without a usable id the child could not tell what an answer is for. */
  if (!subagent_json_read_string (message, "approval_request", "id", TRUE, &id, NULL) ||
      !subagent_approval_id_is_valid (id))
    {
      g_debug ("Child %s: ignoring an approval request without a valid id ([A-Za-z0-9_-], 1–%d characters)",
               self->label, SUBAGENT_APPROVAL_ID_MAX_LENGTH);
      return;
    }
  if (self->in_flight != NULL && g_hash_table_contains (self->in_flight, id))
    {
      g_debug ("Child %s: ignoring approval request %s: one with this id is still waiting", self->label, id);
      return;
    }
  if (!read_request (message, &tool, &arguments, &destructive, &inside_workspace, &error))
    {
      denial = g_strdup_printf ("Invalid approval request: %s", error->message);
      send_reply (self, id, FALSE, denial);
      return;
    }
  if (self->handler == NULL)
    {
      send_reply (self, id, FALSE, SUBAGENT_APPROVAL_UNATTENDED_REASON);
      return;
    }

  requirement = subagent_approval_policy_evaluate (subagent_approval_handler_get_permission_mode (self->handler),
                                                   destructive, inside_workspace);
  /* Decided by the table, or unattended: the handler answers without waiting. */
  if (requirement != SUBAGENT_APPROVAL_REQUIREMENT_NEEDS_APPROVAL ||
      subagent_approval_handler_is_unattended (self->handler))
    {
      g_autoptr(JsonObject) copy = copy_arguments (arguments);

      decision = subagent_approval_handler_check (self->handler, tool, copy, destructive, inside_workspace,
                                                  NULL, &denial);
      answer (self, id, requirement, decision, denial);
      return;
    }
  if (subagent_command_approvals_get_in_flight (self) >= SUBAGENT_COMMAND_APPROVALS_MAX_IN_FLIGHT)
    {
      denial = g_strdup_printf ("Too many approval requests waiting at once (at most %d); wait for an answer first",
                                SUBAGENT_COMMAND_APPROVALS_MAX_IN_FLIGHT);
      send_reply (self, id, FALSE, denial);
      return;
    }

  if (self->in_flight == NULL)
    {
      self->cancellable = g_cancellable_new ();
      self->in_flight = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    }
  ask = g_new0 (Ask, 1);
  ask->approvals = self;
  ask->owner = self->owner ? g_object_ref (self->owner) : NULL;
  ask->handler = g_object_ref (self->handler);
  ask->cancellable = g_object_ref (self->cancellable);
  ask->id = g_strdup (id);
  ask->tool = g_strdup (tool);
  ask->arguments = copy_arguments (arguments);
  ask->destructive = destructive;
  ask->inside_workspace = inside_workspace;
  thread = g_thread_try_new ("approval-wait", ask_thread, ask, &error);
  if (thread == NULL)
    {
      denial = g_strdup_printf ("Cannot wait for a verdict: %s", error->message);
      send_reply (self, id, FALSE, denial);
      ask_free (ask);
      return;
    }
  g_hash_table_add (self->in_flight, g_strdup (id));
  /* g_autoptr(GThread) detaches it: ask_finish() is the join point. */
}
