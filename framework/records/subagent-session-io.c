/* subagent-session-io.c: the JSON form and the files of session records.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "subagent.h"
#include "subagent-state-path-private.h"
#include "subagent-json-private.h"
#include "subagent-fd-private.h"
#include "subagent-json-line-private.h"
#include "subagent-session-private.h"
#include "subagent-records-private.h"

/* A session file is a small JSON record; anything bigger is not one. */
#define SESSION_FILE_MAX_BYTES (16 * 1024 * 1024)
#define SESSION_ID_MAX_LENGTH 128

/**
 * subagent_session_id_is_valid:
 * @session_id: (nullable): a candidate id
 *
 * Session ids name files, so they are restricted to 1–128 characters of
 * `[A-Za-z0-9_-]`.
 *
 * Returns: %TRUE if @session_id is a valid session id
 */
gboolean
subagent_session_id_is_valid (const char *session_id)
{
  gsize len = 0;

  if (session_id == NULL)
    return FALSE;
  for (const char *p = session_id; *p; p++, len++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
      return FALSE;
  return len > 0 && len <= SESSION_ID_MAX_LENGTH;
}

static gboolean
run_status_from_string (const char        *text,
                        SubagentRunStatus *status)
{
  for (int s = SUBAGENT_RUN_STATUS_COMPLETE; s <= SUBAGENT_RUN_STATUS_ERROR; s++)
    if (g_str_equal (text, subagent_run_status_to_string (s)))
      {
        *status = s;
        return TRUE;
      }
  return FALSE;
}

static gboolean
read_time (JsonObject  *object,
           const char  *what,
           const char  *key,
           gboolean     required,
           GDateTime  **out,
           GError     **error)
{
  const char *text;

  *out = NULL;
  if (!subagent_json_read_string (object, what, key, required, &text, error))
    return FALSE;
  if (text == NULL)
    return TRUE;
  *out = g_date_time_new_from_iso8601 (text, NULL);
  if (*out == NULL)
    return subagent_json_bad_type (what, key, "an ISO-8601 date and time with a time zone", error);
  return TRUE;
}

/* The `last_run` member: the latest run's own result parts. */
static gboolean
read_last_run (SubagentSession  *self,
               JsonObject       *object,
               const char       *what,
               GError          **error)
{
  g_autofree char *where = g_strdup_printf ("%s, “last_run”", what);
  const char *message, *stop_reason, *confinement;
  gint64 iterations = 0, tool_calls = 0;
  double cost_cents = 0;

  if (!subagent_json_read_int (object, where, "iterations", 0, G_MAXUINT, &iterations, error) ||
      !subagent_json_read_int (object, where, "tool_calls", 0, G_MAXUINT, &tool_calls, error) ||
      !subagent_json_read_amount (object, where, "cost_cents", &cost_cents, error) ||
      !subagent_json_read_string (object, where, "message", FALSE, &message, error) ||
      !subagent_json_read_string (object, where, "stop_reason", FALSE, &stop_reason, error) ||
      !subagent_json_read_string (object, where, "confinement", FALSE, &confinement, error))
    return FALSE;
  self->has_last_run = TRUE;
  self->last_iterations = (guint) iterations;
  self->last_tool_calls = (guint) tool_calls;
  self->last_cost_cents = cost_cents;
  self->last_message = g_strdup (message);
  self->last_stop_reason = g_strdup (stop_reason);
  self->last_confinement = g_strdup (confinement);
  return TRUE;
}

void
_subagent_session_view_set_last_run (SubagentSessionView *view,
                                     SubagentRunResult   *result)
{
  view->has_last_run = TRUE;
  view->last_iterations = subagent_run_result_get_iterations (result);
  view->last_tool_calls = subagent_run_result_get_tool_calls (result);
  view->last_cost_cents = subagent_run_result_get_cost_cents (result);
  view->last_message = subagent_run_result_get_message (result);
  view->last_stop_reason = subagent_run_result_get_stop_reason (result);
  view->last_confinement = subagent_run_result_get_confinement (result);
}

/**
 * subagent_session_new_from_json:
 * @object: a JSON object as written by subagent_session_to_json()
 * @error: return location for a #GError
 *
 * Reads a session back, checking every member. `session_id` (a valid id),
 * `def_name`, `parent_run_id`, `status` and `started_at` are required.
 *
 * Returns: (transfer full) (nullable): the session, or %NULL with @error set
 *   (%SUBAGENT_ERROR_INVALID_ARGUMENT) when a member is missing or invalid
 */
SubagentSession *
subagent_session_new_from_json (JsonObject  *object,
                                GError     **error)
{
  const char *session_id, *def_name, *parent_run_id, *status_text, *isolation;
  const char *worktree_path, *container_path, *final_answer, *task, *child_root;
  g_autoptr(GDateTime) started_at = NULL;
  g_autoptr(GDateTime) completed_at = NULL;
  g_autofree char *what = NULL;
  gint64 depth = 0, batch_index = SUBAGENT_NO_BATCH_INDEX, iterations = 0, tool_calls = 0, follow_ups = 0;
  double cost_cents = 0;
  gboolean workspace_kept = FALSE;
  JsonObject *review = NULL;
  JsonArray *transcript = NULL;
  JsonNode *transcript_node;
  JsonObject *last_run = NULL;
  SubagentRunStatus status;
  SubagentSession *session;

  g_return_val_if_fail (object != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!subagent_json_read_string (object, "session", "session_id", TRUE, &session_id, error))
    return NULL;
  if (!subagent_session_id_is_valid (session_id))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "session: “session_id” must be 1–%d characters of [A-Za-z0-9_-]",
                   SESSION_ID_MAX_LENGTH);
      return NULL;
    }
  what = g_strdup_printf ("session “%s”", session_id);

  if (!subagent_json_read_string (object, what, "def_name", TRUE, &def_name, error) ||
      !subagent_json_read_string (object, what, "parent_run_id", TRUE, &parent_run_id, error) ||
      !subagent_json_read_string (object, what, "status", TRUE, &status_text, error) ||
      !read_time (object, what, "started_at", TRUE, &started_at, error) ||
      !subagent_json_read_int (object, what, "depth", 0, G_MAXINT, &depth, error) ||
      !subagent_json_read_int (object, what, "batch_index", 0, G_MAXINT, &batch_index, error) ||
      !subagent_json_read_string (object, what, "isolation", FALSE, &isolation, error) ||
      !subagent_json_read_string (object, what, "worktree_path", FALSE, &worktree_path, error) ||
      !subagent_json_read_string (object, what, "container_path", FALSE, &container_path, error) ||
      !read_time (object, what, "completed_at", FALSE, &completed_at, error) ||
      !subagent_json_read_int (object, what, "iterations", 0, G_MAXUINT, &iterations, error) ||
      !subagent_json_read_int (object, what, "tool_calls", 0, G_MAXUINT, &tool_calls, error) ||
      !subagent_json_read_amount (object, what, "cost_cents", &cost_cents, error) ||
      !subagent_json_read_string (object, what, "final_answer", FALSE, &final_answer, error) ||
      !subagent_json_read_object (object, what, "review", &review, error) ||
      !subagent_json_read_string (object, what, "task", FALSE, &task, error) ||
      !subagent_json_read_int (object, what, "follow_ups", 0, G_MAXUINT, &follow_ups, error) ||
      !subagent_json_read_boolean (object, what, "workspace_kept", &workspace_kept, error) ||
      !subagent_json_read_string (object, what, "child_root", FALSE, &child_root, error) ||
      !subagent_json_read_object (object, what, "last_run", &last_run, error))
    return NULL;

  transcript_node = json_object_get_member (object, "transcript");
  if (transcript_node != NULL && !JSON_NODE_HOLDS_NULL (transcript_node))
    {
      if (!JSON_NODE_HOLDS_ARRAY (transcript_node))
        {
          subagent_json_bad_type (what, "transcript", "a list of messages", error);
          return NULL;
        }
      transcript = json_node_get_array (transcript_node);
    }

  if (!run_status_from_string (status_text, &status))
    {
      subagent_json_bad_type (what, "status", "one of complete, partial, cancelled, failed, error", error);
      return NULL;
    }

  session = g_object_new (SUBAGENT_TYPE_SESSION,
                         "session-id", session_id,
                         "def-name", def_name,
                         "parent-run-id", parent_run_id,
                         "status", status,
                         "started-at", started_at,
                         "depth", (guint) depth,
                         "batch-index", (gint) batch_index,
                         "isolation", isolation,
                         "worktree-path", worktree_path,
                         "container-path", container_path,
                         "completed-at", completed_at,
                         "iterations", (guint) iterations,
                         "tool-calls", (guint) tool_calls,
                         "cost-cents", cost_cents,
                         "final-answer", final_answer,
                         "review", review,
                         "task", task,
                         "follow-ups", (guint) follow_ups,
                         "workspace-kept", workspace_kept,
                         "child-root", child_root,
                         "transcript", transcript,
                         NULL);
  if (last_run != NULL && !read_last_run (session, last_run, what, error))
    g_clear_object (&session);
  return session;
}

