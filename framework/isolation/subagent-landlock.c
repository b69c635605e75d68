/* subagent-landlock.c: Landlock rulesets for host children.
 *
 * Built with the raw system calls and the kernel's <linux/landlock.h>; the
 * rights and structure fields a newer kernel knows than the installed
 * header are defined here. The host builds the ruleset (opening every path
 * it names) before the child exists; the child only enters it between fork
 * and exec, which takes two system calls.
 *
 * Landlock can only allow, beneath a path: a file hidden from the child
 * (the approval key) is carved out by allowing reading on each sibling of
 * every directory on its path instead of on the directory itself. Entries
 * created in those directories later are not readable by the child.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gio/gio.h>

#include "subagent-landlock-private.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

/* Rights by the ABI that introduced them (headers may predate them). */
#define FS_EXECUTE      (1ULL << 0)
#define FS_WRITE_FILE   (1ULL << 1)
#define FS_READ_FILE    (1ULL << 2)
#define FS_READ_DIR     (1ULL << 3)
#define FS_REMOVE_DIR   (1ULL << 4)
#define FS_REMOVE_FILE  (1ULL << 5)
#define FS_MAKE_CHAR    (1ULL << 6)
#define FS_MAKE_DIR     (1ULL << 7)
#define FS_MAKE_REG     (1ULL << 8)
#define FS_MAKE_SOCK    (1ULL << 9)
#define FS_MAKE_FIFO    (1ULL << 10)
#define FS_MAKE_BLOCK   (1ULL << 11)
#define FS_MAKE_SYM     (1ULL << 12)
#define FS_REFER        (1ULL << 13)  /* ABI 2 */
#define FS_TRUNCATE     (1ULL << 14)  /* ABI 3 */
#define FS_IOCTL_DEV    (1ULL << 15)  /* ABI 5 */
#define NET_BIND_TCP    (1ULL << 0)   /* ABI 4 */
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)  /* ABI 6 */
#define SCOPE_SIGNAL               (1ULL << 1)

#define RULE_PATH_BENEATH 1

/* The kernel's struct landlock_ruleset_attr as of ABI 6; an older kernel
 * accepts it as long as the fields it does not know are zero. */
