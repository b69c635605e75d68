/* test-worktree-helpers.h: what the worktree test programs share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-support.h"

/* Made by main() of each program; providers come from SUBAGENT_PLUGIN_PATH. */
static SubagentPluginRegistry *registry;

static G_GNUC_UNUSED SubagentIsolationProvider *
worktree_provider (void)
{
  g_autoptr(GError) error = NULL;
  SubagentIsolationProvider *provider =
    subagent_plugin_registry_get_isolation_provider (registry, "worktree", &error);

  g_assert_no_error (error);
  g_assert_nonnull (provider);
  return provider;
}

static G_GNUC_UNUSED SubagentIsolationRequest *
make_request (const char *root,
              const char *key,
              const char *options_json)
{
  g_autoptr(JsonNode) node = NULL;
  JsonObject *options = NULL;

  if (options_json != NULL)
    {
      g_autoptr(GError) error = NULL;
      node = json_from_string (options_json, &error);
      g_assert_no_error (error);
      options = json_node_get_object (node);
    }
  return g_object_new (SUBAGENT_TYPE_ISOLATION_REQUEST,
                       "parent-root", root, "isolation", "worktree",
                       "session-key", key, "parent-run-id", "run-1", "options", options, NULL);
}

static G_GNUC_UNUSED SubagentIsolationContext *
try_prepare (const char  *root,
             const char  *key,
             const char  *options_json,
             GError     **error)
{
  g_autoptr(SubagentIsolationProvider) provider = worktree_provider ();
  g_autoptr(SubagentIsolationRequest) request = make_request (root, key, options_json);

  return subagent_isolation_provider_prepare (provider, request, NULL, error);
}

static G_GNUC_UNUSED SubagentIsolationContext *
prepare_ok (const char *root,
            const char *key,
            const char *options_json)
{
  g_autoptr(GError) error = NULL;
  SubagentIsolationContext *context = try_prepare (root, key, options_json, &error);

  g_assert_no_error (error);
  g_assert_nonnull (context);
  return context;
}

/* git's output with the trailing newline removed. */
#define GIT(cwd, ...) git_out (sat_run ((cwd), FALSE, NULL, "git", __VA_ARGS__, NULL))

static G_GNUC_UNUSED char *
git_out (char *out)
{
  return g_strchomp (out);
}

static G_GNUC_UNUSED gboolean
exists (const char *dir,
        const char *relative)
{
  g_autofree char *path = g_build_filename (dir, relative, NULL);
  struct stat st;

  return lstat (path, &st) == 0;
}

/* File operations on @relative under @dir that must succeed. */
static G_GNUC_UNUSED void
unlink_in (const char *dir,
           const char *relative)
{
  g_autofree char *path = g_build_filename (dir, relative, NULL);
  g_assert_cmpint (g_unlink (path), ==, 0);
}

static G_GNUC_UNUSED void
chmod_in (const char *dir,
          const char *relative,
          int         mode)
{
  g_autofree char *path = g_build_filename (dir, relative, NULL);
  g_assert_cmpint (g_chmod (path, mode), ==, 0);
}

static G_GNUC_UNUSED void
mkdir_in (const char *dir,
          const char *relative)
{
  g_autofree char *path = g_build_filename (dir, relative, NULL);
  g_assert_cmpint (g_mkdir_with_parents (path, 0755), ==, 0);
}

static G_GNUC_UNUSED char *
real (const char *path)
{
  char *r = realpath (path, NULL);
  char *copy = g_strdup (r);

  free (r);
  return copy;
}

static G_GNUC_UNUSED gboolean
backend_flag (SubagentIsolationContext *context,
              const char               *key)
{
  gboolean value = FALSE;

  g_assert_true (g_variant_lookup (subagent_isolation_context_get_backend_data (context), key, "b", &value));
  return value;
}

static G_GNUC_UNUSED int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* Every path under @dir (but its top-level .git and .subagent), with its
 * kind, mode and contents (or link target): equal listings, equal trees. */
static G_GNUC_UNUSED void
list_tree (const char *dir,
           const char *relative,
           GString    *out)
{
  g_autofree char *path = g_build_filename (dir, relative, NULL);
  g_autoptr(GDir) d = g_dir_open (path, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    if (*relative != '\0' || (!g_str_equal (name, ".git") && !g_str_equal (name, ".subagent")))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *rel = *relative ? g_build_filename (relative, names->pdata[i], NULL) : g_strdup (names->pdata[i]);
      g_autofree char *full = g_build_filename (dir, rel, NULL);
      struct stat st;

      g_assert_cmpint (lstat (full, &st), ==, 0);
      g_string_append_printf (out, "%s %o ", rel, st.st_mode);
      if (S_ISDIR (st.st_mode))
        {
          g_string_append (out, "dir\n");
          list_tree (dir, rel, out);
        }
      else if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_file_read_link (full, NULL);
          g_string_append_printf (out, "-> %s\n", target);
        }
      else
        {
          g_autofree char *contents = NULL;
          gsize len;
          g_assert_true (g_file_get_contents (full, &contents, &len, NULL));
          g_string_append_len (out, contents, len);
          g_string_append_c (out, '\n');
        }
    }
}

static G_GNUC_UNUSED char *
tree_listing (const char *dir)
{
  GString *out = g_string_new (NULL);

  list_tree (dir, "", out);
  return g_string_free (out, FALSE);
}

static G_GNUC_UNUSED char *
dir_entries (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (names, (gpointer) name);
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (" ", (char **) names->pdata);
}

static G_GNUC_UNUSED void
assert_gone (const char *root,
             const char *key)
{
  g_autofree char *wt = g_build_filename (".subagent/worktrees", key, NULL);
  g_autofree char *admin = g_build_filename (".git/worktrees", key, NULL);
  g_autofree char *record = g_strdup_printf (".subagent/owners/%s.json", key);
  g_autofree char *branch = g_strconcat ("subagent/", key, NULL);
  g_autofree char *branches = GIT (root, "branch", "--list", branch);

  g_assert_false (exists (root, wt));
  g_assert_false (exists (root, admin));
  g_assert_false (exists (root, record));
  g_assert_cmpstr (branches, ==, "");
}

static G_GNUC_UNUSED char *
standard_repo (void)
{
  return sat_make_git_repo ("README", "hello\n",
                            "src/a.c", "int a;\n",
                            "src/b.c", "int b;\n",
                            "docs/x/y.md", "# y\n",
                            ".gitignore", "*.log\nout/\n",
                            NULL);
}
