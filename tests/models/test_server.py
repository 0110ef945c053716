"""The replay server: Ollama's endpoints, honesty about itself, threads, faults and shutdown."""

import asyncio
import socket
import threading

import httpx
import ollama
import pytest
from conftest import PROJECT_DIR, wait_until

from labkit import OllamaModel, RecordingError, load_recording, serve_recording
from labkit.harness.tools import SCHEMAS
from labkit.models.ollama_server import is_done
from labkit.models.replay_faults import NO_FAULTS, Faults, reply_plan
from labkit.recording.attempt import CapturingChat
from labkit.settings import DEFAULT_MODEL

REPAIR = PROJECT_DIR / "recordings" / "repair.json"


def server_threads():
    return [t for t in threading.enumerate() if t is not threading.main_thread()]


def refuses_connections(url):
    host, port = url.removeprefix("http://").split(":")
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) != 0


def test_it_says_it_is_a_replay_server_and_which_recording_it_serves():
    recorded = load_recording(REPAIR)
    with serve_recording(REPAIR) as server:
        version = httpx.get(f"{server.url}/api/version").json()
        client = ollama.Client(host=server.url)
        listed = client.list().models
        shown = client.show(DEFAULT_MODEL)
        root = httpx.get(server.url).text
        tags = httpx.get(f"{server.url}/api/tags").json()["models"]
    assert version["version"].startswith("labkit-replay")
    assert version["labkit_replay"]["recording"] == "repair.json"
    assert version["labkit_replay"]["provenance"] == recorded["provenance"]
    assert [m.model for m in listed] == ["labkit-replay:repair", DEFAULT_MODEL]
    assert all(m.details.family == "labkit-replay" and len(m.digest) == 64 for m in listed)
    # Ollama's ListModelResponse fields, all present (the SDK does not model every one)
    assert all(
        set(entry) == {"name", "model", "modified_at", "size", "digest", "details"}
        and {"parent_model", "families"} <= set(entry["details"])
        for entry in tags
    )
    assert shown.details.family == "labkit-replay" and "recording" in shown.modelfile
    assert set(shown.capabilities) == {"completion", "tools", "thinking"}
    assert "not Ollama" in root


def test_unknown_paths_get_json_errors_and_unknown_models_ollamas_404():
    with serve_recording(REPAIR) as server:
        missing = httpx.post(f"{server.url}/api/generate", json={})
        garbage = httpx.post(f"{server.url}/api/chat", content=b"{not json")
        show = httpx.post(f"{server.url}/api/show", json={"model": "qwen3"})
        chat = httpx.post(f"{server.url}/api/chat", json={"model": "qwen3", "messages": []})
        nameless = httpx.post(f"{server.url}/api/chat", json={"messages": []})
        put = httpx.put(f"{server.url}/api/chat", json={})
        ps = httpx.get(f"{server.url}/api/ps")
    assert missing.status_code == 404 and "no POST /api/generate" in missing.json()["error"]
    assert garbage.status_code == 400 and "not JSON" in garbage.json()["error"]
    assert (show.status_code, show.json()) == (404, {"error": "model 'qwen3:latest' not found"})
    assert (chat.status_code, chat.json()) == (404, {"error": "model 'qwen3' not found"})
    assert (nameless.status_code, nameless.json()) == (400, {"error": "model is required"})
    assert put.status_code == 405 and "error" in put.json()
    assert (ps.status_code, ps.json()) == (200, {"models": []})  # nothing is ever loaded


def test_head_answers_where_clients_probe():
    with serve_recording(REPAIR) as server:
        answers = {
            path: httpx.head(f"{server.url}{path}") for path in ("/", "/api/version", "/api/tags")
        }
        unknown = httpx.head(f"{server.url}/api/nothing")
    assert {path: r.status_code for path, r in answers.items()} == dict.fromkeys(answers, 200)
    assert all(r.content == b"" and int(r.headers["content-length"]) > 0 for r in answers.values())
    assert unknown.status_code == 404


