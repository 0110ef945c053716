"""OpenAI's stream assembled: fragments joined by index, parsed only at a clean finish_reason,
length refused, malformed chunks named, results shaped as tool messages with tool_call_id."""

import json
import time

import pytest
from conftest import FakeTools, ListChat, assert_time_grows_in_step

from labkit.harness import agent_events
from labkit.harness.formats import OPENAI
from labkit.harness.formats.openai import OpenAIAssembler
from labkit.models.chunks import openai_arguments as fragment
from labkit.models.chunks import openai_call_start as start
from labkit.models.chunks import openai_chunk


def chunk(delta=None, finish=None):
    return openai_chunk(delta, finish, model="test")


def calls(*entries):
    return chunk({"tool_calls": list(entries)})


def assemble(chunks):
    assembler = OpenAIAssembler()
    texts = [assembler.add(c) for c in chunks]
    return assembler.turn(), texts


READ = [
    chunk({"role": "assistant", "content": ""}),
    calls(start(0, "call_a", "read_file")),
    calls(fragment(0, '{"pa')),
    calls(fragment(0, 'th": "pa')),
    calls(fragment(0, "th_rul")),
    calls(fragment(0, 'es.py"}')),
    chunk({}, "tool_calls"),
]


def test_fragments_of_one_call_split_anywhere_are_joined_then_parsed_at_the_finish():
    turn, _ = assemble(READ)
    assert (turn.problem, turn.unfinished, turn.done_reason) == (None, None, "tool_calls")
    assert [tuple(c) for c in turn.calls] == [("call_a", "read_file", {"path": "path_rules.py"})]
    assert turn.message == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "path_rules.py"}'},
            }
        ],
    }


def test_interleaved_indexes_and_several_entries_in_one_chunk_go_to_their_own_calls():
    turn, _ = assemble(
        [
            calls(start(1, "call_b", "run_tests"), start(0, "call_a", "read_file")),
            calls(fragment(0, '{"path"'), fragment(1, "{")),
            calls(fragment(1, "}"), fragment(0, ': "x"}')),
            chunk({}, "tool_calls"),
        ]
    )
    assert [tuple(c) for c in turn.calls] == [
        ("call_a", "read_file", {"path": "x"}),
        ("call_b", "run_tests", {}),
    ]


def test_text_streams_as_deltas_and_a_stop_without_calls_is_a_final_answer():
    turn, texts = assemble(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "All "}),
            chunk({"content": "good."}),
            chunk({}, "stop"),
        ]
    )
    assert texts == ["", "All ", "good.", ""]
    assert (turn.text, turn.calls, turn.unfinished) == ("All good.", [], None)


@pytest.mark.parametrize(
    "ending, why",
    [
        ([chunk({}, "length")], "cut by the output-length limit (finish_reason 'length')"),
        ([], "ended before the choice's finish_reason arrived"),
        (
            [chunk({}, "content_filter")],
            "finish_reason 'content_filter', not 'tool_calls' or 'stop'",
        ),
    ],
)
def test_a_reply_not_finished_cleanly_offers_no_calls_and_its_cut_json_is_not_malformed(
    ending, why
):
    turn, _ = assemble(READ[:3] + ending)  # the arguments stop at '{"pa': not JSON
    assert turn.problem is None and why in turn.unfinished
    assert turn.calls == []


@pytest.mark.parametrize(
    "arguments, problem",
    [
        ('["path_rules.py"]', "are a list, not a JSON object"),
        ('"path_rules.py"', "are a string, not a JSON object"),
        ('{"path": "x"', "are not JSON"),
        ("", "are not JSON"),
    ],
)
def test_joined_arguments_that_are_not_a_json_object_make_a_clean_turn_malformed(
    arguments, problem
):
    turn, _ = assemble(
        [
            calls(start(0, "call_a", "read_file")),
            calls(fragment(0, arguments)),
            chunk({}, "tool_calls"),
        ]
    )
    assert problem in turn.problem and "tool call 0 ('read_file')" in turn.problem
    assert turn.calls == []


