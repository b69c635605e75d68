/* test-docker.c: the docker isolation backend against a real engine.
 *
 * The whole suite runs once per engine, each reached through its API:
 * /docker/docker/... always (DOCKER_HOST, binds), /docker/podman/... when
 * SUBAGENT_TEST_PODMAN_HOST names podman's service socket, and
 * /docker/remote/... when SUBAGENT_TEST_REMOTE_HOST names a dockerd on TCP
 * that cannot see this machine's files (copies) — scripts/run-tests starts
 * all three. The image is
 * $SUBAGENT_TEST_IMAGE (a local busybox import; nothing is ever pulled).
 * An engine that does not answer is a failure, never a skip:
 * scripts/run-tests starts a private dockerd (and prepares podman) first.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docker-test-support.h"
#include "model-test-support.h"

/* Each engine is reached through its API at the address its variable
 * holds: docker's own unix socket (binds), podman's service socket, and a
 * "remote" dockerd on TCP in another mount namespace (copies). */
static DtsEngine engines[] = {
  { "docker", "DOCKER_HOST", "bind", NULL, NULL },
  { "podman", "SUBAGENT_TEST_PODMAN_HOST", "bind", NULL, NULL },
  { "remote", "SUBAGENT_TEST_REMOTE_HOST", "copy", NULL, NULL },
};

/* ---- availability and errors -------------------------------------------- */

static void
test_available (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autoptr(SubagentIsolationProvider) provider = dts_provider ();
  g_autoptr(SubagentIsolationProvider) dead = NULL;
  g_autoptr(SubagentIsolationProvider) ssh = NULL;
  g_autoptr(GError) error = NULL;

  dead = g_object_new (G_OBJECT_TYPE (provider), "host", e->host, NULL);
  g_assert_true (subagent_isolation_provider_is_available (dead, &error));
  g_assert_no_error (error);

  /* No server at the address: not available, and it says where it looked. */
  g_object_set (dead, "host", DTS_DEAD_SOCKET, NULL);
  g_assert_false (subagent_isolation_provider_is_available (dead, &error));
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, DTS_DEAD_SOCKET));
  g_assert_nonnull (strstr (error->message, "option host"));
  g_clear_error (&error);

  /* ssh:// is refused with the way around it. */
  ssh = g_object_new (G_OBJECT_TYPE (provider), "host", "ssh://user@example.invalid", NULL);
  g_assert_false (subagent_isolation_provider_is_available (ssh, &error));
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION);
  g_assert_nonnull (strstr (error->message, "ssh -nNT -L"));
}


/* config.yaml's `docker: {host, transfer}` is what the provider the
 * manager makes uses: is_available asks the configured engine (not
 * DOCKER_HOST), prepare without a host option goes there with the
 * configured transfer, and a bad value fails at configure. */
static void
test_config_host_and_transfer (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autofree char *good = g_strdup_printf ("{\"host\": \"%s\", \"transfer\": \"%s\"}", e->host, e->transfer);
  g_autoptr(SubagentIsolationProvider) dead = NULL;
  g_autoptr(SubagentIsolationProvider) bad = NULL;
  g_autoptr(SubagentIsolationProvider) live = NULL;
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  const char *used = NULL;

  /* DOCKER_HOST names a live engine here: the config's dead one must win. */
  g_assert_nonnull (g_getenv ("DOCKER_HOST"));
  dead = dts_configured_provider ("{\"host\": \"" DTS_DEAD_SOCKET "\"}", parent, &error);
  g_assert_no_error (error);
  g_assert_false (subagent_isolation_provider_is_available (dead, &error));
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, DTS_DEAD_SOCKET));
  g_clear_error (&error);

  bad = dts_configured_provider ("{\"transfer\": \"carrier-pigeon\"}", parent, &error);
  g_assert_null (bad);
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "carrier-pigeon"));
  g_clear_error (&error);
  bad = dts_configured_provider ("{\"host\": 5}", parent, &error);
  g_assert_null (bad);
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  g_clear_error (&error);

  live = dts_configured_provider (good, parent, &error);
  g_assert_no_error (error);
  g_assert_true (subagent_isolation_provider_is_available (live, &error));
  g_assert_no_error (error);
  request = dts_make_request (e, parent, "cfg-host-1", 0, NULL, "host", NULL, NULL);
  context = subagent_isolation_provider_prepare (live, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (subagent_isolation_context_get_backend_data (context), "engine-host", "&s", &used));
  g_assert_cmpstr (used, ==, e->host);
  g_assert_true (g_variant_lookup (subagent_isolation_context_get_backend_data (context), "transfer", "&s", &used));
  g_assert_cmpstr (used, ==, e->transfer);
  subagent_isolation_context_cleanup (context);
  dts_assert_nothing_left (e, "io.subagent.session=cfg-host-1", parent);
  sat_rm_rf (parent);
}

static void
test_errors_missing_image (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request =
    dts_make_request (e, parent, "miss-img-1", 0, NULL, "image", "subagent-no-such-image:never", NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;

  context = dts_prepare (request, &error);
  g_assert_null (context);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION);
  g_assert_nonnull (strstr (error->message, "“subagent-no-such-image:never”"));
  g_assert_nonnull (strstr (error->message, "never pulls"));
  dts_assert_nothing_left (e, "io.subagent.session=miss-img-1", parent);
  sat_rm_rf (parent);
}

