"""The context budget: measuring, head-and-tail cuts, compaction that keeps the order valid,
and numbered slices of a file. Expected values are written out by hand."""

import json

import pytest

from labkit.harness.budget import (
    COMPACTED_NOTE,
    Budget,
    compact,
    head_and_tail,
    measure,
    numbered_lines,
    order_problems,
    request_sizes,
)


def test_short_text_is_returned_unchanged():
    assert head_and_tail("abcdef", 6) == "abcdef"
    assert head_and_tail("", 40) == ""


def test_a_long_text_keeps_both_ends_and_says_how_much_was_cut():
    text = "A" * 50 + "B" * 900 + "C" * 50
    cut = head_and_tail(text, 131)
    # the widest marker this cut could need (for 1,000) is 31 long: 100 of room, 50 a side
    assert cut == "A" * 50 + "\n[labkit: 900 characters cut]\n" + "C" * 50


def test_an_odd_room_gives_the_extra_character_to_the_head():
    cut = head_and_tail("0123456789" * 10, 35)  # marker for 100 chars: 30 long, room 5
    assert cut == "012\n[labkit: 95 characters cut]\n89"


def test_a_second_cut_drops_an_earlier_marker_whole():
    once = head_and_tail("x" * 200 + "y" * 200, 100)
    assert once == "x" * 35 + "\n[labkit: 330 characters cut]\n" + "y" * 35
    assert head_and_tail(once, 95) == "x" * 33 + "\n[labkit: 35 characters cut]\n" + "y" * 32


OLD = "\n[labkit: 7 bytes cut]\n"  # 23 characters


def test_a_cut_that_would_start_inside_a_marker_starts_before_it():
    text = "a" * 10 + OLD + "b" * 200  # 233 long; the plain cut would keep 15 of each end
    assert head_and_tail(text, 60) == "a" * 10 + "\n[labkit: 208 characters cut]\n" + "b" * 15


def test_a_cut_that_would_end_inside_a_marker_ends_after_it():
    text = "b" * 200 + OLD + "a" * 10
    assert head_and_tail(text, 60) == "b" * 15 + "\n[labkit: 208 characters cut]\n" + "a" * 10


def test_a_limit_smaller_than_the_marker_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="too small"):
        head_and_tail("x" * 100, 20)
    with pytest.raises(TypeError, match="int"):
        head_and_tail("x" * 100, 50.0)


def test_unicode_is_cut_by_characters_not_bytes():
    text = "é" * 40 + "—" * 40 + "😀" * 40
    cut = head_and_tail(text, 60)
    assert cut == "é" * 15 + "\n[labkit: 90 characters cut]\n" + "😀" * 15


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


def conversation(*results):
    """system, user, then one assistant call and its result per item of ``results``."""
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "TASK"}]
    for number, result in enumerate(results, start=1):
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": f"call_{number}", "function": {"name": "read_file", "arguments": {}}}
                ],
            }
        )
        messages.append(
            {
                "role": "tool",
                "tool_name": "read_file",
                "tool_call_id": f"call_{number}",
                "content": result,
            }
        )
    return messages


def test_compaction_replaces_the_oldest_results_first_and_keeps_the_newest():
    messages = conversation("a" * 1000, "b" * 1000, "c" * 1000)
    compacted = compact(messages, 2500)
    note = json.dumps({"note": COMPACTED_NOTE.format(name="read_file", size=1000)})
    assert [m.get("content") for m in compacted] == [
        "S",
        "TASK",
        "",
        note,
        "",
        "b" * 1000,
        "",
        "c" * 1000,
    ]
    assert messages[3]["content"] == "a" * 1000, "the input was changed in place"


def test_compaction_keeps_every_message_in_place_with_its_id():
    messages = conversation("a" * 1000, "b" * 1000, "c" * 1000)
    compacted = compact(messages, 10)  # cannot be met: everything but the newest goes
    assert [(m["role"], m.get("tool_call_id")) for m in compacted] == [
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("tool", "call_1"),
        ("assistant", None),
        ("tool", "call_2"),
        ("assistant", None),
        ("tool", "call_3"),
    ]
    assert compacted[-1]["content"] == "c" * 1000
    assert "compacted" in compacted[3]["content"] and "compacted" in compacted[5]["content"]
    assert order_problems(compacted) == []


