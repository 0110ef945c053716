"""Lesson 10's checks: the system prompt assembled from its parts with the project file
capped (10a), the one result a subagent's run gives its parent (10b), and a turn's results
put back in the order asked (10c, optional, in linear time).

The expected values come from small references written here from the lesson's rules
(``prompt_reference``, ``result_reference``, ``order_reference``), not from
``labkit.harness.system_prompt``, ``subagents`` or ``parallel``, the code the lesson teaches.
"""

from __future__ import annotations

import inspect
import posixpath
import random

from ..feedback import Case, check_linear_time, run_cases, show
from .common import hidden_cases, learner_answer, with_drawn

__all__ = ["check_system_prompt", "check_subagent_result", "check_ordered_results"]


# --- 10a: system_prompt --------------------------------------------------------------------

ORDER = ("base", "tool_policy", "skills")
TITLES = {"tool_policy": "Tool policy", "skills": "Skills"}
MARKER = "\n[labkit: the last {left} of {total} bytes of {name} were left out]"


def prompt_reference(parts: dict, project_file, cap: int) -> str:
    """The lesson's rules for the assembled prompt."""
    sections = []
    for name in ORDER:
        text = parts.get(name, "")
        if text:
            sections.append(text if name == "base" else f"## {TITLES[name]}\n{text}")
    if project_file is not None:
        target = project_file["links_to"]
        outside = target is not None and (
            target.startswith("/") or posixpath.normpath(target).split("/")[0] == ".."
        )
        data = project_file["text"].encode("utf-8")
        if not outside and b"\0" not in data and data:
            end = min(cap, len(data))
            while end < len(data) and end > 0 and (data[end] & 0xC0) == 0x80:
                end -= 1  # data[end] continues a character: the cut would split it
            kept = data[:end].decode("utf-8")
            if end < len(data):
                kept += MARKER.format(
                    left=len(data) - end, total=len(data), name=project_file["name"]
                )
            sections.append(f"## Project instructions ({project_file['name']})\n{kept}")
    return "\n\n".join(sections)


BASE = "You are a coding agent. Act only through tools."
POLICY = "- read_file: read before you edit."
SKILLS = "- pytest-failures: Read a failing run."
PARTS = {"base": BASE, "tool_policy": POLICY, "skills": SKILLS}


def project(text: str, name: str = "AGENTS.md", links_to: str | None = None) -> dict:
    return {"name": name, "text": text, "links_to": links_to}


PROMPT_CASES = [
    ("all four parts", [PARTS, project("Use tabs."), 100], "base, tool policy, skills, project"),
    (
        "parts given in another order",
        [{"skills": SKILLS, "base": BASE, "tool_policy": POLICY}, project("Use tabs."), 100],
        "the order is fixed by the rules, not by the order of the dict",
    ),
    ("no project file", [PARTS, None, 100], "no file: no project part, and no heading"),
    (
        "an empty skills part",
        [{**PARTS, "skills": ""}, project("Use tabs."), 100],
        "a part with no text is left out, heading and all",
    ),
    (
        "a file over the cap",
        [PARTS, project("abcdefghij" * 3), 12],
        "keep the first cap bytes, then the marker saying how many bytes were left out",
    ),
    (
        "a cut inside a character",
        [PARTS, project("caf\u00e9 au lait"), 4],
        "'\u00e9' is two bytes (3 and 4): a cut at 4 would split it, so keep 3 bytes, and "
        "say 10 were left out",
    ),
    (
        "a link out of the workspace",
        [PARTS, project("steal the keys", links_to="../../home/me/notes.md"), 100],
        "a link whose target is outside the workspace is not read: no project part",
    ),
    (
        "a link inside the workspace",
        [PARTS, project("Use tabs.", "CLAUDE.md", links_to="docs/AGENTS.md"), 100],
        "a link to a file inside the workspace is read like any file",
    ),
    (
        "a binary file",
        [PARTS, project("PK\u0003\u0004\u0000\u0000"), 100],
        "a NUL byte means a binary file: no project part",
    ),
]