/* A tag seen once is trusted for a while; when it disappears, the failed
 * `run` still reports a missing image, and nothing is left. */
static void
test_errors_image_removed_after_use (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autofree char *tag = g_strdup_printf ("subagent-test-retag-%d:latest", (int) getpid ());
  g_autoptr(SubagentIsolationRequest) first = NULL;
  g_autoptr(SubagentIsolationRequest) second = NULL;
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *quoted = g_strdup_printf ("“%s”", tag);

  g_free (dts_engine_run (e, NULL, "tag", dts_image (), tag, NULL));
  first = dts_make_request (e, parent, "retag-1", 0, NULL, "image", tag, NULL);
  context = dts_prepare (first, &error);
  g_assert_no_error (error);
  subagent_isolation_context_cleanup (context);
  g_clear_object (&context);
  g_free (dts_engine_run (e, NULL, "rmi", tag, NULL));

  second = dts_make_request (e, parent, "retag-2", 0, NULL, "image", tag, NULL);
  context = dts_prepare (second, &error);
  g_assert_null (context);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION);
  g_assert_nonnull (strstr (error->message, quoted));
  dts_assert_nothing_left (e, dts_parent_run_label (), parent);
  sat_rm_rf (parent);
}

static void
test_errors_stopped_engine (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request =
    dts_make_request (e, parent, "dead-eng-1", 0, NULL, "host", DTS_DEAD_SOCKET, NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;

  context = dts_prepare (request, &error);
  g_assert_null (context);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, DTS_DEAD_SOCKET));
  dts_assert_nothing_left (e, "io.subagent.session=dead-eng-1", parent);
  sat_rm_rf (parent);
}

static void
test_errors_bad_memory_and_options (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  static const char * const bad_memory[] = { "12q", "64 m", "-5m", "0", "m", "1.5g", "64mb" };
  static const struct {
    const char *key, *value;
    int code;
    const char *says;
  } bad_options[] = {
    { "image", "", SUBAGENT_ISOLATION_ERROR_INVALID_OPTION, "docker.image" },
    { "image", "--privileged", SUBAGENT_ISOLATION_ERROR_INVALID_OPTION, "--privileged" },
    { "network", "-x", SUBAGENT_ISOLATION_ERROR_INVALID_OPTION, "“-x”" },
    { "user", "a b", SUBAGENT_ISOLATION_ERROR_INVALID_OPTION, "“a b”" },
    { "binary", "docker 'unclosed", SUBAGENT_ISOLATION_ERROR_INVALID_OPTION, "not a command line" },
    { "transfer", "rsync", SUBAGENT_ISOLATION_ERROR_INVALID_OPTION, "auto (the default), bind or copy" },
    { "pids_limit", "-1", SUBAGENT_ISOLATION_ERROR_INVALID_OPTION, "pids_limit" },
    { "host", "tcp://", SUBAGENT_ISOLATION_ERROR_INVALID_OPTION, "tcp://HOST:PORT" },
    { "workspace", "overlay", SUBAGENT_ISOLATION_ERROR_INVALID_OPTION, "snapshot (the default) or worktree" },
    { "workspace_dir", "relative/dir", SUBAGENT_ISOLATION_ERROR_INVALID_OPTION, "absolute" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad_memory); i++)
    {
      g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, "bad-mem-1", 0, bad_memory[i], NULL);
      g_autoptr(SubagentIsolationContext) context = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *quoted = g_strdup_printf ("“%s”", bad_memory[i]);

      context = dts_prepare (request, &error);
      g_assert_null (context);
      g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION);
      g_assert_nonnull (strstr (error->message, quoted));
      g_assert_nonnull (strstr (error->message, "512m"));
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad_options); i++)
    {
      g_autoptr(SubagentIsolationRequest) request =
        dts_make_request (e, parent, "bad-opt-1", 0, NULL, bad_options[i].key, bad_options[i].value, NULL);
      g_autoptr(SubagentIsolationContext) context = NULL;
      g_autoptr(GError) error = NULL;

      context = dts_prepare (request, &error);
      g_assert_null (context);
      g_assert_error (error, SUBAGENT_ISOLATION_ERROR, bad_options[i].code);
      g_assert_nonnull (strstr (error->message, bad_options[i].says));
    }
  dts_assert_nothing_left (e, dts_parent_run_label (), parent);
  sat_rm_rf (parent);
}

/* ---- prepare, spawn, cleanup --------------------------------------------- */

