"""Lesson 11's checks: an MCP tool's schema as each provider declares a tool, and what a
command hook's reply means.

The rules are the lesson's, written again here as two small references
(``schema_reference``, ``decision_reference``) that share no code with
``labkit.harness.mcp_tools``, ``labkit.harness.formats`` or ``labkit.harness.hooks``, the
code the lesson teaches. (A test holds each to the harness's results.)
"""

from __future__ import annotations

import copy
import json
import random
import re
import string

from ..feedback import Case, run_cases, show
from ..isolated import same, unchanged
from .common import hidden_cases, learner_answer, new_seed

__all__ = ["check_mcp_to_tool_schema", "check_hook_decision"]

DRAWN = 6
OBJECT = {"type": "object"}

# --- 11a: an MCP tool as each provider declares a tool -------------------------------------

#: The tool names each provider takes (the lesson gives the same table).
NAME_PATTERNS = {
    "ollama": r"(?s).+",  # any name that is not empty
    "openai": r"[a-zA-Z0-9_-]{1,64}",
    "openai-responses": r"[a-zA-Z0-9_-]{1,64}",
    "anthropic": r"[a-zA-Z0-9_-]{1,64}",
    "gemini": r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}",
}
#: Where each provider puts the parameters' JSON Schema.
SCHEMA_KEYS = {"anthropic": "input_schema", "gemini": "parametersJsonSchema"}


def schema_reference(mcp_tool: dict, provider: str) -> dict:
    """The reference: the lesson's rules for turning an MCP tool into a provider's tool."""
    if provider not in NAME_PATTERNS:
        raise ValueError(f"unknown provider {provider!r}")
    name = mcp_tool["name"]
    if not re.fullmatch(NAME_PATTERNS[provider], name):
        raise ValueError(f"{name!r} is not a valid {provider} tool name")
    parameters = copy.deepcopy(mcp_tool["inputSchema"])
    parameters.setdefault("properties", {})
    description = mcp_tool.get("description") or mcp_tool.get("title") or ""
    if provider == "anthropic":
        return {"name": name, "description": description, "input_schema": parameters}
    if provider == "gemini":
        return {"name": name, "description": description, "parametersJsonSchema": parameters}
    function = {"name": name, "description": description, "parameters": parameters}
    if provider == "openai-responses":
        return {"type": "function", **function, "strict": False}
    return {"type": "function", "function": function}


READ_FILE = {
    "name": "read_file",
    "title": "Read a file",
    "description": "Read one text file of the repository.",
    "inputSchema": {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Relative to the root."}},
        "required": ["path"],
    },
    "outputSchema": {"type": "object", "properties": {"content": {"type": "string"}}},
}
EDIT = {
    "name": "edit_file",
    "description": "Replace one exact piece of text.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "old": {"type": "string"},
            "new": {"type": "string"},
            "count": {"type": "integer", "minimum": 1},
        },
        "required": ["path", "old", "new"],
    },
}
RUN_TESTS = {"name": "run_tests", "description": "Run the tests.", "inputSchema": OBJECT}
NESTED = {
    "name": "search",
    "description": "Search the code.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "options": {
                "type": "object",
                "properties": {
                    "paths": {"type": "array", "items": {"type": "string"}},
                    "limit": {"type": "integer"},
                },
                "required": ["paths"],
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True},
    "_meta": {"source": "course"},
}

#: (what the case shows, the tool, the provider, a hint)
SCHEMA_CASES = [
    ("read_file for Ollama", READ_FILE, "ollama",
     "Ollama: {'type': 'function', 'function': {'name', 'description', 'parameters'}}"),
    ("read_file for OpenAI", READ_FILE, "openai",
     "OpenAI's Chat Completions take the same shape as Ollama's"),
    ("read_file for Anthropic", READ_FILE, "anthropic",
     "Anthropic: no 'function' wrapper; {'name', 'description', 'input_schema'}"),
    ("read_file for OpenAI's Responses API", READ_FILE, "openai-responses",
     "the Responses API: flat, {'type': 'function', 'name', 'description', 'parameters', "
     "'strict': False}"),
    ("read_file for Gemini", READ_FILE, "gemini",
     "Gemini: {'name', 'description', 'parametersJsonSchema'}"),
    ("an optional argument", EDIT, "anthropic",
     "'count' is not required: keep 'required' as the MCP tool gives it"),
    ("a tool with no arguments", RUN_TESTS, "openai",
     "an inputSchema without 'properties' gets \"properties\": {} (OpenAI refuses an object "
     "schema without them)"),
    ("no description, a title", {"name": "list_files", "title": "List the files",
     "inputSchema": {"type": "object", "properties": {}}}, "ollama",
     "no description: use the title"),
    ("a name with a dot, for Ollama", {"name": "files.read", "description": "Read.",
     "inputSchema": {"type": "object", "properties": {}}}, "ollama",
     "Ollama takes any name that is not empty"),
    ("a name with a dot, for OpenAI", {"name": "files.read", "description": "Read.",
     "inputSchema": {"type": "object", "properties": {}}}, "openai",
     "OpenAI takes only a-z A-Z 0-9 _ - in a name: raise ValueError"),
    ("a name with a dot, for Gemini", {"name": "files.read", "description": "Read.",
     "inputSchema": {"type": "object", "properties": {}}}, "gemini",
     "Gemini takes a dot in a name"),
    ("a provider the lesson does not know", READ_FILE, "cohere",
     "a provider not in NAME_PATTERNS: raise ValueError"),
]  # fmt: skip


