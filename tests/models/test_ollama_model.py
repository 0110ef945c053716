"""OllamaModel through the real ollama SDK and real HTTP, against the replay server."""

import json

import pytest
from conftest import PROJECT_DIR, chunk, wait_until

from labkit import (
    MAX_TURNS,
    OllamaModel,
    RepoTools,
    agent_events,
    load_recording,
    run_attempt,
    sample_copy,
    serve_recording,
)
from labkit.recording import compact_event, replay_harness, stop_of
from labkit.recording.attempt import CapturingChat
from labkit.recording.scenarios import SCENARIOS
from labkit.settings import DEFAULT_MODEL

RECORDINGS = PROJECT_DIR / "recordings"


def recording(name):
    return load_recording(RECORDINGS / f"{name}.json")


def run_loop(model, task, max_turns=MAX_TURNS):
    with sample_copy() as root:
        return list(agent_events(model, RepoTools(root), task, max_turns=max_turns))


def wire_chunks(turns):
    return [[entry["chunk"] for entry in turn["chunks"]] for turn in turns]


#: Lesson 13's three runs are Ollama streams written by the same scripted model; the symbols
#: run stands for them here (each costs seconds of the suite). All three replay strictly in
#: tests/recording/test_recordings.py.
SAME_STREAMS = {"finding_grep", "finding_retrieval"}


@pytest.mark.parametrize(
    "name",
    sorted(n for n, s in SCENARIOS.items() if s.wire_format == "ollama" and n not in SAME_STREAMS),
)
def test_the_sdk_path_reproduces_each_recording_as_replay_does(name):
    recorded = recording(name)
    with serve_recording(recorded) as server, OllamaModel(host=server.url) as model:
        live, events = run_attempt(
            model,
            provenance=recorded["provenance"],
            task=recorded["task"],
            max_turns=recorded["max_turns"],
            **replay_harness(recorded),
        )
    assert [compact_event(e) for e in events] == recorded["events"]
    assert stop_of(live) == stop_of(recorded)
    assert live["checks"] == recorded["checks"]
    # what OllamaModel yields, parsed by the SDK and dumped again, is the chunk that was sent
    assert wire_chunks(live["turns"]) == wire_chunks(recorded["turns"])[: len(live["turns"])]


def test_requests_ask_for_a_streamed_thinking_reply_with_the_course_options():
    recorded = recording("repair")
    with serve_recording(recorded) as server, OllamaModel(host=server.url) as model:
        run_loop(model, recorded["task"], max_turns=2)
    first, second = server.chat_requests
    assert first["model"] == DEFAULT_MODEL
    assert (first["stream"], first["think"], first["keep_alive"]) == (True, True, 0)
    assert first["options"] == {"temperature": 0, "seed": 7, "num_ctx": 8192, "num_predict": 2048}
    assert [tool["function"]["name"] for tool in first["tools"]] == [
        "read_file",
        "replace_text",
        "run_tests",
    ]
    assert first["messages"] == recorded["turns"][0]["request"]["messages"]
    assistant, result = second["messages"][2:]
    assert assistant == {
        "role": "assistant",
        "thinking": recorded["turns"][1]["request"]["messages"][2]["thinking"],
        "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "path_rules.py"}}}],
    }
    assert result["role"] == "tool" and result["tool_name"] == "read_file"
    assert result["content"].startswith('{"path": "path_rules.py", "content": ')