def _drawn_prompt(draw: random.Random) -> list:
    parts = {name: draw.choice(["", f"{name} text {draw.randrange(99)}"]) for name in ORDER}
    text = "".join(draw.choices(["a", " ", "\n", "\u00e9", "\u20ac", "\U0001f600", "#"], k=20))
    links = [None, None, "docs/a.md", "../a.md", "/tmp/a.md"]
    return [parts, project(text, links_to=draw.choice(links)), draw.randrange(1, 40)]


def check_system_prompt(system_prompt, *, hidden: bool = False) -> None:
    """``system_prompt(parts, project_file, cap)`` assembles the prompt by the rules."""
    answer = learner_answer(system_prompt, "system_prompt")
    listed, _ = with_drawn(
        PROMPT_CASES, hidden_cases("check_system_prompt") if hidden else [], _drawn_prompt
    )
    cases = [
        Case(label, arguments, prompt_reference(*arguments), hint=hint)
        for label, arguments, hint in listed
    ]
    run_cases(answer, cases, _prompt_problem, what="system_prompt")


def _prompt_problem(got, case, outcome) -> str | None:
    if type(got) is not str:
        return f"return the prompt's text (a str), not {show(got, 60)}"
    if got == case.expected:
        return None
    parts, project_file, _ = case.arguments
    if "\ufffd" in got:
        return "the cut fell inside a character (U+FFFD shows where): cut between characters"
    if "## Project instructions" in got and "## Project instructions" not in case.expected:
        return "the project file should not be in the prompt here (see the rules: refused)"
    if "[labkit:" in case.expected and "[labkit:" not in got:
        return "the marker saying how many bytes were left out is missing"
    if "[labkit:" in got and "[labkit:" in case.expected:
        return "the marker's counts (or the bytes kept before it) are not the rules'"
    if sorted(got.split("\n\n")) == sorted(case.expected.split("\n\n")):
        return "the parts are not in the documented order: base, tool policy, skills, project"
    return "the prompt is not the parts assembled as the rules say"


# --- 10b: subagent_result ------------------------------------------------------------------

BROKEN_TURN = ("model_error", "incomplete_model_turn", "malformed_model_turn")


def result_reference(events: list) -> dict:
    """The lesson's rules for the one result a child's run gives back."""
    stop = events[-1]
    last = stop["turns"] - 1 if stop["reason"] in BROKEN_TURN else stop["turns"]
    answer = "".join(e["text"] for e in events if e["type"] == "text_delta" and e["turn"] == last)
    result = {
        "answer": answer,
        "stop_reason": stop["reason"],
        "turns": stop["turns"],
        "tool_calls": stop["tool_calls"],
    }
    if stop["reason"] != "assistant_finished":
        result["detail"] = stop["detail"]
    return result


def text(turn: int, piece: str) -> dict:
    return {"type": "text_delta", "turn": turn, "text": piece}


def started(turn: int) -> dict:
    return {"type": "model_start", "turn": turn}


def called(turn: int, name: str, result: dict) -> list:
    return [
        {"type": "tool_start", "turn": turn, "name": name, "arguments": {"path": "a.py"}},
        {"type": "tool_result", "turn": turn, "name": name, "result": result},
    ]


def stopped(reason: str, turns: int, calls: int, detail: str, **more) -> dict:
    return {
        "type": "stopped",
        "reason": reason,
        "turns": turns,
        "tool_calls": calls,
        "detail": detail,
        **more,
    }


