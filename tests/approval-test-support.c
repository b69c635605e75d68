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

/* $ASAN_OPTIONS with the fast malloc unwinder (a later flag wins). */
static char *
helper_asan_options (void)
{
  const char *options = g_getenv ("ASAN_OPTIONS");

  if (options == NULL || options[0] == '\0')
    return g_strdup ("fast_unwind_on_malloc=1");
  return g_strconcat (options, ":fast_unwind_on_malloc=1", NULL);
}

GSubprocess *
ats_spawn_helper (GSubprocessFlags   flags,
                  GError           **error,
                  const char        *first_arg,
                  ...)
{
  g_autofree char *helper = g_test_build_filename (G_TEST_BUILT, "approval-stress-helper", NULL);
  g_autofree char *asan_options = helper_asan_options ();
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (flags);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  va_list ap;

  g_ptr_array_add (argv, helper);
  va_start (ap, first_arg);
  for (const char *a = first_arg; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_setenv (launcher, "ASAN_OPTIONS", asan_options, TRUE);
  return g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, error);
}

typedef struct {
  char **outputs;
  GError **errors;
  guint pending;
} CommunicateAll;

typedef struct {
  CommunicateAll *all;
  guint index;
} CommunicateOne;

static void
on_communicated (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  CommunicateOne *one = user_data;

  g_subprocess_communicate_utf8_finish (G_SUBPROCESS (source), result, &one->all->outputs[one->index], NULL,
                                        &one->all->errors[one->index]);
  one->all->pending--;
  g_free (one);
}

static gboolean
on_deadline (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

char **
ats_communicate_all (GPtrArray          *procs,
                     const char * const *names,
                     guint               timeout_seconds)
{
  CommunicateAll all = { g_new0 (char *, procs->len + 1), g_new0 (GError *, procs->len), procs->len };
  gboolean expired = FALSE;
  guint deadline_id = g_timeout_add_seconds (timeout_seconds, on_deadline, &expired);

  for (guint i = 0; i < procs->len; i++)
    {
      CommunicateOne *one = g_new0 (CommunicateOne, 1);

      one->all = &all;
      one->index = i;
      g_subprocess_communicate_utf8_async (procs->pdata[i], NULL, NULL, on_communicated, one);
    }
  while (all.pending > 0 && !expired)
    g_main_context_iteration (NULL, TRUE);

  if (expired)
    {
      g_autoptr(GString) running = g_string_new (NULL);

      for (guint i = 0; i < procs->len; i++)
        if (all.outputs[i] == NULL && all.errors[i] == NULL)
          {
            g_string_append_printf (running, " %s", names[i]);
            g_subprocess_force_exit (procs->pdata[i]);
          }
      /* Let the killed ones' reads finish before their buffers go. */
      while (all.pending > 0)
        g_main_context_iteration (NULL, TRUE);
      g_error ("still running after %u s (killed):%s", timeout_seconds, running->str);
    }
  g_source_remove (deadline_id);

  for (guint i = 0; i < procs->len; i++)
    {
      g_assert_no_error (all.errors[i]);
      if (!g_subprocess_get_successful (procs->pdata[i]))
        g_error ("%s failed (see its stderr above)", names[i]);
    }
  g_free (all.errors);
  return all.outputs;
}
