"""JSON Schema, the part tool schemas use: is a schema one, and does a value fit it.

A tool from another process (an MCP server) comes with schemas written by someone else:
its ``inputSchema`` goes to the model, its ``outputSchema`` says what its results hold.
The harness checks both itself, with the standard library only (the MCP SDK checks
neither an input schema nor, on the client's side, a result unless asked):

- ``schema_problem(schema)``: what makes ``schema`` unusable, or None. The keywords tool
  schemas use are checked for their kind (``type`` names JSON types, ``properties`` maps
  names to schemas, ``required`` lists names, bounds are numbers, ``pattern`` compiles...),
  at every level, to ``MAX_DEPTH``; a keyword JSON Schema has but this module does not
  know is left alone, as JSON Schema leaves it.
- ``value_problem(value, schema)``: where and why ``value`` does not fit, or None, for the
  keywords listed in ``CHECKED`` (``$ref`` only within the schema, ``#/...``). A keyword
  outside that list constrains nothing here: this is a subset, and says so. A test holds
  both to the ``jsonschema`` package's verdicts on the cases the course meets.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .words import json_kind

JSON_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
MAX_DEPTH = 32  # levels of nested schemas; tool schemas need a handful
#: The keywords ``value_problem`` checks a value against.
CHECKED = (
    "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "prefixItems", "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "anyOf", "oneOf", "allOf", "not", "$ref",
)  # fmt: skip
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMAS = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then")
_COUNTS = ("minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties")
_NUMBERS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


def schema_problem(schema: Any, *, object_at_top: bool = False) -> str | None:
    """What makes ``schema`` unusable, or None. ``object_at_top``: it must describe a JSON
    object (``"type": "object"``), as a tool's ``inputSchema`` must."""
    if object_at_top and not (isinstance(schema, dict) and schema.get("type") == "object"):
        return "it is not an object schema ({'type': 'object', ...})"
    return _problem(schema, "$", 0)


def _problem(schema: Any, where: str, depth: int) -> str | None:
    if isinstance(schema, bool):
        return None  # true: anything; false: nothing
    if not isinstance(schema, dict):
        return f"{where} is {json_kind(schema)}, not a schema (an object)"
    if depth > MAX_DEPTH:
        return f"{where}: nested more than {MAX_DEPTH} levels"
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "type" in schema and (not kinds or not all(k in JSON_TYPES for k in kinds)):
        return f"{where}.type is {kind!r}, not one of {list(JSON_TYPES)}"
    required = schema.get("required", [])
    if not (isinstance(required, list) and all(isinstance(n, str) for n in required)):
        return f"{where}.required is not a list of property names"
    if len(set(required)) != len(required):
        return f"{where}.required names a property twice"
    for key in _COUNTS:
        count = schema.get(key, 0)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            return f"{where}.{key} is {count!r}, not a count (an integer, 0 or more)"
    for key in _NUMBERS:
        number = schema.get(key, 0)
        if isinstance(number, bool) or not isinstance(number, int | float):
            return f"{where}.{key} is {json_kind(number)}, not a number"
    if "enum" in schema and not isinstance(schema["enum"], list):
        return f"{where}.enum is not a list"
    if "pattern" in schema:
        try:
            re.compile(schema["pattern"])
        except (re.error, TypeError) as exc:
            return f"{where}.pattern is not a regular expression ({exc})"
    if "$ref" in schema and not isinstance(schema["$ref"], str):
        return f"{where}.$ref is not text"
    children = [(f"{where}.{key}", schema[key]) for key in _SCHEMAS if key in schema]
    for key in _SCHEMA_MAPS:
        if key in schema:
            if not isinstance(schema[key], dict):
                return f"{where}.{key} is {json_kind(schema[key])}, not an object of schemas"
            children += [(f"{where}.{key}.{name}", sub) for name, sub in schema[key].items()]
    for key in _SCHEMA_LISTS:
        if key in schema:
            if not isinstance(schema[key], list) or not schema[key]:
                return f"{where}.{key} is not a non-empty list of schemas"
            children += [(f"{where}.{key}[{n}]", sub) for n, sub in enumerate(schema[key])]
    for place, child in children:
        problem = _problem(child, place, depth + 1)
        if problem:
            return problem
    return None


def value_problem(value: Any, schema: Any) -> str | None:
    """Where and why ``value`` does not fit ``schema`` (a usable one), or None."""
    return _misfit(value, schema, schema, "$", 0)


