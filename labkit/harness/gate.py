"""The permission gate: between the assembled tool call and its dispatch, allow, deny or ask.

A policy is a list of rules written like commands: ``allow("python -m pytest *")``,
``deny("rm *")``. A rule is matched word by word against the *parsed* command, never
against a substring of its text, and a trailing ``*`` stands for any further words.
A shell string (``sh -c "..."``, or a string given to ``check_command``) is split into
every command it would run: ``pytest; rm -rf .`` is two commands, ``pytest`` and
``rm -rf .``, and each must be allowed; so must each command substituted with
``$(...)`` or backticks, each redirection (``> file`` is the command ``> file``), each
script of a nested shell and each command a runner starts (``env``, ``xargs``,
``find -exec``...). How a call is split into commands is ``shell_syntax.py``'s
(``commands_in``, whose docstring gives the grammar); this module is the policy and the
gate.

For each command the strictest rule that names it wins (deny, then ask, then allow); a
command no rule names gets the policy's default, which is ask or deny, never allow. A
command holding something only the shell knows at run time (a variable, a substitution, a
glob, ``~``, an assignment in front) is never allowed by a rule, and a deny or ask rule
applies to it if it *may* name it once the shell has expanded it (``git $x`` may be
``git push``). A deny or ask rule names a program by its path too (``/bin/rm`` is
``rm``). What the scanner cannot judge (arithmetic on names, an unread option, a shell
reading a file, text it cannot read...) may run anything: never allowed, and denied when
the policy denies anything. A call nested past the scanner's bounds is denied outright.
The strictest command decides the call.

``check`` is pure: the same policy and call give the same ``Verdict``. ``Gate.review``
turns an "ask" into a decision through its ``decide`` hook: recorded answers in replay
and under papermill (``Answers``), a person's click in a notebook
(``labkit.lessons.gate_widget``). Nothing to ask means deny.

A gate is not a sandbox: a command it lets through runs with your permissions.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from .contracts import PermissionFields
from .shell_syntax import Part, ShellSyntaxError, TooComplex, commands_in
from .shell_text import typed

#: From the least to the most strict; the strictest that applies wins.
ACTIONS = ("allow", "ask", "deny")


@dataclass(frozen=True)
class Rule:
    """``action`` for the commands ``pattern`` names: its words, then (with a last ``*``)
    any further words."""

    action: str
    pattern: str
    words: tuple[str, ...] = field(init=False, repr=False, compare=False)
    open_ended: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"a rule's action is one of {ACTIONS}, not {self.action!r}")
        words = shlex.split(self.pattern)
        if not words or words == ["*"]:
            raise ValueError(
                f"rule {self.pattern!r} names no program; write the program "
                "first, e.g. 'python -m pytest *'"
            )
        if "*" in words[:-1]:
            raise ValueError(f"rule {self.pattern!r}: '*' may only be the last word")
        open_ended = words[-1] == "*"
        object.__setattr__(self, "words", tuple(words[:-1] if open_ended else words))
        object.__setattr__(self, "open_ended", open_ended)

    def names(self, part: Part) -> str | None:
        """Whether this rule names the command ``part``: ``"yes"``, word for word (the rule's
        words are its first words, after any assignments, and nothing follows unless the
        rule ends with ``*``); ``"maybe"``, once the shell has expanded it (a word that
        changes at run time, a command that may run anything); None. Only a ``"yes"`` on a
        command with nothing dynamic allows; deny and ask rules also name a program by
        its path (``/bin/rm`` is ``rm``)."""
        if part.unknown:
            return None if self.action == "allow" else "maybe"
        if self.action == "allow" and part.dynamic:
            return None
        words, offset = part.words, part.first
        for position in range(len(self.words)):
            index = offset + position
            if index in part.expanded:
                return "maybe"  # from here on, the shell decides the words
            if index >= len(words):
                return "maybe" if part.more else None
            if not self._same(position, words[index]):
                return None
        if self.open_ended:
            return "yes"
        extra = range(offset + len(self.words), len(words))
        if not extra:
            return "maybe" if part.more else "yes"
        return "maybe" if all(index in part.expanded for index in extra) else None

    def _same(self, position: int, word: str) -> bool:
        rule_word = self.words[position]
        if word == rule_word:
            return True
        return (
            position == 0
            and self.action != "allow"
            and "/" not in rule_word
            and PurePosixPath(word).name == rule_word
        )

    def __str__(self) -> str:
        return f"{self.action} {self.pattern}"


def allow(pattern: str) -> Rule:
    return Rule("allow", pattern)


def deny(pattern: str) -> Rule:
    return Rule("deny", pattern)


def ask(pattern: str) -> Rule:
    return Rule("ask", pattern)


@dataclass(frozen=True)
class Policy:
    """Rules for ``run_command``, an action per other tool, and the default for the rest."""

    rules: tuple[Rule, ...] = ()
    tools: dict[str, str] = field(default_factory=dict)  # e.g. {"read_file": "allow"}
    default: str = "ask"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", tuple(self.rules))
        if self.default not in ("ask", "deny"):
            raise ValueError(
                f"a policy's default must be 'ask' or 'deny', not "
                f"{self.default!r}: a command no rule names is never allowed"
            )
        for rule in self.rules:
            if not isinstance(rule, Rule):
                raise TypeError(
                    f"a policy's rules are made with allow(), deny() or ask(), "
                    f"not {type(rule).__name__}"
                )
        for name, action in self.tools.items():
            if action not in ACTIONS:
                raise ValueError(f"tool {name!r}: the action is one of {ACTIONS}, not {action!r}")


@dataclass(frozen=True)
class Verdict:
    """What the policy says of one call: the action, the rule that decided, and why."""

    action: str
    reason: str
    rule: str | None = None
    parts: tuple[tuple[str, ...], ...] = ()


#: The ``decide`` hook of a ``Gate``: given the command as a person reads it and the
#: policy's verdict, "allow" or "deny" (anything else, None included, denies).
Decide = Callable[[str, Verdict], Any]


def check(policy: Policy, name: str, arguments: dict[str, Any]) -> Verdict:
    """The policy's verdict on one tool call (pure)."""
    if name != "run_command":
        action = policy.tools.get(name, policy.default) if isinstance(name, str) else policy.default
        source = f"the policy's action for {name}" if name in policy.tools else "the default"
        return Verdict(action, f"{name!r} is not a command; {source} is {action}")
    command = arguments.get("command") if isinstance(arguments, dict) else None
    if not isinstance(command, list) or not all(isinstance(word, str) for word in command):
        return Verdict(
            policy.default, f"the command is not a list of strings; the default is {policy.default}"
        )
    return check_command(policy, command)


