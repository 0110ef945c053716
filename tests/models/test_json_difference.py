"""Where two JSON values first part: compared as JSON compares them, named by path, each side
cut to a readable length around the difference."""

from labkit.harness.frozen import freeze
from labkit.models.json_difference import Place, where_different


def test_values_equal_as_json_have_no_difference():
    assert where_different({"a": [1, {"b": "x"}]}, freeze({"a": [1.0, {"b": "x"}]})) is None
    assert where_different({"b": 1, "a": 2}, {"a": 2, "b": 1}) is None  # key order is no matter


def test_true_is_not_one_in_json():
    assert where_different({"n": 1}, {"n": True}) == Place("n", "1", "true")


def test_a_key_one_side_lacks_and_lists_of_other_lengths():
    assert where_different({"a": 1}, {"a": 1, "b": [2]}) == Place("b", "nothing", "[2]")
    assert where_different({"a": [1]}, {"a": [1, 2]}) == Place("a", "1 item", "2 items")


def test_the_role_is_compared_first_then_the_keys_in_order():
    first = {"content": "x", "role": "user", "name": "a"}
    other = {"content": "y", "role": "tool", "name": "b"}
    assert where_different(first, other) == Place("role, character 0", '"user"', '"tool"')
    assert where_different({**first, "role": "tool"}, other).path == "content, character 0"


def test_a_string_is_shown_around_its_first_different_character():
    first, other = "x" * 100 + "A" + "y" * 100, "x" * 100 + "B" + "y" * 100
    place = where_different({"text": first}, {"text": other})
    assert place.path == "text, character 100"
    assert place.first == '…"' + "x" * 30 + "A" + "y" * 49 + '"…'
    assert place.other == '…"' + "x" * 30 + "B" + "y" * 49 + '"…'


def test_a_long_value_is_cut_and_the_top_is_named():
    place = where_different([1] * 100, "text")
    assert place.where == "the top" and place.other == '"text"'
    assert place.first == ("[" + "1, " * 30)[:80] + "…"
