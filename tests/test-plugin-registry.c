/* test-plugin-registry.c: plugin discovery, lazy loading, the broken-plugin
 * fixtures of tests/fixtures/plugins/ (`subagentctl plugins` is tested by
 * test-subagentctl-plugins.c).
 *
 * Modules are process-wide and never unloaded, so tests that assert what is
 * (not) mapped, or how often a module registered, run in a fresh subprocess.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <unistd.h>

#include "test-support.h"

#define REGISTRATIONS_QUARK "test-isolation-registrations"

/* strstr() assertions that show both strings when they fail. */
#define assert_contains(haystack, needle) check_contains (__FILE__, __LINE__, G_STRFUNC, haystack, needle, TRUE)
#define assert_lacks(haystack, needle) check_contains (__FILE__, __LINE__, G_STRFUNC, haystack, needle, FALSE)

static void
check_contains (const char *file,
                int         line,
                const char *func,
                const char *haystack,
                const char *needle,
                gboolean    expected)
{
  g_autofree char *message = NULL;

  if ((haystack != NULL && strstr (haystack, needle) != NULL) == expected)
    return;
  message = g_strdup_printf ("“%s” %s “%s”", haystack ? haystack : "(null)",
                             expected ? "does not contain" : "contains", needle);
  g_assertion_message (G_LOG_DOMAIN, file, line, func, message);
}

static char *
fixture_dir (const char *name)
{
  return g_test_build_filename (G_TEST_BUILT, "fixtures", "plugins", name, NULL);
}

static SubagentPluginRegistry *
fixture_registry (const char *name)
{
  g_autofree char *dir = fixture_dir (name);
  const char *path[] = { dir, NULL };

  return subagent_plugin_registry_new (path);
}

static char *
read_maps (void)
{
  g_autoptr(GError) error = NULL;
  char *maps = NULL;

  g_file_get_contents ("/proc/self/maps", &maps, NULL, &error);
  g_assert_no_error (error);
  return maps;
}

/* Whether any plugin module (libsubagent-NAME.so, not libsubagent-1.0) is mapped. */
static gboolean
maps_have_plugin_module (const char *maps)
{
  g_auto(GStrv) lines = g_strsplit (maps, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], "/libsubagent-") != NULL && strstr (lines[i], "/libsubagent-1.0.so") == NULL)
      return TRUE;
  return FALSE;
}

static guint
registrations_of (const char *type_name)
{
  GType type = g_type_from_name (type_name);

  g_assert_true (type != G_TYPE_INVALID);
  return GPOINTER_TO_UINT (g_type_get_qdata (type, g_quark_from_static_string (REGISTRATIONS_QUARK)));
}