def test_compaction_within_budget_changes_nothing_and_is_idempotent():
    messages = conversation("a" * 100, "b" * 100)
    assert compact(messages, 10_000) == messages
    once = compact(conversation("a" * 1000, "b" * 1000, "c" * 1000), 10)
    assert compact(once, 10) == once


def test_keep_last_protects_that_many_turns():
    messages = conversation("a" * 1000, "b" * 1000, "c" * 1000)
    kept = compact(messages, 10, keep_last=2)
    assert [m["content"][:1] for m in kept if m["role"] == "tool"] == ["{", "b", "c"]
    assert [
        m["content"][:1] for m in compact(messages, 10, keep_last=0) if m["role"] == "tool"
    ] == ["{", "{", "{"]


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


def test_numbered_lines_gives_a_slice_with_line_numbers_and_the_total():
    text = "".join(f"line {n}\n" for n in range(1, 13))
    assert numbered_lines("f.py", text, offset=9, limit=3) == {
        "path": "f.py",
        "first_line": 9,
        "last_line": 11,
        "total_lines": 12,
        "content": " 9\tline 9\n10\tline 10\n11\tline 11\n",
    }
    assert numbered_lines("f.py", text, offset=12, limit=50)["content"] == "12\tline 12\n"


def test_numbered_lines_refuses_bad_offsets_with_what_to_do():
    text = "a\nb\n"
    with pytest.raises(ValueError, match="past the end: f.py has 2 lines"):
        numbered_lines("f.py", text, offset=3)
    with pytest.raises(ValueError, match="at least 1"):
        numbered_lines("f.py", text, offset=0)
    with pytest.raises(TypeError, match="integer"):
        numbered_lines("f.py", text, limit="5")
    with pytest.raises(ValueError, match="at most 200"):
        numbered_lines("f.py", text, limit=10_000)
    assert numbered_lines("empty.py", "")["content"] == ""


def test_an_earlier_marker_inside_the_kept_head_is_kept_as_it_was():
    text = "a" * 5 + OLD + "b" * 300  # 328 long: keep 35 a side, cut 258
    assert head_and_tail(text, 100) == (
        "a" * 5 + OLD + "b" * 7 + "\n[labkit: 258 characters cut]\n" + "b" * 35
    )


def test_the_budget_hook_compacts_only_once_the_budget_is_passed_and_logs_each_request():
    budget = Budget(2500)
    small = conversation("a" * 1000)
    assert budget(small) == small  # within budget: the same messages
    big = conversation("a" * 1000, "b" * 1000, "c" * 1000)
    kept = budget(big)
    assert kept == compact(big, 2500) and order_problems(kept) == []
    assert kept[5]["content"] == "b" * 1000 and "compacted" in kept[3]["content"]
    again = budget(kept)  # what the loop sends next time: nothing more to replace
    assert again == kept
    call = len(json.dumps({"name": "read_file", "arguments": {}}))  # each turn's tool call
    note = len(json.dumps({"note": COMPACTED_NOTE.format(name="read_file", size=1000)}))
    after = 5 + 3 * call + note + 2000
    assert budget.log == [
        {"request": 1, "before": 5 + call + 1000, "after": 5 + call + 1000, "replaced": 0},
        {"request": 2, "before": 5 + 3 * call + 3000, "after": after, "replaced": 1},
        {"request": 3, "before": after, "after": after, "replaced": 0},
    ]
    assert big[3]["content"] == "a" * 1000  # the loop's own list is left as it was


@pytest.mark.parametrize("arguments", [(0,), (True,), ("9000",), (100, -1), (100, 1.0)])
def test_a_budget_is_whole_numbers(arguments):
    max_chars, *rest = arguments
    with pytest.raises(ValueError, match="must be an int"):
        Budget(max_chars, **({"keep_last": rest[0]} if rest else {}))


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
