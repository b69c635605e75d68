/* docker-tar.c: the workspace as a tar stream, both ways, in process.
 *
 * Out (PUT /containers/{id}/archive): ustar entries with pax records for
 * long names and sizes over 8 GiB, owned by the container's user, read
 * from the tree with fixed-size buffers; sockets, FIFOs and devices are
 * left out.
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
 * Directories the apply makes (and the root, when it was empty) get the
 * ext4 top-directory flag (`chattr +T`), so the directories made in them
 * are spread over block groups (Orlov) rather than packed into their
 * parent's: on ext4 without a journal, creating a file in a group that
 * freed many inodes in the last ~30 s skips each of them
 * (`recently_deleted()`), which made file creation, not the engine, most
 * of a copy-out into an empty directory (docs/performance.md, Docker).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "docker-engine.h"

#ifdef SUBAGENT_COMPILATION
#include "subagent-secrets.h"   /* the exec helper */
#else
#include <subagent.h>
#endif

#define BLOCK 512
#define BUFFER_SIZE (256 * 1024)

static gboolean
errno_error (GError    **error,
             int         saved,
             const char *what,
             const char *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Could not %s %s: %s", what, path,
               g_strerror (saved));
  return FALSE;
}

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
        return errno_error (error, errno, "read", path);
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
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  int dup_fd = fcntl (dir_fd, F_DUPFD_CLOEXEC, 3);
  struct dirent *de;
  DIR *dir;

  if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
    {
      int saved = errno;
      if (dup_fd >= 0)
        close (dup_fd);
      return errno_error (error, saved, "read directory", *rel ? rel : ".");
    }
  rewinddir (dir);   /* the offset is shared with dir_fd's description */
  while ((de = readdir (dir)) != NULL)
    if (!g_str_equal (de->d_name, ".") && !g_str_equal (de->d_name, "..") &&
        !(*rel == '\0' && exclude != NULL && g_strv_contains (exclude, de->d_name)))
      g_ptr_array_add (names, g_strdup (de->d_name));
  closedir (dir);

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
          return errno_error (error, errno, "stat", child);
        }
      if (subagent_exclude_set_match_name (secrets, name, S_ISDIR (st.st_mode)))
        continue;
      if (S_ISDIR (st.st_mode))
        {
          g_autofree char *entry = g_strconcat (child, "/", NULL);
          int sub = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          gboolean ok;

          if (sub < 0)
            return errno_error (error, errno, "open directory", child);
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
            return errno_error (error, errno, "open", child);
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
            return errno_error (error, errno, "read link", child);
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
      return errno_error (error, errno, "open", root);
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

/* ---- applying ------------------------------------------------------------- */

/* A directory fd shared by the applier and the file creators working in it. */
typedef struct {
  int fd;
  gatomicrefcount refs;
} DirRef;

static DirRef *
dir_ref_new (int fd)
{
  DirRef *ref = g_new (DirRef, 1);

  ref->fd = fd;
  g_atomic_ref_count_init (&ref->refs);
  return ref;
}

static DirRef *
dir_ref_ref (DirRef *ref)
{
  g_atomic_ref_count_inc (&ref->refs);
  return ref;
}

static void
dir_ref_unref (DirRef *ref)
{
  if (ref != NULL && g_atomic_ref_count_dec (&ref->refs))
    {
      close (ref->fd);
      g_free (ref);
    }
}

/* A small new file for a creator thread: its data lives in the applier's
 * second buffer (the arena), so memory stays at two buffers. */
typedef struct {
  DirRef *dir;
  char *name;
  char *rel;
  const char *data;
  gsize size;
  mode_t mode;
} CreateJob;

typedef struct {
  DockerTarRead read;
  gpointer source;
  GCancellable *cancellable;
  int root_fd;
  const char * const *keep;
  const SubagentExcludeSet *secrets;  /* neither applied nor removed */
  guint64 max_file_size;
  GHashTable *seen;      /* rel paths the archive holds, outside fresh directories */
  GHashTable *fresh;     /* rel dirs this apply made ("" when the root was empty):
                          * what is in them came from the archive, so entries
                          * there need no look for an old file, and no removal pass */
  char *buffer;
  char *compare;         /* comparing an old file's blocks, or the creators' arena */
  /* the directory of the previous entry, kept open */
  char *cached_rel;
  DirRef *cached;
  DirRef *root;
  /* Creators: new files in fresh directories are made by a few threads
   * (a create costs far more than its bytes on a busy disk), their data
   * queued in the arena until it is full; drained before anything else
   * touches names (links, comparisons) and before the end. */
  GThreadPool *creators;
  GMutex lock;
  GCond idle;
  guint pending;         /* under lock */
  GError *create_error;  /* under lock: the first creator's failure */
  gsize arena_used;      /* only the applier's thread */
} Applier;

static gboolean
read_exact (Applier  *a,
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

static gboolean
skip_bytes (Applier  *a,
            guint64   size,
            GError  **error)
{
  while (size > 0)
    {
      gsize n = MIN ((guint64) BUFFER_SIZE, size);
      if (!read_exact (a, a->buffer, n, FALSE, NULL, error))
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
static char *
relative_name (const char *name,
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

static gboolean
remove_at (int          dir_fd,
           const char  *name,
           const char  *rel,
           GError     **error)
{
  struct stat st;

  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? TRUE : errno_error (error, errno, "stat", rel);
  if (S_ISDIR (st.st_mode))
    {
      int fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      int dup_fd;
      DIR *dir;
      struct dirent *de;
      gboolean ok = TRUE;

      if (fd < 0)
        return errno_error (error, errno, "open directory", rel);
      dup_fd = fcntl (fd, F_DUPFD_CLOEXEC, 3);
      if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
        {
          int saved = errno;
          close (fd);
          if (dup_fd >= 0)
            close (dup_fd);
          return errno_error (error, saved, "read directory", rel);
        }
      while (ok && (de = readdir (dir)) != NULL)
        if (!g_str_equal (de->d_name, ".") && !g_str_equal (de->d_name, ".."))
          {
            g_autofree char *child = g_strconcat (rel, "/", de->d_name, NULL);
            ok = remove_at (fd, de->d_name, child, error);
          }
      closedir (dir);
      close (fd);
      if (!ok)
        return FALSE;
      if (unlinkat (dir_fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        return errno_error (error, errno, "remove", rel);
      return TRUE;
    }
  if (unlinkat (dir_fd, name, 0) != 0 && errno != ENOENT)
    return errno_error (error, errno, "remove", rel);
  return TRUE;
}

/* Best effort: `chattr +T` (see the top of the file); other filesystems
 * ignore or refuse it. */
static void
spread_subdirectories (int dir_fd)
{
  int flags = 0;

  if (ioctl (dir_fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_TOPDIR_FL) == 0)
    {
      flags |= FS_TOPDIR_FL;
      (void) ioctl (dir_fd, FS_IOC_SETFLAGS, &flags);
    }
}

static void
spread_made_dir (int         parent_fd,
                 const char *name)
{
  int fd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd >= 0)
    {
      spread_subdirectories (fd);
      close (fd);
    }
}

/* Opens the directory @rel (made if missing, replacing a non-directory),
 * never following a link. Returns a borrowed fd. */
static int
open_dir (Applier     *a,
          const char  *rel,
          GError     **error)
{
  g_auto(GStrv) parts = NULL;
  gsize prefix_len_before = 0;
  int fd;

  if (*rel == '\0')
    return a->root_fd;
  if (a->cached_rel != NULL && g_str_equal (a->cached_rel, rel))
    return a->cached->fd;
  if (a->cached_rel != NULL)
    {
      g_clear_pointer (&a->cached, dir_ref_unref);
      g_clear_pointer (&a->cached_rel, g_free);
    }

  parts = g_strsplit (rel, "/", -1);
  fd = dup (a->root_fd);
  for (guint i = 0; parts[i] != NULL && fd >= 0; i++)
    {
      gsize prefix_len = (prefix_len_before += (i > 0) + strlen (parts[i]));
      int sub = openat (fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

      if (sub < 0 && (errno == ENOTDIR || errno == ELOOP || errno == ENOENT))
        {
          if (!remove_at (fd, parts[i], rel, error))
            {
              close (fd);
              return -1;
            }
          if (mkdirat (fd, parts[i], 0755) != 0 && errno != EEXIST)
            {
              errno_error (error, errno, "create directory", rel);
              close (fd);
              return -1;
            }
          g_hash_table_add (a->fresh, g_strndup (rel, prefix_len));
          sub = openat (fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub >= 0)
            spread_subdirectories (sub);
        }
      if (sub < 0)
        errno_error (error, errno, "open directory", rel);
      close (fd);
      fd = sub;
    }
  if (fd < 0)
    return -1;
  a->cached_rel = g_strdup (rel);
  a->cached = dir_ref_new (fd);
  return fd;
}

static gboolean
all_zero (const char *data,
          gsize       size)
{
  static const char zeros[4096];

  while (size > 0)
    {
      gsize n = MIN (size, sizeof zeros);
      if (memcmp (data, zeros, n) != 0)
        return FALSE;
      data += n;
      size -= n;
    }
  return TRUE;
}

#define CREATE_MAX_FILE (64 * 1024)
#define CREATORS_MAX 8

static gboolean
write_all_at (int          fd,
              const char  *data,
              gsize        size,
              guint64      offset,
              const char  *rel,
              GError     **error)
{
  gsize written = 0;

  while (written < size)
    {
      ssize_t w = pwrite (fd, data + written, size - written, offset + written);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return errno_error (error, errno, "write", rel);
      written += w;
    }
  return TRUE;
}

static gboolean
all_zero (const char *data,
          gsize       size);

static void
create_in_thread (gpointer data,
                  gpointer user_data)
{
  CreateJob *job = data;
  Applier *a = user_data;
  g_autoptr(GError) local_error = NULL;
  int fd;

  fd = openat (job->dir->fd, job->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, job->mode);
  /* Named twice in the archive: the later entry wins, as tar does. */
  if (fd < 0 && errno == EEXIST && unlinkat (job->dir->fd, job->name, 0) == 0)
    fd = openat (job->dir->fd, job->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, job->mode);
  if (fd < 0)
    errno_error (&local_error, errno, "create", job->rel);
  else
    {
      if ((job->mode & 0022) != 0)
        (void) fchmod (fd, job->mode);
      /* All zeros: a hole, as the one-by-one path makes it. */
      if (all_zero (job->data, job->size))
        {
          if (job->size > 0 && ftruncate (fd, job->size) != 0)
            errno_error (&local_error, errno, "size", job->rel);
        }
      else
        write_all_at (fd, job->data, job->size, 0, job->rel, &local_error);
      close (fd);
    }

  dir_ref_unref (job->dir);
  g_free (job->name);
  g_free (job->rel);
  g_free (job);
  g_mutex_lock (&a->lock);
  if (local_error != NULL && a->create_error == NULL)
    a->create_error = g_steal_pointer (&local_error);
  if (--a->pending == 0)
    g_cond_signal (&a->idle);
  g_mutex_unlock (&a->lock);
}

/* Waits for every queued file; the arena is free again after. */
static gboolean
creators_drain (Applier  *a,
                GError  **error)
{
  GError *failed;

  if (a->creators == NULL)
    return TRUE;
  g_mutex_lock (&a->lock);
  while (a->pending > 0)
    g_cond_wait (&a->idle, &a->lock);
  failed = g_steal_pointer (&a->create_error);
  g_mutex_unlock (&a->lock);
  a->arena_used = 0;
  if (failed != NULL)
    {
      g_propagate_error (error, failed);
      return FALSE;
    }
  return TRUE;
}

/* Queues a small new file of a fresh directory: its data is read into the
 * arena, a creator makes it. */
static gboolean
queue_create (Applier     *a,
              DirRef      *dir,
              const char  *name,
              const char  *rel,
              guint64      size,
              mode_t       mode,
              GError     **error)
{
  CreateJob *job;
  char *data;

  if (a->arena_used + size > BUFFER_SIZE && !creators_drain (a, error))
    return FALSE;
  if (a->creators == NULL)
    {
      guint threads = CLAMP (g_get_num_processors () * 2, 2, CREATORS_MAX);

      a->creators = g_thread_pool_new (create_in_thread, a, (int) threads, FALSE, NULL);
    }
  data = a->compare + a->arena_used;
  if (!read_exact (a, data, size, FALSE, NULL, error))
    return FALSE;
  a->arena_used += size;
  job = g_new (CreateJob, 1);
  job->dir = dir_ref_ref (dir);
  job->name = g_strdup (name);
  job->rel = g_strdup (rel);
  job->data = data;
  job->size = size;
  job->mode = mode;
  g_mutex_lock (&a->lock);
  a->pending++;
  g_mutex_unlock (&a->lock);
  g_thread_pool_push (a->creators, job, NULL);
  return skip_bytes (a, (BLOCK - size % BLOCK) % BLOCK, error);
}

static gboolean
apply_file (Applier     *a,
            int          dir_fd,
            const char  *name,
            const char  *rel,
            guint64      size,
            mode_t       mode,
            gboolean     in_fresh_dir,
            GError     **error)
{
  struct stat st;
  gboolean fresh = TRUE, comparing = FALSE, exists = FALSE;
  mode_t wanted = (mode & 0777) | 0600;
  guint64 offset = 0, written_to = 0;
  int fd = -1;

  /* In a directory this apply made, the name is new (unless the archive
   * names it twice: then the create fails and the old file is looked at). */
  if (in_fresh_dir)
    {
      fd = openat (dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, wanted);
      if (fd < 0 && errno != EEXIST)
        return errno_error (error, errno, "create", rel);
      if (fd >= 0 && (wanted & 0022) != 0)
        (void) fchmod (fd, wanted);
    }
  if (fd < 0)
    {
      /* The old file is looked at, perhaps compared (the arena's buffer):
       * what is queued is made first. */
      if (!creators_drain (a, error))
        return FALSE;
      exists = fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    }
  if (fd < 0 && exists && S_ISREG (st.st_mode) && st.st_nlink == 1)
    {
      fd = openat (dir_fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0)
        {
          fresh = (guint64) st.st_size != size;
          comparing = !fresh;
          if (fresh && ftruncate (fd, 0) != 0)
            {
              int saved = errno;
              close (fd);
              return errno_error (error, saved, "truncate", rel);
            }
          if ((st.st_mode & 0777) != wanted && fchmod (fd, wanted) != 0)
            {
              int saved = errno;
              close (fd);
              return errno_error (error, saved, "chmod", rel);
            }
        }
    }
  if (fd < 0)
    {
      if (exists && !remove_at (dir_fd, name, rel, error))
        return FALSE;
      fd = openat (dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, wanted);
      if (fd < 0)
        return errno_error (error, errno, "create", rel);
      /* The umask (usually 022) may have taken write bits the archive gives. */
      if ((wanted & 0022) != 0)
        (void) fchmod (fd, wanted);
    }

  while (offset < size)
    {
      gsize n = MIN ((guint64) BUFFER_SIZE, size - offset);

      if (!read_exact (a, a->buffer, n, FALSE, NULL, error))
        goto failed;
      if (comparing)
        {
          ssize_t got = pread (fd, a->compare, n, offset);
          if (got == (ssize_t) n && memcmp (a->compare, a->buffer, n) == 0)
            {
              offset += n;
              continue;
            }
          comparing = FALSE;   /* from here on, write */
        }
      if (!(fresh && all_zero (a->buffer, n)))
        {
          gsize written = 0;
          while (written < n)
            {
              ssize_t w = pwrite (fd, a->buffer + written, n - written, offset + written);
              if (w < 0 && errno == EINTR)
                continue;
              if (w < 0)
                {
                  errno_error (error, errno, "write", rel);
                  goto failed;
                }
              written += w;
            }
          written_to = offset + n;
        }
      offset += n;
    }
  /* A trailing run of zeros is a hole to the end. */
  if (fresh && written_to != size && ftruncate (fd, size) != 0)
    {
      errno_error (error, errno, "size", rel);
      goto failed;
    }
  close (fd);
  return skip_bytes (a, (BLOCK - size % BLOCK) % BLOCK, error);

failed:
  close (fd);
  return FALSE;
}

static gboolean
apply_entry (Applier     *a,
             const char  *rel,
             char         type,
             guint64      size,
             mode_t       mode,
             const char  *link,
             GError     **error)
{
  g_autofree char *parent = g_path_get_dirname (rel);
  g_autofree char *name = g_path_get_basename (rel);
  struct stat st;
  gboolean in_fresh;
  int dir_fd;

  if (g_str_equal (parent, "."))
    {
      g_free (parent);
      parent = g_strdup ("");
    }
  dir_fd = open_dir (a, parent, error);
  if (dir_fd < 0)
    return FALSE;
  /* Entries below a name the caller keeps never come back (a worktree's
   * `.git` file stays the host's). */
  {
    g_autofree char *top = g_strndup (rel, strcspn (rel, "/"));
    if (a->keep != NULL && g_strv_contains (a->keep, top))
      return skip_bytes (a, size + (BLOCK - size % BLOCK) % BLOCK, error);
  }
  in_fresh = g_hash_table_contains (a->fresh, parent);
  if (!in_fresh)
    g_hash_table_add (a->seen, g_strdup (rel));

  switch (type)
    {
    case '0': case '\0': case '7':
      if (size > a->max_file_size)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
                       "The child's file %s is %" G_GUINT64_FORMAT " bytes, over the copy-back limit of %"
                       G_GUINT64_FORMAT " bytes (option transfer_max_file); nothing past it was copied back",
                       rel, size, a->max_file_size);
          return FALSE;
        }
      if (in_fresh && size <= CREATE_MAX_FILE)
        return queue_create (a, *parent == '\0' ? a->root : a->cached, name, rel, size, (mode & 0777) | 0600,
                             error);
      return apply_file (a, dir_fd, name, rel, size, mode, in_fresh, error);
    case '5':
      if (in_fresh && mkdirat (dir_fd, name, (mode | 0700) & 0777) == 0)
        {
          g_hash_table_add (a->fresh, g_strdup (rel));
          spread_made_dir (dir_fd, name);
        }
      else if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode))
        {
          if ((st.st_mode & 0777) != ((mode | 0700) & 0777))
            (void) fchmodat (dir_fd, name, (mode | 0700) & 0777, 0);
        }
      else if (!remove_at (dir_fd, name, rel, error) ||
               (mkdirat (dir_fd, name, (mode | 0700) & 0777) != 0 && errno_error (error, errno, "create", rel) == FALSE))
        return FALSE;
      else
        {
          g_hash_table_add (a->fresh, g_strdup (rel));
          spread_made_dir (dir_fd, name);
        }
      return skip_bytes (a, size + (BLOCK - size % BLOCK) % BLOCK, error);
    case '2':
      if (!creators_drain (a, error))
        return FALSE;
      {
        char target[4096];
        ssize_t len = readlinkat (dir_fd, name, target, sizeof target - 1);

        if (len >= 0 && (target[len] = '\0', g_str_equal (target, link)))
          return TRUE;
        if (!remove_at (dir_fd, name, rel, error))
          return FALSE;
        if (symlinkat (link, dir_fd, name) != 0)
          return errno_error (error, errno, "create link", rel);
        return TRUE;
      }
    case '1':
      if (!creators_drain (a, error))
        return FALSE;
      {
        gboolean top = FALSE, bad = FALSE;
        g_autofree char *target = relative_name (link, &top, &bad);

        if (target == NULL)
          return TRUE;
        if (!remove_at (dir_fd, name, rel, error))
          return FALSE;
        if (linkat (a->root_fd, target, dir_fd, name, 0) != 0)
          return errno_error (error, errno, "link", rel);
        return TRUE;
      }
    default:
      /* Devices, FIFOs: not brought back. */
      if (!in_fresh)
        g_hash_table_remove (a->seen, rel);
      return skip_bytes (a, size + (BLOCK - size % BLOCK) % BLOCK, error);
    }
}

/* Removes what the archive did not hold. */
static gboolean
remove_unseen (Applier     *a,
               int          dir_fd,
               const char  *rel,
               GError     **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  int dup_fd = fcntl (dir_fd, F_DUPFD_CLOEXEC, 3);
  struct dirent *de;
  DIR *dir;

  if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
    {
      int saved = errno;
      if (dup_fd >= 0)
        close (dup_fd);
      return errno_error (error, saved, "read directory", *rel ? rel : ".");
    }
  rewinddir (dir);   /* the offset is shared with dir_fd's description */
  while ((de = readdir (dir)) != NULL)
    if (!g_str_equal (de->d_name, ".") && !g_str_equal (de->d_name, ".."))
      g_ptr_array_add (names, g_strdup (de->d_name));
  closedir (dir);

  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      g_autofree char *child = *rel ? g_strconcat (rel, "/", name, NULL) : g_strdup (name);
      struct stat st;

      if (*rel == '\0' && a->keep != NULL && g_strv_contains (a->keep, name))
        continue;
      /* The parent's secrets were never sent: not a deletion. */
      if (subagent_exclude_set_match_name (a->secrets, name, -1))
        continue;
      if (g_hash_table_contains (a->fresh, child))
        continue;   /* made by this apply: it holds only what the archive holds */
      if (!g_hash_table_contains (a->seen, child))
        {
          if (!remove_at (dir_fd, name, child, error))
            return FALSE;
          continue;
        }
      if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode))
        {
          int sub = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          gboolean ok;

          if (sub < 0)
            return errno_error (error, errno, "open directory", child);
          ok = remove_unseen (a, sub, child, error);
          close (sub);
          if (!ok)
            return FALSE;
        }
    }
  return TRUE;
}

