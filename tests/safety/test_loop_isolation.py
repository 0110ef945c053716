"""What the loop hands out cannot steer what it does: malformed tool calls and edited copies.

A tool call whose ``arguments`` is not a JSON object is malformed model data (Ollama
always sends an object), so nothing from that turn runs. ``chat`` and event consumers
receive the conversation, the tool schemas and the arguments; editing any of them must
change neither what the loop dispatches nor what it sends next. Each case counts as one
hostile model turn or one hostile consumer in the safety summary.
"""

import json

import pytest
from conftest import FakeTools, ListChat, call, chunk, final_text_turn, tool_turn

from labkit import RepoTools, agent_events, sample_copy
from labkit.harness.tools import SCHEMAS

NOT_OBJECTS = {
    "a JSON string": '{"path": "path_rules.py"}',
    "a cut JSON string": '{"x": 1',
    "a list": ["path_rules.py"],
    "null": None,
    "a number": 7,
    "true": True,
}


@pytest.mark.parametrize("arguments", NOT_OBJECTS.values(), ids=NOT_OBJECTS)
def test_a_tool_call_whose_arguments_are_not_an_object_runs_nothing(arguments, safety_tally):
    safety_tally["hostile model turns"] += 1
    tools = FakeTools()
    good = call("echo", path="x")
    odd = {"function": {"name": "echo", "arguments": arguments}}
    chat = ListChat([chunk(tool_calls=[good]), chunk(tool_calls=[odd]), chunk(done=True)])
    events = list(agent_events(chat, tools, "task"))
    stop = events[-1]
    assert stop["type"] == "stopped" and stop["reason"] == "malformed_model_turn"
    assert "arguments" in stop["detail"] and "not a JSON object" in stop["detail"]
    assert tools.calls == [] and stop["tool_calls"] == 0  # not even the well-formed call


def test_a_chat_that_edits_its_request_and_schemas_changes_nothing_later(safety_tally):
    safety_tally["hostile consumers"] += 1
    pristine = json.dumps(SCHEMAS)
    seen = []

    def vandal(messages, schemas):
        seen.append(json.dumps(list(messages)))
        turn = len(seen)
        for target in (messages, schemas):  # everything it can reach, it tries to change
            try:
                target.clear()
            except TypeError:
                pass
        for schema in schemas:
            try:
                schema["function"]["name"] = "hijacked"
            except TypeError:
                pass
        if turn == 1:
            return iter(tool_turn(call("read_file", path="path_rules.py")))
        return iter(final_text_turn("done"))

    with sample_copy() as root:
        events = list(agent_events(vandal, RepoTools(root), "task"))
        again = list(
            agent_events(
                ListChat(tool_turn(call("read_file", path="path_rules.py")), final_text_turn("ok")),
                RepoTools(root),
                "task",
            )
        )
    assert json.dumps(SCHEMAS) == pristine, "a chat changed the module's tool schemas"
    assert (
        events[-1]["reason"] == "assistant_finished" and again[-1]["reason"] == "assistant_finished"
    )
    assert "content" in next(e for e in events if e["type"] == "tool_result")["result"]
    second = json.loads(seen[1])
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]


def test_a_consumer_that_edits_events_redirects_nothing(safety_tally):
    safety_tally["hostile consumers"] += 1
    tools = FakeTools()
    chat = ListChat(tool_turn(call("echo", path="safe")), final_text_turn("ok"))
    for event in agent_events(chat, tools, "task"):
        for value in (event.get("arguments"), event.get("messages"), event.get("tools")):
            for edit in (
                lambda v: v.update(path="../../etc/passwd"),
                lambda v: v.clear(),
                lambda v: v.append({"role": "user", "content": "obey"}),
            ):
                try:
                    edit(value)
                except (TypeError, AttributeError):
                    pass  # refused: just as good as ignored
    assert tools.calls == [("echo", {"path": "safe"})]
    assert [m["role"] for m in chat.requests[1]] == ["system", "user", "assistant", "tool"]
    assert chat.requests[1][2]["tool_calls"][0]["function"]["arguments"] == {"path": "safe"}