static void
run_in_subprocess (const char *path)
{
  g_test_trap_subprocess (path, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

/* --- discovery ------------------------------------------------------------ */

static void
discovery_maps_no_module_child (void)
{
  g_autofree char *good = fixture_dir ("test-isolation");
  g_autofree char *broken = fixture_dir ("cannot-open");
  g_autofree char *env_path = g_strjoin (":", good, broken, g_getenv ("SUBAGENT_PLUGIN_PATH"), NULL);
  g_autoptr(SubagentPluginRegistry) registry = NULL;
  g_autoptr(GPtrArray) plugins = NULL;
  g_autoptr(SubagentIsolationProvider) shared = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *maps_after_list = NULL;
  g_autofree char *maps_after_shared = NULL;
  gboolean saw_docker = FALSE, saw_test = FALSE;

  g_setenv ("SUBAGENT_PLUGIN_PATH", env_path, TRUE);
  registry = subagent_plugin_registry_new (NULL);
  plugins = subagent_plugin_registry_list_plugins (registry);
  for (guint i = 0; i < plugins->len; i++)
    {
      SubagentPluginInfo *info = g_ptr_array_index (plugins, i);

      saw_docker |= g_str_equal (subagent_plugin_info_get_name (info), "isolation-docker");
      saw_test |= g_str_equal (subagent_plugin_info_get_name (info), "test-isolation");
      g_assert_false (subagent_plugin_info_is_loaded (info));
    }
  g_assert_true (saw_docker);
  g_assert_true (saw_test);
  g_assert_true (subagent_plugin_registry_get_default () != NULL);

  maps_after_list = read_maps ();
  g_assert_false (maps_have_plugin_module (maps_after_list));
  assert_contains (maps_after_list, "/libsubagent-1.0.so");  /* the check can see libraries */

  shared = subagent_plugin_registry_get_isolation_provider (registry, "shared", &error);
  g_assert_no_error (error);
  g_assert_true (SUBAGENT_IS_SHARED_ISOLATION (shared));
  maps_after_shared = read_maps ();
  g_assert_false (maps_have_plugin_module (maps_after_shared));
  for (guint i = 0; i < plugins->len; i++)
    g_assert_false (subagent_plugin_info_is_loaded (g_ptr_array_index (plugins, i)));
}

static void
test_discovery_maps_no_module (void)
{
  run_in_subprocess ("/plugin-registry/discovery/maps-no-module/subprocess");
}

static void
write_descriptor (const char *dir,
                  const char *file,
                  const char *name,
                  const char *backend,
                  const char *description)
{
  g_autofree char *text = g_strdup_printf ("[Plugin]\nName=%s\nModule=lib%s.so\nInterface=SubagentIsolationProvider\n"
                                           "Provides=%s;\nABI=1.0\nVersion=1.0\nDescription=%s\n",
                                           name, name, backend, description);

  sat_write_file (dir, file, text);
}

static void
test_search_path_env_order (void)
{
  g_autofree char *a = sat_make_temp_dir ("plugins-a");
  g_autofree char *b = sat_make_temp_dir ("plugins-b");
  g_autofree char *saved = g_strdup (g_getenv ("SUBAGENT_PLUGIN_PATH"));
  g_autofree char *a_then_b = g_strjoin (":", a, "", b, NULL);
  g_autofree char *b_then_a = g_strjoin (":", b, a, NULL);

  write_descriptor (a, "dup.plugin", "dup", "dup-backend", "from A");
  write_descriptor (b, "dup.plugin", "dup", "dup-backend", "from B");
  write_descriptor (b, "other.plugin", "other", "dup-backend", "other from B");

  g_setenv ("SUBAGENT_PLUGIN_PATH", a_then_b, TRUE);
  {
    g_autoptr(SubagentPluginRegistry) registry = subagent_plugin_registry_new (NULL);
    const char * const *path = subagent_plugin_registry_get_search_path (registry);
    g_autoptr(SubagentPluginInfo) info = subagent_plugin_registry_find_plugin (registry, "dup", NULL);
    g_autoptr(SubagentPluginInfo) by_backend =
      subagent_plugin_registry_find_for_backend (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, "dup-backend", NULL);
    g_autoptr(GPtrArray) plugins = subagent_plugin_registry_list_plugins (registry);

    /* SUBAGENT_PLUGIN_PATH first (empty entries dropped), the installed dir last. */
    g_assert_cmpuint (g_strv_length ((char **) path), ==, 3);
    g_assert_cmpstr (path[0], ==, a);
    g_assert_cmpstr (path[1], ==, b);
    g_assert_true (g_str_has_suffix (path[2], "subagent-1.0/plugins"));
    g_assert_cmpstr (subagent_plugin_info_get_description (info), ==, "from A");
    g_assert_true (info == by_backend);
    g_assert_cmpuint (plugins->len, ==, 2);  /* B's dup is shadowed */
  }

  g_setenv ("SUBAGENT_PLUGIN_PATH", b_then_a, TRUE);
  {
    g_autoptr(SubagentPluginRegistry) registry = subagent_plugin_registry_new (NULL);
    g_autoptr(SubagentPluginInfo) info = subagent_plugin_registry_find_plugin (registry, "dup", NULL);

    g_assert_cmpstr (subagent_plugin_info_get_description (info), ==, "from B");
  }

  /* An explicit path ignores the environment. */
  {
    const char *only_a[] = { a, NULL };
    g_autoptr(SubagentPluginRegistry) registry = subagent_plugin_registry_new (only_a);
    g_autoptr(GPtrArray) plugins = subagent_plugin_registry_list_plugins (registry);

    g_assert_cmpuint (g_strv_length ((char **) subagent_plugin_registry_get_search_path (registry)), ==, 1);
    g_assert_cmpuint (plugins->len, ==, 1);
  }

  if (saved != NULL)
    g_setenv ("SUBAGENT_PLUGIN_PATH", saved, TRUE);
  else
    g_unsetenv ("SUBAGENT_PLUGIN_PATH");
  sat_rm_rf (a);
  sat_rm_rf (b);
}

static void
test_not_found_lists_search_path (void)
{
  g_autoptr(SubagentPluginRegistry) registry = fixture_registry ("bad-descriptor");
  g_autofree char *dir = fixture_dir ("bad-descriptor");
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) object = NULL;

  object = subagent_plugin_registry_create (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, "no-such-backend", &error);
  g_assert_null (object);
  g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_NOT_FOUND);
  assert_contains (error->message, dir);
  assert_contains (error->message, "no-such-backend");
  assert_contains (error->message, "SUBAGENT_PLUGIN_PATH");
  assert_contains (error->message, "could not be read");
  g_clear_error (&error);

  g_assert_null (subagent_plugin_registry_find_plugin (registry, "nothing", &error));
  g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_NOT_FOUND);
}

