"""A request's shape as a table, walked by one function: the first place that does not fit,
named in the words an error about a request uses."""

from labkit.models.request_shape import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    STRING,
    an_object,
    array_of,
    one_of,
    required,
    shape_problem,
)

REQUEST = an_object(
    model=required(STRING, "you must provide a model parameter"),
    messages=array_of(
        an_object(
            role=required(STRING, "{where}: Input should be 'user'", values=("user",)),
            calls=array_of(an_object(id=INTEGER)),
        )
    ),
    tools=array_of(an_object("a tool object", name=required(STRING, "{owner} has no name"))),
    stream=BOOLEAN,
    keep_alive=one_of(NUMBER, STRING),
)


def test_a_body_that_fits_passes_and_absent_or_null_fields_pass():
    assert shape_problem({"model": "m"}, REQUEST) is None
    body = {"model": "m", "messages": [{"role": "user", "calls": [{"id": 1}]}], "stream": None}
    assert shape_problem(body, REQUEST) is None


def test_the_body_must_be_an_object():
    assert shape_problem([1], REQUEST) == "the request body is a JSON array, not an object"


def test_a_required_field_missing_or_empty_gets_the_apis_words():
    assert shape_problem({}, REQUEST) == "you must provide a model parameter"
    assert shape_problem({"model": ""}, REQUEST) == "you must provide a model parameter"
    body = {"model": "m", "messages": [{}]}
    assert shape_problem(body, REQUEST) == "messages[0].role: Input should be 'user'"
    body = {"model": "m", "tools": [{"type": "function"}]}
    assert shape_problem(body, REQUEST) == "tools[0] has no name"


def test_a_field_of_the_wrong_kind_is_named_with_the_kinds_it_may_have():
    assert (
        shape_problem({"model": "m", "keep_alive": []}, REQUEST)
        == "the request.keep_alive is a JSON array, not number or string"
    )
    assert (
        shape_problem({"model": "m", "stream": 1}, REQUEST)
        == "the request.stream is a JSON number, not boolean"
    )


def test_true_is_not_a_number_where_a_number_is_asked_for():
    body = {"model": "m", "messages": [{"role": "user", "calls": [{"id": True}]}]}
    assert shape_problem(body, REQUEST) == ("messages[0].calls[0].id is a JSON boolean, not number")


def test_an_item_of_the_wrong_kind_is_named_by_its_noun():
    assert shape_problem({"model": "m", "messages": [3]}, REQUEST) == (
        "messages[0] is a JSON number, not an object"
    )
    assert shape_problem({"model": "m", "tools": ["x"]}, REQUEST) == (
        "tools[0] is a JSON string, not a tool object"
    )


def test_a_value_outside_the_allowed_ones_gets_the_apis_words():
    body = {"model": "m", "messages": [{"role": "system"}]}
    assert shape_problem(body, REQUEST) == "messages[0].role: Input should be 'user'"


def test_the_first_problem_is_named_required_then_kinds_then_what_is_inside():
    body = {"messages": "x", "stream": "x"}
    assert shape_problem(body, REQUEST) == "you must provide a model parameter"
    body = {"model": "m", "messages": [3], "stream": "x"}
    assert shape_problem(body, REQUEST) == "the request.stream is a JSON string, not boolean"
    body = {"model": "m", "messages": [{"role": "user"}, 3], "tools": [1]}
    assert shape_problem(body, REQUEST) == "messages[1] is a JSON number, not an object"