/* Nothing but . and ..: an empty destination (copy-out into a new directory). */
static gboolean
dir_is_empty (int dir_fd)
{
  /* A description of its own: a dup would share (and move) the offset. */
  int dup_fd = openat (dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct dirent *de;
  gboolean empty = TRUE;
  DIR *dir;

  if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
    {
      if (dup_fd >= 0)
        close (dup_fd);
      return FALSE;
    }
  while (empty && (de = readdir (dir)) != NULL)
    empty = g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, "..");
  closedir (dir);
  return empty;
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
    return errno_error (error, errno, "open", root);
  a.root = dir_ref_new (a.root_fd);
  g_mutex_init (&a.lock);
  g_cond_init (&a.idle);
  a.seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  a.fresh = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (dir_is_empty (a.root_fd))
    {
      g_hash_table_add (a.fresh, g_strdup (""));
      spread_subdirectories (a.root_fd);
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

      if (!read_exact (&a, header, BLOCK, TRUE, &eof, error))
        goto out;
      if (eof || all_zero (header, BLOCK))
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
          if (!read_exact (&a, data, size, FALSE, NULL, error) ||
              !skip_bytes (&a, (BLOCK - size % BLOCK) % BLOCK, error))
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
          if (!skip_bytes (&a, size + (BLOCK - size % BLOCK) % BLOCK, error))
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

      rel = relative_name (name, &top, &bad);
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
          if (!skip_bytes (&a, size + (BLOCK - size % BLOCK) % BLOCK, error))
            goto out;
          continue;
        }
      if (!apply_entry (&a, rel, type, size, (mode_t) parse_octal (header + 100, 8), link, error))
        goto out;
    }
  if (!creators_drain (&a, error))
    goto out;
  ok = g_hash_table_contains (a.fresh, "") || remove_unseen (&a, a.root_fd, "", error);