static void
test_prepare_locked_down (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, "locked-1", 0, NULL, NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) record = NULL;
  g_autofree char *labels = NULL;
  g_autofree char *inside = NULL;
  g_autofree char *expected_labels = NULL;
  const char *child_root;
  JsonObject *extra;

  context = dts_prepare (request, &error);
  g_assert_no_error (error);
  child_root = subagent_isolation_context_get_child_root (context);
  g_assert_cmpstr (subagent_isolation_context_get_isolation (context), ==, "docker");
  g_assert_cmpstr (subagent_isolation_context_get_container_path (context), ==, child_root);
  g_assert_nonnull (subagent_isolation_context_get_container_id (context));
  g_assert_true (g_str_has_prefix (child_root, dts_cache_home ()));
  /* A copy of the working tree, without the parent's state or repository. */
  g_assert_true (dts_file_exists (child_root, "sub/nested.txt"));
  g_assert_false (dts_file_exists (child_root, ".git"));
  g_assert_false (dts_file_exists (child_root, ".subagent"));

  labels = dts_engine_run (e, NULL, "container", "inspect", "--format",
                       "{{index .Config.Labels \"io.subagent.session\"}} "
                       "{{index .Config.Labels \"io.subagent.parent-run\"}} "
                       "{{index .Config.Labels \"io.subagent.owner-pid\"}} "
                       "{{index .Config.Labels \"io.subagent.owner-host\"}}",
                       subagent_isolation_context_get_container_id (context), NULL);
  expected_labels = g_strdup_printf ("locked-1 %s %d %s", dts_parent_run_id (), (int) getpid (), g_get_host_name ());
  g_assert_cmpstr (labels, ==, expected_labels);

  /* Non-root, no capabilities, no new privileges, in /workspace. */
  inside = dts_run_in (context, NULL, NULL, NULL,
                   "id -u; id -g; pwd; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status | tr -s '\\t' ' '");
  g_assert_cmpstr (inside, ==, "65534\n65534\n/workspace\nCapEff: 0000000000000000\nNoNewPrivs: 1\n");

  record = subagent_owner_record_load (parent, "locked-1", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (record, "kind"), ==, "container");
  g_assert_cmpstr (json_object_get_string_member (record, "resource"), ==, "subagent-locked-1");
  extra = json_object_get_object_member (record, "extra");
  g_assert_cmpstr (json_object_get_string_member (extra, "binary"), ==, "docker");
  g_assert_cmpstr (json_object_get_string_member (extra, "host"), ==, e->host);
  g_assert_true (g_str_has_prefix (child_root, json_object_get_string_member (extra, "workspace")));

  subagent_isolation_context_cleanup (context);
  subagent_isolation_context_cleanup (context);
  g_assert_true (subagent_isolation_context_is_cleaned_up (context));
  dts_assert_nothing_left (e, "io.subagent.session=locked-1", parent);
  sat_rm_rf (parent);
}

static void
test_spawn_runs_inside (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, "inside-1", 0, NULL, NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) envp = NULL;
  g_auto(GStrv) lines = NULL;
  g_autofree char *out = NULL;
  g_autofree char *host_cgroup = NULL;
  g_autofree char *written = NULL;
  g_autofree char *written_path = NULL;
  GStatBuf st;

  /* As a runner builds it: our environment (with TEST_HOST_ONLY_VAR, set
   * in main()) plus its own variables. */
  envp = g_get_environ ();
  g_assert_cmpstr (g_environ_getenv (envp, "TEST_HOST_ONLY_VAR"), ==, "host value");
  envp = g_environ_setenv (envp, "SUBAGENT_RUN_ID", "run-in-container", TRUE);
  envp = g_environ_setenv (envp, "SUBAGENT_CHILD_ROOT", "/host/path/not/inside", TRUE);
  envp = g_environ_setenv (envp, "SUBAGENT_APPROVAL_HMAC_KEY", "secret", TRUE);
  envp = g_environ_setenv (envp, "EXPLICIT_VALUE", "a b $c", TRUE);

  context = dts_prepare (request, &error);
  g_assert_no_error (error);
  out = dts_run_in (context, (const char * const *) envp, "from stdin\n", NULL,
                "hostname; cat /proc/self/cgroup | tr '\\n' ' '; echo; "
                "echo \"$SUBAGENT_RUN_ID|$SUBAGENT_CHILD_ROOT|${SUBAGENT_APPROVAL_HMAC_KEY-none}|$EXPLICIT_VALUE\"; "
                "echo \"${HOME-unset}|${PATH+has-path}|${TEST_HOST_ONLY_VAR-unset}\"; read line; echo \"$line\"; "
                "echo written inside > /workspace/made-inside.txt");
  lines = g_strsplit (out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), >=, 5);
  /* Another UTS namespace and another cgroup than this test's. */
  g_assert_cmpstr (lines[0], !=, g_get_host_name ());
  g_assert_true (g_file_get_contents ("/proc/self/cgroup", &host_cgroup, NULL, NULL));
  g_strdelimit (host_cgroup, "\n", ' ');
  g_assert_cmpstr (lines[1], !=, host_cgroup);
  /* SUBAGENT_* and what the caller set pass (the child root as the child
   * sees it); the approval key and the host's own environment do not. */
  g_assert_cmpstr (lines[2], ==, "run-in-container|/workspace|none|a b $c");
  g_assert_false (g_str_has_prefix (lines[3], g_get_home_dir ()));
  g_assert_true (g_str_has_suffix (lines[3], "|has-path|unset"));
  g_assert_cmpstr (lines[4], ==, "from stdin");

  /* The write landed in the workspace on the host: made by the container's
   * user (bind), or copied back when the process ended (copy). */
  written_path = g_build_filename (subagent_isolation_context_get_child_root (context), "made-inside.txt", NULL);
  g_assert_true (g_file_get_contents (written_path, &written, NULL, NULL));
  g_assert_cmpstr (written, ==, "written inside\n");
  g_assert_cmpint (g_stat (written_path, &st), ==, 0);
  g_assert_cmpuint (st.st_uid, ==, g_str_equal (e->transfer, "bind") ? 65534 : getuid ());

  subagent_isolation_context_cleanup (context);
  g_assert_false (g_file_test (written_path, G_FILE_TEST_EXISTS));
  dts_assert_nothing_left (e, "io.subagent.session=inside-1", parent);
  sat_rm_rf (parent);
}

