"""What a request body must look like to an API, declared as a table, and the one function that
walks it.

Each API's replay server declares the chat request it reads as a :class:`Shape`: the JSON
kinds a value may have and, for an object, the fields the API reads (in the order it
checks them), for an array the shape of its items. :func:`shape_problem` walks a body
against it and names the first place that does not fit, in the words an error about a
request uses (``messages[0].role is a JSON number, not string``), so a client learns what
it sent wrong instead of getting a reply built from nonsense. A new API's server declares
its own table; nothing here changes.

Within an object, the required fields are looked for first, then every field's kind, then
what is inside each field, each in the table's order. An absent or null field passes,
unless it is required.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

#: How an error names each JSON kind, by the Python type ``json`` reads it as.
KIND_NAMES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
    type(None): "null",
}


def json_kind(value) -> str:
    """A JSON value's kind, as an error about a request names it."""
    return KIND_NAMES.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class Shape:
    """What one value of a request must be.

    ``kinds``: the Python types of the JSON kinds allowed (``bool`` only where named, though
    Python counts it as an ``int``). ``fields``: for an object, the shape of each field the
    API reads. ``items``: for an array, the shape of each item. ``values``: the only values
    allowed, when only some are. ``required``: the field must be there (not null, not empty
    text). ``refusal``: the API's own words for a required field that is missing or a value
    not among ``values`` (``{where}``: the field's place, ``{owner}``: its object's).
    ``noun``: how an error names an item of this shape (``"a tool object"``).
    """

    kinds: tuple
    fields: dict = field(default_factory=dict)
    items: Shape | None = None
    values: tuple = ()
    required: bool = False
    refusal: str = "{where}: Field required"
    noun: str = "an object"


STRING = Shape((str,))
INTEGER = Shape((int,))
NUMBER = Shape((int, float))
BOOLEAN = Shape((bool,))
OBJECT = Shape((dict,))
ARRAY = Shape((list,))


def one_of(*shapes: Shape) -> Shape:
    """A value of any of these kinds (what is inside is read from the first that says)."""
    kinds = tuple(kind for shape in shapes for kind in shape.kinds)
    inner = next((s for s in shapes if s.fields or s.items), Shape(()))
    return Shape(kinds, fields=inner.fields, items=inner.items)


def an_object(noun: str = "an object", **fields: Shape) -> Shape:
    """An object whose fields, in this order, have these shapes."""
    return Shape((dict,), fields=fields, noun=noun)


def array_of(item: Shape) -> Shape:
    """An array whose every item has the shape ``item``."""
    return Shape((list,), items=item)


def required(shape: Shape, refusal: str | None = None, *, values: tuple = ()) -> Shape:
    """``shape``, for a field that must be there; ``refusal``: the API's words if it is not."""
    return replace(
        shape, required=True, values=values or shape.values, refusal=refusal or shape.refusal
    )


def shape_problem(body, shape: Shape) -> str | None:
    """Say where a request body does not fit ``shape``, or return None when it does."""
    if not isinstance(body, dict):
        return f"the request body is a JSON {json_kind(body)}, not an object"
    return _object_problem(body, shape, "")


def _object_problem(value: dict, shape: Shape, place: str) -> str | None:
    """The first problem of an object (``place``: where it is; "" for the request itself)."""
    owner = place or "the request"
    for name, inner in shape.fields.items():
        item = value.get(name)
        if inner.required and (item is None or item == ""):
            return inner.refusal.format(where=_join(place, name), owner=owner)
    for name, inner in shape.fields.items():
        item = value.get(name)
        if item is None:
            continue
        if not _is_kind(item, inner.kinds):
            return f"{owner}.{name} is a JSON {json_kind(item)}, not {_wanted(inner.kinds)}"
        if inner.values and item not in inner.values:
            return inner.refusal.format(where=_join(place, name), owner=owner)
    for name, inner in shape.fields.items():
        problem = _inside_problem(value.get(name), inner, _join(place, name))
        if problem:
            return problem
    return None


def _inside_problem(value, shape: Shape, place: str) -> str | None:
    """The first problem inside a value whose own kind is right (or that is absent)."""
    if isinstance(value, dict) and shape.fields:
        return _object_problem(value, shape, place)
    if isinstance(value, list) and shape.items is not None:
        item_shape = shape.items
        for index, item in enumerate(value):
            where = f"{place}[{index}]"
            if not _is_kind(item, item_shape.kinds):
                return f"{where} is a JSON {json_kind(item)}, not {item_shape.noun}"
            problem = _inside_problem(item, item_shape, where)
            if problem:
                return problem
    return None


def _is_kind(value, kinds: tuple) -> bool:
    return isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))


def _wanted(kinds: tuple) -> str:
    return " or ".join(dict.fromkeys(KIND_NAMES[kind] for kind in kinds))


def _join(place: str, name: str) -> str:
    return f"{place}.{name}" if place else name