out:
  /* Whatever happened, no creator outlives the call. */
  if (a.creators != NULL)
    {
      g_thread_pool_free (a.creators, FALSE, TRUE);
      g_clear_error (&a.create_error);
    }
  g_clear_pointer (&a.cached, dir_ref_unref);
  g_free (a.cached_rel);
  dir_ref_unref (a.root);   /* closes root_fd */
  g_mutex_clear (&a.lock);
  g_cond_clear (&a.idle);
  g_hash_table_unref (a.seen);
  g_hash_table_unref (a.fresh);
  g_free (a.buffer);
  g_free (a.compare);
  return ok;
}

/* ---- through the engine --------------------------------------------------- */

typedef struct {
  const char *root;
  const char * const *exclude;
  const SubagentExcludeSet *secrets;
  guint uid, gid;
} PutJob;

static gboolean
put_writer (GOutputStream  *out,
            gpointer        user_data,
            GCancellable   *cancellable,
            GError        **error)
{
  PutJob *job = user_data;

  return docker_tar_write_tree (job->root, job->exclude, job->secrets, job->uid, job->gid, out, FALSE, NULL, cancellable,
                                error);
}

/**
 * docker_tar_put:
 * @engine: the engine
 * @container: a running container
 * @root: the local tree
 * @exclude: (nullable) (array zero-terminated=1): top-level names to leave out
 * @uid: owner of the entries inside
 * @gid: group of the entries inside
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Streams @root into the container's /workspace (PUT archive, chunked).
 *
 * Returns: %TRUE if the engine took all of it
 */
