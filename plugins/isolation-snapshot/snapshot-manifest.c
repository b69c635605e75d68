/* snapshot-manifest.c: what the parent looked like when a pooled tree was
 * last synced with it, and a one-sided check that it still does.
 *
 * The sync that parks a tree (snapshot-sync.c) records, for every
 * directory it walked in the parent, the directory's own status and the
 * status of each file and link in it that the tree holds. Prepare then
 * only has to prove that the parent has not changed since, with one stat
 * per entry of the parent and none of the tree, no directory listing:
 *
 * - a name added, removed or renamed in a directory changes that
 *   directory's ctime (and mtime), so an unchanged directory ctime means
 *   the same names as recorded;
 * - a file's content, mode, size, times or links changing changes its
 *   ctime; a process cannot set ctime;
 * - the clock behind ctime is coarse: an entry changed right after it was
 *   recorded can keep the recorded ctime, but then that ctime is at or
 *   after `since`, a coarse time read before the sync began. Entries
 *   recorded with such a ctime never match (the full sync then runs).
 *
 * Anything that does not match sends prepare back to the full two-sided
 * sync; nothing here ever writes.
 *
 * File format (native byte order, only ever read by the host that wrote
 * it): "SNAPMAN1", a guint64 directory count, then per directory a
 * ManifestDirHeader, its relative path (no NUL), its entries and its
 * NUL-terminated names.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot-private.h"

#define MANIFEST_MAGIC "SNAPMAN1"

typedef struct {
  guint64 dev;
  guint64 ino;
  gint64 size;
  gint64 mtime_ns;
  gint64 ctime_ns;
  guint32 mode;
  guint32 reserved;
} ManifestStat;

typedef struct {
  guint32 name_offset;          /* into the directory's names */
  guint32 reserved;
  ManifestStat st;
} ManifestEntry;

struct _SnapshotManifestDir {
  char *rel;                    /* "" for the parent itself */
  ManifestStat st;
  GArray *entries;              /* ManifestEntry: files, links, subdirectories */
  GString *names;               /* NUL-terminated names, back to back */
  GHashTable *by_name;          /* name -> index + 1, once indexed */
  gboolean verified;            /* the check found it and its entries unchanged */
};

struct _SnapshotManifest {
  GPtrArray *dirs;              /* SnapshotManifestDir */
  GHashTable *by_rel;           /* rel -> SnapshotManifestDir, once indexed */
  GMutex lock;                  /* while a sync adds directories */
};

typedef struct {
  guint32 rel_len;
  guint32 n_entries;
  guint32 names_len;
  guint32 reserved;
  ManifestStat st;
} ManifestDirHeader;

static gint64
ns_of (const struct timespec *ts)
{
  return (gint64) ts->tv_sec * G_GINT64_CONSTANT (1000000000) + ts->tv_nsec;
}

static void
stat_fill (ManifestStat      *out,
           const struct stat *st)
{
  memset (out, 0, sizeof *out);
  out->dev = st->st_dev;
  out->ino = st->st_ino;
  out->size = st->st_size;
  out->mtime_ns = ns_of (&st->st_mtim);
  out->ctime_ns = ns_of (&st->st_ctim);
  out->mode = st->st_mode;
}

/* Whether st is what was recorded, and was recorded early enough to be
 * trusted (see the top of the file). */
static gboolean
stat_matches (const ManifestStat *recorded,
              const struct stat  *st,
              gint64              since)
{
  return recorded->ctime_ns < since &&
         recorded->ctime_ns == ns_of (&st->st_ctim) &&
         recorded->mtime_ns == ns_of (&st->st_mtim) &&
         recorded->ino == (guint64) st->st_ino &&
         recorded->dev == (guint64) st->st_dev &&
         recorded->size == st->st_size &&
         recorded->mode == st->st_mode;
}

SnapshotManifestDir *
snapshot_manifest_dir_new (const char        *rel,
                           const struct stat *st)
{
  SnapshotManifestDir *dir = g_new0 (SnapshotManifestDir, 1);

  dir->rel = g_strdup (rel);
  stat_fill (&dir->st, st);
  dir->entries = g_array_new (FALSE, FALSE, sizeof (ManifestEntry));
  dir->names = g_string_new (NULL);
  return dir;
}

