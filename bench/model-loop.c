/* bench/model-loop.c: what the model-backed agent loop costs per turn, in
 * one run, against the scripted OpenAI-compatible server on 127.0.0.1:
 *
 *  1. A TURNS-turn conversation (default 50) of a model-backed child: each
 *     turn streams one tool call (Read of a small file), the last one an
 *     answer. Per turn: the time from the server's last byte of a turn to
 *     the next request arriving (the loop's own overhead: finish the
 *     stream, run the tool, update the transcript, build and send the
 *     next request). Target: median ≤ 1 ms.
 *  2. The same number of turns by a bare libsoup client that only POSTs a
 *     fixed body and reads the stream to its end: what any client pays.
 *     The ratio of the two is the loop's bookkeeping.
 *  3. Growth: the median gap of the first 5 turns against the last 5 (the
 *     request of turn 50 carries the whole conversation), and the CPU time
 *     of the whole child run per turn, against the bare client's.
 *
 * Usage: model-loop [--turns N] [--rounds R]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <libsoup/soup.h>
#include <subagent.h>

#include "../tests/model-test-support.h"
#include "../tests/test-support.h"

static double
cpu_seconds (void)
{
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static int
compare_doubles (const void *a,
                 const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median_of (double *values,
           guint   n)
{
  double *copy = g_memdup2 (values, n * sizeof *values);
  double m;

  qsort (copy, n, sizeof *copy, compare_doubles);
  m = n % 2 ? copy[n / 2] : (copy[n / 2 - 1] + copy[n / 2]) / 2;
  g_free (copy);
  return m;
}

static double
percentile_of (double *values,
               guint   n,
               double  p)
{
  double *copy = g_memdup2 (values, n * sizeof *values);
  double v;

  qsort (copy, n, sizeof *copy, compare_doubles);
  v = copy[MIN (n - 1, (guint) (p * n))];
  g_free (copy);
  return v;
}

/* Gaps (ms) between the end of turn i's stream and request i+1. */
static guint
gaps_of (MtsServer *server,
         double    *gaps,
         guint      max)
{
  g_autoptr(JsonArray) requests = mts_server_records (server, "request");
  g_autoptr(JsonArray) finished = mts_server_records (server, "finished");
  guint n = 0;

  for (guint i = 0; i + 1 < json_array_get_length (requests) && i < json_array_get_length (finished) && n < max; i++)
    {
      double end = json_object_get_double_member (json_array_get_object_element (finished, i), "time");
      double next = json_object_get_double_member (json_array_get_object_element (requests, i + 1), "time");

      gaps[n++] = (next - end) * 1000.0;
    }
  return n;
}

static char *
script_of (guint turns)
{
  GString *script = g_string_new ("{'steps': [");

  for (guint i = 0; i + 1 < turns; i++)
    g_string_append_printf (script, "{'tool_calls': [{'name': 'Read', 'arguments': {'file_path': 'notes.txt'},"
                                    " 'id': 't%u'}], 'split_args': 3, 'say': 'Reading.', 'split': 2},", i);
  g_string_append (script, "{'say': 'All read.', 'split': 2}]}");
  return g_strdelimit (g_string_free (script, FALSE), "'", '"');
}

typedef struct {
  double median, p90, first5, last5, cpu_per_turn_ms;
  guint turns;
} Figures;

