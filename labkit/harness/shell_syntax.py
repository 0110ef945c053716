"""Shell syntax: a shell string split into the commands it would run, before anything expands.

The permission gate (``gate.py``) judges commands, not text, and this module is how it
finds them. ``commands_in`` takes what ``run_command`` would be given, an argument list,
or a shell string, and returns every command it would run as a ``Part``: its words, and
whether the shell would change them at run time (``dynamic``). It needs nothing but the
text: no program runs, nothing is looked up, nothing expands.

An argument list runs one program with exactly its words, unless it is a shell
(``SHELLS``, by the last part of its path) with an option holding ``c`` among the words
right after it that start with ``-`` (up to ``-`` or ``--``, and not a ``--long`` one):
``sh -c SCRIPT``, ``bash -lc SCRIPT``, ``sh -e -c SCRIPT``. Then the word after that
option (or nothing) is the script, read as a shell string.

A shell string is read left to right, the way ``sh`` splits it before expanding:

- a **command** is words up to a separator (``;`` ``&`` ``|`` ``&&`` ``||`` ``;;`` ``|&``
  or a newline) or a parenthesis; ``( ... )`` is a subshell: its commands count like any
  other, and the parentheses must pair up;
- a **word** ends at a space, a tab or a redirection; inside a word, ``\\`` takes the next
  character as it is (``\\`` then a newline joins two lines), ``'...'`` is text as
  written, and ``"..."`` is text in which ``\\`` escapes only ``"``, ``\\``, ``$``, a
  backtick and a newline, and ``$`` and backticks still expand;
- ``#`` at the start of a word begins a comment, to the end of the line;
- **expansions** (each makes its command dynamic): ``$(...)`` and backticks, whose
  inside is read again as commands, each a ``Part`` of its own, listed before the
  command holding it; ``${...}`` up to the first ``}``; ``$name``; ``$1``, ``$@``,
  ``$*``, ``$#``, ``$?``, ``$$``, ``$!``, ``$-``; ``$'...'`` and ``$"..."``. A ``$``
  followed by anything else is a plain ``$``;
- **redirections**: ``>`` ``>>`` ``<`` ``<>`` ``>|`` ``&>`` ``&>>`` ``>&`` ``<&`` ``<<``
  ``<<<``, with a file-descriptor number before them when they start a word. The word after
  one is its target, and the pair is a command of its own, ``(">", "out.txt")`` for
  ``> out.txt``, so a rule must allow it; a ``>&`` or ``<&`` followed by a digit or ``-``
  joins or closes a stream and names no file, so it is no command; an operator with
  nothing after it is the dynamic command ``(">",)``. A here-document or here-string
  (``<<``, ``<<<``) makes its command dynamic: its text is data this module does not read;
- a command's leading reserved words (``!`` ``{`` ``}`` ``if`` ``then`` ``elif`` ``else``
  ``fi`` ``do`` ``done`` ``while`` ``until``) are dropped, so ``if pytest; then ...`` is
  judged as ``pytest``, then the rest;
- a command is also dynamic when its first word is an assignment (``FOO=1 cmd``: the
  shell changes ``cmd``'s environment), or a word holds a glob or brace character
  (``*`` ``?`` ``[`` ``{``) or starts with ``~``.

What it cannot read (an unclosed quote, ``$(``, backtick or ``${``, a parenthesis that
does not pair up, a trailing backslash) raises ``ShellSyntaxError``; the gate then gives
the policy's default. What it reads but does not understand, it marks dynamic, so no
allow rule can pass it.

Not handled yet, each read as above: arithmetic (``$((...))``, ``$[...]``), ``${...}``
with a ``}`` inside, ``case``/``for``/``function``, options between ``-c`` and the script.
Each ``$(`` and backtick is read by a nested call, with no bound on the depth, and a word
grows one character at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from .shell_text import typed

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

    words: tuple[str, ...]
    dynamic: bool = False  # holds a variable, substitution, glob...: unknown until run time

    def __str__(self) -> str:
        """The command as it reads in the script: a redirection's operator bare, and the
        words the shell expands as it receives them (``shell_text.typed``)."""
        if not self.words:
            return "(nothing)"
        operator = self.words[:1] if self.words[0] in _REDIRECTIONS else ()
        rest = typed(self.words[len(operator) :], expanded=self.dynamic)
        return " ".join([*operator, rest] if rest else operator)


def commands_in(command: str | Sequence[str]) -> list[Part]:
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


def _script_of(words: tuple[str, ...]) -> str | None:
    """The script of ``sh -c SCRIPT`` (also ``bash -lc``, ``sh -e -c``); None if none."""
    for index, word in enumerate(words[1:], start=1):
        if not word.startswith("-") or word in ("-", "--"):
            return None
        if "c" in word[1:] and not word.startswith("--"):
            return words[index + 1] if index + 1 < len(words) else ""
    return None


def _parse(text: str) -> list[Part]:
    parts: list[Part] = []
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

    def __init__(self, text: str, parts: list[Part]) -> None:
        self.text, self.parts = text, parts

    def scan(self, i: int, closing: str | None) -> int:
        text, depth = self.text, 0
        words, word, dynamic = [], None, False
        redirect = None

        def end_word() -> None:
            nonlocal word, redirect
            if word is not None:
                if redirect is not None:
                    self.parts.append(Part((redirect, word), dynamic))
                    redirect = None
                else:
                    words.append(word)
            word = None

        def end_command() -> None:
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

    def expansion(self, i: int) -> tuple[int, bool]:
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