/* --- loading -------------------------------------------------------------- */

static void
lazy_load_child (void)
{
  g_autoptr(SubagentPluginRegistry) registry = fixture_registry ("test-isolation");
  g_autoptr(SubagentPluginInfo) info = NULL;
  g_autoptr(GObject) first = NULL;
  g_autoptr(GObject) second = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *maps_before = NULL;
  g_autofree char *maps_after = NULL;

  info = subagent_plugin_registry_find_for_backend (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, "test-echo", &error);
  g_assert_no_error (error);
  g_assert_false (subagent_plugin_info_is_loaded (info));
  g_assert_null (subagent_plugin_info_get_module (info));
  g_assert_true (g_type_from_name ("TestEchoIsolation") == G_TYPE_INVALID);
  maps_before = read_maps ();
  assert_lacks (maps_before, subagent_plugin_info_get_module_path (info));

  first = subagent_plugin_registry_create (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, "test-echo", &error);
  g_assert_no_error (error);
  g_assert_true (SUBAGENT_IS_ISOLATION_PROVIDER (first));
  g_assert_cmpstr (G_OBJECT_TYPE_NAME (first), ==, "TestEchoIsolation");
  g_assert_true (subagent_plugin_info_is_loaded (info));
  maps_after = read_maps ();
  assert_contains (maps_after, subagent_plugin_info_get_module_path (info));

  second = subagent_plugin_registry_create (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, "test-echo", &error);
  g_assert_no_error (error);
  g_assert_true (first != second);
  g_assert_cmpuint (registrations_of ("TestEchoIsolation"), ==, 1);
}

static void
test_lazy_load_on_first_create (void)
{
  run_in_subprocess ("/plugin-registry/load/lazy-on-first-create/subprocess");
}

typedef struct {
  SubagentPluginRegistry *registry;
  GObject *created;
  SubagentIsolationProvider *provider;
} ThreadData;

static gpointer
create_in_thread (gpointer user_data)
{
  ThreadData *data = user_data;
  g_autoptr(GError) error = NULL;

  data->created = subagent_plugin_registry_create (data->registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, "test-echo", &error);
  g_assert_no_error (error);
  data->provider = subagent_plugin_registry_get_isolation_provider (data->registry, "test-echo", &error);
  g_assert_no_error (error);
  return NULL;
}

