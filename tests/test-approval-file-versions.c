/* test-approval-file-versions.c: the versions a file store replaces. An
 * atomic write leaves the replaced version under its temp name, and the
 * store writes its next version into it unless a reader holds it: no
 * inode is freed or made per write, no reader's version changes under it,
 * and nothing is left behind.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "approval-test-support.h"

#define RUN "run-1"
#define OTHER_RUN "run-2"

static ino_t
inode_of (const char *dir,
          const char *run)
{
  g_autofree char *name = g_strconcat (run, ".json", NULL);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  struct stat st;

  g_assert_cmpint (lstat (path, &st), ==, 0);
  return st.st_ino;
}

/* Every name in @dir, the held temp files too. */
static guint
count_all_entries (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  guint count = 0;

  g_assert_nonnull (d);
  while (g_dir_read_name (d) != NULL)
    count++;
  return count;
}

static void
save_new_request (SubagentApprovalSink *sink,
                  const char           *run,
                  const char           *target)
{
  g_autoptr(SubagentApprovalRequest) request = ats_make_request (run, "delete_file", target);

  ats_save_one (sink, run, request);
}

static GBytes *
read_fd (int fd)
{
  g_autoptr(GByteArray) data = g_byte_array_new ();
  guint8 buf[4096];
  off_t offset = 0;
  ssize_t n;

  while ((n = pread (fd, buf, sizeof buf, offset)) > 0)
    {
      g_byte_array_append (data, buf, (guint) n);
      offset += n;
    }
  g_assert_cmpint (n, ==, 0);
  return g_byte_array_free_to_bytes (g_steal_pointer (&data));
}

/* The version a write replaced is the next write's file, for another run
 * too; the directory holds one kept version, held, and it goes with the
 * sink. */
static void
test_replaced_version_is_written_again (Fixture       *f,
                                        gconstpointer  data)
{
  g_autoptr(GPtrArray) run_requests = NULL;
  g_autoptr(GPtrArray) other_requests = NULL;
  g_auto(GStrv) entries = NULL;
  ino_t first;

  save_new_request (f->sink, RUN, "/a");
  first = inode_of (f->dir, RUN);
  save_new_request (f->sink, RUN, "/b");
  g_assert_cmpuint (inode_of (f->dir, RUN), !=, first);
  /* The run's file and lock, and the replaced version under a temp name,
   * held for the next write (so ats_dir_entries() leaves it out). */
  g_assert_cmpuint (count_all_entries (f->dir), ==, 3);
  entries = ats_dir_entries (f->dir);
  g_assert_cmpuint (g_strv_length (entries), ==, 2);

  /* A new file is a rename: the kept version becomes it, none is left. */
  save_new_request (f->sink, OTHER_RUN, "/c");
  g_assert_cmpuint (inode_of (f->dir, OTHER_RUN), ==, first);
  g_assert_cmpuint (count_all_entries (f->dir), ==, 4);
  save_new_request (f->sink, OTHER_RUN, "/d");
  g_assert_cmpuint (count_all_entries (f->dir), ==, 5);

  /* What every reader sees: each run's own requests, whole. */
  run_requests = ats_load (f->sink, RUN);
  other_requests = ats_load (f->sink, OTHER_RUN);
  g_assert_cmpuint (run_requests->len, ==, 2);
  g_assert_cmpuint (other_requests->len, ==, 2);

  g_clear_object (&f->sink);
  g_assert_cmpuint (count_all_entries (f->dir), ==, 4);
  f->sink = ats_new_sink (f->root, data);
}

/* A reader that holds the version it read (a shared flock, as the store's
 * readers do) keeps it as it was: the writer takes another inode. */
