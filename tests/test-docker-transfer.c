/* test-docker-transfer.c: how the workspace reaches a container (bind after
 * a probe, or a copy both ways), and the docker regressions of issue 18
 * (process limits, why a child was killed, engine errors kept out of the
 * answer, bounded copy-back of a huge sparse file).
 *
 * Engines as in test-docker.c: DOCKER_HOST (binds), SUBAGENT_TEST_PODMAN_HOST
 * and SUBAGENT_TEST_REMOTE_HOST (a dockerd that cannot see this machine's
 * files: copies), all started by scripts/run-tests.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker-test-support.h"

static DtsEngine engines[] = {
  { "docker", "DOCKER_HOST", "bind", NULL, NULL },
  { "podman", "SUBAGENT_TEST_PODMAN_HOST", "bind", NULL, NULL },
  { "remote", "SUBAGENT_TEST_REMOTE_HOST", "copy", NULL, NULL },
};

static const char *
transfer_of (SubagentIsolationContext *context)
{
  const char *transfer = NULL;

  g_assert_true (g_variant_lookup (subagent_isolation_context_get_backend_data (context), "transfer", "&s",
                                   &transfer));
  return transfer;
}

/* Runs `sh -c script`; returns stdout, sets *status and *err. */
static char *
run_in (SubagentIsolationContext *context,
        const char               *script,
        int                      *status,
        char                    **err)
{
  const char * const argv[] = { "sh", "-c", script, NULL };
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  char *out = NULL;

  proc = subagent_isolation_context_spawnv (context, argv, NULL,
                                            G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                            G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, err, &error);
  g_assert_no_error (error);
  *status = g_subprocess_get_exit_status (proc);
  return out;
}

/* ---- transfer ------------------------------------------------------------- */

static void
test_auto_chooses_by_probe (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, "auto-1", 0, NULL, NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *listing = NULL;
  int status = -1;

  context = dts_prepare (request, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (transfer_of (context), ==, e->transfer);
  /* The probe's nonce file is gone from both sides. */
  listing = run_in (context, "ls -A /workspace", &status, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_null (strstr (listing, ".subagent-probe-"));
  g_assert_nonnull (strstr (listing, "existing.txt"));
  {
    g_autoptr(GDir) dir = g_dir_open (subagent_isolation_context_get_child_root (context), 0, NULL);
    const char *name;

    g_assert_nonnull (dir);
    while ((name = g_dir_read_name (dir)) != NULL)
      g_assert_false (g_str_has_prefix (name, ".subagent-probe-"));
  }
  subagent_isolation_context_cleanup (context);
  dts_assert_nothing_left (e, "io.subagent.session=auto-1", parent);
  sat_rm_rf (parent);
}

/* The defect: an engine that cannot see the directory, bind forced, used
 * to give the child an empty /workspace and report `complete`. */
static void
test_bind_forced_on_blind_engine_is_an_error (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request =
    dts_make_request (e, parent, "blind-1", 0, NULL, "transfer", "bind", NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *root = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *label = NULL;

  context = dts_prepare (request, &error);
  g_assert_null (context);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, e->host));
  g_assert_nonnull (strstr (error->message, "cannot see the host directory"));
  g_assert_nonnull (strstr (error->message, "docker.transfer"));
  dts_assert_nothing_left (e, "io.subagent.session=blind-1", parent);
  g_clear_error (&error);

  /* Through the manager: an error result, never `complete`. */
  root = dts_make_parent ();
  dts_write_docker_def (e, root, "writer", "echo x > /workspace/new.txt", "transfer: bind");
  manager = subagent_manager_new (root, &error);
  g_assert_no_error (error);
  result = dts_run_def (manager, "writer", NULL, NULL);
  g_test_message ("status %d: %s", subagent_run_result_get_status (result), subagent_run_result_get_message (result));
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_ERROR);
  g_assert_nonnull (strstr (subagent_run_result_get_message (result), "cannot see the host directory"));
  label = g_strdup_printf ("io.subagent.parent-run=%s", subagent_manager_get_run_id (manager));
  dts_assert_nothing_left (e, label, root);
  sat_rm_rf (root);
  sat_rm_rf (parent);
}

