/* subagentctl-approvals.c: `subagentctl approvals`, the approval queues of a
 * workspace seen and answered from another process.
 *
 * Everything goes through the workspace's approval sink (the approval-file
 * plugin unless config.yaml names another): no queue object lives here, so a
 * verdict given here reaches the waiting process through its sink's
 * "changed" signal.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib-unix.h>

#include "subagentctl.h"

#define DEFAULT_SINK "file"

typedef struct {
  char *root;
  char *run;
  gboolean json;
  gboolean all;
  char *reason;
  char *by;
  char *older_than;
  int count;
  gboolean force;
} Options;

static void
options_clear (Options *o)
{
  g_free (o->root);
  g_free (o->run);
  g_free (o->reason);
  g_free (o->by);
  g_free (o->older_than);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Options, options_clear)

/* The workspace's sink, configured for @root with its config.yaml section
 * (subagent_plugin_registry_create_configured()). */
SubagentApprovalSink *
sactl_open_approval_sink (const char  *root,
                          GError     **error)
{
  g_autoptr(SubagentConfig) config = subagent_config_load_for_root (root, error);
  const char *backend;

  if (config == NULL)
    return NULL;
  backend = subagent_config_get_approval_sink (config);
  if (backend == NULL || backend[0] == '\0')
    backend = DEFAULT_SINK;
  if (g_str_equal (backend, "memory") || g_str_equal (backend, "none"))
    {
      g_set_error (error, SUBAGENT_ERROR, SUBAGENT_ERROR_INVALID_ARGUMENT,
                   "The approval sink “%s” keeps no queues another process can see; nothing to manage from here",
                   backend);
      return NULL;
    }
  /* The one configure call every plugin gets: root and its config section. */
  return SUBAGENT_APPROVAL_SINK (subagent_plugin_registry_create_configured (subagent_plugin_registry_get_default (),
                                                                             config, SUBAGENT_TYPE_APPROVAL_SINK,
                                                                             backend, root, error));
}

/* The runs to look at: --run, or every run of the store. */
static GStrv
runs_of (SubagentApprovalSink  *sink,
         const Options         *o,
         GError               **error)
{
  if (o->run != NULL)
    {
      if (!subagent_approval_id_is_valid (o->run))
        {
          g_set_error (error, SUBAGENT_APPROVAL_ERROR, SUBAGENT_APPROVAL_ERROR_INVALID_ID,
                       "Invalid run id “%s”: use 1–128 characters from A–Z, a–z, 0–9, “_” and “-”", o->run);
          return NULL;
        }
      return g_strdupv ((char *[]) { o->run, NULL });
    }
  return subagent_approval_sink_list_runs (sink, error);
}

/* Every request of the runs (only pending ones unless @all), run by run. */
static GPtrArray *
collect (SubagentApprovalSink  *sink,
         const Options         *o,
         gboolean               all,
         GError               **error)
{
  g_auto(GStrv) runs = runs_of (sink, o, error);
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_object_unref);

  if (runs == NULL)
    return NULL;
  for (guint i = 0; runs[i] != NULL; i++)
    {
      g_autoptr(GPtrArray) requests = subagent_approval_sink_load (sink, runs[i], error);

      if (requests == NULL)
        return NULL;
      for (guint j = 0; j < requests->len; j++)
        if (all || subagent_approval_request_get_status (requests->pdata[j]) == SUBAGENT_APPROVAL_STATUS_PENDING)
          g_ptr_array_add (out, g_object_ref (requests->pdata[j]));
    }
  return g_steal_pointer (&out);
}

static char *
arguments_text (SubagentApprovalRequest *request,
                guint                    max)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *text = NULL;

  json_node_set_object (node, subagent_approval_request_get_tool_arguments (request));
  text = json_to_string (node, FALSE);
  if (g_utf8_strlen (text, -1) <= max)
    return g_steal_pointer (&text);
  {
    g_autofree char *cut = g_utf8_substring (text, 0, max - 1);
    return g_strconcat (cut, "…", NULL);
  }
}

/* "pid N on HOST": the host a request records. */
static char *
host_text (SubagentApprovalRequest *request)
{
  gint64 pid = 0;
  const char *name = NULL;

  subagent_approval_request_get_host (request, &pid, NULL, NULL, &name);
  return g_strdup_printf ("pid %" G_GINT64_FORMAT " on %s", pid, name ? name : "?");
}

