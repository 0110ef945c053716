"""Lesson 10's family recordings: a parent and its subagents in one file, written by a
script, replayed strictly end to end, split by conversation for children run at once, and
refused before anything runs when a child's turns are missing."""

import copy
import json

import pytest
from conftest import PROJECT_DIR

from labkit import ReplayModel, load_recording
from labkit.harness.parallel import ThreadRunner
from labkit.lessons.ground_state import run_ground
from labkit.recording.family import (
    FAMILIES,
    compact_family_event,
    conversations,
    family_chats,
    family_problem,
    family_recording,
    opening_task,
)

RECORDINGS = PROJECT_DIR / "recordings"


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_committed_family_recordings_equal_what_the_script_produces(name):
    committed = json.loads((RECORDINGS / f"{name}.json").read_text())
    assert committed == family_recording(name), "run `make recordings` and commit the result"


def test_one_file_holds_the_parent_and_its_children_in_the_order_asked():
    recording = load_recording("ground_state.json")
    assert recording["provenance"]["source"] == "scripted"
    split = conversations(recording)
    assert [len(turns) for turns in split.values()] == [9, 3, 2]
    tasks = [turn["request"]["messages"][1]["content"] for turn in recording["turns"]]
    parent = recording["task"]
    # the parent's first three requests, then each child's whole run, then the parent again
    assert tasks[:3] == [parent] * 3 and tasks[8:] == [parent] * 6
    assert len(set(tasks[3:6])) == 1 and len(set(tasks[6:8])) == 1
    assert family_problem(recording) is None


def test_a_strict_replay_of_the_family_gives_the_recorded_events():
    recording = load_recording("ground_state.json")
    run = run_ground(ReplayModel(recording))
    assert [compact_family_event(e) for e in run.events] == recording["events"]
    assert run.checks_after.failed == 0 and run.checks_before.failed == 1


def test_children_run_at_once_each_replay_their_own_conversation():
    recording = load_recording("ground_state.json")
    parent, chat_for = family_chats(recording)
    run = run_ground(parent, chat_for=chat_for, runner=ThreadRunner())
    assert run.stop["reason"] == "assistant_finished"
    answers = [e["result"]["answer"] for e in run.events if e.get("name") == "delegate"
               and e["type"] == "tool_result"]  # fmt: skip
    assert answers[0].startswith("python_sources is in path_rules.py. Line 10")
    assert answers[1].startswith("test_backslash_names_are_accepted_and_normalised")


def test_a_family_missing_a_childs_turns_is_refused_before_anything_runs():
    recording = load_recording("ground_state.json")
    broken = copy.deepcopy(recording)
    broken["turns"] = [t for t in broken["turns"] if not opening_task(t).startswith("In tests/")]
    assert "made 2 requests but the recording holds 0" in family_problem(broken)
    with pytest.raises(ValueError, match="cannot be replayed as a family"):
        family_chats(broken)


def test_a_child_asked_a_task_the_recording_does_not_hold_is_a_model_error_it_reads():
    _, chat_for = family_chats(load_recording("ground_state.json"))
    with pytest.raises(ValueError, match="holds no subagent given the task 'other'"):
        chat_for("other")


def test_the_family_replays_over_http_as_live_mode_runs_it():
    from labkit import lesson_model, serve_recording

    with serve_recording(load_recording("ground_state.json")) as server:
        run = run_ground(lesson_model("live", host=server.url))
    assert run.stop["reason"] == "assistant_finished" and run.checks_after.failed == 0


def test_a_server_takes_a_childs_first_request_as_the_next_turn_and_the_parents_as_a_restart():
    from labkit.models.replay import RequestCursor

    turns = load_recording("ground_state.json")["turns"]
    cursor = RequestCursor(turns, restarts=True)
    for number, turn in enumerate(turns, start=1):  # a child's opening request included
        request = turn["request"]
        assert cursor.next_turn(request["messages"], request["tools"])[0] == number
    first = turns[0]["request"]
    assert cursor.next_turn(first["messages"], first["tools"])[0] == 1  # the run starts over
