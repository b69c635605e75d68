/* test-isolation.c: isolation modes, session keys, requests, contexts and the
 * shared backend.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-support.h"

/* ---- A provider defined here, to watch the context's contract ----------- */

#define TEST_TYPE_PROVIDER (test_provider_get_type ())
G_DECLARE_FINAL_TYPE (TestProvider, test_provider, TEST, PROVIDER, GObject)

struct _TestProvider
{
  GObject parent_instance;

  int cleanups;          /* atomic */
  int prepares;          /* atomic */
  GThread *prepare_thread;
  gboolean cancel_while_preparing;
  gboolean reenter_cleanup;
};

static void test_provider_iface_init (SubagentIsolationProviderInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestProvider, test_provider, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SUBAGENT_TYPE_ISOLATION_PROVIDER, test_provider_iface_init))

static SubagentIsolationContext *
test_provider_prepare (SubagentIsolationProvider  *provider,
                       SubagentIsolationRequest   *request,
                       GCancellable               *cancellable,
                       GError                    **error)
{
  TestProvider *self = TEST_PROVIDER (provider);

  g_atomic_int_inc (&self->prepares);
  self->prepare_thread = g_thread_self ();
  /* Cancelled after the workspace exists: the async default must clean up. */
  if (self->cancel_while_preparing)
    g_cancellable_cancel (cancellable);
  return g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                       "provider", provider,
                       "parent-root", subagent_isolation_request_get_parent_root (request),
                       "child-root", subagent_isolation_request_get_parent_root (request),
                       "isolation", "test",
                       "session-key", subagent_isolation_request_get_session_key (request),
                       NULL);
}

static void
test_provider_cleanup (SubagentIsolationProvider *provider,
                       SubagentIsolationContext  *context)
{
  TestProvider *self = TEST_PROVIDER (provider);

  g_atomic_int_inc (&self->cleanups);
  g_assert_false (subagent_isolation_context_is_cleaned_up (context));
  if (self->reenter_cleanup)
    subagent_isolation_context_cleanup (context);
}

static void
test_provider_iface_init (SubagentIsolationProviderInterface *iface)
{
  iface->prepare = test_provider_prepare;
  iface->cleanup = test_provider_cleanup;
}

static void test_provider_class_init (TestProviderClass *klass) {}

static void test_provider_init (TestProvider *self) {}

/* A provider that implements nothing at all. */
#define TEST_TYPE_EMPTY_PROVIDER (test_empty_provider_get_type ())
G_DECLARE_FINAL_TYPE (TestEmptyProvider, test_empty_provider, TEST, EMPTY_PROVIDER, GObject)

struct _TestEmptyProvider
{
  GObject parent_instance;
};

static void test_empty_provider_iface_init (SubagentIsolationProviderInterface *iface) {}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestEmptyProvider, test_empty_provider, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SUBAGENT_TYPE_ISOLATION_PROVIDER, test_empty_provider_iface_init))

static void test_empty_provider_class_init (TestEmptyProviderClass *klass) {}

static void test_empty_provider_init (TestEmptyProvider *self) {}

static char *
resolved (const char *path)
{
  char *r = realpath (path, NULL);
  char *copy;

  g_assert_nonnull (r);
  copy = g_strdup (r);
  free (r);
  return copy;
}

/* ---- Modes ---------------------------------------------------------------- */

