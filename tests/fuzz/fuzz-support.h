/* fuzz-support.h: what every libFuzzer harness of libsubagent shares.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>

/* Diagnostics of rejected input are expected by the thousand: drop them. */
static GLogWriterOutput
fuzz_quiet_writer (GLogLevelFlags   level,
                   const GLogField *fields,
                   gsize            n_fields,
                   gpointer         user_data)
{
  if (level & G_LOG_LEVEL_ERROR)
    return g_log_writer_default (level, fields, n_fields, user_data);
  return G_LOG_WRITER_HANDLED;
}

/* A directory made once per process, removed at exit. */
static char *fuzz_root;

static void
fuzz_remove_root (void)
{
  g_autofree char *command = NULL;

  if (fuzz_root != NULL)
    {
      command = g_strdup_printf ("rm -rf '%s'", fuzz_root);
      if (system (command) != 0)
        g_printerr ("could not remove %s\n", fuzz_root);
    }
}

static const char *
fuzz_init_root (void)
{
  if (fuzz_root == NULL)
    {
      g_log_set_writer_func (fuzz_quiet_writer, NULL, NULL);
      fuzz_root = g_dir_make_tmp ("subagent-fuzz-XXXXXX", NULL);
      g_assert (fuzz_root != NULL);
      atexit (fuzz_remove_root);
    }
  return fuzz_root;
}

/* Writes @data to @relative under the fuzz root. */
static void
fuzz_write (const char   *relative,
            const guint8 *data,
            size_t        size)
{
  g_autofree char *path = g_build_filename (fuzz_init_root (), relative, NULL);
  g_autofree char *dir = g_path_get_dirname (path);

  g_mkdir_with_parents (dir, 0755);
  g_assert (g_file_set_contents (path, (const char *) data, (gssize) size, NULL));
}
