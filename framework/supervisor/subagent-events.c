/* subagent-events.c: what the supervisor reports about its children, and
 * the line each writes to the events file (the file: subagent-events-writer.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "subagent.h"
#include "subagent-json-private.h"
#include "subagent-json-line-private.h"
#include "subagent-supervisor-private.h"

G_DEFINE_ENUM_TYPE (SubagentEventKind, subagent_event_kind,
  G_DEFINE_ENUM_VALUE (SUBAGENT_EVENT_ACCEPTED, "accepted"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_EVENT_QUEUED, "queued"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_EVENT_STARTED, "started"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_EVENT_COMPLETED, "completed"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_EVENT_FAILED, "failed"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_EVENT_CANCELLED, "cancelled"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_EVENT_WORKSPACE_DISPOSED, "workspace-disposed"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_EVENT_APPROVAL_REQUESTED, "approval-requested"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_EVENT_APPROVAL_RESOLVED, "approval-resolved"),
  G_DEFINE_ENUM_VALUE (SUBAGENT_EVENT_USAGE, "usage"))

static const char * const kind_names[] = {
  "accepted", "queued", "started", "completed", "failed", "cancelled",
  "workspace-disposed", "approval-requested", "approval-resolved", "usage",
};

/**
 * subagent_event_kind_to_string:
 * @kind: a #SubagentEventKind
 *
 * Gets the name of @kind, as written in files, JSON and on the command line.
 *
 * Returns: the kind's name as events carry it (`accepted`, `queued`,
 *   `started`, `completed`, `failed`, `cancelled`, `workspace-disposed`,
 *   `approval-requested`, `approval-resolved`); also the detail of the
 *   #SubagentSupervisor::event signal
 *
 * Since: 0.2
 */
const char *
subagent_event_kind_to_string (SubagentEventKind kind)
{
  g_return_val_if_fail ((guint) kind < G_N_ELEMENTS (kind_names), NULL);
  return kind_names[kind];
}

/**
 * SubagentEvent:
 *
 * One thing that happened to a child of a #SubagentSupervisor: its kind, the
 * child's run id, its parent's run id, its definition, depth and batch index,
 * when it happened, and details that depend on the kind (`status`,
 * `stop_reason`, `reason`, `cost_cents`, `cause`, `workspace`,
 * `request_id`, `tool_name`, `approval_status`, `accepted_at`,
 * `started_at`, `duration_ms`...). Immutable.
 *
 * subagent_event_to_json() gives the object that is written, one per line,
 * to `<root>/.subagent/events.jsonl`.
 */
struct _SubagentEvent
{
  GObject parent_instance;

  SubagentEventKind kind;
  char *run_id;
  char *parent_run_id;
  char *def_name;
  guint depth;
  gint batch_index;
  GDateTime *time;
  JsonObject *details;
};

