"""Subagents (lesson 10): delegate runs the same loop with a fresh conversation, its own
budget and read-only tools; whatever way the child stops, the parent reads one result and
goes on; the depth limit and the parent's gate hold inside the child."""

import pytest
from conftest import ListChat, call, final_text_turn, tool_turn
from lesson10_tools import Notes

from labkit.harness import agent_events
from labkit.harness.gate import Gate, Policy
from labkit.harness.parallel import ThreadRunner
from labkit.harness.prompt import SUBAGENT_RULES
from labkit.harness.subagents import Subagents, subagent_result
from labkit.harness.toolset import Joined, Only

TASK = "Which note says hello?"


def parent_run(child_chat, parent_turns, **settings):
    """The parent asks ``delegate`` as its turns say; each child talks to ``child_chat``."""
    agents = Subagents(ListChat(), Notes, chat_for=lambda task: child_chat, **settings)
    parent = ListChat(*parent_turns)
    events = list(agent_events(parent, Joined(Notes(), agents), "the parent's task"))
    return parent, events


def delegating(task=TASK, **arguments):
    return tool_turn(call("delegate", task=task, **arguments))


def test_a_child_runs_a_fresh_conversation_and_the_parent_reads_only_its_answer():
    child = ListChat(tool_turn(call("look", text="hello")), final_text_turn("Note HELLO says it."))
    parent, events = parent_run(child, [delegating(), final_text_turn("done.")])
    assert child.requests[0] == [
        {"role": "system", "content": SUBAGENT_RULES},
        {"role": "user", "content": TASK},
    ]
    kinds = [e["type"] for e in events if e["type"] != "text_delta"]
    assert kinds[1:4] == ["tool_start", "subagent", "tool_result"]
    nested = next(e for e in events if e["type"] == "subagent")
    assert (nested["task"], nested["depth"], nested["name"]) == (TASK, 1, "delegate")
    assert nested["events"][-1]["reason"] == "assistant_finished"
    result = next(e for e in events if e["type"] == "tool_result")["result"]
    assert result == {
        "answer": "Note HELLO says it.",
        "stop_reason": "assistant_finished",
        "turns": 2,
        "tool_calls": 1,
    }
    sent = parent.requests[1]
    assert len(sent) == 4  # system, task, the delegate call, its one result
    assert "HELLO" not in str(sent[:3]) and '"note"' not in str(sent)


def test_a_child_that_spends_its_budget_comes_back_as_a_result_with_its_reason():
    child = ListChat(*[tool_turn(call("look", text=str(n))) for n in range(3)])
    _, events = parent_run(child, [delegating(), final_text_turn("done.")], max_turns=2)
    result = next(e for e in events if e["type"] == "tool_result")["result"]
    assert result["stop_reason"] == "max_turns"
    assert result["turns"] == 2 and result["tool_calls"] == 2
    assert "budget of 2 model requests" in result["detail"]
    assert events[-1]["reason"] == "assistant_finished"


def test_a_child_whose_model_is_down_is_a_result_the_parent_reads_not_an_exception():
    def down(messages, tool_schemas):
        raise ConnectionError("connection refused")

    _, events = parent_run(down, [delegating(), final_text_turn("done.")])
    result = next(e for e in events if e["type"] == "tool_result")["result"]
    assert result["stop_reason"] == "model_error"
    assert "connection refused" in result["detail"]
    assert result["answer"] == ""
    assert events[-1]["reason"] == "assistant_finished"


def test_delegate_beyond_the_depth_limit_is_a_tool_error_and_no_child_runs():
    child = ListChat()
    _, events = parent_run(child, [delegating(tools=["delegate"]), final_text_turn("done.")])
    result = next(e for e in events if e["type"] == "tool_result")["result"]
    assert "cannot delegate: the depth limit is 1" in result["error"]
    assert child.requests == []


def test_a_deeper_limit_lets_a_child_delegate_once_more():
    grandchild_answer = final_text_turn("found it")
    child = ListChat(
        tool_turn(call("delegate", task="look deeper", tools=["look"])),
        grandchild_answer,
        final_text_turn("my child found it"),
    )
    _, events = parent_run(
        child, [delegating(tools=["look", "delegate"]), final_text_turn("done.")], max_depth=2
    )
    outer = next(e for e in events if e["type"] == "subagent")
    inner = next(e for e in outer["events"] if e["type"] == "subagent")
    assert (outer["depth"], inner["depth"]) == (1, 2)
    assert next(e for e in events if e["type"] == "tool_result")["result"]["answer"] == (
        "my child found it"
    )


