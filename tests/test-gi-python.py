#!/usr/bin/python3
"""The library through GObject Introspection: the Python example host runs a
real delegation, and the result object carries reference 001's keys."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import gi
gi.require_version("Subagent", "1.0")
from gi.repository import Subagent  # noqa: E402

example = sys.argv[1]
root = tempfile.mkdtemp(prefix="subagent-gi-")
failures = 0
passes = 0


def check(name, condition):
    global failures, passes
    print(("ok - " if condition else "not ok - ") + name)
    failures += 0 if condition else 1
    passes += 1 if condition else 0


try:
    out = subprocess.run(["/usr/bin/python3", example, root, "from gi"],
                         capture_output=True, text=True, timeout=60)
    check("example host exits 0", out.returncode == 0)
    result = json.loads(out.stdout) if out.returncode == 0 else {}
    check("status complete", result.get("status") == "complete")
    check("answer comes from the child", result.get("final_answer") == "echo: from gi")
    # Reference 001's keys in its order; after them, the confinement that
    # applied (issue 11), an extension no reference key depends on.
    check("reference keys in order",
          list(result) == ["run_id", "status", "iterations", "tool_calls", "cost_cents",
                           "final_answer", "lineage", "message", "confinement"])
    on_disk = Subagent.SessionLog.lookup(os.path.join(root, ".subagent", "sessions"), result.get("run_id", "x"))
    check("session record on disk", on_disk.get_session_id() == result.get("run_id"))
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
finally:
    shutil.rmtree(root, ignore_errors=True)

print(f"gi: {passes} passed, {failures} failed")
sys.exit(1 if failures else 0)
