/* subagent-audit-log.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subagent.h"
#include "subagent-state-path-private.h"
#include "subagent-json-line-private.h"
#include "subagent-records-private.h"
#include "subagent-scratch-private.h"

/**
 * SubagentAuditLog:
 *
 * An append-only log of what a parent run delegated, one JSON object per
 * line in `<root>/.subagent/audit.jsonl`.
 *
 * Each record is written with a single `write(2)` on a descriptor opened with
 * `O_APPEND`, so records from several threads or processes never interleave.
 * The descriptor stays open between records while the path still names the
 * same file (a rotated or removed log is opened again).
 */
struct _SubagentAuditLog
{
  GObject parent_instance;
  char *path;

  GMutex lock;
  int fd;                 /* -1 until the first record */
  dev_t dev;              /* the file @fd has open */
  ino_t ino;
};

enum { PROP_0, PROP_PATH, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (SubagentAuditLog, subagent_audit_log, G_TYPE_OBJECT)

static void
subagent_audit_log_finalize (GObject *object)
{
  SubagentAuditLog *self = SUBAGENT_AUDIT_LOG (object);

  if (self->fd >= 0)
    close (self->fd);
  g_mutex_clear (&self->lock);
  g_free (self->path);
  G_OBJECT_CLASS (subagent_audit_log_parent_class)->finalize (object);
}

static void
subagent_audit_log_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SubagentAuditLog *self = SUBAGENT_AUDIT_LOG (object);