static void
print_table (GPtrArray *requests,
             gboolean   with_status)
{
  for (guint i = 0; i < requests->len; i++)
    {
      SubagentApprovalRequest *r = requests->pdata[i];
      g_autofree char *args = arguments_text (r, 60);

      printf ("  %s  %s  %s  %s %s", subagent_approval_request_get_request_id (r),
              subagent_approval_request_get_parent_run_id (r), subagent_approval_request_get_subagent_name (r),
              subagent_approval_request_get_tool_name (r), args);
      if (with_status)
        printf ("  [%s]", subagent_approval_status_to_string (subagent_approval_request_get_status (r)));
      if (subagent_approval_request_is_abandoned (r))
        {
          g_autofree char *host = host_text (r);
          printf ("  [abandoned: its host, %s, is gone; nobody waits for a verdict]", host);
        }
      printf ("\n");
    }
}

static int
cmd_list (SubagentApprovalSink *sink,
          const Options        *o)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) requests = collect (sink, o, o->all, &error);

  if (requests == NULL)
    return sactl_fail (error);
  if (o->json)
    {
      g_autoptr(JsonArray) array = json_array_sized_new (requests->len);
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_ARRAY);

      for (guint i = 0; i < requests->len; i++)
        {
          JsonObject *object = subagent_approval_request_to_json (requests->pdata[i]);

          /* Whether anyone still waits: worked out here, never stored. */
          json_object_set_boolean_member (object, "abandoned",
                                          subagent_approval_request_is_abandoned (requests->pdata[i]));
          json_array_add_object_element (array, object);
        }
      json_node_set_array (node, array);
      sactl_print_json (node);
      return 0;
    }
  printf ("%u%s request%s\n", requests->len, o->all ? "" : " pending", requests->len == 1 ? "" : "s");
  print_table (requests, o->all);
  return 0;
}

static const char *
verdict_name (SubagentApprovalStatus status)
{
  return status == SUBAGENT_APPROVAL_STATUS_APPROVED ? "Approved" : "Denied";
}

/* approve ID / deny ID: finds the request in --run or in every run. */
static int
cmd_decide (SubagentApprovalSink   *sink,
            const Options          *o,
            const char             *request_id,
            SubagentApprovalStatus  verdict)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) requests = NULL;
  SubagentApprovalRequest *found = NULL;
  const char *run;

  if (!subagent_approval_id_is_valid (request_id))
    return sactl_fail_message ("Invalid request id “%s”: use the id `approvals list` shows", request_id);
  requests = collect (sink, o, TRUE, &error);
  if (requests == NULL)
    return sactl_fail (error);
  for (guint i = 0; i < requests->len && found == NULL; i++)
    if (g_str_equal (subagent_approval_request_get_request_id (requests->pdata[i]), request_id))
      found = requests->pdata[i];
  if (found == NULL)
    return sactl_fail_message ("No approval request %s%s%s; see `subagentctl approvals list`", request_id,
                               o->run ? " in run " : "", o->run ? o->run : "");

  run = subagent_approval_request_get_parent_run_id (found);
  if (subagent_approval_request_is_abandoned (found) && !o->force)
    {
      g_autofree char *host = host_text (found);
      return sactl_fail_message ("Request %s of run %s is abandoned: its host (%s) is gone, so nobody is waiting "
                                 "for a verdict and nothing would act on it; `subagentctl approvals prune` marks it "
                                 "abandoned (or pass --force to record the verdict anyway)", request_id, run, host);
    }
  if (!subagent_approval_sink_update_status (sink, run, request_id, verdict, o->reason, o->by, &error))
    {
      if (error != NULL)
        return sactl_fail (error);
      return sactl_fail_message ("Request %s of run %s is not pending any more; nothing changed", request_id, run);
    }
  printf ("%s %s (run %s)\n", verdict_name (verdict), request_id, run);
  return 0;
}

