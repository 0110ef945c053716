"""The Responses and Gemini assemblers' short way for plain text judges exactly as their every
rule does (the method and the streams are ``test_short_way.py``'s)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_short_way import fragment, odd, same_turn, streams, varied

from labkit.harness.formats.assembly import ChunkAssembler
from labkit.harness.formats.gemini import GeminiAssembler
from labkit.harness.formats.openai_responses import ResponsesAssembler


class CheckedResponses(ResponsesAssembler):
    add = ChunkAssembler.add


class CheckedGemini(GeminiAssembler):
    add = ChunkAssembler.add


CREATED = {"type": "response.created", "response": {"id": "r"}}
MESSAGE = {"type": "response.output_item.added", "item": {"id": "m", "type": "message"}}
PART = {"type": "response.content_part.added", "item_id": "m", "content_index": 0,
        "part": {"type": "output_text", "text": ""}}  # fmt: skip
CALL_ITEM = {"id": "f", "type": "function_call", "call_id": "c", "name": "run_tests"}
CALL = {"type": "response.output_item.added", "item": CALL_ITEM}
RESPONSES_TEXT = {
    "type": "response.output_text.delta",
    "item_id": "m",
    "output_index": 0,
    "content_index": 0,
    "delta": "ab",
}
RESPONSES_END = [{"type": "response.completed", "response": {"id": "r", "status": "completed"}}]
responses_events = st.one_of(
    varied(
        RESPONSES_TEXT,
        st.sampled_from(["f", "x", 1, -1, "response.refusal.delta", "response.completed"]) | odd,
    ),
    st.sampled_from([MESSAGE, PART, CALL, *RESPONSES_END]),
    odd,
)


@settings(max_examples=400, deadline=None)
@given(streams(RESPONSES_TEXT, responses_events, RESPONSES_END))
def test_responses_short_way_judges_as_every_rule_does(events):
    same_turn(ResponsesAssembler(), CheckedResponses(), [CREATED, MESSAGE, PART, CALL, *events])


GEMINI_PART = {"text": "ab"}
GEMINI_CONTENT = {"parts": [GEMINI_PART], "role": "model"}
GEMINI_CANDIDATE = {"content": GEMINI_CONTENT, "index": 0}
GEMINI_TEXT = {"candidates": [GEMINI_CANDIDATE], "modelVersion": "m"}
GEMINI_END = [{"candidates": [{"content": {"parts": [], "role": "model"}, "finishReason": "STOP"}]}]
gemini_candidates = varied(
    GEMINI_CANDIDATE,
    st.sampled_from([1, "STOP", "MAX_TOKENS", "user"]) | odd,
    {
        "content": varied(
            GEMINI_CONTENT,
            st.sampled_from(["user", "model"]) | odd,
            {
                "parts": st.lists(
                    varied(GEMINI_PART, fragment | st.sampled_from(["c2ln"])), max_size=2
                )
            },
        )
    },
)
gemini_events = st.one_of(
    varied(
        GEMINI_TEXT,
        odd,
        {"candidates": st.lists(gemini_candidates, min_size=1, max_size=2) | st.just([])},
    ),
    odd,
)


@settings(max_examples=400, deadline=None)
@given(streams(GEMINI_TEXT, gemini_events, GEMINI_END))
def test_gemini_short_way_judges_as_every_rule_does(events):
    same_turn(GeminiAssembler(), CheckedGemini(), events)