def _misfit(value: Any, schema: Any, root: Any, where: str, depth: int) -> str | None:
    if schema is True:
        return None
    if schema is False:
        return f"{where}: nothing is allowed here"
    if depth > MAX_DEPTH:
        return f"{where}: nested more than {MAX_DEPTH} levels"
    if "$ref" in schema:
        target = _resolve(root, schema["$ref"])
        if target is None:
            return f"{where}: the schema's $ref {schema['$ref']!r} points nowhere in it"
        problem = _misfit(value, target, root, where, depth + 1)
        if problem:
            return problem
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_is(value, k) for k in kinds):
            return f"{where}: {_shown(value)} is not of type {' or '.join(map(repr, kinds))}"
    if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
        return f"{where}: {_shown(value)} is not one of {_shown(schema['enum'])}"
    if "const" in schema and not _same(value, schema["const"]):
        return f"{where}: {_shown(value)} is not {_shown(schema['const'])}"
    for check in (_object_misfit, _array_misfit, _scalar_misfit, _combined_misfit):
        problem = check(value, schema, root, where, depth)
        if problem:
            return problem
    return None


def _object_misfit(value, schema, root, where, depth) -> str | None:
    if not isinstance(value, dict):
        return None
    for name in schema.get("required", []):
        if name not in value:
            return f"{where}: the required property {name!r} is missing"
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        sub = properties.get(name, extra)
        problem = _misfit(item, sub, root, f"{where}.{name}", depth + 1)
        if problem:
            return (
                f"{where}: the property {name!r} is not allowed"
                if sub is False and name not in properties
                else problem
            )
    return None


def _array_misfit(value, schema, root, where, depth) -> str | None:
    if not isinstance(value, list):
        return None
    if len(value) < schema.get("minItems", 0):
        return f"{where}: {len(value)} items, fewer than {schema['minItems']}"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        return f"{where}: {len(value)} items, more than {schema['maxItems']}"
    prefix = schema.get("prefixItems", [])
    for index, item in enumerate(value):
        sub = prefix[index] if index < len(prefix) else schema.get("items", True)
        problem = _misfit(item, sub, root, f"{where}[{index}]", depth + 1)
        if problem:
            return problem
    return None


def _scalar_misfit(value, schema, root, where, depth) -> str | None:
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return f"{where}: {_shown(value)} is shorter than {schema['minLength']}"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{where}: {_shown(value)} is longer than {schema['maxLength']}"
        if "pattern" in schema and not re.search(schema["pattern"], value):
            return f"{where}: {_shown(value)} does not match {schema['pattern']!r}"
    elif _is(value, "number"):
        for key, fits in (
            ("minimum", lambda bound: value >= bound),
            ("maximum", lambda bound: value <= bound),
            ("exclusiveMinimum", lambda bound: value > bound),
            ("exclusiveMaximum", lambda bound: value < bound),
        ):
            if key in schema and not fits(schema[key]):
                return f"{where}: {value!r} breaks {key} {schema[key]!r}"
    return None


def _combined_misfit(value, schema, root, where, depth) -> str | None:
    fits = {
        key: [_misfit(value, sub, root, where, depth + 1) is None for sub in schema[key]]
        for key in ("anyOf", "oneOf", "allOf")
        if key in schema
    }
    if "anyOf" in fits and not any(fits["anyOf"]):
        return f"{where}: {_shown(value)} fits none of anyOf"
    if "oneOf" in fits and sum(fits["oneOf"]) != 1:
        return f"{where}: {_shown(value)} fits {sum(fits['oneOf'])} of oneOf, not exactly one"
    if "allOf" in fits and not all(fits["allOf"]):
        return f"{where}: {_shown(value)} does not fit all of allOf"
    if "not" in schema and _misfit(value, schema["not"], root, where, depth + 1) is None:
        return f"{where}: {_shown(value)} fits what 'not' excludes"
    return None


def _resolve(root: Any, ref: str) -> Any:
    """The part of ``root`` a local ``$ref`` (``#/$defs/Name``) points to, or None."""
    if not ref.startswith("#"):
        return None
    target = root
    for part in filter(None, ref[1:].split("/")):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or part not in target:
            return None
        target = target[part]
    return target if isinstance(target, dict | bool) else None


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return (type(value) is int) or (type(value) is float and value.is_integer())
    if kind == "number":
        return type(value) in (int, float) and math.isfinite(value)
    python = {"object": dict, "array": list, "string": str, "boolean": bool}.get(kind)
    return value is None if kind == "null" else isinstance(value, python) and (
        kind == "boolean" or not isinstance(value, bool)
    )  # fmt: skip


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``True`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b or _is(a, "number") and _is(b, "number") and a == b


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