static void
test_held_version_is_left_alone (Fixture       *f,
                                 gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->dir, RUN ".json", NULL);
  g_autoptr(GBytes) before = NULL;
  g_autoptr(GBytes) after = NULL;
  g_autoptr(GPtrArray) requests = NULL;
  struct stat held;
  int fd;

  save_new_request (f->sink, RUN, "/a");
  fd = open (path, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (flock (fd, LOCK_SH), ==, 0);
  g_assert_cmpint (fstat (fd, &held), ==, 0);
  before = read_fd (fd);

  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *target = g_strdup_printf ("/b%u", i);

      save_new_request (f->sink, RUN, target);
      save_new_request (f->sink, OTHER_RUN, target);
      g_assert_cmpuint (inode_of (f->dir, RUN), !=, held.st_ino);
      g_assert_cmpuint (inode_of (f->dir, OTHER_RUN), !=, held.st_ino);
    }
  after = read_fd (fd);
  g_assert_true (g_bytes_equal (before, after));
  close (fd);

  requests = ats_load (f->sink, RUN);
  g_assert_cmpuint (requests->len, ==, 4);
}

/* Prune removes the temp files of dead writers, never the version a live
 * store holds for its next write. */
static void
test_prune_spares_held_versions (Fixture       *f,
                                 gconstpointer  data)
{
  g_autofree char *stale = g_build_filename (f->dir, "." RUN ".json.Dead01", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) requests = NULL;

  save_new_request (f->sink, RUN, "/a");
  save_new_request (f->sink, RUN, "/b");
  g_assert_true (g_file_set_contents (stale, "{", -1, NULL));
  g_assert_cmpuint (count_all_entries (f->dir), ==, 4);

  g_assert_cmpuint (subagent_approval_sink_prune_stale (f->sink, G_TIME_SPAN_DAY, &error), ==, 0);
  g_assert_no_error (error);
  g_assert_false (g_file_test (stale, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (count_all_entries (f->dir), ==, 3);

  /* The kept version still takes the next write. */
  save_new_request (f->sink, RUN, "/c");
  g_assert_cmpuint (count_all_entries (f->dir), ==, 3);
  requests = ats_load (f->sink, RUN);
  g_assert_cmpuint (requests->len, ==, 3);
}

/* A version locked exclusively is a writer's: while it is held a reader
 * waits, and then reads what the writer left at the name. Here the test is
 * the writer: it locks the run's file, writes another document into it,
 * and puts the real one back before unlocking. */
typedef struct {
  SubagentApprovalSink *sink;
  GPtrArray *requests;
  gint done;
} Load;

static gpointer
load_thread (gpointer data)
{
  Load *load = data;

  load->requests = ats_load (load->sink, RUN);
  g_atomic_int_set (&load->done, 1);
  return NULL;
}

static void
write_in_place (int     fd,
                GBytes *contents)
{
  gsize length = 0;
  const char *bytes = g_bytes_get_data (contents, &length);

  g_assert_cmpint (pwrite (fd, bytes, length, 0), ==, (gssize) length);
  g_assert_cmpint (ftruncate (fd, (off_t) length), ==, 0);
}

static void
test_reader_waits_for_writer_lock (Fixture       *f,
                                   gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->dir, RUN ".json", NULL);
  g_autoptr(SubagentApprovalSink) reader = ats_new_sink (f->root, data);
  g_autoptr(GBytes) one = NULL;
  g_autoptr(GBytes) two = NULL;
  Load load = { reader, NULL, 0 };
  GThread *thread;
  char *contents;
  gsize length;
  int fd;

  save_new_request (f->sink, RUN, "/a");
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  one = g_bytes_new_take (contents, length);
  save_new_request (f->sink, RUN, "/b");
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  two = g_bytes_new_take (contents, length);

  fd = open (path, O_RDWR | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (flock (fd, LOCK_EX), ==, 0);
  write_in_place (fd, one);
  thread = g_thread_new ("load", load_thread, &load);
  g_usleep (100 * 1000);
  g_assert_cmpint (g_atomic_int_get (&load.done), ==, 0);
  write_in_place (fd, two);
  g_assert_cmpint (flock (fd, LOCK_UN), ==, 0);
  g_thread_join (thread);
  close (fd);
  g_assert_cmpuint (load.requests->len, ==, 2);
  g_ptr_array_unref (load.requests);
}

/* A version at the name whose lock nobody lets go (its writer died right
 * after the rename, and a child it forked holds the descriptor) is read
 * as it is after a while, not waited for forever. */
static void
test_reader_outwaits_stuck_lock (Fixture       *f,
                                 gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->dir, RUN ".json", NULL);
  g_autoptr(SubagentApprovalSink) reader = ats_new_sink (f->root, data);
  g_autoptr(GPtrArray) requests = NULL;
  gint64 start;
  int fd;

  save_new_request (f->sink, RUN, "/a");
  fd = open (path, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (flock (fd, LOCK_EX), ==, 0);
  start = g_get_monotonic_time ();
  requests = ats_load (reader, RUN);
  g_assert_cmpuint (requests->len, ==, 1);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 100 * 1000);
  close (fd);
}

/* Readers of a run written over and over, from another thread, always get
 * a whole document of that run (never one being written, nor another
 * run's). A race the timing rarely opens: this checks the whole path under
 * load (and under ASan and valgrind); reader-waits-for-writer-lock is what
 * fails at once without the readers' lock. The writes are counted, so
 * that the files stay small and the test takes as long under valgrind as
 * the writes do. */
#define WRITES 120

typedef struct {
  SubagentApprovalSink *sink;
  gint done;
} Writer;

static gpointer
writer_thread (gpointer data)
{
  Writer *w = data;

  for (guint i = 0; i < WRITES; i++)
    {
      g_autofree char *target = g_strdup_printf ("/w%u", i);

      save_new_request (w->sink, (i % 2) ? RUN : OTHER_RUN, target);
    }
  g_atomic_int_set (&w->done, 1);
  return NULL;
}

static void
test_readers_see_whole_versions (Fixture       *f,
                                 gconstpointer  data)
{
  g_autoptr(SubagentApprovalSink) reader = ats_new_sink (f->root, data);
  g_autoptr(GPtrArray) final = NULL;
  Writer w = { f->sink, 0 };
  guint last = 0, loads = 0;
  GThread *thread;

  save_new_request (f->sink, RUN, "/first");
  thread = g_thread_new ("writer", writer_thread, &w);
  while (!g_atomic_int_get (&w.done) || loads < 50)
    {
      /* Another sink's load parses the file each time: a torn or foreign
       * document would fail or show the other run's requests. */
      g_autoptr(GPtrArray) requests = ats_load (reader, RUN);

      g_assert_cmpuint (requests->len, >=, last);
      for (guint j = 0; j < requests->len; j++)
        g_assert_cmpstr (subagent_approval_request_get_parent_run_id (requests->pdata[j]), ==, RUN);
      last = requests->len;
      loads++;
    }
  g_thread_join (thread);
  final = ats_load (reader, RUN);
  g_assert_cmpuint (final->len, ==, 1 + WRITES / 2);
  g_test_message ("%u loads beside %d writes", loads, WRITES);
  g_assert_cmpuint (f->integrity_failures, ==, 0);
}

#define ADD(path, func) \
  g_test_add ("/approval-file/versions/" path, Fixture, NULL, ats_fixture_set_up, func, ats_fixture_tear_down)

int
main (int   argc,
      char *argv[])
{
  g_unsetenv ("SUBAGENT_APPROVAL_HMAC_KEY");
  g_test_init (&argc, &argv, NULL);

  ADD ("replaced-version-is-written-again", test_replaced_version_is_written_again);
  ADD ("held-version-is-left-alone", test_held_version_is_left_alone);
  ADD ("prune-spares-held-versions", test_prune_spares_held_versions);
  ADD ("reader-waits-for-writer-lock", test_reader_waits_for_writer_lock);
  ADD ("reader-outwaits-a-stuck-lock", test_reader_outwaits_stuck_lock);
  ADD ("readers-see-whole-versions", test_readers_see_whole_versions);

  return g_test_run ();
}
