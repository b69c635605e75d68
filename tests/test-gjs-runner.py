#!/usr/bin/python3
"""examples/gjs-runner.js, a SubagentRunner written in JavaScript, runs a
child from gjs (issue 12 item 5). Prints TAP.
Usage: test-gjs-runner.py GJS EXAMPLE"""
import json
import shutil
import subprocess
import sys
import tempfile

gjs, example = sys.argv[1], sys.argv[2]
root = tempfile.mkdtemp(prefix="subagent-gjs-")
ok = True
try:
    proc = subprocess.run([gjs, example, root, "from js"], capture_output=True, text=True, timeout=60)
    results = [
        ("gjs example exits 0", proc.returncode == 0),
        ("no gjs criticals", "CRITICAL" not in proc.stderr),
    ]
    result = json.loads(proc.stdout) if proc.returncode == 0 else {}
    results += [
        ("status complete", result.get("status") == "complete"),
        ("the JavaScript runner's answer", result.get("final_answer") == "default from gjs: from js"),
        ("every key of the result", all(k in result for k in
                                        ("run_id", "iterations", "tool_calls", "cost_cents", "lineage", "message"))),
    ]
    for i, (name, passed) in enumerate(results, 1):
        print(("ok %d - %s" if passed else "not ok %d - %s") % (i, name))
        ok = ok and passed
    if not ok:
        print("# " + proc.stderr.replace("\n", "\n# "))
    print("1..%d" % len(results))
finally:
    shutil.rmtree(root, ignore_errors=True)
sys.exit(0 if ok else 1)