static void
assert_file (const char *root,
             const char *rel,
             const char *content)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, content);
}

/* Copy both ways: additions, changes, deletions (files and directories),
 * links, modes and long names come back into the host's tree. */
static void
test_copy_round_trip (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request =
    dts_make_request (e, parent, "copy-1", 0, NULL, "transfer", "copy", NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *long_name = g_strnfill (150, 'n');
  g_autofree char *script = NULL;
  g_autofree char *long_rel = NULL;
  g_autofree char *link = NULL;
  g_autofree char *link_path = NULL;
  g_autofree char *exec_path = NULL;
  const char *tree;
  GStatBuf st;
  int status = -1;

  sat_write_file (parent, "gone.txt", "to be deleted\n");
  sat_write_file (parent, "dir-gone/inner.txt", "inner\n");
  context = dts_prepare (request, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (transfer_of (context), ==, "copy");
  tree = subagent_isolation_context_get_child_root (context);

  script = g_strdup_printf ("set -e; cat sub/nested.txt; id -u; ls -ld /workspace | cut -c1-10; "
                            "echo second line >> existing.txt; rm gone.txt; rm -r dir-gone; "
                            "mkdir -p new/deep; echo deep > new/deep/file.txt; ln -s new/deep/file.txt link; "
                            "echo run > tool.sh; chmod 755 tool.sh; mkdir -p long; echo long > long/%s",
                            long_name);
  out = run_in (context, script, &status, &err);
  g_test_message ("out: %s err: %s", out, err);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "nested\n65534\ndrwx"));

  assert_file (tree, "existing.txt", "first line\nsecond line\n");
  assert_file (tree, "new/deep/file.txt", "deep\n");
  long_rel = g_strconcat ("long/", long_name, NULL);
  assert_file (tree, long_rel, "long\n");
  g_assert_false (dts_file_exists (tree, "gone.txt"));
  g_assert_false (dts_file_exists (tree, "dir-gone"));
  link_path = g_build_filename (tree, "link", NULL);
  link = g_file_read_link (link_path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (link, ==, "new/deep/file.txt");
  exec_path = g_build_filename (tree, "tool.sh", NULL);
  g_assert_cmpint (g_stat (exec_path, &st), ==, 0);
  g_assert_true ((st.st_mode & 0100) != 0);
  /* The parent never changes. */
  g_assert_true (dts_file_exists (parent, "gone.txt"));

  subagent_isolation_context_cleanup (context);
  dts_assert_nothing_left (e, "io.subagent.session=copy-1", parent);
  sat_rm_rf (parent);
}

/* The review of a copy-mode run holds the child's deletions too. */
static void
test_copy_review_has_deletions (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = dts_make_parent ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *patch = NULL;
  g_autofree char *label = NULL;
  JsonObject *review;

  sat_write_file (root, "gone.txt", "to be deleted\n");
  dts_write_docker_def (e, root, "copier", "echo added > /workspace/new.txt; rm /workspace/gone.txt; echo done",
                        "transfer: copy");
  manager = subagent_manager_new (root, &error);
  g_assert_no_error (error);
  result = dts_run_def (manager, "copier", NULL, NULL);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  review = subagent_run_result_get_review (result);
  g_assert_nonnull (review);
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "patch_path"), &patch, NULL, NULL));
  g_assert_nonnull (strstr (patch, "+added"));
  g_assert_nonnull (strstr (patch, "deleted file mode"));
  g_assert_nonnull (strstr (patch, "-to be deleted"));
  label = g_strdup_printf ("io.subagent.parent-run=%s", subagent_manager_get_run_id (manager));
  dts_assert_nothing_left (e, label, root);
  sat_rm_rf (root);
}


