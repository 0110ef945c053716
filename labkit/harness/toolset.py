"""A tool in one place: its name, what the model is told about it, and the code that runs it.

A ``Tool`` record holds all three: the name, the description and the JSON Schema of its
arguments (together, the schema sent to the model with each request), and the handler
that runs a call. The ``@tool(...)`` decorator makes one from a method, named after it::

    class RepoTools(Toolset):
        @tool(description="Read one file...", parameters={...}, read_only=True)
        def read_file(self, path, offset=None, limit=None) -> dict: ...

A ``Toolset`` subclass collects its records, its base classes' first, in the order they
are written: ``schemas`` is what the loop offers the model, and ``invoke(name,
arguments)`` runs one call. ``invoke`` is the only way in: a name is looked up among the
records (never as an attribute), and the arguments are checked against the record's
schema here, in one place, before the handler sees them: a JSON object, no argument the
schema does not name, every one it requires, and a string wherever it says "string".
What else a schema says (an enum, a number's bounds, an array's items) its handler
checks, and says in its own words what to send instead. A refusal is a ``ValueError``
or ``TypeError`` whose text the model reads. ``read_only`` marks a tool that changes
nothing, so a loop may run several such calls at once (``is_read_only``, lesson 10).

``Joined`` offers several toolsets as one (the toolkit, the skills, the plan, the
subagents of lesson 10): their schemas in order, each call sent to the toolset that has its
name. ``Only`` offers some of a toolset's tools and refuses the others (a subagent's).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: What runs a call: the toolset, then the call's arguments as keywords; returns the result.
Handler = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Tool:
    """One tool: the schema the model reads (``name``, ``description``, ``parameters``),
    the ``handler`` that runs a call, and whether it only reads (``read_only``).

    ``takes`` is how a refusal of wrong arguments names what the tool takes; by default
    the sorted list of its parameters (``['new', 'old']``), or "no arguments".
    """

    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments: an object, no extra properties
    handler: Handler
    read_only: bool = False
    takes: str | None = None

    def __post_init__(self) -> None:
        parameters = self.parameters
        if parameters.get("type") != "object" or parameters.get("additionalProperties", True):
            raise ValueError(
                f"tool {self.name!r}: its parameters must be a JSON Schema of type 'object' "
                "with 'additionalProperties': False (invoke refuses any argument not named)"
            )
        unknown = set(parameters.get("required", [])) - set(parameters["properties"])
        if unknown:
            raise ValueError(
                f"tool {self.name!r} requires {sorted(unknown)}, not among its properties"
            )

    @property
    def schema(self) -> dict[str, Any]:
        """What the model is sent: ``{"type": "function", "function": {...}}``."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def __get__(self, toolset: object, owner: type | None = None) -> Any:
        """Read from a toolset, a record is its handler as a method: ``tools.read_file(...)``
        runs it (unchecked, as Python calls it); read from the class, it is the record."""
        return self if toolset is None else self.handler.__get__(toolset, owner)


def tool(
    *,
    description: str,
    parameters: dict[str, Any],
    read_only: bool = False,
    takes: str | None = None,
) -> Callable[[Handler], Tool]:
    """Make the decorated method a ``Tool`` of its ``Toolset``, named after the method."""

    def record(handler: Handler) -> Tool:
        return Tool(handler.__name__, description, parameters, handler, read_only, takes)

    return record


class Toolset:
    """Tools built from ``Tool`` records: ``schemas`` to offer, ``invoke`` to run one.

    A subclass's records are its base classes' followed by those it defines, in order.
    """

    tools: tuple[Tool, ...] = ()
    schemas: list[dict[str, Any]] = []
    _named: dict[str, Tool] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        added = tuple(value for value in vars(cls).values() if isinstance(value, Tool))
        cls.tools = cls.tools + added
        cls.schemas = [record.schema for record in cls.tools]
        cls._named = {record.name: record for record in cls.tools}
        if len(cls._named) != len(cls.tools):
            raise ValueError(f"{cls.__name__} has two tools of the same name")

    def invoke(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run the tool called ``name`` with a dict of ``arguments`` and return its result."""
        record = self._named.get(name) if isinstance(name, str) else None
        if record is None:
            raise ValueError(f"unknown tool {shown(name)}; the tools are: {', '.join(self._named)}")
        check_arguments(record, arguments)
        return record.handler(self, **arguments)

    def is_read_only(self, name: str) -> bool:
        """Whether a call of the tool ``name`` changes nothing (False for an unknown name)."""
        record = self._named.get(name) if isinstance(name, str) else None
        return record is not None and record.read_only


class Joined:
    """Several toolsets offered as one: ``schemas`` theirs, in the order given; ``invoke``
    sends a call to the toolset that offers its name. Two tools of one name are refused."""

    def __init__(self, *parts: Any) -> None:
        self.parts = parts
        self.schemas = [schema for part in parts for schema in part.schemas]
        self._owner = {}
        for part in parts:
            for schema in part.schemas:
                name = schema["function"]["name"]
                if name in self._owner:
                    raise ValueError(f"two of the joined toolsets offer a tool named {name!r}")
                self._owner[name] = part

    def invoke(self, name: str, arguments: dict[str, Any]) -> Any:
        part = self._owner.get(name) if isinstance(name, str) else None
        if part is None:
            raise ValueError(f"unknown tool {shown(name)}; the tools are: {', '.join(self._owner)}")
        return part.invoke(name, arguments)

    def is_read_only(self, name: str) -> bool:
        part = self._owner.get(name) if isinstance(name, str) else None
        return part is not None and bool(getattr(part, "is_read_only", lambda _: False)(name))


class Only(Joined):
    """The tools ``names`` of ``tools``, and no other: the rest are neither offered nor run."""

    def __init__(self, tools: Any, names: Any) -> None:
        offered = {schema["function"]["name"] for schema in tools.schemas}
        unknown = [name for name in names if name not in offered]
        if unknown:
            raise ValueError(f"no tool named {', '.join(map(repr, unknown))} to offer")
        self.parts = (tools,)
        self.schemas = [s for s in tools.schemas if s["function"]["name"] in set(names)]
        self._owner = {schema["function"]["name"]: tools for schema in self.schemas}


def check_arguments(record: Tool, arguments: object) -> None:
    """Refuse ``arguments`` that do not fit ``record``'s schema (``TypeError``, with what
    the tool takes): not a JSON object, an argument it does not name, one it requires
    missing, or a value that is not a string where the schema says "string"."""
    name = record.name
    if not isinstance(arguments, dict):
        raise TypeError(
            f"arguments for {name} must be a JSON object, not {type(arguments).__name__}"
        )
    properties = record.parameters["properties"]
    extra = set(arguments) - set(properties)
    missing = set(record.parameters.get("required", [])) - set(arguments)
    if extra or missing:
        problems = [
            f"unexpected {shown(sorted(extra))}" if extra else "",
            f"missing {sorted(missing)}" if missing else "",
        ]
        takes = record.takes or sorted(properties) or "no arguments"
        raise TypeError(f"{name} takes {takes}: " + "; ".join(p for p in problems if p))
    for key, value in arguments.items():
        if properties[key].get("type") == "string" and not isinstance(value, str):
            raise TypeError(f"{name}: {shown(key)} must be a string, not {type(value).__name__}")


def shown(value: object, limit: int = 200) -> str:
    """``repr(value)``, cut to ``limit`` characters: an error text never echoes 100 kB back."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