static void
set_time_member (JsonObject *object,
                 const char *key,
                 GDateTime  *time)
{
  g_autofree char *text = time ? g_date_time_format_iso8601 (time) : NULL;

  subagent_json_set_nullable_string (object, key, text);
}

/**
 * subagent_session_to_json:
 * @self: a #SubagentSession
 *
 * Serializes the session: reference 001's fields (`session_id`, `def_name`,
 * `parent_run_id`, `status`, `started_at`, `depth`, `batch_index`,
 * `isolation`, `worktree_path`, `container_path`, `completed_at`,
 * `iterations`, `tool_calls`, `cost_cents`, `final_answer`, `review`) then
 * `task`, `follow_ups`, `workspace_kept`, `child_root`, for a record the
 * manager wrote `last_run` (the latest run's own `iterations`,
 * `tool_calls`, `cost_cents`, `message`, `stop_reason` and `confinement`:
 * the session's usage adds up its follow-ups) and, for a model-backed
 * child, `transcript`. Unset values are
 * `null`; times are ISO-8601.
 *
 * Returns: (transfer full): a new JSON object
 */
JsonObject *
subagent_session_to_json (SubagentSession *self)
{
  JsonObject *object;

  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), NULL);

  object = json_object_new ();
  json_object_set_string_member (object, "session_id", subagent_session_get_session_id (self));
  json_object_set_string_member (object, "def_name", subagent_session_get_def_name (self));
  json_object_set_string_member (object, "parent_run_id", subagent_session_get_parent_run_id (self));
  json_object_set_string_member (object, "status", subagent_run_status_to_string (subagent_session_get_status (self)));
  set_time_member (object, "started_at", subagent_session_get_started_at (self));
  json_object_set_int_member (object, "depth", subagent_session_get_depth (self));
  if (subagent_session_get_batch_index (self) == SUBAGENT_NO_BATCH_INDEX)
    json_object_set_null_member (object, "batch_index");
  else
    json_object_set_int_member (object, "batch_index", subagent_session_get_batch_index (self));
  json_object_set_string_member (object, "isolation", subagent_session_get_isolation (self));
  subagent_json_set_nullable_string (object, "worktree_path", subagent_session_get_worktree_path (self));
  subagent_json_set_nullable_string (object, "container_path", subagent_session_get_container_path (self));
  set_time_member (object, "completed_at", subagent_session_get_completed_at (self));
  json_object_set_int_member (object, "iterations", subagent_session_get_iterations (self));
  json_object_set_int_member (object, "tool_calls", subagent_session_get_tool_calls (self));
  subagent_json_set_amount (object, "cost_cents", subagent_session_get_cost_cents (self));
  json_object_set_string_member (object, "final_answer", subagent_session_get_final_answer (self));
  if (subagent_session_get_review (self) != NULL)
    {
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), subagent_session_get_review (self));

      json_object_set_member (object, "review", subagent_json_node_deep_copy (node));
    }
  else
    json_object_set_null_member (object, "review");
  json_object_set_string_member (object, "task", subagent_session_get_task (self));
  json_object_set_int_member (object, "follow_ups", subagent_session_get_follow_ups (self));
  json_object_set_boolean_member (object, "workspace_kept", subagent_session_get_workspace_kept (self));
  subagent_json_set_nullable_string (object, "child_root", subagent_session_get_child_root (self));
  if (self->has_last_run)
    {
      JsonObject *last_run = json_object_new ();

      json_object_set_int_member (last_run, "iterations", self->last_iterations);
      json_object_set_int_member (last_run, "tool_calls", self->last_tool_calls);
      subagent_json_set_amount (last_run, "cost_cents", self->last_cost_cents);
      subagent_json_set_nullable_string (last_run, "message", self->last_message);
      subagent_json_set_nullable_string (last_run, "stop_reason", self->last_stop_reason);
      subagent_json_set_nullable_string (last_run, "confinement", self->last_confinement);
      json_object_set_object_member (object, "last_run", last_run);
    }
  if (subagent_session_get_transcript (self) != NULL)
    {
      g_autoptr(JsonNode) node = json_node_init_array (json_node_alloc (), subagent_session_get_transcript (self));

      json_object_set_member (object, "transcript", subagent_json_node_deep_copy (node));
    }
  return object;
}

