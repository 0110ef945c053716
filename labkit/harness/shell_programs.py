"""What a command runs besides itself, read from its words alone.

``shell_syntax.py`` splits a shell string into commands; this module says, for one command
(an argument list, or a command found in a string), what *else* it makes run: a shell's
``-c`` script, the words ``eval`` joins, a ``trap``'s action, the command a runner such as
``env``, ``timeout`` or ``xargs`` starts, each ``find -exec``. :func:`runs` answers with a
:class:`Runs`; ``shell_syntax`` reads the scripts and judges the inner commands in turn.

What it cannot tell from the words it says so (``Runs.unknown``), and the gate then never
allows the command and denies it wherever a policy denies anything: a command whose program
is known only at run time (``$cmd``); a shell reading its script from a file or its input
(``sh script.sh``, ``... | sh``); a shell whose syntax this module does not read (``zsh``,
``fish``, ``ksh``...); a shell or a runner given an option this module does not read
(``env -S``, ``bash --frobnicate``), a runner whose options it does not read at all
(``sudo``, ``watch``, ``ssh``, ``flock``...), ``xargs -I`` (its input replaces words of the
command, the program too); ``env`` setting what a shell runs (``BASH_ENV``,
``BASH_FUNC_f%%``); and the builtins that make bash run text later (``alias``,
``source``, ``hash``, ``enable``, ``complete``, ``fc``, ``mapfile -C``, ``declare -i``/``-n``,
a name with a subscript given to ``read``, ``unset``, ``printf -v``..., ``test -v``, ``let``
on names: each can evaluate an array subscript, and a subscript can hold a command
substitution). Options are read as the manuals give them (checked against bash and dash
for the shells): for a shell, ``-c`` anywhere among the options, bundled or not, each
``o``/``O`` taking the next word, ``--`` or ``-`` ending them, the script the first word
after; for a runner, getopt's rules, stopping at the first word that is not an option.

Pure: no program is looked up and nothing runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

#: Shells whose ``-c`` script is read here (bash's and dash's grammar: ``sh`` is either).
SHELLS = {"sh", "bash", "dash", "ash", "rbash"}
#: Shells with a syntax of their own (zsh's glob qualifiers run code, fish is not sh...).
OTHER_SHELLS = {
    "zsh", "ksh", "ksh93", "mksh", "pdksh", "oksh", "yash", "posh", "fish", "csh", "tcsh",
    "elvish", "nu", "xonsh", "pwsh", "powershell", "busybox",
}  # fmt: skip
#: Programs that run another command whose options this module does not read.
RUNNERS_NOT_READ = {
    "sudo", "doas", "su", "runuser", "pkexec", "sg", "newgrp", "chroot", "nsenter",
    "unshare", "ionice", "taskset", "chrt", "numactl", "prlimit", "setpriv", "cgexec",
    "flock", "watch", "script", "ssh", "parallel", "strace", "ltrace", "gdb", "valgrind",
    "perf", "firejail", "bwrap", "systemd-run", "tmux", "screen", "at", "batch", "fakeroot",
    "proot", "xvfb-run", "unbuffer", "rlwrap", "catchsegv", "dbus-run-session", "expect",
    "entr", "sshpass", "torsocks", "proxychains", "proxychains4",
}  # fmt: skip
#: Builtins that make the shell run text it holds, later or elsewhere.
CODE_BUILTINS = {
    "alias", "source", ".", "hash", "enable", "bind", "fc", "complete", "compgen", "mapfile",
    "readarray",
}  # fmt: skip
#: Builtins whose arguments name variables: a name with a subscript runs its arithmetic.
NAME_BUILTINS = {"read", "unset", "getopts", "wait", "printf"}
DECLARING = {"declare", "typeset", "local", "export", "readonly"}
#: Variables whose value a shell runs as code: prompts, start-up files, option sets, and
#: bash's exported functions (``BASH_FUNC_f%%``).
CODE_VARIABLES = re.compile(r"PS[0-4]|PROMPT_COMMAND|ENV|SHELLOPTS|BASH.*")
#: Arithmetic with nothing but numbers and operators: nothing in it can run a command.
PURE_ARITHMETIC = re.compile(r"[0-9\s+\-*/%<>=!&|^~?:,()]*")
NUMBER = re.compile(r"(?<![\w#@])[0-9][\w#@]*")


@dataclass(frozen=True)
class Options:
    """A runner's option grammar, as its manual gives it (getopt, stopping at the first
    word that is not an option, as every command runner does)."""

    flags: str = ""  # single letters without an argument
    with_argument: str = ""  # single letters taking one, attached or as the next word
    attached: str = ""  # single letters whose argument is optional and only attached
    long: frozenset = frozenset()  # --name, or --name=value
    long_with_argument: frozenset = frozenset()  # --name value, or --name=value
    operands: int = 0  # words between the options and the command (timeout's duration)
    assignments: bool = False  # NAME=VALUE words before the command (env)
    numeric: bool = False  # -NUMBER is an option (nice -10)
    bundled: bool = False  # in a bundle each letter taking an argument takes the next word (sh)


RUNNERS = {
    "env": Options("i0v", "uC", long=frozenset({"ignore-environment", "null", "debug",
                   "list-signal-handling", "block-signal", "default-signal", "ignore-signal"}),
                   long_with_argument=frozenset({"unset", "chdir"}), assignments=True),
    "nice": Options(with_argument="n", long_with_argument=frozenset({"adjustment"}),
                    numeric=True),
    "nohup": Options(),
    "timeout": Options("v", "ks", long=frozenset({"preserve-status", "foreground", "verbose"}),
                       long_with_argument=frozenset({"kill-after", "signal"}), operands=1),
    "stdbuf": Options(with_argument="ioe", long_with_argument=frozenset({"input", "output",
                      "error"})),
    "setsid": Options("cfw", long=frozenset({"ctty", "fork", "wait"})),
    "time": Options("apqvV", "fo", long=frozenset({"append", "portability", "quiet",
                    "verbose"}), long_with_argument=frozenset({"format", "output"})),
    "command": Options("pvV"),
    "builtin": Options(),
    "exec": Options("cl", "a"),
    "xargs": Options("0oprtx", "adEILnPs", "eil", long=frozenset({"null", "open-tty",
                     "interactive", "no-run-if-empty", "verbose", "exit", "show-limits", "eof",
                     "replace", "max-lines"}), long_with_argument=frozenset({"arg-file",
                     "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"})),
}  # fmt: skip
SHELL_OPTIONS = Options(
    "abefhkmnptuvxBCEHPTilrsDIqVc",
    "oO",
    long=frozenset({"norc", "noprofile", "posix", "login", "verbose", "restricted",
                    "noediting", "debugger", "dump-strings", "dump-po-strings", "wordexp",
                    "protected", "help", "version", "pretty-print"}),
    long_with_argument=frozenset({"rcfile", "init-file"}),
    bundled=True,
)  # fmt: skip
FIND_ACTIONS = {"-exec", "-execdir", "-ok", "-okdir"}


@dataclass(frozen=True)
class Inner:
    """A command that runs inside another: its words ``words[start:end]``; whether the
    runner adds words at run time (``xargs``); which of its words the runner changes:
    every one after the program (``xargs``), or those holding ``placeholder`` (``find``'s
    ``{}``, the program included)."""

    start: int
    end: int
    more: bool = False
    arguments_change: bool = False
    placeholder: str | None = None


@dataclass(frozen=True)
class Runs:
    """What one command makes run: itself (unless it only hands a script to a shell),
    scripts to read as shell text, inner commands, or something it cannot tell."""

    itself: bool = True
    scripts: tuple[str, ...] = ()
    inner: tuple[Inner, ...] = ()
    unknown: str | None = None


def runs(words: Sequence[str], expanded: Sequence[bool]) -> Runs:
    """What the command ``words`` runs (its program first, assignments already set apart);
    ``expanded[i]`` says the shell changes ``words[i]`` at run time."""
    if not words:
        return Runs()
    if expanded[0]:
        return Runs(unknown="its program is known only at run time")
    program = PurePosixPath(words[0]).name
    if program in SHELLS:
        return _shell(words, expanded)
    if program in OTHER_SHELLS:
        return Runs(unknown=f"{program} is a shell whose syntax the gate does not read")
    if program in RUNNERS_NOT_READ:
        return Runs(unknown=f"{program} runs a command, and the gate does not read its options")
    if program == "find":
        return Runs(inner=tuple(_find_actions(words)))
    if program in RUNNERS:
        return _runner(program, words, expanded)
    return _builtin(program, words, expanded)


def _shell(words: Sequence[str], expanded: Sequence[bool]) -> Runs:
    """``sh [options] -c SCRIPT``: the script is the first word after the options (``-c``
    may come anywhere among them, bundled or not; ``-o``/``-O`` take the next word; ``--``
    or ``-`` end them). Without ``-c`` a shell reads a file or its input."""
    read = _options(SHELL_OPTIONS, words, expanded, signs="-+")
    if read.unknown:
        return Runs(
            unknown=f"{words[0]} is given an option the gate does not read ({read.unknown})"
        )
    if "c" not in read.letters:
        return Runs(unknown="a shell reads its script from a file or its input, unseen")
    if read.end == len(words):
        return Runs(itself=False)  # `sh -c` with no script: the shell refuses, nothing runs
    if expanded[read.end]:
        return Runs(unknown="its script is known only at run time")
    return Runs(itself=False, scripts=(words[read.end],))


def _runner(program: str, words: Sequence[str], expanded: Sequence[bool]) -> Runs:
    options = RUNNERS[program]
    read = _options(options, words, expanded)
    if read.unknown:
        return Runs(unknown=f"{program} is given an option the gate does not read ({read.unknown})")
    start = read.end + options.operands
    if options.assignments:
        while start < len(words) and "=" in words[start] and not words[start].startswith("="):
            if assigns_code(words[start]):
                return Runs(unknown=f"{program} sets {words[start][:40]!r}, which a shell runs")
            start += 1
    if program == "xargs":  # its command gets words from its input; by default echo
        if start == len(words):
            return Runs()
        if read.letters & set("Ii") or "replace" in read.letters:
            return Runs(unknown="xargs -I replaces words of its command, the program too")
        return Runs(inner=(Inner(start, len(words), more=True, arguments_change=True),))
    if start >= len(words):
        return Runs()
    return Runs(inner=(Inner(start, len(words)),))


def _find_actions(words: Sequence[str]) -> list[Inner]:
    """Each ``-exec``/``-execdir``/``-ok``/``-okdir`` command, up to its ``;`` or ``+``."""
    actions, i = [], 1
    while i < len(words):
        if words[i] in FIND_ACTIONS:
            end = i + 1
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            if end > i + 1:
                actions.append(Inner(i + 1, end, placeholder="{}"))
            i = end
        i += 1
    return actions


def _builtin(program: str, words: Sequence[str], expanded: Sequence[bool]) -> Runs:
    arguments, dynamic = words[1:], any(expanded[1:])
    if program in CODE_BUILTINS:
        return Runs(unknown=f"{program} makes the shell run text the gate cannot see")
    if program == "eval":
        if dynamic:
            return Runs(unknown="eval runs text known only at run time")
        return Runs(itself=False, scripts=(" ".join(arguments),) if arguments else ())
    if program == "trap":
        return _trap(arguments, dynamic)
    if program == "let":
        if dynamic or not all(is_pure_arithmetic(word) for word in arguments):
            return Runs(unknown="let evaluates arithmetic on names, which can run commands")
    elif program in ("test", "[") and ({"-v", "-R"} & set(arguments)):
        return Runs(unknown="test -v evaluates a name's subscript, which can run commands")
    elif program in NAME_BUILTINS | DECLARING and _names_subscript(program, arguments, dynamic):
        return Runs(unknown=f"{program} may evaluate a subscript or set what a shell runs")
    return Runs()


def _trap(arguments: Sequence[str], dynamic: bool) -> Runs:
    """``trap ACTION SIGNAL...``: the action runs later, as shell text."""
    if dynamic:
        return Runs(unknown="trap is given an action known only at run time")
    if arguments[:1] == ["--"]:
        arguments = arguments[1:]
    if not arguments or arguments[0].startswith("-"):
        return Runs()  # trap, trap -p, trap -l: they print; trap - SIG resets
    return Runs(scripts=(arguments[0],))


def _names_subscript(program: str, arguments: Sequence[str], dynamic: bool) -> bool:
    """Whether a builtin that takes variable names may evaluate an array subscript."""
    if dynamic and program not in DECLARING:
        return True
    for word in arguments:
        if word.startswith(("-", "+")):
            if program in DECLARING and set(word[1:]) & set("inaA"):
                return True  # integer, nameref or array attributes evaluate later
            if program in ("printf", "wait") and ("v" in word or "p" in word):
                return True  # printf -v NAME, wait -p NAME
            continue
        name = word.partition("=")[0] if program in DECLARING else word
        if "[" in name or "$" in name or "`" in name or assigns_code(word):
            return True
    return False


def is_pure_arithmetic(text: str) -> bool:
    """Whether arithmetic ``text`` holds only numbers and operators (no name, no
    subscript, no expansion): bash evaluates a name's value as arithmetic in turn, and an
    array subscript in it can hold a command substitution."""
    return PURE_ARITHMETIC.fullmatch(NUMBER.sub("", text)) is not None


def assigns_code(word: str) -> bool:
    """Whether an assignment word (or a name) sets a variable a shell runs as code."""
    return CODE_VARIABLES.fullmatch(word.partition("=")[0].removesuffix("+")) is not None


@dataclass
class _Read:
    end: int = 1  # the first word after the options
    letters: set = field(default_factory=set)
    unknown: str | None = None


def _options(
    options: Options, words: Sequence[str], expanded: Sequence[bool], signs: str = "-"
) -> _Read:
    """Read ``words[1:]`` as options by ``options``; stop at the first operand, or after
    ``--`` (or a lone ``-``, which also ends a shell's options)."""
    read, i = _Read(), 1
    while i < len(words):
        word = words[i]
        if expanded[i]:
            read.unknown = f"{word[:40]!r} is known only at run time"
            break
        if word in ("--", "-"):
            i += 1
            break
        if word[:1] not in signs or len(word) == 1:
            break
        if word.startswith("--"):
            name, equals, _ = word[2:].partition("=")
            if name in options.long_with_argument:
                i += 1 if equals else 2
            elif name in options.long:
                i += 1
            if name in options.long_with_argument or name in options.long:
                read.letters.add(name)
            else:
                read.unknown = word[:40]
                break
            continue
        if options.numeric and word[1:].isdigit():
            i += 1
            continue
        taken = 0
        for position, letter in enumerate(word[1:], start=1):
            read.letters.add(letter)
            if letter in options.with_argument:
                if options.bundled or position == len(word) - 1:
                    taken += 1  # its argument is the next word (after those taken before)
                    continue
                break  # the rest of the word is its argument
            if letter in options.attached:
                break
            if letter not in options.flags or (letter == "c" and word[0] == "+"):
                read.unknown = word[:40]
                return read
        i += 1 + taken
    read.end = min(i, len(words))
    return read