static void
test_limits_visible (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, "limits-1", 0.5, "64m", NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_auto(GStrv) words = NULL;
  double quota, period;

  context = dts_prepare (request, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (subagent_isolation_context_get_cpu_quota (context), ==, 0.5);
  g_assert_cmpstr (subagent_isolation_context_get_memory_limit (context), ==, "64m");
  /* cgroup v2 (one hierarchy) or v1 (memory and cpu controllers). */
  out = dts_run_in (context, NULL, NULL, NULL,
                "if [ -f /sys/fs/cgroup/cgroup.controllers ]; then "
                "  echo v2 $(cat /sys/fs/cgroup/memory.max) $(cat /sys/fs/cgroup/cpu.max); "
                "else "
                "  echo v1 $(cat /sys/fs/cgroup/memory/memory.limit_in_bytes) "
                "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us); "
                "fi");
  g_test_message ("cgroup limits seen inside: %s", out);
  words = g_strsplit (g_strstrip (out), " ", -1);
  g_assert_cmpuint (g_strv_length (words), ==, 4);
  g_assert_cmpstr (words[1], ==, "67108864");
  quota = g_ascii_strtod (words[2], NULL);
  period = g_ascii_strtod (words[3], NULL);
  g_assert_cmpfloat (period, >, 0);
  g_assert_cmpfloat_with_epsilon (quota / period, 0.5, 0.001);

  subagent_isolation_context_cleanup (context);
  dts_assert_nothing_left (e, "io.subagent.session=limits-1", parent);
  sat_rm_rf (parent);
}

static char *
interfaces_seen (DtsEngine  *e,
                 const char *parent,
                 const char *key,
                 const char *network)
{
  g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, key, 0, NULL, "network", network, NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  char *out;

  context = dts_prepare (request, &error);
  g_assert_no_error (error);
  out = dts_run_in (context, NULL, NULL, NULL, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '");
  subagent_isolation_context_cleanup (context);
  return g_strstrip (out);
}

static void
test_network_none_unless_asked (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autofree char *none = interfaces_seen (e, parent, "net-none-1", NULL);
  g_autofree char *host = interfaces_seen (e, parent, "net-host-1", "host");

  g_assert_cmpstr (none, ==, "lo");
  /* Asked for the host's network, the child sees more than loopback. */
  g_assert_cmpstr (host, !=, "lo");
  g_assert_nonnull (strstr (host, "lo"));
  dts_assert_nothing_left (e, dts_parent_run_label (), parent);
  sat_rm_rf (parent);
}

static void
test_cleanup_after_container_died (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) killed_request = dts_make_request (e, parent, "died-1", 0, NULL, NULL);
  g_autoptr(SubagentIsolationRequest) removed_request = dts_make_request (e, parent, "gone-1", 0, NULL, NULL);
  g_autoptr(SubagentIsolationContext) killed = NULL;
  g_autoptr(SubagentIsolationContext) removed = NULL;
  g_autoptr(GError) error = NULL;

  killed = dts_prepare (killed_request, &error);
  g_assert_no_error (error);
  removed = dts_prepare (removed_request, &error);
  g_assert_no_error (error);
  /* One container stopped dead, the other removed behind our back. */
  g_free (dts_engine_run (e, NULL, "kill", subagent_isolation_context_get_container_id (killed), NULL));
  dts_remove_container (e, subagent_isolation_context_get_container_id (removed));

  subagent_isolation_context_cleanup (killed);
  subagent_isolation_context_cleanup (removed);
  subagent_isolation_context_cleanup (removed);
  dts_assert_nothing_left (e, dts_parent_run_label (), parent);
  sat_rm_rf (parent);
}

static void
test_cleanup_engine_unreachable (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, "unreach-1", 0, NULL, NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(SubagentIsolationContext) stranded = NULL;
  g_autoptr(GVariant) data_dead = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *still = NULL;
  g_autofree char *record = NULL;
  GVariantDict dict;

  context = dts_prepare (request, &error);
  g_assert_no_error (error);

  /* The same workspace, seen through an engine that does not answer. */
  g_variant_dict_init (&dict, subagent_isolation_context_get_backend_data (context));
  g_variant_dict_insert_value (&dict, "engine-host", g_variant_new_string (DTS_DEAD_SOCKET));
  data_dead = g_variant_ref_sink (g_variant_dict_end (&dict));
  stranded = g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                           "provider", subagent_isolation_context_get_provider (context),
                           "parent-root", subagent_isolation_context_get_parent_root (context),
                           "child-root", subagent_isolation_context_get_child_root (context),
                           "isolation", "docker",
                           "session-key", "unreach-1",
                           "container-id", subagent_isolation_context_get_container_id (context),
                           "backend-data", data_dead, NULL);
  subagent_isolation_context_cleanup (stranded);
  /* The container could not go, so its record stays for prune. */
  still = dts_containers_labelled (e, "io.subagent.session=unreach-1");
  g_assert_cmpstr (still, !=, "");
  record = subagent_owner_record_path (parent, "unreach-1");
  g_assert_true (g_file_test (record, G_FILE_TEST_EXISTS));

  subagent_isolation_context_cleanup (context);
  dts_assert_nothing_left (e, "io.subagent.session=unreach-1", parent);
  sat_rm_rf (parent);
}