/* ---- secrets left out of the container's workspace ------------------------ */

/* The parent's secrets never reach /workspace (bind: the host tree is a
 * copy without them; copy: nor does the tar), a child's own .env never
 * comes back, and the review shows neither as a change. */
static void
secrets_not_copied (DtsEngine  *e,
                    const char *transfer)
{
  g_autofree char *root = dts_make_parent ();
  g_autofree char *transfer_option = g_strdup_printf ("transfer: %s", transfer);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *patch = NULL;
  g_autofree char *status = NULL;
  g_autofree char *env_text = NULL;
  g_autofree char *env_path = NULL;
  JsonObject *review;

  sat_write_file (root, ".env", "TOKEN=parent\n");
  sat_write_file (root, "app/.env.local", "TOKEN=local\n");
  sat_write_file (root, "certs/tls.pem", "pem\n");
  sat_write_file (root, "certs/tls.key", "key\n");
  sat_write_file (root, "home/.ssh/id_ed25519", "ssh\n");
  sat_write_file (root, "id_rsa", "rsa\n");
  sat_write_file (root, "credentials.json", "{}\n");
  sat_write_file (root, ".netrc", "machine x\n");
  dts_write_docker_def (e, root, "secrets",
                        "cd /workspace; for f in .env app/.env.local certs/tls.pem certs/tls.key home/.ssh id_rsa "
                        "credentials.json .netrc; do if test -e $f; then echo LEAK $f; exit 3; fi; done; "
                        "test -f existing.txt || exit 4; echo child > .env; echo child > app/.env.local; "
                        "echo added > new.txt; echo done",
                        transfer_option);
  manager = subagent_manager_new (root, &error);
  g_assert_no_error (error);
  result = dts_run_def (manager, "secrets", NULL, NULL);
  g_test_message ("answer: %s", subagent_run_result_get_final_answer (result));
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  review = subagent_run_result_get_review (result);
  g_assert_nonnull (review);
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "patch_path"), &patch, NULL, NULL));
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "status_path"), &status, NULL, NULL));
  g_assert_nonnull (strstr (patch, "+added"));
  g_assert_null (strstr (patch, "deleted file mode"));
  g_assert_null (strstr (status, "deleted\t"));
  g_assert_null (strstr (patch, ".env"));
  env_path = g_build_filename (root, ".env", NULL);
  g_assert_true (g_file_get_contents (env_path, &env_text, NULL, NULL));
  g_assert_cmpstr (env_text, ==, "TOKEN=parent\n");
  sat_rm_rf (root);
}

static void
test_secrets_not_copied_bind (gconstpointer data)
{
  secrets_not_copied ((DtsEngine *) data, "bind");
}

static void
test_secrets_not_copied_copy (gconstpointer data)
{
  secrets_not_copied ((DtsEngine *) data, "copy");
}


/* A worktree workspace in copy mode: a secret committed to the repository
 * is in the worktree but not sent into the container, and the copy back
 * must not delete it from the worktree (the review would show it deleted). */
static void
test_secrets_worktree_copy_back_keeps_them (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = sat_make_git_repo ("existing.txt", "first line\n", ".env", "TOKEN=committed\n", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *patch = NULL;
  g_autofree char *status = NULL;
  JsonObject *review;

  dts_write_docker_def (e, root, "wtsecrets",
                        "cd /workspace; if test -e .env; then echo LEAK; exit 3; fi; echo added > new.txt; echo done",
                        "workspace: worktree, transfer: copy");
  manager = subagent_manager_new (root, &error);
  g_assert_no_error (error);
  result = dts_run_def (manager, "wtsecrets", NULL, NULL);
  g_test_message ("answer: %s", subagent_run_result_get_final_answer (result));
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  review = subagent_run_result_get_review (result);
  g_assert_nonnull (review);
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "patch_path"), &patch, NULL, NULL));
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "status_path"), &status, NULL, NULL));
  g_assert_nonnull (strstr (patch, "+added"));
  g_assert_null (strstr (status, "deleted\t"));
  g_assert_null (strstr (patch, ".env"));
  sat_rm_rf (root);
}

