#!/usr/bin/python3
"""Runners written in Python (issue 12 item 5): examples/python-runner.py
runs, asks for an approval, answers it from Python and prints the events;
a runner with only `do_run` works; an asynchronous runner finishes with
`task.return_value(outcome)` and needs no `do_run_finish`. Prints TAP."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import gi

gi.require_version("Subagent", "1.0")
from gi.repository import Gio, GLib, GObject, Subagent  # noqa: E402

example = sys.argv[1]
results = []


def check(name, condition, detail=""):
    results.append(bool(condition))
    print(("ok %d - " if condition else "not ok %d - ") % len(results) + name)
    if not condition and detail:
        print("# " + detail.replace("\n", "\n# "))


def run_with(runner, task):
    root = tempfile.mkdtemp(prefix="subagent-pyrunner-")
    try:
        manager = Subagent.Manager.new(root)
        manager.set_runner(runner)
        manager.set_approval_sink(Subagent.MemoryApprovalSink.new())
        options = Subagent.RunOptions.new()
        options.set_isolation("shared")
        loop = GLib.MainLoop()
        out = {}

        def done(source, result):
            out["result"] = source.run_finish(result)
            loop.quit()

        manager.run_async(task, options, None, done)
        GLib.timeout_add_seconds(20, loop.quit)
        loop.run()
        return out.get("result")
    finally:
        shutil.rmtree(root, ignore_errors=True)


# 1. The shipped example, as a user runs it.
root = tempfile.mkdtemp(prefix="subagent-pyrunner-example-")
try:
    proc = subprocess.run(["/usr/bin/python3", example, root, "buy milk"],
                          capture_output=True, text=True, timeout=60)
    check("example exits 0", proc.returncode == 0, proc.stderr)
    lines = proc.stdout.splitlines()
    prompts = [line for line in lines if line.startswith("approval prompt: ")]
    check("one approval prompt, answered from Python",
          len(prompts) == 1 and "Write" in prompts[0] and prompts[0].endswith("-> approve"), proc.stdout)
    kinds = [line.split()[1] for line in lines if line.startswith("event: ")]
    check("events printed in order",
          kinds[:2] == ["accepted", "started"] and "approval-requested" in kinds and
          "approval-resolved" in kinds and kinds[-1] == "completed", " ".join(kinds))
    body = proc.stdout[proc.stdout.index("\n{\n") + 1:] if "\n{\n" in proc.stdout else "{}"
    result = json.loads(body)
    check("result complete with the runner's answer",
          result.get("status") == "complete" and result.get("final_answer") == "wrote notes.txt for: buy milk",
          body)
    with open(os.path.join(root, "notes.txt")) as f:
        check("the approved write happened", f.read() == "buy milk\n")
finally:
    shutil.rmtree(root, ignore_errors=True)


# 2. Only the blocking vfunc.
class SyncRunner(GObject.Object, Subagent.Runner):
    def do_run(self, context, cancellable):
        return Subagent.RunOutcome.new("complete", 2, 0, 0.5, "sync: " + context.get_task(), "", "")


result = run_with(SyncRunner(), "one")
check("do_run alone runs the child", result is not None and result.get_final_answer() == "sync: one")
check("do_run's usage is kept", result is not None and result.get_iterations() == 2 and result.get_cost_cents() == 0.5)


# 3. Asynchronous: a GTask, task.return_value(outcome), no do_run_finish.
class AsyncRunner(GObject.Object, Subagent.Runner):
    def do_run_async(self, context, cancellable, callback, *user_data):
        # The callback carries its own user data.
        task = Gio.Task.new(self, cancellable, callback)
        outcome = Subagent.RunOutcome.new("complete", 1, 0, 0.0, "async: " + context.get_task(), "", "")
        GLib.idle_add(lambda: task.return_value(outcome) or GLib.SOURCE_REMOVE)


result = run_with(AsyncRunner(), "two")
check("task.return_value(outcome) is enough", result is not None and result.get_final_answer() == "async: two")


# 4. Without threads or callbacks: do_start gets the GTask to complete.
class StartRunner(GObject.Object, Subagent.Runner):
    def do_start(self, context, task):
        outcome = Subagent.RunOutcome.new("complete", 1, 0, 0.0, "start: " + context.get_task(), "", "")
        GLib.idle_add(lambda: task.return_value(outcome) or GLib.SOURCE_REMOVE)


result = run_with(StartRunner(), "four")
check("do_start and task.return_value(outcome)", result is not None and result.get_final_answer() == "start: four")


# 5. A failure in do_run is the run's error, not a hang.
class FailingRunner(GObject.Object, Subagent.Runner):
    def do_run(self, context, cancellable):
        raise GLib.Error("no model reachable")


result = run_with(FailingRunner(), "three")
check("an exception in do_run ends the run with an error",
      result is not None and result.get_status() == Subagent.RunStatus.ERROR and
      "no model reachable" in result.get_message(), result.get_message() if result else "no result")

print("1..%d" % len(results))
sys.exit(0 if all(results) else 1)
