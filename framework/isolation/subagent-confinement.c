/* subagent-confinement.c: kernel-enforced limits of host children, and the
 * files kept out of copied workspaces.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "subagent.h"
#include "subagent-confinement-private.h"
#include "subagent-isolation-context-private.h"
#include "subagent-landlock-private.h"
#include "subagent-run-context-private.h"

/**
 * SECTION:subagent-confinement
 * @title: Confinement
 * @short_description: Landlock domains of host children
 *
 * Every child the command runner starts on the host runs, by default, in a
 * Landlock domain it enters between fork and exec. Inside it:
 *
 * - writes succeed only beneath the child root — narrowed to the entries
 *   of the definition's `write_scope` when it has one (resolved inside the
 *   child root; a missing entry is made as a directory) — its own
 *   temporary directory, found in `TMPDIR` (emptied when the run ends; a
 *   manager hands it to a later child with the same rights, and lets such
 *   children write each other's, as they can write each other's files in
 *   the child root), and `/dev/null`,
 *   `/dev/zero`, `/dev/full`, `/dev/random`, `/dev/urandom`;
 * - a worktree child may also write exactly what `git add` and `git commit`
 *   need in the parent repository: `objects/`, its own
 *   `worktrees/<name>/`, and the directory of its branch's ref and reflog
 *   (`refs/heads/subagent/`, which holds only subagent branches); never
 *   `hooks/`, `config`, or the user's branches;
 * - everything else stays readable, except the approval key file;
 * - ptrace, `/proc/<pid>/environ` and `/proc/<pid>/mem` of processes outside
 *   the domain (the host) are refused; from Landlock ABI 6 signals to them
 *   and their abstract unix sockets are too;
 * - with `network: none` in the definition, TCP bind and connect fail
 *   (Landlock ABI 4).
 *
 * Settings: `confinement:` in a definition and in `config.yaml`
 * (`landlock`, `none`, `required`). A definition's setting wins, but a
 * configuration's `required` cannot be loosened by a definition. On a
 * kernel without Landlock a child runs unconfined after a warning (once per
 * process), or is not started when confinement is `required`.
 */

G_DEFINE_ENUM_TYPE (SubagentConfinement, subagent_confinement,
                    G_DEFINE_ENUM_VALUE (SUBAGENT_CONFINEMENT_DEFAULT, "default"),
                    G_DEFINE_ENUM_VALUE (SUBAGENT_CONFINEMENT_NONE, "none"),
                    G_DEFINE_ENUM_VALUE (SUBAGENT_CONFINEMENT_LANDLOCK, "landlock"),
                    G_DEFINE_ENUM_VALUE (SUBAGENT_CONFINEMENT_REQUIRED, "required"))

/**
 * subagent_confinement_to_string:
 * @confinement: a #SubagentConfinement
 *
 * Gives the name of a value.
 *
 * Returns: the name used in definitions and configuration (`landlock` for
 *   %SUBAGENT_CONFINEMENT_DEFAULT)
 *
 * Since: 0.2
 */
const char *
subagent_confinement_to_string (SubagentConfinement confinement)
{
  switch (confinement)
    {
    case SUBAGENT_CONFINEMENT_NONE: return "none";
    case SUBAGENT_CONFINEMENT_REQUIRED: return "required";
    case SUBAGENT_CONFINEMENT_DEFAULT:
    case SUBAGENT_CONFINEMENT_LANDLOCK:
    default:
      return "landlock";
    }
}

/**
 * subagent_confinement_from_string:
 * @text: `landlock`, `none` or `required` (case-insensitive)
 * @out: (out): the confinement
 *
 * Parses a name into a value.
 *
 * Returns: %TRUE if @text names a confinement
 *
 * Since: 0.2
 */
gboolean
subagent_confinement_from_string (const char          *text,
                                  SubagentConfinement *out)
{
  static const struct { const char *name; SubagentConfinement value; } names[] = {
    { "landlock", SUBAGENT_CONFINEMENT_LANDLOCK },
    { "none", SUBAGENT_CONFINEMENT_NONE },
    { "required", SUBAGENT_CONFINEMENT_REQUIRED },
  };

  g_return_val_if_fail (out != NULL, FALSE);

  if (text == NULL)
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_ascii_strcasecmp (text, names[i].name) == 0)
      {
        *out = names[i].value;
        return TRUE;
      }
  return FALSE;
}