def check_command(policy: Policy, command: str | Sequence[str]) -> Verdict:
    """The verdict on a command: an argument list (run without a shell) or a shell string."""
    try:
        parts = commands_in(command)
    except TooComplex as exc:
        return Verdict("deny", f"the gate refuses to judge this command: {exc}")
    except RecursionError:  # a bound above should come first; this is the net below it
        return Verdict("deny", "the gate refuses to judge this command: it nests too deeply")
    except ShellSyntaxError as exc:
        return _unseen(policy, f"the command cannot be read ({exc})")
    if not parts:
        return Verdict(policy.default, f"no command found; the default is {policy.default}")
    verdicts = [_judge(policy, part) for part in parts]
    worst = max(verdicts, key=lambda verdict: ACTIONS.index(verdict.action))
    if len(parts) > 1 and worst.action == "allow":
        worst = Verdict("allow", f"all {len(parts)} commands are allowed", worst.rule)
    return Verdict(worst.action, worst.reason, worst.rule, tuple(part.words for part in parts))


def _judge(policy: Policy, part: Part) -> Verdict:
    """The verdict on one command: the strictest rule that names it; the default when none
    does for certain; and a rule that may name it once the shell has expanded it (or that
    may name what it runs unseen) when that is stricter."""
    certain, possible = [], []
    for rule in policy.rules:
        named = rule.names(part)
        if named == "yes":
            certain.append(rule)
        elif named == "maybe":
            possible.append(rule)
    if certain:
        rule = max(certain, key=lambda rule: ACTIONS.index(rule.action))
        verdict = Verdict(rule.action, f"`{part}` matches the rule '{rule}'", str(rule))
    elif part.unknown:
        verdict = Verdict(
            policy.default, f"`{part}`: {part.unknown}; the default is {policy.default}"
        )
    else:
        why = (
            "it depends on what the shell expands at run time, so no allow rule applies"
            if part.dynamic
            else "no rule matches it"
        )
        verdict = Verdict(policy.default, f"`{part}`: {why}; the default is {policy.default}")
    if possible:
        rule = max(possible, key=lambda rule: ACTIONS.index(rule.action))
        if ACTIONS.index(rule.action) > ACTIONS.index(verdict.action):
            how = (
                f"{part.unknown}, so it may run what the rule '{rule}' names"
                if part.unknown
                else f"once the shell expands it, it may be what the rule '{rule}' names"
            )
            verdict = Verdict(rule.action, f"`{part}`: {how}", str(rule))
    return verdict