static int
cmd_decide_all (SubagentApprovalSink   *sink,
                const Options          *o,
                SubagentApprovalStatus  verdict)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) requests = collect (sink, o, FALSE, &error);
  guint decided = 0, abandoned = 0;

  if (requests == NULL)
    return sactl_fail (error);
  /* collect() gives the requests run by run: one batch compare-and-set
   * (one write) per run. */
  for (guint start = 0; start < requests->len;)
    {
      const char *run = subagent_approval_request_get_parent_run_id (requests->pdata[start]);
      g_autoptr(GPtrArray) ids = g_ptr_array_new ();
      g_autoptr(GArray) won = NULL;
      guint end = start;

      for (; end < requests->len
             && g_str_equal (subagent_approval_request_get_parent_run_id (requests->pdata[end]), run); end++)
        {
          /* Nobody waits for these: `approvals prune` marks them. */
          if (subagent_approval_request_is_abandoned (requests->pdata[end]))
            abandoned++;
          else
            g_ptr_array_add (ids, (gpointer) subagent_approval_request_get_request_id (requests->pdata[end]));
        }
      g_ptr_array_add (ids, NULL);
      if (ids->len == 1)
        {
          start = end;
          continue;
        }
      won = subagent_approval_sink_update_status_batch (sink, run, (const char * const *) ids->pdata, verdict,
                                                        o->reason, o->by, &error);
      if (won == NULL)
        return sactl_fail (error);
      /* FALSE: someone else decided it meanwhile. */
      for (guint i = 0; i < won->len; i++)
        decided += g_array_index (won, gboolean, i) ? 1 : 0;
      start = end;
    }
  printf ("%s %u request%s\n", verdict_name (verdict), decided, decided == 1 ? "" : "s");
  if (abandoned > 0)
    printf ("Skipped %u abandoned request%s (their host is gone); `subagentctl approvals prune` marks them\n",
            abandoned, abandoned == 1 ? "" : "s");
  return 0;
}

/* Marks every abandoned request of the store (or of --run) abandoned:
 * kept in its queue, with the time, a reason naming the host, and who. */
static gboolean
expire_abandoned (SubagentApprovalSink  *sink,
                  const Options         *o,
                  guint                 *out_marked,
                  GError               **error)
{
  g_autoptr(GPtrArray) requests = collect (sink, o, FALSE, error);

  *out_marked = 0;
  if (requests == NULL)
    return FALSE;
  for (guint i = 0; i < requests->len; i++)
    {
      SubagentApprovalRequest *r = requests->pdata[i];
      g_autofree char *host = NULL;
      g_autofree char *reason = NULL;

      if (!subagent_approval_request_is_abandoned (r))
        continue;
      host = host_text (r);
      reason = g_strdup_printf ("Abandoned: its host (%s) is gone", host);
      /* FALSE without error: decided meanwhile. */
      if (subagent_approval_sink_update_status (sink, subagent_approval_request_get_parent_run_id (r),
                                                subagent_approval_request_get_request_id (r),
                                                SUBAGENT_APPROVAL_STATUS_ABANDONED, reason,
                                                "subagentctl approvals prune", error))
        (*out_marked)++;
      else if (error != NULL && *error != NULL)
        return FALSE;
    }
  return TRUE;
}

/* prune: abandoned requests always; queue files older than --older-than too. */
static int
cmd_prune (SubagentApprovalSink *sink,
           const Options        *o)
{
  g_autoptr(GError) error = NULL;
  GTimeSpan max_age;
  guint removed, marked;

  if (o->older_than != NULL && !sactl_parse_duration (o->older_than, &max_age, &error))
    return sactl_fail (error);
  if (!expire_abandoned (sink, o, &marked, &error))
    return sactl_fail (error);
  printf ("Marked %u abandoned request%s\n", marked, marked == 1 ? "" : "s");
  if (o->older_than == NULL)
    return 0;
  removed = subagent_approval_sink_prune_stale (sink, max_age, &error);
  if (error != NULL)
    return sactl_fail (error);
  printf ("Removed %u queue file%s\n", removed, removed == 1 ? "" : "s");
  return 0;
}

typedef struct {
  SubagentApprovalSink *sink;
  const Options *options;
  GMainLoop *loop;
  GHashTable *watched;
  guint render_id;
  int renders;
  int status;
} Watch;

static void watch_new_runs (Watch *w);

