"""The context budget: head-and-tail cuts, and compaction that keeps the order valid.
Expected values are written out by hand."""

import json

import pytest
from conftest import conversation

from labkit.harness.budget import COMPACTED_NOTE, Budget, compact, head_and_tail
from labkit.harness.conversation import measure, order_problems


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


# --- every wire format --------------------------------------------------------------------

ANTHROPIC_CONVERSATION = [
    {"role": "system", "content": "S"},
    {"role": "user", "content": "TASK"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "ok"},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
            {"type": "tool_use", "id": "t2", "name": "run_tests", "input": {}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a" * 1000},
            {"type": "tool_result", "tool_use_id": "t2", "content": "b" * 1000},
        ],
    },
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t3", "name": "read_file", "input": {}}],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t3", "content": "c" * 900}],
    },
]


def test_measure_reads_anthropics_blocks():
    call = len(json.dumps({"name": "read_file", "input": {"path": "a"}}))
    calls = call + len(json.dumps({"name": "run_tests", "input": {}}))
    calls += len(json.dumps({"name": "read_file", "input": {}}))
    assert measure(ANTHROPIC_CONVERSATION, "anthropic") == {
        "system": 1,
        "user": 4,
        "assistant": 2,
        "thinking": 0,
        "tool_calls": calls,
        "tool": 2900,
        "total": 7 + calls + 2900,
    }


def test_compaction_replaces_anthropics_tool_result_blocks_in_place():
    compacted = compact(ANTHROPIC_CONVERSATION, 2300, wire_format="anthropic")
    blocks = compacted[3]["content"]
    note = json.dumps({"note": COMPACTED_NOTE.format(name="read_file", size=1000)})
    assert [block["content"] for block in blocks] == [note, "b" * 1000]  # enough after one
    assert [block["tool_use_id"] for block in blocks] == ["t1", "t2"]
    assert compacted[5] == ANTHROPIC_CONVERSATION[5]  # the last turn's result stays whole
    assert order_problems(compacted, "anthropic") == []
    assert ANTHROPIC_CONVERSATION[3]["content"][0]["content"] == "a" * 1000  # not in place
    smallest = compact(ANTHROPIC_CONVERSATION, 0, wire_format="anthropic")
    named = json.loads(smallest[3]["content"][1]["content"])["note"]
    assert "this run_tests result (1000 characters)" in named  # named by the call's id


def test_an_openai_note_names_the_tool_its_call_id_points_to():
    messages = conversation("a" * 1000, "b" * 1000)
    for message in messages:
        message.pop("tool_name", None)  # OpenAI's tool messages name the call id only
    note = json.loads(compact(messages, 10, wire_format="openai")[3]["content"])["note"]
    assert note.startswith("compacted: this read_file result (1000 characters)")


def test_a_budget_measures_and_logs_in_its_wire_format():
    budget = Budget(2000, wire_format="anthropic")
    kept = budget(ANTHROPIC_CONVERSATION)
    assert measure(kept, "anthropic")["total"] <= 2000 + 900 + 200
    assert budget.log[0]["replaced"] == 2 and repr(budget).endswith("wire_format='anthropic')")
    with pytest.raises(ValueError, match="unknown wire format 'grpc'"):
        Budget(100, wire_format="grpc")


@pytest.mark.parametrize("keep_last", [-1, -5, True, 1.0, "1", None])
def test_keep_last_is_checked_once_for_compact_and_budget_with_one_error(keep_last):
    """Issue 29, item 9: compact(keep_last=-1) raised IndexError or kept the wrong turn."""
    for make in (
        lambda: compact(conversation("a" * 100), 10, keep_last=keep_last),
        lambda: Budget(100, keep_last=keep_last),
    ):
        with pytest.raises(ValueError, match=r"^keep_last must be an int of at least 0, not "):
            make()
    with pytest.raises(ValueError, match="budget must be an int of at least 0"):
        compact(conversation("a"), -1)
