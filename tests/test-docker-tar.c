/* test-docker-tar.c: the docker backend's tar applier (copy-out) without an
 * engine: into an empty directory (new files made by creator threads), onto
 * a stale tree (compared, old entries removed), and archives with hard
 * links to files just queued and names given twice (made by GNU tar).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "docker-engine.h"
#include "test-support.h"

typedef struct {
  const guint8 *data;
  gsize size, pos;
} Source;

static gssize
read_memory (gpointer       source,
             void          *buffer,
             gsize          size,
             GCancellable  *cancellable,
             GError       **error)
{
  Source *s = source;
  gsize n = MIN (size, s->size - s->pos);

  memcpy (buffer, s->data + s->pos, n);
  s->pos += n;
  return (gssize) n;
}

/* GNU tar's archive of top/workspace (entries `workspace/…`), as GET archive gives it. */
static GBytes *
archive_of (const char *top)
{
  g_autofree char *path = g_build_filename (top, "ws.tar", NULL);
  g_autofree char *cmd = g_strdup_printf ("tar -C %s -cf %s workspace", top, path);
  g_autoptr(GError) error = NULL;
  char *data = NULL;
  gint status = -1;
  gsize len = 0;

  g_assert_true (g_spawn_command_line_sync (cmd, NULL, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  g_unlink (path);
  return g_bytes_new_take (data, len);
}

static void
apply (GBytes     *archive,
       const char *root)
{
  Source source = { g_bytes_get_data (archive, NULL), g_bytes_get_size (archive), 0 };
  g_autoptr(GError) error = NULL;

  g_assert_true (docker_tar_apply (read_memory, &source, root, NULL, NULL, G_MAXUINT64, NULL, &error));
  g_assert_no_error (error);
}

/* "rel\tmode\tcontent" lines of every regular file, sorted; links as "rel -> target". */
static void
list_tree (const char *root,
           const char *rel,
           GPtrArray  *lines)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child_rel = *rel ? g_build_filename (rel, name, NULL) : g_strdup (name);
      g_autofree char *child = g_build_filename (root, child_rel, NULL);
      GStatBuf st;

      g_assert_cmpint (g_lstat (child, &st), ==, 0);
      if (S_ISDIR (st.st_mode))
        {
          g_ptr_array_add (lines, g_strdup_printf ("%s/", child_rel));
          list_tree (root, child_rel, lines);
        }
      else if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_file_read_link (child, NULL);
          g_ptr_array_add (lines, g_strdup_printf ("%s -> %s", child_rel, target));
        }
      else
        {
          g_autofree char *content = NULL;
          gsize len = 0;
          g_assert_true (g_file_get_contents (child, &content, &len, NULL));
          g_autofree char *sum = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) content, len);
          g_ptr_array_add (lines, g_strdup_printf ("%s\t%o\t%zu\t%s", child_rel, (unsigned) (st.st_mode & 0777), len,
                                                   sum));
        }
    }
}

static gint
compare_lines (gconstpointer a,
               gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

static char *
tree_listing (const char *root)
{
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);

  list_tree (root, "", lines);
  g_ptr_array_sort (lines, compare_lines);
  g_ptr_array_add (lines, NULL);
  return g_strjoinv ("\n", (char **) lines->pdata);
}

static void
make_source_tree (const char *root)
{
  g_autofree char *big = g_malloc (200 * 1024);
  g_autofree char *zeros = g_malloc0 (8192);
  g_autofree char *exec = g_build_filename (root, "bin/tool.sh", NULL);
  g_autofree char *link = g_build_filename (root, "link", NULL);

  for (int i = 0; i < 600; i++)
    {
      g_autofree char *rel = g_strdup_printf ("src/d%02d/f%04d.c", i % 23, i);
      g_autofree char *text = g_strdup_printf ("int f%d;\n", i);
      sat_write_file (root, rel, text);
    }
  for (gsize i = 0; i < 200 * 1024; i++)
    big[i] = (char) (i * 7 + 1);
  {
    g_autofree char *path = g_build_filename (root, "big.bin", NULL);
    g_autofree char *zpath = g_build_filename (root, "zeros.bin", NULL);
    g_assert_true (g_file_set_contents (path, big, 200 * 1024, NULL));
    g_assert_true (g_file_set_contents (zpath, zeros, 8192, NULL));
  }
  sat_write_file (root, "bin/tool.sh", "echo run\n");
  g_chmod (exec, 0755);
  sat_write_file (root, "empty.txt", "");
  g_assert_cmpint (symlink ("src/d00/f0000.c", link), ==, 0);
}

/* The directory's inode flags, or -1 where the filesystem has none. */
static int
dir_flags (const char *dir,
           const char *rel)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int flags = 0;

  g_assert_cmpint (fd, >=, 0);
  if (ioctl (fd, FS_IOC_GETFLAGS, &flags) != 0)
    flags = -1;
  close (fd);
  return flags;
}

