/* subagent-confinement-cache.c: Landlock rulesets reused across children.
 *
 * Building a ruleset costs an O_PATH open, a stat and a landlock_add_rule()
 * per path (far more when a hidden key file splits a directory into its
 * entries), and the child's private TMPDIR was a mkdir and an rmdir, which
 * on ext4 costs more than the rest of a trivial child (a new inode skips
 * the ones freed recently, see docs/performance.md). A manager keeps one
 * cache: children whose policies are the same (same child root, write
 * scope, hidden paths and network rule) enter the same ruleset, which the
 * kernel allows any number of times.
 *
 * A cached ruleset is reused only while what it was built from holds:
 *  - each write path still names the inode the rule holds (the ruleset
 *    keeps a reference on it, so the inode number cannot be reused);
 *  - each directory that was split into one rule per entry (around a
 *    hidden path) has the mtime and ctime it had. A change in the same
 *    clock tick as the build could go unseen: an entry built from a
 *    directory changed just before (or during) the build is used once,
 *    not kept.
 *
 * The TMPDIRs of an entry's children are directories in one parent that
 * the ruleset lets them write: a child can reach its siblings' temporary
 * directories, but those siblings share its write rights anyway (same
 * child root, same scope). A child's directory is emptied when its run
 * ends (before the run's cleanup returns) and kept for a later child, so
 * that a child usually costs no mkdir at all. Everything is removed when
 * the last run of an entry ends after the entry left the cache (the cache
 * was freed with its manager, or the entry was evicted or went stale).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gio/gio.h>

#include "subagent-confinement-cache-private.h"
#include "subagent-confinement-private.h"

#define MAX_ENTRIES 16        /* rulesets kept */
#define MAX_SPARE_DIRS 16     /* emptied TMPDIRs kept per ruleset */
/* A directory modified this long before a build started may change again
 * within the same timestamp tick (a jiffy, or a coarser filesystem clock). */
#define RACY_USEC (100 * 1000)

/* The directory the entries' TMPDIR parents are made in, created on first
 * use: creating them does not change the system temporary directory, which
 * may be split around a hidden path. Removed with its last user. */
typedef struct
{
  gint ref_count;
  char *path;
} Base;

typedef struct
{
  char *path;
  dev_t dev;
  ino_t ino;
  struct timespec mtime;     /* listed directories only */
  struct timespec ctime;
  gboolean listed;
} Stamp;

typedef struct
{
  gint ref_count;
  GBytes *key;
  int ruleset_fd;
  char *tmp_parent;
  Base *base;
  GArray *stamps;            /* of Stamp */
  gboolean keep;             /* FALSE: built from a racy directory */
  GMutex lock;               /* for spare */
  GPtrArray *spare;          /* of TmpDir: emptied, for later children */
} Entry;

struct _SubagentConfinementCache
{
  gint ref_count;
  GMutex lock;
  GHashTable *entries;       /* key GBytes -> Entry (ref) */
  Base *base;                /* NULL until a first entry */
  GQueue order;              /* Entry, oldest first */
  guint built;
  guint reused;
};

/* A child's TMPDIR, held open: its emptiness is read through the
 * descriptor (no path to walk, nothing to open or close per child), and
 * the path is trusted again only while it names the same directory. */
typedef struct
{
  char *path;
  int fd;
  dev_t dev;
  ino_t ino;
} TmpDir;

struct _SubagentConfinementLease
{
  Entry *entry;
  TmpDir *tmpdir;
};

static void
tmpdir_free (TmpDir *dir)
{
  if (dir == NULL)
    return;
  if (dir->fd >= 0)
    close (dir->fd);
  g_free (dir->path);
  g_free (dir);
}

/* @path, a directory just made (0700, ours), opened to be kept. */
static TmpDir *
tmpdir_open (char *path)
{
  TmpDir *dir = g_new0 (TmpDir, 1);
  struct stat st;

  dir->path = path;
  dir->fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir->fd >= 0 && fstat (dir->fd, &st) == 0)
    {
      dir->dev = st.st_dev;
      dir->ino = st.st_ino;
    }
  else if (dir->fd >= 0)
    {
      close (dir->fd);
      dir->fd = -1;
    }
  return dir;
}

static void
stamp_clear (Stamp *stamp)
{
  g_free (stamp->path);
}

static Base *
base_ref (Base *base)
{
  g_atomic_int_inc (&base->ref_count);
  return base;
}

static void
base_unref (Base *base)
{
  if (base == NULL || !g_atomic_int_dec_and_test (&base->ref_count))
    return;
  _subagent_remove_tree (base->path);
  g_free (base->path);
  g_free (base);
}

