/* subagentctl-batch.c: `subagentctl batch`, `team`, `sessions`,
 * `follow-up` and `--events`: parallel children through a supervisor.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib-unix.h>
#include <gio/gunixinputstream.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "subagentctl.h"

/* `subagentctl --events COMMAND ...` streams the supervisor's events. */
static gboolean stream_events;

/* The live view on stderr: one redrawn line on a terminal, a line per
 * finished child otherwise. */
typedef struct {
  guint total;
  guint started;
  guint done;
  double cost;
  gboolean tty;
  gboolean quiet;
} Progress;

static void
progress_draw (Progress   *progress,
               const char *finished_line)
{
  guint running = progress->started - progress->done;
  guint queued = progress->total > progress->started ? progress->total - progress->started : 0;

  if (progress->quiet)
    return;
  if (progress->tty)
    {
      if (finished_line != NULL)
        fprintf (stderr, "\r\033[K%s\n", finished_line);
      fprintf (stderr, "\r\033[Kqueued %u · running %u · done %u/%u · %.2f cents", queued, running,
               progress->done, progress->total, progress->cost);
    }
  else if (finished_line != NULL)
    fprintf (stderr, "%s (queued %u, running %u, done %u/%u, %.2f cents)\n", finished_line, queued, running,
             progress->done, progress->total, progress->cost);
  fflush (stderr);
}

static void
on_event (SubagentSupervisor *supervisor,
          SubagentEvent      *event,
          gpointer            user_data)
{
  Progress *progress = user_data;
  JsonObject *details = subagent_event_get_details (event);
  g_autofree char *line = NULL;

  if (stream_events)
    {
      g_autofree char *json = subagent_event_to_line (event);

      fputs (json, stdout);
      fflush (stdout);
    }

  switch (subagent_event_get_kind (event))
    {
    case SUBAGENT_EVENT_STARTED:
      progress->started++;
      progress_draw (progress, NULL);
      break;
    case SUBAGENT_EVENT_COMPLETED:
    case SUBAGENT_EVENT_FAILED:
    case SUBAGENT_EVENT_CANCELLED:
      /* A child refused before it started has no `started` event. */
      if (!json_object_has_member (details, "started_at"))
        progress->started++;
      progress->done++;
      progress->cost += json_object_get_double_member_with_default (details, "cost_cents", 0);
      if (subagent_event_get_batch_index (event) >= 0)
        line = g_strdup_printf ("[%u/%u] #%d %s %s %s, %.2f cents", progress->done, progress->total,
                                subagent_event_get_batch_index (event), subagent_event_get_def_name (event),
                                subagent_event_get_run_id (event),
                                json_object_get_string_member_with_default (details, "status", "?"),
                                json_object_get_double_member_with_default (details, "cost_cents", 0));
      else
        line = g_strdup_printf ("[%u/%u] %s %s %s, %.2f cents", progress->done, progress->total,
                                subagent_event_get_def_name (event), subagent_event_get_run_id (event),
                                json_object_get_string_member_with_default (details, "status", "?"),
                                json_object_get_double_member_with_default (details, "cost_cents", 0));
      progress_draw (progress, line);
      break;
    default:
      break;
    }
}

static void
progress_end (Progress *progress)
{
  if (progress->tty && !progress->quiet)
    fprintf (stderr, "\n");
}

/* What each command needs: a manager, a supervisor, a loop, Ctrl-C. */
typedef struct {
  SubagentManager *manager;
  SubagentSupervisor *supervisor;
  GMainLoop *loop;
  GAsyncResult *result;
  Progress progress;
  guint sigint_id;
  guint sigterm_id;
} Session;

static gboolean
on_interrupt (gpointer user_data)
{
  Session *session = user_data;

  fprintf (stderr, "\nsubagentctl: cancelling the children (Ctrl-C)\n");
  subagent_supervisor_cancel_all (session->supervisor, SUBAGENT_CANCEL_CAUSE_USER);
  return G_SOURCE_CONTINUE;
}

static gboolean
session_open (Session     *session,
              const char  *root_option,
              guint        max_parallel,
              guint        total,
              GError     **error)
{
  g_autofree char *root = NULL;

  if ((root = sactl_resolve_root (root_option, error)) == NULL ||
      (session->manager = subagent_manager_new (root, error)) == NULL)
    return FALSE;
  session->supervisor = g_object_new (SUBAGENT_TYPE_SUPERVISOR, "manager", session->manager,
                                      "max-parallel", max_parallel, NULL);
  session->progress.total = total;
  session->progress.tty = isatty (STDERR_FILENO);
  session->progress.quiet = stream_events;
  g_signal_connect (session->supervisor, "event", G_CALLBACK (on_event), &session->progress);
  session->loop = g_main_loop_new (NULL, FALSE);
  session->sigint_id = g_unix_signal_add (SIGINT, on_interrupt, session);
  session->sigterm_id = g_unix_signal_add (SIGTERM, on_interrupt, session);
  return TRUE;
}

