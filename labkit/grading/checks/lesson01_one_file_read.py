"""Lesson 01's check: the tool message that carries a tool's result back to the model."""

from __future__ import annotations

import json
import random

from ...harness.sample import SAMPLE_DIR, SOURCE_FILE
from ..feedback import Case, Miss, changed_input, run_cases
from ..isolated import unchanged
from .common import (
    DRAWN,
    SHAPE_HINT,
    TOOL_NAMES,
    content_problem,
    hidden_cases,
    learner_answer,
    new_seed,
    random_result,
    tool_message,
    tool_message_problem,
)

__all__ = ["check_tool_message"]


def check_tool_message(make_tool_message, *, hidden: bool = False) -> None:
    """``make_tool_message(name, result)`` returns the tool message that carries ``result``."""
    answer = learner_answer(make_tool_message, "make_tool_message")
    source = (SAMPLE_DIR / SOURCE_FILE).read_text(encoding="utf-8")
    results = [
        ("a replace_text result", "replace_text", {"path": SOURCE_FILE, "replaced": 1}, ""),
        (
            "the read_file result of lesson 01",
            "read_file",
            {"path": SOURCE_FILE, "content": source},
            "file text holds quotes, backslashes and newlines: json.dumps escapes them all",
        ),
        (
            "a run_tests result with true/false",
            "run_tests",
            {"exit_code": 1, "timed_out": False, "output": "1 failed, 3 passed in 0.04s"},
            "JSON writes false, Python writes False: only json.dumps gives JSON",
        ),
        (
            "an error result",
            "read_file",
            {
                "error": "path '/etc/passwd' is not allowed; use one of: path_rules.py, "
                "tests/test_path_rules.py"
            },
            "an error is a result like any other: the model must be able to read it",
        ),
        (
            "non-ASCII text",
            "read_file",
            {"path": "NOTES.md", "content": "Grüße, naïve café — 東京 ✓"},
            "JSON text can carry any character",
        ),
        (
            "control characters",
            "run_tests",
            {"exit_code": 0, "output": "\x1b[32m4 passed\x1b[0m\r\nform feed\x0c, nul \x00"},
            "JSON escapes every control character, not only \\n and \\t: let json.dumps do it",
        ),
        (
            "a result shaped like another tool's",
            "replace_text",
            {"exit_code": 0, "output": "4 passed"},
            "tool_name is the name of the tool that was called, whatever its result looks like",
        ),
    ]
    results += hidden_cases("check_tool_message") if hidden else []
    seed = new_seed()
    draw = random.Random(seed)
    for number in range(1, DRAWN + 1):
        results.append(
            (
                f"drawn case {number} (seed {seed})",
                draw.choice(TOOL_NAMES),
                random_result(draw),
                "any result, any text: json.dumps(result)",
            )
        )
    cases = [
        Case(label, [name, result], tool_message(name, result), hint=hint)
        for label, name, result, hint in results
    ]
    run_cases(answer, cases, _tool_message_answer_problem, what="make_tool_message")


def _tool_message_answer_problem(got, case, outcome):
    """The first thing wrong with the message. The cases' hints are about their results'
    content, so only a content problem gets one; a problem with the message's shape gets a
    hint about the shape, and a changed input none (the problem says what to do)."""
    problem = tool_message_problem(got, case.expected)
    if problem is None:
        if unchanged(outcome.arguments[1], case.arguments[1]):
            return None
        return changed_input(
            "the result",
            outcome.arguments[1],
            case.arguments[1],
            ": build the message without changing `result`, the loop still needs it",
        )
    about_content = isinstance(got, dict) and problem == content_problem(
        got.get("content"), json.loads(case.expected["content"])
    )
    return problem if about_content else Miss(problem, hint=SHAPE_HINT)