gboolean
docker_tar_put (DockerEngine        *engine,
                const char          *container,
                const char          *root,
                const char * const  *exclude,
                const SubagentExcludeSet *secrets,
                guint                uid,
                guint                gid,
                GCancellable        *cancellable,
                GError             **error)
{
  g_autofree char *path = g_strdup_printf ("/containers/%s/archive?path=/workspace", container);
  g_autoptr(DockerResponse) response = NULL;
  PutJob job = { root, exclude, secrets, uid, gid };

  response = docker_engine_request (engine, "PUT", path, "application/x-tar", NULL, put_writer, &job, FALSE,
                                    cancellable, error);
  return response != NULL &&
         docker_response_check (response, engine, "copy the workspace into the container", cancellable, error);
}

static gssize
read_response (gpointer       source,
               void          *buffer,
               gsize          size,
               GCancellable  *cancellable,
               GError       **error)
{
  return docker_response_read (source, buffer, size, cancellable, error);
}

/**
 * docker_tar_fetch:
 * @engine: the engine
 * @container: a container (running or not)
 * @root: the local tree to bring up to date
 * @keep: (nullable) (array zero-terminated=1): top-level names left alone
 * @max_file_size: the largest file accepted
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Fetches the container's /workspace (GET archive) and applies it to @root
 * with docker_tar_apply().
 *
 * Returns: %TRUE if @root now holds what /workspace holds
 */
gboolean
docker_tar_fetch (DockerEngine        *engine,
                  const char          *container,
                  const char          *root,
                  const char * const  *keep,
                  const SubagentExcludeSet *secrets,
                  guint64              max_file_size,
                  GCancellable        *cancellable,
                  GError             **error)
{
  g_autofree char *path = g_strdup_printf ("/containers/%s/archive?path=/workspace", container);
  g_autoptr(DockerResponse) response = NULL;

  response = docker_engine_request (engine, "GET", path, NULL, NULL, NULL, NULL, FALSE, cancellable, error);
  if (response == NULL ||
      !docker_response_check (response, engine, "copy /workspace out of the container", cancellable, error))
    return FALSE;
  return docker_tar_apply (read_response, response, root, keep, secrets, max_file_size, cancellable, error);
}
