/* test-docker-pool.c: warm containers of the docker backend (option
 * container_pool, plugins/isolation-docker/docker-pool.c), on real
 * engines: a pooled container is hardened exactly as a fresh one, works,
 * is handed out once and destroyed at cleanup; other options fall back to
 * the plain path; the provider's end removes its idle containers; prune
 * removes those of a host that died.
 *
 * Engines as in test-docker.c: DOCKER_HOST (binds), SUBAGENT_TEST_PODMAN_HOST
 * and SUBAGENT_TEST_REMOTE_HOST (a dockerd that cannot see this machine's
 * files: copies), all started by scripts/run-tests.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "docker-test-support.h"

static DtsEngine engines[] = {
  { "docker", "DOCKER_HOST", "bind", NULL, NULL },
  { "podman", "SUBAGENT_TEST_PODMAN_HOST", "bind", NULL, NULL },
  { "remote", "SUBAGENT_TEST_REMOTE_HOST", "copy", NULL, NULL },
};

#define POOL_LABEL "io.subagent.pool=true"
/* What must be the same for a pooled and a fresh container (the mounts'
 * types and targets, not their sources). */
#define HARDENING_FORMAT "{{.HostConfig.ReadonlyRootfs}}|{{.HostConfig.CapDrop}}|{{.HostConfig.SecurityOpt}}|" \
                         "{{.Config.User}}|{{.HostConfig.NetworkMode}}|{{.HostConfig.Memory}}|" \
                         "{{.HostConfig.MemorySwap}}|{{.HostConfig.NanoCpus}}|{{.HostConfig.PidsLimit}}|" \
                         "{{.HostConfig.Ulimits}}|{{.HostConfig.Tmpfs}}|{{.Config.Image}}|{{.Config.WorkingDir}}|" \
                         "{{range .Mounts}}{{.Type}}:{{.Destination}} {{end}}"

/* A provider of its own: its pool goes when it goes. */
static SubagentIsolationProvider *
pool_provider (DtsEngine *e)
{
  g_autoptr(SubagentIsolationProvider) shared = dts_provider ();

  return g_object_new (G_OBJECT_TYPE (shared), "host", e->host, NULL);
}

/* Waits for the background refill to finish; returns the idle count. */
static guint
wait_pool_full (SubagentIsolationProvider *provider)
{
  gint64 deadline = g_get_monotonic_time () + DTS_WAIT_DEADLINE_USEC;
  guint filling = 1, ready = 0;

  for (;;)
    {
      g_object_get (provider, "pool-filling", &filling, "pool-ready", &ready, NULL);
      if (filling == 0)
        return ready;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (G_USEC_PER_SEC / 50);
    }
}

static gboolean
is_pooled (SubagentIsolationContext *context)
{
  gboolean pooled = FALSE;

  g_assert_true (g_variant_lookup (subagent_isolation_context_get_backend_data (context), "pooled", "b", &pooled));
  return pooled;
}

