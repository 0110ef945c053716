"""Exercise 14a's check, against what it must not use: its reference loop and labkit's loop
agree on every fixed and drawn case and on every Ollama recording; the answer's process holds
the pieces and no other labkit; the recordings it replays are the plain loop's."""

import builtins
import json
import random

import pytest
from labkit_answers.hidden import HIDDEN

from labkit import agent_events
from labkit.grading.checks.lesson14_streams import (
    drawn_script,
    failure_scripts,
    loop_recordings,
    recorded_script,
    reference_script,
)
from labkit.grading.checks.lesson14_your_loop import check_my_loop
from labkit.grading.feedback import Answer, CheckFailed
from labkit.models.replay import first_difference


class Played:
    """A script's model and tools for labkit's loop, in process: each request must be the
    script's next, and each call too."""

    def __init__(self, script):
        self.steps, self.wire_format = iter(script.steps), script.wire_format
        self.schemas = script.schemas

    def __call__(self, messages, schemas):
        step = next(self.steps)
        names = [schema["function"]["name"] for schema in schemas]
        assert first_difference(step["request"], json.loads(json.dumps(messages)), names) is None
        reply = step["reply"]
        if "refuse" in reply:
            raise getattr(builtins, reply["refuse"])(*reply["args"])
        return self._stream(reply)

    def _stream(self, reply):
        failure = reply.get("failure")
        for number, chunk in enumerate([*reply["chunks"], None]):
            if failure and number == failure["after"]:
                raise getattr(builtins, failure["raise"])(*failure["args"])
            if chunk is None:
                return
            yield json.loads(json.dumps(chunk))

    def invoke(self, name, arguments):
        step = next(self.steps)
        assert step["call"] == [name, arguments]
        outcome = step["outcome"]
        if "raise" in outcome:
            raise getattr(builtins, outcome["raise"])(*outcome["args"])
        return outcome["result"]


def labkit_agrees(script) -> None:
    played = Played(script)
    try:
        events = list(agent_events(played, played, script.task, max_turns=script.max_turns))
    except Exception as exc:
        assert type(exc).__name__ == script.raises
        return
    assert script.raises is None and next(played.steps, None) is None
    stop = events[-1]
    assert {k: stop[k] for k in ("reason", "turns", "tool_calls")} == {
        k: script.stop[k] for k in ("reason", "turns", "tool_calls")
    }
    if script.stop["messages"] is not None:
        got = json.loads(json.dumps(stop["messages"]))
        assert first_difference({"messages": script.stop["messages"]}, got, []) is None


def test_the_reference_and_labkits_loop_agree_on_every_fixed_and_drawn_case():
    for _, script, _ in failure_scripts() + HIDDEN["check_my_loop"]():
        labkit_agrees(script)
    draw = random.Random(14)
    for _ in range(400):
        labkit_agrees(drawn_script(draw))


def test_the_reference_gives_every_ollama_recording_of_the_plain_loop():
    """The recorded steps and the reference's, from the same replies and results, are one."""
    for name in loop_recordings():
        recorded = recorded_script(name)
        labkit_agrees(recorded)
        if recorded.wire_format != "ollama":
            continue
        replies = [step["reply"] for step in recorded.steps if "request" in step]
        outcomes = [step["outcome"] for step in recorded.steps if "call" in step]
        names = recorded.steps[0]["request"]["tools"]
        again = reference_script(
            replies, outcomes, max_turns=recorded.max_turns, task=recorded.task, names=names
        )
        assert again.steps == recorded.steps and again.stop == recorded.stop, name


def test_the_recordings_replayed_are_the_plain_loops_in_every_wire_format():
    names = loop_recordings()
    assert {"repair.json", "bounded.json", "false_claim.json", "stale_edit.json",
            "gemma3_270m_llamacpp.json"} <= set(names)  # fmt: skip
    formats = {recorded_script(name).wire_format for name in names}
    assert formats == {"ollama", "openai", "anthropic", "openai-responses", "gemini"}
    assert not {"permissions.json", "budget.json", "sandbox.json", "extension.json"} & set(names)


@pytest.mark.parametrize(
    "imported, words",
    [("labkit.harness.loop", "No module named 'labkit.harness.loop'"),
     ("labkit.grading", "No module named 'labkit.grading'"),
     ("labkit.recording", "No module named 'labkit.recording'")],
)  # fmt: skip
def test_the_answers_process_holds_the_pieces_and_no_other_labkit(imported, words, capsys):
    source = f"import {imported}\ndef my_loop(chat, tools, task, max_turns):\n    yield 1\n"
    with pytest.raises(CheckFailed):
        check_my_loop(Answer(source, "my_loop"))
    assert words in capsys.readouterr().out
