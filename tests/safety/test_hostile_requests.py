"""Hostile HTTP requests to the replay server: each gets a 4xx JSON answer, in bounded time.

Requests are written byte by byte on a raw socket (no client library tidies them up).
Every socket has a timeout, so a server that never answers fails the test instead of
hanging it. After each request the server must still answer, and must have kept no
handler error: no thread died.
"""

import json
import select
import socket
import time

import pytest
from conftest import PROJECT_DIR

from labkit import RecordingError, load_recording, serve_recording
from labkit.models.replay_handler import MAX_BODY_BYTES, MAX_DEPTH
from labkit.settings import DEFAULT_MODEL

REPAIR = load_recording(PROJECT_DIR / "recordings" / "repair.json")
BOUND = 5.0  # seconds any answer may take (the slow-body timeout is set to 0.5 s)


def exchange(url, data: bytes, *, then=b"") -> tuple[int, dict, bytes]:
    """Send ``data`` (and, after a pause for the server to read it, ``then``); read the answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=BOUND) as connection:
        connection.sendall(data)
        if then:
            connection.sendall(then)
        return parse(read_to_the_end(connection))


def read_to_the_end(connection) -> bytes:
    """Everything the server sends until it closes (one recv may return only a part)."""
    answer = b""
    while piece := connection.recv(1 << 16):
        answer += piece
    return answer


def parse(answer: bytes) -> tuple[int, dict, bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body), head


def post(path, body: bytes, **headers) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    if "Content_Length" not in headers:
        lines.append(f"Content-Length: {len(body)}")
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def chat(**fields) -> bytes:
    return json.dumps({"model": DEFAULT_MODEL, **fields}).encode()


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


HOSTILE = {  # name: (request bytes, status, words of the error)
    "JSON recursion bomb": (post("/api/chat", b"[" * 200_000), 400, "nests deeper"),
    "nesting just past the limit": (
        post("/api/chat", b'{"model": "m", "options": {"x": ' + nested(MAX_DEPTH) + b"}}"),
        400,
        "nests deeper",
    ),
    "tools is a string": (
        post("/api/chat", chat(messages=[], tools="read_file")),
        400,
        "the request.tools is a JSON string",
    ),
    "tools holds a number": (
        post("/api/chat", chat(messages=[], tools=[1])),
        400,
        "tools[0] is a JSON number, not a tool object",
    ),
    "tool function is a string": (
        post("/api/chat", chat(messages=[], tools=[{"type": "function", "function": "read_file"}])),
        400,
        "tools[0].function is a JSON string",
    ),
    "messages entry is a number": (
        post("/api/chat", chat(messages=[1])),
        400,
        "messages[0] is a JSON number, not an object",
    ),
    "messages entry is a list": (
        post("/api/chat", chat(messages=[["user", "hi"]])),
        400,
        "messages[0] is a JSON array",
    ),
    "role is a number": (
        post("/api/chat", chat(messages=[{"role": 5}])),
        400,
        "messages[0].role is a JSON number",
    ),
    "tool call arguments as text": (
        post(
            "/api/chat",
            chat(
                messages=[
                    {
                        "role": "assistant",
                        "tool_calls": [{"function": {"name": "x", "arguments": "{}"}}],
                    }
                ]
            ),
        ),
        400,
        "arguments is a JSON string, not object",
    ),
    "messages is an object": (
        post("/api/chat", chat(messages={"role": "user"})),
        400,
        "the request.messages is a JSON object, not array",
    ),
    "body is a list": (post("/api/chat", b"[1, 2]"), 400, "a JSON array, not an object"),
    "body is NaN": (post("/api/chat", b'{"model": NaN}'), 400, "not JSON"),
    "body is not UTF-8": (post("/api/chat", b'{"model": "\xff"}'), 400, "not JSON"),
    "empty body": (post("/api/chat", b""), 400, "missing request body"),
    "show without a model": (post("/api/show", b"{}"), 400, "model is required"),
    "negative Content-Length": (
        post("/api/chat", b"", Content_Length="-5"),
        400,
        "is not a number of bytes",
    ),
    "Content-Length not a number": (
        post("/api/chat", b"", Content_Length="ten"),
        400,
        "is not a number of bytes",
    ),
    "absurd Content-Length": (
        post("/api/chat", b"", Content_Length="9" * 40),
        400,
        "is not a number of bytes",
    ),
    "1 GiB Content-Length": (
        post("/api/chat", b"", Content_Length=str(2**30)),
        413,
        f"accepts at most {MAX_BODY_BYTES:,}",
    ),
    "just over the body cap": (
        post("/api/chat", b"", Content_Length=str(MAX_BODY_BYTES + 1)),
        413,
        "bytes; this server accepts at most",
    ),
    "two Content-Lengths": (
        b"POST /api/chat HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 7\r\n\r\n{}",
        400,
        "conflicting",
    ),
    "chunked body": (
        post("/api/chat", b"0\r\n\r\n", Transfer_Encoding="chunked"),
        411,
        "not chunked",
    ),
    "body shorter than announced": (
        post("/api/chat", b"{}", Content_Length="2")[:-1],
        400,
        "ended after 1 of 2 bytes",
    ),
    "garbage request line": (b"GET / HTTP/one\r\n\r\n", 400, "labkit replay server: "),
    "unknown method": (b"BREW /api/chat HTTP/1.1\r\nHost: x\r\n\r\n", 405, "labkit replay server"),
    "header line too long": (
        b"GET / HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n",
        431,
        "labkit replay server",
    ),
}


@pytest.fixture(scope="module")
def server():
    with serve_recording(REPAIR, request_timeout=0.5) as running:
        yield running


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_request_gets_a_4xx_json_error_and_the_server_goes_on(name, server, safety_tally):
    safety_tally["hostile HTTP requests"] += 1
    data, status, words = HOSTILE[name]
    if name == "body shorter than announced":  # the client hangs up half-way
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=BOUND) as connection:
            connection.sendall(data)
            connection.shutdown(socket.SHUT_WR)
            got_status, body, _ = parse(read_to_the_end(connection))
    else:
        got_status, body, _ = exchange(server.url, data)
    assert got_status == status, body
    assert set(body) == {"error"} and words in body["error"]
    assert server.errors == []
    assert exchange(server.url, b"GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n")[0] == 200


def test_a_slow_body_is_timed_out_with_408(server, safety_tally):
    safety_tally["hostile HTTP requests"] += 1
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=BOUND) as connection:
        connection.sendall(post("/api/chat", b"", Content_Length="100") + b'{"model": ')
        status, body, _ = parse(read_to_the_end(connection))  # the rest of the body never comes
    assert status == 408 and "did not arrive within 0.5 s (10 of 100 bytes came)" in body["error"]
    assert server.errors == []


def test_an_error_of_its_own_is_answered_with_500_and_kept(server, monkeypatch, safety_tally):
    safety_tally["hostile HTTP requests"] += 1

    def broken(name):
        raise KeyError("a bug")

    monkeypatch.setattr(server, "serves", broken)
    status, body, _ = exchange(
        server.url, post("/api/show", json.dumps({"model": DEFAULT_MODEL}).encode())
    )
    assert status == 500 and "internal error: KeyError('a bug')" in body["error"]
    assert server.errors == ["KeyError('a bug')"]
    server.errors.clear()


def test_a_recording_given_as_a_dict_is_checked_before_serving(safety_tally):
    safety_tally["hostile HTTP requests"] += 1
    for broken, words in (
        ({}, "'format' is None"),
        ({**REPAIR, "turns": [{"chunks": []}]}, "turn 1 has no request"),
        (
            {**REPAIR, "test_file_sha256": {"before": "0" * 64, "after": "0" * 64}},
            "recorded against a different sample",
        ),
    ):
        with pytest.raises(RecordingError, match=words):
            serve_recording(broken)


# --- the same guards in front of OpenAI's and Anthropic's APIs ---------------------------

SSE_ROUTES = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
#: What each API's clients send with every request (Anthropic's refuses one without it).
SSE_HEADERS = {"openai": {}, "anthropic": {"anthropic_version": "2023-06-01"}}
SURROGATE = "\\ud800"  # as JSON writes a lone surrogate: json.loads reads it as one


def sse_chat(provider, **fields) -> bytes:
    required = {"model": "labkit-replay:recording"}
    if provider == "anthropic":
        required["max_tokens"] = 10
    return json.dumps({**required, **fields}).encode()


def raw_chat(provider, text: str) -> bytes:
    """A chat body written by hand (``text`` goes in after the required fields)."""
    head = '{"model": "labkit-replay:recording"'
    if provider == "anthropic":
        head += ', "max_tokens": 10'
    return (head + text + "}").encode()


SSE_HOSTILE = {  # name: (body for a provider, extra headers, status, words of the error)
    "JSON recursion bomb": (lambda p: b"[" * 200_000, {}, 400, "nests deeper"),
    "body is a list": (lambda p: b"[1, 2]", {}, 400, "a JSON array, not an object"),
    "body is NaN": (lambda p: b'{"model": NaN}', {}, 400, "not JSON"),
    "1 GiB Content-Length": (lambda p: b"", {"Content_Length": str(2**30)}, 413, "accepts at most"),
    "chunked body": (lambda p: b"0\r\n\r\n", {"Transfer_Encoding": "chunked"}, 411, "not chunked"),
    "messages entry is a number": (
        lambda p: sse_chat(p, messages=[1]),
        {},
        400,
        "messages[0] is a JSON number, not an object",
    ),
    "tools holds a number": (
        lambda p: sse_chat(p, messages=[], tools=[1]),
        {},
        400,
        "tools[0] is a JSON number, not a tool object",
    ),
    "no model": (lambda p: b'{"messages": []}', {}, 400, "model"),
    "messages is null": (lambda p: sse_chat(p, messages=None), {}, 400, "messages"),
    "a lone surrogate as the model": (
        lambda p: f'{{"model": "{SURROGATE}", "messages": [], "max_tokens": 1}}'.encode(),
        {},
        400,
        "model is not Unicode text",
    ),
    "a lone surrogate as a role": (
        lambda p: raw_chat(p, f', "messages": [{{"role": "{SURROGATE}", "content": "x"}}]'),
        {},
        400,
        "messages[0].role is not Unicode text",
    ),
    "a lone surrogate deep in the content": (
        lambda p: raw_chat(
            p,
            ', "messages": [{"role": "user", "content": [{"type": "text", "text": "a'
            + SURROGATE
            + '"}]}]',
        ),
        {},
        400,
        "messages[0].content[0].text is not Unicode text",
    ),
    "a lone surrogate as a key": (
        lambda p: raw_chat(p, f', "{SURROGATE}": 1'),
        {},
        400,
        "a key in the request body is not Unicode text",
    ),
    "content part without a type": (
        lambda p: sse_chat(p, messages=[{"role": "user", "content": [{"text": "x"}]}]),
        {},
        400,
        "messages[0].content[0]",
    ),
    "stream is a string": (lambda p: sse_chat(p, messages=[], stream="yes"), {}, 400, "stream"),
}
OPENAI_HOSTILE = {  # only Chat Completions reads these
    "stream_options is a list": (
        lambda p: sse_chat(p, messages=[], stream_options=[True]),
        {},
        400,
        "stream_options is a JSON array, not object",
    ),
    "include_usage is a string": (
        lambda p: sse_chat(p, messages=[], stream_options={"include_usage": "yes"}),
        {},
        400,
        "stream_options.include_usage is a JSON string, not boolean",
    ),
    "a tool call is a string": (
        lambda p: sse_chat(p, messages=[{"role": "assistant", "tool_calls": ["read_file"]}]),
        {},
        400,
        "messages[0].tool_calls[0] is a JSON string, not a tool call",
    ),
}
ANTHROPIC_HOSTILE = {  # only the Messages API reads these
    "no anthropic-version": (
        lambda p: sse_chat(p, messages=[]),
        {"anthropic_version": None},
        400,
        "anthropic-version: header is required",
    ),
    "an anthropic-version that is not a date": (
        lambda p: sse_chat(p, messages=[]),
        {"anthropic_version": "latest"},
        400,
        'anthropic-version: "latest" is not a valid version',
    ),
    "system holds a number": (
        lambda p: sse_chat(p, messages=[], system=[5]),
        {},
        400,
        "system[0] is a JSON number, not a content block",
    ),
    "a tool_result's is_error is a string": (
        lambda p: sse_chat(
            p,
            messages=[
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": "no"}],
                }
            ],
        ),
        {},
        400,
        "is_error is a JSON string, not boolean",
    ),
    "a thinking block's signature is a number": (
        lambda p: sse_chat(
            p,
            messages=[{"role": "assistant", "content": [{"type": "thinking", "signature": 7}]}],
        ),
        {},
        400,
        "signature is a JSON number, not string",
    ),
}
CASES = [
    (provider, name, table[name])
    for provider in sorted(SSE_ROUTES)
    for table in (SSE_HOSTILE, {"openai": OPENAI_HOSTILE, "anthropic": ANTHROPIC_HOSTILE}[provider])
    for name in sorted(table)
]
COUNT_TOKENS = {  # Anthropic's count_tokens: the same guards, its own shape
    "body is a list": (b"[1]", 400, "a JSON array, not an object"),
    "no messages": (b'{"model": "labkit-replay:recording"}', 400, "messages: Field required"),
    "messages entry is a number": (
        b'{"model": "labkit-replay:recording", "messages": [1]}',
        400,
        "messages[0] is a JSON number",
    ),
    "a lone surrogate as the model": (
        f'{{"model": "{SURROGATE}", "messages": []}}'.encode(),
        400,
        "model is not Unicode text",
    ),
    "a model it does not serve": (b'{"model": "other", "messages": []}', 404, "model: other"),
}


def sse_post(provider, route, body: bytes, headers: dict) -> bytes:
    sent = {**SSE_HEADERS[provider], **headers}
    return post(route, body, **{name: value for name, value in sent.items() if value is not None})


@pytest.fixture(scope="module")
def sse_servers():
    with (
        serve_recording(
            load_recording(PROJECT_DIR / "recordings" / "repair_openai.json"), request_timeout=0.5
        ) as openai,
        serve_recording(
            load_recording(PROJECT_DIR / "recordings" / "repair_anthropic.json"),
            request_timeout=0.5,
        ) as anthropic,
    ):
        yield {"openai": openai, "anthropic": anthropic}


def still_serving(provider, server) -> bool:
    models = "GET /v1/models HTTP/1.1\r\nHost: x\r\nanthropic-version: 2023-06-01\r\n\r\n"
    return exchange(server.url, models.encode())[0] == 200


@pytest.mark.parametrize(
    "provider, name, case", CASES, ids=[f"{provider}-{name}" for provider, name, _ in CASES]
)
def test_a_hostile_request_to_an_sse_api_gets_that_apis_4xx_error_and_the_server_goes_on(
    provider, name, case, sse_servers, safety_tally
):
    safety_tally["hostile HTTP requests"] += 1
    server = sse_servers[provider]
    body, headers, status, words = case
    got_status, answer, head = exchange(
        server.url, sse_post(provider, SSE_ROUTES[provider], body(provider), headers)
    )
    assert got_status == status, answer
    error = answer["error"]
    assert words in error["message"] and {"openai": "param", "anthropic": "type"}[provider] in error
    request_id = {"openai": b"x-request-id: req_", "anthropic": b"request-id: req_"}[provider]
    assert request_id in head.lower()
    assert server.errors == []
    assert still_serving(provider, server)


@pytest.mark.parametrize("name", sorted(COUNT_TOKENS))
def test_a_hostile_count_tokens_request_gets_a_4xx_and_the_server_goes_on(
    name, sse_servers, safety_tally
):
    safety_tally["hostile HTTP requests"] += 1
    server = sse_servers["anthropic"]
    body, status, words = COUNT_TOKENS[name]
    got_status, answer, _ = exchange(
        server.url, sse_post("anthropic", "/v1/messages/count_tokens", body, {})
    )
    assert got_status == status and words in answer["error"]["message"], answer
    assert server.errors == [] and still_serving("anthropic", server)


@pytest.mark.parametrize("route", ["/api/chat", "/api/show"])
@pytest.mark.parametrize("where", ["model", "role"])
def test_a_lone_surrogate_anywhere_in_an_ollama_request_is_a_400(
    route, where, server, safety_tally
):
    safety_tally["hostile HTTP requests"] += 1
    text = (
        f'{{"model": "{SURROGATE}"}}'
        if where == "model"
        else f'{{"model": "{DEFAULT_MODEL}", "messages": [{{"role": "{SURROGATE}"}}]}}'
    )
    status, body, _ = exchange(server.url, post(route, text.encode()))
    assert status == 400 and "is not Unicode text" in body["error"], body
    assert server.errors == []


GETS = {  # a GET to every route of both APIs, bent: (path, status, words of the error)
    "a model name holding CR LF": ("/v1/models/x%0d%0aX-Injected:%201", 404, "x%0d%0aX-Injected"),
    "a model name of 60 kB": ("/v1/models/" + "m" * 60_000, 404, "m" * 100),
    "a path of 70 kB": ("/v1/models/" + "m" * 70_000, 414, "labkit replay server"),
    "an unknown route": ("/v1/../../etc/passwd", 404, "no GET /v1/../../etc/passwd"),
}


@pytest.mark.parametrize("name", sorted(GETS))
@pytest.mark.parametrize("provider", sorted(SSE_ROUTES))
def test_a_bent_get_to_an_sse_api_gets_a_4xx_and_the_server_goes_on(
    provider, name, sse_servers, safety_tally
):
    safety_tally["hostile HTTP requests"] += 1
    server = sse_servers[provider]
    path, status, words = GETS[name]
    request = f"GET {path} HTTP/1.1\r\nHost: x\r\nanthropic-version: 2023-06-01\r\n\r\n"
    got_status, answer, head = exchange(server.url, request.encode())
    message = answer["error"]["message"] if isinstance(answer["error"], dict) else answer["error"]
    assert got_status == status and words in message, answer
    assert b"x-injected" not in head.lower()
    assert server.errors == [] and still_serving(provider, server)


# --- slow clients, and many at once ---------------------------------------------------


def trickle(url, data: bytes, every: float) -> tuple[int, dict, float]:
    """Send ``data`` a byte every ``every`` seconds until the server answers; return the
    answer's status, body and how long it took."""
    host, port = url.removeprefix("http://").split(":")
    start = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=BOUND) as connection:
        try:
            for byte in data:
                connection.sendall(bytes([byte]))
                if select.select([connection], [], [], every)[0]:
                    break  # the server answered (or hung up) before the request was whole
        except OSError:
            pass  # the server stopped reading and closed: its answer is waiting
        status, body, _ = parse(read_to_the_end(connection))
    return status, body, time.monotonic() - start