def test_load_and_unload_with_no_messages_answer_as_ollama_and_use_no_turn():
    recorded = load_recording(REPAIR)
    with serve_recording(REPAIR) as server:
        client = ollama.Client(host=server.url)
        loaded = client.chat(DEFAULT_MODEL, messages=[])
        unloaded = client.chat(DEFAULT_MODEL, messages=[], keep_alive=0)
        first = client.chat(
            DEFAULT_MODEL,
            messages=recorded["turns"][0]["request"]["messages"],
            tools=SCHEMAS,
            think=True,
        )
    assert (loaded.done, loaded.done_reason, loaded.message.content) == (True, "load", "")
    assert (unloaded.done, unloaded.done_reason) == (True, "unload")
    assert first.message.tool_calls[0].function.name == "read_file"  # still turn 1


def test_a_refused_request_uses_up_no_turn_so_a_retry_gets_its_own():
    recorded = load_recording(REPAIR)
    requests = [turn["request"]["messages"] for turn in recorded["turns"]]
    with serve_recording(REPAIR) as server:
        client = ollama.Client(host=server.url)
        client.chat(DEFAULT_MODEL, messages=requests[0], tools=SCHEMAS)
        with pytest.raises(ollama.ResponseError) as refused:
            client.chat(
                DEFAULT_MODEL,
                messages=requests[1][:-1]
                + [{"role": "tool", "tool_name": "read_file", "content": "{}"}],
                tools=SCHEMAS,
            )
        retried = client.chat(DEFAULT_MODEL, messages=requests[1], tools=SCHEMAS)
    assert refused.value.status_code == 400
    assert "turn 2: the request does not match the recording" in refused.value.error
    assert "message 3 (tool) differs at content, character 1" in refused.value.error
    assert retried.message.tool_calls[0].function.arguments == {"path": "tests/test_path_rules.py"}


def test_an_error_before_the_first_chunk_is_an_http_status_with_a_json_body():
    with serve_recording(REPAIR, error_after=0, error="runner crashed") as server:
        reply = httpx.post(
            f"{server.url}/api/chat",
            json={
                "model": DEFAULT_MODEL,
                "messages": load_recording(REPAIR)["turns"][0]["request"]["messages"],
                "tools": SCHEMAS,
            },
        )
    assert (reply.status_code, reply.json()) == (500, {"error": "runner crashed"})
    assert reply.headers["content-type"].startswith("application/json")


def test_a_model_without_tools_or_thinking_is_refused_as_ollama_refuses_it():
    messages = load_recording(REPAIR)["turns"][0]["request"]["messages"]
    with serve_recording(REPAIR, capabilities=("completion",)) as server:
        client = ollama.Client(host=server.url)
        with pytest.raises(ollama.ResponseError, match="does not support thinking"):
            client.chat(DEFAULT_MODEL, messages=messages, think=True)
        with pytest.raises(ollama.ResponseError, match="does not support tools"):
            client.chat(DEFAULT_MODEL, messages=messages, tools=SCHEMAS)
        assert client.show(DEFAULT_MODEL).capabilities == ["completion"]


def test_a_recording_in_memory_is_checked_like_a_file():
    broken = {**load_recording(REPAIR), "turns": "not a list"}
    with pytest.raises(RecordingError, match="^recording: 'turns' is missing or not a list"):
        serve_recording(broken)


def test_a_new_conversation_starts_the_recording_over():
    recorded = load_recording(REPAIR)
    first = recorded["turns"][0]["request"]["messages"]
    with serve_recording(recorded) as server, OllamaModel(host=server.url) as model:
        runs = [list(model(first, SCHEMAS)) for _ in range(2)]
    assert runs[0] == runs[1] == [entry["chunk"] for entry in recorded["turns"][0]["chunks"]]


