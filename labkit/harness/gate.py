"""The permission gate: between the assembled tool call and its dispatch, allow, deny or ask.

A policy is a list of rules written like commands: ``allow("python -m pytest *")``,
``deny("rm *")``. A rule is matched word by word against the *parsed* command, never
against a substring of its text, and a trailing ``*`` stands for any further words.
A shell string (``sh -c "..."``, or a string given to ``check_command``) is split into
every command it would run: ``pytest; rm -rf .`` is two commands, ``pytest`` and
``rm -rf .``, and each must be allowed; so must each command substituted with
``$(...)`` or backticks, and each redirection (``> file`` is the command ``> file``).
A command holding something only the shell knows at run time (a variable, a
substitution, a glob, ``~``, an assignment in front) is never allowed by a rule.
Several matching rules: the strictest wins (deny, then ask, then allow). No rule:
the policy's default, which is ask or deny, never allow.

``check`` is pure: the same policy and call give the same ``Verdict``. ``Gate.review``
turns an "ask" into a decision through its ``decide`` hook: recorded answers in replay
and under papermill (``Answers``), a person's click in a notebook
(``labkit.lessons.gate_widget``). Nothing to ask means deny.

A gate is not a sandbox: a command it lets through runs with your permissions.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

#: From the least to the most strict; the strictest that applies wins.
ACTIONS = ("allow", "ask", "deny")
#: Programs whose ``-c`` argument is a shell script: the gate judges the script's commands.
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash"}
_SEPARATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "\n", "(", ")")
_RESERVED = {"!", "{", "}", "if", "then", "elif", "else", "fi", "do", "done", "while", "until"}
_REDIRECTIONS = ("&>>", "&>", ">>", ">&", ">|", "<<<", "<<", "<>", "<&", ">", "<")


class ShellSyntaxError(ValueError):
    """A shell string the gate cannot split into commands (an unclosed quote, say)."""


@dataclass(frozen=True)
class Part:
    """One command a call would run: its words, and whether the shell would change them."""

    words: tuple
    dynamic: bool = False  # holds a variable, substitution, glob...: unknown until run time

    def __str__(self):
        return shlex.join(self.words) if self.words else "(nothing)"


@dataclass(frozen=True)
class Rule:
    """``action`` for the commands ``pattern`` names: its words, then (with a last ``*``)
    any further words."""

    action: str
    pattern: str
    words: tuple = field(init=False, repr=False, compare=False)
    open_ended: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self):
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

    def matches(self, part: Part) -> bool:
        """Word for word: the rule's words are the command's first words, and nothing
        follows unless the rule ends with ``*``. A dynamic command matches no allow rule."""
        if self.action == "allow" and part.dynamic:
            return False
        words = self.words
        if part.words[: len(words)] != words:
            return False
        return self.open_ended or len(part.words) == len(words)

    def __str__(self):
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

    rules: tuple = ()
    tools: dict = field(default_factory=dict)  # e.g. {"read_file": "allow"}
    default: str = "ask"

    def __post_init__(self):
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
    parts: tuple = ()


def check(policy: Policy, name, arguments) -> Verdict:
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


def check_command(policy: Policy, command) -> Verdict:
    """The verdict on a command: an argument list (run without a shell) or a shell string."""
    try:
        parts = commands_in(command)
    except ShellSyntaxError as exc:
        return Verdict(
            policy.default, f"the command cannot be read ({exc}); the default is {policy.default}"
        )
    if not parts:
        return Verdict(policy.default, f"no command found; the default is {policy.default}")
    verdicts = [_judge(policy, part) for part in parts]
    worst = max(verdicts, key=lambda verdict: ACTIONS.index(verdict.action))
    if len(parts) > 1 and worst.action == "allow":
        worst = Verdict("allow", f"all {len(parts)} commands are allowed", worst.rule)
    return Verdict(worst.action, worst.reason, worst.rule, tuple(part.words for part in parts))


def _judge(policy: Policy, part: Part) -> Verdict:
    matching = [rule for rule in policy.rules if rule.matches(part)]
    if not matching:
        why = (
            "it depends on what the shell expands at run time, so no allow rule applies"
            if part.dynamic
            else "no rule matches it"
        )
        return Verdict(policy.default, f"`{part}`: {why}; the default is {policy.default}")
    rule = max(matching, key=lambda rule: ACTIONS.index(rule.action))
    return Verdict(rule.action, f"`{part}` matches the rule '{rule}'", str(rule))


def commands_in(command) -> list:
    """Every command ``command`` would run, as ``Part``s.

    An argument list runs one program with those exact words (nothing is expanded), unless
    it is a shell given a script with ``-c``: then the script's commands. A string is
    read as shell syntax.
    """
    if isinstance(command, str):
        return _parse(command)
    words = tuple(command)
    if words and PurePosixPath(words[0]).name in SHELLS:
        script = _script_of(words)
        if script is not None:
            return _parse(script)
    return [Part(words)] if words else []


def _script_of(words: tuple):
    """The script of ``sh -c SCRIPT`` (also ``bash -lc``, ``sh -e -c``); None if none."""
    for index, word in enumerate(words[1:], start=1):
        if not word.startswith("-") or word in ("-", "--"):
            return None
        if "c" in word[1:] and not word.startswith("--"):
            return words[index + 1] if index + 1 < len(words) else ""
    return None


def _parse(text: str) -> list:
    parts = []
    end = _Scanner(text, parts).scan(0, closing=None)
    if end != len(text):
        raise ShellSyntaxError(f"unexpected {text[end]!r} at character {end}")
    return parts


class _Scanner:
    """Splits shell text into commands, the way sh would before expanding anything.

    Handles quotes, backslashes, the separators, redirections, ``$(...)``, backticks
    (their commands are added as parts of their own) and marks words the shell would
    expand. What it does not know it marks dynamic, so no allow rule can pass it.
    """

    def __init__(self, text: str, parts: list):
        self.text, self.parts = text, parts

    def scan(self, i: int, closing):
        text, depth = self.text, 0
        words, word, dynamic = [], None, False
        redirect = None

        def end_word():
            nonlocal word, redirect
            if word is not None:
                if redirect is not None:
                    self.parts.append(Part((redirect, word), dynamic))
                    redirect = None
                else:
                    words.append(word)
            word = None

        def end_command():
            nonlocal words, dynamic, redirect
            end_word()
            if redirect is not None:  # an operator with no target, e.g. `echo >`
                self.parts.append(Part((redirect,), True))
                redirect = None
            while words and words[0] in _RESERVED:  # `if pytest; then ...`: judge pytest
                words.pop(0)
            if words:
                if _is_assignment(words[0]):
                    dynamic = True  # FOO=1 cmd: the shell changes cmd's environment
                self.parts.append(Part(tuple(words), dynamic))
            words, dynamic = [], False

        while i < len(text):
            c = text[i]
            if c == "`" and closing == "`":
                end_command()
                return i + 1
            if c == ")" and closing == ")" and depth == 0:
                end_command()
                return i + 1
            if c in " \t":
                end_word()
                i += 1
            elif c == "#" and word is None:  # a comment runs to the end of the line
                while i < len(text) and text[i] != "\n":
                    i += 1
            elif c == "\\":
                if i + 1 == len(text):
                    raise ShellSyntaxError("the command ends with a backslash")
                if text[i + 1] == "\n":
                    i += 2  # a line continuation
                    continue
                word = (word or "") + text[i + 1 : i + 2]
                i += 2
            elif c == "'":
                close = text.find("'", i + 1)
                if close < 0:
                    raise ShellSyntaxError("a single quote is not closed")
                word = (word or "") + text[i + 1 : close]
                i = close + 1
            elif c == '"':
                word = word or ""
                i += 1
                while True:
                    if i >= len(text):
                        raise ShellSyntaxError("a double quote is not closed")
                    c = text[i]
                    if c == '"':
                        i += 1
                        break
                    if c == "\\" and text[i + 1 : i + 2] in ('"', "\\", "$", "`", "\n"):
                        word += text[i + 1]
                        i += 2
                    elif c in "$`":
                        start = i
                        i, expanded = self.expansion(i)
                        word += text[start:i]
                        dynamic = dynamic or expanded
                    else:
                        word += c
                        i += 1
            elif c in "$`":
                start = i
                i, expanded = self.expansion(i)
                word = (word or "") + text[start:i]
                dynamic = dynamic or expanded
            elif text.startswith(_REDIRECTIONS, i) or (
                c.isdigit() and word is None and _redirection_after_digits(text, i)
            ):
                end_word()
                j = i
                while text[j].isdigit():
                    j += 1
                operator = next(op for op in _REDIRECTIONS if text.startswith(op, j))
                if operator in ("<<", "<<<"):
                    dynamic = True  # a here-document: its text is data the gate does not read
                redirect = text[i : j + len(operator)]
                i = j + len(operator)
                if operator.endswith("&") and (text[i : i + 1].isdigit() or text[i : i + 1] == "-"):
                    redirect = None  # 2>&1, >&-: joins or closes a stream, touches no file
                    i += 1
            elif text.startswith(_SEPARATORS, i):
                operator = next(op for op in _SEPARATORS if text.startswith(op, i))
                end_command()
                if operator == "(":
                    depth += 1
                elif operator == ")":
                    if depth == 0:
                        raise ShellSyntaxError("a ')' closes nothing")
                    depth -= 1
                i += len(operator)
            else:
                if c in "*?[~{" and (c != "~" or word is None):
                    dynamic = True  # a glob, a brace or a tilde: expanded by the shell
                word = (word or "") + c
                i += 1
        if closing is not None:
            raise ShellSyntaxError(f"a {'$(' if closing == ')' else '`'} is not closed")
        if depth:
            raise ShellSyntaxError("a '(' is not closed")
        end_command()
        return i

    def expansion(self, i: int):
        """Read the ``$...`` or backtick expansion at ``i``: return where it ends and whether
        it is one (a lone ``$`` is plain text). Substituted commands become parts."""
        text = self.text
        if text[i] == "`":
            return _Scanner(text, self.parts).scan(i + 1, closing="`"), True
        following = text[i + 1 : i + 2]
        if following == "(":
            return _Scanner(text, self.parts).scan(i + 2, closing=")"), True
        if following == "{":
            close = text.find("}", i + 2)
            if close < 0:
                raise ShellSyntaxError("a '${' is not closed")
            return close + 1, True
        if following == "_" or following.isalpha():  # $name
            j = i + 1
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            return j, True
        if following and following in "0123456789@*#?$!-":  # $1, $@, $?...
            return i + 2, True
        if following in ("'", '"'):
            return i + 1, True  # $'...' and $"...": quoting the shell rewrites
        return i + 1, False


def _redirection_after_digits(text: str, i: int) -> bool:
    j = i
    while j < len(text) and text[j].isdigit():
        j += 1
    return text.startswith(_REDIRECTIONS, j)


def _is_assignment(word: str) -> bool:
    name, equals, _ = word.partition("=")
    return bool(equals) and name.isidentifier()


@dataclass(frozen=True)
class Decision:
    """The gate's last word on one call: run it or not, and who said so."""

    allowed: bool
    verdict: Verdict
    by: str  # "policy", "answer", "person" or "nobody" (an ask with no one to answer)
    command: str

    def event_fields(self) -> dict:
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

    def tool_result(self) -> dict:
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

    def __init__(self, policy: Policy, decide=None):
        self.policy, self.decide = policy, decide

    def review(self, name, arguments) -> Decision:
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


def describe(name, arguments) -> str:
    """The exact call as a person should see it: a command line, or the tool and its JSON."""
    command = arguments.get("command") if isinstance(arguments, dict) else None
    if (
        name == "run_command"
        and isinstance(command, list)
        and all(isinstance(word, str) for word in command)
    ):
        return shlex.join(command)
    return f"{name} {json.dumps(arguments, ensure_ascii=False)}"


class Answers:
    """A ``decide`` hook for replay and papermill runs: answers given in advance, as a list
    of "allow"/"deny" used in order, or a dict from the command (as ``describe`` writes it)
    to its answer. A question it has no answer for is denied (it returns None)."""

    by = "answer"

    def __init__(self, given):
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
        self.asked = []  # every command it was asked about, in order

    def __call__(self, command, verdict):
        self.asked.append(command)
        if isinstance(self.given, dict):
            return self.given.get(command)
        return self.given.pop(0) if self.given else None