/**
 * subagent_confinement_merge:
 * @configured: the configuration's confinement
 * @requested: the definition's confinement
 *
 * The confinement a child gets: the definition's when it sets one, else the
 * configuration's; a configuration's %SUBAGENT_CONFINEMENT_REQUIRED always
 * holds.
 *
 * Returns: the effective confinement
 *
 * Since: 0.2
 */
SubagentConfinement
subagent_confinement_merge (SubagentConfinement configured,
                            SubagentConfinement requested)
{
  if (configured == SUBAGENT_CONFINEMENT_REQUIRED)
    return SUBAGENT_CONFINEMENT_REQUIRED;
  if (requested != SUBAGENT_CONFINEMENT_DEFAULT)
    return requested;
  return configured;
}

/**
 * subagent_confinement_get_landlock_abi:
 *
 * Gets the running kernel's Landlock ABI version, 0 when it has no Landlock or it is disabled.
 *
 * Returns: the running kernel's Landlock ABI version, 0 when it has no
 *   Landlock or it is disabled
 *
 * Since: 0.2
 */
int
subagent_confinement_get_landlock_abi (void)
{
  return _subagent_landlock_abi ();
}

/* ---- one child ---------------------------------------------------------- */

void
_subagent_remove_tree (const char *path)
{
  DIR *dir;
  struct dirent *entry;
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0)
    {
      g_unlink (path);
      return;
    }
  dir = fdopendir (fd);
  if (dir == NULL)
    {
      close (fd);
      return;
    }
  while ((entry = readdir (dir)) != NULL)
    {
      g_autofree char *child = NULL;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      child = g_build_filename (path, entry->d_name, NULL);
      if (unlinkat (dirfd (dir), entry->d_name, 0) != 0)
        _subagent_remove_tree (child);
    }
  closedir (dir);
  g_rmdir (path);
}

static gboolean
is_beneath (const char *path,
            const char *root)
{
  gsize len = strlen (root);

  return g_str_equal (path, root) ||
         (strncmp (path, root, len) == 0 && (path[len] == '/' || g_str_equal (root, "/")));
}

static gboolean
has_glob (const char *text)
{
  return strpbrk (text, "*?[") != NULL;
}

/* The write_scope entries as directories or files inside the child root.
 * FALSE when the scope cannot be expressed as paths (globs): then the whole
 * root stays writable and only the review marks what lies outside. */