def test_it_answers_while_another_reply_is_stalled_and_shuts_down_cleanly():
    recorded = load_recording(REPAIR)
    first = recorded["turns"][0]["request"]["messages"]
    before = server_threads()
    received = []
    server = serve_recording(recorded, stall_after=2)
    model = OllamaModel(host=server.url)

    def stalled_reader():
        try:
            for item in model(first, SCHEMAS):
                received.append(item)
        except Exception as exc:  # the server hangs up on close
            received.append(exc)

    reader = threading.Thread(target=stalled_reader)
    reader.start()
    assert wait_until(lambda: len(received) == 2)
    answers = [httpx.get(f"{server.url}/api/tags", timeout=5).status_code for _ in range(3)]
    assert answers == [200, 200, 200]
    assert wait_until(lambda: server.open_connections == 1)  # only the stalled reply is open
    server.close()  # must not wait for the stalled reply
    reader.join(timeout=10)
    assert not reader.is_alive()
    assert "broke after 2 chunks" in str(received[-1])
    assert server_threads() == before, "a server thread was left behind"
    assert refuses_connections(server.url), "the port was left open"
    server.close()  # closing twice is harmless


def test_pacing_spreads_the_chunks_over_the_recorded_time():
    recorded = load_recording(REPAIR)
    turn = recorded["turns"][0]
    with serve_recording(recorded, speed=10.0) as server, OllamaModel(host=server.url) as model:
        capture = CapturingChat(model)
        list(capture(turn["request"]["messages"], SCHEMAS))
    arrived = [entry["at"] for entry in capture.turns[0]["chunks"]]
    recorded_at = [entry["at"] for entry in turn["chunks"]]
    # the server sends chunk k no earlier than its recorded offset / speed
    assert all(got >= want / 10.0 for got, want in zip(arrived, recorded_at))
    assert arrived == sorted(arrived)


def test_it_serves_from_inside_a_running_event_loop_as_in_a_notebook():
    async def notebook_cell():
        with serve_recording(REPAIR) as server, OllamaModel(host=server.url) as model:
            return server.chat_requests, list(
                model(load_recording(REPAIR)["turns"][0]["request"]["messages"], SCHEMAS)
            )

    requests, chunks = asyncio.run(notebook_cell())
    assert len(requests) == 1 and chunks[-1]["done"] is True


def test_faults_are_checked_when_the_server_starts():
    before = server_threads()
    with pytest.raises(TypeError, match="unknown fault drop_dne; the faults are"):
        serve_recording(REPAIR, drop_dne=True)
    with pytest.raises(ValueError, match="choose one of"):
        serve_recording(REPAIR, close_after=1, stall_after=2)
    with pytest.raises(ValueError, match="not an HTTP error status"):
        serve_recording(REPAIR, status=200)
    assert server_threads() == before


def test_reply_plan_cuts_the_recorded_turn_as_each_fault_says():
    turn = load_recording(REPAIR)["turns"][0]
    every = list(range(len(turn["chunks"])))
    assert turn["chunks"][-1]["chunk"]["done"] is True
    assert reply_plan(turn, NO_FAULTS, is_done) == (every, "end", None)
    assert reply_plan(turn, Faults(drop_done=True), is_done) == (every[:-1], "end", None)
    assert reply_plan(turn, Faults(close_after=3), is_done) == ([0, 1, 2], "close", None)
    assert reply_plan(turn, Faults(stall_after=1), is_done) == ([0], "stall", None)
    assert reply_plan(turn, Faults(error_after=0, error="x"), is_done) == ([], "error", "x")
    assert reply_plan(dict(turn, error="crashed"), NO_FAULTS, is_done) == (
        every,
        "error",
        "crashed",
    )


def test_a_mismatch_through_the_sdk_stops_as_a_replay_mismatch_not_a_model_failure():
    import copy

    from labkit import RepoTools, agent_events, sample_copy

    edited = copy.deepcopy(load_recording(REPAIR))
    edited["turns"][1]["request"]["messages"][3]["content"] = "{}"  # not what read_file returns
    with (
        serve_recording(edited) as server,
        OllamaModel(host=server.url) as model,
        sample_copy() as root,
    ):
        stop = list(agent_events(model, RepoTools(root), edited["task"]))[-1]
    assert (stop["reason"], stop["turns"]) == ("model_error", 2)
    assert stop["detail"].startswith("replay mismatch: the replay server refused the request")
    assert "message 3 (tool) differs at content, character 1" in stop["error"]