static Entry *
entry_ref (Entry *entry)
{
  g_atomic_int_inc (&entry->ref_count);
  return entry;
}

static void
entry_unref (Entry *entry)
{
  if (entry == NULL || !g_atomic_int_dec_and_test (&entry->ref_count))
    return;
  if (entry->ruleset_fd >= 0)
    close (entry->ruleset_fd);
  /* The spare directories are empty; anything else left is removed too. */
  if (entry->tmp_parent != NULL)
    _subagent_remove_tree (entry->tmp_parent);
  g_free (entry->tmp_parent);
  g_clear_pointer (&entry->base, base_unref);
  g_bytes_unref (entry->key);
  g_array_unref (entry->stamps);
  g_ptr_array_unref (entry->spare);
  g_mutex_clear (&entry->lock);
  g_free (entry);
}

SubagentConfinementCache *
_subagent_confinement_cache_new (void)
{
  SubagentConfinementCache *self = g_new0 (SubagentConfinementCache, 1);

  self->ref_count = 1;
  g_mutex_init (&self->lock);
  self->entries = g_hash_table_new_full (g_bytes_hash, g_bytes_equal, NULL, (GDestroyNotify) entry_unref);
  g_queue_init (&self->order);
  return self;
}

SubagentConfinementCache *
_subagent_confinement_cache_ref (SubagentConfinementCache *self)
{
  g_atomic_int_inc (&self->ref_count);
  return self;
}

void
_subagent_confinement_cache_unref (SubagentConfinementCache *self)
{
  if (self == NULL || !g_atomic_int_dec_and_test (&self->ref_count))
    return;
  g_queue_clear (&self->order);
  g_hash_table_unref (self->entries);
  g_clear_pointer (&self->base, base_unref);
  g_mutex_clear (&self->lock);
  g_free (self);
}

void
_subagent_confinement_cache_get_stats (SubagentConfinementCache *self,
                                       guint                    *built,
                                       guint                    *reused)
{
  g_mutex_lock (&self->lock);
  if (built != NULL)
    *built = self->built;
  if (reused != NULL)
    *reused = self->reused;
  g_mutex_unlock (&self->lock);
}

static gboolean
is_recent (const struct timespec *when,
           gint64                 start_usec)
{
  return (gint64) when->tv_sec * G_USEC_PER_SEC + when->tv_nsec / 1000 >= start_usec - RACY_USEC;
}

static void
add_stamp (Entry      *entry,
           const char *path,
           gboolean    listed,
           gint64      start_usec)
{
  Stamp stamp = { 0 };
  struct stat st;

  /* Missing: the ruleset has no rule for it; then it must stay missing. */
  if (stat (path, &st) != 0)
    memset (&st, 0, sizeof st);
  stamp.path = g_strdup (path);
  stamp.dev = st.st_dev;
  stamp.ino = st.st_ino;
  stamp.listed = listed;
  if (listed)
    {
      stamp.mtime = st.st_mtim;
      stamp.ctime = st.st_ctim;
      if (is_recent (&st.st_mtim, start_usec) || is_recent (&st.st_ctim, start_usec))
        entry->keep = FALSE;
    }
  g_array_append_val (entry->stamps, stamp);
}

static gboolean
stamps_hold (Entry *entry)
{
  for (guint i = 0; i < entry->stamps->len; i++)
    {
      const Stamp *stamp = &g_array_index (entry->stamps, Stamp, i);
      struct stat st;

      if (stat (stamp->path, &st) != 0)
        memset (&st, 0, sizeof st);
      if (st.st_dev != stamp->dev || st.st_ino != stamp->ino)
        return FALSE;
      if (stamp->listed &&
          (st.st_mtim.tv_sec != stamp->mtime.tv_sec || st.st_mtim.tv_nsec != stamp->mtime.tv_nsec ||
           st.st_ctim.tv_sec != stamp->ctime.tv_sec || st.st_ctim.tv_nsec != stamp->ctime.tv_nsec))
        return FALSE;
    }
  return TRUE;
}