void
snapshot_manifest_dir_add (SnapshotManifestDir *dir,
                           const char          *name,
                           const struct stat   *st)
{
  ManifestEntry entry = { (guint32) dir->names->len, 0 };

  stat_fill (&entry.st, st);
  g_string_append_len (dir->names, name, strlen (name) + 1);
  g_array_append_val (dir->entries, entry);
}

void
snapshot_manifest_dir_free (SnapshotManifestDir *dir)
{
  if (dir == NULL)
    return;
  g_free (dir->rel);
  g_array_unref (dir->entries);
  g_string_free (dir->names, TRUE);
  g_clear_pointer (&dir->by_name, g_hash_table_unref);
  g_free (dir);
}

SnapshotManifest *
snapshot_manifest_new (void)
{
  SnapshotManifest *manifest = g_new0 (SnapshotManifest, 1);

  manifest->dirs = g_ptr_array_new_with_free_func ((GDestroyNotify) snapshot_manifest_dir_free);
  g_mutex_init (&manifest->lock);
  return manifest;
}

/* Thread-safe: the sync's threads hand their directories in as they finish. */
void
snapshot_manifest_take_dir (SnapshotManifest    *manifest,
                            SnapshotManifestDir *dir)
{
  g_mutex_lock (&manifest->lock);
  g_ptr_array_add (manifest->dirs, dir);
  g_mutex_unlock (&manifest->lock);
}

guint
snapshot_manifest_get_n_entries (SnapshotManifest *manifest)
{
  guint n = 0;

  for (guint i = 0; i < manifest->dirs->len; i++)
    n += 1 + ((SnapshotManifestDir *) manifest->dirs->pdata[i])->entries->len;
  return n;
}

void
snapshot_manifest_free (SnapshotManifest *manifest)
{
  if (manifest == NULL)
    return;
  g_clear_pointer (&manifest->by_rel, g_hash_table_unref);
  g_ptr_array_unref (manifest->dirs);
  g_mutex_clear (&manifest->lock);
  g_free (manifest);
}

gboolean
snapshot_manifest_save (SnapshotManifest  *manifest,
                        const char        *path,
                        GError           **error)
{
  g_autoptr(GByteArray) out = g_byte_array_new ();
  guint64 n = manifest->dirs->len;

  g_byte_array_append (out, (const guint8 *) MANIFEST_MAGIC, 8);
  g_byte_array_append (out, (const guint8 *) &n, sizeof n);
  for (guint i = 0; i < manifest->dirs->len; i++)
    {
      SnapshotManifestDir *dir = manifest->dirs->pdata[i];
      ManifestDirHeader header = { (guint32) strlen (dir->rel), dir->entries->len, (guint32) dir->names->len, 0, dir->st };

      g_byte_array_append (out, (const guint8 *) &header, sizeof header);
      g_byte_array_append (out, (const guint8 *) dir->rel, header.rel_len);
      g_byte_array_append (out, (const guint8 *) dir->entries->data, header.n_entries * sizeof (ManifestEntry));
      g_byte_array_append (out, (const guint8 *) dir->names->str, header.names_len);
    }
  /* No fsync: a manifest lost in a crash only costs the next prepare a
   * full sync (a torn one fails to load the same way). */
  return g_file_set_contents_full (path, (const char *) out->data, out->len, G_FILE_SET_CONTENTS_NONE, 0600, error);
}

static gboolean
take_bytes (const guint8 **at,
            const guint8  *end,
            gsize          len,
            const guint8 **out)
{
  if ((gsize) (end - *at) < len)
    return FALSE;
  *out = *at;
  *at += len;
  return TRUE;
}