SLOW = {  # what a slow client sends, a byte at a time: (bytes, seconds between bytes)
    "headers trickled": (b"GET /api/version HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200, 0.05),
    "a request line that never ends": (b"GET /" + b"a" * 400, 0.02),
    "nothing at all": (b"", 0.0),
    "a body trickled": (post("/api/chat", chat(messages=[])), 0.05),
}


@pytest.mark.parametrize("name", sorted(SLOW))
def test_a_slow_client_gets_408_within_the_deadline_never_a_dropped_connection(
    name, server, safety_tally
):
    safety_tally["slow and crowding clients"] += 1
    data, every = SLOW[name]
    status, body, took = trickle(server.url, data, every)
    assert status == 408 and "did not arrive within 0.5 s" in body["error"], body
    assert took < 0.5 + 1.5, f"answered after {took:.2f} s"
    assert server.errors == []


@pytest.mark.parametrize("provider", sorted(SSE_ROUTES))
def test_trickled_headers_get_each_apis_408(provider, sse_servers, safety_tally):
    safety_tally["slow and crowding clients"] += 1
    status, body, took = trickle(
        sse_servers[provider].url, b"GET /v1/models HTTP/1.1\r\n" * 9, 0.05
    )
    assert status == 408 and "did not arrive within 0.5 s" in body["error"]["message"], body
    assert took < 2.0


def test_a_classroom_of_connections_opened_back_to_back_is_served_quickly(server, safety_tally):
    """100 connections opened at once, before any is read: the listen backlog holds them
    all (socketserver's default of 5 left the rest to SYN retries: 15 s)."""
    safety_tally["slow and crowding clients"] += 1
    host, port = server.url.removeprefix("http://").split(":")
    start = time.monotonic()
    connections = [socket.create_connection((host, int(port)), timeout=BOUND) for _ in range(100)]
    try:
        for connection in connections:
            connection.sendall(b"GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n")
        statuses = [parse(read_to_the_end(connection))[0] for connection in connections]
    finally:
        for connection in connections:
            connection.close()
    took = time.monotonic() - start
    assert statuses == [200] * 100 and took < 5.0, f"{took:.2f} s"


# --- the same guards in front of the Responses API and Gemini's ---------------------------

GEMINI_STREAM = "/v1beta/models/labkit-replay:recording:streamGenerateContent?alt=sse"
NEW_ROUTES = {"openai-responses": "/v1/responses", "gemini": GEMINI_STREAM}
NEW_LISTS = {"openai-responses": "/v1/models", "gemini": "/v1beta/models"}


def new_chat(provider, **fields) -> bytes:
    required = {"model": "labkit-replay:recording"} if provider == "openai-responses" else {}
    return json.dumps({**required, **fields}).encode()


NEW_HOSTILE = {  # name: (provider or None for both, body, headers, route or None, status, words)
    "JSON recursion bomb": (None, lambda p: b"[" * 200_000, {}, None, 400, "nests deeper"),
    "body is a list": (None, lambda p: b"[1, 2]", {}, None, 400, "a JSON array, not an object"),
    "body is NaN": (None, lambda p: b'{"model": NaN}', {}, None, 400, "not JSON"),
    "1 GiB Content-Length": (
        None, lambda p: b"", {"Content_Length": str(2**30)}, None, 413, "accepts at most"
    ),
    "chunked body": (
        None, lambda p: b"0\r\n\r\n", {"Transfer_Encoding": "chunked"}, None, 411, "not chunked"
    ),
    "input entry is a number": (
        "openai-responses", lambda p: new_chat(p, input=[1]), {}, None, 400,
        "input[0] is a JSON number, not an input item",
    ),
    "input is a number": (
        "openai-responses", lambda p: new_chat(p, input=5), {}, None, 400,
        "the request.input is a JSON number, not string or array",
    ),
    "no input": ("openai-responses", lambda p: new_chat(p), {}, None, 400, "'input'"),
    "a function_call whose arguments are an object": (
        "openai-responses",
        lambda p: new_chat(p, input=[{"type": "function_call", "arguments": {}}]),
        {}, None, 400, "input[0].arguments is a JSON object, not string",
    ),
    "previous_response_id": (
        "openai-responses", lambda p: new_chat(p, input="hi", previous_response_id="resp_1"),
        {}, None, 400, "previous_response_id is not supported",
    ),
    "Responses tools holds a number": (
        "openai-responses", lambda p: new_chat(p, input=[], tools=[1]), {}, None, 400,
        "tools[0] is a JSON number, not a tool object",
    ),
    "contents entry is a number": (
        "gemini", lambda p: new_chat(p, contents=[1]), {}, None, 400,
        "contents[0] is a JSON number, not a content",
    ),
    "a part is a string": (
        "gemini", lambda p: new_chat(p, contents=[{"role": "user", "parts": ["hi"]}]), {}, None,
        400, "contents[0].parts[0] is a JSON string, not a part",
    ),
    "role 'system' in contents": (
        "gemini", lambda p: new_chat(p, contents=[{"role": "system", "parts": []}]), {}, None,
        400, "Please use a valid role: user, model.",
    ),
    "no contents": ("gemini", lambda p: new_chat(p), {}, None, 400, "contents is not specified"),
    "declarations hold a number": (
        "gemini", lambda p: new_chat(p, contents=[], tools=[{"functionDeclarations": [1]}]),
        {}, None, 400, "not a function declaration",
    ),
    "a stream without alt=sse": (
        "gemini", lambda p: new_chat(p, contents=[]), {},
        GEMINI_STREAM.removesuffix("?alt=sse"), 400, "add ?alt=sse",
    ),
    "a method it does not serve": (
        "gemini", lambda p: new_chat(p, contents=[]), {},
        "/v1beta/models/labkit-replay:recording:countTokens", 404, "no POST",
    ),
    "a model name that climbs out": (
        "gemini", lambda p: new_chat(p, contents=[]), {},
        "/v1beta/models/..%2F..%2Fetc:generateContent", 404, "is not found for API version v1beta",
    ),
}  # fmt: skip
NEW_CASES = [
    (provider, name)
    for name, (only, *_) in sorted(NEW_HOSTILE.items())
    for provider in sorted(NEW_ROUTES)
    if only in (None, provider)
]


@pytest.fixture(scope="module")
def new_servers():
    recordings = PROJECT_DIR / "recordings"
    with (
        serve_recording(
            load_recording(recordings / "repair_responses.json"), request_timeout=0.5
        ) as responses,
        serve_recording(
            load_recording(recordings / "repair_gemini.json"), request_timeout=0.5
        ) as gemini,
    ):
        yield {"openai-responses": responses, "gemini": gemini}


@pytest.mark.parametrize("provider, name", NEW_CASES)
def test_a_hostile_request_to_the_responses_or_gemini_api_gets_its_4xx_and_the_server_goes_on(
    provider, name, new_servers, safety_tally
):
    safety_tally["hostile HTTP requests"] += 1
    server = new_servers[provider]
    _, body, headers, route, status, words = NEW_HOSTILE[name]
    got_status, answer, _ = exchange(
        server.url, post(route or NEW_ROUTES[provider], body(provider), **headers)
    )
    assert got_status == status, answer
    error = answer["error"]
    assert words in error["message"], error
    assert {"openai-responses": "param", "gemini": "status"}[provider] in error
    assert server.errors == []
    listed = f"GET {NEW_LISTS[provider]} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    assert exchange(server.url, listed)[0] == 200
