"""Hostile OpenAI and Anthropic streams through the loop: nothing escapes, nothing half-runs.

Each case is one reply in a wire format whose tool calls stream in fragments: a valid
reply (text, one or two calls whose arguments arrive in pieces, the end), then bent in one
to three places, each place an event or a field replaced by a value of another kind
(unhashable ones included: a list as a block's index), removed, duplicated (two calls with
one id), or moved. Whatever arrives, the loop must end with exactly one ``stopped`` event
(never an exception), and a tool may run only from a reply that ended cleanly, with
unique call ids, each call exactly once. The cases are the same on every run.
"""

from __future__ import annotations

import copy
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_invariants import RecordingTools

from labkit import STOP_REASONS, agent_events

EXAMPLES = 300
ODD = [None, 7, "x", True, [], {}, [0], {"a": 1}, -1, 2**40]


def openai_reply(calls: list) -> list:
    """A valid streamed reply: text, each call's id and name, its arguments in two pieces."""
    chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}}]}]
    for index, (call_id, name) in enumerate(calls):
        start = {"index": index, "id": call_id, "function": {"name": name, "arguments": ""}}
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [start]}}]})
        for piece in ('{"a": ', "1}"):
            entry = {"index": index, "function": {"arguments": piece}}
            chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]})
    finish = "tool_calls" if calls else "stop"
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return chunks