static void
test_normalize_table (void)
{
  static const struct {
    const char *input;
    const char *expected;
    gboolean alias;
  } cases[] = {
    { NULL, "shared", FALSE },
    { "", "shared", FALSE },
    { "   \t\n", "shared", FALSE },
    { "shared", "shared", FALSE },
    { "worktree", "worktree", FALSE },
    { "directory-snapshot", "directory-snapshot", FALSE },
    { "docker", "docker", FALSE },
    { "auto", "auto", FALSE },
    { "  WorkTree ", "worktree", FALSE },
    { "DOCKER", "docker", FALSE },
    { "Directory-Snapshot\n", "directory-snapshot", FALSE },
    /* Spelling only: which modes exist is the registry's to say. */
    { "container", "container", TRUE },
    { " Container ", "container", TRUE },
    { "vm", "vm", FALSE },
    { "directory_snapshot", "directory_snapshot", FALSE },
    { "containers", "containers", FALSE },
    { "sha red", NULL, FALSE },
    { "../etc", NULL, FALSE },
    { "a/b", NULL, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      gboolean alias = !cases[i].alias;
      const char *got = subagent_isolation_normalize (cases[i].input, &alias);

      g_test_message ("normalize (%s)", cases[i].input ? cases[i].input : "NULL");
      g_assert_cmpstr (got, ==, cases[i].expected);
      g_assert_cmpint (alias, ==, cases[i].alias);
      if (got != NULL)
        g_assert_true (got == g_intern_string (cases[i].expected));
    }
  /* The out argument is optional. */
  g_assert_cmpstr (subagent_isolation_normalize ("container", NULL), ==, "container");
}

static void
test_deprecated_alias_warning (void)
{
  gboolean alias = FALSE;

  /* normalize stays silent (a warning here would abort the test)... */
  g_assert_cmpstr (subagent_isolation_normalize ("container", &alias), ==, "container");
  g_assert_true (alias);

  /* ...and the caller warns, naming what the registry resolved it to. */
  g_test_expect_message ("Subagent", G_LOG_LEVEL_WARNING,
                         "isolation mode “container” is deprecated; use “directory-snapshot”");
  subagent_isolation_warn_deprecated_alias (" Container", "directory-snapshot");
  g_test_assert_expected_messages ();
}

static void
test_resolve_auto_git_repo (void)
{
  g_autofree char *repo = sat_make_git_repo ("README", "hello\n", "src/main.c", "int main;\n", NULL);
  g_autofree char *subdir = g_build_filename (repo, "src", NULL);

  g_assert_true (subagent_isolation_is_git_work_tree (repo));
  /* Searching upwards: a directory inside the work tree counts. */
  g_assert_true (subagent_isolation_is_git_work_tree (subdir));
  sat_rm_rf (repo);
}

static void
test_resolve_auto_plain_dir (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-plain");

  sat_write_file (dir, "notes.txt", "not a repository\n");
  g_assert_false (subagent_isolation_is_git_work_tree (dir));
  g_assert_false (subagent_isolation_is_git_work_tree (NULL));
  sat_rm_rf (dir);
}

static void
test_resolve_auto_bare_repo (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-bare");
  g_autofree char *head = NULL;

  g_free (sat_run (dir, FALSE, NULL, "git", "init", "-q", "--bare", NULL));
  head = sat_read_file (dir, "HEAD");
  g_assert_nonnull (head); /* really a bare repository */
  g_assert_false (subagent_isolation_is_git_work_tree (dir));
  sat_rm_rf (dir);
}

/* ---- Session keys -------------------------------------------------------- */

static gboolean
is_hex8 (const char *s)
{
  if (strlen (s) != 8)
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isdigit (*s) && !(*s >= 'a' && *s <= 'f'))
      return FALSE;
  return TRUE;
}