static Entry *
entry_build (SubagentConfinementCache  *self,
             SubagentLandlockPolicy    *policy,
             GBytes                    *key,
             gboolean                  *ruleset_failed,
             GError                   **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *template = NULL;
  Entry *entry = g_new0 (Entry, 1);
  const char * const *paths;
  gint64 start;

  entry->ref_count = 1;
  entry->key = g_bytes_ref (key);
  entry->ruleset_fd = -1;
  entry->keep = TRUE;
  entry->stamps = g_array_new (FALSE, TRUE, sizeof (Stamp));
  g_array_set_clear_func (entry->stamps, (GDestroyNotify) stamp_clear);
  entry->spare = g_ptr_array_new_with_free_func ((GDestroyNotify) tmpdir_free);
  g_mutex_init (&entry->lock);

  /* Stamped before the build: a change during it shows at the next use. */
  paths = _subagent_landlock_policy_get_writable (policy);
  for (guint i = 0; paths[i] != NULL; i++)
    add_stamp (entry, paths[i], FALSE, 0);

  /* Removed behind our back (a temp cleaner): start a new one. */
  if (self->base != NULL && !g_file_test (self->base->path, G_FILE_TEST_IS_DIR))
    g_clear_pointer (&self->base, base_unref);
  if (self->base == NULL)
    {
      char *path = g_dir_make_tmp ("subagent-children-XXXXXX", &local_error);

      if (path == NULL)
        {
          g_set_error (error, G_IO_ERROR, local_error->code, "%s", local_error->message);
          entry_unref (entry);
          return NULL;
        }
      self->base = g_new0 (Base, 1);
      self->base->ref_count = 1;
      self->base->path = path;
    }
  entry->base = base_ref (self->base);
  template = g_build_filename (self->base->path, "XXXXXX", NULL);
  if (g_mkdtemp_full (template, 0700) == NULL)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot make a directory in %s: %s", self->base->path, g_strerror (saved));
      entry_unref (entry);
      return NULL;
    }
  entry->tmp_parent = g_steal_pointer (&template);
  /* Removed behind our back, it makes the entry stale like a write path. */
  add_stamp (entry, entry->tmp_parent, FALSE, 0);
  _subagent_landlock_policy_allow_write (policy, entry->tmp_parent);
  start = g_get_real_time ();
  entry->ruleset_fd = _subagent_landlock_policy_build (policy, error);
  if (entry->ruleset_fd < 0)
    {
      *ruleset_failed = TRUE;
      entry_unref (entry);
      return NULL;
    }
  paths = _subagent_landlock_policy_get_listed (policy);
  for (guint i = 0; paths[i] != NULL; i++)
    add_stamp (entry, paths[i], TRUE, start);
  return entry;
}

/* A directory of @entry's for one child: an emptied one, else a new one. */
static TmpDir *
take_tmpdir (Entry   *entry,
             GError **error)
{
  g_autofree char *template = NULL;

  g_mutex_lock (&entry->lock);
  while (entry->spare->len > 0)
    {
      TmpDir *dir = g_ptr_array_steal_index_fast (entry->spare, entry->spare->len - 1);
      struct stat st;

      g_mutex_unlock (&entry->lock);
      /* Its siblings could have replaced it meanwhile: the path must still
       * name the directory held open, private as it was made. */
      if (dir->fd >= 0 && lstat (dir->path, &st) == 0 && S_ISDIR (st.st_mode) && (st.st_mode & 07777) == 0700 &&
          st.st_dev == dir->dev && st.st_ino == dir->ino)
        return dir;
      tmpdir_free (dir);
      g_mutex_lock (&entry->lock);
    }
  g_mutex_unlock (&entry->lock);

  template = g_build_filename (entry->tmp_parent, "XXXXXX", NULL);
  if (g_mkdtemp_full (template, 0700) == NULL)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot make a directory in %s: %s",
                   entry->tmp_parent, g_strerror (saved));
      return NULL;
    }
  return tmpdir_open (g_steal_pointer (&template));
}

SubagentConfinementLease *
_subagent_confinement_cache_acquire (SubagentConfinementCache  *self,
                                     SubagentLandlockPolicy    *policy,
                                     gboolean                  *ruleset_failed,
                                     GError                   **error)
{
  g_autoptr(GBytes) key = _subagent_landlock_policy_get_key (policy);
  g_autoptr(GError) local_error = NULL;
  SubagentConfinementLease *lease;
  Entry *entry = NULL;

  *ruleset_failed = FALSE;
  g_mutex_lock (&self->lock);
  entry = g_hash_table_lookup (self->entries, key);
  if (entry != NULL && stamps_hold (entry))
    {
      entry_ref (entry);
      self->reused++;
    }
  else
    {
      if (entry != NULL)
        {
          g_queue_remove (&self->order, entry);
          g_hash_table_remove (self->entries, key);
        }
      entry = entry_build (self, policy, key, ruleset_failed, error);
      if (entry == NULL)
        {
          g_mutex_unlock (&self->lock);
          return NULL;
        }
      self->built++;
      if (entry->keep)
        {
          while (g_queue_get_length (&self->order) >= MAX_ENTRIES)
            {
              Entry *oldest = g_queue_pop_head (&self->order);

              g_hash_table_remove (self->entries, oldest->key);
            }
          g_hash_table_insert (self->entries, entry->key, entry_ref (entry));
          g_queue_push_tail (&self->order, entry);
        }
    }
  g_mutex_unlock (&self->lock);

  lease = g_new0 (SubagentConfinementLease, 1);
  lease->entry = entry;
  lease->tmpdir = take_tmpdir (entry, &local_error);
  if (lease->tmpdir == NULL)
    {
      /* Its directory is gone or unusable: the next child builds anew. */
      g_mutex_lock (&self->lock);
      if (g_hash_table_lookup (self->entries, entry->key) == entry)
        {
          g_queue_remove (&self->order, entry);
          g_hash_table_remove (self->entries, entry->key);
        }
      g_mutex_unlock (&self->lock);
      g_propagate_error (error, g_steal_pointer (&local_error));
      entry_unref (entry);
      g_free (lease);
      return NULL;
    }
  return lease;
}