@pytest.mark.parametrize(
    "chunks, problem",
    [
        (
            [calls({"id": "call_a", "function": {"name": "read_file", "arguments": "{}"}})],
            "chunk 1: a tool_calls entry has no 'index'",
        ),
        (
            [calls({"index": 0, "function": {"name": "read_file"}})],
            "tool call 0 starts without an 'id'",
        ),
        ([calls(start(0, "call_a", ""))], "tool call 0 starts without a function name"),
        (
            [calls(start(0, "call_a", "read_file")), calls({"index": 0, "id": "call_z"})],
            "chunk 2: tool call 0 changes its id or name",
        ),
        (
            [calls({"index": 0, "id": "c", "function": {"name": "x", "arguments": {"path": "a"}}})],
            "the arguments of tool call 0 are an object, not JSON text",
        ),
        (
            [chunk({}, "stop"), chunk({"content": "late"})],
            "chunk 2: it arrived after the reply's finish_reason ('stop')",
        ),
        (["data: {}"], "chunk 1: a string, not a JSON object"),
        ([{"error": {"message": "overloaded"}}], "an error from the server"),
        ([{"choices": "x"}], "no 'choices' list"),
        ([chunk({"content": 5})], "delta.content is a number, not text"),
        ([{"choices": [{"index": 1, "delta": {}}]}], "the harness asks for one choice"),
    ],
)
def test_a_chunk_that_breaks_the_format_is_named_and_the_rest_is_ignored(chunks, problem):
    turn, _ = assemble(chunks + [chunk({"content": "ignored"}), chunk({}, "stop")])
    assert problem in turn.problem, turn.problem
    assert "ignored" not in turn.text and turn.calls == []


def test_a_usage_chunk_after_the_finish_carries_nothing_and_is_accepted():
    usage = {
        "id": "x",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2},
    }
    turn, _ = assemble(READ + [usage])
    assert turn.problem is None and turn.unfinished is None and len(turn.calls) == 1


def test_a_whole_completion_is_one_chunk_and_a_legacy_function_call_beside_tool_calls_is_ignored():
    whole = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {
                                "name": "read_file",
                                "arguments": '{"path": "tests/test_path_rules.py"}',
                            },
                        }
                    ],
                    "function_call": {"name": "replace_text:", "arguments": "{}"},
                },
            }
        ],
    }
    turn, _ = assemble([whole])
    assert [tuple(c) for c in turn.calls] == [
        ("call_1", "read_file", {"path": "tests/test_path_rules.py"})
    ]
    cut = json.loads(json.dumps(whole))
    cut["choices"][0]["finish_reason"] = "length"
    assert "finish_reason 'length'" in assemble([cut])[0].unfinished


def test_results_go_back_as_one_tool_message_per_call_naming_its_id():
    turn, _ = assemble(
        [
            calls(start(0, "call_a", "read_file"), start(1, "call_b", "run_tests")),
            calls(fragment(0, "{}"), fragment(1, "{}")),
            chunk({}, "tool_calls"),
        ]
    )
    assert OPENAI.tool_results(turn.calls, [{"content": "x"}, {"exit_code": 0}]) == [
        {"role": "tool", "tool_call_id": "call_a", "content": '{"content": "x"}'},
        {"role": "tool", "tool_call_id": "call_b", "content": '{"exit_code": 0}'},
    ]


def OpenAIChat(*turns):
    return ListChat(*turns, wire_format="openai")


def test_the_loop_runs_an_openai_turn_and_sends_the_results_back_in_openai_shape():
    chat = OpenAIChat(
        [
            calls(start(0, "call_a", "echo")),
            calls(fragment(0, '{"n": "1"}')),
            chunk({}, "tool_calls"),
        ],
        [chunk({"content": "done"}), chunk({}, "stop")],
    )
    events = list(agent_events(chat, FakeTools(), "task"))
    assert events[-1]["reason"] == "assistant_finished" and events[-1]["tool_calls"] == 1
    second = chat.requests[1]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert second[3] == {
        "role": "tool",
        "tool_call_id": "call_a",
        "content": '{"echo": "echo", "n": "1"}',
    }


@pytest.mark.parametrize(
    "ending, reason",
    [
        (chunk({}, "length"), "incomplete_model_turn"),
        (chunk({"content": 7}), "malformed_model_turn"),
    ],
)
def test_the_loop_refuses_a_cut_or_broken_openai_turn_and_runs_nothing(ending, reason):
    tools = FakeTools()
    chat = OpenAIChat([calls(start(0, "call_a", "echo")), calls(fragment(0, "{}")), ending])
    stop = list(agent_events(chat, tools, "task"))[-1]
    assert (stop["reason"], stop["tool_calls"], tools.calls) == (reason, 0, [])


def seconds_to_assemble(fragments: int) -> float:
    stream = [calls(start(0, "call_a", "echo")), calls(fragment(0, '{"t": "'))]
    stream += [calls(fragment(0, "abcd"))] * fragments  # one chunk, read many times
    stream += [calls(fragment(0, '"}')), chunk({}, "tool_calls")]
    began = time.process_time()
    turn, _ = assemble(stream)
    seconds = time.process_time() - began
    assert turn.calls[0].arguments == {"t": "abcd" * fragments}
    return seconds


def test_assembly_time_grows_in_step_with_the_stream():
    assert_time_grows_in_step(seconds_to_assemble)
