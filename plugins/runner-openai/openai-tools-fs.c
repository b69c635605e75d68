/* openai-tools-fs.c: the workspace as the built-in tools see it: their
 * environment (OpenaiToolEnv), tool paths resolved beneath the child root
 * with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), the write_scope
 * check, reads and atomic writes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "openai-tools-private.h"

#define FILE_MAX (10 * 1024 * 1024)

/* ---- paths --------------------------------------------------------------- */

static char *
normalize_relative (const char  *path,
                    GError     **error)
{
  g_auto(GStrv) parts = g_strsplit (path, "/", -1);
  g_autoptr(GPtrArray) kept = g_ptr_array_new ();

  for (guint i = 0; parts[i] != NULL; i++)
    {
      if (*parts[i] == '\0' || g_str_equal (parts[i], "."))
        continue;
      if (g_str_equal (parts[i], ".."))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                       "“%s” uses “..”: give a path inside the workspace", path);
          return NULL;
        }
      g_ptr_array_add (kept, parts[i]);
    }
  if (kept->len == 0)
    return g_strdup (".");
  g_ptr_array_add (kept, NULL);
  return g_strjoinv ("/", (char **) kept->pdata);
}

/* A tool's path argument as a path relative to the child root. */
char *
openai_tools_workspace_path (OpenaiToolEnv  *env,
                             const char     *path,
                             GError        **error)
{
  g_autofree char *rel = NULL;

  if (path == NULL || *path == '\0')
    path = ".";
  if (g_path_is_absolute (path))
    {
      gsize n = strlen (env->root);

      if (g_str_equal (path, env->root))
        path = ".";
      else if (strncmp (path, env->root, n) == 0 && path[n] == '/')
        path += n + 1;
      else
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                       "“%s” is outside the workspace %s: use a path inside it (relative paths start there)",
                       path, env->root);
          return NULL;
        }
    }
  rel = normalize_relative (path, error);
  if (rel == NULL)
    return NULL;
  if (g_str_equal (rel, ".subagent") || g_str_has_prefix (rel, ".subagent/"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "“%s” is libsubagent's own state, not part of the workspace", path);
      return NULL;
    }
  return g_steal_pointer (&rel);
}

static gboolean
under (const char *rel,
       const char *prefix)
{
  gsize n = strlen (prefix);

  return g_str_equal (prefix, ".") || g_str_equal (rel, prefix) ||
         (strncmp (rel, prefix, n) == 0 && rel[n] == '/');
}

gboolean
openai_tools_check_writable (OpenaiToolEnv  *env,
                             const char     *rel,
                             GError        **error)
{
  if (g_str_equal (rel, ".git") || g_str_has_prefix (rel, ".git/"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "“%s” is inside .git: change files, not the repository's internals", rel);
      return FALSE;
    }
  if (env->write_scope[0] == NULL)
    return TRUE;
  for (guint i = 0; env->write_scope[i] != NULL; i++)
    if (under (rel, env->write_scope[i]))
      return TRUE;
  {
    g_autofree char *scope = g_strjoinv (", ", env->write_scope);

    g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                 "“%s” is outside this agent's write_scope (%s)", rel, scope);
  }
  return FALSE;
}

int
openai_tools_open_beneath (OpenaiToolEnv  *env,
                           const char     *rel,
                           int             flags,
                           mode_t          mode,
                           gboolean        no_symlinks,
                           GError        **error)
{
  struct open_how how = { 0 };
  int fd;

  how.flags = flags | O_CLOEXEC;
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (no_symlinks ? RESOLVE_NO_SYMLINKS : 0);
  do
    fd = (int) syscall (SYS_openat2, env->root_fd, rel, &how, sizeof how);
  while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  if (fd < 0)
    {
      int saved = errno;

      if (saved == EXDEV || saved == ELOOP)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                     "“%s” leads outside the workspace (through a symlink)%s", rel,
                     no_symlinks ? ", or through a symlink where write_scope allows none" : "");
      else
        g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "“%s”: %s", rel, g_strerror (saved));
    }
  return fd;
}

/* Opens @rel's directory, making missing ones beneath the root. */
static int
open_parent (OpenaiToolEnv  *env,
             const char     *rel,
             gboolean        create,
             gboolean        no_symlinks,
             char          **base_out,
             GError        **error)
{
  g_autofree char *dir = g_path_get_dirname (rel);
  g_auto(GStrv) parts = NULL;
  g_autoptr(GString) so_far = g_string_new (NULL);

  *base_out = g_path_get_basename (rel);
  if (create && !g_str_equal (dir, "."))
    {
      parts = g_strsplit (dir, "/", -1);
      for (guint i = 0; parts[i] != NULL; i++)
        {
          int parent_fd;

          parent_fd = openai_tools_open_beneath (env, so_far->len ? so_far->str : ".", O_PATH | O_DIRECTORY, 0,
                                                 no_symlinks, error);
          if (parent_fd < 0)
            return -1;
          if (mkdirat (parent_fd, parts[i], 0755) < 0 && errno != EEXIST)
            {
              int saved = errno;
              close (parent_fd);
              g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot make directory “%s/%s”: %s",
                           so_far->len ? so_far->str : ".", parts[i], g_strerror (saved));
              return -1;
            }
          close (parent_fd);
          if (so_far->len)
            g_string_append_c (so_far, '/');
          g_string_append (so_far, parts[i]);
        }
    }
  return openai_tools_open_beneath (env, dir, O_PATH | O_DIRECTORY, 0, no_symlinks, error);
}

