/* docker-workspace.c: the host directory a container works in.
 *
 * A workspace is `<workspace_dir>/<session_key>/`: a marker file
 * (`.subagent-docker`, JSON with the session key: only a directory holding
 * the marker of its own session is ever removed) and `tree/`, the copy of
 * the parent that is bind-mounted at /workspace.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker-private.h"

/**
 * docker_workspace_create:
 * @base: the workspace directory to make (it must not exist)
 * @session_key: the session it belongs to
 * @parent_root: the parent it copies, for people reading the marker
 * @error: return location for a #GError
 *
 * Makes @base (mode 0700) and writes its marker.
 *
 * Returns: %TRUE on success; on failure nothing was made
 */
gboolean
docker_workspace_create (const char  *base,
                         const char  *session_key,
                         const char  *parent_root,
                         GError     **error)
{
  g_autoptr(GError) local_error = NULL;

  if (mkdir (base, 0700) != 0)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not create the container workspace %s: %s%s", base, g_strerror (saved),
                   saved == EEXIST ? " (session keys must be unique; reclaim leftovers with `subagentctl prune`)" : "");
      return FALSE;
    }

  if (!subagent_owner_marker_write (base, DOCKER_MARKER, session_key, parent_root, &local_error))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not write the workspace marker: %s", local_error->message);
      (void) subagent_tree_remove (base, NULL, NULL);
      return FALSE;
    }
  return TRUE;
}

/* ---- handing the tree to the container's user --------------------------- */

typedef struct {
  gboolean chown;
  uid_t uid;
  gid_t gid;
} Handover;

static gboolean
hand_over_entry (Handover    *h,
                 int          dir_fd,
                 const char  *name,
                 const char  *path,
                 GError     **error)
{
  struct stat st;

  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    goto fail;
  if (h->chown)
    {
      if (fchownat (dir_fd, name, h->uid, h->gid, AT_SYMLINK_NOFOLLOW) != 0)
        goto fail;
      /* chown clears set-id bits; nothing else about the mode changes. */
    }
  else if (!S_ISLNK (st.st_mode))
    {
      /* Read and write for everyone, never an execute bit the parent
       * did not have: the review sees no mode change. */
      mode_t wanted = st.st_mode | (S_ISDIR (st.st_mode) ? 0777 : 0666);

      if ((wanted & 07777) != (st.st_mode & 07777) && fchmodat (dir_fd, name, wanted & 07777, 0) != 0)
        goto fail;
    }
  return TRUE;

fail:
  {
    int saved = errno;
    g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                 "Could not give %s to the container's user: %s", path, g_strerror (saved));
  }
  return FALSE;
}

static gboolean
hand_over_dir (Handover    *h,
               int          dir_fd,
               const char  *path,
               GError     **error)
{
  int dup_fd = fcntl (dir_fd, F_DUPFD_CLOEXEC, 3);
  struct dirent *de;
  DIR *dir;
  gboolean ok = TRUE;

  if (dup_fd < 0 || (dir = fdopendir (dup_fd)) == NULL)
    {
      int saved = errno;
      if (dup_fd >= 0)
        close (dup_fd);
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not read %s: %s", path, g_strerror (saved));
      return FALSE;
    }
  while (ok && (de = readdir (dir)) != NULL)
    {
      g_autofree char *child = NULL;

      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
        continue;
      child = g_build_filename (path, de->d_name, NULL);
      ok = hand_over_entry (h, dir_fd, de->d_name, child, error);
      if (ok && de->d_type == DT_DIR)
        {
          int sub = openat (dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          if (sub < 0)
            {
              int saved = errno;
              g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                           "Could not open %s: %s", child, g_strerror (saved));
              ok = FALSE;
            }
          else
            {
              ok = hand_over_dir (h, sub, child, error);
              close (sub);
            }
        }
    }
  closedir (dir);
  return ok;
}

