"""The replay server: Ollama's endpoints, honesty about itself, threads, faults and shutdown."""

import asyncio
import socket
import threading

import httpx
import ollama
import pytest
from conftest import wait_until

from labkit import OllamaModel, load_recording, serve_recording
from labkit.capture import CapturingChat
from labkit.sample import PROJECT_DIR
from labkit.server import Faults, reply_plan
from labkit.tools import SCHEMAS

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
        [listed] = client.list().models
        shown = client.show("gemma4:e2b")
        root = httpx.get(server.url).text
    assert version["version"].startswith("labkit-replay")
    assert version["labkit_replay"]["recording"] == "repair.json"
    assert version["labkit_replay"]["provenance"] == recorded["provenance"]
    assert listed.model == "labkit-replay:repair" and listed.details.family == "labkit-replay"
    assert "gemma" not in listed.model and len(listed.digest) == 64
    assert shown.details.family == "labkit-replay" and "recording" in shown.modelfile
    assert "not Ollama" in root


def test_unknown_paths_and_non_streaming_chat_get_json_errors():
    with serve_recording(REPAIR) as server:
        missing = httpx.post(f"{server.url}/api/generate", json={})
        whole = httpx.post(f"{server.url}/api/chat", json={"messages": [], "stream": False})
        garbage = httpx.post(f"{server.url}/api/chat", content=b"{not json")
    assert missing.status_code == 404 and "no POST /api/generate" in missing.json()["error"]
    assert whole.status_code == 400 and "only streams" in whole.json()["error"]
    assert garbage.status_code == 400 and "not JSON" in garbage.json()["error"]


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
            return server.chat_requests, list(model(load_recording(REPAIR)["turns"][0][
                "request"]["messages"], SCHEMAS))

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
    assert reply_plan(turn) == (every, "end", None)
    assert reply_plan(turn, Faults(drop_done=True)) == (every[:-1], "end", None)
    assert reply_plan(turn, Faults(close_after=3)) == ([0, 1, 2], "close", None)
    assert reply_plan(turn, Faults(stall_after=1)) == ([0], "stall", None)
    assert reply_plan(turn, Faults(error_after=0, error="x")) == ([], "error", "x")
    assert reply_plan(dict(turn, error="crashed")) == (every, "error", "crashed")