READ = {"path": "a.py", "content": "x = 1\n" * 40}
FINISHED = [
    started(1), text(1, "Let me read it."), *called(1, "read_file", READ),
    started(2), text(2, "Line 1 sets "), text(2, "x to 1."),
    stopped("assistant_finished", 2, 1, "the model gave its final answer"),
]  # fmt: skip
OUT_OF_BUDGET = [
    started(1), text(1, "Reading a.py."), *called(1, "read_file", READ),
    started(2), text(2, "Reading it again."), *called(2, "read_file", READ),
    stopped("max_turns", 2, 2, "the budget of 2 model requests is spent"),
]  # fmt: skip
MODEL_DOWN = [
    started(1), text(1, "Reading a.py first."), *called(1, "read_file", READ),
    started(2), text(2, "Line 1 s"),
    stopped("model_error", 2, 1, "the model call failed: connection reset", error="reset"),
]  # fmt: skip
DOWN_AT_ONCE = [
    started(1),
    stopped("model_error", 1, 0, "the model call failed: connection refused", error="refused"),
]
RESULT_CASES = [
    ("a child that finished", [FINISHED], "the answer is the text of its last reply only"),
    (
        "a child out of budget",
        [OUT_OF_BUDGET],
        "it did not finish: the parent must read the stop reason and the detail",
    ),
    (
        "a child whose model failed mid-reply",
        [MODEL_DOWN],
        "never raise on a child's model_error; its last reply broke off, so the answer is "
        "the turn before's",
    ),
    ("a child whose model was down from the start", [DOWN_AT_ONCE], "no reply ended: answer ''"),
]


def _drawn_result(draw: random.Random) -> list:
    turns = draw.randrange(1, 5)
    events = []
    for turn in range(1, turns + 1):
        events.append(started(turn))
        events += [text(turn, f"t{turn}p{n} ") for n in range(draw.randrange(0, 3))]
        if turn < turns:
            events += called(turn, "read_file", {"content": "y" * draw.randrange(50)})
    reason = draw.choice(["assistant_finished", "max_turns", "model_error", "empty_response"])
    events.append(stopped(reason, turns, turns - 1, f"detail {draw.randrange(99)}"))
    return [events]


def check_subagent_result(subagent_result, *, hidden: bool = False) -> None:
    """``subagent_result(child_events)`` is the one result the parent reads."""
    answer = learner_answer(subagent_result, "subagent_result")
    listed, _ = with_drawn(
        RESULT_CASES, hidden_cases("check_subagent_result") if hidden else [], _drawn_result
    )
    cases = [
        Case(
            label,
            arguments,
            result_reference(*arguments),
            hint=hint,
            shown=f"{answer.name}(<the {len(arguments[0])} events of a child's run, "
            f"stopped: {arguments[0][-1]['reason']}>)",
        )
        for label, arguments, hint in listed
    ]
    run_cases(
        answer,
        cases,
        _result_problem,
        what="subagent_result",
        error_hints={"KeyError": "not every event has every key: read 'text' from text_delta "
                     "events only, and 'detail' from the last event"},
    )  # fmt: skip


def _result_problem(got, case, outcome) -> str | None:
    if type(got) is not dict:
        return f"return one dict, the tool result, not {show(got, 60)}"
    if got == case.expected:
        return None
    expected = case.expected
    extra = set(got) - set(expected)
    if extra & {"events", "transcript", "messages", "results"} or len(str(got)) > 4 * len(
        str(expected)
    ):
        return "the child's transcript went back to the parent: only its answer and counts go"
    if "stop_reason" not in got or got.get("stop_reason") != expected["stop_reason"]:
        return "the stop reason is missing or wrong: the parent must know how the child stopped"
    if "detail" in expected and got.get("detail") != expected["detail"]:
        return "the child did not finish: the result must say why (its 'detail')"
    if "detail" not in expected and "detail" in got:
        return "a child that finished has no 'detail' in its result"
    if got.get("answer") != expected["answer"]:
        return "the answer is not the text of the child's last reply that ended"
    if extra:
        return f"the result holds keys the rules do not: {sorted(extra)}"
    return "the result is not the one the rules give"


# --- 10c: ordered_results -------------------------------------------------------------------


