/* subagent-cgroup.c: a cgroup v2 per host child.
 *
 * A child that clears its environment (`env -i`), forks twice and calls
 * setsid() leaves both its process group and the run token behind; only a
 * cgroup still holds it. Where the host can make a cgroup below its own
 * (the cgroup v2 hierarchy is mounted and the host may write there: root,
 * or a delegated subtree), each host child gets `<own cgroup>/subagent-
 * <host pid>-<n>`, joins it between fork and exec, and `cgroup.kill` stops
 * everything in it at the end of the run or at `subagentctl prune` (the
 * path is in the owner record). Elsewhere nothing changes (a debug
 * message says why). SUBAGENT_CHILD_CGROUP=0 turns it off.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <gio/gio.h>

#include "subagent-cgroup-private.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define CHILD_PREFIX "subagent-"

/* The cgroup2 mount point and its root within the hierarchy, from
 * /proc/self/mountinfo (field 4: root, field 5: mount point, after " - ":
 * the filesystem type). */
static gboolean
find_cgroup2_mount (char **out_mount,
                    char **out_root)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents ("/proc/self/mountinfo", &text, NULL, NULL))
    return FALSE;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *sep = strstr (lines[i], " - ");
      g_auto(GStrv) fields = NULL;

      if (sep == NULL || !g_str_has_prefix (sep + 3, "cgroup2 "))
        continue;
      fields = g_strsplit (lines[i], " ", 6);
      if (g_strv_length (fields) < 6)
        continue;
      *out_root = g_strdup (fields[3]);
      *out_mount = g_strdup (fields[4]);
      return TRUE;
    }
  return FALSE;
}

/* The process's own cgroup v2 directory. */
static char *
own_cgroup_dir (GError **error)
{
  g_autofree char *text = NULL;
  g_autofree char *mount = NULL;
  g_autofree char *root = NULL;
  g_auto(GStrv) lines = NULL;
  const char *path = NULL;

  if (!find_cgroup2_mount (&mount, &root))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "no cgroup2 filesystem is mounted");
      return NULL;
    }
  if (!g_file_get_contents ("/proc/self/cgroup", &text, NULL, NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "cannot read /proc/self/cgroup");
      return NULL;
    }
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL && path == NULL; i++)
    if (g_str_has_prefix (lines[i], "0::"))
      path = lines[i] + 3;
  if (path == NULL || *path != '/')
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "the process is in no cgroup v2");
      return NULL;
    }
  /* Inside a cgroup namespace or a bind mount of a subtree, the mount's
   * root is a prefix of the path. */
  if (!g_str_equal (root, "/"))
    {
      if (!g_str_has_prefix (path, root) || (path[strlen (root)] != '/' && path[strlen (root)] != '\0'))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       "the process's cgroup %s is outside the cgroup2 mount of %s", path, root);
          return NULL;
        }
      path += strlen (root);
    }
  return g_build_filename (mount, path, NULL);
}

/* Removes the empty cgroups that dead hosts left below @own (a host
 * SIGKILLed mid-run cannot remove its children's): rmdir only succeeds on
 * an empty cgroup, and only those of hosts that no longer run are tried. */
static void
sweep_stale (const char *own)
{
  g_autoptr(GDir) dir = g_dir_open (own, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      guint64 pid;
      char *end = NULL;

      if (!g_str_has_prefix (name, CHILD_PREFIX))
        continue;
      pid = g_ascii_strtoull (name + strlen (CHILD_PREFIX), &end, 10);
      if (end == NULL || *end != '-' || pid == 0 || pid > G_MAXINT ||
          (kill ((pid_t) pid, 0) == 0 || errno != ESRCH))
        continue;
      path = g_build_filename (own, name, NULL);
      (void) rmdir (path);
    }
}

static guint kill_populated (const char *cgroup);

static gsize found;
static char *own_dir;
static GError *own_dir_error;

/* The host's own cgroup, found once: reading mountinfo and our cgroup for
 * every child cost more than the rest of the cgroup's setup (a host moved
 * to another cgroup later still makes its children's below the first,
 * which is fine). */
