/* test-review-streams.c: issue 18, items 1 and 5 — a hostile child's files
 * never take the host down during the review: files over the content limit
 * are recorded by size and digest, sparse files are summed without reading
 * their holes, FIFOs and sockets are listed as skipped, and a review that
 * fails ends the run with an error result after cleaning up.
 *
 * (The host's peak memory with a 200 GB sparse and a 1 GB real file is
 * measured by test-review-rss, in the slow suite.)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "test-support.h"

#define MiB (1024 * 1024)

static void
write_pattern (const char *dir,
               const char *rel,
               gsize       len,
               guint8      seed)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  g_autofree guchar *data = g_malloc (len);

  for (gsize i = 0; i < len; i++)
    data[i] = (guchar) ((i * 131 + seed) ^ (i >> 12));
  g_assert_true (g_file_set_contents (path, (const char *) data, len, NULL));
}

static void
make_sparse (const char *dir,
             const char *rel,
             goffset     size,
             goffset     data_at)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, size), ==, 0);
  if (data_at >= 0)
    g_assert_cmpint (pwrite (fd, "data", 4, data_at), ==, 4);
  close (fd);
}

static char *
read_at (const char *path)
{
  char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return text;
}

typedef struct {
  char *root;
  char *base;
  char *child;
} Dirs;

static void
dirs_set_up (Dirs *d)
{
  d->root = sat_make_temp_dir ("review-streams-root");
  d->base = sat_make_temp_dir ("review-streams-base");
  d->child = sat_make_temp_dir ("review-streams-child");
  sat_write_file (d->base, "README", "hello\n");
  sat_write_file (d->child, "README", "hello\n");
}

static void
dirs_tear_down (Dirs *d)
{
  sat_rm_rf (d->root);
  sat_rm_rf (d->base);
  sat_rm_rf (d->child);
  g_free (d->root);
  g_free (d->base);
  g_free (d->child);
}

/* A file over the limit is in the patch as a changed binary file with its
 * size and digest, not its content; one under it keeps its content. */
static void
test_over_limit_recorded_by_size_and_digest (void)
{
  Dirs d;
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentReview) review = NULL;
  g_autofree char *patch = NULL;
  g_autofree char *status = NULL;
  struct stat st;

  dirs_set_up (&d);
  write_pattern (d.child, "big.bin", 3 * MiB + 5, 1);
  write_pattern (d.child, "small.bin", 64 * 1024, 2);

  review = subagent_review_capture_full (d.root, "over-limit", d.base, NULL, NULL, d.child,
                                         1 * MiB, NULL, &error);
  g_assert_no_error (error);
  patch = read_at (subagent_review_get_patch_path (review));
  status = read_at (subagent_review_get_status_path (review));

  g_assert_nonnull (strstr (patch, "diff --git a/big.bin b/big.bin\nnew file mode 100644\n"
                                   "Binary files /dev/null and b/big.bin differ (content over the review limit of 1048576 bytes"));
  g_assert_nonnull (strstr (patch, "new size 3145733 blocks-sha256 "));
  g_assert_nonnull (strstr (patch, "diff --git a/small.bin b/small.bin"));
  g_assert_nonnull (strstr (patch, "GIT binary patch"));
  /* Nothing of big.bin's bytes: the patch is small. */
  g_assert_cmpint (stat (subagent_review_get_patch_path (review), &st), ==, 0);
  g_assert_cmpint (st.st_size, <, 200 * 1024);
  g_assert_nonnull (strstr (status, "added\tbig.bin\tbinary over-limit size 3145733 blocks-sha256 "));
  g_assert_nonnull (strstr (status, "added\tsmall.bin\tbinary\n"));
  g_assert_cmpuint (subagent_review_get_added (review), ==, 2);
  g_assert_cmpuint (subagent_review_get_binary (review), ==, 2);
  dirs_tear_down (&d);
}

/* The same bytes on both sides are no change, whether one side is sparse
 * and the other filled in; different bytes of the same size are. */