static void
run_loop (guint    turns,
          Figures *out)
{
  g_autofree char *script = script_of (turns);
  g_autofree char *root = sat_make_temp_dir ("bench-model");
  g_autofree char *def = g_strdup_printf ("name: looper\nmodel: test\ntools: [Read]\nmax_iterations: %u\n"
                                          "max_tool_calls: %u\n", turns + 1, turns + 1);
  g_autoptr(MtsServer) server = mts_server_start (script);
  g_autoptr(SubagentManager) manager = NULL;
  g_autoptr(SubagentRunOptions) options = subagent_run_options_new ();
  g_autoptr(SubagentRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  double *gaps = g_new0 (double, turns);
  double cpu;
  guint n;

  mts_write_config (root, server, "approvals: { sink: none }\n");
  sat_write_file (root, "notes.txt", "alpha\nbeta\ngamma\n");
  sat_write_file (root, ".subagent/agents/looper.yaml", def);
  manager = subagent_manager_new (root, &error);
  g_assert_no_error (error);
  subagent_run_options_set_def_name (options, "looper");
  cpu = cpu_seconds ();
  result = subagent_manager_run (manager, "read notes.txt again and again", options, NULL, &error);
  cpu = cpu_seconds () - cpu;
  g_assert_no_error (error);
  if (subagent_run_result_get_status (result) != SUBAGENT_RUN_STATUS_COMPLETE ||
      subagent_run_result_get_iterations (result) != turns)
    g_error ("the model child did not finish its %u turns: %s", turns, subagent_run_result_get_message (result));
  n = gaps_of (server, gaps, turns);
  out->turns = n;
  out->median = median_of (gaps, n);
  out->p90 = percentile_of (gaps, n, 0.9);
  out->first5 = median_of (gaps, MIN (5, n));
  out->last5 = median_of (gaps + n - MIN (5, n), MIN (5, n));
  out->cpu_per_turn_ms = cpu * 1000.0 / turns;
  g_free (gaps);
  g_clear_object (&manager);
  sat_rm_rf (root);
}

/* The same turns by a client that does nothing but POST and read. */
static void
run_bare (guint    turns,
          Figures *out)
{
  g_autofree char *script = script_of (turns);
  g_autoptr(MtsServer) server = mts_server_start (script);
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autofree char *url = g_strdup_printf ("http://127.0.0.1:%u/v1/chat/completions", server->port);
  const char *body = "{\"model\":\"scripted\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  double *gaps = g_new0 (double, turns);
  double cpu = cpu_seconds ();
  guint n;

  for (guint i = 0; i < turns; i++)
    {
      g_autoptr(SoupMessage) message = soup_message_new ("POST", url);
      g_autoptr(GBytes) bytes = g_bytes_new_static (body, strlen (body));
      g_autoptr(GInputStream) stream = NULL;
      g_autoptr(GDataInputStream) data = NULL;
      g_autoptr(GError) error = NULL;
      char *line;

      soup_message_headers_replace (soup_message_get_request_headers (message), "Authorization", "Bearer " MTS_KEY);
      soup_message_set_request_body_from_bytes (message, "application/json", bytes);
      stream = soup_session_send (session, message, NULL, &error);
      g_assert_no_error (error);
      data = g_data_input_stream_new (stream);
      while ((line = g_data_input_stream_read_line (data, NULL, NULL, NULL)) != NULL)
        {
          gboolean done = g_str_equal (line, "data: [DONE]");
          g_free (line);
          if (done)
            break;
        }
      g_input_stream_close (stream, NULL, NULL);
    }
  cpu = cpu_seconds () - cpu;
  n = gaps_of (server, gaps, turns);
  out->turns = n;
  out->median = median_of (gaps, n);
  out->p90 = percentile_of (gaps, n, 0.9);
  out->first5 = median_of (gaps, MIN (5, n));
  out->last5 = median_of (gaps + n - MIN (5, n), MIN (5, n));
  out->cpu_per_turn_ms = cpu * 1000.0 / turns;
  g_free (gaps);
}

int
main (int argc, char *argv[])
{
  int turns = 50, rounds = 3;
  GOptionEntry entries[] = {
    { "turns", 0, 0, G_OPTION_ARG_INT, &turns, "Turns of the conversation (default 50)", "N" },
    { "rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Conversations of each kind, alternating (default 3)", "R" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("— the model-backed agent loop's overhead per turn");
  g_autoptr(GError) error = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || turns < 6 || rounds < 1)
    {
      fprintf (stderr, "model-loop: %s\n", error ? error->message : "--turns must be at least 6, --rounds at least 1");
      return 2;
    }
  if (g_getenv ("G_TEST_SRCDIR") == NULL)
    g_setenv ("G_TEST_SRCDIR", BENCH_TESTS_DIR, TRUE);
  g_setenv (MTS_KEY_ENV, MTS_KEY, TRUE);

  printf ("model-loop: %d-turn conversations against the scripted server, %d round(s) each, alternating\n",
          turns, rounds);
  printf ("%-24s %5s %10s %10s %12s %12s %14s\n", "client", "turns", "median ms", "p90 ms",
          "first-5 ms", "last-5 ms", "CPU ms/turn");
  for (int r = 0; r < rounds; r++)
    {
      Figures loop = { 0 }, bare = { 0 };

      run_loop ((guint) turns, &loop);
      run_bare ((guint) turns, &bare);
      printf ("%-24s %5u %10.3f %10.3f %12.3f %12.3f %14.3f\n", "openai-chat loop", loop.turns, loop.median,
              loop.p90, loop.first5, loop.last5, loop.cpu_per_turn_ms);
      printf ("%-24s %5u %10.3f %10.3f %12.3f %12.3f %14.3f\n", "bare libsoup POST+read", bare.turns, bare.median,
              bare.p90, bare.first5, bare.last5, bare.cpu_per_turn_ms);
      printf ("  round %d: loop/bare median gap %.2fx (loop %.3f ms, target <= 1 ms: %s); "
              "loop growth last-5/first-5 %.2fx; CPU per turn loop/bare %.2fx\n",
              r + 1, loop.median / bare.median, loop.median, loop.median <= 1.0 ? "met" : "NOT met",
              loop.last5 / loop.first5, loop.cpu_per_turn_ms / bare.cpu_per_turn_ms);
    }
  return 0;
}
