"""The harness's JSON Schema subset, held to the jsonschema package's verdicts (a second
opinion written by others) on the schemas and values tool schemas meet."""

import jsonschema
import pytest

from labkit.harness.json_schema import MAX_DEPTH, schema_problem, value_problem

OBJECT = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "pattern": "^[^/]"},
        "count": {"type": "integer", "minimum": 1, "maximum": 10},
        "ratio": {"type": "number", "exclusiveMinimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "mode": {"enum": ["r", "w"]},
        "flag": {"type": "boolean"},
        "nested": {
            "type": "object",
            "properties": {"a": {"type": ["string", "null"]}},
            "required": ["a"],
            "additionalProperties": False,
        },
        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "one": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 5}]},
        "ref": {"$ref": "#/$defs/Point"},
        "fixed": {"const": {"k": [1, True]}},
    },
    "required": ["path"],
    "additionalProperties": False,
    "$defs": {
        "Point": {"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}}
    },
}

VALUES = [
    {"path": "a.py"},
    {},
    {"path": ""},
    {"path": "/etc/passwd"},
    {"path": "a", "count": 0},
    {"path": "a", "count": 3.0},
    {"path": "a", "count": 3.5},
    {"path": "a", "count": True},
    {"path": "a", "ratio": 0},
    {"path": "a", "ratio": 0.1},
    {"path": "a", "tags": ["x", "y", "z"]},
    {"path": "a", "tags": ["x", 1]},
    {"path": "a", "mode": "x"},
    {"path": "a", "mode": "w"},
    {"path": "a", "flag": 1},
    {"path": "a", "nested": {"a": None}},
    {"path": "a", "nested": {"a": 1}},
    {"path": "a", "nested": {}},
    {"path": "a", "nested": {"a": "x", "b": 1}},
    {"path": "a", "either": 1.5},
    {"path": "a", "either": "s"},
    {"path": "a", "one": 7},
    {"path": "a", "one": 7.5},
    {"path": "a", "one": 2},
    {"path": "a", "ref": {"x": 1}},
    {"path": "a", "ref": {"y": 1}},
    {"path": "a", "fixed": {"k": [1, True]}},
    {"path": "a", "fixed": {"k": [1, 1]}},
    {"path": "a", "extra": 1},
    {"path": 3},
    ["path"],
    None,
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_values_fit_or_not_as_jsonschema_says(value):
    expected = jsonschema.Draft202012Validator(OBJECT).is_valid(value)
    problem = value_problem(value, OBJECT)
    assert (problem is None) == expected, problem


SCHEMAS = [
    ({"type": "object", "properties": {"path": {"type": "string"}}}, None),
    (
        {"type": "object", "properties": {"path": {"type": "text"}}},
        "$.properties.path.type is 'text'",
    ),
    ({"type": "object", "required": "path"}, "$.required is not a list"),
    ({"type": "object", "required": ["a", "a"]}, "names a property twice"),
    ({"type": "object", "properties": []}, "$.properties is a list, not an object of schemas"),
    ({"type": "object", "properties": {"a": 5}}, "$.properties.a is a number, not a schema"),
    ({"type": "object", "properties": {"a": {"minLength": -1}}}, "not a count"),
    ({"type": "object", "properties": {"a": {"maximum": "9"}}}, "not a number"),
    ({"type": "object", "properties": {"a": {"pattern": "("}}}, "not a regular expression"),
    ({"type": "object", "properties": {"a": {"enum": "ab"}}}, "$.properties.a.enum is not a list"),
    ({"type": "object", "properties": {"a": {"enum": []}}}, None),
    ({"type": "object", "properties": {"a": {"anyOf": {}}}}, "anyOf is not a non-empty list"),
    ({"type": "object", "properties": {"a": {"items": {"type": 42}}}}, "$.properties.a.items.type"),
    ({"type": "object", "properties": {"a": True}}, None),
]


@pytest.mark.parametrize("schema, words", SCHEMAS, ids=lambda v: str(v)[:60])
def test_a_schema_that_is_not_one_is_named_and_jsonschema_agrees(schema, words):
    problem = schema_problem(schema)
    if words is None:
        assert problem is None
        jsonschema.Draft202012Validator.check_schema(schema)
    else:
        assert words in problem
        with pytest.raises(jsonschema.SchemaError):
            jsonschema.Draft202012Validator.check_schema(schema)


def test_a_tools_input_schema_must_describe_an_object():
    assert schema_problem({"type": "string"}, object_at_top=True) == (
        "it is not an object schema ({'type': 'object', ...})"
    )
    assert schema_problem({"type": "string"}) is None


def test_nesting_is_bounded_in_schemas_and_values():
    deep = {"type": "object"}
    for _ in range(MAX_DEPTH + 5):
        deep = {"type": "object", "properties": {"a": deep}}
    assert "nested more than" in schema_problem(deep)
    value = {}
    for _ in range(MAX_DEPTH + 5):
        value = {"a": value}
    assert "nested more than" in value_problem(value, deep)
