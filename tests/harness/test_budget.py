"""The context budget: head-and-tail cuts, and compaction that keeps the order valid.
Expected values are written out by hand."""

import json

import pytest
from conftest import conversation

from labkit.harness.budget import COMPACTED_NOTE, Budget, compact, head_and_tail
from labkit.harness.conversation import order_problems


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
