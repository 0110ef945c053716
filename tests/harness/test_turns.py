import copy

import pytest
from conftest import call, chunk

from labkit import assemble_turn
from labkit.harness.formats.assembly import MAX_ARGUMENT_DEPTH as MAX_CALL_DEPTH


def test_text_and_thinking_are_joined_in_order_across_chunks():
    turn = assemble_turn(
        [
            chunk(thinking="Let me "),
            chunk(thinking="look."),
            chunk("Hel"),
            chunk("lo, "),
            chunk("world"),
            chunk(done=True),
        ]
    )
    assert turn.message == {
        "role": "assistant",
        "content": "Hello, world",
        "thinking": "Let me look.",
    }
    assert turn.done and turn.done_reason == "stop" and turn.may_dispatch
    assert turn.chunks == 6


def test_tool_calls_from_several_chunks_are_kept_in_order():
    first, second = call("read_file", path="a"), call("run_tests")
    turn = assemble_turn([chunk(tool_calls=[first]), chunk(tool_calls=[second]), chunk(done=True)])
    assert turn.message["tool_calls"] == [first, second]
    assert "thinking" not in turn.message


def test_a_stream_without_done_may_not_be_dispatched():
    turn = assemble_turn([chunk("partial"), chunk(tool_calls=[call("run_tests")])])
    assert not turn.done and not turn.may_dispatch
    assert turn.message["tool_calls"]  # assembled, but refused


def test_a_length_stop_may_not_be_dispatched():
    turn = assemble_turn(
        [chunk(tool_calls=[call("run_tests")]), chunk(done=True, done_reason="length")]
    )
    assert turn.done and turn.done_reason == "length" and not turn.may_dispatch


def test_text_in_the_final_chunk_is_kept():
    assert assemble_turn([chunk("a"), chunk("b", done=True)]).message["content"] == "ab"


def test_malformed_chunks_are_named_and_stop_folding():
    cases = {
        "is a string, not a JSON object": ["not a chunk"],
        "tool_calls is a string": [chunk(tool_calls="read_file")],
        "has no function name": [chunk(tool_calls=[{"function": {"arguments": {}}}])],
        "no 'message' object": [{"done": False}],
        "arrived after the final": [chunk(done=True), chunk("late")],
        "'done' is 'yes'": [chunk(done="yes")],
        "message.content is a number, not text": [chunk(5)],
    }
    for expected, chunks in cases.items():
        turn = assemble_turn(chunks + [chunk("ignored"), chunk(done=True)])
        assert turn.problem and expected in turn.problem, (expected, turn.problem)
        assert not turn.may_dispatch
        assert "ignored" not in turn.message["content"]


@pytest.mark.parametrize(
    "arguments, kind",
    [('{"path": "x"}', "a string"), (["x"], "a list"), (None, "missing or null"), (7, "a number")],
)
def test_arguments_that_are_not_an_object_make_the_turn_malformed(arguments, kind):
    """Ollama always sends an object; the assembler neither parses nor repairs anything else."""
    odd = {"function": {"name": "read_file", "arguments": arguments}}
    turn = assemble_turn([chunk(tool_calls=[odd]), chunk(done=True)])
    assert turn.problem == (
        f"chunk 1: the arguments of tool call 0 ('read_file') are {kind}, not a JSON object"
    )
    assert not turn.may_dispatch


def test_a_turn_gives_a_read_only_message_that_equals_the_plain_one():
    turn = assemble_turn([chunk("hi", tool_calls=[call("read_file", path="x")]), chunk(done=True)])
    assert turn.message == {
        "role": "assistant",
        "content": "hi",
        "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "x"}}}],
    }
    with pytest.raises(TypeError, match="edit a copy"):
        turn.message["tool_calls"][0]["function"]["arguments"]["path"] = "../x"
    mine = copy.deepcopy(turn.message)  # an ordinary dict, to edit freely
    mine["tool_calls"][0]["function"]["arguments"]["path"] = "y"
    assert turn.message["tool_calls"][0]["function"]["arguments"] == {"path": "x"}


def test_a_tool_call_nested_too_deeply_makes_the_turn_malformed():
    deep = []
    for _ in range(MAX_CALL_DEPTH):
        deep = [deep]
    turn = assemble_turn([chunk(tool_calls=[call("read_file", path=deep)]), chunk(done=True)])
    assert turn.problem == f"chunk 1: a tool call is nested more than {MAX_CALL_DEPTH} levels deep"
