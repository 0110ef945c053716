from conftest import call, chunk

from labkit import assemble_turn


def test_text_and_thinking_are_joined_in_order_across_chunks():
    turn = assemble_turn([chunk(thinking="Let me "), chunk(thinking="look."),
                          chunk("Hel"), chunk("lo, "), chunk("world"), chunk(done=True)])
    assert turn.message == {"role": "assistant", "content": "Hello, world",
                            "thinking": "Let me look."}
    assert turn.done and turn.done_reason == "stop" and turn.may_dispatch
    assert turn.chunks == 6


def test_tool_calls_from_several_chunks_are_kept_in_order():
    first, second = call("read_file", path="a"), call("run_tests")
    turn = assemble_turn([chunk(tool_calls=[first]), chunk(tool_calls=[second]), chunk(done=True)])
    assert turn.tool_calls == [first, second]
    assert "thinking" not in turn.message


def test_a_stream_without_done_may_not_be_dispatched():
    turn = assemble_turn([chunk("partial"), chunk(tool_calls=[call("run_tests")])])
    assert not turn.done and not turn.may_dispatch
    assert turn.tool_calls  # assembled, but refused


def test_a_length_stop_may_not_be_dispatched():
    turn = assemble_turn([chunk(tool_calls=[call("run_tests")]), chunk(done=True, done_reason="length")])
    assert turn.done and turn.done_reason == "length" and not turn.may_dispatch


def test_text_in_the_final_chunk_is_kept():
    assert assemble_turn([chunk("a"), chunk("b", done=True)]).message["content"] == "ab"


def test_malformed_chunks_are_named_and_stop_folding():
    cases = {
        "is a str": ["not a chunk"],
        "tool_calls is a str": [chunk(tool_calls="read_file")],
        "has no function name": [chunk(tool_calls=[{"function": {"arguments": {}}}])],
        "no 'message' object": [{"done": False}],
        "arrived after the final": [chunk(done=True), chunk("late")],
        "'done' is 'yes'": [chunk(done="yes")],
        "message.content is a int": [chunk(5)],
    }
    for expected, chunks in cases.items():
        turn = assemble_turn(chunks + [chunk("ignored"), chunk(done=True)])
        assert turn.problem and expected in turn.problem, (expected, turn.problem)
        assert not turn.may_dispatch
        assert "ignored" not in turn.message["content"]


def test_arguments_given_as_a_json_string_are_assembled_as_sent():
    """The tools refuse them later; the assembler does not rewrite what the model said."""
    odd = {"function": {"name": "read_file", "arguments": '{"path": "x"}'}}
    turn = assemble_turn([chunk(tool_calls=[odd]), chunk(done=True)])
    assert turn.problem is None and turn.tool_calls == [odd]
