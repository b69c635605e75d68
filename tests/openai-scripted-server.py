#!/usr/bin/python3
"""A scripted OpenAI-compatible chat-completions server for libsubagent's tests.

It listens on 127.0.0.1 (an ephemeral port, printed as `PORT <n>` on stdout),
answers each POST .../chat/completions with the next step of a script, and
appends every request it got (path, headers, body) as one JSON line to the
record file. Standard library only; stops on SIGTERM, or when its stdin
closes if started with --exit-on-stdin-eof.

Script: {"steps": [STEP, ...]}; when the steps run out every request gets 500.
A STEP is one of
  {"status": 429, "headers": {"Retry-After": "0"}, "body": "slow down"}
  {"say": "text", "split": 3, "tool_calls": [CALL, ...], "usage": {...} | null,
   "style": "openai" | "llamacpp" | "ollama", "split_args": 1,
   "finish_reason": "...", "slow_ms": 0, "stall_after": null, "no_done": false,
   "json": false, "empty": false}
CALL = {"name": "Read", "arguments": {...} or "raw text", "id": "call_1" | null}
  style openai:   role chunk, content deltas, tool-call deltas (id+name first,
                  arguments in split_args fragments, keyed by index), finish
                  chunk, then a usage chunk with empty choices, [DONE]
  style llamacpp: as openai, plus `timings`, arguments cut at arbitrary points
                  and the usage on the finish chunk itself
  style ollama:   one chunk per tool call, whole arguments, finish_reason
                  "stop" even with tool calls, usage on the last chunk
"""
import json
import os
import signal
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = {"steps": []}
STEPS_LOCK = threading.Lock()
NEXT = [0]
RECORD = None
RECORD_LOCK = threading.Lock()


def record(entry):
    with RECORD_LOCK:
        with open(RECORD, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def split_text(text, parts):
    parts = max(1, parts)
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[i:i + size] for i in range(0, len(text), size)]


def chunk(delta=None, finish=None, usage=None, extra=None, choices=True):
    c = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk",
         "created": int(time.time()), "model": "scripted"}
    if choices:
        c["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    else:
        c["choices"] = []
    if usage is not None:
        c["usage"] = usage
    if extra:
        c.update(extra)
    return c


def call_arguments(call):
    args = call.get("arguments", {})
    return args if isinstance(args, str) else json.dumps(args)


def events_for(step):
    style = step.get("style", "openai")
    say = step.get("say", "")
    calls = step.get("tool_calls", [])
    usage = step.get("usage", {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120})
    finish = step.get("finish_reason", "tool_calls" if calls else "stop")
    events = []
    if style == "ollama":
        for piece in split_text(say, step.get("split", 1)):
            events.append(chunk({"role": "assistant", "content": piece}))
        for i, call in enumerate(calls):
            tc = {"index": i, "type": "function",
                  "function": {"name": call["name"], "arguments": call_arguments(call)}}
            if call.get("id", "call_%d" % i) is not None:
                tc["id"] = call.get("id", "call_%d" % i)
            events.append(chunk({"role": "assistant", "content": "", "tool_calls": [tc]}))
        last = chunk({"role": "assistant", "content": ""}, step.get("finish_reason", "stop"))
        if usage is not None:
            last["usage"] = usage
        events.append(last)
        return events
    events.append(chunk({"role": "assistant", "content": None if style == "openai" else ""}))
    for piece in split_text(say, step.get("split", 1)):
        events.append(chunk({"content": piece}))
    for i, call in enumerate(calls):
        args = call_arguments(call)
        first = {"index": i, "type": "function", "function": {"name": call["name"], "arguments": ""}}
        if call.get("id", "call_%d" % i) is not None:
            first["id"] = call.get("id", "call_%d" % i)
        events.append(chunk({"tool_calls": [first]}))
        parts = step.get("split_args", 1)
        if style == "llamacpp":
            parts = max(parts, 3)
        for piece in split_text(args, parts):
            events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    if style == "llamacpp":
        timings = {"prompt_n": 10, "predicted_n": 5, "predicted_ms": 1.0}
        events.append(chunk({}, finish, usage, {"timings": timings}))
    else:
        events.append(chunk({}, finish))
        if usage is not None:
            events.append(chunk(usage=usage, choices=False))
    return events


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        # The log never holds headers (the API key travels in one).
        sys.stderr.write("scripted-server: " + (fmt % args) + "\n")

    def send_chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "scripted", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        # When the request's head arrived: benches measure to here, so the
        # time this server takes to read and parse a body is not counted.
        arrived = time.monotonic()
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"unparsable": raw.decode("utf-8", "replace")}
        with STEPS_LOCK:
            index = NEXT[0]
            NEXT[0] += 1
        record({"event": "request", "index": index, "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body,
                "time": arrived})
        steps = SCRIPT.get("steps", [])
        if not self.path.endswith("/chat/completions"):
            self.plain(404, "no such endpoint: " + self.path)
            return
        if index >= len(steps):
            self.plain(500, "the script has no step %d" % index)
            return
        step = steps[index]
        if "status" in step:
            self.plain(step["status"], step.get("body", "scripted failure"), step.get("headers", {}))
            return
        if step.get("json"):
            self.whole(step)
            return
        self.stream(step, index)

    def plain(self, status, text, headers=None):
        data = json.dumps({"error": {"message": text, "type": "scripted"}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def whole(self, step):
        calls = step.get("tool_calls", [])
        message = {"role": "assistant", "content": step.get("say", "")}
        if calls:
            message["tool_calls"] = [{"id": c.get("id", "call_%d" % i), "type": "function",
                                      "function": {"name": c["name"], "arguments": call_arguments(c)}}
                                     for i, c in enumerate(calls)]
        data = json.dumps({"id": "x", "object": "chat.completion", "model": "scripted",
                           "choices": [{"index": 0, "message": message,
                                        "finish_reason": "tool_calls" if calls else "stop"}],
                           "usage": step.get("usage", {"prompt_tokens": 100, "completion_tokens": 20})}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def stream(self, step, index):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if step.get("empty"):
            # A 200 whose stream ends before any event.
            self.send_chunk(b"")
            record({"event": "finished", "index": index, "time": time.monotonic()})
            return
        slow = step.get("slow_ms", 0) / 1000.0
        stall_after = step.get("stall_after")
        try:
            for n, event in enumerate(events_for(step)):
                if stall_after is not None and n == stall_after:
                    record({"event": "stalled", "index": index})
                    time.sleep(step.get("stall_seconds", 30))
                    return
                if slow and n > 0:
                    time.sleep(slow)
                self.send_chunk(b"data: " + json.dumps(event).encode() + b"\n\n")
            if not step.get("no_done"):
                self.send_chunk(b"data: [DONE]\n\n")
            self.send_chunk(b"")
            record({"event": "finished", "index": index, "time": time.monotonic()})
        except (BrokenPipeError, ConnectionResetError):
            record({"event": "disconnected", "index": index, "time": time.monotonic()})
            self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global SCRIPT, RECORD
    args = sys.argv[1:]
    script_path = args[args.index("--script") + 1]
    RECORD = args[args.index("--record") + 1]
    with open(script_path, encoding="utf-8") as f:
        SCRIPT = json.load(f)
    open(RECORD, "w").close()
    server = Server(("127.0.0.1", 0), Handler)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    print("PORT %d" % server.server_address[1], flush=True)
    if "--exit-on-stdin-eof" in args:
        # The test closes our stdin when it is done (or dies): stop then.
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