static SubagentIsolationContext *
prepare_with (SubagentIsolationProvider *provider,
              SubagentIsolationRequest  *request)
{
  g_autoptr(GError) error = NULL;
  SubagentIsolationContext *context = subagent_isolation_provider_prepare (provider, request, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (context);
  return context;
}

static char *
hardening_of (DtsEngine                *e,
              SubagentIsolationContext *context)
{
  return dts_engine_run (e, NULL, "container", "inspect", "--format", HARDENING_FORMAT,
                         subagent_isolation_context_get_container_id (context), NULL);
}

static gboolean
container_exists (DtsEngine  *e,
                  const char *id)
{
  int status = 0;

  g_free (dts_engine_run (e, &status, "container", "inspect", "--format", "{{.Id}}", id, NULL));
  return status == 0;
}

/* A pooled prepare gives a working container hardened exactly as a fresh
 * one of the same options; cleanup destroys it. */
static void
test_pool_hardening (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationProvider) provider = pool_provider (e);
  g_autoptr(SubagentIsolationRequest) first = dts_make_request (e, parent, "wp-h-0", 0.5, "64m",
                                                                "container_pool", "1", NULL);
  g_autoptr(SubagentIsolationRequest) second = dts_make_request (e, parent, "wp-h-1", 0.5, "64m",
                                                                 "container_pool", "1", NULL);
  g_autoptr(SubagentIsolationRequest) fresh_request = dts_make_request (e, parent, "wp-h-2", 0.5, "64m", NULL);
  g_autoptr(SubagentIsolationContext) plain = NULL;
  g_autoptr(SubagentIsolationContext) pooled = NULL;
  g_autoptr(SubagentIsolationContext) fresh = NULL;
  g_autofree char *pooled_hardening = NULL;
  g_autofree char *fresh_hardening = NULL;
  g_autofree char *out = NULL;
  g_autofree char *pooled_id = NULL;
  g_autofree char *written = NULL;
  const char *transfer = NULL;
  int status = 0;

  /* The first prepare takes the plain path (the pool starts after it). */
  plain = prepare_with (provider, first);
  g_assert_false (is_pooled (plain));
  g_assert_cmpuint (wait_pool_full (provider), ==, 1);
  pooled = prepare_with (provider, second);
  g_assert_true (is_pooled (pooled));
  fresh = dts_prepare (fresh_request, NULL);
  g_assert_nonnull (fresh);
  g_assert_false (is_pooled (fresh));
  g_assert_true (g_variant_lookup (subagent_isolation_context_get_backend_data (pooled), "transfer", "&s",
                                   &transfer));
  g_assert_cmpstr (transfer, ==, e->transfer);

  pooled_hardening = hardening_of (e, pooled);
  fresh_hardening = hardening_of (e, fresh);
  g_test_message ("pooled: %s", pooled_hardening);
  g_assert_cmpstr (pooled_hardening, ==, fresh_hardening);
  g_assert_true (g_str_has_prefix (pooled_hardening, "true|"));
  g_assert_nonnull (strstr (pooled_hardening, "|[no-new-privileges]|65534:65534|none|67108864|67108864|500000000|512|"));
  /* podman lists the capabilities it dropped, docker what was asked. */
  if (!g_str_equal (e->name, "podman"))
    g_assert_true (g_str_has_prefix (pooled_hardening, "true|[ALL]|"));

  /* It works: the parent's files, the user, the read-only root, writes
   * that come back to the host's tree. */
  out = dts_run_in (pooled, NULL, NULL, NULL, "cat existing.txt sub/nested.txt; id -u; "
                                              "touch /not-here 2>/dev/null && echo root-writable; "
                                              "echo from-pool > made.txt");
  g_assert_cmpstr (out, ==, "first line\nnested\n65534\n");
  written = g_build_filename (subagent_isolation_context_get_child_root (pooled), "made.txt", NULL);
  g_assert_true (g_file_test (written, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  out = dts_run_in (pooled, NULL, NULL, &status, "test ! -e .git && test ! -e .subagent");
  g_assert_cmpint (status, ==, 0);

  pooled_id = g_strdup (subagent_isolation_context_get_container_id (pooled));
  subagent_isolation_context_cleanup (pooled);
  g_assert_false (container_exists (e, pooled_id));
  subagent_isolation_context_cleanup (plain);
  subagent_isolation_context_cleanup (fresh);
  /* The refill after the take; the provider's end (contexts hold it) removes it. */
  g_assert_cmpuint (wait_pool_full (provider), ==, 1);
  g_clear_object (&plain);
  g_clear_object (&pooled);
  g_clear_object (&fresh);
  g_clear_object (&provider);
  dts_assert_nothing_left (e, dts_parent_run_label (), parent);
  sat_rm_rf (parent);
}

/* Held at once and after one another, no container is handed out twice,
 * and none a child used ever goes back to the pool. */
static void
test_pool_never_twice (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationProvider) provider = pool_provider (e);
  g_autoptr(GPtrArray) contexts = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint pooled = 0;

  for (guint i = 0; i < 5; i++)
    {
      g_autofree char *key = g_strdup_printf ("wp-t-%u", i);
      g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, key, 0, NULL,
                                                                      "container_pool", "2", NULL);
      SubagentIsolationContext *context;
      const char *id;

      /* The first two wait for the refill, the others take what is there
       * (or make their own when it is empty). */
      if (i < 2)
        wait_pool_full (provider);
      context = prepare_with (provider, request);
      id = subagent_isolation_context_get_container_id (context);
      g_assert_false (g_hash_table_contains (seen, id));
      g_hash_table_add (seen, g_strdup (id));
      pooled += is_pooled (context);
      g_ptr_array_add (contexts, context);
    }
  g_assert_cmpuint (pooled, >=, 2);

  /* Cleanup destroys each; the pool holds none of them. */
  for (guint i = 0; i < contexts->len; i++)
    {
      SubagentIsolationContext *context = contexts->pdata[i];
      g_autofree char *id = g_strdup (subagent_isolation_context_get_container_id (context));

      subagent_isolation_context_cleanup (context);
      g_assert_false (container_exists (e, id));
    }
  g_assert_cmpuint (wait_pool_full (provider), ==, 2);
  {
    g_autofree char *idle = dts_containers_labelled (e, POOL_LABEL);
    g_auto(GStrv) ids = g_strsplit (idle, "\n", -1);
    guint n = 0;

    for (guint i = 0; ids[i] != NULL; i++)
      {
        GHashTableIter iter;
        gpointer used;

        if (*ids[i] == '\0')
          continue;
        n++;
        g_hash_table_iter_init (&iter, seen);
        while (g_hash_table_iter_next (&iter, &used, NULL))
          g_assert_false (g_str_has_prefix (used, ids[i]));
      }
    g_assert_cmpuint (n, ==, 2);
  }
  /* Their owner records and workspaces are the pool's own. */
  {
    g_autofree char *owners = g_build_filename (parent, ".subagent", "owners", NULL);
    g_autofree char *workspaces = dts_workspace_dir ();

    g_assert_cmpuint (dts_count_entries (owners), ==, 2);
    g_assert_cmpuint (dts_count_entries (workspaces), ==, 2);
  }
  g_ptr_array_set_size (contexts, 0);
  g_clear_object (&provider);
  dts_assert_nothing_left (e, POOL_LABEL, parent);
  sat_rm_rf (parent);
}