static void
test_prepare_cancelled_leaves_nothing (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, "cancel-1", 0, NULL, NULL);
  g_autoptr(SubagentIsolationProvider) provider = dts_provider ();
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;

  g_cancellable_cancel (cancellable);
  context = subagent_isolation_provider_prepare (provider, request, cancellable, &error);
  g_assert_null (context);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  dts_assert_nothing_left (e, "io.subagent.session=cancel-1", parent);
  sat_rm_rf (parent);
}

/* ---- through the manager and subagentctl -------------------------------- */

/* The child wrote new.txt ("+@added") and appended "second line" to
 * existing.txt: the review patch holds exactly that, the parent neither. */
static void
assert_review_patch (SubagentRunResult *result,
                     const char        *root,
                     const char        *added)
{
  JsonObject *review = subagent_run_result_get_review (result);
  g_autofree char *patch = NULL;
  g_autofree char *added_line = g_strconcat ("+", added, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_nonnull (review);
  g_assert_true (g_file_get_contents (json_object_get_string_member (review, "patch_path"), &patch, NULL, &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (patch, "new.txt"));
  g_assert_nonnull (strstr (patch, added_line));
  g_assert_nonnull (strstr (patch, "+second line"));
  g_assert_null (strstr (patch, "nested.txt"));
  /* The parent is untouched: the change lives only in the review. */
  g_assert_false (dts_file_exists (root, "new.txt"));
}

static void
test_manager_review_patch (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = dts_make_root (e, "writer",
                                     "echo hello from the container > /workspace/new.txt; "
                                     "echo second line >> /workspace/existing.txt; echo finished");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = subagent_manager_new (root, &error);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *label = NULL;
  g_autofree char *reviews = g_build_filename (root, ".subagent", "reviews", NULL);
  const char *patch_path;

  g_assert_no_error (error);
  result = dts_run_def (manager, "writer", NULL, NULL);
  assert_review_patch (result, root, "hello from the container");
  patch_path = json_object_get_string_member (subagent_run_result_get_review (result), "patch_path");
  g_assert_true (g_str_has_prefix (patch_path, reviews));
  g_assert_true (g_str_has_suffix (patch_path, ".patch"));

  label = g_strdup_printf ("io.subagent.parent-run=%s", subagent_manager_get_run_id (manager));
  dts_assert_nothing_left (e, label, root);
  sat_rm_rf (root);
}

/* A model-backed child in a container: its Bash runs inside (another
 * hostname, the workspace as cwd), its file tools write the workspace on
 * the host side, and the review shows both. */
/* Isolated children get at most workspace-write, so the model's Bash asks:
 * answer as an approver would, from this process. */
static gboolean
approve_pending (gpointer data)
{
  g_autoptr(SubagentApprovalQueue) queue = subagent_approval_queue_try_get (subagent_manager_get_run_id (data));

  if (queue != NULL)
    subagent_approval_queue_approve_all_pending (queue, "test-docker");
  return G_SOURCE_CONTINUE;
}

static void
test_manager_model_child (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = dts_make_root (e, "unused", "true");
  g_autofree char *config = NULL;
  g_autofree char *docker_section = NULL;
  g_autoptr(MtsServer) server = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(JsonArray) requests = NULL;
  g_autofree char *patch = NULL;
  g_autofree char *label = NULL;
  JsonArray *messages;
  const char *bash;
  guint approver;

  g_setenv (MTS_KEY_ENV, MTS_KEY, TRUE);
  server = mts_server_start ("{\"steps\": ["
                             " {\"tool_calls\": ["
                             "   {\"name\": \"Bash\", \"arguments\": {\"command\": \"hostname; pwd; echo by bash > bash.txt; echo \\\"[$" MTS_KEY_ENV "]\\\"\"}, \"id\": \"b\"},"
                             "   {\"name\": \"Write\", \"arguments\": {\"file_path\": \"tool.txt\", \"content\": \"by the Write tool\\n\"}, \"id\": \"w\"}]},"
                             " {\"say\": \"done in the container\"}]}");
  config = sat_read_file (root, ".subagent/config.yaml");
  docker_section = g_strdup (config);
  mts_write_config (root, server, docker_section);
  sat_write_file (root, ".subagent/agents/modeler.yaml",
                  "name: modeler\nmodel: test\nisolation: docker\ntools: [Bash, Write]\npermission_mode: allow\n");
  {
    g_autofree char *with_mode = sat_read_file (root, ".subagent/config.yaml");
    g_autofree char *full = g_strconcat (with_mode, "permission_mode: allow\n", NULL);
    sat_write_file (root, ".subagent/config.yaml", full);
  }
  manager = subagent_manager_new (root, &error);
  g_assert_no_error (error);
  approver = g_timeout_add (50, approve_pending, manager);
  result = dts_run_def (manager, "modeler", NULL, NULL);
  g_source_remove (approver);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_COMPLETE);
  g_assert_cmpstr (subagent_run_result_get_final_answer (result), ==, "done in the container");

  requests = mts_server_records (server, "request");
  g_assert_cmpuint (json_array_get_length (requests), ==, 2);
  messages = json_object_get_array_member (json_object_get_object_member (json_array_get_object_element (requests, 1), "body"),
                                           "messages");
  bash = NULL;
  for (guint i = 0; i < json_array_get_length (messages); i++)
    {
      JsonObject *m = json_array_get_object_element (messages, i);
      if (g_strcmp0 (json_object_get_string_member_with_default (m, "tool_call_id", NULL), "b") == 0)
        bash = json_object_get_string_member (m, "content");
    }
  g_assert_nonnull (bash);
  {
    g_auto(GStrv) lines = g_strsplit (bash, "\n", -1);

    g_test_message ("Bash in the container said: %s", bash);
    g_assert_cmpuint (g_strv_length (lines), >=, 3);
    g_assert_cmpstr (lines[0], !=, g_get_host_name ());   /* inside the container */
    g_assert_cmpstr (lines[1], ==, "/workspace");
    g_assert_cmpstr (lines[2], ==, "[]");                 /* no API key inside */
  }
  g_assert_true (g_file_get_contents (json_object_get_string_member (subagent_run_result_get_review (result), "patch_path"),
                                      &patch, NULL, NULL));
  g_assert_nonnull (strstr (patch, "+by bash"));
  g_assert_nonnull (strstr (patch, "+by the Write tool"));
  g_assert_false (dts_file_exists (root, "tool.txt"));
  label = g_strdup_printf ("io.subagent.parent-run=%s", subagent_manager_get_run_id (manager));
  dts_assert_nothing_left (e, label, root);
  g_clear_object (&manager);
  sat_rm_rf (root);
}

static void
test_manager_failing_child (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = dts_make_root (e, "failer", "echo partial > /workspace/partial.txt; exit 3");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = subagent_manager_new (root, &error);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *label = NULL;

  g_assert_no_error (error);
  result = dts_run_def (manager, "failer", NULL, NULL);
  g_assert_cmpint (subagent_run_result_get_status (result), ==, SUBAGENT_RUN_STATUS_FAILED);
  label = g_strdup_printf ("io.subagent.parent-run=%s", subagent_manager_get_run_id (manager));
  dts_assert_nothing_left (e, label, root);
  sat_rm_rf (root);
}

static void
test_manager_cancelled_child (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = dts_make_root (e, "sleeper", "touch /workspace/started; exec sleep 600");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = subagent_manager_new (root, &error);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *label = NULL;
  SubagentRunStatus status;

  g_assert_no_error (error);
  result = dts_run_def (manager, "sleeper", cancellable, "started");
  status = subagent_run_result_get_status (result);
  g_assert_true (status == SUBAGENT_RUN_STATUS_CANCELLED || status == SUBAGENT_RUN_STATUS_PARTIAL);
  g_assert_cmpstr (subagent_run_result_get_stop_reason (result), ==, SUBAGENT_STOP_REASON_CANCELLED);
  label = g_strdup_printf ("io.subagent.parent-run=%s", subagent_manager_get_run_id (manager));
  dts_assert_nothing_left (e, label, root);
  sat_rm_rf (root);
}

/* ---- workspace: worktree ------------------------------------------------- */

static char *
git_output (const char *repo,
            const char *first_arg,
            ...)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = -1;
  va_list ap;

  g_ptr_array_add (args, (char *) "git");
  g_ptr_array_add (args, (char *) "-C");
  g_ptr_array_add (args, (char *) repo);
  va_start (ap, first_arg);
  for (const char *a = first_arg; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (args, (char *) a);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) args->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               &out, &err, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return g_strdup (g_strstrip (out));
}

