/* subagent-secrets.c: what must not reach a child.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subagent.h"

/**
 * SECTION:subagent-secrets
 * @title: Secrets
 * @short_description: the approval key and secret files, kept from children
 *
 * The approval HMAC key signs verdicts; a child that could read it could
 * forge them. A host reads it from `SUBAGENT_APPROVAL_HMAC_KEY` once,
 * through subagent_approval_key_from_environment(), which erases it from
 * the process's original environment block (what `/proc/<pid>/environ`
 * shows, which unsetenv() does not change) and marks the process
 * non-dumpable, so that a process of the same user without
 * `CAP_SYS_PTRACE` cannot read its memory or environment.
 *
 * A store plugin configured with a key file reads it through
 * subagent_approval_key_from_file(), which refuses a file others can read.
 *
 * Copied workspaces (snapshots, containers) leave out the files
 * subagent_secret_path_is_excluded() matches (subagent-exclude-set.c).
 */

static GMutex key_lock;
static GBytes *env_key;
static gboolean env_key_read;

/* Overwrites @name's value in the block the kernel shows as
 * /proc/self/environ (fields 48 and 49 of /proc/self/stat bound it). */
static void
scrub_original_environment (const char *name)
{
  g_autofree char *stat = NULL;
  g_auto(GStrv) fields = NULL;
  const char *p;
  guint64 start, end;
  gsize name_len = strlen (name);

  if (!g_file_get_contents ("/proc/self/stat", &stat, NULL, NULL) || (p = strrchr (stat, ')')) == NULL)
    return;
  fields = g_strsplit (p + 2, " ", -1);
  /* Field 3 is fields[0]; env_start and env_end are fields 48 and 49. */
  if (g_strv_length (fields) < 47)
    return;
  start = g_ascii_strtoull (fields[45], NULL, 10);
  end = g_ascii_strtoull (fields[46], NULL, 10);
  if (start == 0 || end <= start)
    return;
  /* Only the block this program got its environment in: under valgrind
   * the kernel's block is the tool's, which the program may not read. */
  for (char **e = environ;; e++)
    {
      if (e == NULL || *e == NULL)
        return;
      if ((guint64) (gsize) *e >= start && (guint64) (gsize) *e < end)
        break;
    }
  for (char *entry = (char *) (gsize) start; entry < (char *) (gsize) end; entry += strlen (entry) + 1)
    if (strncmp (entry, name, name_len) == 0 && entry[name_len] == '=')
      memset (entry + name_len + 1, 0, strlen (entry + name_len + 1));
}

/**
 * subagent_secrets_protect_process:
 *
 * Marks the calling process non-dumpable (`PR_SET_DUMPABLE`), as a process
 * holding an approval key should be: processes of the same user without
 * `CAP_SYS_PTRACE` can then neither trace it nor read its
 * `/proc/<pid>/mem` and `/proc/<pid>/environ`. Also erases
 * `SUBAGENT_APPROVAL_HMAC_KEY` from the environment (after
 * subagent_approval_key_from_environment() has kept its value).
 *
 * Since: 0.2
 */
void
subagent_secrets_protect_process (void)
{
  g_bytes_unref (subagent_approval_key_from_environment ());
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/**
 * subagent_approval_key_from_environment:
 *
 * The approval HMAC key from `SUBAGENT_APPROVAL_HMAC_KEY`, read on the
 * first call and kept for the process's lifetime; the variable is then
 * removed from the environment and its value erased from the original
 * environment block, and the process marked non-dumpable.
 *
 * Returns: (transfer full) (nullable): the key, or %NULL when the variable
 *   was unset or empty
 *
 * Since: 0.2
 */
GBytes *
subagent_approval_key_from_environment (void)
{
  GBytes *key;

  g_mutex_lock (&key_lock);
  if (!env_key_read)
    {
      const char *value = g_getenv (SUBAGENT_APPROVAL_HMAC_KEY_ENV);

      env_key_read = TRUE;
      if (value != NULL && *value != '\0')
        {
          env_key = g_bytes_new (value, strlen (value));
          prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
        }
      if (value != NULL)
        {
          /* The copy setenv() may have made, then the original block. */
          memset ((char *) value, 0, strlen (value));
          g_unsetenv (SUBAGENT_APPROVAL_HMAC_KEY_ENV);
          scrub_original_environment (SUBAGENT_APPROVAL_HMAC_KEY_ENV);
        }
    }
  key = env_key != NULL ? g_bytes_ref (env_key) : NULL;
  g_mutex_unlock (&key_lock);
  return key;
}

/* A key file is a short secret; anything larger is not one. */
#define KEY_FILE_MAX_SIZE (64 * 1024)

/**
 * subagent_approval_key_from_file:
 * @path: the key file
 * @error: return location for a #GError
 *
 * Reads an approval HMAC key from @path, as the approval store plugins do
 * for their `key_file` option. The file must be a regular file of at most
 * 64 KiB that only its owner can read or write (mode 0600 or stricter):
 * a key others can read is no key. The mode is checked on the very file
 * descriptor that is read. Trailing newlines (`\n`, `\r`) are not part of
 * the key; a file holding nothing else is refused.
 *
 * Errors are %SUBAGENT_APPROVAL_ERROR_INTEGRITY in %SUBAGENT_APPROVAL_ERROR,
 * since a store without its key cannot verify anything: callers should
 * fail rather than go on unsigned.
 *
 * Returns: (transfer full) (nullable): the key, or %NULL with @error set
 *
 * Since: 0.2
 */
GBytes *
subagent_approval_key_from_file (const char  *path,
                                 GError     **error)
{
  g_autofree char *data = NULL;
  struct stat st;
  gsize length = 0;
  int fd;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      int saved_errno = errno;

      if (fd >= 0)
        close (fd);
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "Could not open the HMAC key file %s: %s", path, g_strerror (saved_errno));
      return NULL;
    }
  if (!S_ISREG (st.st_mode) || (st.st_mode & 0077) != 0 || st.st_size > KEY_FILE_MAX_SIZE)
    {
      close (fd);
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "Refusing the HMAC key file %s: it has mode %04o, but must be a regular file "
                   "(of at most 64 KiB) readable by its owner only (chmod 600 %s)",
                   path, (guint) (st.st_mode & 07777), path);
      return NULL;
    }
  data = g_malloc ((gsize) st.st_size + 1);
  while (length < (gsize) st.st_size)
    {
      ssize_t n = read (fd, data + length, (gsize) st.st_size - length);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved_errno = errno;

          close (fd);
          explicit_bzero (data, (gsize) st.st_size + 1);
          g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                       "Could not read the HMAC key file %s: %s", path, g_strerror (saved_errno));
          return NULL;
        }
      if (n == 0)
        break;
      length += (gsize) n;
    }
  close (fd);
  while (length > 0 && (data[length - 1] == '\n' || data[length - 1] == '\r'))
    length--;
  if (length == 0)
    {
      g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INTEGRITY,
                   "The HMAC key file %s is empty; put a secret in it or unset the key_file option", path);
      return NULL;
    }
  {
    GBytes *key = g_bytes_new (data, length);

    /* The heap copy is the caller's now; do not leave a second one behind. */
    explicit_bzero (data, (gsize) st.st_size + 1);
    return key;
  }
}