def check_mcp_to_tool_schema(mcp_to_tool_schema, *, hidden: bool = False) -> None:
    """``mcp_to_tool_schema(mcp_tool, provider)`` declares an MCP tool as the provider does."""
    answer = learner_answer(mcp_to_tool_schema, "mcp_to_tool_schema")
    listed = SCHEMA_CASES + (hidden_cases("check_mcp_to_tool_schema") if hidden else [])
    seed = new_seed()
    draw = random.Random(seed)
    listed += [
        (f"drawn case {n} (seed {seed})", *drawn_tool(draw), "") for n in range(1, DRAWN + 1)
    ]
    cases = []
    for label, tool, provider, hint in listed:
        try:
            expected, raises = schema_reference(tool, provider), None
        except ValueError:
            expected, raises = None, "ValueError"
        cases.append(
            Case(
                label,
                [tool, provider],
                expected,
                hint=hint,
                raises=raises,
                shown=f"{answer.name}({show(tool, 160)}, {provider!r})",
            )
        )
    run_cases(answer, cases, _schema_problem, what="mcp_to_tool_schema")


def drawn_tool(draw: random.Random) -> tuple:
    """An MCP tool and a provider, drawn: some properties optional, a name sometimes with a
    dot or too long, a description or a title or neither."""
    letters = string.ascii_lowercase + "_"
    name = "".join(draw.choices(letters, k=draw.randrange(3, 12)))
    if draw.random() < 0.3:
        name = draw.choice([name + ".v2", name * 10, "mcp__" + name, "2" + name])
    properties = {
        "".join(draw.choices(letters, k=draw.randrange(2, 8))): {
            "type": draw.choice(["string", "integer", "boolean", "number"])
        }
        for _ in range(draw.randrange(0, 4))
    }
    schema = {"type": "object"}
    if properties or draw.random() < 0.5:
        schema["properties"] = properties
    if properties:
        schema["required"] = draw.sample(sorted(properties), draw.randrange(0, len(properties) + 1))
    tool = {"name": name, "inputSchema": schema}
    for key in ("description", "title"):
        if draw.random() < 0.6:
            tool[key] = draw.choice(["", "Does one thing.", "Ünïcode — “quoted” text"])
    return tool, draw.choice(list(NAME_PATTERNS))


def _schema_problem(got, case, outcome) -> str | None:
    tool, provider = case.arguments
    if not unchanged(outcome.arguments[0], tool):
        return (
            "your function changed the MCP tool it was given (setdefault on its inputSchema?): "
            "work on a copy, the harness still needs the tool as the server gave it"
        )
    expected = case.expected
    if same(got, expected):
        return None
    if not isinstance(got, dict):
        return f"return the provider's tool schema (a dict), not {show(got, 80)}" + (
            ": did you forget `return`?" if got is None else ""
        )
    inner_got = got.get("function", got)
    inner = expected.get("function", expected)
    if "inputSchema" in got or (isinstance(inner_got, dict) and "inputSchema" in inner_got):
        return (
            "the MCP tool's inputSchema went through under its own name: each provider "
            f"wants it elsewhere (here {sorted(inner)})"
        )
    if sorted(got) != sorted(expected):
        return f"the top-level keys are {sorted(got)}; {provider} wants {sorted(expected)}"
    if not isinstance(inner_got, dict) or sorted(inner_got) != sorted(inner):
        return f"the tool's fields are {show(inner_got, 120)}; {provider} wants {sorted(inner)}"
    key = SCHEMA_KEYS.get(provider, "parameters")
    mine, theirs = inner_got.get(key), inner[key]
    if not same(inner_got.get("description"), inner["description"]):
        return (
            f"the description is {show(inner_got.get('description'), 60)}: use the tool's "
            "description, else its title, else an empty string"
        )
    if isinstance(mine, dict) and "required" in theirs and "required" not in mine:
        return (
            "the parameters lost 'required': the model would not know which arguments it must give"
        )
    if isinstance(mine, dict) and "properties" not in mine:
        return "the parameters have no 'properties': add an empty object when the tool has none"
    if not same(mine, theirs):
        return f"the parameters are {show(mine, 120)}, not the inputSchema as the rules keep it"
    return f"the name is {show(inner_got.get('name'), 60)}, not the MCP tool's name"