static void
test_session_key_format (void)
{
  static const struct {
    const char *parent;
    const char *def;
    const char *prefix;
  } cases[] = {
    { "run_0123456789abcdef", "reviewer", "run_01234567-reviewer-" },
    { "  abc  ", "fix-bugs", "abc-fix-bugs-" },
    { "a/b.c", "../../etc/passwd", "abc-etcpasswd-" },
    { "", "", "run-agent-" },
    { NULL, NULL, "run-agent-" },
    { "../..", "..", "run-agent-" },
    { "--rm", "x", "rm-x-" },
    { "caf\xc3\xa9-run", "r\xc3\xa9viewer", "caf-run-rviewer-" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *key = subagent_isolation_new_session_key (cases[i].parent, cases[i].def);
      gsize plen = strlen (cases[i].prefix);

      g_test_message ("key %s", key);
      g_assert_true (g_str_has_prefix (key, cases[i].prefix));
      g_assert_true (is_hex8 (key + plen));
      g_assert_true (subagent_isolation_session_key_is_valid (key));
    }
}

static void
test_session_key_hostile_inputs (void)
{
  static const char * const parents[] = {
    "../../../../etc", "/abs/path", "run.with.dots", "sp ace", "\xe2\x98\x83 snowman",
    "tab\tnew\nline", "$(rm -rf /)", "`id`", "..", "-", "", "\xff\xfe", "a;b|c&d",
    "averyveryverylongparentrunidthatgoesonandon",
  };
  static const char * const defs[] = {
    "../../x", "a/b/c", "..\\..\\win", ".hidden", "name with spaces", "\xc3\xbcnicode",
    "", "*?[]", "x%00y", "reviewer",
    "a-very-long-definition-name-that-exceeds-any-reasonable-limit-for-a-path-component-0123456789",
  };
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; i < 1000; i++)
    {
      const char *parent = parents[i % G_N_ELEMENTS (parents)];
      const char *def = defs[(i / G_N_ELEMENTS (parents)) % G_N_ELEMENTS (defs)];
      char *key = subagent_isolation_new_session_key (parent, def);
      const char *suffix = strrchr (key, '-');

      g_assert_true (subagent_isolation_session_key_is_valid (key));
      for (const char *p = key; *p; p++)
        g_assert_true (g_ascii_isalnum (*p) || *p == '-' || *p == '_');
      g_assert_null (strstr (key, ".."));
      g_assert_null (strchr (key, '/'));
      g_assert_cmpint (key[0], !=, '-');
      g_assert_cmpuint (strlen (key), <=, 128);
      g_assert_nonnull (suffix);
      g_assert_true (is_hex8 (suffix + 1));
      /* The random part makes every key unique. */
      g_assert_false (g_hash_table_contains (seen, key));
      g_hash_table_add (seen, key);
    }
  g_assert_cmpuint (g_hash_table_size (seen), ==, 1000);
}

static void
test_session_key_validity (void)
{
  g_autofree char *long_ok = g_strnfill (128, 'a');
  g_autofree char *too_long = g_strnfill (129, 'a');

  g_assert_true (subagent_isolation_session_key_is_valid ("abc-def_123"));
  g_assert_true (subagent_isolation_session_key_is_valid (long_ok));
  g_assert_false (subagent_isolation_session_key_is_valid (too_long));
  g_assert_false (subagent_isolation_session_key_is_valid (NULL));
  g_assert_false (subagent_isolation_session_key_is_valid (""));
  g_assert_false (subagent_isolation_session_key_is_valid ("a/b"));
  g_assert_false (subagent_isolation_session_key_is_valid (".."));
  g_assert_false (subagent_isolation_session_key_is_valid ("a.b"));
  g_assert_false (subagent_isolation_session_key_is_valid ("caf\xc3\xa9"));
  g_assert_false (subagent_isolation_session_key_is_valid ("sp ace"));
}

/* ---- Requests -------------------------------------------------------------- */

static void
test_request_options_getters (void)
{
  g_autoptr(JsonNode) node = json_from_string (
    "{\"image\":\"debian:12\",\"network\":false,\"pids\":64,\"whole\":3.0,\"half\":2.5,\"huge\":1e300}", NULL);
  JsonObject *given = json_node_get_object (node);
  g_autoptr(SubagentIsolationRequest) request = g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST,
                                                              "parent-root", "/tmp",
                                                              "isolation", "docker",
                                                              "session-key", "k-1",
                                                              "parent-run-id", "run1",
                                                              "def-name", "reviewer",
                                                              "cpu-quota", 1.5,
                                                              "memory-limit", "512m",
                                                              "options", given,
                                                              NULL);
  JsonObject *options;

  json_object_set_string_member (given, "image", "changed-after");
  options = subagent_isolation_request_get_options (request);
  g_assert_true (json_object_is_immutable (options));

  g_assert_cmpstr (subagent_isolation_request_get_parent_root (request), ==, "/tmp");
  g_assert_cmpstr (subagent_isolation_request_get_isolation (request), ==, "docker");
  g_assert_cmpstr (subagent_isolation_request_get_session_key (request), ==, "k-1");
  g_assert_cmpstr (subagent_isolation_request_get_parent_run_id (request), ==, "run1");
  g_assert_cmpstr (subagent_isolation_request_get_def_name (request), ==, "reviewer");
  g_assert_cmpfloat (subagent_isolation_request_get_cpu_quota (request), ==, 1.5);
  g_assert_cmpstr (subagent_isolation_request_get_memory_limit (request), ==, "512m");

  g_assert_cmpstr (subagent_isolation_request_get_option_string (request, "image", NULL), ==, "debian:12");
  g_assert_cmpstr (subagent_isolation_request_get_option_string (request, "pids", "dflt"), ==, "dflt");
  g_assert_cmpstr (subagent_isolation_request_get_option_string (request, "missing", NULL), ==, NULL);
  g_assert_false (subagent_isolation_request_get_option_boolean (request, "network", TRUE));
  g_assert_true (subagent_isolation_request_get_option_boolean (request, "image", TRUE));
  g_assert_cmpint (subagent_isolation_request_get_option_int (request, "pids", 0), ==, 64);
  g_assert_cmpint (subagent_isolation_request_get_option_int (request, "whole", 0), ==, 3);
  g_assert_cmpint (subagent_isolation_request_get_option_int (request, "half", -1), ==, -1);
  g_assert_cmpint (subagent_isolation_request_get_option_int (request, "huge", -1), ==, -1);
  g_assert_cmpint (subagent_isolation_request_get_option_int (request, "image", 7), ==, 7);
}

