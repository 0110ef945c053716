"""Model faults through the real SDK: each ends in a named stop, with a clear message.

The replay server serves ``repair.json`` and breaks its second reply; ``OllamaModel``
(the official SDK over real HTTP) reads it, with a short timeout so that silence is
quick to detect. Turn 1's ``read_file`` runs; nothing from the broken turn 2 does. The
run invariants are checked from what the SDK really handed over and what the real
tools really did.
"""

import pytest
from conftest import PROJECT_DIR
from run_invariants import RecordingChat, RecordingTools, assert_run_invariants, run_to_the_end

from labkit import MAX_TURNS, OllamaModel, RepoTools, load_recording, sample_copy, serve_recording
from labkit.settings import DEFAULT_MODEL

REPAIR = load_recording(PROJECT_DIR / "recordings" / "repair.json")

FAULTS = [  # (faults on turn 2, stop reason, words the learner reads)
    ({"drop_done": True}, "incomplete_model_turn", "the stream ended without a 'done' chunk"),
    ({"close_after": 3}, "model_error", "broke after 3 chunks, before the reply was complete"),
    (
        {"error_after": 2, "error": "CUDA error: out of memory"},
        "model_error",
        "reported an error during the reply: CUDA error: out of memory",
    ),
    ({"garbage_after": 4}, "model_error", "sent something that is not Ollama chat data"),
    (
        {"status": 500, "error": "llama runner process has terminated"},
        "model_error",
        "answered HTTP 500: llama runner process has terminated",
    ),
    (
        {"status": 404, "error": f'model "{DEFAULT_MODEL}" not found, try pulling it first'},
        "model_error",
        f"download it with `ollama pull {DEFAULT_MODEL}`",
    ),
    (
        {"status": 400, "error": f'"{DEFAULT_MODEL}" does not support thinking'},
        "model_error",
        f"'{DEFAULT_MODEL}' does not support thinking, and this course asks for it",
    ),
    ({"delay": 30}, "model_error", "did not answer within 0.5 s"),
    ({"stall_after": 3}, "model_error", "went quiet for 0.5 s after 3 chunks"),
]


def run_through_the_sdk(url, max_turns=MAX_TURNS):
    with sample_copy() as root:
        chat, tools = (
            RecordingChat(OllamaModel(host=url, timeout=0.5)),
            RecordingTools(RepoTools(root)),
        )
        events = run_to_the_end(chat, tools, task=REPAIR["task"], max_turns=max_turns)
    assert_run_invariants(events, chat, tools, max_turns=max_turns)
    return events, tools


@pytest.mark.parametrize("faults, reason, message", FAULTS, ids=[str(f[0]) for f in FAULTS])
def test_a_broken_reply_stops_with_its_reason_and_runs_nothing_from_it(
    faults, reason, message, safety_tally
):
    safety_tally["model faults through the SDK"] += 1
    with serve_recording(REPAIR, turn=2, **faults) as server:
        events, tools = run_through_the_sdk(server.url)
    stop = events[-1]
    assert (stop["reason"], stop["turns"], stop["tool_calls"]) == (reason, 2, 1)
    assert [name for name, _, _ in tools.log] == ["read_file"]  # turn 1's, nothing from turn 2
    assert message in stop["detail"] and "Traceback" not in stop["detail"]


def test_a_refused_connection_stops_before_any_tool(closed_port_url, safety_tally):
    safety_tally["model faults through the SDK"] += 1
    events, tools = run_through_the_sdk(closed_port_url)
    stop = events[-1]
    assert (stop["reason"], stop["turns"], tools.log) == ("model_error", 1, [])
    assert f"Ollama is not running at {closed_port_url}" in stop["error"]
    assert "ollama serve" in stop["error"] and "Replay mode needs no server" in stop["error"]
