/* subagent-exclude-set.c: the patterns of secret files copied workspaces
 * leave out, compiled once and matched per directory entry.
 *
 * Depends on GLib only: the docker exec helper (which does not load the
 * library, to start fast) compiles it in too, for its copy back.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <glib-object.h>

#include "subagent-secrets.h"

static const char * const secret_defaults[] = {
  ".env", ".env.*", "*.pem", "*.key", "id_rsa*", ".ssh/", "credentials.json", ".netrc", NULL,
};

/**
 * subagent_secret_exclude_defaults:
 *
 * The patterns of files a copied workspace (a snapshot, a container's
 * `/workspace`) leaves out by default, because they usually hold secrets:
 * `.env`, `.env.*`, `*.pem`, `*.key`, `id_rsa*`, `.ssh/`,
 * `credentials.json`, `.netrc`. A pattern matches a path component (a
 * trailing `/` only a directory's); see subagent_secret_path_is_excluded().
 * Configuration (`exclude:`) replaces the list.
 *
 * Returns: (transfer none) (array zero-terminated=1): the patterns
 *
 * Since: 0.2
 */
const char * const *
subagent_secret_exclude_defaults (void)
{
  return secret_defaults;
}

/**
 * subagent_secret_path_is_excluded:
 * @patterns: (nullable) (array zero-terminated=1): glob patterns; %NULL for
 *   subagent_secret_exclude_defaults()
 * @relative_path: a path relative to the workspace root, `/`-separated
 *
 * Whether @relative_path, or a directory it lies in, matches one of
 * @patterns. Patterns are shell globs (`*`, `?`) over one path component,
 * like `.gitignore` patterns without a slash; one ending in `/` matches
 * directories only (any component but the last, or the last when
 * @relative_path ends in `/`).
 *
 * Returns: %TRUE if the path is to be left out
 *
 * Since: 0.2
 */
gboolean
subagent_secret_path_is_excluded (const char * const *patterns,
                                  const char         *relative_path)
{
  g_autoptr(SubagentExcludeSet) set = NULL;

  g_return_val_if_fail (relative_path != NULL, FALSE);
  set = subagent_exclude_set_new (patterns);
  return subagent_exclude_set_match_path (set, relative_path);
}


/* ---- compiled sets --------------------------------------------------------- */

typedef struct {
  GPatternSpec *spec;
  gboolean dir_only;
} ExcludePattern;

struct _SubagentExcludeSet {
  gatomicrefcount ref;
  guint n;
  ExcludePattern patterns[];
};

G_DEFINE_BOXED_TYPE (SubagentExcludeSet, subagent_exclude_set,
                     subagent_exclude_set_ref, subagent_exclude_set_unref)

/**
 * subagent_exclude_set_new:
 * @patterns: (nullable) (array zero-terminated=1): patterns in the syntax of
 *   subagent_secret_path_is_excluded(); %NULL for
 *   subagent_secret_exclude_defaults(), an empty array for none
 *
 * Compiles @patterns once. Empty patterns are ignored.
 *
 * Returns: (transfer full): a new #SubagentExcludeSet
 *
 * Since: 0.2
 */
SubagentExcludeSet *
subagent_exclude_set_new (const char * const *patterns)
{
  SubagentExcludeSet *self;
  guint n = 0;

  if (patterns == NULL)
    patterns = secret_defaults;
  while (patterns[n] != NULL)
    n++;
  self = g_malloc0 (sizeof *self + n * sizeof (ExcludePattern));
  g_atomic_ref_count_init (&self->ref);
  for (guint i = 0; i < n; i++)
    {
      gsize len = strlen (patterns[i]);
      gboolean dir_only = len > 1 && patterns[i][len - 1] == '/';
      g_autofree char *text = g_strndup (patterns[i], dir_only ? len - 1 : len);

      if (*text == '\0')
        continue;
      self->patterns[self->n].spec = g_pattern_spec_new (text);
      self->patterns[self->n].dir_only = dir_only;
      self->n++;
    }
  return self;
}