static void
test_request_defaults (void)
{
  g_autoptr(SubagentIsolationRequest) request = subagent_isolation_request_new ("/tmp", "shared", NULL);

  g_assert_nonnull (subagent_isolation_request_get_options (request));
  g_assert_cmpuint (json_object_get_size (subagent_isolation_request_get_options (request)), ==, 0);
  g_assert_null (subagent_isolation_request_get_session_key (request));
  g_assert_null (subagent_isolation_request_get_memory_limit (request));
  g_assert_cmpfloat (subagent_isolation_request_get_cpu_quota (request), ==, 0.0);
}

/* ---- The shared backend ------------------------------------------------------ */

static void
test_shared_prepare_and_cleanup_twice (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-shared");
  g_autofree char *real = resolved (dir);
  g_autoptr(SubagentIsolationProvider) provider = subagent_shared_isolation_new ();
  g_autoptr(SubagentIsolationRequest) request = subagent_isolation_request_new (dir, "shared", "run-agent-12345678");
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (subagent_isolation_provider_is_available (provider, &error));
  g_assert_no_error (error);
  sat_write_file (dir, "kept.txt", "still here\n");

  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (context);
  g_assert_cmpstr (subagent_isolation_context_get_isolation (context), ==, "shared");
  g_assert_cmpstr (subagent_isolation_context_get_parent_root (context), ==, real);
  g_assert_cmpstr (subagent_isolation_context_get_child_root (context), ==, real);
  g_assert_cmpstr (subagent_isolation_context_get_session_key (context), ==, "run-agent-12345678");
  g_assert_true (subagent_isolation_context_get_provider (context) == provider);
  g_assert_null (subagent_isolation_context_get_worktree_path (context));
  g_assert_null (subagent_isolation_context_get_container_path (context));
  g_assert_null (subagent_isolation_context_get_container_id (context));
  g_assert_cmpuint (g_strv_length ((char **) subagent_isolation_context_get_warnings (context)), ==, 0);
  g_assert_false (subagent_isolation_context_is_cleaned_up (context));

  subagent_isolation_context_cleanup (context);
  g_assert_true (subagent_isolation_context_is_cleaned_up (context));
  subagent_isolation_context_cleanup (context);
  g_assert_true (subagent_isolation_context_is_cleaned_up (context));
  /* Shared cleanup never touches the parent's root. */
  {
    g_autofree char *kept = sat_read_file (dir, "kept.txt");
    g_assert_cmpstr (kept, ==, "still here\n");
  }
  sat_rm_rf (dir);
}

static void
test_shared_resolves_symlinked_root (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-shared-link");
  g_autofree char *target = g_build_filename (dir, "target", NULL);
  g_autofree char *link = g_build_filename (dir, "link", NULL);
  g_autofree char *real_target = NULL;
  g_autoptr(SubagentIsolationProvider) provider = subagent_shared_isolation_new ();
  g_autoptr(SubagentIsolationRequest) request = subagent_isolation_request_new (link, "shared", NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir (target, 0755), ==, 0);
  g_assert_cmpint (symlink (target, link), ==, 0);
  real_target = resolved (target);
  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_isolation_context_get_child_root (context), ==, real_target);
  subagent_isolation_context_cleanup (context);
  sat_rm_rf (dir);
}