static gboolean
render (gpointer data)
{
  Watch *w = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) requests = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *clock = g_date_time_format (now, "%H:%M:%S");

  w->render_id = 0;
  watch_new_runs (w);
  requests = collect (w->sink, w->options, FALSE, &error);
  if (requests == NULL)
    {
      w->status = sactl_fail (error);
      g_main_loop_quit (w->loop);
      return G_SOURCE_REMOVE;
    }
  if (isatty (STDOUT_FILENO))
    printf ("\033[H\033[2J");
  printf ("--- %u pending (%s) ---\n", requests->len, clock);
  print_table (requests, FALSE);
  fflush (stdout);
  if (w->options->count > 0 && ++w->renders >= w->options->count)
    g_main_loop_quit (w->loop);
  return G_SOURCE_REMOVE;
}

/* Renders once per burst of changes. */
static void
schedule_render (Watch *w)
{
  if (w->render_id == 0)
    w->render_id = g_idle_add (render, w);
}

static void
on_changed (SubagentApprovalSink *sink,
            const char           *run_id,
            Watch                *w)
{
  schedule_render (w);
}

static void
watch_new_runs (Watch *w)
{
  g_auto(GStrv) runs = runs_of (w->sink, w->options, NULL);

  for (guint i = 0; runs != NULL && runs[i] != NULL; i++)
    if (g_hash_table_add (w->watched, g_strdup (runs[i])))
      subagent_approval_sink_watch (w->sink, runs[i]);
}

/* Without --run, runs created after the start must show up too: the sink
 * watches runs, so the store's directory is watched for new ones. */
static void
on_dir_changed (GFileMonitor      *monitor,
                GFile             *file,
                GFile             *other,
                GFileMonitorEvent  event,
                Watch             *w)
{
  g_autofree char *name = g_file_get_basename (other != NULL ? other : file);

  if (g_str_has_suffix (name, ".json") && name[0] != '.')
    schedule_render (w);
}

/* A store that is not files in the workspace (postgres) is asked for its
 * runs every second instead: the sink interface watches runs, not the
 * store. Only new runs come this way; changes to watched runs still come
 * as "changed". */
#define NEW_RUNS_POLL_SECONDS 1

static gboolean
on_poll_new_runs (gpointer data)
{
  Watch *w = data;
  g_auto(GStrv) runs = runs_of (w->sink, w->options, NULL);

  for (guint i = 0; runs != NULL && runs[i] != NULL; i++)
    if (!g_hash_table_contains (w->watched, runs[i]))
      {
        schedule_render (w);
        break;
      }
  return G_SOURCE_CONTINUE;
}

static gboolean
on_quit_signal (gpointer data)
{
  g_main_loop_quit (((Watch *) data)->loop);
  return G_SOURCE_CONTINUE;
}

static int
cmd_watch (SubagentApprovalSink *sink,
           const Options        *o,
           const char           *root)
{
  g_autoptr(GFileMonitor) monitor = NULL;
  g_autoptr(GError) error = NULL;
  Watch w = { sink, o, g_main_loop_new (NULL, FALSE), g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL), 0, 0, 0 };
  guint sigint_id = g_unix_signal_add (SIGINT, on_quit_signal, &w);
  guint sigterm_id = g_unix_signal_add (SIGTERM, on_quit_signal, &w);
  guint poll_id = 0;

  g_signal_connect (sink, "changed", G_CALLBACK (on_changed), &w);
  if (o->run == NULL && g_object_class_find_property (G_OBJECT_GET_CLASS (sink), "root") == NULL)
    poll_id = g_timeout_add_seconds (NEW_RUNS_POLL_SECONDS, on_poll_new_runs, &w);
  else if (o->run == NULL)
    {
      g_autofree char *dir = g_build_filename (root, ".subagent", "approvals", NULL);
      g_autoptr(GFile) file = g_file_new_for_path (dir);

      if (g_mkdir_with_parents (dir, 0700) < 0
          || (monitor = g_file_monitor_directory (file, G_FILE_MONITOR_WATCH_MOVES, NULL, &error)) == NULL)
        {
          w.status = error ? sactl_fail (error) : sactl_fail_message ("Cannot create %s", dir);
          goto out;
        }
      g_signal_connect (monitor, "changed", G_CALLBACK (on_dir_changed), &w);
    }
  render (&w);
  if (w.status == 0 && (o->count <= 0 || w.renders < o->count))
    g_main_loop_run (w.loop);