/* A docker context names the engine as the CLI reads it: DOCKER_CONFIG's
 * contexts/meta/<sha256 of the name>/meta.json. */
static void
test_context_names_the_engine (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autofree char *config = sat_make_temp_dir ("docker-config");
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "subagent-test-ctx", -1);
  g_autofree char *meta_rel = g_build_filename ("contexts", "meta", digest, "meta.json", NULL);
  g_autofree char *meta = g_strdup_printf ("{\"Name\":\"subagent-test-ctx\",\"Metadata\":{},"
                                           "\"Endpoints\":{\"docker\":{\"Host\":\"%s\",\"SkipTLSVerify\":false}}}",
                                           e->host);
  g_autofree char *old_config = g_strdup (g_getenv ("DOCKER_CONFIG"));
  g_autofree char *old_host = g_strdup (g_getenv ("DOCKER_HOST"));
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autoptr(SubagentIsolationRequest) unknown = NULL;
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  const char *host = NULL;

  sat_write_file (config, meta_rel, meta);
  g_setenv ("DOCKER_CONFIG", config, TRUE);
  g_unsetenv ("DOCKER_HOST");
  request = dts_make_request (e, parent, "ctx-1", 0, NULL, "host", NULL, "context", "subagent-test-ctx", NULL);
  context = dts_prepare (request, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (subagent_isolation_context_get_backend_data (context), "engine-host", "&s", &host));
  g_assert_cmpstr (host, ==, e->host);
  subagent_isolation_context_cleanup (context);

  unknown = dts_make_request (e, parent, "ctx-2", 0, NULL, "host", NULL, "context", "no-such-ctx", NULL);
  g_clear_object (&context);
  context = dts_prepare (unknown, &error);
  g_assert_null (context);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION);
  g_assert_nonnull (strstr (error->message, "“no-such-ctx” is unknown"));

  if (old_config != NULL)
    g_setenv ("DOCKER_CONFIG", old_config, TRUE);
  else
    g_unsetenv ("DOCKER_CONFIG");
  if (old_host != NULL)
    g_setenv ("DOCKER_HOST", old_host, TRUE);
  dts_assert_nothing_left (e, dts_parent_run_label (), parent);
  sat_rm_rf (config);
  sat_rm_rf (parent);
}

/* ---- issue 18 -------------------------------------------------------------- */

/* `truncate -s 200G` in a copy-mode child: the copy-back refuses the file
 * (an error result), and a 2 GiB sparse file within the limit comes back
 * sparse, streamed: the helper's peak RSS stays far below 200 MB. */
static void
test_issue18_sparse_200g_copy_back_bounded (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) huge_request =
    dts_make_request (e, parent, "sparse-1", 0, NULL, "transfer", "copy", NULL);
  g_autoptr(SubagentIsolationRequest) sparse_request =
    dts_make_request (e, parent, "sparse-2", 0, NULL, "transfer", "copy", "transfer_max_file", "4294967296", NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *path = NULL;
  struct rusage usage;
  GStatBuf st;
  int status = -1;

  context = dts_prepare (huge_request, &error);
  g_assert_no_error (error);
  out = run_in (context, "truncate -s 200G /workspace/sparse.bin && echo made", &status, &err);
  g_test_message ("200G: status %d, stderr %s", status, err);
  g_assert_cmpstr (out, ==, "made\n");
  g_assert_cmpint (status, ==, 125);
  g_assert_nonnull (strstr (err, "sparse.bin"));
  g_assert_nonnull (strstr (err, "transfer_max_file"));
  g_assert_nonnull (strstr (err, "not in the review"));
  subagent_isolation_context_cleanup (context);
  g_clear_object (&context);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  context = dts_prepare (sparse_request, &error);
  g_assert_no_error (error);
  out = run_in (context, "truncate -s 2G /workspace/sparse.bin && echo tail >> /workspace/sparse.bin", &status, &err);
  g_assert_cmpint (status, ==, 0);
  path = g_build_filename (subagent_isolation_context_get_child_root (context), "sparse.bin", NULL);
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpuint (st.st_size, ==, (G_GUINT64_CONSTANT (2) << 30) + 5);
  g_test_message ("2G sparse file back with %" G_GUINT64_FORMAT " bytes allocated", (guint64) st.st_blocks * 512);
  g_assert_cmpuint ((guint64) st.st_blocks * 512, <, 64 * 1024 * 1024);

  /* Every process this test waited for, the helpers included. */
  g_assert_cmpint (getrusage (RUSAGE_CHILDREN, &usage), ==, 0);
  g_test_message ("peak RSS of the children: %ld KiB", usage.ru_maxrss);
  g_assert_cmpint (usage.ru_maxrss, <, 200 * 1024);
  subagent_isolation_context_cleanup (context);
  dts_assert_nothing_left (e, dts_parent_run_label (), parent);
  sat_rm_rf (parent);
}