static void
test_over_limit_compares_by_content (void)
{
  Dirs d;
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentReview) review = NULL;
  g_autofree char *status = NULL;
  g_autofree guchar *zeros = g_malloc0 (4 * MiB);
  g_autofree char *dense = NULL;

  dirs_set_up (&d);
  make_sparse (d.base, "same.img", 4 * MiB, -1);
  dense = g_build_filename (d.child, "same.img", NULL);
  g_assert_true (g_file_set_contents (dense, (const char *) zeros, 4 * MiB, NULL));
  write_pattern (d.base, "changed.bin", 2 * MiB, 3);
  write_pattern (d.child, "changed.bin", 2 * MiB, 4);

  review = subagent_review_capture_full (d.root, "compare", d.base, NULL, NULL, d.child, 1 * MiB, NULL, &error);
  g_assert_no_error (error);
  status = read_at (subagent_review_get_status_path (review));
  g_assert_null (strstr (status, "same.img"));
  g_assert_nonnull (strstr (status, "modified\tchanged.bin\tbinary over-limit size 2097152 blocks-sha256 "));
  g_assert_cmpuint (subagent_review_get_files_changed (review), ==, 1);
  dirs_tear_down (&d);
}

/* 200 GB of holes: summed from the data alone, in well under a minute. */
static void
test_sparse_file_holes_not_read (void)
{
  Dirs d;
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentReview) review = NULL;
  g_autofree char *status = NULL;
  g_autofree char *patch = NULL;
  gint64 started = g_get_monotonic_time ();

  dirs_set_up (&d);
  make_sparse (d.child, "sparse.bin", G_GINT64_CONSTANT (200) * 1024 * 1024 * 1024, G_GINT64_CONSTANT (100) * 1024 * 1024 * 1024);

  review = subagent_review_capture (d.root, "sparse", d.base, NULL, NULL, d.child, NULL, &error);
  g_assert_no_error (error);
  status = read_at (subagent_review_get_status_path (review));
  patch = read_at (subagent_review_get_patch_path (review));
  g_assert_nonnull (strstr (status, "added\tsparse.bin\tbinary over-limit size 214748364800 blocks-sha256 "));
  g_assert_nonnull (strstr (patch, "Binary files /dev/null and b/sparse.bin differ"));
  /* Reading 200 GB of zeros would take minutes here; not a timing
   * assertion, a guard against hanging the suite. */
  g_assert_cmpint (g_get_monotonic_time () - started, <, 60 * G_USEC_PER_SEC);
  dirs_tear_down (&d);
}

/* Commit base: a tracked file over the limit that the child left alone is
 * not a change even when the index cannot vouch for it. */
static void
test_over_limit_tracked_unchanged (void)
{
  g_autofree char *repo = sat_make_git_repo ("README", "hello\n", NULL);
  g_autofree char *root = sat_make_temp_dir ("review-streams-root");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentReview) review = NULL;
  g_autofree char *status = NULL;
  g_autofree char *index = g_build_filename (repo, ".git", "index", NULL);

  write_pattern (repo, "tracked.bin", 2 * MiB, 7);
  g_free (sat_run (repo, FALSE, NULL, "git", "add", "tracked.bin", NULL));
  g_free (sat_run (repo, FALSE, NULL, "git", "commit", "-qm", "big", NULL));
  /* No stat cache: every file is read. */
  g_assert_cmpint (g_unlink (index), ==, 0);
  write_pattern (repo, "new.bin", 2 * MiB, 8);

  review = subagent_review_capture_full (root, "tracked", NULL, "HEAD", NULL, repo, 1 * MiB, NULL, &error);
  g_assert_no_error (error);
  status = read_at (subagent_review_get_status_path (review));
  g_assert_null (strstr (status, "tracked.bin"));
  g_assert_nonnull (strstr (status, "added\tnew.bin\tbinary over-limit size 2097152"));
  g_assert_cmpuint (subagent_review_get_files_changed (review), ==, 1);
  sat_rm_rf (repo);
  sat_rm_rf (root);
}

/* Item 5: a FIFO or a socket is listed in the .status as skipped (and the
 * review never blocks opening the FIFO). */