static void
append_time_member (GString    *out,
                    const char *key,
                    GDateTime  *time)
{
  char text[SUBAGENT_TIME_TEXT_SIZE];

  _subagent_json_line_append_string_member (out, key, time ? _subagent_time_format_iso8601 (time, text) : NULL);
}

/* Member for member what subagent_session_to_json() builds, in its order
 * (tests/test-session-log.c compares the bytes). */
void
_subagent_session_view_append_line (const SubagentSessionView *view,
                                    GString                   *out)
{
  _subagent_line_append_len (out, "{\"session_id\":", 14);
  _subagent_json_line_append_string (out, view->session_id);
  _subagent_json_line_append_string_member (out, "def_name", view->def_name);
  _subagent_json_line_append_string_member (out, "parent_run_id", view->parent_run_id);
  _subagent_json_line_append_string_member (out, "status", subagent_run_status_to_string (view->status));
  append_time_member (out, "started_at", view->started_at);
  _subagent_json_line_append_int_member (out, "depth", view->depth);
  _subagent_json_line_append_index_member (out, "batch_index", view->batch_index);
  _subagent_json_line_append_string_member (out, "isolation", view->isolation);
  _subagent_json_line_append_string_member (out, "worktree_path", view->worktree_path);
  _subagent_json_line_append_string_member (out, "container_path", view->container_path);
  append_time_member (out, "completed_at", view->completed_at);
  _subagent_json_line_append_int_member (out, "iterations", view->iterations);
  _subagent_json_line_append_int_member (out, "tool_calls", view->tool_calls);
  _subagent_json_line_append_amount_member (out, "cost_cents", view->cost_cents);
  _subagent_json_line_append_string_member (out, "final_answer", view->final_answer);
  _subagent_json_line_append_key (out, "review", FALSE);
  if (view->review != NULL)
    _subagent_json_line_append_object (out, view->review);
  else
    _subagent_line_append_len (out, "null", 4);
  _subagent_json_line_append_string_member (out, "task", view->task);
  _subagent_json_line_append_int_member (out, "follow_ups", view->follow_ups);
  _subagent_json_line_append_key (out, "workspace_kept", FALSE);
  _subagent_line_append (out, view->workspace_kept ? "true" : "false");
  _subagent_json_line_append_string_member (out, "child_root", view->child_root);
  if (view->has_last_run)
    {
      _subagent_line_append (out, ",\"last_run\":{\"iterations\":");
      _subagent_json_line_append_int (out, view->last_iterations);
      _subagent_json_line_append_int_member (out, "tool_calls", view->last_tool_calls);
      _subagent_json_line_append_amount_member (out, "cost_cents", view->last_cost_cents);
      _subagent_json_line_append_string_member (out, "message", view->last_message);
      _subagent_json_line_append_string_member (out, "stop_reason", view->last_stop_reason);
      _subagent_json_line_append_string_member (out, "confinement", view->last_confinement);
      g_string_append_c (out, '}');
    }
  if (view->transcript != NULL)
    {
      g_autoptr(JsonNode) node = json_node_init_array (json_node_alloc (), view->transcript);

      _subagent_json_line_append_key (out, "transcript", FALSE);
      _subagent_json_line_append_node (out, node);
    }
  g_string_append_c (out, '}');
}

