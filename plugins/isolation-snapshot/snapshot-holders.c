/* snapshot-holders.c: whether a process still holds something in a tree.
 *
 * The pool trusts a parked tree until the next prepare without looking at
 * it again (snapshot-pool.c), so it parks a tree only once nothing of the
 * child that had it is left. The runner kills the child's process group
 * when the child exits, but a process that left the group (setsid) lives
 * on. Such a process can only write into the tree through what it holds
 * there: its working or root directory, an open descriptor, a mapping.
 * This scans /proc for them, among the processes it may inspect (those of
 * this user that are dumpable; processes of other users cannot write into
 * the snapshot directory, which is 0700). A process that hides itself
 * (non-dumpable) and holds nothing by path could only find the parked tree
 * again by name; against that no check on this side helps, the same as for
 * the parent's own files.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapshot-private.h"

static gboolean
path_in_tree (const char *path,
              const char *tree,
              gsize       tree_len)
{
  return strncmp (path, tree, tree_len) == 0 && (path[tree_len] == '\0' || path[tree_len] == '/');
}

static gboolean
link_in_tree (const char *link,
              const char *tree,
              gsize       tree_len)
{
  char target[4096];
  ssize_t n = readlink (link, target, sizeof target - 1);

  if (n <= 0)
    return FALSE;
  target[n] = '\0';
  return path_in_tree (target, tree, tree_len);
}

static gboolean
process_holds (const char *pid,
               const char *tree,
               gsize       tree_len)
{
  g_autofree char *cwd = g_strconcat ("/proc/", pid, "/cwd", NULL);
  g_autofree char *root = g_strconcat ("/proc/", pid, "/root", NULL);
  g_autofree char *fd_dir = g_strconcat ("/proc/", pid, "/fd", NULL);
  g_autofree char *maps_path = g_strconcat ("/proc/", pid, "/maps", NULL);
  g_autofree char *maps = NULL;
  g_autoptr(GDir) fds = NULL;
  const char *name;

  if (link_in_tree (cwd, tree, tree_len) || link_in_tree (root, tree, tree_len))
    return TRUE;
  fds = g_dir_open (fd_dir, 0, NULL);
  while (fds != NULL && (name = g_dir_read_name (fds)) != NULL)
    {
      g_autofree char *fd = g_build_filename (fd_dir, name, NULL);
      if (link_in_tree (fd, tree, tree_len))
        return TRUE;
    }
  /* A mapping outlives the descriptor it was made from. */
  if (g_file_get_contents (maps_path, &maps, NULL, NULL))
    for (char *line = maps; line != NULL && *line; )
      {
        char *end = strchr (line, '\n');
        char *path = strchr (line, '/');

        if (end != NULL)
          *end = '\0';
        if (path != NULL && path_in_tree (path, tree, tree_len))
          return TRUE;
        line = end ? end + 1 : NULL;
      }
  return FALSE;
}

/* Whether a process other than this one has its working or root directory,
 * an open file or a mapping in tree (a real path); *pid_out names it. */
gboolean
snapshot_tree_has_holders (const char *tree,
                           int        *pid_out)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  gsize tree_len = strlen (tree);
  int self = getpid ();
  const char *name;

  while (proc != NULL && (name = g_dir_read_name (proc)) != NULL)
    {
      char *end = NULL;
      long pid = strtol (name, &end, 10);

      if (end == name || *end != '\0' || pid == self)
        continue;
      if (process_holds (name, tree, tree_len))
        {
          if (pid_out != NULL)
            *pid_out = (int) pid;
          return TRUE;
        }
    }
  return FALSE;
}
