"""What the checks of several lessons share: the learner's answer, drawn cases, the tool
message and its problems, a bool verdict's problems, values named with their type, and
recorded chunks read as plain JSON.

A name here is public because more than one lesson's module uses it; a helper that only
one lesson needs stays in that lesson's module.
"""

from __future__ import annotations

import inspect
import json
import linecache
import os
import random
import string
import textwrap

from ...harness.words import with_article
from ...settings import RECORDINGS_DIR
from ..feedback import Answer, Miss, changed_input, fail, show
from ..isolated import Other, same, unchanged


class HiddenCasesMissing(RuntimeError):
    """A hidden test ran where the instructor's package (``labkit_answers``) is not installed.

    Grading must stop here rather than score every learner 0, so ``grade`` lets it out."""


def hidden_cases(check: str, **context) -> list:
    """The cases ``check`` adds for nbgrader's hidden tests, kept in the instructor's package
    (``labkit_answers.hidden``), never in the one learners install. ``context``: what the
    check builds its cases from (a recorded stream, a file's hash)."""
    try:
        from labkit_answers.hidden import HIDDEN
    except ImportError:
        raise HiddenCasesMissing(
            f"{check}(..., hidden=True) needs the hidden test cases, which are in the "
            "instructor's package, not in labkit: install it (`make setup` in a clone does; "
            "elsewhere pip install the labkit_answers wheel, built with `pip wheel --no-deps "
            "-w dist instructor/`). A learner's copy of the lessons has no hidden tests."
        ) from None
    return HIDDEN[check](**context)


TOOL_NAMES = ("read_file", "replace_text", "run_tests")
TOOL_MESSAGE_KEYS = ("role", "tool_name", "content")
#: A hint about a tool message's shape (its keys and their values), for a shape problem.
SHAPE_HINT = (
    "Ollama's tool message is exactly {'role': 'tool', 'tool_name': name, "
    "'content': json.dumps(result)}: the name of the tool that was called, the result as "
    "JSON text"
)
DRAWN = 6  # cases drawn afresh per run


def learner_answer(function, name: str) -> Answer:
    """The source of the cell that defined ``function`` (the whole cell, helpers included).

    The check runs that source, not the function object: the object lives in the
    learner's kernel, where anything may have been patched."""
    if isinstance(function, Answer):
        return function
    code = getattr(function, "__code__", None)
    if not callable(function) or code is None:
        fail(
            f"{name} should be a function, but it is {show(function, 80)}",
            hint="define it with `def` in the answer cell above and run that cell first",
        )
    if os.path.exists(code.co_filename):  # a module on disk: just the function
        try:
            return Answer(textwrap.dedent(inspect.getsource(function)), function.__name__)
        except (OSError, TypeError):
            pass
    lines = linecache.getlines(code.co_filename)  # a notebook cell: the whole cell
    if not lines:
        fail(
            f"the source of {name} cannot be found",
            hint="define it with `def` in the answer cell above and run that cell again",
        )
    return Answer("".join(lines), function.__name__)


def new_seed() -> int:
    """A seed for the cases a check draws afresh; the feedback shows it beside each one."""
    return random.SystemRandom().randrange(10**6)


def with_drawn(fixed: list, hidden: list, draw_one) -> tuple[list, random.Random]:
    """The fixed cases, the hidden ones given, and ``DRAWN`` cases drawn afresh (their seed
    in their label); and the draw, for what the check draws next."""
    seed = new_seed()
    draw = random.Random(seed)
    drawn = [(f"drawn case {n} (seed {seed})", draw_one(draw), "") for n in range(1, DRAWN + 1)]
    return fixed + hidden + drawn, draw


def tool_message(name: str, result) -> dict:
    """The reference: a tool message is the tool's name and its result as JSON text."""
    return {"role": "tool", "tool_name": name, "content": json.dumps(result)}


def tool_message_problem(got, expected: dict) -> str | None:
    """Name what is wrong with a tool message, compared with the expected one."""
    if not isinstance(got, dict):
        return f"a tool message is a dict, but this is {typed(got)}" + (
            ": did you forget `return`?" if got is None else ""
        )
    if "tool_name" not in got and "name" in got:
        return "the tool's name goes under the key 'tool_name' (Ollama's field), not 'name'"
    missing = [key for key in TOOL_MESSAGE_KEYS if key not in got]
    if missing:
        return f"the message has no {', '.join(repr(k) for k in missing)} key"
    extra = sorted(set(got) - set(TOOL_MESSAGE_KEYS), key=str)
    if extra:
        return f"unexpected key(s) {extra}: a tool message has exactly role, tool_name and content"
    if not same(got["role"], "tool"):
        return f"role is {typed(got['role'])}; it must be exactly 'tool'"
    if not same(got["tool_name"], expected["tool_name"]):
        return (
            f"tool_name is {typed(got['tool_name'])}, but the result came from "
            f"{expected['tool_name']!r}"
        )
    return content_problem(got["content"], json.loads(expected["content"]))


