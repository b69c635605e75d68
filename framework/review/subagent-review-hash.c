/* subagent-review-hash.c: reading a child's file for a review with bounded
 * memory.
 *
 * A file up to the content limit (#SUBAGENT_REVIEW_DEFAULT_MAX_FILE_SIZE
 * unless configured) is read in 64 KiB steps into one buffer and becomes a
 * blob of the in-memory object database, so its content can go into the
 * patch. A larger file never is: it is read one 1 MiB block at a time and
 * summed up by its size and a "blocks-sha256" digest — the SHA-256 of the
 * SHA-256 of each 1 MiB block — and only a small stand-in blob naming both
 * enters the tree. Holes of a sparse file (SEEK_DATA/SEEK_HOLE) are blocks
 * of zeros whose digest is known, so a 200 GB sparse file costs as much as
 * its data. The digest depends on the bytes only, not on where the holes
 * are, so a copy that filled them in still compares equal.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subagent-error.h"
#include "subagent-review-private.h"

#define BLOCK_SIZE (1024 * 1024)
#define READ_STEP (64 * 1024)

/* Starts a stand-in blob: a NUL first makes it binary to libgit2, and no
 * file of a tree is the same bytes. */
static const char stand_in_magic[] = "\0subagent review: content over the limit\n";

static gboolean
errno_error (GError    **error,
             int         saved_errno,
             const char *what,
             const char *side,
             const char *rel)
{
  g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_FAILED, "Could not %s %s/%s: %s",
               what, side, rel, g_strerror (saved_errno));
  return FALSE;
}

static const guint8 *
zero_block_digest (void)
{
  static guint8 digest[32];
  static gsize done = 0;

  if (g_once_init_enter (&done))
    {
      g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
      g_autofree guchar *zeros = g_malloc0 (READ_STEP);
      gsize len = sizeof digest;

      for (guint i = 0; i < BLOCK_SIZE / READ_STEP; i++)
        g_checksum_update (sum, zeros, READ_STEP);
      g_checksum_get_digest (sum, digest, &len);
      g_once_init_leave (&done, 1);
    }
  return digest;
}