def test_the_host_comes_from_the_argument_else_OLLAMA_HOST_else_the_default(monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert OllamaModel().host == "http://127.0.0.1:11434"
    assert OllamaModel().client._client.timeout.read == 120
    recorded = recording("bounded")
    with serve_recording(recorded) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        events = run_loop(OllamaModel(), recorded["task"], max_turns=1)
        assert OllamaModel(host="http://127.0.0.1:1").host == "http://127.0.0.1:1"
    assert events[-1]["reason"] == "max_turns" and len(server.chat_requests) == 1


def test_a_closed_port_stops_the_loop_with_advice(closed_port_url):
    events = run_loop(OllamaModel(host=closed_port_url), "task")
    stop = events[-1]
    assert (stop["reason"], stop["turns"], stop["tool_calls"]) == ("model_error", 1, 0)
    assert f"Ollama is not running at {closed_port_url}" in stop["error"]
    assert "`ollama serve`" in stop["error"] and "Replay mode needs no server" in stop["error"]


def test_a_bad_host_is_a_clear_error():
    with pytest.raises(
        ValueError, match="cannot use 'http://127.0.0.1:port' as the Ollama address"
    ):
        OllamaModel(host="http://127.0.0.1:port")


def test_a_short_delay_only_slows_the_reply():
    recorded = recording("bounded")
    with serve_recording(recorded, delay=0.2) as server:
        events = run_loop(OllamaModel(host=server.url), recorded["task"], max_turns=1)
    assert [compact_event(e) for e in events] == recorded["events"]


def test_removing_done_from_the_first_stream_stops_before_any_tool_runs():
    recorded = recording("repair")
    with serve_recording(recorded, drop_done=True) as server:
        events = run_loop(OllamaModel(host=server.url), recorded["task"])
    assert (events[-1]["reason"], events[-1]["tool_calls"]) == ("incomplete_model_turn", 0)


def test_a_recorded_stream_error_is_replayed_as_the_same_error():
    recorded = recording("bounded")
    turn = dict(
        recorded["turns"][0],
        chunks=recorded["turns"][0]["chunks"][:4],
        error="the model runner crashed",
    )
    with serve_recording(dict(recorded, turns=[turn])) as server:
        stop = run_loop(OllamaModel(host=server.url), recorded["task"])[-1]
    assert stop["reason"] == "model_error"
    assert "reported an error during the reply: the model runner crashed" in stop["error"]


def test_the_strict_server_names_the_first_difference_in_a_request():
    recorded = recording("repair")
    with serve_recording(recorded) as server:
        model = OllamaModel(host=server.url)

        def forgetful(messages, schemas):  # a broken harness: it loses tool messages
            return model([m for m in messages if m["role"] != "tool"], schemas)

        stop = run_loop(forgetful, recorded["task"])[-1]
    assert stop["reason"] == "model_error" and "answered HTTP 400" in stop["error"]
    assert (
        "turn 2: the request does not match the recording: the harness sent 3 messages, "
        "the recording has 4"
    ) in stop["error"]


def test_a_request_past_the_end_of_the_recording_says_so():
    recorded = recording("bounded")
    with serve_recording(recorded) as server:
        stop = run_loop(OllamaModel(host=server.url), recorded["task"], max_turns=3)[-1]
    assert stop["reason"] == "model_error" and stop["turns"] == 2
    assert "the recording has 1 turn, but this is request 2" in stop["error"]


def test_the_loop_closes_a_stream_it_abandons():
    """A chunk after ``done`` is malformed: the loop stops reading, and the connection ends
    long before the slowly paced rest of the reply (50 s of it) could have been sent."""
    chunks = [chunk("a"), chunk(done=True)] + [chunk("late")] * 1000
    turn = {
        "request": {"messages": []},
        "chunks": [{"at": 0.05 * i, "chunk": c} for i, c in enumerate(chunks)],
    }
    paced = {**recording("bounded"), "turns": [turn]}
    with (
        serve_recording(paced, strict=False, speed=1.0) as server,
        OllamaModel(host=server.url) as model,
    ):
        stop = run_loop(model, "task")[-1]
        assert stop["reason"] == "malformed_model_turn"
        assert wait_until(lambda: server.open_connections == 0, timeout=10)


def test_a_capture_keeps_each_line_exactly_as_the_server_sent_it():
    """Field order, a field the SDK does not model, Go's escapes and the call's id all
    survive: the line is copied off the wire, not written again from the SDK's objects."""
    line = (
        '{"done":false,"model":"x","created_at":"2026-12-01T09:00:00.5Z","message":{'
        '"role":"assistant","content":"a \\u003c b","tool_calls":[{"id":"call_abcd1234",'
        '"function":{"index":0,"name":"read_file","arguments":{"path":"path_rules.py"}}}]},'
        '"remote_host":"elsewhere"}'
    )
    final = (
        '{"model":"x","created_at":"2026-12-01T09:00:01Z",'
        '"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}'
    )
    turn = {
        "request": {"messages": []},
        "chunks": [{"at": 0.0, "chunk": json.loads(text), "line": text} for text in (line, final)],
    }
    with (
        serve_recording({**recording("bounded"), "turns": [turn]}, strict=False) as server,
        OllamaModel(host=server.url) as model,
    ):
        capture = CapturingChat(model)
        chunks = list(capture([{"role": "user", "content": "hi"}], []))
    assert [entry["line"] for entry in capture.turns[0]["chunks"]] == [line, final]
    assert chunks[0]["message"]["tool_calls"][0] == {
        "id": "call_abcd1234",
        "function": {"index": 0, "name": "read_file", "arguments": {"path": "path_rules.py"}},
    }
    assert chunks[0]["remote_host"] == "elsewhere" and chunks[0]["message"]["content"] == "a < b"


def test_the_loop_keeps_tool_call_ids_in_the_assistant_message():
    recorded = recording("repair")
    with serve_recording(recorded) as server, OllamaModel(host=server.url) as model:
        events = run_loop(model, recorded["task"], max_turns=2)
    second = [e for e in events if e["type"] == "model_start"][1]["messages"]
    assert second[2]["tool_calls"] == recorded["turns"][1]["request"]["messages"][2]["tool_calls"]
    assert second[2]["tool_calls"][0]["id"].startswith("call_")
    assert second[2]["tool_calls"][0]["function"]["index"] == 0
