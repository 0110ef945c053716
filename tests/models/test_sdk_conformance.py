"""The official ``ollama`` Python SDK, through every call the course and its README make,
against the replay server: each answer has the shape and the values real Ollama gives.

The calls: ``chat`` streamed (as ``OllamaModel`` sends it) and not streamed (the SDK's
default), with tools and thinking, from the sync and the async client; ``list``;
``show``; ``GET /api/version``; ``HEAD /`` (the ``ollama`` CLI's heartbeat); load and
unload; a retried request after a refusal; and ``python -m labkit record`` against
``python -m labkit serve``'s server, as the README shows.
"""

import asyncio

import httpx
import ollama
import pytest
from conftest import PROJECT_DIR

from labkit import load_recording, serve_recording
from labkit.cli import main
from labkit.harness.formats.ollama import assemble_turn
from labkit.harness.tools import SCHEMAS
from labkit.settings import DEFAULT_MODEL

REPAIR_PATH = PROJECT_DIR / "recordings" / "repair.json"
REPAIR = load_recording(REPAIR_PATH)


def recorded_chunks(number):
    return [entry["chunk"] for entry in REPAIR["turns"][number - 1]["chunks"]]


def request(number):
    return REPAIR["turns"][number - 1]["request"]["messages"]


def test_chat_without_stream_returns_the_whole_recorded_turn():
    expected = assemble_turn(recorded_chunks(1)).message
    final = recorded_chunks(1)[-1]
    with serve_recording(REPAIR) as server:
        reply = ollama.Client(host=server.url).chat(
            model=DEFAULT_MODEL, messages=request(1), tools=SCHEMAS
        )
        raw = httpx.post(
            f"{server.url}/api/chat",
            json={
                "model": DEFAULT_MODEL,
                "messages": request(1),
                "tools": SCHEMAS,
                "stream": False,
            },
        )
    assert reply.done is True and reply.done_reason == "stop"
    assert reply.message.thinking == expected["thinking"]
    assert [(c.function.name, c.function.arguments) for c in reply.message.tool_calls] == [
        ("read_file", {"path": "path_rules.py"})
    ]
    assert (reply.eval_count, reply.total_duration) == (
        final["eval_count"],
        final["total_duration"],
    )
    # on the wire: one JSON object, Ollama's field order, the call's id and index kept
    assert raw.headers["content-type"] == "application/json; charset=utf-8"
    assert list(raw.json()) == list(final)
    assert raw.json()["message"]["tool_calls"] == expected["tool_calls"]
    assert expected["tool_calls"][0]["id"].startswith("call_")


def test_chat_streamed_as_the_course_sends_it_yields_every_recorded_chunk():
    with serve_recording(REPAIR) as server:
        parts = list(
            ollama.Client(host=server.url).chat(
                DEFAULT_MODEL,
                request(1),
                tools=SCHEMAS,
                stream=True,
                think=True,
                keep_alive=0,
                options={"temperature": 0, "seed": 7, "num_ctx": 8192, "num_predict": 2048},
            )
        )
    assert len(parts) == len(recorded_chunks(1)) and parts[-1].done is True
    assert (
        "".join(p.message.thinking or "" for p in parts)
        == assemble_turn(recorded_chunks(1)).message["thinking"]
    )


def test_the_async_client_streams_and_answers_whole_too():
    async def both(url):
        client = ollama.AsyncClient(host=url)
        whole = await client.chat(DEFAULT_MODEL, request(1), tools=SCHEMAS)
        streamed = [
            part
            async for part in await client.chat(
                DEFAULT_MODEL, request(1), tools=SCHEMAS, stream=True
            )
        ]
        return whole, streamed

    with serve_recording(REPAIR) as server:
        whole, streamed = asyncio.run(both(server.url))
    assert whole.message.tool_calls[0].function.name == "read_file"
    assert len(streamed) == len(recorded_chunks(1))


def test_list_show_version_and_the_heartbeat():
    with serve_recording(REPAIR) as server:
        client = ollama.Client(host=server.url)
        names = [m.model for m in client.list().models]
        shown = client.show(DEFAULT_MODEL)
        version = client._client.get("/api/version").json()
        heartbeat = httpx.head(server.url)
        with pytest.raises(ollama.ResponseError) as missing:
            client.show("qwen3:4b")
    assert DEFAULT_MODEL in names and shown.capabilities == ["completion", "tools", "thinking"]
    assert version["version"].startswith("labkit-replay") and "labkit_replay" in version
    assert heartbeat.status_code == 200
    assert (missing.value.status_code, missing.value.error) == (404, "model 'qwen3:4b' not found")


def test_a_retried_request_gets_its_own_turn_through_the_sdk():
    with serve_recording(REPAIR) as server:
        client = ollama.Client(host=server.url)
        client.chat(DEFAULT_MODEL, request(1), tools=SCHEMAS)
        for _ in range(2):  # the same wrong request twice: neither uses up turn 2
            with pytest.raises(ollama.ResponseError, match="turn 2: the request does not match"):
                client.chat(
                    DEFAULT_MODEL, request(1) + [{"role": "user", "content": "?"}], tools=SCHEMAS
                )
        retried = client.chat(DEFAULT_MODEL, request(2), tools=SCHEMAS)
    assert retried.message.tool_calls[0].function.arguments == {"path": "tests/test_path_rules.py"}


def test_the_sdk_sends_no_tool_call_ids_and_the_server_accepts_that():
    """The pinned SDK's models have no ``id``, ``function.index`` or ``tool_call_id``: it
    drops them from the messages it sends. The server compares only what came."""
    assert "id" not in ollama.Message.ToolCall.model_fields
    assert "index" not in ollama.Message.ToolCall.Function.model_fields
    assert "tool_call_id" not in ollama.Message.model_fields
    with serve_recording(REPAIR) as server:
        client = ollama.Client(host=server.url)
        client.chat(DEFAULT_MODEL, request(1), tools=SCHEMAS)
        client.chat(DEFAULT_MODEL, request(2), tools=SCHEMAS)
        sent = server.chat_requests[-1]["messages"][2]["tool_calls"][0]
    assert "id" in request(2)[2]["tool_calls"][0] and sent == {
        "function": {"name": "read_file", "arguments": {"path": "path_rules.py"}}
    }


def test_record_against_serve_as_the_readme_shows(tmp_path, capsys):
    output = tmp_path / "mine.json"
    with serve_recording(REPAIR_PATH) as server:
        assert main(["record", "--host", server.url, "--output", str(output)]) == 0
    saved = load_recording(output)
    assert saved["provenance"]["source"] == "scripted" and "replayed_from" in saved["provenance"]
    lines = [[entry["line"] for entry in turn["chunks"]] for turn in saved["turns"]]
    assert lines == [[entry["line"] for entry in turn["chunks"]] for turn in REPAIR["turns"]]