static const char *
own_cgroup (GError **error)
{
  if (g_once_init_enter (&found))
    {
      g_autoptr(GError) local_error = NULL;

      own_dir = own_cgroup_dir (&local_error);
      if (own_dir != NULL)
        sweep_stale (own_dir);
      else
        own_dir_error = g_steal_pointer (&local_error);
      g_once_init_leave (&found, 1);
    }
  if (own_dir == NULL)
    g_propagate_error (error, g_error_copy (own_dir_error));
  return own_dir;
}

static gboolean
turned_off (void)
{
  const char *knob = g_getenv ("SUBAGENT_CHILD_CGROUP");

  return knob != NULL && g_str_equal (knob, "0");
}

/* Empty cgroups of finished children that nothing else names (no owner
 * record), kept for the next child with their descriptors open: a mkdir
 * and an rmdir in cgroupfs, and opening its files, cost a trivial child's
 * host ~0.1 ms. Bounded; what a host leaves here when it exits is removed
 * by the next host's sweep_stale() (they are empty). */
#define POOL_MAX 16
static GMutex pool_lock;
static GPtrArray *pool;

/* Set once making a child's cgroup failed for a reason that will not go
 * away (no delegation: a user's host below a cgroup it may not write). */
static gboolean creation_refused;

static void pool_put (SubagentChildCgroup *self);

gboolean
_subagent_cgroup_available (void)
{
  SubagentChildCgroup *probe;
  gboolean pooled;

  if (turned_off () || own_cgroup (NULL) == NULL || g_atomic_int_get (&creation_refused))
    return FALSE;
  g_mutex_lock (&pool_lock);
  pooled = pool != NULL && pool->len > 0;
  g_mutex_unlock (&pool_lock);
  if (pooled)
    return TRUE;
  /* Make the next child's now, so that a host that may make none learns it
   * before its first child (which then sweeps /proc with its counters). */
  probe = _subagent_child_cgroup_new (NULL);
  if (probe == NULL)
    return FALSE;
  pool_put (probe);
  return TRUE;
}


static void
child_cgroup_free (SubagentChildCgroup *self)
{
  if (self->dir_fd >= 0)
    close (self->dir_fd);
  if (self->procs_fd >= 0)
    close (self->procs_fd);
  if (self->events_fd >= 0)
    close (self->events_fd);
  g_free (self->path);
  g_free (self);
}

SubagentChildCgroup *
_subagent_child_cgroup_new (GError **error)
{
  /* Whether cgroup.kill and cgroup.procs were found writable once: the
   * kernel and the delegation do not change under a running host. */
  static gboolean files_checked;
  static guint serial;
  SubagentChildCgroup *self = NULL;
  const char *own;
  g_autofree char *path = NULL;
  char file[PATH_MAX];

  if (turned_off ())
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "SUBAGENT_CHILD_CGROUP=0");
      return NULL;
    }
  if ((own = own_cgroup (error)) == NULL)
    return NULL;
  g_mutex_lock (&pool_lock);
  if (pool != NULL && pool->len > 0)
    self = g_ptr_array_steal_index_fast (pool, pool->len - 1);
  g_mutex_unlock (&pool_lock);
  if (self != NULL)
    return self;

  path = g_strdup_printf ("%s/" CHILD_PREFIX "%d-%u", own, (int) getpid (), g_atomic_int_add (&serial, 1));
  if (mkdir (path, 0755) != 0)
    {
      int saved = errno;
      if (saved == EACCES || saved == EPERM || saved == EROFS || saved == ENOENT || saved == ENOTDIR)
        g_atomic_int_set (&creation_refused, TRUE);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "cannot make a cgroup below %s (no delegation): %s", own, g_strerror (saved));
      return NULL;
    }
  if (!g_atomic_int_get (&files_checked))
    {
      g_snprintf (file, sizeof file, "%s/cgroup.kill", path);
      if (access (file, W_OK) != 0)
        {
          int saved = errno;
          g_atomic_int_set (&creation_refused, TRUE);
          rmdir (path);
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "the cgroup %s has no writable cgroup.kill (kernel older than 5.14?): %s",
                       path, g_strerror (saved));
          return NULL;
        }
      g_atomic_int_set (&files_checked, TRUE);
    }
  self = g_new0 (SubagentChildCgroup, 1);
  self->path = g_steal_pointer (&path);
  self->dir_fd = open (self->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_snprintf (file, sizeof file, "%s/cgroup.procs", self->path);
  self->procs_fd = open (file, O_WRONLY | O_CLOEXEC);
  g_snprintf (file, sizeof file, "%s/cgroup.events", self->path);
  self->events_fd = open (file, O_RDONLY | O_CLOEXEC);
  if (self->dir_fd < 0 || self->procs_fd < 0 || self->events_fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "cannot open the cgroup %s, its cgroup.procs or cgroup.events: %s", self->path,
                   g_strerror (saved));
      rmdir (self->path);
      child_cgroup_free (self);
      return NULL;
    }
  return self;
}

