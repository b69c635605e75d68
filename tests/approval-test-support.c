/* approval-test-support.c: fixtures of the approval-file test programs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "approval-test-support.h"

static void
on_integrity_failed (SubagentApprovalSink *sink,
                     const char           *run_id,
                     const char           *message,
                     Fixture              *f)
{
  g_assert_nonnull (run_id);
  g_assert_nonnull (message);
  f->integrity_failures++;
}

void
ats_fixture_set_up (Fixture       *f,
                    gconstpointer  key)
{
  f->root = sat_make_temp_dir ("approval-file");
  f->dir = g_build_filename (f->root, ".subagent", "approvals", NULL);
  f->sink = ats_new_sink (f->root, key);
  f->integrity_failures = 0;
  g_signal_connect (f->sink, "integrity-failed", G_CALLBACK (on_integrity_failed), f);
}

void
ats_fixture_tear_down (Fixture       *f,
                       gconstpointer  key)
{
  g_clear_object (&f->sink);
  sat_rm_rf (f->root);
  g_free (f->root);
  g_free (f->dir);
}

SubagentApprovalSink *
ats_new_sink (const char *root,
              const char *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) key_bytes = key ? g_bytes_new (key, strlen (key)) : NULL;
  GObject *sink = subagent_plugin_registry_create (subagent_plugin_registry_get_default (),
                                                   SUBAGENT_TYPE_APPROVAL_SINK, "file", &error);

  g_assert_no_error (error);
  g_object_set (sink, "root", root, "hmac-key", key_bytes, NULL);
  return SUBAGENT_APPROVAL_SINK (sink);
}

SubagentApprovalRequest *
ats_make_request (const char *run,
                  const char *tool,
                  const char *path)
{
  g_autoptr(JsonObject) args = json_object_new ();

  json_object_set_string_member (args, "path", path);
  return subagent_approval_request_new ("child-1", run, "writer", tool, args, "prompt", "shared",
                                        SUBAGENT_NO_BATCH_INDEX, NULL, 0);
}

void
ats_save_one (SubagentApprovalSink    *sink,
              const char              *run,
              SubagentApprovalRequest *request)
{
  g_autoptr(GPtrArray) batch = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;

  g_ptr_array_add (batch, request);
  g_assert_true (subagent_approval_sink_save (sink, run, batch, &error));
  g_assert_no_error (error);
}

GPtrArray *
ats_load (SubagentApprovalSink *sink,
          const char           *run)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *requests = subagent_approval_sink_load (sink, run, &error);

  g_assert_no_error (error);
  g_assert_nonnull (requests);
  return requests;
}

SubagentApprovalRequest *
ats_find (GPtrArray  *requests,
          const char *request_id)
{
  for (guint i = 0; i < requests->len; i++)
    if (g_str_equal (subagent_approval_request_get_request_id (requests->pdata[i]), request_id))
      return requests->pdata[i];
  return NULL;
}

SubagentApprovalStatus
ats_stored_status (SubagentApprovalSink    *sink,
                   const char              *run,
                   SubagentApprovalRequest *request)
{
  g_autoptr(GPtrArray) requests = ats_load (sink, run);
  SubagentApprovalRequest *stored = ats_find (requests, subagent_approval_request_get_request_id (request));

  g_assert_nonnull (stored);
  return subagent_approval_request_get_status (stored);
}

static int
compare_strings (const void *a,
                 const void *b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

char **
ats_dir_entries (const char *dir)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  char **names;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    g_strv_builder_add (builder, name);
  names = g_strv_builder_end (builder);
  qsort (names, g_strv_length (names), sizeof (char *), compare_strings);
  return names;
}

GSubprocess *
ats_spawn_helper (GSubprocessFlags   flags,
                  GError           **error,
                  const char        *first_arg,
                  ...)
{
  g_autofree char *helper = g_test_build_filename (G_TEST_BUILT, "approval-stress-helper", NULL);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  va_list ap;

  g_ptr_array_add (argv, helper);
  va_start (ap, first_arg);
  for (const char *a = first_arg; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  return g_subprocess_newv ((const char * const *) argv->pdata, flags, error);
}