def anthropic_reply(calls: list) -> list:
    """A valid streamed reply: a text block, a tool_use block per call with input pieces."""
    events = [
        {"type": "message_start", "message": {"id": "m"}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": 0},
    ]
    for index, (call_id, name) in enumerate(calls, start=1):
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        for piece in ('{"a": ', "1}"):
            delta = {"type": "input_json_delta", "partial_json": piece}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    reason = "tool_use" if calls else "end_turn"
    events += [
        {"type": "message_delta", "delta": {"stop_reason": reason}},
        {"type": "message_stop"},
    ]
    return events


REPLIES = {"openai": openai_reply, "anthropic": anthropic_reply}


def bent(stream: list, draw) -> list:
    """``stream`` with one thing changed: a value somewhere in it, an event removed,
    duplicated or moved, or a ping put anywhere."""
    stream = copy.deepcopy(stream)
    where = draw(st.integers(0, len(stream) - 1))
    how = draw(st.sampled_from(["value", "remove", "repeat", "move", "ping"]))
    if how == "remove":
        del stream[where]
    elif how == "repeat":
        stream.insert(where, copy.deepcopy(stream[where]))
    elif how == "move":
        stream.insert(draw(st.integers(0, len(stream) - 1)), stream.pop(where))
    elif how == "ping":
        stream.insert(where, {"type": "ping"})
    else:  # replace one value, at any depth, with a value of another kind
        holder, key = None, None
        value = stream[where]
        for _ in range(draw(st.integers(1, 4))):
            if isinstance(value, dict) and value:
                holder, key = value, draw(st.sampled_from(sorted(value)))
            elif isinstance(value, list) and value:
                holder, key = value, draw(st.integers(0, len(value) - 1))
            else:
                break
            value = holder[key]
        replacement = draw(st.sampled_from(ODD))
        if holder is None:
            stream[where] = replacement
        else:
            holder[key] = replacement
    return stream


class OneReply:
    def __init__(self, wire_format: str, stream: list):
        self.wire_format, self.stream, self.requests = wire_format, stream, 0

    def __call__(self, messages, tool_schemas):
        self.requests += 1
        if self.requests > 1:
            raise RuntimeError("one reply only")
        return iter(copy.deepcopy(self.stream))


def ends_cleanly(wire_format: str, stream: list) -> bool:
    """Whether the reply, as sent, could end cleanly: a clean end reason arrived, read from
    the events themselves (the assembler may still find it malformed)."""
    for event in stream:
        if wire_format == "openai" and isinstance(event, dict):
            for choice in event.get("choices") or []:
                if isinstance(choice, dict) and choice.get("finish_reason") in (
                    "tool_calls",
                    "stop",
                ):
                    return True
        if wire_format == "anthropic" and isinstance(event, dict):
            delta = event.get("delta")
            if event.get("type") == "message_delta" and isinstance(delta, dict):
                if delta.get("stop_reason") in ("tool_use", "end_turn"):
                    return True
    return False


def call_ids(message: dict) -> list:
    """The ids of the calls an assistant message holds, in either format."""
    if isinstance(message.get("content"), list):  # Anthropic's content blocks
        return [block["id"] for block in message["content"] if block["type"] == "tool_use"]
    return [call["id"] for call in message.get("tool_calls") or []]


@st.composite
def cases(draw):
    wire_format = draw(st.sampled_from(sorted(REPLIES)))
    ids = draw(st.sampled_from([[], ["c1"], ["c1", "c2"], ["c1", "c1"]]))
    stream = REPLIES[wire_format]([(call_id, "echo") for call_id in ids])
    for _ in range(draw(st.integers(0, 3))):
        stream = bent(stream, draw)
    return wire_format, stream


def test_hostile_fragment_streams_end_in_one_stop_and_never_half_run(safety_tally):
    stops = Counter()

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(cases())
    def check(case):
        wire_format, stream = case
        tools = RecordingTools()
        events = list(agent_events(OneReply(wire_format, stream), tools, "task", max_turns=1))
        assert [e["type"] for e in events].count("stopped") == 1 and events[-1]["type"] == "stopped"
        stop = events[-1]
        assert stop["reason"] in STOP_REASONS
        if tools.log:
            assert ends_cleanly(wire_format, stream), (stream, tools.log)
            asked = call_ids(
                next(m for m in reversed(stop["messages"]) if m["role"] == "assistant")
            )
            assert len(asked) == len(set(asked)) == len(tools.log), (asked, tools.log)
        ran = [event for event in events if event["type"] == "tool_start"]
        assert len(ran) == len(tools.log)
        stops[stop["reason"]] += 1
        safety_tally["hostile OpenAI/Anthropic streams (fragments bent 0-3 times)"] += 1

    check()
    for reason, count in sorted(stops.items()):
        safety_tally[f"hostile fragment streams that stopped with {reason}"] += count
    assert {"malformed_model_turn", "incomplete_model_turn", "max_turns"} <= set(stops)


def test_a_turn_whose_call_ids_repeat_runs_nothing(safety_tally):
    """Two calls sharing an id: their results could not be told apart (Anthropic's API would
    refuse the next request after both ran), so the turn is malformed before any runs."""
    for wire_format, reply in REPLIES.items():
        safety_tally["turns whose call ids repeat: none of their calls ran"] += 1
        tools = RecordingTools()
        chat = OneReply(wire_format, reply([("same", "echo"), ("same", "echo")]))
        stop = list(agent_events(chat, tools, "task", max_turns=1))[-1]
        assert stop["reason"] == "malformed_model_turn", (wire_format, stop)
        assert "'same' of an earlier" in stop["detail"] and tools.log == []


def test_pings_and_unknown_events_anywhere_change_nothing(safety_tally):
    """Anthropic: a ping may come anywhere and new event types must be tolerated, before
    message_start and after message_stop included: the run is the same as without them."""
    reply = anthropic_reply([("c1", "echo"), ("c2", "echo")])
    for extra in ({"type": "ping"}, {"type": "content_block_future", "index": 0}):
        for place in range(len(reply) + 1):
            tools = RecordingTools()
            chat = OneReply("anthropic", reply[:place] + [extra] + reply[place:])
            stop = list(agent_events(chat, tools, "task", max_turns=1))[-1]
            assert stop["reason"] == "max_turns" and len(tools.log) == 2, (place, stop)
            safety_tally["Anthropic streams with a ping or an unknown event at each place"] += 1
