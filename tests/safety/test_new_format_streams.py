"""Hostile Responses API and Gemini streams through the loop: nothing escapes, nothing
half-runs (the method, and the ways a reply is bent, are ``test_fragment_streams.py``'s).

Each case is one valid reply (text, one or two calls, the end), bent in up to three places.
The loop must end with exactly one ``stopped`` event, and a tool may run only from a reply
that ended cleanly (``response.completed``; ``finishReason: "STOP"``), each call once."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_invariants import RecordingTools
from test_fragment_streams import OneReply, bent

from labkit import STOP_REASONS, agent_events
from labkit.models.gemini_chunks import function_call_part, gemini_chunk
from labkit.models.responses_chunks import (
    arguments_events,
    call_item,
    item_event,
    message_item,
    response_object,
    text_events,
)

EXAMPLES = 200


def responses_reply(calls: list) -> list:
    events = [
        {"type": "response.created", "response": response_object("r")},
        item_event("added", 0, message_item("m")),
        *text_events("m", 0, ["o", "k"]),
    ]
    for index, (call_id, name) in enumerate(calls, start=1):
        events.append(item_event("added", index, call_item(f"fc{index}", call_id, name)))
        events += arguments_events(f"fc{index}", index, ['{"a": ', "1}"])
    events.append({"type": "response.completed", "response": response_object("r", "completed")})
    return events


def gemini_reply(calls: list) -> list:
    parts = [function_call_part(name, {"a": 1}, call_id=call_id) for call_id, name in calls]
    return [gemini_chunk([{"text": "ok"}]), gemini_chunk(parts or [{"text": "."}], "STOP")]


REPLIES = {"openai-responses": responses_reply, "gemini": gemini_reply}


def ends_cleanly(wire_format: str, stream: list) -> bool:
    """Whether a clean end arrived, read from the events themselves."""
    for event in stream:
        if not isinstance(event, dict):
            continue
        if wire_format == "openai-responses" and event.get("type") == "response.completed":
            return True
        candidates = event.get("candidates") if wire_format == "gemini" else None
        for candidate in candidates if isinstance(candidates, list) else []:
            if isinstance(candidate, dict) and candidate.get("finishReason") == "STOP":
                return True
    return False


def calls_kept(message: dict) -> list:
    """Each call an assistant turn holds (its id, else its name), in either format."""
    if "output" in message:
        return [i["call_id"] for i in message["output"] if i.get("type") == "function_call"]
    return [p["functionCall"].get("id") or p["functionCall"]["name"] for p in message["parts"]
            if "functionCall" in p]  # fmt: skip


@st.composite
def cases(draw):
    wire_format = draw(st.sampled_from(sorted(REPLIES)))
    ids = draw(st.sampled_from([[], ["c1"], ["c1", "c2"], ["c1", "c1"]]))
    stream = REPLIES[wire_format]([(call_id, "echo") for call_id in ids])
    for _ in range(draw(st.integers(0, 3))):
        if stream:  # Gemini's reply is two events: removing both leaves nothing to bend
            stream = bent(stream, draw)
    return wire_format, stream


def test_hostile_responses_and_gemini_streams_end_in_one_stop_and_never_half_run(safety_tally):
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
            kept = calls_kept(stop["messages"][2])
            assert len(kept) == len(tools.log), (kept, tools.log)
        assert len([e for e in events if e["type"] == "tool_start"]) == len(tools.log)
        stops[stop["reason"]] += 1
        safety_tally["hostile Responses/Gemini streams (bent 0-3 times)"] += 1

    check()
    for reason, count in sorted(stops.items()):
        safety_tally[f"hostile Responses/Gemini streams that stopped with {reason}"] += count
    assert {"malformed_model_turn", "incomplete_model_turn", "max_turns"} <= set(stops)
