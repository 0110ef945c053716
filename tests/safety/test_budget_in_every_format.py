"""The context budget holds in every wire format the harness speaks.

Issue 29, item 8: under AnthropicModel the budget did nothing (``measure`` counted a list
of content blocks as a handful of characters, ``compact`` never saw a ``tool_result``
block), so four 8,000-character results were sent whole under ``Budget(12000)``. Here the
loop runs a scripted model in each format; every request it sends is measured and read
by this file's own reader of each format's results, not by the code under test.
"""

from __future__ import annotations

import json

import pytest
from conftest import call
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labkit import PlannedTurn, ScriptedChat, agent_events
from labkit.harness.budget import COMPACTED, Budget
from labkit.harness.conversation import measure, order_problems
from labkit.harness.formats import FORMATS


class BigTools:
    """One tool, ``dump``, whose result is ``size`` characters of text."""

    schemas = [{"type": "function", "function": {"name": "dump", "parameters": {}}}]

    def invoke(self, name, arguments):
        return {"data": "x" * arguments.get("size", 8000)}


def results_of(message: dict, wire_format: str) -> list[str]:
    """The tool results a message carries, read here independently of labkit."""
    if wire_format == "anthropic":
        content = message.get("content")
        if message["role"] != "user" or not isinstance(content, list):
            return []
        return [block["content"] for block in content if block.get("type") == "tool_result"]
    if wire_format == "openai-responses":  # an item of its own, with no role
        return [message["output"]] if message.get("type") == "function_call_output" else []
    if wire_format == "gemini":  # parts of a user content, the result an object under output
        answers = [
            p["functionResponse"] for p in message.get("parts", []) if "functionResponse" in p
        ]
        shown = [a["response"]["output"] for a in answers]
        return [v if isinstance(v, str) else json.dumps(v) for v in shown]
    return [message["content"]] if message["role"] == "tool" else []


#: The role of the model's own messages, in each format.
REPLY_ROLES = {"gemini": "model"}


def requests(wire_format: str, sizes_per_turn: list[list[int]], budget: Budget) -> list:
    turns = [
        PlannedTurn(tool_calls=[call("dump", size=size) for size in sizes])
        for sizes in sizes_per_turn
    ]
    chat = ScriptedChat([*turns, PlannedTurn(content="done")], wire_format)
    events = list(agent_events(chat, BigTools(), "task", budget=budget, max_turns=len(turns) + 1))
    assert events[-1]["reason"] == "assistant_finished", events[-1]
    return [event["messages"] for event in events if event["type"] == "model_start"]


@pytest.mark.parametrize("wire_format", sorted(FORMATS))
def test_four_large_results_stay_within_the_budget_in_every_format(wire_format, safety_tally):
    sent = requests(wire_format, [[8000]] * 4, Budget(12000, wire_format=wire_format))
    sizes = [measure(messages, wire_format)["total"] for messages in sent]
    assert max(sizes) <= 12000, sizes
    assert sum(len(json.dumps(messages)) for messages in sent[-1:]) < 14000  # what is sent
    notes = [
        sum(bool(COMPACTED.match(text)) for m in messages for text in results_of(m, wire_format))
        for messages in sent
    ]
    assert notes == [0, 0, 1, 2, 3]
    assert all(order_problems(messages, wire_format) == [] for messages in sent)
    safety_tally["budgeted runs in each wire format"] += 1


def test_a_budget_of_another_format_than_the_chats_is_refused():
    chat = ScriptedChat([PlannedTurn(content="done")], "anthropic")
    with pytest.raises(ValueError, match="give it wire_format='anthropic'"):
        agent_events(chat, BigTools(), "task", budget=Budget(12000))


@settings(
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    wire_format=st.sampled_from(sorted(FORMATS)),
    sizes=st.lists(st.lists(st.integers(0, 3000), min_size=1, max_size=3), min_size=1, max_size=5),
    max_chars=st.integers(1500, 12000),
    keep_last=st.integers(0, 2),
)
def test_whatever_the_sizes_the_budget_keeps_every_request_sound(
    wire_format, sizes, max_chars, keep_last
):
    """Every request: no order problem; a result of the last ``keep_last`` turns is whole;
    and over budget only when every older result is already as short as a note makes it."""
    from conftest import SAFETY_TALLY

    budget = Budget(max_chars, keep_last=keep_last, wire_format=wire_format)
    for messages in requests(wire_format, sizes, budget):
        assert order_problems(messages, wire_format) == []
        reply = REPLY_ROLES.get(wire_format, "assistant")
        turns = [i for i, m in enumerate(messages) if m.get("role") == reply]
        protected = turns[-keep_last] if keep_last and len(turns) >= keep_last else len(messages)
        if keep_last > len(turns):
            protected = 0
        for message in messages[protected:]:
            assert not any(COMPACTED.match(text) for text in results_of(message, wire_format))
        if measure(messages, wire_format)["total"] > max_chars:
            for message in messages[:protected]:
                for text in results_of(message, wire_format):
                    assert COMPACTED.match(text) or len(text) < 200, text[:80]
        SAFETY_TALLY["budgeted requests checked in each wire format"] += 1