static void
concurrent_create_child (void)
{
  g_autoptr(SubagentPluginRegistry) registry = fixture_registry ("test-isolation");
  ThreadData data[8] = { { 0 } };
  GThread *threads[G_N_ELEMENTS (data)];

  for (guint i = 0; i < G_N_ELEMENTS (data); i++)
    {
      data[i].registry = registry;
      threads[i] = g_thread_new ("create", create_in_thread, &data[i]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (data); i++)
    g_thread_join (threads[i]);

  for (guint i = 0; i < G_N_ELEMENTS (data); i++)
    {
      g_assert_cmpstr (G_OBJECT_TYPE_NAME (data[i].created), ==, "TestEchoIsolation");
      /* One cached provider per backend, whichever thread made it. */
      g_assert_true (data[i].provider == data[0].provider);
      g_object_unref (data[i].created);
      g_object_unref (data[i].provider);
    }
  g_assert_cmpuint (registrations_of ("TestEchoIsolation"), ==, 1);
}

static void
test_concurrent_create_loads_once (void)
{
  run_in_subprocess ("/plugin-registry/load/concurrent-create-loads-once/subprocess");
}

static void
test_good_plugin_prepares (void)
{
  g_autoptr(SubagentPluginRegistry) registry = fixture_registry ("test-isolation");
  g_autoptr(SubagentIsolationProvider) provider = NULL;
  g_autoptr(SubagentIsolationProvider) again = NULL;
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *root = sat_make_temp_dir ("plugin-root");
  g_autofree char *key = subagent_isolation_new_session_key ("run1", "echo");

  provider = subagent_plugin_registry_get_isolation_provider (registry, "test-echo", &error);
  g_assert_no_error (error);
  again = subagent_plugin_registry_get_isolation_provider (registry, "test-echo", &error);
  g_assert_no_error (error);
  g_assert_true (provider == again);
  g_assert_true (subagent_isolation_provider_is_available (provider, &error));
  g_assert_no_error (error);

  request = subagent_isolation_request_new (root, "test-echo", key);
  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (subagent_isolation_context_get_child_root (context), ==, root);
  g_assert_cmpstr (subagent_isolation_context_get_parent_root (context), ==, root);
  g_assert_cmpstr (subagent_isolation_context_get_isolation (context), ==, "test-echo");
  subagent_isolation_context_cleanup (context);
  g_assert_true (g_file_test (root, G_FILE_TEST_IS_DIR));
  sat_rm_rf (root);
}

static void
test_create_from_pinned_plugin (void)
{
  g_autofree char *shadow = sat_make_temp_dir ("plugin-shadow");
  g_autofree char *good = fixture_dir ("test-isolation");
  const char *path[] = { shadow, good, NULL };
  g_autoptr(SubagentPluginRegistry) registry = NULL;
  g_autoptr(GObject) first = NULL;
  g_autoptr(GObject) pinned = NULL;
  g_autoptr(GObject) wrong = NULL;
  g_autoptr(GError) error = NULL;

  write_descriptor (shadow, "shadow.plugin", "shadow", "test-echo", "earlier in the path, no module");
  registry = subagent_plugin_registry_new (path);

  first = subagent_plugin_registry_create (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, "test-echo", &error);
  g_assert_null (first);
  g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_OPEN_FAILED);
  assert_contains (error->message, "libshadow.so");
  g_clear_error (&error);

  pinned = subagent_plugin_registry_create_from_plugin (registry, "test-isolation", SUBAGENT_TYPE_ISOLATION_PROVIDER,
                                                        "test-echo", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (G_OBJECT_TYPE_NAME (pinned), ==, "TestEchoIsolation");

  wrong = subagent_plugin_registry_create_from_plugin (registry, "test-isolation", SUBAGENT_TYPE_ISOLATION_PROVIDER,
                                                       "docker", &error);
  g_assert_null (wrong);
  g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_NOT_FOUND);
  assert_contains (error->message, "test-isolation.plugin");
  sat_rm_rf (shadow);
}

/* The docker plugin loads its real backend; without an engine in sight it
 * still refuses a request that names no image (tests/test-docker.c covers
 * the engine itself). */
