"""Lesson 12's check: which layer stops an attempted action, the gate, the sandbox, or neither.

The rules are the lesson's, written again here as a small reference (``layer``): the gate
of the exercise allows a command by its first words, and each sandbox profile stops a
stated set of effects. Nothing here comes from ``labkit.harness.gate`` or
``labkit.harness.sandbox``, the code the lesson teaches (a test holds the profiles' sets
to what the real sandbox does, effect by effect).
"""

from __future__ import annotations

import random

from ..feedback import Case, run_cases, show
from ..isolated import same
from .common import DRAWN, hidden_cases, learner_answer, new_seed

__all__ = ["check_layers"]

LAYERS = ("gate", "sandbox", "neither")
PROFILE_NAMES = ("read-only", "workspace-write", "none")
#: The exercise's gate: a call runs only if its command starts with one of these, word for word.
GATE_ALLOWS = (("python", "-m", "pytest"), ("git", "status"), ("cat",), ("ls",))

#: What an action does when it runs, and why each profile stops it or not.
EFFECTS = {
    "read the workspace": "every profile lets a command read the workspace: it is there to "
    "be worked on",
    "write the workspace": "workspace-write lets a command write the workspace; read-only "
    "binds it read-only",
    "write outside the workspace": "outside the workspace the file system is read-only or "
    "absent in both sandboxed profiles",
    "read a key in your home": "your home folder is not in the sandbox at all (HOME is an "
    "empty /tmp/home)",
    "use the network": "both sandboxed profiles have no network (--unshare-net)",
    "start 1,000 processes": "both sandboxed profiles cap how many processes run at once",
    "fill /tmp": "the sandbox's /tmp is a private folder of a fixed size",
    "fill the workspace": "the sandbox caps one file's size and /tmp, not how much the "
    "workspace grows: only read-only, where nothing can be written, stops it",
    "read a system file": "the system's folders (/usr, /etc...) are there to run programs: "
    "readable in every profile",
    "read through a hard link in the workspace": "a hard link is a file of the workspace: "
    "whatever the workspace holds is there to be read",
    "write through a hard link in the workspace": "a hard link is a file of the workspace: "
    "writable wherever the workspace is, so only read-only stops it",
}
#: What each profile's sandbox stops, by the lesson's table.
SANDBOXED = {
    "write outside the workspace",
    "read a key in your home",
    "use the network",
    "start 1,000 processes",
    "fill /tmp",
}
STOPS = {
    "none": frozenset(),
    "workspace-write": frozenset(SANDBOXED),
    "read-only": frozenset(
        SANDBOXED
        | {
            "write the workspace",
            "fill the workspace",
            "write through a hard link in the workspace",
        }
    ),
}


def layer(action: dict, profile: str) -> str:
    """The reference: which layer stops ``action`` under ``profile``, by the lesson's rules."""
    words = tuple(action["command"])
    if not any(words[: len(allowed)] == allowed for allowed in GATE_ALLOWS):
        return "gate"
    return "sandbox" if action["effect"] in STOPS[profile] else "neither"


def act(command: list, effect: str) -> dict:
    return {"command": command, "effect": effect}