/* Other options than the pool's: the plain path, with those options. */
static void
test_pool_mismatch_falls_back (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationProvider) provider = pool_provider (e);
  g_autoptr(SubagentIsolationRequest) seed = dts_make_request (e, parent, "wp-m-0", 0, "64m",
                                                               "container_pool", "1", NULL);
  g_autoptr(SubagentIsolationContext) first = NULL;
  static const struct {
    const char *memory;
    const char *option, *value;
    const char *expect;   /* in the container's inspect output; NULL: `ulimit -n` inside */
  } others[] = {
    { "128m", NULL, NULL, "|134217728|" },
    { "64m", "pids_limit", "256", "|256|" },
    { "64m", "user", "1000:1000", "|1000:1000|" },
    { "64m", "nofile", "1024", NULL },   /* podman's inspect shows no ulimits */
    { "64m", "transfer", "copy", "volume:/workspace" },
  };

  first = prepare_with (provider, seed);
  g_assert_cmpuint (wait_pool_full (provider), ==, 1);
  for (guint i = 0; i < G_N_ELEMENTS (others); i++)
    {
      g_autofree char *key = g_strdup_printf ("wp-m-%u", i + 1);
      g_autoptr(SubagentIsolationRequest) request = NULL;
      g_autoptr(SubagentIsolationContext) context = NULL;
      g_autofree char *hardening = NULL;
      guint ready = 0;

      if (g_strcmp0 (others[i].option, "transfer") == 0 && g_str_equal (e->transfer, "copy"))
        continue;   /* the pool's own mode there */
      request = dts_make_request (e, parent, key, 0, others[i].memory, "container_pool", "1",
                                  others[i].option, others[i].value, NULL);
      context = prepare_with (provider, request);
      g_assert_false (is_pooled (context));
      hardening = hardening_of (e, context);
      g_test_message ("%s: %s", key, hardening);
      if (others[i].expect != NULL)
        g_assert_nonnull (strstr (hardening, others[i].expect));
      else if (!g_str_equal (e->name, "podman"))   /* podman's compatible API leaves nofile as it is */
        {
          g_autofree char *limit = dts_run_in (context, NULL, NULL, NULL, "ulimit -n");
          g_assert_cmpstr (limit, ==, "1024\n");
        }
      /* The seed's container is still there, unused. */
      g_object_get (provider, "pool-ready", &ready, NULL);
      g_assert_cmpuint (ready, >=, 1);
      subagent_isolation_context_cleanup (context);
    }
  /* A request without the option never takes one either. */
  {
    g_autoptr(SubagentIsolationRequest) request = dts_make_request (e, parent, "wp-m-9", 0, "64m", NULL);
    g_autoptr(SubagentIsolationContext) context = NULL;

    wait_pool_full (provider);
    context = prepare_with (provider, request);
    g_assert_false (is_pooled (context));
    subagent_isolation_context_cleanup (context);
  }
  subagent_isolation_context_cleanup (first);
  g_clear_object (&first);
  g_clear_object (&provider);
  dts_assert_nothing_left (e, dts_parent_run_label (), parent);
  sat_rm_rf (parent);
}