static void
test_issue18_pids_limit_default_512 (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, "pids-1", 0, NULL, NULL);
  g_autoptr(SubagentIsolationRequest) unlimited =
    dts_make_request (e, parent, "pids-2", 0, NULL, "pids_limit", "0", NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *limits = NULL;
  const char *pids_script = "if [ -f /sys/fs/cgroup/pids.max ]; then cat /sys/fs/cgroup/pids.max; "
                            "else cat /sys/fs/cgroup/pids/pids.max; fi; ulimit -n";
  int status = -1;

  context = dts_prepare (request, &error);
  g_assert_no_error (error);
  out = run_in (context, pids_script, &status, NULL);
  g_assert_cmpint (status, ==, 0);
  /* nofile only where the engine may set it (a warning says otherwise). */
  if (subagent_isolation_context_get_warnings (context)[0] == NULL)
    g_assert_cmpstr (out, ==, "512\n4096\n");
  else
    g_assert_true (g_str_has_prefix (out, "512\n"));
  limits = dts_engine_run (e, NULL, "container", "inspect", "--format", "{{.HostConfig.PidsLimit}}",
                           subagent_isolation_context_get_container_id (context), NULL);
  g_assert_cmpstr (limits, ==, "512");
  subagent_isolation_context_cleanup (context);
  g_clear_object (&context);
  g_clear_pointer (&out, g_free);

  context = dts_prepare (unlimited, &error);
  g_assert_no_error (error);
  out = run_in (context, pids_script, &status, NULL);
  g_assert_true (g_str_has_prefix (out, "max\n"));
  subagent_isolation_context_cleanup (context);
  dts_assert_nothing_left (e, dts_parent_run_label (), parent);
  sat_rm_rf (parent);
}

typedef struct {
  GSubprocess *proc;
  char *out, *err;
  gboolean done;
} Pending;

static void
on_communicated (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Pending *p = user_data;

  g_subprocess_communicate_utf8_finish (G_SUBPROCESS (source), result, &p->out, &p->err, NULL);
  p->done = TRUE;
}

/* Starts `sleep 600` in a fresh container, does `what` to the container
 * through the engine, and returns the status message's stderr. */
