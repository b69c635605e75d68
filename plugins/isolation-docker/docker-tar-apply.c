/* docker-tar-apply.c: a tar stream applied to the workspace: the reader
 * of the archive (headers, pax records, names) and docker_tar_apply().
 *
 * Back (GET /containers/{id}/archive?path=/workspace): entries are applied
 * to the local snapshot one by one, never through a symbolic link (every
 * directory is opened with O_NOFOLLOW below the root), never outside it
 * (`..` and absolute names are refused). A file whose size did not change
 * is compared block by block and rewritten only from its first difference
 * on, so an unchanged tree costs reads, not writes; a new or resized file
 * gets its runs of zeros as holes, so a sparse file stays sparse and
 * memory stays at one buffer. Whatever the archive does not hold is
 * removed afterwards: the child's deletions reach the review.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker-tar-private.h"

gboolean
docker_tar_read_exact (Applier  *a,
                       void     *buffer,
                       gsize     size,
                       gboolean  eof_ok,
                       gboolean *out_eof,
                       GError  **error)
{
  gsize done = 0;

  while (done < size)
    {
      gssize n = a->read (a->source, (char *) buffer + done, size - done, a->cancellable, error);
      if (n < 0)
        return FALSE;
      if (n == 0)
        {
          if (eof_ok && done == 0)
            {
              *out_eof = TRUE;
              return TRUE;
            }
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT, "the workspace archive ends mid-entry");
          return FALSE;
        }
      done += n;
    }
  return TRUE;
}

gboolean
docker_tar_skip_bytes (Applier  *a,
                       guint64   size,
                       GError  **error)
{
  while (size > 0)
    {
      gsize n = MIN ((guint64) BUFFER_SIZE, size);
      if (!docker_tar_read_exact (a, a->buffer, n, FALSE, NULL, error))
        return FALSE;
      size -= n;
    }
  return TRUE;
}

static guint64
parse_octal (const char *field,
             gsize       width)
{
  guint64 value = 0;
  gsize i = 0;

  /* GNU base-256 for big numbers. */
  if ((guchar) field[0] & 0x80)
    {
      for (i = 1; i < width; i++)
        value = (value << 8) | (guchar) field[i];
      return value;
    }
  while (i < width && (field[i] == ' ' || field[i] == '\0'))
    i++;
  for (; i < width && field[i] >= '0' && field[i] <= '7'; i++)
    value = value * 8 + (field[i] - '0');
  return value;
}

static void
parse_pax (const char *data,
           gsize       size,
           char      **path,
           char      **link,
           guint64    *psize,
           gboolean   *has_size)
{
  gsize pos = 0;

  while (pos < size)
    {
      char *end = NULL;
      guint64 len = g_ascii_strtoull (data + pos, &end, 10);
      const char *space, *eq;

      if (end == data + pos || len == 0 || pos + len > size)
        return;
      space = memchr (data + pos, ' ', len);
      eq = space ? memchr (space, '=', data + pos + len - space) : NULL;
      if (eq != NULL)
        {
          g_autofree char *key = g_strndup (space + 1, eq - space - 1);
          g_autofree char *value = g_strndup (eq + 1, data + pos + len - eq - 2);

          if (g_str_equal (key, "path"))
            {
              g_free (*path);
              *path = g_steal_pointer (&value);
            }
          else if (g_str_equal (key, "linkpath"))
            {
              g_free (*link);
              *link = g_steal_pointer (&value);
            }
          else if (g_str_equal (key, "size"))
            {
              *psize = g_ascii_strtoull (value, NULL, 10);
              *has_size = TRUE;
            }
        }
      pos += len;
    }
}

/* "workspace/a/b/" → "a/b"; NULL for the top itself or a name that would
 * leave the root. */
char *
docker_tar_relative_name (const char *name,
                          gboolean   *out_top,
                          gboolean   *out_bad)
{
  const char *slash;
  g_auto(GStrv) parts = NULL;
  g_autoptr(GString) rel = g_string_new (NULL);

  *out_top = *out_bad = FALSE;
  while (g_str_has_prefix (name, "./"))
    name += 2;
  slash = strchr (name, '/');
  if (slash == NULL || slash[1] == '\0')
    {
      *out_top = TRUE;
      return NULL;
    }
  parts = g_strsplit (slash + 1, "/", -1);
  for (guint i = 0; parts[i] != NULL; i++)
    {
      if (*parts[i] == '\0' || g_str_equal (parts[i], "."))
        continue;
      if (g_str_equal (parts[i], ".."))
        {
          *out_bad = TRUE;
          return NULL;
        }
      if (rel->len > 0)
        g_string_append_c (rel, '/');
      g_string_append (rel, parts[i]);
    }
  if (rel->len == 0)
    {
      *out_top = TRUE;
      return NULL;
    }
  return g_string_free (g_steal_pointer (&rel), FALSE);
}

/**
 * docker_tar_apply:
 * @read: reads the archive
 * @source: for @read
 * @root: the local tree to bring up to date
 * @keep: (nullable) (array zero-terminated=1): top-level names left alone
 * @max_file_size: the largest file accepted
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Returns: %TRUE when @root holds what the archive holds
 */