static void
test_docker_plugin_loads (void)
{
  g_autoptr(SubagentPluginRegistry) registry = subagent_plugin_registry_new (NULL);
  g_autoptr(SubagentIsolationProvider) provider = NULL;
  g_autoptr(SubagentIsolationRequest) request = NULL;
  g_autoptr(SubagentIsolationContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *root = sat_make_temp_dir ("plugin-root");

  provider = subagent_plugin_registry_get_isolation_provider (registry, "docker", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (G_OBJECT_TYPE_NAME (provider), ==, "SubagentDockerIsolation");

  request = subagent_isolation_request_new (root, "docker", "run-docker-00000000");
  context = subagent_isolation_provider_prepare (provider, request, NULL, &error);
  g_assert_null (context);
  g_assert_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION);
  assert_contains (error->message, "docker.image");
  sat_rm_rf (root);
}

static void
test_module_load_file_once_per_path (void)
{
  g_autofree char *dir = fixture_dir ("test-isolation");
  g_autofree char *path = g_build_filename (dir, "libsubagent-test-isolation.so", NULL);
  g_autofree char *tmp = sat_make_temp_dir ("plugin-link");
  g_autofree char *link = g_build_filename (tmp, "link.so", NULL);
  g_autoptr(SubagentPluginModule) first = NULL;
  g_autoptr(SubagentPluginModule) second = NULL;
  g_autoptr(SubagentPluginModule) via_link = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) backends = NULL;

  g_assert_cmpint (symlink (path, link), ==, 0);
  first = subagent_plugin_module_load_file (path, &error);
  g_assert_no_error (error);
  second = subagent_plugin_module_load_file (path, &error);
  g_assert_no_error (error);
  via_link = subagent_plugin_module_load_file (link, &error);
  g_assert_no_error (error);
  g_assert_true (first == second);
  g_assert_true (first == via_link);
  g_assert_cmpstr (subagent_plugin_module_get_descriptor (first)->name, ==, "test-isolation");
  g_assert_cmpstr (subagent_plugin_module_get_descriptor (first)->license, ==, "LGPL-2.1-or-later");
  backends = subagent_plugin_module_list_backends (first);
  g_assert_cmpstrv (backends, ((const char * const[]) { "test-echo", NULL }));
  g_assert_cmpstr (g_type_name (subagent_plugin_module_get_provided (first, "test-echo")), ==, "TestEchoIsolation");
  g_assert_true (subagent_plugin_module_get_provided (first, "nope") == G_TYPE_INVALID);
  g_assert_cmpuint (registrations_of ("TestEchoIsolation"), ==, 1);
  sat_rm_rf (tmp);
}

/* --- broken plugins ------------------------------------------------------- */

typedef struct {
  const char *fixture;
  const char *backend;
  int code;                   /* a SubagentPluginError */
  const char *file;           /* the file the message must name */
  const char *also;           /* more text the message must hold */
} BrokenCase;

static const BrokenCase broken_cases[] = {
  { "cannot-open", "cannot-open", SUBAGENT_PLUGIN_ERROR_OPEN_FAILED, "libsubagent-cannot-open.so", "could not be opened" },
  { "missing-symbol", "missing-symbol", SUBAGENT_PLUGIN_ERROR_MISSING_SYMBOL, "libsubagent-missing-symbol.so", "subagent_plugin_descriptor" },
  { "abi-mismatch", "abi-mismatch", SUBAGENT_PLUGIN_ERROR_ABI_MISMATCH, "libsubagent-abi-mismatch.so", "built for plugin ABI 2.0, host has 1.0" },
  { "abi-too-new", "abi-too-new", SUBAGENT_PLUGIN_ERROR_ABI_MISMATCH, "libsubagent-abi-too-new.so", "built for plugin ABI 1.1, host has 1.0" },
  { "wrong-interface", "wrong-interface", SUBAGENT_PLUGIN_ERROR_WRONG_INTERFACE, "wrong-interface.plugin", "FixtureNotAProvider" },
  { "register-failed", "register-failed", SUBAGENT_PLUGIN_ERROR_REGISTER_FAILED, "libsubagent-register-failed.so", "refuses to register" },
};

static void
test_broken_fixture (gconstpointer user_data)
{
  const BrokenCase *c = user_data;
  g_autoptr(SubagentPluginRegistry) registry = fixture_registry (c->fixture);
  g_autoptr(SubagentPluginInfo) info = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) again = NULL;
  g_autoptr(GObject) object = NULL;
  g_autofree char *dir = fixture_dir (c->fixture);
  g_autofree char *file = g_build_filename (dir, c->file, NULL);

  /* The descriptor itself is fine: the plugin is listed. */
  info = subagent_plugin_registry_find_for_backend (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, c->backend, &error);
  g_assert_no_error (error);

  object = subagent_plugin_registry_create (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, c->backend, &error);
  g_assert_null (object);
  g_assert_error (error, SUBAGENT_PLUGIN_ERROR, c->code);
  g_test_message ("%s: %s", c->fixture, error->message);
  assert_contains (error->message, file);
  assert_contains (error->message, c->also);
  g_assert_false (subagent_plugin_info_is_loaded (info));

  /* The failure is kept: the same answer, without opening the module again. */
  g_assert_false (subagent_plugin_registry_load_plugin (registry, info, &again));
  g_assert_error (again, SUBAGENT_PLUGIN_ERROR, c->code);
  g_assert_cmpstr (again->message, ==, error->message);
}