/* A host killed with its pool full: prune removes the pool's containers,
 * workspaces and records, as the run's own. */
static void
test_pool_prune_dead_host (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *root = dts_make_parent ();
  g_autofree char *owners = g_build_filename (root, ".subagent", "owners", NULL);
  g_autofree char *workspaces = dts_workspace_dir ();
  g_autofree char *owner_label = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GSubprocess) host = NULL;
  g_autoptr(GError) error = NULL;
  gint64 deadline = g_get_monotonic_time () + DTS_WAIT_DEADLINE_USEC;

  dts_write_docker_def (e, root, "sleeper", "touch /workspace/started; exec sleep 600", "container_pool: 2");
  host = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                           sat_subagentctl (), "run", "--root", root, "--def", "sleeper", "--isolation", "docker",
                           "--", "sleep a while", NULL);
  g_assert_no_error (error);
  owner_label = g_strdup_printf ("io.subagent.owner-pid=%s", g_subprocess_get_identifier (host));
  /* The child runs, and the two pool containers are up beside it. */
  for (;;)
    {
      g_autofree char *pool = NULL;
      g_auto(GStrv) ids = NULL;
      g_autofree char *filter = g_strdup_printf ("label=%s", owner_label);

      if (dts_workspace_file_seen ("started"))
        {
          pool = dts_engine_run (e, NULL, "ps", "-q", "--filter", filter, "--filter", "label=" POOL_LABEL, NULL);
          ids = g_strsplit (pool, "\n", -1);
          if (*pool != '\0' && g_strv_length (ids) == 2 && dts_count_entries (owners) == 3)
            break;
        }
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (G_USEC_PER_SEC / 20);
    }
  g_subprocess_force_exit (host);
  g_subprocess_wait (host, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_term_sig (host), ==, SIGKILL);
  g_assert_cmpuint (dts_count_entries (workspaces), ==, 3);

  out = dts_prune_json (root);
  {
    g_auto(GStrv) parts = g_strsplit (out, "\"removed\"", -1);
    g_assert_cmpuint (g_strv_length (parts) - 1, >=, 3);
  }

  {
    g_autofree char *left = dts_containers_labelled (e, owner_label);
    g_assert_cmpstr (left, ==, "");
  }
  g_assert_cmpuint (dts_count_entries (workspaces), ==, 0);
  g_assert_cmpuint (dts_count_entries (owners), ==, 0);
  sat_rm_rf (root);
}

/* A taken container's own record names its pool slot: prune of that
 * record (the host died while the child ran) accepts the slot's label. */
