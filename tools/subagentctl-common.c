/* subagentctl-common.c: helpers the command files share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdarg.h>
#include <stdio.h>

#include "subagentctl.h"

char *
sactl_resolve_root (const char *root_option,
                    GError    **error)
{
  g_autofree char *cwd = g_get_current_dir ();
  g_autoptr(GFile) file = g_file_new_for_commandline_arg_and_cwd (root_option ? root_option : ".", cwd);
  g_autofree char *path = g_file_get_path (file);
  char *real = realpath (path, NULL);

  if (real == NULL || !g_file_test (real, G_FILE_TEST_IS_DIR))
    {
      free (real);
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "Root %s is not an existing directory; pass --root DIR", path);
      return NULL;
    }
  g_free (path);
  path = g_strdup (real);
  free (real);
  return g_steal_pointer (&path);
}

void
sactl_print_json (JsonNode *node)
{
  g_autofree char *text = json_to_string (node, TRUE);

  printf ("%s\n", text);
  fflush (stdout);
}

int
sactl_fail (const GError *error)
{
  fprintf (stderr, "subagentctl: %s\n", error->message);
  return 1;
}

int
sactl_fail_message (const char *format,
                    ...)
{
  g_autofree char *message = NULL;
  va_list ap;

  va_start (ap, format);
  message = g_strdup_vprintf (format, ap);
  va_end (ap);
  fprintf (stderr, "subagentctl: %s\n", message);
  return 1;
}

GOptionContext *
sactl_option_context_new (const char         *command,
                          const GOptionEntry *entries)
{
  GOptionContext *context = g_option_context_new (sactl_command_params (command));
  const char *summary = sactl_command_summary (command);

  if (summary != NULL)
    {
      g_autofree char *sentence = g_strdup_printf ("%c%s.", g_ascii_toupper (summary[0]), summary + 1);
      g_option_context_set_summary (context, sentence);
    }
  if (entries != NULL)
    g_option_context_add_main_entries (context, entries, NULL);
  return context;
}

gboolean
sactl_option_context_parse (GOptionContext   *context,
                            const char       *command,
                            int              *argc,
                            char           ***argv)
{
  g_autoptr(GError) error = NULL;

  if (g_option_context_parse (context, argc, argv, &error))
    return TRUE;
  sactl_usage_error (command, "%s", error->message);
  return FALSE;
}

int
sactl_usage_error (const char *command,
                   const char *format,
                   ...)
{
  g_autofree char *message = NULL;
  va_list ap;

  va_start (ap, format);
  message = g_strdup_vprintf (format, ap);
  va_end (ap);
  fprintf (stderr, "subagentctl %s: %s (see `subagentctl help %s`)\n", command, message, command);
  return SACTL_EXIT_USAGE;
}

gboolean
sactl_parse_duration (const char *text,
                      GTimeSpan  *out,
                      GError    **error)
{
  char *end = NULL;
  guint64 value;
  GTimeSpan unit = G_TIME_SPAN_SECOND;

  if (text == NULL || !g_ascii_isdigit (*text))
    goto bad;
  value = g_ascii_strtoull (text, &end, 10);
  if (g_str_equal (end, "") || g_str_equal (end, "s"))
    unit = G_TIME_SPAN_SECOND;
  else if (g_str_equal (end, "m"))
    unit = G_TIME_SPAN_MINUTE;
  else if (g_str_equal (end, "h"))
    unit = G_TIME_SPAN_HOUR;
  else if (g_str_equal (end, "d"))
    unit = G_TIME_SPAN_DAY;
  else
    goto bad;
  if (value > G_MAXINT64 / (guint64) unit)
    goto bad;
  *out = (GTimeSpan) value * unit;
  return TRUE;

bad:
  g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
               "Bad duration “%s”: use a number with s, m, h or d, such as 30m", text ? text : "");
  return FALSE;
}

/* A child that runs subagentctl starts its own children one level deeper,
 * with itself as their parent and its own depth limit, whatever --depth
 * says: nesting through the CLI is refused at the limit as through the
 * library. SUBAGENT_RUN_ID (the child's run) is the new run's parent;
 * SUBAGENT_PARENT_RUN_ID is one level further up. */
void
sactl_inherit_depth (SubagentRunOptions *options)
{
  const char *depth = g_getenv ("SUBAGENT_DEPTH");
  const char *max_depth = g_getenv ("SUBAGENT_MAX_DEPTH");
  const char *run_id = g_getenv ("SUBAGENT_RUN_ID");
  guint64 value;

  if (depth != NULL && g_ascii_string_to_unsigned (depth, 10, 0, G_MAXINT, &value, NULL) &&
      value > subagent_run_options_get_depth (options))
    subagent_run_options_set_depth (options, (guint) value);
  if (max_depth != NULL && g_ascii_string_to_unsigned (max_depth, 10, 0, G_MAXINT, &value, NULL))
    /* 0 is a limit too: the parent allows no nesting at all. */
    subagent_run_options_set_max_depth (options, value > 0 ? (guint) value : 1);
  if (run_id != NULL && subagent_approval_id_is_valid (run_id) && subagent_run_options_get_parent_run_id (options) == NULL)
    subagent_run_options_set_parent_run_id (options, run_id);
}
