/* docker-tar-write.c: the workspace as a tar stream, out.
 *
 * Out (PUT /containers/{id}/archive): ustar entries with pax records for
 * long names and sizes over 8 GiB, owned by the container's user, read
 * from the tree with fixed-size buffers; sockets, FIFOs and devices are
 * left out.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker-tar-private.h"

/* ---- writing -------------------------------------------------------------- */

typedef struct {
  GOutputStream *out;
  GCancellable *cancellable;
  guint uid, gid;
  char *buffer;
  gboolean repeat_dirs;
  DockerTarStats stats;
} Writer;

static void
put_octal (char    *field,
           gsize    width,
           guint64  value)
{
  g_snprintf (field, width, "%0*" G_GINT64_MODIFIER "o", (int) width - 1, value);
}

static void
put_checksum (char *header)
{
  guint sum = 0;

  memset (header + 148, ' ', 8);
  for (guint i = 0; i < BLOCK; i++)
    sum += (guchar) header[i];
  g_snprintf (header + 148, 8, "%06o", sum);
  header[155] = ' ';
}

static void
pax_record (GString    *records,
            const char *key,
            const char *value)
{
  gsize body = strlen (key) + strlen (value) + 3;   /* ' ', '=', '\n' */
  gsize total = body + 1;

  char digits[32];

  /* The length counts its own digits. */
  while (total != body + (gsize) g_snprintf (digits, sizeof digits, "%zu", total))
    total = body + g_snprintf (digits, sizeof digits, "%zu", total);
  g_string_append_printf (records, "%zu %s=%s\n", total, key, value);
}

static gboolean
write_padded (Writer      *w,
              const void  *data,
              gsize        size,
              GError     **error)
{
  static const char zeros[BLOCK];
  gsize pad = (BLOCK - size % BLOCK) % BLOCK;

  return g_output_stream_write_all (w->out, data, size, NULL, w->cancellable, error) &&
         (pad == 0 || g_output_stream_write_all (w->out, zeros, pad, NULL, w->cancellable, error));
}

static gboolean
write_header (Writer      *w,
              const char  *name,
              char         type,
              mode_t       mode,
              guint64      size,
              gint64       mtime,
              const char  *link,
              GError     **error)
{
  char header[BLOCK] = { 0 };
  gboolean long_name = strlen (name) >= 100;
  gboolean long_link = link != NULL && strlen (link) >= 100;
  gboolean big = size >= G_GUINT64_CONSTANT (077777777777);

  if (long_name || long_link || big)
    {
      g_autoptr(GString) records = g_string_new (NULL);
      char pax[BLOCK] = { 0 };

      if (long_name)
        pax_record (records, "path", name);
      if (long_link)
        pax_record (records, "linkpath", link);
      if (big)
        {
          char text[32];
          g_snprintf (text, sizeof text, "%" G_GUINT64_FORMAT, size);
          pax_record (records, "size", text);
        }
      memcpy (pax, "PaxHeader", 9);
      put_octal (pax + 100, 8, 0644);
      put_octal (pax + 108, 8, 0);
      put_octal (pax + 116, 8, 0);
      put_octal (pax + 124, 12, records->len);
      put_octal (pax + 136, 12, 0);
      pax[156] = 'x';
      memcpy (pax + 257, "ustar", 6);
      memcpy (pax + 263, "00", 2);
      put_checksum (pax);
      if (!write_padded (w, pax, BLOCK, error) || !write_padded (w, records->str, records->len, error))
        return FALSE;
    }
  w->stats.entries++;
  if (mode & 07000)
    w->stats.special_modes = TRUE;
  memcpy (header, name, MIN (strlen (name), 99));
  put_octal (header + 100, 8, mode & 07777);
  put_octal (header + 108, 8, w->uid);
  put_octal (header + 116, 8, w->gid);
  put_octal (header + 124, 12, big ? 0 : size);
  put_octal (header + 136, 12, mtime > 0 ? mtime : 0);
  header[156] = type;
  if (link != NULL)
    memcpy (header + 157, link, MIN (strlen (link), 99));
  memcpy (header + 257, "ustar", 6);
  memcpy (header + 263, "00", 2);
  put_checksum (header);
  return write_padded (w, header, BLOCK, error);
}

static gboolean
write_file_data (Writer      *w,
                 int          fd,
                 guint64      size,
                 const char  *path,
                 GError     **error)
{
  guint64 done = 0;

  while (done < size)
    {
      gsize want = MIN ((guint64) BUFFER_SIZE, size - done);
      ssize_t n = read (fd, w->buffer, want);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return docker_tar_errno_error (error, errno, "read", path);
      if (n == 0)
        {
          /* Shrunk while we read: the header promised size bytes. */
          memset (w->buffer, 0, want);
          n = want;
        }
      if (!g_output_stream_write_all (w->out, w->buffer, n, NULL, w->cancellable, error))
        return FALSE;
      done += n;
    }
  {
    static const char zeros[BLOCK];
    gsize pad = (BLOCK - size % BLOCK) % BLOCK;

    return pad == 0 || g_output_stream_write_all (w->out, zeros, pad, NULL, w->cancellable, error);
  }
}