static gboolean
add_write_scope (SubagentLandlockPolicy *policy,
                 const char             *root_real,
                 const char * const     *scope)
{
  for (guint i = 0; scope[i] != NULL; i++)
    if (has_glob (scope[i]))
      return FALSE;

  for (guint i = 0; scope[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (root_real, scope[i], NULL);
      g_autofree char *real = NULL;

      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        g_mkdir_with_parents (path, 0755);
      real = realpath (path, NULL);
      /* Symlinks in the scope must not lead the child's writes out of its root. */
      if (real == NULL || !is_beneath (real, root_real))
        {
          g_warning ("write_scope entry “%s” does not name a path inside %s; the child may not write there",
                     scope[i], root_real);
          free (real);
          real = NULL;
          continue;
        }
      _subagent_landlock_policy_allow_write (policy, real);
      free (real);
      real = NULL;
    }
  return TRUE;
}

static char *
read_small_file (const char *path)
{
  char *contents = NULL;
  gsize length = 0;
  struct stat st;

  if (lstat (path, &st) != 0 || !S_ISREG (st.st_mode) || st.st_size > 4096)
    return NULL;
  if (!g_file_get_contents (path, &contents, &length, NULL))
    return NULL;
  return g_strstrip (contents);
}

/* A linked worktree at @root: let git add and commit in it. */
static void
add_worktree_git (SubagentLandlockPolicy *policy,
                  const char             *root)
{
  g_autofree char *dot_git = g_build_filename (root, ".git", NULL);
  g_autofree char *link = read_small_file (dot_git);
  g_autofree char *gitdir = NULL;
  g_autofree char *commondir_file = NULL;
  g_autofree char *commondir = NULL;
  g_autofree char *common = NULL;
  g_autofree char *head_file = NULL;
  g_autofree char *head = NULL;
  g_autofree char *worktrees = NULL;

  if (link == NULL || !g_str_has_prefix (link, "gitdir:"))
    return;
  gitdir = g_canonicalize_filename (g_strstrip (link + strlen ("gitdir:")), root);
  commondir_file = g_build_filename (gitdir, "commondir", NULL);
  commondir = read_small_file (commondir_file);
  if (commondir == NULL)
    return;
  common = g_canonicalize_filename (commondir, gitdir);
  worktrees = g_build_filename (common, "worktrees", NULL);
  /* Only an admin dir of this repository's own worktrees. */
  if (!is_beneath (gitdir, worktrees) || g_str_equal (gitdir, worktrees))
    return;

  _subagent_landlock_policy_allow_write (policy, gitdir);
  {
    g_autofree char *objects = g_build_filename (common, "objects", NULL);

    _subagent_landlock_policy_allow_write (policy, objects);
  }
  head_file = g_build_filename (gitdir, "HEAD", NULL);
  head = read_small_file (head_file);
  if (head != NULL && g_str_has_prefix (head, "ref: refs/heads/"))
    {
      const char *branch = head + strlen ("ref: refs/heads/");
      g_autofree char *branch_dir = g_path_get_dirname (branch);

      /* A branch at the top of refs/heads shares its directory with the
       * user's branches: its ref is then not writable (commits fail). */
      if (!g_str_equal (branch_dir, ".") && strstr (branch, "..") == NULL)
        {
          g_autofree char *refs = g_build_filename (common, "refs", "heads", branch_dir, NULL);
          g_autofree char *logs = g_build_filename (common, "logs", "refs", "heads", branch_dir, NULL);

          g_mkdir_with_parents (logs, 0755);
          _subagent_landlock_policy_allow_write (policy, refs);
          _subagent_landlock_policy_allow_write (policy, logs);
        }
    }
}

static void
warn_unconfined_once (const char *why)
{
  static gsize warned = 0;

  if (g_once_init_enter (&warned))
    {
      /* A message, shown by default, not a g_warning(): a kernel without
       * Landlock (or valgrind, which does not know its system calls) is a
       * condition of the machine, not a bug, and must not abort programs
       * that make warnings fatal (tests). */
      g_message ("Warning: host children run without confinement: %s. Set `confinement: required` to refuse "
                 "to start them instead, or `confinement: none` to silence this warning.", why);
      g_once_init_leave (&warned, 1);
    }
}

gboolean
_subagent_child_confinement_prepare (SubagentRunContext        *context,
                                     SubagentChildConfinement  *out,
                                     GError                   **error)
{
  SubagentDef *def = subagent_run_context_get_definition (context);
  SubagentIsolationContext *isolation = subagent_run_context_get_isolation (context);
  SubagentConfinement mode = subagent_confinement_merge (subagent_run_context_get_confinement (context),
                                                         subagent_def_get_confinement (def));
  const char * const *hidden = subagent_run_context_get_hidden_paths (context);
  const char * const *scope = subagent_def_get_write_scope (def);
  const char *network = subagent_def_get_network (def);
  g_autoptr(SubagentLandlockPolicy) policy = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *root_real = NULL;
  SubagentConfinementCache *cache;
  char *real;

  out->ruleset_fd = -1;
  out->tmpdir = NULL;
  out->applied = SUBAGENT_CONFINEMENT_APPLIED_NONE;
  out->lease = NULL;

  if (mode == SUBAGENT_CONFINEMENT_NONE)
    return TRUE;
  if (_subagent_landlock_abi () < 1)
    {
      if (mode == SUBAGENT_CONFINEMENT_REQUIRED)
        {
          g_set_error_literal (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                               "Confinement is required, but this kernel has no Landlock (or it is disabled "
                               "at boot); the child was not started");
          return FALSE;
        }
      warn_unconfined_once ("this kernel has no Landlock (or it is disabled at boot)");
      return TRUE;
    }

  /* Shared isolation resolved it a moment ago. */
  if (_subagent_isolation_context_get_child_root_resolved (isolation))
    root_real = g_strdup (subagent_isolation_context_get_child_root (isolation));
  else if ((real = realpath (subagent_isolation_context_get_child_root (isolation), NULL)) != NULL)
    {
      root_real = g_strdup (real);
      free (real);
    }
  else
    {
      int saved = errno;

      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                   "Cannot resolve the child root %s: %s", subagent_isolation_context_get_child_root (isolation),
                   g_strerror (saved));
      return FALSE;
    }

  policy = _subagent_landlock_policy_new ();
  if (scope == NULL || !add_write_scope (policy, root_real, scope))
    _subagent_landlock_policy_allow_write (policy, root_real);
  add_worktree_git (policy, root_real);
  for (guint i = 0; hidden != NULL && hidden[i] != NULL; i++)
    _subagent_landlock_policy_hide (policy, hidden[i]);
  /* A host with a key to hide holds one: without CAP_SYS_PTRACE, nothing
   * may read its memory or environment. */
  if (hidden != NULL && hidden[0] != NULL)
    prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (network != NULL && g_ascii_strcasecmp (network, "none") == 0)
    _subagent_landlock_policy_deny_tcp (policy);

  cache = _subagent_run_context_get_confinement_cache (context);
  if (cache != NULL)
    {
      /* A manager's children: the ruleset and a TMPDIR from its cache. */
      gboolean ruleset_failed = FALSE;

      out->lease = _subagent_confinement_cache_acquire (cache, policy, &ruleset_failed, &local_error);
      if (out->lease != NULL)
        {
          out->ruleset_fd = _subagent_confinement_lease_get_ruleset_fd (out->lease);
          out->tmpdir = g_strdup (_subagent_confinement_lease_get_tmpdir (out->lease));
        }
      else if (!ruleset_failed)
        {
          g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                       "Cannot make the child's temporary directory: %s", local_error->message);
          return FALSE;
        }
    }
  else
    {
      out->tmpdir = g_dir_make_tmp ("subagent-child-XXXXXX", &local_error);
      if (out->tmpdir == NULL)
        {
          g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                       "Cannot make the child's temporary directory: %s", local_error->message);
          return FALSE;
        }
      _subagent_landlock_policy_allow_write (policy, out->tmpdir);
      out->ruleset_fd = _subagent_landlock_policy_build (policy, &local_error);
    }
  if (out->ruleset_fd < 0)
    {
      _subagent_child_confinement_clear (out, TRUE);
      if (mode == SUBAGENT_CONFINEMENT_REQUIRED)
        {
          g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_SPAWN_FAILED,
                       "Confinement is required, but the Landlock ruleset could not be built: %s",
                       local_error->message);
          return FALSE;
        }
      warn_unconfined_once (local_error->message);
      return TRUE;
    }
  out->applied = SUBAGENT_CONFINEMENT_APPLIED_LANDLOCK;
  return TRUE;
}

void
_subagent_child_confinement_clear (SubagentChildConfinement *self,
                                   gboolean                  remove_tmpdir)
{
  if (self->lease != NULL)
    {
      /* The cache's ruleset; the TMPDIR is emptied and kept for another. */
      self->ruleset_fd = -1;
      if (remove_tmpdir)
        {
          g_clear_pointer (&self->lease, _subagent_confinement_lease_release);
          g_clear_pointer (&self->tmpdir, g_free);
        }
      return;
    }
  if (self->ruleset_fd >= 0)
    {
      close (self->ruleset_fd);
      self->ruleset_fd = -1;
    }
  if (remove_tmpdir && self->tmpdir != NULL)
    _subagent_remove_tree (self->tmpdir);
  if (remove_tmpdir)
    g_clear_pointer (&self->tmpdir, g_free);
}