static char *
stderr_after (DtsEngine  *e,
              const char *parent,
              const char *key,
              const char *what,
              int        *status)
{
  g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, key, 0, NULL, NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  const char * const argv[] = { "sh", "-c", "touch /tmp/started; exec sleep 600", NULL };
  Pending p = { 0 };
  int tries;

  context = dts_prepare (request, &error);
  g_assert_no_error (error);
  p.proc = subagent_isolation_context_spawnv (context, argv, NULL,
                                              G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                                              &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8_async (p.proc, NULL, NULL, on_communicated, &p);
  for (tries = 0; tries < 500; tries++)
    {
      int s = 1;
      g_autofree char *seen = dts_engine_run (e, &s, "exec", subagent_isolation_context_get_container_id (context),
                                              "test", "-e", "/tmp/started", NULL);
      if (s == 0)
        break;
      g_usleep (G_USEC_PER_SEC / 20);
    }
  if (g_str_equal (what, "kill"))
    g_free (dts_engine_run (e, NULL, "kill", subagent_isolation_context_get_container_id (context), NULL));
  else
    g_free (dts_engine_run (e, NULL, "stop", "-t", "1", subagent_isolation_context_get_container_id (context), NULL));
  while (!p.done)
    g_main_context_iteration (NULL, TRUE);
  *status = g_subprocess_get_exit_status (p.proc);
  g_object_unref (p.proc);
  g_free (p.out);
  subagent_isolation_context_cleanup (context);
  return p.err;
}

static void
test_issue18_status_137_told_apart (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, "oom-1", 0, "32m", NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *oom = NULL;
  g_autofree char *killed = NULL;
  g_autofree char *stopped = NULL;
  int status = -1;

  /* OOM: a shell variable of 200 MB under a 32 MB limit. */
  context = dts_prepare (request, &error);
  g_assert_no_error (error);
  out = run_in (context, "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ${#x}", &status, &oom);
  g_test_message ("oom: %d %s", status, oom);
  g_assert_cmpint (status, ==, 137);
  g_assert_nonnull (strstr (oom, "OOM killer"));
  g_assert_nonnull (strstr (oom, "32m"));
  subagent_isolation_context_cleanup (context);

  killed = stderr_after (e, parent, "kill-1", "kill", &status);
  g_test_message ("kill: %d %s", status, killed);
  g_assert_cmpint (status, ==, 137);
  g_assert_nonnull (strstr (killed, "docker kill"));

  stopped = stderr_after (e, parent, "stop-1", "stop", &status);
  g_test_message ("stop: %d %s", status, stopped);
  g_assert_true (status == 137 || status == 143);
  g_assert_nonnull (strstr (stopped, "engine stopped"));
  dts_assert_nothing_left (e, dts_parent_run_label (), parent);
  sat_rm_rf (parent);
}

/* `OCI runtime exec failed … no such file` is the engine's, not the
 * child's: it goes to the message, never into final_answer. */
static void
test_issue18_engine_error_not_final_answer (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = dts_make_parent ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *config = g_strdup_printf ("docker: { image: \"%s\", host: \"%s\" }\n", dts_image (), e->host);
  g_autofree char *label = NULL;
  const char *answer, *message;

  sat_write_file (root, ".subagent/config.yaml", config);
  sat_write_file (root, ".subagent/agents/missing.yaml",
                  "name: missing\nisolation: docker\ntimeout_seconds: 120\ncommand: [\"/no/such/program\"]\n");
  manager = subagent_manager_new (root, &error);
  g_assert_no_error (error);
  result = dts_run_def (manager, "missing", NULL, NULL);
  answer = subagent_run_result_get_final_answer (result);
  message = subagent_run_result_get_message (result);
  g_test_message ("answer “%s”, message “%s”", answer, message);
  g_assert_cmpstr (subagent_run_result_get_stop_reason (result), ==, SUBAGENT_STOP_REASON_ERROR);
  g_assert_cmpstr (answer, ==, "");
  /* docker writes the engine's error into the stdout stream (the helper
   * moves it), podman into stderr: both end in the message. */
  g_assert_nonnull (strstr (message, "exec failed"));
  g_assert_nonnull (strstr (message, "/no/such/program: no such file"));
  label = g_strdup_printf ("io.subagent.parent-run=%s", subagent_manager_get_run_id (manager));
  dts_assert_nothing_left (e, label, root);
  sat_rm_rf (root);
}

/* workspace: worktree: what the child hides behind a .gitignore line it
 * added, or in a directory it made a repository, is in the review, as in
 * a snapshot's. */
static void
test_issue18_worktree_review_includes_ignored_and_nested (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = sat_make_git_repo ("existing.txt", "first line\n", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *patch = NULL;
  g_autofree char *label = NULL;
  JsonObject *review;

  dts_write_docker_def (e, root, "hider",
                        "cd /workspace; echo hidden.txt >> .gitignore; echo hidden > hidden.txt; "
                        "mkdir -p nested/.git; echo inner > nested/inner.txt; echo done",
                        "workspace: worktree");
  manager = subagent_manager_new (root, &error);
  g_assert_no_error (error);
  result = dts_run_def (manager, "hider", NULL, NULL);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  review = subagent_run_result_get_review (result);
  g_assert_nonnull (review);
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "patch_path"), &patch, NULL, NULL));
  g_test_message ("%s", patch);
  g_assert_nonnull (strstr (patch, "b/.gitignore"));
  g_assert_nonnull (strstr (patch, "b/hidden.txt"));
  g_assert_nonnull (strstr (patch, "+hidden"));
  g_assert_nonnull (strstr (patch, "b/nested/inner.txt"));
  g_assert_nonnull (strstr (patch, "+inner"));
  label = g_strdup_printf ("io.subagent.parent-run=%s", subagent_manager_get_run_id (manager));
  dts_assert_nothing_left (e, label, root);
  sat_rm_rf (root);
}