void
_subagent_session_append_line (SubagentSession *self,
                               GString         *out)
{
  const SubagentSessionView view = {
    .session_id = subagent_session_get_session_id (self),
    .def_name = subagent_session_get_def_name (self),
    .parent_run_id = subagent_session_get_parent_run_id (self),
    .status = subagent_session_get_status (self),
    .started_at = subagent_session_get_started_at (self),
    .depth = subagent_session_get_depth (self),
    .batch_index = subagent_session_get_batch_index (self),
    .isolation = subagent_session_get_isolation (self),
    .worktree_path = subagent_session_get_worktree_path (self),
    .container_path = subagent_session_get_container_path (self),
    .completed_at = subagent_session_get_completed_at (self),
    .iterations = subagent_session_get_iterations (self),
    .tool_calls = subagent_session_get_tool_calls (self),
    .cost_cents = subagent_session_get_cost_cents (self),
    .final_answer = subagent_session_get_final_answer (self),
    .review = subagent_session_get_review (self),
    .transcript = subagent_session_get_transcript (self),
    .task = subagent_session_get_task (self),
    .follow_ups = subagent_session_get_follow_ups (self),
    .workspace_kept = subagent_session_get_workspace_kept (self),
    .child_root = subagent_session_get_child_root (self),
    .has_last_run = self->has_last_run,
    .last_iterations = self->last_iterations,
    .last_tool_calls = self->last_tool_calls,
    .last_cost_cents = self->last_cost_cents,
    .last_message = self->last_message,
    .last_stop_reason = self->last_stop_reason,
    .last_confinement = self->last_confinement,
  };

  _subagent_session_view_append_line (&view, out);
}