static gboolean
write_dir (Writer              *w,
           int                  dir_fd,
           const char          *rel,
           const char * const  *exclude,
           const SubagentExcludeSet *secrets,
           GError             **error)
{
  g_autoptr(GPtrArray) names = docker_tar_list_dir (dir_fd, rel, *rel == '\0' ? exclude : NULL, error);

  if (names == NULL)
    return FALSE;

  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      g_autofree char *child = *rel ? g_strconcat (rel, "/", name, NULL) : g_strdup (name);
      struct stat st;

      if (g_cancellable_set_error_if_cancelled (w->cancellable, error))
        return FALSE;
      if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        {
          if (errno == ENOENT)
            continue;
          return docker_tar_errno_error (error, errno, "stat", child);
        }
      if (subagent_exclude_set_match_name (secrets, name, S_ISDIR (st.st_mode)))
        continue;
      if (S_ISDIR (st.st_mode))
        {
          g_autofree char *entry = g_strconcat (child, "/", NULL);
          int sub = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          gboolean ok;

          if (sub < 0)
            return docker_tar_errno_error (error, errno, "open directory", child);
          ok = write_header (w, entry, '5', st.st_mode, 0, st.st_mtime, NULL, error) &&
               write_dir (w, sub, child, exclude, secrets, error) &&
               (!w->repeat_dirs || write_header (w, entry, '5', st.st_mode, 0, st.st_mtime, NULL, error));
          close (sub);
          if (!ok)
            return FALSE;
        }
      else if (S_ISREG (st.st_mode))
        {
          int fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
          gboolean ok;

          if (fd < 0)
            return docker_tar_errno_error (error, errno, "open", child);
          ok = write_header (w, child, '0', st.st_mode, st.st_size, st.st_mtime, NULL, error) &&
               write_file_data (w, fd, st.st_size, child, error);
          close (fd);
          if (!ok)
            return FALSE;
        }
      else if (S_ISLNK (st.st_mode))
        {
          char target[4096];
          ssize_t len = readlinkat (dir_fd, name, target, sizeof target - 1);

          if (len < 0)
            return docker_tar_errno_error (error, errno, "read link", child);
          target[len] = '\0';
          if (!write_header (w, child, '2', 0777, 0, st.st_mtime, target, error))
            return FALSE;
        }
      /* Sockets, FIFOs and devices have no place in a workspace copy. */
    }
  return TRUE;
}

/**
 * docker_tar_write_tree:
 * @root: the tree
 * @exclude: (nullable) (array zero-terminated=1): top-level names to leave out
 * @uid: owner of every entry
 * @gid: group of every entry
 * @out: where the stream goes (not closed)
 * @repeat_dirs: write each directory's entry again after its contents,
 *   for an extractor that sets a directory's time when it meets its entry
 *   (busybox tar) rather than at the end: the time then survives the
 *   files made in it
 * @out_stats: (out) (optional): what was written
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Returns: %TRUE when the whole tree and the end-of-archive blocks were written
 */
gboolean
docker_tar_write_tree (const char          *root,
                       const char * const  *exclude,
                       const SubagentExcludeSet *secrets,
                       guint                uid,
                       guint                gid,
                       GOutputStream       *out,
                       gboolean             repeat_dirs,
                       DockerTarStats      *out_stats,
                       GCancellable        *cancellable,
                       GError             **error)
{
  Writer w = { out, cancellable, uid, gid, g_malloc (BUFFER_SIZE), repeat_dirs, { 0, FALSE } };
  static const char end[2 * BLOCK];
  int fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  gboolean ok;

  if (fd < 0)
    {
      g_free (w.buffer);
      return docker_tar_errno_error (error, errno, "open", root);
    }
  /* The top directory itself: docker keeps its own (the tmpfs volume's
   * options make it the user's), podman takes this entry's owner. */
  ok = fstat (fd, &st) == 0 &&
       write_header (&w, "./", '5', (st.st_mode & 07777) | 0700, 0, st.st_mtime, NULL, error) &&
       write_dir (&w, fd, "", exclude, secrets, error) &&
       (!repeat_dirs || write_header (&w, "./", '5', (st.st_mode & 07777) | 0700, 0, st.st_mtime, NULL, error)) &&
       g_output_stream_write_all (out, end, sizeof end, NULL, cancellable, error);
  close (fd);
  g_free (w.buffer);
  if (out_stats != NULL)
    *out_stats = w.stats;
  return ok;
}