static void
test_bad_descriptor_fixture (void)
{
  g_autoptr(SubagentPluginRegistry) registry = fixture_registry ("bad-descriptor");
  g_autoptr(GPtrArray) plugins = subagent_plugin_registry_list_plugins (registry);
  g_autoptr(GPtrArray) diagnostics = subagent_plugin_registry_get_diagnostics (registry);
  g_autofree char *dir = fixture_dir ("bad-descriptor");
  g_autofree char *garbage = g_build_filename (dir, "garbage.plugin", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing-module.plugin", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentPluginInfo) info = NULL;
  gboolean saw_garbage = FALSE, saw_missing = FALSE;

  g_assert_cmpuint (plugins->len, ==, 0);
  g_assert_cmpuint (diagnostics->len, ==, 2);
  for (guint i = 0; i < diagnostics->len; i++)
    {
      GError *d = g_ptr_array_index (diagnostics, i);

      g_assert_error (d, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR);
      saw_garbage |= strstr (d->message, garbage) != NULL;
      saw_missing |= strstr (d->message, missing) != NULL && strstr (d->message, "Module=") != NULL;
    }
  g_assert_true (saw_garbage);
  g_assert_true (saw_missing);

  info = subagent_plugin_info_new_from_file (missing, &error);
  g_assert_null (info);
  g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR);
}

static void
test_descriptor_validation (void)
{
  static const struct { const char *text; const char *complaint; } bad[] = {
    { "[Plugin]\nName=x\nModule=../evil.so\nInterface=SubagentIsolationProvider\nProvides=x;\nABI=1.0\n", "Module=" },
    { "[Plugin]\nName=x\nModule=/usr/lib/evil.so\nInterface=SubagentIsolationProvider\nProvides=x;\nABI=1.0\n", "Module=" },
    { "[Plugin]\nName=x y\nModule=libx.so\nInterface=SubagentIsolationProvider\nProvides=x;\nABI=1.0\n", "Name=" },
    { "[Plugin]\nName=x\nModule=libx.so\nInterface=SubagentIsolationProvider\nProvides=\nABI=1.0\n", "Provides=" },
    { "[Plugin]\nName=x\nModule=libx.so\nInterface=SubagentIsolationProvider\nProvides=a/b;\nABI=1.0\n", "Provides=" },
    { "[Plugin]\nName=x\nModule=libx.so\nInterface=SubagentIsolationProvider\nProvides=x;\nABI=one\n", "ABI=" },
    { "[Plugin]\nName=x\nModule=libx.so\nInterface=1Bad\nProvides=x;\nABI=1.0\n", "Interface=" },
    { "[Plugin]\nName=x\nModule=libx.so\nProvides=x;\nABI=1.0\n", "Interface=" },
    { "[Other]\nName=x\n", "[Plugin]" },
  };
  g_autofree char *dir = sat_make_temp_dir ("plugin-descriptors");
  g_autofree char *path = g_build_filename (dir, "x.plugin", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SubagentPluginInfo) info = NULL;

      sat_write_file (dir, "x.plugin", bad[i].text);
      info = subagent_plugin_info_new_from_file (path, &error);
      g_assert_null (info);
      g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR);
      assert_contains (error->message, path);
      assert_contains (error->message, bad[i].complaint);
    }
  sat_rm_rf (dir);
}

static void
test_descriptor_abi_refused_without_open (void)
{
  g_autofree char *dir = sat_make_temp_dir ("plugin-abi");
  const char *path[] = { dir, NULL };
  g_autoptr(SubagentPluginRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) object = NULL;

  /* The module does not exist: an attempt to open it would say OPEN_FAILED. */
  sat_write_file (dir, "future.plugin",
                  "[Plugin]\nName=future\nModule=libsubagent-future.so\nInterface=SubagentIsolationProvider\n"
                  "Provides=future;\nABI=1.5\n");
  registry = subagent_plugin_registry_new (path);
  object = subagent_plugin_registry_create (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, "future", &error);
  g_assert_null (object);
  g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_ABI_MISMATCH);
  assert_contains (error->message, "future.plugin");
  assert_contains (error->message, "ABI 1.5, host has 1.0");
  sat_rm_rf (dir);
}