/**
 * subagent_session_save:
 * @self: a #SubagentSession
 * @sessions_dir: the directory of session records, such as `<root>/.subagent/sessions`; created if missing
 * @error: return location for a #GError
 *
 * Writes the session to `<sessions_dir>/<session-id>.json` atomically: into
 * a temporary file in the same directory, flushed to disk, then renamed over
 * the old record. Readers see the old record or the new one, never a torn
 * one. This blocks on disk I/O; see subagent_session_save_async().
 *
 * Returns: %TRUE on success; %FALSE with @error set
 *   (%SUBAGENT_ERROR_INVALID_ARGUMENT for an invalid session id, a #GIOErrorEnum otherwise)
 */
gboolean
subagent_session_save (SubagentSession  *self,
                       const char       *sessions_dir,
                       GError          **error)
{
  g_autoptr(JsonGenerator) generator = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  g_autofree char *file_name = NULL;
  g_autofree char *path = NULL;
  g_autofree char *tmp_path = NULL;
  gsize length;
  int fd, dir_fd, write_errno;

  g_return_val_if_fail (SUBAGENT_IS_SESSION (self), FALSE);
  g_return_val_if_fail (sessions_dir != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!subagent_session_id_is_valid (subagent_session_get_session_id (self)))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Refusing to save session “%s”: a session id must be 1–%d characters of [A-Za-z0-9_-]",
                   subagent_session_get_session_id (self), SESSION_ID_MAX_LENGTH);
      return FALSE;
    }
  if (!_subagent_state_dir_ensure (sessions_dir, 0700, error))
    return FALSE;

  root = json_node_init_object (json_node_alloc (), subagent_session_to_json (self));
  json_object_unref (json_node_get_object (root));
  generator = json_generator_new ();
  json_generator_set_pretty (generator, TRUE);
  json_generator_set_root (generator, root);
  text = json_generator_to_data (generator, &length);

  file_name = g_strconcat (subagent_session_get_session_id (self), ".json", NULL);
  path = g_build_filename (sessions_dir, file_name, NULL);
  tmp_path = g_strdup_printf ("%s/.%s.XXXXXX", sessions_dir, file_name);
  fd = g_mkstemp_full (tmp_path, O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Could not create a temporary file in %s: %s", sessions_dir, g_strerror (saved));
      return FALSE;
    }
  if ((write_errno = _subagent_write_all (fd, text, length)) != 0 ||
      (write_errno = _subagent_write_all (fd, "\n", 1)) != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (write_errno),
                   "Could not write session file %s: %s", tmp_path, g_strerror (write_errno));
      goto fail;
    }
  if (fsync (fd) != 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Could not flush session file %s: %s", tmp_path, g_strerror (saved));
      goto fail;
    }
  if (close (fd) != 0)
    {
      int saved = errno;

      fd = -1;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Could not close session file %s: %s", tmp_path, g_strerror (saved));
      goto fail;
    }
  fd = -1;
  if (g_rename (tmp_path, path) != 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Could not move the session record into place at %s: %s", path, g_strerror (saved));
      goto fail;
    }

  /* Make the rename itself durable. */
  dir_fd = open (sessions_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0)
    {
      (void) fsync (dir_fd);
      close (dir_fd);
    }
  return TRUE;