/* No container, no worktree (directory or git's record), no subagent/
 * branch, no owner record, no docker workspace. */
static void
assert_no_worktree_left (DtsEngine  *e,
                         const char *label,
                         const char *root)
{
  g_autofree char *worktrees = g_build_filename (root, ".subagent", "worktrees", NULL);
  g_autofree char *branches = git_output (root, "branch", "--list", "subagent/*", NULL);
  g_autofree char *listed = git_output (root, "worktree", "list", "--porcelain", NULL);

  dts_assert_nothing_left (e, label, root);
  g_assert_cmpuint (dts_count_entries (worktrees), ==, 0);
  g_assert_cmpstr (branches, ==, "");
  g_assert_null (strstr (listed, ".subagent/worktrees"));
}

static char *
make_git_root (DtsEngine  *e,
               const char *def_name,
               const char *script)
{
  char *root = sat_make_git_repo ("existing.txt", "first line\n", "sub/nested.txt", "nested\n", NULL);

  dts_write_docker_def (e, root, def_name, script, "workspace: worktree");
  return root;
}

static void
test_worktree_review_patch (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = make_git_root (e, "wt-writer",
                                         "echo hello from the worktree > /workspace/new.txt; "
                                         "echo second line >> /workspace/existing.txt; echo finished");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentManager) manager = subagent_manager_new (root, &error);
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *label = NULL;

  g_assert_no_error (error);
  result = dts_run_def (manager, "wt-writer", NULL, NULL);
  assert_review_patch (result, root, "hello from the worktree");

  label = g_strdup_printf ("io.subagent.parent-run=%s", subagent_manager_get_run_id (manager));
  assert_no_worktree_left (e, label, root);
  sat_rm_rf (root);
}

