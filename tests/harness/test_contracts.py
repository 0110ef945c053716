"""The harness's contracts hold: every model and every set of tools has the shape the loop
needs, every event the loop yields is exactly what its TypedDict describes, and the
harness imports nothing but the standard library and itself."""

import ast
import inspect
import sys
import types
import typing
from pathlib import Path

import pytest
from conftest import FakeTools, ListChat, call, final_text_turn, tool_turn
from lesson10_tools import Notes

from labkit import failure_cases, load_recording, run_case
from labkit.harness import EVENT_TYPES, FORMATS, STOP_REASONS, Chat, RepoTools, Tools, agent_events
from labkit.harness.contracts import ToolsFailed
from labkit.harness.gate import Gate, Policy
from labkit.harness.hooks import HookSet, PythonHook
from labkit.harness.shell import ShellTools
from labkit.harness.subagents import Subagents
from labkit.harness.toolset import Joined
from labkit.models import AnthropicModel, OllamaModel, OpenAIModel, ReplayModel, ScriptedChat
from labkit.recording.attempt import CapturingChat

HARNESS = Path(agent_events.__code__.co_filename).parent


def chats(tmp_path):
    repair = load_recording("repair.json")
    return [
        OllamaModel(host="http://127.0.0.1:9"),
        ReplayModel(repair),
        ScriptedChat([]),
        CapturingChat(ReplayModel(repair)),
        ListChat(),
        lambda messages, tool_schemas: iter(()),
        OpenAIModel("m", base_url="http://127.0.0.1:9/v1"),
        AnthropicModel("m", base_url="http://127.0.0.1:9"),
    ]


@pytest.mark.parametrize("index", range(8))
def test_every_model_is_a_chat_taking_messages_and_tool_schemas(index, tmp_path):
    chat = chats(tmp_path)[index]
    assert isinstance(chat, Chat)
    parameters = list(inspect.signature(chat).parameters)
    assert parameters == ["messages", "tool_schemas"], (chat, parameters)


@pytest.mark.parametrize("make", [RepoTools, ShellTools, lambda root: FakeTools(), "mcp"])
def test_every_toolset_is_tools_with_schemas_and_invoke(make, tmp_path):
    if make == "mcp":
        from labkit.harness.mcp_tools import MCPTools
        from labkit.lessons.faulty_mcp_server import faulty_server_command

        with MCPTools(faulty_server_command("lies"), cwd=tmp_path) as tools:
            assert isinstance(tools, Tools) and tools.schemas
        return
    tools = make(tmp_path)
    assert isinstance(tools, Tools)
    assert list(inspect.signature(tools.invoke).parameters) == ["name", "arguments"]
    for schema in tools.schemas:
        assert schema["type"] == "function" and isinstance(schema["function"]["name"], str)


def test_something_without_invoke_is_not_tools_and_a_non_callable_is_not_a_chat():
    assert not isinstance(object(), Tools) and not isinstance("model", Chat)


def conforms(event: dict) -> str | None:
    """Say how an event differs from its TypedDict, or return None."""
    kind = EVENT_TYPES.get(event.get("type"))
    if kind is None:
        return f"unknown event type {event.get('type')!r}"
    hints = typing.get_type_hints(kind)
    required, optional = kind.__required_keys__, kind.__optional_keys__
    if not required <= set(event) <= required | optional:
        return f"{event['type']}: keys {sorted(event)}, described {sorted(required | optional)}"
    for key, value in event.items():
        hint = hints[key]
        origin = typing.get_origin(hint)
        if origin is typing.Literal:
            if value not in typing.get_args(hint):
                return f"{event['type']}.{key} is {value!r}, not one of {typing.get_args(hint)}"
        elif origin is types.UnionType:
            if not isinstance(
                value, tuple(typing.get_origin(a) or a for a in typing.get_args(hint))
            ):
                return f"{event['type']}.{key} is a {type(value).__name__}, described as {hint}"
        elif not isinstance(value, origin or hint) or isinstance(value, bool) and hint is not bool:
            return f"{event['type']}.{key} is a {type(value).__name__}, described as {hint}"
    return None


