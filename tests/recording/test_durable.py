"""A durable attempt: journaled as it runs, and picked up after a kill wherever the kill came
(while a reply streamed, between two calls of a turn, while a call ran, past a deadline),
giving the same requests and events as an attempt never stopped, with no call run twice."""

import json

import pytest

from labkit import (
    TASK_RECORDINGS,
    ReplayModel,
    TaskTools,
    load_recording,
    load_tasks,
    read_journal,
    resume_point,
    run_durable,
)
from labkit.harness.formats import OLLAMA
from labkit.harness.journal import INTERRUPTED
from labkit.recording.durable import AttemptTimeout, recording_from_journal

TASK = load_tasks()["path_rule"]
SCRIPTED = load_recording(TASK_RECORDINGS / "path_rule.json")


class Killed(BaseException):
    """Stands for SIGKILL: nothing of the run catches it, so it stops where it is."""


class DiesMidStream:
    """The scripted attempt's replies, until chunk ``chunk`` of reply ``turn``: there it dies."""

    def __init__(self, turn: int, chunk: int):
        self.replay, self.turn, self.chunk = ReplayModel(SCRIPTED), turn, chunk
        self.wire_format, self.requests = "ollama", 0

    def __call__(self, messages, schemas):
        self.requests += 1
        stream = self.replay(messages, schemas)
        return self._cut(stream) if self.requests == self.turn else stream

    def _cut(self, stream):
        for number, chunk in enumerate(stream, 1):
            if number == self.chunk:
                raise Killed
            yield chunk


@pytest.fixture
def calls(monkeypatch):
    """Every tool call that ran, across runs; ``calls.die_at = n`` kills the run as the n-th
    call runs, once it has taken effect and before its result is back."""
    ran = []
    real = TaskTools.invoke

    def invoke(self, name, arguments):
        result = real(self, name, arguments)
        ran.append((name, json.dumps(arguments)))
        if len(ran) == getattr(invoke, "die_at", None):
            raise Killed
        return result

    monkeypatch.setattr(TaskTools, "invoke", invoke)
    invoke.ran = ran
    return invoke


def replies(recording) -> list:
    """Each turn's request and chunks (their arrival times are this machine's)."""
    return [(t["request"], [e["chunk"] for e in t["chunks"]]) for t in recording["turns"]]


def resumed_run(folder):
    """Pick the attempt up with a fresh replay of the scripted attempt."""
    return run_durable(TASK, ReplayModel(SCRIPTED), folder, provenance=SCRIPTED["provenance"])


def test_a_fresh_attempt_gives_the_scripted_recording(tmp_path, calls):
    recording = run_durable(
        TASK, ReplayModel(SCRIPTED), tmp_path, provenance=SCRIPTED["provenance"]
    )
    assert replies(recording) == replies(SCRIPTED) and recording["events"] == SCRIPTED["events"]
    assert recording["checks"] == SCRIPTED["checks"] and "resumed" not in recording
    assert len(calls.ran) == 5
    assert load_recording(tmp_path / "recording.json") == recording  # kept beside the journal
    again = run_durable(TASK, ReplayModel(SCRIPTED), tmp_path, provenance={"source": "scripted"})
    assert again == recording and len(calls.ran) == 5  # a finished attempt runs nothing


def test_killed_while_a_reply_streams_it_goes_on_from_the_last_complete_turn(tmp_path, calls):
    with pytest.raises(Killed):
        run_durable(TASK, DiesMidStream(turn=3, chunk=4), tmp_path,
                    provenance=SCRIPTED["provenance"])  # fmt: skip
    entries = read_journal(tmp_path / "journal.jsonl")
    point = resume_point(entries, OLLAMA)
    assert (point.turns, point.tool_calls, point.discarded) == (2, 3, (3, 3))
    assert point.pending == [] and point.interrupted == []
    recording = resumed_run(tmp_path)
    assert replies(recording) == replies(SCRIPTED) and recording["events"] == SCRIPTED["events"]
    assert recording["resumed"] == [
        {"after_turn": 2, "journal_line": len(entries) + 1, "discarded": {"turn": 3, "chunks": 3},
         "interrupted": [], "pending": []}
    ]  # fmt: skip
    assert len(calls.ran) == 5 == len(set(calls.ran)) + 1  # read twice by the script, no more


def test_killed_between_two_calls_of_a_turn_the_second_runs_once(tmp_path, calls):
    def die_after_the_first_result(event):
        if event["type"] == "tool_result":
            raise Killed

    with pytest.raises(Killed):
        run_durable(TASK, ReplayModel(SCRIPTED), tmp_path, provenance=SCRIPTED["provenance"],
                    on_event=die_after_the_first_result)  # fmt: skip
    point = resume_point(read_journal(tmp_path / "journal.jsonl"), OLLAMA)
    assert [c.name for c in point.pending] == ["read_file"] and len(point.results) == 1
    recording = resumed_run(tmp_path)
    assert replies(recording) == replies(SCRIPTED) and recording["events"] == SCRIPTED["events"]
    assert recording["resumed"][0]["pending"] == ["read_file"]
    assert len(calls.ran) == 5


def test_killed_while_a_call_runs_it_is_never_run_again(tmp_path, calls):
    calls.die_at = 3  # turn 2's run_tests: it ran, its result was lost
    with pytest.raises(Killed):
        resumed_run(tmp_path)
    calls.die_at = None
    recording = resumed_run(tmp_path)
    interrupted = [e for e in recording["events"] if e["type"] == "tool_result" and e["turn"] == 2]
    assert interrupted == [{"type": "tool_result", "turn": 2, "name": "run_tests",
                            "result": {"error": INTERRUPTED}}]  # fmt: skip
    assert recording["resumed"][0]["interrupted"] == ["run_tests"]
    assert [name for name, _ in calls.ran] == ["read_file", "read_file", "run_tests"]  # once
    # the model reads the error now, and its recorded reply no longer fits: the replay says so
    assert recording["events"][-1]["reason"] == "model_error"
    assert "replay mismatch" in recording["events"][-1]["detail"]


def test_past_its_deadline_an_attempt_stops_and_goes_on_when_run_again(tmp_path, calls):
    with pytest.raises(AttemptTimeout, match="ran past its time"):
        run_durable(TASK, ReplayModel(SCRIPTED), tmp_path, provenance=SCRIPTED["provenance"],
                    deadline=0.0)  # fmt: skip
    assert not (tmp_path / "recording.json").exists()
    recording = resumed_run(tmp_path)
    assert recording["events"] == SCRIPTED["events"] and recording["resumed"][0]["after_turn"] == 0


def test_the_recording_is_built_only_from_a_finished_journal(tmp_path):
    with pytest.raises(Killed):
        run_durable(TASK, DiesMidStream(turn=1, chunk=2), tmp_path,
                    provenance=SCRIPTED["provenance"])  # fmt: skip
    with pytest.raises(ValueError, match="has no 'end'"):
        recording_from_journal(read_journal(tmp_path / "journal.jsonl"))