def _unseen(policy: Policy, why: str) -> Verdict:
    """The verdict on a command that may run what the gate cannot see: any deny rule may
    name what it runs, so it is denied if the policy denies anything; else the default."""
    denying = next((rule for rule in policy.rules if rule.action == "deny"), None)
    if denying is not None:
        return Verdict(
            "deny", f"{why}, so it may run what the rule '{denying}' names", str(denying)
        )
    return Verdict(policy.default, f"{why}; the default is {policy.default}")


@dataclass(frozen=True)
class Decision:
    """The gate's last word on one call: run it or not, and who said so."""

    allowed: bool
    verdict: Verdict
    by: str  # "policy", "answer", "person" or "nobody" (an ask with no one to answer)
    command: str

    def event_fields(self) -> PermissionFields:
        """What a ``permission`` event records."""
        return {
            "command": self.command,
            "verdict": self.verdict.action,
            "decision": "allow" if self.allowed else "deny",
            "by": self.by,
            "rule": self.verdict.rule,
            "reason": self.verdict.reason,
            "parts": [list(words) for words in self.verdict.parts],
        }

    def tool_result(self) -> dict[str, str]:
        """What the model reads instead of a result when the call was denied."""
        # the same words whether a person clicked or a recorded answer stood in for one,
        # so a replayed run sends the model exactly what the recorded run sent
        who = {"policy": "by the policy", "nobody": "because no one could approve it"}.get(
            self.by, "by the person asked"
        )
        return {
            "error": f"denied by the permission gate ({who}): {self.verdict.reason}. "
            "The command did not run; do not retry it, try another way "
            "or finish with what you have."
        }


class Gate:
    """The harness's gate: the policy's verdict, and for "ask" the answer of ``decide``.

    ``decide(command, verdict)`` returns "allow" or "deny"; anything else (None
    included) denies. Without ``decide``, every "ask" is denied.
    """

    def __init__(self, policy: Policy, decide: Decide | None = None) -> None:
        self.policy, self.decide = policy, decide

    def review(self, name: str, arguments: dict[str, Any]) -> Decision:
        verdict = check(self.policy, name, arguments)
        command = describe(name, arguments)
        if verdict.action != "ask":
            return Decision(verdict.action == "allow", verdict, "policy", command)
        if self.decide is None:
            return Decision(False, verdict, "nobody", command)
        answer = self.decide(command, verdict)
        if answer not in ("allow", "deny"):
            return Decision(False, verdict, "nobody", command)
        return Decision(answer == "allow", verdict, getattr(self.decide, "by", "person"), command)


def describe(name: str, arguments: dict[str, Any]) -> str:
    """The exact call as a person should see it: a command line as they would type it
    (``shell_text.typed``), or the tool and its JSON."""
    command = arguments.get("command") if isinstance(arguments, dict) else None
    if (
        name == "run_command"
        and isinstance(command, list)
        and all(isinstance(word, str) for word in command)
    ):
        return typed(command)
    return f"{name} {json.dumps(arguments, ensure_ascii=False)}"


class Answers:
    """A ``decide`` hook for replay and papermill runs: answers given in advance, as a list
    of "allow"/"deny" used in order, or a dict from the command (as ``describe`` writes it)
    to its answer. A question it has no answer for is denied (it returns None)."""

    by = "answer"

    def __init__(self, given: list[str] | tuple[str, ...] | dict[str, str]) -> None:
        if isinstance(given, str) or not isinstance(given, (list, tuple, dict)):
            raise TypeError(
                f"answers are a list such as ['allow', 'deny'] (used in order) or a "
                f"dict from command to answer, not {type(given).__name__} {given!r:.60}"
            )
        values = list(given.values()) if isinstance(given, dict) else list(given)
        for answer in values:
            if answer not in ("allow", "deny"):
                raise ValueError(f"an answer is 'allow' or 'deny', not {answer!r}")
        self.given = dict(given) if isinstance(given, dict) else values
        self.asked: list[str] = []  # every command it was asked about, in order

    def __call__(self, command: str, verdict: Verdict) -> str | None:
        self.asked.append(command)
        if isinstance(self.given, dict):
            return self.given.get(command)
        return self.given.pop(0) if self.given else None
