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


def one_turn(count, answered=None):
    """A turn of ``count`` calls c0, c1... and results naming ``answered`` (default: each)."""
    calls = [
        {"id": f"c{i}", "function": {"name": "read_file", "arguments": {}}} for i in range(count)
    ]
    messages = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "T"},
        {"role": "assistant", "content": "", "tool_calls": calls},
    ]
    ids = answered if answered is not None else [f"c{i}" for i in range(count)]
    return messages + [{"role": "tool", "tool_call_id": i, "content": "x"} for i in ids]


def test_each_call_gets_exactly_one_result():
    """Issue 29, item 10: c1 and c2 answered by c1 and c1 was reported sound."""
    assert order_problems(one_turn(2, ["c0", "c0"])) == [
        "message 4: call 'c0' is answered a second time",
        "message 2: 2 tool call(s) but only 1 result(s)",
    ]
    assert order_problems(one_turn(2, ["c1", "c0"])) == []  # by id, in any order
    assert order_problems(one_turn(2, ["c0", "c1", "c1"])) == [
        "message 5: a tool result with no call left to answer"
    ]
    twins = one_turn(2)
    twins[2]["tool_calls"][1]["id"] = "c0"
    assert "message 2: two calls share the id 'c0'" in order_problems(twins)


def test_order_problems_is_linear_in_the_results_of_a_turn():
    """8,000 results in one turn took 4-12 s (each result sorted its turn's ids): the work
    now grows with the results, not with their square."""
    from growth import LINEAR_AT_8X, growth

    assert order_problems(one_turn(8000)) == []
    wrong = one_turn(8000, [f"x{i}" for i in range(8000)])
    problems = order_problems(wrong)
    assert len(problems) == 8000
    conversations = {n: one_turn(n, [f"x{i}" for i in range(n)]) for n in (1000, 8000)}
    assert growth(lambda n: order_problems(conversations[n]), 1000, 8000) < LINEAR_AT_8X
    assert problems[0] == (
        "message 3: tool_call_id 'x0' pairs with no call of its turn "
        "(['c0', 'c1', 'c10', 'c100', 'c1000'] and 7995 more)"
    )


def test_anthropics_results_are_checked_in_its_blocks():
    start = [{"role": "system", "content": "S"}, {"role": "user", "content": "T"}]
    asked = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "a", "input": {}},
            {"type": "tool_use", "id": "t2", "name": "b", "input": {}},
        ],
    }

    def results(*ids):
        blocks = [{"type": "tool_result", "tool_use_id": i, "content": "x"} for i in ids]
        return {"role": "user", "content": blocks}

    assert order_problems(start + [asked, results("t1", "t2")], "anthropic") == []
    assert order_problems(start + [asked, results("t1")], "anthropic") == [
        "message 2: 2 tool call(s) but only 1 result(s)"
    ]
    assert order_problems(start + [asked, results("t1", "t1")], "anthropic")[0] == (
        "message 3: call 't1' is answered a second time"
    )
    assert order_problems(start + [results("t1")], "anthropic") == [
        "message 2: a tool result with no call left to answer"
    ]
