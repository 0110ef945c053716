"""Anthropic's stream assembled: blocks opened, filled and closed, partial_json joined across
deltas and parsed only at a clean message_stop, max_tokens refused, results in one user message."""

import time

import pytest
from conftest import FakeTools, ListChat, assert_time_grows_in_step

from labkit.harness import agent_events
from labkit.harness.formats import ANTHROPIC
from labkit.harness.formats.anthropic import AnthropicAssembler
from labkit.models.chunks import (
    anthropic_block as block,
)
from labkit.models.chunks import (
    anthropic_delta as delta,
)
from labkit.models.chunks import (
    anthropic_end as end,
)
from labkit.models.chunks import (
    anthropic_start,
)
from labkit.models.chunks import (
    anthropic_stop as stop,
)

START = anthropic_start(model="test")


def tool(index, call_id="toolu_a", name="read_file"):
    return block(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}})


def text(index):
    return block(index, {"type": "text", "text": ""})


def assemble(events):
    assembler = AnthropicAssembler()
    texts = [assembler.add(e) for e in events]
    return assembler.turn(), texts


READ = [
    START,
    text(0),
    delta(0, text="I will "),
    delta(0, text="read it."),
    stop(0),
    tool(1),
    delta(1, partial_json=""),
    delta(1, partial_json='{"pa'),
    delta(1, partial_json='th": "path_'),
    delta(1, partial_json='rules.py"}'),
    stop(1),
    *end("tool_use"),
]


def test_text_and_a_tool_whose_input_streams_across_deltas_assemble_into_blocks():
    turn, texts = assemble(READ)
    assert (turn.problem, turn.unfinished, turn.done_reason) == (None, None, "tool_use")
    assert "".join(texts) == turn.text == "I will read it."
    assert [tuple(c) for c in turn.calls] == [("toolu_a", "read_file", {"path": "path_rules.py"})]
    assert turn.message == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I will read it."},
            {
                "type": "tool_use",
                "id": "toolu_a",
                "name": "read_file",
                "input": {"path": "path_rules.py"},
            },
        ],
    }


def test_a_tool_with_no_input_deltas_keeps_the_input_it_started_with():
    turn, _ = assemble([START, tool(0, name="run_tests"), stop(0), *end("tool_use")])
    assert [tuple(c) for c in turn.calls] == [("toolu_a", "run_tests", {})]


@pytest.mark.parametrize(
    "ending, why",
    [
        (end("max_tokens"), "cut by the output-length limit (stop_reason 'max_tokens')"),
        (end("tool_use")[:1], "the stream ended without message_stop"),
        ([], "the stream ended without message_stop"),
        (end("refusal"), "stop_reason 'refusal', not 'tool_use' or 'end_turn'"),
    ],
)
def test_a_reply_not_finished_cleanly_offers_no_calls_and_its_cut_json_is_not_malformed(
    ending, why
):
    turn, _ = assemble([START, tool(0), delta(0, partial_json='{"pa'), stop(0), *ending])
    assert turn.problem is None and why in turn.unfinished
    assert turn.calls == []


@pytest.mark.parametrize(
    "pieces, problem",
    [(['["x"]'], "are a list, not a JSON object"), (['{"path": ', '"x"'], "are not JSON")],
)
def test_joined_input_that_is_not_a_json_object_makes_a_clean_turn_malformed(pieces, problem):
    events = [
        START,
        tool(0),
        *[delta(0, partial_json=p) for p in pieces],
        stop(0),
        *end("tool_use"),
    ]
    turn, _ = assemble(events)
    assert problem in turn.problem and "tool_use block 0 ('read_file')" in turn.problem
    assert turn.calls == []


@pytest.mark.parametrize(
    "events, problem",
    [
        ([text(0)], "event 1: the stream must begin with message_start, not 'content_block_start'"),
        ([START, delta(0, text="x")], "event 2: a delta for block 0, which is not open"),
        (
            [START, text(0), delta(0, partial_json="{}")],
            "a 'input_json_delta' delta for text block 0",
        ),
        ([START, tool(0), delta(0, text="x")], "a 'text_delta' delta for tool_use block 0"),
        (
            [START, tool(0), *end("tool_use")],
            "message_stop arrived while content block 0 was still open",
        ),
        ([START, text(0), stop(0), text(0)], "index 0, not the number of a new block"),
        ([START, block(0, {"type": "server_tool_use", "id": "s"})], "a 'server_tool_use' block"),
        ([START, block(0, {"type": "tool_use", "name": "read_file", "input": {}})], "has no 'id'"),
        (
            [START, {"type": "error", "error": {"type": "overloaded_error"}}],
            "an error from the server",
        ),
        ([START, *end("end_turn"), text(0)], "arrived after message_stop"),
        ([START, START], "a second message_start"),
    ],
)
def test_an_event_that_breaks_the_format_is_named_and_the_rest_is_ignored(events, problem):
    turn, _ = assemble(events + [text(9), delta(9, text="ignored"), stop(9), *end("end_turn")])
    assert problem in turn.problem, turn.problem
    assert "ignored" not in turn.text and turn.calls == []