@pytest.mark.parametrize(
    "arguments, words",
    [
        ({"tools": ["write"]}, "not a tool a subagent may have"),
        ({"tools": []}, "tools is empty"),
        ({"tools": "look"}, "list of tool names"),
        ({"task": "  "}, "1 to 2000 characters"),
        ({"task": "x" * 2001}, "1 to 2000 characters"),
    ],
)
def test_a_delegate_call_that_will_not_do_is_a_tool_error(arguments, words):
    task = arguments.pop("task", TASK)
    _, events = parent_run(ListChat(), [delegating(task, **arguments), final_text_turn("done.")])
    assert words in next(e for e in events if e["type"] == "tool_result")["result"]["error"]


def test_the_parents_gate_holds_inside_the_child():
    child = ListChat(tool_turn(call("look", text="secret")), final_text_turn("it was refused"))
    gate = Gate(Policy(tools={"delegate": "allow", "look": "deny"}, default="deny"))
    _, events = parent_run(child, [delegating(), final_text_turn("done.")], gate=gate)
    nested = next(e for e in events if e["type"] == "subagent")["events"]
    refused = next(e for e in nested if e["type"] == "tool_result")["result"]
    assert "error" in refused and "note" not in refused


def test_several_children_run_at_once_and_their_results_keep_the_order_asked():
    answers = {"first": "one", "second": "two"}
    agents = Subagents(
        ListChat(), Notes, chat_for=lambda task: ListChat(final_text_turn(answers[task]))
    )
    parent = ListChat(
        tool_turn(call("delegate", task="first"), call("delegate", task="second")),
        final_text_turn("done."),
    )
    events = list(
        agent_events(parent, Joined(Notes(), agents), "t", runner=ThreadRunner(workers=2))
    )
    assert [e["result"]["answer"] for e in events if e["type"] == "tool_result"] == ["one", "two"]
    assert [e["task"] for e in events if e["type"] == "subagent"] == ["first", "second"]


def test_subagent_result_names_the_stop_and_takes_the_last_complete_reply():
    finished = [
        {"type": "text_delta", "turn": 1, "text": "looking"},
        {"type": "text_delta", "turn": 2, "text": "the answer"},
        {
            "type": "stopped",
            "reason": "assistant_finished",
            "turns": 2,
            "tool_calls": 1,
            "detail": "done",
        },
    ]
    assert subagent_result(finished) == {
        "answer": "the answer",
        "stop_reason": "assistant_finished",
        "turns": 2,
        "tool_calls": 1,
    }
    broken = finished[:2] + [
        {
            "type": "stopped",
            "reason": "model_error",
            "turns": 2,
            "tool_calls": 1,
            "detail": "the model call failed: reset",
            "error": "reset",
        }
    ]
    assert subagent_result(broken) == {
        "answer": "looking",
        "stop_reason": "model_error",
        "turns": 2,
        "tool_calls": 1,
        "detail": "the model call failed: reset",
    }


def test_subagents_need_a_read_only_tool_and_a_depth_below_the_limit():
    class Writes(Notes):
        def is_read_only(self, name):
            return False

    with pytest.raises(ValueError, match="no read-only tool"):
        Subagents(ListChat(), Writes)
    with pytest.raises(ValueError, match="depth"):
        Subagents(ListChat(), Notes, depth=1, max_depth=1)


def test_joined_sends_each_call_to_its_owner_and_only_offers_a_subset():
    from labkit.harness import call_tool
    from labkit.harness.todo import Plan

    notes, plan = Notes(), Plan()
    joined = Joined(notes, plan)
    assert [s["function"]["name"] for s in joined.schemas] == ["look", "write", "todo"]
    assert call_tool(joined, "look", {"text": "a"}) == {"note": "A"}
    assert call_tool(joined, "todo", {"items": []})["plan"] == []
    assert (
        "unknown tool 'x'; the tools are: look, write, todo" in call_tool(joined, "x", {})["error"]
    )
    assert [joined.is_read_only(n) for n in ("look", "write", "todo", "x")] == [
        True,
        False,
        False,
        False,
    ]
    only = Only(Notes(), ["look"])
    assert [s["function"]["name"] for s in only.schemas] == ["look"]
    assert "unknown tool 'write'" in call_tool(only, "write", {"text": "a"})["error"]
    with pytest.raises(ValueError, match="two of the joined toolsets offer a tool named 'look'"):
        Joined(Notes(), only)
    with pytest.raises(ValueError, match="no tool named 'edit'"):
        Only(Notes(), ["edit"])
