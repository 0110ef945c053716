"""A tool in one place: the record holds its schema and handler, a toolset collects its
records in order, and invoke checks every call against the record's schema first."""

import pytest

from labkit import RepoTools, ShellTools, sample_copy
from labkit.harness.toolset import Tool, Toolset, tool

NO_ARGUMENTS = {"type": "object", "properties": {}, "additionalProperties": False}


class Echo(Toolset):
    def __init__(self):
        self.calls = []

    @tool(
        description="Say it back.",
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        read_only=True,
    )
    def echo(self, text, times=1):
        self.calls.append(("echo", text, times))
        return {"said": text * times}


class LoudEcho(Echo):
    @tool(description="Say nothing, loudly.", parameters=NO_ARGUMENTS)
    def shout(self):
        self.calls.append(("shout",))
        return {"said": "!"}


def test_a_method_becomes_a_record_whose_schema_is_what_the_model_reads():
    record = Echo.echo
    assert isinstance(record, Tool) and (record.name, record.read_only) == ("echo", True)
    assert Echo.schemas == [
        {
            "type": "function",
            "function": {
                "name": "echo",
                "description": "Say it back.",
                "parameters": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
                    "required": ["text"],
                    "additionalProperties": False,
                },
            },
        }
    ]
    assert Echo().echo("hi", 2) == {"said": "hihi"}  # on an instance it is still the method


def test_a_subclass_adds_its_tools_after_its_bases():
    assert [record.name for record in LoudEcho.tools] == ["echo", "shout"]
    assert [schema["function"]["name"] for schema in LoudEcho.schemas] == ["echo", "shout"]
    assert [record.name for record in Echo.tools] == ["echo"]  # the base is left as it was
    tools = LoudEcho()
    assert tools.invoke("shout", {}) == {"said": "!"}
    assert tools.invoke("echo", {"text": "a", "times": 3}) == {"said": "aaa"}


@pytest.mark.parametrize(
    "name, arguments, error",
    [
        ("Echo", {}, "unknown tool 'Echo'; the tools are: echo, shout"),
        ("calls", {}, "unknown tool 'calls'; the tools are: echo, shout"),
        (["echo"], {}, "unknown tool ['echo']; the tools are: echo, shout"),
        ("echo", ["hi"], "arguments for echo must be a JSON object, not list"),
        ("echo", {}, "echo takes ['text', 'times']: missing ['text']"),
        ("echo", {"text": "a", "loud": 1}, "echo takes ['text', 'times']: unexpected ['loud']"),
        ("echo", {"text": 5}, "echo: 'text' must be a string, not int"),
        ("shout", {"x": 1}, "shout takes no arguments: unexpected ['x']"),
    ],
)
def test_invoke_refuses_what_the_schema_does_not_allow_before_the_handler_runs(
    name, arguments, error
):
    tools = LoudEcho()
    with pytest.raises((TypeError, ValueError)) as refused:
        tools.invoke(name, arguments)
    assert str(refused.value) == error
    assert tools.calls == []


@pytest.mark.parametrize(
    "parameters",
    [
        {"type": "object", "properties": {}},  # extra arguments would pass the schema
        {"type": "array", "items": {}, "additionalProperties": False},
        {"type": "object", "properties": {}, "required": ["x"], "additionalProperties": False},
    ],
)
def test_a_record_whose_schema_invoke_could_not_keep_is_refused(parameters):
    with pytest.raises(ValueError, match="tool 'odd'"):
        Tool("odd", "An odd tool.", parameters, lambda toolset: {})


def test_two_tools_of_one_name_are_refused():
    with pytest.raises(ValueError, match="two tools of the same name"):

        class Twice(Echo):
            echo = Tool("echo", "Again.", NO_ARGUMENTS, lambda toolset: {})


def test_only_read_file_is_marked_read_only():
    assert [(r.name, r.read_only) for r in ShellTools.tools] == [
        ("read_file", True),
        ("replace_text", False),
        ("run_tests", False),
        ("run_command", False),
    ]
    assert RepoTools.tools == ShellTools.tools[:3]


def test_the_shell_tools_name_all_four_tools_when_one_is_unknown():
    with sample_copy() as root:
        with pytest.raises(ValueError) as refused:
            ShellTools(root).invoke("grep", {})
    assert str(refused.value) == (
        "unknown tool 'grep'; the tools are: read_file, replace_text, run_tests, run_command"
    )