/* NULL (and a message in error) for a missing, torn or foreign file. */
SnapshotManifest *
snapshot_manifest_load (const char  *path,
                        GError     **error)
{
  g_autofree char *contents = NULL;
  gsize len = 0;
  const guint8 *at, *end, *p;
  SnapshotManifest *manifest;
  guint64 n;

  if (!g_file_get_contents (path, &contents, &len, error))
    return NULL;
  at = (const guint8 *) contents;
  end = at + len;
  if (!take_bytes (&at, end, 8, &p) || memcmp (p, MANIFEST_MAGIC, 8) != 0 ||
      !take_bytes (&at, end, sizeof n, &p))
    goto bad;
  memcpy (&n, p, sizeof n);
  if (n > len)
    goto bad;
  manifest = snapshot_manifest_new ();
  for (guint64 i = 0; i < n; i++)
    {
      ManifestDirHeader header;
      SnapshotManifestDir *dir;
      const guint8 *rel, *entries, *names;

      if (!take_bytes (&at, end, sizeof header, &p))
        break;
      memcpy (&header, p, sizeof header);
      if (header.n_entries > len / sizeof (ManifestEntry) ||
          !take_bytes (&at, end, header.rel_len, &rel) ||
          !take_bytes (&at, end, (gsize) header.n_entries * sizeof (ManifestEntry), &entries) ||
          !take_bytes (&at, end, header.names_len, &names) ||
          (header.names_len > 0 && names[header.names_len - 1] != '\0'))
        break;
      dir = g_new0 (SnapshotManifestDir, 1);
      dir->rel = g_strndup ((const char *) rel, header.rel_len);
      dir->st = header.st;
      dir->entries = g_array_sized_new (FALSE, FALSE, sizeof (ManifestEntry), header.n_entries);
      g_array_append_vals (dir->entries, entries, header.n_entries);
      dir->names = g_string_new_len ((const char *) names, header.names_len);
      g_ptr_array_add (manifest->dirs, dir);
      for (guint j = 0; j < header.n_entries; j++)
        if (g_array_index (dir->entries, ManifestEntry, j).name_offset >= header.names_len)
          {
            i = n + 1;  /* a name outside the names: torn */
            break;
          }
      if (i > n)
        break;
    }
  if (manifest->dirs->len == n && at == end && n > 0)
    return manifest;
  snapshot_manifest_free (manifest);

bad:
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s is not a snapshot manifest", path);
  return NULL;
}

/* ---- lookups for a sync the manifest guides ------------------------------ */

/* Builds the lookups of a loaded manifest for a sync it guides, once and
 * before the sync's threads read them: a prepare that finds the parent
 * unchanged (the usual case) needs none (building them at load was half
 * of loading, about 6 % of a pooled prepare). */
void
snapshot_manifest_index (SnapshotManifest *manifest)
{
  if (manifest->by_rel != NULL)
    return;
  manifest->by_rel = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < manifest->dirs->len; i++)
    {
      SnapshotManifestDir *dir = manifest->dirs->pdata[i];

      g_hash_table_insert (manifest->by_rel, dir->rel, dir);
      dir->by_name = g_hash_table_new (g_str_hash, g_str_equal);
      for (guint j = 0; j < dir->entries->len; j++)
        g_hash_table_insert (dir->by_name,
                             dir->names->str + g_array_index (dir->entries, ManifestEntry, j).name_offset,
                             GUINT_TO_POINTER (j + 1));
    }
}

/* The directory recorded at rel, or NULL; only on an indexed manifest. */
SnapshotManifestDir *
snapshot_manifest_find_dir (SnapshotManifest *manifest,
                            const char       *rel)
{
  return manifest->by_rel ? g_hash_table_lookup (manifest->by_rel, rel) : NULL;
}

/* Whether the directory itself (not its entries) is as recorded: then it
 * holds the recorded names, no more, no fewer. */
gboolean
snapshot_manifest_dir_unchanged (SnapshotManifestDir *dir,
                                 const struct stat   *st,
                                 gint64               since)
{
  return stat_matches (&dir->st, st, since);
}