GBytes *
openai_tools_read_fd_all (int          fd,
                          const char  *rel,
                          gsize        max,
                          GError     **error)
{
  struct stat st;
  GByteArray *bytes;
  char buffer[65536];
  ssize_t n;

  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE, "“%s” is not a regular file", rel);
      return NULL;
    }
  if ((gsize) st.st_size > max)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE, "“%s” has %" G_GINT64_FORMAT " bytes, more than %" G_GSIZE_FORMAT " this tool reads",
                   rel, (gint64) st.st_size, max);
      return NULL;
    }
  bytes = g_byte_array_sized_new (st.st_size + 1);
  while ((n = read (fd, buffer, sizeof buffer)) != 0)
    {
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "reading “%s”: %s", rel, g_strerror (errno));
          g_byte_array_unref (bytes);
          return NULL;
        }
      g_byte_array_append (bytes, (guint8 *) buffer, n);
      if (bytes->len > max)
        break;
    }
  return g_byte_array_free_to_bytes (bytes);
}

GBytes *
openai_tools_read_file (OpenaiToolEnv  *env,
                        const char     *rel,
                        GError        **error)
{
  int fd = openai_tools_open_beneath (env, rel, O_RDONLY, 0, FALSE, error);
  GBytes *bytes;

  if (fd < 0)
    return NULL;
  bytes = openai_tools_read_fd_all (fd, rel, FILE_MAX, error);
  close (fd);
  return bytes;
}

/* Replaces @rel with @data through a temporary file and a rename. */
gboolean
openai_tools_write_file (OpenaiToolEnv  *env,
                         const char     *rel,
                         const char     *data,
                         gsize           len,
                         GError        **error)
{
  gboolean scoped = env->write_scope[0] != NULL;
  g_autofree char *base = NULL;
  g_autofree char *tmp = NULL;
  int dir_fd, fd;
  mode_t mode = 0644;
  struct stat st;
  gsize done = 0;

  dir_fd = open_parent (env, rel, TRUE, scoped, &base, error);
  if (dir_fd < 0)
    return FALSE;
  if (fstatat (dir_fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (S_ISDIR (st.st_mode))
        {
          close (dir_fd);
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY, "“%s” is a directory", rel);
          return FALSE;
        }
      if (S_ISREG (st.st_mode))
        mode = st.st_mode & 07777;
    }
  tmp = g_strdup_printf (".%s.subagent-%08x", base, g_random_int ());
  fd = openat (dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0)
    {
      int saved = errno;
      close (dir_fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot write “%s”: %s", rel, g_strerror (saved));
      return FALSE;
    }
  fchmod (fd, mode);
  while (done < len)
    {
      ssize_t n = write (fd, data + done, len - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          close (fd);
          unlinkat (dir_fd, tmp, 0);
          close (dir_fd);
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot write “%s”: %s", rel, g_strerror (saved));
          return FALSE;
        }
      done += n;
    }
  close (fd);
  if (renameat (dir_fd, tmp, dir_fd, base) < 0)
    {
      int saved = errno;
      unlinkat (dir_fd, tmp, 0);
      close (dir_fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot replace “%s”: %s", rel, g_strerror (saved));
      return FALSE;
    }
  close (dir_fd);
  return TRUE;
}


OpenaiToolEnv *
openai_tool_env_new (SubagentIsolationContext  *isolation,
                     const char * const        *write_scope,
                     const char * const        *hidden_env,
                     OpenaiWatchdog            *watchdog,
                     GError                   **error)
{
  g_autoptr(OpenaiToolEnv) env = g_new0 (OpenaiToolEnv, 1);
  g_autoptr(GStrvBuilder) scope = g_strv_builder_new ();
  g_auto(GStrv) environ = g_get_environ ();

  env->root_fd = -1;
  env->isolation = g_object_ref (isolation);
  env->root = g_canonicalize_filename (subagent_isolation_context_get_child_root (isolation), NULL);
  env->watchdog = watchdog;
  env->root_fd = open (env->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (env->root_fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot open the workspace %s: %s",
                   env->root, g_strerror (saved));
      return NULL;
    }
  for (guint i = 0; write_scope != NULL && write_scope[i] != NULL; i++)
    {
      g_autofree char *rel = normalize_relative (write_scope[i], NULL);

      if (rel != NULL)
        g_strv_builder_add (scope, rel);
    }
  env->write_scope = g_strv_builder_end (scope);
  /* The model's commands never see the API key or approval secrets. */
  for (guint i = 0; hidden_env != NULL && hidden_env[i] != NULL; i++)
    environ = g_environ_unsetenv (environ, hidden_env[i]);
  env->environ = g_steal_pointer (&environ);
  return g_steal_pointer (&env);
}

void
openai_tool_env_free (OpenaiToolEnv *env)
{
  if (env == NULL)
    return;
  g_clear_object (&env->isolation);
  g_free (env->root);
  if (env->root_fd >= 0)
    close (env->root_fd);
  g_strfreev (env->write_scope);
  g_strfreev (env->environ);
  g_free (env);
}