static void
test_worktree_context (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = sat_make_git_repo ("existing.txt", "first line\n", NULL);
  g_autofree char *head = git_output (root, "rev-parse", "HEAD", NULL);
  g_autoptr(SubagentIsolationRequest) request =
    dts_make_request (e, root, "wt-ctx-1", 0, NULL, "workspace", "worktree", NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *real_root = realpath (root, NULL);
  const char *base_commit = NULL, *common_dir = NULL;
  g_autofree char *git_file = NULL;
  g_autofree char *git_before = NULL;
  g_autofree char *git_after = NULL;
  GVariant *backend;
  int status = -1;

  context = dts_prepare (request, &error);
  g_assert_no_error (error);
  git_file = g_build_filename (subagent_isolation_context_get_child_root (context), ".git", NULL);
  g_assert_true (g_str_has_prefix (subagent_isolation_context_get_child_root (context), real_root));
  g_assert_nonnull (strstr (subagent_isolation_context_get_child_root (context), "/.subagent/worktrees/"));
  backend = subagent_isolation_context_get_backend_data (context);
  g_assert_true (g_variant_lookup (backend, "base-commit", "&s", &base_commit));
  g_assert_cmpstr (base_commit, ==, head);
  g_assert_true (g_variant_lookup (backend, "common-dir", "&s", &common_dir));
  g_assert_true (g_str_has_prefix (common_dir, real_root));
  /* The child writes its worktree but not the `.git` file of the host's
   * review (bind: mounted read-only; copy: never copied in nor back);
   * git's own files are not there. */
  g_assert_true (g_file_get_contents (git_file, &git_before, NULL, NULL));
  out = dts_run_in (context, NULL, NULL, &status,
                    "id -u; echo made > /workspace/made.txt && cat /workspace/existing.txt; "
                    "if echo 'gitdir: /tmp' > /workspace/.git; then echo git-file-writable; fi; "
                    "test -e \"$(sed 's/^gitdir: //' /workspace/.git)\" || echo no-git-dir");
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "65534"));
  g_assert_nonnull (strstr (out, "first line"));
  if (g_str_equal (e->transfer, "bind"))
    {
      g_assert_null (strstr (out, "git-file-writable"));
      g_assert_nonnull (strstr (out, "no-git-dir"));
    }
  g_assert_true (g_file_get_contents (git_file, &git_after, NULL, NULL));
  g_assert_cmpstr (git_after, ==, git_before);
  g_assert_true (dts_file_exists (subagent_isolation_context_get_child_root (context), "made.txt"));
  g_assert_false (dts_file_exists (root, "made.txt"));

  subagent_isolation_context_cleanup (context);
  subagent_isolation_context_cleanup (context);
  assert_no_worktree_left (e, "io.subagent.session=wt-ctx-1", root);
  sat_rm_rf (root);
}

/* `run` refuses the container after the worktree was made: both go. */
static void
test_worktree_failed_run_leaves_nothing (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = sat_make_git_repo ("existing.txt", "first line\n", NULL);
  g_autoptr(SubagentIsolationRequest) request =
    dts_make_request (e, root, "wt-fail-1", 0, NULL, "workspace", "worktree", "network", "no-such-network-h14", NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;

  context = dts_prepare (request, &error);
  g_assert_null (context);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED);
  assert_no_worktree_left (e, "io.subagent.session=wt-fail-1", root);
  sat_rm_rf (root);
}

static void
test_prune_after_sigkill (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = dts_make_root (e, "sleeper", "touch /workspace/started; exec sleep 600");
  g_autofree char *unrelated = g_strdup_printf ("unrelated-%s-%d", e->name, (int) getpid ());
  g_autofree char *owners = g_build_filename (root, ".subagent", "owners", NULL);
  g_autofree char *workspaces = dts_workspace_dir ();
  g_autofree char *owner_label = NULL;
  g_autofree char *leftover = NULL;
  g_autofree char *limits = NULL;
  g_autofree char *out = NULL;
  g_autofree char *running = NULL;
  g_autoptr(GSubprocess) host = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;
  gint64 deadline = g_get_monotonic_time () + DTS_WAIT_DEADLINE_USEC;
  JsonArray *entries;
  guint removed = 0, skipped = 0;

  g_free (dts_engine_run (e, NULL, "run", "-d", "--pull", "never", "--name", unrelated, "--network", "none",
                      "--entrypoint", "sleep", dts_image (), "600", NULL));
  dts_forge_dead_record (e, root, "forged-1", unrelated);

  host = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                           sat_subagentctl (), "run", "--root", root, "--def", "sleeper", "--isolation", "docker",
                           "--cpu-quota", "0.5", "--memory-limit", "64m", "--", "sleep a while", NULL);
  g_assert_no_error (error);
  owner_label = g_strdup_printf ("io.subagent.owner-pid=%s", g_subprocess_get_identifier (host));
  /* Wait until the child runs in its container, then kill the host dead. */
  while (!dts_workspace_file_seen ("started"))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (G_USEC_PER_SEC / 50);
    }
  leftover = dts_containers_labelled (e, owner_label);
  g_assert_cmpstr (leftover, !=, "");
  limits = dts_engine_run (e, NULL, "container", "inspect", "--format", "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}}",
                       leftover, NULL);
  g_assert_cmpstr (limits, ==, "500000000 67108864");
  g_subprocess_force_exit (host);
  g_subprocess_wait (host, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_term_sig (host), ==, SIGKILL);
  g_clear_pointer (&leftover, g_free);
  leftover = dts_containers_labelled (e, owner_label);
  g_assert_cmpstr (leftover, !=, "");
  g_assert_cmpuint (dts_count_entries (owners), ==, 2);

  out = dts_prune_json (root);
  node = json_from_string (out, &error);
  g_assert_no_error (error);
  entries = json_object_get_array_member (json_node_get_object (node), "entries");
  for (guint i = 0; i < json_array_get_length (entries); i++)
    {
      JsonObject *entry = json_array_get_object_element (entries, i);
      const char *action = json_object_get_string_member (entry, "action");

      if (g_str_equal (json_object_get_string_member (entry, "session_key"), "forged-1"))
        {
          g_assert_cmpstr (action, ==, "skipped");
          g_assert_nonnull (strstr (json_object_get_string_member (entry, "reason"), "label"));
          skipped++;
        }
      else
        {
          g_assert_cmpstr (action, ==, "removed");
          g_assert_cmpstr (json_object_get_string_member (entry, "kind"), ==, "container");
          removed++;
        }
    }
  g_assert_cmpuint (removed, ==, 1);
  g_assert_cmpuint (skipped, ==, 1);

  /* The leftover and its workspace are gone; the unrelated container runs on. */
  g_clear_pointer (&leftover, g_free);
  leftover = dts_containers_labelled (e, owner_label);
  g_assert_cmpstr (leftover, ==, "");
  g_assert_cmpuint (dts_count_entries (workspaces), ==, 0);
  g_assert_cmpuint (dts_count_entries (owners), ==, 1);
  running = dts_engine_run (e, NULL, "container", "inspect", "--format", "{{.State.Running}}", unrelated, NULL);
  g_assert_cmpstr (running, ==, "true");
  dts_remove_container (e, unrelated);
  sat_rm_rf (root);
}