def test_pings_and_event_types_it_does_not_know_carry_nothing():
    turn, _ = assemble(
        [
            START,
            {"type": "ping"},
            text(0),
            {"type": "future_event", "x": 1},
            delta(0, text="ok"),
            stop(0),
            *end("end_turn"),
        ]
    )
    assert (turn.problem, turn.text) == (None, "ok")


def test_a_ping_before_message_start_or_after_message_stop_carries_nothing_either():
    """Issue 29, item 12: a ping before message_start stopped the run as malformed."""
    events = [START, text(0), delta(0, text="ok"), stop(0), *end("end_turn")]
    for extra in ({"type": "ping"}, {"type": "future_event"}):
        for place in (0, len(events)):
            turn, _ = assemble(events[:place] + [extra] + events[place:])
            assert (turn.problem, turn.unfinished, turn.text) == (None, None, "ok"), place


def test_thinking_blocks_are_kept_in_place_with_their_signature_to_go_back_unchanged():
    thinking = block(0, {"type": "thinking", "thinking": "", "signature": ""})
    redacted = block(1, {"type": "redacted_thinking", "data": "EncRYpTeD=="})
    turn, texts = assemble(
        [
            START,
            thinking,
            delta(0, thinking="First I "),
            delta(0, thinking="read the file."),
            delta(0, signature="c2lnbmF0"),
            delta(0, signature="dXJl"),
            stop(0),
            redacted,
            stop(1),
            tool(2),
            delta(2, partial_json='{"path": "x"}'),
            stop(2),
            *end("tool_use"),
        ]
    )
    assert (turn.problem, turn.unfinished, turn.text, "".join(texts)) == (None, None, "", "")
    assert turn.message["content"][:2] == [
        {"type": "thinking", "thinking": "First I read the file.", "signature": "c2lnbmF0dXJl"},
        {"type": "redacted_thinking", "data": "EncRYpTeD=="},
    ]
    assert [tuple(c) for c in turn.calls] == [("toolu_a", "read_file", {"path": "x"})]


@pytest.mark.parametrize(
    "events, problem",
    [
        ([block(0, {"type": "redacted_thinking"})], "redacted_thinking block 0 has no 'data'"),
        ([block(0, {"type": "thinking", "thinking": 5})], "its thinking is a number"),
        ([text(0), delta(0, signature="x")], "a 'signature_delta' delta for text block 0"),
        ([block(0, {"type": "thinking"}), delta(0, text="x")], "a 'text_delta' delta for thinking"),
    ],
)
def test_a_thinking_block_that_breaks_the_format_is_named(events, problem):
    turn, _ = assemble([START, *events])
    assert problem in turn.problem, turn.problem


def test_empty_text_blocks_are_left_out_of_the_message_the_api_would_refuse_them():
    turn, _ = assemble([START, text(0), stop(0), tool(1), stop(1), *end("tool_use")])
    assert [b["type"] for b in turn.message["content"]] == ["tool_use"]


def test_a_turns_results_go_back_together_in_one_user_message_of_tool_result_blocks():
    turn, _ = assemble(
        [START, tool(0), stop(0), tool(1, "toolu_b", "run_tests"), stop(1), *end("tool_use")]
    )
    assert ANTHROPIC.tool_results(turn.calls, [{"a": 1}, {"exit_code": 0}]) == [
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": '{"a": 1}'},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": '{"exit_code": 0}'},
            ],
        }
    ]
    assert ANTHROPIC.tool_results([], []) == []


def AnthropicChat(*turns):
    return ListChat(*turns, wire_format="anthropic")


def test_the_loop_keeps_the_system_prompt_first_and_sends_the_results_as_one_user_message():
    chat = AnthropicChat(
        [
            START,
            tool(0, name="echo"),
            delta(0, partial_json='{"n": "1"}'),
            stop(0),
            tool(1, "toolu_b", "echo"),
            stop(1),
            *end("tool_use"),
        ],
        [START, text(0), delta(0, text="done"), stop(0), *end("end_turn")],
    )
    events = list(agent_events(chat, FakeTools(), "task"))
    assert events[-1]["reason"] == "assistant_finished" and events[-1]["tool_calls"] == 2
    second = chat.requests[1]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert [b["tool_use_id"] for b in second[3]["content"]] == ["toolu_a", "toolu_b"]


def test_the_loop_refuses_a_turn_cut_by_max_tokens_and_runs_nothing():
    tools = FakeTools()
    chat = AnthropicChat(
        [START, tool(0, name="echo"), delta(0, partial_json="{}"), stop(0), *end("max_tokens")]
    )
    stop_event = list(agent_events(chat, tools, "task"))[-1]
    assert (stop_event["reason"], stop_event["tool_calls"], tools.calls) == (
        "incomplete_model_turn",
        0,
        [],
    )


def seconds_to_assemble(fragments: int) -> float:
    stream = [START, tool(0, name="echo"), delta(0, partial_json='{"t": "')]
    stream += [delta(0, partial_json="abcd")] * fragments  # one event, read many times
    stream += [delta(0, partial_json='"}'), stop(0), *end("tool_use")]
    began = time.process_time()
    turn, _ = assemble(stream)
    seconds = time.process_time() - began
    assert turn.calls[0].arguments == {"t": "abcd" * fragments}
    return seconds


def test_assembly_time_grows_in_step_with_the_stream():
    assert_time_grows_in_step(seconds_to_assemble)
