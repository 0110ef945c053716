"""Hostile HTTP requests to the replay server: each gets a 4xx JSON answer, in bounded time.

Requests are written byte by byte on a raw socket (no client library tidies them up).
Every socket has a timeout, so a server that never answers fails the test instead of
hanging it. After each request the server must still answer, and must have kept no
handler error: no thread died.
"""

import json
import socket

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


def sse_chat(provider, **fields) -> bytes:
    required = {"model": "labkit-replay:recording"}
    if provider == "anthropic":
        required["max_tokens"] = 10
    return json.dumps({**required, **fields}).encode()


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
}


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


@pytest.mark.parametrize("name", sorted(SSE_HOSTILE))
@pytest.mark.parametrize("provider", sorted(SSE_ROUTES))
def test_a_hostile_request_to_an_sse_api_gets_that_apis_4xx_error_and_the_server_goes_on(
    provider, name, sse_servers, safety_tally
):
    safety_tally["hostile HTTP requests"] += 1
    server = sse_servers[provider]
    body, headers, status, words = SSE_HOSTILE[name]
    got_status, answer, _ = exchange(
        server.url, post(SSE_ROUTES[provider], body(provider), **headers)
    )
    assert got_status == status, answer
    error = answer["error"]
    assert words in error["message"] and {"openai": "param", "anthropic": "type"}[provider] in error
    assert server.errors == []
    assert exchange(server.url, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")[0] == 200


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
