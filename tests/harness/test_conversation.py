"""The conversation as data: characters per kind, per recorded request, and what makes a
conversation one a model cannot be sent. Expected values are written out by hand."""

from conftest import conversation

from labkit.harness.conversation import measure, order_problems, request_sizes


def test_measure_counts_characters_per_kind_tool_calls_included():
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task!"},
        {
            "role": "assistant",
            "content": "",
            "thinking": "hmm",
            "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "a.py"}}}],
        },
        {"role": "tool", "tool_name": "read_file", "content": "0123456789"},
        {"role": "assistant", "content": "done."},
    ]
    call = '{"name": "read_file", "arguments": {"path": "a.py"}}'
    assert measure(messages) == {
        "system": 3,
        "user": 5,
        "assistant": 5,
        "thinking": 3,
        "tool_calls": len(call),
        "tool": 10,
        "total": 3 + 5 + 5 + 3 + len(call) + 10,
    }


def test_request_sizes_reads_prompt_tokens_where_the_final_chunk_has_them():
    def turn(messages, final):
        return {
            "request": {"messages": messages, "tools": []},
            "chunks": [
                {"at": 0.1, "chunk": {"message": {"content": ""}, "done": False}},
                {"at": 0.2, "chunk": final},
            ],
        }

    system = {"role": "system", "content": "s" * 10}
    user = {"role": "user", "content": "u" * 4}
    recording = {
        "turns": [
            turn([system, user], {"done": True, "prompt_eval_count": 57}),
            turn([system, user, {"role": "assistant", "content": "hi"}], {"done": True}),
        ]
    }
    rows = request_sizes(recording)
    assert [(r["request"], r["total"], r["prompt_tokens"]) for r in rows] == [
        (1, 14, 57),
        (2, 16, None),
    ]


def test_order_problems_catches_what_a_broken_compaction_does():
    good = conversation("a", "b")
    assert order_problems(good) == []
    dropped_call = good[:2] + good[3:]  # removed an assistant message, kept its result
    assert order_problems(dropped_call) == ["message 2: a tool result with no call left to answer"]
    swapped = good[:2] + [good[3], good[2]] + good[4:]
    assert order_problems(swapped)[0] == "message 2: a tool result with no call left to answer"
    wrong_id = [dict(m) for m in good]
    wrong_id[3]["tool_call_id"] = "call_9"
    assert order_problems(wrong_id) == [
        "message 3: tool_call_id 'call_9' pairs with no call of its turn (['call_1'])"
    ]
    assert order_problems(good[1:])[0].startswith("the conversation must start with system")


def test_ollama_results_carry_no_id_and_pair_with_the_calls_in_order():
    calls = [
        {"id": "call_a", "function": {"name": "read_file", "arguments": {}}},
        {"id": "call_b", "function": {"name": "run_tests", "arguments": {}}},
    ]
    start = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "T"},
        {"role": "assistant", "content": "", "tool_calls": calls},
    ]
    read = {"role": "tool", "tool_name": "read_file", "content": "{}"}
    tests = {"role": "tool", "tool_name": "run_tests", "content": "{}"}
    assert order_problems(start + [read, tests]) == []
    assert order_problems(start + [tests, read]) == [
        "message 3: a result of 'run_tests' where call 1 of its turn was 'read_file'",
        "message 4: a result of 'read_file' where call 2 of its turn was 'run_tests'",
    ]


def test_a_call_left_without_its_result_is_a_problem():
    good = conversation("a", "b")
    assert order_problems(good[:3] + good[4:]) == ["message 2: 1 tool call(s) but only 0 result(s)"]
    assert order_problems(good[:-1]) == ["message 4: 1 tool call(s) but only 0 result(s)"]