out:
  g_clear_handle_id (&w.render_id, g_source_remove);
  g_clear_handle_id (&poll_id, g_source_remove);
  g_source_remove (sigint_id);
  g_source_remove (sigterm_id);
  g_signal_handlers_disconnect_by_data (sink, &w);
  if (monitor != NULL)
    g_signal_handlers_disconnect_by_data (monitor, &w);
  g_main_loop_unref (w.loop);
  g_hash_table_unref (w.watched);
  return w.status;
}

/* The subcommands and their argument counts (argv[0] = "approvals"). */
static gboolean
subcommand_fits (const char *sub,
                 int         argc)
{
  static const struct { const char *name; int argc; } table[] = {
    { "list", 2 }, { "approve", 3 }, { "deny", 3 }, { "approve-all", 2 },
    { "deny-all", 2 }, { "watch", 2 }, { "prune", 2 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    if (g_str_equal (sub, table[i].name))
      return argc == table[i].argc;
  return FALSE;
}

int
sactl_cmd_approvals (int    argc,
                     char **argv)
{
  g_auto(Options) o = { 0 };
  GOptionEntry entries[] = {
    { "root", 'r', 0, G_OPTION_ARG_FILENAME, &o.root, "Workspace root (default: the current directory)", "DIR" },
    { "run", 0, 0, G_OPTION_ARG_STRING, &o.run, "Only the queue of this parent run", "RUN_ID" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o.json, "list: print a JSON array of request objects", NULL },
    { "all", 0, 0, G_OPTION_ARG_NONE, &o.all, "list: decided requests too, not only pending ones", NULL },
    { "reason", 0, 0, G_OPTION_ARG_STRING, &o.reason, "deny, deny-all: why", "TEXT" },
    { "by", 0, 0, G_OPTION_ARG_STRING, &o.by, "approve, deny: who gives the verdict (default: human)", "NAME" },
    { "older-than", 0, 0, G_OPTION_ARG_STRING, &o.older_than, "prune: also remove queue files older than this, such as 90s, 15m, 2h or 7d", "DURATION" },
    { "count", 0, 0, G_OPTION_ARG_INT, &o.count, "watch: exit after this many renders", "N" },
    { "force", 0, 0, G_OPTION_ARG_NONE, &o.force, "approve, deny: record a verdict on an abandoned request too", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = sactl_option_context_new ("approvals", entries);
  g_autoptr(SubagentApprovalSink) sink = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *root = NULL;
  const char *sub;

  g_option_context_set_summary (context, "See and answer the approval requests of subagents from another process.");
  if (!sactl_option_context_parse (context, "approvals", &argc, &argv))
    return SACTL_EXIT_USAGE;
  if (argc < 2)
    return sactl_usage_error ("approvals", "give a subcommand: list, approve, deny, approve-all, deny-all, watch or prune");
  sub = argv[1];
  if (!subcommand_fits (sub, argc))
    return sactl_usage_error ("approvals", "unknown subcommand or wrong arguments: “%s”", sub);

  root = sactl_resolve_root (o.root, &error);
  if (root == NULL)
    return sactl_fail (error);
  sink = sactl_open_approval_sink (root, &error);
  if (sink == NULL)
    return sactl_fail (error);

  if (g_str_equal (sub, "list") && argc == 2)
    return cmd_list (sink, &o);
  if (g_str_equal (sub, "approve") && argc == 3)
    return cmd_decide (sink, &o, argv[2], SUBAGENT_APPROVAL_STATUS_APPROVED);
  if (g_str_equal (sub, "deny") && argc == 3)
    return cmd_decide (sink, &o, argv[2], SUBAGENT_APPROVAL_STATUS_DENIED);
  if (g_str_equal (sub, "approve-all") && argc == 2)
    return cmd_decide_all (sink, &o, SUBAGENT_APPROVAL_STATUS_APPROVED);
  if (g_str_equal (sub, "deny-all") && argc == 2)
    return cmd_decide_all (sink, &o, SUBAGENT_APPROVAL_STATUS_DENIED);
  if (g_str_equal (sub, "watch") && argc == 2)
    return cmd_watch (sink, &o, root);
  if (g_str_equal (sub, "prune") && argc == 2)
    return cmd_prune (sink, &o);
  g_assert_not_reached ();
}
