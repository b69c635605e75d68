/* test-support.c: fixtures shared by the GTest programs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <stdarg.h>

#include "test-support.h"

char *
sat_make_temp_dir (const char *prefix)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *template = g_strdup_printf ("%s-XXXXXX", prefix ? prefix : "subagent-test");
  char *dir = g_dir_make_tmp (template, &error);

  g_assert_no_error (error);
  return dir;
}

void
sat_rm_rf (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) proc = NULL;

  if (path == NULL)
    return;
  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, "rm", "-rf", "--", path, NULL);
  g_assert_no_error (error);
  g_subprocess_wait_check (proc, NULL, &error);
  g_assert_no_error (error);
}

void
sat_write_file (const char *dir,
                const char *relative_path,
                const char *contents)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (dir, relative_path, NULL);
  g_autofree char *parent = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

char *
sat_read_file (const char *dir,
               const char *relative_path)
{
  g_autofree char *path = g_build_filename (dir, relative_path, NULL);
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return NULL;
  return contents;
}

static char *
run_argv (const char  *cwd,
          gboolean     allow_failure,
          int         *exit_status,
          GPtrArray   *argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  g_ptr_array_add (argv, NULL);
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  if (cwd != NULL)
    g_subprocess_launcher_set_cwd (launcher, cwd);
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, &err, &error);
  g_assert_no_error (error);
  if (exit_status != NULL)
    *exit_status = g_subprocess_get_exit_status (proc);
  if (!allow_failure && !g_subprocess_get_successful (proc))
    g_error ("command %s failed: %s", (const char *) argv->pdata[0], err);
  return g_steal_pointer (&out);
}

char *
sat_run (const char *cwd,
         gboolean    allow_failure,
         int        *exit_status,
         const char *first_arg,
         ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  va_list ap;

  va_start (ap, first_arg);
  for (const char *a = first_arg; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  return run_argv (cwd, allow_failure, exit_status, argv);
}

char *
sat_make_git_repo (const char *first_path,
                   ...)
{
  char *dir = sat_make_temp_dir ("subagent-repo");
  g_autofree char *out = NULL;
  va_list ap;

  g_free (sat_run (dir, FALSE, NULL, "git", "init", "-q", "-b", "main", NULL));
  va_start (ap, first_path);
  for (const char *p = first_path; p != NULL; p = va_arg (ap, const char *))
    sat_write_file (dir, p, va_arg (ap, const char *));
  va_end (ap);
  g_free (sat_run (dir, FALSE, NULL, "git", "add", "-A", NULL));
  out = sat_run (dir, FALSE, NULL, "git", "commit", "-q", "--allow-empty", "-m", "initial", NULL);
  return dir;
}

const char *
sat_subagentctl (void)
{
  const char *path = g_getenv ("SUBAGENTCTL");

  g_assert_nonnull (path);
  return path;
}

void
sat_wait_for_flag (gboolean *flag)
{
  while (!*flag)
    g_main_context_iteration (NULL, TRUE);
}

int
sat_run_ctl (const char  *root,
             char       **out,
             char       **err,
             ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  va_list args;

  g_ptr_array_add (argv, (gpointer) sat_subagentctl ());
  va_start (args, err);
  for (const char *arg = va_arg (args, const char *); arg != NULL; arg = va_arg (args, const char *))
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (args);
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_set_cwd (launcher, root);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, out, err, &error);
  g_assert_no_error (error);
  /* A subagentctl killed by a signal (a sanitizer's abort) fails the test
   * with what it printed, not with GLib's critical about its status. */
  if (!g_subprocess_get_if_exited (process))
    g_error ("subagentctl %s was killed by signal %d; its stderr:\n%s",
             argv->len > 2 ? (const char *) argv->pdata[1] : "",
             g_subprocess_get_term_sig (process), err != NULL && *err != NULL ? *err : "(not read)");
  return g_subprocess_get_exit_status (process);
}