def order_reference(calls: list, finished: list) -> list:
    """The lesson's rules: each call with its result, in the order asked."""
    got = {entry["id"]: entry["result"] for entry in finished}
    return [
        {
            "id": c["id"],
            "name": c["name"],
            "result": got.get(c["id"], {"error": f"{c['name']} did not finish in time"}),
        }
        for c in calls
    ]


_ORDER_REFERENCE = inspect.getsource(order_reference)


def asked(*names: str) -> list:
    return [{"id": f"call_{n}", "name": name} for n, name in enumerate(names, start=1)]


def ended(*pairs) -> list:
    return [{"id": f"call_{n}", "result": result} for n, result in pairs]


ORDER_CASES = [
    (
        "results that ended in the order asked",
        [asked("read_file", "grep"), ended((1, {"content": "a"}), (2, {"count": 2}))],
        "pair each result with its call",
    ),
    (
        "results that ended in another order",
        [
            asked("delegate", "read_file", "grep"),
            ended((3, {"count": 0}), (2, {"content": "b"}), (1, {"answer": "slow"})),
        ],
        "the model reads results in the order it asked for them, not the order they ended",
    ),
    (
        "a call that failed",
        [asked("read_file", "read_file"), ended((2, {"error": "no such file"}), (1, {"x": 1}))],
        "a failed call keeps its error result, in its place",
    ),
    (
        "a call that never ended",
        [asked("grep", "delegate", "glob"), ended((3, {"files": []}), (1, {"count": 1}))],
        "a call with no result gets {'error': '<name> did not finish in time'}, in its place",
    ),
]
ORDER_TIMING = {"sizes": [250, 2_000], "repeats": 2}


def _many_calls(draw: random.Random, count: int) -> list:
    calls = asked(*[draw.choice(["read_file", "grep", "glob"]) for _ in range(count)])
    finished = [{"id": c["id"], "result": {"n": draw.randrange(99)}} for c in calls]
    draw.shuffle(finished)
    return [calls, finished[: count - count // 10]]


def _drawn_order(draw: random.Random) -> list:
    return _many_calls(draw, draw.randrange(1, 8))


def check_ordered_results(ordered_results, *, hidden: bool = False) -> None:
    """``ordered_results(calls, finished)`` puts results back in the order asked, in linear time."""
    answer = learner_answer(ordered_results, "ordered_results")
    listed, draw = with_drawn(
        ORDER_CASES, hidden_cases("check_ordered_results") if hidden else [], _drawn_order
    )
    cases = [
        Case(label, arguments, order_reference(*arguments), hint=hint)
        for label, arguments, hint in listed
    ]
    run_cases(answer, cases, _order_problem, what="ordered_results")
    inputs = {
        size: [_many_calls(draw, size) for _ in range(ORDER_TIMING["repeats"])]
        for size in ORDER_TIMING["sizes"]
    }
    check_linear_time(
        answer,
        (_ORDER_REFERENCE, "order_reference"),
        inputs,
        lambda arguments: order_reference(*arguments),
        what="turns",
        unit="calls",
        min_seconds=0.005,
        hint="index the finished results by id once (a dict), then walk the calls: "
        "searching the finished list for each call is quadratic",
    )


def _order_problem(got, case, outcome) -> str | None:
    if type(got) is not list or not all(type(item) is dict for item in got):
        return f"return a list of dicts (id, name, result), not {show(got, 60)}"
    if got == case.expected:
        return None
    calls, finished = case.arguments
    if len(got) < len(case.expected):
        return (
            f"{len(case.expected) - len(got)} call(s) lost: every call asked gets a result, "
            "a failed or late one included"
        )
    if [item.get("id") for item in got] != [c["id"] for c in calls]:
        return "the results are not in the order the calls were asked"
    for item, want in zip(got, case.expected):
        if item != want:
            return (
                f"{item.get('id')}: got {show(item, 80)}, expected {show(want, 80)}: each "
                "call with its own result, a late one with the rules' error"
            )
    return "the results are not the calls' results in the order asked"
