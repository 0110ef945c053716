"""Shell syntax: a shell string split into the commands it would run, before anything expands.

The permission gate (``gate.py``) judges commands, not text, and this module is how it
finds them. ``commands_in`` takes what ``run_command`` would be given, an argument list,
or a shell string, and returns every command it would run as a ``Part``: its words, which
of them the shell changes at run time, and, when the scanner cannot tell what it runs, why
(``Part.unknown``). It needs nothing but the text: no program runs, nothing is looked up,
nothing expands. It is one grammar for bash and dash (``sh`` is either), checked against
both by the tests.

**What it reads.** An argument list runs one program with exactly its words; what that
program runs in turn (a shell's ``-c`` script, ``eval``'s words, ``env``/``timeout``/
``xargs``/``find -exec``...'s command) is read by ``shell_programs.py`` and judged the same
way, a nested shell's script as a shell string. A shell string is read left to right:

- a **command** is words up to a separator (``;`` ``&`` ``|`` ``&&`` ``||`` ``|&``
  ``;;`` or a newline) or a parenthesis; ``( ... )`` is a subshell whose commands count
  like any other; leading ``!`` ``{`` ``}`` ``if`` ``then`` ``elif`` ``else`` ``fi``
  ``do`` ``done`` ``while`` ``until`` ``time [-p]`` are dropped (``if pytest; then ...``
  is judged as ``pytest``, then the rest), and ``for NAME [in WORDS]`` runs nothing itself;
- a **word** ends at a blank (space, tab), a separator or a redirection; ``\\`` takes
  the next character as it is (``\\`` then a newline joins two lines), ``'...'`` is text
  as written, ``"..."`` is text in which ``\\`` escapes only ``"`` ``\\`` ``$``, a
  backtick and a newline, and expansions still happen; ``#`` starting a word begins a
  comment;
- **expansions** (each makes its word *expanded*, known only at run time): ``$(...)``,
  backticks (their body unescaped first, as the shell does) and ``<(...)``/``>(...)``,
  whose commands are read as commands of their own; ``${...}`` (nested braces counted;
  the words inside read for expansions); ``$((...))``; ``$name``, ``$1``, ``$@``... ;
  ``$'...'``, ``$"..."``; globs (``*``, ``?``, ``[...]``), braces (``{a,b}``) and a
  leading ``~``. A ``$`` followed by anything else is a plain ``$``;
- **redirections** (``>`` ``>>`` ``<`` ``<>`` ``>|`` ``&>`` ``&>>`` ``>&`` ``<&`` ``<<``
  ``<<-`` ``<<<``, after a file-descriptor number or not): the operator and its target are
  a command of their own (``(">", "out.txt")``), so a rule must allow them; ``2>&1``,
  ``>&-`` name no file. A **here-document**'s body is read up to its delimiter line and,
  when the delimiter is unquoted, for the expansions the shell makes in it;
  A here-string's word (``<<< word``) is read as any word. ``{fd}>file`` in front of a
  command (bash's named descriptor) is a redirection, not the program;
- leading assignments (``FOO=1 cmd``) make a command dynamic: the shell changes its
  environment. Rules are matched from the program word after them.

**What it refuses to judge** (``Part.unknown``: never allowed; denied wherever the policy
denies anything, since the hidden command could be the one it denies):

- arithmetic that holds a name or an expansion (``$((x))``, ``$[...]``, ``((...))``,
  ``let``, ``for ((...))``, ``${a[i]}``, ``${x:i}``): bash evaluates a name's value as
  arithmetic in turn, and an array subscript in it can hold ``$(...)``, so
  ``echo 'a[$(rm -rf x)]'; echo "$[_]"`` runs ``rm`` (``$_`` is the last word before);
- ``${!x}``, ``${x@P}``, quotes inside ``${...}`` (bash and dash end it at different
  places), a ``${`` that is not a parameter (bash 5.3's ``${ cmd; }``), ``$'...'`` holding
  ``\\'`` (bash and dash end it at different places), an unquoted here-document with a
  ``\\`` before a newline, an array assignment (``a[i]=1``, ``a=(...)``), an assignment to
  ``PS4``, ``PROMPT_COMMAND``, ``BASH_ENV``... (the shell runs them as code);
- ``case``, ``select``, ``function``, ``coproc``, ``[[ ... ]]`` (its operators evaluate
  arithmetic), and everything ``shell_programs.py`` lists (a program known only at run
  time, a shell reading a file or its input, shells of other syntaxes, runners whose
  options are not read, ``alias``, ``source``, ``hash``...);
- ``time`` followed by options other than ``-p`` (bash's keyword and dash's
  ``/usr/bin/time`` read them apart);
- text it cannot read (an unclosed quote, ``$(``, backtick or ``${``, a parenthesis that
  does not pair up, a trailing backslash) raises ``ShellSyntaxError``; the gate treats it
  as unknown too: bash runs the lines before a syntax error.

**What it leaves to the policy.** A program that runs code of its own language is judged
as itself, whatever its code does: ``python -c``, ``awk``, ``perl -e``, ``make``, ``git``
with an alias or ``-c core.pager=...``, ``sed``'s ``e`` command. A rule that allows such a
program allows anything: that is what "not a sandbox" means (SECURITY.md).

Nesting deeper than :data:`MAX_DEPTH` (``$(`` in ``$(``, a shell in a shell...) or more
than :data:`MAX_PARTS` commands raise ``TooComplex``, which the gate denies outright. The
scanner reads each character a bounded number of times (once per level of nesting, at
most :data:`MAX_DEPTH`) and builds words from runs of characters, so its time grows
linearly with the text: a megabyte in about a tenth of a second.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .shell_programs import assigns_code, runs
from .shell_words import (
    MAX_DEPTH,
    MAX_PARTS,
    NAME,
    Part,
    ShellSyntaxError,
    TooComplex,
    WordReader,
    deeper,
    emit,
)

__all__ = ["MAX_DEPTH", "MAX_PARTS", "Part", "ShellSyntaxError", "TooComplex", "commands_in"]

SEPARATORS = ("&&", "||", ";;&", ";;", ";&", "|&", ";", "|", "&", "\n", "(", ")")
RESERVED = {"!", "{", "}", "if", "then", "elif", "else", "fi", "do", "done", "while", "until"}
NOT_READ = {"case", "esac", "select", "function", "coproc", "[["}
FD_NAME = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
HEREDOC = re.compile(r"[0-9]*<<-?")
REDIRECTION = re.compile(r"[0-9]*(&>>|&>|>>|>&|>\||<<<|<<-|<<|<>|<&|>|<)")
BLANKS = re.compile(r"[ \t]+")
EMPTY_LINES = re.compile(r"[ \t\n]+")
_SIMPLE = r"[^ \t\n'\"\\$`;&|()<>*?\[{~#][^ \t\n'\"\\$`;&|()<>*?\[{~]*"
#: Words with nothing to expand, unquote or redirect, each ending at a blank or a separator.
SIMPLE_WORDS = re.compile(rf"(?:{_SIMPLE}(?:[ \t]+|(?=[\n;&|)]|$)))+")


def commands_in(command: str | Sequence[str]) -> list[Part]:
    """Every command ``command`` would run, as ``Part``s.

    An argument list runs one program with those exact words (nothing is expanded), and
    whatever that program runs (a shell's script...); a string is read as shell syntax.
    Raises ``ShellSyntaxError`` for text it cannot read, ``TooComplex`` past its bounds.
    """
    parts: list[Part] = []
    if isinstance(command, str):
        _Scanner(command, parts, 0).script()
    else:
        words = tuple(command)
        _command(parts, words, [False] * len(words), 0, assignments=False)
    return parts


def _command(
    parts: list[Part],
    words: Sequence[str],
    expanded: Sequence[bool],
    depth: int,
    *,
    assignments: bool,
    dynamic: bool = False,
    unknown: str | None = None,
    more: bool = False,
) -> None:
    """Add the parts of one command: itself, and what it runs (``shell_programs.runs``).
    ``assignments``: leading ``NAME=value`` words set its environment (a shell's command,
    not an argument list's)."""
    first = 0
    if assignments:
        while first < len(words) and _is_assignment(words[first]):
            if "[" in words[first].partition("=")[0] or assigns_code(words[first]):
                unknown = unknown or f"the assignment {words[first][:40]!r} can run code"
            first += 1
    program, flags = words[first:], expanded[first:]
    what = runs(program, flags) if program and unknown is None else None
    unknown = unknown or (what.unknown if what else None)
    if unknown or what is None or what.itself:
        marked = frozenset(i for i, flag in enumerate(expanded) if flag) if any(expanded) else None
        dynamic = bool(dynamic or marked or first or more or unknown)
        emit(parts, Part(tuple(words), dynamic, marked or frozenset(), first, more, unknown))
    if what is None or unknown:
        return
    for script in what.scripts:
        _Scanner(script, parts, deeper(depth)).script()
    for inner in what.inner:
        level = deeper(depth)
        inner_words, inner_flags = program[inner.start : inner.end], flags[inner.start : inner.end]
        if inner.arguments_change or inner.placeholder is not None:
            inner_flags = [
                flag
                or (inner.arguments_change and i > 0)
                or (inner.placeholder is not None and inner.placeholder in word)
                for i, (word, flag) in enumerate(zip(inner_words, inner_flags))
            ]
        _command(parts, inner_words, inner_flags, level, assignments=False, more=inner.more)


def _is_assignment(word: str) -> bool:
    name, equals, _ = word.partition("=")
    base = name.removesuffix("+").partition("[")[0]
    return bool(equals) and NAME.fullmatch(base) is not None


class _Command:
    """A command as it is read: its words, which are expanded, and what it is."""

    __slots__ = ("words", "expanded", "dynamic", "unknown", "redirect", "kind")

    def __init__(self) -> None:
        self.words: list[str] = []
        self.expanded: list[bool] = []
        self.dynamic = False
        self.unknown: str | None = None
        self.redirect: str | None = None  # an operator waiting for its target word
        self.kind: str | None = None  # "for", or "time" (a -p may follow)

    def empty(self) -> bool:
        return not self.words and self.kind is None and self.redirect is None and not self.unknown

    def at_start(self) -> bool:
        return not self.words or self.words == ["for"]

    def add(self, text: str, expanded: bool, bare: bool) -> None:
        if not self.words and bare:
            if self.kind == "time" and text in ("-p", "--"):
                return
            if self.kind == "time" and text.startswith("-"):  # /usr/bin/time's, to dash
                self.unknown = self.unknown or "bash's time and dash's read options apart"
            if text in RESERVED or text == "time":
                self.kind = "time" if text == "time" else None
                return
            if text == "for":
                self.kind = "for"
            elif text in NOT_READ:
                self.unknown = self.unknown or f"'{text}' is not read by the gate"
        self.words.append(text)
        self.expanded.append(expanded)

    def add_simple(self, words: list[str]) -> None:
        """Words with nothing quoted or expanded (only the first ones can be reserved)."""
        for position, text in enumerate(words):
            if self.words:
                self.words.extend(words[position:])
                self.expanded.extend([False] * (len(words) - position))
                return
            self.add(text, False, bare=True)

    def can_unknown(self, why: str) -> None:
        self.unknown = self.unknown or why


class _Scanner(WordReader):
    """Reads one shell text into parts; a text inside it (a backtick's body, a
    here-document's) gets a scanner of its own."""

    def script(self, *, whole: bool = True) -> None:
        """Read the whole text. ``whole``: it is all the shell reads (a ``-c`` script), not
        a piece of a longer text (a backtick's body), so a here-document with no body is
        just empty."""
        end = self.commands(0, None)
        if end != len(self.text):
            raise ShellSyntaxError(f"unexpected {self.text[end]!r} at character {end}")
        if not whole:
            self.no_heredoc_left("`")

    # --- commands -------------------------------------------------------------------------

    def commands(self, i: int, closing: str | None) -> int:
        """Read commands from ``i`` until the ``)`` of a ``$(`` (``closing``) or the end;
        return the index after it."""
        self.depth = deeper(self.depth)
        text, subshells, command = self.text, 0, _Command()
        while i < len(text):
            c = text[i]
            if c in " \t":
                i = BLANKS.match(text, i).end()
            elif (simple := SIMPLE_WORDS.match(text, i)) and command.redirect is None:
                command.add_simple(BLANKS.split(simple.group().rstrip(" \t")))  # made short
                i = simple.end()
            elif c == "\n" and command.empty() and not self.heredocs:
                i = EMPTY_LINES.match(text, i).end()  # blank lines end nothing
            elif c == "\\" and text.startswith("\\\n", i):
                i += 2  # a line continuation between words
            elif c == "#":
                newline = text.find("\n", i)
                i = len(text) if newline < 0 else newline
            elif c == ")" and closing == ")" and subshells == 0:
                self.end_command(command)
                self.no_heredoc_left("$(")
                self.depth -= 1
                return i + 1
            elif c in "<>" and text.startswith("(", i + 1):
                i = self.word(i, command)  # a process substitution starts a word
            elif (redirection := REDIRECTION.match(text, i)) is not None and (
                c in "<>&" or c.isdigit()
            ):
                i = self.redirection(redirection, command)
            elif text.startswith(SEPARATORS, i):
                operator = next(op for op in SEPARATORS if text.startswith(op, i))
                if operator == "(" and text.startswith("((", i) and command.at_start():
                    end = self.arithmetic_command(i)
                    if end is not None:
                        i = end
                        continue
                if operator == "(" and command.words and command.words[-1].endswith("="):
                    command.can_unknown("an array assignment evaluates subscripts")
                self.end_command(command)
                command = _Command()
                i += len(operator)
                if operator == "(":
                    subshells += 1
                elif operator == ")":
                    if subshells == 0:
                        raise ShellSyntaxError("a ')' closes nothing")
                    subshells -= 1
                elif operator == "\n" and self.heredocs:
                    i = self.heredoc_bodies(i)
            else:
                i = self.word(i, command)
        if closing is not None:
            raise ShellSyntaxError("a '$(' is not closed")
        if subshells:
            raise ShellSyntaxError("a '(' is not closed")
        self.end_command(command)
        self.depth -= 1
        return i

    def end_command(self, command: _Command) -> None:
        if command.redirect is not None:  # an operator with no target, e.g. `echo >`
            emit(self.parts, Part((command.redirect,), True))
            command.redirect = None
        if command.kind == "for" and command.unknown is None:
            header = command.words
            if len(header) >= 2 and NAME.fullmatch(header[1]) and header[2:3] in ([], ["in"]):
                return  # for NAME [in WORDS]: runs nothing; the words' expansions are read
            command.can_unknown("this 'for' is not read by the gate")
        if command.words or command.unknown:
            _command(
                self.parts,
                command.words,
                command.expanded,
                self.depth,
                assignments=True,
                dynamic=command.dynamic,
                unknown=command.unknown,
            )

    def redirection(self, match: re.Match, command: _Command) -> int:
        operator, i = match.group(0), match.end()
        if command.redirect is not None:
            emit(self.parts, Part((command.redirect,), True))
        command.redirect = operator
        if match.group(1) in ("<<", "<<-", "<<<"):
            command.dynamic = True  # here-documents and -strings: data the gate does not judge
        if match.group(1).endswith("&"):
            closing = re.match(r"[0-9]+-?|-", self.text[i : i + 12])
            if closing:  # 2>&1, >&-: joins or closes a stream, names no file
                command.redirect = None
                return i + closing.end()
        return i

    def arithmetic_command(self, i: int) -> int | None:
        """``((...))`` (or ``for ((...))``): arithmetic to bash, never judged (an unknown
        part). Its end, or None when it does not close as ``))``: bash and dash then read
        two subshells, as the caller goes on to do."""
        start = len(self.parts)
        end = self.arithmetic(i + 2)
        if end is None:
            del self.parts[start:]
            return None
        self.unknown(self.text[i:end], "arithmetic, which can run commands")
        return end

    def heredoc_bodies(self, i: int) -> int:
        """Read the bodies of the here-documents of the line that just ended, from ``i``."""
        text = self.text
        for delimiter, quoted, strip, depth in self.heredocs:
            if depth != self.depth:
                self.unknown("<<" + delimiter, "a here-document's body is nested unclearly")
            line = re.compile(("^\t*" if strip else "^") + re.escape(delimiter) + "$", re.M)
            found = line.search(text, i)
            end, after = (found.start(), found.end() + 1) if found else (len(text), len(text))
            if not quoted:
                body = text[i:end]
                if "\\\n" in body:
                    self.unknown("<<" + delimiter, "a here-document joins lines by '\\'")
                _Scanner(body, self.parts, self.depth).expansions_only()
            i = min(after, len(text))
        self.heredocs = []
        return i

    def no_heredoc_left(self, where: str) -> None:
        """At the end of a ``$(`` or a backtick: a here-document started inside it with no
        body read yet is one whose body the shells may look for elsewhere."""
        left = [heredoc for heredoc in self.heredocs if heredoc[3] == self.depth]
        if left:
            self.unknown(where, "a here-document's body is not where the gate can read it")
            self.heredocs = [heredoc for heredoc in self.heredocs if heredoc[3] != self.depth]

    def word(self, i: int, command: _Command) -> int:
        """Read one word from ``i``; add it to ``command`` (or as a redirection's target)."""
        text = self.text
        i, word = self.word_text(i)
        text_, expanded = word.text(), word.expanded or word.globs()
        if not word.quoted and FD_NAME.fullmatch(text_) and REDIRECTION.match(text, i):
            return i  # {fd}>file: bash opens a file descriptor named fd; no word of the command
        if command.redirect is None:
            command.add(text_, expanded, bare=not word.quoted and not expanded)
            return i
        operator, command.redirect = command.redirect, None
        emit(self.parts, Part((operator, text_), expanded, frozenset({1} if expanded else ())))
        if HEREDOC.fullmatch(operator):
            self.heredocs.append((text_, word.quoted, operator.endswith("-"), self.depth))
        return i
