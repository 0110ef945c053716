"""Gemini's stream assembled: each event a response holding new parts, calls whole, text runs
joined, thought signatures kept where they came, only finishReason STOP clean, results as one
user content of functionResponse parts."""

import pytest
from conftest import FakeTools, ListChat

from labkit.harness import agent_events
from labkit.harness.contracts import ToolCall
from labkit.harness.formats import FORMATS
from labkit.harness.formats.gemini import GeminiAssembler
from labkit.models.gemini_chunks import function_call_part, gemini_chunk

SIGNED = "c2lnbmF0dXJlIG9uZQ=="


def assemble(events):
    assembler = GeminiAssembler()
    shown = [assembler.add(event) for event in events]
    return assembler.turn(), shown


TEXT_THEN_CALLS = [
    gemini_chunk([{"text": "I will "}]),
    gemini_chunk([{"text": "read it."}]),
    gemini_chunk(
        [
            function_call_part("read_file", {"path": "path_rules.py"}, signed=SIGNED),
            function_call_part("run_tests", {}, call_id="fc-2"),
        ],
        "STOP",
    ),
]


def test_calls_arrive_whole_and_run_after_a_stop():
    turn, shown = assemble(TEXT_THEN_CALLS)
    assert turn.may_dispatch and (turn.done, turn.done_reason) == (True, "STOP")
    assert turn.calls == [
        ToolCall(None, "read_file", {"path": "path_rules.py"}),
        ToolCall("fc-2", "run_tests", {}),
    ]
    assert turn.text == "I will read it." and shown == ["I will ", "read it.", ""]
    assert turn.message == {
        "role": "model",
        "parts": [
            {"text": "I will read it."},
            {"functionCall": {"name": "read_file", "args": {"path": "path_rules.py"}},
             "thoughtSignature": SIGNED},
            {"functionCall": {"name": "run_tests", "args": {}, "id": "fc-2"}},
        ],
    }  # fmt: skip


def test_a_signature_stays_on_its_part_and_ends_a_text_run():
    events = [
        gemini_chunk([{"text": "Thinking", "thought": True}]),
        gemini_chunk([{"text": "All "}]),
        gemini_chunk([{"text": "done.", "thoughtSignature": SIGNED}]),
        gemini_chunk([{"text": " More."}], "STOP"),
    ]
    turn, _ = assemble(events)
    assert turn.text == "All done. More."  # a thought summary is not the reply's text
    assert turn.message["parts"] == [
        {"text": "Thinking", "thought": True},
        {"text": "All done.", "thoughtSignature": SIGNED},
        {"text": " More."},
    ]


@pytest.mark.parametrize(
    "end, words",
    [
        ("MAX_TOKENS", "cut by the output-length limit (finishReason 'MAX_TOKENS')"),
        ("SAFETY", "finishReason 'SAFETY', not 'STOP'"),
        ("MALFORMED_FUNCTION_CALL", "not 'STOP'"),
        (None, "ended before the candidate's finishReason"),
    ],
)
def test_only_stop_lets_calls_run(end, words):
    events = [*TEXT_THEN_CALLS[:-1], {**TEXT_THEN_CALLS[-1]}]
    candidate = dict(events[-1]["candidates"][0])
    candidate.pop("finishReason")
    if end:
        candidate["finishReason"] = end
    events[-1] = {**events[-1], "candidates": [candidate]}
    turn, _ = assemble(events)
    assert turn.calls == [] and words in turn.unfinished


def test_a_blocked_prompt_is_refused():
    turn, _ = assemble([{"promptFeedback": {"blockReason": "SAFETY"}}])
    assert "the prompt was blocked" in turn.unfinished and not turn.may_dispatch


@pytest.mark.parametrize(
    "events, words",
    [
        ([{"error": {"code": 503, "message": "overloaded"}}], "error from the server: overloaded"),
        ([{"candidates": [{}, {}]}], "2 candidates"),
        ([gemini_chunk([{"functionCall": {"args": {}}}])], "has no 'name'"),
        ([gemini_chunk([{"functionCall": {"name": "x", "args": "{}"}}])], "not a JSON object"),
        (
            [gemini_chunk([function_call_part("x", {}, call_id="same")] * 2)],
            "'same' of an earlier call",
        ),
        ([gemini_chunk([{"text": "a"}], "STOP"), gemini_chunk([{"text": "b"}])], "after the fin"),
        ([gemini_chunk([{"text": 5}])], "a part's text is a number"),
        ([gemini_chunk([{"text": "a", "thoughtSignature": ["x"]}])], "thoughtSignature is a list"),
        ([{"candidates": [{"content": {"role": "user", "parts": []}}]}], "not 'model'"),
        (["text"], "a string, not a JSON object"),
    ],
)
def test_a_stream_that_breaks_the_format_is_malformed_and_names_it(events, words):
    turn, _ = assemble(events)
    assert turn.calls == [] and words in turn.problem


def test_usage_after_the_end_and_unknown_parts_change_nothing_the_loop_needs():
    events = [
        gemini_chunk([{"executableCode": {"code": "1"}}]),
        *TEXT_THEN_CALLS,
        {"usageMetadata": {"promptTokenCount": 3}},
    ]
    turn, _ = assemble(events)
    assert turn.may_dispatch and turn.message["parts"][0] == {"executableCode": {"code": "1"}}


def test_results_go_back_together_as_function_responses_in_one_user_content():
    calls = [ToolCall(None, "read_file", {}), ToolCall("fc-2", "run_tests", {})]
    gemini = FORMATS["gemini"]
    assert gemini.tool_results([], []) == []
    assert gemini.tool_results(calls, [{"exit_code": 1, "output": "x"}, {"error": "no"}]) == [
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "read_file",
                                      "response": {"output": {"exit_code": 1, "output": "x"}}}},
                {"functionResponse": {"id": "fc-2", "name": "run_tests",
                                      "response": {"output": {"error": "no"}}}},
            ],
        }
    ]  # fmt: skip


def test_the_loop_sends_the_signed_turn_back_unchanged():
    finished = [gemini_chunk([{"text": "Done."}], "STOP")]
    chat = ListChat(TEXT_THEN_CALLS, finished, wire_format="gemini")
    tools = FakeTools()
    events = list(agent_events(chat, tools, "task"))
    assert events[-1]["reason"] == "assistant_finished" and len(tools.calls) == 2
    model_turn, results = chat.requests[1][-2:]
    assert model_turn["parts"][1]["thoughtSignature"] == SIGNED
    assert [p["functionResponse"]["name"] for p in results["parts"]] == ["read_file", "run_tests"]