/* "1000", "1000:100" → ids; a name or a group name → FALSE. */
gboolean
docker_workspace_parse_user (const char *user,
                             guint      *uid,
                             guint      *gid)
{
  g_auto(GStrv) parts = g_strsplit (user, ":", 2);
  guint64 u, g;

  if (!g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXUINT32 - 1, &u, NULL))
    return FALSE;
  if (parts[1] == NULL)
    {
      /* No group: the user's primary group inside the image is unknown
       * here; its own id is the usual convention (nobody:nogroup). */
      g = u;
    }
  else if (!g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT32 - 1, &g, NULL))
    return FALSE;
  *uid = (guint) u;
  *gid = (guint) g;
  return TRUE;
}

static gboolean
hand_over_tree (Handover    *h,
                const char  *tree,
                GError     **error)
{
  g_autofree char *parent = NULL;
  g_autofree char *name = NULL;
  int parent_fd, fd;
  gboolean ok;

  parent = g_path_get_dirname (tree);
  name = g_path_get_basename (tree);
  parent_fd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd < 0)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not open %s: %s", parent, g_strerror (saved));
      return FALSE;
    }
  ok = hand_over_entry (h, parent_fd, name, tree, error);
  if (ok)
    {
      fd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        {
          int saved = errno;
          g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                       "Could not open %s: %s", tree, g_strerror (saved));
          ok = FALSE;
        }
      else
        {
          ok = hand_over_dir (h, fd, tree, error);
          close (fd);
        }
    }
  close (parent_fd);
  return ok;
}

/**
 * docker_workspace_give_to_user:
 * @tree: the copied tree
 * @user: the container's `--user` (`uid[:gid]` or a name)
 * @out_world_writable: (out): set to whether the tree was made writable for all
 * @error: return location for a #GError
 *
 * Makes @tree writable for @user inside the container: as root with a
 * numeric user, the tree is chowned to it (modes untouched); otherwise
 * every entry becomes readable and writable by all (execute bits
 * untouched). Symbolic links are never followed. Root needs nothing.
 *
 * Returns: %TRUE on success
 */
gboolean
docker_workspace_give_to_user (const char  *tree,
                               const char  *user,
                               gboolean    *out_world_writable,
                               GError     **error)
{
  Handover h = { 0 };

  *out_world_writable = FALSE;
  if (g_str_equal (user, "0") || g_str_equal (user, "root") || g_str_has_prefix (user, "0:") ||
      g_str_has_prefix (user, "root:"))
    return TRUE;

  h.chown = geteuid () == 0 && docker_workspace_parse_user (user, &h.uid, &h.gid);
  *out_world_writable = !h.chown;
  return hand_over_tree (&h, tree, error);
}

/**
 * docker_workspace_take_back:
 * @tree: a tree docker_workspace_give_to_user() handed over
 * @error: return location for a #GError
 *
 * Gives @tree, and whatever the container's user made in it, back to this
 * process's user (as root only; otherwise nothing was chowned), so that
 * the tree can be reused (a worktree pool) or inspected without ownership
 * checks getting in the way. Symbolic links are never followed.
 *
 * Returns: %TRUE on success
 */
gboolean
docker_workspace_take_back (const char  *tree,
                            GError     **error)
{
  Handover h = { TRUE, geteuid (), getegid () };

  if (h.uid != 0 || !g_file_test (tree, G_FILE_TEST_IS_DIR))
    return TRUE;
  return hand_over_tree (&h, tree, error);
}

/**
 * docker_workspace_remove:
 * @base: a workspace directory
 * @session_key: the session it must belong to
 * @error: return location for a #GError
 *
 * Removes @base if it holds the marker of @session_key. Files the
 * container's user made are removed too (we are their owner or root).
 *
 * Returns: %TRUE if @base is gone (or never existed); %FALSE if it was
 *   left in place, with @error saying why
 */
gboolean
docker_workspace_remove (const char  *base,
                         const char  *session_key,
                         GError     **error)
{
  if (!g_file_test (base, G_FILE_TEST_EXISTS))
    return TRUE;
  if (!subagent_owner_marker_matches (base, DOCKER_MARKER, session_key))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Not removing %s: it has no container-workspace marker for session %s", base, session_key);
      return FALSE;
    }
  return subagent_tree_remove (base, NULL, error);
}