static void
session_done (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Session *session = user_data;

  session->result = g_object_ref (result);
  g_main_loop_quit (session->loop);
}

static void
session_run (Session *session)
{
  g_main_loop_run (session->loop);
  progress_end (&session->progress);
}

static void
session_close (Session *session)
{
  if (session->supervisor != NULL)
    {
      g_autoptr(SubagentShutdownReport) report = subagent_supervisor_shutdown (session->supervisor, 0, NULL);
      const char * const *left = report ? subagent_shutdown_report_get_kept_workspaces (report) : NULL;

      for (guint i = 0; left != NULL && left[i] != NULL; i++)
        fprintf (stderr, "subagentctl: a child did not stop; its workspace %s is left in place\n", left[i]);
    }
  if (session->sigint_id)
    g_source_remove (session->sigint_id);
  if (session->sigterm_id)
    g_source_remove (session->sigterm_id);
  g_clear_object (&session->result);
  g_clear_pointer (&session->loop, g_main_loop_unref);
  g_clear_object (&session->supervisor);
  g_clear_object (&session->manager);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Session, session_close)

static gboolean
result_ok (SubagentRunResult *result)
{
  SubagentRunStatus status = subagent_run_result_get_status (result);

  return status == SUBAGENT_RUN_STATUS_COMPLETE || status == SUBAGENT_RUN_STATUS_PARTIAL;
}

static void
print_result_line (guint              index,
                   SubagentRunResult *result)
{
  const char *answer = subagent_run_result_get_final_answer (result);
  g_autofree char *first = g_strndup (answer, strcspn (answer, "\n"));
  g_autofree char *reason = subagent_run_result_dup_reason (result);

  printf ("%3u  %-9s %-32s %7.2f  %s\n", index, subagent_run_status_to_string (subagent_run_result_get_status (result)),
          *subagent_run_result_get_run_id (result) ? subagent_run_result_get_run_id (result) : "-",
          subagent_run_result_get_cost_cents (result), reason && !*first ? reason : first);
}

static void
print_results_json (GPtrArray *results)
{
  g_autoptr(JsonArray) array = json_array_new ();
  g_autoptr(JsonNode) node = NULL;

  for (guint i = 0; i < results->len; i++)
    json_array_add_object_element (array, subagent_run_result_to_json (results->pdata[i]));
  node = json_node_init_array (json_node_alloc (), array);
  sactl_print_json (node);
}

static JsonNode *
read_batch_input (const char  *file,
                  GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();

  if (g_str_equal (file, "-"))
    {
      g_autoptr(GInputStream) in = g_unix_input_stream_new (STDIN_FILENO, FALSE);

      if (!json_parser_load_from_stream (parser, in, NULL, error))
        return NULL;
    }
  else if (!json_parser_load_from_file (parser, file, error))
    return NULL;
  if (json_parser_get_root (parser) == NULL || !JSON_NODE_HOLDS_ARRAY (json_parser_get_root (parser)))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "%s must hold a JSON array of items like {\"task\": \"...\", \"def_name\": \"...\"}",
                   g_str_equal (file, "-") ? "stdin" : file);
      return NULL;
    }
  return json_node_copy (json_parser_get_root (parser));
}

int
sactl_cmd_batch (int    argc,
                 char **argv)
{
  g_autofree char *root_option = NULL;
  g_auto(GStrv) files = NULL;
  int max_parallel = 0;
  gboolean json = FALSE;
  gboolean events = FALSE;
  const GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &root_option, "Workspace root (default: current directory)", "DIR" },
    { "max-parallel", 'p', 0, G_OPTION_ARG_INT, &max_parallel, "Children at once (default: runner.max_parallel)", "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the results as a JSON array, in input order", NULL },
    { "events", 0, 0, G_OPTION_ARG_NONE, &events, "Stream the supervisor's events (JSON lines) to stdout", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, "FILE|-" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("— run a JSON array of tasks in parallel");
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) input = NULL;
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(GPtrArray) results = NULL;
  g_auto(Session) session = { 0, };
  gboolean ok = TRUE;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_description (context,
    "Each item: {\"task\": \"...\", \"def_name\"?: \"...\", \"isolation\"?: \"MODE\", "
    "\"max_iterations\"?: N, \"max_tool_calls\"?: N}.\n"
    "A live view (queued / running / done, costs) goes to stderr.");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return sactl_fail (error);
  if (files == NULL || files[0] == NULL || files[1] != NULL)
    return sactl_fail_message ("batch: give one FILE (or - for stdin) holding a JSON array of items");
  if (max_parallel < 0)
    return sactl_fail_message ("batch: --max-parallel must not be negative");
  stream_events = stream_events || events;

  if ((input = read_batch_input (files[0], &error)) == NULL ||
      (items = subagent_batch_items_from_json (json_node_get_array (input), &error)) == NULL)
    return sactl_fail (error);
  if (!session_open (&session, root_option, (guint) max_parallel, items->len, &error))
    return sactl_fail (error);
  if (!stream_events)
    fprintf (stderr, "batch: %u items, max-parallel %u\n", items->len,
             subagent_supervisor_get_max_parallel (session.supervisor));

  subagent_supervisor_run_batch_async (session.supervisor, items, NULL, session_done, &session);
  session_run (&session);
  if ((results = subagent_supervisor_run_batch_finish (session.supervisor, session.result, &error)) == NULL)
    return sactl_fail (error);

  if (json)
    print_results_json (results);
  else if (!stream_events)
    for (guint i = 0; i < results->len; i++)
      print_result_line (i, results->pdata[i]);
  for (guint i = 0; i < results->len; i++)
    ok = ok && result_ok (results->pdata[i]);
  return ok ? 0 : 1;
}

