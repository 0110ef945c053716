"""A recording replayed through the loop: the verdict on whether it matched, and each chunk
copied (frozen) once on its way from the recording to the loop, never twice."""

import copy

import pytest
from conftest import PROJECT_DIR

from labkit import ReplayModel, load_recording
from labkit.harness.frozen import FrozenDict
from labkit.recording.attempt import CapturingChat
from labkit.recording.replaying import difference, replay_attempt

REPAIR = PROJECT_DIR / "recordings" / "repair.json"
REQUEST = (
    [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
    [{"type": "function", "function": {"name": "read_file"}}],
)


def test_a_replay_of_the_repair_matches_and_keeps_the_recorded_chunks():
    recording = load_recording(REPAIR)
    replay = replay_attempt(recording)
    assert replay.difference is None
    assert replay.events[-1]["reason"] == "assistant_finished"
    kept = [[e["chunk"] for e in turn["chunks"]] for turn in replay.recording["turns"]]
    assert kept == [[e["chunk"] for e in turn["chunks"]] for turn in recording["turns"]]


def test_each_replayed_chunk_is_frozen_once_and_the_recorder_keeps_that_very_object():
    recording = load_recording(REPAIR)
    capture = CapturingChat(ReplayModel(recording, strict=False))
    handed = list(capture(*REQUEST))
    kept = [entry["chunk"] for entry in capture.turns[0]["chunks"]]
    original = [entry["chunk"] for entry in recording["turns"][0]["chunks"]]
    assert handed == original and all(type(chunk) is FrozenDict for chunk in handed)
    assert all(a is b for a, b in zip(handed, kept))  # the recorder made no second copy
    assert not any(a is b for a, b in zip(handed, original))  # the recording's stay its own
    with pytest.raises(TypeError):
        handed[0]["done"] = True  # and nothing can change them through the loop


def test_a_chunk_that_is_not_frozen_is_copied_for_the_recording():
    sent = {"message": {"role": "assistant", "content": "hi"}, "done": True}

    def chat(messages, tool_schemas):
        yield sent

    capture = CapturingChat(chat)
    handed = list(capture(*REQUEST))
    handed[0]["message"]["content"] = "changed later"
    assert capture.turns[0]["chunks"][0]["chunk"]["message"]["content"] == "hi"


def test_a_replay_under_another_budget_is_judged_only_on_refused_requests():
    recording = load_recording(REPAIR)
    replay = replay_attempt(recording, max_turns=1)
    assert replay.events[-1]["reason"] == "max_turns"
    assert replay.difference is None


def test_the_difference_names_the_first_event_or_the_final_tests_that_differ():
    recording = load_recording(REPAIR)
    replayed = copy.deepcopy(recording)
    assert difference(recording, replayed) is None
    replayed["events"][4]["name"] = "other_tool"
    assert difference(recording, replayed).startswith(
        "event 5 (tool_start of turn 2) differs from the recorded one at name, character 0: "
        'the recording has "read_file", the replay gave "other_tool". '
    )
    assert difference(recording, replayed, compare_outcome=False) is None
    replayed = copy.deepcopy(recording)
    replayed["checks"]["after"]["passed"] = 0
    assert difference(recording, replayed).startswith(
        "the final tests differ at passed: the recording has 4, the replay gave 0. "
    )


def test_a_request_the_replay_refused_is_the_difference_whatever_the_budget():
    recording = copy.deepcopy(load_recording(REPAIR))
    recording["turns"][1]["request"]["messages"][1]["content"] = "another task"
    replay = replay_attempt(recording, max_turns=3)
    assert replay.events[-1]["reason"] == "model_error"
    assert "turn 2: the request does not match the recording" in replay.difference
