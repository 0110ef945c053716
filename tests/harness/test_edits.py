"""The edit rule: exactly once (overlapping occurrences counted), line endings and encoding
kept, and an error that says how many, where, and what to do."""

import pytest

from labkit.harness.edits import (
    EmptyOld,
    NotFound,
    NotUnique,
    apply_edit,
    closest_lines,
    decode,
    encode,
    newline_of,
)


def test_one_occurrence_is_replaced_and_nothing_else_changes():
    assert apply_edit("a = 1\nb = 2\n", "b = 2", "b = 3") == "a = 1\nb = 3\n"


def test_an_absent_text_is_not_found_and_the_closest_lines_are_named():
    text = "def f(x):\n    return x\n\n\ndef g(y):\n    return y * 2\n"
    with pytest.raises(NotFound) as raised:
        apply_edit(text, "def g(y):\n    return y*2\n", "")
    assert raised.value.closest == (5, 6)
    assert "closest lines are 5-6" in str(raised.value)
    assert "nothing was changed" in str(raised.value)


def test_nothing_close_gives_no_lines_but_still_says_what_to_do():
    with pytest.raises(NotFound) as raised:
        apply_edit("alpha\nbeta\n", "completely different text", "x")
    assert raised.value.closest is None and "copy the text exactly" in str(raised.value)


def test_two_occurrences_are_refused_with_their_count_and_lines():
    text = "x = 1\ny = 2\nx = 1\n"
    with pytest.raises(NotUnique) as raised:
        apply_edit(text, "x = 1", "x = 0")
    assert (raised.value.count, raised.value.lines) == (2, [1, 3])
    assert "occurs 2 times" in str(raised.value) and "lines 1, 3" in str(raised.value)
    assert "replace_all" in str(raised.value)
    assert apply_edit(text, "x = 1", "x = 0", True) == "x = 0\ny = 2\nx = 0\n"


def test_overlapping_occurrences_count_so_aa_in_aaa_is_ambiguous_even_for_replace_all():
    with pytest.raises(NotUnique) as raised:
        apply_edit("aaa", "aa", "b")
    assert raised.value.count == 2 and raised.value.overlapping
    with pytest.raises(NotUnique, match="overlap"):
        apply_edit("aaa", "aa", "b", True)


def test_an_empty_old_text_is_refused():
    with pytest.raises(EmptyOld):
        apply_edit("anything", "", "x")


def test_crlf_text_keeps_crlf_where_the_edit_writes_newlines():
    text = "one\r\ntwo\r\nthree\r\n"
    assert newline_of(text) == "\r\n" and newline_of("a\nb\r\n") == "\n"
    assert apply_edit(text, "two\nthree\n", "2\n3\n") == "one\r\n2\r\n3\r\n"
    assert apply_edit(text, "two\r\n", "zwei\r\n") == "one\r\nzwei\r\nthree\r\n"


def test_unicode_is_counted_in_characters():
    assert apply_edit("café — 😀\n", "😀", "ok") == "café — ok\n"


def test_closest_lines_uses_a_window_as_long_as_the_missing_text():
    assert closest_lines("a\nb\nc\nd\n", "c\nd") == (3, 4)
    assert closest_lines("", "x") is None


@pytest.mark.parametrize(
    "data,encoding",
    [
        (b"plain\n", "utf-8"),
        ("\ufeffwith a mark\r\n".encode(), "utf-8"),
        ("\ufeffsixteen\n".encode("utf-16-le"), "utf-16-le"),
        ("\ufeffsixteen\n".encode("utf-16-be"), "utf-16-be"),
        (b"caf\xe9\n", "latin-1"),
    ],
)
def test_a_files_bytes_come_back_unchanged_through_decode_and_encode(data, encoding):
    text, found = decode(data)
    assert found == encoding and encode(text, found) == data


def test_a_character_the_encoding_cannot_hold_is_an_error_not_a_question_mark():
    with pytest.raises(ValueError, match="latin-1"):
        encode("😀", "latin-1")