static void
test_fifo_and_socket_skipped (void)
{
  Dirs d;
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentReview) review = NULL;
  g_autofree char *status = NULL;
  g_autofree char *fifo = NULL;
  g_autofree char *sock_path = NULL;
  g_autofree char *run_dir = NULL;
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int sock;

  dirs_set_up (&d);
  fifo = g_build_filename (d.child, "pipe", NULL);
  g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
  run_dir = g_build_filename (d.child, "run", NULL);
  g_assert_cmpint (g_mkdir (run_dir, 0755), ==, 0);
  sock_path = g_build_filename (d.child, "run", "agent.sock", NULL);
  g_assert_cmpuint (strlen (sock_path), <, sizeof addr.sun_path);
  strcpy (addr.sun_path, sock_path);
  sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (bind (sock, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  sat_write_file (d.child, "run/real.txt", "x\n");

  review = subagent_review_capture (d.root, "specials", d.base, NULL, NULL, d.child, NULL, &error);
  close (sock);
  g_assert_no_error (error);
  status = read_at (subagent_review_get_status_path (review));
  g_assert_nonnull (strstr (status, "skipped\tpipe\tfifo\n"));
  g_assert_nonnull (strstr (status, "skipped\trun/agent.sock\tsocket\n"));
  g_assert_nonnull (strstr (status, "added\trun/real.txt\n"));
  g_assert_cmpuint (subagent_review_get_files_changed (review), ==, 1);
  dirs_tear_down (&d);
}

/* The content limit comes from config.yaml (review.max_file_size). */
static void
test_limit_from_config (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = json_from_string ("{\"review\": {\"max_file_size\": \"2MiB\"}}", &error);
  g_autoptr(SubagentConfig) config = NULL;
  g_autoptr(SubagentConfig) defaults = subagent_config_new ();
  g_autoptr(JsonNode) bad = json_from_string ("{\"review\": {\"max_file_size\": \"lots\"}}", NULL);
  g_autoptr(SubagentConfig) none = NULL;

  g_assert_no_error (error);
  config = subagent_config_new_from_json (json_node_get_object (node), "test", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (subagent_config_get_review_max_file_size (config), ==, 2 * MiB);
  g_assert_cmpuint (subagent_config_get_review_max_file_size (defaults), ==, SUBAGENT_REVIEW_DEFAULT_MAX_FILE_SIZE);
  none = subagent_config_new_from_json (json_node_get_object (bad), "test", &error);
  g_assert_null (none);
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "review.max_file_size"));
}

/* A review that cannot be written ends the run with an error result; the
 * workspace is cleaned up all the same, and the host lives on. */
static void
test_failed_review_is_error_result (void)
{
  g_autofree char *root = sat_make_temp_dir ("review-streams-fail");
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *snapshots = sat_make_temp_dir ("review-streams-snapshots");
  g_autofree char *snapshot_opt = g_strdup_printf ("snapshot_dir=%s", snapshots);
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GDir) left = NULL;
  JsonObject *result;
  int status;

  sat_write_file (root, "README", "hello\n");
  /* reviews/ is a file: the review cannot be written. */
  sat_write_file (root, ".subagent/reviews", "not a directory\n");
  status = sat_run_ctl (root, &out, &err, "run", "--json", "--isolation", "directory-snapshot",
                        "--option", snapshot_opt, "--option", "strategy=copy",
                        "--command", "sh -c 'echo changed > README'", "--", "x", NULL);
  g_assert_cmpint (status, !=, 0);
  node = json_from_string (out, NULL);
  g_assert_nonnull (node);
  result = json_node_get_object (node);
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "error");
  g_assert_nonnull (strstr (json_object_get_string_member_with_default (result, "message", ""), "review could not be taken"));
  /* Cleaned up: no snapshot left. */
  left = g_dir_open (snapshots, 0, NULL);
  g_assert_nonnull (left);
  g_assert_null (g_dir_read_name (left));
  sat_rm_rf (root);
  sat_rm_rf (snapshots);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/review-streams/over-limit/recorded-by-size-and-digest", test_over_limit_recorded_by_size_and_digest);
  g_test_add_func ("/review-streams/over-limit/compares-by-content", test_over_limit_compares_by_content);
  g_test_add_func ("/review-streams/over-limit/tracked-unchanged", test_over_limit_tracked_unchanged);
  g_test_add_func ("/review-streams/sparse-file/holes-not-read", test_sparse_file_holes_not_read);
  g_test_add_func ("/review-streams/limit-from-config", test_limit_from_config);
  g_test_add_func ("/review-streams/failed-review/error-result", test_failed_review_is_error_result);
  g_test_add_func ("/review-streams/fifo-and-socket-skipped", test_fifo_and_socket_skipped);
  return g_test_run ();
}