# --- 11b: what a hook's reply means ---------------------------------------------------------

POINTS = ("run_start", "before_request", "before_tool", "after_tool", "stop")
CAN_DENY = ("before_tool", "stop")
#: What each point lets a hook give beside "decision" and "reason".
MAY_GIVE = {
    "run_start": ("context",),
    "before_request": ("context",),
    "before_tool": ("arguments",),
    "after_tool": ("context", "result"),
    "stop": (),
}
KINDS = {"reason": str, "context": str, "arguments": dict, "result": dict}
NO_REASON = "the hook gave no reason"


def decision_reference(hook_output: dict, exit_code) -> dict:
    """The reference: the lesson's rules for what a command hook's run means."""
    point, stdout, stderr = hook_output["point"], hook_output["stdout"], hook_output["stderr"]

    def failed(failure: str) -> dict:
        return {"decision": "deny" if point == "before_tool" else "allow", "failure": failure}

    if exit_code is None:
        return failed("timeout")
    if exit_code == 2:
        if point not in CAN_DENY:
            return failed("bad_reply")
        return {"decision": "deny", "reason": stderr.strip() or NO_REASON}
    if exit_code != 0:
        return failed("crash")
    if not stdout.strip():
        return {"decision": "allow"}
    try:
        reply = json.loads(stdout)
    except (ValueError, RecursionError):
        return failed("not_json")
    if not isinstance(reply, dict):
        return failed("not_json")
    if set(reply) - {"decision", "reason", *MAY_GIVE[point]}:
        return failed("bad_reply")
    decision = reply.get("decision", "allow")
    if decision not in ("allow", "deny"):
        return failed("bad_reply")
    if any(key in reply and type(reply[key]) is not kind for key, kind in KINDS.items()):
        return failed("bad_reply")
    if decision == "deny" and (point not in CAN_DENY or "arguments" in reply):
        return failed("bad_reply")
    result = {"decision": decision}
    result.update({key: reply[key] for key in KINDS if key in reply})
    if decision == "deny" and not reply.get("reason"):
        result["reason"] = NO_REASON
    return result


def _output(point: str, stdout: str = "", stderr: str = "") -> dict:
    return {"point": point, "stdout": stdout, "stderr": stderr}


PROTECTED = "tests/test_path_rules.py is a test file: change the code instead"
#: (what the case shows, the hook's output, its exit code, a hint)
DECISION_CASES = [
    ("nothing printed, exit 0", _output("before_tool"), 0,
     "exit 0 with nothing on stdout: allow, and change nothing"),
    ("exit 2 before a call", _output("before_tool", stderr=PROTECTED + "\n"), 2,
     "exit 2 means no: deny, with stderr (stripped) as the reason the model reads"),
    ("exit 2, nothing on stderr", _output("before_tool"), 2,
     "a no without a reason gets NO_REASON"),
    ("exit 2 at the stop", _output("stop", stderr="the tests still fail"), 2,
     "at the stop, no means: the stop is denied, the model goes back to work"),
    ("exit 2 after a call", _output("after_tool", stderr="too late"), 2,
     "after_tool cannot deny (the call has run): a bad_reply, and after_tool's default, allow"),
    ("exit 2, stdout ignored", _output("before_tool", '{"decision": "allow"}', "no"), 2,
     "the exit code decides first: with exit 2 stdout is not read"),
    ("a crash before a call", _output("before_tool", stderr="Traceback ..."), 1,
     "any exit code but 0 and 2 is a crash; before_tool fails closed: deny"),
    ("a crash after a call", _output("after_tool", '{"context": "x"}'), 1,
     "a crash: stdout is not read; after_tool fails open: allow"),
    ("a timeout before a call", _output("before_tool"), None,
     "exit_code None: the hook was stopped at its timeout; before_tool's default is deny"),
    ("garbage before a call", _output("before_tool", "hello"), 0,
     "stdout that is not JSON is not_json, never allow: before_tool fails closed"),
    ("a JSON list at the start", _output("run_start", "[1, 2]"), 0,
     "a reply must be one JSON object; a list is not_json"),
    ("a deny in JSON", _output("before_tool", '{"decision": "deny", "reason": "no"}'), 0,
     "deny with its reason"),
    ("new arguments", _output("before_tool", '{"arguments": {"path": "path_rules.py"}}'), 0,
     "a before_tool hook may replace the arguments: allow, with them"),
    ("an after hook that changes the call", _output("after_tool", '{"arguments": {"path": "x"}}'),
     0, "an after_tool hook can never change which call ran: arguments there are a bad_reply"),
    ("a new result and a note", _output("after_tool", '{"result": {"ok": true}, "context": "n"}'),
     0, "after_tool may replace the result and add context"),
    ("context before a request", _output("before_request", '{"context": "retrieved: a.py"}'), 0,
     "before_request may add context"),
    ("a deny at the stop without a reason", _output("stop", '{"decision": "deny"}'), 0,
     "a deny without a reason gets NO_REASON"),
    ("a deny at the start", _output("run_start", '{"decision": "deny", "reason": "r"}'), 0,
     "run_start cannot deny: a bad_reply, and run_start's default, allow"),
    ("a deny with arguments", _output("before_tool", '{"decision": "deny", "arguments": {}}'),
     0, "deny and arguments contradict each other: a bad_reply (and before_tool denies)"),
    ("an unknown decision", _output("before_tool", '{"decision": "maybe"}'), 0,
     "decision is 'allow' or 'deny'; anything else is a bad_reply"),
    ("a result that is text", _output("after_tool", '{"result": "ok"}'), 0,
     "a result is an object; text is a bad_reply"),
    ("only white space", _output("stop", "  \n"), 0, "white space is nothing: allow"),
    ("a reason with an allow", _output("before_tool", '{"reason": "looks fine"}'), 0,
     "keep what the hook said: allow, with its reason"),
]  # fmt: skip
FAILURES = ("timeout", "crash", "not_json", "bad_reply")