PYTEST = ["python", "-m", "pytest", "-q"]
#: (what the case shows, the action, the profile, a hint)
CASES = [
    (
        "lesson 07's escape: the tests write outside",
        act(PYTEST, "write outside the workspace"),
        "workspace-write",
        "the gate allows the tests by their words; what the tests' code does is the sandbox's",
    ),
    (
        "cat reads a key in your home",
        act(["cat", "/home/you/.ssh/id_rsa"], "read a key in your home"),
        "workspace-write",
        "the gate allows cat, whatever file it is given: it judges words, not effects",
    ),
    (
        "a shell hiding rm",
        act(["sh", "-c", "git status; rm -rf ~"], "write outside the workspace"),
        "workspace-write",
        "sh is not on the gate's list: the call never runs, so the sandbox never sees it",
    ),
    (
        "rm with no sandbox",
        act(["rm", "-rf", "."], "write the workspace"),
        "none",
        "the gate does not depend on the profile",
    ),
    (
        "the tests write the workspace",
        act(PYTEST, "write the workspace"),
        "workspace-write",
        "workspace-write is made for this",
    ),
    (
        "the tests write the workspace, read-only",
        act(PYTEST, "write the workspace"),
        "read-only",
        "read-only binds the workspace read-only",
    ),
    (
        "the network with no sandbox",
        act(PYTEST, "use the network"),
        "none",
        "profile none is no sandbox: it stops nothing",
    ),
    ("the network, read-only", act(PYTEST, "use the network"), "read-only", ""),
    (
        "cat of a system file",
        act(["cat", "/etc/passwd"], "read a system file"),
        "workspace-write",
        "",
    ),
    (
        "a look-alike of pytest",
        act(["python", "-m", "pytest_evil"], "read the workspace"),
        "workspace-write",
        "pytest_evil is not pytest: compare whole words",
    ),
    ("a fork bomb in the tests", act(PYTEST, "start 1,000 processes"), "workspace-write", ""),
    ("ls in read-only", act(["ls", "-la"], "read the workspace"), "read-only", ""),
    (
        "the tests write through a hard link",
        act(PYTEST, "write through a hard link in the workspace"),
        "workspace-write",
        "",
    ),
    ("the tests fill the workspace", act(PYTEST, "fill the workspace"), "workspace-write", ""),
]

COMMANDS = [
    PYTEST,
    ["python", "-m", "pytest"],
    ["python", "-m", "pytest_x"],
    ["python", "-c", "print(1)"],
    ["git", "status"],
    ["git", "push"],
    ["cat", "notes.txt"],
    ["ls"],
    ["lsof"],
    ["rm", "-rf", "."],
    ["sh", "-c", "python -m pytest"],
    ["bash", "-c", "cat x"],
    ["curl", "x.example"],
]


def drawn_action(draw: random.Random) -> tuple[dict, str]:
    return act(list(draw.choice(COMMANDS)), draw.choice(sorted(EFFECTS))), draw.choice(
        PROFILE_NAMES
    )


def check_layers(stopped_by, *, hidden: bool = False) -> None:
    """``stopped_by(action, profile)`` names the layer that stops ``action``."""
    answer = learner_answer(stopped_by, "stopped_by")
    seed = new_seed()
    draw = random.Random(seed)
    drawn = [
        (f"drawn case {n} (seed {seed})", *drawn_action(draw), "") for n in range(1, DRAWN + 1)
    ]
    cases = [
        Case(
            label,
            [action, profile],
            layer(action, profile),
            hint=hint,
            shown=f"{answer.name}({show(action, 200)}, {profile!r})",
        )
        for label, action, profile, hint in CASES
        + (hidden_cases("check_layers") if hidden else [])
        + drawn
    ]
    run_cases(answer, cases, _problem, what="stopped_by")


def _problem(got, case, outcome) -> str | None:
    if type(got) is not str or got not in LAYERS:
        return f"return 'gate', 'sandbox' or 'neither' (a str), not {show(got, 60)}" + (
            ": did you forget `return`?" if got is None else ""
        )
    if not same(outcome.arguments, case.arguments):
        return "your function changed the action it was given: only read it"
    expected = case.expected
    if got == expected:
        return None
    action, profile = case.arguments
    effect, words = action["effect"], " ".join(action["command"])
    if expected == "gate":
        return (
            f"the gate stops `{words}` before it runs (it is not on the gate's list), so the "
            f"sandbox never sees it: a denied call is the gate's, whatever it would have done"
        )
    if got == "gate":
        return (
            f"the gate allows `{words}`: it judges a command's words, never what the program "
            f"will do once it runs; '{effect}' is for the sandbox to stop, or for no one"
        )
    if profile == "none":
        return "profile none is no sandbox at all: it stops nothing the gate lets through"
    if expected == "sandbox":
        return f"the {profile} sandbox stops '{effect}': {EFFECTS[effect]}"
    return f"the {profile} sandbox does not stop '{effect}': {EFFECTS[effect]}"