/* ---- main ----------------------------------------------------------------- */

static void
test_engine_answers (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autoptr(SubagentIsolationProvider) provider = dts_provider ();
  g_autoptr(SubagentIsolationProvider) probe = g_object_new (G_OBJECT_TYPE (provider), "host", e->host, NULL);
  g_autoptr(GError) error = NULL;

  /* Reached only when the engine did not answer at start-up. */
  subagent_isolation_provider_is_available (probe, &error);
  g_assert_no_error (error);
}

static void
add_engine_tests (DtsEngine  *e)
{
  static const struct {
    const char *path;
    GTestDataFunc func;
  } tests[] = {
    { "available/server-answers-failures-name-binary-and-host", test_available },
    { "prepare/locked-down-labelled-container", test_prepare_locked_down },
    { "prepare/cancelled-leaves-nothing", test_prepare_cancelled_leaves_nothing },
    { "spawn/runs-inside-with-explicit-env", test_spawn_runs_inside },
    { "limits/cpu-and-memory-visible-inside", test_limits_visible },
    { "network/none-unless-asked", test_network_none_unless_asked },
    { "cleanup/after-container-died-or-vanished", test_cleanup_after_container_died },
    { "cleanup/engine-unreachable-keeps-record", test_cleanup_engine_unreachable },
    { "config/host-and-transfer-honoured", test_config_host_and_transfer },
    { "errors/missing-image", test_errors_missing_image },
    { "errors/image-removed-after-use", test_errors_image_removed_after_use },
    { "errors/stopped-engine", test_errors_stopped_engine },
    { "errors/bad-memory-and-options", test_errors_bad_memory_and_options },
    { "manager/review-patch-of-container-write", test_manager_review_patch },
    { "manager/failing-child-leaves-nothing", test_manager_failing_child },
    { "manager/model-child-bash-inside", test_manager_model_child },
    { "manager/cancelled-child-leaves-nothing", test_manager_cancelled_child },
    { "prune/sigkill-leftover-reclaimed-nothing-else", test_prune_after_sigkill },
    { "worktree/context-base-commit-and-read-only-git-file", test_worktree_context },
    { "worktree/failed-run-leaves-no-worktree", test_worktree_failed_run_leaves_nothing },
    { "worktree/manager-review-patch-and-nothing-left", test_worktree_review_patch },
  };
  g_autoptr(SubagentIsolationProvider) provider = dts_provider ();
  g_autoptr(SubagentIsolationProvider) probe = g_object_new (G_OBJECT_TYPE (provider), "host", e->host, NULL);
  g_autoptr(GError) error = NULL;

  if (!subagent_isolation_provider_is_available (probe, &error))
    {
      g_autofree char *path = g_strdup_printf ("/docker/%s/engine-answers", e->name);

      g_printerr ("\n*** test-docker: NO %s ENGINE ANSWERS (%s): the %s suite cannot run and FAILS. "
                  "scripts/run-tests starts a private engine; or run meson test --no-suite docker. ***\n\n",
                  e->name, error->message, e->name);
      g_test_add_data_func (path, e, test_engine_answers);
      return;
    }
  for (guint i = 0; i < G_N_ELEMENTS (tests); i++)
    {
      g_autofree char *path = g_strdup_printf ("/docker/%s/%s", e->name, tests[i].path);
      g_test_add_data_func (path, e, tests[i].func);
    }
}

int
main (int argc, char *argv[])
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  /* Before any thread exists and before GLib reads the cache dir. */
  dts_init ();
  g_setenv ("TEST_HOST_ONLY_VAR", "host value", TRUE);

  for (guint i = 0; i < G_N_ELEMENTS (engines); i++)
    if (dts_engine_setup (&engines[i]))
      add_engine_tests (&engines[i]);

  rc = g_test_run ();
  for (guint i = 0; i < G_N_ELEMENTS (engines); i++)
    {
      g_strfreev (engines[i].argv);
      g_free (engines[i].host);
    }
  dts_shutdown ();
  return rc;
}