def check_hook_decision(hook_decision, *, hidden: bool = False) -> None:
    """``hook_decision(hook_output, exit_code)`` reads a hook's run by the lesson's rules."""
    answer = learner_answer(hook_decision, "hook_decision")
    listed = DECISION_CASES + (hidden_cases("check_hook_decision") if hidden else [])
    seed = new_seed()
    draw = random.Random(seed)
    listed += [
        (f"drawn case {n} (seed {seed})", *drawn_hook_run(draw), "") for n in range(1, DRAWN + 1)
    ]
    cases = [
        Case(
            label,
            [output, code],
            decision_reference(output, code),
            hint=hint,
            shown=f"{answer.name}({show(output, 160)}, {code!r})",
        )
        for label, output, code, hint in listed
    ]
    run_cases(answer, cases, _decision_problem, what="hook_decision")


def drawn_hook_run(draw: random.Random) -> tuple:
    """A hook's output and exit code, drawn from the kinds the rules tell apart."""
    point = draw.choice(POINTS)
    keys = ["decision", "reason", "context", "arguments", "result"]
    values = {
        "decision": ["allow", "deny", "block"],
        "reason": ["", "no", "the tests fail", 3],
        "context": ["note", ""],
        "arguments": [{"path": "a.py"}, {}],
        "result": [{"ok": True}, "done"],
    }
    reply = {key: draw.choice(values[key]) for key in draw.sample(keys, draw.randrange(0, 3))}
    stdout = draw.choice([json.dumps(reply), json.dumps(reply), "", "oops", "[]"])
    stderr = draw.choice(["", "refused\n", "  why  "])
    code = draw.choice([0, 0, 0, 2, 2, 1, None])
    return _output(point, stdout, stderr), code


def _decision_problem(got, case, outcome) -> str | None:
    output, code = case.arguments
    expected = case.expected
    if same(got, expected):
        return None
    if not isinstance(got, dict) or "decision" not in got:
        return f"return a dict with at least 'decision', not {show(got, 80)}" + (
            ": did you forget `return`?" if got is None else ""
        )
    failure = expected.get("failure")
    point = output["point"]
    if failure and got.get("failure") != failure:
        named = {
            "timeout": "exit_code None means the hook was stopped at its timeout",
            "crash": "an exit code other than 0 and 2 is a crash, whatever stdout holds",
            "not_json": "what the hook printed is not one JSON object",
            "bad_reply": "the reply breaks what this point allows",
        }[failure]
        if got.get("decision") == "allow" and failure == "not_json":
            return f"garbage is not an allow: {named} (failure 'not_json')"
        return f"{named}: the failure is {failure!r}, not {show(got.get('failure'), 40)}"
    if failure:
        return f"a failed hook gets its point's default: {point} " + (
            "fails closed (deny)" if point == "before_tool" else "fails open (allow)"
        )
    if code == 2 and got.get("decision") != "deny":
        return "exit 2 means no: the exit code decides before stdout is read"
    if got.get("failure"):
        return f"this hook did not fail: nothing here is a {got['failure']!r}"
    return (
        f"the decision should be {show(expected, 160)}: copy what the hook said (decision "
        "allow when it said none), and give a deny without a reason NO_REASON"
    )