static void
test_unknown_interface (void)
{
  g_autofree char *dir = sat_make_temp_dir ("plugin-iface");
  const char *path[] = { dir, NULL };
  g_autoptr(SubagentPluginRegistry) registry = NULL;
  g_autoptr(SubagentPluginInfo) info = NULL;
  g_autoptr(GError) error = NULL;

  sat_write_file (dir, "odd.plugin",
                  "[Plugin]\nName=odd\nModule=libsubagent-odd.so\nInterface=NoSuchInterface\nProvides=odd;\nABI=1.0\n");
  registry = subagent_plugin_registry_new (path);
  g_assert_null (subagent_plugin_registry_find_for_backend (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, "odd", &error));
  g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_NOT_FOUND);
  g_clear_error (&error);

  info = subagent_plugin_registry_find_for_backend (registry, G_TYPE_INVALID, "odd", &error);
  g_assert_no_error (error);
  g_assert_false (subagent_plugin_registry_load_plugin (registry, info, &error));
  g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR);
  assert_contains (error->message, "odd.plugin");
  assert_contains (error->message, "NoSuchInterface");

  g_assert_true (subagent_plugin_registry_lookup_interface ("SubagentIsolationProvider") == SUBAGENT_TYPE_ISOLATION_PROVIDER);
  g_assert_true (subagent_plugin_registry_lookup_interface ("GObject") == G_TYPE_INVALID);
  sat_rm_rf (dir);
}

static void
test_module_symlink_outside_refused (void)
{
  g_autofree char *dir = sat_make_temp_dir ("plugin-symlink");
  g_autofree char *fixture = fixture_dir ("test-isolation");
  g_autofree char *target = g_build_filename (fixture, "libsubagent-test-isolation.so", NULL);
  g_autofree char *link = g_build_filename (dir, "libsubagent-test-isolation.so", NULL);
  const char *path[] = { dir, NULL };
  g_autoptr(SubagentPluginRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) object = NULL;

  sat_write_file (dir, "test-isolation.plugin",
                  "[Plugin]\nName=test-isolation\nModule=libsubagent-test-isolation.so\n"
                  "Interface=SubagentIsolationProvider\nProvides=test-echo;\nABI=1.0\n");
  g_assert_cmpint (symlink (target, link), ==, 0);
  registry = subagent_plugin_registry_new (path);
  object = subagent_plugin_registry_create (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, "test-echo", &error);
  g_assert_null (object);
  g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_OPEN_FAILED);
  assert_contains (error->message, "outside the descriptor's directory");
  assert_contains (error->message, link);
  sat_rm_rf (dir);
}