int
sactl_cmd_team (int    argc,
                char **argv)
{
  g_autofree char *root_option = NULL;
  g_auto(GStrv) words = NULL;
  int max_parallel = 0;
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &root_option, "Workspace root (default: current directory)", "DIR" },
    { "max-parallel", 'p', 0, G_OPTION_ARG_INT, &max_parallel, "Members at once (default: runner.max_parallel)", "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the team's result as JSON", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &words, NULL, "NAME TASK..." },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("— run a team of .subagent/teams/");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentTeamResult) result = NULL;
  g_autoptr(SubagentTeam) team = NULL;
  g_autofree char *root = NULL;
  g_autofree char *task = NULL;
  g_auto(Session) session = { 0, };
  GPtrArray *members;
  gboolean ok = TRUE;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return sactl_fail (error);
  if (words == NULL || words[0] == NULL || words[1] == NULL)
    return sactl_fail_message ("team: give the team's name and the task, such as: subagentctl team reviewers \"review the diff\"");
  if (max_parallel < 0)
    return sactl_fail_message ("team: --max-parallel must not be negative");
  task = g_strjoinv (" ", words + 1);
  if ((root = sactl_resolve_root (root_option, &error)) == NULL ||
      (team = subagent_team_lookup (root, words[0], &error)) == NULL)
    return sactl_fail (error);
  if (!session_open (&session, root, (guint) max_parallel,
                     g_strv_length ((char **) subagent_team_get_members (team)) +
                     (subagent_team_get_aggregator (team) ? 1 : 0), &error))
    return sactl_fail (error);

  subagent_supervisor_run_team_async (session.supervisor, words[0], task, NULL, session_done, &session);
  session_run (&session);
  if ((result = subagent_supervisor_run_team_finish (session.supervisor, session.result, &error)) == NULL)
    return sactl_fail (error);

  members = subagent_team_result_get_member_results (result);
  if (json)
    {
      g_autoptr(JsonObject) object = subagent_team_result_to_json (result);
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), object);

      sactl_print_json (node);
    }
  else if (!stream_events)
    {
      for (guint i = 0; i < members->len; i++)
        print_result_line (i, members->pdata[i]);
      printf ("\n%s\n", subagent_team_result_get_final_answer (result));
    }
  for (guint i = 0; i < members->len; i++)
    ok = ok && result_ok (members->pdata[i]);
  if (subagent_team_result_get_aggregate (result) != NULL)
    ok = ok && result_ok (subagent_team_result_get_aggregate (result));
  return ok ? 0 : 1;
}