static void
test_shared_refuses_missing_or_file_root (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-shared-bad");
  g_autofree char *missing = g_build_filename (dir, "no-such-dir", NULL);
  g_autofree char *file = g_build_filename (dir, "a-file", NULL);
  g_autoptr(SubagentIsolationProvider) provider = subagent_shared_isolation_new ();
  const char *roots[] = { missing, file };

  sat_write_file (dir, "a-file", "x");
  for (guint i = 0; i < G_N_ELEMENTS (roots); i++)
    {
      g_autoptr(SubagentIsolationRequest) request = subagent_isolation_request_new (roots[i], "shared", NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(SubagentIsolationContext) context =
        subagent_isolation_provider_prepare (provider, request, NULL, &error);

      g_assert_null (context);
      g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED);
      g_assert_nonnull (strstr (error->message, roots[i]));
    }
  sat_rm_rf (dir);
}

static void
test_shared_warns_about_unenforced_limits (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-shared-limits");
  g_autoptr(SubagentIsolationProvider) provider = subagent_shared_isolation_new ();
  g_autoptr(SubagentIsolationRequest) request = g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST,
                                                              "parent-root", dir,
                                                              "isolation", "shared",
                                                              "cpu-quota", 2.0,
                                                              "memory-limit", "1g",
                                                              NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentIsolationContext) context =
    subagent_isolation_provider_prepare (provider, request, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpfloat (subagent_isolation_context_get_cpu_quota (context), ==, 2.0);
  g_assert_cmpstr (subagent_isolation_context_get_memory_limit (context), ==, "1g");
  g_assert_cmpuint (g_strv_length ((char **) subagent_isolation_context_get_warnings (context)), ==, 2);
  subagent_isolation_context_cleanup (context);
  sat_rm_rf (dir);
}