struct ruleset_attr
{
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct path_beneath_attr
{
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

#define FS_READ_RIGHTS (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR)
#define FS_WRITE_RIGHTS (FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR | \
                         FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM | \
                         FS_REFER | FS_TRUNCATE)
/* What a rule on a file (not a directory) may hold. */
#define FS_FILE_RIGHTS (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)

/* Device files every program expects to write. */
static const char * const writable_devices[] = {
  "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
};

struct _SubagentLandlockPolicy
{
  GPtrArray *writable;   /* canonical paths */
  GPtrArray *hidden;     /* canonical paths */
  GPtrArray *listed;     /* directories the build split into entries */
  gboolean deny_tcp;
};

SubagentLandlockPolicy *
_subagent_landlock_policy_new (void)
{
  SubagentLandlockPolicy *self = g_new0 (SubagentLandlockPolicy, 1);

  self->writable = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (self->writable, NULL);
  self->hidden = g_ptr_array_new_with_free_func (g_free);
  self->listed = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (self->listed, NULL);
  return self;
}

void
_subagent_landlock_policy_free (SubagentLandlockPolicy *self)
{
  if (self == NULL)
    return;
  g_ptr_array_unref (self->writable);
  g_ptr_array_unref (self->hidden);
  g_ptr_array_unref (self->listed);
  g_free (self);
}

void
_subagent_landlock_policy_allow_write (SubagentLandlockPolicy *self,
                                       const char             *path)
{
  g_ptr_array_insert (self->writable, self->writable->len - 1, g_canonicalize_filename (path, NULL));
}

void
_subagent_landlock_policy_hide (SubagentLandlockPolicy *self,
                                const char             *path)
{
  char *real = realpath (path, NULL);

  /* A file that does not exist needs no hiding; its name may be a symlink
   * to the real one, which is what must be hidden. */
  if (real != NULL)
    {
      g_ptr_array_add (self->hidden, g_strdup (real));
      free (real);
    }
}

void
_subagent_landlock_policy_deny_tcp (SubagentLandlockPolicy *self)
{
  self->deny_tcp = TRUE;
}

const char * const *
_subagent_landlock_policy_get_writable (SubagentLandlockPolicy *self)
{
  return (const char * const *) self->writable->pdata;
}

GBytes *
_subagent_landlock_policy_get_key (SubagentLandlockPolicy *self)
{
  GByteArray *key = g_byte_array_new ();

  for (guint i = 0; i + 1 < self->writable->len; i++)
    {
      const char *path = g_ptr_array_index (self->writable, i);

      g_byte_array_append (key, (const guint8 *) "w", 1);
      g_byte_array_append (key, (const guint8 *) path, strlen (path) + 1);
    }
  for (guint i = 0; i < self->hidden->len; i++)
    {
      const char *path = g_ptr_array_index (self->hidden, i);

      g_byte_array_append (key, (const guint8 *) "h", 1);
      g_byte_array_append (key, (const guint8 *) path, strlen (path) + 1);
    }
  g_byte_array_append (key, (const guint8 *) (self->deny_tcp ? "n" : "N"), 1);
  return g_byte_array_free_to_bytes (key);
}

const char * const *
_subagent_landlock_policy_get_listed (SubagentLandlockPolicy *self)
{
  return (const char * const *) self->listed->pdata;
}

int
_subagent_landlock_abi (void)
{
  static gsize cached = 0;

  if (g_once_init_enter (&cached))
    {
      long abi = syscall (__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

      g_once_init_leave (&cached, (gsize) (abi > 0 ? abi : 0) + 1);
    }
  return (int) cached - 1;
}

static guint64
handled_fs_for_abi (int abi)
{
  guint64 rights = FS_READ_RIGHTS | FS_WRITE_RIGHTS | FS_IOCTL_DEV;

  if (abi < 2)
    rights &= ~FS_REFER;
  if (abi < 3)
    rights &= ~FS_TRUNCATE;
  if (abi < 5)
    rights &= ~FS_IOCTL_DEV;
  return rights;
}

static gboolean
add_rule (int          ruleset_fd,
          const char  *path,
          guint64      rights,
          guint64      handled,
          GError     **error)
{
  struct path_beneath_attr attr = { 0 };
  struct stat st;
  int fd;
  int saved;

  fd = open (path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      saved = errno;
      /* Gone meanwhile, or not ours to see: nothing to allow there. */
      if (saved == ENOENT || saved == EACCES || saved == ENOTDIR || saved == ELOOP)
        return TRUE;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot open %s for a Landlock rule: %s",
                   path, g_strerror (saved));
      return FALSE;
    }
  if (fstat (fd, &st) == 0 && !S_ISDIR (st.st_mode))
    rights &= FS_FILE_RIGHTS;
  attr.allowed_access = rights & handled;
  attr.parent_fd = fd;
  if (attr.allowed_access != 0 &&
      syscall (__NR_landlock_add_rule, ruleset_fd, RULE_PATH_BENEATH, &attr, 0) != 0)
    {
      saved = errno;
      close (fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot add a Landlock rule for %s: %s",
                   path, g_strerror (saved));
      return FALSE;
    }
  close (fd);
  return TRUE;
}

static gboolean
is_hidden (SubagentLandlockPolicy *self,
           const char             *path)
{
  for (guint i = 0; i < self->hidden->len; i++)
    if (g_str_equal (path, g_ptr_array_index (self->hidden, i)))
      return TRUE;
  return FALSE;
}

/* Whether a hidden path lies strictly beneath @dir. */
static gboolean
hides_beneath (SubagentLandlockPolicy *self,
               const char             *dir)
{
  gsize len = strlen (dir);

  for (guint i = 0; i < self->hidden->len; i++)
    {
      const char *hidden = g_ptr_array_index (self->hidden, i);

      if (g_str_equal (dir, "/") ? hidden[1] != '\0'
                                 : strncmp (hidden, dir, len) == 0 && hidden[len] == '/')
        return TRUE;
    }
  return FALSE;
}

/* Allows @rights beneath @path but on the hidden paths. */
static gboolean
add_tree_rule (SubagentLandlockPolicy  *self,
               int                      ruleset_fd,
               const char              *path,
               guint64                  rights,
               guint64                  handled,
               guint                    depth,
               GError                 **error)
{
  DIR *dir;
  struct dirent *entry;
  gboolean ok = TRUE;

  if (is_hidden (self, path))
    return TRUE;
  if (!hides_beneath (self, path) || depth > 64)
    return add_rule (ruleset_fd, path, rights, handled, error);

  dir = opendir (path);
  if (dir == NULL)
    return TRUE;
  g_ptr_array_insert (self->listed, self->listed->len - 1, g_strdup (path));
  while (ok && (entry = readdir (dir)) != NULL)
    {
      g_autofree char *child = NULL;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      child = g_build_filename (path, entry->d_name, NULL);
      ok = add_tree_rule (self, ruleset_fd, child, rights, handled, depth + 1, error);
    }
  closedir (dir);
  return ok;
}

int
_subagent_landlock_policy_build (SubagentLandlockPolicy  *self,
                                 GError                 **error)
{
  int abi = _subagent_landlock_abi ();
  struct ruleset_attr attr = { 0 };
  guint64 handled;
  int fd;

  if (abi < 1)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "This kernel has no Landlock (or it is disabled at boot)");
      return -1;
    }
  handled = handled_fs_for_abi (abi);
  attr.handled_access_fs = handled;
  if (self->deny_tcp && abi >= 4)
    attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
  if (abi >= 6)
    attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;

  fd = syscall (__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (fd < 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot create a Landlock ruleset: %s",
                   g_strerror (saved));
      return -1;
    }

  if (!add_tree_rule (self, fd, "/", FS_READ_RIGHTS, handled, 0, error))
    goto fail;
  for (guint i = 0; i + 1 < self->writable->len; i++)
    {
      const char *path = g_ptr_array_index (self->writable, i);
      /* Reading is allowed with writing, so what the child creates under a
       * directory split around a hidden path stays readable to it. */
      guint64 rights = FS_WRITE_RIGHTS | (hides_beneath (self, path) ? 0 : FS_READ_RIGHTS);

      if (!add_tree_rule (self, fd, path, rights, handled, 0, error))
        goto fail;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (writable_devices); i++)
    if (!add_rule (fd, writable_devices[i], FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV, handled,
                   error))
      goto fail;
  return fd;