static void
test_pool_prune_taken (gconstpointer data)
{
  DtsEngine *e = (DtsEngine *) data;
  g_autofree char *parent = dts_make_parent ();
  g_autofree char *owners = g_build_filename (parent, ".subagent", "owners", NULL);
  g_autoptr(SubagentIsolationProvider) provider = pool_provider (e);
  g_autoptr(SubagentIsolationRequest) seed = dts_make_request (e, parent, "wp-p-0", 0, NULL,
                                                               "container_pool", "1", NULL);
  g_autoptr(SubagentIsolationRequest) taker = dts_make_request (e, parent, "wp-p-1", 0, NULL,
                                                                "container_pool", "1", NULL);
  g_autoptr(SubagentIsolationContext) first = NULL;
  g_autoptr(SubagentIsolationContext) pooled = NULL;
  g_autoptr(JsonObject) record = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *reason = NULL;
  g_autofree char *id = NULL;
  g_autofree char *base = NULL;
  JsonObject *extra;
  const char *base_ref = NULL;

  first = prepare_with (provider, seed);
  wait_pool_full (provider);
  pooled = prepare_with (provider, taker);
  g_assert_true (is_pooled (pooled));
  id = g_strdup (subagent_isolation_context_get_container_id (pooled));
  g_assert_true (g_variant_lookup (subagent_isolation_context_get_backend_data (pooled), "workspace-base", "&s",
                                   &base_ref));
  base = g_strdup (base_ref);
  record = subagent_owner_record_load (parent, "wp-p-1", &error);
  g_assert_no_error (error);
  extra = json_object_get_object_member (record, "extra");
  g_assert_true (g_str_has_prefix (json_object_get_string_member (extra, "pool_slot"), "pool-"));

  /* As if the host died between the record's switch and the marker's:
   * the workspace still holds the slot's marker. */
  {
    const char *slot = json_object_get_string_member (extra, "pool_slot");

    g_assert_true (subagent_owner_marker_write (base, ".subagent-docker", slot, parent, &error));
    g_assert_no_error (error);
  }
  /* What prune does with it (the provider's reclaim, as if its host were dead). */
  g_assert_cmpint (subagent_isolation_provider_reclaim (provider, parent, record, SUBAGENT_RECLAIM_FLAGS_NONE,
                                                        &reason), ==, SUBAGENT_RECLAIM_REMOVED);
  g_assert_false (container_exists (e, id));
  g_assert_false (g_file_test (base, G_FILE_TEST_EXISTS));
  subagent_owner_record_remove (parent, "wp-p-1");
  subagent_isolation_context_cleanup (pooled);
  subagent_isolation_context_cleanup (first);
  g_clear_object (&pooled);
  g_clear_object (&first);
  g_clear_object (&provider);
  dts_assert_nothing_left (e, dts_parent_run_label (), parent);
  g_assert_cmpuint (dts_count_entries (owners), ==, 0);
  sat_rm_rf (parent);
}

/* config.yaml's docker.container_pool is checked when loaded. */
static void
test_pool_config_checked (void)
{
  g_autofree char *parent = dts_make_parent ();
  g_autoptr(SubagentIsolationProvider) good = NULL;
  g_autoptr(SubagentIsolationProvider) bad = NULL;
  g_autoptr(GError) error = NULL;

  good = dts_configured_provider ("{\"container_pool\": 2}", parent, &error);
  g_assert_no_error (error);
  g_assert_nonnull (good);
  bad = dts_configured_provider ("{\"container_pool\": 17}", parent, &error);
  g_assert_null (bad);
  g_assert_error (error, SUBAGENT_CONFIG_ERROR, SUBAGENT_CONFIG_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "container_pool"));
  g_clear_error (&error);
  bad = dts_configured_provider ("{\"container_pool\": \"many\"}", parent, &error);
  g_assert_null (bad);
  g_assert_nonnull (error);
  sat_rm_rf (parent);
}

/* ---- main ------------------------------------------------------------------ */

int
main (int argc, char *argv[])
{
  static const struct {
    const char *path;
    GTestDataFunc func;
  } tests[] = {
    { "pool-hardening", test_pool_hardening },
    { "pool-never-twice", test_pool_never_twice },
    { "pool-mismatch-falls-back", test_pool_mismatch_falls_back },
    { "pool-prune-dead-host", test_pool_prune_dead_host },
    { "pool-prune-taken", test_pool_prune_taken },
  };
  int rc;

  g_test_init (&argc, &argv, NULL);
  dts_init ();
  g_test_add_func ("/docker-pool/config-checked", test_pool_config_checked);
  for (guint i = 0; i < G_N_ELEMENTS (engines); i++)
    {
      if (!dts_engine_setup (&engines[i]))
        continue;
      for (guint t = 0; t < G_N_ELEMENTS (tests); t++)
        {
          g_autofree char *path = g_strdup_printf ("/docker-pool/%s/%s", engines[i].name, tests[t].path);
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