static void
test_shared_spawnv_runs_in_child_root (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-shared-spawn");
  g_autofree char *real = resolved (dir);
  g_autofree char *expected = g_strconcat (real, "\n", NULL);
  g_autoptr(SubagentIsolationProvider) provider = subagent_shared_isolation_new ();
  g_autoptr(SubagentIsolationRequest) request = subagent_isolation_request_new (dir, "shared", NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GSubprocess) pwd = NULL;
  g_autoptr(GSubprocess) env = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *env_out = NULL;
  const char * const pwd_argv[] = { "pwd", NULL };
  const char * const env_argv[] = { "sh", "-c", "printf '%s' \"$SUBAGENT_TEST_VAR\"", NULL };
  const char * const envp[] = { "SUBAGENT_TEST_VAR=from-envp", "PATH=/usr/bin:/bin", NULL };

  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  g_assert_no_error (error);

  pwd = subagent_isolation_context_spawnv (context, pwd_argv, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (pwd, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_successful (pwd));
  g_assert_cmpstr (out, ==, expected);

  env = subagent_isolation_context_spawnv (context, env_argv, envp, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (env, NULL, NULL, &env_out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (env_out, ==, "from-envp");

  subagent_isolation_context_cleanup (context);
  sat_rm_rf (dir);
}

static void
test_spawnv_failures (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-spawn-fail");
  g_autoptr(SubagentIsolationProvider) provider = subagent_shared_isolation_new ();
  g_autoptr(SubagentIsolationRequest) request = subagent_isolation_request_new (dir, "shared", "k");
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  const char * const missing[] = { "/nonexistent/subagent-no-such-program", NULL };
  const char * const argv[] = { "true", NULL };

  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  g_assert_no_error (error);

  proc = subagent_isolation_context_spawnv (context, missing, NULL, G_SUBPROCESS_FLAGS_NONE, &error);
  g_assert_null (proc);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED);
  g_assert_nonnull (strstr (error->message, missing[0]));
  g_clear_error (&error);

  /* After cleanup nothing more starts in the workspace. */
  subagent_isolation_context_cleanup (context);
  proc = subagent_isolation_context_spawnv (context, argv, NULL, G_SUBPROCESS_FLAGS_NONE, &error);
  g_assert_null (proc);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED);
  g_assert_nonnull (strstr (error->message, "cleaned up"));
  sat_rm_rf (dir);
}

/* ---- The context's cleanup contract ------------------------------------------- */

static SubagentIsolationContext *
prepare_with (TestProvider *provider,
              const char   *root)
{
  g_autoptr(SubagentIsolationRequest) request = subagent_isolation_request_new (root, "test", "k");
  g_autoptr(GError) error = NULL;
  SubagentIsolationContext *context =
    subagent_isolation_provider_prepare (SUBAGENT_ISOLATION_PROVIDER (provider), request, NULL, &error);

  g_assert_no_error (error);
  return context;
}

typedef struct {
  SubagentIsolationContext *context;
  gboolean saw_cleaned_up;
} CleanupThread;

static gpointer
cleanup_in_thread (gpointer data)
{
  CleanupThread *t = data;

  subagent_isolation_context_cleanup (t->context);
  /* Returning means the workspace is gone, whichever thread ran the vfunc. */
  t->saw_cleaned_up = subagent_isolation_context_is_cleaned_up (t->context);
  return NULL;
}

static void
test_cleanup_from_two_threads_runs_once (void)
{
  g_autoptr(TestProvider) provider = g_object_new (TEST_TYPE_PROVIDER, NULL);
  const guint rounds = 200;

  for (guint i = 0; i < rounds; i++)
    {
      g_autoptr(SubagentIsolationContext) context = prepare_with (provider, "/");
      CleanupThread a = { context, FALSE }, b = { context, FALSE };
      GThread *ta = g_thread_new ("cleanup-a", cleanup_in_thread, &a);
      GThread *tb = g_thread_new ("cleanup-b", cleanup_in_thread, &b);

      g_thread_join (ta);
      g_thread_join (tb);
      g_assert_true (a.saw_cleaned_up);
      g_assert_true (b.saw_cleaned_up);
      g_assert_cmpint (g_atomic_int_get (&provider->cleanups), ==, (int) i + 1);
    }
  g_assert_cmpint (provider->cleanups, ==, (int) rounds);
}

static void
test_cleanup_reentrant_runs_once (void)
{
  g_autoptr(TestProvider) provider = g_object_new (TEST_TYPE_PROVIDER, NULL);
  g_autoptr(SubagentIsolationContext) context = NULL;

  provider->reenter_cleanup = TRUE;
  context = prepare_with (provider, "/");
  subagent_isolation_context_cleanup (context);
  subagent_isolation_context_cleanup (context);
  g_assert_cmpint (provider->cleanups, ==, 1);
  g_assert_true (subagent_isolation_context_is_cleaned_up (context));
}

static void
test_finalize_does_not_clean_up (void)
{
  g_autoptr(TestProvider) provider = g_object_new (TEST_TYPE_PROVIDER, NULL);
  SubagentIsolationContext *context = prepare_with (provider, "/");

  g_object_unref (context);
  g_assert_cmpint (provider->cleanups, ==, 0);
}

static void
test_context_properties (void)
{
  g_autoptr(GVariantDict) dict = g_variant_dict_new (NULL);
  g_autoptr(GVariant) data = NULL;
  const char * const warnings[] = { "limit ignored", NULL };
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autofree char *branch = NULL;
  GVariant *kept;
  guint pids = 0;

  g_variant_dict_insert (dict, "pids", "u", 64);
  data = g_variant_ref_sink (g_variant_dict_end (dict));
  context = g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                          "parent-root", "/p",
                          "child-root", "/p/.subagent/worktrees/k",
                          "isolation", "worktree",
                          "session-key", "k",
                          "worktree-path", "/p/.subagent/worktrees/k",
                          "branch", "subagent/k",
                          "container-id", NULL,
                          "cpu-quota", 0.5,
                          "warnings", warnings,
                          "backend-data", data,
                          NULL);

  g_assert_null (subagent_isolation_context_get_provider (context));
  g_assert_cmpstr (subagent_isolation_context_get_worktree_path (context), ==, "/p/.subagent/worktrees/k");
  g_assert_cmpstr (subagent_isolation_context_get_branch (context), ==, "subagent/k");
  g_assert_cmpfloat (subagent_isolation_context_get_cpu_quota (context), ==, 0.5);
  g_assert_cmpstr (subagent_isolation_context_get_warnings (context)[0], ==, "limit ignored");
  kept = subagent_isolation_context_get_backend_data (context);
  g_assert_true (g_variant_lookup (kept, "pids", "u", &pids));
  g_assert_cmpuint (pids, ==, 64);
  g_object_get (context, "branch", &branch, NULL);
  g_assert_cmpstr (branch, ==, "subagent/k");

  /* Without a provider, cleanup only marks the context. */
  subagent_isolation_context_cleanup (context);
  g_assert_true (subagent_isolation_context_is_cleaned_up (context));
}

