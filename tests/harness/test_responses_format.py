"""The Responses API's stream assembled: items told apart by id, argument deltas joined per
call and parsed only at response.completed, response.incomplete refused, failures and breaks
named, results as function_call_output items by call_id."""

import json

import pytest
from conftest import FakeTools, ListChat

from labkit.harness import agent_events
from labkit.harness.contracts import ToolCall
from labkit.harness.formats import FORMATS
from labkit.harness.formats.openai_responses import ResponsesAssembler
from labkit.models.responses_chunks import (
    arguments_events,
    call_item,
    item_event,
    message_item,
    response_object,
    text_events,
)

CREATED = {"type": "response.created", "response": response_object("resp_1")}
COMPLETED = {"type": "response.completed", "response": response_object("resp_1", "completed")}


def incomplete(reason):
    response = response_object("resp_1", "incomplete", reason=reason)
    return {"type": "response.incomplete", "response": response}


def call(index, item_id, call_id, name, pieces):
    """A call's events: added, its arguments in ``pieces``, done."""
    whole = "".join(pieces)
    return [
        item_event("added", index, call_item(item_id, call_id, name)),
        *arguments_events(item_id, index, pieces),
        item_event("done", index, call_item(item_id, call_id, name, whole)),
    ]


def text(index, item_id, pieces):
    return [
        item_event("added", index, message_item(item_id)),
        *text_events(item_id, index, pieces),
        item_event("done", index, message_item(item_id, "".join(pieces))),
    ]


def assemble(events):
    assembler = ResponsesAssembler()
    shown = [assembler.add(event) for event in events]
    return assembler.turn(), shown


READ = [
    CREATED,
    *text(0, "msg_1", ["I will ", "read it."]),
    *call(1, "fc_1", "call_1", "read_file", ['{"pa', 'th": "pa', 'th_rules.py"}']),
    COMPLETED,
]


def test_a_call_is_its_deltas_joined_and_parsed_at_completed():
    turn, shown = assemble(READ)
    assert turn.may_dispatch and (turn.done, turn.done_reason) == (True, "completed")
    assert turn.calls == [ToolCall("call_1", "read_file", {"path": "path_rules.py"})]
    assert turn.text == "I will read it." and [s for s in shown if s] == ["I will ", "read it."]
    assert turn.message == {
        "role": "assistant",
        "output": [
            {"role": "assistant", "content": "I will read it."},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "read_file",
                "arguments": '{"path": "path_rules.py"}',
            },
        ],
    }


def test_two_calls_whose_deltas_interleave_are_joined_each_by_its_item():
    a = call(0, "fc_a", "call_a", "read_file", ['{"path": "pa', 'th_rules.py"}'])
    b = call(1, "fc_b", "call_b", "run_tests", ["{", "}"])
    mixed = [a[0], b[0], a[1], b[1], a[2], b[2], *a[3:], *b[3:]]
    turn, _ = assemble([CREATED, *mixed, COMPLETED])
    assert [(c.id, c.name, c.arguments) for c in turn.calls] == [
        ("call_a", "read_file", {"path": "path_rules.py"}),
        ("call_b", "run_tests", {}),
    ]


def test_ollamas_stream_that_reuses_an_output_index_is_read_by_item_id():
    """Ollama's /v1/responses leaves the text item open and gives the call its index 0."""
    events = [
        CREATED,
        item_event("added", 0, message_item("msg_o")),
        *text_events("msg_o", 0, ["Let me look."])[:2],
        *call(0, "fc_o", "call_o", "read_file", ['{"path": "path_rules.py"}']),
        COMPLETED,
    ]
    turn, _ = assemble(events)
    assert turn.may_dispatch and turn.text == "Let me look."
    assert [c.arguments for c in turn.calls] == [{"path": "path_rules.py"}]


