/* subagent-state-path.c: state directories, never through a symlink.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <gio/gio.h>

#include "subagent-state-path-private.h"

static gboolean
check_component (const char  *path,
                 int          mode,
                 gboolean     create,
                 GError     **error)
{
  struct stat st;

  if (lstat (path, &st) != 0)
    {
      int saved = errno;

      if (saved != ENOENT || !create)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot use %s: %s", path,
                       g_strerror (saved));
          return FALSE;
        }
      if (mkdir (path, mode) != 0 && errno != EEXIST)
        {
          saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot create %s: %s", path,
                       g_strerror (saved));
          return FALSE;
        }
      if (lstat (path, &st) != 0)
        {
          saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot use %s: %s", path,
                       g_strerror (saved));
          return FALSE;
        }
    }
  if (S_ISLNK (st.st_mode) || !S_ISDIR (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY,
                   "%s is %s, not a directory; state is never written through it (remove it)", path,
                   S_ISLNK (st.st_mode) ? "a symbolic link" : "something else");
      return FALSE;
    }
  return TRUE;
}

gboolean
_subagent_state_dir_ensure (const char  *dir,
                            int          mode,
                            GError     **error)
{
  g_autofree char *canonical = g_canonicalize_filename (dir, NULL);
  g_auto(GStrv) parts = NULL;
  g_autoptr(GString) path = g_string_new (NULL);
  int state_at = -1;
  guint n;

  parts = g_strsplit (canonical, "/", -1);
  n = g_strv_length (parts);
  for (guint i = 0; i < n; i++)
    if (g_str_equal (parts[i], ".subagent"))
      state_at = (int) i;

  if (state_at < 0)
    {
      /* Not under a state directory: make it, and refuse only a link as the leaf. */
      if (g_mkdir_with_parents (canonical, mode) != 0)
        {
          int saved = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot create %s: %s", canonical,
                       g_strerror (saved));
          return FALSE;
        }
      return check_component (canonical, mode, FALSE, error);
    }

  for (guint i = 0; i < n; i++)
    {
      if (i > 0 || *parts[i] != '\0')
        {
          if (path->len != 1 || path->str[0] != '/')
            g_string_append_c (path, '/');
          g_string_append (path, parts[i]);
        }
      else
        g_string_append_c (path, '/');
      if ((int) i < state_at)
        continue;
      if (!check_component (path->str, (int) i == state_at ? 0755 : mode, TRUE, error))
        return FALSE;
    }
  return TRUE;
}