int
_subagent_confinement_lease_get_ruleset_fd (SubagentConfinementLease *lease)
{
  return lease->entry->ruleset_fd;
}

const char *
_subagent_confinement_lease_get_tmpdir (SubagentConfinementLease *lease)
{
  return lease->tmpdir->path;
}

/* Whether the directory open as @fd holds nothing but "." and "..":
 * getdents64() into the stack, without a DIR stream and its allocation.
 * FALSE on an error too. */
static gboolean
holds_nothing (int fd)
{
  union { char bytes[1024]; struct dirent64 align; } buffer;
  long n;

  if (lseek (fd, 0, SEEK_SET) != 0)
    return FALSE;
  while ((n = syscall (SYS_getdents64, fd, buffer.bytes, sizeof buffer.bytes)) != 0)
    {
      if (n < 0)
        return FALSE;
      for (long offset = 0; offset < n; )
        {
          struct dirent64 *d = (struct dirent64 *) (buffer.bytes + offset);

          if (!g_str_equal (d->d_name, ".") && !g_str_equal (d->d_name, ".."))
            return FALSE;
          offset += d->d_reclen;
        }
    }
  return TRUE;
}

/* Deletes what lies in @path (not @path itself); FALSE when @path is not a
 * directory of ours any more. */
static gboolean
empty_directory (const char *path)
{
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *dir;
  struct dirent *entry;
  struct stat st;

  if (fd < 0)
    return FALSE;
  if (fstat (fd, &st) != 0 || st.st_uid != geteuid ())
    {
      close (fd);
      return FALSE;
    }
  if (holds_nothing (fd))
    {
      close (fd);
      return TRUE;
    }
  if (lseek (fd, 0, SEEK_SET) != 0)
    {
      close (fd);
      return FALSE;
    }
  dir = fdopendir (fd);
  if (dir == NULL)
    {
      close (fd);
      return FALSE;
    }
  while ((entry = readdir (dir)) != NULL)
    {
      g_autofree char *child = NULL;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      if (unlinkat (dirfd (dir), entry->d_name, 0) == 0)
        continue;
      child = g_build_filename (path, entry->d_name, NULL);
      _subagent_remove_tree (child);
    }
  closedir (dir);
  return TRUE;
}

/* Whether @dir is empty again for a later child: usually the child left
 * nothing, which the held descriptor tells; else what the path names now
 * is emptied (and trusted only if it is still the held directory). */
static gboolean
tmpdir_empty (TmpDir *dir)
{
  struct stat st;

  if (dir->fd >= 0 && holds_nothing (dir->fd))
    return TRUE;
  if (!empty_directory (dir->path))
    return FALSE;
  return dir->fd >= 0 && lstat (dir->path, &st) == 0 && st.st_dev == dir->dev && st.st_ino == dir->ino;
}

void
_subagent_confinement_lease_release (SubagentConfinementLease *lease)
{
  Entry *entry;

  if (lease == NULL)
    return;
  entry = lease->entry;
  if (tmpdir_empty (lease->tmpdir))
    {
      g_mutex_lock (&entry->lock);
      if (entry->spare->len < MAX_SPARE_DIRS)
        {
          g_ptr_array_add (entry->spare, g_steal_pointer (&lease->tmpdir));
        }
      g_mutex_unlock (&entry->lock);
    }
  if (lease->tmpdir != NULL)
    _subagent_remove_tree (lease->tmpdir->path);
  tmpdir_free (lease->tmpdir);
  entry_unref (entry);
  g_free (lease);
}