static void
name_mismatch_child (void)
{
  g_autofree char *dir = sat_make_temp_dir ("plugin-renamed");
  g_autofree char *fixture = fixture_dir ("test-isolation");
  g_autofree char *source = g_build_filename (fixture, "libsubagent-test-isolation.so", NULL);
  g_autofree char *copy = g_build_filename (dir, "libsubagent-renamed.so", NULL);
  g_autoptr(GFile) from = g_file_new_for_path (source);
  g_autoptr(GFile) to = g_file_new_for_path (copy);
  const char *path[] = { dir, NULL };
  g_autoptr(SubagentPluginRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) object = NULL;

  g_file_copy (from, to, G_FILE_COPY_NONE, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  sat_write_file (dir, "renamed.plugin",
                  "[Plugin]\nName=renamed\nModule=libsubagent-renamed.so\n"
                  "Interface=SubagentIsolationProvider\nProvides=test-echo;\nABI=1.0\n");
  registry = subagent_plugin_registry_new (path);
  object = subagent_plugin_registry_create (registry, SUBAGENT_TYPE_ISOLATION_PROVIDER, "test-echo", &error);
  g_assert_null (object);
  g_assert_error (error, SUBAGENT_PLUGIN_ERROR, SUBAGENT_PLUGIN_ERROR_BAD_DESCRIPTOR);
  assert_contains (error->message, "renamed.plugin");
  assert_contains (error->message, "calls itself “test-isolation”");
  sat_rm_rf (dir);
}

static void
test_descriptor_name_must_match_module (void)
{
  run_in_subprocess ("/plugin-registry/descriptor/name-must-match-module/subprocess");
}

static void
test_info_to_json (void)
{
  g_autoptr(SubagentPluginRegistry) registry = fixture_registry ("test-isolation");
  g_autoptr(SubagentPluginInfo) info = subagent_plugin_registry_find_plugin (registry, "test-isolation", NULL);
  g_autoptr(JsonObject) json = subagent_plugin_info_to_json (info);
  JsonArray *provides = json_object_get_array_member (json, "provides");
  g_autoptr(GPtrArray) diagnostics = subagent_plugin_registry_get_diagnostics (registry);

  g_assert_cmpuint (diagnostics->len, ==, 0);
  g_assert_cmpstr (json_object_get_string_member (json, "name"), ==, "test-isolation");
  g_assert_cmpstr (json_object_get_string_member (json, "interface"), ==, "SubagentIsolationProvider");
  g_assert_cmpstr (json_object_get_string_member (json, "abi"), ==, "1.0");
  g_assert_cmpstr (json_object_get_string_member (json, "version"), ==, "0.0.1");
  g_assert_cmpstr (json_object_get_string_member (json, "module"), ==, subagent_plugin_info_get_module_path (info));
  g_assert_cmpstr (json_object_get_string_member (json, "descriptor"), ==, subagent_plugin_info_get_descriptor_path (info));
  g_assert_true (g_str_has_suffix (subagent_plugin_info_get_module_path (info), "/libsubagent-test-isolation.so"));
  g_assert_cmpuint (json_array_get_length (provides), ==, 1);
  g_assert_cmpstr (json_array_get_string_element (provides, 0), ==, "test-echo");
  g_assert_cmpuint (subagent_plugin_info_get_abi_major (info), ==, 1);
  g_assert_cmpuint (subagent_plugin_info_get_abi_minor (info), ==, 0);
}

static void
test_default_registry_is_shared (void)
{
  SubagentPluginRegistry *registry = subagent_plugin_registry_get_default ();

  g_assert_true (SUBAGENT_IS_PLUGIN_REGISTRY (registry));
  g_assert_true (registry == subagent_plugin_registry_get_default ());
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/plugin-registry/discovery/maps-no-module", test_discovery_maps_no_module);
  g_test_add_func ("/plugin-registry/discovery/maps-no-module/subprocess", discovery_maps_no_module_child);
  g_test_add_func ("/plugin-registry/discovery/search-path-env-order", test_search_path_env_order);
  g_test_add_func ("/plugin-registry/discovery/not-found-lists-search-path", test_not_found_lists_search_path);
  g_test_add_func ("/plugin-registry/discovery/default-registry-is-shared", test_default_registry_is_shared);
  g_test_add_func ("/plugin-registry/descriptor/bad-descriptor-fixture", test_bad_descriptor_fixture);
  g_test_add_func ("/plugin-registry/descriptor/validation", test_descriptor_validation);
  g_test_add_func ("/plugin-registry/descriptor/abi-refused-without-open", test_descriptor_abi_refused_without_open);
  g_test_add_func ("/plugin-registry/descriptor/unknown-interface", test_unknown_interface);
  g_test_add_func ("/plugin-registry/descriptor/module-symlink-outside-refused", test_module_symlink_outside_refused);
  g_test_add_func ("/plugin-registry/descriptor/name-must-match-module", test_descriptor_name_must_match_module);
  g_test_add_func ("/plugin-registry/descriptor/name-must-match-module/subprocess", name_mismatch_child);
  g_test_add_func ("/plugin-registry/info/to-json", test_info_to_json);
  g_test_add_func ("/plugin-registry/load/lazy-on-first-create", test_lazy_load_on_first_create);
  g_test_add_func ("/plugin-registry/load/lazy-on-first-create/subprocess", lazy_load_child);
  g_test_add_func ("/plugin-registry/load/concurrent-create-loads-once", test_concurrent_create_loads_once);
  g_test_add_func ("/plugin-registry/load/concurrent-create-loads-once/subprocess", concurrent_create_child);
  g_test_add_func ("/plugin-registry/load/module-once-per-path", test_module_load_file_once_per_path);
  g_test_add_func ("/plugin-registry/load/good-plugin-prepares", test_good_plugin_prepares);
  g_test_add_func ("/plugin-registry/load/create-from-pinned-plugin", test_create_from_pinned_plugin);
  g_test_add_func ("/plugin-registry/load/docker-real-backend", test_docker_plugin_loads);
  for (guint i = 0; i < G_N_ELEMENTS (broken_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/plugin-registry/broken/%s", broken_cases[i].fixture);

      g_test_add_data_func (name, &broken_cases[i], test_broken_fixture);
    }

  return g_test_run ();
}
