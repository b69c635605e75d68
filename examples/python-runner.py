#!/usr/bin/python3
"""A SubagentRunner written in Python, hosted from Python.

The runner is the child's agent loop: here a small scripted one that asks
for an approval before it writes a file in its workspace. The host answers
that approval prompt from Python (as a GUI would, from the queue's
"request-added" signal) and prints the supervisor's events as they come.

A runner implements the blocking `do_run`; libsubagent calls it in a worker
thread, so the host's main loop keeps running (and can answer approvals)
while the child works. An asynchronous runner may implement `do_run_async`
instead and finish with `task.return_value(outcome)`: no `do_run_finish`
is needed.

Run from a build tree:
  GI_TYPELIB_PATH=build/framework LD_LIBRARY_PATH=build/framework \
    /usr/bin/python3 examples/python-runner.py ROOT [TASK]
"""
import json
import os
import sys

import gi

gi.require_version("Json", "1.0")
gi.require_version("Subagent", "1.0")
from gi.repository import GLib, GObject, Json, Subagent  # noqa: E402


class NotesRunner(GObject.Object, Subagent.Runner):
    """Writes the task into notes.txt in the child's workspace, once a
    human (here: the host) has approved the write."""

    def do_run(self, context, cancellable):
        root = context.get_isolation().get_child_root()
        path = os.path.join(root, "notes.txt")
        arguments = Json.Object()
        arguments.set_string_member("file_path", path)

        handler = context.get_approval_handler()
        decision, reason = handler.check("Write", arguments, True, True, cancellable)
        if decision != Subagent.ApprovalDecision.ALLOW:
            return Subagent.RunOutcome.new("complete", 1, 0, 0.1, "", "",
                                           "the write was denied: %s" % reason)
        with open(path, "w") as f:
            f.write(context.get_task() + "\n")
        return Subagent.RunOutcome.new("complete", 1, 1, 0.25,
                                       "wrote notes.txt for: " + context.get_task(), "", "")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    task = sys.argv[2] if len(sys.argv) > 2 else "remember the milk"

    manager = Subagent.Manager.new(root)
    manager.set_runner(NotesRunner())
    # Approvals of this host's children are kept in memory and answered here.
    manager.set_approval_sink(Subagent.MemoryApprovalSink.new())
    manager.set_permission_mode(Subagent.PermissionMode.PROMPT)
    supervisor = Subagent.Supervisor.new(manager)
    queue = manager.dup_approval_queue()

    def on_event(_supervisor, event):
        print("event: %s %s" % (Subagent.event_kind_to_string(event.get_kind()), event.get_run_id()),
              flush=True)

    def answer(request):
        print("approval prompt: %s wants %s %s -> approve" % (
            request.get_subagent_name(), request.get_tool_name(),
            Json.to_string(Json.Node.alloc().init_object(request.get_tool_arguments()), False)),
            flush=True)
        queue.approve(request.get_request_id(), "python-host")
        return GLib.SOURCE_REMOVE

    # Emitted on the child's thread: answer from the main loop.
    queue.connect("request-added", lambda _queue, request: GLib.idle_add(answer, request))
    supervisor.connect("event", on_event)

    options = Subagent.RunOptions.new()
    options.set_isolation("shared")
    loop = GLib.MainLoop()
    results = {}

    def done(source, result):
        results["result"] = source.run_finish(result)
        loop.quit()

    supervisor.run_async(task, options, None, done)
    loop.run()

    result = results["result"]
    print(json.dumps(json.loads(Json.to_string(Json.Node.alloc().init_object(result.to_json()), False)),
                     indent=2, sort_keys=True))
    return 0 if result.get_status() == Subagent.RunStatus.COMPLETE else 1


if __name__ == "__main__":
    sys.exit(main())
