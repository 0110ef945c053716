"""A language server that misbehaves one way, for tests/safety/test_symbols_hostile.py:
``python -I hostile_lsp_server.py MODE``. It answers ``initialize`` (except in the modes
that break before), then misbehaves on the next request."""

import json
import sys
import time

MODE = sys.argv[1]
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer


def read():
    length = None
    while True:
        line = stdin.readline()
        if not line:
            sys.exit(0)
        if not line.strip():
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stdin.read(length))


def send(message, raw=None):
    body = raw if raw is not None else json.dumps(message).encode()
    stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdout.flush()


ROOT = sys.argv[2] if len(sys.argv) > 2 else "/nowhere"


def at(uri, line=0):
    position = {"line": line, "character": 0}
    return {"uri": uri, "range": {"start": position, "end": position}}


HOSTILE_LOCATIONS = (
    [at(f"file://{ROOT}/ledger/models.py", n) for n in range(5000)]
    + [at("file:///etc/passwd"), at(f"file://{ROOT}/../../etc/shadow"), at("http://x/y.py")]
    + [at(f"file://{ROOT}2/secret.py"), at(f"file://{ROOT}/a.py", -5), {"uri": 7}, "junk", None]
)

if MODE == "no_answer":
    time.sleep(60)
request = read()
if MODE == "exit_at_start":
    sys.exit(3)
if MODE == "garbage_at_start":
    send(None, raw=b"this is not json")
    time.sleep(60)
send({"jsonrpc": "2.0", "id": request["id"], "result": {"capabilities": {}}})
while True:
    request = read()
    if "id" not in request:
        continue  # a notification
    if request["method"] == "shutdown":
        send({"jsonrpc": "2.0", "id": request["id"], "result": None})
        continue
    if MODE == "huge_frame":
        stdout.write(b"Content-Length: 99999999999\r\n\r\n")
        stdout.flush()
        time.sleep(60)
    elif MODE == "deep_json":
        send(None, raw=b"[" * 100_000 + b"]" * 100_000)
        time.sleep(60)
    elif MODE == "wrong_ids":
        send({"jsonrpc": "2.0", "id": [request["id"]], "result": []})
        send({"jsonrpc": "2.0", "id": "x", "result": []})
        time.sleep(60)
    elif MODE == "crash_on_request":
        sys.exit(9)
    elif MODE == "silent_after_start":
        time.sleep(60)
    elif MODE == "hostile_locations":
        send({"jsonrpc": "2.0", "id": request["id"], "result": HOSTILE_LOCATIONS})