static gboolean
pread_fully (int     fd,
             guchar *buf,
             gsize   len,
             goffset offset,
             gsize  *out_len)
{
  gsize done = 0;

  while (done < len)
    {
      ssize_t n = pread (fd, buf + done, len - done, offset + done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return FALSE;
      if (n == 0)
        break;
      done += n;
    }
  *out_len = done;
  return TRUE;
}

/* The blocks-sha256 of the first size bytes of fd, without reading holes. */
static gboolean
blocks_digest (SubagentReviewWalker *w,
               int                   fd,
               goffset               size,
               const char           *rel,
               char                **out_hex,
               goffset              *out_size,
               GError              **error)
{
  g_autoptr(GChecksum) outer = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree guchar *buf = g_malloc (BLOCK_SIZE);
  const guint8 *zero = zero_block_digest ();
  goffset off = 0;
  goffset data = -1;   /* where the data at or after the last probe starts */
  guint blocks = 0;

  while (off < size)
    {
      gsize want = MIN ((goffset) BLOCK_SIZE, size - off);
      guint8 digest[32];
      gsize digest_len = sizeof digest;
      gsize got;

      if (++blocks % 64 == 0 && g_cancellable_set_error_if_cancelled (w->cancellable, error))
        return FALSE;
      if (data < off)
        {
          data = lseek (fd, off, SEEK_DATA);
          /* ENXIO: only a hole is left. Anything else: no hole support,
           * read everything. */
          if (data < 0)
            data = errno == ENXIO ? size : off;
        }
      if (want == BLOCK_SIZE && data >= off + BLOCK_SIZE)
        {
          goffset n = MIN (data, size) - off;

          for (n /= BLOCK_SIZE; n > 0; n--, off += BLOCK_SIZE)
            g_checksum_update (outer, zero, 32);
          continue;
        }
      if (!pread_fully (fd, buf, want, off, &got))
        return errno_error (error, errno, "read", w->side, rel);
      if (got < want)
        {
          /* The file shrank while it was read: sum what is there. */
          size = off + got;
          if (got == 0)
            break;
        }
      {
        g_autoptr(GChecksum) inner = g_checksum_new (G_CHECKSUM_SHA256);

        g_checksum_update (inner, buf, got);
        g_checksum_get_digest (inner, digest, &digest_len);
      }
      g_checksum_update (outer, digest, digest_len);
      off += got;
    }
  *out_hex = g_strdup (g_checksum_get_string (outer));
  *out_size = size;
  return TRUE;
}

static guint
oid_hash (gconstpointer key)
{
  guint h;

  memcpy (&h, ((const git_oid *) key)->id, sizeof h);
  return h;
}

static gboolean
oid_equal (gconstpointer a,
           gconstpointer b)
{
  return git_oid_equal (a, b);
}

static void
over_limit_free (gpointer data)
{
  SubagentReviewOverLimit *info = data;

  g_free (info->digest);
  g_free (info);
}

const SubagentReviewOverLimit *
_subagent_review_walker_lookup_over_limit (SubagentReviewWalker *w,
                                           const git_oid        *oid)
{
  if (w->over_limit == NULL)
    return NULL;
  return g_hash_table_lookup (w->over_limit, oid);
}

/* The stand-in blob of a file over the limit. */
static gboolean
write_stand_in (SubagentReviewWalker *w,
                goffset               size,
                char                 *digest,
                const char           *rel,
                git_oid              *out,
                GError              **error)
{
  g_autoptr(GString) text = g_string_new_len (stand_in_magic, sizeof stand_in_magic - 1);
  SubagentReviewOverLimit *info;

  g_string_append_printf (text, "size %" G_GINT64_FORMAT "\nblocks-sha256 %s\n", (gint64) size, digest);
  if (git_blob_create_from_buffer (out, w->repo, text->str, text->len) < 0)
    {
      g_free (digest);
      return _subagent_review_git_error (error, "Could not hash %s/%s", w->side, rel);
    }
  if (w->over_limit == NULL)
    w->over_limit = g_hash_table_new_full (oid_hash, oid_equal, g_free, over_limit_free);
  if (!g_hash_table_contains (w->over_limit, out))
    {
      info = g_new0 (SubagentReviewOverLimit, 1);
      info->size = size;
      info->digest = digest;
      g_hash_table_insert (w->over_limit, g_memdup2 (out, sizeof *out), info);
    }
  else
    g_free (digest);
  return TRUE;
}

/* In commit mode a tracked file over the limit that did not change must
 * keep the id its base has, or it would show as modified: when the base
 * blob has the file's size, the file is hashed as git does (streaming,
 * through the open descriptor) and compared. */
static gboolean
matches_base_blob (SubagentReviewWalker *w,
                   int                   fd,
                   goffset               size,
                   const char           *rel,
                   git_oid              *out)
{
  git_tree_entry *entry = NULL;
  git_odb *odb = NULL;
  gboolean same = FALSE;
  size_t base_size = 0;
  git_object_t type;
  git_oid id;

  if (!w->commit_mode || w->base_tree == NULL ||
      git_tree_entry_bypath (&entry, w->base_tree, rel) < 0)
    return FALSE;
  if (git_tree_entry_type (entry) == GIT_OBJECT_BLOB &&
      git_repository_odb (&odb, w->repo) == 0 &&
      git_odb_read_header (&base_size, &type, odb, git_tree_entry_id (entry)) == 0 &&
      (goffset) base_size == size)
    {
      g_autofree char *path = g_strdup_printf ("/proc/self/fd/%d", fd);

      if (git_odb_hashfile (&id, path, GIT_OBJECT_BLOB) == 0 &&
          git_oid_equal (&id, git_tree_entry_id (entry)))
        {
          git_oid_cpy (out, &id);
          same = TRUE;
        }
    }
  git_odb_free (odb);
  git_tree_entry_free (entry);
  return same;
}

SubagentReviewHashResult
_subagent_review_hash_file (SubagentReviewWalker *w,
                            int                   dir_fd,
                            const char           *name,
                            const char           *rel,
                            git_oid              *out,
                            GError              **error)
{
  g_autoptr(GByteArray) data = NULL;
  struct stat st;
  /* O_NONBLOCK: a FIFO put where a file was must not block the host. */
  int fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  guint64 limit = w->max_file_size;
  SubagentReviewHashResult ret = SUBAGENT_REVIEW_HASH_FAILED;

  if (fd < 0)
    {
      if (errno == ENOENT)
        return SUBAGENT_REVIEW_HASH_SKIPPED;
      errno_error (error, errno, "read", w->side, rel);
      return SUBAGENT_REVIEW_HASH_FAILED;
    }
  if (fstat (fd, &st) != 0)
    {
      errno_error (error, errno, "stat", w->side, rel);
      goto out;
    }
  if (!S_ISREG (st.st_mode))
    {
      ret = SUBAGENT_REVIEW_HASH_SKIPPED;
      goto out;
    }

  if ((guint64) st.st_size <= limit)
    {
      /* read(), not mmap(): a file truncated meanwhile must not SIGBUS us. */
      data = g_byte_array_sized_new (st.st_size + 1);
      for (;;)
        {
          guint old = data->len;
          ssize_t n;

          g_byte_array_set_size (data, old + READ_STEP);
          n = read (fd, data->data + old, READ_STEP);
          if (n < 0 && errno == EINTR)
            {
              g_byte_array_set_size (data, old);
              continue;
            }
          if (n < 0)
            {
              errno_error (error, errno, "read", w->side, rel);
              goto out;
            }
          g_byte_array_set_size (data, old + n);
          if (n == 0 || data->len > limit)
            break;
        }
      if (data->len <= limit)
        {
          if (git_blob_create_from_buffer (out, w->repo, data->data, data->len) < 0)
            {
              _subagent_review_git_error (error, "Could not hash %s/%s", w->side, rel);
              goto out;
            }
          ret = SUBAGENT_REVIEW_HASH_CONTENT;
          goto out;
        }
      /* It grew past the limit while being read. */
      g_clear_pointer (&data, g_byte_array_unref);
      if (fstat (fd, &st) != 0)
        {
          errno_error (error, errno, "stat", w->side, rel);
          goto out;
        }
    }

  if (matches_base_blob (w, fd, st.st_size, rel, out))
    ret = SUBAGENT_REVIEW_HASH_CONTENT;
  else
    {
      char *digest = NULL;
      goffset size = 0;

      if (blocks_digest (w, fd, st.st_size, rel, &digest, &size, error) &&
          write_stand_in (w, size, digest, rel, out, error))
        ret = SUBAGENT_REVIEW_HASH_OVER_LIMIT;
    }

out:
  close (fd);
  return ret;
}