/* Reads @fd from its start into @buffer (NUL-terminated); -1 on error. */
static gssize
read_from_start (int    fd,
                 char  *buffer,
                 gsize  size)
{
  gssize n;

  do
    n = pread (fd, buffer, size - 1, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -1;
  buffer[n] = '\0';
  return n;
}

/* Whether cgroup.events (@text, @length bytes read) says "populated 1":
 * that counts the cgroups below too, unlike cgroup.procs. Unreadable: say
 * populated, so that the caller kills. */
static gboolean
events_say_populated (const char *text,
                      gssize      length)
{
  const char *p;

  if (length <= 0 || (p = strstr (text, "populated ")) == NULL)
    return TRUE;
  return p[strlen ("populated ")] != '0';
}

gboolean
_subagent_child_cgroup_is_populated (SubagentChildCgroup *self)
{
  char text[256];

  /* cgroupfs regenerates the file for a read at offset 0. */
  return events_say_populated (text, read_from_start (self->events_fd, text, sizeof text));
}

guint
_subagent_child_cgroup_kill (SubagentChildCgroup *self)
{
  guint killed;

  if (!_subagent_child_cgroup_is_populated (self))
    return 0;
  killed = kill_populated (self->path);
  self->killed = self->killed || killed > 0;
  return killed;
}

/* Keeps @self for a later child, when the pool has room. */
static gboolean
pool_put_if_room (SubagentChildCgroup *self)
{
  gboolean kept = FALSE;

  g_mutex_lock (&pool_lock);
  if (pool == NULL)
    pool = g_ptr_array_new ();
  if (pool->len < POOL_MAX)
    {
      g_ptr_array_add (pool, self);
      kept = TRUE;
    }
  g_mutex_unlock (&pool_lock);
  return kept;
}

static void
pool_put (SubagentChildCgroup *self)
{
  if (!pool_put_if_room (self))
    _subagent_child_cgroup_release (self, FALSE, TRUE);
}

void
_subagent_child_cgroup_release (SubagentChildCgroup *self,
                                gboolean             reusable,
                                gboolean             known_empty)
{
  if (self == NULL)
    return;
  /* Not a killed one: Linux (6.18 here) SIGKILLs every child later born in
   * a cgroup once written to its cgroup.kill (CLONE_INTO_CGROUP compares
   * the cgroup's kill count with that of the parent's). */
  if (reusable && !self->killed && (known_empty || !_subagent_child_cgroup_is_populated (self)) &&
      pool_put_if_room (self))
    return;
  /* Empty after a normal run (killed when the child exited): one rmdir. */
  if (rmdir (self->path) != 0 && errno != ENOENT)
    {
      _subagent_cgroup_kill (self->path);
      _subagent_cgroup_remove (self->path, 1000);
    }
  child_cgroup_free (self);
}

/* Reads a small file of @cgroup into @buffer (NUL-terminated); -1 on error. */
static gssize
read_file (const char *cgroup,
           const char *name,
           char       *buffer,
           gsize       size)
{
  char path[PATH_MAX];
  gssize n;
  int fd;

  if (g_snprintf (path, sizeof path, "%s/%s", cgroup, name) >= (int) sizeof path ||
      (fd = open (path, O_RDONLY | O_CLOEXEC)) < 0)
    return -1;
  n = read_from_start (fd, buffer, size);
  close (fd);
  return n;
}

gboolean
_subagent_cgroup_is_populated (const char *cgroup)
{
  char text[256];

  return events_say_populated (text, read_file (cgroup, "cgroup.events", text, sizeof text));
}

/* Sends @signum to the members of @cgroup (a directory path) and of the
 * cgroups below it, @except excepted; returns how many. */
static guint
signal_members (const char *cgroup,
                int         signum,
                GPid        except,
                guint       depth)
{
  g_autofree char *procs = g_build_filename (cgroup, "cgroup.procs", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GDir) dir = NULL;
  const char *name;
  guint n = 0;

  if (g_file_get_contents (procs, &text, NULL, NULL))
    for (char *p = text, *end; *p != '\0'; p = end)
      {
        gint64 pid = g_ascii_strtoll (p, &end, 10);

        if (end == p)
          break;
        if (pid > 1 && pid <= G_MAXINT && (GPid) pid != except && (GPid) pid != getpid () &&
            kill ((pid_t) pid, signum) == 0)
          n++;
        while (*end == '\n')
          end++;
      }
  /* A nested host's children have cgroups of their own below. */
  if (depth < 32 && (dir = g_dir_open (cgroup, 0, NULL)) != NULL)
    while ((name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *sub = g_build_filename (cgroup, name, NULL);

        if (g_file_test (sub, G_FILE_TEST_IS_DIR))
          n += signal_members (sub, signum, except, depth + 1);
      }
  return n;
}

guint
_subagent_cgroup_signal (const char *cgroup,
                         int         signum,
                         GPid        except)
{
  if (!_subagent_cgroup_is_populated (cgroup))
    return 0;
  return signal_members (cgroup, signum, except, 0);
}

guint
_subagent_cgroup_kill (const char *cgroup)
{
  /* The common case at the end of a run: nothing is left, one read. */
  if (!_subagent_cgroup_is_populated (cgroup))
    return 0;
  return kill_populated (cgroup);
}

static guint
kill_populated (const char *cgroup)
{
  char text[4096];
  guint n = 0;
  int fd;

  /* How many, for the callers' messages (those of cgroups below count as one). */
  if (read_file (cgroup, "cgroup.procs", text, sizeof text) > 0)
    for (const char *p = text; *p != '\0'; p++)
      if (*p == '\n')
        n++;
  {
    char path[PATH_MAX];

    if (g_snprintf (path, sizeof path, "%s/cgroup.kill", cgroup) >= (int) sizeof path)
      return 0;
    fd = open (path, O_WRONLY | O_CLOEXEC);
  }
  if (fd < 0 || write (fd, "1", 1) != 1)
    {
      g_debug ("Could not kill cgroup %s: %s", cgroup, g_strerror (errno));
      n = 0;
    }
  else
    n = MAX (n, 1);
  if (fd >= 0)
    close (fd);
  return n;
}

gboolean
_subagent_cgroup_remove (const char *cgroup,
                         guint       timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * G_TIME_SPAN_MILLISECOND;

  for (;;)
    {
      if (rmdir (cgroup) == 0 || errno == ENOENT)
        return TRUE;
      if (errno != EBUSY || g_get_monotonic_time () >= deadline)
        {
          g_debug ("Could not remove cgroup %s: %s", cgroup, g_strerror (errno));
          return FALSE;
        }
      g_usleep (5 * 1000);
    }
}

gboolean
_subagent_cgroup_is_ours (const char *path)
{
  g_autofree char *name = NULL;
  struct statfs fs;

  if (path == NULL || !g_path_is_absolute (path) || strstr (path, "/../") != NULL ||
      g_str_has_suffix (path, "/.."))
    return FALSE;
  name = g_path_get_basename (path);
  if (!g_str_has_prefix (name, CHILD_PREFIX))
    return FALSE;
  return statfs (path, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}