int
sactl_cmd_sessions (int    argc,
                    char **argv)
{
  g_autofree char *root_option = NULL;
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &root_option, "Workspace root (default: current directory)", "DIR" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the session records as a JSON array", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("— list the kept session records of child runs");
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  g_auto(GStrv) skipped = NULL;
  g_autofree char *root = NULL;
  g_autofree char *dir_path = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return sactl_fail (error);
  if (argc > 1)
    return sactl_fail_message ("sessions: unexpected argument “%s”", argv[1]);
  if ((root = sactl_resolve_root (root_option, &error)) == NULL)
    return sactl_fail (error);

  dir_path = g_build_filename (root, ".subagent", "sessions", NULL);
  sessions = subagent_session_log_read_dir (dir_path, &skipped, &error);
  if (sessions == NULL)
    return sactl_fail (error);
  for (guint i = 0; skipped[i] != NULL; i++)
    fprintf (stderr, "subagentctl: skipping %s\n", skipped[i]);

  if (json)
    {
      g_autoptr(JsonArray) array = json_array_new ();
      g_autoptr(JsonNode) node = NULL;

      for (guint i = 0; i < sessions->len; i++)
        json_array_add_object_element (array, subagent_session_to_json (sessions->pdata[i]));
      node = json_node_init_array (json_node_alloc (), array);
      sactl_print_json (node);
      return 0;
    }
  if (sessions->len == 0)
    {
      printf ("No sessions in %s\n", dir_path);
      return 0;
    }
  printf ("%-32s  %-16s  %-9s  %-9s  %-18s  %8s  %s\n", "SESSION", "DEFINITION", "STATUS", "FOLLOW-UPS",
          "ISOLATION", "CENTS", "STARTED");
  for (guint i = 0; i < sessions->len; i++)
    {
      SubagentSession *session = sessions->pdata[i];
      GDateTime *started = subagent_session_get_started_at (session);
      g_autofree char *when = started ? g_date_time_format_iso8601 (started) : g_strdup ("-");

      printf ("%-32s  %-16s  %-9s  %-10u %-18s  %8.2f  %s\n", subagent_session_get_session_id (session),
              subagent_session_get_def_name (session),
              subagent_run_status_to_string (subagent_session_get_status (session)),
              subagent_session_get_follow_ups (session),
              subagent_session_get_workspace_kept (session) ? "kept" : subagent_session_get_isolation (session),
              subagent_session_get_cost_cents (session), when);
    }
  return 0;
}

int
sactl_cmd_follow_up (int    argc,
                     char **argv)
{
  g_autofree char *root_option = NULL;
  g_auto(GStrv) words = NULL;
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &root_option, "Workspace root (default: current directory)", "DIR" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the result object as JSON", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &words, NULL, "SESSION TASK..." },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("— resume a finished child with a new task");
  g_autoptr(GError) error = NULL;
  g_autoptr(SubagentRunResult) result = NULL;
  g_autofree char *task = NULL;
  g_autofree char *run_id = NULL;
  g_auto(Session) session = { 0, };

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return sactl_fail (error);
  if (words == NULL || words[0] == NULL || words[1] == NULL)
    return sactl_fail_message ("follow-up: give the session id and the task (subagentctl sessions lists sessions)");
  task = g_strjoinv (" ", words + 1);
  if (!session_open (&session, root_option, 1, 1, &error))
    return sactl_fail (error);
  if ((run_id = subagent_supervisor_follow_up (session.supervisor, words[0], task, &error)) == NULL)
    return sactl_fail (error);

  subagent_supervisor_wait_async (session.supervisor, run_id, NULL, session_done, &session);
  session_run (&session);
  if ((result = subagent_supervisor_wait_finish (session.supervisor, session.result, &error)) == NULL)
    return sactl_fail (error);

  if (json)
    {
      g_autoptr(JsonObject) object = subagent_run_result_to_json (result);
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), object);

      sactl_print_json (node);
    }
  else if (!stream_events)
    {
      g_autofree char *reason = subagent_run_result_dup_reason (result);

      printf ("status:     %s\n", subagent_run_status_to_string (subagent_run_result_get_status (result)));
      printf ("session:    %s\n", run_id);
      if (reason != NULL)
        printf ("reason:     %s\n", reason);
      printf ("\n%s\n", subagent_run_result_get_final_answer (result));
    }
  return result_ok (result) ? 0 : 1;
}

/* `subagentctl --events [--root DIR]` prints the events file;
 * `subagentctl --events batch|team|follow-up ...` runs the command with its
 * events streamed to stdout as JSON lines. */
int
sactl_cmd_events (int    argc,
                  char **argv)
{
  static const struct {
    const char *name;
    SactlCommandFunc func;
  } streamable[] = {
    { "batch", sactl_cmd_batch },
    { "team", sactl_cmd_team },
    { "follow-up", sactl_cmd_follow_up },
  };
  g_autofree char *root_option = NULL;
  const GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &root_option, "Workspace root (default: current directory)", "DIR" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *root = NULL;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;

  for (guint i = 0; argc > 1 && i < G_N_ELEMENTS (streamable); i++)
    if (g_str_equal (argv[1], streamable[i].name))
      {
        stream_events = TRUE;
        return streamable[i].func (argc - 1, argv + 1);
      }

  context = g_option_context_new ("[batch|team|follow-up ARGS...] — supervisor events as JSON lines");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return sactl_fail (error);
  if (argc > 1)
    return sactl_fail_message ("--events: “%s” is not batch, team or follow-up", argv[1]);
  if ((root = sactl_resolve_root (root_option, &error)) == NULL)
    return sactl_fail (error);
  path = g_build_filename (root, ".subagent", "events.jsonl", NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return 0;
  if (!g_file_get_contents (path, &text, NULL, &error))
    return sactl_fail (error);
  fputs (text, stdout);
  return 0;
}