/* ---- main ------------------------------------------------------------------ */

int
main (int argc, char *argv[])
{
  static const struct {
    const char *path;
    GTestDataFunc func;
    const char *only;   /* NULL: every engine; else engines of that transfer */
  } tests[] = {
    { "auto-chooses-by-probe", test_auto_chooses_by_probe, NULL },
    { "context-names-the-engine", test_context_names_the_engine, NULL },
    { "bind-forced-on-blind-engine-is-an-error", test_bind_forced_on_blind_engine_is_an_error, "copy" },
    { "copy-round-trip-with-deletions-links-modes", test_copy_round_trip, NULL },
    { "copy-review-has-deletions", test_copy_review_has_deletions, NULL },
    { "secrets-not-copied-into-container/bind", test_secrets_not_copied_bind, "bind" },
    { "secrets-not-copied-into-container/docker-copy", test_secrets_not_copied_copy, NULL },
    { "secrets-not-copied-into-container/worktree-copy-back-keeps-them", test_secrets_worktree_copy_back_keeps_them,
      NULL },
    { "issue18-sparse-200g-copy-back-bounded", test_issue18_sparse_200g_copy_back_bounded, NULL },
    { "issue18-pids-limit-default-512", test_issue18_pids_limit_default_512, NULL },
    { "issue18-status-137-oom-kill-stop-told-apart", test_issue18_status_137_told_apart, NULL },
    { "issue18-engine-error-not-final-answer", test_issue18_engine_error_not_final_answer, NULL },
    { "issue18-worktree-review-includes-gitignored-and-nested-git",
      test_issue18_worktree_review_includes_ignored_and_nested, NULL },
  };
  int rc;

  g_test_init (&argc, &argv, NULL);
  dts_init ();
  for (guint i = 0; i < G_N_ELEMENTS (engines); i++)
    {
      if (!dts_engine_setup (&engines[i]))
        continue;
      for (guint t = 0; t < G_N_ELEMENTS (tests); t++)
        {
          g_autofree char *path = NULL;

          if (tests[t].only != NULL && !g_str_equal (tests[t].only, engines[i].transfer))
            continue;
          path = g_strdup_printf ("/docker-transfer/%s/%s", engines[i].name, tests[t].path);
          g_test_add_data_func (path, &engines[i], tests[t].func);
        }
    }
  rc = g_test_run ();
  for (guint i = 0; i < G_N_ELEMENTS (engines); i++)
    {
      g_strfreev (engines[i].argv);
      g_free (engines[i].host);
    }
  dts_shutdown ();
  return rc;
}