/**
 * subagent_exclude_set_ref:
 * @self: a #SubagentExcludeSet
 *
 * Takes a reference to @self; any thread may.
 *
 * Returns: (transfer full): @self
 *
 * Since: 0.2
 */
SubagentExcludeSet *
subagent_exclude_set_ref (SubagentExcludeSet *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_ref_count_inc (&self->ref);
  return self;
}

/**
 * subagent_exclude_set_unref:
 * @self: (transfer full): a #SubagentExcludeSet
 *
 * Releases a reference to @self, freeing it with the last one.
 *
 * Since: 0.2
 */
void
subagent_exclude_set_unref (SubagentExcludeSet *self)
{
  g_return_if_fail (self != NULL);
  if (!g_atomic_ref_count_dec (&self->ref))
    return;
  for (guint i = 0; i < self->n; i++)
    g_pattern_spec_free (self->patterns[i].spec);
  g_free (self);
}

/**
 * subagent_exclude_set_is_empty:
 * @self: (nullable): a #SubagentExcludeSet
 *
 * Tells whether @self has no pattern, so a walker can skip matching
 * altogether.
 *
 * Returns: %TRUE if @self leaves nothing out
 *
 * Since: 0.2
 */
gboolean
subagent_exclude_set_is_empty (const SubagentExcludeSet *self)
{
  return self == NULL || self->n == 0;
}

/**
 * subagent_exclude_set_match_name:
 * @self: (nullable): a #SubagentExcludeSet
 * @name: one path component (a directory entry's name)
 * @is_dir: 1 for a directory, 0 for anything else, -1 when the caller has
 *   not looked (then directory-only patterns match too: the entry is left
 *   out as if it were a directory)
 *
 * Whether the entry @name is left out. A walker that skips what this
 * matches (and does not descend into an excluded directory) leaves out
 * exactly what subagent_secret_path_is_excluded() matches. Allocates
 * nothing.
 *
 * Returns: %TRUE if @name is left out
 *
 * Since: 0.2
 */
gboolean
subagent_exclude_set_match_name (const SubagentExcludeSet *self,
                                 const char               *name,
                                 int                       is_dir)
{
  gsize len;

  if (self == NULL || self->n == 0)
    return FALSE;
  len = strlen (name);
  for (guint i = 0; i < self->n; i++)
    if ((!self->patterns[i].dir_only || is_dir != 0) &&
        g_pattern_spec_match (self->patterns[i].spec, len, name, NULL))
      return TRUE;
  return FALSE;
}

/**
 * subagent_exclude_set_match_path:
 * @self: (nullable): a #SubagentExcludeSet
 * @relative_path: a `/`-separated path relative to the workspace root (a
 *   trailing `/` marks a directory)
 *
 * subagent_secret_path_is_excluded() with compiled patterns.
 *
 * Returns: %TRUE if @relative_path, or a directory it lies in, is left out
 *
 * Since: 0.2
 */
gboolean
subagent_exclude_set_match_path (const SubagentExcludeSet *self,
                                 const char               *relative_path)
{
  char part[256];
  const char *p;

  g_return_val_if_fail (relative_path != NULL, FALSE);
  if (self == NULL || self->n == 0)
    return FALSE;
  p = relative_path;
  while (*p != '\0')
    {
      const char *slash = strchr (p, '/');
      gsize len = slash ? (gsize) (slash - p) : strlen (p);
      gboolean is_dir = slash != NULL;

      if (len > 0)
        {
          g_autofree char *big = NULL;
          char *component = part;

          if (len >= sizeof part)
            component = big = g_malloc (len + 1);
          memcpy (component, p, len);
          component[len] = '\0';
          if (subagent_exclude_set_match_name (self, component, is_dir))
            return TRUE;
        }
      if (slash == NULL)
        break;
      p = slash + 1;
    }
  return FALSE;
}