G_DEFINE_FINAL_TYPE (SubagentEvent, subagent_event, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_KIND,
  PROP_RUN_ID,
  PROP_PARENT_RUN_ID,
  PROP_DEF_NAME,
  PROP_DEPTH,
  PROP_BATCH_INDEX,
  PROP_TIME,
  PROP_DETAILS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
subagent_event_finalize (GObject *object)
{
  SubagentEvent *self = SUBAGENT_EVENT (object);

  g_free (self->run_id);
  g_free (self->parent_run_id);
  g_free (self->def_name);
  g_clear_pointer (&self->time, g_date_time_unref);
  g_clear_pointer (&self->details, json_object_unref);
  G_OBJECT_CLASS (subagent_event_parent_class)->finalize (object);
}

static void
subagent_event_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  SubagentEvent *self = SUBAGENT_EVENT (object);

  switch (prop_id)
    {
    case PROP_KIND: g_value_set_enum (value, self->kind); break;
    case PROP_RUN_ID: g_value_set_string (value, self->run_id); break;
    case PROP_PARENT_RUN_ID: g_value_set_string (value, self->parent_run_id); break;
    case PROP_DEF_NAME: g_value_set_string (value, self->def_name); break;
    case PROP_DEPTH: g_value_set_uint (value, self->depth); break;
    case PROP_BATCH_INDEX: g_value_set_int (value, self->batch_index); break;
    case PROP_TIME: g_value_set_boxed (value, self->time); break;
    case PROP_DETAILS: g_value_set_boxed (value, self->details); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_event_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  SubagentEvent *self = SUBAGENT_EVENT (object);
  const char *s;

  switch (prop_id)
    {
    case PROP_KIND: self->kind = g_value_get_enum (value); break;
    case PROP_RUN_ID: s = g_value_get_string (value); self->run_id = g_strdup (s ? s : ""); break;
    case PROP_PARENT_RUN_ID: s = g_value_get_string (value); self->parent_run_id = g_strdup (s ? s : ""); break;
    case PROP_DEF_NAME: s = g_value_get_string (value); self->def_name = g_strdup (s ? s : ""); break;
    case PROP_DEPTH: self->depth = g_value_get_uint (value); break;
    case PROP_BATCH_INDEX: self->batch_index = g_value_get_int (value); break;
    case PROP_TIME: self->time = g_value_dup_boxed (value); break;
    case PROP_DETAILS:
      {
        JsonObject *details = g_value_get_boxed (value);
        self->details = details ? subagent_json_object_sealed_copy (details) : NULL;
      }
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_event_constructed (GObject *object)
{
  SubagentEvent *self = SUBAGENT_EVENT (object);

  G_OBJECT_CLASS (subagent_event_parent_class)->constructed (object);
  if (self->time == NULL)
    self->time = g_date_time_new_now_utc ();
  /* One of its own, not a shared one: json-glib's counts are not atomic,
   * and events are made and dropped on any thread. */
  if (self->details == NULL)
    {
      self->details = json_object_new ();
      json_object_seal (self->details);
    }
}

static void
subagent_event_class_init (SubagentEventClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = subagent_event_finalize;
  object_class->get_property = subagent_event_get_property;
  object_class->set_property = subagent_event_set_property;
  object_class->constructed = subagent_event_constructed;

  /**
   * SubagentEvent:kind:
   *
   * What happened.
   */
  properties[PROP_KIND] =
    g_param_spec_enum ("kind", NULL, NULL, SUBAGENT_TYPE_EVENT_KIND, SUBAGENT_EVENT_ACCEPTED, flags);
  /**
   * SubagentEvent:run-id:
   *
   * The child's run id (also its session id).
   */
  properties[PROP_RUN_ID] = g_param_spec_string ("run-id", NULL, NULL, "", flags);
  /**
   * SubagentEvent:parent-run-id:
   *
   * The run id of the child's parent.
   */
  properties[PROP_PARENT_RUN_ID] = g_param_spec_string ("parent-run-id", NULL, NULL, "", flags);
  /**
   * SubagentEvent:def-name:
   *
   * The name of the child's definition.
   */
  properties[PROP_DEF_NAME] = g_param_spec_string ("def-name", NULL, NULL, "", flags);
  /**
   * SubagentEvent:depth:
   *
   * The child's depth (1 for a child of the top-level agent).
   */
  properties[PROP_DEPTH] = g_param_spec_uint ("depth", NULL, NULL, 0, G_MAXUINT, 1, flags);
  /**
   * SubagentEvent:batch-index:
   *
   * The child's position in its batch, or %SUBAGENT_NO_BATCH_INDEX.
   */
  properties[PROP_BATCH_INDEX] =
    g_param_spec_int ("batch-index", NULL, NULL, -1, G_MAXINT, SUBAGENT_NO_BATCH_INDEX, flags);
  /**
   * SubagentEvent:time:
   *
   * When it happened (UTC); now when unset.
   */
  properties[PROP_TIME] = g_param_spec_boxed ("time", NULL, NULL, G_TYPE_DATE_TIME, flags);
  /**
   * SubagentEvent:details:
   *
   * What depends on the kind; a sealed copy.
   */
  properties[PROP_DETAILS] = g_param_spec_boxed ("details", NULL, NULL, JSON_TYPE_OBJECT, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_event_init (SubagentEvent *self)
{
  self->batch_index = SUBAGENT_NO_BATCH_INDEX;
  self->depth = 1;
}

/* The constructor without the property machinery (eight construct
 * properties, each collected into a GValue and set through the class's
 * switch); @details is sealed in place instead of copied: it is the
 * caller's fresh object, which nobody changes afterwards. @time (taken)
 * is now when %NULL. subagent_event_new() is this with a copy of its
 * details. */
SubagentEvent *
_subagent_event_new_take (SubagentEventKind  kind,
                          const char        *run_id,
                          const char        *parent_run_id,
                          const char        *def_name,
                          guint              depth,
                          gint               batch_index,
                          JsonObject        *details,
                          GDateTime         *time)
{
  SubagentEvent *self = g_object_new (SUBAGENT_TYPE_EVENT, NULL);

  /* Construction gave the construct-only strings their defaults. */
  self->kind = kind;
  g_free (self->run_id);
  self->run_id = g_strdup (run_id ? run_id : "");
  g_free (self->parent_run_id);
  self->parent_run_id = g_strdup (parent_run_id ? parent_run_id : "");
  g_free (self->def_name);
  self->def_name = g_strdup (def_name ? def_name : "");
  self->depth = depth;
  self->batch_index = batch_index < 0 ? SUBAGENT_NO_BATCH_INDEX : batch_index;
  if (details != NULL)
    {
      json_object_seal (details);
      g_clear_pointer (&self->details, json_object_unref);
      self->details = details;
    }
  if (time != NULL)
    {
      g_date_time_unref (self->time);
      self->time = time;
    }
  return self;
}

/**
 * subagent_event_new:
 * @kind: what happened
 * @run_id: the child's run id
 * @parent_run_id: (nullable): its parent's run id
 * @def_name: (nullable): its definition's name
 * @depth: its depth
 * @batch_index: its batch index, or %SUBAGENT_NO_BATCH_INDEX
 * @time: (nullable): when it happened; now when %NULL
 * @details: (nullable): kind-specific members; copied
 *
 * Creates a new #SubagentEvent.
 *
 * Returns: (transfer full): a new #SubagentEvent
 *
 * Since: 0.2
 */
SubagentEvent *
subagent_event_new (SubagentEventKind  kind,
                    const char        *run_id,
                    const char        *parent_run_id,
                    const char        *def_name,
                    guint              depth,
                    gint               batch_index,
                    GDateTime         *time,
                    JsonObject        *details)
{
  SubagentEvent *self;

  g_return_val_if_fail (run_id != NULL, NULL);

  self = _subagent_event_new_take (kind, run_id, parent_run_id, def_name, depth, batch_index,
                                   details != NULL ? subagent_json_object_sealed_copy (details) : NULL,
                                   time != NULL ? g_date_time_ref (time) : NULL);
  return self;
}

/**
 * subagent_event_get_kind:
 * @self: a #SubagentEvent
 *
 * Gets what happened.
 *
 * Returns: what happened
 *
 * Since: 0.2
 */
SubagentEventKind
subagent_event_get_kind (SubagentEvent *self)
{
  g_return_val_if_fail (SUBAGENT_IS_EVENT (self), SUBAGENT_EVENT_ACCEPTED);
  return self->kind;
}

/**
 * subagent_event_get_run_id:
 * @self: a #SubagentEvent
 *
 * Gets the child's run id.
 *
 * Returns: (transfer none): the child's run id
 *
 * Since: 0.2
 */
const char *
subagent_event_get_run_id (SubagentEvent *self)
{
  g_return_val_if_fail (SUBAGENT_IS_EVENT (self), NULL);
  return self->run_id;
}

/**
 * subagent_event_get_parent_run_id:
 * @self: a #SubagentEvent
 *
 * Gets the parent's run id.
 *
 * Returns: (transfer none): the parent's run id
 *
 * Since: 0.2
 */
const char *
subagent_event_get_parent_run_id (SubagentEvent *self)
{
  g_return_val_if_fail (SUBAGENT_IS_EVENT (self), NULL);
  return self->parent_run_id;
}

/**
 * subagent_event_get_def_name:
 * @self: a #SubagentEvent
 *
 * Gets the definition's name.
 *
 * Returns: (transfer none): the definition's name
 *
 * Since: 0.2
 */
const char *
subagent_event_get_def_name (SubagentEvent *self)
{
  g_return_val_if_fail (SUBAGENT_IS_EVENT (self), NULL);
  return self->def_name;
}

/**
 * subagent_event_get_depth:
 * @self: a #SubagentEvent
 *
 * Gets the child's depth.
 *
 * Returns: the child's depth
 *
 * Since: 0.2
 */
guint
subagent_event_get_depth (SubagentEvent *self)
{
  g_return_val_if_fail (SUBAGENT_IS_EVENT (self), 0);
  return self->depth;
}

/**
 * subagent_event_get_batch_index:
 * @self: a #SubagentEvent
 *
 * Gets the batch index, or %SUBAGENT_NO_BATCH_INDEX.
 *
 * Returns: the batch index, or %SUBAGENT_NO_BATCH_INDEX
 *
 * Since: 0.2
 */
gint
subagent_event_get_batch_index (SubagentEvent *self)
{
  g_return_val_if_fail (SUBAGENT_IS_EVENT (self), SUBAGENT_NO_BATCH_INDEX);
  return self->batch_index;
}

/**
 * subagent_event_get_time:
 * @self: a #SubagentEvent
 *
 * Gets when it happened (UTC).
 *
 * Returns: (transfer none): when it happened (UTC)
 *
 * Since: 0.2
 */
GDateTime *
subagent_event_get_time (SubagentEvent *self)
{
  g_return_val_if_fail (SUBAGENT_IS_EVENT (self), NULL);
  return self->time;
}

/**
 * subagent_event_get_details:
 * @self: a #SubagentEvent
 *
 * Gets the kind-specific members (sealed).
 *
 * Returns: (transfer none): the kind-specific members (sealed)
 *
 * Since: 0.2
 */
JsonObject *
subagent_event_get_details (SubagentEvent *self)
{
  g_return_val_if_fail (SUBAGENT_IS_EVENT (self), NULL);
  return self->details;
}

/* The members every event has, ahead of its details (which cannot
 * override them). */
static gboolean
is_fixed_member (const char *key)
{
  static const char * const fixed[] = {
    "event", "time", "run_id", "parent_run_id", "def_name", "depth", "batch_index",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (fixed); i++)
    if (g_str_equal (key, fixed[i]))
      return TRUE;
  return FALSE;
}

/* The event's time as both forms write it, microseconds, UTC. */
static void
format_time (GDateTime *time,
             char       text[SUBAGENT_TIME_TEXT_SIZE])
{
  _subagent_time_format_micro (time, text);
}

/**
 * subagent_event_to_json:
 * @self: a #SubagentEvent
 *
 * The event as one flat object: `event` (the kind's name), `time`
 * (ISO 8601, UTC, microseconds), `run_id`, `parent_run_id`, `def_name`,
 * `depth`, `batch_index` (`null` outside a batch), then the details.
 *
 * Returns: (transfer full): a new JSON object
 */
JsonObject *
subagent_event_to_json (SubagentEvent *self)
{
  JsonObject *object;
  char time[SUBAGENT_TIME_TEXT_SIZE];
  JsonObjectIter iter;
  const char *key;
  JsonNode *value;

  g_return_val_if_fail (SUBAGENT_IS_EVENT (self), NULL);

  object = json_object_new ();
  format_time (self->time, time);
  json_object_set_string_member (object, "event", subagent_event_kind_to_string (self->kind));
  json_object_set_string_member (object, "time", time);
  json_object_set_string_member (object, "run_id", self->run_id);
  json_object_set_string_member (object, "parent_run_id", self->parent_run_id);
  json_object_set_string_member (object, "def_name", self->def_name);
  json_object_set_int_member (object, "depth", self->depth);
  if (self->batch_index < 0)
    json_object_set_null_member (object, "batch_index");
  else
    json_object_set_int_member (object, "batch_index", self->batch_index);

  /* In the order they were set, as the line writes them. */
  json_object_iter_init_ordered (&iter, self->details);
  while (json_object_iter_next_ordered (&iter, &key, &value))
    if (!is_fixed_member (key))
      json_object_set_member (object, key, subagent_json_node_deep_copy (value));
  return object;
}

/* What json_to_string() of subagent_event_to_json() gives for an event of
 * these parts, written directly: that built and freed a JsonObject, a copy
 * of the details and a JsonGenerator for every line, a tenth of a command
 * child's host CPU with a supervisor (tests/test-supervisor.c compares the
 * two). A supervisor also writes the events nobody listens to from their
 * parts, without making them. */
void
_subagent_event_line_append_shared (GString    *out,
                                    const char *run_id,
                                    const char *parent_run_id,
                                    const char *def_name,
                                    guint       depth,
                                    gint        batch_index)
{
  _subagent_line_append (out, ",\"run_id\":");
  _subagent_json_line_append_string (out, run_id ? run_id : "");
  _subagent_line_append (out, ",\"parent_run_id\":");
  _subagent_json_line_append_string (out, parent_run_id ? parent_run_id : "");
  _subagent_line_append (out, ",\"def_name\":");
  _subagent_json_line_append_string (out, def_name ? def_name : "");
  _subagent_line_append (out, ",\"depth\":");
  _subagent_json_line_append_int (out, depth);
  _subagent_json_line_append_index_member (out, "batch_index", batch_index);
}

void
_subagent_event_line_append_last (GString   *out,
                                  GDateTime *accepted_at,
                                  guint      follow_up)
{
  char text[SUBAGENT_TIME_TEXT_SIZE];

  if (accepted_at != NULL)
    _subagent_json_line_append_string_member (out, "accepted_at", _subagent_time_format_micro (accepted_at, text));
  if (follow_up > 0)
    _subagent_json_line_append_int_member (out, "follow_up", follow_up);
}

void
_subagent_event_line_append (GString                 *out,
                             SubagentEventKind        kind,
                             GDateTime               *time,
                             const GString           *shared,
                             JsonObject              *details,
                             SubagentLineMembersFunc  members,
                             gpointer                 members_data,
                             const GString           *last)
{
  char text[SUBAGENT_TIME_TEXT_SIZE];
  JsonObjectIter iter;
  const char *key;
  JsonNode *value;

  _subagent_line_append (out, "{\"event\":");
  _subagent_json_line_append_string (out, subagent_event_kind_to_string (kind));
  format_time (time, text);
  _subagent_line_append (out, ",\"time\":");
  _subagent_json_line_append_string (out, text);
  _subagent_line_append_len (out, shared->str, shared->len);
  if (details != NULL)
    {
      /* In the order they were set, so that a line written from an
       * action's parts (the details, then accepted_at and follow_up)
       * is the line of the event made of them. */
      json_object_iter_init_ordered (&iter, details);
      while (json_object_iter_next_ordered (&iter, &key, &value))
        {
          if (is_fixed_member (key))
            continue;
          _subagent_json_line_append_key (out, key, FALSE);
          _subagent_json_line_append_node (out, value);
        }
    }
  if (members != NULL)
    members (out, members_data);
  if (last != NULL)
    _subagent_line_append_len (out, last->str, last->len);
  _subagent_line_append (out, "}\n");
}

/**
 * subagent_event_to_line:
 * @self: a #SubagentEvent
 *
 * Serializes @self as one line of `events.jsonl`.
 *
 * Returns: (transfer full): subagent_event_to_json() on one line, with a
 *   trailing newline
 *
 * Since: 0.2
 */
char *
subagent_event_to_line (SubagentEvent *self)
{
  g_autoptr(GString) shared = NULL;
  GString *out;

  g_return_val_if_fail (SUBAGENT_IS_EVENT (self), NULL);

  shared = g_string_sized_new (128);
  _subagent_event_line_append_shared (shared, self->run_id, self->parent_run_id, self->def_name, self->depth,
                                      self->batch_index);
  out = g_string_sized_new (256);
  _subagent_event_line_append (out, self->kind, self->time, shared, self->details, NULL, NULL, NULL);
  return g_string_free (out, FALSE);
}