@pytest.mark.parametrize(
    "ending, words",
    [
        (incomplete("max_output_tokens"), "cut by the output-length limit"),
        (incomplete("content_filter"), "incomplete_details.reason 'content_filter'"),
        (None, "the stream ended before response.completed"),
    ],
)
def test_only_response_completed_lets_calls_run(ending, words):
    turn, _ = assemble(READ[:-1] + ([ending] if ending else []))
    assert turn.calls == [] and words in turn.unfinished and turn.problem is None


@pytest.mark.parametrize(
    "events, words",
    [
        (
            [CREATED, {"type": "error", "code": "x", "message": "overloaded"}],
            "error from the server",
        ),
        (
            [CREATED, {"type": "response.failed", "response": {"error": {"code": "e"}}}],
            "the response failed",
        ),
        ([COMPLETED], "must begin with response.created"),
        ([CREATED, *arguments_events("fc_x", 0, ["{}"])], "which was never added"),
        (
            [CREATED, *call(0, "a", "same", "x", ["{}"]), *call(1, "b", "same", "y", ["{}"])],
            "'same' of an earlier call",
        ),
        ([*READ, COMPLETED], "arrived after response.completed"),
        ([CREATED, *call(0, "a", "c", "x", ['{"a": ']), COMPLETED], "are not JSON"),
        ([CREATED, {"type": "response.output_item.added", "item": []}], "'item' is a list"),
        (
            [CREATED, {"type": "response.output_text.delta", "item_id": ["x"], "delta": "a"}],
            "neither item_id",
        ),
    ],
)
def test_a_stream_that_breaks_the_format_is_malformed_and_names_it(events, words):
    turn, _ = assemble(events)
    assert turn.calls == [] and words in turn.problem


def test_arguments_done_must_agree_with_the_deltas_or_stands_for_them():
    disagreeing = call(0, "fc", "c", "read_file", ['{"path": "a"}'])
    disagreeing[2] = {**disagreeing[2], "arguments": '{"path": "b"}'}
    turn, _ = assemble([CREATED, *disagreeing, COMPLETED])
    assert "differ from their deltas" in turn.problem
    alone = call(0, "fc", "c", "read_file", ['{"path": "a"}'])
    del alone[1]  # no delta: the done event's arguments stand
    turn, _ = assemble([CREATED, *alone, COMPLETED])
    assert turn.calls[0].arguments == {"path": "a"}


def test_other_items_are_kept_whole_and_unknown_events_carry_nothing():
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "opaque"}
    events = [
        CREATED,
        {"type": "response.in_progress", "response": response_object("resp_1")},
        item_event("added", 0, {"id": "rs_1", "type": "reasoning", "summary": []}),
        {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "delta": "hm"},
        item_event("done", 0, reasoning),
        {"type": "response.some_new_event", "anything": [1]},
        *call(1, "fc", "c", "run_tests", ["{}"]),
        COMPLETED,
    ]
    turn, _ = assemble(events)
    assert turn.may_dispatch and turn.message["output"][0] == reasoning and turn.text == ""


def test_results_go_back_as_function_call_output_items_by_call_id():
    calls = [ToolCall("call_1", "read_file", {}), ToolCall("call_2", "run_tests", {})]
    items = FORMATS["openai-responses"].tool_results(calls, [{"a": 1}, {"error": "no"}])
    assert items == [
        {"type": "function_call_output", "call_id": "call_1", "output": '{"a": 1}'},
        {
            "type": "function_call_output",
            "call_id": "call_2",
            "output": json.dumps({"error": "no"}),
        },
    ]


def test_the_loop_runs_a_responses_turn_and_sends_the_results_back():
    finished = [CREATED, *text(0, "m", ["Done."]), COMPLETED]
    chat = ListChat(READ, finished, wire_format="openai-responses")
    tools = FakeTools()
    events = list(agent_events(chat, tools, "task"))
    assert events[-1]["reason"] == "assistant_finished"
    assert tools.calls == [("read_file", {"path": "path_rules.py"})]
    second = chat.requests[1]
    assert second[-1] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": json.dumps({"echo": "read_file", "path": "path_rules.py"}),
    }
    assert second[-2]["output"][-1]["call_id"] == "call_1"
