/* copy-exclude.c: the cost of leaving secret files out of a copied
 * workspace. Copies one generated tree (directories of small files, a few
 * secrets among them) with subagent_tree_copy() and with
 * subagent_tree_copy_excluding() and the default patterns, alternating,
 * and prints the same-run ratio of the medians.
 *
 *   copy-exclude [FILES [ROUNDS]]   (default 20000 files, 7 rounds)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>

#include <glib/gstdio.h>
#include <subagent.h>

static int
compare_doubles (const void *a,
                 const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
timed_copy (const char               *src,
            const char               *dst,
            const SubagentExcludeSet *exclude)
{
  g_autoptr(GError) error = NULL;
  gint64 start = g_get_monotonic_time ();
  gboolean ok = exclude != NULL
    ? subagent_tree_copy_excluding (src, dst, SUBAGENT_COPY_STRATEGY_COPY, NULL, exclude, NULL, NULL, &error)
    : subagent_tree_copy (src, dst, SUBAGENT_COPY_STRATEGY_COPY, NULL, NULL, NULL, &error);
  double ms = (g_get_monotonic_time () - start) / 1000.0;

  if (!ok)
    g_error ("copy failed: %s", error->message);
  if (!subagent_tree_remove (dst, NULL, &error))
    g_error ("remove failed: %s", error->message);
  return ms;
}

int
main (int   argc,
      char *argv[])
{
  guint files = argc > 1 ? (guint) atoi (argv[1]) : 20000;
  guint rounds = argc > 2 ? (guint) atoi (argv[2]) : 7;
  g_autofree char *base = g_dir_make_tmp ("subagent-copy-exclude-XXXXXX", NULL);
  g_autofree char *src = g_build_filename (base, "src", NULL);
  g_autofree char *dst = g_build_filename (base, "dst", NULL);
  g_autoptr(SubagentExcludeSet) defaults = subagent_exclude_set_new (NULL);
  double *plain = g_new0 (double, rounds), *excluding = g_new0 (double, rounds);

  for (guint i = 0; i < files; i++)
    {
      g_autofree char *dir = g_strdup_printf ("%s/d%03u", src, i / 100);
      g_autofree char *path = NULL;

      /* One file in a hundred is a secret: .env, *.pem, *.key in turn. */
      if (i % 100 == 7)
        path = g_strdup_printf ("%s/%s", dir, (const char *[]) { ".env", "tls.pem", "api.key" }[(i / 100) % 3]);
      else
        path = g_strdup_printf ("%s/file%05u.c", dir, i);
      g_mkdir_with_parents (dir, 0755);
      if (!g_file_set_contents (path, "int x;\n", -1, NULL))
        g_error ("cannot write %s", path);
    }
  for (guint r = 0; r < rounds; r++)
    {
      plain[r] = timed_copy (src, dst, NULL);
      excluding[r] = timed_copy (src, dst, defaults);
    }
  qsort (plain, rounds, sizeof (double), compare_doubles);
  qsort (excluding, rounds, sizeof (double), compare_doubles);
  printf ("tree copy of %u files (%u rounds, medians): plain %.1f ms, excluding secrets %.1f ms, "
          "ratio %.3f\n", files, rounds, plain[rounds / 2], excluding[rounds / 2],
          excluding[rounds / 2] / plain[rounds / 2]);
  subagent_tree_remove (base, NULL, NULL);
  g_free (plain);
  g_free (excluding);
  return 0;
}