gboolean
docker_tar_apply (DockerTarRead        read,
                  gpointer             source,
                  const char          *root,
                  const char * const  *keep,
                  const SubagentExcludeSet *secrets,
                  guint64              max_file_size,
                  GCancellable        *cancellable,
                  GError             **error)
{
  Applier a = { 0 };
  g_autofree char *pax_path = NULL;
  g_autofree char *pax_link = NULL;
  guint64 pax_size = 0;
  gboolean has_pax_size = FALSE;
  gboolean ok = FALSE;
  char header[BLOCK];

  a.read = read;
  a.source = source;
  a.cancellable = cancellable;
  a.keep = keep;
  a.secrets = secrets;
  a.max_file_size = max_file_size;
  a.root_fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (a.root_fd < 0)
    return docker_tar_errno_error (error, errno, "open", root);
  a.root = docker_tar_dir_ref_new (a.root_fd);
  g_mutex_init (&a.lock);
  g_cond_init (&a.idle);
  a.seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  a.fresh = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (docker_tar_dir_is_empty (a.root_fd))
    {
      g_hash_table_add (a.fresh, g_strdup (""));
      docker_tar_spread_subdirectories (a.root_fd);
    }
  a.buffer = g_malloc (BUFFER_SIZE);
  a.compare = g_malloc (BUFFER_SIZE);

  for (;;)
    {
      gboolean eof = FALSE, top = FALSE, bad = FALSE;
      g_autofree char *name = NULL;
      g_autofree char *link = NULL;
      g_autofree char *rel = NULL;
      guint64 size;
      char type;

      if (!docker_tar_read_exact (&a, header, BLOCK, TRUE, &eof, error))
        goto out;
      if (eof || docker_tar_all_zero (header, BLOCK))
        break;
      if (parse_octal (header + 148, 8) == 0 && header[148] == '\0')
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "the workspace archive is not a tar stream");
          goto out;
        }
      type = header[156];
      size = has_pax_size ? pax_size : parse_octal (header + 124, 12);

      if (type == 'x' || type == 'L' || type == 'K')
        {
          g_autofree char *data = NULL;

          if (size > 1024 * 1024)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "a tar extended header of %" G_GUINT64_FORMAT
                           " bytes", size);
              goto out;
            }
          data = g_malloc0 (size + 1);
          if (!docker_tar_read_exact (&a, data, size, FALSE, NULL, error) ||
                         !docker_tar_skip_bytes (&a, (BLOCK - size % BLOCK) % BLOCK, error))
            goto out;
          if (type == 'x')
            parse_pax (data, size, &pax_path, &pax_link, &pax_size, &has_pax_size);
          else if (type == 'L')
            {
              g_free (pax_path);
              pax_path = g_strdup (data);
            }
          else
            {
              g_free (pax_link);
              pax_link = g_strdup (data);
            }
          continue;
        }
      if (type == 'g')
        {
          if (!docker_tar_skip_bytes (&a, size + (BLOCK - size % BLOCK) % BLOCK, error))
            goto out;
          continue;
        }

      if (pax_path != NULL)
        name = g_steal_pointer (&pax_path);
      else if (memcmp (header + 257, "ustar", 5) == 0 && header[345] != '\0')
        name = g_strdup_printf ("%.155s/%.100s", header + 345, header);
      else
        name = g_strndup (header, 100);
      link = pax_link ? g_steal_pointer (&pax_link) : g_strndup (header + 157, 100);
      has_pax_size = FALSE;

      rel = docker_tar_relative_name (name, &top, &bad);
      if (bad)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "the workspace archive holds “%s”, which leaves the workspace", name);
          goto out;
        }
      if (rel == NULL ||
          (a.secrets != NULL &&
           (subagent_exclude_set_match_path (a.secrets, rel) ||
            (type == '5' && subagent_exclude_set_match_name (a.secrets, strrchr (rel, '/') ? strrchr (rel, '/') + 1 : rel, 1)))))
        {
          /* A child's own secret file stays in the container. */
          if (!docker_tar_skip_bytes (&a, size + (BLOCK - size % BLOCK) % BLOCK, error))
            goto out;
          continue;
        }
      if (!docker_tar_apply_entry (&a, rel, type, size, (mode_t) parse_octal (header + 100, 8), link, error))
        goto out;
    }
  if (!docker_tar_creators_drain (&a, error))
    goto out;
  ok = g_hash_table_contains (a.fresh, "") || docker_tar_remove_unseen (&a, a.root_fd, "", error);

out:
  /* Whatever happened, no creator outlives the call. */
  if (a.creators != NULL)
    {
      g_thread_pool_free (a.creators, FALSE, TRUE);
      g_clear_error (&a.create_error);
    }
  g_clear_pointer (&a.cached, docker_tar_dir_ref_unref);
  g_free (a.cached_rel);
  docker_tar_dir_ref_unref (a.root);   /* closes root_fd */
  g_mutex_clear (&a.lock);
  g_cond_clear (&a.idle);
  g_hash_table_unref (a.seen);
  g_hash_table_unref (a.fresh);
  g_free (a.buffer);
  g_free (a.compare);
  return ok;
}