/* Whether this filesystem keeps the top-directory flag (ext2/3/4 do). */
static gboolean
keeps_topdir_flag (const char *scratch)
{
  g_autofree char *probe = g_build_filename (scratch, "probe", NULL);
  int fd, flags = 0;
  gboolean kept;

  g_assert_cmpint (g_mkdir (probe, 0700), ==, 0);
  fd = open (probe, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  kept = ioctl (fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags |= FS_TOPDIR_FL, ioctl (fd, FS_IOC_SETFLAGS, &flags) == 0) &&
         ioctl (fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_TOPDIR_FL) != 0;
  close (fd);
  g_rmdir (probe);
  return kept;
}

static void
test_apply_empty_and_stale (void)
{
  g_autofree char *top = sat_make_temp_dir ("tar-source");
  g_autofree char *source = g_build_filename (top, "workspace", NULL);
  g_autofree char *empty = sat_make_temp_dir ("tar-empty");
  g_autofree char *stale = sat_make_temp_dir ("tar-stale");
  g_autoptr(GBytes) archive = NULL;
  g_autofree char *want = NULL;
  g_autofree char *got_empty = NULL;
  g_autofree char *got_stale = NULL;
  g_autofree char *got_again = NULL;

  g_assert_cmpint (g_mkdir (source, 0755), ==, 0);
  make_source_tree (source);
  archive = archive_of (top);
  want = tree_listing (source);

  /* Into an empty directory: every file new, most made by the creators. */
  apply (archive, empty);
  got_empty = tree_listing (empty);
  g_assert_cmpstr (got_empty, ==, want);
  /* The root it found empty and the directories it made spread their
   * subdirectories (chattr +T), where the filesystem has the flag. */
  if (keeps_topdir_flag (top))
    {
      g_assert_cmpint (dir_flags (empty, "") & FS_TOPDIR_FL, !=, 0);
      g_assert_cmpint (dir_flags (empty, "src") & FS_TOPDIR_FL, !=, 0);
      g_assert_cmpint (dir_flags (empty, "src/d07") & FS_TOPDIR_FL, !=, 0);
    }
  else
    g_test_message ("%s keeps no top-directory flag: placement not checked", top);

  /* Onto a stale tree: changed, extra, and replaced entries. */
  sat_write_file (stale, "src/d01/f0001.c", "old and longer content\n");
  sat_write_file (stale, "src/d02/f0002.c", "int XX;\n");   /* same size, other bytes */
  sat_write_file (stale, "extra/deep/file.txt", "to be removed\n");
  sat_write_file (stale, "extra.txt", "to be removed\n");
  sat_write_file (stale, "big.bin/inside", "a directory where a file goes\n");
  apply (archive, stale);
  got_stale = tree_listing (stale);
  g_assert_cmpstr (got_stale, ==, want);
  /* Directories it found are left as they were; those it made are flagged. */
  if (keeps_topdir_flag (top))
    {
      g_assert_cmpint (dir_flags (stale, "") & FS_TOPDIR_FL, ==, 0);
      g_assert_cmpint (dir_flags (stale, "src") & FS_TOPDIR_FL, ==, 0);
      g_assert_cmpint (dir_flags (stale, "src/d01") & FS_TOPDIR_FL, ==, 0);
      g_assert_cmpint (dir_flags (stale, "src/d07") & FS_TOPDIR_FL, !=, 0);
    }

  /* Once more onto the up-to-date tree: unchanged. */
  apply (archive, stale);
  got_again = tree_listing (stale);
  g_assert_cmpstr (got_again, ==, want);

  sat_rm_rf (top);
  sat_rm_rf (empty);
  sat_rm_rf (stale);
}

/* GNU tar's archive of `workspace/` with a hard link (type 1) to a file just
 * before it, and a name appended twice (the later wins). */
static void
test_apply_links_and_duplicates (void)
{
  g_autofree char *top = sat_make_temp_dir ("tar-gnu");
  g_autofree char *dest = sat_make_temp_dir ("tar-gnu-dest");
  g_autofree char *first = g_build_filename (top, "workspace/a/one.txt", NULL);
  g_autofree char *second = g_build_filename (top, "workspace/a/two.txt", NULL);
  g_autofree char *tar_path = g_build_filename (top, "ws.tar", NULL);
  g_autofree char *twice = NULL;
  g_autofree char *one = NULL;
  g_autofree char *two = NULL;
  g_autofree char *data = NULL;
  g_autoptr(GBytes) archive = NULL;
  g_autoptr(GError) error = NULL;
  GStatBuf st1, st2;
  gsize len;
  int status;

  sat_write_file (top, "workspace/a/one.txt", "shared\n");
  g_assert_cmpint (link (first, second), ==, 0);
  sat_write_file (top, "workspace/b/twice.txt", "first version\n");
  {
    g_autofree char *cmd = g_strdup_printf ("sh -c 'cd %s && tar -cf ws.tar workspace && "
                                            "echo second version > workspace/b/twice.txt && "
                                            "tar -rf ws.tar workspace/b/twice.txt'", top);
    g_assert_true (g_spawn_command_line_sync (cmd, NULL, NULL, &status, &error));
    g_assert_no_error (error);
    g_assert_cmpint (status, ==, 0);
  }
  g_assert_true (g_file_get_contents (tar_path, &data, &len, NULL));
  archive = g_bytes_new_take (g_steal_pointer (&data), len);
  apply (archive, dest);

  one = g_build_filename (dest, "a/one.txt", NULL);
  two = g_build_filename (dest, "a/two.txt", NULL);
  twice = g_build_filename (dest, "b/twice.txt", NULL);
  g_assert_cmpint (g_stat (one, &st1), ==, 0);
  g_assert_cmpint (g_stat (two, &st2), ==, 0);
  g_assert_cmpuint (st1.st_ino, ==, st2.st_ino);
  g_assert_true (g_file_get_contents (two, &data, NULL, NULL));
  g_assert_cmpstr (data, ==, "shared\n");
  g_clear_pointer (&data, g_free);
  g_assert_true (g_file_get_contents (twice, &data, NULL, NULL));
  g_assert_cmpstr (data, ==, "second version\n");
  sat_rm_rf (top);
  sat_rm_rf (dest);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/docker-tar/apply/empty-stale-and-up-to-date", test_apply_empty_and_stale);
  g_test_add_func ("/docker-tar/apply/hard-link-to-queued-file-and-name-twice", test_apply_links_and_duplicates);
  return g_test_run ();
}