def content_problem(content, result) -> str | None:
    if isinstance(content, (dict, list)):
        return (
            "content is the result object itself, but a message's content is text: "
            "turn the result into JSON text with json.dumps(result)"
        )
    if not isinstance(content, str):
        return f"content is {typed(content)}, not text: use json.dumps(result)"
    try:
        decoded = json.loads(content)
    except ValueError as exc:
        if content in (str(result), repr(result)):
            return (
                "content is str(result), Python's own notation (single quotes, True, None), "
                "which is not JSON: use json.dumps(result)"
            )
        return f"content is not valid JSON text ({exc}): use json.dumps(result)"
    if isinstance(decoded, str) and isinstance(result, dict) and decoded == result.get("error"):
        return (
            "content is JSON of the error's text alone: an error result is the dict "
            "{'error': str(exc)}, so the model can tell it from a tool's normal result"
        )
    if isinstance(decoded, str) and not isinstance(result, str):
        return "content is JSON of a string, not of the result: was json.dumps applied twice?"
    if not same(decoded, result):
        return f"content is JSON, but it decodes to {show(decoded, 120)}, not to the tool's result"
    return None


#: What drawn text is made of: letters, JSON's special characters, control characters
#: (\r, \x0c, \x00, \x1b...) and text beyond ASCII, so only a real JSON encoder gets it right.
TEXT_ALPHABET = (
    string.ascii_letters
    + string.digits
    + " \"'\\\n\t{}[]:,/"
    + "\r\x0c\x08\x00\x1b\x7f\u2028"
    + "é東✓😀"
)


def random_text(draw: random.Random, low: int = 0, high: int = 40) -> str:
    return "".join(draw.choices(TEXT_ALPHABET, k=draw.randrange(low, high)))


def _random_value(draw: random.Random, depth: int = 0):
    kind = draw.choice(
        ["text", "int", "float", "bool", "none"] + (["list", "dict"] if depth < 2 else [])
    )
    if kind == "text":
        return random_text(draw)
    if kind == "int":
        return draw.randrange(-(10**6), 10**6)
    if kind == "float":
        return round(draw.uniform(-100, 100), 3)
    if kind == "bool":
        return draw.random() < 0.5
    if kind == "none":
        return None
    if kind == "list":
        return [_random_value(draw, depth + 1) for _ in range(draw.randrange(4))]
    return random_result(draw, depth + 1)


def random_result(draw: random.Random, depth: int = 0) -> dict:
    """A tool's result drawn afresh: a few of the tools' keys, each with any JSON value."""
    keys = ["path", "content", "exit_code", "timed_out", "output", "error", "replaced", "note"]
    return {key: _random_value(draw, depth) for key in draw.sample(keys, draw.randrange(1, 5))}


def verdict_problem(got, case, outcome):
    """What is wrong with a True/False verdict (lessons 02 and 04), or None; chunks it was
    given must come back unchanged. A wrong verdict gets the case's hint (what makes the
    case tricky); a wrong type or a changed input, a hint about that."""
    if not isinstance(got, bool):
        forgot = ": did you forget `return`?" if got is None else ""
        return Miss(
            f"return True or False, not {typed(got)}{forgot}",
            hint="a comparison (==, !=) or `and` of comparisons gives a bool; 1, 0 or a "
            "number are not one",
        )
    if got != case.expected:
        return f"returned {got}, but the right answer here is {case.expected}"
    if isinstance(case.arguments[0], list) and not unchanged(
        outcome.arguments[0], case.arguments[0]
    ):
        return changed_input(
            "the chunks", outcome.arguments[0], case.arguments[0], ": only read them", they=True
        )
    return None


def typed(value) -> str:
    """A value with its type named, as feedback shows a wrong type."""
    if isinstance(value, Other):
        return f"{value.repr} ({with_article(value.type)})"
    if value is None:
        return "None"
    return f"{show(value, 60)} ({with_article(type(value).__name__)})"


def recorded_chunks(name: str, turn: int) -> list:
    """The chunks of one recorded turn, read as plain JSON (no labkit code in between)."""
    recording = json.loads((RECORDINGS_DIR / f"{name}.json").read_text("utf-8"))
    return [entry["chunk"] for entry in recording["turns"][turn - 1]["chunks"]]
