"""An MCP server that fails on purpose, one way per run (``faulty_mcp_server.py FAULT``).

Written by hand with the standard library (so it starts in milliseconds, and so it can do
what the SDK would never let a server do). It speaks enough of the 2026-07-28 protocol
over stdio (``server/discover``, ``tools/list``, ``tools/call``) to offer ``read_file``,
which works, and ``run_tests``, which fails as ``FAULT`` says:

- ``exits``: the server exits (code 3) while it runs ``run_tests``;
- ``hangs``: ``run_tests`` never answers (the server goes on answering anything else);
- ``bad_schema``: it also lists ``count_lines``, whose ``inputSchema`` is not JSON Schema
  (a property of type ``"text"``);
- ``lies``: ``run_tests`` returns ``{"exit_code": "0"}``, a string where its
  ``outputSchema`` promises an integer;
- ``garbage``: ``run_tests`` first prints a line of progress on stdout, where only
  protocol messages may go.

Lesson 11 runs each through the harness (``faulty_server_command``) to show how each ends;
lesson 05 runs ``exits`` as the case that stops a run with ``tools_failed``.
The tests use four more (``MORE_FAULTS``): ``banner`` (a line of text before the first
message), ``mute`` (it never answers anything), ``forks`` (it starts a process that would
outlive it, writing its pid to ``child.pid``) and ``stubborn`` (it ignores SIGTERM and the
end of its stdin).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

FAULTS = ("exits", "hangs", "bad_schema", "lies", "garbage")
MORE_FAULTS = ("banner", "mute", "forks", "stubborn")
INFO = {"name": "faulty-workspace", "version": "0.1.0"}
#: What 2026-07-28 adds to a listing's result: how long it may be cached, and by whom.
LISTED = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
          "_meta": {"io.modelcontextprotocol/serverInfo": INFO}}  # fmt: skip
OBJECT = {"type": "object"}
TOOLS = [
    {
        "name": "read_file",
        "description": "Read one text file of the repository.",
        "inputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
    {
        "name": "run_tests",
        "description": "Run the repository's tests; exit_code 0 means every test passed.",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {
            "type": "object",
            "properties": {"exit_code": {"type": "integer"}, "output": {"type": "string"}},
            "required": ["exit_code", "output"],
        },
    },
]
BAD_TOOL = {
    "name": "count_lines",
    "description": "Count the lines of a file.",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "text"}}},
}


def faulty_server_command(fault: str) -> list[str]:
    """The command that starts this server failing as ``fault`` says."""
    if fault not in FAULTS + MORE_FAULTS:
        raise ValueError(f"a fault is one of {FAULTS + MORE_FAULTS}, not {fault!r}")
    return [sys.executable, "-I", "-S", str(Path(__file__).resolve()), fault]


def answer(request: dict, fault: str) -> dict | None:
    """The response to one request (None: none is sent)."""
    method, params = request.get("method"), request.get("params") or {}
    if method == "server/discover":
        return {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, **LISTED}
    if method == "tools/list":
        return {"tools": TOOLS + ([BAD_TOOL] if fault == "bad_schema" else []), **LISTED}
    if method != "tools/call":
        return None
    if params.get("name") == "read_file":
        path = str(params.get("arguments", {}).get("path", ""))
        text = (
            Path(path).read_text(encoding="utf-8", errors="replace") if Path(path).is_file() else ""
        )
        return _result({"path": path, "content": text})
    if fault == "exits":
        print("faulty server: exiting in the middle of run_tests, on purpose", file=sys.stderr)
        sys.stderr.flush()
        os._exit(3)
    if fault == "hangs":
        return None
    if fault == "garbage":
        print("collecting tests... 4 items", flush=True)  # on stdout: the fault
    if fault == "lies":
        return _result({"exit_code": "0", "output": "4 passed"})
    return _result({"exit_code": 0, "output": "4 passed"})


def _result(structured: dict) -> dict:
    text = json.dumps(structured)
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured,
            "isError": False, "resultType": "complete"}  # fmt: skip


def main(fault: str) -> None:
    if fault == "banner":
        print("faulty-workspace 0.1.0 starting", flush=True)
    if fault == "mute":
        for _ in sys.stdin:
            pass
        return
    if fault == "forks":  # a grandchild in a session of its own, as a daemon would be
        import subprocess

        child = subprocess.Popen(["sleep", "60"], start_new_session=True)
        Path("child.pid").write_text(str(child.pid))
    if fault == "stubborn":
        import signal
        import time

        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification (cancelled): nothing to answer
        result = answer(request, fault)
        if result is not None or request.get("method") not in ("tools/call",):
            reply = {"jsonrpc": "2.0", "id": request["id"]}
            if result is None:
                reply["error"] = {"code": -32601, "message": "method not found"}
            else:
                reply["result"] = result
            print(json.dumps(reply), flush=True)
    if fault == "stubborn":
        while True:  # stdin has ended; it will not
            time.sleep(1)


if __name__ == "__main__":
    main(sys.argv[1])
