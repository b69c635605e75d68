#!/usr/bin/python3
"""A GLib host in Python: delegates one task to a child agent through
GObject Introspection, then prints the result the parent's model would see.

Run from a build tree:
  GI_TYPELIB_PATH=build/framework LD_LIBRARY_PATH=build/framework \
    /usr/bin/python3 examples/python-host.py ROOT [TASK]

ROOT gets a `.subagent/agents/echo.yaml` definition if it has none.
"""
import json
import os
import sys

import gi

gi.require_version("Subagent", "1.0")
from gi.repository import GLib, Subagent  # noqa: E402


def ensure_definition(root):
    agents = os.path.join(root, ".subagent", "agents")
    os.makedirs(agents, exist_ok=True)
    path = os.path.join(agents, "echo.yaml")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(
                "name: echo\n"
                "description: Answers with the task it read on stdin.\n"
                "command: [/bin/sh, -c, 'read -r line; echo \"{\\\"type\\\":\\\"final\\\",\\\"answer\\\":\\\"echo: $line\\\"}\"']\n"
            )


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    task = sys.argv[2] if len(sys.argv) > 2 else "hello from Python"
    ensure_definition(root)

    manager = Subagent.Manager.new(root)
    options = Subagent.RunOptions.new()
    options.set_def_name("echo")
    options.set_isolation("shared")

    loop = GLib.MainLoop()
    outcome = {}

    def done(source, result):
        outcome["result"] = source.run_finish(result)
        loop.quit()

    # The async API keeps this main loop responsive while the child runs.
    manager.run_async(task, options, None, done)
    loop.run()

    result = outcome["result"]
    print(json.dumps(json.loads(_to_text(result)), indent=2))
    return 0 if result.get_status() == Subagent.RunStatus.COMPLETE else 1


def _to_text(result):
    # Json.Object is not iterable from Python; serialize it through json-glib.
    gi.require_version("Json", "1.0")
    from gi.repository import Json
    node = Json.Node.alloc().init_object(result.to_json())
    return Json.to_string(node, False)


if __name__ == "__main__":
    sys.exit(main())