  switch (prop_id)
    {
    case PROP_PATH:
      g_value_set_string (value, self->path);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_audit_log_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  SubagentAuditLog *self = SUBAGENT_AUDIT_LOG (object);

  switch (prop_id)
    {
    case PROP_PATH:
      self->path = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
subagent_audit_log_class_init (SubagentAuditLogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = subagent_audit_log_finalize;
  object_class->get_property = subagent_audit_log_get_property;
  object_class->set_property = subagent_audit_log_set_property;

  /**
   * SubagentAuditLog:path:
   *
   * The log file; its directory is created on the first record.
   */
  properties[PROP_PATH] =
    g_param_spec_string ("path", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
subagent_audit_log_init (SubagentAuditLog *self)
{
  g_mutex_init (&self->lock);
  self->fd = -1;
}

/**
 * subagent_audit_log_new:
 * @path: the log file, such as `<root>/.subagent/audit.jsonl`
 *
 * Creates a new audit log.
 *
 * Returns: (transfer full): a new audit log
 *
 * Since: 0.2
 */
SubagentAuditLog *
subagent_audit_log_new (const char *path)
{
  g_return_val_if_fail (path != NULL, NULL);

  return g_object_new (SUBAGENT_TYPE_AUDIT_LOG, "path", path, NULL);
}

/**
 * subagent_audit_log_get_path:
 * @self: a #SubagentAuditLog
 *
 * Gets the log file.
 *
 * Returns: (transfer none): the log file
 *
 * Since: 0.2
 */
const char *
subagent_audit_log_get_path (SubagentAuditLog *self)
{
  g_return_val_if_fail (SUBAGENT_IS_AUDIT_LOG (self), NULL);
  return self->path;
}

/* The log's descriptor: the one already open while the path still names
 * its file, else the file opened (created) anew. Called locked. */
static int
open_locked (SubagentAuditLog  *self,
             GError           **error)
{
  g_autofree char *dir = NULL;
  struct stat st;
  int fd;

  if (self->fd >= 0 && lstat (self->path, &st) == 0 && st.st_dev == self->dev && st.st_ino == self->ino)
    return self->fd;
  if (self->fd >= 0)
    {
      close (self->fd);
      self->fd = -1;
    }

  dir = g_path_get_dirname (self->path);
  /* Never through a symbolic link: not the directory, not the file. */
  if (!_subagent_state_dir_ensure (dir, 0755, error))
    {
      g_prefix_error (error, "Cannot write the audit log: ");
      return -1;
    }
  fd = g_open (self->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot open the audit log %s: %s", self->path, g_strerror (saved));
      return -1;
    }
  if (fstat (fd, &st) == 0)
    {
      self->fd = fd;
      self->dev = st.st_dev;
      self->ino = st.st_ino;
    }
  else
    {
      /* Used once, then closed: keeps nothing it cannot check. */
      self->fd = -1;
    }
  return fd;
}

/* Appends @line, a whole record, with one write(). */
static gboolean
append_line (SubagentAuditLog  *self,
             const GString     *line,
             GError           **error)
{
  gssize written;
  int fd;

  g_mutex_lock (&self->lock);
  fd = open_locked (self, error);
  if (fd < 0)
    {
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  do
    written = write (fd, line->str, line->len);
  while (written < 0 && errno == EINTR);
  if (fd != self->fd)
    close (fd);
  g_mutex_unlock (&self->lock);
  if (written != (gssize) line->len)
    {
      int saved = written < 0 ? errno : EIO;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot append to the audit log %s: %s", self->path, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

/**
 * subagent_audit_log_record:
 * @self: a #SubagentAuditLog
 * @event: the record's kind, such as %SUBAGENT_AUDIT_EVENT_LINEAGE
 * @fields: (nullable): the record's fields
 * @error: return location for a #GError
 *
 * Appends one record `{"event": ..., "ts": ..., fields...}`.
 *
 * Returns: %TRUE on success
 */
gboolean
subagent_audit_log_record (SubagentAuditLog  *self,
                           const char        *event,
                           JsonObject        *fields,
                           GError           **error)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  char ts[SUBAGENT_TIME_TEXT_SIZE];
  g_autoptr(GString) line = NULL;

  g_return_val_if_fail (SUBAGENT_IS_AUDIT_LOG (self), FALSE);
  g_return_val_if_fail (event != NULL, FALSE);

  _subagent_time_format_iso8601 (now, ts);
  line = g_string_sized_new (512);
  if (fields == NULL ||
      (!json_object_has_member (fields, "event") && !json_object_has_member (fields, "ts")))
    {
      JsonObjectIter iter;
      const char *name;
      JsonNode *value;

      /* What the generator gave for {"event", "ts", the fields in the
       * order json_object_iter_init() visits them}, written directly (no
       * record object, member copies or generator per line;
       * tests/test-lineage-session.c compares the bytes). */
      _subagent_line_append_len (line, "{\"event\":", 9);
      _subagent_json_line_append_string (line, event);
      _subagent_line_append_len (line, ",\"ts\":", 6);
      _subagent_json_line_append_string (line, ts);
      if (fields != NULL)
        {
          json_object_iter_init (&iter, fields);
          while (json_object_iter_next (&iter, &name, &value))
            {
              _subagent_json_line_append_key (line, name, FALSE);
              _subagent_json_line_append_node (line, value);
            }
        }
      _subagent_line_append_len (line, "}\n", 2);
    }
  else
    {
      /* A field named like a fixed member replaces it in place. */
      g_autoptr(JsonObject) record = json_object_new ();
      g_autoptr(JsonNode) node = NULL;
      JsonObjectIter iter;
      const char *name;
      JsonNode *value;

      json_object_set_string_member (record, "event", event);
      json_object_set_string_member (record, "ts", ts);
      json_object_iter_init (&iter, fields);
      while (json_object_iter_next (&iter, &name, &value))
        json_object_set_member (record, name, json_node_copy (value));
      node = json_node_init_object (json_node_alloc (), record);
      _subagent_json_line_append_node (line, node);
      g_string_append_c (line, '\n');
    }

  return append_line (self, line, error);
}

gboolean
_subagent_audit_log_record_members (SubagentAuditLog  *self,
                                    const char        *event,
                                    const GString     *members,
                                    GError           **error)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  char ts[SUBAGENT_TIME_TEXT_SIZE];
  GString *line = _subagent_scratch_take (SUBAGENT_SCRATCH_AUDIT_LINE);
  gboolean appended;

  _subagent_line_append_len (line, "{\"event\":", 9);
  _subagent_json_line_append_string (line, event);
  _subagent_line_append_len (line, ",\"ts\":", 6);
  _subagent_json_line_append_string (line, _subagent_time_format_iso8601 (now, ts));
  _subagent_line_append_len (line, members->str, members->len);
  _subagent_line_append_len (line, "}\n", 2);
  appended = append_line (self, line, error);
  _subagent_scratch_give (SUBAGENT_SCRATCH_AUDIT_LINE, line);
  return appended;
}

/**
 * subagent_audit_log_read:
 * @self: a #SubagentAuditLog
 * @event: (nullable): only records of this kind, or %NULL for all
 * @error: return location for a #GError
 *
 * Reads the log back. Lines that do not parse (a torn last line after a
 * crash) are skipped.
 *
 * Returns: (transfer container) (element-type JsonObject): the records, oldest first
 */
GPtrArray *
subagent_audit_log_read (SubagentAuditLog  *self,
                         const char        *event,
                         GError           **error)
{
  g_autoptr(GPtrArray) records = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (SUBAGENT_IS_AUDIT_LOG (self), NULL);

  if (!g_file_get_contents (self->path, &contents, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return g_steal_pointer (&records);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonNode) node = NULL;
      JsonObject *object;

      if (lines[i][0] == '\0')
        continue;
      node = subagent_json_check_depth (lines[i], -1, SUBAGENT_JSON_MAX_DEPTH, NULL) ? json_from_string (lines[i], NULL) : NULL;
      if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
        continue;
      object = json_node_get_object (node);
      if (event != NULL && g_strcmp0 (json_object_get_string_member_with_default (object, "event", NULL), event) != 0)
        continue;
      g_ptr_array_add (records, json_object_ref (object));
    }
  return g_steal_pointer (&records);
}