fail:
  if (fd >= 0)
    close (fd);
  g_unlink (tmp_path);
  return FALSE;
}

static void
save_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  GError *error = NULL;

  if (subagent_session_save (source_object, task_data, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/**
 * subagent_session_save_async:
 * @self: a #SubagentSession
 * @sessions_dir: the directory of session records
 * @cancellable: (nullable): a #GCancellable; a save that has started completes
 * @callback: (scope async): called when the record is written
 * @user_data: (closure): data for @callback
 *
 * Runs subagent_session_save() in a worker thread.
 */
void
subagent_session_save_async (SubagentSession     *self,
                             const char          *sessions_dir,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SUBAGENT_IS_SESSION (self));
  g_return_if_fail (sessions_dir != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, subagent_session_save_async);
  g_task_set_task_data (task, g_strdup (sessions_dir), g_free);
  g_task_run_in_thread (task, save_thread);
}

/**
 * subagent_session_save_finish:
 * @self: a #SubagentSession
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes subagent_session_save_async().
 *
 * Returns: %TRUE on success
 */
gboolean
subagent_session_save_finish (SubagentSession  *self,
                              GAsyncResult     *result,
                              GError          **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* Reads a regular file of bounded size without blocking on a FIFO. */
static char *
read_session_file (const char  *path,
                   gsize        max_bytes,
                   gsize       *length,
                   GError     **error)
{
  g_autofree char *data = NULL;
  struct stat st;
  gsize done = 0;
  int fd;

  fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Could not open session file %s: %s", path, g_strerror (saved));
      return NULL;
    }
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || (gsize) st.st_size > max_bytes)
    {
      close (fd);
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "%s is not a session record: expected a regular file of at most %" G_GSIZE_FORMAT " bytes",
                   path, max_bytes);
      return NULL;
    }
  data = g_malloc ((gsize) st.st_size + 1);
  while (done < (gsize) st.st_size)
    {
      gssize n = read (fd, data + done, (gsize) st.st_size - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;

          close (fd);
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "Could not read session file %s: %s", path, g_strerror (saved));
          return NULL;
        }
      if (n == 0)
        break;
      done += (gsize) n;
    }
  close (fd);
  data[done] = '\0';
  *length = done;
  return g_steal_pointer (&data);
}

/**
 * subagent_session_load:
 * @path: a session file, `<session-id>.json`
 * @error: return location for a #GError
 *
 * Reads a session record written by subagent_session_save(). The file name
 * must match the record's `session_id`, so a renamed or planted file is
 * refused rather than mistaken for another session.
 *
 * Returns: (transfer full) (nullable): the session, or %NULL with @error set
 */
SubagentSession *
subagent_session_load (const char  *path,
                       GError     **error)
{
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(SubagentSession) session = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *data = NULL;
  g_autofree char *base = NULL;
  g_autofree char *expected = NULL;
  JsonNode *root;
  gsize length = 0;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  data = read_session_file (path, SESSION_FILE_MAX_BYTES, &length, error);
  if (data == NULL)
    return NULL;
  parser = json_parser_new_immutable ();
  if (!subagent_json_parser_load_bounded (parser, data, (gssize) length, &local_error))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Session file %s is not valid JSON: %s", path, local_error->message);
      return NULL;
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Session file %s does not hold a JSON object", path);
      return NULL;
    }
  session = subagent_session_new_from_json (json_node_get_object (root), &local_error);
  if (session == NULL)
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Session file %s is invalid: %s", path, local_error->message);
      return NULL;
    }
  base = g_path_get_basename (path);
  expected = g_strconcat (subagent_session_get_session_id (session), ".json", NULL);
  if (!g_str_equal (base, expected))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Session file %s holds session “%s”; records must be named %s (rename or remove the file)",
                   path, subagent_session_get_session_id (session), expected);
      return NULL;
    }
  return g_steal_pointer (&session);
}