/* ---- The provider defaults ----------------------------------------------- */

typedef struct {
  gboolean done;
  SubagentIsolationContext *context;
  GError *error;
} AsyncResult;

static void
prepared_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  AsyncResult *r = user_data;

  r->context = subagent_isolation_provider_prepare_finish (SUBAGENT_ISOLATION_PROVIDER (source), result, &r->error);
  r->done = TRUE;
}

static void
test_prepare_async_runs_in_worker_thread (void)
{
  g_autoptr(TestProvider) provider = g_object_new (TEST_TYPE_PROVIDER, NULL);
  g_autoptr(SubagentIsolationRequest) request = subagent_isolation_request_new ("/", "test", "k");
  AsyncResult r = { FALSE, NULL, NULL };

  subagent_isolation_provider_prepare_async (SUBAGENT_ISOLATION_PROVIDER (provider), request, NULL, prepared_cb, &r);
  sat_wait_for_flag (&r.done);
  g_assert_no_error (r.error);
  g_assert_nonnull (r.context);
  g_assert_cmpstr (subagent_isolation_context_get_session_key (r.context), ==, "k");
  g_assert_true (provider->prepare_thread != NULL && provider->prepare_thread != g_thread_self ());
  subagent_isolation_context_cleanup (r.context);
  g_assert_cmpint (provider->cleanups, ==, 1);
  g_object_unref (r.context);
}

static void
test_prepare_async_shared (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-shared-async");
  g_autofree char *real = resolved (dir);
  g_autoptr(SubagentIsolationProvider) provider = subagent_shared_isolation_new ();
  g_autoptr(SubagentIsolationRequest) request = subagent_isolation_request_new (dir, "shared", NULL);
  AsyncResult r = { FALSE, NULL, NULL };

  subagent_isolation_provider_prepare_async (provider, request, NULL, prepared_cb, &r);
  sat_wait_for_flag (&r.done);
  g_assert_no_error (r.error);
  g_assert_cmpstr (subagent_isolation_context_get_child_root (r.context), ==, real);
  subagent_isolation_context_cleanup (r.context);
  g_object_unref (r.context);
  sat_rm_rf (dir);
}