/* Whether name was recorded in dir and st is what was recorded. */
gboolean
snapshot_manifest_dir_entry_unchanged (SnapshotManifestDir *dir,
                                       const char          *name,
                                       const struct stat   *st,
                                       gint64               since)
{
  guint index = GPOINTER_TO_UINT (g_hash_table_lookup (dir->by_name, name));

  return index > 0 && stat_matches (&g_array_index (dir->entries, ManifestEntry, index - 1).st, st, since);
}

/* Whether the last snapshot_manifest_matches() found dir itself and all
 * its files and links unchanged. */
gboolean
snapshot_manifest_dir_verified (SnapshotManifestDir *dir)
{
  return dir->verified;
}

/* Whether the index-th recorded entry of dir is a directory. */
gboolean
snapshot_manifest_dir_entry_is_dir (SnapshotManifestDir *dir,
                                    guint                index)
{
  return S_ISDIR (g_array_index (dir->entries, ManifestEntry, index).st.mode);
}

/* The recorded names of dir, in a new array that points into dir. */
GPtrArray *
snapshot_manifest_dir_names (SnapshotManifestDir *dir)
{
  GPtrArray *names = g_ptr_array_sized_new (dir->entries->len);

  for (guint i = 0; i < dir->entries->len; i++)
    g_ptr_array_add (names, dir->names->str + g_array_index (dir->entries, ManifestEntry, i).name_offset);
  return names;
}

/* ---- the check ---------------------------------------------------------- */

typedef struct {
  SnapshotManifest *manifest;
  int root_fd;
  gint64 since;
  guint stride;
  gint mismatch;               /* set by whichever thread finds one first */
} Check;

typedef struct {
  Check *check;
  guint first;
} CheckPart;

static gboolean
dir_matches (Check               *check,
             SnapshotManifestDir *dir)
{
  struct stat st;
  gboolean ok;
  int fd;

  if (*dir->rel == '\0')
    fd = check->root_fd;
  else
    {
      /* O_PATH: nothing is read through it. A directory replaced on the
       * way changed its parent's ctime, which fails that check anyway. */
      fd = openat (check->root_fd, dir->rel, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return FALSE;
    }
  ok = fstat (fd, &st) == 0 && stat_matches (&dir->st, &st, check->since);
  for (guint i = 0; ok && i < dir->entries->len; i++)
    {
      const ManifestEntry *entry = &g_array_index (dir->entries, ManifestEntry, i);

      if (S_ISDIR (entry->st.mode))
        continue;  /* checked as a directory of its own */
      ok = fstatat (fd, dir->names->str + entry->name_offset, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           stat_matches (&entry->st, &st, check->since);
    }
  if (fd != check->root_fd)
    close (fd);
  dir->verified = ok;
  return ok;
}

static gpointer
check_part (gpointer data)
{
  CheckPart *part = data;
  Check *check = part->check;

  /* On past a mismatch: the sync that follows skips what was verified. */
  for (guint i = part->first; i < check->manifest->dirs->len; i += check->stride)
    if (!dir_matches (check, check->manifest->dirs->pdata[i]))
      g_atomic_int_set (&check->mismatch, 1);
  return NULL;
}

/* Whether the parent is still exactly what manifest recorded in a sync
 * that began at since; marks each directory found unchanged, with its
 * files and links, as verified. Two threads, interleaved over the
 * directories (the kernel does the stats of both in parallel). */
gboolean
snapshot_manifest_matches (SnapshotManifest *manifest,
                           const char       *parent,
                           gint64            since)
{
  Check check = { manifest, -1, since, 2, 0 };
  CheckPart parts[2] = { { &check, 0 }, { &check, 1 } };
  GThread *helper = NULL;

  if (manifest->dirs->len == 0)
    return FALSE;
  check.root_fd = open (parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (check.root_fd < 0)
    return FALSE;
  if (manifest->dirs->len > 8)
    helper = g_thread_try_new ("snapshot-check", check_part, &parts[1], NULL);
  if (helper == NULL)
    check.stride = 1;
  check_part (&parts[0]);
  if (helper != NULL)
    g_thread_join (helper);
  close (check.root_fd);
  return !g_atomic_int_get (&check.mismatch);
}
