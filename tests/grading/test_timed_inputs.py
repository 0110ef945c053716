"""What the answer's process is given when it is timed: the inputs exactly, however they were
sent (plain JSON data is used as parsed; a test run's counts or a tools value still arrives as
an object), and the same bytes for every process timed on the same inputs."""

from labkit.grading.isolated import TimedInputs, run_counts_value, time_answer

ANSWER = """
def echo(value):
    if isinstance(value, (dict, list, str, int)) or value is None:
        return value
    return [type(value).__name__, value.exit_code, value.passed]
"""

INPUTS = {
    1: [[{"text": "plain", "numbers": [1, 2.5, None, True]}], [["a", {"b": []}]]],
    2: [[{"note": "__labkit__"}]],  # a false alarm: built, and still equal
    3: [[run_counts_value(0, 4, 0)]],
}


def test_the_answer_gets_each_input_as_given_and_a_run_counts_value_as_an_object():
    timed = time_answer(ANSWER, "echo", INPUTS)
    assert timed[1][1] == [{"text": "plain", "numbers": [1, 2.5, None, True]}, ["a", {"b": []}]]
    assert timed[2][1] == [{"note": "__labkit__"}]
    assert timed[3][1] == [["Checks", 0, 4]]
    assert all(seconds >= 0 for seconds, _ in timed.values())


def test_each_size_is_encoded_once_and_says_whether_it_holds_objects():
    inputs = TimedInputs(INPUTS)
    assert inputs == INPUTS
    assert [b'"objects": false' in inputs.requests[size] for size in (1, 2, 3)] == [
        True,
        False,
        False,
    ]
    assert time_answer(ANSWER, "echo", inputs)[3][1] == [["Checks", 0, 4]]