fail:
  close (fd);
  return -1;
}

/* The capabilities a root child loses before it enters its domain. On
 * Linux 6.18 (measured: tests/test-escalation.c, docs/confinement.md) a
 * landlocked process holding CAP_SYS_ADMIN or CAP_PERFMON still opens
 * /proc/<host>/environ of a process outside its domain, even a
 * non-dumpable one: Landlock's ptrace scoping does not hold against them.
 * CAP_SYS_PTRACE goes too: a child has no business tracing the host. */
static const int dropped_caps[] = { 21 /* CAP_SYS_ADMIN */, 38 /* CAP_PERFMON */, 19 /* CAP_SYS_PTRACE */ };

/* Async-signal-safe (raw system calls only): runs between fork and exec.
 * A process without these capabilities (not root) changes nothing. Each
 * change of a process's credentials copies them (and frees the old copy
 * after an RCU grace period): only what holds something is changed. */
static int
drop_host_reaching_caps (void)
{
  struct { guint32 version; int pid; } header = { 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0 };
  struct { guint32 effective, permitted, inheritable; } data[2];
  gboolean held = FALSE;

  if (syscall (SYS_capget, &header, data) != 0)
    return errno;
  /* No ambient capability passes the exec. The ambient set lies within
   * permitted ∩ inheritable: empty without an inheritable one (root's
   * usual case), and capset() below takes the dropped ones out of it. */
  if ((data[0].inheritable | data[1].inheritable) != 0 &&
      prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
    return errno;
  for (guint i = 0; i < G_N_ELEMENTS (dropped_caps); i++)
    {
      guint32 bit = 1u << (dropped_caps[i] % 32);
      guint word = dropped_caps[i] / 32;

      /* EINVAL: a kernel that does not know the capability; EPERM: no
       * CAP_SETPCAP, so the bounding set cannot hold it usefully anyway. */
      if (prctl (PR_CAPBSET_READ, dropped_caps[i], 0, 0, 0) == 1 &&
          prctl (PR_CAPBSET_DROP, dropped_caps[i], 0, 0, 0) != 0 && errno != EINVAL && errno != EPERM)
        return errno;
      held = held || ((data[word].effective | data[word].permitted | data[word].inheritable) & bit) != 0;
      data[word].effective &= ~bit;
      data[word].permitted &= ~bit;
      data[word].inheritable &= ~bit;
    }
  if (held && syscall (SYS_capset, &header, data) != 0)
    return errno;
  return 0;
}

int
_subagent_landlock_restrict_self (int ruleset_fd)
{
  int saved;

  if ((saved = drop_host_reaching_caps ()) != 0)
    return saved;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return errno;
  if (syscall (__NR_landlock_restrict_self, ruleset_fd, 0) != 0)
    return errno;
  return 0;
}