def runs():
    """Events of runs that reach every stop reason and every kind of event."""
    found = [events for events, _ in map(run_case, failure_cases().values())]
    repair = load_recording("repair.json")
    from labkit import sample_copy

    with sample_copy() as root:
        found.append(list(agent_events(ReplayModel(repair), RepoTools(root), repair["task"])))
        found.append(
            list(agent_events(ReplayModel(repair), RepoTools(root), repair["task"], max_turns=1))
        )
    found.append(list(agent_events(ListChat(final_text_turn("done.")), FakeTools(), "task")))
    every_point = HookSet(
        [PythonHook("all", list(HOOK_REPLIES), function=lambda e: HOOK_REPLIES[e["point"]])], "."
    )
    found.append(
        list(
            agent_events(
                ListChat(
                    tool_turn(call("echo", a=1)), final_text_turn("done."), final_text_turn("ok")
                ),
                FakeTools(),
                "task",
                hooks=every_point,
            )
        )
    )
    found.append(list(agent_events(ListChat(tool_turn(call("echo"))), GoneTools(), "task")))
    gate = Gate(Policy(tools={"read_file": "allow"}, default="deny"))
    with sample_copy() as root:
        found.append(
            list(
                agent_events(
                    ReplayModel(repair), RepoTools(root), repair["task"], gate=gate, max_turns=3
                )
            )
        )
    agents = Subagents(ListChat(), Notes, chat_for=lambda task: ListChat(final_text_turn("A.")))
    parent = ListChat(tool_turn(call("delegate", task="look")), final_text_turn("done."))
    found.append(list(agent_events(parent, Joined(Notes(), agents), "task")))
    return found


#: A reply for each hook point that changes something there.
HOOK_REPLIES = {
    "run_start": {"context": "remember the style guide"},
    "before_request": {"context": "retrieved: path_rules.py"},
    "before_tool": {"arguments": {"a": 2}},
    "after_tool": {"result": {"echo": "replaced"}, "context": "a note"},
    "stop": {"decision": "deny", "reason": "not yet"},
}


class GoneTools(FakeTools):
    """Tools whose server has gone: every call raises ToolsFailed."""

    def invoke(self, name, arguments):
        raise ToolsFailed("the server exited (exit code 3)")


def test_every_event_of_every_kind_is_what_its_typed_description_says():
    seen_types, seen_reasons = set(), set()
    for events in runs():
        for event in events:
            assert conforms(event) is None, conforms(event)
            seen_types.add(event["type"])
        seen_reasons.add(events[-1]["reason"])
    assert seen_types == set(EVENT_TYPES)
    assert seen_reasons == set(STOP_REASONS)
    assert set(typing.get_args(typing.get_type_hints(EVENT_TYPES["stopped"])["reason"])) == set(
        STOP_REASONS
    )


def test_the_checker_catches_an_event_that_breaks_its_description():
    good = {"type": "tool_result", "time": 1.0, "turn": 1, "name": "read_file", "result": {}}
    assert conforms(good) is None
    assert "keys" in conforms({**good, "extra": 1})
    assert "turn is a bool" in conforms({**good, "turn": True})
    assert "not one of" in conforms(
        {
            "type": "stopped",
            "time": 1.0,
            "reason": "bored",
            "turns": 1,
            "tool_calls": 0,
            "detail": "",
            "messages": [],
        }
    )


def imports_of(path: Path):
    """``(level, module)`` for each import statement of a module."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((0, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.level, node.module or ""


def test_the_harness_imports_only_the_standard_library_and_itself():
    modules = sorted(HARNESS.glob("*.py"))
    assert len(modules) >= 10
    for module in modules:
        for level, name in imports_of(module):
            if level:
                assert level == 1, f"{module.name} reaches outside the harness: {'.' * level}{name}"
            else:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names, f"{module.name} imports {name}"


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_wire_format_declares_a_tool_and_says_which_names_it_refuses(name):
    """A format added later must give both: MCP tools (lesson 11) are declared through it."""
    wire = FORMATS[name]
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}}
    declared = wire.tool_schema("read_file", "Read a file.", parameters)
    assert "read_file" in str(declared) and parameters in _values(declared)
    assert wire.tool_name_problem("read_file") is None
    assert wire.tool_name_problem("") is not None
    with pytest.raises(ValueError):
        wire.tool_schema("", "no name", parameters)


def _values(value):
    """Every dict inside ``value``, itself included."""
    found = [value] if isinstance(value, dict) else []
    for inner in (
        value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    ):
        found += _values(inner)
    return found