static void
test_prepare_async_cancelled_before (void)
{
  g_autoptr(TestProvider) provider = g_object_new (TEST_TYPE_PROVIDER, NULL);
  g_autoptr(SubagentIsolationRequest) request = subagent_isolation_request_new ("/", "test", "k");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  AsyncResult r = { FALSE, NULL, NULL };

  g_cancellable_cancel (cancellable);
  subagent_isolation_provider_prepare_async (SUBAGENT_ISOLATION_PROVIDER (provider), request, cancellable,
                                             prepared_cb, &r);
  sat_wait_for_flag (&r.done);
  g_assert_null (r.context);
  g_assert_error (r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpint (provider->prepares, ==, 0);
  g_clear_error (&r.error);
}

static void
test_prepare_async_cancelled_during_cleans_up (void)
{
  g_autoptr(TestProvider) provider = g_object_new (TEST_TYPE_PROVIDER, NULL);
  g_autoptr(SubagentIsolationRequest) request = subagent_isolation_request_new ("/", "test", "k");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  AsyncResult r = { FALSE, NULL, NULL };

  provider->cancel_while_preparing = TRUE;
  subagent_isolation_provider_prepare_async (SUBAGENT_ISOLATION_PROVIDER (provider), request, cancellable,
                                             prepared_cb, &r);
  sat_wait_for_flag (&r.done);
  g_assert_null (r.context);
  g_assert_error (r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  /* The workspace made before the cancel was not leaked. */
  g_assert_cmpint (provider->prepares, ==, 1);
  g_assert_cmpint (provider->cleanups, ==, 1);
  g_clear_error (&r.error);
}

static void
test_provider_defaults (void)
{
  g_autoptr(TestEmptyProvider) empty = g_object_new (TEST_TYPE_EMPTY_PROVIDER, NULL);
  g_autoptr(SubagentIsolationRequest) request = subagent_isolation_request_new ("/", "test", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentIsolationContext) context = NULL;

  g_assert_true (subagent_isolation_provider_is_available (SUBAGENT_ISOLATION_PROVIDER (empty), &error));
  g_assert_no_error (error);
  context = subagent_isolation_provider_prepare (SUBAGENT_ISOLATION_PROVIDER (empty), request, NULL, &error);
  g_assert_null (context);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_NOT_IMPLEMENTED);
}

static void
test_provider_default_spawnv_uses_child_root (void)
{
  g_autofree char *dir = sat_make_temp_dir ("subagent-test-spawn");
  g_autofree char *real = resolved (dir);
  g_autoptr(TestProvider) provider = g_object_new (TEST_TYPE_PROVIDER, NULL);
  g_autoptr(SubagentIsolationContext) context = prepare_with (provider, real);
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  const char * const argv[] = { "sh", "-c", "touch made-here", NULL };

  proc = subagent_isolation_context_spawnv (context, argv, NULL, G_SUBPROCESS_FLAGS_NONE, &error);
  g_assert_no_error (error);
  g_subprocess_wait_check (proc, NULL, &error);
  g_assert_no_error (error);
  {
    g_autofree char *made = sat_read_file (real, "made-here");
    g_assert_nonnull (made);
  }
  subagent_isolation_context_cleanup (context);
  sat_rm_rf (dir);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/isolation/normalize/table", test_normalize_table);
  g_test_add_func ("/isolation/normalize/deprecated-alias-warning", test_deprecated_alias_warning);
  g_test_add_func ("/isolation/resolve-auto/git-work-tree", test_resolve_auto_git_repo);
  g_test_add_func ("/isolation/resolve-auto/plain-dir", test_resolve_auto_plain_dir);
  g_test_add_func ("/isolation/resolve-auto/bare-repo-is-not-a-work-tree", test_resolve_auto_bare_repo);

  g_test_add_func ("/isolation/session-key/format", test_session_key_format);
  g_test_add_func ("/isolation/session-key/hostile-inputs-stay-safe", test_session_key_hostile_inputs);
  g_test_add_func ("/isolation/session-key/validity", test_session_key_validity);

  g_test_add_func ("/isolation/request/options-getters", test_request_options_getters);
  g_test_add_func ("/isolation/request/defaults", test_request_defaults);

  g_test_add_func ("/isolation/shared/prepare-and-cleanup-twice", test_shared_prepare_and_cleanup_twice);
  g_test_add_func ("/isolation/shared/resolves-symlinked-root", test_shared_resolves_symlinked_root);
  g_test_add_func ("/isolation/shared/refuses-missing-or-file-root", test_shared_refuses_missing_or_file_root);
  g_test_add_func ("/isolation/shared/warns-about-unenforced-limits", test_shared_warns_about_unenforced_limits);
  g_test_add_func ("/isolation/shared/spawnv-runs-in-child-root", test_shared_spawnv_runs_in_child_root);

  g_test_add_func ("/isolation/context/spawnv-fails-for-missing-program-and-after-cleanup", test_spawnv_failures);
  g_test_add_func ("/isolation/context/cleanup-from-two-threads-runs-once", test_cleanup_from_two_threads_runs_once);
  g_test_add_func ("/isolation/context/cleanup-reentrant-runs-once", test_cleanup_reentrant_runs_once);
  g_test_add_func ("/isolation/context/finalize-does-not-clean-up", test_finalize_does_not_clean_up);
  g_test_add_func ("/isolation/context/properties", test_context_properties);

  g_test_add_func ("/isolation/provider/prepare-async-runs-in-worker-thread", test_prepare_async_runs_in_worker_thread);
  g_test_add_func ("/isolation/provider/prepare-async-shared", test_prepare_async_shared);
  g_test_add_func ("/isolation/provider/prepare-async-cancelled-before", test_prepare_async_cancelled_before);
  g_test_add_func ("/isolation/provider/prepare-async-cancelled-during-cleans-up", test_prepare_async_cancelled_during_cleans_up);
  g_test_add_func ("/isolation/provider/defaults", test_provider_defaults);
  g_test_add_func ("/isolation/provider/default-spawnv-uses-child-root", test_provider_default_spawnv_uses_child_root);

  return g_test_run ();
}
